/* SPDX-License-Identifier: MIT */
/*
 * Values as every output format shows them (spec/OUTPUT.md): strings
 * escaped for a terminal or for JSON, numbers (floats in their shortest
 * exact form), slices from their element bytes, interfaces by their
 * dynamic type.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "output_int.h"
#include "utf8.h"

static const char hexdig[] = "0123456789abcdef";

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

/* The double a value stands for: float bits when the argument is a float. */
double out_value_double(const struct gtr_value *v, const struct gtr_arg *arg)
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

bool output_arg_is_address(const struct gtr_arg *a)
{
	/* addresses and raw words (no type: likely an address) */
	return arg_is(a, GTR_TYPE_PTR) || arg_is(a, GTR_TYPE_WORD);
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

/* How a slice's elements print: by their predeclared type, the
 * argument's elem (spec/FORMAT.md), or in files of older recorders the T
 * of its type name "[]T". */
enum elem_kind { EK_NONE, EK_INT, EK_UINT, EK_BOOL, EK_FLOAT, EK_PTR };

/* Whether slice value type `a` is an array [N]T (spec/FORMAT.md). */
static bool is_array(const struct gtr_arg *a)
{
	return a && a->count;
}

static enum elem_kind slice_elem_kind(const struct gtr_arg *a)
{
	const char *t = a && a->elem && a->elem[0] ? a->elem :
			a && a->type_name && !strncmp(a->type_name, "[]", 2) ?
			a->type_name + 2 : "";

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
			buf_hex(b, u);
		break;
	default:
		buf_u64(b, u);
		break;
	}
}

/* [e1 e2 ...](len=N), or [...](len=N) when elements cannot be shown;
 * an array whole as Go's %v prints it, [e1 e2 e3]. */
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
	if (shown == n && is_array(a)) {
		buf_putc(b, ']');
		return;
	}
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

/* ------------------------------------------------------------ values */

/* Whether the values of `arg` were dropped by redaction (spec/REDACT.md):
 * shown as <redacted>, not as unavailable. */
static bool dropped(const struct gtr_arg *arg)
{
	return arg && arg->redacted && !strcmp(arg->redacted, "drop");
}

/* "...(len=N)" after a string shown without quotes, when it was cut. */
static void put_cut_len(struct buf *b, const struct gtr_value *v)
{
	if (str_truncated(v)) {
		buf_puts(b, "...(len=");
		buf_u64(b, v->v.s.full_len);
		buf_putc(b, ')');
	}
}

void output_text_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg)
{
	char tmp[32];

	switch (v->kind) {
	case GTR_VAL_INT:
		buf_i64(b, v->v.i);
		return;
	case GTR_VAL_UINT:
		if (output_arg_is_address(arg))
			buf_hex(b, v->v.u);
		else if (arg_is(arg, GTR_TYPE_FLOAT))
			buf_puts(b, output_double(tmp, out_value_double(v, arg)));
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
			put_cut_len(b, v);
			return;
		}
		if (arg_is(arg, GTR_TYPE_BYTES) && !v->v.s.full_len) {
			/* a nil or empty []byte, which Go's %v prints [] (the
			 * recorder does not tell them apart: no data pointer) */
			buf_puts(b, "[](len=0)");
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
		buf_puts(b, dropped(arg) ? "<redacted>" : "<unavailable>");
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
void out_bare_value(struct buf *b, const struct gtr_value *v,
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
	put_cut_len(b, v);
}

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
			const double d = out_value_double(v, arg);
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
		buf_puts(b, dropped(arg) ? "\"<redacted>\"" : "null");
		return;
	}
}

/* ------------------------------------------------------------ structs */

/*
 * A struct passed by value is recorded as a value of type other named N
 * (no value of its own) and, after the parameters, its fields as values
 * named "N.F" ("N.F.G" for nested structs), in order (spec/FORMAT.md).
 */

/* Whether `name` is `pre` followed by '.' and more. */
static bool extends(const char *name, const char *pre)
{
	const size_t n = strlen(pre);

	return n && !strncmp(name, pre, n) && name[n] == '.';
}

/*
 * The fields of struct value i of p: the run of values after it named
 * "N.F..." (N its name), ending before any other name or one that goes
 * on from a field already taken (a field path the user added through a
 * pointer field, "N.P.B"); their indexes into idx[GTR_MAX_ARGS]. Returns
 * how many (0: value i is no struct captured whole).
 */
static uint32_t struct_fields(const struct gtr_probe *p, uint32_t i, uint32_t *idx)
{
	const struct gtr_arg *s = arg_at(p, i);
	uint32_t k = 0, j;

	if (!s || !s->name || !s->name[0] || !arg_is(s, GTR_TYPE_OTHER))
		return 0;
	for (j = i + 1; j < p->nargs && j < GTR_MAX_ARGS; j++)
		if (p->args[j].name && extends(p->args[j].name, s->name))
			break;
	for (; j < p->nargs && j < GTR_MAX_ARGS; j++) {
		const char *name = p->args[j].name;
		bool deeper = false;

		if (!name || !extends(name, s->name))
			break;
		for (uint32_t m = 0; m < k && !deeper; m++)
			deeper = extends(name, p->args[idx[m]].name);
		if (deeper)
			break;
		idx[k++] = j;
	}
	return k;
}

bool output_is_struct_field(const struct gtr_probe *p, uint32_t j)
{
	const struct gtr_arg *a = arg_at(p, j);
	uint32_t idx[GTR_MAX_ARGS];

	if (!a || !a->name || !strchr(a->name, '.'))
		return false;
	for (uint32_t e = 0; e < p->nexprs; e++)
		if (p->exprs[e] == j)
			return false;   /* asked for by name: shown as such */
	for (uint32_t i = 0; i < j; i++) {
		if (!arg_is(&p->args[i], GTR_TYPE_OTHER) || !p->args[i].name ||
		    !extends(a->name, p->args[i].name))
			continue;
		const uint32_t n = struct_fields(p, i, idx);

		for (uint32_t k = 0; k < n; k++)
			if (idx[k] == j)
				return true;
	}
	return false;
}

/* Length of the first component of a field path ("Min" of "Min.X"). */
static size_t comp_len(const char *s)
{
	return strcspn(s, ".");
}

/*
 * Writes fields idx[0..n) of ev, whose names all continue at byte `off`
 * with the same components above, as "{X:3 Y:4}" (json: {"X":3,"Y":4}),
 * nesting where a component is followed by more.
 */
static void struct_put(struct buf *b, const struct gtr_probe *p,
		       const struct gtr_event *ev, const uint32_t *idx, uint32_t n,
		       size_t off, bool json)
{
	buf_putc(b, '{');
	for (uint32_t k = 0; k < n;) {
		const char *name = p->args[idx[k]].name + off;
		const size_t cl = comp_len(name);
		uint32_t e = k + 1;

		if (k)
			buf_putc(b, json ? ',' : ' ');
		if (json) {
			buf_putc(b, '"');
			output_json_bytes(b, (const uint8_t *)name, cl);
			buf_puts(b, "\":");
		} else {
			output_text_bytes(b, (const uint8_t *)name, cl, false);
			buf_putc(b, ':');
		}
		if (name[cl] != '.') {
			if (json)
				output_json_value(b, &ev->vals[idx[k]], &p->args[idx[k]]);
			else
				output_text_value(b, &ev->vals[idx[k]], &p->args[idx[k]]);
			k++;
			continue;
		}
		/* a nested struct: the run of fields under the same component */
		while (e < n && !strncmp(p->args[idx[e]].name + off, name, cl + 1))
			e++;
		struct_put(b, p, ev, idx + k, e - k, off + cl + 1, json);
		k = e;
	}
	buf_putc(b, '}');
}

bool output_struct_value(struct buf *b, const struct gtr_probe *p,
			 const struct gtr_event *ev, uint32_t i, bool json)
{
	uint32_t idx[GTR_MAX_ARGS];
	uint32_t n = ev ? struct_fields(p, i, idx) : 0;

	while (n && idx[n - 1] >= ev->nvals)
		n--;
	if (!n)
		return false;
	struct_put(b, p, ev, idx, n, strlen(p->args[i].name) + 1, json);
	return true;
}
