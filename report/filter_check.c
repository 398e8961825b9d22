/* SPDX-License-Identifier: MIT */
/*
 * The filter language of spec/FILTER.md checked before reading: the static
 * type check of lang/'s tree against the probes of a file, the binding of
 * wall-clock time literals to the recording's clock, and the user-facing
 * form of an error. filter.c evaluates; filter_compile.c parses.
 */
#include "filter_int.h"

/* ------------------------------------------------------------ type check */

/* The value slot `s` names in probe `pr`; NULL when the probe lacks it. */
static const struct gtr_arg *slot_arg(const struct filter *f, uint32_t s,
				      const struct gtr_probe *pr)
{
	const struct slot *sl = &f->t.slots[s];
	int i;

	if (sl->space == SP_ARG && pr->kind != GTR_KIND_ENTRY)
		return NULL;
	if (sl->space == SP_RET && pr->kind != GTR_KIND_RETURN)
		return NULL;
	i = sl->space == SP_NAME ? filter_arg_index(pr, f->t.pool + sl->name_off) : (int)sl->n - 1;
	if (i < 0 || (uint32_t)i >= pr->nargs)
		return NULL;
	return &pr->args[i];
}

/* Static type of slot `s` in probe `pr`; -1 when the probe lacks it. */
static int slot_type(const struct filter *f, uint32_t s, const struct gtr_probe *pr)
{
	const struct gtr_arg *arg = slot_arg(f, s, pr);

	if (!arg)
		return -1;
	switch (arg->type) {
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
	const struct slot *sl = &f->t.slots[s];

	if (sl->space == SP_NAME)
		snprintf(out, n, "an argument or result named '%s'", f->t.pool + sl->name_off);
	else
		snprintf(out, n, "a %s%u", sl->space == SP_ARG ? "goarg" : "goret", sl->n);
	return out;
}

/*
 * Fails when operand `a`, a captured value, has a type other than the
 * static type of `other`, the operand it meets (NULL: a condition that
 * takes a string, =~ or contains()), in every probe that has it. The
 * message names both sides; its column is `pos`'s.
 */
static void check_operand(const struct filter *f, const struct operand *a,
			  const struct operand *other, uint32_t pos,
			  const struct gtr_probe *const *probes, size_t nprobes,
			  struct filter_error *err)
{
	const uint8_t want = other ? other->ty : TY_STR;

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
		char desc[96];
		err->column = pos + 1;
		snprintf(err->msg, sizeof(err->msg),
			 "cannot compare '%.*s' (%s in %s%s) with %s",
			 (int)(a->len > 64 ? 64 : a->len), f->t.expr + a->pos,
			 found == TY_STR ? "a string" : "a number",
			 example ? example : "?",
			 have > 1 ? " and every other probe that has it" : "",
			 other ? lang_operand_desc(f->t.expr, other, desc, sizeof(desc))
			       : "a string");
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
	const char *tname = NULL;
	bool array = false;
	size_t have = 0, slices = 0;
	for (size_t k = 0; k < nprobes; k++) {
		const struct gtr_arg *arg = slot_arg(f, a->slot, probes[k]);
		if (!arg)
			continue;
		have++;
		if (arg->type != GTR_TYPE_SLICE)
			continue;
		slices++;
		if (!tname && arg->type_name && arg->type_name[0]) {
			tname = arg->type_name;
			array = arg->count > 0;
		}
	}
	if (!have || slices < have)
		return;
	const int n = (int)(a->len > 64 ? 64 : a->len);
	const char *name = f->t.expr + a->pos;
	err->column = a->pos + 1;
	if (tname)
		snprintf(err->msg, sizeof(err->msg),
			 "%.*s is %s (%.64s): only len(%.*s) applies", n, name,
			 array ? "an array" : "a slice",
			 tname, n, name);
	else
		snprintf(err->msg, sizeof(err->msg),
			 "%.*s is a slice: only len(%.*s) applies", n, name, n, name);
}

/*
 * len() of a field that is a number (an integer or a float) in every
 * probe that has it (its type from the file's probes; spec/FILTER.md
 * "Type errors"), as the parser refuses len(pid). Fails with the column
 * of the field.
 */
static void check_len(const struct filter *f, const struct operand *a,
		      const struct gtr_probe *const *probes, size_t nprobes,
		      struct filter_error *err)
{
	if (err->msg[0] || a->src != SRC_ARG || !a->len_of)
		return;
	const char *example = NULL;
	bool floats = false;
	size_t have = 0, ints = 0;
	for (size_t k = 0; k < nprobes; k++) {
		const int t = slot_type(f, a->slot, probes[k]);
		if (t < 0)
			continue;
		have++;
		if (t == TY_INT) {
			ints++;
			floats |= slot_arg(f, a->slot, probes[k])->type == GTR_TYPE_FLOAT;
			example = example ? example : probes[k]->func;
		}
	}
	if (!have || ints < have)
		return;
	/* the field inside "len( NAME )" */
	const char *e = f->t.expr, *name = memchr(e + a->pos, '(', a->len);
	uint32_t at = name ? (uint32_t)(name + 1 - e) : a->pos;
	while (at < a->pos + a->len && (e[at] == ' ' || e[at] == '\t'))
		at++;
	size_t n = strcspn(e + at, " \t)");
	err->column = at + 1;
	snprintf(err->msg, sizeof(err->msg),
		 "len() takes a string or slice field; '%.*s' is %s (in %s%s)",
		 (int)(n > 64 ? 64 : n), e + at, floats ? "a number" : "an integer",
		 example ? example : "?",
		 have > 1 ? " and every other probe that has it" : "");
}

int filter_check(const struct filter *f,
		 const struct gtr_probe *const *probes, size_t nprobes,
		 FILE *warn, struct filter_error *err)
{
	memset(err, 0, sizeof(*err));
	if (!nprobes)
		return 0;
	if (f->t.field_only) {
		check_not_slice(f, &f->t.field, probes, nprobes, err);
		check_len(f, &f->t.field, probes, nprobes, err);
	}
	for (uint32_t i = 0; i < f->t.nnodes && !err->msg[0]; i++) {
		const struct node *n = &f->t.nodes[i];
		/* a slice's operand comes first: its message says what applies */
		check_not_slice(f, &n->l, probes, nprobes, err);
		check_len(f, &n->l, probes, nprobes, err);
		if (n->op == N_CMP) {
			check_not_slice(f, &n->r, probes, nprobes, err);
			check_len(f, &n->r, probes, nprobes, err);
		}
		if (err->msg[0])
			break;
		switch (n->op) {
		case N_CMP:
			if (!n->l.len_of)
				check_operand(f, &n->l, &n->r, n->pos, probes, nprobes, err);
			if (!n->r.len_of)
				check_operand(f, &n->r, &n->l, n->pos, probes, nprobes, err);
			break;
		case N_IN:
			if (n->count && !n->l.len_of)
				check_operand(f, &n->l, &f->t.lits[n->first], n->pos, probes, nprobes, err);
			break;
		case N_RE:
		case N_STRFN:
			check_operand(f, &n->l, NULL, n->pos, probes, nprobes, err);
			break;
		}
	}
	if (err->msg[0])
		return -1;
	for (uint32_t s = 0; warn && s < f->t.nslots; s++) {
		size_t have = 0;
		char what[160];
		for (size_t k = 0; k < nprobes; k++)
			have += slot_type(f, s, probes[k]) >= 0;
		if (!have) {
			const struct slot *sl = &f->t.slots[s];
			const char *nm = sl->space == SP_NAME ? f->t.pool + sl->name_off : "";

			fprintf(warn, "gotrace-report: warning: no probe in the file so far has %s; %s",
				slot_name(f, s, what, sizeof(what)),
				f->t.field_only ? "every event falls in its \"-\" group"
					      : "comparisons with it are false");
			/* nil is no literal: what a nil value reads as */
			if (!f->t.field_only && !strcmp(nm, "nil"))
				fprintf(warn, " (nil is not a literal: a nil interface "
					"or error reads as the string \"<nil>\", e.g. "
					"goret2 != \"<nil>\", and a nil pointer, map or "
					"chan as 0)");
			/* main.add unquoted reads as a value's name */
			for (size_t k = 0; !f->t.field_only && *nm && k < nprobes; k++)
				if (probes[k]->func && !strcmp(probes[k]->func, nm)) {
					fprintf(warn, " (a function's name is a string: "
						"func == \"%s\")", nm);
					break;
				}
			fputc('\n', warn);
		}
	}
	return 0;
}

int filter_set_clock(struct filter *f, const struct gtr_host *h,
		     struct filter_error *err)
{
	memset(err, 0, sizeof(*err));
	for (uint32_t i = 0; i < f->t.nnodes; i++) {
		struct node *n = &f->t.nodes[i];
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

