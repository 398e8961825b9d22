/* SPDX-License-Identifier: MIT */
/*
 * lang: the one predicate language of gotrace (spec/FILTER.md), parsed
 * into one tree. `gotrace-report -f` type-checks and evaluates the tree
 * (report/filter.c); gotrace-record lowers the subset the BPF program can
 * run to record-time predicates (record/pred.c). The lexer is lex.c, the
 * parser parse.c, time and duration literals timeparse.c.
 *
 * Layout: nodes live in one array and refer to each other by index; the
 * children of an n-ary && / || sit in `kids`, the literals of `in (...)` in
 * `lits`; string literals and field names live in one byte pool. Nesting
 * ('(' and '!') is bounded by LANG_MAX_DEPTH, so neither the parser nor a
 * walk of the tree can overflow the stack.
 */
#ifndef GOTRACE_LANG_H
#define GOTRACE_LANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeparse.h"

#define LANG_MAX_DEPTH 200         /* nested '(' and '!' */

typedef __int128 i128;

/* Static type of an operand. */
enum ty { TY_ANY = 0, TY_INT = 1, TY_STR = 2, TY_TIME = 3 };

/* Where an operand's value comes from. */
enum src {
	SRC_LIT_INT, SRC_LIT_STR, SRC_LIT_TIME,
	SRC_PID, SRC_TID, SRC_GOID, SRC_COMM, SRC_FUNC, SRC_KIND, SRC_TS,
	SRC_LATENCY, SRC_CPU, SRC_BINARY,
	SRC_ARG,                           /* goargN, goretN or a parameter name */
	SRC_LIT_FLOAT,                     /* 2.25, 1e-3: a number, compared as a double */
};

enum cmp { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

enum strfn { FN_CONTAINS, FN_STARTS, FN_ENDS, FN_GLOB };

struct operand {
	uint8_t src;          /* enum src */
	uint8_t ty;           /* enum ty, static type */
	bool len_of;          /* len(field): the field's true length */
	bool abs;             /* SRC_TS compared with a time: monotonic ns */
	uint32_t slot;        /* SRC_ARG: index in t->slots */
	i128 ival;            /* SRC_LIT_INT (a duration in ns, true 1, false
			       * 0); SRC_LIT_TIME once resolved */
	double dval;          /* SRC_LIT_FLOAT */
	struct rtime tlit;    /* SRC_LIT_TIME as written */
	uint32_t soff, slen;  /* SRC_LIT_STR: bytes in t->pool */
	uint32_t pos, len;    /* where it was written, for messages */
};

enum node_op { N_AND, N_OR, N_NOT, N_CMP, N_IN, N_RE, N_STRFN };

struct node {
	uint8_t op;           /* enum node_op */
	uint8_t cmp;          /* enum cmp (N_CMP), enum strfn (N_STRFN),
			       * 1 for !~ (N_RE) */
	uint32_t first;       /* N_AND/N_OR: first kid in t->kids; N_NOT: child;
			       * N_IN: first literal in t->lits; N_RE: the
			       * regular expression's number (lang_regex_fn) */
	uint32_t count;       /* N_AND/N_OR/N_IN: number of kids / literals */
	uint32_t pos;         /* byte of the operator (N_AND/N_OR: the first
			       * && or ||; N_STRFN: the function's name) */
	struct operand l, r;
};

/* A field naming a captured value, resolved once per probe. */
enum space { SP_ARG, SP_RET, SP_NAME };

struct slot {
	uint8_t space;        /* enum space */
	uint32_t n;           /* N of goargN / goretN (retval is goret1) */
	uint32_t name_off;    /* SP_NAME: NUL-terminated name in the pool */
};

/* A parsed expression; all arrays are owned (lang_tree_free()). */
struct lang_tree {
	char *expr;           /* the expression, NUL-terminated */
	bool field_only;      /* parsed as a lone field (`stats --by`) */
	struct operand field; /* field_only: the field */
	struct node *nodes;
	uint32_t nnodes, cap_nodes;
	uint32_t *kids;
	uint32_t nkids, cap_kids;
	struct operand *lits;
	uint32_t nlits, cap_lits;
	char *pool;           /* never NULL after a parse, even when empty */
	uint32_t npool, cap_pool;
	struct slot *slots;
	uint32_t nslots, cap_slots;
	uint32_t nregex;      /* regular expressions (N_RE nodes) */
	uint32_t root;        /* !field_only: the top node */
	bool has_time;        /* a time literal appears */
};

/*
 * Called for regular expression number `idx` (0, 1, ... in the order
 * written) with its decoded bytes pat[0, len) as soon as it is parsed.
 * Returns 0, or -1 with a message in msg[msglen] (no trailing period) and
 * *erroff the byte of pat where it went wrong (len or more: unknown).
 */
typedef int (*lang_regex_fn)(void *ctx, uint32_t idx, const char *pat,
			     size_t len, size_t *erroff, char *msg,
			     size_t msglen);

/*
 * Parses `expr` (spec/FILTER.md, "Grammar"; a lone field when
 * `field_only`) into *t, with the checks that need no probe (operand
 * kinds, literals, a time compared only with ts). `regex` (may be NULL:
 * any pattern is accepted) checks regular expressions. Returns 0, or -1
 * with *t empty and the 1-based byte column (0: none) and a message (lower
 * case, no trailing period) in *column and msg[msglen].
 */
int lang_parse(struct lang_tree *t, const char *expr, bool field_only,
	       lang_regex_fn regex, void *regex_ctx, unsigned *column,
	       char *msg, size_t msglen);

/*
 * Describes operand `o` of expression `expr` for a type error: a literal
 * by its kind ("an integer", "a number" for a float, "a string", "a
 * time"), any other operand by its text, shortened, and static type
 * ("'pid' (an integer)"). Returns a constant string or out[outlen].
 */
const char *lang_operand_desc(const char *expr, const struct operand *o,
			      char *out, size_t outlen);

/* Frees what *t holds and empties it (an empty tree is fine). */
void lang_tree_free(struct lang_tree *t);

/*
 * Writes the value slot `s` of `t` names as a recorder resolves it:
 * "goargN", "goretN" or the parameter name; returns out[n].
 */
const char *lang_slot_name(const struct lang_tree *t, uint32_t s, char *out,
			   size_t n);

#endif /* GOTRACE_LANG_H */
