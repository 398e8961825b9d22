/* SPDX-License-Identifier: MIT */
/*
 * What the lexer (lex.c) and the parser (parse.c) of lang/ share: the
 * tokens and the parser state. Nothing outside lang/ includes it.
 */
#ifndef GOTRACE_LANG_INT_H
#define GOTRACE_LANG_INT_H

#include "lang.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Makes room for one more element of arr[n] (capacity cap). */
#define GROW(arr, n, cap)                                                   \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? (cap) * 2 : 16;                     \
			(arr) = xrealloc((arr), (size_t)(cap) * sizeof(*(arr)), "filter"); \
		}                                                           \
	} while (0)

/* Appends p[0, n) (and a NUL when `nul`) to the byte pool; its offset. */
uint32_t pool_add(struct lang_tree *t, const void *p, size_t n, bool nul);

enum tok {
	T_EOF, T_IDENT, T_INT, T_FLOAT, T_TIME, T_STR, T_TRUE, T_FALSE,
	T_LPAREN, T_RPAREN, T_COMMA, T_NOT, T_AND, T_OR,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_MATCH, T_NMATCH,
};

struct token {
	enum tok t;
	uint32_t pos, len;    /* source bytes */
	i128 ival;            /* T_INT (durations too, in ns) */
	double dval;          /* T_FLOAT */
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
	struct lang_tree *f;
	lang_regex_fn regex;  /* may be NULL */
	void *regex_ctx;
	unsigned *err_column; /* where the first failure goes */
	char *err_msg;
	size_t err_len;
	bool failed;
};

/* Fails the parse at byte `pos` (the first failure wins). */
void fail_at(struct parser *p, uint32_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reads the next token into p->tok (the current one to p->prev). */
void advance(struct parser *p);

/* Quotes source text s[pos, pos+len) for a message, shortened, into out. */
const char *show(const struct parser *p, uint32_t pos, uint32_t len,
		 char *out, size_t outlen);

/* "the token as written" for messages, into out[n]. */
const char *tok_desc(const struct parser *p, const struct token *t, char *out, size_t n);

#endif /* GOTRACE_LANG_INT_H */
