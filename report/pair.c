/* SPDX-License-Identifier: MIT */
/*
 * Entry/return pairing with one call stack per goroutine (report/pair.h).
 * Each goroutine's open calls live in one byte stack: a frame header, the
 * entry's values, the bytes of its strings (string pointers are stored as
 * offsets from the frame and turned back into pointers on return), then
 * the entry's recorded stack, if any.
 */
#include "pair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_FID UINT32_MAX

struct frame {
	uint64_t ts_ns;
	uint64_t child_ns;        /* latency of paired callees */
	const struct gtr_probe *probe;
	uint32_t fid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t size;            /* bytes of the frame, header included */
	uint32_t nvals;
	uint32_t nstack;          /* frames of the entry's recorded stack */
	uint32_t stack_off;       /* offset of the stack in the frame */
	char comm[GTR_COMM_LEN + 1];
	/* struct gtr_value vals[nvals]; uint8_t bytes[]; uint64_t stack[nstack] */
};

struct gor {
	uint32_t pid;
	uint64_t key;             /* goid, or tid | 1 << 63 when goid is 0 */
	uint64_t goid;
	uint8_t *mem;             /* frames */
	uint32_t used, cap;
	uint32_t *offs;           /* offset of each open frame in mem */
	uint32_t depth, cap_offs;
};

struct probe_ent {
	uint32_t id;
	uint32_t fid;
	bool has_ret;             /* the function has a return probe */
	bool used;
};

struct pairer {
	struct pair_limits lim;
	struct pair_counts cnt;

	struct probe_ent *pmap;   /* probe id -> function, open addressing */
	uint32_t pmap_cap;
	char **funcs;             /* fid -> symbol */
	uint32_t nfuncs;

	struct gor *gors;
	uint32_t ngors, cap_gors;
	uint32_t *gix;            /* hash of goroutines: index + 1, 0 empty */
	uint32_t gix_cap;
	uint32_t last_gor;        /* index of the goroutine met last */
	uint64_t bytes;

	struct gtr_event entry;   /* the last paired entry, rebuilt */
	struct gtr_event uentry;  /* an unwound or open entry, rebuilt */
	uint32_t unw_gor;         /* the last return's goroutine, */
	uint32_t unw_lo, unw_hi;  /* and the frames it closed over */
	uint64_t unw_end;         /* its ts_ns */
	uint32_t *stack;          /* pair_last_stack() */
	uint32_t stack_n, cap_stack;
	uint64_t last_self;
	bool last_ok;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "gotrace-report: out of memory (pairing, %zu bytes)\n", n);
		exit(1);
	}
	return q;
}

struct pairer *pair_new(const struct pair_limits *lim)
{
	struct pairer *p = xrealloc(NULL, sizeof(*p));

	memset(p, 0, sizeof(*p));
	if (lim)
		p->lim = *lim;
	if (!p->lim.max_depth)
		p->lim.max_depth = 1024;
	if (!p->lim.max_goroutines)
		p->lim.max_goroutines = 65536;
	if (!p->lim.max_bytes)
		p->lim.max_bytes = 256ull << 20;
	if (!p->lim.keep_str)
		p->lim.keep_str = 256;
	return p;
}

void pair_free(struct pairer *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->ngors; i++) {
		free(p->gors[i].mem);
		free(p->gors[i].offs);
	}
	for (uint32_t i = 0; i < p->nfuncs; i++)
		free(p->funcs[i]);
	free(p->funcs);
	free(p->gors);
	free(p->gix);
	free(p->pmap);
	free(p->stack);
	free(p);
}

/* ------------------------------------------------------------ probes */

static struct probe_ent *pmap_slot(const struct pairer *p, uint32_t id)
{
	if (!p->pmap_cap)
		return NULL;
	uint32_t h = (id * 2654435761u) & (p->pmap_cap - 1);
	while (p->pmap[h].used && p->pmap[h].id != id)
		h = (h + 1) & (p->pmap_cap - 1);
	return &p->pmap[h];
}

void pair_probes(struct pairer *p, const struct gtr_probe *const *probes, size_t n)
{
	uint32_t cap = 16;

	while (cap < 2 * n + 2)
		cap *= 2;
	free(p->pmap);
	p->pmap = xrealloc(NULL, cap * sizeof(*p->pmap));
	memset(p->pmap, 0, cap * sizeof(*p->pmap));
	p->pmap_cap = cap;
	/* fids stay stable across calls: functions are only ever added */
	for (size_t i = 0; i < n; i++) {
		const struct gtr_probe *pr = probes[i];
		const char *name = pr->func ? pr->func : "";
		char key[GTR_MAX_NAME + 16];
		uint32_t fid;

		snprintf(key, sizeof(key), "%u:%s", pr->binary_id, name);
		for (fid = 0; fid < p->nfuncs; fid++)
			if (!strcmp(p->funcs[fid], key))
				break;
		if (fid == p->nfuncs) {
			p->funcs = xrealloc(p->funcs, (p->nfuncs + 1) * sizeof(*p->funcs));
			p->funcs[p->nfuncs] = xrealloc(NULL, strlen(key) + 1);
			strcpy(p->funcs[p->nfuncs], key);
			p->nfuncs++;
		}
		struct probe_ent *e = pmap_slot(p, pr->id);
		e->used = true;
		e->id = pr->id;
		e->fid = fid;
	}
	for (size_t i = 0; i < n; i++) {
		if (probes[i]->kind != GTR_KIND_RETURN)
			continue;
		const uint32_t fid = pmap_slot(p, probes[i]->id)->fid;
		for (uint32_t h = 0; h < p->pmap_cap; h++)
			if (p->pmap[h].used && p->pmap[h].fid == fid)
				p->pmap[h].has_ret = true;
	}
}

uint32_t pair_fid(const struct pairer *p, uint32_t probe_id)
{
	const struct probe_ent *e = pmap_slot(p, probe_id);

	return e && e->used ? e->fid : NO_FID;
}

const char *pair_func_name(const struct pairer *p, uint32_t fid)
{
	if (fid >= p->nfuncs)
		return "";
	const char *s = strchr(p->funcs[fid], ':');
	return s ? s + 1 : "";
}

uint32_t pair_nfuncs(const struct pairer *p)
{
	return p->nfuncs;
}

/* ------------------------------------------------------------ goroutines */

static uint32_t ghash(uint32_t pid, uint64_t key, uint32_t cap)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull ^ (uint64_t)pid * 0xc2b2ae3d27d4eb4full;

	return (uint32_t)(h >> 32) & (cap - 1);
}

static void gix_rebuild(struct pairer *p, uint32_t cap)
{
	free(p->gix);
	p->gix = xrealloc(NULL, cap * sizeof(*p->gix));
	memset(p->gix, 0, cap * sizeof(*p->gix));
	p->gix_cap = cap;
	for (uint32_t i = 0; i < p->ngors; i++) {
		uint32_t h = ghash(p->gors[i].pid, p->gors[i].key, cap);
		while (p->gix[h])
			h = (h + 1) & (cap - 1);
		p->gix[h] = i + 1;
	}
}

/* Frees goroutines with no open call, to make room. */
static void gor_reclaim(struct pairer *p)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < p->ngors; i++) {
		struct gor *g = &p->gors[i];
		if (g->depth) {
			p->gors[j++] = *g;
			continue;
		}
		p->bytes -= g->cap + (uint64_t)g->cap_offs * sizeof(uint32_t);
		free(g->mem);
		free(g->offs);
	}
	p->ngors = j;
	gix_rebuild(p, p->gix_cap);
}

/* The goroutine of (pid, key); created when `create`. NULL when absent or
 * when the limit is reached. */
static struct gor *gor_get(struct pairer *p, uint32_t pid, uint64_t key, bool create)
{
	if (p->last_gor < p->ngors && p->gors[p->last_gor].pid == pid &&
	    p->gors[p->last_gor].key == key)
		return &p->gors[p->last_gor];
	if (p->gix_cap) {
		uint32_t h = ghash(pid, key, p->gix_cap);
		while (p->gix[h]) {
			struct gor *g = &p->gors[p->gix[h] - 1];
			if (g->pid == pid && g->key == key) {
				p->last_gor = p->gix[h] - 1;
				return g;
			}
			h = (h + 1) & (p->gix_cap - 1);
		}
	}
	if (!create)
		return NULL;
	if (p->ngors >= p->lim.max_goroutines) {
		gor_reclaim(p);
		if (p->ngors >= p->lim.max_goroutines)
			return NULL;
	}
	if (p->ngors == p->cap_gors) {
		p->cap_gors = p->cap_gors ? p->cap_gors * 2 : 64;
		p->gors = xrealloc(p->gors, p->cap_gors * sizeof(*p->gors));
	}
	struct gor *g = &p->gors[p->ngors++];
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	g->key = key;
	p->last_gor = p->ngors - 1;
	if ((p->ngors + 1) * 2 > p->gix_cap)
		gix_rebuild(p, p->gix_cap ? p->gix_cap * 2 : 256);
	else {
		uint32_t h = ghash(pid, key, p->gix_cap);
		while (p->gix[h])
			h = (h + 1) & (p->gix_cap - 1);
		p->gix[h] = p->ngors;
	}
	return g;
}

/* ------------------------------------------------------------ frames */

static bool push(struct pairer *p, struct gor *g, const struct report_event *e,
		 uint32_t fid)
{
	const struct gtr_event *ev = e->ev;
	const uint32_t nv = ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;
	size_t size = sizeof(struct frame) + nv * sizeof(struct gtr_value);

	for (uint32_t i = 0; i < nv; i++)
		if (ev->vals[i].kind == GTR_VAL_STR)
			size += ev->vals[i].v.s.len < p->lim.keep_str ? ev->vals[i].v.s.len
								     : p->lim.keep_str;
	size = (size + 7) & ~(size_t)7;
	const uint32_t nst = ev->stack && ev->nstack ?
		(ev->nstack < GTR_MAX_STACK ? ev->nstack : GTR_MAX_STACK) : 0;
	const size_t stack_off = size;
	size += (size_t)nst * sizeof(uint64_t);
	if (g->depth >= p->lim.max_depth)
		return false;
	if (g->used + size > g->cap || g->depth == g->cap_offs) {
		const uint32_t ncap = g->used + size > g->cap ?
			(uint32_t)((g->used + size) * 2 > 4096 ? (g->used + size) * 2 : 4096) : g->cap;
		const uint32_t noffs = g->depth == g->cap_offs ?
			(g->cap_offs ? g->cap_offs * 2 : 16) : g->cap_offs;
		const uint64_t grow = (uint64_t)(ncap - g->cap) +
				      (uint64_t)(noffs - g->cap_offs) * sizeof(uint32_t);
		if (p->bytes + grow > p->lim.max_bytes)
			return false;
		g->mem = xrealloc(g->mem, ncap);
		g->offs = xrealloc(g->offs, noffs * sizeof(uint32_t));
		g->cap = ncap;
		g->cap_offs = noffs;
		p->bytes += grow;
	}
	uint8_t *base = g->mem + g->used;
	struct frame *f = (struct frame *)base;
	struct gtr_value *vals = (struct gtr_value *)(f + 1);
	size_t off = sizeof(struct frame) + nv * sizeof(struct gtr_value);

	memset(f, 0, sizeof(*f));
	f->ts_ns = ev->ts_ns;
	f->probe = e->probe;
	f->fid = fid;
	f->tid = ev->tid;
	f->cpu = ev->cpu;
	f->size = (uint32_t)size;
	f->nvals = nv;
	if (e->comm)
		strncpy(f->comm, e->comm, GTR_COMM_LEN); /* NUL-padded; memset above */
	for (uint32_t i = 0; i < nv; i++) {
		vals[i] = ev->vals[i];
		if (vals[i].kind != GTR_VAL_STR)
			continue;
		const uint32_t n = vals[i].v.s.len < p->lim.keep_str ? vals[i].v.s.len
								    : p->lim.keep_str;
		if (n)
			memcpy(base + off, vals[i].v.s.data, n);
		vals[i].v.s.len = n;
		vals[i].v.s.data = (const uint8_t *)(uintptr_t)off;
		off += n;
	}
	f->nstack = nst;
	f->stack_off = (uint32_t)stack_off;
	if (nst)
		memcpy(base + stack_off, ev->stack, nst * sizeof(uint64_t));
	g->offs[g->depth++] = g->used;
	g->used += (uint32_t)size;
	p->cnt.open++;
	return true;
}

/* Rebuilds the entry event of frame `f` of goroutine `g` into *out. */
static void rebuild(const struct gor *g, const struct frame *f, uint32_t probe_id,
		    struct gtr_event *out)
{
	const struct gtr_value *vals = (const struct gtr_value *)(f + 1);

	out->ts_ns = f->ts_ns;
	out->probe_id = probe_id;
	out->kind = GTR_KIND_ENTRY;
	out->pid = g->pid;
	out->tid = f->tid;
	out->goid = g->goid;
	out->cpu = f->cpu;
	out->nvals = f->nvals;
	out->nstack = f->nstack;
	out->stack = f->nstack ? (const uint64_t *)((const uint8_t *)f + f->stack_off) : NULL;
	for (uint32_t i = 0; i < f->nvals; i++) {
		out->vals[i] = vals[i];
		if (vals[i].kind == GTR_VAL_STR)
			out->vals[i].v.s.data = (const uint8_t *)f +
						(uintptr_t)vals[i].v.s.data;
	}
}

void pair_event(struct pairer *p, struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	const struct probe_ent *pe = pmap_slot(p, ev->probe_id);
	const uint64_t key = ev->goid ? ev->goid : (uint64_t)ev->tid | 1ull << 63;

	p->last_ok = false;
	p->unw_lo = p->unw_hi = 0;
	e->entry = NULL;
	e->entry_probe = NULL;
	e->latency_ns = 0;
	e->depth = 0;
	e->tracked = false;
	if (!pe || !pe->used || !pe->has_ret) {
		const struct gor *g = gor_get(p, ev->pid, key, false);
		e->depth = g ? g->depth : 0;
		if (ev->kind == GTR_KIND_RETURN)
			p->cnt.unpaired_returns++;
		return;
	}
	if (ev->kind == GTR_KIND_ENTRY) {
		struct gor *g = gor_get(p, ev->pid, key, true);
		if (!g) {
			p->cnt.dropped++;
			return;
		}
		g->goid = ev->goid;
		e->depth = g->depth;
		if (!push(p, g, e, pe->fid))
			p->cnt.dropped++;
		else
			e->tracked = true;
		return;
	}

	struct gor *g = gor_get(p, ev->pid, key, false);
	uint32_t k = g ? g->depth : 0;
	while (k > 0) {
		const struct frame *f = (const struct frame *)(g->mem + g->offs[k - 1]);
		if (f->fid == pe->fid)
			break;
		k--;
	}
	if (!k) {
		p->cnt.unpaired_returns++;
		e->depth = g ? g->depth : 0;
		return;
	}
	k--;
	const struct frame *f = (const struct frame *)(g->mem + g->offs[k]);
	rebuild(g, f, f->probe ? f->probe->id : ev->probe_id, &p->entry);
	e->entry = &p->entry;
	e->entry_probe = f->probe;
	e->latency_ns = ev->ts_ns >= f->ts_ns ? ev->ts_ns - f->ts_ns : 0;
	e->depth = k;

	/* the stack of this call, for folded output */
	if (k + 1 > p->cap_stack) {
		p->cap_stack = (k + 1) * 2;
		p->stack = xrealloc(p->stack, p->cap_stack * sizeof(*p->stack));
	}
	for (uint32_t i = 0; i <= k; i++)
		p->stack[i] = ((const struct frame *)(g->mem + g->offs[i]))->fid;
	p->stack_n = k + 1;
	p->last_self = e->latency_ns > f->child_ns ? e->latency_ns - f->child_ns : 0;
	p->last_ok = true;

	p->cnt.paired++;
	/* calls above it were closed over: a (recovered) panic unwound them;
	 * their frames stay readable until the next event */
	p->unw_gor = (uint32_t)(g - p->gors);
	p->unw_lo = k + 1;
	p->unw_hi = g->depth;
	p->unw_end = ev->ts_ns;
	p->cnt.abandoned += g->depth - k - 1;
	p->cnt.open -= g->depth - k;
	g->depth = k;
	g->used = g->offs[k];
	if (k > 0)
		((struct frame *)(g->mem + g->offs[k - 1]))->child_ns += e->latency_ns;
}

const uint32_t *pair_last_stack(struct pairer *p, uint32_t *n, uint64_t *self_ns)
{
	if (!p->last_ok)
		return NULL;
	*n = p->stack_n;
	*self_ns = p->last_self;
	return p->stack;
}

/* Calls `cb` for frame k of goroutine g, rebuilt into p->uentry. */
static void frame_cb(struct pairer *p, const struct gor *g, uint32_t k, uint64_t end_ns,
		     void (*cb)(void *arg, const struct report_event *e, uint64_t end_ns),
		     void *arg)
{
	const struct frame *f = (const struct frame *)(g->mem + g->offs[k]);
	rebuild(g, f, f->probe ? f->probe->id : 0, &p->uentry);
	struct report_event e = {
		.ev = &p->uentry,
		.probe = f->probe,
		.comm = f->comm,
		.depth = k,
	};
	cb(arg, &e, end_ns);
}

uint32_t pair_foreach_unwound(struct pairer *p,
			      void (*cb)(void *arg, const struct report_event *e,
					 uint64_t end_ns),
			      void *arg)
{
	if (p->unw_hi <= p->unw_lo || p->unw_gor >= p->ngors)
		return 0;
	const struct gor *g = &p->gors[p->unw_gor];
	for (uint32_t k = p->unw_hi; k-- > p->unw_lo;)
		frame_cb(p, g, k, p->unw_end, cb, arg);
	return p->unw_hi - p->unw_lo;
}

void pair_foreach_open(struct pairer *p,
		       void (*cb)(void *arg, const struct report_event *e, uint64_t end_ns),
		       void *arg)
{
	for (uint32_t i = 0; i < p->ngors; i++) {
		const struct gor *g = &p->gors[i];
		for (uint32_t k = 0; k < g->depth; k++)
			frame_cb(p, g, k, 0, cb, arg);
	}
}

void pair_counts(const struct pairer *p, struct pair_counts *c)
{
	*c = p->cnt;
}
