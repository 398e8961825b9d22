/* SPDX-License-Identifier: MIT */
/*
 * gotrace-report: the command line. Subcommands (print, stats, info) are
 * rows of a command table; print and stats fill a struct report_opts and
 * hand it to report_run() (report/run.h: one streaming pass that reads,
 * pairs, filters and gives events to a sink), info to report_info().
 *
 * Exit status: 0 success (also for a truncated file, with a warning),
 * 1 the file cannot be read or output cannot be written, 2 usage or filter
 * errors.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "gtr.h"
#include "info.h"
#include "merge.h"
#include "output.h"
#include "run.h"

/* Whether `arg` names a command (cmds[] below). */
static bool is_command(const char *arg);

#define PROG "gotrace-report"

const char *argp_program_version = "gotrace-report " GOTRACE_VERSION;

enum {
	OPT_FORMAT = 0x100, OPT_SINCE, OPT_UNTIL, OPT_LIMIT, OPT_CALLS, OPT_COUNT,
	OPT_BY, OPT_NO_HIST, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_MAX_DEPTH,
	OPT_MAX_GOROUTINES, OPT_KEEP_STR, OPT_STRICT, OPT_FOLLOW, OPT_PID, OPT_FORCE,
	OPT_REDACT, OPT_REDACT_KEY,
};

/* Options of one command given to another: a clear message, not argp's. */
#define WRONG_CMD(name, key, arg) \
	{ name, key, arg, OPTION_HIDDEN, NULL, 0 }

static const struct argp_option common_options[] = {
	{ "filter", 'f', "EXPR", 0,
	  "Only events for which EXPR holds (spec/FILTER.md); repeated, all must hold", 0 },
	{ "since", OPT_SINCE, "TIME", 0,
	  "Only events at or after TIME: +DURATION from the first event (+5s), RFC 3339, or HH:MM[:SS[.frac]] local time", 0 },
	{ "until", OPT_UNTIL, "TIME", 0, "Only events at or before TIME (same forms)", 0 },
	{ "pid", OPT_PID, "PID", 0, "Only events of process PID (repeatable: any of them)", 0 },
	{ "progress", OPT_PROGRESS, 0, 0, "Show a progress bar on stderr even when it is not a terminal", 0 },
	{ "no-progress", OPT_NO_PROGRESS, 0, 0, "Never show a progress bar", 0 },
	{ "max-depth", OPT_MAX_DEPTH, "N", 0, "Open calls tracked per goroutine (default 1024)", 0 },
	{ "max-goroutines", OPT_MAX_GOROUTINES, "N", 0, "Goroutines with open calls tracked (default 65536)", 0 },
	{ "strict", OPT_STRICT, 0, 0,
	  "Exit 2 when a filter had no answer for some event (a regular expression hit a PCRE2 limit)", 0 },
	{ "follow", OPT_FOLLOW, 0, 0,
	  "Read a trace that is still being written, waiting for more at its end like tail -f, "
	  "until the recording ends or Ctrl-C", 0 },
	{ "keep-string", OPT_KEEP_STR, "BYTES", 0,
	  "Bytes of each string kept from an entry until its return (default 256)", 0 },
	{ 0 },
};

static const struct argp_option print_options[] = {
	{ "format", OPT_FORMAT, "FMT", 0,
	  "Output format: text (default), jsonl, csv, chrome, perfetto, folded", 0 },
	{ "calls", OPT_CALLS, 0, 0, "One line per call: entry, return and latency (text, jsonl)", 0 },
	{ 0, 't', 0, 0, "Text: add a TIME column, seconds since the first event", 0 },
	{ 0, 'T', 0, 0, "Text: add a TIME column, wall-clock HH:MM:SS.us (local time)", 0 },
	{ "count", OPT_COUNT, 0, 0, "Print only the number of matching events", 0 },
	{ "limit", OPT_LIMIT, "N", 0, "Stop after N output records (events, calls)", 0 },
	{ "write", 'w', "OUT", 0,
	  "Write the selected events to a new trace OUT, with the metadata they need ('-': standard output)", 0 },
	{ "force", OPT_FORCE, 0, 0, "With -w: overwrite OUT if it exists", 0 },
	{ "redact", OPT_REDACT, "RULE", 0,
	  "With -w: hash or drop values and names by RULE (spec/REDACT.md; repeatable)", 0 },
	{ "redact-key", OPT_REDACT_KEY, "FILE", 0, "With --redact: the hash's key", 0 },
	/* stats' options */
	WRONG_CMD("by", OPT_BY, "FIELD"),
	WRONG_CMD("no-hist", OPT_NO_HIST, 0),
	{ 0 },
};

static const struct argp_option stats_options[] = {
	{ "by", OPT_BY, "FIELD", 0,
	  "Group by a field besides the function: pid, goid, tid, comm, goargN, a parameter name...", 0 },
	{ "no-hist", OPT_NO_HIST, 0, 0, "Leave out the latency histograms", 0 },
	/* print's options */
	WRONG_CMD("format", OPT_FORMAT, "FMT"),
	WRONG_CMD("calls", OPT_CALLS, 0),
	WRONG_CMD("count", OPT_COUNT, 0),
	WRONG_CMD(0, 't', 0),
	WRONG_CMD(0, 'T', 0),
	WRONG_CMD("limit", OPT_LIMIT, "N"),
	{ 0 },
};

static const char print_doc[] =
	"Print the events of a gotrace trace file.\n"
	"\n"
	"USAGE: gotrace-report [print] [OPTION...] FILE...  events or calls (several\n"
	"       FILEs are merged, in time order)\n"
	"       gotrace-report stats [OPTION...] FILE    latency per function\n"
	"       gotrace-report info [--json] FILE        what the file holds\n"
	"       gotrace-report diff BASE NEW             compare, gate (diff --help)\n"
	"       gotrace-report merge -w OUT FILE...      hosts and processes into one\n"
	"       gotrace-report redact -w OUT --redact RULE... FILE   a copy to share\n"
	"(gotrace-report stats --help: the options of stats)\n"
	"\n"
	"EXAMPLES:\n"
	"  gotrace-report app.gtr                      # every event, trace.py style\n"
	"  gotrace-report -t -f 'goarg1 == 42' app.gtr # first argument 42, with time\n"
	"  gotrace-report -f 'glob(func, \"net/http.*\") && latency > 10ms' app.gtr\n"
	"                                              # slow returns of net/http\n"
	"  gotrace-report --calls app.gtr              # a line per call, latency\n"
	"  gotrace-report --format jsonl app.gtr | jq .args  # JSON Lines for jq\n"
	"  gotrace-report --format perfetto app.gtr > t.pftrace  # for ui.perfetto.dev\n"
	"  gotrace-report --format folded app.gtr | flamegraph.pl > f.svg\n"
	"  gotrace-report stats --by goarg1 app.gtr    # latency per first argument\n"
	"  gotrace-report --since +5s --until +6s app.gtr    # one second of it\n"
	"  gotrace-report info app.gtr                 # host, probes, counts, losses\n"
	"  gotrace-report -w small.gtr --pid 1234 -f 'latency > 10ms' app.gtr\n"
	"                                              # a smaller trace for a bug report\n"
	"  gotrace-report -w share.gtr --redact @strings -f 'latency > 10ms' app.gtr\n"
	"                                              # the same, every string hashed\n";

static const char stats_doc[] =
	"Summarise a gotrace trace file per function: calls, rate, latency "
	"percentiles and log2 histograms (from returns paired with entries).\n"
	"\n"
	"USAGE: gotrace-report stats [--by FIELD] [--no-hist] [-f EXPR] FILE\n"
	"\n"
	"EXAMPLES:\n"
	"    gotrace-report stats app.gtr                  # per function\n"
	"    gotrace-report stats --by pid app.gtr         # per function and process\n"
	"    gotrace-report stats --by goarg1 -f 'func == \"main.get\"' app.gtr\n";

/* A decimal integer without sign into *v. 0, or -1 when arg is not one. */
static int parse_u64(const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	const unsigned long long u = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] < '0' || arg[0] > '9')
		return -1;
	*v = u;
	return 0;
}

static uint64_t parse_num(struct argp_state *state, const char *opt, const char *arg,
			  uint64_t max)
{
	uint64_t v = 0;   /* argp_error() exits, but is not declared noreturn */

	if (parse_u64(arg, &v) || v > max)
		argp_error(state, "invalid %s '%s': expected an integer from 0 to %llu", opt, arg,
			   (unsigned long long)max);
	return v;
}

/* A pairing limit of option `opt` (--max-depth...) from 1 to `max`; 0 is
 * refused: `what` says what it counts, `dflt` its default. */
static uint32_t parse_limit(struct argp_state *state, const char *opt, const char *arg,
			    uint32_t max, const char *what, uint32_t dflt)
{
	uint64_t v = 0;

	if (parse_u64(arg, &v) || !v || v > max)
		argp_error(state, "invalid %s '%s': expected an integer from 1 to %u (%s; "
			   "default %u)", opt, arg, max, what, dflt);
	return (uint32_t)v;
}

/* An option of the other command: a clear message, not argp's. */
static void check_command(int key, const struct report_opts *env, struct argp_state *state)
{
	switch (key) {
	case OPT_BY:
	case OPT_NO_HIST:
		if (!env->stats)
			argp_error(state, "%s belongs to 'gotrace-report stats' (gotrace-report stats %s FILE)",
				   key == OPT_BY ? "--by" : "--no-hist",
				   key == OPT_BY ? "--by FIELD" : "--no-hist");
		return;
	case OPT_FORMAT:
	case OPT_CALLS:
	case OPT_COUNT:
	case 't':
	case 'T':
		if (env->stats) {
			const char *o = key == OPT_FORMAT ? "--format" : key == OPT_CALLS ? "--calls" :
					key == OPT_COUNT ? "--count" : key == 't' ? "-t" : "-T";
			argp_error(state, "%s belongs to 'gotrace-report print' (gotrace-report %s ... FILE), not to 'stats'",
				   o, o);
		}
		return;
	default:
		return;
	}
}

/* --redact RULE into *red (made at the first rule), or argp's usage error. */
static void add_redact_rule(struct argp_state *state, struct gtr_redactor **red,
			    const char *rule)
{
	char err[512];

	if (!*red && !(*red = gtr_redactor_new())) {
		fprintf(stderr, PROG ": --redact: cannot start libsodium (out of memory?)\n");
		exit(EXIT_READ);
	}
	if (gtr_redactor_add_rule(*red, rule, err, sizeof(err)))
		argp_error(state, "--redact: %s", err);
}

/* Keys `red` with --redact-key FILE (none: its random key). 0, or
 * EXIT_USAGE after a message. */
static int redact_key(struct gtr_redactor *red, const char *path)
{
	char err[512];

	if (!path || !gtr_redactor_key_file(red, path, err, sizeof(err)))
		return 0;
	fprintf(stderr, PROG ": --redact-key: %s\n", err);
	return EXIT_USAGE;
}

/* The options of print and stats alone. 0, or ARGP_ERR_UNKNOWN. */
static error_t parse_cmd_opt(int key, char *arg, struct argp_state *state,
			     struct report_opts *env)
{
	switch (key) {
	case OPT_BY: env->by = arg; return 0;
	case OPT_NO_HIST: env->hist = false; return 0;
	case OPT_FORMAT:
		if (output_format_parse(arg, &env->format))
			argp_error(state, "unknown output format '%s' (known: %s)", arg,
				   output_format_names());
		return 0;
	case OPT_CALLS: env->calls = true; return 0;
	case OPT_COUNT: env->count = true; return 0;
	case 't': env->time_rel = true; return 0;
	case 'T': env->time_wall = true; return 0;
	case 'w': env->write_path = arg; return 0;
	case OPT_FORCE: env->write_flags |= GTR_W_FORCE; return 0;
	case OPT_REDACT: add_redact_rule(state, &env->redact, arg); return 0;
	case OPT_REDACT_KEY: env->redact_key = arg; return 0;
	default: return ARGP_ERR_UNKNOWN;
	}
}

/*
 * --pid PID, repeated: one filter "pid == A || pid == B ...", built in
 * `expr` (which lives as long as the options).
 */
static void add_pid(struct report_opts *env, struct argp_state *state, const char *arg,
		    char *expr, size_t len)
{
	const uint64_t pid = parse_num(state, "--pid", arg, UINT32_MAX);
	const size_t used = strlen(expr);

	if (!used) {
		if (env->nfilters == REPORT_MAX_FILTERS)
			argp_error(state, "too many --filter options (at most %d; join them with &&)",
				   REPORT_MAX_FILTERS);
		env->filters[env->nfilters++] = expr;
	}
	if ((size_t)snprintf(expr + used, len - used, "%spid == %llu", used ? " || " : "",
			     (unsigned long long)pid) >= len - used ||
	    env->npids == REPORT_MAX_PIDS)
		argp_error(state, "too many --pid options (at most %d)", REPORT_MAX_PIDS);
	env->pids[env->npids++] = (uint32_t)pid;
}

/* Refuses OUT "-" of option `opt` (-w) when standard output is a terminal:
 * a trace is binary data. */
static void check_trace_out(const char *out, const char *opt, struct argp_state *state)
{
	if (out && !strcmp(out, "-") && isatty(STDOUT_FILENO))
		argp_error(state, "%s -: standard output is a terminal and a trace is binary "
			   "data; pipe it into 'gotrace-report -' or give a file with %s FILE",
			   opt, opt);
}

/* -w writes a trace: options that shape printed output do not apply. */
static void check_write(const struct report_opts *env, struct argp_state *state)
{
	check_trace_out(env->write_path, "-w", state);
	if (env->redact_key && !env->redact)
		argp_error(state, "--redact-key goes with --redact RULE");
	if (!env->write_path) {
		if (env->write_flags & GTR_W_FORCE)
			argp_error(state, "--force goes with -w OUT");
		if (env->redact)
			argp_error(state, "--redact writes a redacted trace: give it -w OUT "
				   "(or use gotrace-report redact)");
		return;
	}
	if (env->format != &out_text || env->calls || env->count || env->time_rel || env->time_wall)
		argp_error(state, "-w writes events to a trace; --format, --calls, --count, -t and -T "
			   "shape printed output (read OUT with them afterwards)");
	if (env->follow)
		argp_error(state, "-w reads its input to the end; --follow does not go with it");
}

/* After the last argument: the combinations that make no sense. */
static void check_end(struct report_opts *env, struct argp_state *state)
{
	if (!env->path) {
		argp_error(state, "no trace file given");
		return;   /* not reached: argp_error() exits (not noreturn) */
	}
	env->name = strcmp(env->path, "-") ? env->path : "standard input";
	if (env->follow && !strcmp(env->path, "-"))
		argp_error(state, "--follow reads a file that is being written; standard input is read live already");
	check_write(env, state);
	/* every binary format, whatever the inputs (one, several, standard
	 * input, --follow); --count prints a number, not the format */
	if ((env->format->flags & OUTPUT_F_BINARY) && !env->write_path && !env->stats &&
	    !env->count && isatty(STDOUT_FILENO))
		argp_error(state, "--format %s writes binary data and standard output is a "
			   "terminal; redirect it to a file (> trace.%s) or into a pipe",
			   env->format->name, env->format->suffix);
	/* the entry of a kept return is written from pairing's copy: whole */
	if (env->write_path && !env->lim.keep_str)
		env->lim.keep_str = GTR_MAX_STRING;
	if (env->calls && !(env->format->flags & OUTPUT_F_CALLS))
		argp_error(state, "--calls works with --format text or jsonl (chrome and perfetto show calls already)");
	if ((env->time_rel || env->time_wall) && !(env->format->flags & OUTPUT_F_TIME))
		argp_error(state, "-t and -T add columns to --format text only");
	if (env->limit && (env->stats || (env->format->flags & OUTPUT_F_SUMMARY)))
		argp_error(state, "--limit counts printed events and calls; %s%s summarises every "
			   "event that matches: narrow it with --since/--until or -f instead",
			   env->stats ? "stats" : "--format ", env->stats ? "" : env->format->name);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct report_opts *env = state->input;

	check_command(key, env, state);
	if (!parse_cmd_opt(key, arg, state, env))
		return 0;
	switch (key) {
	case ARGP_KEY_INIT:
		/* the common options' child parser works on the same env */
		if (state->root_argp->children && state->child_inputs)
			state->child_inputs[0] = env;
		return 0;
	case 'f':
		if (env->nfilters == REPORT_MAX_FILTERS)
			argp_error(state, "too many --filter options (at most %d; join them with &&)",
				   REPORT_MAX_FILTERS);
		env->filters[env->nfilters++] = arg;
		return 0;
	case OPT_SINCE: env->since = arg; return 0;
	case OPT_UNTIL: env->until = arg; return 0;
	case OPT_LIMIT:
		if (parse_u64(arg, &env->limit) || !env->limit)
			argp_error(state, "invalid --limit '%s': expected an integer from 1 to %llu (leave --limit out for no limit)",
				   arg, (unsigned long long)UINT64_MAX);
		return 0;
	case OPT_PROGRESS: env->progress = 1; return 0;
	case OPT_NO_PROGRESS: env->progress = -1; return 0;
	case OPT_MAX_DEPTH:
		env->lim.max_depth = parse_limit(state, "--max-depth", arg, 1u << 20,
						 "open calls paired per goroutine", 1024);
		return 0;
	case OPT_MAX_GOROUTINES:
		env->lim.max_goroutines = parse_limit(state, "--max-goroutines", arg, 1u << 24,
						      "goroutines with open calls", 65536);
		return 0;
	case OPT_KEEP_STR:
		env->lim.keep_str = parse_limit(state, "--keep-string", arg, GTR_MAX_STRING,
						"bytes kept of each string of an entry", 256);
		return 0;
	case OPT_STRICT:
		env->strict = true;
		return 0;
	case OPT_FOLLOW:
		env->follow = true;
		return 0;
	case OPT_PID: {
		static char pids[64 * 24];

		add_pid(env, state, arg, pids, sizeof(pids));
		return 0;
	}
	case ARGP_KEY_ARG:
		if (is_command(arg) && access(arg, F_OK))
			argp_error(state, "'%s' is a command: it comes first, before options and "
				   "files (gotrace-report %s [OPTION...] FILE)", arg, arg);
		if (env->ninputs == REPORT_MAX_INPUTS)
			argp_error(state, "too many trace files (at most %d)", REPORT_MAX_INPUTS);
		env->inputs[env->ninputs++] = arg;
		env->path = env->inputs[0];
		return 0;
	case ARGP_KEY_END:
		check_end(env, state);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* ------------------------------------------------------------ commands */

static const struct argp_child common_child[] = {
	{ &(const struct argp){ .options = common_options, .parser = parse_opt }, 0,
	  "Selecting events:", 1 },
	{ 0 },
};

/*
 * Reports on the FILEs given: one is read as it is; several are merged
 * first (report/merge.h) into a private temporary file, which is removed
 * after. Returns the exit status.
 */
static int run_inputs(struct report_opts *env)
{
	static char name[256];
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], path[PATH_MAX + 16];
	size_t used = 0;

	if (env->ninputs < 2)
		return report_run(env);
	if (snprintf(dir, sizeof(dir), "%s/gotrace-merge.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    (int)sizeof(dir) || !mkdtemp(dir)) {
		fprintf(stderr, PROG ": cannot make a directory to merge the recordings in: %s\n",
			strerror(errno));
		return EXIT_READ;
	}
	snprintf(path, sizeof(path), "%s/merged.gtr", dir);
	const struct merge_opts mo = {
		.inputs = env->inputs, .ninputs = env->ninputs, .output = path, .quiet = true,
	};
	int rc = report_merge(&mo);
	if (!rc) {
		for (size_t i = 0; i < env->ninputs && used < sizeof(name); i++)
			used += (size_t)snprintf(name + used, sizeof(name) - used, "%s%s",
						 i ? " + " : "", env->inputs[i]);
		const char *opath = env->path, *oname = env->name;

		env->path = path;
		env->name = name;
		rc = report_run(env);
		/* path is this function's: env does not keep it */
		env->path = opath;
		env->name = oname;
	}
	unlink(path);
	rmdir(dir);
	return rc;
}

static int cmd_print(int argc, char **argv)
{
	static const struct argp argp = {
		.options = print_options,
		.parser = parse_opt,
		.args_doc = "FILE",
		.doc = print_doc,
		.children = common_child,
	};
	struct report_opts env = { .format = &out_text, .hist = true };
	int rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return EXIT_USAGE;
	rc = redact_key(env.redact, env.redact_key);
	if (!rc)
		rc = run_inputs(&env);
	gtr_redactor_free(env.redact);   /* wipes the key */
	return rc;
}

static int cmd_stats(int argc, char **argv)
{
	static const struct argp argp = {
		.options = stats_options,
		.parser = parse_opt,
		.args_doc = "FILE",
		.doc = stats_doc,
		.children = common_child,
	};
	struct report_opts env = { .stats = true, .format = &out_text, .hist = true };

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return EXIT_USAGE;
	return run_inputs(&env);
}

struct info_env {
	const char *path;
	bool json;
};

static error_t info_parse(int key, char *arg, struct argp_state *state)
{
	struct info_env *env = state->input;

	switch (key) {
	case 'j': env->json = true; return 0;
	case ARGP_KEY_ARG:
		if (env->path)
			argp_error(state, "one trace file at a time (got '%s' and '%s')", env->path, arg);
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

static int cmd_info(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "json", 'j', 0, 0, "One JSON object (keys in spec/FORMAT.md)", 0 },
		{ 0 },
	};
	static const struct argp argp = {
		.options = opts,
		.parser = info_parse,
		.args_doc = "FILE",
		.doc = "Show what a gotrace trace file holds: format version, host, clocks, "
		       "binaries, probes, time range, event counts, losses, damage.\n"
		       "\nUSAGE: gotrace-report info [--json] FILE",
	};
	struct info_env env = { 0 };

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return EXIT_USAGE;
	return report_info(env.path, env.json, stdout);
}

/* The options of the redactor, as merge and redact take them. */
#define REDACT_OPTIONS \
	{ "redact", OPT_REDACT, "RULE", 0, \
	  "[FUNCTION:]TARGET[=hash|drop]: TARGET a value name glob (*.Password, " \
	  "goarg2), @strings, @host, @paths, @comm or @spec (repeatable)", 0 }, \
	{ "redact-key", OPT_REDACT_KEY, "FILE", 0, \
	  "Key the hash with FILE (32 bytes, or 64 hex digits), so that hashes " \
	  "match across files (default: a random key, used once)", 0 }

struct merge_env {
	struct merge_opts o;
	const char *inputs[REPORT_MAX_INPUTS];
	const char *redact_key;   /* redact: --redact-key FILE */
};

static error_t merge_parse(int key, char *arg, struct argp_state *state)
{
	struct merge_env *env = state->input;

	switch (key) {
	case 'w': env->o.output = arg; return 0;
	case OPT_REDACT: add_redact_rule(state, &env->o.redact, arg); return 0;
	case OPT_REDACT_KEY: env->redact_key = arg; return 0;
	case OPT_FORCE: env->o.flags |= GTR_W_FORCE; return 0;
	case 'q': env->o.quiet = true; return 0;
	case ARGP_KEY_ARG:
		if (env->o.ninputs == REPORT_MAX_INPUTS)
			argp_error(state, "too many trace files (at most %d)", REPORT_MAX_INPUTS);
		env->inputs[env->o.ninputs++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!env->o.output)
			argp_error(state, "no output; give one with -w OUT");
		check_trace_out(env->o.output, "-w", state);
		if (!env->o.ninputs)
			argp_error(state, "no trace file given");
		if (env->redact_key && !env->o.redact)
			argp_error(state, "--redact-key goes with --redact RULE");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/*
 * merge and redact: parses argv with `argp` (merge_parse or redact_parse),
 * keys the redactor if there are rules, and merges. Exit code of
 * report_merge(), or EXIT_USAGE.
 */
static int run_merge(const struct argp *argp, int argc, char **argv)
{
	struct merge_env env = { 0 };
	int rc;

	env.o.inputs = env.inputs;
	rc = argp_parse(argp, argc, argv, 0, NULL, &env) ? EXIT_USAGE : 0;
	if (!rc)
		rc = redact_key(env.o.redact, env.redact_key);
	if (!rc)
		rc = report_merge(&env.o);
	gtr_redactor_free(env.o.redact);   /* wipes the key */
	return rc;
}

static int cmd_merge(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "write", 'w', "OUT", 0, "Write the merged trace to OUT ('-': standard output)", 0 },
		REDACT_OPTIONS,
		{ "force", OPT_FORCE, 0, 0, "Overwrite OUT if it exists", 0 },
		{ "quiet", 'q', 0, 0, "No summary line", 0 },
		{ 0 },
	};
	static const struct argp argp = {
		.options = opts,
		.parser = merge_parse,
		.args_doc = "FILE...",
		.doc = "Merge recordings of several hosts, processes or recorders into one trace, "
		       "in time order: on the first file's clock, through each file's wall clock "
		       "unless they share one (same host, same boot). Probe and binary ids are "
		       "renumbered, and so are pids that two hosts share; every report of the "
		       "result shows the host when there is more than one.\n"
		       "With --redact, the merged trace is redacted as `gotrace-report redact` "
		       "writes it (spec/REDACT.md).\n"
		       "\nUSAGE: gotrace-report merge -w OUT [--redact RULE...] FILE...\n"
		       "(gotrace-report A.gtr B.gtr merges on the fly)",
	};

	return run_merge(&argp, argc, argv);
}

/* redact: merge's options, and the rules and key of the redactor. */
static error_t redact_parse(int key, char *arg, struct argp_state *state)
{
	struct merge_env *env = state->input;

	if (key == ARGP_KEY_END && !env->o.redact)
		argp_error(state, "no rule; give one with --redact RULE, e.g. --redact @strings");
	return merge_parse(key, arg, state);
}

/*
 * A redacted copy (spec/REDACT.md): a merge of the FILEs (one, usually)
 * whose writer sends every value and name through the redactor.
 */
static int cmd_redact(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{ "write", 'w', "OUT", 0, "Write the redacted trace to OUT ('-': standard output)", 0 },
		REDACT_OPTIONS,
		{ "force", OPT_FORCE, 0, 0, "Overwrite OUT if it exists", 0 },
		{ "quiet", 'q', 0, 0, "No summary line", 0 },
		{ 0 },
	};
	static const struct argp argp = {
		.options = opts,
		.parser = redact_parse,
		.args_doc = "FILE...",
		.doc = "Write a copy of a recording with values and names hashed (keyed BLAKE2b: "
		       "equal values stay equal) or dropped, by rule (spec/REDACT.md). The copy "
		       "records the rules, never the key. Several FILEs are merged.\n"
		       "\nUSAGE: gotrace-report redact -w OUT --redact RULE... [--redact-key FILE] FILE...\n"
		       "\nEXAMPLES:\n"
		       "  gotrace-report redact -w shared.gtr --redact @strings --redact @host app.gtr\n"
		       "  gotrace-report redact -w s.gtr --redact '*.Password=drop' --redact token app.gtr",
	};

	return run_merge(&argp, argc, argv);
}

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
	{ "stats", cmd_stats },
	{ "info", cmd_info },
	{ "diff", report_diff_cmd },
	{ "merge", cmd_merge },
	{ "redact", cmd_redact },
};

static bool is_command(const char *arg)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(arg, cmds[i].name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	argp_err_exit_status = EXIT_USAGE;
	/* messages start "gotrace-report:", however the program was run */
	if (argc > 0)
		argv[0] = (char *)PROG;
	program_invocation_name = program_invocation_short_name = (char *)PROG;
	if (argc > 1) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i].name)) {
				argv[1] = argv[0]; /* messages keep the program's name */
				return cmds[i].func(argc - 1, argv + 1);
			}
	}
	return cmd_print(argc, argv);
}
