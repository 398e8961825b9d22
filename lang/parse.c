/* SPDX-License-Identifier: MIT */
/*
 * The parser of the predicate language (spec/FILTER.md, "Grammar"):
 * recursive descent into the flat node array of lang.h, with the checks
 * that need no probe (operand kinds; regular expressions through the
 * caller's lang_regex_fn).
 */
#include "lang_int.h"

/* ------------------------------------------------------------ parser */

static uint32_t new_node(struct lang_tree *f, uint8_t op, uint32_t pos)
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
		fail_at(p, 0, "empty expression: expected %s", what);
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

static uint32_t slot_for(struct lang_tree *f, uint8_t space, uint32_t n,
			 const char *name, uint32_t len)
{
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
	case T_FLOAT:   /* a number: compares with integers and floats */
		o->src = SRC_LIT_FLOAT; o->ty = TY_INT; o->dval = t->dval;
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

const char *lang_operand_desc(const char *expr, const struct operand *o,
			      char *out, size_t outlen)
{
	const struct parser q = { .s = expr };
	char tmp[40];

	switch (o->src) {
	case SRC_LIT_INT: return "an integer";
	case SRC_LIT_FLOAT: return "a number";
	case SRC_LIT_STR: return "a string";
	case SRC_LIT_TIME: return "a time";
	default:
		snprintf(out, outlen, "'%s' (%s)", show(&q, o->pos, o->len, tmp, sizeof(tmp)),
			 o->ty == TY_STR ? "a string" : "an integer");
		return out;
	}
}

static bool is_literal(const struct operand *o)
{
	return o->src == SRC_LIT_INT || o->src == SRC_LIT_FLOAT || o->src == SRC_LIT_STR ||
	       o->src == SRC_LIT_TIME;
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
			lang_operand_desc(p->s, l, a, sizeof(a)),
			lang_operand_desc(p->s, r, b, sizeof(b)));
		return false;
	}
	return true;
}

static uint32_t parse_or(struct parser *p);

/* contains|startswith|endswith|glob "(" field "," string ")" */
static uint32_t parse_call(struct parser *p)
{
	struct lang_tree *f = p->f;
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
			lang_operand_desc(p->s, &l, (char[80]){ 0 }, 80));
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
	struct lang_tree *f = p->f;
	const uint32_t first = f->nlits;
	uint8_t ty = l->ty;

	advance(p);
	if (!expect(p, T_LPAREN, "'('"))
		return 0;
	for (;;) {
		struct operand o;
		const enum tok t = p->tok.t;
		if (t != T_INT && t != T_FLOAT && t != T_STR && t != T_TRUE && t != T_FALSE) {
			fail_expected(p, "a number or string literal");
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
	struct lang_tree *f = p->f;
	const bool neg = p->tok.t == T_NMATCH;
	struct operand r;
	size_t eo = 0;
	char msg[160];

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
	msg[0] = '\0';
	if (p->regex && p->regex(p->regex_ctx, f->nregex, f->pool + r.soff, r.slen,
				 &eo, msg, sizeof(msg))) {
		/* the caret goes under the offending byte when the literal has
		 * no escapes before it, else under the literal */
		uint32_t at = r.pos;
		if (eo <= r.slen && !memchr(p->s + r.pos + 1, '\\', eo))
			at = r.pos + 1 + (uint32_t)eo;
		fail_at(p, at, "%s", msg);
		return 0;
	}
	const uint32_t n = new_node(f, N_RE, oppos);
	f->nodes[n].first = f->nregex++;
	f->nodes[n].cmp = neg;
	f->nodes[n].l = *l;
	f->nodes[n].r = r;
	return n;
}

static uint32_t parse_primary(struct parser *p)
{
	struct lang_tree *f = p->f;

	if (p->tok.t == T_LPAREN) {
		const struct token open = p->tok;
		if (++p->depth > LANG_MAX_DEPTH) {
			fail_at(p, open.pos, "expression nested too deeply (more than %d levels)", LANG_MAX_DEPTH);
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
	if (++p->depth > LANG_MAX_DEPTH) {
		fail_at(p, pos, "expression nested too deeply (more than %d levels)", LANG_MAX_DEPTH);
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
	struct lang_tree *f = p->f;
	uint32_t *tmp = NULL, n = 0, cap = 0;
	uint32_t pos = 0, res = 0;

	for (;;) {
		const uint32_t k = sub(p);
		if (p->failed)
			goto out;
		GROW(tmp, n, cap);
		tmp[n++] = k;
		if (p->tok.t != optok)
			break;
		if (n == 1)
			pos = p->tok.pos;     /* the first operator */
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

int lang_parse(struct lang_tree *f, const char *expr, bool field_only,
	       lang_regex_fn regex, void *regex_ctx, unsigned *column,
	       char *msg, size_t msglen)
{
	struct parser p;
	const size_t n = strlen(expr);

	memset(f, 0, sizeof(*f));
	*column = 0;
	if (msglen)
		msg[0] = '\0';
	/* the pool always exists: an empty string literal points into it
	 * even when it is all the expression holds */
	f->cap_pool = 64;
	f->pool = xrealloc(NULL, f->cap_pool, "filter");
	f->field_only = field_only;
	f->expr = strdup(expr);
	if (!f->expr || n >= UINT32_MAX / 2) {
		snprintf(msg, msglen, "expression too long");
		lang_tree_free(f);
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.s = f->expr;
	p.n = (uint32_t)n;
	p.f = f;
	p.regex = regex;
	p.regex_ctx = regex_ctx;
	p.err_column = column;
	p.err_msg = msg;
	p.err_len = msglen;
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
			fail_at(&p, p.tok.pos, "expected '&&', '||' or end of expression, found %s",
				tok_desc(&p, &p.tok, found, sizeof(found)));
	}
	if (p.failed) {
		lang_tree_free(f);
		return -1;
	}
	return 0;
}

void lang_tree_free(struct lang_tree *f)
{
	free(f->expr);
	free(f->nodes);
	free(f->kids);
	free(f->lits);
	free(f->pool);
	free(f->slots);
	memset(f, 0, sizeof(*f));
}

const char *lang_slot_name(const struct lang_tree *t, uint32_t s, char *out,
			   size_t n)
{
	const struct slot *sl = &t->slots[s];

	if (sl->space == SP_NAME)
		snprintf(out, n, "%s", t->pool + sl->name_off);
	else
		snprintf(out, n, "%s%u", sl->space == SP_ARG ? "goarg" : "goret", sl->n);
	return out;
}
