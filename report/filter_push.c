/* SPDX-License-Identifier: MIT */
/*
 * A filter as the plan of a count pushed down into the reader
 * (gtr_reader_count_run()): for the events of one probe and kind, the
 * expression as an OR of ANDs of range conditions on integer values, the
 * time and the context (pid, tid, goid), with every part that reads only
 * what is fixed for the probe (func, kind) decided once, by the evaluator
 * itself. Anything else (strings of the event, floats, comm, latency,
 * a negated part that reads the event) leaves the filter to filter_match().
 */
#include "filter_int.h"

/* An OR of ANDs under construction: term k is c[k ? end[k - 1] : 0, end[k]). */
struct dnf {
	uint32_t nterms, ncond;
	uint32_t end[GTR_COUNT_TERMS];
	struct gtr_count_cond c[GTR_COUNT_CONDS];
};

/* What a plan is made for: the probe, its kind, the start (relative ts). */
struct push_ctx {
	struct filter *f;
	const struct gtr_probe *pr;
	enum gtr_kind kind;
	uint64_t t0;
};

static void dnf_const(struct dnf *d, bool v)
{
	d->nterms = v ? 1 : 0;
	d->ncond = 0;
	d->end[0] = 0;
}

/* a OR b into a. false when that takes more terms or conditions than a plan holds. */
static bool dnf_or(struct dnf *a, const struct dnf *b)
{
	if (a->nterms + b->nterms > GTR_COUNT_TERMS || a->ncond + b->ncond > GTR_COUNT_CONDS)
		return false;
	memcpy(a->c + a->ncond, b->c, b->ncond * sizeof(b->c[0]));
	for (uint32_t t = 0; t < b->nterms; t++)
		a->end[a->nterms + t] = a->ncond + b->end[t];
	a->nterms += b->nterms;
	a->ncond += b->ncond;
	return true;
}

/* a AND b into a (every term of a with every term of b). false as dnf_or(). */
static bool dnf_and(struct dnf *a, const struct dnf *b)
{
	struct dnf out = { 0 };

	if ((uint64_t)a->nterms * b->nterms > GTR_COUNT_TERMS)
		return false;
	for (uint32_t i = 0; i < a->nterms; i++) {
		const uint32_t ai = i ? a->end[i - 1] : 0, an = a->end[i] - ai;
		for (uint32_t j = 0; j < b->nterms; j++) {
			const uint32_t bj = j ? b->end[j - 1] : 0, bn = b->end[j] - bj;
			if (out.ncond + an + bn > GTR_COUNT_CONDS)
				return false;
			memcpy(out.c + out.ncond, a->c + ai, an * sizeof(a->c[0]));
			memcpy(out.c + out.ncond + an, b->c + bj, bn * sizeof(b->c[0]));
			out.ncond += an + bn;
			out.end[out.nterms++] = out.ncond;
		}
	}
	*a = out;
	return true;
}

/* x CMP lit as [lo, hi] (negated for !=) within [dmin, dmax]; false for
 * an unknown comparison. An empty range has lo > hi. */
static bool cond_range(uint8_t cmp, i128 lit, i128 dmin, i128 dmax, i128 *lo, i128 *hi,
		       bool *neg)
{
	*lo = dmin;
	*hi = dmax;
	*neg = cmp == CMP_NE;
	switch (cmp) {
	case CMP_EQ:
	case CMP_NE: *lo = lit; *hi = lit; break;
	case CMP_LT: *hi = lit - 1; break;
	case CMP_LE: *hi = lit; break;
	case CMP_GT: *lo = lit + 1; break;
	case CMP_GE: *lo = lit; break;
	default: return false;
	}
	if (*lo < dmin)
		*lo = dmin;
	if (*hi > dmax)
		*hi = dmax;
	if (*lo > *hi) {
		*lo = dmax;
		*hi = dmin;
	}
	return true;
}

/* The condition "field idx CMP lit" into c, in both the signed and the
 * unsigned form. false for an unknown comparison. */
static bool make_cond(uint32_t idx, uint8_t cmp, i128 lit, struct gtr_count_cond *c)
{
	i128 lo, hi;
	bool neg;

	c->idx = idx;
	if (!cond_range(cmp, lit, INT64_MIN, INT64_MAX, &lo, &hi, &neg))
		return false;
	c->slo = (int64_t)lo;
	c->shi = (int64_t)hi;
	cond_range(cmp, lit, 0, UINT64_MAX, &lo, &hi, &neg);
	c->ulo = (uint64_t)lo;
	c->uhi = (uint64_t)hi;
	c->negate = neg;
	return true;
}

/* Whether operand o reads nothing but what is fixed for a probe and kind. */
static bool fixed_operand(const struct operand *o)
{
	switch (o->src) {
	case SRC_LIT_INT:
	case SRC_LIT_STR:
	case SRC_LIT_TIME:
	case SRC_FUNC:
	case SRC_KIND:
		return true;
	default:
		return false;
	}
}

/* Whether node ni reads nothing but what is fixed for a probe and kind. */
static bool fixed_node(const struct filter *f, uint32_t ni)
{
	const struct node *n = &f->t.nodes[ni];

	switch (n->op) {
	case N_AND:
	case N_OR:
		for (uint32_t k = 0; k < n->count; k++)
			if (!fixed_node(f, f->t.kids[n->first + k]))
				return false;
		return true;
	case N_NOT:
		return fixed_node(f, n->first);
	case N_IN:
		for (uint32_t k = 0; k < n->count; k++)
			if (!fixed_operand(&f->t.lits[n->first + k]))
				return false;
		return fixed_operand(&n->l);
	case N_CMP:
		return fixed_operand(&n->l) && fixed_operand(&n->r);
	default:
		return fixed_operand(&n->l);
	}
}

/*
 * The condition "operand o CMP integer lit" into d (a term of one, or a
 * constant). 0, or -1 when o is not an integer the plan can read.
 */
static int leaf_cond(const struct push_ctx *pc, const struct operand *o, uint8_t cmp,
		     i128 lit, struct dnf *d)
{
	uint32_t idx;

	if (o->len_of)
		return -1;
	switch (o->src) {
	case SRC_PID: idx = GTR_COUNT_PID; break;
	case SRC_TID: idx = GTR_COUNT_TID; break;
	case SRC_GOID: idx = GTR_COUNT_GOID; break;
	case SRC_TS:
		idx = GTR_COUNT_TS;
		/* ts is relative to the start unless compared with a time */
		lit += o->abs ? 0 : (i128)pc->t0;
		break;
	case SRC_ARG: {
		const struct res r = filter_resolve_slot(pc->f, o->slot, pc->kind, pc->pr, NULL);
		if (r.flg & (SF_F32 | SF_F64))
			return -1;
		/* a value not of the event itself meets no comparison */
		idx = r.where == W_EVENT && r.idx >= 0 ? (uint32_t)r.idx : GTR_COUNT_NONE;
		break;
	}
	default:
		return -1;
	}
	dnf_const(d, true);
	if (!make_cond(idx, cmp, lit, &d->c[0]))
		return -1;
	d->ncond = d->end[0] = 1;
	return 0;
}

/* N_CMP node n as a plan into d: 0, or -1. */
static int cmp_plan(const struct push_ctx *pc, const struct node *n, struct dnf *d)
{
	static const uint8_t mirror[] = { [CMP_EQ] = CMP_EQ, [CMP_NE] = CMP_NE,
					  [CMP_LT] = CMP_GT, [CMP_LE] = CMP_GE,
					  [CMP_GT] = CMP_LT, [CMP_GE] = CMP_LE };
	const struct operand *field = &n->l, *lit = &n->r;
	uint8_t cmp = n->cmp;

	if (cmp > CMP_GE)
		return -1;
	if (field->src == SRC_LIT_INT || field->src == SRC_LIT_TIME) {
		field = &n->r;
		lit = &n->l;
		cmp = mirror[cmp];
	}
	if (lit->src == SRC_LIT_TIME && !pc->f->time_bound) {
		dnf_const(d, false);    /* an unbound time compares with nothing */
		return 0;
	}
	if (lit->src != SRC_LIT_INT && lit->src != SRC_LIT_TIME)
		return -1;
	return leaf_cond(pc, field, cmp, lit->ival, d);
}

/* Node ni as a plan into d: 0, or -1 when it cannot be one. */
static int node_plan(const struct push_ctx *pc, uint32_t ni, struct dnf *d)
{
	const struct filter *f = pc->f;
	const struct node *n = &f->t.nodes[ni];
	struct dnf k;

	if (fixed_node(f, ni)) {
		const struct gtr_event ev = { .probe_id = pc->pr->id, .kind = pc->kind };
		const struct report_event e = { .ev = &ev, .probe = pc->pr, .comm = "",
						.t0_ns = pc->t0 };
		const int v = filter_eval_node(pc->f, ni, &e);
		if (v < 0)
			return -1;
		dnf_const(d, v);
		return 0;
	}
	switch (n->op) {
	case N_AND:
	case N_OR:
		dnf_const(d, n->op == N_AND);
		for (uint32_t i = 0; i < n->count; i++)
			if (node_plan(pc, f->t.kids[n->first + i], &k) ||
			    !(n->op == N_AND ? dnf_and(d, &k) : dnf_or(d, &k)))
				return -1;
		return 0;
	case N_IN:
		dnf_const(d, false);
		for (uint32_t i = 0; i < n->count; i++) {
			const struct operand *l = &f->t.lits[n->first + i];
			if (l->src != SRC_LIT_INT || leaf_cond(pc, &n->l, CMP_EQ, l->ival, &k) ||
			    !dnf_or(d, &k))
				return -1;
		}
		return 0;
	case N_CMP:
		return cmp_plan(pc, n, d);
	default:
		return -1;
	}
}

int filter_count_plan(struct filter *f, const struct gtr_probe *pr, enum gtr_kind kind,
		      uint64_t t0, struct gtr_count_plan *plan)
{
	const struct push_ctx pc = { f, pr, kind, t0 };
	struct dnf have, d;

	if (f->t.field_only || node_plan(&pc, f->t.root, &d))
		return -1;
	/* AND with what the plan holds already */
	dnf_const(&have, true);
	if (plan->nterms || plan->ncond) {
		have.nterms = plan->nterms ? plan->nterms : 1;
		have.ncond = plan->ncond;
		memcpy(have.c, plan->conds, plan->ncond * sizeof(plan->conds[0]));
		if (plan->nterms)
			memcpy(have.end, plan->term_end, plan->nterms * sizeof(plan->term_end[0]));
		else
			have.end[0] = plan->ncond;
	}
	if (!dnf_and(&have, &d))
		return -1;
	if (!have.nterms) {
		/* nothing counts: one term no event meets */
		have.nterms = 1;
		have.ncond = have.end[0] = 1;
		make_cond(GTR_COUNT_NONE, CMP_EQ, 0, &have.c[0]);
	}
	plan->ncond = have.ncond;
	memcpy(plan->conds, have.c, have.ncond * sizeof(have.c[0]));
	plan->nterms = have.nterms;
	memcpy(plan->term_end, have.end, have.nterms * sizeof(have.end[0]));
	return 0;
}
