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
	const uint64_t hi = d->ts_ns;
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
	const struct probe_ent *pe = d->probe_id == UINT32_MAX ? NULL : pmap_slot(p, d->probe_id);
	if (pe && pe->used) {
		if (!probe_has_ret(p, pe))
			return;           /* not paired: nothing to decide */
		fid_room(p, pe->fid);
		if (p->judged[pe->fid] && lo < p->judged[pe->fid])
			p->cnt.late = gtr_add_sat(p->cnt.late, 1);
		spans_add(&p->spans[pe->fid], lo, hi);
	} else {
		if (p->judged_any && lo < p->judged_any)
			p->cnt.late = gtr_add_sat(p->cnt.late, 1);
		spans_add(&p->all, lo, hi);
	}
}

