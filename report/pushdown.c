/* SPDX-License-Identifier: MIT */
/*
 * A --count pushed down into the reader: after an event the lean count
 * took, the events that follow in its frame are counted by
 * gtr_reader_count_run() with the filters as its plan (filter_push.c),
 * never built as events. Only where that gives what the read loop would:
 * a count of events without --limit, time window, --calls or a sink of a
 * caller's, whose filters read no comm, binary or latency. A plan is made
 * once per (probe, kind) and kept: a trace whose probes alternate record
 * by record (entries and their returns) plans once each.
 */
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "xalloc.h"

void pushdown_init(struct pushdown *pd, const struct run *run)
{
	const struct report_opts *o = run->opts;

	*pd = (struct pushdown){
		.on = run->lean && o->count && !o->calls && !o->stats && !o->write_path &&
		      !o->sink && !o->limit && !o->since && !o->until &&
		      !(run->uses & (FILTER_USES_COMM | FILTER_USES_BINARY |
				     FILTER_USES_LATENCY)),
	};
}

/* Makes the plan of events of `probe` of kind `kind` into *pp. */
static void plan_make(struct run *run, struct pd_plan *pp, const struct gtr_probe *probe,
		      enum gtr_kind kind)
{
	memset(pp, 0, sizeof(*pp));
	pp->ok = true;
	pp->probe = probe;
	pp->plan.probe_id = probe->id;
	pp->plan.kind = kind;
	for (int k = 0; k < run->opts->nfilters && pp->ok; k++)
		pp->ok = !filter_count_plan(run->filters[k], probe, kind, run->t0, &pp->plan);
}

/* The plan of events of `probe` of kind `kind`: the one used last, a kept
 * one, or a new one. */
static const struct pd_plan *plan_find(struct run *run, struct pushdown *pd,
				       const struct gtr_probe *probe, enum gtr_kind kind)
{
	const uint64_t key = (uint64_t)probe->id << 1 | (kind == GTR_KIND_RETURN);
	struct pd_plan *pp = pd->nplans ? &pd->plans[pd->last] : NULL;

	if (pp && pp->probe == probe && pp->plan.kind == kind)
		return pp;
	const uint32_t *ix = u64map_get(&pd->ix, key);
	if (ix) {
		pd->last = *ix;
		return &pd->plans[*ix];
	}
	if (pd->nplans == pd->cap) {
		pd->cap = pd->cap ? 2 * pd->cap : 4;
		pd->plans = xrealloc(pd->plans, pd->cap * sizeof(*pd->plans), "pushdown");
	}
	pd->last = pd->nplans++;
	if (u64map_put(&pd->ix, key, pd->last, UINT32_MAX))
		xalloc_die("pushdown");
	pp = &pd->plans[pd->last];
	plan_make(run, pp, probe, kind);
	return pp;
}

uint64_t pushdown_count(struct run *run, struct pushdown *pd)
{
	const struct gtr_probe *probe = NULL;
	const struct gtr_count_plan *plans[GTR_COUNT_PLANS];
	uint64_t total = 0, matched = 0, last = 0;
	uint32_t id;
	enum gtr_kind kind;

	while (gtr_reader_count_peek(run->r, &id, &kind)) {
		/* a return whose filters read values pairs: not here */
		if (kind == GTR_KIND_RETURN && (run->uses & FILTER_USES_VALUES))
			break;
		if (!probe || probe->id != id)
			probe = gtr_reader_probe(run->r, id);
		if (!probe)
			break;
		const struct pd_plan *pp = plan_find(run, pd, probe, kind);
		if (!pp->ok)
			break;
		/* that plan first, then the others made so far: records of
		 * probes that alternate count in one call */
		uint32_t np = 0;
		plans[np++] = &pp->plan;
		for (uint32_t k = 0; k < pd->nplans && np < GTR_COUNT_PLANS; k++)
			if (pd->plans[k].ok && &pd->plans[k] != pp)
				plans[np++] = &pd->plans[k].plan;
		const uint64_t n = gtr_reader_count_plans(run->r, plans, np, &matched, &last);
		if (!n)
			break;
		total += n;
	}
	if (!total)
		return 0;
	run->nevents = gtr_add_sat(run->nevents, total);
	if (last > run->last_ts)
		run->last_ts = last;
	run->matched += matched;
	return total;
}

void pushdown_free(struct pushdown *pd)
{
	free(pd->plans);
	u64map_free(&pd->ix);
}
