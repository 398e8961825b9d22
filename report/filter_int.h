/* SPDX-License-Identifier: MIT */
/*
 * What the parts of report/filter share (the lexer, filter_lex.c; the
 * parser, filter_parse.c; the type check and evaluator, filter.c): the
 * compiled tree, the tokens and the parser state.
 */
#ifndef REPORT_FILTER_INT_H
#define REPORT_FILTER_INT_H

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

/* Appends p[0, n) (and a NUL when `nul`) to the byte pool; its offset. */
uint32_t pool_add(struct filter *f, const void *p, size_t n, bool nul);

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

#endif /* REPORT_FILTER_INT_H */
