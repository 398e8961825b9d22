/* SPDX-License-Identifier: MIT */
/*
 * The lexer of the predicate language (spec/FILTER.md, "Tokens"): numbers,
 * durations and times, strings with their escapes, operators.
 */
#include "lang_int.h"

uint32_t pool_add(struct lang_tree *f, const void *p, size_t n, bool nul)
{
	const uint32_t off = f->npool;
	const size_t need = f->npool + n + (nul ? 1 : 0);

	if (need > f->cap_pool) {
		size_t cap = f->cap_pool ? f->cap_pool : 64;

		while (cap < need)
			cap *= 2;
		f->pool = xrealloc(f->pool, cap, "filter");
		f->cap_pool = (uint32_t)cap;
	}
	memcpy(f->pool + f->npool, p, n);
	f->npool += (uint32_t)n;
	if (nul)
		f->pool[f->npool++] = '\0';
	return off;
}


void fail_at(struct parser *p, uint32_t pos, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	*p->err_column = pos + 1;
	va_start(ap, fmt);
	vsnprintf(p->err_msg, p->err_len, fmt, ap);
	va_end(ap);
}

static bool is_ident_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static bool is_ident_char(unsigned char c)
{
	return is_ident_start(c) || isdigit(c);
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Quotes source text `s[pos, pos+len)` for a message, shortened. */
const char *show(const struct parser *p, uint32_t pos, uint32_t len,
		 char *out, size_t outlen)
{
	size_t j = 0;

	for (uint32_t i = 0; i < len && j + 4 < outlen; i++) {
		if (i == 24) {
			out[j++] = '.'; out[j++] = '.'; out[j++] = '.';
			break;
		}
		const unsigned char c = (unsigned char)p->s[pos + i];
		out[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out[j] = '\0';
	return out;
}

const char *tok_desc(const struct parser *p, const struct token *t,
		     char *out, size_t outlen)
{
	char tmp[40];

	if (t->t == T_EOF)
		snprintf(out, outlen, "end of filter");
	else
		snprintf(out, outlen, "'%s'", show(p, t->pos, t->len, tmp, sizeof(tmp)));
	return out;
}

/*
 * The length of a float literal at s[0, n) (spec/FILTER.md: digits with a
 * fraction or an exponent, 2.25, .5, 1e-3, 6.02e23, not followed by a
 * unit), or 0 when there is none there.
 */
static uint32_t float_len(const char *s, uint32_t n)
{
	uint32_t i = 0, d = 0;
	bool frac = false, exp = false;

	for (; i < n && isdigit((unsigned char)s[i]); i++)
		d++;
	if (i < n && s[i] == '.') {
		frac = true;
		for (i++; i < n && isdigit((unsigned char)s[i]); i++)
			d++;
	}
	if (!d)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		uint32_t j = i + 1, e = 0;

		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		for (; j < n && isdigit((unsigned char)s[j]); j++)
			e++;
		if (e) {
			exp = true;
			i = j;
		}
	}
	if (!frac && !exp)
		return 0;
	return i < n && is_ident_char((unsigned char)s[i]) ? 0 : i;   /* 1.5s: a duration */
}

/* Integers, floats (2.25), durations (10ms, -1.5s) and times (12:00:03,
 * 2024-05-01T...). */
static void lex_number(struct parser *p, struct token *t)
{
	uint32_t i = p->pos;
	bool neg = false;
	unsigned __int128 v = 0;
	const unsigned __int128 limit_pos = UINT64_MAX;
	const unsigned __int128 limit_neg = (unsigned __int128)INT64_MAX + 1;
	char msg[200];
	int k;

	if (p->s[i] == '-') {
		neg = true;
		i++;
	}
	const uint32_t digits = i;
	if (!neg) {
		k = rtime_clock(p->s + i, p->n - i, &t->tval, msg, sizeof(msg));
		if (k < 0) {
			fail_at(p, i, "%s", msg);
			return;
		}
		if (k > 0) {
			i += (uint32_t)k;
			if (is_ident_char((unsigned char)p->s[i])) {
				fail_at(p, i, "unexpected '%c' after a time", p->s[i]);
				return;
			}
			t->t = T_TIME;
			t->len = i - p->pos;
			p->pos = i;
			return;
		}
	}
	const uint32_t fl = float_len(p->s + i, p->n - i);
	if (fl) {
		char buf[64];

		if (fl >= sizeof(buf)) {
			fail_at(p, p->pos, "float literal too long (at most %zu characters)",
				sizeof(buf) - 1);
			return;
		}
		memcpy(buf, p->s + i, fl);
		buf[fl] = '\0';
		t->t = T_FLOAT;
		t->dval = strtod(buf, NULL);   /* "C" locale: the tools never set one */
		if (neg)
			t->dval = -t->dval;
		i += fl;
		t->len = i - p->pos;
		p->pos = i;
		return;
	}
	int64_t dur;
	k = rtime_duration(p->s + i, p->n - i, &dur, msg, sizeof(msg));
	if (k < 0) {
		fail_at(p, p->pos, "%s", msg);
		return;
	}
	if (k > 0) {
		i += (uint32_t)k;
		if (is_ident_char((unsigned char)p->s[i])) {
			fail_at(p, i, "unexpected '%c' in duration (units: ns us ms s m h)", p->s[i]);
			return;
		}
		t->t = T_INT;
		t->ival = neg ? -(i128)dur : (i128)dur;
		t->len = i - p->pos;
		p->pos = i;
		return;
	}
	if (p->s[i] == '0' && (p->s[i + 1] == 'x' || p->s[i + 1] == 'X')) {
		i += 2;
		if (hexval((unsigned char)p->s[i]) < 0) {
			fail_at(p, i, "expected hex digits after '0x'");
			return;
		}
		for (; hexval((unsigned char)p->s[i]) >= 0; i++) {
			v = v * 16 + (unsigned)hexval((unsigned char)p->s[i]);
			if (v > limit_pos)
				goto range;
		}
	} else {
		if (p->s[i] == '0' && isdigit((unsigned char)p->s[i + 1])) {
			fail_at(p, digits, "integer literal with a leading zero (write decimal without it, or hex as 0x...)");
			return;
		}
		for (; isdigit((unsigned char)p->s[i]); i++) {
			v = v * 10 + (unsigned)(p->s[i] - '0');
			if (v > limit_pos)
				goto range;
		}
	}
	if (is_ident_char((unsigned char)p->s[i])) {
		fail_at(p, i, "unexpected '%c' in integer literal", p->s[i]);
		return;
	}
	if (neg && v > limit_neg)
		goto range;
	t->t = T_INT;
	t->ival = neg ? -(i128)v : (i128)v;
	t->len = i - p->pos;
	p->pos = i;
	return;
range:
	fail_at(p, p->pos, "integer literal out of range (%s..%s)",
		"-9223372036854775808", "18446744073709551615");
}

static void lex_string(struct parser *p, struct token *t)
{
	struct lang_tree *f = p->f;
	const uint32_t start = p->pos;
	uint32_t i = start + 1;

	t->soff = f->npool;
	for (;;) {
		if (i >= p->n) {
			fail_at(p, start, "unterminated string literal");
			return;
		}
		unsigned char c = (unsigned char)p->s[i];
		if (c == '"')
			break;
		if (c != '\\') {
			pool_add(f, &c, 1, false);
			i++;
			continue;
		}
		const unsigned char e = (unsigned char)p->s[i + 1];
		switch (e) {
		case '"': c = '"'; break;
		case '\\': c = '\\'; break;
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case 'x': {
			const int h = hexval((unsigned char)p->s[i + 2]);
			const int l = h < 0 ? -1 : hexval((unsigned char)p->s[i + 3]);
			if (l < 0) {
				fail_at(p, i, "'\\x' in a string literal must be followed by two hex digits");
				return;
			}
			c = (unsigned char)(h * 16 + l);
			pool_add(f, &c, 1, false);
			i += 4;
			continue;
		}
		case '\0':
			fail_at(p, start, "unterminated string literal");
			return;
		default:
			if (e >= 0x20 && e < 0x7f)
				fail_at(p, i, "unknown escape '\\%c' in string literal (known: \\\" \\\\ \\n \\t \\r \\xNN)", e);
			else
				fail_at(p, i, "unknown escape in string literal (known: \\\" \\\\ \\n \\t \\r \\xNN)");
			return;
		}
		pool_add(f, &c, 1, false);
		i += 2;
	}
	t->t = T_STR;
	t->slen = f->npool - t->soff;
	t->len = i + 1 - start;
	p->pos = i + 1;
}

/*
 * An operator or punctuation at s (c = s[0]) into t->t; its length, or 0
 * when c starts none (-1 after a failure).
 */
static int lex_operator(struct parser *p, struct token *t, const char *s, unsigned char c)
{
	switch (c) {
	case '(': t->t = T_LPAREN; return 1;
	case ')': t->t = T_RPAREN; return 1;
	case ',': t->t = T_COMMA; return 1;
	case '!':
		if (s[1] == '=') { t->t = T_NE; return 2; }
		if (s[1] == '~') { t->t = T_NMATCH; return 2; }
		t->t = T_NOT;
		return 1;
	case '=':
		if (s[1] == '~') { t->t = T_MATCH; return 2; }
		if (s[1] != '=') {
			fail_at(p, p->pos, "unexpected '=', did you mean '=='?");
			return -1;
		}
		t->t = T_EQ;
		return 2;
	case '~':
		if (p->pos + 2 < p->n && s[1] == 'r' && isdigit((unsigned char)s[2])) {
			/* ~rN: an unnamed result, as DWARF names it */
			uint32_t len = 3;

			while (p->pos + len < p->n && isdigit((unsigned char)s[len]))
				len++;
			if (p->pos + len >= p->n || !is_ident_char((unsigned char)s[len])) {
				t->t = T_IDENT;
				return (int)len;
			}
		}
		fail_at(p, p->pos, "unexpected '~', did you mean '=~' (regular expression) or glob(FIELD, \"PATTERN\")? "
			"(an unnamed result is ~rN, or goretN counting from 1)");
		return -1;
	case '<':
		if (s[1] == '=') { t->t = T_LE; return 2; }
		t->t = T_LT;
		return 1;
	case '>':
		if (s[1] == '=') { t->t = T_GE; return 2; }
		t->t = T_GT;
		return 1;
	case '&':
	case '|':
		if (s[1] != c) {
			fail_at(p, p->pos, "unexpected '%c', did you mean '%c%c'?", c, c, c);
			return -1;
		}
		t->t = c == '&' ? T_AND : T_OR;
		return 2;
	default:
		return 0;
	}
}

/* An identifier, true or false at s (dots join the parts of a field
 * path: r.URL.Path); its length. */
static uint32_t lex_ident(const struct parser *p, struct token *t, const char *s)
{
	uint32_t len = 1;

	while (p->pos + len < p->n &&
	       (is_ident_char((unsigned char)s[len]) ||
		(s[len] == '.' && p->pos + len + 1 < p->n &&
		 is_ident_start((unsigned char)s[len + 1]))))
		len++;
	if (len == 4 && !memcmp(s, "true", 4))
		t->t = T_TRUE;
	else if (len == 5 && !memcmp(s, "false", 5))
		t->t = T_FALSE;
	else
		t->t = T_IDENT;
	return len;
}

/* A token that is not an operator: a string, a number, an identifier, or
 * a failure naming the character. Returns its length, or 0 when the token
 * is complete (lexed in place) or failed. */
static uint32_t lex_word(struct parser *p, struct token *t, const char *s, unsigned char c)
{
	if (c == '"') {
		lex_string(p, t);
		return 0;
	}
	if (c == '\'') {
		fail_at(p, p->pos, "unexpected \"'\": string literals are written in double quotes");
		return 0;
	}
	if (c == '-' && !isdigit((unsigned char)s[1]) &&
	    !(s[1] == '.' && isdigit((unsigned char)s[2]))) {
		fail_at(p, p->pos, "unexpected '-': a negative integer is written with the sign against its digits, e.g. -5");
		return 0;
	}
	if (c == '-' || isdigit(c) || (c == '.' && isdigit((unsigned char)s[1]))) {
		lex_number(p, t);
		return 0;
	}
	if (is_ident_start(c))
		return lex_ident(p, t, s);
	if (c < 0x20 || c == 0x7f)
		fail_at(p, p->pos, "unexpected control byte 0x%02x", c);
	else
		fail_at(p, p->pos, "unexpected character '%c'", c);
	return 0;
}

void advance(struct parser *p)
{
	struct token *t = &p->tok;

	if (p->tok.t != T_EOF || p->have_prev) {
		p->prev = p->tok;
		p->have_prev = true;
	}
	while (p->pos < p->n && isspace((unsigned char)p->s[p->pos]))
		p->pos++;
	memset(t, 0, sizeof(*t));
	t->pos = p->pos;
	if (p->pos >= p->n) {
		t->t = T_EOF;
		return;
	}
	const char *s = p->s + p->pos;
	const unsigned char c = (unsigned char)s[0];
	const int op = lex_operator(p, t, s, c);
	if (op < 0)
		return;
	const uint32_t len = op ? (uint32_t)op : lex_word(p, t, s, c);
	if (!len)
		return;
	t->len = len;
	p->pos += len;
}

