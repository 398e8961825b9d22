/* SPDX-License-Identifier: MIT */
/*
 * diff: `gotrace-report diff BASE.gtr NEW.gtr` (spec/DIFF.md): compares
 * two recordings, or two sets of repeated recordings, function by
 * function (matched by name), and gates on rules. Each file is read once
 * by report_run() (report/run.h) with a sink of the diff's own.
 */
#ifndef REPORT_DIFF_H
#define REPORT_DIFF_H

#include <stdbool.h>

#include "run.h"

/* Exit statuses of diff (spec/DIFF.md, "Exit status"). */
enum {
	DIFF_EXIT_OK = 0,          /* no rule fails */
	DIFF_EXIT_FAIL = 1,        /* a rule fails */
	DIFF_EXIT_USAGE = 2,       /* usage error or unreadable input */
	DIFF_EXIT_INCOMPARABLE = 3 /* lost events, or Go, arch, kernel or probes differ */
};

enum diff_format { DIFF_FMT_TEXT, DIFF_FMT_JSON, DIFF_FMT_MARKDOWN };

/* Differences --accept lets pass (spec/DIFF.md, "Comparable"). */
enum {
	DIFF_ACCEPT_LOSS = 1u << 0,
	DIFF_ACCEPT_GO = 1u << 1,
	DIFF_ACCEPT_ARCH = 1u << 2,
	DIFF_ACCEPT_KERNEL = 1u << 3,
	DIFF_ACCEPT_PROBES = 1u << 4,
};

#define DIFF_MAX_FILES 64
#define DIFF_MAX_RULES 64

/* What the command line asked for (report/diff_cli.c). */
struct diff_opts {
	const char *files[2][DIFF_MAX_FILES];  /* base, new */
	int nfiles[2];
	const char *rules[DIFF_MAX_RULES];     /* --fail-on; none: the defaults */
	int nrules;
	const char *filters[REPORT_MAX_FILTERS];
	int nfilters;
	enum diff_format format;
	unsigned accept;                        /* DIFF_ACCEPT_* */
};

/*
 * Reads every file, compares, writes the report to stdout (messages to
 * stderr) and returns the exit status (DIFF_EXIT_*).
 */
int report_diff(const struct diff_opts *o);

/* `gotrace-report diff ARGS`: parses the command line and runs
 * report_diff(). Returns the exit status. */
int report_diff_cmd(int argc, char **argv);

#endif /* REPORT_DIFF_H */
