/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the /proc/PID/stat reader (record/procstat.h): a running
 * process, a zombie with its wait(2) status, a name with ')' and spaces,
 * and a process that is gone.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procstat.h"

Test(procstat, a_running_process_shows_its_name_and_state)
{
	struct proc_stat st;

	cr_assert_eq(prctl(PR_SET_NAME, "gt (x) y", 0, 0, 0), 0);
	cr_assert_eq(proc_stat_read(getpid(), &st), 0);
	cr_expect_str_eq(st.comm, "gt (x) y", "a name holding ')' and spaces is read whole");
	cr_expect_eq(st.state, 'R', "the reader itself runs: %c", st.state);
	cr_expect_eq(st.exit_code, 0);
}

Test(procstat, a_zombie_shows_its_exit_status)
{
	struct proc_stat st;
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (!pid) {
		prctl(PR_SET_NAME, "gt-zombie", 0, 0, 0);
		_exit(7);
	}
	/* not reaped: wait until it has exited (WNOWAIT keeps the zombie) */
	siginfo_t si;
	cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(proc_stat_read(pid, &st), 0);
	cr_expect_eq(st.state, 'Z', "%c", st.state);
	cr_expect_str_eq(st.comm, "gt-zombie");
	cr_expect_eq(st.exit_code, 7u << 8, "the wait(2) status of exit(7): %u", st.exit_code);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect_eq(proc_stat_read(pid, &st), -1, "reaped: gone");
	cr_expect_eq(st.state, 0);
}

Test(procstat, a_stopped_process_shows_t)
{
	struct proc_stat st;
	siginfo_t si;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (!pid) {
		raise(SIGSTOP);
		_exit(0);
	}
	cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WSTOPPED), 0);
	cr_assert_eq(proc_stat_read(pid, &st), 0);
	cr_expect_eq(st.state, 'T', "%c", st.state);
	kill(pid, SIGCONT);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}
