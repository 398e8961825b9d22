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

/* The value of digit c in `base` (10 or 16), or -1. */
static int digit_value(int c, int base)
{
	static const char digits[] = "0123456789abcdef";
	const char *d = c ? strchr(digits, tolower(c)) : NULL;

	return d && d - digits < base ? (int)(d - digits) : -1;
}

/*
 * Reads an integer constant as spec/FILTER.md writes them (and
 * report/filter.c reads them): [-] decimal without leading zeros, or
 * [-] 0x hex, from -2^63 to 2^64 - 1, followed by no letter, digit, '_'
 * or '.'; true and false are 1 and 0.
 * Returns 0 with the value's 64 bits in *v, 1 when no constant starts
 * here (l->p unmoved), or -1 when a malformed one does: why[whylen] says
 * what, and l->p points at the offending column.
 */
static int read_const(struct lexer *l, unsigned long long *v, char *why,
		      size_t whylen)
{
	const char *s, *tok;
	unsigned long long limit = ~0ull;
	int neg = 0, base = 10;

	skip_ws(l);
	s = tok = l->p;
	if (!strncmp(s, "true", 4) && !isalnum((unsigned char)s[4]) && s[4] != '_') {
		*v = 1;
		l->p += 4;
		return 0;
	}
	if (!strncmp(s, "false", 5) && !isalnum((unsigned char)s[5]) && s[5] != '_') {
		*v = 0;
		l->p += 5;
		return 0;
	}
	if (*s == '-') {
		neg = 1;
		limit = 1ull << 63;         /* -2^63 */
		s++;
	}
	if (!isdigit((unsigned char)*s))
		return 1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (digit_value((unsigned char)*s, 16) < 0) {
			l->p = s;
			snprintf(why, whylen, "expected hex digits after '0x'");
			return -1;
		}
	} else if (s[0] == '0' && isdigit((unsigned char)s[1])) {
		l->p = s;
		snprintf(why, whylen, "integer literal with a leading zero "
			 "(write decimal without it, or hex as 0x...)");
		return -1;
	}
	for (*v = 0; digit_value((unsigned char)*s, base) >= 0; s++) {
		const unsigned d = (unsigned)digit_value((unsigned char)*s, base);

		if (*v > (limit - d) / (unsigned)base) {
			l->p = tok;
			snprintf(why, whylen, "integer literal out of range "
				 "(-9223372036854775808..18446744073709551615)");
			return -1;
		}
		*v = *v * (unsigned)base + d;
	}
	if (isalnum((unsigned char)*s) || *s == '_' || *s == '.') {
		l->p = s;
		snprintf(why, whylen, "unexpected '%c' in integer literal", *s);
		return -1;
	}
	if (neg)
		*v = 0 - *v;                /* two's complement, -2^63 included */
	l->p = s;
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
	if (!n || n >= len || isdigit((unsigned char)*s)) {
		l->p = s;
		return -1;
	}
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
		char name[128], why[128];
		int is_len, op, idx, rc;
		enum gtr_type t;
		const char *at;

		skip_ws(&l);
		at = l.p;
		rc = read_const(&l, &c, why, sizeof(why));
		if (rc < 0)
			return refuse(&l, err, errlen, why);
		if (rc == 0) {
			/* constant OP operand */
			if ((op = read_op(&l)) < 0)
				return refuse(&l, err, errlen, "expected ==, !=, <, <=, > or >=");
			if (read_operand(&l, name, sizeof(name), &is_len))
				return refuse(&l, err, errlen, "expected a captured value");
			op = flip(op);
		} else {
			if (read_operand(&l, name, sizeof(name), &is_len))
				return refuse(&l, err, errlen, "expected a captured value");
			if ((op = read_op(&l)) < 0)
				return refuse(&l, err, errlen, "expected ==, !=, <, <=, > or >=");
			skip_ws(&l);
			if (*l.p == '"')
				return refuse(&l, err, errlen, "strings are compared at report time");
			rc = read_const(&l, &c, why, sizeof(why));
			if (rc < 0)
				return refuse(&l, err, errlen, why);
			if (rc > 0)
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
