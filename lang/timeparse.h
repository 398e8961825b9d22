/* SPDX-License-Identifier: MIT */
/*
 * timeparse: the time and duration literals shared by the filter language
 * and --since/--until (spec/FILTER.md, "Literals"): durations like Go's
 * (1h30m, 1.5s, 200us, 3ns), wall-clock times (RFC 3339 or HH:MM:SS[.frac]
 * in the local time zone) and times relative to the start (+5s).
 */
#ifndef GOTRACE_TIMEPARSE_H
#define GOTRACE_TIMEPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gtr.h"

enum rtime_kind {
	RTIME_REL = 0,   /* ns after the start (the file's first event) */
	RTIME_ABS = 1,   /* CLOCK_REALTIME ns since the Unix epoch */
	RTIME_TOD = 2,   /* ns after local midnight of the recording's day */
};

struct rtime {
	enum rtime_kind kind;
	int64_t ns;
};

/*
 * Parses a duration at s[0, n) ("10ms", "1.5s", "1h30m", units ns us µs ms
 * s m h; fractions are truncated to whole ns) into *ns. Returns the number
 * of bytes used (the longest duration prefix), 0 when s does not start with
 * one, or -1 when it starts with one that is malformed or out of range
 * (message in err[errlen]).
 */
int rtime_duration(const char *s, size_t n, int64_t *ns, char *err, size_t errlen);

/*
 * Parses a wall-clock time at s[0, n): RFC 3339 ("2024-05-01T12:00:03.5Z",
 * "...+02:00") or a time of day "HH:MM[:SS[.frac]]". Returns bytes used,
 * 0 when s starts with neither, -1 when malformed (message in err).
 */
int rtime_clock(const char *s, size_t n, struct rtime *t, char *err, size_t errlen);

/*
 * Parses a whole --since/--until argument: "+DURATION" (relative to the
 * start), an RFC 3339 time or HH:MM[:SS[.frac]]. 0, or -1 with a message.
 */
int rtime_parse(const char *s, struct rtime *t, char *err, size_t errlen);

/*
 * CLOCK_MONOTONIC ns of the recording host for `t`, using the host's clock
 * anchor (start_mono_ns, start_realtime_ns; TOD uses the local date of
 * start_realtime_ns, in the time zone of this process) and `t0_ns` for
 * relative times. Returns false when an absolute time is asked for and the
 * file has no anchor (start_realtime_ns == 0).
 */
bool rtime_to_mono(const struct rtime *t, const struct gtr_host *h,
		   uint64_t t0_ns, int64_t *mono);

/* CLOCK_REALTIME ns of monotonic time `mono` by the host's anchor. */
int64_t rtime_mono_to_real(const struct gtr_host *h, uint64_t mono);

/* Writes `ns` as a short human duration ("950ns", "12.345us", "1.500ms",
 * "2.000s") into out[24]; returns out. */
char *rtime_fmt_duration(char out[24], uint64_t ns);

#endif /* GOTRACE_TIMEPARSE_H */
