/* SPDX-License-Identifier: MIT */
/*
 * Loss spans of pairing (report/pair.h, "Losses"): per function, the
 * intervals of trace time drop records say events were missing from, kept
 * as at most MAX_SPANS disjoint intervals, and the drop records that came
 * too late for calls already shown as paired.
 */
#include <stdlib.h>
#include <string.h>

#include "pair_int.h"
#include "search.h"
#include "xalloc.h"

/* The first interval of `s` that ends at or after `lo` (s->n: none). */
static uint32_t spans_find(const struct spanset *s, uint64_t lo)
{
	return (uint32_t)SEARCH_GE(s->v, s->n, hi, lo);
}

/* Whether some interval of `s` meets [lo, hi]. */
static bool spans_hit(const struct spanset *s, uint64_t lo, uint64_t hi)
{
	const uint32_t a = spans_find(s, lo);

	return a < s->n && s->v[a].lo <= hi;
}

/* Adds [lo, hi] to `s`, merged with the intervals it meets. Beyond
 * MAX_SPANS the two oldest become one (covering the gap between them). */
static void spans_add(struct spanset *s, uint64_t lo, uint64_t hi)
{
	const uint32_t a = spans_find(s, lo);
	uint32_t j = a;
	while (j < s->n && s->v[j].lo <= hi) {
		if (s->v[j].lo < lo)
			lo = s->v[j].lo;
		if (s->v[j].hi > hi)
			hi = s->v[j].hi;
		j++;
	}
	if (j == a) {             /* meets none: insert at a */
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 4;
			s->v = xrealloc(s->v, s->cap * sizeof(*s->v), "pairing");
		}
		memmove(s->v + a + 1, s->v + a, (s->n - a) * sizeof(*s->v));
		s->n++;
	} else if (j > a + 1) {   /* [a, j) become one */
		memmove(s->v + a + 1, s->v + j, (s->n - j) * sizeof(*s->v));
		s->n -= j - a - 1;
	}
	s->v[a] = (struct span){ lo, hi };
	if (s->n > MAX_SPANS) {
		s->v[0].hi = s->v[1].hi;
		memmove(s->v + 1, s->v + 2, (s->n - 2) * sizeof(*s->v));
		s->n--;
	}
}

/* Makes the per-function arrays hold `fid`. */
void fid_room(struct pairer *p, uint32_t fid)
{
	if (fid < p->nspans)
		return;
	const uint32_t n = fid + 1 > p->nfuncs ? fid + 1 : p->nfuncs;
	p->spans = xrealloc(p->spans, n * sizeof(*p->spans), "pairing");
	memset(p->spans + p->nspans, 0, (n - p->nspans) * sizeof(*p->spans));
	p->judged = xrealloc(p->judged, n * sizeof(*p->judged), "pairing");
	memset(p->judged + p->nspans, 0, (n - p->nspans) * sizeof(*p->judged));
	p->nspans = n;
}

/* Whether function `fid` (or every function) lost events in [lo, hi]. */
bool lost_in(const struct pairer *p, uint32_t fid, uint64_t lo, uint64_t hi)
{
	if (spans_hit(&p->all, lo, hi))
		return true;
	return fid < p->nspans && spans_hit(&p->spans[fid], lo, hi);
}

/* A return of `fid` at `ts` was released as not lost. */
void judge(struct pairer *p, uint32_t fid, uint64_t ts)
{
	const uint64_t t = ts < UINT64_MAX ? ts + 1 : ts;

	if (fid == NO_FID)
		return;
	fid_room(p, fid);
	if (t > p->judged[fid])
		p->judged[fid] = t;
	if (t > p->judged_any)
		p->judged_any = t;
}

/* Adds [lo, hi] to the loss spans of `fid` (NO_FID: of every function),
 * counting a late record when a call it concerns was decided already. */
static void loss_add(struct pairer *p, uint32_t fid, uint64_t lo, uint64_t hi)
{
	if (fid == NO_FID) {
		if (p->judged_any && lo < p->judged_any)
			p->cnt.late = gtr_add_sat(p->cnt.late, 1);
		spans_add(&p->all, lo, hi);
		return;
	}
	fid_room(p, fid);
	if (p->judged[fid] && lo < p->judged[fid])
		p->cnt.late = gtr_add_sat(p->cnt.late, 1);
	spans_add(&p->spans[fid], lo, hi);
}

/* Notes [lo, hi] as a span where probe `e` may have suppressed events. */
static void rate_span(struct pairer *p, struct probe_ent *e, uint64_t lo, uint64_t hi)
{
	e->full[e->nfull++ % RATE_FULL] = (struct span){ lo, hi };
	loss_add(p, e->fid, lo, hi);
}

/*
 * A file that holds every event a rate limit kept from the start
 * (gtr_probe.rate_limit), or from the window current when it began (a
 * later file of a rotation: gtr_probe.rate_window_limit and _*), shows
 * the windows (format/gtr_rate.h): events can have been suppressed only
 * from a window's `rate`-th kept event to its end, and that span is a loss span
 * of the function; the drop records that count the suppressed events add
 * none (pair_drop()). A suppressed event that could split a pair ran on
 * the pair's goroutine between its entry and return, so every event
 * counted before it has a time below the return's: the span needs no
 * margin at its start. Where a window's start is unsure the probe's
 * windows are no longer reckoned (off), and its drop records' spans
 * stand, as without a known limit. A window that keeps more than `rate`
 * (a count the BPF program reset twice) may end later than it seems: the
 * second after each such event is a loss span too.
 */
void rate_kept(struct pairer *p, struct probe_ent *e, const struct gtr_event *ev, uint64_t key)
{
	const uint64_t ts = ev->ts_ns;

	if (!e || !e->used || !e->rw.rate || !probe_has_ret(p, e) || p->lim.lossless)
		return;
	switch (gtr_rate_windows_add(&e->rw, ts, key, ev->pid)) {
	case GTR_RATE_FILLED:
		rate_span(p, e, ts, e->rw.win + RATE_WINDOW);
		break;
	case GTR_RATE_OVER:
		rate_span(p, e, ts, ts + RATE_WINDOW);
		break;
	default:
		break;
	}
}

void rate_begin(struct pairer *p, struct probe_ent *e, const struct gtr_probe *pr)
{
	struct gtr_rate_windows *w = &e->rw;

	gtr_rate_windows_init(w, pr);
	if (!w->rate || w->kept < w->rate || p->lim.lossless)
		return;
	/* the window was full before this file: suppression possible
	 * from its start (its filling event is in an earlier file) to its
	 * end, or a second after its last event when it kept more */
	const uint64_t end = w->win + RATE_WINDOW;
	const uint64_t over = w->last_ts + RATE_WINDOW;

	rate_span(p, e, w->win, w->kept > w->rate && over > end ? over : end);
}

/* Whether the windows of probe `e` explain events it suppressed in
 * [lo, hi]: one of its last full windows meets it. */
static bool rate_explains(const struct probe_ent *e, uint64_t lo, uint64_t hi)
{
	const uint32_t n = e->nfull < RATE_FULL ? e->nfull : RATE_FULL;

	if (e->rw.off)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (e->full[i].lo <= hi + RATE_SLACK && e->full[i].hi + RATE_SLACK >= lo)
			return true;
	return false;
}

/*
 * A drop record of suppressed events is written when the recorder reads
 * the counts, and the events kept before it may follow it in the file:
 * they were still in the ring buffer (spec/FORMAT.md: a drop is "noticed
 * at this time"). The event that filled the window that explains it can
 * be among them, so a record the windows do not explain yet waits (its
 * probe's pend) until events RATE_SLACK past its time have been read;
 * held returns wait for it too (pair.c, ripe_ts()).
 */
static void rate_pend(struct pairer *p, struct probe_ent *e, uint64_t lo, uint64_t hi)
{
	if (!e->pending) {
		e->pending = true;
		e->pend = (struct span){ lo, hi };
		if (!p->npend++ || hi < p->pend_due)
			p->pend_due = hi;
		return;
	}
	if (lo < e->pend.lo)
		e->pend.lo = lo;
	if (hi > e->pend.hi)
		e->pend.hi = hi;
}

void rate_settle(struct pairer *p, bool all)
{
	if (!p->npend || (!all && (p->max_seen < RATE_SLACK ||
				   p->max_seen - RATE_SLACK < p->pend_due)))
		return;
	uint64_t due = UINT64_MAX;
	for (uint32_t i = 0; i < p->npents && p->npend; i++) {
		struct probe_ent *e = &p->pents[i];

		if (!e->pending)
			continue;
		if (!all && (p->max_seen < RATE_SLACK || p->max_seen - RATE_SLACK < e->pend.hi)) {
			if (e->pend.hi < due)
				due = e->pend.hi;
			continue;
		}
		e->pending = false;
		p->npend--;
		if (!rate_explains(e, e->pend.lo, e->pend.hi))
			loss_add(p, e->fid, e->pend.lo, e->pend.hi);
	}
	p->pend_due = due;
}

/* The time of the last drop record of (probe, cpu), NULL when none was
 * kept; made when `add` and fewer than NPREV are kept. */
static uint64_t *prev_slot(struct pairer *p, uint32_t probe, uint32_t cpu, bool add)
{
	const uint64_t key = (uint64_t)probe << 32 | cpu;
	const uint32_t *i = u64map_get(&p->prevx, key);

	if (i)
		return &p->prev[*i];
	if (!add || p->nprev >= NPREV)
		return NULL;          /* full: later spans reach back to the start */
	if (!p->prev)
		p->prev = xrealloc(NULL, NPREV * sizeof(*p->prev), "pairing");
	if (u64map_put(&p->prevx, key, p->nprev, NPREV))
		xalloc_die("pairing: drop records index");
	p->prev[p->nprev] = 0;
	return &p->prev[p->nprev++];
}

void pair_drop(struct pairer *p, const struct gtr_drop *d)
{
	uint64_t hi = d->ts_ns;
	uint64_t lo = d->since_ns;

	if (hi > p->max_seen)
		p->max_seen = hi;
	if (lo && lo <= hi) {
		if (hi - lo > p->longest)
			p->longest = hi - lo;
	} else {
		/* unknown start: since the previous record of this (probe,
		 * cpu), else since the start of the trace */
		const uint64_t *pv = prev_slot(p, d->probe_id, d->cpu, false);
		lo = pv && *pv <= hi ? *pv : 0;
	}
	uint64_t *pv = prev_slot(p, d->probe_id, d->cpu, true);
	if (pv)
		*pv = hi;
	if (!d->count)
		return;
	struct probe_ent *pe = d->probe_id == UINT32_MAX ? NULL : pmap_slot(p, d->probe_id);
	const bool rated = pe && pe->used ? pe->rw.rate && !p->lim.lossless : p->any_rate;
	if (pe && pe->used && !probe_has_ret(p, pe))
		return;                   /* not paired: nothing to decide */
	if (d->reason == GTR_DROP_RATE && pe && pe->used && p->fwhole[pe->fid])
		return;                   /* whole calls left out, no half */
	if (d->reason == GTR_DROP_RATE && rated && pe && rate_explains(pe, lo, hi))
		return;                   /* its windows hold these: rate_kept() */
	if (d->reason == GTR_DROP_RATE && rated && pe && pe->used && !pe->rw.off) {
		rate_pend(p, pe, lo, hi); /* the window's filling event may follow */
		rate_settle(p, false);
		return;
	}
	/* events lost from the ring buffer counted in their window all the
	 * same: the rest of it may have been suppressed, unseen */
	if (d->reason != GTR_DROP_RATE && rated)
		hi = hi < UINT64_MAX - RATE_WINDOW ? hi + RATE_WINDOW : UINT64_MAX;
	loss_add(p, pe && pe->used ? pe->fid : NO_FID, lo, hi);
}

