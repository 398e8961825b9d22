/* SPDX-License-Identifier: MIT */
/*
 * The command line of `gotrace-report diff` (report/diff.h): files of the
 * two sides, split by "--" when a side has several recordings, and the
 * options, into a struct diff_opts for report_diff().
 */
#include <argp.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "diff_int.h"

enum { OPT_FAIL_ON = 0x200, OPT_FORMAT, OPT_ACCEPT };

static const struct argp_option options[] = {
	{ "fail-on", OPT_FAIL_ON, "RULE", 0,
	  "Fail (exit 1) when RULE holds for a function: '[GLOB:] METRIC OP VALUE', e.g. "
	  "'p50 > +10%', 'calls != ', 'main.*: errors > +5%' (spec/DIFF.md); repeated, any "
	  "may fail. Without it: 'p50 > +10%', 'errors > +5%' and 'crashes > 0' (a new run "
	  "whose process exited non-zero or by a signal)", 0 },
	{ "format", OPT_FORMAT, "FMT", 0, "Output: text (default), json, markdown", 0 },
	{ "accept", OPT_ACCEPT, "WHAT", 0,
	  "Compare although they differ in WHAT: loss, go, arch, kernel, probes (comma-separated) "
	  "or all", 0 },
	{ "filter", 'f', "EXPR", 0, "Only events for which EXPR holds (spec/FILTER.md), on both sides", 0 },
	{ 0 },
};

static const char doc[] =
	"Compare two recordings function by function (matched by name) and gate on the "
	"change: calls, latency p50/p90/p99 with 95% intervals, a Hodges-Lehmann shift, "
	"Mann-Whitney p-values ('~': not significant at 0.05), error returns, call edges, "
	"panics and exit statuses.\n"
	"\n"
	"USAGE: gotrace-report diff [OPTION...] BASE.gtr NEW.gtr\n"
	"       gotrace-report diff [OPTION...] BASE1.gtr BASE2.gtr... -- NEW1.gtr NEW2.gtr...\n"
	"\n"
	"Exit status: 0 no rule fails, 1 a rule fails, 2 usage error or unreadable input, "
	"3 not comparable (lost events; Go version, arch, kernel or probes differ; see --accept).\n"
	"\n"
	"EXAMPLES:\n"
	"  gotrace-report diff base.gtr new.gtr\n"
	"  gotrace-report diff --fail-on 'p99 > +20%' --fail-on 'calls != ' base.gtr new.gtr\n"
	"  gotrace-report diff --format markdown a1.gtr a2.gtr a3.gtr -- b1.gtr b2.gtr b3.gtr\n";

struct cli {
	struct diff_opts *o;
	int nargs;                 /* positional arguments; -1: all are BASE's
				      (a "--" follows them) */
};

static void add_file(struct argp_state *state, struct diff_opts *o, int side, const char *path)
{
	if (o->nfiles[side] == DIFF_MAX_FILES)
		argp_error(state, "too many recordings for one side (at most %d)", DIFF_MAX_FILES);
	o->files[side][o->nfiles[side]++] = path;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct cli *c = state->input;
	struct diff_opts *o = c->o;

	switch (key) {
	case OPT_FAIL_ON:
		if (o->nrules == DIFF_MAX_RULES)
			argp_error(state, "too many --fail-on rules (at most %d)", DIFF_MAX_RULES);
		o->rules[o->nrules++] = arg;
		return 0;
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			o->format = DIFF_FMT_TEXT;
		else if (!strcmp(arg, "json"))
			o->format = DIFF_FMT_JSON;
		else if (!strcmp(arg, "markdown") || !strcmp(arg, "md"))
			o->format = DIFF_FMT_MARKDOWN;
		else
			argp_error(state, "unknown --format '%s' for diff (known: text, json, markdown)", arg);
		return 0;
	case OPT_ACCEPT:
		if (diff_accept_parse(arg, &o->accept))
			argp_error(state, "unknown --accept '%s' (known: loss, go, arch, kernel, probes, all)",
				   arg);
		return 0;
	case 'f':
		if (o->nfilters == REPORT_MAX_FILTERS)
			argp_error(state, "too many --filter options (at most %d)", REPORT_MAX_FILTERS);
		o->filters[o->nfilters++] = arg;
		return 0;
	case ARGP_KEY_ARG:
		if (c->nargs < 0)
			add_file(state, o, 0, arg);
		else
			add_file(state, o, c->nargs++ == 0 ? 0 : 1, arg);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int report_diff_cmd(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options,
		.parser = parse_opt,
		.args_doc = "BASE.gtr NEW.gtr",
		.doc = doc,
	};
	struct diff_opts o = { .format = DIFF_FMT_TEXT };
	struct cli c = { .o = &o };
	int split = 0;

	/* "--" splits the sides: argp sees what is before it */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			split = i;
			break;
		}
	if (split)
		c.nargs = -1;
	if (argp_parse(&argp, split ? split : argc, argv, 0, NULL, &c))
		return DIFF_EXIT_USAGE;
	for (int i = split + 1; split && i < argc; i++) {
		if (o.nfiles[1] == DIFF_MAX_FILES) {
			fprintf(stderr, "gotrace-report: too many recordings for one side (at most %d)\n",
				DIFF_MAX_FILES);
			return DIFF_EXIT_USAGE;
		}
		o.files[1][o.nfiles[1]++] = argv[i];
	}
	if (!o.nfiles[0] || !o.nfiles[1] || (!split && o.nfiles[1] != 1)) {
		fprintf(stderr, "gotrace-report: diff needs two recordings, BASE.gtr NEW.gtr (or "
			"BASE1.gtr... -- NEW1.gtr... for repeated runs); got %d and %d\n"
			"Try 'gotrace-report diff --help' for more information.\n",
			o.nfiles[0], o.nfiles[1]);
		return DIFF_EXIT_USAGE;
	}
	return report_diff(&o);
}
