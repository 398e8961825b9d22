// SPDX-License-Identifier: MIT
/*
 * The guardian (guardian.h). The BPF program stops a process it holds
 * before gotrace-record has heard of it, and only gotrace-record lets it
 * go (SIGCONT, capture_exec.c), so a gotrace-record killed with SIGKILL in
 * between would leave it stopped for good, its parent waiting on it. The
 * guardian is a child forked before any process can be held; it holds
 * the read end of a pipe whose write end only gotrace-record has (close
 * on exec, so no traced command keeps it), and the BPF map of held
 * processes. A byte on the pipe is gotrace-record's clean end; the
 * pipe's end of file, or SIGUSR1 from the kernel as gotrace-record dies
 * (PR_SET_PDEATHSIG: the pipe may stay open in a command forked but not
 * yet exec'd), is its death. Either way the guardian then lets go every
 * process of the map that is still stopped (none after a clean end:
 * gotrace-record lets each go and takes it out of the map) and exits.
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
#include "procstat.h"
#include "xalloc.h"

struct guardian {
	pid_t pid;     /* the guardian process */
	int wr;        /* gotrace-record's end of the pipe */
};

#define GUARD_PIPE 3    /* the guardian's descriptors, after the */
#define GUARD_HELD 4    /* three standard ones */
#define GUARD_END 'q'   /* the byte of gotrace-record's clean end */

/* SIGUSR1, gotrace-record's death (PR_SET_PDEATHSIG): interrupts read(). */
static void on_parent_death(int sig)
{
	(void)sig;
}

/* The state letter of process `pid` (/proc/PID/stat), or 0 when it is gone. */
static char proc_state(pid_t pid)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) ? 0 : st.state;
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

/* The guardian's body, gotrace-record being `parent`: never returns. */
static void guard(int rd, int held_fd, pid_t parent)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP,
				       SIGTTIN, SIGTTOU, SIGPIPE, SIGUSR2 };
	struct sigaction sa;
	int devnull = open("/dev/null", O_RDWR);
	char c;
	ssize_t n;

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_parent_death;   /* no SA_RESTART: read() ends */
	sigaction(SIGUSR1, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
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
	/* a byte, the end of file, or gotrace-record gone (its SIGUSR1 may
	 * have come before the prctl: then getppid() is another already) */
	while (getppid() == parent) {
		n = read(GUARD_PIPE, &c, 1);
		if (n >= 0 || errno != EINTR)
			break;
	}
	sweep(GUARD_HELD);
	_exit(0);
}

struct guardian *guardian_start(int held_fd)
{
	struct guardian *g;
	const pid_t parent = getpid();
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
		guard(p[0], held_fd, parent);
	}
	close(p[0]);
	g = xcalloc(1, sizeof(*g), "guardian");
	g->pid = pid;
	g->wr = p[1];
	return g;
}

void guardian_stop(struct guardian *g)
{
	const char c = GUARD_END;

	if (!g)
		return;
	/* a byte, not the end of file: a command forked but not exec'd may
	 * hold the pipe open still */
	if (write(g->wr, &c, 1) != 1) {
		/* the guardian is gone already */
	}
	close(g->wr);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(g);
}
