// SPDX-License-Identifier: MIT
/*
 * The plan object: binaries opened once, probes as written expanded to
 * functions, inlined copies and lines; locate.c locates each probe's
 * values (DWARF, a signature, or raw words), values.c builds the
 * fetches, sites.c the uprobe sites. See plan.h.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "plan_int.h"

/* Frees probe `p` and what it owns (NULL is fine); its args belong to
 * the plan. */
static void probe_free(struct probe *p)
{
	if (!p)
		return;
	free(p->sites);
	free(p->site_text[0]);
	free(p->site_text[1]);
	free(p->capfmt);
	free(p);
}

struct plan *plan_new(const struct plan_opts *o)
{
	struct plan *pl = calloc(1, sizeof(*pl));

	if (pl)
		pl->opts = *o;
	return pl;
}

void plan_free(struct plan *pl)
{
	int i;

	if (!pl)
		return;
	for (i = 0; i < pl->nprobes; i++)
		probe_free(pl->probes[i]);
	free(pl->probes);
	plan_free_args(pl);
	for (i = 0; i < pl->nspecs; i++)
		probe_spec_free(&pl->specs[i]);
	free(pl->specs);
	for (i = 0; i < pl->nnames; i++)
		probe_spec_free(&pl->names[i]);
	free(pl->names);
	u64map_free(&pl->named);
	u64map_free(&pl->taken);
	for (i = 0; i < pl->nbinaries; i++) {
		gobin_close(pl->binaries[i].gb);
		free(pl->binaries[i].path);
		free(pl->binaries[i].attach_path);
	}
	free(pl);
}

int plan_nprobes(const struct plan *pl) { return pl->nprobes; }

void plan_rate_carry(struct plan *pl, const struct gtr_rate_windows *w)
{
	for (int i = 0; i < pl->nprobes; i++)
		if (w)
			gtr_rate_windows_carry(&w[i], &pl->probes[i]->meta);
		else
			pl->probes[i]->meta.rate_limit = 0;
}
int plan_nbinaries(const struct plan *pl) { return pl->nbinaries; }

const struct probe *plan_probe(const struct plan *pl, int i)
{
	return pl->probes[i];
}

const struct binary *plan_binary(const struct plan *pl, int i)
{
	return &pl->binaries[i];
}

/*
 * The binary named `path` (as the user wrote it), opened through
 * `attach_path` (e.g. /proc/PID/exe) the first time. NULL after printing
 * why (not a Go program, missing file); `func`, the function of a probe
 * without BINARY: (the command's binary by default), adds how to name
 * the Go program a wrapper (a shell, make) runs.
 */
static struct binary *binary_get(struct plan *pl, const char *path,
				 const char *attach_path, const char *func)
{
	struct binary *b;
	struct stat st, o;
	char err[512];
	int i;

	for (i = 0; i < pl->nbinaries; i++)
		if (!strcmp(pl->binaries[i].path, path))
			return &pl->binaries[i];
	/* the same file named another way (./prog, prog, /abs/prog): one
	 * binary, its notes said once, its processes matched once */
	for (i = 0; !stat(attach_path, &st) && i < pl->nbinaries; i++)
		if (!stat(pl->binaries[i].attach_path, &o) && o.st_dev == st.st_dev &&
		    o.st_ino == st.st_ino)
			return &pl->binaries[i];
	if (pl->nbinaries >= PLAN_MAX_BINARIES) {
		fprintf(stderr, "gotrace-record: too many binaries (at most %d)\n",
			PLAN_MAX_BINARIES);
		return NULL;
	}
	pl->binaries[pl->nbinaries].gb = gobin_open(attach_path, err, sizeof(err));
	if (!pl->binaries[pl->nbinaries].gb) {
		fprintf(stderr, "gotrace-record: %s", err);
		if (func && strstr(err, "is not a Go program"))
			fprintf(stderr, "; for a command that runs a Go program (a "
				"shell, make), name the binary of each probe "
				"(BINARY:FUNCTION, e.g. ./prog:%s): the processes "
				"it starts are followed", func);
		fprintf(stderr, "\n");
		return NULL;
	}
	if (pl->nbinaries == 0 && pl->opts.debuginfo &&
	    gobin_open_debuginfo(pl->binaries[0].gb, pl->opts.debuginfo, err,
				 sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		gobin_close(pl->binaries[0].gb);
		return NULL;
	}
	b = &pl->binaries[pl->nbinaries];
	gobin_load_span(b->gb, &b->load_lo, &b->load_hi, &b->text_vaddr,
			&b->text_offset);
	b->path = strdup(path);
	b->attach_path = strdup(attach_path);
	b->id = pl->nbinaries++;
	return b;
}

/*
 * Fills probe `p` (id `id`) for function `fn` of binary `b` as `spec`
 * says: values to capture, format expressions, fetch plan and uprobe
 * sites. Returns 0 or -1 after printing why.
 */
static int probe_prepare(struct plan *pl, struct probe *p, uint32_t id,
			 const struct probe_spec *spec, struct binary *b,
			 const struct gobin_func *fn)
{
	int n;

	p->spec = *spec;   /* shares the strings of the parsed spec */
	p->bin = b;
	p->fn = *fn;
	/* uprobes see a 386 process's registers in the same pt_regs. */
	if (!gobin_arch_info(b->gb)->capture) {
		fprintf(stderr, "gotrace-record: probe '%s': %s is not an "
			"x86 binary; capture runs on x86-64 and i386 here "
			"(gotrace-record --list reads other architectures)\n",
			p->spec.text, b->path);
		return -1;
	}
	n = p->at_site ? plan_site_values(p) : plan_locate(p);
	if (n < 0)
		return -1;
	p->nargs = n;
	memset(&p->meta, 0, sizeof(p->meta));
	p->meta.id = id;
	p->meta.binary_id = b->id;
	p->meta.kind = p->spec.kind;
	p->meta.func = p->fn.name;
	p->meta.address = p->fn.entry;
	if (p->at_site && plan_site_meta(p))
		return -1;
	p->meta.spec = p->spec.text;
	p->meta.predicate = p->spec.predicate;
	p->meta.rate_limit = pl->opts.rate;
	p->meta.fmt = p->spec.fmt ? p->spec.fmt : "";
	p->meta.args_source = p->args_source;
	plan_values(p, n);
	if (plan_exprs(p) || plan_fetches(p, id, &pl->opts))
		return -1;
	plan_goid(p);
	return plan_sites(pl, p) ? -1 : 0;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

struct expand {
	const struct gobin *b;
	const struct plan_opts *o;
	const struct plan *pl;
	const struct probe_spec *spec;  /* the glob */
	const struct binary *bin;
	struct u64map named;  /* entries of the functions other probes of
				 its kind name (names_entries()) */
	struct gobin_func *funcs;
	int n, cap;
	int excluded;         /* matched, then left out by --exclude */
	int left;             /* matched, left to another probe of its kind */
	const char *left1;    /* the first of those */
};

/* The index key of plan.named: a function `func` that a probe of `kind`
 * names, in BINARY: `binary` (NULL: the default executables). */
static uint64_t named_key(enum gtr_kind kind, const char *binary, const char *func)
{
	return u64map_hash2(u64map_hash2(u64map_hash_str(func, 0), (uint64_t)kind),
			    binary ? u64map_hash_str(binary, 0) : 0);
}

/* Whether a probe of `kind` in BINARY: `binary` names function `func`
 * (plan_name()). */
static bool is_named(const struct plan *pl, enum gtr_kind kind, const char *binary,
		     const char *func)
{
	uint32_t pos = 0;

	for (const uint32_t *v; (v = u64map_find(&pl->named, named_key(kind, binary, func),
						 &pos));) {
		const struct probe_spec *s = &pl->names[*v];

		if (s->kind == kind && !strcmp(s->func, func) &&
		    (s->binary && binary ? !strcmp(s->binary, binary) : s->binary == binary))
			return true;
	}
	return false;
}

/* The key of plan.taken: a probe of `kind` at `addr` (a function's entry,
 * an inlined copy's first instruction) of b. */
static uint64_t taken_key(const struct binary *b, uint64_t addr, enum gtr_kind kind)
{
	return u64map_hash2(u64map_hash2(b->id, addr), (uint64_t)kind);
}

void plan_name(struct plan *pl, const char *text)
{
	struct probe_spec s, *v;
	char err[8];

	if (probe_spec_parse(text, &s, err, sizeof(err)))
		return;
	/* every name: a glob's pattern names no function, and an exact
	 * name may hold '*' ("main.(*T).M") */
	v = s.line ? NULL : realloc(pl->names, (size_t)(pl->nnames + 1) * sizeof(*v));
	if (v)
		pl->names = v;
	if (!v || u64map_add(&pl->named, named_key(s.kind, s.binary, s.func),
			     (uint32_t)pl->nnames, UINT32_MAX)) {
		probe_spec_free(&s);
		return;
	}
	pl->names[pl->nnames++] = s;
}

/*
 * Puts in e->named the entries of the functions of e->bin that probes of
 * glob e->spec's kind and BINARY: name (plan_name()), found as plan_add()
 * finds them (gccgo's spellings, a generic function's instances): those
 * it leaves to them. A generic function named with a signature is left
 * out (the signature takes the instances it fits, the glob the rest).
 * 0, or -1 when out of memory.
 */
static int names_entries(struct expand *e)
{
	const struct probe_spec *g = e->spec;

	for (int i = 0; i < e->pl->nnames; i++) {
		const struct probe_spec *s = &e->pl->names[i];
		struct gobin_func *all;
		int n;

		/* by the exact name (a glob's pattern finds nothing) */
		if (s->kind != g->kind || (s->binary && g->binary ? strcmp(s->binary, g->binary) :
					   s->binary != g->binary))
			continue;
		n = gobin_func_find_all(e->b, s->func, NULL, 0);
		if (n <= 0 || (s->sig && n > 1))
			continue;
		all = calloc((size_t)n, sizeof(*all));
		if (!all)
			return -1;
		gobin_func_find_all(e->b, s->func, all, n);
		for (int k = 0; k < n; k++)
			if (u64map_put(&e->named, all[k].entry, 1, UINT32_MAX)) {
				free(all);
				return -1;
			}
		free(all);
	}
	return 0;
}

/* Whether glob `e->spec` leaves function `name` at `entry` to another
 * probe of its kind: one that names it, or one that took it before. */
static bool left_to_another(const struct expand *e, const char *name, uint64_t entry)
{
	return u64map_get(&e->named, entry) || is_named(e->pl, e->spec->kind, e->spec->binary, name) ||
	       u64map_get(&e->pl->taken, taken_key(e->bin, entry, e->spec->kind));
}

/* Whether f is one of the functions a probe on its exact name means. */
static int is_listed(const struct gobin *b, const struct gobin_func *f)
{
	struct gobin_func same[16];
	int n = gobin_func_find_all(b, f->name, same, 16), i;

	for (i = 0; i < n && i < 16; i++)
		if (same[i].entry == f->entry)
			return 1;
	return n > 16;   /* too many to tell: keep it */
}

/* Whether --exclude leaves function `name` out. */
static bool is_excluded(const struct plan_opts *o, const char *name)
{
	for (int i = 0; i < o->nexcludes; i++)
		if (!fnmatch(o->excludes[i], name, 0))
			return true;
	return false;
}

static int collect(const struct gobin_func *f, void *ctx)
{
	struct expand *e = ctx;

	/* An ABI wrapper beside a real function of its name: the real one
	 * is probed, a second probe would count each call twice. */
	if (gobin_func_find_all(e->b, f->name, NULL, 0) < 2 ? 0 :
	    !is_listed(e->b, f))
		return 0;
	if (is_excluded(e->o, f->name)) {
		e->excluded++;
		return 0;
	}
	if (left_to_another(e, f->name, f->entry)) {
		if (!e->left++)
			e->left1 = f->name;
		return 0;
	}
	if (e->n == e->cap) {
		int cap = e->cap ? e->cap * 2 : 64;
		struct gobin_func *v = realloc(e->funcs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->funcs = v;
		e->cap = cap;
	}
	e->funcs[e->n++] = *f;
	return 0;
}

/*
 * Adds a probe of `spec` on function `fn` of `b` (its entry or returns),
 * or, with `site`, on that inlined copy or line inside fn. 0, -1 (stop),
 * or -2 (this one cannot be probed; reason printed).
 */
static int add_probe_at(struct plan *pl, const struct probe_spec *spec,
			struct binary *b, const struct gobin_func *fn,
			const struct gobin_site *site)
{
	struct probe *p;

	if (pl->nprobes >= (int)pl->opts.max_probes) {
		fprintf(stderr, "gotrace-record: more than %u probes; narrow "
			"the globs (--exclude GLOB) or raise --max-probes\n",
			pl->opts.max_probes);
		return -1;
	}
	if (pl->nprobes == pl->cap) {
		int ncap = pl->cap ? pl->cap * 2 : 16;
		struct probe **np = realloc(pl->probes, ncap * sizeof(*np));

		if (!np)
			return -1;
		pl->probes = np;
		pl->cap = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	p->chained_site = -1;
	if (site) {
		p->at_site = true;
		p->site = *site;
	}
	p->args = pl->scratch;
	if (probe_prepare(pl, p, pl->nprobes, spec, b, fn)) {
		p->args = NULL;
		probe_free(p);
		return -2;
	}
	if (plan_keep_args(pl, p)) {
		p->args = NULL;
		probe_free(p);
		return -1;
	}
	pl->probes[pl->nprobes++] = p;
	/* a function, or an inlined copy (a line is not its function's) */
	if ((!site || !site->line) &&
	    u64map_put(&pl->taken, taken_key(b, site ? site->addr : fn->entry, spec->kind), 1,
		       UINT32_MAX))
		return -1;
	if (pl->opts.progress && pl->nprobes % PLAN_PROGRESS_EVERY == 0)
		pl->opts.progress(pl->opts.progress_ctx, pl->nprobes);
	return 0;
}

static int add_probe(struct plan *pl, const struct probe_spec *spec,
		     struct binary *b, const struct gobin_func *fn)
{
	return add_probe_at(pl, spec, b, fn, NULL);
}

/*
 * Probes each of sites[n] (inlined copies or the addresses of a line) as
 * `spec` says. 0, or -1 after printing why.
 */
static int add_sites(struct plan *pl, const struct probe_spec *spec,
		     struct binary *b, const struct gobin_site *sites, int n)
{
	for (int i = 0; i < n; i++)
		if (add_probe_at(pl, spec, b, &sites[i].outer, &sites[i]))
			return -1;
	return 0;
}

/* The binary a probe is in: its BINARY: part (inside the target's
 * container when not found here), else the default. NULL after printing
 * why. */
static struct binary *spec_binary(struct plan *pl, const struct probe_spec *spec,
				  const char *dflt_path, const char *dflt_attach)
{
	if (spec->binary) {
		char inroot[PATH_MAX];
		const char *at = spec->binary;

		/* A path inside the target's container, seen from here. */
		if (pl->opts.root_pid && access(at, F_OK) && spec->binary[0] == '/') {
			snprintf(inroot, sizeof(inroot), "/proc/%d/root%s",
				 pl->opts.root_pid, spec->binary);
			if (!access(inroot, F_OK))
				at = inroot;
		}
		return binary_get(pl, spec->binary, at, NULL);
	}
	if (dflt_path)
		return binary_get(pl, dflt_path, dflt_attach, spec->text);
	fprintf(stderr, "gotrace-record: probe '%s' names no binary; "
		"write BINARY:FUNCTION to trace every process of "
		"BINARY, or give -p PID or -- CMD\n", spec->text);
	return NULL;
}

/*
 * The instances of a generic function, all[n], that the signature of
 * `spec` fits (gobin_sig_fits), moved to the front; returns how many, or
 * -1 after saying that it fits none, several, or cannot be told (names
 * alike without DWARF), naming them: one is to be named exactly. Returns
 * n when it fits none and is wrong for one (its parameters pass an
 * instance's frame), whose planning then says what is wrong.
 */
static int fitting(const struct plan *pl, const struct probe_spec *spec,
		   const struct binary *b, struct gobin_func *all, int n)
{
	int k = 0, fits;
	bool untold = false, wrong = false;

	for (int i = 0; i < n; i++) {
		fits = gobin_sig_fits(b->gb, &all[i], spec->sig, spec->results);
		/* wrong for this instance (its frame is too small for
		 * `string` where it takes an int): it does not fit it */
		wrong |= fits == -2;
		untold |= fits == -1;
		if (fits == 1) {
			const struct gobin_func f = all[k];

			all[k++] = all[i];
			all[i] = f;
		}
	}
	if (!k && wrong && !untold)
		return n;   /* fits none, wrong for one at least: planning
			     * the first says what is wrong */
	if (k == 1 && !untold) {
		if (!pl->opts.quiet)
			fprintf(stderr, "gotrace-record: probe '%s': the signature "
				"fits %s alone of the %d instances of %s; the others "
				"are not probed\n", spec->text, all[0].name, n, spec->func);
		return 1;
	}
	fprintf(stderr, "gotrace-record: probe '%s': %s has %d instances (", spec->text,
		spec->func, n);
	for (int i = 0; i < n && i < 8; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", all[i].name);
	if (strstr(all[0].name, "[...]"))
		fprintf(stderr, "%s) and the signature %s; name one exactly by its "
			"symbol, with the signature for it (the name nm prints, "
			"type arguments go.shape.*; a stripped Go 1.18-1.20 "
			"binary has none: drop the signature there)\n",
			n > 8 ? ", ..." : "", untold ? "cannot be told to fit one "
			"(Go 1.18-1.20 names them alike, and there is no DWARF)" :
			k ? "fits more than one" : "fits none");
	else
		fprintf(stderr, "%s) and the signature %s; name one exactly, with "
			"the signature for it, e.g. '%s(...)'\n", n > 8 ? ", ..." : "",
			untold ? "cannot be told to fit one" : k ?
			"fits more than one" : "fits none", all[0].name);
	return -1;
}

/* An exact name; generic functions have one function of that name per
 * instantiation ("main.Map[...]"): probes each of the n (those its
 * signature fits). 0 or -1. */
static int add_exact(struct plan *pl, const struct probe_spec *spec,
		     struct binary *b, int n)
{
	struct gobin_func *all = calloc(n, sizeof(*all));
	int i;

	if (!all)
		return -1;
	gobin_func_find_all(b->gb, spec->func, all, n);
	if (spec->sig && n > 1 && strchr(all[0].name, '[') &&
	    (n = fitting(pl, spec, b, all, n)) < 0) {
		free(all);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (add_probe(pl, spec, b, &all[i])) {
			free(all);
			return -1;
		}
	free(all);
	return 0;
}

/*
 * Says that glob `pat` matches no function of b; when its only '*' are
 * those of pointer receivers ("net/http.(*response).WriteHeadr", an exact
 * name mistyped), with the names closest to it.
 */
static void no_match(const struct binary *b, const char *pat)
{
	const char *near[5] = { NULL };
	char bare[512];
	size_t o = 0;
	int n = 0;

	for (const char *c = pat; *c && o + 1 < sizeof(bare); c++)
		if (!(c[0] == '*' && c > pat && c[-1] == '('))
			bare[o++] = *c;
	bare[o] = '\0';
	if (!strpbrk(bare, "*?["))
		n = gobin_func_suggest(b->gb, pat, near, 5);
	struct buf t = BUF_INIT;

	fprintf(stderr, "gotrace-record: no function of %s matches '%s'",
		buf_shown(&t, b->path), pat);
	for (int i = 0; i < n; i++)   /* names of the binary: controls escaped */
		fprintf(stderr, "%s%s", i ? ", " : "; did you mean: ", buf_shown(&t, near[i]));
	fprintf(stderr, "\n");
	buf_free(&t);
}

/*
 * The probe the `n` inlined copies of `what` get from `spec`: spec
 * itself; or, when it has a signature (which describes an out-of-line
 * body, not a copy: a copy's values are where its caller left them),
 * spec without it, into *nosig, their values from DWARF where it locates
 * them; or NULL when expressions name the signature's values: the
 * copies are left out. Says so in one line (not under -q).
 */
static const struct probe_spec *copies_spec(const struct plan *pl,
					    const struct probe_spec *spec,
					    struct probe_spec *nosig, int n,
					    const char *what)
{
	if (!spec->sig)
		return spec;
	*nosig = *spec;
	nosig->sig = nosig->results = NULL;
	if (!pl->opts.quiet)
		fprintf(stderr, "gotrace-record: probe '%s': the signature "
			"describes the out-of-line body of %s; its %d inlined "
			"cop%s %s\n", spec->text, what, n, n == 1 ? "y is" : "ies are",
			spec->nexprs ? "not probed (the expressions name the "
			"signature's values; probe them without a signature)" :
			"probed without it: values from DWARF where it locates "
			"them, none without DWARF");
	return spec->nexprs ? NULL : nosig;
}

/*
 * Probes the inlined copies of every function glob `spec` matches (entry
 * probes; a return probe says that they have none, quietly only when
 * `body`, functions were probed), those --exclude leaves out aside,
 * unless there are more than --max-probes leaves room for: then none,
 * saying so. Returns how many copies it found, or -1 (a limit, out of
 * memory).
 */
static int add_glob_inlined(struct plan *pl, const struct probe_spec *spec,
			    struct binary *b, bool body)
{
	int nn, k = 0, n = gobin_inline_glob(b->gb, spec->func, NULL, 0, NULL);
	struct gobin_site *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;
	struct probe_spec nosig;

	if (!v)
		return n < 0 ? -1 : 0;
	if (spec->kind != GTR_KIND_RETURN &&
	    !(spec = copies_spec(pl, spec, &nosig, n, spec->func))) {
		free(v);
		return n;
	}
	gobin_inline_glob(b->gb, spec->func, v, n, &nn);
	for (int i = 0; i < n; i++)
		/* a function another probe names has its copies probed by
		 * it, and a copy an earlier glob took is its */
		if (!is_excluded(&pl->opts, v[i].func) &&
		    !is_named(pl, spec->kind, spec->binary, v[i].func) &&
		    !u64map_get(&pl->taken, taken_key(b, v[i].addr, spec->kind)))
			v[k++] = v[i];
	if (k && spec->kind == GTR_KIND_RETURN && (!pl->opts.quiet || !body))
		fprintf(stderr, "gotrace-record: probe '%s': %d inlined copies of "
			"functions it matches return into their callers without a "
			"return instruction: no return probes, no latency for them\n",
			spec->text, k);
	else if (k && (unsigned)(pl->nprobes + k) > pl->opts.max_probes)
		fprintf(stderr, "gotrace-record: probe '%s': its %d functions' %d "
			"inlined copies are not probed: with the %d probes before "
			"them they pass --max-probes %u; name a function to probe "
			"its copies, narrow the glob, or raise --max-probes\n",
			spec->text, nn, k, pl->nprobes, pl->opts.max_probes);
	else
		for (int i = 0; i < k && spec->kind != GTR_KIND_RETURN; i++)
			/* one that cannot be probed is skipped (reason printed) */
			if (add_probe_at(pl, spec, b, &v[i].outer, &v[i]) == -1) {
				free(v);
				return -1;
			}
	free(v);
	return k;
}

/* Probes every function the glob of `spec` matches, and their inlined
 * copies. 0 or -1 after printing why. */
static int add_glob(struct plan *pl, const struct probe_spec *spec,
		    struct binary *b)
{
	struct expand e = { .b = b->gb, .o = &pl->opts, .pl = pl, .spec = spec, .bin = b };
	int i, first = pl->nprobes, copies;

	if (names_entries(&e) || gobin_func_each(b->gb, spec->func, collect, &e) < 0) {
		u64map_free(&e.named);
		free(e.funcs);
		return -1;
	}
	u64map_free(&e.named);
	if (e.left == 1 && !pl->opts.quiet)
		fprintf(stderr, "gotrace-record: probe '%s': %s is left to the %s probe that "
			"names it or took it first, so that each call is recorded once\n",
			spec->text, e.left1, spec->kind == GTR_KIND_RETURN ? "return" : "entry");
	else if (e.left > 1 && !pl->opts.quiet)
		fprintf(stderr, "gotrace-record: probe '%s': %s and %d more functions are left "
			"to the %s probes that name them or took them first, so that each call "
			"is recorded once\n", spec->text, e.left1, e.left - 1,
			spec->kind == GTR_KIND_RETURN ? "return" : "entry");
	if ((unsigned)(pl->nprobes + e.n) > pl->opts.max_probes) {
		fprintf(stderr, "gotrace-record: probe '%s' matches %d functions "
			"of %s", spec->text, e.n, b->path);
		if (pl->nprobes)
			fprintf(stderr, " (%d with the probes before it)",
				pl->nprobes + e.n);
		fprintf(stderr, ", more than --max-probes %u; narrow the glob "
			"(--exclude GLOB) or raise --max-probes\n", pl->opts.max_probes);
		free(e.funcs);
		return -1;
	}
	for (i = 0; i < e.n; i++) {
		/* A glob skips functions it cannot probe (reason
		 * printed); a limit or memory failure stops all. */
		if (add_probe(pl, spec, b, &e.funcs[i]) == -1) {
			free(e.funcs);
			return -1;
		}
	}
	free(e.funcs);
	copies = add_glob_inlined(pl, spec, b, pl->nprobes > first);
	if (copies < 0)
		return -1;
	if (pl->nprobes > first || (e.left && !e.n))
		return 0;   /* probed, or every match left to other probes */
	if (copies > 0)
		return -1;   /* said why above */
	if (e.excluded)
		fprintf(stderr, "gotrace-record: all %d functions of %s "
			"matching '%s' are left out by --exclude\n",
			e.excluded, b->path, spec->func);
	else if (e.n)
		fprintf(stderr, "gotrace-record: none of the %d functions "
			"of %s matching '%s' can be probed (reasons above)\n",
			e.n, b->path, spec->func);
	else
		no_match(b, spec->func);
	return -1;
}

/*
 * Whether `name` finds a function of that very name: not another one it
 * stands for (gccgo's Cgoexp__NAME wrapper, the instances of a generic
 * function), whose own code holds the copies a probe on it would count
 * twice.
 */
static bool named_so(const struct binary *b, const char *name)
{
	struct gobin_func f;

	return gobin_func_find_all(b->gb, name, &f, 1) > 0 && !strcmp(f.name, name);
}

/*
 * Says that spec->func, which has a signature, has no out-of-line body
 * for it to describe, only the n copies v[] (named by the functions they
 * are inlined into). Returns -1.
 */
static int no_body(const struct probe_spec *spec, const struct gobin_site *v,
		   int n)
{
	int shown = 0;
	bool more = false;

	fprintf(stderr, "gotrace-record: probe '%s': %s has no out-of-line "
		"body for a signature to describe: the compiler inlined every "
		"call of it (%d cop%s, into ", spec->text, spec->func, n,
		n == 1 ? "y" : "ies");
	for (int i = 0; i < n && !more; i++) {
		int k = 0;

		while (k < i && strcmp(v[k].outer.name, v[i].outer.name))
			k++;
		if (k == i && shown == 3)
			more = true;
		else if (k == i)
			fprintf(stderr, "%s%s", shown++ ? ", " : "", v[i].outer.name);
	}
	fprintf(stderr, "%s); drop the signature to probe the copies (their "
		"values from DWARF where it locates them, none without DWARF)\n",
		more ? ", ..." : "");
	return -1;
}

/*
 * Probes the inlined copies of spec->func (an entry probe; a return
 * probe says that they have none; `body`: the function has an
 * out-of-line body too). Returns how many copies there are, or -1 after
 * printing why.
 */
static int add_inlined(struct plan *pl, const struct probe_spec *spec,
		       struct binary *b, bool body)
{
	struct gobin_site *v;
	struct probe_spec nosig;
	const char *source;
	int n = gobin_inline_sites(b->gb, spec->func, NULL, 0, &source), rc;

	if (n <= 0)
		return n < 0 ? -1 : 0;
	if (spec->kind == GTR_KIND_RETURN) {
		if (!pl->opts.quiet || !body)
			fprintf(stderr, "gotrace-record: probe '%s': %s has %d inlined "
				"cop%s, which return%s into %s caller without a return "
				"instruction: no return probe %s, no latency%s\n",
				spec->text, spec->func, n, n == 1 ? "y" : "ies",
				n == 1 ? "s" : "", n == 1 ? "its" : "their",
				n == 1 ? "for it" : "for them",
				body ? " (its out-of-line body's returns are probed)" : "");
		if (!body)
			return -1;
		return n;
	}
	v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return -1;
	gobin_inline_sites(b->gb, spec->func, v, n, &source);
	if (spec->sig && !body)
		rc = no_body(spec, v, n);
	else if (!(spec = copies_spec(pl, spec, &nosig, n, spec->func)))
		rc = 0;   /* left out, said why */
	else
		rc = add_sites(pl, spec, b, v, n);
	free(v);
	return rc ? -1 : n;
}

/* Probes every address of the source line of `spec` (FILE:LINE). 0 or
 * -1 after printing why. */
static int add_line(struct plan *pl, const struct probe_spec *spec,
		    struct binary *b)
{
	struct gobin_site *v;
	const char *path;
	int n = gobin_line_sites(b->gb, spec->file, spec->line, NULL, 0, &path), rc;

	if (n == -ENODATA)
		fprintf(stderr, "gotrace-record: probe '%s': %s has no Go 1.16+ "
			"line table (pclntab); probe a function instead\n",
			spec->text, b->path);
	else if (n == -EEXIST)
		fprintf(stderr, "gotrace-record: probe '%s': more than one file "
			"of %s ends in '%s'; write more of its path (e.g. "
			"'pkg/%s:%d'; gotrace-record --list %s '%s:*' shows the files)\n",
			spec->text, b->path, spec->file, spec->file, spec->line,
			b->path, spec->file);
	else if (n == 0)
		fprintf(stderr, "gotrace-record: probe '%s': no code of %s is on "
			"line %d of a file '%s' (a blank or comment line, code the "
			"compiler removed, or another file); gotrace-record --list "
			"%s '%s:*' shows the lines that can be probed\n", spec->text,
			b->path, spec->line, spec->file, b->path, spec->file);
	if (n <= 0)
		return -1;
	v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return -1;
	gobin_line_sites(b->gb, spec->file, spec->line, v, n, &path);
	rc = add_sites(pl, spec, b, v, n);
	free(v);
	return rc;
}

/* Keeps a parsed probe for plan_free(); NULL when out of memory. */
static const struct probe_spec *keep_spec(struct plan *pl,
					  const struct probe_spec *spec)
{
	struct probe_spec *v = realloc(pl->specs, (pl->nspecs + 1) * sizeof(*v));

	if (!v)
		return NULL;
	pl->specs = v;
	v[pl->nspecs] = *spec;
	return &v[pl->nspecs++];
}

/*
 * A bare method or function name ("WriteHeader"): says which functions
 * have it, to write in full. Returns 1 when there were some.
 */
static int say_named(const struct binary *b, const char *bare)
{
	struct gobin_func f[8];
	int n;

	if (strpbrk(bare, "./*?[( ") || !(n = gobin_func_named(b->gb, bare, f, 8)))
		return 0;
	fprintf(stderr, "gotrace-record: '%s' is not a full name; %s has %d "
		"function%s named %s: ", bare, b->path, n, n > 1 ? "s" : "", bare);
	for (int i = 0; i < n && i < 8; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", f[i].name);
	fprintf(stderr, "%s; write one in full, or the glob '*.%s'\n",
		n > 8 ? ", ..." : "", bare);
	return 1;
}

/*
 * Exact names win over globs: "main.(*T).M" holds a '*' but names one
 * method.
 */
int plan_add(struct plan *pl, const char *text, const char *dflt_path,
	     const char *dflt_attach)
{
	struct probe_spec parsed;
	const struct probe_spec *spec;
	const char *near[5];
	struct binary *b;
	char err[1024];
	int i, n;

	if (probe_spec_parse(text, &parsed, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	spec = keep_spec(pl, &parsed);
	if (!spec) {
		probe_spec_free(&parsed);
		return -1;
	}
	b = spec_binary(pl, spec, dflt_path, dflt_attach);
	if (!b)
		return -1;
	if (spec->line)
		return add_line(pl, spec, b);
	if (!b->inline_gap_said && gobin_inline_gap(b->gb)) {
		/* said once per binary: its probes cover out-of-line bodies */
		b->inline_gap_said = true;
		fprintf(stderr, "gotrace-record: %s: inlined copies unknown: %s; "
			"probes cover out-of-line bodies only\n", b->path,
			gobin_inline_gap(b->gb));
	}
	n = gobin_func_find_all(b->gb, spec->func, NULL, 0);
	if (n == 0) {
		/* an //export'ed Go function lives on in its cgo wrapper
		 * (inlined into it, with no body of its own) */
		struct gobin_func f;

		if (!gobin_func_find_cgo_export(b->gb, spec->func, &f)) {
			if (!pl->opts.quiet)
				fprintf(stderr, "gotrace-record: probe '%s': %s is "
					"exported to C; probing its cgo wrapper %s, "
					"whose parameter points at the arguments and "
					"results\n", spec->text, spec->func, f.name);
			return add_probe(pl, spec, b, &f) ? -1 : 0;
		}
	}
	/* a function only ever inlined, by its exact name ('*' of a
	 * pointer receiver and all), else as a glob */
	if ((n == 0 && (!has_glob(spec->func) ||
			gobin_inline_sites(b->gb, spec->func, NULL, 0, NULL) > 0)) ||
	    (n > 0 && named_so(b, spec->func))) {
		const int m = add_inlined(pl, spec, b, n > 0);

		if (m < 0 || (m > 0 && n == 0))
			return m < 0 ? -1 : 0;
	}
	if (n > 0)
		return add_exact(pl, spec, b, n);
	if (has_glob(spec->func))
		return add_glob(pl, spec, b);
	if (say_named(b, spec->func))
		return -1;
	n = gobin_func_suggest(b->gb, spec->func, near, 5);
	struct buf t = BUF_INIT;
	if (strlen(spec->func) > 120)
		fprintf(stderr, "gotrace-record: function '%.100s...' (%zu bytes) not found in %s",
			spec->func, strlen(spec->func), buf_shown(&t, b->path));
	else
		fprintf(stderr, "gotrace-record: function '%s' not found in %s",
			spec->func, buf_shown(&t, b->path));
	for (i = 0; i < n; i++)   /* names of the binary: controls escaped */
		fprintf(stderr, "%s%s", i ? ", " : "; did you mean: ", buf_shown(&t, near[i]));
	buf_free(&t);
	if (gobin_func_missing_why(b->gb, spec->func, err, sizeof(err)))
		fprintf(stderr, "; %s", err);
	fprintf(stderr, "\n");
	return -1;
}
