/* SPDX-License-Identifier: MIT */
/*
 * Text and JSON Lines rendering of events (spec/OUTPUT.md).
 */
#include "output.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

int output_format_parse(const char *name, enum output_format *fmt)
{
	if (!strcmp(name, "text"))
		*fmt = OUTPUT_TEXT;
	else if (!strcmp(name, "jsonl"))
		*fmt = OUTPUT_JSONL;
	else
		return -1;
	return 0;
}

/* ------------------------------------------------------------ bytes */

/*
 * Length (2-4) of the well-formed UTF-8 sequence starting at p[0] (a byte
 * >= 0x80), with its code point in *cp; 0 when it is not one (stray
 * continuation byte, overlong form, surrogate, above U+10FFFF, cut short).
 * Unicode 15, table 3-7.
 */
static int utf8_seq(const uint8_t *p, size_t n, uint32_t *cp)
{
	const uint8_t c = p[0];
	int len;
	uint32_t v;
	uint8_t lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; v = c & 0x0f;
		if (c == 0xe0) lo = 0xa0;
		if (c == 0xed) hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; v = c & 0x07;
		if (c == 0xf0) lo = 0x90;
		if (c == 0xf4) hi = 0x8f;
	} else {
		return 0;
	}
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		const uint8_t d = p[i];
		if (d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xbf))
			return 0;
		v = (v << 6) | (d & 0x3f);
	}
	*cp = v;
	return len;
}

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
	size_t i = 0;

	while (i < n) {
		size_t j = i;
		while (j < n && p[j] >= 0x20 && p[j] < 0x7f && p[j] != '\\' && p[j] != '"')
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
		case '\b': buf_add(b, "\\b", 2); i++; continue;
		case '\f': buf_add(b, "\\f", 2); i++; continue;
		}
		uint32_t cp = 0;
		const int k = c < 0x80 ? 0 : utf8_seq(p + i, n - i, &cp);
		if (k && cp != 0x2028 && cp != 0x2029) {
			buf_add(b, p + i, (size_t)k);
			i += (size_t)k;
			continue;
		}
		if (k) { /* U+2028/U+2029: valid JSON, but not valid JavaScript */
			buf_add(b, cp == 0x2028 ? "\\u2028" : "\\u2029", 6);
			i += (size_t)k;
			continue;
		}
		/* control, DEL or a byte that is not UTF-8: \u00XX of the byte */
		char *o = buf_reserve(b, 6);
		o[0] = '\\'; o[1] = 'u'; o[2] = '0'; o[3] = '0';
		o[4] = hexdig[c >> 4]; o[5] = hexdig[c & 15];
		b->len += 6;
		i++;
	}
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
	int cols = 0;

	output_text_bytes(b, (const uint8_t *)s, strlen(s), false);
	for (size_t i = start; i < b->len; i++)
		cols += ((unsigned char)b->data[i] & 0xc0) != 0x80;
	buf_pad(b, ' ', width - cols);
}

void output_text_header(struct buf *b)
{
	buf_puts(b, "PID     TID     COMM            FUNC             -\n");
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
	size_t n;

	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		buf_printf(b, "\\x{%" PRIx64 "}", cp);
		return;
	}
	if (cp < 0x80) {
		t[0] = (uint8_t)cp; n = 1;
	} else if (cp < 0x800) {
		t[0] = (uint8_t)(0xc0 | cp >> 6); t[1] = (uint8_t)(0x80 | (cp & 0x3f)); n = 2;
	} else if (cp < 0x10000) {
		t[0] = (uint8_t)(0xe0 | cp >> 12); t[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (uint8_t)(0x80 | (cp & 0x3f)); n = 3;
	} else {
		t[0] = (uint8_t)(0xf0 | cp >> 18); t[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		t[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)); t[3] = (uint8_t)(0x80 | (cp & 0x3f)); n = 4;
	}
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
		if (sgn && iv.neg) {
			snprintf(spec, sizeof(spec), "%%%s%slld", flags, wp);
			buf_printf(b, spec, (long long)(int64_t)iv.u);
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
	if (v->kind == GTR_VAL_STR) {
		uint32_t n = v->v.s.len;
		if (prec >= 0 && (uint32_t)prec < n)
			n = (uint32_t)prec;
		output_text_bytes(b, v->v.s.data, n, false);
		if (str_truncated(v)) {
			buf_puts(b, "...(len=");
			buf_u64(b, v->v.s.full_len);
			buf_putc(b, ')');
		}
	} else {
		output_text_value(b, v, arg);
	}
	pad_since(b, start, width, left);
}

void output_text_format(struct buf *b, const char *fmt,
			const struct report_event *e)
{
	const struct gtr_probe *p = e->probe;
	const struct gtr_event *ev = e->ev;
	uint32_t k = 0;
	const char *s = fmt;

	while (*s) {
		if (*s != '%') {
			const char *t = s;
			while (*t && *t != '%')
				t++;
			output_text_bytes(b, (const uint8_t *)s, (size_t)(t - s), false);
			s = t;
			continue;
		}
		/* %[flags][width][.prec][length]conv */
		const char *start = s++;
		char flags[8];
		int nf = 0, width = -1, prec = -1;
		bool bad = false;

		while (*s && strchr("-+ #0", *s)) {
			if (nf < 7 && !memchr(flags, *s, (size_t)nf))
				flags[nf++] = *s;
			s++;
		}
		flags[nf] = '\0';
		if (*s >= '0' && *s <= '9') {
			width = 0;
			while (*s >= '0' && *s <= '9') {
				width = width * 10 + (*s++ - '0');
				if (width > 4096)
					bad = true, width = 4096;
			}
		}
		if (*s == '.') {
			s++;
			prec = 0;
			while (*s >= '0' && *s <= '9') {
				prec = prec * 10 + (*s++ - '0');
				if (prec > 4096)
					bad = true, prec = 4096;
			}
		}
		while (*s && strchr("hlqjztL", *s))
			s++;
		const char conv = *s;
		if (conv == '%' && s == start + 1) {
			buf_putc(b, '%');
			s++;
			continue;
		}
		if (bad || !conv || !strchr("diuxXocpsfFeEgGaA", conv)) {
			/* not a conversion gotrace knows: shown as written */
			if (conv)
				s++;
			output_text_bytes(b, (const uint8_t *)start, (size_t)(s - start), false);
			continue;
		}
		s++;
		if (!p || k >= p->nexprs || p->exprs[k] >= ev->nvals ||
		    p->exprs[k] >= GTR_MAX_ARGS) {
			buf_puts(b, "<missing>");
			k++;
			continue;
		}
		const uint32_t vi = p->exprs[k++];
		format_one(b, flags, width, prec, conv, &ev->vals[vi], arg_at(p, vi));
	}
}

void output_text_event(struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	const struct gtr_probe *p = e->probe;
	char tmp[32];
	size_t start = b->len;
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

	if (p && p->fmt && p->fmt[0]) {
		output_text_format(b, p->fmt, e);
	} else {
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
	buf_putc(b, '\n');
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

void output_jsonl_event(struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	const struct gtr_probe *p = e->probe;
	const uint32_t nvals = ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;

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
	buf_puts(b, ev->kind == GTR_KIND_RETURN ? ",\"kind\":\"return\"" : ",\"kind\":\"entry\"");
	buf_puts(b, ",\"probe\":");
	buf_u64(b, ev->probe_id);

	buf_puts(b, ",\"goargs\":[");
	for (uint32_t i = 0; i < nvals; i++) {
		if (i)
			buf_putc(b, ',');
		output_json_value(b, &ev->vals[i], arg_at(p, i));
	}
	buf_puts(b, "],\"args\":{");
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
	buf_puts(b, "}}\n");
}

void output_event(struct buf *b, enum output_format fmt,
		  const struct report_event *e)
{
	if (fmt == OUTPUT_JSONL)
		output_jsonl_event(b, e);
	else
		output_text_event(b, e);
}
