/* SPDX-License-Identifier: MIT */
/*
 * The windows of a rate-limited probe as the events it kept show them
 * (spec/FORMAT.md, PROBE `rate_limit` and `rate_window`): one reckoning
 * that gotrace-record runs over the events it writes, to carry a probe's
 * current window into the next file of a rotation, and that the report
 * runs over the events it reads (report/pair_loss.c), so that both count
 * alike.
 */
#ifndef GTR_RATE_H
#define GTR_RATE_H

#include <stdbool.h>
#include <stdint.h>

#include "gtr.h"

#define GTR_RATE_WINDOW 1000000000ull /* the BPF program's window, ns */
#define GTR_RATE_SLACK 1000000ull     /* events of two goroutines this close
					 (1 ms) may be counted out of time order */
#define GTR_RATE_KEY_UNKNOWN UINT64_MAX /* the goroutine of an event of an
					   earlier file: none of this file's */

/* The goroutine an event counts on: its goid, else its thread (tid | 1 << 63). */
static inline uint64_t gtr_rate_key(uint64_t goid, uint32_t tid)
{
	return goid ? goid : (uint64_t)tid | 1ull << 63;
}

/* The reckoned windows of one probe. */
struct gtr_rate_windows {
	uint64_t rate;      /* events kept per window at most; 0: not reckoned */
	uint64_t win;       /* start of the current window, ns */
	uint64_t kept;      /* events counted in it so far (0: none yet) */
	uint64_t last_ts;   /* the last kept event: time, */
	uint64_t last_key;  /* goroutine (goid, else tid | 1 << 63), */
	uint32_t last_pid;  /* and process */
	bool off;           /* where a window opened is unsure: no longer reckoned */
};

/* What one kept event did to its probe's windows. */
enum gtr_rate_step {
	GTR_RATE_IDLE,    /* not reckoned (no limit, or off before it) */
	GTR_RATE_KEPT,    /* counted below the limit */
	GTR_RATE_FILLED,  /* the `rate`-th of its window: suppression possible
			     from it to the window's end */
	GTR_RATE_OVER,    /* past the limit (the BPF program reset the count
			     twice): the window may end up to a second later */
	GTR_RATE_OFF,     /* its window's start is unsure: off from here on */
};

/*
 * Starts the reckoning of probe `p` as its file gives it: its limit
 * (gtr_probe_rate_limit(), 0: none reckoned) and, in a later file of a
 * rotation, the window that was current when the file began
 * (p->rate_window_*).
 */
void gtr_rate_windows_init(struct gtr_rate_windows *w, const struct gtr_probe *p);

/*
 * Counts an event of the probe kept at ts_ns (CLOCK_MONOTONIC) on
 * goroutine `key` of process `pid`, in file order; says what it did.
 */
enum gtr_rate_step gtr_rate_windows_add(struct gtr_rate_windows *w, uint64_t ts_ns,
					uint64_t key, uint32_t pid);

/*
 * Writes the current window of `w` into `p` for the next file of a
 * rotation: p->rate_limit 0 and p->rate_window_* set (rate_window_limit
 * the limit, 0 without one or when the windows are off: not known).
 */
void gtr_rate_windows_carry(const struct gtr_rate_windows *w, struct gtr_probe *p);

#endif
