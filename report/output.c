/* SPDX-License-Identifier: MIT */
/*
 * Text and JSON Lines rendering of events (spec/OUTPUT.md).
 */
#include "output.h"
#include "width.h"

#include "json.h"
#include "utf8.h"
#include "xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timeparse.h"

static const char hexdig[] = "0123456789abcdef";

int output_format_parse(const char *name, enum output_format *fmt)
{
	if (!strcmp(name, "text"))
		*fmt = OUTPUT_TEXT;
	else if (!strcmp(name, "jsonl"))
		*fmt = OUTPUT_JSONL;
	else if (!strcmp(name, "csv"))
		*fmt = OUTPUT_CSV;
	else if (!strcmp(name, "chrome"))
		*fmt = OUTPUT_CHROME;
	else if (!strcmp(name, "folded"))
		*fmt = OUTPUT_FOLDED;
	else
		return -1;
	return 0;
}

/* ------------------------------------------------------------ bytes */

/* Code points that are valid but would confuse a terminal or a reader:
 * C1 controls, line/paragraph separators, bidirectional overrides and
 * isolates, the byte order mark. */
static bool cp_unsafe(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0xfeff;
}

static void put_hex_byte(struct buf *b, uint8_t c)
{
	char *o = buf_reserve(b, 4);

	o[0] = '\\'; o[1] = 'x'; o[2] = hexdig[c >> 4]; o[3] = hexdig[c & 15];
	b->len += 4;
}

void output_text_bytes(struct buf *b, const uint8_t *p, size_t n, bool quoted)
{
	size_t i = 0;

	while (i < n) {
		/* fast path: a run of plain printable ASCII */
		size_t j = i;
		while (j < n && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '\\' &&
		       !(quoted && p[j] == '"'))
			j++;
		buf_add(b, p + i, j - i);
		i = j;
		if (i >= n)
			break;
		const uint8_t c = p[i];
		switch (c) {
		case '\\': buf_add(b, "\\\\", 2); i++; continue;
		case '"': buf_add(b, "\\\"", 2); i++; continue;
		case '\n': buf_add(b, "\\n", 2); i++; continue;
		case '\t': buf_add(b, "\\t", 2); i++; continue;
		case '\r': buf_add(b, "\\r", 2); i++; continue;
		}
		if (c < 0x80) {
			put_hex_byte(b, c);
			i++;
			continue;
		}
		uint32_t cp;
		const int k = utf8_seq(p + i, n - i, &cp);
		if (!k) {
			put_hex_byte(b, c);
			i++;
		} else if (cp_unsafe(cp)) {
			for (int m = 0; m < k; m++)
				put_hex_byte(b, p[i + m]);
			i += (size_t)k;
		} else {
			buf_add(b, p + i, (size_t)k);
			i += (size_t)k;
		}
	}
}

void output_json_bytes(struct buf *b, const uint8_t *p, size_t n)
{
	json_escape(b, p, n, JSON_ESC_JS);
}

static void put_json_str(struct buf *b, const char *s)
{
	buf_putc(b, '"');
	output_json_bytes(b, (const uint8_t *)s, strlen(s));
	buf_putc(b, '"');
}

/* ------------------------------------------------------------ numbers */

char *output_double(char out[32], double d)
{
	if (isnan(d)) {
		strcpy(out, "NaN");
		return out;
	}
	if (isinf(d)) {
		strcpy(out, d > 0 ? "+Inf" : "-Inf");
		return out;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, 32, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			break;
	}
	return out;
}

static bool arg_is(const struct gtr_arg *arg, enum gtr_type t)
{
	return arg && arg->type == t;
}

/* The double a value stands for: float bits when the argument is a float. */
static double value_double(const struct gtr_value *v, const struct gtr_arg *arg)
{
	switch (v->kind) {
	case GTR_VAL_INT:
		return (double)v->v.i;
	case GTR_VAL_UINT:
		if (arg_is(arg, GTR_TYPE_FLOAT)) {
			if (arg->size == 4) {
				const uint32_t bits = (uint32_t)v->v.u;
				float f;
				memcpy(&f, &bits, sizeof(f));
				return f;
			}
			double d;
			memcpy(&d, &v->v.u, sizeof(d));
			return d;
		}
		return (double)v->v.u;
	case GTR_VAL_BOOL:
		return v->v.b;
	default:
		return 0;
	}
}

static bool value_is_float(const struct gtr_value *v, const struct gtr_arg *arg)
{
	return v->kind == GTR_VAL_UINT && arg_is(arg, GTR_TYPE_FLOAT);
}

static bool str_truncated(const struct gtr_value *v)
{
	return v->v.s.full_len > v->v.s.len;
}

bool output_arg_is_iface(const struct gtr_arg *a)
{
	if (!a)
		return false;
	if (a->type == GTR_TYPE_IFACE)
		return true;
	if (a->type != GTR_TYPE_STRING || !a->type_name)
		return false;
	return !strcmp(a->type_name, "error") || !strcmp(a->type_name, "any") ||
	       !strncmp(a->type_name, "interface {", 11) ||
	       !strncmp(a->type_name, "interface{", 10);
}

/* ------------------------------------------------------------ slices */

/* How a slice's elements print, from its Go type "[]T". */
enum elem_kind { EK_NONE, EK_INT, EK_UINT, EK_BOOL, EK_FLOAT, EK_PTR };

static enum elem_kind slice_elem_kind(const struct gtr_arg *a)
{
	const char *t = a && a->type_name && !strncmp(a->type_name, "[]", 2)
				? a->type_name + 2 : "";

	if (!a || !a->size || a->size > 8)
		return EK_NONE;
	/* Go's predeclared types are the only unqualified names */
	if (!strcmp(t, "int") || !strcmp(t, "int8") || !strcmp(t, "int16") ||
	    !strcmp(t, "int32") || !strcmp(t, "int64") || !strcmp(t, "rune"))
		return EK_INT;
	if (!strcmp(t, "uint") || !strcmp(t, "uint8") || !strcmp(t, "uint16") ||
	    !strcmp(t, "uint32") || !strcmp(t, "uint64") || !strcmp(t, "uintptr") ||
	    !strcmp(t, "byte"))
		return EK_UINT;
	if (!strcmp(t, "bool"))
		return EK_BOOL;
	if (!strcmp(t, "float32") || !strcmp(t, "float64"))
		return EK_FLOAT;
	if (*t == '*' || !strncmp(t, "map[", 4) || !strncmp(t, "chan ", 5) ||
	    !strncmp(t, "func(", 5) || !strcmp(t, "unsafe.Pointer"))
		return EK_PTR;
	return EK_NONE;
}

/* Element count of a slice value (its length). */
static uint64_t slice_len(const struct gtr_arg *a, const struct gtr_value *v)
{
	return a && a->size ? v->v.s.full_len / a->size : v->v.s.full_len;
}

/*
 * Appends element i of a slice value, little-endian in the target's
 * layout: integers, bools, floats, pointers in hex.
 */
static void slice_elem(struct buf *b, const struct gtr_arg *a,
		       const struct gtr_value *v, uint32_t i, enum elem_kind k,
		       bool json)
{
	const uint8_t *p = v->v.s.data + (size_t)i * a->size;
	uint64_t u = 0;
	char tmp[32];

	for (uint32_t j = 0; j < a->size; j++)
		u |= (uint64_t)p[j] << (8 * j);
	switch (k) {
	case EK_INT:
		if (a->size < 8 && (u >> (8 * a->size - 1)) & 1)
			u |= ~0ull << (8 * a->size);
		buf_i64(b, (int64_t)u);
		break;
	case EK_BOOL:
		buf_puts(b, u ? "true" : "false");
		break;
	case EK_FLOAT: {
		double d;

		if (a->size == 4) {
			float f;
			uint32_t w = (uint32_t)u;

			memcpy(&f, &w, 4);
			d = f;
		} else {
			memcpy(&d, &u, 8);
		}
		output_double(tmp, d);
		if (json && !isfinite(d))
			put_json_str(b, tmp);
		else
			buf_puts(b, tmp);
		break;
	}
	case EK_PTR:
		if (json)
			buf_u64(b, u);
		else
			buf_printf(b, "0x%" PRIx64, u);
		break;
	default:
		buf_u64(b, u);
		break;
	}
}

/* [e1 e2 ...](len=N), or [...](len=N) when elements cannot be shown. */
static void slice_text(struct buf *b, const struct gtr_arg *a,
		       const struct gtr_value *v)
{
	const enum elem_kind k = slice_elem_kind(a);
	const uint64_t n = slice_len(a, v);
	const uint32_t shown = k == EK_NONE ? 0 : v->v.s.len / a->size;

	buf_putc(b, '[');
	for (uint32_t i = 0; i < shown; i++) {
		if (i)
			buf_putc(b, ' ');
		slice_elem(b, a, v, i, k, false);
	}
	if (shown < n)
		buf_puts(b, shown ? " ..." : "...");
	buf_puts(b, "](len=");
	buf_u64(b, n);
	buf_putc(b, ')');
}

/* [e1,...] when all elements are there, else {"elems":[...],"len":N}. */
static void slice_json(struct buf *b, const struct gtr_arg *a,
		       const struct gtr_value *v)
{
	const enum elem_kind k = slice_elem_kind(a);
	const uint64_t n = slice_len(a, v);
	const uint32_t shown = k == EK_NONE ? 0 : v->v.s.len / a->size;
	const bool whole = shown == n;

	if (!whole)
		buf_puts(b, "{\"elems\":");
	buf_putc(b, '[');
	for (uint32_t i = 0; i < shown; i++) {
		if (i)
			buf_putc(b, ',');
		slice_elem(b, a, v, i, k, true);
	}
	buf_putc(b, ']');
	if (!whole) {
		buf_puts(b, ",\"len\":");
		buf_u64(b, n);
		buf_puts(b, ",\"truncated\":true}");
	}
}

/* ------------------------------------------------------------ text */

void output_text_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg)
{
	char tmp[32];

	switch (v->kind) {
	case GTR_VAL_INT:
		buf_i64(b, v->v.i);
		return;
	case GTR_VAL_UINT:
		if (arg_is(arg, GTR_TYPE_PTR))
			buf_printf(b, "0x%" PRIx64, v->v.u);
		else if (arg_is(arg, GTR_TYPE_FLOAT))
			buf_puts(b, output_double(tmp, value_double(v, arg)));
		else
			buf_u64(b, v->v.u);
		return;
	case GTR_VAL_BOOL:
		buf_puts(b, v->v.b ? "true" : "false");
		return;
	case GTR_VAL_STR:
		if (arg_is(arg, GTR_TYPE_SLICE)) {
			slice_text(b, arg, v);
			return;
		}
		if (output_arg_is_iface(arg)) {
			/* an interface: its dynamic type's name, "<nil>" */
			output_text_bytes(b, v->v.s.data, v->v.s.len, false);
			if (str_truncated(v)) {
				buf_puts(b, "...(len=");
				buf_u64(b, v->v.s.full_len);
				buf_putc(b, ')');
			}
			return;
		}
		buf_putc(b, '"');
		output_text_bytes(b, v->v.s.data, v->v.s.len, true);
		buf_putc(b, '"');
		/* The true length always: Go strings are (pointer, length). */
		buf_puts(b, str_truncated(v) ? "...(len=" : "(len=");
		buf_u64(b, v->v.s.full_len);
		buf_putc(b, ')');
		return;
	default:
		buf_puts(b, "<unavailable>");
		return;
	}
}

/*
 * A value as %s and CSV show it: as text (output_text_value()), except
 * that strings, []byte and interfaces are their bytes escaped, without
 * quotes, then "...(len=N)" when cut; `prec` >= 0 limits the bytes of a
 * string shown. Slices print as in text ("[1 2 3](len=3)"), never as the
 * bytes of their elements.
 */
static void bare_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg, int prec)
{
	if (v->kind != GTR_VAL_STR || arg_is(arg, GTR_TYPE_SLICE)) {
		output_text_value(b, v, arg);
		return;
	}
	uint32_t n = v->v.s.len;
	if (prec >= 0 && (uint32_t)prec < n)
		n = (uint32_t)prec;
	output_text_bytes(b, v->v.s.data, n, false);
	if (str_truncated(v)) {
		buf_puts(b, "...(len=");
		buf_u64(b, v->v.s.full_len);
		buf_putc(b, ')');
	}
}

/* A parameter name worth showing: known and not the blank identifier. */
static bool name_known(const char *name)
{
	return name && name[0] && strcmp(name, "_") != 0;
}

static const struct gtr_arg *arg_at(const struct gtr_probe *p, uint32_t i)
{
	return p && i < p->nargs && i < GTR_MAX_ARGS ? &p->args[i] : NULL;
}

/* Appends `s` escaped, padded with spaces to `width` columns. */
static void put_padded(struct buf *b, const char *s, int width)
{
	const size_t start = b->len;

	output_text_bytes(b, (const uint8_t *)s, strlen(s), false);
	/* by display width: a wide character takes two columns */
	buf_pad(b, ' ', width - text_width(b->data + start, b->len - start));
}

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
		buf_printf(b, spec, value_double(v, arg));
		return;
	}

	/* %s, and any verb that does not fit the value: the value as text,
	 * strings without quotes; precision limits the bytes of a string shown,
	 * width pads the result */
	bare_value(b, v, arg, prec);
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

/* ------------------------------------------------------------ output object */

struct fcache_ent {
	const struct gtr_probe *probe;
	struct cfmt c;
};

struct track {
	uint32_t pid;
	uint64_t tid;
	bool used;
	char comm[GTR_COMM_LEN + 1];
};

#define MAX_TRACKS 65536

struct output {
	struct output_opts o;
	struct fcache_ent *fc;      /* compiled format strings by probe id */
	uint32_t fc_cap, fc_n;
	struct buf cell;            /* scratch for one CSV field */
	uint64_t csv_cut;
	bool chrome_any;            /* a Chrome event was written */
	struct track *tracks;       /* Chrome tracks, for their names */
	uint32_t tracks_cap, tracks_n;
};

struct output *output_new(const struct output_opts *opts)
{
	struct output *o = xcalloc(1, sizeof(*o), "output");

	o->o = *opts;
	if (!o->o.csv_values)
		o->o.csv_values = 1;
	return o;
}

void output_free(struct output *o)
{
	if (!o)
		return;
	for (uint32_t i = 0; i < o->fc_cap; i++)
		free(o->fc[i].c.p);
	free(o->fc);
	free(o->tracks);
	buf_free(&o->cell);
	free(o);
}

uint64_t output_csv_cut(const struct output *o)
{
	return o->csv_cut;
}

static uint32_t hash32(uint64_t v, uint32_t cap)
{
	return (uint32_t)((v * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* The compiled format of probe `p` (which has one), compiled when first met. */
static const struct cfmt *fmt_for(struct output *o, const struct gtr_probe *p)
{
	if ((o->fc_n + 1) * 2 > o->fc_cap) {
		const uint32_t cap = o->fc_cap ? o->fc_cap * 2 : 64;
		struct fcache_ent *n = xcalloc(cap, sizeof(*n), "output");
		for (uint32_t i = 0; i < o->fc_cap; i++) {
			if (!o->fc[i].probe)
				continue;
			uint32_t h = hash32((uintptr_t)o->fc[i].probe, cap);
			while (n[h].probe)
				h = (h + 1) & (cap - 1);
			n[h] = o->fc[i];
		}
		free(o->fc);
		o->fc = n;
		o->fc_cap = cap;
	}
	uint32_t h = hash32((uintptr_t)p, o->fc_cap);
	while (o->fc[h].probe && o->fc[h].probe != p)
		h = (h + 1) & (o->fc_cap - 1);
	if (!o->fc[h].probe) {
		o->fc[h].probe = p;
		fmt_compile(p->fmt, &o->fc[h].c);
		o->fc_n++;
	}
	return &o->fc[h].c;
}

/* ------------------------------------------------------------ stacks */

void output_frame(const struct output *o, struct buf *b, uint32_t pid, uint64_t addr,
		  uint32_t k, bool json, bool name_only)
{
	const char *name = NULL;
	uint64_t off = 0;

	if (o && o->o.symbolize) {
		/* a return address may be just past its function's last byte */
		const uint64_t a = k && addr ? addr - 1 : addr;
		name = o->o.symbolize(o->o.sym_ctx, pid, a, &off);
		if (k && addr)
			off++;
	}
	if (!name) {
		buf_printf(b, "0x%" PRIx64, addr);
		return;
	}
	if (json)
		output_json_bytes(b, (const uint8_t *)name, strlen(name));
	else
		output_text_bytes(b, (const uint8_t *)name, strlen(name), false);
	if (!name_only)
		buf_printf(b, "+0x%" PRIx64, off);
}

/* The stack of `ev` under its text line, one frame a line (trace.py -U). */
static void text_stack(const struct output *o, struct buf *b, const struct gtr_event *ev)
{
	if (!ev || !ev->stack)
		return;
	for (uint32_t k = 0; k < ev->nstack && k < GTR_MAX_STACK; k++) {
		buf_puts(b, "        ");
		output_frame(o, b, ev->pid, ev->stack[k], k, false, false);
		buf_putc(b, '\n');
	}
}

/* ,"stack":["name+0xoff",...] of `ev`, when it has one. */
static void json_stack(const struct output *o, struct buf *b, const struct gtr_event *ev)
{
	if (!ev || !ev->stack || !ev->nstack)
		return;
	buf_puts(b, ",\"stack\":[");
	for (uint32_t k = 0; k < ev->nstack && k < GTR_MAX_STACK; k++) {
		buf_puts(b, k ? ",\"" : "\"");
		output_frame(o, b, ev->pid, ev->stack[k], k, true, false);
		buf_putc(b, '"');
	}
	buf_putc(b, ']');
}

/* The stack a call shows: its entry's, else its return's. */
static const struct gtr_event *call_stack(const struct gtr_event *entry,
					  const struct gtr_event *ret)
{
	if (entry && entry->stack && entry->nstack)
		return entry;
	if (ret && ret->stack && ret->nstack)
		return ret;
	return NULL;
}

/* ------------------------------------------------------------ text lines */

/* The values of `ev` from probe `p`: its format string, or name=value. */
static void put_values(struct output *o, struct buf *b, const struct gtr_probe *p,
		       const struct gtr_event *ev)
{
	if (p && p->fmt && p->fmt[0]) {
		if (o) {
			fmt_run(b, fmt_for(o, p), p, ev);
		} else {
			struct cfmt c;
			fmt_compile(p->fmt, &c);
			fmt_run(b, &c, p, ev);
			free(c.p);
		}
		return;
	}
	for (uint32_t i = 0; i < ev->nvals && i < GTR_MAX_ARGS; i++) {
		const struct gtr_arg *a = arg_at(p, i);
		if (i)
			buf_putc(b, ' ');
		if (a && name_known(a->name)) {
			output_text_bytes(b, (const uint8_t *)a->name, strlen(a->name), false);
			buf_putc(b, '=');
		}
		output_text_value(b, &ev->vals[i], a);
	}
}

/* Seconds since t0 with 6 decimals, exactly, into out. */
static void rel_seconds(char out[32], uint64_t ts, uint64_t t0)
{
	const bool neg = ts < t0;
	const uint64_t d = neg ? t0 - ts : ts - t0;

	snprintf(out, 32, "%s%llu.%06llu", neg ? "-" : "", (unsigned long long)(d / 1000000000),
		 (unsigned long long)(d / 1000 % 1000000));
}

/* HH:MM:SS.uuuuuu of CLOCK_REALTIME `real` ns, in local time. */
static void wall_clock(char out[32], uint64_t real)
{
	const time_t sec = (time_t)(real / 1000000000);
	struct tm tm;

	localtime_r(&sec, &tm);
	snprintf(out, 32, "%02d:%02d:%02d.%06u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(real % 1000000000 / 1000));
}

/*
 * Time columns, pid, tid, comm and function: the trace.py line prefix.
 * `ev` gives the time, pid, tid and probe id: e->ev, or a call's entry in
 * the call view (e->real_ns is always the time of e->ev).
 */
static void text_prefix(const struct output *o, struct buf *b,
			const struct report_event *e, const struct gtr_probe *p,
			const struct gtr_event *ev)
{
	const uint64_t ts = ev->ts_ns;
	char tmp[32];
	size_t start;

	if (o && o->o.time_wall) {
		/* the call view dates a call by its entry */
		wall_clock(tmp, e->real_ns - (ts < e->ev->ts_ns ? e->ev->ts_ns - ts : 0));
		put_padded(b, tmp, 15);
		buf_putc(b, ' ');
	}
	if (o && o->o.time_rel) {
		rel_seconds(tmp, ts, e->t0_ns);
		put_padded(b, tmp, 10);
		buf_putc(b, ' ');
	}
	start = b->len;
	buf_u64(b, ev->pid);
	buf_pad(b, ' ', 8 - (int)(b->len - start));
	start = b->len;
	buf_u64(b, ev->tid);
	buf_pad(b, ' ', 8 - (int)(b->len - start));
	put_padded(b, e->comm ? e->comm : "", 15);
	buf_putc(b, ' ');
	if (p && p->func) {
		put_padded(b, p->func, 16);
	} else {
		snprintf(tmp, sizeof(tmp), "probe#%" PRIu32, ev->probe_id);
		put_padded(b, tmp, 16);
	}
	buf_putc(b, ' ');
}

static void text_header(const struct output *o, struct buf *b)
{
	if (o && o->o.time_wall)
		buf_puts(b, "TIME            ");
	if (o && o->o.time_rel)
		buf_puts(b, "TIME       ");
	if (o && o->o.calls)
		buf_puts(b, "PID     TID     COMM            FUNC             LATENCY      -\n");
	else
		buf_puts(b, "PID     TID     COMM            FUNC             -\n");
}

void output_text_header(struct buf *b)
{
	text_header(NULL, b);
}

static void text_event(struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	char tmp[24];

	text_prefix(o, b, e, e->probe, ev);
	if (ev->kind == GTR_KIND_RETURN) {
		/* the values stay last, where trace.py has them */
		buf_puts(b, "<- (");
		buf_puts(b, e->entry ? rtime_fmt_duration(tmp, e->latency_ns)
			    : e->lost ? "lost" : "no entry");
		buf_puts(b, ev->nvals ? ") " : ")");
		put_values(o, b, e->probe, ev);
	} else {
		put_values(o, b, e->probe, ev);
	}
	buf_putc(b, '\n');
	text_stack(o, b, ev);
}

void output_text_event(struct buf *b, const struct report_event *e)
{
	text_event(NULL, b, e);
}

/* The call view: entry and return on one line. `entry`/`ret` may be NULL. */
static void text_call(struct output *o, struct buf *b, const struct report_event *e,
		      const struct gtr_event *entry, const struct gtr_probe *eprobe,
		      const struct gtr_event *ret, const char *latency, bool arrow)
{
	const struct gtr_probe *p = eprobe ? eprobe : e->probe;

	/* time, pid, tid and goroutine of the entry (comm: e->comm) */
	text_prefix(o, b, e, p, entry ? entry : e->ev);
	put_padded(b, latency, 12);
	buf_putc(b, ' ');
	if (entry)
		put_values(o, b, eprobe, entry);
	else
		buf_putc(b, '?');
	if (arrow) {
		buf_puts(b, " -> ");
		if (ret)
			put_values(o, b, e->probe, ret);
		else
			buf_putc(b, '?');
	}
	buf_putc(b, '\n');
	text_stack(o, b, call_stack(entry, ret));
}

/* ------------------------------------------------------------ JSON */

void output_json_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg)
{
	char tmp[32];

	switch (v->kind) {
	case GTR_VAL_INT:
		buf_i64(b, v->v.i);
		return;
	case GTR_VAL_UINT:
		if (arg_is(arg, GTR_TYPE_FLOAT)) {
			const double d = value_double(v, arg);
			output_double(tmp, d);
			if (isfinite(d))
				buf_puts(b, tmp);
			else
				put_json_str(b, tmp);
		} else {
			buf_u64(b, v->v.u);
		}
		return;
	case GTR_VAL_BOOL:
		buf_puts(b, v->v.b ? "true" : "false");
		return;
	case GTR_VAL_STR:
		if (arg_is(arg, GTR_TYPE_SLICE)) {
			slice_json(b, arg, v);
			return;
		}
		if (str_truncated(v))
			buf_puts(b, "{\"str\":\"");
		else
			buf_putc(b, '"');
		output_json_bytes(b, v->v.s.data, v->v.s.len);
		buf_putc(b, '"');
		if (str_truncated(v)) {
			buf_puts(b, ",\"len\":");
			buf_u64(b, v->v.s.full_len);
			buf_puts(b, ",\"truncated\":true}");
		}
		return;
	default:
		buf_puts(b, "null");
		return;
	}
}

/* ,"ARR":[values],"OBJ":{name:value} of `ev` (NULL: empty) from probe `p`. */
static void json_values(struct buf *b, const char *arr, const char *obj,
			const struct gtr_probe *p, const struct gtr_event *ev)
{
	const uint32_t nvals = !ev ? 0 : ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;

	buf_puts(b, ",\"");
	buf_puts(b, arr);
	buf_puts(b, "\":[");
	for (uint32_t i = 0; i < nvals; i++) {
		if (i)
			buf_putc(b, ',');
		output_json_value(b, &ev->vals[i], arg_at(p, i));
	}
	buf_puts(b, "],\"");
	buf_puts(b, obj);
	buf_puts(b, "\":{");
	bool first = true;
	for (uint32_t i = 0; i < nvals; i++) {
		const struct gtr_arg *a = arg_at(p, i);
		if (!a || !name_known(a->name))
			continue;
		bool dup = false;
		for (uint32_t j = 0; j < i && !dup; j++) {
			const struct gtr_arg *o = arg_at(p, j);
			dup = o && o->name && !strcmp(o->name, a->name);
		}
		if (dup)
			continue;
		if (!first)
			buf_putc(b, ',');
		first = false;
		put_json_str(b, a->name);
		buf_putc(b, ':');
		output_json_value(b, &ev->vals[i], a);
	}
	buf_putc(b, '}');
}

/*
 * {"ts_ns":..,"pid":..,"tid":..,"goid":..,"comm":..,"func":.. of `ev`:
 * e->ev, or a call's entry in the call view; comm is e->comm.
 */
static void json_head(struct buf *b, const struct report_event *e,
		      const struct gtr_probe *p, const struct gtr_event *ev)
{
	buf_puts(b, "{\"ts_ns\":");
	buf_u64(b, ev->ts_ns);
	buf_puts(b, ",\"pid\":");
	buf_u64(b, ev->pid);
	buf_puts(b, ",\"tid\":");
	buf_u64(b, ev->tid);
	buf_puts(b, ",\"goid\":");
	buf_u64(b, ev->goid);
	buf_puts(b, ",\"comm\":");
	put_json_str(b, e->comm ? e->comm : "");
	buf_puts(b, ",\"func\":");
	if (p && p->func)
		put_json_str(b, p->func);
	else
		buf_puts(b, "null");
}

static void jsonl_event(const struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;

	json_head(b, e, e->probe, ev);
	buf_puts(b, ev->kind == GTR_KIND_RETURN ? ",\"kind\":\"return\"" : ",\"kind\":\"entry\"");
	buf_puts(b, ",\"probe\":");
	buf_u64(b, ev->probe_id);
	if (ev->kind == GTR_KIND_RETURN) {
		buf_puts(b, ",\"latency_ns\":");
		if (e->entry)
			buf_u64(b, e->latency_ns);
		else
			buf_puts(b, "null");
	}
	/* a return's own values are its results: same keys as an entry's */
	json_values(b, "goargs", "args", e->probe, ev);
	json_stack(o, b, ev);
	buf_puts(b, "}\n");
}

void output_jsonl_event(struct buf *b, const struct report_event *e)
{
	jsonl_event(NULL, b, e);
}

static void json_call(const struct output *o, struct buf *b, const struct report_event *e,
		      const struct gtr_event *entry, const struct gtr_probe *eprobe,
		      const struct gtr_event *ret, const char *status)
{
	const struct gtr_probe *p = eprobe ? eprobe : e->probe;

	/* every field of the entry (comm: e->comm, see json_head) */
	json_head(b, e, p, entry ? entry : e->ev);
	buf_puts(b, ",\"kind\":\"call\",\"probe\":");
	buf_u64(b, entry ? entry->probe_id : e->ev->probe_id);
	buf_puts(b, ",\"status\":\"");
	buf_puts(b, status);
	buf_puts(b, "\",\"latency_ns\":");
	if (entry && ret)
		buf_u64(b, e->latency_ns);
	else
		buf_puts(b, "null");
	json_values(b, "goargs", "args", eprobe, entry);
	json_values(b, "goret", "rets", ret ? e->probe : NULL, ret);
	json_stack(o, b, call_stack(entry, ret));
	buf_puts(b, "}\n");
}

/* ------------------------------------------------------------ CSV */

void output_csv_field(struct buf *b, const char *p, size_t n)
{
	bool quote = false;

	for (size_t i = 0; i < n && !quote; i++)
		quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
	if (!quote) {
		buf_add(b, p, n);
		return;
	}
	buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '"')
			buf_putc(b, '"');
		buf_putc(b, p[i]);
	}
	buf_putc(b, '"');
}

static void csv_header(const struct output *o, struct buf *b)
{
	buf_puts(b, "ts_ns,pid,tid,goid,comm,func,kind,latency_ns");
	for (uint32_t i = 0; i < o->o.csv_values; i++)
		buf_printf(b, ",v%u", i + 1);
	buf_puts(b, "\r\n");
}

/* Appends a text cell (escaped as text, without quotes) as a CSV field. */
static void csv_text(struct output *o, struct buf *b, const char *s)
{
	buf_reset(&o->cell);
	output_text_bytes(&o->cell, (const uint8_t *)s, strlen(s), false);
	output_csv_field(b, o->cell.data ? o->cell.data : "", o->cell.len);
}

static void csv_event(struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	const struct gtr_probe *p = e->probe;
	char tmp[32];

	buf_u64(b, ev->ts_ns);
	buf_putc(b, ',');
	buf_u64(b, ev->pid);
	buf_putc(b, ',');
	buf_u64(b, ev->tid);
	buf_putc(b, ',');
	buf_u64(b, ev->goid);
	buf_putc(b, ',');
	csv_text(o, b, e->comm ? e->comm : "");
	buf_putc(b, ',');
	if (p && p->func) {
		csv_text(o, b, p->func);
	} else {
		snprintf(tmp, sizeof(tmp), "probe#%" PRIu32, ev->probe_id);
		buf_puts(b, tmp);
	}
	buf_puts(b, ev->kind == GTR_KIND_RETURN ? ",return," : ",entry,");
	if (e->entry)
		buf_u64(b, e->latency_ns);
	for (uint32_t i = 0; i < o->o.csv_values; i++) {
		buf_putc(b, ',');
		if (i >= ev->nvals || i >= GTR_MAX_ARGS)
			continue;
		buf_reset(&o->cell);
		bare_value(&o->cell, &ev->vals[i], arg_at(p, i), -1);
		output_csv_field(b, o->cell.data ? o->cell.data : "", o->cell.len);
	}
	if (ev->nvals > o->o.csv_values)
		o->csv_cut += ev->nvals - o->o.csv_values;
	buf_puts(b, "\r\n");
}

/* ------------------------------------------------------------ Chrome */

/* Chrome's tid: the goroutine id, or the thread id when it is unknown. */
static uint64_t chrome_tid(const struct gtr_event *ev)
{
	return ev->goid ? ev->goid : ev->tid;
}

static void chrome_track(struct output *o, const struct report_event *e)
{
	const uint64_t tid = chrome_tid(e->ev);

	if ((o->tracks_n + 1) * 2 > o->tracks_cap) {
		if (o->tracks_n >= MAX_TRACKS)
			return; /* unnamed beyond this: Perfetto shows the number */
		const uint32_t cap = o->tracks_cap ? o->tracks_cap * 2 : 64;
		struct track *n = xcalloc(cap, sizeof(*n), "output");
		for (uint32_t i = 0; i < o->tracks_cap; i++) {
			if (!o->tracks[i].used)
				continue;
			uint32_t h = hash32(o->tracks[i].tid ^ (uint64_t)o->tracks[i].pid << 40, cap);
			while (n[h].used)
				h = (h + 1) & (cap - 1);
			n[h] = o->tracks[i];
		}
		free(o->tracks);
		o->tracks = n;
		o->tracks_cap = cap;
	}
	uint32_t h = hash32(tid ^ (uint64_t)e->ev->pid << 40, o->tracks_cap);
	while (o->tracks[h].used && (o->tracks[h].pid != e->ev->pid || o->tracks[h].tid != tid))
		h = (h + 1) & (o->tracks_cap - 1);
	if (o->tracks[h].used)
		return;
	o->tracks[h].used = true;
	o->tracks[h].pid = e->ev->pid;
	o->tracks[h].tid = tid;
	snprintf(o->tracks[h].comm, sizeof(o->tracks[h].comm), "%s", e->comm ? e->comm : "");
	o->tracks_n++;
}

/* Microseconds since t0 with 3 decimals, exactly. */
static void chrome_us(struct buf *b, uint64_t ts, uint64_t t0)
{
	const bool neg = ts < t0;
	const uint64_t d = neg ? t0 - ts : ts - t0;

	if (neg)
		buf_putc(b, '-');
	buf_u64(b, d / 1000);
	buf_printf(b, ".%03u", (unsigned)(d % 1000));
}

/* One Chrome trace event: "X" with `dur_ns` when `complete`, else "i". */
static void chrome_event(struct output *o, struct buf *b, const struct report_event *e,
			 const struct gtr_probe *p, const struct gtr_event *entry,
			 const struct gtr_event *ret, uint64_t ts, bool complete,
			 uint64_t dur_ns, const char *note, const char *status)
{
	char tmp[32];

	chrome_track(o, e);
	buf_puts(b, o->chrome_any ? ",\n" : "\n");
	o->chrome_any = true;
	buf_puts(b, "{\"name\":");
	if (p && p->func) {
		put_json_str(b, p->func);
	} else {
		snprintf(tmp, sizeof(tmp), "probe#%" PRIu32, e->ev->probe_id);
		put_json_str(b, tmp);
	}
	buf_puts(b, complete ? ",\"cat\":\"call\",\"ph\":\"X\",\"ts\":" :
			       ",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	chrome_us(b, ts, e->t0_ns);
	if (complete) {
		buf_puts(b, ",\"dur\":");
		chrome_us(b, dur_ns, 0);
	}
	buf_puts(b, ",\"pid\":");
	buf_u64(b, e->ev->pid);
	buf_puts(b, ",\"tid\":");
	buf_u64(b, chrome_tid(e->ev));
	buf_puts(b, ",\"args\":{\"goid\":");
	buf_u64(b, e->ev->goid);
	if (note) {
		buf_puts(b, ",\"note\":");
		put_json_str(b, note);
	}
	if (status) {
		buf_puts(b, ",\"status\":");
		put_json_str(b, status);
	}
	json_values(b, "goargs", "args", entry ? (e->entry_probe ? e->entry_probe : e->probe) : NULL,
		    entry);
	json_values(b, "goret", "rets", ret ? e->probe : NULL, ret);
	json_stack(o, b, call_stack(entry, ret));
	buf_puts(b, "}}");
}

static int track_cmp(const void *a, const void *b)
{
	const struct track *x = *(const struct track *const *)a, *y = *(const struct track *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * Metadata: a name per goroutine track, and one per process, from the
 * thread name of its lowest goroutine (goroutine 1 runs main.main).
 */
static void chrome_end(struct output *o, struct buf *b)
{
	const struct track **v = calloc(o->tracks_cap + 1, sizeof(*v));
	uint32_t n = 0;
	char name[64];

	if (!v)
		xalloc_die("chrome track names");
	for (uint32_t i = 0; i < o->tracks_cap; i++)
		if (o->tracks[i].used)
			v[n++] = &o->tracks[i];
	qsort(v, n, sizeof(*v), track_cmp);
	for (uint32_t i = 0; i < n; i++) {
		const struct track *t = v[i];

		buf_puts(b, o->chrome_any ? ",\n" : "\n");
		o->chrome_any = true;
		if (i == 0 || v[i - 1]->pid != t->pid) {
			buf_printf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":",
				   t->pid);
			snprintf(name, sizeof(name), "%s %u", t->comm, t->pid);
			put_json_str(b, name);
			buf_puts(b, "}},\n");
		}
		buf_printf(b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,\"args\":{\"name\":",
			   t->pid, (unsigned long long)t->tid);
		snprintf(name, sizeof(name), "goroutine %llu", (unsigned long long)t->tid);
		put_json_str(b, name);
		buf_puts(b, "}}");
	}
	free(v);
	buf_puts(b, "\n]}\n");
}

/* ------------------------------------------------------------ dispatch */

void output_begin(struct output *o, struct buf *b)
{
	switch (o->o.format) {
	case OUTPUT_TEXT:
		text_header(o, b);
		break;
	case OUTPUT_CSV:
		csv_header(o, b);
		break;
	case OUTPUT_CHROME:
		buf_puts(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"gotrace-report\"},\"traceEvents\":[");
		break;
	default:
		break;
	}
}

void output_end(struct output *o, struct buf *b)
{
	if (o->o.format == OUTPUT_CHROME)
		chrome_end(o, b);
}

int output_put(struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	const bool ret = ev->kind == GTR_KIND_RETURN;
	char tmp[24];

	switch (o->o.format) {
	case OUTPUT_FOLDED:
		return 0;
	case OUTPUT_CSV:
		csv_event(o, b, e);
		return 1;
	case OUTPUT_CHROME:
		if (ret && e->entry)
			chrome_event(o, b, e, e->entry_probe ? e->entry_probe : e->probe, e->entry,
				     ev, e->entry->ts_ns, true, e->latency_ns, NULL, NULL);
		else if (ret)
			chrome_event(o, b, e, e->probe, NULL, ev, ev->ts_ns, false, 0,
				     e->lost ? NULL : "return without entry",
				     e->lost ? "lost" : NULL);
		else if (!e->tracked)
			chrome_event(o, b, e, e->probe, ev, NULL, ev->ts_ns, false, 0, NULL, NULL);
		else
			return 0;
		return 1;
	default:
		break;
	}
	if (!o->o.calls) {
		if (o->o.format == OUTPUT_JSONL)
			jsonl_event(o, b, e);
		else
			text_event(o, b, e);
		return 1;
	}
	/* the call view: a line per return, and per entry that gets none */
	if (!ret && e->tracked)
		return 0;
	if (o->o.format == OUTPUT_JSONL) {
		if (ret)
			json_call(o, b, e, e->entry, e->entry_probe, ev,
				  e->entry ? "returned" : e->lost ? "lost" : "no_entry");
		else
			json_call(o, b, e, ev, e->probe, NULL, "no_return_probe");
		return 1;
	}
	if (ret)
		text_call(o, b, e, e->entry, e->entry_probe, ev,
			  e->entry ? rtime_fmt_duration(tmp, e->latency_ns) : e->lost ? "lost" : "?",
			  true);
	else
		text_call(o, b, e, ev, e->probe, NULL, "-", false);
	return 1;
}

int output_put_open(struct output *o, struct buf *b, const struct report_event *e,
		    uint64_t end_ns, const char *status)
{
	const struct gtr_event *ev = e->ev;

	switch (o->o.format) {
	case OUTPUT_CHROME:
		chrome_event(o, b, e, e->probe, ev, NULL, ev->ts_ns, true,
			     end_ns > ev->ts_ns ? end_ns - ev->ts_ns : 0, NULL, status);
		return 1;
	case OUTPUT_JSONL:
		if (!o->o.calls)
			return 0;
		json_call(o, b, e, ev, e->probe, NULL, status);
		return 1;
	case OUTPUT_TEXT:
		if (!o->o.calls)
			return 0;
		text_call(o, b, e, ev, e->probe, NULL, status, true);
		return 1;
	default:
		return 0;
	}
}

void output_event(struct buf *b, enum output_format fmt,
		  const struct report_event *e)
{
	if (fmt == OUTPUT_JSONL)
		output_jsonl_event(b, e);
	else
		output_text_event(b, e);
}
