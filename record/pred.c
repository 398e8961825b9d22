// SPDX-License-Identifier: MIT
/*
 * Record-time predicates: a probe's "(PREDICATE)" is parsed by lang/, the
 * parser of gotrace-report -f, and the part of its tree the BPF program
 * can run is lowered to struct gt_pred; see pred.h and spec/PROBES.md.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lang.h"
#include "pred.h"

/* One lowering: the tree, how values resolve, where comparisons go. */
struct lower {
	const struct lang_tree *t;
	pred_resolve_fn resolve;
	void *ctx;
	const enum gtr_type *types;
	int ntypes;
	struct gt_pred *out;
	int max, n;
	char *err;
	size_t errlen;
};

/*
 * Refuses what BPF cannot run, at byte `pos` of the predicate, with the
 * reason (printf `fmt`) and the way out: report-time filtering.
 */
static int refuse(const struct lower *lw, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(const struct lower *lw, uint32_t pos, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(lw->err, lw->errlen, "record-time predicate '%s': %s at column %u; "
		 "in BPF gotrace compares captured integers (or len() of "
		 "strings) with constants, joined by &&; record without it "
		 "and filter with gotrace-report -f '%s'", lw->t->expr, why,
		 pos + 1, lw->t->expr);
	return -EINVAL;
}

/*
 * Refuses a string (or []byte) compared with an integer, which neither BPF
 * nor the report's filter compares: the predicate with len() of it, which
 * BPF runs, and a comparison of its text, which the report runs.
 */
static int refuse_text(const struct lower *lw, const struct operand *v)
{
	const char *e = lw->t->expr;

	snprintf(lw->err, lw->errlen, "record-time predicate '%s': '%.*s' is a string, "
		 "compared with an integer at column %u; compare its length, which "
		 "BPF does: '%.*slen(%.*s)%s', or record without the predicate and "
		 "compare its text with gotrace-report -f '%.*s == \"...\"'", e,
		 (int)v->len, e + v->pos, v->pos + 1, (int)v->pos, e, (int)v->len,
		 e + v->pos, e + v->pos + v->len, (int)v->len, e + v->pos);
	return -EINVAL;
}

/* The comparison with its operands swapped: 42 < n is n > 42. */
static int flip(int op)
{
	switch (op) {
	case GT_LT: return GT_GT;
	case GT_LE: return GT_GE;
	case GT_GT: return GT_LT;
	case GT_GE: return GT_LE;
	}
	return op;
}

/* enum gt_cmp of lang/'s enum cmp. */
static int gt_op(uint8_t cmp)
{
	static const int ops[] = {
		[CMP_EQ] = GT_EQ, [CMP_NE] = GT_NE, [CMP_LT] = GT_LT,
		[CMP_LE] = GT_LE, [CMP_GT] = GT_GT, [CMP_GE] = GT_GE,
	};

	return ops[cmp];
}

static bool is_field(const struct operand *o)
{
	return o->src != SRC_LIT_INT && o->src != SRC_LIT_STR &&
	       o->src != SRC_LIT_TIME && o->src != SRC_ARG && o->src != SRC_LIT_FLOAT;
}

/*
 * Why `l OP r` is not "captured value OP integer constant": refuses at
 * the operand that is in the way.
 */
static int refuse_operands(const struct lower *lw, const struct node *n)
{
	const struct operand *l = &n->l, *r = &n->r;

	for (int side = 0; side < 2; side++) {
		const struct operand *o = side ? r : l;

		if (is_field(o))
			return refuse(lw, o->pos, "'%.*s' is not a captured value but "
				      "the event's, known at report time (a "
				      "parameter of that name is goargN)",
				      (int)o->len, lw->t->expr + o->pos);
		if (o->src == SRC_LIT_STR)
			return refuse(lw, o->pos, "strings are compared at report time");
		if (o->src == SRC_LIT_TIME)
			return refuse(lw, o->pos, "times are compared at report time");
		if (o->src == SRC_LIT_FLOAT)
			return refuse(lw, o->pos, "floats are compared at report time");
	}
	if (l->src == SRC_ARG)   /* and r too */
		return refuse(lw, r->pos, "expected an integer constant, "
			      "not another captured value");
	return refuse(lw, l->pos, "expected a captured value, not two constants");
}

/*
 * Why value `v` of type `t` cannot be compared in BPF as written (as
 * len() when v->len_of), or NULL when it can.
 */
static const char *type_refusal(const struct operand *v, enum gtr_type t)
{
	if (v->len_of) {
		if (t == GTR_TYPE_STRING || t == GTR_TYPE_BYTES || t == GTR_TYPE_SLICE)
			return NULL;
		return t == GTR_TYPE_IFACE
		       ? "an interface's type name is compared at report time"
		       : "len() takes a string, []byte or slice (an array's "
			 "length is in its type)";
	}
	switch (t) {
	case GTR_TYPE_INT:
	case GTR_TYPE_UINT:
	case GTR_TYPE_BOOL:
	case GTR_TYPE_PTR:
	case GTR_TYPE_WORD:
		return NULL;
	case GTR_TYPE_STRING:
	case GTR_TYPE_BYTES:
		return "strings are compared at report time";
	case GTR_TYPE_IFACE:
		return "an interface's type name is compared at report time";
	case GTR_TYPE_SLICE:
		return "a slice is compared by its length: write len() of it";
	default:
		return "this value is not captured as an integer";
	}
}

/*
 * Refuses value `v`, which the recorder resolved (by `name`) to `idx`,
 * not a value it captures; a goargN or goretN that this kind of probe
 * does not have (-ENOENT) says where it is.
 */
static int refuse_unknown(const struct lower *lw, const struct operand *v,
			  const char *name, int idx)
{
	const struct slot *sl = &lw->t->slots[v->slot];
	const char *where = "";

	if (idx == -ENOENT && sl->space == SP_ARG)
		where = " (a return probe captures results, goretN; its entry's "
			"arguments are compared at report time)";
	else if (idx == -ENOENT && sl->space == SP_RET)
		where = " (results are captured by return probes, r:FUNCTION)";
	if (v->len_of)
		return refuse(lw, v->pos, "unknown value '%s'%s", name, where);
	return refuse(lw, v->pos, "unknown value '%.*s'%s", (int)v->len,
		      lw->t->expr + v->pos, where);
}

/* Lowers one comparison node into lw->out[lw->n]. */
static int lower_cmp(struct lower *lw, const struct node *n)
{
	const struct operand *v = &n->l, *c = &n->r;
	int op = gt_op(n->cmp), idx;
	char name[160];

	if (v->src == SRC_LIT_INT && c->src == SRC_ARG) {
		v = &n->r;
		c = &n->l;
		op = flip(op);
	} else if (v->src != SRC_ARG || c->src != SRC_LIT_INT) {
		return refuse_operands(lw, n);
	}
	lang_slot_name(lw->t, v->slot, name, sizeof(name));
	idx = lw->resolve(lw->ctx, name);
	if (idx < 0 || idx >= lw->ntypes || idx >= GT_MAX_FETCH)
		return refuse_unknown(lw, v, name, idx);
	const enum gtr_type t = lw->types[idx];
	if ((t == GTR_TYPE_STRING || t == GTR_TYPE_BYTES) && !v->len_of)
		return refuse_text(lw, v);
	const char *why = type_refusal(v, t);
	if (why)
		return refuse(lw, v->pos, "%s", why);
	/* the filter compares exact integers; BPF compares 64 bits */
	const bool is_signed = t == GTR_TYPE_INT && !v->len_of;
	if (is_signed ? c->ival > INT64_MAX : c->ival < 0)
		return refuse(lw, c->pos, "constant outside the values of '%.*s' (%s)",
			      (int)v->len, lw->t->expr + v->pos,
			      is_signed ? "-9223372036854775808..9223372036854775807"
					: "0..18446744073709551615");
	if (lw->n >= lw->max)
		return refuse(lw, n->l.pos, "too many comparisons (at most %d)", lw->max);
	memset(&lw->out[lw->n], 0, sizeof(lw->out[lw->n]));
	lw->out[lw->n].slot = (__u8)idx;
	lw->out[lw->n].op = (__u8)op;
	lw->out[lw->n].is_signed = is_signed;
	lw->out[lw->n].value = (uint64_t)c->ival;  /* two's complement */
	lw->n++;
	return 0;
}

/* Lowers node `ni`: comparisons joined by && (nested too). */
static int lower_node(struct lower *lw, uint32_t ni)
{
	const struct node *n = &lw->t->nodes[ni];
	int rc;

	switch (n->op) {
	case N_AND:
		for (uint32_t k = 0; k < n->count; k++)
			if ((rc = lower_node(lw, lw->t->kids[n->first + k])))
				return rc;
		return 0;
	case N_CMP:
		return lower_cmp(lw, n);
	case N_OR:
		return refuse(lw, n->pos, "'||' is evaluated at report time");
	case N_NOT:
		return refuse(lw, n->pos, "'!' is evaluated at report time");
	case N_IN:
		return refuse(lw, n->pos, "'in' is evaluated at report time");
	case N_RE:
		return refuse(lw, n->pos, "regular expressions are matched at report time");
	default:
		return refuse(lw, n->pos, "strings are compared at report time");
	}
}

int pred_compile(const char *text, pred_resolve_fn resolve, void *ctx,
		 const enum gtr_type *types, int ntypes, struct gt_pred *out,
		 int max, char *err, size_t errlen)
{
	struct lang_tree t;
	char why[256];
	unsigned column;

	if (lang_parse(&t, text, false, NULL, NULL, &column, why, sizeof(why))) {
		/* not even a filter: say so, and where its language is */
		if (column)
			snprintf(err, errlen, "record-time predicate '%s': %s at column %u "
				 "(predicates are written as filters of "
				 "gotrace-report -f, spec/FILTER.md)", text, why, column);
		else
			snprintf(err, errlen, "record-time predicate '%s': %s", text, why);
		return -EINVAL;
	}
	struct lower lw = {
		.t = &t, .resolve = resolve, .ctx = ctx, .types = types,
		.ntypes = ntypes, .out = out,
		.max = max > GT_MAX_PRED ? GT_MAX_PRED : max,
		.err = err, .errlen = errlen,
	};
	const int rc = lower_node(&lw, t.root);
	lang_tree_free(&t);
	return rc ? rc : lw.n;
}
