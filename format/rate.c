/* SPDX-License-Identifier: MIT */
/*
 * The windows of a rate-limited probe, reckoned from the events it kept
 * (gtr_rate.h; spec/FORMAT.md, PROBE).
 */
#include "gtr_rate.h"

void gtr_rate_windows_init(struct gtr_rate_windows *w, const struct gtr_probe *p)
{
	*w = (struct gtr_rate_windows){ .rate = gtr_probe_rate_limit(p) };
	if (!w->rate || !p->rate_window_kept)
		return;
	w->win = p->rate_window_ns;
	w->kept = p->rate_window_kept;
	w->last_ts = p->rate_window_last_ns;
	w->last_key = GTR_RATE_KEY_UNKNOWN;
	w->last_pid = 0;
}

/*
 * The BPF program's rate limit (bpf/gotrace.bpf.c, rate_allows()) keeps
 * the first `rate` events of a probe in a one-second window, which the
 * first event a second or more after the window's start opens (and
 * keeps), and suppresses the rest of the window. Events of one goroutine
 * are counted in the order of their times; those of two goroutines
 * within GTR_RATE_SLACK of each other may not be (each CPU reads the
 * clock before it counts), and where a window opens that makes its start
 * unsure. The last event of an earlier file (GTR_RATE_KEY_UNKNOWN) is of
 * another goroutine than any: unsure sooner, never later.
 */
enum gtr_rate_step gtr_rate_windows_add(struct gtr_rate_windows *w, uint64_t ts_ns,
					uint64_t key, uint32_t pid)
{
	if (!w->rate || w->off)
		return GTR_RATE_IDLE;
	const bool opens = !w->kept || (ts_ns >= w->win && ts_ns - w->win >= GTR_RATE_WINDOW);
	const bool near = w->kept && (w->last_key != key || w->last_pid != pid) &&
			  ts_ns + GTR_RATE_SLACK > w->last_ts &&
			  ts_ns < w->last_ts + GTR_RATE_SLACK;

	if (near && (opens || w->kept == 1 || ts_ns < w->win)) {
		w->off = true;
		return GTR_RATE_OFF;
	}
	if (opens) {
		w->win = ts_ns;
		w->kept = 0;
	}
	w->last_ts = ts_ns;
	w->last_key = key;
	w->last_pid = pid;
	/* an event of the window read after its opener (ts < win) counts
	 * in it: more possible losses, never fewer */
	w->kept++;
	if (w->kept == w->rate)
		return GTR_RATE_FILLED;
	return w->kept > w->rate ? GTR_RATE_OVER : GTR_RATE_KEPT;
}

void gtr_rate_windows_carry(const struct gtr_rate_windows *w, struct gtr_probe *p)
{
	/* never rate_limit: a reader of an older release would reckon the
	 * windows from the next file's first event */
	p->rate_limit = 0;
	p->rate_window_limit = w->off ? 0 : w->rate;
	if (w->off)
		return;
	p->rate_window_ns = w->win;
	p->rate_window_kept = w->kept;
	p->rate_window_last_ns = w->last_ts;
}
