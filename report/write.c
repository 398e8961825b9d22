/* SPDX-License-Identifier: MIT */
/*
 * gotrace-report -w OUT: the events a run keeps (filters, --since/--until,
 * --pid, --limit), written to a new trace with the metadata they need and
 * the other half of each kept call, like editcap for pcap files. Reading OUT with the same
 * selection gives the same report as reading the original.
 *
 * What is written (through libgtr's copier, gtr.h "Copying"):
 * - the host block of the original (the recording's host and clock anchor),
 *   and its PEER blocks (a merged file's other recordings);
 * - every probe, and its binary, as the original describes them (a probe
 *   table is small, and reports lay out columns by it);
 * - calls whole: the entry of a kept return, and the return of a kept
 *   entry, so that pairing in OUT finds what it found here; every event
 *   at its place in file (time) order. An entry comes before the return
 *   that decides whether it is kept, so a file is read twice
 *   (report_write()): the first pass finds the entries that kept returns
 *   need, the second writes them in their place. Standard input is read
 *   once: such an entry is written just before its return (a note says
 *   how many);
 * - task names, process records (exec, exit) and mappings of the processes
 *   of kept events, clock samples, every drop record (losses stay known);
 * - the symbols of every binary once a kept event has a stack.
 * With --redact, OUT's writer redacts all of it (spec/REDACT.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "map.h"
#include "merge.h"
#include "run_int.h"
#include "xalloc.h"

/* What the first pass over a file finds for the second (report_write()). */
struct wplan {
	bool planning;            /* the first pass: nothing is written */
	struct u64map need;       /* ts_ns of an entry the filters left out
				   * whose return they kept -> its tid (one
				   * entry each, removed as it is written) */
};

struct wsink {
	struct gtr_writer *w;
	struct gtr_copier *copy;  /* the input, copied to w */
	struct u64map entries;    /* ts_ns of an entry written (or, planning,
				   * kept) whose return is yet to come -> its tid */
	struct wplan *plan;       /* NULL: one pass (standard input) */
	uint64_t late;            /* entries written just before their return,
				   * out of time order (one pass only) */
	uint64_t prev_ts;         /* the event released last, when an entry */
	uint32_t prev_tid;
	bool prev_entry;
	bool unwinds;             /* the return pairing releases next closed
				   * over (unwound) a call written */
	bool tried;               /* open_out() was called */
};

static void fail(struct run *run, struct wsink *s, int rc)
{
	if (run->werr)
		return;
	fprintf(stderr, PROG ": -w: %s\n", rc == -ENOMEM || !s->w ? "out of memory"
		: gtr_writer_error(s->w));
	run->werr = true;
	run->stop = true;
}

static void write_begin(struct run *run)
{
	struct wsink *s = xcalloc(1, sizeof(struct wsink), "trace writer");

	s->plan = run->opts->sink_arg;
	run->state = s;
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
	s->w = gtr_writer_create_redacted(run->opts->write_path, run->opts->write_flags, &h,
					  run->opts->redact, err, sizeof(err));
	if (!s->w) {
		fprintf(stderr, PROG ": -w: %s\n", err);
		run->werr = true;
		run->stop = true;
		return false;
	}
	/* a merged file: every recording it holds, at its index, each a
	 * selection now too (spec/FORMAT.md, "PEER") */
	for (uint32_t i = 1; i < gtr_reader_nhosts(run->r); i++) {
		const struct gtr_host *peer = gtr_reader_host_at(run->r, i);
		struct gtr_host ph;

		if (!peer)
			continue;
		ph = *peer;
		if (!ph.origin_ns)
			ph.origin_ns = h.origin_ns;
		if ((rc = gtr_writer_peer(s->w, i, &ph))) {
			fail(run, s, rc);
			return false;
		}
	}
	/* a selection: the rate limit no longer explains the events kept */
	const struct gtr_copy_opts co = { .partial = true };
	s->copy = gtr_copier_new(run->r, s->w, &co);
	rc = s->copy ? gtr_copier_start(s->copy) : -ENOMEM;
	if (rc)
		fail(run, s, rc);
	return !rc;
}

/* Whether `ev` is an entry the first pass found a kept return of (and
 * forgets it: each is written once). */
static bool needed(struct wsink *s, const struct gtr_event *ev)
{
	return s->plan && !s->plan->planning && ev->kind == GTR_KIND_ENTRY &&
	       !u64map_del(&s->plan->need, ev->ts_ns, ev->tid);
}

/*
 * A kept return whose entry was not written: when `adjacent` (the entry
 * was the event released just before it) the entry is written now, in
 * its place; else, planning, it goes in the plan, and in one pass it is
 * written now, out of order (counted). 0 or a negative errno.
 */
static int entry_late(struct run *run, struct wsink *s, const struct gtr_event *entry,
		      bool adjacent)
{
	if (!adjacent && s->plan && s->plan->planning)
		return u64map_add(&s->plan->need, entry->ts_ns, entry->tid, UINT32_MAX) ? -ENOMEM : 0;
	if ((s->plan && s->plan->planning) || !open_out(run, s))
		return 0;
	s->late += !adjacent;
	return gtr_copier_event(s->copy, entry);
}

/*
 * Every event pairing releases (SINK_ALL), in file order. Calls are
 * written whole: a kept return brings its entry along, and a kept entry
 * its return, so that every view of OUT (calls, latency, Chrome, folded)
 * with the same selection shows what the original shows; so is the call
 * whose return unwound a call written, so that the call unwinds there in
 * OUT too. Planning, it only notes the entries kept returns need.
 */
static void write_event(struct run *run, struct report_event *e, bool kept)
{
	struct wsink *s = run->state;
	const struct gtr_event *ev = e->ev;
	const bool planning = s->plan && s->plan->planning;
	const bool whole = kept || (s->unwinds && ev->kind == GTR_KIND_RETURN);
	const bool adjacent = s->prev_entry && e->entry && s->prev_ts == e->entry->ts_ns &&
			      s->prev_tid == e->entry->tid;
	bool had = false;
	int rc = 0;

	s->unwinds = false;
	s->prev_entry = ev->kind == GTR_KIND_ENTRY;   /* for the next event */
	s->prev_ts = ev->ts_ns;
	s->prev_tid = ev->tid;
	if (run->werr)
		return;
	if (ev->kind == GTR_KIND_RETURN && e->entry)
		had = !u64map_del(&s->entries, e->entry->ts_ns, e->entry->tid);
	if (!whole && !had && !needed(s, ev))
		return;
	if (whole && ev->kind == GTR_KIND_RETURN && e->entry && !had)
		rc = entry_late(run, s, e->entry, adjacent);
	if (!rc && !planning)
		rc = open_out(run, s) ? gtr_copier_event(s->copy, ev) : 0;
	if (!rc && ev->kind == GTR_KIND_ENTRY && e->tracked &&
	    u64map_add(&s->entries, ev->ts_ns, ev->tid, UINT32_MAX))
		rc = -ENOMEM;
	if (!rc && kept && run->opts->limit && ++run->records >= run->opts->limit)
		run->stop = true;
	if (rc)
		fail(run, s, rc);
}

/* A kept call that did not return: one a return unwound was written
 * (kept), and that return is to be written too (write_event()). */
static void write_unfinished(struct run *run, const struct report_event *e, uint64_t end_ns,
			     const char *status)
{
	struct wsink *s = run->state;

	(void)end_ns;
	if (!strcmp(status, "unwound") &&
	    !u64map_del(&s->entries, e->ev->ts_ns, e->ev->tid))
		s->unwinds = true;
}

/* Every drop record: losses stay known in OUT. */
static void write_drop(struct run *run, const struct gtr_drop *d)
{
	struct wsink *s = run->state;
	int rc;

	s->prev_entry = false;   /* written before any entry written later */
	if (run->werr || (s->plan && s->plan->planning) || !open_out(run, s))
		return;
	if ((rc = gtr_copier_drop(s->copy, d)))
		fail(run, s, rc);
}

static void write_end(struct run *run)
{
	struct wsink *s = run->state;
	char err[512];
	int rc;

	if (run->werr || (s->plan && s->plan->planning) || !open_out(run, s))
		return;
	/* the original's span, over which reports measure rates */
	const struct gtr_summary *sum = gtr_reader_summary(run->r);
	gtr_writer_set_span_end(s->w, sum->present && sum->span_end_ns > run->last_ts
				? sum->span_end_ns : run->last_ts);
	/* exits of the kept processes come after their last events */
	if ((rc = gtr_copier_finish(s->copy)))
		fail(run, s, rc);
	if (gtr_writer_close(s->w, err, sizeof(err)) && !run->werr) {
		fprintf(stderr, PROG ": -w: %s\n", err);
		run->werr = true;
	}
	s->w = NULL;
	if (!run->werr)
		report_redact_unused(run->opts->redact, run->opts->write_path);
	if (!run->werr)
		fprintf(stderr, PROG ": %" PRIu64 " of %" PRIu64 " events written to %s\n",
			gtr_copier_events(s->copy), run->nevents, run->opts->write_path);
	if (!run->werr && s->late)
		fprintf(stderr, PROG ": note: %" PRIu64 " entr%s written just before %s return, out "
			"of time order: %s is read once (write it to a file, and select from that, "
			"for a selection in time order)\n", s->late, s->late == 1 ? "y" : "ies",
			s->late == 1 ? "its" : "their", run->opts->name);
}

static void write_free(struct run *run)
{
	struct wsink *s = run->state;

	if (!s)
		return;
	if (s->w)
		gtr_writer_close(s->w, NULL, 0);
	gtr_copier_free(s->copy);
	u64map_free(&s->entries);
	free(s);
	run->state = NULL;
}

const struct sink sink_write = {
	.name = "write",
	.flags = SINK_ALL,
	.begin = write_begin,
	.event = write_event,
	.unfinished = write_unfinished,
	.drop = write_drop,
	.end = write_end,
	.free = write_free,
};

/* Whether the input can be read twice: a regular file. */
static bool rereadable(const struct report_opts *o)
{
	struct stat st;

	return strcmp(o->path, "-") && !o->follow && !stat(o->path, &st) && S_ISREG(st.st_mode);
}

int report_write(const struct report_opts *o)
{
	struct wplan plan = { .planning = true };
	struct report_opts first = *o, second = *o;
	int rc = 0;

	first.sink = second.sink = &sink_write;
	/* without a filter or a time window every event is kept: each
	 * entry before its return, nothing to plan */
	if (!rereadable(o) || (!o->nfilters && !o->since && !o->until))
		return report_run(&second);
	first.sink_arg = &plan;
	first.quiet = true;
	first.progress = -1;
	rc = report_run(&first);
	if (!rc) {
		plan.planning = false;
		second.sink_arg = &plan;
		rc = report_run(&second);
	}
	u64map_free(&plan.need);
	return rc;
}
