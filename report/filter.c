/* SPDX-License-Identifier: MIT */
/*
 * The filter language of spec/FILTER.md: lexer, recursive-descent parser to
 * a flat node array, static type check, and the per-event evaluator.
 *
 * Layout: nodes live in one array and refer to each other by index; the
 * children of an n-ary && / || sit in `kids`, the literals of `in (...)` in
 * `lits`; string literals and field names live in one byte pool. Nesting
 * ('(' and '!') is bounded, so neither the parser nor the evaluator can
 * overflow the stack.
 */
#include "filter.h"
#include "width.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "timeparse.h"
#include "xalloc.h"

#define MAX_DEPTH 200              /* nested '(' and '!' */

typedef __int128 i128;

/* ------------------------------------------------------------ tree */

enum ty { TY_ANY = 0, TY_INT = 1, TY_STR = 2, TY_TIME = 3 };

enum src {
	SRC_LIT_INT, SRC_LIT_STR, SRC_LIT_TIME,
	SRC_PID, SRC_TID, SRC_GOID, SRC_COMM, SRC_FUNC, SRC_KIND, SRC_TS,
	SRC_LATENCY, SRC_CPU, SRC_BINARY,
	SRC_ARG,                           /* goargN, goretN or a parameter name */
};

enum cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

enum strfn { FN_CONTAINS, FN_STARTS, FN_ENDS, FN_GLOB };

struct operand {
	uint8_t src;          /* enum src */
	uint8_t ty;           /* enum ty, static type */
	bool len_of;          /* len(field): the field's true length */
	bool abs;             /* SRC_TS compared with a time: monotonic ns */
	uint32_t slot;        /* SRC_ARG: index in f->slots */
	i128 ival;            /* SRC_LIT_INT; SRC_LIT_TIME once resolved */
	struct rtime tlit;    /* SRC_LIT_TIME as written */
	uint32_t soff, slen;  /* SRC_LIT_STR: bytes in f->pool */
	uint32_t pos, len;    /* where it was written, for messages */
};

enum node_op { N_AND, N_OR, N_NOT, N_CMP, N_IN, N_RE, N_STRFN };

struct node {
	uint8_t op;           /* enum node_op */
	uint8_t cmp;          /* enum cmp (N_CMP), enum strfn (N_STRFN),
			       * 1 for !~ (N_RE) */
	uint32_t first;       /* N_AND/N_OR: first kid in f->kids; N_NOT: child;
			       * N_IN: first literal in f->lits; N_RE: regex */
	uint32_t count;       /* N_AND/N_OR/N_IN: number of kids / literals */
	uint32_t pos;         /* operator position, for messages */
	struct operand l, r;
};

/* A field naming a value of the event, resolved once per probe. */
enum space { SP_ARG, SP_RET, SP_NAME };

struct slot {
	uint8_t space;        /* enum space */
	uint32_t n;           /* N of goargN / goretN */
	uint32_t name_off;    /* SP_NAME: NUL-terminated name in the pool */
};

/* Where the value of a slot is, for one (probe, entry probe). */
enum where { W_NONE = 0, W_EVENT = 1, W_ENTRY = 2 };
#define SF_F32 1              /* value is the bits of a float32 */
#define SF_F64 2              /* value is the bits of a float64 */
#define SF_SLICE 4            /* value is a slice's element bytes
				 (GTR_TYPE_SLICE): only its length is used */

struct res {
	int16_t idx;          /* value index */
	uint8_t where;        /* enum where */
	uint8_t flg;          /* SF_* */
};

struct pc_ent {               /* per-probe cache entry */
	uint32_t id;
	bool used;
	const struct gtr_probe *probe;
	const struct gtr_probe *entry_probe;
};

struct regex {
	pcre2_code *code;
	pcre2_match_data *md;
};

struct filter {
	char *expr;
	bool field_only;      /* compiled by filter_compile_field() */
	struct operand field;
	struct node *nodes;
	uint32_t nnodes, cap_nodes;
	uint32_t *kids;
	uint32_t nkids, cap_kids;
	struct operand *lits;
	uint32_t nlits, cap_lits;
	struct regex *res;
	uint32_t nres, cap_res;
	char *pool;
	uint32_t npool, cap_pool;
	struct slot *slots;
	uint32_t nslots, cap_slots;
	uint32_t root;
	bool has_time, time_bound;
	/* Events whose evaluation failed (a regex that hit a PCRE2 limit):
	 * counted, never a silent false; why: the first failure's reason. */
	uint64_t eval_errors;
	char eval_why[160];
	unsigned uses;        /* FILTER_USES_* */
	/* The filter as a flat list of "argument OP integer" joined by &&
	 * (nfast > 0), evaluated without recursion; -1: not of that shape,
	 * 0: not looked at yet. */
	int nfast;
	uint32_t fast[16];    /* N_CMP node indexes */
	/* fast[] resolved for one (probe, entry probe), so that an event of
	 * the same probes as the last one reads its values directly */
	struct fast_op {
		i128 lit;
		int16_t idx;  /* value index */
		uint8_t where;  /* enum where */
		uint8_t flg;  /* SF_* */
		uint8_t cmp;  /* enum cmp */
	} fops[16];
	bool fops_ok;
	const struct gtr_probe *fops_probe, *fops_entry;

	/* per-probe resolution: slot s of cache entry e at [e * nslots + s] */
	struct pc_ent *ents;
	struct res *rtab;
	uint32_t cap_ents, nents;
	struct res *scratch;  /* resolution for events of an undescribed probe */
	bool last_ok;         /* one-entry cache in front of the table */
	const struct gtr_probe *last_probe, *last_entry_probe;
	uint32_t last_ent;
};

#define GROW(arr, n, cap)                                                   \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? (cap) * 2 : 16;                     \
			(arr) = xrealloc((arr), (size_t)(cap) * sizeof(*(arr)), "filter"); \
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
		f->pool = xrealloc(f->pool, cap, "filter");
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
	T_EOF, T_IDENT, T_INT, T_TIME, T_STR, T_TRUE, T_FALSE,
	T_LPAREN, T_RPAREN, T_COMMA, T_NOT, T_AND, T_OR,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_MATCH, T_NMATCH,
};

struct token {
	enum tok t;
	uint32_t pos, len;    /* source bytes */
	i128 ival;            /* T_INT (durations too, in ns) */
	struct rtime tval;    /* T_TIME */
	uint32_t soff, slen;  /* T_STR: decoded bytes in the pool */
};

struct parser {
	const char *s;
	uint32_t n, pos;
	struct token tok;     /* current token */
	struct token prev;    /* previous token */
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

/* Integers, durations (10ms, -1.5s) and times (12:00:03, 2024-05-01T...). */
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
	case ',': t->t = T_COMMA; break;
	case '!':
		if (s[1] == '=') { t->t = T_NE; len = 2; }
		else if (s[1] == '~') { t->t = T_NMATCH; len = 2; }
		else { t->t = T_NOT; }
		break;
	case '=':
		if (s[1] == '~') { t->t = T_MATCH; len = 2; break; }
		if (s[1] != '=') {
			fail_at(p, p->pos, "unexpected '=', did you mean '=='?");
			return;
		}
		t->t = T_EQ; len = 2;
		break;
	case '~':
		fail_at(p, p->pos, "unexpected '~', did you mean '=~' (regular expression) or glob(FIELD, \"PATTERN\")?");
		return;
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
		if (!isdigit((unsigned char)s[1]) && !(s[1] == '.' && isdigit((unsigned char)s[2]))) {
			fail_at(p, p->pos, "unexpected '-': a negative integer is written with the sign against its digits, e.g. -5");
			return;
		}
		lex_number(p, t);
		return;
	default:
		if (isdigit(c) || (c == '.' && isdigit((unsigned char)s[1]))) {
			lex_number(p, t);
			return;
		}
		if (is_ident_start(c)) {
			/* dots join the parts of a field path (r.URL.Path) */
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

/* Consumes a token of type `t` or fails with "expected <what>". */
static bool expect(struct parser *p, enum tok t, const char *what)
{
	if (p->failed)
		return false;
	if (p->tok.t != t) {
		fail_expected(p, what);
		return false;
	}
	advance(p);
	return !p->failed;
}

static uint32_t slot_for(struct filter *f, uint8_t space, uint32_t n,
			 const char *name, uint32_t len)
{
	f->uses |= FILTER_USES_VALUES;
	for (uint32_t i = 0; i < f->nslots; i++) {
		const struct slot *s = &f->slots[i];
		if (s->space != space)
			continue;
		if (space != SP_NAME ? s->n == n
				     : strlen(f->pool + s->name_off) == len &&
					       !memcmp(f->pool + s->name_off, name, len))
			return i;
	}
	GROW(f->slots, f->nslots, f->cap_slots);
	f->slots[f->nslots].space = space;
	f->slots[f->nslots].n = n;
	f->slots[f->nslots].name_off = space == SP_NAME ? pool_add(f, name, len, true) : 0;
	return f->nslots++;
}

/* True when the next character after the current token is '('. */
static bool lparen_follows(const struct parser *p)
{
	uint32_t i = p->pos;

	while (i < p->n && isspace((unsigned char)p->s[i]))
		i++;
	return i < p->n && p->s[i] == '(';
}

static bool tok_is(const struct parser *p, const char *w)
{
	return p->tok.t == T_IDENT && p->tok.len == strlen(w) &&
	       !memcmp(p->s + p->tok.pos, w, p->tok.len);
}

/* Parses goargN / goretN (prefix of 5) into *n; 0 not that form, -1 error. */
static int numbered(struct parser *p, const char *s, uint32_t len,
		    const char *prefix, uint32_t *n)
{
	if (len <= 5 || memcmp(s, prefix, 5))
		return 0;
	unsigned long v = 0;
	for (uint32_t k = 5; k < len; k++) {
		if (!isdigit((unsigned char)s[k]))
			return 0;
		if (v < 1000000)
			v = v * 10 + (unsigned)(s[k] - '0');
	}
	if (v < 1 || v > GTR_MAX_ARGS) {
		fail_at(p, p->tok.pos, "no such field '%.*s': %sN runs from %s1 to %s%d",
			(int)len, s, prefix, prefix, prefix, GTR_MAX_ARGS);
		return -1;
	}
	*n = (uint32_t)v;
	return 1;
}

static bool parse_field(struct parser *p, struct operand *o)
{
	static const struct {
		const char *name;
		uint8_t src, ty;
	} builtins[] = {
		{ "pid", SRC_PID, TY_INT }, { "tid", SRC_TID, TY_INT },
		{ "goid", SRC_GOID, TY_INT }, { "comm", SRC_COMM, TY_STR },
		{ "func", SRC_FUNC, TY_STR }, { "kind", SRC_KIND, TY_STR },
		{ "ts", SRC_TS, TY_INT }, { "latency", SRC_LATENCY, TY_INT },
		{ "cpu", SRC_CPU, TY_INT }, { "binary", SRC_BINARY, TY_STR },
	};
	const char *s = p->s + p->tok.pos;
	const uint32_t n = p->tok.len;
	uint32_t k;
	int r;

	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (n == strlen(builtins[i].name) && !memcmp(s, builtins[i].name, n)) {
			o->src = builtins[i].src;
			o->ty = builtins[i].ty;
			if (o->src == SRC_COMM)
				p->f->uses |= FILTER_USES_COMM;
			else if (o->src == SRC_LATENCY)
				p->f->uses |= FILTER_USES_LATENCY;
			else if (o->src == SRC_BINARY)
				p->f->uses |= FILTER_USES_BINARY;
			return true;
		}
	o->src = SRC_ARG;
	o->ty = TY_ANY;
	if ((r = numbered(p, s, n, "goarg", &k)) != 0) {
		if (r < 0)
			return false;
		o->slot = slot_for(p->f, SP_ARG, k, NULL, 0);
	} else if ((r = numbered(p, s, n, "goret", &k)) != 0) {
		if (r < 0)
			return false;
		o->slot = slot_for(p->f, SP_RET, k, NULL, 0);
	} else if (n == 6 && !memcmp(s, "retval", 6)) {
		o->slot = slot_for(p->f, SP_RET, 1, NULL, 0);
	} else {
		o->slot = slot_for(p->f, SP_NAME, 0, s, n);
	}
	return true;
}

static bool is_predicate_name(const struct parser *p)
{
	return tok_is(p, "contains") || tok_is(p, "startswith") ||
	       tok_is(p, "endswith") || tok_is(p, "glob");
}

/* operand = field | literal | "len" "(" field ")" | "cap" "(" name ")" */
static bool parse_operand(struct parser *p, struct operand *o, const char *what)
{
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
	case T_TIME:
		o->src = SRC_LIT_TIME; o->ty = TY_TIME; o->tlit = t->tval;
		p->f->has_time = true;
		break;
	case T_IDENT:
		if (lparen_follows(p)) {
			if (tok_is(p, "len")) {
				const uint32_t start = t->pos;
				advance(p);
				if (!expect(p, T_LPAREN, "'('"))
					return false;
				if (p->tok.t != T_IDENT || lparen_follows(p)) {
					fail_expected(p, "a field in len()");
					return false;
				}
				if (!parse_field(p, o))
					return false;
				if (o->ty == TY_INT) {
					fail_at(p, p->tok.pos, "len() takes a string or slice field; '%.*s' is an integer",
						(int)p->tok.len, p->s + p->tok.pos);
					return false;
				}
				advance(p);
				if (p->failed)
					return false;
				o->len_of = true;
				o->ty = TY_INT;
				o->pos = start;
				o->len = p->tok.pos + 1 - start;
				if (!expect(p, T_RPAREN, "')' to close len("))
					return false;
				return true;
			}
			if (tok_is(p, "cap")) {
				/* the capacity gotrace-record keeps of a slice
				 * parameter, as the value named "cap(NAME)" */
				const uint32_t start = t->pos;
				char name[128];
				advance(p);
				if (!expect(p, T_LPAREN, "'('"))
					return false;
				if (p->tok.t != T_IDENT || lparen_follows(p) ||
				    p->tok.len > sizeof(name) - 6) {
					fail_expected(p, "a slice parameter's name in cap()");
					return false;
				}
				const int n = snprintf(name, sizeof(name), "cap(%.*s)",
						       (int)p->tok.len, p->s + p->tok.pos);
				o->src = SRC_ARG;
				o->ty = TY_ANY;
				o->slot = slot_for(p->f, SP_NAME, 0, name, (uint32_t)n);
				advance(p);
				if (p->failed)
					return false;
				o->pos = start;
				o->len = p->tok.pos + 1 - start;
				if (!expect(p, T_RPAREN, "')' to close cap("))
					return false;
				return true;
			}
			if (is_predicate_name(p))
				fail_at(p, t->pos, "%.*s() is a condition, not a value: use it alone, e.g. %.*s(comm, \"x\") && ...",
					(int)t->len, p->s + t->pos, (int)t->len, p->s + t->pos);
			else
				fail_at(p, t->pos, "unknown function '%.*s' (known: len cap contains startswith endswith glob)",
					(int)t->len, p->s + t->pos);
			return false;
		}
		if (!parse_field(p, o))
			return false;
		break;
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
	case SRC_LIT_TIME: return "a time";
	default:
		snprintf(out, outlen, "'%s' (%s)", show(p, o->pos, o->len, tmp, sizeof(tmp)),
			 o->ty == TY_STR ? "a string" : "an integer");
		return out;
	}
}

static bool is_literal(const struct operand *o)
{
	return o->src == SRC_LIT_INT || o->src == SRC_LIT_STR || o->src == SRC_LIT_TIME;
}

/* Static checks of `l OP r`; marks ts operands compared with times. */
static bool check_pair(struct parser *p, struct operand *l, struct operand *r,
		       uint32_t oppos)
{
	char a[80], b[80];

	if (l->ty == TY_TIME || r->ty == TY_TIME) {
		struct operand *ts = l->ty == TY_TIME ? r : l;
		const struct operand *tm = l->ty == TY_TIME ? l : r;
		if (ts->src != SRC_TS || ts->len_of) {
			fail_at(p, tm->pos, "a time compares only with 'ts' (write e.g. ts >= 12:00:03)");
			return false;
		}
		ts->abs = true;
		return true;
	}
	for (int side = 0; side < 2; side++) {
		const struct operand *k = side ? r : l, *s = side ? l : r;
		if (k->src != SRC_KIND || k->len_of || s->src != SRC_LIT_STR)
			continue;
		const char *v = p->f->pool + s->soff;
		if (!(s->slen == 5 && !memcmp(v, "entry", 5)) &&
		    !(s->slen == 6 && !memcmp(v, "return", 6))) {
			fail_at(p, s->pos, "kind is \"entry\" or \"return\"");
			return false;
		}
	}
	if (l->ty != TY_ANY && r->ty != TY_ANY && l->ty != r->ty) {
		fail_at(p, oppos, "cannot compare %s with %s",
			operand_desc(p, l, a, sizeof(a)), operand_desc(p, r, b, sizeof(b)));
		return false;
	}
	return true;
}

static uint32_t parse_or(struct parser *p);

/* contains|startswith|endswith|glob "(" field "," string ")" */
static uint32_t parse_call(struct parser *p)
{
	struct filter *f = p->f;
	const struct token name = p->tok;
	uint8_t fn = FN_CONTAINS;
	struct operand l, r;
	char fname[16];

	snprintf(fname, sizeof(fname), "%.*s", (int)name.len, p->s + name.pos);
	if (tok_is(p, "startswith")) fn = FN_STARTS;
	else if (tok_is(p, "endswith")) fn = FN_ENDS;
	else if (tok_is(p, "glob")) fn = FN_GLOB;
	advance(p);
	if (!expect(p, T_LPAREN, "'('"))
		return 0;
	const uint32_t fpos = p->tok.pos;
	if (!parse_operand(p, &l, "a field"))
		return 0;
	if (is_literal(&l) || l.len_of) {
		fail_at(p, fpos, "%s() takes a string field first, e.g. %s(func, \"...\")", fname, fname);
		return 0;
	}
	if (l.ty == TY_INT) {
		fail_at(p, fpos, "%s() takes a string field, not %s", fname,
			operand_desc(p, &l, (char[80]){ 0 }, 80));
		return 0;
	}
	if (!expect(p, T_COMMA, "','"))
		return 0;
	if (p->tok.t != T_STR) {
		fail_expected(p, "a string literal");
		return 0;
	}
	if (!parse_operand(p, &r, "a string literal"))
		return 0;
	if (!expect(p, T_RPAREN, "')'"))
		return 0;
	const uint32_t n = new_node(f, N_STRFN, name.pos);
	f->nodes[n].cmp = fn;
	f->nodes[n].l = l;
	f->nodes[n].r = r;
	return n;
}

/* operand "in" "(" literal { "," literal } ")" */
static uint32_t parse_in(struct parser *p, struct operand *l, uint32_t oppos)
{
	struct filter *f = p->f;
	const uint32_t first = f->nlits;
	uint8_t ty = l->ty;

	advance(p);
	if (!expect(p, T_LPAREN, "'('"))
		return 0;
	for (;;) {
		struct operand o;
		const enum tok t = p->tok.t;
		if (t != T_INT && t != T_STR && t != T_TRUE && t != T_FALSE) {
			fail_expected(p, "an integer or string literal");
			return 0;
		}
		if (!parse_operand(p, &o, "a literal"))
			return 0;
		if (!check_pair(p, l, &o, o.pos))
			return 0;
		if (ty != TY_ANY && o.ty != ty) {
			fail_at(p, o.pos, "the list of 'in' mixes integers and strings");
			return 0;
		}
		ty = o.ty;
		GROW(f->lits, f->nlits, f->cap_lits);
		f->lits[f->nlits++] = o;
		if (p->tok.t == T_RPAREN)
			break;
		if (!expect(p, T_COMMA, "',' or ')'"))
			return 0;
	}
	advance(p);
	if (p->failed)
		return 0;
	const uint32_t n = new_node(f, N_IN, oppos);
	f->nodes[n].l = *l;
	f->nodes[n].first = first;
	f->nodes[n].count = f->nlits - first;
	return n;
}

/* operand ("=~" | "!~") string */
static uint32_t parse_regex(struct parser *p, struct operand *l, uint32_t oppos)
{
	struct filter *f = p->f;
	const bool neg = p->tok.t == T_NMATCH;
	struct operand r;
	int ec;
	PCRE2_SIZE eo;

	if (is_literal(l) || l->len_of || l->ty == TY_INT) {
		fail_at(p, l->pos, "'%s' takes a string field on its left", neg ? "!~" : "=~");
		return 0;
	}
	advance(p);
	if (p->failed)
		return 0;
	if (p->tok.t != T_STR) {
		fail_expected(p, "a regular expression in double quotes");
		return 0;
	}
	if (!parse_operand(p, &r, "a regular expression"))
		return 0;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)(f->pool + r.soff), r.slen,
					 PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
	if (!code) {
		PCRE2_UCHAR msg[160];
		pcre2_get_error_message(ec, msg, sizeof(msg));
		/* the caret goes under the offending byte when the literal has
		 * no escapes before it, else under the literal */
		uint32_t at = r.pos;
		if (eo <= r.slen && !memchr(p->s + r.pos + 1, '\\', eo))
			at = r.pos + 1 + (uint32_t)eo;
		fail_at(p, at, "bad regular expression: %s", (const char *)msg);
		return 0;
	}
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* optional: falls back */
	GROW(f->res, f->nres, f->cap_res);
	f->res[f->nres].code = code;
	f->res[f->nres].md = pcre2_match_data_create_from_pattern(code, NULL);
	if (!f->res[f->nres].md) {
		pcre2_code_free(code);
		fail_at(p, r.pos, "out of memory for a regular expression");
		return 0;
	}
	const uint32_t n = new_node(f, N_RE, oppos);
	f->nodes[n].first = f->nres++;
	f->nodes[n].cmp = neg;
	f->nodes[n].l = *l;
	f->nodes[n].r = r;
	return n;
}

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
				fail_at(p, err_pos(p), "expected ')' to close the '(' of column %u", open.pos + 1);
			else
				fail_at(p, err_pos(p), "expected ')' to close the '(' of column %u, found %s",
					open.pos + 1, tok_desc(p, &p->tok, found, sizeof(found)));
			return 0;
		}
		p->depth--;
		advance(p);
		return e;
	}
	if (p->tok.t == T_IDENT && is_predicate_name(p) && lparen_follows(p))
		return parse_call(p);

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
	case T_MATCH:
	case T_NMATCH:
		return parse_regex(p, &l, op.pos);
	default:
		if (tok_is(p, "in"))
			return parse_in(p, &l, op.pos);
		fail_expected(p, "a comparison operator (== != < <= > >= in =~ !~)");
		return 0;
	}
	advance(p);
	if (p->failed || !parse_operand(p, &r, "a value"))
		return 0;
	if (!check_pair(p, &l, &r, op.pos))
		return 0;
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

static struct filter *compile(const char *expr, struct filter_error *err,
			      bool field_only)
{
	struct filter *f = xrealloc(NULL, sizeof(*f), "filter");
	struct parser p;
	const size_t n = strlen(expr);

	memset(f, 0, sizeof(*f));
	memset(err, 0, sizeof(*err));
	f->field_only = field_only;
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
	if (field_only) {
		if (!p.failed && parse_operand(&p, &f->field, "a field") &&
		    is_literal(&f->field))
			fail_at(&p, f->field.pos, "expected a field, found a literal");
	} else if (!p.failed) {
		f->root = parse_or(&p);
	}
	if (!p.failed && p.tok.t != T_EOF) {
		char found[64];
		if (field_only)
			fail_at(&p, p.tok.pos, "expected end of field, found %s",
				tok_desc(&p, &p.tok, found, sizeof(found)));
		else if (p.tok.t == T_RPAREN)
			fail_at(&p, p.tok.pos, "unmatched ')'");
		else
			fail_at(&p, p.tok.pos, "expected '&&', '||' or end of filter, found %s",
				tok_desc(&p, &p.tok, found, sizeof(found)));
	}
	if (p.failed) {
		filter_free(f);
		return NULL;
	}
	f->scratch = xrealloc(NULL, (f->nslots + 1) * sizeof(*f->scratch), "filter");
	return f;
}

struct filter *filter_compile(const char *expr, struct filter_error *err)
{
	return compile(expr, err, false);
}

struct filter *filter_compile_field(const char *expr, struct filter_error *err)
{
	return compile(expr, err, true);
}

const char *filter_expr(const struct filter *f)
{
	return f->expr;
}

void filter_free(struct filter *f)
{
	if (!f)
		return;
	for (uint32_t i = 0; i < f->nres; i++) {
		pcre2_match_data_free(f->res[i].md);
		pcre2_code_free(f->res[i].code);
	}
	free(f->res);
	free(f->expr);
	free(f->nodes);
	free(f->kids);
	free(f->lits);
	free(f->pool);
	free(f->slots);
	free(f->ents);
	free(f->rtab);
	free(f->scratch);
	free(f);
}

/* ------------------------------------------------------------ probes */

static int arg_index(const struct gtr_probe *pr, const char *name)
{
	for (uint32_t k = 0; k < pr->nargs && k < GTR_MAX_ARGS; k++)
		if (pr->args[k].name && !strcmp(pr->args[k].name, name))
			return (int)k;
	return -1;
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
static struct res resolve_slot(const struct filter *f, uint32_t s, enum gtr_kind kind,
			       const struct gtr_probe *pr, const struct gtr_probe *epr)
{
	const struct slot *sl = &f->slots[s];
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
		if (pr && (i = arg_index(pr, f->pool + sl->name_off)) >= 0) {
			r.idx = (int16_t)i;
			r.where = W_EVENT;
			r.flg = value_flags(pr, i);
		} else if (kind == GTR_KIND_RETURN && epr &&
			   (i = arg_index(epr, f->pool + sl->name_off)) >= 0) {
			r.idx = (int16_t)i;
			r.where = W_ENTRY;
			r.flg = value_flags(epr, i);
		}
		break;
	}
	return r;
}

/* Static type of slot `s` in probe `pr`; -1 when the probe lacks it. */
static int slot_type(const struct filter *f, uint32_t s, const struct gtr_probe *pr)
{
	const struct slot *sl = &f->slots[s];
	int i;

	if (sl->space == SP_ARG && pr->kind != GTR_KIND_ENTRY)
		return -1;
	if (sl->space == SP_RET && pr->kind != GTR_KIND_RETURN)
		return -1;
	i = sl->space == SP_NAME ? arg_index(pr, f->pool + sl->name_off) : (int)sl->n - 1;
	if (i < 0 || (uint32_t)i >= pr->nargs)
		return -1;
	switch (pr->args[i].type) {
	case GTR_TYPE_STRING:
	case GTR_TYPE_IFACE:  /* the name of its dynamic type */
	case GTR_TYPE_BYTES:
		return TY_STR;
	case GTR_TYPE_OTHER:
	case GTR_TYPE_SLICE: return TY_ANY;
	default: return TY_INT;
	}
}

static const char *slot_name(const struct filter *f, uint32_t s, char *out, size_t n)
{
	const struct slot *sl = &f->slots[s];

	if (sl->space == SP_NAME)
		snprintf(out, n, "an argument or result named '%s'", f->pool + sl->name_off);
	else
		snprintf(out, n, "a %s%u", sl->space == SP_ARG ? "goarg" : "goret", sl->n);
	return out;
}

static void check_operand(const struct filter *f, const struct operand *a,
			  uint8_t want, uint32_t pos,
			  const struct gtr_probe *const *probes, size_t nprobes,
			  struct filter_error *err)
{
	if (err->msg[0] || a->src != SRC_ARG || want == TY_ANY)
		return;
	size_t have = 0, ok = 0;
	const char *example = NULL;
	uint8_t found = TY_ANY;
	for (size_t k = 0; k < nprobes; k++) {
		const int t = slot_type(f, a->slot, probes[k]);
		if (t < 0)
			continue;
		have++;
		if (t == TY_ANY || t == want)
			ok++;
		else if (!example) {
			example = probes[k]->func;
			found = (uint8_t)t;
		}
	}
	if (have && !ok) {
		err->column = pos + 1;
		snprintf(err->msg, sizeof(err->msg),
			 "cannot compare '%.*s' (%s in %s%s) with %s",
			 (int)(a->len > 64 ? 64 : a->len), f->expr + a->pos,
			 found == TY_STR ? "a string" : "a number",
			 example ? example : "?",
			 have > 1 ? " and every other probe that has it" : "",
			 want == TY_STR ? "a string" : "an integer");
	}
}

/*
 * A slice (GTR_TYPE_SLICE) is recorded as its first elements' bytes: no
 * value to compare or search, only its length. Fails when operand `a`
 * (not len()) is a slice in every probe that has it.
 */
static void check_not_slice(const struct filter *f, const struct operand *a,
			    const struct gtr_probe *const *probes, size_t nprobes,
			    struct filter_error *err)
{
	if (err->msg[0] || a->src != SRC_ARG || a->len_of)
		return;
	const struct slot *sl = &f->slots[a->slot];
	const char *tname = NULL;
	size_t have = 0, slices = 0;
	for (size_t k = 0; k < nprobes; k++) {
		const struct gtr_probe *pr = probes[k];
		if (slot_type(f, a->slot, pr) < 0)
			continue;
		const int i = sl->space == SP_NAME ? arg_index(pr, f->pool + sl->name_off)
						   : (int)sl->n - 1;
		have++;
		if (pr->args[i].type != GTR_TYPE_SLICE)
			continue;
		slices++;
		if (!tname && pr->args[i].type_name && pr->args[i].type_name[0])
			tname = pr->args[i].type_name;
	}
	if (!have || slices < have)
		return;
	const int n = (int)(a->len > 64 ? 64 : a->len);
	const char *name = f->expr + a->pos;
	err->column = a->pos + 1;
	if (tname)
		snprintf(err->msg, sizeof(err->msg),
			 "%.*s is a slice (%.64s): only len(%.*s) applies", n, name, tname, n, name);
	else
		snprintf(err->msg, sizeof(err->msg),
			 "%.*s is a slice: only len(%.*s) applies", n, name, n, name);
}

int filter_check(const struct filter *f,
		 const struct gtr_probe *const *probes, size_t nprobes,
		 FILE *warn, struct filter_error *err)
{
	memset(err, 0, sizeof(*err));
	if (!nprobes)
		return 0;
	if (f->field_only)
		check_not_slice(f, &f->field, probes, nprobes, err);
	for (uint32_t i = 0; i < f->nnodes && !err->msg[0]; i++) {
		const struct node *n = &f->nodes[i];
		/* a slice's operand comes first: its message says what applies */
		check_not_slice(f, &n->l, probes, nprobes, err);
		if (n->op == N_CMP)
			check_not_slice(f, &n->r, probes, nprobes, err);
		if (err->msg[0])
			break;
		switch (n->op) {
		case N_CMP:
			if (!n->l.len_of)
				check_operand(f, &n->l, n->r.ty, n->pos, probes, nprobes, err);
			if (!n->r.len_of)
				check_operand(f, &n->r, n->l.ty, n->pos, probes, nprobes, err);
			break;
		case N_IN:
			if (n->count && !n->l.len_of)
				check_operand(f, &n->l, f->lits[n->first].ty, n->pos, probes, nprobes, err);
			break;
		case N_RE:
		case N_STRFN:
			check_operand(f, &n->l, TY_STR, n->pos, probes, nprobes, err);
			break;
		}
	}
	if (err->msg[0])
		return -1;
	for (uint32_t s = 0; warn && s < f->nslots; s++) {
		size_t have = 0;
		char what[160];
		for (size_t k = 0; k < nprobes; k++)
			have += slot_type(f, s, probes[k]) >= 0;
		if (!have)
			fprintf(warn, "gotrace-report: warning: no probe in the file so far has %s; %s\n",
				slot_name(f, s, what, sizeof(what)),
				f->field_only ? "every event falls in its \"-\" group"
					      : "comparisons with it are false");
	}
	return 0;
}

int filter_set_clock(struct filter *f, const struct gtr_host *h,
		     struct filter_error *err)
{
	memset(err, 0, sizeof(*err));
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct node *n = &f->nodes[i];
		for (int side = 0; side < 2; side++) {
			struct operand *o = side ? &n->r : &n->l;
			int64_t mono;
			if (o->src != SRC_LIT_TIME)
				continue;
			if (!rtime_to_mono(&o->tlit, h, 0, &mono)) {
				err->column = o->pos + 1;
				snprintf(err->msg, sizeof(err->msg),
					 "a wall-clock time needs the recording's clock anchor, which this file lacks; use ts with a duration (ts > 5s) instead");
				return -1;
			}
			o->ival = mono;
		}
	}
	f->time_bound = true;
	return 0;
}

/* Finds or makes the cache entry of (pr, epr); returns its index. */
static uint32_t cache_lookup(struct filter *f, const struct gtr_probe *pr,
			     const struct gtr_probe *epr)
{
	const uint32_t id = pr->id;

	if (f->last_ok && f->last_probe == pr && f->last_entry_probe == epr)
		return f->last_ent;
	if (!f->cap_ents || (f->nents + 1) * 2 > f->cap_ents) {
		/* grow and start over: re-resolving is cheap and rare */
		const uint32_t cap = f->cap_ents ? f->cap_ents * 2 : 16;
		f->ents = xrealloc(f->ents, cap * sizeof(*f->ents), "filter");
		f->rtab = xrealloc(f->rtab, (size_t)cap * f->nslots * sizeof(*f->rtab) + 1, "filter");
		memset(f->ents, 0, cap * sizeof(*f->ents));
		f->cap_ents = cap;
		f->nents = 0;
		f->last_ok = false;
	}
	uint32_t h = (id * 2654435761u) & (f->cap_ents - 1);
	while (f->ents[h].used && f->ents[h].id != id)
		h = (h + 1) & (f->cap_ents - 1);
	struct pc_ent *e = &f->ents[h];
	if (!e->used || e->probe != pr || e->entry_probe != epr) {
		if (!e->used)
			f->nents++;
		e->used = true;
		e->id = id;
		e->probe = pr;
		e->entry_probe = epr;
		for (uint32_t s = 0; s < f->nslots; s++)
			f->rtab[h * f->nslots + s] = resolve_slot(f, s, pr->kind, pr, epr);
	}
	f->last_ok = true;
	f->last_probe = pr;
	f->last_entry_probe = epr;
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
	case SRC_LIT_STR:
		v->t = V_STR;
		v->s = (const uint8_t *)f->pool + o->soff;
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
	const uint8_t *lit = (const uint8_t *)f->pool + n->r.soff;
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
	const struct node *n = &f->nodes[ni];
	struct val a, b;

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
	case N_IN:
		load(f, c, &n->l, &a);
		for (uint32_t k = 0; k < n->count; k++) {
			load(f, c, &f->lits[n->first + k], &b);
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
	if (f->nslots == 0) {
		c->res = f->scratch;
	} else if (!e->probe) {
		/* undescribed probe: rare, resolved per event without allocating */
		for (uint32_t s = 0; s < f->nslots; s++)
			f->scratch[s] = resolve_slot(f, s, e->ev->kind, NULL, e->entry_probe);
		c->res = f->scratch;
	} else {
		const uint32_t h = cache_lookup(f, e->probe, e->entry_probe);
		c->res = f->rtab + (size_t)h * f->nslots;
	}
}

/* Whether node ni compares an argument with an integer literal. */
static bool fast_cmp_node(const struct filter *f, uint32_t ni)
{
	const struct node *n = &f->nodes[ni];

	return n->op == N_CMP && n->l.src == SRC_ARG &&
	       n->r.src == SRC_LIT_INT && !n->l.len_of;
}

/* Finds whether the filter is a conjunction of fast comparisons. */
static void fast_plan(struct filter *f)
{
	const struct node *root = &f->nodes[f->root];

	f->nfast = -1;
	if (fast_cmp_node(f, f->root)) {
		f->fast[0] = f->root;
		f->nfast = 1;
		return;
	}
	if (root->op != N_AND || root->count > 16)
		return;
	for (uint32_t k = 0; k < root->count; k++)
		if (!fast_cmp_node(f, f->kids[root->first + k]))
			return;
	for (uint32_t k = 0; k < root->count; k++)
		f->fast[k] = f->kids[root->first + k];
	f->nfast = (int)root->count;
}

/* Resolves fast[] for the probes of e into fops[]. */
static void fast_resolve(struct filter *f, const struct report_event *e)
{
	struct ctx c;

	make_ctx(f, e, &c);
	for (int k = 0; k < f->nfast; k++) {
		const struct node *n = &f->nodes[f->fast[k]];
		const struct res r = c.res[n->l.slot];

		f->fops[k] = (struct fast_op){ .lit = n->r.ival, .idx = r.idx,
					       .where = r.where, .flg = r.flg,
					       .cmp = n->cmp };
	}
	/* an undescribed probe resolves per event: do not cache it */
	f->fops_ok = e->probe != NULL;
	f->fops_probe = e->probe;
	f->fops_entry = e->entry_probe;
}

/*
 * The flat form: every fops[k] must hold. Returns 1 or 0, or -1 when a
 * value is not an integer (a float or a string: the general evaluator
 * decides).
 */
static int fast_match(const struct filter *f, const struct report_event *e)
{
	for (int k = 0; k < f->nfast; k++) {
		const struct fast_op *o = &f->fops[k];
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

	if (f->field_only)
		return false;
	if (!f->nfast)
		fast_plan(f);
	if (f->nfast > 0) {
		if (!f->fops_ok || e->probe != f->fops_probe || e->entry_probe != f->fops_entry)
			fast_resolve(f, e);
		const int m = fast_match(f, e);
		if (m >= 0)
			return m;
	}
	make_ctx(f, e, &c);
	c.re_rc = 0;
	const bool r = eval(f, &c, f->root);
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
	if (!f->field_only)
		return false;
	make_ctx(f, e, &c);
	load(f, &c, &f->field, &v);
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

/* ------------------------------------------------------------ errors */

void filter_error_print(FILE *out, const char *prefix, const char *expr,
			const struct filter_error *err)
{
	filter_error_print_as(out, prefix, "filter", expr, err);
}

void filter_error_print_as(FILE *out, const char *prefix, const char *what,
			   const char *expr, const struct filter_error *err)
{
	const size_t n = strlen(expr);

	if (!err->column) {
		fprintf(out, "%sbad %s: %s\n", prefix, what, err->msg);
		return;
	}
	fprintf(out, "%sbad %s: %s at column %u\n  ", prefix, what, err->msg, err->column);
	for (size_t i = 0; i < n; i++) {
		const unsigned char c = (unsigned char)expr[i];
		fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
	}
	fputs("\n  ", out);
	/* as many spaces as the text before the column takes on a terminal
	 * (a wide character two, a combining mark none) */
	const size_t before = err->column - 1 < n ? err->column - 1 : n;
	for (int w = text_width(expr, before); w > 0; w--)
		fputc(' ', out);
	for (size_t i = n; i + 1 < err->column; i++)
		fputc(' ', out);
	fputs("^\n", out);
}

unsigned filter_uses(const struct filter *f)
{
	return f ? f->uses : 0;
}
