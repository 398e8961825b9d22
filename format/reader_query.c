/* SPDX-License-Identifier: MIT */
/*
 * What the reader has read, as the public accessors give it: metadata by
 * position or id, symbolization of runtime addresses, wall-clock time.
 */
#include <errno.h>
#include <stdlib.h>

#include "reader_internal.h"

const struct gtr_probe *gtr_reader_probe(const struct gtr_reader *r, uint32_t id)
{
	return rd_find_probe(r, id);
}

uint32_t gtr_reader_nprobes(const struct gtr_reader *r)
{
	return r->nprobes;
}

const struct gtr_probe *gtr_reader_probe_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nprobes ? r->probes[i] : NULL;
}

uint32_t gtr_reader_nbinaries(const struct gtr_reader *r)
{
	return r->nbinaries;
}

const struct gtr_binary *gtr_reader_binary_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nbinaries ? r->binaries[i] : NULL;
}

const struct gtr_host *gtr_reader_host(const struct gtr_reader *r)
{
	return &r->host;
}

const char *gtr_reader_comm(const struct gtr_reader *r, uint32_t pid, uint32_t tid)
{
	const uint32_t *ix = u64map_get(&r->task_ix, (uint64_t)pid << 32 | tid);
	return ix ? r->comms[*ix].s : "";
}

uint64_t gtr_reader_task_gen(const struct gtr_reader *r)
{
	return r->task_gen;
}

void gtr_reader_version(const struct gtr_reader *r, unsigned *major, unsigned *minor)
{
	if (major)
		*major = r->major;
	if (minor)
		*minor = r->minor;
}

uint64_t gtr_reader_damage(const struct gtr_reader *r)
{
	return r->damage;
}

bool gtr_reader_is_stream(const struct gtr_reader *r)
{
	return r->stream;
}

bool gtr_reader_truncated(const struct gtr_reader *r)
{
	return r->truncated;
}

bool gtr_reader_summary_damaged(const struct gtr_reader *r)
{
	return r->summary_damaged;
}

uint64_t gtr_reader_skipped(const struct gtr_reader *r)
{
	return r->skipped;
}

const struct gtr_summary *gtr_reader_summary(const struct gtr_reader *r)
{
	return &r->summary;
}

uint32_t gtr_reader_nhosts(const struct gtr_reader *r)
{
	return r->npeers ? r->npeers : 1;
}

const struct gtr_host *gtr_reader_host_at(const struct gtr_reader *r, uint32_t i)
{
	if (!i)
		return &r->host;
	return i < r->npeers ? r->peers[i - 1] : NULL;
}

uint32_t gtr_reader_pid_host(const struct gtr_reader *r, uint32_t pid)
{
	const uint32_t *h = r->pid_host.n ? u64map_get(&r->pid_host, pid) : NULL;

	return h ? *h : 0;
}

const char *gtr_reader_error(const struct gtr_reader *r)
{
	return r->err;
}

/* ------------------------------------------------------------- symbols, clocks */

static int sym_cmp(const void *a, const void *b)
{
	const struct gtr_symbol *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

static void symtab_sort(struct symtab *t)
{
	if (!t->sorted) {
		qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
		t->sorted = true;
	}
}

/* Symbol of binary `bin` containing link-time address `a`, or NULL. */
static const struct gtr_symbol *sym_find(const struct gtr_reader *r, uint32_t bin,
					 uint64_t a)
{
	struct symtab *t = rd_symtab_of(r, bin);

	if (!t || !t->n)
		return NULL;
	symtab_sort(t);
	/* last symbol with address <= a */
	uint32_t lo = 0, hi = t->n;
	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].address <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct gtr_symbol *s = &t->syms[lo - 1];
	if (s->size ? a - s->address < s->size : true)
		return s;
	return NULL;
}

static const struct gtr_reader *map_sort_r;

static int map_cmp(const void *a, const void *b)
{
	const struct gtr_mapping *x = &map_sort_r->maps[*(const uint32_t *)a];
	const struct gtr_mapping *y = &map_sort_r->maps[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static const struct gtr_binary *binary_by_id(const struct gtr_reader *r, uint32_t id)
{
	for (uint32_t i = 0; i < r->nbinaries; i++)
		if (r->binaries[i]->id == id)
			return r->binaries[i];
	return NULL;
}

/* The symbol holding runtime address addr of pid (gtr_reader_symbolize()),
 * and the link-time address in *linkp; NULL when unknown. */
static const struct gtr_symbol *sym_at(const struct gtr_reader *r, uint32_t pid,
				       uint64_t addr, uint64_t *linkp)
{
	struct gtr_reader *rw = (struct gtr_reader *)r; /* lazy index */
	const struct gtr_symbol *s = NULL;
	uint64_t link = addr;

	if (!r->maps_sorted && r->nmaps) {
		uint32_t *o = realloc(rw->map_order, r->nmaps * sizeof(*o));
		if (o) {
			for (uint32_t i = 0; i < r->nmaps; i++)
				o[i] = i;
			map_sort_r = r;
			qsort(o, r->nmaps, sizeof(*o), map_cmp);
			rw->map_order = o;
			rw->maps_sorted = true;
		}
	}
	if (r->maps_sorted) {
		/* the pid's mappings, in file order: the latest containing addr wins */
		uint32_t lo = 0, hi = r->nmaps;
		while (lo < hi) {
			const uint32_t mid = lo + (hi - lo) / 2;
			if (r->maps[r->map_order[mid]].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct gtr_mapping *m = NULL;
		for (uint32_t i = lo; i < r->nmaps && r->maps[r->map_order[i]].pid == pid; i++) {
			const struct gtr_mapping *x = &r->maps[r->map_order[i]];
			if (addr >= x->start && addr < x->end)
				m = x;
		}
		if (m && m->binary_id != UINT32_MAX) {
			if (m->vaddr) {
				link = m->vaddr + (addr - m->start);
			} else {
				const struct gtr_binary *b = binary_by_id(r, m->binary_id);
				link = b && !b->pie ? addr : addr - m->start + m->offset;
			}
			s = sym_find(r, m->binary_id, link);
		}
		if (m)
			goto done;
	}
	/* No mapping: non-PIE executables are loaded at their link addresses. */
	for (uint32_t i = 0; !s && i < r->nbinaries; i++)
		if (!r->binaries[i]->pie)
			s = sym_find(r, r->binaries[i]->id, addr);
done:
	*linkp = link;
	return s;
}

const char *gtr_reader_symbolize(const struct gtr_reader *r, uint32_t pid,
				 uint64_t addr, uint64_t *offset)
{
	uint64_t link;
	const struct gtr_symbol *s = sym_at(r, pid, addr, &link);

	if (!s)
		return NULL;
	if (offset)
		*offset = link - s->address;
	return s->name;
}

uint32_t gtr_reader_inlined(const struct gtr_reader *r, uint32_t pid, uint64_t addr,
			    const char **names, uint32_t max)
{
	uint64_t link;
	const struct gtr_symbol *s = sym_at(r, pid, addr, &link);
	uint32_t n = 0;

	if (!s || !s->ninlined || link - s->address > UINT32_MAX)
		return 0;
	const uint32_t off = (uint32_t)(link - s->address);
	/* the ranges holding off, deepest first: insertion by depth */
	uint32_t depth[GTR_MAX_INLINE_DEPTH] = { 0 };
	for (uint32_t i = 0; i < s->ninlined; i++) {
		const struct gtr_inlined *v = &s->inlined[i];
		if (off < v->off || off - v->off >= v->size || n == GTR_MAX_INLINE_DEPTH)
			continue;
		uint32_t k = n++;
		for (; k > 0 && depth[k - 1] < v->depth; k--) {
			depth[k] = depth[k - 1];
			if (k < max)
				names[k] = names[k - 1];
		}
		depth[k] = v->depth;
		if (k < max)
			names[k] = v->name;
	}
	return n;
}

int gtr_reader_realtime(const struct gtr_reader *r, uint64_t mono_ns,
			uint64_t *realtime_ns)
{
	uint64_t mono, real;
	uint32_t lo = 0, hi = r->nclocks;

	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (r->clocks[mid].monotonic_ns <= mono_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		mono = r->clocks[lo - 1].monotonic_ns;
		real = r->clocks[lo - 1].realtime_ns;
	} else if (r->host.start_realtime_ns) {
		mono = r->host.start_mono_ns;
		real = r->host.start_realtime_ns;
	} else if (r->nclocks) {
		mono = r->clocks[0].monotonic_ns;
		real = r->clocks[0].realtime_ns;
	} else {
		return -ENOENT;
	}
	*realtime_ns = real + (mono_ns - mono); /* mod 2^64: signed offset */
	return 0;
}

uint32_t gtr_reader_nclocks(const struct gtr_reader *r)
{
	return r->nclocks;
}

const struct gtr_clock_sample *gtr_reader_clock_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nclocks ? &r->clocks[i] : NULL;
}

uint32_t gtr_reader_nprocesses(const struct gtr_reader *r)
{
	return r->nprocs;
}

const struct gtr_process *gtr_reader_process_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nprocs ? &r->procs[i] : NULL;
}

uint32_t gtr_reader_nmappings(const struct gtr_reader *r)
{
	return r->nmaps;
}

const struct gtr_mapping *gtr_reader_mapping_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nmaps ? &r->maps[i] : NULL;
}

uint32_t gtr_reader_nsymbols(const struct gtr_reader *r, uint32_t binary_id)
{
	const struct symtab *t = rd_symtab_of(r, binary_id);

	return t ? t->n : 0;
}

const struct gtr_symbol *gtr_reader_symbol_at(const struct gtr_reader *r,
					      uint32_t binary_id, uint32_t i)
{
	struct symtab *t = rd_symtab_of(r, binary_id);

	if (!t || i >= t->n)
		return NULL;
	symtab_sort(t);
	return &t->syms[i];
}

uint32_t gtr_reader_nlosses(const struct gtr_reader *r)
{
	return r->nlosses;
}

const struct gtr_loss *gtr_reader_loss_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nlosses ? &r->losses[i] : NULL;
}

const struct gtr_overflow *gtr_reader_overflow(const struct gtr_reader *r)
{
	return &r->overflow;
}
