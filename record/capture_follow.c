// SPDX-License-Identifier: MIT
/*
 * Following the processes a recording's targets start: the BPF
 * program's `tree` of processes (the command or the -p targets, and with
 * inherit the processes they start), the probed binaries by file
 * (`bins`), and the attach of a binary's uprobes for a process of the
 * tree that execs it (spec/PROBES.md). The process was stopped by the
 * exec program before its first instruction; capture_exec.c lets it go
 * on once capture_on_spawn() is done.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "capture_int.h"
#include "procstat.h"
#include "xalloc.h"

int capture_follow(struct capture *c, int inherit, capture_spawn_fn fn,
		   void *ctx)
{
	const struct {
		const char *via;
		struct bpf_program *prog;
		int loaded;
	} ways[] = {
		{ "tp_btf", c->fork_progs[0], c->exit_level < EXIT_NO_BTF },
		{ "raw_tp", c->fork_progs[1], c->exit_level < EXIT_NONE },
		{ "tp", c->fork_progs[2], c->exit_level < EXIT_NONE },
	};
	const size_t n = sizeof(ways) / sizeof(ways[0]);
	size_t i;

	if (!c->exec_link) {
		fprintf(stderr, "gotrace-record: warning: without the "
			"sched_process_exec tracepoint, processes the command "
			"or -p targets start are not traced\n");
		return -ENOTSUP;
	}
	c->spawn_fn = fn;
	c->spawn_ctx = ctx;
	if (!inherit)
		return 0;
	/* the way the exit program is attached, else any other */
	for (i = 0; !c->fork_link && i < n; i++)
		if (ways[i].loaded && c->exit_via && !strcmp(c->exit_via, ways[i].via))
			c->fork_link = bpf_program__attach(ways[i].prog);
	for (i = 0; !c->fork_link && i < n; i++)
		if (ways[i].loaded)
			c->fork_link = bpf_program__attach(ways[i].prog);
	if (!c->fork_link) {
		const int e = errno;

		fprintf(stderr, "gotrace-record: warning: cannot attach to the "
			"sched_process_fork tracepoint (%s): processes the command "
			"or -p targets start are not traced\n", strerror(e));
		return -e;
	}
	return 0;
}

int capture_follow_binary(struct capture *c, uint32_t bin, const char *path)
{
	struct gt_bin_key k = {};
	struct stat st;

	if (bin >= GT_MAX_BINS)
		return -E2BIG;
	if (stat(path, &st))
		return -errno;
	k.ino = st.st_ino;
	if (bpf_map_update_elem(c->bins_fd, &k, &bin, BPF_ANY))
		return -errno;
	c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof(*c->files), "files");
	c->files[c->nfiles++] = (struct follow_file){ st.st_dev, st.st_ino, bin };
	return 0;
}

int capture_follow_root(struct capture *c, pid_t pid, uint64_t mask)
{
	const uint32_t key = (uint32_t)pid;

	if (bpf_map_update_elem(c->tree_fd, &key, &mask, BPF_ANY))
		return -errno;
	return 0;
}

uint64_t capture_binaries_run(struct capture *c)
{
	uint32_t zero = 0;
	uint64_t mask = 0;

	if (bpf_map_lookup_elem(c->bins_run_fd, &zero, &mask))
		return 0;
	return mask;
}

bool capture_pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/* Whether the process of `pidfd` exits within `ms` milliseconds: one
 * killed as its attach failed may not have finished exiting yet. */
static bool pidfd_exits_within(int pidfd, int ms)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, ms) > 0;
}

/* Whether /proc/PID/exe of x->pid is a file given for x->bin: the
 * process of the record runs the probed binary, not another program
 * (a reused pid, a file the BPF program matched by inode alone). */
static bool runs_binary(const struct capture *c, const struct gt_exec *x)
{
	char path[40];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", x->pid);
	if (stat(path, &st))
		return false;
	for (uint32_t i = 0; i < c->nfiles; i++)
		if (c->files[i].bin == x->bin && c->files[i].dev == st.st_dev &&
		    c->files[i].ino == st.st_ino)
			return true;
	return false;
}

/* Process x->pid exited while held: its exit is recorded (from the exit
 * program, or here when it ended before it was watched) and said. */
static void held_exited(struct capture *c, const struct gt_exec *x)
{
	struct proc_stat st;

	fprintf(stderr, "gotrace-record: process %u of the traced tree "
		"exited before its uprobes were attached\n", x->pid);
	if (capture_unwatch_exit(c, x->pid) || !c->exit_fn)
		return;   /* the exit program sent its record */
	/* a zombie: /proc/PID/stat still has its name and exit code
	 * (0 and "" when it is reaped already) */
	proc_stat_read((pid_t)x->pid, &st);
	c->exit_fn(x->pid, capture_now_ns(), st.exit_code, st.comm, c->ctx);
}

int capture_on_spawn(struct capture *c, const struct gt_exec *x, int pidfd)
{
	const uint32_t key = x->pid;
	uint64_t mask = 0;
	char err[640];

	if (x->bin >= GT_MAX_BINS || !c->spawn_fn || c->closing)
		return 0;
	/* before attaching: a kill during the attach sends its exit, and
	 * that exit closes its links (capture_relinks_exited()) */
	capture_watch_exit(c, x->pid);
	if (capture_pidfd_exited(pidfd)) {
		held_exited(c, x);
		return 0;
	}
	if (!runs_binary(c, x)) {
		if (c->verbose)
			fprintf(stderr, "gotrace-record: process %u of the traced "
				"tree does not run a probed binary's file (its pid "
				"was reused, or the file was replaced): not attached\n",
				x->pid);
		return 0;
	}
	if (c->spawn_fn(x->pid, x->bin, err, sizeof(err), c->spawn_ctx)) {
		if (pidfd_exits_within(pidfd, 100)) {
			capture_relinks_exited(c, (pid_t)x->pid);
			held_exited(c, x);
			return 0;
		}
		fprintf(stderr, "gotrace-record: warning: process %u runs %s\n",
			x->pid, err);
		return -1;
	}
	if (capture_pidfd_exited(pidfd)) {
		/* killed during the attach: its links are a dead pid's */
		capture_relinks_exited(c, (pid_t)x->pid);
		held_exited(c, x);
		return 0;
	}
	/* gone meanwhile: its exit took it out, and it stays out */
	if (!bpf_map_lookup_elem(c->tree_fd, &key, &mask)) {
		mask |= 1ull << x->bin;
		bpf_map_update_elem(c->tree_fd, &key, &mask, BPF_EXIST);
	}
	return 1;
}
