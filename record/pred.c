// SPDX-License-Identifier: MIT
/* Record-time predicate compiler; see pred.h and spec/PROBES.md. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pred.h"

struct lexer {
	const char *text, *p;
};

static void skip_ws(struct lexer *l)
{
	while (isspace((unsigned char)*l->p))
		l->p++;
}

static int refuse(const struct lexer *l, char *err, size_t errlen,
		  const char *what)
{
	snprintf(err, errlen, "record-time predicate '%s': %s at column %d; "
		 "in BPF gotrace compares captured integers (or len() of "
		 "strings) with constants, joined by &&; record without it "
		 "and filter with gotrace-report -f '%s'", l->text, what,
		 (int)(l->p - l->text) + 1, l->text);
	return -EINVAL;
}

/* Reads a comparison operator; returns enum gt_cmp or -1. */
static int read_op(struct lexer *l)
{
	static const struct { const char *s; int op; } ops[] = {
		{ "==", GT_EQ }, { "!=", GT_NE }, { "<=", GT_LE },
		{ ">=", GT_GE }, { "<", GT_LT }, { ">", GT_GT },
	};
	size_t i;

	skip_ws(l);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].s);

		if (!strncmp(l->p, ops[i].s, n)) {
			l->p += n;
			return ops[i].op;
		}
	}
	return -1;
}

/* Reads an integer constant (decimal, 0x hex, negative, true/false). */
static int read_const(struct lexer *l, unsigned long long *v)
{
	const char *s;
	char *end;
	int neg = 0;

	skip_ws(l);
	s = l->p;
	if (!strncmp(s, "true", 4) && !isalnum((unsigned char)s[4])) {
		*v = 1;
		l->p += 4;
		return 0;
	}
	if (!strncmp(s, "false", 5) && !isalnum((unsigned char)s[5])) {
		*v = 0;
		l->p += 5;
		return 0;
	}
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || isalnum((unsigned char)*end) || *end == '_')
		return -1;
	if (neg)
		*v = (unsigned long long)-(long long)*v;
	l->p = end;
	return 0;
}

/* Reads an operand: NAME or len(NAME); *is_len tells which. */
static int read_operand(struct lexer *l, char *name, size_t len, int *is_len)
{
	const char *s;
	size_t n;

	skip_ws(l);
	*is_len = 0;
	if (!strncmp(l->p, "len(", 4)) {
		*is_len = 1;
		l->p += 4;
		skip_ws(l);
	}
	s = l->p;
	while (isalnum((unsigned char)*l->p) || *l->p == '_' || *l->p == '.')
		l->p++;
	n = l->p - s;
	if (!n || n >= len || isdigit((unsigned char)*s))
		return -1;
	memcpy(name, s, n);
	name[n] = '\0';
	if (*is_len) {
		skip_ws(l);
		if (*l->p != ')')
			return -1;
		l->p++;
	}
	return 0;
}

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

int pred_compile(const char *text, pred_resolve_fn resolve, void *ctx,
		 const enum gtr_type *types, int ntypes, struct gt_pred *out,
		 int max, char *err, size_t errlen)
{
	struct lexer l = { text, text };
	int n = 0;

	if (max > GT_MAX_PRED)
		max = GT_MAX_PRED;
	for (;;) {
		unsigned long long c;
		char name[128];
		int is_len, op, idx;
		enum gtr_type t;
		const char *at;

		skip_ws(&l);
		at = l.p;
		if (!read_const(&l, &c)) {
			/* constant OP operand */
			if ((op = read_op(&l)) < 0)
				return refuse(&l, err, errlen, "expected ==, !=, <, <=, > or >=");
			if (read_operand(&l, name, sizeof(name), &is_len))
				return refuse(&l, err, errlen, "expected a captured value");
			op = flip(op);
		} else {
			l.p = at;
			if (read_operand(&l, name, sizeof(name), &is_len))
				return refuse(&l, err, errlen, "expected a captured value");
			if ((op = read_op(&l)) < 0)
				return refuse(&l, err, errlen, "expected ==, !=, <, <=, > or >=");
			skip_ws(&l);
			if (*l.p == '"')
				return refuse(&l, err, errlen, "strings are compared at report time");
			if (read_const(&l, &c))
				return refuse(&l, err, errlen, "expected an integer constant");
		}
		idx = resolve(ctx, name);
		if (idx < 0 || idx >= ntypes || idx >= GT_MAX_FETCH) {
			l.p = at;
			return refuse(&l, err, errlen, "unknown value");
		}
		t = types[idx];
		if (is_len != (t == GTR_TYPE_STRING || t == GTR_TYPE_BYTES)) {
			l.p = at;
			return refuse(&l, err, errlen, is_len
				      ? "len() takes a string or []byte"
				      : "strings are compared at report time");
		}
		if (t == GTR_TYPE_FLOAT || t == GTR_TYPE_OTHER) {
			l.p = at;
			return refuse(&l, err, errlen, "this value is not captured as an integer");
		}
		if (n >= max)
			return refuse(&l, err, errlen, "too many comparisons (at most 4)");
		memset(&out[n], 0, sizeof(out[n]));
		out[n].slot = idx;
		out[n].op = op;
		out[n].is_signed = t == GTR_TYPE_INT;
		out[n].value = c;
		n++;
		skip_ws(&l);
		if (!*l.p)
			return n;
		if (strncmp(l.p, "&&", 2))
			return refuse(&l, err, errlen, "expected && or the end");
		l.p += 2;
	}
}
