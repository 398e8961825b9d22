// SPDX-License-Identifier: MIT
/*
 * Inlined copies of functions and the addresses of source lines, for
 * probes on code the compiler folded into its callers: from DWARF's
 * inlined subroutines when the binary has DWARF (dwinline.c), else from
 * the pclntab's inline tree (inltree.c), which survives stripping. See
 * gobin.h: gobin_inline_sites, gobin_line_sites, gobin_inline_frames.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "inl_int.h"

bool inl_add(struct gobin_inl *l, const struct inl_copy *c)
{
	if (l->n == l->cap) {
		const size_t cap = l->cap ? l->cap * 2 : 256;
		struct inl_copy *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *c;
	return true;
}

/* Per node of one function's tree: its lowest pc and the end of its
 * highest run, counting the nodes inlined into it. */
struct node_span {
	uint64_t lo, hi;
};

/*
 * The inlined copies of funcs[fi] from its inline tree, into l. A copy
 * spans the pcs of its node and of every node inlined into it. Returns 0
 * or -ENOMEM.
 */
static int tree_copies(const struct gobin *b, size_t fi, struct gobin_inl *l)
{
	struct inl_tree t;
	struct node_span *sp;
	int32_t max = -1;

	if (!inl_tree(b, fi, &t))
		return 0;
	for (int i = 0; i < t.nruns; i++)
		if (t.runs[i].val > max)
			max = t.runs[i].val;
	if (max < 0 || max > 1 << 20) {
		inl_tree_free(&t);
		return 0;
	}
	sp = calloc((size_t)max + 1, sizeof(*sp));
	if (!sp) {
		inl_tree_free(&t);
		return -ENOMEM;
	}
	for (int i = 0; i < t.nruns; i++) {
		/* each node on the chain from the innermost outwards */
		for (int32_t k = t.runs[i].val, depth = 0; k >= 0 && depth < 64;
		     k = inl_node_parent(b, &t, k), depth++) {
			if (!sp[k].hi || t.runs[i].lo < sp[k].lo)
				sp[k].lo = t.runs[i].lo;
			if (t.runs[i].hi > sp[k].hi)
				sp[k].hi = t.runs[i].hi;
		}
	}
	for (int32_t k = 0; k <= max; k++) {
		const char *name = inl_node_name(b, &t, k);
		struct inl_copy c = { .name = name, .outer = fi, .lo = sp[k].lo,
				      .hi = sp[k].hi, .call_file = "" };

		if (!name || !sp[k].hi)
			continue;
		c.callpc = inl_node_callpc(b, &t, k);
		if (c.callpc) {
			const char *f = inl_file(b, fi, inl_pcvalue(b, fi, INL_TAB_FILE,
								    c.callpc));

			c.call_file = f ? f : "";
			c.call_line = inl_pcvalue(b, fi, INL_TAB_LINE, c.callpc);
			if (c.call_line < 0)
				c.call_line = 0;
		}
		if (!inl_add(l, &c)) {
			free(sp);
			inl_tree_free(&t);
			return -ENOMEM;
		}
	}
	free(sp);
	inl_tree_free(&t);
	return 0;
}

static int copy_cmp(const void *x, const void *y)
{
	const struct inl_copy *a = x, *c = y;
	const int r = strcmp(a->name, c->name);

	return r ? r : a->lo < c->lo ? -1 : a->lo > c->lo;
}

/* b->inl, built on first use; NULL when out of memory. */
static struct gobin_inl *inl_get(const struct gobin *cb)
{
	struct gobin *b = (struct gobin *)cb;
	struct gobin_inl *l;
	int rc;

	if (b->inl)
		return b->inl;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->source = "DWARF";
	rc = inl_from_dwarf(b, l);
	if (rc == -ENODATA) {
		l->source = "pclntab";
		rc = 0;
		for (size_t i = 0; i < b->nfuncs && !rc; i++)
			rc = tree_copies(b, i, l);
	}
	if (rc) {
		for (size_t i = 0; i < l->n; i++)
			free(l->v[i].params);
		free(l->v);
		free(l);
		return NULL;
	}
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), copy_cmp);
	b->inl = l;
	return l;
}

void gobin_inl_free(struct gobin *b)
{
	if (!b->inl)
		return;
	for (size_t i = 0; i < b->inl->n; i++)
		free(b->inl->v[i].params);
	free(b->inl->v);
	free(b->inl);
	b->inl = NULL;
}

/* Fills *s for copy c. */
static void site_of_copy(const struct gobin *b, const struct inl_copy *c,
			 struct gobin_site *s)
{
	memset(s, 0, sizeof(*s));
	s->addr = c->lo;
	s->file_offset = gobin_vaddr_to_offset(b, c->lo);
	s->end = c->hi;
	s->func = c->name;
	s->outer = b->funcs[c->outer];
	s->outer.file_offset = gobin_vaddr_to_offset(b, s->outer.entry);
	s->inlined = true;
	s->call_file = c->call_file;
	s->call_line = c->call_line;
	s->file = "";
	s->nparams = c->nparams;
	s->params = c->params;
}

int gobin_inline_sites(const struct gobin *b, const char *name,
		       struct gobin_site *out, int max, const char **source)
{
	const struct gobin_inl *l = inl_get(b);
	size_t lo = 0, hi;
	int n = 0;

	if (source)
		*source = l ? l->source : "";
	if (!l)
		return -ENOMEM;
	hi = l->n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (strcmp(l->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < l->n && !strcmp(l->v[lo].name, name); lo++, n++)
		if (n < max)
			site_of_copy(b, &l->v[lo], &out[n]);
	return n;
}

int gobin_inline_glob(const struct gobin *b, const char *pattern,
		      struct gobin_site *out, int max, int *nnames)
{
	const struct gobin_inl *l = inl_get(b);
	const char *last = NULL;
	int n = 0;

	if (nnames)
		*nnames = 0;
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		if (fnmatch(pattern, l->v[i].name, 0))
			continue;
		if (nnames && (!last || strcmp(last, l->v[i].name)))
			(*nnames)++;
		last = l->v[i].name;
		if (n < max)
			site_of_copy(b, &l->v[i], &out[n]);
		n++;
	}
	return n;
}

/* Whether `path` (as the line tables spell it) is `want`, or ends in
 * "/" + want. */
static bool path_is(const char *path, const char *want)
{
	const size_t n = strlen(path), w = strlen(want);

	if (n < w || strcmp(path + n - w, want))
		return false;
	return n == w || path[n - w - 1] == '/' || want[0] == '/';
}

/* The line sites found so far: one per (function, inline node). */
struct line_acc {
	struct gobin_site *v;
	int n, cap;
	const char *file;        /* the first file that matched */
	bool ambiguous;          /* two different files matched */
	bool oom;
};

/* Adds address pc of funcs[fi] (innermost inline node `node`, -1 none;
 * tree t) to the sites of a line, keeping the lowest per node (with
 * `only_new`, a node that has a site already keeps it). */
static void line_add(const struct gobin *b, struct line_acc *a, size_t fi,
		     const struct inl_tree *t, int32_t node, int line, uint64_t pc,
		     bool only_new)
{
	const char *func = node >= 0 ? inl_node_name(b, t, node) : b->funcs[fi].name;
	struct gobin_site *s;

	for (int i = 0; i < a->n; i++) {
		s = &a->v[i];
		if (s->outer.entry == b->funcs[fi].entry && s->node == node &&
		    s->line == line) {
			if (pc < s->addr && !only_new) {
				s->addr = pc;
				s->file_offset = gobin_vaddr_to_offset(b, pc);
			}
			return;
		}
	}
	if (a->n == a->cap) {
		const int cap = a->cap ? a->cap * 2 : 16;
		struct gobin_site *v = realloc(a->v, (size_t)cap * sizeof(*v));

		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	s = &a->v[a->n++];
	memset(s, 0, sizeof(*s));
	s->addr = pc;
	s->file_offset = gobin_vaddr_to_offset(b, pc);
	s->func = func ? func : "?";
	s->outer = b->funcs[fi];
	s->outer.file_offset = gobin_vaddr_to_offset(b, s->outer.entry);
	s->inlined = node >= 0;
	s->node = node;
	s->call_file = "";
	s->file = a->file;
	s->line = line;
}

/* The first address of [lo, hi) where a statement begins (stmts[n],
 * ascending), or 0 when none does. */
static uint64_t first_stmt(const uint64_t *stmts, int n, uint64_t lo, uint64_t hi)
{
	int l = 0, h = n;

	while (l < h) {
		const int mid = l + (h - l) / 2;

		if (stmts[mid] < lo)
			l = mid + 1;
		else
			h = mid;
	}
	return l < n && stmts[l] < hi ? stmts[l] : 0;
}

/*
 * The sites of `file`:`line` in funcs[fi] from its pcfile and pcln
 * tables, into a: per (line, inline node), the first instruction of the
 * line where DWARF's line table says a statement begins (is_stmt), else,
 * without DWARF or when no row of that copy says so, its lowest address.
 * 0 or -ENOMEM.
 */
static int func_lines(const struct gobin *b, size_t fi, const char *file,
		      int line, struct line_acc *a)
{
	struct inl_run *fr = NULL, *lr = NULL;
	const struct gobin_func *f = &b->funcs[fi];
	uint64_t *stmts = NULL;
	int nf, nl, ns, rc = 0;
	struct inl_tree t;
	bool has_tree;

	nl = inl_pcruns(b, inl_tab(b, fi, INL_TAB_LINE), f->entry, f->end, &lr);
	if (nl <= 0)
		return nl;
	for (int i = 0; i < nl && !rc; i++)
		rc = lr[i].val == line || (!line && lr[i].val > 0);
	if (!rc) {
		free(lr);
		return 0;
	}
	nf = inl_pcruns(b, inl_tab(b, fi, INL_TAB_FILE), f->entry, f->end, &fr);
	has_tree = inl_tree(b, fi, &t);
	ns = inl_dwarf_stmts((struct gobin *)b, fi, &stmts);
	/* pass 0: statement starts; pass 1: the copies that have none */
	for (int pass = ns > 0 ? 0 : 1; pass < 2; pass++) {
		for (int i = 0; i < nl; i++) {
			const char *fn;
			uint64_t pc = lr[i].lo;

			if (line ? lr[i].val != line : lr[i].val <= 0)
				continue;
			fn = inl_file(b, fi, inl_run_at(fr, nf, lr[i].lo));
			if (!fn || !path_is(fn, file))
				continue;
			if (!pass && !(pc = first_stmt(stmts, ns, lr[i].lo, lr[i].hi)))
				continue;
			if (!a->file)
				a->file = fn;
			else if (strcmp(a->file, fn))
				a->ambiguous = true;
			line_add(b, a, fi, has_tree ? &t : NULL,
				 has_tree ? inl_run_at(t.runs, t.nruns, pc) : -1,
				 lr[i].val, pc, pass == 1);
		}
	}
	if (has_tree)
		inl_tree_free(&t);
	free(stmts);
	free(fr);
	free(lr);
	return 0;
}

static int site_line_cmp(const void *x, const void *y)
{
	const struct gobin_site *a = x, *c = y;

	if (a->line != c->line)
		return a->line < c->line ? -1 : 1;
	return a->addr < c->addr ? -1 : a->addr > c->addr;
}

int gobin_line_sites(const struct gobin *b, const char *file, int line,
		     struct gobin_site *out, int max, const char **path)
{
	struct line_acc a = { 0 };

	if (path)
		*path = "";
	if (!b->pcl.funcoff)
		return -ENODATA;
	for (size_t i = 0; i < b->nfuncs && !a.oom; i++)
		if (func_lines(b, i, file, line, &a) < 0)
			a.oom = true;
	if (a.oom || a.ambiguous) {
		free(a.v);
		return a.oom ? -ENOMEM : -EEXIST;
	}
	if (path && a.file)
		*path = a.file;
	if (!line && a.n)
		qsort(a.v, (size_t)a.n, sizeof(*a.v), site_line_cmp);
	if (a.n && max > 0)
		memcpy(out, a.v, (size_t)(a.n < max ? a.n : max) * sizeof(*out));
	free(a.v);
	return a.n;
}

/* Appends a range to v[*n] (capacity *cap); false when out of memory. */
static bool range_add(struct gobin_inl_range **v, int *n, int *cap,
		      const struct gobin_inl_range *r)
{
	if (*n == *cap) {
		const int c = *cap ? *cap * 2 : 16;
		struct gobin_inl_range *nv = realloc(*v, (size_t)c * sizeof(**v));

		if (!nv)
			return false;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *r;
	return true;
}

int gobin_inline_ranges(const struct gobin *b, const struct gobin_func *f,
			struct gobin_inl_range **out)
{
	const ssize_t fi = gobin_func_index_at(b, f->entry);
	struct gobin_inl_range *v = NULL;
	int n = 0, cap = 0;
	struct inl_tree t;

	*out = NULL;
	if (fi < 0 || !inl_tree(b, (size_t)fi, &t))
		return 0;
	for (int i = 0; i < t.nruns; i++) {
		int32_t chain[64];
		int depth = 0;

		for (int32_t k = t.runs[i].val; k >= 0 && depth < 64;
		     k = inl_node_parent(b, &t, k))
			chain[depth++] = k;
		/* chain[0] is the deepest copy, chain[depth - 1] depth 1 */
		for (int d = 0; d < depth; d++) {
			const char *name = inl_node_name(b, &t, chain[d]);
			struct gobin_inl_range r = {
				.off = (uint32_t)(t.runs[i].lo - f->entry),
				.size = (uint32_t)(t.runs[i].hi - t.runs[i].lo),
				.depth = (uint32_t)(depth - d), .name = name };
			int j = n - 1;

			if (!name)
				continue;
			/* a run right after a range of the same copy at the
			 * same depth extends it */
			while (j >= 0 && j >= n - 64 &&
			       !(v[j].depth == r.depth && v[j].name == name &&
				 v[j].off + v[j].size == r.off))
				j--;
			if (j >= 0 && j >= n - 64) {
				v[j].size += r.size;
				continue;
			}
			if (!range_add(&v, &n, &cap, &r)) {
				free(v);
				inl_tree_free(&t);
				return -ENOMEM;
			}
		}
	}
	inl_tree_free(&t);
	*out = v;
	return n;
}
