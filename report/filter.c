/* SPDX-License-Identifier: MIT */
/*
 * The filter language of spec/FILTER.md: lexer, recursive-descent parser to
 * a flat node array, static type check, and the per-event evaluator.
 *
 * Layout: nodes live in one array and refer to each other by index; the
 * children of an n-ary && / || sit in `kids`; string literals and field
 * names live in one byte pool. Nesting ('(' and '!') is bounded, so neither
 * the parser nor the evaluator can overflow the stack.
 */
#include "filter.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200              /* nested '(' and '!' */

typedef __int128 i128;

/* ------------------------------------------------------------ tree */

enum ty { TY_ANY = 0, TY_INT = 1, TY_STR = 2 };

enum src {
	SRC_LIT_INT, SRC_LIT_STR,
	SRC_PID, SRC_TID, SRC_GOID, SRC_COMM, SRC_FUNC,
	SRC_ARG,                           /* goargN or an argument name */
};

enum cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

struct operand {
	uint8_t src;          /* enum src */
	uint8_t ty;           /* enum ty, static type */
	uint32_t slot;        /* SRC_ARG: index in f->slots */
	i128 ival;            /* SRC_LIT_INT */
	uint32_t soff, slen;  /* SRC_LIT_STR: bytes in f->pool */
	uint32_t pos, len;    /* where it was written, for messages */
};

enum node_op { N_AND, N_OR, N_NOT, N_CMP };

struct node {
	uint8_t op;           /* enum node_op */
	uint8_t cmp;          /* enum cmp, N_CMP */
	uint32_t first;       /* N_AND/N_OR: first kid in f->kids; N_NOT: child */
	uint32_t count;       /* N_AND/N_OR: number of kids */
	uint32_t pos;         /* operator position, for messages */
	struct operand l, r;
};

/* A field naming a probe argument, resolved once per probe. */
struct slot {
	uint32_t goarg;       /* N of goargN, 0 for a name */
	uint32_t name_off;    /* NUL-terminated name in the pool */
};

/* Resolution flags of a slot for one probe. */
#define SF_F32 1              /* value is the bits of a float32 */
#define SF_F64 2              /* value is the bits of a float64 */

struct pc_ent {               /* per-probe cache entry */
	uint32_t id;
	bool used;
	const struct gtr_probe *probe;
};

struct filter {
	char *expr;
	struct node *nodes;
	uint32_t nnodes, cap_nodes;
	uint32_t *kids;
	uint32_t nkids, cap_kids;
	char *pool;
	uint32_t npool, cap_pool;
	struct slot *slots;
	uint32_t nslots, cap_slots;
	uint32_t root;

	/* per-probe resolution: slot s of cache entry e at [e * nslots + s] */
	struct pc_ent *ents;
	int16_t *ridx;        /* value index, -1 when the probe lacks the field */
	uint8_t *rflg;        /* SF_* */
	uint32_t cap_ents, nents;
	int16_t *noprobe_idx; /* resolution for events of an undescribed probe */
	uint8_t *noprobe_flg;
	bool last_ok;         /* one-entry cache in front of the table */
	uint32_t last_id;
	const struct gtr_probe *last_probe;
	uint32_t last_ent;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "gotrace-report: out of memory (filter, %zu bytes)\n", n);
		exit(1);
	}
	return q;
}

#define GROW(arr, n, cap)                                                   \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? (cap) * 2 : 16;                     \
			(arr) = xrealloc((arr), (size_t)(cap) * sizeof(*(arr))); \
		}                                                           \
	} while (0)

static uint32_t pool_add(struct filter *f, const void *p, size_t n, bool nul)
{
	const uint32_t off = f->npool;
	const size_t need = f->npool + n + (nul ? 1 : 0);

	if (need > f->cap_pool) {
		size_t cap = f->cap_pool ? f->cap_pool : 64;

		while (cap < need)
			cap *= 2;
		f->pool = xrealloc(f->pool, cap);
		f->cap_pool = (uint32_t)cap;
	}
	memcpy(f->pool + f->npool, p, n);
	f->npool += (uint32_t)n;
	if (nul)
		f->pool[f->npool++] = '\0';
	return off;
}

/* ------------------------------------------------------------ lexer */

enum tok {
	T_EOF, T_IDENT, T_INT, T_STR, T_TRUE, T_FALSE,
	T_LPAREN, T_RPAREN, T_NOT, T_AND, T_OR,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
};

struct token {
	enum tok t;
	uint32_t pos, len;    /* source bytes */
	i128 ival;            /* T_INT */
	uint32_t soff, slen;  /* T_STR: decoded bytes in the pool */
};

struct parser {
	const char *s;
	uint32_t n, pos;
	struct token tok;     /* current token */
	struct token prev;    /* previous token (prev.len == 0: none) */
	bool have_prev;
	int depth;
	struct filter *f;
	struct filter_error *err;
	bool failed;
};

static void fail_at(struct parser *p, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct parser *p, uint32_t pos, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	p->err->column = pos + 1;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
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
static const char *show(const struct parser *p, uint32_t pos, uint32_t len,
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

static const char *tok_desc(const struct parser *p, const struct token *t,
			    char *out, size_t outlen)
{
	char tmp[40];

	if (t->t == T_EOF)
		snprintf(out, outlen, "end of filter");
	else
		snprintf(out, outlen, "'%s'", show(p, t->pos, t->len, tmp, sizeof(tmp)));
	return out;
}

static void lex_number(struct parser *p, struct token *t)
{
	uint32_t i = p->pos;
	bool neg = false;
	unsigned __int128 v = 0;
	const unsigned __int128 limit_pos = UINT64_MAX;
	const unsigned __int128 limit_neg = (unsigned __int128)INT64_MAX + 1;

	if (p->s[i] == '-') {
		neg = true;
		i++;
	}
	const uint32_t digits = i;
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
	struct filter *f = p->f;
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

/* Reads the next token into p->tok; on error sets p->failed. */
static void advance(struct parser *p)
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
	uint32_t len = 1;

	switch (c) {
	case '(': t->t = T_LPAREN; break;
	case ')': t->t = T_RPAREN; break;
	case '!':
		if (s[1] == '=') { t->t = T_NE; len = 2; } else { t->t = T_NOT; }
		break;
	case '=':
		if (s[1] != '=') {
			fail_at(p, p->pos, "unexpected '=', did you mean '=='?");
			return;
		}
		t->t = T_EQ; len = 2;
		break;
	case '<':
		if (s[1] == '=') { t->t = T_LE; len = 2; } else { t->t = T_LT; }
		break;
	case '>':
		if (s[1] == '=') { t->t = T_GE; len = 2; } else { t->t = T_GT; }
		break;
	case '&':
		if (s[1] != '&') {
			fail_at(p, p->pos, "unexpected '&', did you mean '&&'?");
			return;
		}
		t->t = T_AND; len = 2;
		break;
	case '|':
		if (s[1] != '|') {
			fail_at(p, p->pos, "unexpected '|', did you mean '||'?");
			return;
		}
		t->t = T_OR; len = 2;
		break;
	case '"':
		lex_string(p, t);
		return;
	case '\'':
		fail_at(p, p->pos, "unexpected \"'\": string literals are written in double quotes");
		return;
	case '-':
		if (!isdigit((unsigned char)s[1])) {
			fail_at(p, p->pos, "unexpected '-': a negative integer is written with the sign against its digits, e.g. -5");
			return;
		}
		lex_number(p, t);
		return;
	default:
		if (isdigit(c)) {
			lex_number(p, t);
			return;
		}
		if (is_ident_start(c)) {
			while (p->pos + len < p->n && is_ident_char((unsigned char)s[len]))
				len++;
			if (len == 4 && !memcmp(s, "true", 4))
				t->t = T_TRUE;
			else if (len == 5 && !memcmp(s, "false", 5))
				t->t = T_FALSE;
			else
				t->t = T_IDENT;
			break;
		}
		if (c < 0x20 || c == 0x7f)
			fail_at(p, p->pos, "unexpected control byte 0x%02x", c);
		else
			fail_at(p, p->pos, "unexpected character '%c'", c);
		return;
	}
	t->len = len;
	p->pos += len;
}

/* ------------------------------------------------------------ parser */

static uint32_t new_node(struct filter *f, uint8_t op, uint32_t pos)
{
	GROW(f->nodes, f->nnodes, f->cap_nodes);
	struct node *n = &f->nodes[f->nnodes];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->pos = pos;
	return f->nnodes++;
}

/* Column for an error about the current token: the token, or just after the
 * previous one when the input ended. */
static uint32_t err_pos(const struct parser *p)
{
	if (p->tok.t == T_EOF && p->have_prev)
		return p->prev.pos + p->prev.len;
	return p->tok.pos;
}

static void fail_expected(struct parser *p, const char *what)
{
	char found[64], prev[64];

	if (p->failed)
		return;
	if (p->tok.t == T_EOF && !p->have_prev) {
		fail_at(p, 0, "empty filter: expected %s", what);
		return;
	}
	if (p->have_prev)
		tok_desc(p, &p->prev, prev, sizeof(prev));
	if (p->tok.t == T_EOF)
		fail_at(p, err_pos(p), "expected %s after %s", what, prev);
	else if (p->have_prev)
		fail_at(p, err_pos(p), "expected %s after %s, found %s", what, prev,
			tok_desc(p, &p->tok, found, sizeof(found)));
	else
		fail_at(p, err_pos(p), "expected %s, found %s", what,
			tok_desc(p, &p->tok, found, sizeof(found)));
}

static uint32_t slot_for(struct filter *f, uint32_t goarg, const char *name,
			 uint32_t len)
{
	for (uint32_t i = 0; i < f->nslots; i++) {
		const struct slot *s = &f->slots[i];
		if (goarg ? s->goarg == goarg
			  : !s->goarg && strlen(f->pool + s->name_off) == len &&
				    !memcmp(f->pool + s->name_off, name, len))
			return i;
	}
	GROW(f->slots, f->nslots, f->cap_slots);
	f->slots[f->nslots].goarg = goarg;
	f->slots[f->nslots].name_off = goarg ? 0 : pool_add(f, name, len, true);
	return f->nslots++;
}

static bool parse_operand(struct parser *p, struct operand *o, const char *what)
{
	struct filter *f = p->f;
	const struct token *t = &p->tok;

	memset(o, 0, sizeof(*o));
	o->pos = t->pos;
	o->len = t->len;
	switch (t->t) {
	case T_INT:
		o->src = SRC_LIT_INT; o->ty = TY_INT; o->ival = t->ival;
		break;
	case T_TRUE:
	case T_FALSE:
		o->src = SRC_LIT_INT; o->ty = TY_INT; o->ival = t->t == T_TRUE;
		break;
	case T_STR:
		o->src = SRC_LIT_STR; o->ty = TY_STR;
		o->soff = t->soff; o->slen = t->slen;
		break;
	case T_IDENT: {
		const char *s = p->s + t->pos;
		const uint32_t n = t->len;
#define IS(w) (n == sizeof(w) - 1 && !memcmp(s, w, n))
		if (IS("pid")) { o->src = SRC_PID; o->ty = TY_INT; }
		else if (IS("tid")) { o->src = SRC_TID; o->ty = TY_INT; }
		else if (IS("goid")) { o->src = SRC_GOID; o->ty = TY_INT; }
		else if (IS("comm")) { o->src = SRC_COMM; o->ty = TY_STR; }
		else if (IS("func")) { o->src = SRC_FUNC; o->ty = TY_STR; }
#undef IS
		else {
			uint32_t goarg = 0;
			if (n > 5 && !memcmp(s, "goarg", 5)) {
				uint32_t k = 5;
				unsigned long v = 0;
				for (; k < n && isdigit((unsigned char)s[k]); k++)
					if (v < 1000000)
						v = v * 10 + (unsigned)(s[k] - '0');
				if (k == n) {
					if (v < 1 || v > GTR_MAX_ARGS) {
						fail_at(p, t->pos, "no such field '%.*s': goargN runs from goarg1 to goarg%d",
							(int)n, s, GTR_MAX_ARGS);
						return false;
					}
					goarg = (uint32_t)v;
				}
			}
			o->src = SRC_ARG;
			o->ty = TY_ANY;
			o->slot = slot_for(f, goarg, s, n);
		}
		break;
	}
	default:
		fail_expected(p, what);
		return false;
	}
	advance(p);
	return !p->failed;
}

static const char *operand_desc(const struct parser *p, const struct operand *o,
				char *out, size_t outlen)
{
	char tmp[40];

	switch (o->src) {
	case SRC_LIT_INT: return "an integer";
	case SRC_LIT_STR: return "a string";
	default:
		snprintf(out, outlen, "'%s' (%s)", show(p, o->pos, o->len, tmp, sizeof(tmp)),
			 o->ty == TY_STR ? "a string" : "an integer");
		return out;
	}
}

static uint32_t parse_or(struct parser *p);

static uint32_t parse_primary(struct parser *p)
{
	struct filter *f = p->f;

	if (p->tok.t == T_LPAREN) {
		const struct token open = p->tok;
		if (++p->depth > MAX_DEPTH) {
			fail_at(p, open.pos, "filter nested too deeply (more than %d levels)", MAX_DEPTH);
			return 0;
		}
		advance(p);
		if (p->failed)
			return 0;
		const uint32_t e = parse_or(p);
		if (p->failed)
			return 0;
		if (p->tok.t != T_RPAREN) {
			char found[64];
			if (p->tok.t == T_EOF)
				fail_at(p, err_pos(p), "expected ')' to close '(' at column %u", open.pos + 1);
			else
				fail_at(p, err_pos(p), "expected ')' to close '(' at column %u, found %s",
					open.pos + 1, tok_desc(p, &p->tok, found, sizeof(found)));
			return 0;
		}
		p->depth--;
		advance(p);
		return e;
	}

	struct operand l, r;
	if (!parse_operand(p, &l, "a field, a literal, '!' or '('"))
		return 0;
	const struct token op = p->tok;
	uint8_t cmp;
	switch (op.t) {
	case T_EQ: cmp = CMP_EQ; break;
	case T_NE: cmp = CMP_NE; break;
	case T_LT: cmp = CMP_LT; break;
	case T_LE: cmp = CMP_LE; break;
	case T_GT: cmp = CMP_GT; break;
	case T_GE: cmp = CMP_GE; break;
	default:
		fail_expected(p, "a comparison operator (== != < <= > >=)");
		return 0;
	}
	advance(p);
	if (p->failed || !parse_operand(p, &r, "a value"))
		return 0;
	if (l.ty != TY_ANY && r.ty != TY_ANY && l.ty != r.ty) {
		char a[80], b[80];
		fail_at(p, op.pos, "cannot compare %s with %s",
			operand_desc(p, &l, a, sizeof(a)), operand_desc(p, &r, b, sizeof(b)));
		return 0;
	}
	const uint32_t n = new_node(f, N_CMP, op.pos);
	f->nodes[n].cmp = cmp;
	f->nodes[n].l = l;
	f->nodes[n].r = r;
	return n;
}

static uint32_t parse_unary(struct parser *p)
{
	if (p->tok.t != T_NOT)
		return parse_primary(p);
	const uint32_t pos = p->tok.pos;
	if (++p->depth > MAX_DEPTH) {
		fail_at(p, pos, "filter nested too deeply (more than %d levels)", MAX_DEPTH);
		return 0;
	}
	advance(p);
	if (p->failed)
		return 0;
	const uint32_t c = parse_unary(p);
	if (p->failed)
		return 0;
	p->depth--;
	const uint32_t n = new_node(p->f, N_NOT, pos);
	p->f->nodes[n].first = c;
	return n;
}

/* Parses `sub { op sub }` into one n-ary node (or the lone operand). */
static uint32_t parse_chain(struct parser *p, enum tok optok, uint8_t op,
			    uint32_t (*sub)(struct parser *))
{
	struct filter *f = p->f;
	uint32_t *tmp = NULL, n = 0, cap = 0;
	const uint32_t pos = p->tok.pos;
	uint32_t res = 0;

	for (;;) {
		const uint32_t k = sub(p);
		if (p->failed)
			goto out;
		GROW(tmp, n, cap);
		tmp[n++] = k;
		if (p->tok.t != optok)
			break;
		advance(p);
		if (p->failed)
			goto out;
	}
	if (n == 1) {
		res = tmp[0];
		goto out;
	}
	res = new_node(f, op, pos);
	f->nodes[res].first = f->nkids;
	f->nodes[res].count = n;
	for (uint32_t i = 0; i < n; i++) {
		GROW(f->kids, f->nkids, f->cap_kids);
		f->kids[f->nkids++] = tmp[i];
	}
out:
	free(tmp);
	return res;
}

static uint32_t parse_and(struct parser *p)
{
	return parse_chain(p, T_AND, N_AND, parse_unary);
}

static uint32_t parse_or(struct parser *p)
{
	return parse_chain(p, T_OR, N_OR, parse_and);
}

struct filter *filter_compile(const char *expr, struct filter_error *err)
{
	struct filter *f = xrealloc(NULL, sizeof(*f));
	struct parser p;
	const size_t n = strlen(expr);

	memset(f, 0, sizeof(*f));
	memset(err, 0, sizeof(*err));
	f->expr = strdup(expr);
	if (!f->expr || n >= UINT32_MAX / 2) {
		snprintf(err->msg, sizeof(err->msg), "filter too long");
		filter_free(f);
		return NULL;
	}
	memset(&p, 0, sizeof(p));
	p.s = f->expr;
	p.n = (uint32_t)n;
	p.f = f;
	p.err = err;
	p.tok.t = T_EOF;
	advance(&p);
	if (!p.failed)
		f->root = parse_or(&p);
	if (!p.failed && p.tok.t != T_EOF) {
		char found[64];
		if (p.tok.t == T_RPAREN)
			fail_at(&p, p.tok.pos, "unmatched ')'");
		else
			fail_at(&p, p.tok.pos, "expected '&&', '||' or end of filter, found %s",
				tok_desc(&p, &p.tok, found, sizeof(found)));
	}
	if (p.failed) {
		filter_free(f);
		return NULL;
	}

	f->noprobe_idx = xrealloc(NULL, (f->nslots + 1) * sizeof(int16_t));
	f->noprobe_flg = xrealloc(NULL, f->nslots + 1);
	for (uint32_t i = 0; i < f->nslots; i++) {
		f->noprobe_idx[i] = f->slots[i].goarg ? (int16_t)(f->slots[i].goarg - 1) : -1;
		f->noprobe_flg[i] = 0;
	}
	return f;
}

const char *filter_expr(const struct filter *f)
{
	return f->expr;
}

void filter_free(struct filter *f)
{
	if (!f)
		return;
	free(f->expr);
	free(f->nodes);
	free(f->kids);
	free(f->pool);
	free(f->slots);
	free(f->ents);
	free(f->ridx);
	free(f->rflg);
	free(f->noprobe_idx);
	free(f->noprobe_flg);
	free(f);
}

/* ------------------------------------------------------------ probes */

static void resolve_slot(const struct filter *f, uint32_t s,
			 const struct gtr_probe *pr, int16_t *idx, uint8_t *flg)
{
	const struct slot *sl = &f->slots[s];
	int i = -1;

	if (sl->goarg) {
		i = (int)sl->goarg - 1;
	} else {
		const char *name = f->pool + sl->name_off;
		for (uint32_t k = 0; k < pr->nargs && k < GTR_MAX_ARGS; k++)
			if (pr->args[k].name && !strcmp(pr->args[k].name, name)) {
				i = (int)k;
				break;
			}
	}
	*idx = (int16_t)i;
	*flg = 0;
	if (i >= 0 && (uint32_t)i < pr->nargs && pr->args[i].type == GTR_TYPE_FLOAT)
		*flg = pr->args[i].size == 4 ? SF_F32 : SF_F64;
}

/* Static type of slot `s` in probe `pr`; -1 when the probe lacks it. */
static int slot_type(const struct filter *f, uint32_t s, const struct gtr_probe *pr)
{
	int16_t idx;
	uint8_t flg;

	resolve_slot(f, s, pr, &idx, &flg);
	if (idx < 0 || (uint32_t)idx >= pr->nargs)
		return -1;
	switch (pr->args[idx].type) {
	case GTR_TYPE_STRING: return TY_STR;
	case GTR_TYPE_OTHER: return TY_ANY;
	default: return TY_INT;
	}
}

int filter_check(const struct filter *f,
		 const struct gtr_probe *const *probes, size_t nprobes,
		 FILE *warn, struct filter_error *err)
{
	memset(err, 0, sizeof(*err));
	if (!nprobes)
		return 0;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const struct node *n = &f->nodes[i];
		if (n->op != N_CMP)
			continue;
		for (int side = 0; side < 2; side++) {
			const struct operand *a = side ? &n->r : &n->l;
			const struct operand *b = side ? &n->l : &n->r;
			if (a->src != SRC_ARG || b->ty == TY_ANY)
				continue;
			size_t have = 0, ok = 0;
			const char *example = NULL;
			for (size_t k = 0; k < nprobes; k++) {
				const int t = slot_type(f, a->slot, probes[k]);
				if (t < 0)
					continue;
				have++;
				if (t == TY_ANY || t == b->ty)
					ok++;
				else if (!example)
					example = probes[k]->func;
			}
			if (have && !ok) {
				err->column = n->pos + 1;
				snprintf(err->msg, sizeof(err->msg),
					 "cannot compare '%.*s' (%s in %s%s) with %s",
					 (int)(a->len > 64 ? 64 : a->len), f->expr + a->pos,
					 b->ty == TY_STR ? "a number" : "a string",
					 example ? example : "?",
					 have > 1 ? " and every other probe that has it" : "",
					 b->ty == TY_STR ? "a string" : "an integer");
				return -1;
			}
		}
	}
	for (uint32_t s = 0; warn && s < f->nslots; s++) {
		size_t have = 0;
		for (size_t k = 0; k < nprobes; k++)
			have += slot_type(f, s, probes[k]) >= 0;
		if (have)
			continue;
		if (f->slots[s].goarg)
			fprintf(warn, "gotrace-report: warning: no probe in the file so far has a goarg%u; comparisons with it are false\n",
				f->slots[s].goarg);
		else
			fprintf(warn, "gotrace-report: warning: no probe in the file so far has an argument named '%s'; comparisons with it are false\n",
				f->pool + f->slots[s].name_off);
	}
	return 0;
}

/* Finds or makes the cache entry of `pr`; returns its index. */
static uint32_t cache_lookup(struct filter *f, const struct gtr_probe *pr)
{
	const uint32_t id = pr->id;

	if (f->last_ok && f->last_id == id && f->last_probe == pr)
		return f->last_ent;
	if (!f->cap_ents || (f->nents + 1) * 2 > f->cap_ents) {
		/* grow and start over: re-resolving is cheap and rare */
		const uint32_t cap = f->cap_ents ? f->cap_ents * 2 : 16;
		f->ents = xrealloc(f->ents, cap * sizeof(*f->ents));
		f->ridx = xrealloc(f->ridx, (size_t)cap * f->nslots * sizeof(int16_t) + 1);
		f->rflg = xrealloc(f->rflg, (size_t)cap * f->nslots + 1);
		memset(f->ents, 0, cap * sizeof(*f->ents));
		f->cap_ents = cap;
		f->nents = 0;
		f->last_ok = false;
	}
	uint32_t h = (id * 2654435761u) & (f->cap_ents - 1);
	while (f->ents[h].used && f->ents[h].id != id)
		h = (h + 1) & (f->cap_ents - 1);
	struct pc_ent *e = &f->ents[h];
	if (!e->used || e->probe != pr) {
		if (!e->used)
			f->nents++;
		e->used = true;
		e->id = id;
		e->probe = pr;
		for (uint32_t s = 0; s < f->nslots; s++)
			resolve_slot(f, s, pr, &f->ridx[h * f->nslots + s],
				     &f->rflg[h * f->nslots + s]);
	}
	f->last_ok = true;
	f->last_id = id;
	f->last_probe = pr;
	f->last_ent = h;
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
	const int16_t *idx;
	const uint8_t *flg;
};

static void load(const struct filter *f, const struct ctx *c,
		 const struct operand *o, struct val *v)
{
	const struct gtr_event *ev = c->e->ev;

	switch (o->src) {
	case SRC_LIT_INT: v->t = V_INT; v->i = o->ival; return;
	case SRC_LIT_STR:
		v->t = V_STR;
		v->s = (const uint8_t *)f->pool + o->soff;
		v->slen = v->sfull = o->slen;
		return;
	case SRC_PID: v->t = V_INT; v->i = ev->pid; return;
	case SRC_TID: v->t = V_INT; v->i = ev->tid; return;
	case SRC_GOID: v->t = V_INT; v->i = ev->goid; return;
	case SRC_COMM: {
		const char *comm = c->e->comm ? c->e->comm : "";
		v->t = V_STR;
		v->s = (const uint8_t *)comm;
		v->slen = v->sfull = strnlen(comm, GTR_COMM_LEN);
		return;
	}
	case SRC_FUNC:
		if (!c->e->probe || !c->e->probe->func) {
			v->t = V_MISSING;
			return;
		}
		v->t = V_STR;
		v->s = (const uint8_t *)c->e->probe->func;
		v->slen = v->sfull = strlen(c->e->probe->func);
		return;
	case SRC_ARG: {
		const int i = c->idx[o->slot];
		if (i < 0 || (uint32_t)i >= ev->nvals || i >= GTR_MAX_ARGS) {
			v->t = V_MISSING;
			return;
		}
		const struct gtr_value *gv = &ev->vals[i];
		switch (gv->kind) {
		case GTR_VAL_INT: v->t = V_INT; v->i = gv->v.i; return;
		case GTR_VAL_UINT:
			if (c->flg[o->slot] & SF_F64) {
				v->t = V_DBL;
				memcpy(&v->d, &gv->v.u, sizeof(double));
			} else if (c->flg[o->slot] & SF_F32) {
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
	}
	v->t = V_MISSING;
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

static bool eval(const struct filter *f, const struct ctx *c, uint32_t ni)
{
	const struct node *n = &f->nodes[ni];

	switch (n->op) {
	case N_AND:
		for (uint32_t k = 0; k < n->count; k++)
			if (!eval(f, c, f->kids[n->first + k]))
				return false;
		return true;
	case N_OR:
		for (uint32_t k = 0; k < n->count; k++)
			if (eval(f, c, f->kids[n->first + k]))
				return true;
		return false;
	case N_NOT:
		return !eval(f, c, n->first);
	case N_CMP: {
		struct val a, b;
		load(f, c, &n->l, &a);
		load(f, c, &n->r, &b);
		const int r = compare(&a, &b);
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

bool filter_match(struct filter *f, const struct report_event *e)
{
	struct ctx c = { .e = e };

	if (f->nslots == 0 || !e->probe) {
		c.idx = f->noprobe_idx;
		c.flg = f->noprobe_flg;
	} else {
		const uint32_t h = cache_lookup(f, e->probe);
		c.idx = f->ridx + (size_t)h * f->nslots;
		c.flg = f->rflg + (size_t)h * f->nslots;
	}
	return eval(f, &c, f->root);
}

/* ------------------------------------------------------------ errors */

void filter_error_print(FILE *out, const char *prefix, const char *expr,
			const struct filter_error *err)
{
	const size_t n = strlen(expr);

	if (!err->column) {
		fprintf(out, "%sbad filter: %s\n", prefix, err->msg);
		return;
	}
	fprintf(out, "%sbad filter: %s at column %u\n  ", prefix, err->msg, err->column);
	for (size_t i = 0; i < n; i++) {
		const unsigned char c = (unsigned char)expr[i];
		fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
	}
	fputs("\n  ", out);
	/* one space per character before the column: UTF-8 continuation
	 * bytes take no column on a terminal */
	for (size_t i = 0; i + 1 < err->column && i < n; i++)
		if (((unsigned char)expr[i] & 0xc0) != 0x80)
			fputc(' ', out);
	for (size_t i = n; i + 1 < err->column; i++)
		fputc(' ', out);
	fputs("^\n", out);
}
