/* SPDX-License-Identifier: MIT */
/*
 * The pushed-down count (gtr_reader_count_run()): the delta event records
 * of one probe and kind that follow in a frame, counted against a plan
 * without building events, the reader's state kept exactly as
 * gtr_reader_next() keeps it. Records of the common shape (integer
 * deltas, as many as the last record's) go through a loop of their own.
 */
#include <string.h>

#include "reader_internal.h"

/* Slot of a count run's values that holds the event's time. */
#define TS_SLOT GTR_MAX_ARGS

/*
 * A condition of a plan resolved for one run: value slot `slot` (TS_SLOT:
 * the time) meets it when ((v ^ flip) - lo <= span) != neg, the signed
 * ranges of GTR_TYPE_INT values made unsigned by flipping the sign bit.
 */
struct run_cond {
	uint32_t slot;
	bool neg;
	uint64_t flip, lo, span;
};

/* A plan resolved for one run: terms of conditions, any of which counts. */
struct run_plan {
	uint32_t nterms, nconds;
	uint32_t end[GTR_COUNT_TERMS];      /* term k ends at conds[end[k]] */
	uint32_t read;                      /* value indexes looked at, a bit each */
	struct run_cond conds[GTR_COUNT_CONDS];
	/* The common plan, one term of at most one condition per slot, as
	 * one condition per slot (always true where there is none) */
	bool by_slot;
	uint64_t slots;                     /* slots with a condition, a bit each */
	struct run_cond slot[GTR_MAX_ARGS + 1];
};

/* Whether unsigned v lies in [lo, hi] (an empty range holds nothing),
 * inverted by neg. */
static bool in_range(uint64_t v, uint64_t lo, uint64_t hi, bool neg)
{
	return (lo <= hi && v >= lo && v <= hi) != neg;
}

/*
 * Resolves c for a run: 1 with *rc filled when it reads a value or the
 * time, else what it gives every event of the run (0 or 2 for true):
 * fields of the context are the same in the whole run.
 */
static int resolve_cond(const struct gtr_reader *r, const struct gtr_count_cond *c,
			uint32_t sgn, struct run_cond *rc)
{
	const uint64_t bias = 1ull << 63;

	switch (c->idx) {
	case GTR_COUNT_PID: return in_range(r->ctx_pid, c->ulo, c->uhi, c->negate) ? 2 : 0;
	case GTR_COUNT_TID: return in_range(r->ctx_tid, c->ulo, c->uhi, c->negate) ? 2 : 0;
	case GTR_COUNT_GOID: return in_range(r->ctx_goid, c->ulo, c->uhi, c->negate) ? 2 : 0;
	case GTR_COUNT_TS:
		rc->slot = TS_SLOT;
		break;
	default:
		if (c->idx >= GTR_MAX_ARGS)
			return 0;
		rc->slot = c->idx;
		break;
	}
	const bool s = rc->slot < GTR_MAX_ARGS && (sgn >> rc->slot & 1);
	const uint64_t lo = s ? (uint64_t)c->slo ^ bias : c->ulo;
	const uint64_t hi = s ? (uint64_t)c->shi ^ bias : c->uhi;
	rc->neg = c->negate;
	rc->flip = s ? bias : 0;
	rc->lo = lo;
	rc->span = hi - lo;
	if (lo > hi) {
		/* empty: never in the range, as "always in" inverted (a
		 * value still has to be there) */
		if (rc->slot == TS_SLOT)
			return c->negate ? 2 : 0;
		rc->neg = !c->negate;
		rc->flip = rc->lo = 0;
		rc->span = UINT64_MAX;
	}
	return 1;
}

/*
 * `plan` resolved for a run of probe `pr` at the reader's context into
 * *rp: conditions that hold or fail alike for every event of the run are
 * folded into their terms. The value indexes it reads go to rp->read.
 */
static void resolve_plan(const struct gtr_reader *r, const struct gtr_probe *pr,
			 const struct gtr_count_plan *plan, struct run_plan *rp)
{
	const uint32_t nt = plan->nterms ? plan->nterms : 1;
	uint32_t sgn = 0, start = 0;

	for (uint32_t i = 0; i < pr->nargs && i < GTR_MAX_ARGS; i++)
		sgn |= (uint32_t)(pr->args[i].type == GTR_TYPE_INT) << i;
	rp->nterms = rp->nconds = rp->read = 0;
	for (uint32_t t = 0; t < nt && t < GTR_COUNT_TERMS; t++) {
		const uint32_t end = plan->nterms ? plan->term_end[t] : plan->ncond;
		const uint32_t first = rp->nconds;
		bool dead = false;
		for (uint32_t k = start; k < end && k < plan->ncond && !dead; k++) {
			struct run_cond *rc = &rp->conds[rp->nconds];
			const int v = resolve_cond(r, &plan->conds[k], sgn, rc);
			dead = v == 0;
			if (v == 1) {
				rp->nconds++;
				if (rc->slot < GTR_MAX_ARGS)
					rp->read |= 1u << rc->slot;
			}
		}
		start = end;
		if (dead) {
			rp->nconds = first;
			continue;
		}
		rp->end[rp->nterms++] = rp->nconds;
	}
	/* one term, a condition per slot at most: by slot */
	rp->by_slot = rp->nterms == 1;
	rp->slots = 0;
	for (uint32_t i = 0; i <= TS_SLOT; i++)
		rp->slot[i] = (struct run_cond){ .slot = i, .span = UINT64_MAX };
	for (uint32_t k = 0; k < rp->nconds && rp->by_slot; k++) {
		const struct run_cond *c = &rp->conds[k];
		rp->by_slot = !(rp->slots >> c->slot & 1);
		rp->slots |= 1ull << c->slot;
		rp->slot[c->slot] = *c;
	}
}

/* Whether the values v[] of an event with `have` of them (a bit each,
 * TS_SLOT's always) meet one of the terms of rp. */
static inline bool run_holds(const struct run_plan *rp, const uint64_t *v, uint64_t have)
{
	uint32_t k = 0;

	for (uint32_t t = 0; t < rp->nterms; t++) {
		bool ok = true;
		for (; k < rp->end[t]; k++) {
			const struct run_cond *c = &rp->conds[k];
			ok &= (have >> c->slot & 1) &&
			      (((v[c->slot] ^ c->flip) - c->lo <= c->span) != c->neg);
		}
		if (ok)
			return true;
	}
	return false;
}

bool gtr_reader_count_peek(const struct gtr_reader *r, uint32_t *probe_id,
			   enum gtr_kind *kind)
{
	const uint8_t *q = r->fc.p;

	if (!r->in_frame || !r->have_ctx || !r->rec_left || r->stack_pending ||
	    r->fc.end - q < 4 || (q[0] >> 5) != GCR_ARRAY ||
	    (q[1] != GTR_REC_ENTRY_DELTA && q[1] != GTR_REC_RETURN_DELTA) || q[2] >= 24)
		return false;
	*probe_id = q[2];
	*kind = q[1] == GTR_REC_RETURN_DELTA ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
	return true;
}

/* The integer delta of the value head at *q (before end): true with *q
 * past it, or false for another head. */
static inline bool delta_head(const uint8_t **q, const uint8_t *end, uint64_t *x)
{
	if (*q >= end)
		return false;
	const unsigned major = **q >> 5;
	if (major > GCR_NEGINT || fast_arg(q, end, x))
		return false;
	*x ^= (uint64_t)0 - major;   /* a negative delta: ~x */
	return true;
}

/* The head of a record of the shape `key` (its first three bytes: array
 * head, record type, probe id) and its time delta, from *q before end:
 * true with *q past them and *dts the delta, or false. */
static inline bool shape_head(const uint8_t **q, const uint8_t *end, uint32_t key,
			      uint64_t ts, uint64_t *dts)
{
	const uint8_t *p = *q;
	uint32_t w;

	if (end - p < 4)
		return false;
	memcpy(&w, p, 4);
	p += 3;
	if ((w & 0xffffff) != key || (*p >> 5) != GCR_UINT || fast_arg(&p, end, dts) ||
	    *dts > UINT64_MAX - ts)
		return false;
	*q = p;
	return true;
}

/* Where a count run is: the records' bytes, the time, the delta state
 * v[0, cur) (past cur: 0; v[TS_SLOT]: the time), what it counted. */
struct run_pos {
	const uint8_t *p, *end;
	uint64_t ts, n, m;
	uint32_t cur;
	uint64_t v[GTR_MAX_ARGS + 1];
};

/*
 * The common shape, counted without the general step: records whose head
 * is `key` (array of nv + 3, record type, probe id) and whose nv values
 * are all integer deltas, up to `left`. Stops before any other record.
 */
static void run_ints(struct run_pos *rs, uint32_t key, const uint32_t nv, uint64_t left,
		     const struct run_plan *rp)
{
	const uint8_t *p = rs->p, *const end = rs->end;
	const uint64_t have = ((1ull << nv) - 1) | 1ull << TS_SLOT;
	uint64_t ts = rs->ts, n = rs->n, m = rs->m, dts;
	/* two buffers that take turns: a record's values go to the other
	 * one, which becomes the state once the whole record has read */
	uint64_t a[GTR_MAX_ARGS + 1], b[GTR_MAX_ARGS + 1];
	uint64_t *v = a, *x = b;

	memcpy(a, rs->v, sizeof(a));
	while (n < left) {
		const uint8_t *q = p;
		if (!shape_head(&q, end, key, ts, &dts))
			break;
		uint32_t i = 0;
		for (; i < nv; i++) {
			uint64_t d;
			if (!delta_head(&q, end, &d))
				break;
			x[i] = v[i] + d;
		}
		if (i < nv)
			break;
		p = q;
		ts += dts;
		n++;
		uint64_t *t = v;
		v = x;
		x = t;
		v[TS_SLOT] = ts;
		m += run_holds(rp, v, have);
	}
	memcpy(rs->v, v, nv * sizeof(v[0]));
	rs->v[TS_SLOT] = ts;
	rs->p = p;
	rs->ts = ts;
	rs->n = n;
	rs->m = m;
}

/* Whether value v meets c. */
static inline bool cond_ok(const struct run_cond *c, uint64_t v)
{
	return ((v ^ c->flip) - c->lo <= c->span) != c->neg;
}

/*
 * run_ints() for a plan by slot (rp->by_slot), inlined with nv a constant
 * so that the values stay in registers: each slot meets its condition.
 */
static inline __attribute__((always_inline)) void
run_ints_by_slot(struct run_pos *rs, uint32_t key, const uint32_t nv, uint64_t left,
		 const struct run_plan *rp)
{
	const uint8_t *p = rs->p, *const end = rs->end;
	uint64_t ts = rs->ts, n = rs->n, m = rs->m, u[GTR_MAX_ARGS], v[GTR_MAX_ARGS], dts;
	/* a condition on a value these records lack: none of them counts */
	const uint64_t live = rp->slots >> nv << nv & ~(1ull << TS_SLOT) ? 0 : 1;
	const bool by_ts = rp->slots >> TS_SLOT & 1;

	for (uint32_t i = 0; i < nv; i++)
		v[i] = rs->v[i];
	while (n < left) {
		const uint8_t *q = p;
		if (!shape_head(&q, end, key, ts, &dts))
			break;
		bool good = true;
#pragma GCC unroll 4
		for (uint32_t i = 0; i < nv; i++) {
			uint64_t d = 0;
			good &= delta_head(&q, end, &d);
			u[i] = v[i] + d;
		}
		if (!good)
			break;
		p = q;
		ts += dts;
		n++;
		uint64_t ok = live & (!by_ts || cond_ok(&rp->slot[TS_SLOT], ts));
#pragma GCC unroll 4
		for (uint32_t i = 0; i < nv; i++) {
			v[i] = u[i];
			ok &= cond_ok(&rp->slot[i], u[i]);
		}
		m += ok;
	}
	for (uint32_t i = 0; i < nv; i++)
		rs->v[i] = v[i];
	rs->v[TS_SLOT] = ts;
	rs->p = p;
	rs->ts = ts;
	rs->n = n;
	rs->m = m;
}

/* run_ints() for the values of the last record, rs->cur of them. */
static void run_shape(struct run_pos *rs, uint8_t want, uint32_t id, uint64_t left,
		      const struct run_plan *rp)
{
	const uint32_t key = (GCR_ARRAY << 5 | (rs->cur + 3)) | (uint32_t)want << 8 | id << 16;

	if (rs->cur + 3 >= 24)
		return;
	switch (rp->by_slot ? rs->cur : UINT32_MAX) {
	case 0: run_ints_by_slot(rs, key, 0, left, rp); break;
	case 1: run_ints_by_slot(rs, key, 1, left, rp); break;
	case 2: run_ints_by_slot(rs, key, 2, left, rp); break;
	case 3: run_ints_by_slot(rs, key, 3, left, rp); break;
	case 4: run_ints_by_slot(rs, key, 4, left, rp); break;
	default: run_ints(rs, key, rs->cur, left, rp); break;
	}
}

/*
 * One record of any shape decode_delta_fast() takes, of this probe and
 * kind (`want`, `id`), into rs: true, or false with nothing consumed.
 */
static inline bool run_step(struct run_pos *rs, uint8_t want, uint32_t id,
			    const struct run_plan *rp)
{
	const uint8_t *q = rs->p, *const end = rs->end;
	uint64_t x[GTR_MAX_ARGS], dts;
	uint32_t strs;

	if (end - q < 4 || (q[0] >> 5) != GCR_ARRAY || q[1] != want || q[2] != id)
		return false;
	const unsigned cnt = q[0] & 31;
	if (cnt < 3 || cnt >= 24 || cnt - 3 > GTR_MAX_ARGS)
		return false;
	q += 3;
	const uint32_t nv = cnt - 3;
	if ((*q >> 5) != GCR_UINT || fast_arg(&q, end, &dts) || dts > UINT64_MAX - rs->ts ||
	    delta_values(&q, end, nv, rp->read, x, &strs, NULL))
		return false;
	rs->p = q;
	rs->ts += dts;
	rs->n++;
	for (uint32_t i = 0; i < nv; i++)
		rs->v[i] = (strs >> i & 1) ? 0 : rs->v[i] + x[i];
	for (uint32_t i = nv; i < rs->cur; i++)
		rs->v[i] = 0;
	rs->cur = nv;
	rs->v[TS_SLOT] = rs->ts;
	rs->m += run_holds(rp, rs->v, ((1ull << nv) - 1) | 1ull << TS_SLOT);
	return true;
}

/* A plan being counted: its probe's delta state, resolved. */
struct lane {
	struct rstate *st;
	uint32_t id;
	uint8_t want;           /* record type: GTR_REC_ENTRY_DELTA or _RETURN_DELTA */
	struct run_plan rp;
	struct run_pos rs;      /* p, ts, n and m as of its last record */
};

/*
 * Sets up lane L for `plan`; false when the plan cannot count here (its
 * probe not described, of an id past 24, or with no delta state in this
 * frame yet, or a plan out of bounds).
 */
static bool lane_init(struct gtr_reader *r, const struct gtr_count_plan *plan, struct lane *L)
{
	const uint32_t id = plan->probe_id;
	const struct gtr_probe *pr = rd_find_probe(r, id);

	if (!pr || id >= 24 || plan->ncond > GTR_COUNT_CONDS || plan->nterms > GTR_COUNT_TERMS)
		return false;
	L->st = pstate(r, id, false);
	if (!L->st)
		return false;
	L->id = id;
	L->want = plan->kind == GTR_KIND_RETURN ? GTR_REC_RETURN_DELTA : GTR_REC_ENTRY_DELTA;
	resolve_plan(r, pr, plan, &L->rp);
	L->rs = (struct run_pos){ .cur = L->st->nvals < GTR_MAX_ARGS ? L->st->nvals
								      : GTR_MAX_ARGS };
	for (uint32_t i = 0; i < L->rs.cur; i++)
		L->rs.v[i] = L->st->vals[i];
	return true;
}

/*
 * The records of lane L from the shared position *at on: those of the
 * shape of its last one in bulk, else one. false when it took none.
 */
static bool lane_run(struct lane *L, struct run_pos *at, uint64_t left)
{
	const uint64_t n = at->n;

	L->rs.p = at->p;
	L->rs.end = at->end;
	L->rs.ts = at->ts;
	L->rs.n = at->n;
	L->rs.m = at->m;
	run_shape(&L->rs, L->want, L->id, left, &L->rp);
	if (L->rs.n == n && !run_step(&L->rs, L->want, L->id, &L->rp))
		return false;
	at->p = L->rs.p;
	at->ts = L->rs.ts;
	at->n = L->rs.n;
	at->m = L->rs.m;
	return true;
}

uint64_t gtr_reader_count_plans(struct gtr_reader *r, const struct gtr_count_plan *const *plans,
				uint32_t nplans, uint64_t *matched, uint64_t *last_ts)
{
	struct lane lanes[GTR_COUNT_PLANS];
	int8_t by_id[24];
	uint32_t nl = 0;

	if (!r->in_frame || !r->have_ctx || r->stack_pending)
		return 0;
	memset(by_id, -1, sizeof(by_id));
	for (uint32_t k = 0; k < nplans && nl < GTR_COUNT_PLANS; k++)
		if (plans[k]->probe_id < 24 && by_id[plans[k]->probe_id] < 0 &&
		    lane_init(r, plans[k], &lanes[nl]))
			by_id[plans[k]->probe_id] = (int8_t)nl++;
	struct run_pos at = { .p = r->fc.p, .end = r->fc.end, .ts = r->prev_ts };
	/* each record to the lane of its probe, while one takes it */
	while (nl && at.n < r->rec_left && at.end - at.p >= 4) {
		const uint8_t *q = at.p;
		if ((q[0] >> 5) != GCR_ARRAY || q[2] >= 24 || by_id[q[2]] < 0 ||
		    !lane_run(&lanes[by_id[q[2]]], &at, r->rec_left))
			break;
	}
	if (!at.n)
		return 0;
	for (uint32_t k = 0; k < nl; k++) {
		const struct lane *L = &lanes[k];
		for (uint32_t i = 0; i < L->rs.cur; i++)
			L->st->vals[i] = L->rs.v[i];
		L->st->nvals = L->rs.cur;
	}
	r->fc.p = at.p;
	r->rec_left -= at.n;
	r->rec_no += at.n;
	r->prev_ts = at.ts;
	*last_ts = at.ts;
	*matched += at.m;
	return at.n;
}

uint64_t gtr_reader_count_run(struct gtr_reader *r, const struct gtr_count_plan *plan,
			      uint64_t *matched, uint64_t *last_ts)
{
	return gtr_reader_count_plans(r, &plan, 1, matched, last_ts);
}
