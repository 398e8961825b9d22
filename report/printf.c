/* SPDX-License-Identifier: MIT */
/*
 * trace.py-style format strings (spec/OUTPUT.md, "Format strings"):
 * compiled into pieces once per probe and applied to an event's values,
 * with C's flags, width and precision.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_int.h"
#include "utf8.h"
#include "xalloc.h"

/* Text for a plain integer verb: the value as a 64-bit integer, signed. */
struct intval {
	bool ok;
	bool neg;        /* print as signed */
	uint64_t u;      /* two's complement bits */
};

/* Converts a value for %d %i %u %x %X %o %c %p. `is_signed_verb`: d, i. */
static struct intval int_for_verb(const struct gtr_value *v,
				  const struct gtr_arg *arg, bool is_signed_verb)
{
	struct intval r = { 0 };

	if (value_is_float(v, arg))
		return r;
	switch (v->kind) {
	case GTR_VAL_INT:
		r.ok = true;
		r.u = (uint64_t)v->v.i;
		r.neg = v->v.i < 0;
		if (!is_signed_verb && r.neg && arg && arg->size > 0 && arg->size < 8)
			r.u &= (UINT64_C(1) << (arg->size * 8)) - 1; /* like C's %u of a narrower int */
		if (!is_signed_verb)
			r.neg = false;
		return r;
	case GTR_VAL_UINT:
		r.ok = true;
		r.u = v->v.u;
		/* an untyped word is just bits: %d shows them as signed */
		r.neg = is_signed_verb && (!arg || arg->type == GTR_TYPE_WORD) &&
			(int64_t)v->v.u < 0;
		return r;
	case GTR_VAL_BOOL:
		r.ok = true;
		r.u = v->v.b;
		return r;
	default:
		return r;
	}
}

static void put_utf8_cp(struct buf *b, uint64_t cp)
{
	uint8_t t[4];
	const size_t n = cp > 0x10ffff ? 0 : utf8_encode((uint32_t)cp, t);

	if (!n)
		buf_printf(b, "\\x{%" PRIx64 "}", cp);
	else
		output_text_bytes(b, t, n, false);
}

/* Pads what was appended since `start` to `width` columns (spaces; on the
 * left unless `left`). A column is a byte that is not a UTF-8 continuation. */
static void pad_since(struct buf *b, size_t start, int width, bool left)
{
	int cols = 0;

	for (size_t i = start; i < b->len; i++)
		cols += ((unsigned char)b->data[i] & 0xc0) != 0x80;
	if (cols >= width)
		return;
	const size_t n = (size_t)(width - cols);
	buf_reserve(b, n);
	if (!left) {
		memmove(b->data + start + n, b->data + start, b->len - start);
		memset(b->data + start, ' ', n);
	} else {
		memset(b->data + b->len, ' ', n);
	}
	b->len += n;
}

/*
 * %d of an unsigned value above INT64_MAX (no C type prints it signed):
 * laid out as C lays out %d of a positive number, so flags '+' and ' '
 * give its sign, '-' and '0' its padding, precision its least digits.
 */
static void put_big_unsigned(struct buf *b, const char *flags, int width, int prec,
			     uint64_t u)
{
	char digits[24];
	const int n = snprintf(digits, sizeof(digits), "%" PRIu64, u);
	const char sign = strchr(flags, '+') ? '+' : strchr(flags, ' ') ? ' ' : 0;
	const int zeros = prec > n ? prec - n : 0;
	const int body = (sign ? 1 : 0) + zeros + n;
	const int pad = width > body ? width - body : 0;

	if (strchr(flags, '-')) {
		if (sign)
			buf_putc(b, sign);
		buf_pad(b, '0', zeros);
		buf_add(b, digits, (size_t)n);
		buf_pad(b, ' ', pad);
	} else if (strchr(flags, '0') && prec < 0) {
		if (sign)
			buf_putc(b, sign);
		buf_pad(b, '0', pad);
		buf_add(b, digits, (size_t)n);
	} else {
		buf_pad(b, ' ', pad);
		if (sign)
			buf_putc(b, sign);
		buf_pad(b, '0', zeros);
		buf_add(b, digits, (size_t)n);
	}
}

/* One conversion of a format string, applied to one value. */
static void format_one(struct buf *b, const char *flags, int width, int prec,
		       char conv, const struct gtr_value *v,
		       const struct gtr_arg *arg)
{
	char spec[48];
	char wp[24] = "";
	const bool left = strchr(flags, '-') != NULL;
	const size_t start = b->len;

	if (width >= 0 && prec >= 0)
		snprintf(wp, sizeof(wp), "%d.%d", width, prec);
	else if (width >= 0)
		snprintf(wp, sizeof(wp), "%d", width);
	else if (prec >= 0)
		snprintf(wp, sizeof(wp), ".%d", prec);

	switch (v->kind == GTR_VAL_NONE ? 's' : conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': {
		const bool sgn = conv == 'd' || conv == 'i';
		const struct intval iv = int_for_verb(v, arg, sgn);
		if (!iv.ok)
			break; /* shown as %s would */
		if (sgn && (iv.neg || iv.u <= INT64_MAX)) {
			/* %lld, so that the '+' and ' ' flags apply as in C */
			snprintf(spec, sizeof(spec), "%%%s%slld", flags, wp);
			buf_printf(b, spec, (long long)(int64_t)iv.u);
		} else if (sgn) {
			put_big_unsigned(b, flags, width, prec, iv.u);
		} else {
			snprintf(spec, sizeof(spec), "%%%s%sll%c", flags, wp, sgn ? 'u' : conv);
			buf_printf(b, spec, (unsigned long long)iv.u);
		}
		return;
	}
	case 'c': {
		const struct intval iv = int_for_verb(v, arg, false);
		if (!iv.ok)
			break;
		put_utf8_cp(b, iv.u);
		pad_since(b, start, width, left);
		return;
	}
	case 'p': {
		const struct intval iv = int_for_verb(v, arg, false);
		if (!iv.ok)
			break;
		buf_printf(b, "0x%llx", (unsigned long long)iv.u);
		pad_since(b, start, width, left);
		return;
	}
	case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
		if (v->kind == GTR_VAL_STR)
			break;
		snprintf(spec, sizeof(spec), "%%%s%s%c", flags, wp, conv);
		buf_printf(b, spec, out_value_double(v, arg));
		return;
	}

	/* %s, and any verb that does not fit the value: the value as text,
	 * strings without quotes; precision limits the bytes of a string shown,
	 * width pads the result */
	out_bare_value(b, v, arg, prec);
	pad_since(b, start, width, left);
}

/* One piece of a compiled format string. */
enum { P_LIT, P_CONV, P_PCT };

struct piece {
	uint8_t type;
	char conv;
	char flags[8];
	int width, prec;
	uint32_t off, len;    /* P_LIT: bytes of the format string */
	uint32_t k;           /* P_CONV: conversion number */
};

struct cfmt {
	struct piece *p;
	uint32_t n, cap;
	const char *fmt;
};

static void add_piece(struct cfmt *c, const struct piece *pc)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		c->p = realloc(c->p, c->cap * sizeof(*c->p));
		if (!c->p)
			xalloc_die("format string");
	}
	c->p[c->n++] = *pc;
}

/* Splits a trace.py-style format string into pieces, once per probe. */
static void fmt_compile(const char *fmt, struct cfmt *c)
{
	const char *s = fmt;
	uint32_t k = 0;

	memset(c, 0, sizeof(*c));
	c->fmt = fmt;
	while (*s) {
		struct piece pc;
		memset(&pc, 0, sizeof(pc));
		if (*s != '%') {
			const char *t = s;
			while (*t && *t != '%')
				t++;
			pc.type = P_LIT;
			pc.off = (uint32_t)(s - fmt);
			pc.len = (uint32_t)(t - s);
			add_piece(c, &pc);
			s = t;
			continue;
		}
		/* %[flags][width][.prec][length]conv */
		const char *start = s++;
		int nf = 0;
		bool bad = false;

		pc.width = pc.prec = -1;
		while (*s && strchr("-+ #0", *s)) {
			if (nf < 7 && !memchr(pc.flags, *s, (size_t)nf))
				pc.flags[nf++] = *s;
			s++;
		}
		if (*s >= '0' && *s <= '9') {
			pc.width = 0;
			while (*s >= '0' && *s <= '9') {
				pc.width = pc.width * 10 + (*s++ - '0');
				if (pc.width > 4096)
					bad = true, pc.width = 4096;
			}
		}
		if (*s == '.') {
			s++;
			pc.prec = 0;
			while (*s >= '0' && *s <= '9') {
				pc.prec = pc.prec * 10 + (*s++ - '0');
				if (pc.prec > 4096)
					bad = true, pc.prec = 4096;
			}
		}
		while (*s && strchr("hlqjztL", *s))
			s++;
		const char conv = *s;
		if (conv == '%' && s == start + 1) {
			pc.type = P_PCT;
			add_piece(c, &pc);
			s++;
			continue;
		}
		if (bad || !conv || !strchr("diuxXocpsvfFeEgGaA", conv)) {
			/* not a conversion gotrace knows: shown as written */
			if (conv)
				s++;
			pc.type = P_LIT;
			pc.off = (uint32_t)(start - fmt);
			pc.len = (uint32_t)(s - start);
			add_piece(c, &pc);
			continue;
		}
		s++;
		pc.type = P_CONV;
		pc.conv = conv;
		pc.k = k++;
		add_piece(c, &pc);
	}
}

/* Applies a compiled format to the values of `ev` from probe `p`. */
static void fmt_run(struct buf *b, const struct cfmt *c, const struct gtr_probe *p,
		    const struct gtr_event *ev)
{
	for (uint32_t i = 0; i < c->n; i++) {
		const struct piece *pc = &c->p[i];
		switch (pc->type) {
		case P_LIT:
			output_text_bytes(b, (const uint8_t *)c->fmt + pc->off, pc->len, false);
			continue;
		case P_PCT:
			buf_putc(b, '%');
			continue;
		}
		if (!p || pc->k >= p->nexprs || p->exprs[pc->k] >= ev->nvals ||
		    p->exprs[pc->k] >= GTR_MAX_ARGS) {
			buf_puts(b, "<missing>");
			continue;
		}
		const uint32_t vi = p->exprs[pc->k];
		if (strchr("vs", pc->conv) && output_struct_value(b, p, ev, vi, false))
			continue;   /* a struct passed by value, whole */
		format_one(b, pc->flags, pc->width, pc->prec, pc->conv, &ev->vals[vi],
			   arg_at(p, vi));
	}
}

void output_text_format(struct buf *b, const char *fmt,
			const struct report_event *e)
{
	struct cfmt c;

	fmt_compile(fmt, &c);
	fmt_run(b, &c, e->probe, e->ev);
	free(c.p);
}

struct fcache_ent {
	const struct gtr_probe *probe;
	struct cfmt c;
};

/* The compiled format of probe `p` (which has one), compiled when first met. */
static const struct cfmt *fmt_for(struct output *o, const struct gtr_probe *p)
{
	const uint32_t *i = u64map_get(&o->fcx, (uintptr_t)p);

	if (i)
		return &o->fc[*i].c;
	if (o->fc_n == o->fc_cap) {
		o->fc_cap = o->fc_cap ? o->fc_cap * 2 : 64;
		o->fc = xrealloc(o->fc, o->fc_cap * sizeof(*o->fc), "output");
	}
	if (u64map_put(&o->fcx, (uintptr_t)p, o->fc_n, UINT32_MAX))
		xalloc_die("output: format index");
	struct fcache_ent *f = &o->fc[o->fc_n++];
	f->probe = p;
	fmt_compile(p->fmt, &f->c);
	return &f->c;
}

void out_printf(struct output *o, struct buf *b, const struct gtr_probe *p,
		const struct gtr_event *ev)
{
	struct cfmt c;

	if (o) {
		fmt_run(b, fmt_for(o, p), p, ev);
		return;
	}
	fmt_compile(p->fmt, &c);
	fmt_run(b, &c, p, ev);
	free(c.p);
}

void out_printf_free(struct output *o)
{
	for (uint32_t i = 0; i < o->fc_n; i++)
		free(o->fc[i].c.p);
	free(o->fc);
	u64map_free(&o->fcx);
}
