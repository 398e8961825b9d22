/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks (report/folded.h): a hash of paths of interned names to
 * summed values; lines are built and sorted only when written. Self times
 * are computed here, from one array per goroutine of the time of the
 * calls returned below each of its open calls.
 */
#include "folded.h"

#include "map.h"
#include "output.h"
#include "pair.h"
#include "xalloc.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fent {
	uint64_t value;
	uint32_t off, n;          /* path: f->path[off, off + n) */
};

/* A goroutine with returned callees whose caller has not returned yet. */
struct fgor {
	uint32_t pid;
	uint64_t key;             /* goid, or tid | 1 << 63 (as report/pair.c) */
	uint64_t *child;          /* child[d]: latency of the calls returned at
				     depth d + 1 since the call at depth d began */
	uint32_t top;             /* child[d] is 0 for every d >= top */
	uint32_t cap;
};

struct folded {
	struct u64map tab;        /* hash of a path -> index in ents */
	struct fent *ents;
	uint32_t cap, count, max; /* ents: room, used, most kept */
	uint32_t *path;
	size_t npath, cap_path;
	uint64_t dropped;
	uint64_t noret;           /* counted entries of functions without
				     return probe: no call, no stack */
	char **names;             /* interned frame names, by id */
	uint32_t nnames, cap_names;
	struct u64map nix;        /* hash of a name -> id */
	struct u64map gix;        /* hash of (pid, key) -> index in gors */
	struct fgor *gors;
	uint32_t gcap, gcount;
	uint64_t *spare;          /* a freed child array, reused */
	uint32_t spare_cap;
	uint32_t *fold_ids;       /* pairing fid -> name id + 1 */
	uint32_t nfold_ids;
	uint32_t *scratch;        /* path being built */
	uint32_t cap_scratch;
	struct buf tmp;
};

struct folded *folded_new(uint32_t max_stacks)
{
	struct folded *f = xrealloc(NULL, sizeof(*f), "folded stacks");

	memset(f, 0, sizeof(*f));
	f->max = max_stacks ? max_stacks : 1u << 20;
	return f;
}

void folded_free(struct folded *f)
{
	if (!f)
		return;
	u64map_free(&f->tab);
	free(f->ents);
	free(f->path);
	for (uint32_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	u64map_free(&f->nix);
	u64map_free(&f->gix);
	for (uint32_t i = 0; i < f->gcount; i++)
		free(f->gors[i].child);
	free(f->gors);
	free(f->spare);
	free(f->fold_ids);
	free(f->scratch);
	buf_free(&f->tmp);
	free(f);
}

uint32_t folded_intern(struct folded *f, const char *name, size_t len)
{
	const uint64_t h = u64map_hash_mem(name, len, 0);
	uint32_t pos = 0;

	for (const uint32_t *id; (id = u64map_find(&f->nix, h, &pos));) {
		const char *s = f->names[*id];
		if (!strncmp(s, name, len) && !s[len])
			return *id;
	}
	if (f->nnames == f->cap_names) {
		f->cap_names = f->cap_names ? f->cap_names * 2 : 256;
		f->names = xrealloc(f->names, f->cap_names * sizeof(*f->names), "folded stacks");
	}
	char *s = xrealloc(NULL, len + 1, "folded stacks");
	memcpy(s, name, len);
	s[len] = '\0';
	f->names[f->nnames] = s;
	if (u64map_add(&f->nix, h, f->nnames, UINT32_MAX))
		xalloc_die("folded stacks: name index");
	return f->nnames++;
}

void folded_add(struct folded *f, const uint32_t *fids, uint32_t n, uint64_t value)
{
	const uint64_t h = u64map_hash_mem(fids, n * sizeof(*fids), 0);
	uint32_t pos = 0;

	for (const uint32_t *i; (i = u64map_find(&f->tab, h, &pos));) {
		struct fent *e = &f->ents[*i];
		if (e->n == n && !memcmp(f->path + e->off, fids, n * sizeof(*fids))) {
			e->value += value;
			return;
		}
	}
	if (f->count >= f->max) {
		f->dropped++;
		return;
	}
	if (f->npath + n > f->cap_path) {
		f->cap_path = (f->npath + n) * 2;
		f->path = xrealloc(f->path, f->cap_path * sizeof(*f->path), "folded stacks");
	}
	if (f->count == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 256;
		f->ents = xrealloc(f->ents, f->cap * sizeof(*f->ents), "folded stacks");
	}
	memcpy(f->path + f->npath, fids, n * sizeof(*fids));
	f->ents[f->count] = (struct fent){ .value = value, .off = (uint32_t)f->npath, .n = n };
	if (u64map_add(&f->tab, h, f->count, UINT32_MAX))
		xalloc_die("folded stacks: path index");
	f->npath += n;
	f->count++;
}

/* ------------------------------------------------------------ self time */

/* The index in f->gors of goroutine (pid, key), or UINT32_MAX. */
static uint32_t gor_find(const struct folded *f, uint32_t pid, uint64_t key)
{
	uint32_t pos = 0;

	for (const uint32_t *i; (i = u64map_find(&f->gix, u64map_hash2(key, pid), &pos));)
		if (f->gors[*i].pid == pid && f->gors[*i].key == key)
			return *i;
	return UINT32_MAX;
}

/* A new goroutine (pid, key), with no callees yet. */
static struct fgor *gor_new(struct folded *f, uint32_t pid, uint64_t key)
{
	if (f->gcount == f->gcap) {
		f->gcap = f->gcap ? f->gcap * 2 : 64;
		f->gors = xrealloc(f->gors, f->gcap * sizeof(*f->gors), "folded stacks");
	}
	if (u64map_add(&f->gix, u64map_hash2(key, pid), f->gcount, UINT32_MAX))
		xalloc_die("folded stacks: goroutine index");
	struct fgor *g = &f->gors[f->gcount++];
	*g = (struct fgor){ .pid = pid, .key = key };
	if (f->spare) {
		g->child = f->spare;
		g->cap = f->spare_cap;
		f->spare = NULL;
	}
	return g;
}

/* Forgets goroutine i (its callers have all returned); the last one takes
 * its place. */
static void gor_del(struct folded *f, uint32_t i)
{
	struct fgor *g = &f->gors[i];
	const uint32_t last = f->gcount - 1;

	if (!f->spare || g->cap > f->spare_cap) {
		free(f->spare);
		f->spare = g->child;
		f->spare_cap = g->cap;
	} else {
		free(g->child);
	}
	u64map_del(&f->gix, u64map_hash2(g->key, g->pid), i);
	if (i != last) {
		const struct fgor *m = &f->gors[last];
		const uint64_t h = u64map_hash2(m->key, m->pid);
		u64map_del(&f->gix, h, last);
		if (u64map_add(&f->gix, h, i, UINT32_MAX))
			xalloc_die("folded stacks: goroutine index");
		*g = *m;
	}
	f->gcount--;
}

/*
 * A return of goroutine (ev->pid, ev's key) closed the call at depth `d`:
 * takes the time of the calls returned under it (and under those it
 * closed over) and adds `latency` to its caller's, or, when the call is
 * not counted (`lost`, latency unknown), that time: its callees are still
 * its caller's callees. Returns the time taken.
 */
static uint64_t close_at(struct folded *f, const struct gtr_event *ev, uint32_t d,
			 uint64_t latency, bool lost)
{
	const uint64_t key = ev->goid ? ev->goid : (uint64_t)ev->tid | 1ull << 63;
	uint64_t children = 0;
	const uint32_t i = gor_find(f, ev->pid, key);
	struct fgor *g = i == UINT32_MAX ? NULL : &f->gors[i];

	if (g) {
		/* its callees, and those of the calls it closed over (deeper) */
		for (uint32_t k = d; k < g->top; k++) {
			children += g->child[k];
			g->child[k] = 0;
		}
		if (g->top > d)
			g->top = d;
	}
	if (!d) {
		/* the outermost call returned: nothing left to account */
		if (g)
			gor_del(f, i);
		return children;
	}
	if (lost && !children)
		return 0;
	if (!g)
		g = gor_new(f, ev->pid, key);
	if (d > g->cap) {
		const uint32_t cap = d * 2 > 16 ? d * 2 : 16;
		g->child = xrealloc(g->child, cap * sizeof(*g->child), "folded stacks");
		g->cap = cap;
	}
	for (uint32_t k = g->top; k < d; k++)
		g->child[k] = 0;
	if (g->top < d)
		g->top = d;
	g->child[d - 1] += lost ? children : latency;
	return children;
}

uint64_t folded_self(struct folded *f, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;

	if (!e->entry || !ev || ev->kind != GTR_KIND_RETURN)
		return 0;
	const uint64_t children = close_at(f, ev, e->depth, e->latency_ns, false);
	return e->latency_ns > children ? e->latency_ns - children : 0;
}

/*
 * Adds `self` to the recorded stack of `se`, root first: each frame named
 * by output_frame(), then the functions inlined there, outermost first
 * (Go's tracebacks show them as frames of their own).
 */
static void folded_stack(struct folded *f, const struct output *o,
			 const struct gtr_event *se, uint64_t self)
{
	const uint32_t n = se->nstack < GTR_MAX_STACK ? se->nstack : GTR_MAX_STACK;
	const uint32_t most = n * (1 + GTR_MAX_INLINE_DEPTH);
	uint32_t m = 0;

	if (most > f->cap_scratch) {
		f->cap_scratch = most;
		f->scratch = xrealloc(f->scratch, f->cap_scratch * sizeof(*f->scratch), "folded stacks");
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t k = n - 1 - i;  /* innermost first in the file */
		const char *inl[GTR_MAX_INLINE_DEPTH];
		const uint32_t ni = output_inlined(o, se->pid, se->stack[k], k, inl,
						   GTR_MAX_INLINE_DEPTH);

		buf_reset(&f->tmp);
		output_frame(o, &f->tmp, se->pid, se->stack[k], k, false, true);
		f->scratch[m++] = folded_intern(f, f->tmp.data ? f->tmp.data : "", f->tmp.len);
		for (uint32_t j = ni; j-- > 0;)
			f->scratch[m++] = folded_intern(f, inl[j], strlen(inl[j]));
	}
	folded_add(f, f->scratch, m, self);
}

void folded_call(struct folded *f, struct pairer *p, const struct output *o,
		 const struct report_event *e, bool count)
{
	uint32_t n;
	uint64_t pair_self;
	const uint32_t *fids = pair_last_stack(p, &n, &pair_self);
	uint32_t d;

	if (count && e->ev->kind == GTR_KIND_ENTRY && !e->tracked && !e->untracked)
		f->noret++;
	if (!fids || !e->entry) {
		/* a return shown as lost still closed a call: the calls
		 * returned under it are its caller's callees */
		if (e->lost && pair_last_closed(p, &d))
			close_at(f, e->ev, d, 0, true);
		return;
	}
	const uint64_t self = folded_self(f, e);
	if (!count)
		return;
	const struct gtr_event *se = e->entry->stack && e->entry->nstack ? e->entry :
				     e->ev->stack && e->ev->nstack ? e->ev : NULL;
	if (se) {
		folded_stack(f, o, se, self);
		return;
	}
	if (n > f->cap_scratch) {
		f->cap_scratch = n * 2;
		f->scratch = xrealloc(f->scratch, f->cap_scratch * sizeof(*f->scratch), "folded stacks");
	}
	uint32_t *path = f->scratch;
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t fid = fids[i];
		if (fid >= f->nfold_ids) {
			const uint32_t m = pair_nfuncs(p) > fid ? pair_nfuncs(p) : fid + 1;
			f->fold_ids = xrealloc(f->fold_ids, m * sizeof(*f->fold_ids), "folded stacks");
			memset(f->fold_ids + f->nfold_ids, 0, (m - f->nfold_ids) * sizeof(*f->fold_ids));
			f->nfold_ids = m;
		}
		if (!f->fold_ids[fid]) {
			const char *name = pair_func_name(p, fid);
			f->fold_ids[fid] = folded_intern(f, name, strlen(name)) + 1;
		}
		path[i] = f->fold_ids[fid] - 1;
	}
	folded_add(f, path, n, self);
}

uint64_t folded_dropped(const struct folded *f)
{
	return f->dropped;
}

struct line {
	char *s;
	uint64_t value;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->s, ((const struct line *)b)->s);
}

/* Appends a function name with ';' (the frame separator) replaced. */
static void put_name(struct buf *b, const char *s)
{
	for (; *s; s++)
		buf_putc(b, *s == ';' ? ',' : *s == '\n' ? ' ' : *s);
}

void folded_write(const struct folded *f, struct buf *b)
{
	if (!f->count && f->noret)
		fprintf(stderr, "gotrace-report: note: no folded stacks: a stack is a call, an entry "
			"paired with its return, and the %" PRIu64 " entr%s that matched %s no return "
			"probe (record FUNC r:FUNC for calls)\n", f->noret,
			f->noret == 1 ? "y" : "ies", f->noret == 1 ? "has" : "have");
	struct line *lines = xrealloc(NULL, (f->count + 1) * sizeof(*lines), "folded stacks");
	struct buf tmp = BUF_INIT;
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->count; i++) {
		const struct fent *e = &f->ents[i];
		buf_reset(&tmp);
		for (uint32_t k = 0; k < e->n; k++) {
			if (k)
				buf_putc(&tmp, ';');
			put_name(&tmp, f->names[f->path[e->off + k]]);
		}
		lines[n].s = strdup(buf_cstr(&tmp));
		if (!lines[n].s)
			xalloc_die("folded stacks");
		lines[n].value = e->value;
		n++;
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (uint32_t i = 0; i < n; i++) {
		buf_puts(b, lines[i].s);
		buf_putc(b, ' ');
		buf_u64(b, lines[i].value);
		buf_putc(b, '\n');
		free(lines[i].s);
	}
	free(lines);
	buf_free(&tmp);
}

/* --format folded: a row of the output table (report/output.h) whose
 * stacks the folded sink writes (report/sink.c); it prints no event. */
const struct output_format out_folded = {
	.name = "folded",
	.flags = OUTPUT_F_UNORDERED | OUTPUT_F_SUMMARY,
};
