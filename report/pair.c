/* SPDX-License-Identifier: MIT */
/*
 * Entry/return pairing with one call stack per goroutine (report/pair.h).
 * Each goroutine's open calls live in one byte stack: a frame header, the
 * entry's values, the bytes of its strings (string pointers are stored as
 * offsets from the frame and turned back into pointers on return), then
 * the entry's recorded stack, if any.
 *
 * Events wait for their loss status in a FIFO of records (struct held) in
 * chunks: the event's values, strings and stack, and for a return that
 * closed open calls a copy of their frames (the matched entry first, then
 * those it closed over, as they lay in the goroutine's stack) and the
 * functions of the calls open below it. A record is decided when it is
 * released: by then every drop record that may concern it has been fed
 * (pair_drop() adds its span to its function's set of loss intervals), so
 * one binary search per call decides. An event with nothing to wait for
 * (an entry, an event of a function pairing does not track, a return no
 * drop record can concern any more) goes out without a copy when nothing
 * older is held (struct release then points into the goroutine's memory).
 */
#include "pair_int.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pairer *pair_new(const struct pair_limits *lim)
{
	struct pairer *p = xrealloc(NULL, sizeof(*p), "pairing");

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
	if (!p->lim.hold_ns)
		p->lim.hold_ns = 2000000000ull;
	if (!p->lim.hold_bytes)
		p->lim.hold_bytes = 128ull << 20;
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
	for (uint32_t i = 0; i < p->nspans; i++)
		free(p->spans[i].v);
	while (p->qhead) {
		struct chunk *c = p->qhead;
		p->qhead = c->next;
		free(c);
	}
	while (p->spare) {
		struct chunk *c = p->spare;
		p->spare = c->next;
		free(c);
	}
	free(p->spans);
	free(p->all.v);
	free(p->judged);
	free(p->prev);
	u64map_free(&p->prevx);
	free(p->stack);
	free(p->funcs);
	free(p->gors);
	u64map_free(&p->gix);
	free(p->pents);
	free(p->fret);
	free(p->fentry);
	free(p->fpred);
	free(p->fnoted);
	free(p->fwhole);
	u64map_free(&p->pidx);
	u64map_free(&p->fidx);
	free(p);
}

/* ------------------------------------------------------------ probes */

/* The fid of `key` ("binary:symbol"), a new one when it is new. */
static uint32_t func_id(struct pairer *p, const char *key)
{
	const uint64_t h = u64map_hash_str(key, 0);
	uint32_t pos = 0, fid;

	/* names that share a 64-bit hash are filed apart under it */
	for (const uint32_t *f; (f = u64map_find(&p->fidx, h, &pos));)
		if (!strcmp(p->funcs[*f], key))
			return *f;
	fid = p->nfuncs++;
	p->funcs = xrealloc(p->funcs, p->nfuncs * sizeof(*p->funcs), "pairing");
	p->fret = xrealloc(p->fret, p->nfuncs * sizeof(*p->fret), "pairing");
	p->fentry = xrealloc(p->fentry, p->nfuncs * sizeof(*p->fentry), "pairing");
	p->fpred = xrealloc(p->fpred, p->nfuncs * sizeof(*p->fpred), "pairing");
	p->fnoted = xrealloc(p->fnoted, p->nfuncs * sizeof(*p->fnoted), "pairing");
	p->fwhole = xrealloc(p->fwhole, p->nfuncs * sizeof(*p->fwhole), "pairing");
	p->funcs[fid] = xrealloc(NULL, strlen(key) + 1, "pairing");
	strcpy(p->funcs[fid], key);
	p->fret[fid] = p->fentry[fid] = p->fnoted[fid] = p->fwhole[fid] = false;
	p->fpred[fid] = NULL;
	if (u64map_add(&p->fidx, h, fid, UINT32_MAX))
		xalloc_die("pairing: function index");
	return fid;
}

/*
 * Says once per function why its calls are not paired: a probe of it had a
 * record-time predicate (spec/PROBES.md), so the kernel left out entries
 * or returns of some calls, and any pairing of the rest could be wrong.
 */
static void note_unpaired(struct pairer *p, uint32_t fid)
{
	const struct gtr_probe *pr = p->fpred[fid];
	const bool shown = strcmp(pr->predicate, "<redacted>") != 0;

	if (p->fnoted[fid])
		return;
	p->fnoted[fid] = true;
	fprintf(stderr, "gotrace-report: note: calls of %s are not paired: probe '%s' had the "
		"record-time predicate '%s', which left out the %s of the calls it did not hold "
		"for but not their %s, so pairing the rest could match a return with another "
		"call's entry; its entries and returns are shown alone ('unpaired'). To time the "
		"calls it selects, record both probes without it and filter the report: "
		"gotrace-report -f '%s'\n",
		pair_func_name(p, fid), pr->spec ? pr->spec : "", pr->predicate,
		pr->kind == GTR_KIND_RETURN ? "returns" : "entries",
		pr->kind == GTR_KIND_RETURN ? "entries" : "returns",
		shown ? pr->predicate : "PREDICATE");
}

void pair_probes(struct pairer *p, const struct gtr_probe *const *probes, size_t n)
{
	const uint32_t first = p->npents;

	/* probes are only ever added (format: a probe id is defined once),
	 * so only those after the ones seen are new: linear in all */
	for (size_t i = p->npents; i < n; i++) {
		const struct gtr_probe *pr = probes[i];
		char key[2 * GTR_MAX_NAME + 32];

		if (u64map_get(&p->pidx, pr->id))
			continue;
		/* an inlined copy or a line returns nowhere: a key of its
		 * own keeps it from pairing with the function's returns */
		if (pr->inlined_into && pr->inlined_into[0])
			snprintf(key, sizeof(key), "%u:%s (inlined into %.*s)", pr->binary_id,
				 pr->func ? pr->func : "", GTR_MAX_NAME / 2, pr->inlined_into);
		else if (pr->line && pr->line[0])
			snprintf(key, sizeof(key), "%u:%s (line %.*s)", pr->binary_id,
				 pr->func ? pr->func : "", GTR_MAX_NAME / 2, pr->line);
		else
			snprintf(key, sizeof(key), "%u:%s", pr->binary_id, pr->func ? pr->func : "");
		const uint32_t fid = func_id(p, key);

		p->pents = xrealloc(p->pents, (p->npents + 1) * sizeof(*p->pents), "pairing");
		p->pents[p->npents] = (struct probe_ent){ .id = pr->id, .fid = fid, .used = true,
							  .meta = pr };
		if (u64map_put(&p->pidx, pr->id, p->npents, UINT32_MAX))
			xalloc_die("pairing: probe index");
		p->npents++;
		const bool pred = pr->predicate && pr->predicate[0];
		if (pr->kind == GTR_KIND_RETURN) {
			/* whole calls while every return probe of it (merged
			 * files: of each recording) kept them */
			p->fwhole[fid] = (!p->fret[fid] || p->fwhole[fid]) && pr->whole_calls && !pred;
			p->fret[fid] = true;
		} else {
			p->fentry[fid] = true;
		}
		if (pred)
			p->fpred[fid] = pr;
	}
	/* whole calls: their function's windows explain nothing, as no
	 * suppressed event can part a call from its other half; windows set
	 * aside while events went by are unsure when taken up again */
	for (uint32_t i = 0; i < p->npents; i++) {
		struct probe_ent *e = &p->pents[i];

		if (p->fwhole[e->fid]) {
			e->rw.rate = 0;
			e->aside = true;
		} else if (i >= first || e->aside) {
			rate_begin(p, e, e->meta);
			e->rw.off = e->aside;
			e->aside = false;
		}
	}
	for (uint32_t i = first; i < p->npents; i++)
		if (fid_unpaired(p, p->pents[i].fid))
			note_unpaired(p, p->pents[i].fid);
	for (uint32_t i = 0; i < p->npents; i++)
		p->any_rate |= p->pents[i].rw.rate && probe_has_ret(p, &p->pents[i]);
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

/* The hash the goroutine index (lib/map.h) files (pid, key) under. */
static inline uint64_t gor_hash(uint32_t pid, uint64_t key)
{
	return u64map_hash2(key, pid);
}

/* Files goroutine `i` under its hash. */
static void gix_add(struct pairer *p, uint32_t i)
{
	if (u64map_add(&p->gix, gor_hash(p->gors[i].pid, p->gors[i].key), i, UINT32_MAX))
		xalloc_die("pairing: goroutine index");
}

/* Frees goroutines with no open call, to make room. */
static void gor_reclaim(struct pairer *p)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < p->ngors; i++) {
		struct gor *g = &p->gors[i];
		if (g->depth || g->over) {
			p->gors[j++] = *g;
			continue;
		}
		p->bytes -= g->cap + (uint64_t)g->cap_offs * sizeof(uint32_t);
		free(g->mem);
		free(g->offs);
	}
	p->ngors = j;
	u64map_clear(&p->gix);
	for (uint32_t i = 0; i < p->ngors; i++)
		gix_add(p, i);
}

/* The goroutine of (pid, key); created when `create`. NULL when absent or
 * when the limit is reached. */
static struct gor *gor_get(struct pairer *p, uint32_t pid, uint64_t key, bool create)
{
	if (p->last_gor < p->ngors && p->gors[p->last_gor].pid == pid &&
	    p->gors[p->last_gor].key == key)
		return &p->gors[p->last_gor];
	const uint64_t h = gor_hash(pid, key);
	uint32_t pos = 0;
	for (const uint32_t *i; (i = u64map_find(&p->gix, h, &pos));) {
		struct gor *g = &p->gors[*i];
		if (g->pid == pid && g->key == key) {
			p->last_gor = *i;
			return g;
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
		p->gors = xrealloc(p->gors, p->cap_gors * sizeof(*p->gors), "pairing");
	}
	struct gor *g = &p->gors[p->ngors++];
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	g->key = key;
	p->last_gor = p->ngors - 1;
	gix_add(p, p->last_gor);
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
		g->mem = xrealloc(g->mem, ncap, "pairing");
		g->offs = xrealloc(g->offs, noffs * sizeof(uint32_t), "pairing");
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

/* Rebuilds the entry event of frame `f` of goroutine (pid, goid) into *out. */
static void rebuild(uint32_t pid, uint64_t goid, const struct frame *f, uint32_t probe_id,
		    struct gtr_event *out)
{
	const struct gtr_value *vals = (const struct gtr_value *)(f + 1);

	out->ts_ns = f->ts_ns;
	out->probe_id = probe_id;
	out->kind = GTR_KIND_ENTRY;
	out->pid = pid;
	out->tid = f->tid;
	out->goid = goid;
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

/* ------------------------------------------------------------ held events */

static size_t al8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The oldest held record, NULL when none. */
static struct held *q_head(struct pairer *p)
{
	struct chunk *c = p->qhead;

	/* an empty chunk before others (a record too big for it followed) */
	while (c && c->head == c->tail && c != p->qtail) {
		p->qhead = c->next;
		p->held_bytes -= c->cap;
		free(c);
		c = p->qhead;
	}
	return c && c->head < c->tail ? (struct held *)((uint8_t *)c->data + c->head) : NULL;
}

static void q_pop(struct pairer *p)
{
	const struct held *h = q_head(p);
	struct chunk *c = p->qhead;

	if (!h)
		return;
	c->head += h->size;
	p->cnt.held--;
	if (c->head < c->tail)
		return;
	if (c == p->qtail) {      /* empty: reuse it */
		c->head = c->tail = 0;
		return;
	}
	p->qhead = c->next;
	p->held_bytes -= c->cap;
	if (c->cap == CHUNK) {    /* kept for reuse: no page faults again */
		c->next = p->spare;
		p->spare = c;
	} else {
		free(c);
	}
}

static struct held *q_alloc(struct pairer *p, size_t size)
{
	struct chunk *c = p->qtail;

	if (!c || c->tail + size > c->cap) {
		const size_t cap = size > CHUNK ? size : CHUNK;
		if (c && c == p->qhead && c->head == c->tail && c->cap >= size) {
			c->head = c->tail = 0;   /* the only chunk, empty */
		} else {
			if (p->spare && cap == CHUNK) {
				c = p->spare;
				p->spare = c->next;
			} else {
				c = xrealloc(NULL, sizeof(*c) + cap, "pairing");
				c->cap = (uint32_t)cap;
			}
			c->next = NULL;
			c->head = c->tail = 0;
			if (p->qtail)
				p->qtail->next = c;
			else
				p->qhead = c;
			p->qtail = c;
			p->held_bytes += c->cap;
		}
	}
	struct held *h = (struct held *)((uint8_t *)c->data + c->tail);
	c->tail += (uint32_t)size;
	p->cnt.held++;
	return h;
}

/*
 * Appends a record of event `e`: its values, strings and stack, and room
 * for `frames` bytes of frames, `nframes` frame offsets and `nfids` fids.
 */
static struct held *hold(struct pairer *p, const struct report_event *e, enum held_kind kind,
			 uint32_t fid, uint32_t depth, size_t frames, uint32_t nframes,
			 uint32_t nfids)
{
	const struct gtr_event *ev = e->ev;
	const uint32_t nv = ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;
	const uint32_t nst = ev->stack && ev->nstack ?
		(ev->nstack < GTR_MAX_STACK ? ev->nstack : GTR_MAX_STACK) : 0;
	size_t size = sizeof(struct held) + nv * sizeof(struct gtr_value);

	for (uint32_t i = 0; i < nv; i++)
		if (ev->vals[i].kind == GTR_VAL_STR)
			size += ev->vals[i].v.s.len;
	size = al8(size);
	const size_t stack_off = size;
	size += (size_t)nst * sizeof(uint64_t);
	const size_t frames_off = size;
	size += al8(frames);
	const size_t offs_off = size;
	size += (size_t)nframes * sizeof(uint32_t);
	const size_t fids_off = size;
	size += (size_t)nfids * sizeof(uint32_t);
	size = al8(size);

	struct held *h = q_alloc(p, size);
	uint8_t *base = (uint8_t *)h;
	struct gtr_value *vals = (struct gtr_value *)(h + 1);
	size_t off = sizeof(struct held) + nv * sizeof(struct gtr_value);

	memset(h, 0, sizeof(*h));
	h->size = (uint32_t)size;
	h->kind = (uint8_t)kind;
	h->fid = fid;
	h->depth = depth;
	h->ts_ns = ev->ts_ns;
	h->goid = ev->goid;
	h->probe_id = ev->probe_id;
	h->pid = ev->pid;
	h->tid = ev->tid;
	h->cpu = ev->cpu;
	h->ekind = ev->kind;
	h->nvals = nv;
	h->nstack = nst;
	h->stack_off = (uint32_t)stack_off;
	h->frames_off = (uint32_t)frames_off;
	h->nframes = nframes;
	h->offs_off = (uint32_t)offs_off;
	h->fids_off = (uint32_t)fids_off;
	h->nfids = nfids;
	h->probe = e->probe;
	if (e->comm)
		strncpy(h->comm, e->comm, GTR_COMM_LEN);
	for (uint32_t i = 0; i < nv; i++) {
		vals[i] = ev->vals[i];
		if (vals[i].kind != GTR_VAL_STR)
			continue;
		if (vals[i].v.s.len)
			memcpy(base + off, vals[i].v.s.data, vals[i].v.s.len);
		vals[i].v.s.data = (const uint8_t *)(uintptr_t)off;
		off += vals[i].v.s.len;
	}
	if (nst)
		memcpy(base + stack_off, ev->stack, nst * sizeof(uint64_t));
	return h;
}

/* Forgets the event released last. */
static void settle(struct pairer *p)
{
	if (p->popped)
		q_pop(p);
	p->popped = false;
	p->cur.kind = H_PASS;
	p->cur.lost = false;
	p->cur.paired = false;
}

/* Whether a return at `ts` needs to wait no longer. */
static bool ripe_ts(const struct pairer *p, uint64_t ts)
{
	if (p->force || p->finished || p->lim.lossless)
		return true;
	if (p->npend)
		return false;     /* a drop record waits (rate_settle()) */
	uint64_t hold_ns = p->longest < HOLD_MAX / 2 ? 2 * p->longest : HOLD_MAX;
	if (hold_ns < p->lim.hold_ns)
		hold_ns = p->lim.hold_ns;
	return p->max_seen >= hold_ns && p->max_seen - hold_ns >= ts;
}

/* Whether held record `h` may be released now. */
static bool ripe(const struct pairer *p, const struct held *h)
{
	return h->kind == H_PASS || ripe_ts(p, h->ts_ns);
}

static const struct frame *frame_at(const struct release *c, uint32_t j)
{
	return (const struct frame *)(c->frames + c->offs[j]);
}

/*
 * Decides the return released now (p->cur) with the losses known: sets
 * out->entry, entry_probe, latency_ns or out->lost, and counts it.
 */
static void decide(struct pairer *p, struct report_event *out)
{
	struct release *c = &p->cur;

	out->entry = NULL;
	out->entry_probe = NULL;
	out->latency_ns = 0;
	out->lost = false;
	if (c->kind == H_UNPAIRED) {
		/* its entry may be among events lost before it */
		if (lost_in(p, c->fid, 0, c->ts_ns)) {
			out->lost = c->lost = true;
			p->cnt.lost_returns = gtr_add_sat(p->cnt.lost_returns, 1);
		} else {
			p->cnt.unpaired_returns = gtr_add_sat(p->cnt.unpaired_returns, 1);
			judge(p, c->fid, c->ts_ns);
		}
		return;
	}
	const struct frame *f = frame_at(c, 0);
	/* calls it closed over: unwound, or their return was lost */
	for (uint32_t j = 1; j < c->nframes; j++) {
		const struct frame *u = frame_at(c, j);
		if (lost_in(p, u->fid, u->ts_ns, c->ts_ns)) {
			p->cnt.lost_entries = gtr_add_sat(p->cnt.lost_entries, 1);
		} else {
			p->cnt.abandoned = gtr_add_sat(p->cnt.abandoned, 1);
			judge(p, u->fid, c->ts_ns);
		}
	}
	if (lost_in(p, c->fid, f->ts_ns, c->ts_ns)) {
		/* the entry may be another call's: each half alone */
		out->lost = c->lost = true;
		p->cnt.lost_returns = gtr_add_sat(p->cnt.lost_returns, 1);
		p->cnt.lost_entries = gtr_add_sat(p->cnt.lost_entries, 1);
		return;
	}
	rebuild(c->pid, c->goid, f, f->probe ? f->probe->id : c->probe_id, &p->entry);
	out->entry = &p->entry;
	out->entry_probe = f->probe;
	out->latency_ns = c->ts_ns >= f->ts_ns ? c->ts_ns - f->ts_ns : 0;
	c->paired = true;
	p->cnt.paired = gtr_add_sat(p->cnt.paired, 1);
	judge(p, c->fid, c->ts_ns);
}

/* Whether an entry of `fid` that pairing did not keep is one of a
 * function with a return probe (a limit was reached). */
static bool untracked(const struct pairer *p, enum gtr_kind kind, uint32_t fid, bool tracked)
{
	return kind == GTR_KIND_ENTRY && !tracked && fid < p->nfuncs && p->fret[fid] &&
	       !fid_unpaired(p, fid);
}

/* Counts an event released with nothing decided. */
static void count_pass(struct pairer *p, enum gtr_kind kind, uint32_t fid)
{
	if (fid_unpaired(p, fid))
		p->cnt.unpaired = gtr_add_sat(p->cnt.unpaired, 1);
	else if (kind == GTR_KIND_RETURN)
		p->cnt.unpaired_returns = gtr_add_sat(p->cnt.unpaired_returns, 1);
}

/* An event with nothing to decide: final now when nothing older is held
 * (or `now`), else held behind them. */
static bool pass(struct pairer *p, struct report_event *e, uint32_t fid, uint32_t depth,
		 bool tracked, bool now)
{
	if (now || !q_head(p)) {
		e->entry = NULL;
		e->entry_probe = NULL;
		e->latency_ns = 0;
		e->depth = depth;
		e->tracked = tracked;
		e->untracked = untracked(p, e->ev->kind, fid, tracked);
		e->lost = false;
		e->unpaired = fid_unpaired(p, fid);
		count_pass(p, e->ev->kind, fid);
		return true;
	}
	hold(p, e, H_PASS, fid, depth, 0, 0, 0)->tracked = tracked;
	return false;
}

bool pair_push(struct pairer *p, struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	struct probe_ent *pe = pmap_slot(p, ev->probe_id);
	const uint64_t key = gtr_rate_key(ev->goid, ev->tid);

	settle(p);
	e->unpaired = false;
	if (ev->ts_ns > p->max_seen)
		p->max_seen = ev->ts_ns;
	rate_kept(p, pe, ev, key);
	rate_settle(p, false);
	if (!pe || !pe->used || !probe_has_ret(p, pe)) {
		const struct gor *g = gor_get(p, ev->pid, key, false);
		return pass(p, e, pe && pe->used ? pe->fid : NO_FID, g ? g->depth : 0, false,
			    false);
	}
	if (ev->kind == GTR_KIND_ENTRY) {
		struct gor *g = gor_get(p, ev->pid, key, true);
		uint32_t depth = 0;
		bool tracked = false;
		if (g) {
			g->goid = ev->goid;
			depth = g->depth + g->over;
			/* above an entry not tracked, none is: the returns
			 * that follow are theirs first */
			tracked = !g->over && push(p, g, e, pe->fid);
			if (!tracked && g->over < UINT32_MAX) {
				g->over++;
				p->cnt.over = gtr_add_sat(p->cnt.over, 1);
			}
		}
		if (!tracked)
			p->cnt.dropped = gtr_add_sat(p->cnt.dropped, 1);
		return pass(p, e, pe->fid, depth, tracked, tracked && p->lim.unordered);
	}

	struct gor *g = gor_get(p, ev->pid, key, false);
	uint32_t k = g ? g->depth : 0;
	if (g && g->over) {
		/* the return of an entry not tracked (past --max-depth):
		 * unpaired, never matched with an outer call */
		g->over--;
		p->cnt.over_returns = gtr_add_sat(p->cnt.over_returns, 1);
		k = 0;
	}
	while (k > 0) {
		const struct frame *f = (const struct frame *)(g->mem + g->offs[k - 1]);
		if (f->fid == pe->fid)
			break;
		k--;
	}
	/* released at once, without a copy, when nothing older is held and
	 * no drop record can change its fate */
	const bool now = !q_head(p) && ripe_ts(p, ev->ts_ns);
	struct release *c = &p->cur;
	if (!k) {
		if (!now) {
			hold(p, e, H_UNPAIRED, pe->fid, g ? g->depth : 0, 0, 0, 0);
			return false;
		}
		*c = (struct release){ .kind = H_UNPAIRED, .fid = pe->fid, .ts_ns = ev->ts_ns };
		e->depth = g ? g->depth : 0;
		e->tracked = e->untracked = false;
		decide(p, e);
		return true;
	}
	k--;
	/* the matched entry and the calls it closes over (unwound), as they
	 * lie in the goroutine's stack; the functions open down to it */
	const uint32_t nframes = g->depth - k;
	const struct frame *f = (const struct frame *)(g->mem + g->offs[k]);
	const uint64_t latency = ev->ts_ns >= f->ts_ns ? ev->ts_ns - f->ts_ns : 0;
	const uint64_t self = latency > f->child_ns ? latency - f->child_ns : 0;
	if (now) {
		/* the frames stay readable in the goroutine's memory until
		 * the next event */
		if (k + 1 > p->cap_stack) {
			p->cap_stack = (k + 1) * 2;
			p->stack = xrealloc(p->stack, p->cap_stack * sizeof(*p->stack), "pairing");
		}
		for (uint32_t i = 0; i <= k; i++)
			p->stack[i] = ((const struct frame *)(g->mem + g->offs[i]))->fid;
		*c = (struct release){
			.kind = H_PAIRED, .pid = ev->pid, .goid = g->goid, .fid = pe->fid,
			.probe_id = ev->probe_id, .ts_ns = ev->ts_ns, .depth = k,
			.nframes = nframes, .frames = g->mem, .offs = g->offs + k,
			.fids = p->stack, .nfids = k + 1, .self_ns = self,
		};
	} else {
		const size_t fbytes = g->used - g->offs[k];
		struct held *h = hold(p, e, H_PAIRED, pe->fid, k, fbytes, nframes, k + 1);
		uint8_t *base = (uint8_t *)h;
		uint32_t *offs = (uint32_t *)(base + h->offs_off);
		uint32_t *fids = (uint32_t *)(base + h->fids_off);
		memcpy(base + h->frames_off, g->mem + g->offs[k], fbytes);
		for (uint32_t j = 0; j < nframes; j++)
			offs[j] = g->offs[k + j] - g->offs[k];
		for (uint32_t i = 0; i <= k; i++)
			fids[i] = ((const struct frame *)(g->mem + g->offs[i]))->fid;
		h->goid = g->goid;
		h->self_ns = self;
	}

	p->cnt.open -= g->depth - k;
	g->depth = k;
	g->used = g->offs[k];
	if (k > 0)
		((struct frame *)(g->mem + g->offs[k - 1]))->child_ns += latency;
	if (!now)
		return false;
	e->depth = k;
	e->tracked = e->untracked = false;
	decide(p, e);
	return true;
}

bool pair_next(struct pairer *p, struct report_event *out)
{
	/* an event pair_push() released at once stays as it is when there
	 * is nothing to release (nothing was held before it) */
	if (p->popped)
		settle(p);
	const struct held *h = q_head(p);
	if (!h)
		return false;
	if (!ripe(p, h)) {
		if (p->held_bytes <= p->lim.hold_bytes)
			return false;
		p->cnt.early = gtr_add_sat(p->cnt.early, 1);
		rate_settle(p, true);
	}
	settle(p);
	p->popped = true;

	/* the event, from the record */
	const uint8_t *base = (const uint8_t *)h;
	const struct gtr_value *vals = (const struct gtr_value *)(h + 1);
	struct gtr_event *ev = &p->rel;
	ev->ts_ns = h->ts_ns;
	ev->probe_id = h->probe_id;
	ev->kind = h->ekind;
	ev->pid = h->pid;
	ev->tid = h->tid;
	ev->goid = h->goid;
	ev->cpu = h->cpu;
	ev->nvals = h->nvals;
	for (uint32_t i = 0; i < h->nvals; i++) {
		ev->vals[i] = vals[i];
		if (vals[i].kind == GTR_VAL_STR)
			ev->vals[i].v.s.data = base + (uintptr_t)vals[i].v.s.data;
	}
	ev->nstack = h->nstack;
	ev->stack = h->nstack ? (const uint64_t *)(base + h->stack_off) : NULL;
	*out = (struct report_event){
		.ev = ev, .probe = h->probe, .comm = h->comm, .depth = h->depth,
		.tracked = h->tracked,
		.untracked = untracked(p, h->ekind, h->fid, h->tracked),
		.unpaired = fid_unpaired(p, h->fid),
	};
	if (h->kind == H_PASS) {
		count_pass(p, h->ekind, h->fid);
		return true;
	}
	p->cur = (struct release){
		.kind = h->kind, .pid = h->pid, .goid = h->goid, .fid = h->fid,
		.probe_id = h->probe_id, .ts_ns = h->ts_ns, .depth = h->depth,
		.nframes = h->nframes, .frames = base + h->frames_off,
		.offs = (const uint32_t *)(base + h->offs_off),
		.fids = (const uint32_t *)(base + h->fids_off), .nfids = h->nfids,
		.self_ns = h->self_ns,
	};
	decide(p, out);
	return true;
}

void pair_event(struct pairer *p, struct report_event *e)
{
	struct report_event out;

	/* nothing is held: every event is released by pair_push() */
	p->force = true;
	if (!pair_push(p, e) && pair_next(p, &out)) {
		e->entry = out.entry;
		e->entry_probe = out.entry_probe;
		e->latency_ns = out.latency_ns;
		e->depth = out.depth;
		e->tracked = out.tracked;
		e->untracked = out.untracked;
		e->lost = out.lost;
		e->unpaired = out.unpaired;
	}
	p->force = false;
}

void pair_finish(struct pairer *p)
{
	if (p->finished)
		return;
	rate_settle(p, true);
	p->finished = true;
	for (uint32_t i = 0; i < p->ngors; i++) {
		const struct gor *g = &p->gors[i];
		for (uint32_t k = 0; k < g->depth; k++) {
			const struct frame *f = (const struct frame *)(g->mem + g->offs[k]);
			if (lost_in(p, f->fid, f->ts_ns, UINT64_MAX)) {
				p->cnt.lost_entries = gtr_add_sat(p->cnt.lost_entries, 1);
				p->cnt.lost_open = gtr_add_sat(p->cnt.lost_open, 1);
			}
		}
	}
}

const uint32_t *pair_last_stack(struct pairer *p, uint32_t *n, uint64_t *self_ns)
{
	if (!p->cur.paired)
		return NULL;
	*n = p->cur.nfids;
	*self_ns = p->cur.self_ns;
	return p->cur.fids;
}

bool pair_last_closed(const struct pairer *p, uint32_t *depth)
{
	if (p->cur.kind != H_PAIRED || !p->cur.lost)
		return false;
	*depth = p->cur.depth;
	return true;
}

/* Calls `cb` for frame `f` at `depth`, rebuilt into p->uentry. */
static void frame_cb(struct pairer *p, uint32_t pid, uint64_t goid, const struct frame *f,
		     uint32_t depth, uint64_t end_ns, bool lost,
		     void (*cb)(void *arg, const struct report_event *e, uint64_t end_ns),
		     void *arg)
{
	rebuild(pid, goid, f, f->probe ? f->probe->id : 0, &p->uentry);
	struct report_event e = {
		.ev = &p->uentry,
		.probe = f->probe,
		.comm = f->comm,
		.depth = depth,
		.lost = lost,
	};
	cb(arg, &e, end_ns);
}

uint32_t pair_foreach_unwound(struct pairer *p,
			      void (*cb)(void *arg, const struct report_event *e,
					 uint64_t end_ns),
			      void *arg)
{
	const struct release *c = &p->cur;
	uint32_t n = 0;

	if (c->kind != H_PAIRED)
		return 0;
	for (uint32_t j = c->nframes; j-- > 1;) {
		const struct frame *u = frame_at(c, j);
		const bool lost = lost_in(p, u->fid, u->ts_ns, c->ts_ns);
		frame_cb(p, c->pid, c->goid, u, c->depth + j, lost ? u->ts_ns : c->ts_ns, lost,
			 cb, arg);
		n++;
	}
	if (c->lost) {
		const struct frame *f = frame_at(c, 0);
		frame_cb(p, c->pid, c->goid, f, c->depth, f->ts_ns, true, cb, arg);
		n++;
	}
	return n;
}

void pair_foreach_open(struct pairer *p,
		       void (*cb)(void *arg, const struct report_event *e, uint64_t end_ns),
		       void *arg)
{
	for (uint32_t i = 0; i < p->ngors; i++) {
		const struct gor *g = &p->gors[i];
		for (uint32_t k = 0; k < g->depth; k++) {
			const struct frame *f = (const struct frame *)(g->mem + g->offs[k]);
			frame_cb(p, g->pid, g->goid, f, k, 0,
				 lost_in(p, f->fid, f->ts_ns, UINT64_MAX), cb, arg);
		}
	}
}

void pair_counts(const struct pairer *p, struct pair_counts *c)
{
	*c = p->cnt;
}
