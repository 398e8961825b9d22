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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "inl_int.h"
#include "insn.h"
#include "search.h"

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

	if (!inl_tree(b, fi, &t)) {
		l->unreloc += t.unreloc;
		return 0;
	}
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
	if (l->unreloc)
		snprintf(l->gap, sizeof(l->gap), "this binary's inline tree "
			 "needs relocations gotrace cannot apply (%zu function%s)",
			 l->unreloc, l->unreloc == 1 ? "" : "s");
	b->inl = l;
	return l;
}

const char *gobin_inline_gap(const struct gobin *b)
{
	const struct gofact_inltree *t =
		gofact_inltree(b->go_minor ? b->go_minor : b->pcl.minor);
	const struct gobin_inl *l;

	/* only Go 1.16-1.17 trees are found through pointers, and only
	 * without DWARF are copies found through them */
	if (!b->pie || !b->pcl.funcoff || !t || !t->ptrs || b->has_dwarf ||
	    b->dbg_elf || (b->inl && !b->inl->unreloc))
		return NULL;
	l = inl_get(b);
	return l && l->unreloc ? l->gap : NULL;
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

/* The site of `line` in funcs[fi], inline node `node`, found so far;
 * NULL when none. */
static struct gobin_site *line_find(const struct gobin *b, struct line_acc *a,
				    size_t fi, int32_t node, int line)
{
	for (int i = 0; i < a->n; i++) {
		struct gobin_site *s = &a->v[i];

		if (s->outer.entry == b->funcs[fi].entry && s->node == node &&
		    s->line == line)
			return s;
	}
	return NULL;
}

/* Appends a site at pc of funcs[fi] (innermost inline node `node`, -1
 * none; tree t) for `line`. */
static void line_push(const struct gobin *b, struct line_acc *a, size_t fi,
		      const struct inl_tree *t, int32_t node, int line, uint64_t pc)
{
	const char *func = node >= 0 ? inl_node_name(b, t, node) : b->funcs[fi].name;
	struct gobin_site *s;

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

/* Adds address pc of `line` in funcs[fi] (inline node `node`, tree t),
 * keeping the lowest per node. */
static void line_add(const struct gobin *b, struct line_acc *a, size_t fi,
		     const struct inl_tree *t, int32_t node, int line, uint64_t pc)
{
	struct gobin_site *s = line_find(b, a, fi, node, line);

	if (!s) {
		line_push(b, a, fi, t, node, line, pc);
	} else if (pc < s->addr) {
		s->addr = pc;
		s->file_offset = gobin_vaddr_to_offset(b, pc);
	}
}

/*
 * One function's instructions (go_insn_flow) with, per instruction, its
 * line, file number and innermost inline node (-1 none), for placing
 * line probes without DWARF.
 */
struct fn_flow {
	struct go_flow *fl;
	int32_t *line, *file, *node;
	int *tix;                /* index of a branch's target, -1 none */
	bool *root;              /* no known branch or fall-through reaches
				    it (an indirect JMP's target, padding) */
	int n;                   /* 0: not built; -1: cannot be */
	int *cnt, *seen;         /* scratch of flow_sites() */
	bool *ent;
};

static void fn_flow_free(struct fn_flow *f)
{
	free(f->fl);
	free(f->line);
	free(f->file);
	free(f->node);
	free(f->tix);
	free(f->root);
	free(f->cnt);
	free(f->seen);
	free(f->ent);
}

/* The index of the instruction at offset `off` of f, -1 none. */
static int flow_at(const struct fn_flow *f, uint32_t off)
{
	const int lo = f->n > 0 ? (int)SEARCH_GE(f->fl, (size_t)f->n, off, off) : 0;

	return lo < f->n && f->fl[lo].off == off ? lo : -1;
}

/* Builds *f for funcs[fi] (line runs lr[nl], file runs fr[nf], tree t
 * or NULL) on first use; false when its code cannot be decoded. */
static bool fn_flow_get(const struct gobin *b, size_t fi, struct fn_flow *f,
			const struct inl_run *lr, int nl, const struct inl_run *fr,
			int nf, const struct inl_tree *t)
{
	const struct gobin_func *fn = &b->funcs[fi];
	const struct gt_arch *ai = gt_arch_of(b->arch);
	const size_t len = (size_t)(fn->end - fn->entry);
	const uint8_t *code = len ? gobin_at_vaddr(b, fn->entry, len) : NULL;
	int n;

	if (f->n)
		return f->n > 0;
	f->n = -1;
	if (!code || !ai->flow || (n = ai->flow(code, len, NULL, 0)) <= 0)
		return false;
	f->fl = calloc((size_t)n, sizeof(*f->fl));
	f->line = calloc((size_t)n, sizeof(*f->line));
	f->file = calloc((size_t)n, sizeof(*f->file));
	f->node = calloc((size_t)n, sizeof(*f->node));
	f->cnt = calloc((size_t)n, sizeof(*f->cnt));
	f->seen = calloc((size_t)n, sizeof(*f->seen));
	f->tix = calloc((size_t)n, sizeof(*f->tix));
	f->ent = calloc((size_t)n, sizeof(*f->ent));
	f->root = calloc((size_t)n, sizeof(*f->root));
	if (!f->fl || !f->line || !f->file || !f->node || !f->cnt || !f->seen ||
	    !f->tix || !f->ent || !f->root || ai->flow(code, len, f->fl, n) != n)
		return false;
	f->n = n;
	for (int i = 0; i < n; i++) {
		const uint64_t pc = fn->entry + f->fl[i].off;

		f->line[i] = inl_run_at(lr, nl, pc);
		f->file[i] = inl_run_at(fr, nf, pc);
		f->node[i] = t ? inl_run_at(t->runs, t->nruns, pc) : -1;
		f->tix[i] = f->fl[i].target == UINT32_MAX ? -1 :
			    flow_at(f, f->fl[i].target);
		f->root[i] = i && !f->fl[i - 1].falls;
	}
	for (int i = 0; i < n; i++)
		if (f->tix[i] >= 0)
			f->root[f->tix[i]] = false;
	return true;
}

/* Whether instruction i of f is of (line, file, node). */
static bool flow_in(const struct fn_flow *f, int i, int line, int32_t file,
		    int32_t node)
{
	return i >= 0 && i < f->n && f->line[i] == line && f->file[i] == file &&
	       f->node[i] == node;
}

/* Reaches instruction j from code outside the line (line, file,
 * node): an entry when it is of the line, else queued in q[*nq]. */
static void flow_reach(struct fn_flow *f, int j, int line, int32_t file,
		       int32_t node, int *q, int *nq)
{
	if (j < 0 || j >= f->n || f->seen[j])
		return;
	f->seen[j] = 1;
	if (flow_in(f, j, line, file, node))
		f->ent[j] = true;
	else
		q[(*nq)++] = j;
}

/*
 * Marks in f->ent the entries of (line, file, node): its instructions
 * that code outside it reaches from the function's entry without going
 * through it (falling through, a branch either way, an indirect JMP to
 * any instruction no known branch reaches: a jump table's cases). The
 * compiler scatters a line's instructions (register moves before a
 * join, pieces among its neighbours', a switch's jump table), and a
 * piece only the line's own code leads to is the same pass through the
 * line, not an entry. Uses f->cnt as a queue, f->seen.
 */
static void flow_entries(struct fn_flow *f, int line, int32_t file, int32_t node)
{
	int *q = f->cnt, nq = 0;
	bool tables = false;

	memset(f->seen, 0, (size_t)f->n * sizeof(*f->seen));
	memset(f->ent, 0, (size_t)f->n * sizeof(*f->ent));
	flow_reach(f, 0, line, file, node, q, &nq);
	for (int h = 0; h < nq; h++) {
		const int i = q[h];

		if (f->fl[i].falls)
			flow_reach(f, i + 1, line, file, node, q, &nq);
		flow_reach(f, f->tix[i], line, file, node, q, &nq);
		for (int r = 1; f->fl[i].indirect && !tables && r < f->n; r++)
			if (f->root[r])
				flow_reach(f, r, line, file, node, q, &nq);
		tables |= f->fl[i].indirect;
	}
}

/*
 * Whether every path from instruction e going forward (falling through,
 * forward branches) reaches instruction x, in f->cnt (as scratch: per
 * instruction of [e, x], whether it must reach x). Paths that end (a
 * RET, a loop's back edge) do not reach it.
 */
static bool flow_must(struct fn_flow *f, int e, int x)
{
	int *must = f->cnt;

	if (e > x)
		return false;
	must[x] = 1;
	for (int i = x - 1; i >= e; i--) {
		const int next[2] = { f->fl[i].falls ? i + 1 : -1,
				      f->tix[i] > i ? f->tix[i] : -1 };
		int any = 0, all = 1;

		for (int k = 0; k < 2; k++) {
			if (next[k] < 0)
				continue;
			any = 1;
			all &= next[k] <= x && must[next[k]];
		}
		must[i] = any && all;
	}
	return must[e];
}

/*
 * Where a probe on `line` (file number `file`, inline node `node`) of
 * the function of f fires once each time control comes into the line's
 * code, without DWARF's statement starts. Of its entries
 * (flow_entries), the site is
 * the first instruction of the line that every path from every entry
 * reaches (where an if's branches join, the test a line's scattered
 * register moves lead to), else each entry. Writes up to max offsets
 * (from the entry) to out[] and returns the count; 0 when the line has
 * no entry.
 */
static int flow_sites(struct fn_flow *f, int line, int32_t file, int32_t node,
		      uint32_t *out, int max)
{
	int ne = 0, first = -1;

	flow_entries(f, line, file, node);
	for (int i = 0; i < f->n; i++) {
		if (!f->ent[i])
			continue;
		if (ne < max)
			out[ne] = f->fl[i].off;
		ne++;
		if (first < 0)
			first = i;
	}
	for (int x = first; ne > 1 && x >= 0 && x < f->n; x++) {
		bool all = flow_in(f, x, line, file, node);

		for (int e = first; all && e < f->n; e++)
			all = !f->ent[e] || flow_must(f, e, x);
		if (all) {
			out[0] = f->fl[x].off;
			return 1;
		}
	}
	return ne < max ? ne : max;
}

/* The first address of [lo, hi) where a statement begins (stmts[n],
 * ascending), or 0 when none does. */
static uint64_t first_stmt(const uint64_t *stmts, int n, uint64_t lo, uint64_t hi)
{
	const int l = n > 0 ? (int)search_ge(stmts, (size_t)n, sizeof(*stmts), 0,
					     sizeof(*stmts), lo) : 0;

	return l < n && stmts[l] < hi ? stmts[l] : 0;
}

/*
 * Adds the sites of `line` in funcs[fi] (file number `fileno`, inline
 * node `node`, tree t or NULL) where no statement start placed one: as
 * flow_sites() finds them, else (code not decoded) its lowest address,
 * `lo`.
 */
static void line_add_flow(const struct gobin *b, struct line_acc *a, size_t fi,
			  const struct inl_tree *t, int32_t node, int line,
			  int32_t fileno, uint64_t lo, struct fn_flow *ff,
			  const struct inl_run *lr, int nl,
			  const struct inl_run *fr, int nf)
{
	uint32_t offs[16];
	int k = 0;

	if (fn_flow_get(b, fi, ff, lr, nl, fr, nf, t))
		k = flow_sites(ff, line, fileno, node, offs, 16);
	if (!k)
		line_push(b, a, fi, t, node, line, lo);
	for (int j = 0; j < k; j++)
		line_push(b, a, fi, t, node, line, b->funcs[fi].entry + offs[j]);
}

/*
 * The sites of `file`:`line` in funcs[fi] from its pcfile and pcln
 * tables, into a: per (line, inline node), the first instruction of the
 * line where DWARF's line table says a statement begins (is_stmt), else,
 * without DWARF or when no row of that copy says so, where control
 * comes into the line's code (line_add_flow). 0 or -ENOMEM.
 */
static int func_lines(const struct gobin *b, size_t fi, const char *file,
		      int line, struct line_acc *a)
{
	struct inl_run *fr = NULL, *lr = NULL;
	const struct gobin_func *f = &b->funcs[fi];
	struct fn_flow ff = { 0 };
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
			const int32_t fileno = inl_run_at(fr, nf, lr[i].lo);
			const char *fn;
			uint64_t pc = lr[i].lo;
			int32_t node;

			if (line ? lr[i].val != line : lr[i].val <= 0)
				continue;
			fn = inl_file(b, fi, fileno);
			if (!fn || !path_is(fn, file))
				continue;
			if (!pass && !(pc = first_stmt(stmts, ns, lr[i].lo, lr[i].hi)))
				continue;
			if (!a->file)
				a->file = fn;
			else if (strcmp(a->file, fn))
				a->ambiguous = true;
			node = has_tree ? inl_run_at(t.runs, t.nruns, pc) : -1;
			if (!pass)
				line_add(b, a, fi, has_tree ? &t : NULL, node,
					 lr[i].val, pc);
			else if (!line_find(b, a, fi, node, lr[i].val))
				line_add_flow(b, a, fi, has_tree ? &t : NULL, node,
					      lr[i].val, fileno, pc, &ff, lr, nl,
					      fr, nf);
		}
	}
	fn_flow_free(&ff);
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

int32_t gobin_frame_at(const struct gobin *b, uint64_t pc)
{
	const ssize_t fi = b->compiler == GOBIN_GC ? gobin_func_index_at(b, pc) : -1;

	return fi < 0 ? -1 : inl_pcvalue(b, (size_t)fi, INL_TAB_SP, pc);
}
