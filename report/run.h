/* SPDX-License-Identifier: MIT */
/*
 * run: one pass of `gotrace-report print` or `stats` over a trace file:
 * read through libgtr (format/gtr.h), pair (report/pair.h), filter
 * (report/filter.h) and hand every event to one sink (report/sink.c:
 * print, count, stats, folded). Memory does not grow with the file.
 */
#ifndef REPORT_RUN_H
#define REPORT_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "output.h"
#include "pair.h"

#define REPORT_MAX_FILTERS 64
#define REPORT_MAX_INPUTS 256
#define REPORT_MAX_PIDS 64

/* Exit statuses (spec/OUTPUT.md). */
enum { EXIT_READ = 1, EXIT_USAGE = 2 };

struct sink;

/* What the command line asked for (filled by report/main.c). */
struct report_opts {
	bool stats;                /* the stats command */
	const char *path;          /* "-": standard input */
	const char *name;          /* the path, as messages name it */
	const char *filters[REPORT_MAX_FILTERS];
	int nfilters;
	uint32_t pids[REPORT_MAX_PIDS]; /* --pid (also in a filter): each is
					   checked against the file's events */
	int npids;
	const struct output_format *format;
	bool calls, time_rel, time_wall, count, hist;
	bool strict;               /* a filter evaluation error fails the run */
	bool follow;               /* wait for more at the end (tail -f) */
	const char *inputs[REPORT_MAX_INPUTS]; /* every FILE given: several are
				      merged first (report/merge.h) into `path` */
	size_t ninputs;
	const char *write_path;    /* -w: kept events into this trace */
	unsigned write_flags;      /* GTR_W_* for it (--force) */
	struct gtr_redactor *redact; /* -w --redact: rules its writer applies
				      (spec/REDACT.md); NULL: none */
	const char *redact_key;    /* --redact-key FILE */
	int progress;              /* -1 never, 0 on a terminal, 1 always */
	const char *since, *until, *by;
	uint64_t limit;            /* 0: none */
	struct pair_limits lim;
	const struct sink *sink;   /* NULL: as the options say (sink_select());
				      else this one (diff's, -w's passes), with sink_arg */
	void *sink_arg;
	bool quiet;                /* no warnings nor notes: a first pass that
				      a second repeats (report_write()) */
};

/*
 * Reads the file `o` names once and writes what the options ask for to
 * stdout, warnings to stderr. Returns the exit status: 0, EXIT_READ (the
 * file cannot be read, output cannot be written) or EXIT_USAGE (a filter,
 * time or --by error; a filter without answer under --strict).
 */
int report_run(const struct report_opts *o);

#endif /* REPORT_RUN_H */
