// SPDX-License-Identifier: MIT
/*
 * Reads /proc/PID/stat (procstat.h): one read(2) into a stack buffer,
 * parsed by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

/* Writes "/proc/PID/stat" into buf (at least 32 bytes), without stdio. */
static void stat_path(char *buf, pid_t pid)
{
	char digits[16];
	int n = 0;
	unsigned v = (unsigned)pid;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(digits));
	memcpy(buf, "/proc/", 6);
	buf += 6;
	while (n)
		*buf++ = digits[--n];
	memcpy(buf, "/stat", 6);
}

int proc_stat_read(pid_t pid, struct proc_stat *out)
{
	char path[32], buf[1024], *lp, *rp, *p;
	ssize_t n;
	int fd, field;

	memset(out, 0, sizeof(*out));
	stat_path(path, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) S ...": comm may hold ')' and spaces itself */
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp || rp[1] != ' ' || !rp[2]) {
		errno = EINVAL;
		return -1;
	}
	n = rp - lp - 1;
	if (n > (ssize_t)sizeof(out->comm) - 1)
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, lp + 1, (size_t)n);
	out->state = rp[2];
	for (p = rp, field = 2; p && field < 52; field++)
		p = strchr(p + 1, ' ');
	for (p = p ? p + 1 : NULL; p && *p >= '0' && *p <= '9'; p++)
		out->exit_code = out->exit_code * 10 + (uint32_t)(*p - '0');
	return 0;
}
