/* SPDX-License-Identifier: MIT */
/*
 * targets: the executables of the -p processes (or of the command), the
 * binary of probes without BINARY:. Each distinct executable (the same
 * inode, or the same path and build id) is planned once; a probe without
 * BINARY: is planned in every one that holds what it names.
 */
#ifndef GOTRACE_TARGETS_H
#define GOTRACE_TARGETS_H

#include <sys/types.h>

#include "plan.h"

struct targets;

/*
 * The executables of pids[npids] (/proc/PID/exe), or, with npids 0, the
 * command's `path`. NULL after printing why (a PID that is gone, or the id of a
 * thread, which names its process).
 */
struct targets *targets_new(const pid_t *pids, int npids, const char *path);

/* Frees `t` and the binaries it opened (NULL is fine). */
void targets_free(struct targets *t);

/*
 * Adds probe `text` to `pl` (plan_add()): with BINARY:, in that binary,
 * which must exist; else in every distinct executable of the targets that
 * holds what it names, with a note naming the others (none with `quiet`).
 * 0, or -1 after printing why (found in none: the executables searched).
 */
int targets_plan(struct targets *t, struct plan *pl, const char *text,
		 int quiet, int root_pid);

/*
 * The k-th (path to attach, PID) pair binary `b` of the plan is attached
 * for: an executable of the targets for the processes running it (each
 * through its own /proc/PID/exe), any other binary for every target
 * (pid -1 without -p). 1 while there is one, 0 after the last.
 */
int targets_attach_at(const struct targets *t, const struct binary *b, int k,
		      const char **attach, pid_t *pid);

#endif /* GOTRACE_TARGETS_H */
