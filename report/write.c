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
 * - calls whole: the entry of a kept return just before it, and the return
 *   of a kept entry, so that pairing in OUT finds what it found here;
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

#include "map.h"
#include "merge.h"
#include "run_int.h"
#include "xalloc.h"

struct wsink {
	struct gtr_writer *w;
	struct gtr_copier *copy;  /* the input, copied to w */
	struct u64map entries;    /* ts_ns of an entry written whose return
				   * is yet to come -> its tid */
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
		rc = gtr_copier_event(s->copy, e->entry);
	if (!rc)
		rc = gtr_copier_event(s->copy, ev);
	if (!rc && ev->kind == GTR_KIND_ENTRY && e->tracked &&
	    u64map_add(&s->entries, ev->ts_ns, ev->tid, UINT32_MAX))
		rc = -ENOMEM;
	if (!rc && kept && run->opts->limit && ++run->records >= run->opts->limit)
		run->stop = true;
	if (rc)
		fail(run, s, rc);
}

/* Every drop record: losses stay known in OUT. */
static void write_drop(struct run *run, const struct gtr_drop *d)
{
	struct wsink *s = run->state;
	int rc;

	if (run->werr || !open_out(run, s))
		return;
	if ((rc = gtr_copier_drop(s->copy, d)))
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
	.drop = write_drop,
	.end = write_end,
	.free = write_free,
};
