// SPDX-License-Identifier: MIT
/*
 * The guardian (guardian.h). The BPF program stops a process it holds
 * before gotrace-record has heard of it, and only gotrace-record lets it
 * go (SIGCONT, capture_exec.c), so a gotrace-record killed with SIGKILL in
 * between would leave it stopped for good, its parent waiting on it. The
 * guardian is a child forked before any process can be held; it holds
 * the read end of a pipe whose write end only gotrace-record has (close
 * on exec, so no traced command keeps it), and the BPF map of held
 * processes. The pipe's end of file is gotrace-record's end, whichever
 * way it came: the guardian then lets go every process of the map that
 * is still stopped (none after a clean end: gotrace-record lets each go
 * and takes it out of the map) and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>   /* snprintf */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "guardian.h"
#include "xalloc.h"

struct guardian {
	pid_t pid;     /* the guardian process */
	int wr;        /* gotrace-record's end of the pipe */
};

#define GUARD_PIPE 3    /* the guardian's descriptors, after the */
#define GUARD_HELD 4    /* three standard ones */

/* The state letter of process `pid` (/proc/PID/stat, proc(5)), or 0 when
 * it is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "pid (comm) S ...": comm may hold ')' itself */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Lets go every process of the held map that is still stopped. */
static void sweep(int held_fd)
{
	__u32 key, next, *prev = NULL;

	while (bpf_map_get_next_key(held_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (proc_state((pid_t)key) != 'T')
			continue;
		if (kill((pid_t)key, SIGCONT) == 0) {
			/* no stdio: the fork may have copied a held lock */
			char msg[200];
			int n = snprintf(msg, sizeof(msg), "gotrace-record: ended while "
					 "process %u was held before its first instruction; "
					 "it was let go (SIGCONT), unprobed\n", key);

			if (n > 0 && write(2, msg, (size_t)n) < 0) {
				/* nowhere left to say it */
			}
		}
	}
}

/* The guardian's body: never returns. */
static void guard(int rd, int held_fd)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP,
				       SIGTTIN, SIGTTOU, SIGPIPE, SIGUSR1, SIGUSR2 };
	int devnull = open("/dev/null", O_RDWR);
	char c;
	ssize_t n;

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	prctl(PR_SET_NAME, "gotrace-guard", 0, 0, 0);
	/* only the pipe and the map, at known numbers; stderr kept for the
	 * message, stdin and stdout (perhaps the trace) let go */
	rd = fcntl(rd, F_DUPFD, 64);
	held_fd = fcntl(held_fd, F_DUPFD, 64);
	if (rd < 0 || held_fd < 0 || dup2(rd, GUARD_PIPE) < 0 ||
	    dup2(held_fd, GUARD_HELD) < 0)
		_exit(1);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
	}
	if (syscall(SYS_close_range, GUARD_HELD + 1, ~0U, 0) != 0)
		for (int fd = GUARD_HELD + 1; fd < 65536; fd++)
			close(fd);
	/* nothing is ever written: the end of file is gotrace-record's end */
	do
		n = read(GUARD_PIPE, &c, 1);
	while (n < 0 && errno == EINTR);
	sweep(GUARD_HELD);
	_exit(0);
}

struct guardian *guardian_start(int held_fd)
{
	struct guardian *g;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		errno = e;
		return NULL;
	}
	if (pid == 0) {
		close(p[1]);
		guard(p[0], held_fd);
	}
	close(p[0]);
	g = xcalloc(1, sizeof(*g), "guardian");
	g->pid = pid;
	g->wr = p[1];
	return g;
}

void guardian_stop(struct guardian *g)
{
	if (!g)
		return;
	close(g->wr);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(g);
}
