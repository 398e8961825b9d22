/* SPDX-License-Identifier: MIT */
/*
 * Probe specifications as users write them, in bcc trace.py's syntax:
 *   [p:|r:][BINARY:]FUNCTION[(SIGNATURE) [RESULTS]] [(PREDICATE)] ["FORMAT"[,] [EXPR...]]
 *   [BINARY:]FILE.go:LINE[(EXPR, ...)] [(PREDICATE)] ["FORMAT"[,] [EXPR...]]
 * spec/PROBES.md is the grammar.
 */
#ifndef GOTRACE_PROBE_H
#define GOTRACE_PROBE_H

#include <stddef.h>
#include "gtr.h"

struct probe_spec {
	char *text;            /* the probe as written */
	enum gtr_kind kind;    /* p: (default) entry, r: return */
	char *binary;          /* NULL: the executable of CMD or PID */
	char *func;            /* Go symbol (may hold parens, stars, brackets) */
	char *file;            /* FILE of a FILE:LINE probe ("main.go", a path
				  suffix), NULL for a function */
	int line;              /* its LINE, from 1; 0 for a function */
	char *sig;             /* parameters of a signature written after the
				  name, "s string, n int"; NULL when none */
	char *results;         /* its results: "n int, err error" of
				  '... (n int, err error)', "error" of
				  '... error'; NULL when none given */
	char *predicate;       /* text inside (...), NULL when none */
	char *fmt;             /* format string, unescaped; NULL when none */
	int captures;          /* exprs came from FUNCTION(EXPR, ...) */
	int nexprs;
	char *exprs[GTR_MAX_ARGS];
};

/*
 * Parses `text` into *out (zeroed first; free with probe_spec_free()).
 * Returns 0, or -EINVAL with a message in err[errlen] that quotes the probe
 * and names the column where it went wrong ("bad probe 'TEXT': WHAT at
 * column N", N counted from 1), or -ENOMEM; on failure *out holds nothing
 * (probe_spec_free() on it is harmless).
 */
int probe_spec_parse(const char *text, struct probe_spec *out, char *err,
		     size_t errlen);

/* Frees the strings of *p (not p itself). */
void probe_spec_free(struct probe_spec *p);

#endif /* GOTRACE_PROBE_H */
