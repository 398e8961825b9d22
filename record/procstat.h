/* SPDX-License-Identifier: MIT */
/*
 * One reader of /proc/PID/stat (proc(5); the fields as Linux's
 * fs/proc/array.c, do_task_stat(), writes them), with no stdio and no
 * allocation, so that the guardian (guardian.c) may call it in a child
 * forked from the threaded gotrace-record.
 */
#ifndef GOTRACE_PROCSTAT_H
#define GOTRACE_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

/* What gotrace-record reads of /proc/PID/stat. */
struct proc_stat {
	char comm[16];       /* field 2, without its parentheses, NUL-ended
				(TASK_COMM_LEN: 15 bytes at most) */
	char state;          /* field 3: 'R', 'S', 'T' stopped, 'Z' zombie, ... */
	uint32_t exit_code;  /* field 52: the wait(2) status of a zombie, 0
				while it runs (and on kernels before 3.5) */
};

/*
 * Reads /proc/PID/stat into *out. Returns 0, or -1 when the process is
 * gone (or its line cannot be read: errno set).
 */
int proc_stat_read(pid_t pid, struct proc_stat *out);

#endif
