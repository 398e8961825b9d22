/* SPDX-License-Identifier: MIT */
/*
 * capture: the BPF side of gotrace-record. Loads the embedded BPF program,
 * installs one fetch plan per probe, attaches uprobes (cookie = plan slot)
 * and hands ring buffer records to a callback. Lifecycle, as libbpf's:
 * capture_open (open + size maps + load) -> capture_set_plan -> capture_attach
 * -> capture_poll ... -> capture_close.
 */
#ifndef GOTRACE_CAPTURE_H
#define GOTRACE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "gotrace.h"

struct capture;

/* Called for each record; `ev` is valid during the call only. */
typedef int (*capture_fn)(const struct gt_event *ev, size_t size, void *ctx);

/*
 * Opens and loads the BPF program with room for `nplans` probes and a ring
 * buffer of `ringbuf_bytes` (a power of two, at least one page). `verbose`
 * shows libbpf's own log. NULL with a message in err[errlen] on failure.
 */
struct capture *capture_open(uint32_t nplans, uint32_t ringbuf_bytes,
			     int verbose, capture_fn fn, void *ctx, char *err,
			     size_t errlen);

/* Stores the plan of slot `slot` (< nplans), with the flags the BPF
 * program derives its path from (GT_P_WORDS, GT_P_FAST) set. 0 or -errno. */
int capture_set_plan(struct capture *c, uint32_t slot,
		     const struct gt_plan *plan);

/*
 * Attaches a uprobe at byte `file_offset` of the ELF file `path`, running
 * the plan of `slot`, for process `pid` (-1: every process); events of it
 * carry `site` (which uprobe of the probe fired). 0 or -errno with a
 * message in err[errlen].
 */
int capture_attach(struct capture *c, uint32_t slot, uint32_t site,
		   const char *path, uint64_t file_offset, pid_t pid,
		   char *err, size_t errlen);

/* Called for a site the kernel refuses to probe (err: its errno). */
typedef void (*capture_refused_fn)(uint64_t cookie, int err, void *ctx);

/*
 * Attaches n uprobes to the ELF file `path` at offsets[i], each running
 * the plan of slot (uint32_t)cookies[i] and reporting site cookies[i] >> 32,
 * for process `pid` (-1: every process): uprobe-multi links where the
 * kernel has them (Linux 6.6+, ATTACH_CHUNK sites a link), else one
 * perf-event uprobe each. Sites the
 * kernel refuses (an instruction uprobes cannot handle) are passed to
 * `refused` and left out; the rest are attached. 0, or -errno with a
 * message in err[errlen] for a failure not about particular sites.
 */
int capture_attach_many(struct capture *c, uint32_t n, const uint64_t *cookies,
			const char *path, const uint64_t *offsets, pid_t pid,
			capture_refused_fn refused, void *ctx, char *err,
			size_t errlen);

/* Shows capture_attach_many()'s progress on `out` when it is a terminal
 * (NULL: nowhere, the default) once a second has passed since `t0`
 * (seconds of CLOCK_MONOTONIC: when the recording started). */
void capture_show_progress(struct capture *c, FILE *out, double t0);

/* Waits up to timeout_ms for records and hands them to the callback.
 * Returns records handled or -errno. */
int capture_poll(struct capture *c, int timeout_ms);

/*
 * Events of slot `slot` lost so far on each CPU: capture_ncpus() counts,
 * valid until the next call into `c`.
 */
const uint64_t *capture_drops_percpu(struct capture *c, uint32_t slot);

/* Number of possible CPUs (entries of per-CPU counts). */
int capture_ncpus(const struct capture *c);

/* Events of slot `slot` a rate limit suppressed so far, all CPUs. */
uint64_t capture_suppressed(struct capture *c, uint32_t slot);

/* Number of uprobes attached (single or in multi links). */
uint32_t capture_nlinks(const struct capture *c);

/*
 * Exits of watched processes: fn(pid, ts_ns, code, comm, ctx) is called
 * from capture_poll() when the last thread of a process exits that hit a
 * probe or was given to capture_watch_exit(); ts_ns is CLOCK_MONOTONIC,
 * code the exit code as wait() gives it (status << 8, or the signal in the
 * low 7 bits), comm its last thread's name. The sched_process_exit
 * tracepoint is attached as a BTF-typed tracepoint, else a raw one (neither
 * needs tracefs), else a classic one (tracefs mounted); GOTRACE_EXIT_VIA
 * ("tp_btf", "raw_tp", "tp") allows only one of them, for tests. Returns 0,
 * or -errno when the kernel refused all three (the caller then notices
 * exits by polling). sched_process_exec is attached beside it (the same
 * way if it can): a process whose uprobes were attached by its pid and
 * that execs from a thread other than its first is stopped before its
 * new image runs, its uprobes are attached again from capture_poll(),
 * and it goes on (spec/PROBES.md); a warning says when it cannot be.
 */
typedef void (*capture_exit_fn)(uint32_t pid, uint64_t ts_ns, uint32_t code,
				const char *comm, void *ctx);
int capture_on_exit(struct capture *c, capture_exit_fn fn);

/* How the exit tracepoint is attached: "tp_btf", "raw_tp" or "tp"; NULL
 * when it is not (exits are polled for). */
const char *capture_exit_via(const struct capture *c);

/* Reads what the ring buffer holds now, without waiting: the number of
 * records, or -errno. */
int capture_consume(struct capture *c);

/* Asks to be told of the exit of process `pid`. 0, or -errno (the table
 * of 16384 watched processes is full, or no exit tracepoint). */
int capture_watch_exit(struct capture *c, uint32_t pid);

/*
 * Following the processes a recording's targets start (spec/PROBES.md).
 * fn(pid, bin, err, errlen, ctx) is called from capture_poll() when a
 * process of the followed tree execs the probed binary given index `bin`
 * by capture_follow_binary() and not yet attached for it: the process is
 * stopped before its first instruction, fn attaches that binary's
 * uprobes for `pid` (returning 0, or -1 with why in err[errlen], which
 * capture says unless the process exited meanwhile) and the process
 * then goes on. A process whose /proc/PID/exe is not one of the files
 * given for `bin` (same st_dev and st_ino) goes on unattached. With `inherit`, the processes the tree's members
 * start (fork, clone without CLONE_THREAD) join it (the
 * sched_process_fork tracepoint, attached as the exit one is); without,
 * the tree is the roots only. Needs capture_on_exit()'s exec program:
 * 0, or -errno (a warning printed) when following cannot be.
 */
typedef int (*capture_spawn_fn)(uint32_t pid, uint32_t bin, char *err,
				size_t errlen, void *ctx);
int capture_follow(struct capture *c, int inherit, capture_spawn_fn fn,
		   void *ctx);

/* Makes the file at `path` probed binary `bin` (< GT_MAX_BINS) for
 * capture_follow(); several files may share an index. 0 or -errno
 * (a file that cannot be stat'ed, a full table). */
int capture_follow_binary(struct capture *c, uint32_t bin, const char *path);

/* Puts process `pid` in the followed tree, with the binaries of `mask`
 * (bit i: binary i) attached for it. 0 or -errno. */
int capture_follow_root(struct capture *c, pid_t pid, uint64_t mask);

/* The exec records the BPF program could not send (its `procs` ring
 * buffer full), summed over the CPUs: processes that went on without
 * being stopped for their probes (a followed child, or an exec from a
 * thread other than the first), so ran unprobed. 0 when unknown. */
uint64_t capture_execs_lost(struct capture *c);

/* The mask of the probed binaries a process of the tree exec'd so far
 * (bit i: binary i). */
uint64_t capture_binaries_run(struct capture *c);

/* Detaches every probe and frees `c` (NULL is fine). */
void capture_close(struct capture *c);

#endif /* GOTRACE_CAPTURE_H */
