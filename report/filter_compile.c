/* SPDX-License-Identifier: MIT */
/*
 * Compiling a filter of `gotrace-report -f` or `stats --by`: lang/ parses
 * the expression; here its regular expressions are compiled (PCRE2) and
 * what the filter reads of an event is noted (filter_uses()).
 */
#include "filter_int.h"

#include <stdio.h>

/* lang_regex_fn: compiles regular expression `idx` into f->res[idx]. */
static int compile_regex(void *ctx, uint32_t idx, const char *pat, size_t len,
			 size_t *erroff, char *msg, size_t msglen)
{
	struct filter *f = ctx;
	int ec;
	PCRE2_SIZE eo = 0;

	pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, len,
					 PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
	if (!code) {
		PCRE2_UCHAR why[160];

		pcre2_get_error_message(ec, why, sizeof(why));
		snprintf(msg, msglen, "bad regular expression: %s", (const char *)why);
		*erroff = eo;
		return -1;
	}
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); /* optional: falls back */
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
	if (!md) {
		pcre2_code_free(code);
		snprintf(msg, msglen, "out of memory for a regular expression");
		*erroff = SIZE_MAX;
		return -1;
	}
	/* lang/ numbers them 0, 1, ... as it meets them */
	f->res = xrealloc(f->res, (size_t)(idx + 1) * sizeof(*f->res), "filter");
	f->res[idx].code = code;
	f->res[idx].md = md;
	f->nres = idx + 1;
	return 0;
}

/* FILTER_USES_* of operand `o`. */
static unsigned operand_uses(const struct operand *o)
{
	switch (o->src) {
	case SRC_COMM: return FILTER_USES_COMM;
	case SRC_LATENCY: return FILTER_USES_LATENCY;
	case SRC_BINARY: return FILTER_USES_BINARY;
	case SRC_ARG: return FILTER_USES_VALUES;
	default: return 0;
	}
}

static struct filter *compile(const char *expr, struct filter_error *err,
			      bool field_only)
{
	struct filter *f = xrealloc(NULL, sizeof(*f), "filter");

	memset(f, 0, sizeof(*f));
	memset(err, 0, sizeof(*err));
	if (lang_parse(&f->t, expr, field_only, compile_regex, f, &err->column,
		       err->msg, sizeof(err->msg))) {
		filter_free(f);
		return NULL;
	}
	f->uses = operand_uses(&f->t.field);
	for (uint32_t i = 0; !field_only && i < f->t.nnodes; i++)
		f->uses |= operand_uses(&f->t.nodes[i].l) | operand_uses(&f->t.nodes[i].r);
	f->scratch = xrealloc(NULL, (f->t.nslots + 1) * sizeof(*f->scratch), "filter");
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
	return f->t.expr;
}

unsigned filter_uses(const struct filter *f)
{
	return f ? f->uses : 0;
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
	lang_tree_free(&f->t);
	free(f->ents);
	free(f->rtab);
	u64map_free(&f->ent_ix);
	free(f->scratch);
	free(f);
}
