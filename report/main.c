/* SPDX-License-Identifier: MIT */
/*
 * gotrace-report: reads a .gtr trace file through libgtr (format/gtr.h),
 * filters its events (report/filter.h) and prints them (report/output.h).
 *
 * Exit status: 0 success (also for a truncated file, with a warning),
 * 1 the file cannot be read or output cannot be written, 2 usage or filter
 * errors.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "filter.h"
#include "gtr.h"
#include "output.h"

#define PROG "gotrace-report"
#define FLUSH_AT (64 * 1024)     /* bytes of formatted output per write */
#define MAX_FILTERS 64

enum { EXIT_READ = 1, EXIT_USAGE = 2 };

const char *argp_program_version = "gotrace-report 0.1";

/* ------------------------------------------------------------ print */

struct print_env {
	const char *path;
	const char *filters[MAX_FILTERS];
	int nfilters;
	enum output_format format;
};

enum { OPT_FORMAT = 0x100 };

static const struct argp_option print_options[] = {
	{ "filter", 'f', "EXPR", 0,
	  "Show only events for which EXPR holds (spec/FILTER.md); repeated, all must hold", 0 },
	{ "format", OPT_FORMAT, "FMT", 0, "Output format: text (default) or jsonl", 0 },
	{ 0 },
};

static const char print_doc[] =
	"Print the events of a gotrace trace file, one line each.\n"
	"\n"
	"USAGE: gotrace-report [print] [-f EXPR] [--format text|jsonl] FILE\n"
	"\n"
	"EXAMPLES:\n"
	"    gotrace-report app.gtr                        # every event\n"
	"    gotrace-report -f 'goarg1 == 42' app.gtr      # first argument is 42\n"
	"    gotrace-report -f 'func == \"main.add\" && n > 10' app.gtr\n"
	"                                                  # main.add calls with n > 10\n"
	"    gotrace-report -f 'comm != \"sh\"' --format jsonl app.gtr | jq .args\n"
	"                                                  # JSON Lines for jq\n";

static error_t print_parse(int key, char *arg, struct argp_state *state)
{
	struct print_env *env = state->input;

	switch (key) {
	case 'f':
		if (env->nfilters == MAX_FILTERS)
			argp_error(state, "too many --filter options (at most %d; join them with &&)",
				   MAX_FILTERS);
		env->filters[env->nfilters++] = arg;
		return 0;
	case OPT_FORMAT:
		if (output_format_parse(arg, &env->format))
			argp_error(state, "unknown output format '%s' (known: text, jsonl)", arg);
		return 0;
	case ARGP_KEY_ARG:
		if (env->path)
			argp_error(state, "one trace file at a time (got '%s' and '%s')",
				   env->path, arg);
		env->path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!env->path)
			argp_error(state, "no trace file given");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static bool write_out(struct buf *b)
{
	const bool ok = !b->len || fwrite(b->data, 1, b->len, stdout) == b->len;

	buf_reset(b);
	return ok;
}

static int cmd_print(int argc, char **argv)
{
	static const struct argp argp = {
		.options = print_options,
		.parser = print_parse,
		.args_doc = "FILE",
		.doc = print_doc,
	};
	struct print_env env = { .format = OUTPUT_TEXT };
	struct filter *filters[MAX_FILTERS] = { 0 };
	struct filter_error ferr;
	struct gtr_reader *r = NULL;
	struct buf out = BUF_INIT;
	const struct gtr_probe **probes = NULL;
	static struct gtr_event ev;
	struct gtr_drop drop;
	uint64_t lost = 0;
	char err[512];
	int ret = EXIT_READ;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return EXIT_USAGE;

	for (int i = 0; i < env.nfilters; i++) {
		filters[i] = filter_compile(env.filters[i], &ferr);
		if (!filters[i]) {
			filter_error_print(stderr, PROG ": ", env.filters[i], &ferr);
			ret = EXIT_USAGE;
			goto out;
		}
	}

	r = gtr_reader_open(env.path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, PROG ": %s\n", err);
		goto out;
	}
	if (gtr_reader_preload(r) < 0) {
		fprintf(stderr, PROG ": %s\n", gtr_reader_error(r));
		goto out;
	}

	/* type-check the filters against the probes described up front */
	const uint32_t np = gtr_reader_nprobes(r);
	probes = calloc(np + 1, sizeof(*probes));
	if (!probes) {
		fprintf(stderr, PROG ": out of memory (%" PRIu32 " probes)\n", np);
		goto out;
	}
	for (uint32_t i = 0; i < np; i++)
		probes[i] = gtr_reader_probe_at(r, i);
	for (int i = 0; i < env.nfilters; i++) {
		if (filter_check(filters[i], probes, np, stderr, &ferr)) {
			filter_error_print(stderr, PROG ": ", env.filters[i], &ferr);
			ret = EXIT_USAGE;
			goto out;
		}
	}

	if (env.format == OUTPUT_TEXT)
		output_text_header(&out);

	for (;;) {
		const int item = gtr_reader_next(r, &ev, &drop);
		if (item < 0) {
			write_out(&out);
			fflush(stdout);
			const char *msg = gtr_reader_error(r);
			fprintf(stderr, PROG ": %s: %s\n", env.path,
				msg && msg[0] ? msg : strerror(-item));
			goto out;
		}
		if (item == GTR_ITEM_END)
			break;
		if (item == GTR_ITEM_DROP) {
			lost += drop.count;
			continue;
		}
		if (item != GTR_ITEM_EVENT)
			continue;
		const struct report_event e = {
			.ev = &ev,
			.probe = gtr_reader_probe(r, ev.probe_id),
			.comm = gtr_reader_comm(r, ev.pid, ev.tid),
		};
		int k = 0;
		while (k < env.nfilters && filter_match(filters[k], &e))
			k++;
		if (k < env.nfilters)
			continue;
		output_event(&out, env.format, &e);
		if (out.len >= FLUSH_AT && !write_out(&out))
			break;
	}
	if (!write_out(&out) || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": cannot write output: %s\n", strerror(errno));
		goto out;
	}

	if (lost)
		fprintf(stderr, PROG ": warning: %" PRIu64 " event(s) were lost while recording %s (the recorder could not keep up)\n",
			lost, env.path);
	if (gtr_reader_damage(r)) {
		const char *msg = gtr_reader_error(r);
		fprintf(stderr, PROG ": warning: skipped %" PRIu64 " damaged block(s) of %s%s%s\n",
			gtr_reader_damage(r), env.path, msg && msg[0] ? "; last: " : "",
			msg ? msg : "");
	}
	if (gtr_reader_truncated(r))
		fprintf(stderr, PROG ": warning: %s ends in the middle of a block (recording interrupted?); "
			"events up to the last complete frame were read\n", env.path);
	ret = 0;
out:
	free(probes);
	buf_free(&out);
	gtr_reader_close(r);
	for (int i = 0; i < env.nfilters; i++)
		filter_free(filters[i]);
	return ret;
}

/* ------------------------------------------------------------ commands */

/*
 * Subcommands, bpftool-style. A first argument naming one selects it;
 * anything else is `print`'s (so `gotrace-report app.gtr` prints).
 */
struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
};

static const struct cmd cmds[] = {
	{ "print", cmd_print },
};

int main(int argc, char **argv)
{
	argp_err_exit_status = EXIT_USAGE;
	if (argc > 1) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i].name)) {
				argv[1] = argv[0]; /* messages keep the program's name */
				return cmds[i].func(argc - 1, argv + 1);
			}
	}
	return cmd_print(argc, argv);
}
