/* SPDX-License-Identifier: MIT */
/*
 * The inside of capture (capture.c, capture_exec.c, capture_follow.c):
 * the state of one loaded BPF program and what its files share. Nothing
 * else includes it.
 */
#ifndef GOTRACE_CAPTURE_INT_H
#define GOTRACE_CAPTURE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "capture.h"
#include "map.h"

struct gotrace_bpf;
struct bpf_program;

/*
 * A per-CPU counter map read for all slots at once (one batch lookup a
 * pass, not a syscall per slot): counts of slot s on CPU i at
 * v[s * ncpus + i], read when a pass starts (a slot at or below the last
 * one asked).
 */
struct counters {
	uint64_t *v;
	uint32_t *keys;        /* scratch of the batch lookup */
	uint32_t last;         /* last slot asked; UINT32_MAX: none yet */
	int batch;             /* 1: batch lookups work, 0: not tried, -1: they fail */
};

/* Indices of free slots of an array (given back, to be taken again). */
struct slots {
	uint32_t *v;
	uint32_t n, cap;
};

/* A slot of an array of n entries: one slots_put() gave back, else n
 * (the caller grows the array to hold it). */
uint32_t slots_take(struct slots *s, uint32_t n);

/* Gives slot `at` back. */
void slots_put(struct slots *s, uint32_t at);

/* A probed binary's file as stat() saw it when capture_follow_binary()
 * was given it: a followed process's /proc/PID/exe must be this file. */
struct follow_file {
	dev_t dev;
	ino_t ino;
	uint32_t bin;
};

/*
 * A link attached for one process by its pid, kept so that it can be
 * made again when the process execs from a thread other than its first
 * (capture_exec.c): c->multi_fds[at] (a uprobe-multi link of n sites)
 * or c->links[at] (one perf-event uprobe, n = 1).
 */
struct relink {
	pid_t pid;
	bool multi;
	uint32_t at;
	char *path;            /* as given to the kernel; NULL: a free slot */
	dev_t dev;             /* the file it named then */
	ino_t ino;
	uint32_t n;
	uint64_t *cookies, *offsets;
};

struct capture {
	struct gotrace_bpf *skel;
	struct bpf_program *prog;  /* the uprobes' program */
	int execs_fd;              /* the BPF program's `execs` map */
	int held_fd;               /* its `held` map: the processes stopped now */
	struct guardian *guardian; /* lets them go should this process die */
	int tree_fd;               /* its `tree` map: the followed processes */
	int bins_fd, bins_run_fd;  /* its `bins` and `bins_run` maps */
	struct bpf_program *fork_progs[3]; /* sched_process_fork: tp_btf, raw_tp, tp */
	capture_spawn_fn spawn_fn; /* capture_follow()'s, NULL: not following */
	void *spawn_ctx;
	struct ring_buffer *rb;
	struct bpf_link **links;
	uint32_t nlinks, caplinks;
	struct slots free_links;   /* links[] slots of exited processes */
	int multi;             /* program loaded for uprobe-multi links */
	int *multi_fds;        /* their link fds */
	uint32_t nmulti, capmulti;
	struct slots free_multi;   /* multi_fds[] slots of exited processes */
	uint32_t nuprobes;     /* uprobes attached, single or in links */
	struct relink *relinks;    /* the links attached by pid */
	uint32_t nrelinks, caprelinks;
	struct slots free_relinks; /* relinks[] slots of exited processes */
	struct u64map relink_of;   /* pid -> its relinks[] (several) */
	struct follow_file *files; /* capture_follow_binary()'s files */
	uint32_t nfiles;
	uint64_t exec_records;     /* GT_REC_EXEC records read */
	uint32_t nplans;
	char *plans_mm;        /* the plans map, mapped (NULL: not mappable) */
	size_t plans_len;
	int ncpus;
	int verbose;
	uint64_t *percpu;      /* scratch for reading per-CPU drop counters */
	struct counters drops, suppressed; /* the per-CPU counters, read at once */
	FILE *progress;        /* where attach progress goes, NULL: nowhere */
	double progress_t0;    /* shown from a second after this */
	capture_fn fn;
	void *ctx;
	capture_exit_fn exit_fn;
	int exit_level;              /* EXIT_* programs loaded: 0 all, 1 no tp_btf, 2 none */
	struct bpf_link *exit_link;  /* sched_process_exit, when attached */
	struct bpf_link *exec_link;  /* sched_process_exec, attached alike */
	struct bpf_link *fork_link;  /* sched_process_fork, when following */
	bool closing;                /* capture_close(): exec records only */
	const char *exit_via;        /* how it is attached: "tp_btf", "raw_tp", "tp" */
};

/* How far the exit and exec programs were given up on at load: tp_btf
 * needs BTF of the tracepoint (Linux 5.5), raw_tp and tp load on any
 * kernel here. */
enum { EXIT_ALL, EXIT_NO_BTF, EXIT_NONE };

/* One uprobe-multi link of the sites (cookies[i], offsets[i]), i < n, of
 * the ELF file `path` for process `pid` (<= 0: every process): its fd or
 * -errno. */
int capture_multi_link(struct capture *c, uint32_t n, const uint64_t *cookies,
		       const char *path, const uint64_t *offsets, pid_t pid);

/* Closes the uprobe-multi links fds[0, n) (-1 entries are skipped), on
 * several threads: the kernel waits for a grace period as it closes each. */
void capture_close_links(const int *fds, uint32_t n);

/*
 * Keeps link `at` (c->multi_fds[at] when `multi`, else c->links[at]) of
 * sites (cookies[i], offsets[i]), i < n, of `path`, attached for process
 * `pid` > 0, to be made again after an exec, and puts `pid` in the
 * `execs` map. A `path` that cannot be stat'ed: the link is not kept (a
 * warning: that process is untraced after an exec from another thread);
 * out of memory aborts (xalloc).
 */
void capture_relink_add(struct capture *c, pid_t pid, bool multi, uint32_t at,
			const char *path, uint32_t n, const uint64_t *cookies,
			const uint64_t *offsets);

/* Handles a GT_REC_EXEC record: attaches again the links of its pid
 * whose file is still the one it runs, then lets it go on (only that
 * once c->closing) through a pidfd opened as the record arrives (not by
 * its bare pid, which may be another process's once it exited). */
void capture_on_exec_record(struct capture *c, const struct gt_exec *x);

/* The part of a GT_REC_EXEC record about a followed process that exec'd
 * probed binary x->bin (capture_follow.c): watches its exit, confirms
 * through `pidfd` (the process of the record, -1: none) that it is alive
 * and that /proc/PID/exe is a file of x->bin (same st_dev and st_ino),
 * attaches it for x->pid through the capture_follow() callback (not once
 * c->closing) and marks it attached in the `tree` map. 1 when attached,
 * 0 when not (exited, another file: said with -v), -1 when the callback
 * failed (a warning). */
int capture_on_spawn(struct capture *c, const struct gt_exec *x, int pidfd);

/* CLOCK_MONOTONIC in ns, the clock of the BPF program's ts_ns. */
uint64_t capture_now_ns(void);

/* Whether the process of `pidfd` exited (-1: cannot tell, false). */
bool capture_pidfd_exited(int pidfd);

/* Stops watching the exit of `pid`: 0 when it was watched (no exit
 * record was sent for it), -errno when it was not. */
int capture_unwatch_exit(struct capture *c, uint32_t pid);

/* Process `pid` exited: closes the links attached for it by its pid
 * (capture_relink_add()) on a thread of their own (the kernel waits for
 * a grace period as it closes each) and frees their slots for the next
 * processes, so that a command that starts many probed programs holds
 * the links and memory of the live ones only. */
void capture_relinks_exited(struct capture *c, pid_t pid);

/* Frees what capture_relink_add() kept (the links are closed elsewhere). */
void capture_relinks_free(struct capture *c);

#endif /* GOTRACE_CAPTURE_INT_H */
