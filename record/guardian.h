/* SPDX-License-Identifier: MIT */
/*
 * The guardian: a small child process of gotrace-record that lets go the
 * processes the BPF program holds (SIGSTOP before an exec'd image's first
 * instruction, until their uprobes are attached: capture_exec.c) should
 * gotrace-record die without letting them go itself (SIGKILL, a crash).
 */
#ifndef GOTRACE_GUARDIAN_H
#define GOTRACE_GUARDIAN_H

#include <sys/types.h>

struct guardian;

/*
 * Starts the guardian, watching `held_fd`, the BPF map of held processes
 * (struct gt held map: pid -> anything, kept by the BPF program and
 * capture_exec.c). The guardian keeps no other descriptor of
 * gotrace-record's (no output file, so no lock: spec/FORMAT.md), ignores
 * the terminal's signals, and waits for gotrace-record to end, however
 * it ends (guardian_stop(), or its death: the pipe's end of file or the
 * kernel's PR_SET_PDEATHSIG signal): then it sends SIGCONT to each
 * process of the map that is still stopped, and exits. Returns NULL
 * (errno set) when it cannot be started.
 */
struct guardian *guardian_start(int held_fd);

/*
 * Ends the guardian once gotrace-record has let every held process go
 * itself (so that the guardian finds none left), and waits for it.
 * Accepts NULL.
 */
void guardian_stop(struct guardian *g);

#endif
