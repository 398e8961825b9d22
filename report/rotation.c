/* SPDX-License-Identifier: MIT */
/*
 * The next file of a rotation, for --follow (like tail -F): gotrace-record
 * -C names the files of a recording FILE, FILE1, FILE2... (with -W N, back
 * to FILE after FILE<N-1>), closing each with its summary before it
 * creates the next (record/session.c, output_name()).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rotation.h"

#define ROTATION_WAIT_TICKS 100  /* 10 s in 100 ms ticks: a loaded machine may take
                                  * seconds to write the next file's metadata */

/* Whether a's modification time is at or after b's. */
static bool not_older(const struct stat *a, const struct stat *b)
{
	if (a->st_mtim.tv_sec != b->st_mtim.tv_sec)
		return a->st_mtim.tv_sec > b->st_mtim.tv_sec;
	return a->st_mtim.tv_nsec >= b->st_mtim.tv_nsec;
}

/*
 * The number k of `cur` in the rotation of `first` (FILE: 0, FILEk: k);
 * -1 when cur is no name of it.
 */
static long rotation_index(const char *first, const char *cur)
{
	const size_t n = strlen(first);
	char *end;
	long k;

	if (!strcmp(first, cur))
		return 0;
	if (strncmp(first, cur, n) || cur[n] < '1' || cur[n] > '9')
		return -1;
	errno = 0;
	k = strtol(cur + n, &end, 10);
	return *end || errno ? -1 : k;
}

/*
 * Whether `name` is the next file: a regular file other than `cur` (its
 * stat `cs`), written to since cur was closed (a file of an earlier
 * recording at that name is older).
 */
static bool is_next(const char *name, const struct stat *cs)
{
	struct stat st;

	return !stat(name, &st) && S_ISREG(st.st_mode) &&
	       (st.st_ino != cs->st_ino || st.st_dev != cs->st_dev) &&
	       not_older(&st, cs);
}

/*
 * The first file of the rotation `given` is part of: FILE for FILEk when
 * FILE is a regular file, else `given`. Into buf[len].
 */
static const char *first_of(const char *given, char *buf, size_t len)
{
	size_t n = strlen(given), d = n;
	struct stat st;

	while (d > 0 && given[d - 1] >= '0' && given[d - 1] <= '9')
		d--;
	if (d == n || d == 0 || given[d] == '0' || n >= len)
		return given;
	snprintf(buf, len, "%.*s", (int)d, given);
	return !stat(buf, &st) && S_ISREG(st.st_mode) ? buf : given;
}

bool rotation_next(const char *given, const char *cur, char *out, size_t outlen,
		   int (*stop)(void *), void *ctx)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	char buf[PATH_MAX];
	const char *first = first_of(given, buf, sizeof(buf));
	const long k = rotation_index(first, cur);
	struct stat cs;

	if (k < 0 || k == LONG_MAX || stat(cur, &cs))
		return false;
	for (int t = 0; t <= ROTATION_WAIT_TICKS; t++) {
		if (t && (nanosleep(&tick, NULL), stop && stop(ctx)))
			return false;
		if (snprintf(out, outlen, "%s%ld", first, k + 1) < (int)outlen &&
		    is_next(out, &cs))
			return true;
		/* -W: the ring starts again at FILE */
		if (k && snprintf(out, outlen, "%s", first) < (int)outlen &&
		    is_next(out, &cs))
			return true;
	}
	return false;
}
