/* SPDX-License-Identifier: MIT */
/*
 * What the read loop (report/run.c), the sinks (report/sink.c) and the
 * pushed-down count (report/pushdown.c) share: the state of one run, the
 * sink interface, the plans of a count.
 */
#ifndef REPORT_RUN_INT_H
#define REPORT_RUN_INT_H

#include "buf.h"
#include "filter.h"
#include "gtr.h"
#include "map.h"
#include "run.h"
#include "timeparse.h"

#define PROG "gotrace-report"

struct exit_rec {
	uint32_t pid;
	uint64_t ts_ns;
};

struct sink;

struct run {
	const struct report_opts *opts;
	const struct sink *sink;
	void *state;               /* the sink's */
	struct gtr_reader *r;
	struct filter *filters[REPORT_MAX_FILTERS];
	struct output *out;
	struct filter *by;
	struct pairer *pair;
	const struct gtr_probe **probes; /* every probe described so far */
	uint32_t np;
	uint32_t maxvals;          /* values of the probe with the most */
	struct buf buf;            /* output, written out by FLUSH_AT bytes */
	uint64_t t0, last_ts;
	bool have_t0;
	int64_t since, until;      /* monotonic ns; INT64_MIN / INT64_MAX none */
	struct rtime since_t, until_t;
	uint64_t records, matched; /* output records; events or calls counted */
	uint64_t lost, suppressed, nevents;
	bool stop;                 /* --limit reached */
	bool at_end;               /* the file was read to its end */
	bool werr;                 /* output could not be written */
	uint64_t interrupted_ns;   /* live input: CLOCK_MONOTONIC when a reader
				      wait first saw Ctrl-C, else 0 */
	bool lean;                 /* --count of events: no names, no pairing */
	bool hosts;                /* a merged file of several host names:
				    * events show their host's */
	bool any_return;           /* some probe is a return probe */
	unsigned uses;             /* FILTER_USES_* of all filters */
	struct exit_rec *exits;    /* process exits, by pid then time */
	uint32_t nexits;
	uint64_t open_end, exited_end; /* calls open at the end: still open, exited */
	uint64_t pids_seen;        /* bit k: an event of opts->pids[k] was read */
};

enum {
	SINK_UNORDERED = 1u << 0,  /* needs no file order (report/pair.h) */
	SINK_LEAN = 1u << 1,       /* needs no names nor pairing unless a filter does */
	SINK_ALL = 1u << 2,        /* sees the events the filters leave out too */
};

/*
 * Where events go once paired and filtered: one sink per run, selected
 * once from the options (sink_select()). A NULL function does nothing.
 */
struct sink {
	const char *name;
	unsigned flags;            /* SINK_* */
	/* before the first event (the probes described up front are known) */
	void (*begin)(struct run *run);
	/* every event pairing releases, in file order: those `kept` by the
	 * filters and the time window, and the others too with SINK_ALL */
	void (*event)(struct run *run, struct report_event *e, bool kept);
	/* a call that did not return (unwound, exited, open, lost) and that
	 * the filters kept; `status` as output_put_open() takes it */
	void (*unfinished)(struct run *run, const struct report_event *e,
			   uint64_t end_ns, const char *status);
	/* every drop record, in file order */
	void (*drop)(struct run *run, const struct gtr_drop *d);
	/* after the last event: what is left to append to run->buf */
	void (*end)(struct run *run);
	/* messages for stderr about what was left out */
	void (*warnings)(const struct run *run);
	void (*free)(struct run *run);
};

/* The sink the options `o` ask for: stats, count (of events or of
 * calls), folded stacks, or print (the output printers). */
const struct sink *sink_select(const struct report_opts *o);

/* -w: the kept events into a new trace (report/write.c). */
extern const struct sink sink_write;

/*
 * -w OUT (report_run() of options with write_path and no sink): the kept
 * events and the other halves of their calls into OUT, in file order. A
 * regular file whose selection may leave out entries of kept returns is
 * read twice: a quiet first pass (report_opts.quiet) finds those entries,
 * the second writes every event in its place. Returns report_run()'s
 * exit status (the first pass's when it fails).
 */
int report_write(const struct report_opts *o);

/* ---------------------------------------------------------- pushdown.c */

/* One plan of a pushed-down count: that of (probe, kind). */
struct pd_plan {
	bool ok;                         /* the filters gave plan */
	const struct gtr_probe *probe;
	struct gtr_count_plan plan;
};

/* The plans of a pushed-down count, one per (probe, kind) met. */
struct pushdown {
	bool on;                         /* the run allows it */
	struct pd_plan *plans;           /* in the order first met */
	uint32_t nplans, cap;
	struct u64map ix;                /* probe id << 1 | kind -> plans[] */
	uint32_t last;                   /* plans[last]: the one used last */
};

/* Sets pd up for `run`: on when its options allow a count pushed down
 * into the reader (a lean --count of events, no window, no --limit, and
 * filters that read no comm, binary or latency). */
void pushdown_init(struct pushdown *pd, const struct run *run);

/*
 * After an event the lean count took: counts the events that follow it
 * in its frame through gtr_reader_count_run(), with the plan of each
 * one's (probe, kind), never building them as events, while they can be
 * counted so. Adds them to run->nevents, run->matched and run->last_ts;
 * returns how many it took.
 */
uint64_t pushdown_count(struct run *run, struct pushdown *pd);

/* Frees the plans of pd. */
void pushdown_free(struct pushdown *pd);

#endif /* REPORT_RUN_INT_H */
