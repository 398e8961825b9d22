// SPDX-License-Identifier: MIT
/*
 * The values of a probe and their BPF fetches: expressions resolved to
 * values (goargN, names, $ptr, field paths), record-time predicates, and
 * each located value turned into a struct gt_fetch, and the values a
 * prepared probe keeps, shared with the probes of the same values; see
 * plan_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"
#include "pred.h"
#include "xalloc.h"

_Static_assert(GT_MAX_FETCH <= 32, "probe.path holds a bit per value");

/*
 * Finds the value an expression names: goargN (entry probes), goretN or
 * retval (return probes; retval = goret1), or a parameter/result name.
 */
static int resolve_expr(const struct probe *p, const char *expr)
{
	const char *pfx = p->spec.kind == GTR_KIND_RETURN ? "goret" : "goarg";
	char *end;
	int i;

	if (p->spec.kind == GTR_KIND_RETURN && !strcmp(expr, "retval"))
		return p->nargs ? 0 : -ERANGE;
	if (!strncmp(expr, pfx, 5) && expr[5]) {
		long n = strtol(expr + 5, &end, 10);

		if (!*end && n >= 1 && n <= p->nargs)
			return n - 1;
		if (!*end)
			return -ERANGE;
	}
	for (i = 0; i < p->nargs; i++)
		if (p->args[i].name[0] && !strcmp(p->args[i].name, expr))
			return i;
	/* a field of a struct captured whole (add_struct_values) */
	for (i = p->nargs; strchr(expr, '.') && i < (int)p->meta.nargs; i++)
		if (!strcmp(p->args[i].name, expr))
			return i;
	return -ENOENT;
}

static int resolve_cb(void *ctx, const char *name)
{
	return resolve_expr(ctx, name);
}

static void print_arg_names(const struct probe *p)
{
	int i;

	for (i = 0; i < p->nargs; i++)
		fprintf(stderr, "%s%s", i ? ", " : "",
			p->args[i].name[0] ? p->args[i].name : "?");
	if (!p->nargs)
		fprintf(stderr, "no parameters");
}

/* Bytes of a word in the memory of p's program (struct gt_plan
 * word_size): its architecture's pointer size, 8 or 4 (i386). */
static uint8_t word_of(const struct probe *p)
{
	return gobin_arch_info(p->bin->gb)->ptrsize == 4 ? 4 : 8;
}

/* Appends to p a value of one word, gtr type `t`, read from piece `pc`
 * of interface `s`: named NAME+suffix (NAME.__object), or, `iface` set
 * (struct gobin_arg's), "type(NAME)", the dynamic type it names. */
static void add_word_value(struct probe *p, const struct gobin_arg *s, uint32_t pc,
			   const char *suffix, enum gtr_type t, uint8_t iface)
{
	const uint32_t k = p->meta.nargs++;
	struct gobin_arg *a = &p->args[k];

	memset(a, 0, sizeof(*a));
	if (iface)
		snprintf(a->name, sizeof(a->name), "type(%.100s)", s->name);
	else
		snprintf(a->name, sizeof(a->name), "%.100s%s", s->name, suffix);
	snprintf(a->type_name, sizeof(a->type_name), "%s", iface ? s->type_name : "");
	a->type = t;
	a->size = 8;
	a->iface = iface;
	a->npieces = 1;
	a->pieces[0] = s->pieces[s->in_memory ? 0 : pc];
	a->in_memory = s->in_memory;     /* word pc of it, in memory */
	a->mem_off = s->in_memory ? s->mem_off + (int32_t)(word_of(p) * pc) : 0;
	p->meta.args[k].name = a->name;
	p->meta.args[k].type_name = a->type_name;
	p->meta.args[k].type = a->type;
	p->meta.args[k].size = a->size;
}

/*
 * Adds, after the other values, gccgo's interface values (parameters and
 * results) in two words, as a struct captured whole (its fields
 * NAME.__methods or NAME.__type_descriptor, and NAME.__object: the data
 * pointer, 0 when nil) and, as "type(NAME)", its dynamic type's name from
 * the descriptor (the methods table's first word, or the first word),
 * "<nil>" when nil. Returns a bit per value so added (by index).
 */
static uint32_t add_gccgo_iface_values(struct probe *p)
{
	uint32_t done = 0;

	for (int i = 0; i < p->nargs && i < (int)p->meta.nargs; i++) {
		const struct gobin_arg *s = &p->args[i];

		const bool regs = s->npieces == 2 && s->pieces[0].size == 8 &&
				  s->pieces[1].size == 8 && fetch_readable(&s->pieces[0]) &&
				  fetch_readable(&s->pieces[1]);
		const bool mem = s->in_memory && s->npieces == 1 && s->size == 16 &&
				 fetch_readable(&s->pieces[0]);

		if (!s->gccgo_iface || !(regs || mem) || !s->name[0] ||
		    p->meta.nargs + 3 > GT_MAX_FETCH)
			continue;
		done |= 1u << i;
		add_word_value(p, s, 0, s->gccgo_iface == GOBIN_GCCGO_METHODS ?
			       ".__methods" : ".__type_descriptor", GTR_TYPE_PTR, 0);
		add_word_value(p, s, 1, ".__object", GTR_TYPE_PTR, 0);
		add_word_value(p, s, 0, "", GTR_TYPE_IFACE,
			       s->gccgo_iface == GOBIN_GCCGO_METHODS ?
			       GOBIN_GCCGO_METHODS : 2);
	}
	return done;
}

/*
 * Adds, after the parameters, the capacity of each slice parameter as a
 * value named "cap(NAME)" (its length is the slice value's own length);
 * one whose cap DWARF places nowhere (an optimized build's line probe)
 * is added unavailable beside the slice it shows.
 */
static void add_cap_values(struct probe *p)
{
	uint32_t i, n = p->meta.nargs;

	for (i = 0; i < n && p->meta.nargs < GT_MAX_FETCH; i++) {
		const struct gobin_arg *s = &p->args[i];
		struct gobin_arg *a;
		uint32_t k;

		const bool mem = s->in_memory && fetch_readable(&s->pieces[0]);

		if ((s->type != GTR_TYPE_SLICE && s->type != GTR_TYPE_BYTES) ||
		    (!mem && (s->npieces != 3 || !(fetch_readable(&s->pieces[2]) ||
		     (s->pieces[2].kind == GOBIN_LOC_NONE && fetch_readable(&s->pieces[0]) &&
		      fetch_readable(&s->pieces[1]))))))
			continue;
		k = p->meta.nargs++;
		a = &p->args[k];
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "cap(%.*s)",
			 (int)sizeof(a->name) - 6, s->name[0] ? s->name : "?");
		snprintf(a->type_name, sizeof(a->type_name), "int");
		a->type = GTR_TYPE_INT;
		a->size = word_of(p);   /* Go's int: a word */
		a->npieces = 1;
		a->pieces[0] = s->pieces[mem ? 0 : 2];
		a->in_memory = mem;   /* the slice's third word, in memory */
		a->mem_off = mem ? s->mem_off + 2 * (int32_t)word_of(p) : 0;
		p->meta.args[k].name = a->name;
		p->meta.args[k].type_name = a->type_name;
		p->meta.args[k].type = a->type;
		p->meta.args[k].size = a->size;
	}
}

/*
 * Adds the value of "$ptr(E, SIZE)": SIZE bytes of memory at the address
 * that value E (goargN or a name) holds. Returns its index, -ENOENT when
 * E is unknown, or -EINVAL after printing why.
 */
static int add_ptr_value(struct probe *p, const char *x)
{
	char inner[128];
	const char *comma = strrchr(x, ',');
	size_t len = strlen(x), n;
	struct gobin_arg *a;
	unsigned long size;
	char *end;
	int root, k;

	if (!comma || x[len - 1] != ')' || (n = comma - (x + 5)) >= sizeof(inner)) {
		fprintf(stderr, "gotrace-record: probe '%s': bad '%s'; write "
			"$ptr(EXPR, SIZE), e.g. $ptr(goarg1, 16)\n",
			p->spec.text, x);
		return -EINVAL;
	}
	memcpy(inner, x + 5, n);
	inner[n] = '\0';
	while (n && inner[n - 1] == ' ')
		inner[--n] = '\0';
	errno = 0;
	size = strtoul(comma + 1, &end, 0);
	while (*end == ' ')
		end++;
	if (errno || *end != ')' || !size || size > GT_STR_MAX) {
		fprintf(stderr, "gotrace-record: probe '%s': bad size in '%s'; "
			"give 1 to %d bytes\n", p->spec.text, x, GT_STR_MAX);
		return -EINVAL;
	}
	root = resolve_expr(p, inner + strspn(inner, " "));
	if (root < 0)
		return -ENOENT;
	if (p->meta.nargs >= GT_MAX_FETCH) {
		fprintf(stderr, "gotrace-record: probe '%s': too many values "
			"(at most %d)\n", p->spec.text, GT_MAX_FETCH);
		return -EINVAL;
	}
	if (!p->args[root].npieces || !fetch_readable(&p->args[root].pieces[0])) {
		fprintf(stderr, "gotrace-record: probe '%s': '%s' is not "
			"readable, so '%s' cannot follow it\n", p->spec.text,
			inner, x);
		return -EINVAL;
	}
	k = p->meta.nargs++;
	a = &p->args[k];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", x);
	snprintf(a->type_name, sizeof(a->type_name), "[%lu]byte", size);
	a->type = GTR_TYPE_BYTES;
	a->size = size;
	a->npieces = 1;
	a->pieces[0] = p->args[root].pieces[0];
	p->meta.args[k].name = a->name;
	p->meta.args[k].type_name = a->type_name;
	p->meta.args[k].type = a->type;
	p->meta.args[k].size = a->size;
	return k;
}

/*
 * Where the root word of a field path is: the parameter's first word, or,
 * for a struct passed by value, its field at gp->slot (registers) or
 * gp->value_off (stack). For a direct string field, *w1 is its length
 * word. Returns 0, or -1 when the registers cannot be placed.
 */
static int path_root(const struct probe *p, const struct gobin_arg *arg,
		     const struct gobin_path *gp, struct gobin_piece *w0,
		     struct gobin_piece *w1)
{
	const uint8_t word = word_of(p);
	/* a direct scalar is read at its size; a string's words, or the
	 * pointer followed, at the binary's word */
	uint8_t size = gp->direct && gp->size < word ? gp->size : word;

	if (gp->direct && gp->size <= 8 && gp->type != GTR_TYPE_STRING &&
	    gp->type != GTR_TYPE_BYTES)
		size = gp->size;
	*w0 = arg->pieces[0];
	memset(w1, 0, sizeof(*w1));
	if (!gp->value_root)
		return 0;
	if (arg->pieces[0].kind == GOBIN_LOC_STACK) {
		w0->offset = arg->pieces[0].offset + gp->value_off;
		w0->size = size;
		*w1 = *w0;
		w1->offset += word;
		w1->size = word;
		return 0;
	}
	if (gp->slot < 0 || (uint32_t)gp->slot >= arg->npieces ||
	    arg->pieces[gp->slot].kind != GOBIN_LOC_REG ||
	    !fetch_readable(&arg->pieces[gp->slot]))
		return -1;
	*w0 = arg->pieces[gp->slot];
	w0->size = size;
	if ((uint32_t)gp->slot + 1 < arg->npieces)
		*w1 = arg->pieces[gp->slot + 1];
	return 0;
}

/*
 * The function whose parameters p captures: at an inlined copy the
 * function inlined there (its DWARF found by name), not the one whose
 * body holds the copy; else p->fn.
 */
static struct gobin_func values_fn(const struct probe *p)
{
	if (p->at_site && p->site.inlined)
		return (struct gobin_func){ .name = p->site.func };
	return p->fn;
}

/*
 * Resolves field path x of p: through DWARF, else, without it, through
 * the runtime type descriptors from the type its signature gives the
 * root parameter. 0, or a negative errno with why in why[whylen].
 */
static int field_path(const struct probe *p, const char *x,
		      struct gobin_path *gp, char *why, size_t whylen)
{
	const struct gobin_func fn = values_fn(p);
	char root[GOBIN_PATH_LEN];
	int r = gobin_field_path(p->bin->gb, &fn, x, gp, why, whylen), k;

	if (r != -ENODATA || !p->spec.sig)
		return r;
	snprintf(root, sizeof(root), "%.*s", (int)strcspn(x, "."), x);
	k = resolve_expr(p, root);
	if (k < 0 || !p->args[k].type_name[0])
		return r;
	return gobin_field_path_td(p->bin->gb, p->args[k].type_name, x, gp,
				   why, whylen);
}


/* The size of value `a` as its metadata `m` says it: one element's for a
 * slice or array, with their element type and an array's length. */
static void meta_slice(struct gtr_arg *m, const struct gobin_arg *a)
{
	const bool sl = a->type == GTR_TYPE_SLICE;

	m->size = sl ? a->elem_size : a->size;
	m->elem = sl && a->elem ? a->elem : "";
	m->count = sl && a->array ? a->array_len : 0;
}

/*
 * Adds the value of a field path such as "r.URL.Path" (DWARF types; the
 * root is a pointer parameter or a struct passed by value); at an
 * inlined copy that keeps its root nowhere, the value is unavailable
 * there, as is, with `whole` (a struct captured whole), a field in a
 * float register (else refused). Returns its index, or -EINVAL with why
 * in why[whylen].
 */
static int path_value(struct probe *p, const char *x, bool whole, char *why,
		      size_t whylen)
{
	struct gobin_path gp;
	struct gt_fetch *f;
	struct gobin_arg *a;
	bool nowhere, fpreg = false;
	int root, k;

	if (field_path(p, x, &gp, why, whylen))
		return -EINVAL;
	root = resolve_expr(p, gp.root);
	if (root >= 0 && p->args[root].in_memory) {
		snprintf(why, whylen, "'%s' is returned in memory (gccgo), where "
			 "gotrace does not follow a field path yet; capture '%s' "
			 "whole", gp.root, gp.root);
		return -EINVAL;
	}
	nowhere = root < 0 || !p->args[root].npieces;
	if (!nowhere && gp.value_root && gp.slot >= 0 &&
	    (uint32_t)gp.slot < p->args[root].npieces &&
	    p->args[root].pieces[gp.slot].kind == GOBIN_LOC_REG) {
		/* a field of a struct in registers: its own register */
		const struct gobin_piece *pc = &p->args[root].pieces[gp.slot];

		fpreg = !fetch_readable(pc);
		if (fpreg && !whole) {
			char reg[32];

			snprintf(why, whylen, "'%s' is in a float register (%s), "
				 "which a uprobe does not see (pt_regs holds no "
				 "float state)", x, gobin_piece_str(pc, reg, sizeof(reg)));
			return -EINVAL;
		}
	} else if (!nowhere) {
		nowhere = !fetch_readable(&p->args[root].pieces[0]);
	}
	if (nowhere && (root < 0 || !p->at_site || !p->site.inlined)) {
		snprintf(why, whylen, "'%s' is not readable, so '%s' cannot "
			 "follow it", gp.root, x);
		return -EINVAL;
	}
	if (gp.type == GTR_TYPE_OTHER) {
		snprintf(why, whylen, "'%s' is a %s, which gotrace does not "
			 "capture; name one of its fields, or use $ptr(EXPR, "
			 "SIZE)", x, gp.type_name[0] ? gp.type_name :
			 "value of unknown type");
		return -EINVAL;
	}
	if (p->meta.nargs >= GT_MAX_FETCH) {
		snprintf(why, whylen, "too many values (at most %d)", GT_MAX_FETCH);
		return -EINVAL;
	}
	{
		struct gobin_piece w0 = { .kind = GOBIN_LOC_NONE }, w1 = w0;

		if (!nowhere && !fpreg && path_root(p, &p->args[root], &gp, &w0, &w1)) {
			snprintf(why, whylen, "the fields of '%s' are spread "
				 "over registers gotrace cannot place; use a "
				 "pointer parameter or $ptr()", gp.root);
			return -EINVAL;
		}
		k = p->meta.nargs++;
		a = &p->args[k];
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "%s", x);
		snprintf(a->type_name, sizeof(a->type_name), "%s", gp.type_name);
		a->type = gp.type;
		a->size = gp.size;
		a->elem_size = gp.elem_size;
		a->elem = gp.elem;
		a->array = gp.array;
		a->array_len = gp.array && gp.elem_size ? gp.size / gp.elem_size : 0;
		a->npieces = 1;
		a->pieces[0] = fpreg ? p->args[root].pieces[gp.slot] : w0;

		f = &p->plan.fetch[k];   /* kept by plan_fetches() */
		memset(f, 0, sizeof(*f));   /* GT_OP_NONE: unavailable */
		if (!nowhere && !fpreg)
			fetch_of_path(f, &gp, &w0, &w1);
		p->path |= 1u << k;
	}

	p->meta.args[k].name = a->name;
	p->meta.args[k].type_name = a->type_name;
	p->meta.args[k].type = a->type;
	meta_slice(&p->meta.args[k], a);
	return k;
}

/* path_value(), saying why it failed: the index, or -EINVAL. */
static int add_path_value(struct probe *p, const char *x)
{
	char why[512];
	const int k = path_value(p, x, false, why, sizeof(why));

	if (k < 0)
		fprintf(stderr, "gotrace-record: probe '%s': %s\n", p->spec.text, why);
	return k;
}

/*
 * Adds, after the other values, the fields of each struct parameter
 * passed by value (gobin_struct_fields: at most GOBIN_STRUCT_FIELDS of
 * them, as values named NAME.FIELD), so that the struct is captured
 * whole; a field in a float register is there, unavailable; a struct
 * whose fields do not all fit, or cannot all be placed, stays
 * unavailable; those of `done` (a bit per value) are already.
 */
static void add_struct_values(struct probe *p, uint32_t done)
{
	const struct gobin_func fn = values_fn(p);
	char paths[GOBIN_STRUCT_FIELDS][GOBIN_PATH_LEN], why[512];

	for (int i = 0; i < p->nargs && i < (int)p->meta.nargs; i++) {
		const uint32_t first = p->meta.nargs;
		bool some = false;   /* a piece is read: not nowhere */
		int n, k;

		for (uint32_t j = 0; j < p->args[i].npieces; j++)
			some |= fetch_readable(&p->args[i].pieces[j]);
		if (p->args[i].type != GTR_TYPE_OTHER || !p->args[i].name[0] ||
		    p->args[i].iface || !some || (done & 1u << i))
			continue;
		n = gobin_struct_fields(p->bin->gb, &fn, p->args[i].name,
					paths, GOBIN_STRUCT_FIELDS);
		if (n == -ENODATA && p->spec.sig && p->args[i].type_name[0])
			/* a named struct a signature gives, from the
			 * runtime type descriptors */
			n = gobin_struct_fields_td(p->bin->gb, p->args[i].type_name,
						   p->args[i].name, paths,
						   GOBIN_STRUCT_FIELDS);
		if (n <= 0 || n > GOBIN_STRUCT_FIELDS ||
		    first + (uint32_t)n > GT_MAX_FETCH)
			continue;
		for (k = 0; k < n && path_value(p, paths[k], true, why, sizeof(why)) >= 0; k++)
			;
		if (k < n) {
			/* all or nothing: take back the fields added */
			p->path &= (1u << first) - 1;
			memset(&p->plan.fetch[first], 0,
			       (p->meta.nargs - first) * sizeof(p->plan.fetch[0]));
			p->meta.nargs = first;
		}
	}
}

/* Parameters (or results) of a function beyond what p->args holds. */
#define ALL_VALUES_MAX 256

/*
 * Says which of the n values located for `p` (p->args) are left out, n
 * being more than the GT_MAX_FETCH a probe captures. When n fills
 * p->args (GTR_MAX_ARGS), the function's DWARF is read again for the
 * values beyond it, so the count and names said are the function's own.
 */
static void say_left_out(const struct probe *p, int n)
{
	const char *pre = p->spec.kind == GTR_KIND_RETURN ? "goret" : "goarg";
	const struct gobin_arg *args = p->args;
	struct gobin_arg *all = NULL;

	if (n >= GTR_MAX_ARGS && !p->at_site && !strcmp(p->args_source, "DWARF")) {
		int m;

		all = xcalloc(ALL_VALUES_MAX, sizeof(*all), "values");
		m = p->spec.kind == GTR_KIND_RETURN
			? gobin_func_results(p->bin->gb, &p->fn, all, ALL_VALUES_MAX)
			: gobin_func_args(p->bin->gb, &p->fn, all, ALL_VALUES_MAX);
		if (m > n) {
			n = m;
			args = all;
		}
	}
	fprintf(stderr, "gotrace-record: probe '%s': %s has %d%s %s; a probe "
		"captures %d values, so ", p->spec.text, values_fn(p).name, n,
		n >= ALL_VALUES_MAX ? " or more" : "",
		p->spec.kind == GTR_KIND_RETURN ? "results" : "parameters",
		GT_MAX_FETCH);
	for (int i = GT_MAX_FETCH; i < n; i++)
		fprintf(stderr, "%s%s", i > GT_MAX_FETCH ? ", " : "",
			args[i].name[0] ? args[i].name : "_");
	if (n - GT_MAX_FETCH > 1)
		fprintf(stderr, " (%s%d..%s%d) are not captured\n", pre,
			GT_MAX_FETCH + 1, pre, n);
	else
		fprintf(stderr, " (%s%d) is not captured\n", pre, n);
	free(all);
}

void plan_values(struct probe *p, int n)
{
	int i;

	if (n > GT_MAX_FETCH)
		say_left_out(p, n);
	p->meta.nargs = n > GT_MAX_FETCH ? GT_MAX_FETCH : n;
	for (i = 0; i < (int)p->meta.nargs; i++) {
		struct gobin_arg *ga = &p->args[i];

		/* An interface is recorded as its dynamic type's name; the
		 * index of names is built now, not at the first event. */
		if (ga->iface && ga->npieces >= 1) {
			ga->type = GTR_TYPE_IFACE;
			(void)gobin_type_name_at(p->bin->gb, 0);
		}
		/* DWARF names []byte "[]uint8": captured as bytes (its
		 * pieces, or in memory: in_memory) */
		if (ga->type == GTR_TYPE_OTHER && (ga->npieces >= 2 || ga->in_memory) &&
		    (!strcmp(ga->type_name, "[]uint8") ||
		     !strcmp(ga->type_name, "[]byte")))
			ga->type = GTR_TYPE_BYTES;
		else if (ga->type == GTR_TYPE_OTHER && (ga->npieces == 3 || ga->in_memory) &&
			 !strncmp(ga->type_name, "[]", 2))
			ga->type = GTR_TYPE_SLICE;
		else if (ga->type == GTR_TYPE_OTHER && gobin_arg_array(ga)) {
			ga->type = GTR_TYPE_SLICE;   /* its elements' bytes */
			ga->array = true;
		}
		p->meta.args[i].name = p->args[i].name;
		p->meta.args[i].type_name = p->args[i].type_name;
		p->meta.args[i].type = p->args[i].type;
		meta_slice(&p->meta.args[i], &p->args[i]);
	}
	add_cap_values(p);
	add_struct_values(p, add_gccgo_iface_values(p));
}

/* Says that expression `x` of `p` names no value, and which there are. */
static void unknown_expr(const struct probe *p, const char *x)
{
	const int ret = p->spec.kind == GTR_KIND_RETURN;
	const char *pre = ret ? "goret" : "goarg";
	char range[48];

	if (p->nargs > 1)
		snprintf(range, sizeof(range), "%s1..%s%d, ", pre, pre, p->nargs);
	else if (p->nargs == 1)
		snprintf(range, sizeof(range), "%s1, ", pre);
	else
		range[0] = 0;
	fprintf(stderr, "gotrace-record: probe '%s': unknown "
		"expression '%s'; use %s%sa %s name, a field path "
		"(NAME.FIELD) or $ptr(EXPR, SIZE) (%s has: ", p->spec.text, x,
		range, ret ? "retval, " : "", ret ? "result" : "parameter",
		values_fn(p).name);
	print_arg_names(p);
	fprintf(stderr, ")\n");
}

int plan_exprs(struct probe *p)
{
	const int ret = p->spec.kind == GTR_KIND_RETURN;
	int i;

	for (i = 0; i < p->spec.nexprs; i++) {
		const char *x = p->spec.exprs[i];
		int a = resolve_expr(p, x);

		if (a == -ENOENT && !strncmp(x, "$ptr(", 5))
			a = add_ptr_value(p, x);
		else if (a == -ENOENT && strchr(x, '.') && !ret)
			a = add_path_value(p, x);
		if (a == -EINVAL)
			return -1;    /* add_ptr_value said why */
		if (a >= (int)p->meta.nargs && a < p->nargs) {
			fprintf(stderr, "gotrace-record: probe '%s': '%s' is "
				"value %d of %s, and a probe captures the first "
				"%d only\n", p->spec.text, x, a + 1, values_fn(p).name,
				GT_MAX_FETCH);
			return -1;
		}
		if (a < 0 || a >= (int)p->meta.nargs) {
			unknown_expr(p, x);
			return -1;
		}
		p->meta.exprs[p->meta.nexprs++] = a;
	}
	if (p->spec.captures) {
		/* FUNCTION(EXPR, ...): print just those values, as %v. */
		const size_t len = GTR_MAX_ARGS * 4;
		size_t k, n = 0;

		p->capfmt = malloc(len);
		if (!p->capfmt)
			return -1;
		p->capfmt[0] = '\0';
		for (k = 0; k < p->meta.nexprs && n + 4 < len; k++)
			n += snprintf(p->capfmt + n, len - n, "%s%%v", k ? " " : "");
		p->meta.fmt = p->capfmt;
	}
	return 0;
}

/*
 * Decides the predicates of `p` on values GCC folded to a constant
 * (gobin_arg_folded_recorded()): the BPF program reads such a slot as
 * unavailable, which fails a comparison, while events record the
 * constant. A comparison that holds for it is dropped; one that cannot
 * hold would record nothing, and is refused. 0, or -1 after printing why.
 */
static int fold_preds(struct probe *p)
{
	uint32_t k, n = 0;

	for (k = 0; k < p->plan.npred; k++) {
		const struct gt_pred *c = &p->plan.pred[k];
		const struct gobin_arg *a = c->slot < p->meta.nargs ? &p->args[c->slot] : NULL;
		uint64_t v;

		if (!a || p->plan.fetch[c->slot].op != GT_OP_NONE ||
		    !gobin_arg_folded_recorded(a)) {
			p->plan.pred[n++] = *c;
			continue;
		}
		v = a->type == GTR_TYPE_BOOL ? a->folded_value != 0 : (uint64_t)a->folded_value;
		if (!gt_pred_holds(c, v)) {
			fprintf(stderr, "gotrace-record: probe '%s': the predicate cannot "
				"hold: %s is the constant %lld in %s, a GCC clone\n",
				p->spec.text, a->name, (long long)a->folded_value,
				p->fn.name);
			return -1;
		}
	}
	p->plan.npred = n;
	return 0;
}

int plan_fetches(struct probe *p, uint32_t id, const struct plan_opts *o)
{
	int i;

	p->plan.probe_id = id;
	p->plan.kind = p->spec.kind;
	p->plan.nfetch = p->meta.nargs;
	p->plan.str_max = o->str_max;
	p->plan.word_size = word_of(p);
	p->plan.npred = 0;
	p->plan.flags = 0;
	/* the fetches of field paths are in place (path_value) */
	for (i = 0; i < GT_MAX_FETCH; i++) {
		if (i >= (int)p->plan.nfetch)
			memset(&p->plan.fetch[i], 0, sizeof(p->plan.fetch[i]));
		else if (!(p->path & 1u << i))
			fetch_of_value(&p->plan.fetch[i], &p->args[i], word_of(p));
	}
	if (p->spec.predicate) {
		enum gtr_type types[GTR_MAX_ARGS];
		char err[1024];
		int n;

		/* an array's slot is its bytes: nothing to compare in BPF */
		for (i = 0; i < (int)p->meta.nargs; i++)
			types[i] = p->args[i].array ? GTR_TYPE_OTHER : p->args[i].type;
		n = pred_compile(p->spec.predicate, resolve_cb, p, types,
				 p->meta.nargs, p->plan.pred, GT_MAX_PRED, err,
				 sizeof(err));
		if (n < 0) {
			fprintf(stderr, "gotrace-record: probe '%s': %s\n",
				p->spec.text, err);
			return -1;
		}
		p->plan.npred = n;
		if (fold_preds(p))
			return -1;
	}
	p->plan.rate = o->rate;
	if (o->stack)
		p->plan.flags |= GT_P_STACK;
	return 0;
}

/* An array of values that prepared probes share (plan.argsets). */
struct argset {
	uint32_t n;
	struct gobin_arg a[];
};

/*
 * Rewrites value `a` with every byte that is not part of it zero (the
 * rest of its name, padding), so that equal values are equal in memory;
 * returns a hash of it.
 */
static uint64_t arg_normalize(struct gobin_arg *a)
{
	struct gobin_arg t;
	uint64_t h;

	memset(&t, 0, sizeof(t));
	strcpy(t.name, a->name);
	strcpy(t.type_name, a->type_name);
	t.type = a->type;
	t.size = a->size;
	t.npieces = a->npieces < GOBIN_MAX_PIECES ? a->npieces : GOBIN_MAX_PIECES;
	for (uint32_t k = 0; k < t.npieces; k++) {
		t.pieces[k].kind = a->pieces[k].kind;
		t.pieces[k].mreg = a->pieces[k].mreg;
		t.pieces[k].offset = a->pieces[k].offset;
		t.pieces[k].size = a->pieces[k].size;
	}
	t.iface = a->iface;
	t.elem_size = a->elem_size;
	t.elem = a->elem;   /* a static string (gobin_elem_of()) */
	t.array_len = a->array_len;
	t.array = a->array;
	t.folded = a->folded;
	t.folded_value = a->folded ? a->folded_value : 0;
	t.in_memory = a->in_memory;
	t.mem_off = a->in_memory ? a->mem_off : 0;
	memcpy(a, &t, sizeof(t));
	h = u64map_hash_str(t.name, t.type);
	h = u64map_hash_str(t.type_name, h ^ t.size);
	h = u64map_hash_mem(t.pieces, t.npieces * sizeof(t.pieces[0]), h ^ t.npieces);
	h = u64map_hash2(h, t.folded ? (uint64_t)t.folded_value ^ 1ull << 63 : 0);
	h = u64map_hash2(h, t.in_memory ? (uint64_t)(uint32_t)t.mem_off ^ 1ull << 62 : 0);
	h = u64map_hash2(h, (uint64_t)t.array_len << 1 | t.array);
	return u64map_hash2(h, (uint64_t)t.iface << 32 | t.elem_size);
}

int plan_keep_args(struct plan *pl, struct probe *p)
{
	const uint32_t n = p->meta.nargs;
	const size_t bytes = n * sizeof(struct gobin_arg);
	struct argset *set = NULL;
	uint32_t *idx, pos = 0;
	uint64_t h = n;

	for (uint32_t i = 0; i < n; i++)
		h = u64map_hash2(h, arg_normalize(&p->args[i]));
	while (n && (idx = u64map_find(&pl->argset_index, h, &pos)))
		if (pl->argsets[*idx]->n == n &&
		    !memcmp(pl->argsets[*idx]->a, p->args, bytes)) {
			set = pl->argsets[*idx];
			break;
		}
	if (n && !set) {
		if (pl->nargsets == pl->capargsets) {
			pl->capargsets = pl->capargsets ? pl->capargsets * 2 : 64;
			pl->argsets = xrealloc(pl->argsets, pl->capargsets *
					       sizeof(*pl->argsets), "probe values");
		}
		set = xrealloc(NULL, sizeof(*set) + bytes, "probe values");
		set->n = n;
		memcpy(set->a, p->args, bytes);
		pl->argsets[pl->nargsets++] = set;
		if (u64map_add(&pl->argset_index, h, pl->nargsets - 1, UINT32_MAX))
			return -1;
	}
	p->args = set ? set->a : NULL;
	for (uint32_t i = 0; i < n; i++) {
		p->meta.args[i].name = p->args[i].name;
		p->meta.args[i].type_name = p->args[i].type_name;
	}
	if (p->nargs > (int)n)
		p->nargs = (int)n;
	return 0;
}

void plan_free_args(struct plan *pl)
{
	for (uint32_t k = 0; k < pl->nargsets; k++)
		free(pl->argsets[k]);
	free(pl->argsets);
	u64map_free(&pl->argset_index);
}
