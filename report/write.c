/* SPDX-License-Identifier: MIT */
/*
 * gotrace-report -w OUT: the events a run keeps (filters, --since/--until,
 * --pid, --limit), written to a new trace with the metadata they need and
 * the other half of each kept call, like editcap for pcap files. Reading OUT with the same
 * selection gives the same report as reading the original.
 *
 * What is written, and when (spec/FORMAT.md, "Writing a selection"):
 * - the host block of the original (the recording's host and clock anchor);
 * - every probe, and its binary, as the original describes them (a probe
 *   table is small, and reports lay out columns by it);
 * - calls whole: the entry of a kept return just before it, and the return
 *   of a kept entry, so that pairing in OUT finds what it found here;
 * - task names, process records (exec, exit) and mappings of the processes
 *   of kept events, clock samples, every drop record (losses stay known);
 * - the symbols of every binary once a kept event has a stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "run_int.h"
#include "xalloc.h"

#define MAP_MAX UINT32_MAX

struct wsink {
	struct gtr_writer *w;
	struct u64map probes;     /* probe id -> 1: written */
	struct u64map binaries;   /* binary id -> 1: written; 2: and its symbols */
	struct u64map pids;       /* pid -> 1: has kept events */
	struct u64map comms;      /* hash(pid, tid) -> hash of the name written */
	struct u64map entries;    /* ts_ns of an entry written whose return
				   * is yet to come -> its tid */
	uint32_t clocks, procs, maps, nprobes;  /* reader's records looked at so far */
	uint32_t *pending_procs, npp, cap_pp;  /* of pids not (yet) kept */
	uint32_t *pending_maps, npm, cap_pm;
	bool symbols;             /* a kept event had a stack */
	bool tried;               /* open_out() was called */
	uint64_t events;
};

static void fail(struct run *run, struct wsink *s, int rc)
{
	if (run->werr)
		return;
	fprintf(stderr, PROG ": %s\n", rc == -ENOMEM || !s->w ? "out of memory"
		: gtr_writer_error(s->w));
	run->werr = true;
	run->stop = true;
}

/* The binary `id` (and, once stacks were kept, its symbols). 0 or -errno. */
static int put_binary(struct run *run, struct wsink *s, uint32_t id)
{
	uint32_t *st = u64map_get(&s->binaries, id);
	int rc = 0;

	if (!st) {
		const struct gtr_binary *b = NULL;

		for (uint32_t i = 0; i < gtr_reader_nbinaries(run->r) && !b; i++)
			if (gtr_reader_binary_at(run->r, i)->id == id)
				b = gtr_reader_binary_at(run->r, i);
		if (!b)
			return 0;     /* not described: the probe says so */
		if ((rc = gtr_writer_binary(s->w, b)))
			return rc;
		if (u64map_put(&s->binaries, id, 1, MAP_MAX))
			return -ENOMEM;
		st = u64map_get(&s->binaries, id);
	}
	if (s->symbols && *st == 1) {
		const uint32_t n = gtr_reader_nsymbols(run->r, id);
		struct gtr_symbol *syms = xcalloc(n ? n : 1, sizeof(*syms), "symbols");

		for (uint32_t i = 0; i < n; i++)
			syms[i] = *gtr_reader_symbol_at(run->r, id, i);
		rc = n ? gtr_writer_symbols(s->w, id, syms, n) : 0;
		free(syms);
		*u64map_get(&s->binaries, id) = 2;
	}
	return rc;
}

/* Probe `id` and its binary, once. 0 or -errno. */
static int put_probe(struct run *run, struct wsink *s, uint32_t id);

/* Every probe described so far, in the original's order: reports of OUT
 * then lay out columns (CSV) as reports of the original do. 0 or -errno. */
static int put_probes(struct run *run, struct wsink *s)
{
	int rc = 0;

	for (; s->nprobes < gtr_reader_nprobes(run->r) && !rc; s->nprobes++)
		rc = put_probe(run, s, gtr_reader_probe_at(run->r, s->nprobes)->id);
	return rc;
}

static int put_probe(struct run *run, struct wsink *s, uint32_t id)
{
	const struct gtr_probe *p;
	int rc;

	if (id == UINT32_MAX || u64map_get(&s->probes, id) ||
	    !(p = gtr_reader_probe(run->r, id)))
		return 0;
	if ((rc = put_binary(run, s, p->binary_id)) || (rc = gtr_writer_probe(s->w, p)))
		return rc;
	return u64map_put(&s->probes, id, 1, MAP_MAX) ? -ENOMEM : 0;
}

static void pend(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t i)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, (size_t)*cap * sizeof(**v), "pending records");
	}
	(*v)[(*n)++] = i;
}

/* Writes the waiting process records and mappings of `pid`, which has
 * just become kept; the others keep waiting. 0 or -errno. */
static int put_pending(struct run *run, struct wsink *s, uint32_t pid)
{
	uint32_t k = 0;
	int rc = 0;

	for (uint32_t i = 0; i < s->npp; i++) {
		const struct gtr_process *p = gtr_reader_process_at(run->r, s->pending_procs[i]);
		if (p->pid != pid || rc)
			s->pending_procs[k++] = s->pending_procs[i];
		else
			rc = gtr_writer_process(s->w, p);
	}
	s->npp = k;
	k = 0;
	for (uint32_t i = 0; i < s->npm; i++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(run->r, s->pending_maps[i]);
		if (m->pid != pid || rc)
			s->pending_maps[k++] = s->pending_maps[i];
		else if (!(rc = put_binary(run, s, m->binary_id)))
			rc = gtr_writer_mapping(s->w, m);
	}
	s->npm = k;
	return rc;
}

/* Process records and mappings met since the last call: those of kept
 * processes are written, the others wait in case their process is kept
 * later (put_pending()). 0 or -errno. */
static int put_processes(struct run *run, struct wsink *s)
{
	int rc = 0;

	for (; s->procs < gtr_reader_nprocesses(run->r) && !rc; s->procs++) {
		const struct gtr_process *p = gtr_reader_process_at(run->r, s->procs);
		if (!u64map_get(&s->pids, p->pid))
			pend(&s->pending_procs, &s->npp, &s->cap_pp, s->procs);
		else
			rc = gtr_writer_process(s->w, p);
	}
	for (; s->maps < gtr_reader_nmappings(run->r) && !rc; s->maps++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(run->r, s->maps);
		if (!u64map_get(&s->pids, m->pid))
			pend(&s->pending_maps, &s->npm, &s->cap_pm, s->maps);
		else if (!(rc = put_binary(run, s, m->binary_id)))
			rc = gtr_writer_mapping(s->w, m);
	}
	return rc;
}

/* Everything event `ev` needs before it: its process, task name, probe,
 * new clock samples, and symbols when it has a stack. 0 or -errno. */
static int put_context(struct run *run, struct wsink *s, const struct gtr_event *ev)
{
	int rc;

	for (; s->clocks < gtr_reader_nclocks(run->r); s->clocks++)
		if ((rc = gtr_writer_clock(s->w, gtr_reader_clock_at(run->r, s->clocks))))
			return rc;
	if (!u64map_get(&s->pids, ev->pid)) {
		if (u64map_put(&s->pids, ev->pid, 1, MAP_MAX))
			return -ENOMEM;
		if ((rc = put_pending(run, s, ev->pid)))
			return rc;
	}
	if ((rc = put_processes(run, s)))
		return rc;
	if (ev->nstack && !s->symbols) {
		s->symbols = true;
		for (uint32_t i = 0; i < gtr_reader_nbinaries(run->r); i++)
			if ((rc = put_binary(run, s, gtr_reader_binary_at(run->r, i)->id)))
				return rc;
	}
	const char *comm = gtr_reader_comm(run->r, ev->pid, ev->tid);
	const uint64_t key = u64map_hash2(ev->pid, ev->tid);
	const uint32_t h = (uint32_t)u64map_hash_str(comm, 0);
	uint32_t *was = u64map_get(&s->comms, key);
	if (comm[0] && (!was || *was != h)) {
		if ((rc = gtr_writer_task(s->w, ev->pid, ev->tid, comm)))
			return rc;
		if (u64map_put(&s->comms, key, h, MAP_MAX))
			return -ENOMEM;
	}
	return put_probes(run, s);
}

static int put_event(struct run *run, struct wsink *s, const struct gtr_event *ev)
{
	int rc = put_context(run, s, ev);

	if (!rc)
		rc = gtr_writer_event(s->w, ev);
	if (!rc)
		s->events++;
	return rc;
}

static void write_begin(struct run *run)
{
	run->state = xcalloc(1, sizeof(struct wsink), "trace writer");
}

/*
 * Creates OUT at the first record to write (or at the end), when the
 * original's first event is known: OUT's host block is the original's,
 * with that event as the origin of relative times. false after a message.
 */
static bool open_out(struct run *run, struct wsink *s)
{
	struct gtr_host h = *gtr_reader_host(run->r);
	char err[512];
	int rc;

	if (s->w || s->tried)
		return s->w != NULL;
	s->tried = true;
	if (!h.origin_ns && run->have_t0)
		h.origin_ns = run->t0;
	s->w = gtr_writer_create(run->opts->write_path, run->opts->write_flags, &h,
				 err, sizeof(err));
	if (!s->w) {
		fprintf(stderr, PROG ": -w: %s\n", err);
		run->werr = true;
		run->stop = true;
		return false;
	}
	if ((rc = put_probes(run, s))) {
		fail(run, s, rc);
		return false;
	}
	return true;
}

/*
 * Every event pairing releases (SINK_ALL). Calls are written whole: a
 * kept return brings its entry along, and a kept entry its return, so
 * that every view of OUT (calls, latency, Chrome, folded) with the same
 * selection shows what the original shows.
 */
static void write_event(struct run *run, struct report_event *e, bool kept)
{
	struct wsink *s = run->state;
	const struct gtr_event *ev = e->ev;
	bool had = false;
	int rc = 0;

	if (run->werr)
		return;
	if (ev->kind == GTR_KIND_RETURN && e->entry)
		had = !u64map_del(&s->entries, e->entry->ts_ns, e->entry->tid);
	if (!kept && !had)
		return;
	if (!open_out(run, s))
		return;
	if (kept && ev->kind == GTR_KIND_RETURN && e->entry && !had)
		rc = put_event(run, s, e->entry);
	if (!rc)
		rc = put_event(run, s, ev);
	if (!rc && ev->kind == GTR_KIND_ENTRY && e->tracked &&
	    u64map_add(&s->entries, ev->ts_ns, ev->tid, MAP_MAX))
		rc = -ENOMEM;
	if (!rc && kept && run->opts->limit && ++run->records >= run->opts->limit)
		run->stop = true;
	if (rc)
		fail(run, s, rc);
}

static void write_drop(struct run *run, const struct gtr_drop *d)
{
	struct wsink *s = run->state;
	int rc;

	if (run->werr || !open_out(run, s))
		return;
	if ((rc = put_probes(run, s)) || (rc = gtr_writer_drop(s->w, d)))
		fail(run, s, rc);
}

static void write_end(struct run *run)
{
	struct wsink *s = run->state;
	char err[512];
	int rc;

	if (run->werr || !open_out(run, s))
		return;
	/* the original's span, over which reports measure rates */
	const struct gtr_summary *sum = gtr_reader_summary(run->r);
	gtr_writer_set_span_end(s->w, sum->present && sum->span_end_ns > run->last_ts
				? sum->span_end_ns : run->last_ts);
	/* exits of the kept processes come after their last events */
	if (!run->werr && ((rc = put_processes(run, s)) || (rc = put_probes(run, s))))
		fail(run, s, rc);
	if (gtr_writer_close(s->w, err, sizeof(err)) && !run->werr) {
		fprintf(stderr, PROG ": -w: %s\n", err);
		run->werr = true;
	}
	s->w = NULL;
	if (!run->werr)
		fprintf(stderr, PROG ": %" PRIu64 " of %" PRIu64 " events written to %s\n",
			s->events, run->nevents, run->opts->write_path);
}

static void write_free(struct run *run)
{
	struct wsink *s = run->state;

	if (!s)
		return;
	if (s->w)
		gtr_writer_close(s->w, NULL, 0);
	u64map_free(&s->probes);
	u64map_free(&s->binaries);
	u64map_free(&s->pids);
	u64map_free(&s->comms);
	u64map_free(&s->entries);
	free(s->pending_procs);
	free(s->pending_maps);
	free(s);
	run->state = NULL;
}

const struct sink sink_write = {
	.name = "write",
	.flags = SINK_ALL,
	.begin = write_begin,
	.event = write_event,
	.drop = write_drop,
	.end = write_end,
	.free = write_free,
};
