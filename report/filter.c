/* SPDX-License-Identifier: MIT */
/*
 * The filter language of spec/FILTER.md at report time: the per-event
 * evaluator and its per-probe resolution of fields; filter_compile.c
 * parses (lang/) and compiles the regular expressions, filter_check.c
 * checks types against the probes, filter_push.c makes the plan of a
 * pushed-down count.
 * Nesting is bounded (LANG_MAX_DEPTH), so the recursive evaluator cannot
 * overflow the stack.
 */
#include "filter_int.h"

/* ------------------------------------------------------------ probes */

int filter_arg_index(const struct gtr_probe *pr, const char *name)
{
	for (uint32_t k = 0; k < pr->nargs && k < GTR_MAX_ARGS; k++)
		if (pr->args[k].name && !strcmp(pr->args[k].name, name))
			return (int)k;
	return -1;
}

const struct gtr_arg *filter_field_arg(const struct filter *f,
				       const struct report_event *e)
{
	const struct gtr_probe *pr;
	struct res r;

	if (!f || !f->t.field_only || f->t.field.src != SRC_ARG || f->t.field.len_of)
		return NULL;
	r = filter_resolve_slot(f, f->t.field.slot, e->ev->kind, e->probe, e->entry_probe);
	pr = r.where == W_EVENT ? e->probe : r.where == W_ENTRY ? e->entry_probe : NULL;
	return pr && r.idx >= 0 && (uint32_t)r.idx < pr->nargs && r.idx < GTR_MAX_ARGS ?
	       &pr->args[r.idx] : NULL;
}

/* SF_* of argument i of probe pr: how its value is read. */
static uint8_t value_flags(const struct gtr_probe *pr, int i)
{
	if (!pr || i < 0 || (uint32_t)i >= pr->nargs || i >= GTR_MAX_ARGS)
		return 0;
	if (pr->args[i].type == GTR_TYPE_SLICE)
		return SF_SLICE;
	if (pr->args[i].type != GTR_TYPE_FLOAT)
		return 0;
	return pr->args[i].size == 4 ? SF_F32 : SF_F64;
}

/*
 * Where slot `s` is for an event of kind `kind` from probe `pr` (NULL:
 * undescribed) whose paired entry came from `epr` (NULL: none/unknown).
 * goargN: the entry's N-th value (the event itself, or the paired entry of
 * a return); goretN: the N-th value of a return; a name: the event's own
 * probe first, then, on a return, the entry's probe.
 */
struct res filter_resolve_slot(const struct filter *f, uint32_t s, enum gtr_kind kind,
			       const struct gtr_probe *pr, const struct gtr_probe *epr)
{
	const struct slot *sl = &f->t.slots[s];
	struct res r = { -1, W_NONE, 0 };
	int i;

	switch (sl->space) {
	case SP_ARG:
		r.idx = (int16_t)(sl->n - 1);
		if (kind == GTR_KIND_ENTRY) {
			r.where = W_EVENT;
			r.flg = value_flags(pr, r.idx);
		} else {
			r.where = W_ENTRY;
			r.flg = value_flags(epr, r.idx);
		}
		break;
	case SP_RET:
		if (kind == GTR_KIND_RETURN) {
			r.idx = (int16_t)(sl->n - 1);
			r.where = W_EVENT;
			r.flg = value_flags(pr, r.idx);
		}
		break;
	default:
		if (pr && (i = filter_arg_index(pr, f->t.pool + sl->name_off)) >= 0) {
			r.idx = (int16_t)i;
			r.where = W_EVENT;
			r.flg = value_flags(pr, i);
		} else if (kind == GTR_KIND_RETURN && epr &&
			   (i = filter_arg_index(epr, f->t.pool + sl->name_off)) >= 0) {
			r.idx = (int16_t)i;
			r.where = W_ENTRY;
			r.flg = value_flags(epr, i);
		}
		break;
	}
	return r;
}

/* Finds or makes the cache entry of (pr, epr); returns its index. */
static uint32_t cache_lookup(struct filter *f, const struct gtr_probe *pr,
			     const struct gtr_probe *epr)
{
	const uint32_t *ix;
	uint32_t h;

	for (int k = 0; k < 2; k++)
		if (f->mru[k].ok && f->mru[k].probe == pr && f->mru[k].entry_probe == epr)
			return f->mru[k].ent;
	ix = u64map_get(&f->ent_ix, pr->id);
	if (ix) {
		h = *ix;
	} else {
		if (f->nents == f->cap_ents) {
			const uint32_t cap = f->cap_ents ? f->cap_ents * 2 : 16;
			f->ents = xrealloc(f->ents, cap * sizeof(*f->ents), "filter");
			f->rtab = xrealloc(f->rtab, (size_t)cap * f->t.nslots * sizeof(*f->rtab) + 1,
					   "filter");
			f->cap_ents = cap;
		}
		h = f->nents++;
		memset(&f->ents[h], 0, sizeof(f->ents[h]));
		if (u64map_put(&f->ent_ix, pr->id, h, UINT32_MAX))
			xalloc_die("filter");
	}
	struct pc_ent *e = &f->ents[h];
	if (!e->used || e->probe != pr || e->entry_probe != epr) {
		e->used = true;
		e->id = pr->id;
		e->probe = pr;
		e->entry_probe = epr;
		for (uint32_t s = 0; s < f->t.nslots; s++)
			f->rtab[h * f->t.nslots + s] = filter_resolve_slot(f, s, pr->kind, pr, epr);
	}
	f->mru[1] = f->mru[0];
	f->mru[0].ok = true;
	f->mru[0].probe = pr;
	f->mru[0].entry_probe = epr;
	f->mru[0].ent = h;
	return h;
}

/* ------------------------------------------------------------ evaluation */

enum vt { V_MISSING, V_INT, V_DBL, V_STR };

struct val {
	uint8_t t;            /* enum vt */
	i128 i;
	double d;
	const uint8_t *s;
	uint64_t slen, sfull; /* captured, true length */
};

struct ctx {
	const struct report_event *e;
	const struct res *res;
	int re_rc;            /* a PCRE2 error of this event (< NOMATCH), or 0 */
	uint32_t re_which;    /* the regex that had it */
};

static void load_value(const struct gtr_value *gv, uint8_t flg, struct val *v)
{
	switch (gv->kind) {
	case GTR_VAL_INT: v->t = V_INT; v->i = gv->v.i; return;
	case GTR_VAL_UINT:
		if (flg & SF_F64) {
			v->t = V_DBL;
			memcpy(&v->d, &gv->v.u, sizeof(double));
		} else if (flg & SF_F32) {
			const uint32_t bits = (uint32_t)gv->v.u;
			float fl;
			memcpy(&fl, &bits, sizeof(fl));
			v->t = V_DBL;
			v->d = fl;
		} else {
			v->t = V_INT;
			v->i = gv->v.u;
		}
		return;
	case GTR_VAL_BOOL: v->t = V_INT; v->i = gv->v.b; return;
	case GTR_VAL_STR:
		v->t = V_STR;
		v->s = gv->v.s.data;
		v->slen = gv->v.s.len;
		v->sfull = gv->v.s.full_len < gv->v.s.len ? gv->v.s.len : gv->v.s.full_len;
		return;
	default:
		v->t = V_MISSING;
		return;
	}
}

static void set_str(struct val *v, const char *s)
{
	v->t = V_STR;
	v->s = (const uint8_t *)s;
	v->slen = v->sfull = strlen(s);
}

static void load(const struct filter *f, const struct ctx *c,
		 const struct operand *o, struct val *v)
{
	const struct report_event *e = c->e;
	const struct gtr_event *ev = e->ev;

	switch (o->src) {
	case SRC_LIT_INT: v->t = V_INT; v->i = o->ival; return;
	case SRC_LIT_FLOAT: v->t = V_DBL; v->d = o->dval; return;
	case SRC_LIT_STR:
		v->t = V_STR;
		v->s = (const uint8_t *)f->t.pool + o->soff;
		v->slen = v->sfull = o->slen;
		return;
	case SRC_LIT_TIME:
		v->t = f->time_bound ? V_INT : V_MISSING;
		v->i = o->ival;
		return;
	case SRC_PID: v->t = V_INT; v->i = ev->pid; break;
	case SRC_TID: v->t = V_INT; v->i = ev->tid; break;
	case SRC_GOID: v->t = V_INT; v->i = ev->goid; break;
	case SRC_TS:
		v->t = V_INT;
		v->i = o->abs ? (i128)ev->ts_ns : (i128)ev->ts_ns - (i128)e->t0_ns;
		return;
	case SRC_LATENCY:
		if (!e->entry) {
			v->t = V_MISSING;
			return;
		}
		v->t = V_INT;
		v->i = e->latency_ns;
		return;
	case SRC_CPU:
		if (ev->cpu == GTR_CPU_UNKNOWN) {
			v->t = V_MISSING;
			return;
		}
		v->t = V_INT;
		v->i = ev->cpu;
		return;
	case SRC_KIND:
		set_str(v, ev->kind == GTR_KIND_RETURN ? "return" : "entry");
		break;
	case SRC_COMM: {
		const char *comm = e->comm ? e->comm : "";
		v->t = V_STR;
		v->s = (const uint8_t *)comm;
		v->slen = v->sfull = strnlen(comm, GTR_COMM_LEN);
		break;
	}
	case SRC_FUNC:
		if (!e->probe || !e->probe->func) {
			v->t = V_MISSING;
			return;
		}
		set_str(v, e->probe->func);
		break;
	case SRC_BINARY:
		if (!e->binary) {
			v->t = V_MISSING;
			return;
		}
		set_str(v, e->binary);
		break;
	case SRC_ARG: {
		const struct res r = c->res[o->slot];
		const struct gtr_event *src = r.where == W_EVENT ? ev :
					      r.where == W_ENTRY ? e->entry : NULL;
		if (!src || r.idx < 0 || (uint32_t)r.idx >= src->nvals || r.idx >= GTR_MAX_ARGS) {
			v->t = V_MISSING;
			return;
		}
		load_value(&src->vals[r.idx], r.flg, v);
		if (r.flg & SF_SLICE) {
			/* a slice has no value here, only its length: its
			 * element count, from full_len (bytes when the element
			 * size is known, else elements) */
			const struct gtr_probe *pr = r.where == W_EVENT ? e->probe
								       : e->entry_probe;
			const uint32_t size = pr && (uint32_t)r.idx < pr->nargs
						      ? pr->args[r.idx].size : 0;
			if (!o->len_of || v->t != V_STR) {
				v->t = V_MISSING;
				return;
			}
			v->t = V_INT;
			v->i = size ? src->vals[r.idx].v.s.full_len / size
				    : src->vals[r.idx].v.s.full_len;
			return;
		}
		break;
	}
	default:
		v->t = V_MISSING;
		return;
	}
	if (o->len_of) {
		if (v->t != V_STR) {
			v->t = V_MISSING;
			return;
		}
		v->t = V_INT;
		v->i = v->sfull;
	}
}

/* Three-way comparison: -1, 0, 1; 2 when incomparable (a value missing,
 * a string against a number); 3 when unordered (NaN, which only != holds). */
static int compare(const struct val *a, const struct val *b)
{
	if (a->t == V_MISSING || b->t == V_MISSING)
		return 2;
	if (a->t == V_STR || b->t == V_STR) {
		if (a->t != b->t)
			return 2;
		const uint64_t n = a->slen < b->slen ? a->slen : b->slen;
		const int r = n ? memcmp(a->s, b->s, n) : 0;
		if (r)
			return r < 0 ? -1 : 1;
		return a->sfull < b->sfull ? -1 : a->sfull > b->sfull;
	}
	if (a->t == V_INT && b->t == V_INT)
		return a->i < b->i ? -1 : a->i > b->i;
	const double x = a->t == V_DBL ? a->d : (double)a->i;
	const double y = b->t == V_DBL ? b->d : (double)b->i;
	if (x < y)
		return -1;
	if (x > y)
		return 1;
	return x == y ? 0 : 3;
}

static bool glob_match(const uint8_t *pat, size_t pn, const uint8_t *s, size_t n)
{
	size_t p = 0, i = 0, star_p = SIZE_MAX, star_i = 0;

	while (i < n) {
		if (p < pn) {
			const uint8_t c = pat[p];
			if (c == '*') {
				star_p = ++p;
				star_i = i;
				continue;
			}
			if (c == '?') {
				p++;
				i++;
				continue;
			}
			if (c == '[') {
				size_t q = p + 1;
				bool neg = false, hit = false;
				if (q < pn && (pat[q] == '!' || pat[q] == '^')) {
					neg = true;
					q++;
				}
				const size_t first = q;
				while (q < pn && (pat[q] != ']' || q == first)) {
					uint8_t lo = pat[q], hi = lo;
					if (lo == '\\' && q + 1 < pn)
						lo = hi = pat[++q];
					if (q + 2 < pn && pat[q + 1] == '-' && pat[q + 2] != ']') {
						hi = pat[q + 2];
						q += 2;
					}
					if (s[i] >= lo && s[i] <= hi)
						hit = true;
					q++;
				}
				if (q < pn) { /* a closed class */
					if (hit != neg) {
						p = q + 1;
						i++;
						continue;
					}
					goto backtrack;
				}
				/* no ']': '[' is a plain byte */
			}
			size_t lit = p;
			if (c == '\\' && p + 1 < pn)
				lit = p + 1;
			if (pat[lit] == s[i]) {
				p = lit + 1;
				i++;
				continue;
			}
		}
backtrack:
		if (star_p == SIZE_MAX)
			return false;
		p = star_p;
		i = ++star_i;
	}
	while (p < pn && pat[p] == '*')
		p++;
	return p == pn;
}

bool filter_glob(const char *pat, const uint8_t *s, size_t n)
{
	return glob_match((const uint8_t *)pat, strlen(pat), s, n);
}

static bool strfn(const struct filter *f, const struct node *n, const struct val *a)
{
	const uint8_t *lit = (const uint8_t *)f->t.pool + n->r.soff;
	const uint64_t ln = n->r.slen;

	switch (n->cmp) {
	case FN_CONTAINS:
		return ln == 0 || (a->slen >= ln && memmem(a->s, a->slen, lit, ln));
	case FN_STARTS: {
		/* as ==: bytes that were not captured are assumed to agree */
		const uint64_t k = a->slen < ln ? a->slen : ln;
		return a->sfull >= ln && (!k || !memcmp(a->s, lit, k));
	}
	case FN_ENDS:
		return a->sfull == a->slen && a->slen >= ln &&
		       (!ln || !memcmp(a->s + a->slen - ln, lit, ln));
	default:
		return glob_match(lit, ln, a->s, a->slen);
	}
}

/*
 * compare() of argument operand `o` with integer literal `lit` when the
 * value is a plain integer (int, uint, bool); 2 when it is missing; 4
 * when the general path must decide (floats, strings).
 */
static inline int cmp_arg_int(const struct ctx *c, const struct operand *o,
			      i128 lit)
{
	const struct res r = c->res[o->slot];
	const struct gtr_event *ev = c->e->ev;
	const struct gtr_event *src = r.where == W_EVENT ? ev :
				      r.where == W_ENTRY ? c->e->entry : NULL;
	const struct gtr_value *gv;
	i128 x;

	if (!src || r.idx < 0 || (uint32_t)r.idx >= src->nvals || r.idx >= GTR_MAX_ARGS)
		return 2;
	gv = &src->vals[r.idx];
	switch (gv->kind) {
	case GTR_VAL_INT: x = gv->v.i; break;
	case GTR_VAL_UINT:
		if (r.flg & (SF_F64 | SF_F32))
			return 4;
		x = gv->v.u;
		break;
	case GTR_VAL_BOOL: x = gv->v.b; break;
	case GTR_VAL_NONE: return 2;
	default: return 4;
	}
	return x < lit ? -1 : x > lit;
}

static bool eval(const struct filter *f, struct ctx *c, uint32_t ni)
{
	const struct node *n = &f->t.nodes[ni];
	struct val a, b;

	switch (n->op) {
	case N_AND:
		for (uint32_t k = 0; k < n->count; k++)
			if (!eval(f, c, f->t.kids[n->first + k]))
				return false;
		return true;
	case N_OR:
		for (uint32_t k = 0; k < n->count; k++)
			if (eval(f, c, f->t.kids[n->first + k]))
				return true;
		return false;
	case N_NOT:
		return !eval(f, c, n->first);
	case N_IN:
		load(f, c, &n->l, &a);
		for (uint32_t k = 0; k < n->count; k++) {
			load(f, c, &f->t.lits[n->first + k], &b);
			if (compare(&a, &b) == 0)
				return true;
		}
		return false;
	case N_RE: {
		load(f, c, &n->l, &a);
		if (a.t != V_STR)
			return false;
		const struct regex *re = &f->res[n->first];
		const int rc = pcre2_match(re->code, a.s, a.slen, 0, 0, re->md, NULL);
		if (rc < PCRE2_ERROR_NOMATCH) {
			/* a match or depth limit, or another PCRE2 error: the
			 * event has no answer, neither for =~ nor for !~ */
			c->re_rc = rc;
			c->re_which = n->first;
			return false;
		}
		return (rc >= 0) != (n->cmp == 1);
	}
	case N_STRFN:
		load(f, c, &n->l, &a);
		return a.t == V_STR && strfn(f, n, &a);
	case N_CMP: {
		int r;

		/* The common case, an argument against an integer literal,
		 * without the general 128-bit path. */
		if (n->l.src == SRC_ARG && n->r.src == SRC_LIT_INT && !n->l.len_of) {
			r = cmp_arg_int(c, &n->l, n->r.ival);
			if (r != 4)
				goto decided;
		}
		load(f, c, &n->l, &a);
		load(f, c, &n->r, &b);
		r = compare(&a, &b);
decided:
		if (r == 2)
			return false;
		if (r == 3)
			return n->cmp == CMP_NE;
		switch (n->cmp) {
		case CMP_EQ: return r == 0;
		case CMP_NE: return r != 0;
		case CMP_LT: return r < 0;
		case CMP_LE: return r <= 0;
		case CMP_GT: return r > 0;
		case CMP_GE: return r >= 0;
		}
	}
	}
	return false;
}

static void make_ctx(struct filter *f, const struct report_event *e, struct ctx *c)
{
	c->e = e;
	if (f->t.nslots == 0) {
		c->res = f->scratch;
	} else if (!e->probe) {
		/* undescribed probe: rare, resolved per event without allocating */
		for (uint32_t s = 0; s < f->t.nslots; s++)
			f->scratch[s] = filter_resolve_slot(f, s, e->ev->kind, NULL, e->entry_probe);
		c->res = f->scratch;
	} else {
		const uint32_t h = cache_lookup(f, e->probe, e->entry_probe);
		c->res = f->rtab + (size_t)h * f->t.nslots;
	}
}

/* Whether node ni compares an argument with an integer literal. */
static bool fast_cmp_node(const struct filter *f, uint32_t ni)
{
	const struct node *n = &f->t.nodes[ni];

	return n->op == N_CMP && n->l.src == SRC_ARG &&
	       n->r.src == SRC_LIT_INT && !n->l.len_of;
}

/* Finds whether the filter is a conjunction of fast comparisons. */
static void fast_plan(struct filter *f)
{
	const struct node *root = &f->t.nodes[f->t.root];

	f->nfast = -1;
	if (fast_cmp_node(f, f->t.root)) {
		f->fast[0] = f->t.root;
		f->nfast = 1;
		return;
	}
	if (root->op != N_AND || root->count > 16)
		return;
	for (uint32_t k = 0; k < root->count; k++)
		if (!fast_cmp_node(f, f->t.kids[root->first + k]))
			return;
	for (uint32_t k = 0; k < root->count; k++)
		f->fast[k] = f->t.kids[root->first + k];
	f->nfast = (int)root->count;
}

/* The flat form resolved for the probes of e: one of the two sets kept,
 * or the older one made anew. */
static const struct fast_set *fast_for(struct filter *f, const struct report_event *e)
{
	struct ctx c;

	for (int k = 0; k < 2; k++)
		if (f->fsets[k].ok && f->fsets[k].probe == e->probe &&
		    f->fsets[k].entry == e->entry_probe)
			return &f->fsets[k];
	f->fsets[1] = f->fsets[0];
	struct fast_set *fs = &f->fsets[0];
	make_ctx(f, e, &c);
	for (int k = 0; k < f->nfast; k++) {
		const struct node *n = &f->t.nodes[f->fast[k]];
		const struct res r = c.res[n->l.slot];

		fs->ops[k] = (struct fast_op){ .lit = n->r.ival, .idx = r.idx,
					       .where = r.where, .flg = r.flg,
					       .cmp = n->cmp };
	}
	/* an undescribed probe resolves per event: do not keep it */
	fs->ok = e->probe != NULL;
	fs->probe = e->probe;
	fs->entry = e->entry_probe;
	return fs;
}

/*
 * The flat form: every fs->ops[k] must hold. Returns 1 or 0, or -1 when a
 * value is not an integer (a float or a string: the general evaluator
 * decides).
 */
static int fast_match(const struct filter *f, const struct fast_set *fs,
		      const struct report_event *e)
{
	for (int k = 0; k < f->nfast; k++) {
		const struct fast_op *o = &fs->ops[k];
		const struct gtr_event *src = o->where == W_EVENT ? e->ev :
					      o->where == W_ENTRY ? e->entry : NULL;
		const struct gtr_value *gv;
		i128 x;
		int r;

		if (!src || o->idx < 0 || (uint32_t)o->idx >= src->nvals)
			return 0;     /* a missing value satisfies no comparison */
		gv = &src->vals[o->idx];
		switch (gv->kind) {
		case GTR_VAL_INT: x = gv->v.i; break;
		case GTR_VAL_UINT:
			if (o->flg & (SF_F64 | SF_F32))
				return -1;
			x = gv->v.u;
			break;
		case GTR_VAL_BOOL: x = gv->v.b; break;
		case GTR_VAL_NONE: return 0;
		default: return -1;
		}
		r = x < o->lit ? -1 : x > o->lit;
		switch (o->cmp) {
		case CMP_EQ: if (r) return 0; break;
		case CMP_NE: if (!r) return 0; break;
		case CMP_LT: if (r >= 0) return 0; break;
		case CMP_LE: if (r > 0) return 0; break;
		case CMP_GT: if (r <= 0) return 0; break;
		case CMP_GE: if (r < 0) return 0; break;
		default: return -1;
		}
	}
	return 1;
}

bool filter_match(struct filter *f, const struct report_event *e)
{
	struct ctx c;

	if (f->t.field_only)
		return false;
	if (!f->nfast)
		fast_plan(f);
	if (f->nfast > 0) {
		const int m = fast_match(f, fast_for(f, e), e);
		if (m >= 0)
			return m;
	}
	make_ctx(f, e, &c);
	c.re_rc = 0;
	const bool r = eval(f, &c, f->t.root);
	if (c.re_rc) {
		if (!f->eval_errors) {
			PCRE2_UCHAR msg[120];

			if (pcre2_get_error_message(c.re_rc, msg, sizeof(msg)) < 0)
				snprintf((char *)msg, sizeof(msg), "PCRE2 error %d", c.re_rc);
			snprintf(f->eval_why, sizeof(f->eval_why),
				 "regular expression %u of the filter: %s",
				 c.re_which + 1, (const char *)msg);
		}
		f->eval_errors++;
		return false;
	}
	return r;
}

int filter_eval_node(struct filter *f, uint32_t ni, const struct report_event *e)
{
	struct ctx c;

	make_ctx(f, e, &c);
	c.re_rc = 0;
	const bool r = eval(f, &c, ni);
	return c.re_rc ? -1 : r;
}

uint64_t filter_eval_errors(const struct filter *f, const char **why)
{
	if (why)
		*why = f && f->eval_errors ? f->eval_why : "";
	return f ? f->eval_errors : 0;
}

bool filter_field(struct filter *f, const struct report_event *e,
		  struct filter_value *out)
{
	struct ctx c;
	struct val v;

	memset(out, 0, sizeof(*out));
	if (!f->t.field_only)
		return false;
	make_ctx(f, e, &c);
	load(f, &c, &f->t.field, &v);
	switch (v.t) {
	case V_INT:
		if (v.i >= INT64_MIN && v.i <= INT64_MAX) {
			out->kind = FV_INT;
			out->i = (int64_t)v.i;
		} else {
			out->kind = FV_UINT;
			out->u = (uint64_t)v.i;
		}
		return true;
	case V_DBL:
		out->kind = FV_DBL;
		out->d = v.d;
		return true;
	case V_STR:
		out->kind = FV_STR;
		out->s = v.s;
		out->len = v.slen;
		out->full_len = v.sfull;
		return true;
	default:
		return false;
	}
}
