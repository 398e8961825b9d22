/* SPDX-License-Identifier: MIT */
/*
 * attach: a plan's uprobes attached, per binary and process: for the
 * targets at the start (the command, the -p processes, or every process
 * of a binary), and for each process of the followed tree that execs a
 * probed binary later (capture_follow(), spec/PROBES.md).
 */
#ifndef GOTRACE_ATTACH_H
#define GOTRACE_ATTACH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "capture.h"
#include "plan.h"
#include "targets.h"

struct attach;

/* The sites of every probe of `pl`, per binary, to attach through `c`
 * for the processes of `tg` (all three must outlive it). Out of memory
 * ends the program (xalloc). */
struct attach *attach_new(const struct plan *pl, const struct targets *tg,
			  struct capture *c);

/* Frees `a` (NULL is fine); the links are the capture's. */
void attach_free(struct attach *a);

/*
 * Attaches every site of every probe: per binary and target process one
 * batch (a uprobe-multi link where the kernel has them), for `cmd` (> 0:
 * the command, for every binary) or the processes targets_attach_at()
 * gives; stops early once *stop is set. Sites the kernel refuses are
 * left out with one warning. 0, or -errno with why in err[errlen].
 */
int attach_start(struct attach *a, pid_t cmd, const volatile sig_atomic_t *stop,
		 char *err, size_t errlen);

/*
 * Follows the processes that the command of attach_start() and the -p
 * targets pids[npids] start (`inherit`; without, their own execs only):
 * each probed binary is known by its file, the targets are the tree's
 * roots, and a process of the tree that execs a probed binary not
 * attached for it gets its uprobes. Call before the command runs. 0, or
 * -1 when it cannot be (a warning said so).
 */
int attach_follow(struct attach *a, bool inherit, const pid_t *pids, int npids);

/*
 * At the end of a command's recording: "probe P: BINARY was not run by
 * any traced process" for each probe of a program (not a shared
 * library) that no process of the tree exec'd.
 */
void attach_note_unrun(const struct attach *a);

#endif /* GOTRACE_ATTACH_H */
