/* SPDX-License-Identifier: MIT */
/*
 * The sinks of a run (report/run_int.h): print (the output printers of
 * report/output.h), count (events, or calls with --calls), stats
 * (report/stats.h) and folded stacks (report/folded.h). Adding a way to
 * consume events means adding a sink here and a line to sink_select().
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "folded.h"
#include "output.h"
#include "pair.h"
#include "run_int.h"
#include "stats.h"

/* Counts one output record or match against --limit. */
static void count_one(struct run *run, uint64_t *n, uint64_t add)
{
	*n += add;
	if (run->opts->limit && *n >= run->opts->limit)
		run->stop = true;
}

/*
 * Says once, on stderr, that calls of return probes in a gccgo program are
 * paired by thread: its goroutine ids were not recorded (goid_offset -1,
 * spec/FORMAT.md), and a goroutine that blocks or yields mid-call may go
 * on on another thread, whose entries and returns it then mixes with.
 */
static void by_thread_note(const struct run *run)
{
	const uint32_t nb = gtr_reader_nbinaries(run->r);

	for (uint32_t i = 0; i < nb; i++) {
		const struct gtr_binary *b = gtr_reader_binary_at(run->r, i);
		uint32_t k = 0;

		if (!b || strcmp(b->compiler, "gccgo") || b->goid_offset >= 0 ||
		    !strcmp(b->goid_source, "g"))
			continue;
		while (k < run->np && (run->probes[k]->binary_id != b->id ||
				       run->probes[k]->kind != GTR_KIND_RETURN))
			k++;
		if (k == run->np)
			continue;
		fprintf(stderr, PROG ": note: %s is a gccgo program, whose "
			"goroutine ids are not recorded: its calls are paired by "
			"thread, so a goroutine that blocked or yielded mid-call "
			"and went on on another thread has its call paired with "
			"another's return, or not at all\n", b->path);
		return;
	}
}

/* ------------------------------------------------------------ print */

static void print_begin(struct run *run)
{
	/* a merged file: the HOST column fits its widest host name */
	for (uint32_t i = 0; run->hosts && i < gtr_reader_nhosts(run->r); i++) {
		const struct gtr_host *h = gtr_reader_host_at(run->r, i);

		if (h && h->hostname)
			output_text_host(run->out, h->hostname);
	}
	output_begin(run->out, &run->buf);
}

static void print_event(struct run *run, struct report_event *e, bool kept)
{
	count_one(run, &run->records, (uint64_t)output_put(run->out, &run->buf, e));
}

static void print_unfinished(struct run *run, const struct report_event *e, uint64_t end_ns,
			     const char *status)
{
	count_one(run, &run->records,
		  (uint64_t)output_put_open(run->out, &run->buf, e, end_ns, status));
}

static void print_end(struct run *run)
{
	output_end(run->out, &run->buf);
}

static void print_warnings(const struct run *run)
{
	output_warnings(run->out, stderr);
	by_thread_note(run);   /* returns show their latency */
}

static const struct sink sink_print = {
	.name = "print",
	.begin = print_begin,
	.event = print_event,
	.unfinished = print_unfinished,
	.end = print_end,
	.warnings = print_warnings,
};

/* ------------------------------------------------------------ count */

static void count_event(struct run *run, struct report_event *e, bool kept)
{
	count_one(run, &run->matched, 1);
}

/* --calls --count: the calls the call view would show; an entry that will
 * have a return (or end unfinished) is counted then */
static void count_call(struct run *run, struct report_event *e, bool kept)
{
	if (e->ev->kind != GTR_KIND_ENTRY || !e->tracked)
		count_one(run, &run->matched, 1);
}

static void count_unfinished(struct run *run, const struct report_event *e, uint64_t end_ns,
			     const char *status)
{
	count_one(run, &run->matched, 1);
}

static void count_end(struct run *run)
{
	buf_printf(&run->buf, "%" PRIu64 "\n", run->matched);
}

static const struct sink sink_count = {
	.name = "count",
	.flags = SINK_UNORDERED | SINK_LEAN,
	.event = count_event,
	.end = count_end,
};

static const struct sink sink_count_calls = {
	.name = "count calls",
	.flags = SINK_UNORDERED,
	.event = count_call,
	.unfinished = count_unfinished,
	.end = count_end,
	.warnings = by_thread_note,
};

/* ------------------------------------------------------------ stats */

static void stats_begin(struct run *run)
{
	run->state = stats_new(run->by, run->opts->by, 0);
}

static void stats_sink_event(struct run *run, struct report_event *e, bool kept)
{
	stats_event(run->state, e);
}

static void stats_end(struct run *run)
{
	stats_set_window(run->state, run->t0, run->last_ts, run->since, run->until);
	stats_write(run->state, &run->buf, run->last_ts > run->t0 ? run->last_ts - run->t0 : 0,
		    run->opts->hist);
}

static void stats_warnings(const struct run *run)
{
	if (stats_dropped(run->state))
		fprintf(stderr, PROG ": warning: %" PRIu64 " event(s) left out of the statistics (more than 10000 groups)\n",
			stats_dropped(run->state));
	by_thread_note(run);
}

static void stats_sink_free(struct run *run)
{
	stats_free(run->state);
}

static const struct sink sink_stats = {
	.name = "stats",
	.flags = SINK_UNORDERED,
	.begin = stats_begin,
	.event = stats_sink_event,
	.end = stats_end,
	.warnings = stats_warnings,
	.free = stats_sink_free,
};

/* ------------------------------------------------------------ folded */

static void folded_begin(struct run *run)
{
	run->state = folded_new(0);
}

/* every paired return, kept or not: its time is its caller's callee time */
static void folded_event(struct run *run, struct report_event *e, bool kept)
{
	folded_call(run->state, run->pair, run->out, e, kept);
}

static void folded_end(struct run *run)
{
	folded_write(run->state, &run->buf);
}

static void folded_warnings(const struct run *run)
{
	if (folded_dropped(run->state))
		fprintf(stderr, PROG ": warning: %" PRIu64 " call(s) left out of the folded stacks (more than 1M distinct stacks)\n",
			folded_dropped(run->state));
	by_thread_note(run);
}

static void folded_sink_free(struct run *run)
{
	folded_free(run->state);
}

static const struct sink sink_folded = {
	.name = "folded",
	.flags = SINK_UNORDERED | SINK_ALL,
	.begin = folded_begin,
	.event = folded_event,
	.end = folded_end,
	.warnings = folded_warnings,
	.free = folded_sink_free,
};

const struct sink *sink_select(const struct report_opts *o)
{
	if (o->write_path)
		return &sink_write;
	if (o->stats)
		return &sink_stats;
	if (o->count)
		return o->calls ? &sink_count_calls : &sink_count;
	if (o->format == &out_folded)
		return &sink_folded;
	return &sink_print;
}
