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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "capture_int.h"

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

int capture_on_spawn(struct capture *c, const struct gt_exec *x)
{
	const uint32_t key = x->pid;
	uint64_t mask = 0;

	if (x->bin >= GT_MAX_BINS || !c->spawn_fn || c->closing)
		return 0;
	if (c->spawn_fn(x->pid, x->bin, c->spawn_ctx))
		return -1;
	/* its exit closes its links (capture_relinks_exited()) */
	capture_watch_exit(c, x->pid);
	/* gone meanwhile: its exit took it out, and it stays out */
	if (!bpf_map_lookup_elem(c->tree_fd, &key, &mask)) {
		mask |= 1ull << x->bin;
		bpf_map_update_elem(c->tree_fd, &key, &mask, BPF_EXIST);
	}
	return 1;
}
