// SPDX-License-Identifier: MIT
/*
 * gotrace-record: attach uprobes to functions of Go programs, capture their
 * arguments with the calling convention the binary uses, and write a .gtr
 * trace file (spec/FORMAT.md). This file is the command line only: options
 * into a struct record_opts, then --list (list.c) or a recording
 * (session.c).
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gtr.h"
#include "list.h"
#include "session.h"


const char *argp_program_version = "gotrace-record " GOTRACE_VERSION;
static const char doc[] =
	"Record calls of Go functions, with their arguments, to a trace file.\n"
	"\n"
	"USAGE: gotrace-record -o FILE [OPTIONS] PROBE... -- CMD [ARGS...]\n"
	"       gotrace-record -o FILE -p PID [-p PID...] [OPTIONS] PROBE...\n"
	"       gotrace-record -o FILE [OPTIONS] BINARY:PROBE...\n"
	"\n"
	"PROBE is [p:|r:][BINARY:]FUNCTION [\"FORMAT\" EXPR, ...] as in bcc's\n"
	"trace.py (spec/PROBES.md); FUNCTION is the full Go symbol or a glob;\n"
	"EXPR is goargN, goretN, retval, a parameter name or $ptr(EXPR, SIZE).\n"
	"Without DWARF, a signature gives names and types:\n"
	"'main.greet(s string, n int) \"%s\" s'.\n"
	"Without -p or a command, every process running BINARY is traced,\n"
	"including ones started later, until Ctrl-C. With a command or -p,\n"
	"the processes they start that run a probed binary are traced too\n"
	"(--no-inherit: not).\n"
	"\n"
	"EXAMPLES:\n"
	"  gotrace-record -o t.gtr 'main.add \"%d %d\" goarg1, goarg2' -- ./app\n"
	"                          # run ./app, record main.add with 2 arguments\n"
	"  gotrace-record -o t.gtr -p 1234 'net/http.(*conn).serve'\n"
	"                          # attach to PID 1234 until Ctrl-C\n"
	"  gotrace-record -o t.gtr '/usr/bin/caddy:net/http.*' -x '*.func*'\n"
	"                          # every caddy process, net/http functions\n"
	"  gotrace-record -o t.gtr -d 30 'main.lookup' 'r:main.lookup' -p 1234\n"
	"                          # entries and returns for 30 s\n"
	"  gotrace-record -o - 'main.*' -p 1234 | gotrace-report -\n"
	"                          # watch calls live\n"
	"  gotrace-report t.gtr    # print what was recorded\n";

enum {
	OPT_MAX_EVENTS = 1000, OPT_MAX_SIZE, OPT_LIST, OPT_JSON, OPT_DEBUGINFO,
	OPT_FLUSH, OPT_REDACT, OPT_REDACT_KEY, OPT_NO_INHERIT,
};

static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "Write the trace to FILE (required); '-' is "
	  "standard output, and a pipe or FIFO is streamed", 0 },
	{ "flush-interval", OPT_FLUSH, "SECONDS", 0,
	  "Write recorded events out at least every SECONDS (default 1)", 0 },
	{ "pid", 'p', "PID", 0, "Trace the running process PID (repeatable)", 0 },
	{ "no-inherit", OPT_NO_INHERIT, NULL, 0, "Trace only the command or "
	  "the -p processes, not the processes they start", 0 },
	{ "force", 'f', NULL, 0, "Overwrite FILE if it exists", 0 },
	{ "string-size", 's', "BYTES", 0,
	  "Capture at most BYTES of each string (default 64, max 512)", 0 },
	{ "stack", 'U', NULL, 0, "Record the user stack of each event", 0 },
	{ "exclude", 'x', "GLOB", 0, "Skip functions matching GLOB (repeatable)", 0 },
	{ "max-probes", 'm', "N", 0,
	  "Refuse to attach more than N probes (default 1000)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 1 },
	{ "max-events", OPT_MAX_EVENTS, "N", 0, "Stop after N events", 1 },
	{ "max-size", OPT_MAX_SIZE, "BYTES", 0,
	  "Stop when the file reaches BYTES (K, M, G suffixes)", 1 },
	{ "rotate-size", 'C', "BYTES", 0,
	  "Start a new file when one reaches BYTES: FILE, FILE1, FILE2...", 1 },
	{ "rotate-count", 'W', "COUNT", 0,
	  "With -C, keep at most COUNT files, reusing names in a ring", 1 },
	{ "debuginfo", OPT_DEBUGINFO, "FILE", 0,
	  "DWARF of the (first) binary from this separate debug file", 0 },
	{ "redact", OPT_REDACT, "RULE", 0,
	  "Hash or drop values and names before they are written: "
	  "[FUNCTION:]TARGET[=hash|drop], TARGET a value name glob (*.Password), "
	  "@strings, @host, @paths, @comm or @spec (repeatable; spec/REDACT.md)", 1 },
	{ "redact-key", OPT_REDACT_KEY, "FILE", 0,
	  "Key the --redact hash with FILE (32 bytes, or 64 hex digits), so that "
	  "hashes match across recordings (default: a random key per recording)", 1 },
	{ "list", OPT_LIST, NULL, 0,
	  "List what gotrace knows of BINARY: gotrace-record --list BINARY [GLOB], "
	  "or of a running process: --list -p PID [GLOB]", 3 },
	{ "json", OPT_JSON, NULL, 0, "With --list: one JSON document", 3 },
	{ "rate-limit", 'r', "N", 0,
	  "Keep at most N events per second of each probe; count the rest", 1 },
	{ "buffer-size", 'b', "BYTES", 0,
	  "Ring buffer size (power of two, default 16M; K and M suffixes)", 2 },
	{ "quiet", 'q', NULL, 0, "No status line or summary; errors only", 2 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's log (twice: debug)", 2 },
	{},
};

static long parse_num(const char *arg, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max) {
		fprintf(stderr, "gotrace-record: invalid %s '%s' (expected a "
			"number from %ld to %ld)\n", what, arg, min, max);
		exit(2);
	}
	return v;
}

/* Parses a byte count with an optional K, M or G suffix (powers of 1024). */
static uint64_t parse_bytes(const char *arg, const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (errno || end == arg || *end || !v || arg[0] == '-') {
		fprintf(stderr, "gotrace-record: invalid %s '%s' (expected "
			"bytes, e.g. 100M)\n", what, arg);
		exit(2);
	}
	return v;
}

/* Parses a power-of-two byte count from 4K to 1024M. */
static unsigned parse_ringbuf(const char *arg)
{
	uint64_t v = parse_bytes(arg, "buffer size");

	if (v < 4096 || v > (1ull << 30) || (v & (v - 1))) {
		fprintf(stderr, "gotrace-record: invalid buffer size '%s' "
			"(expected a power of two from 4K to 1024M)\n", arg);
		exit(2);
	}
	return v;
}

/* Parses seconds, fractions allowed ("0.5", "30"). */
static uint64_t parse_seconds(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e9) {
		fprintf(stderr, "gotrace-record: invalid duration '%s' "
			"(expected seconds, e.g. 30 or 0.5)\n", arg);
		exit(2);
	}
	return (uint64_t)(v * 1e9);
}

/* Adds a --redact rule (argp's usage error when it is not one). */
static void add_redact_rule(struct argp_state *state, struct record_opts *o,
			    const char *rule)
{
	char err[512];

	if (!o->redact && !(o->redact = gtr_redactor_new())) {
		fprintf(stderr, "gotrace-record: --redact: cannot start libsodium "
			"(out of memory?)\n");
		exit(1);
	}
	if (gtr_redactor_add_rule(o->redact, rule, err, sizeof(err)))
		argp_error(state, "--redact: %s", err);
}

/* Keys the --redact hash with the file of --redact-key, or exits 2. */
static void read_redact_key(struct record_opts *o)
{
	char err[512];

	if (gtr_redactor_key_file(o->redact, o->redact_key, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: --redact-key: %s\n", err);
		exit(2);
	}
}

/* Adds a -p PID (one given twice is traced once). */
static void add_pid(struct argp_state *state, struct record_opts *o, const char *arg)
{
	const pid_t pid = parse_num(arg, "PID", 1, INT_MAX);

	for (int i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return;
	if (o->npids >= SESSION_MAX_PIDS)
		argp_error(state, "too many -p (at most %d)", SESSION_MAX_PIDS);
	o->pids[o->npids++] = pid;
}

/* After the last argument: the combinations that make no sense. */
static void check_end(struct argp_state *state, struct record_opts *o)
{
	if (o->list) {
		if (o->npids > 1 || (o->npids && o->nspecs > 1))
			argp_error(state, "--list -p takes one PID [GLOB]");
		else if (!o->npids && (o->nspecs < 1 || o->nspecs > 2))
			argp_error(state, "--list takes BINARY [GLOB] or -p PID [GLOB]");
		return;
	}
	if (o->json)
		argp_error(state, "--json goes with --list");
	if (!o->output) {
		argp_error(state, "no output file; give one with -o FILE");
		return;  /* not reached: argp_error() exits (not noreturn) */
	}
	if (!o->nspecs)
		argp_error(state, "no probe given; name a function, e.g. 'main.add'");
	if (o->npids && o->cmd)
		argp_error(state, "give either -p PID or -- CMD, not both");
	if (o->redact_key && !o->redact)
		argp_error(state, "--redact-key goes with --redact RULE");
	if (o->redact && o->redact_key)
		read_redact_key(o);
	if (o->rotate_count && !o->rotate_size)
		argp_error(state, "-W COUNT needs -C SIZE");
	if (o->rotate_size && !strcmp(o->output, "-"))
		argp_error(state, "-C SIZE writes a series of files; it cannot go with -o -");
	if (!strcmp(o->output, "-") && isatty(STDOUT_FILENO))
		argp_error(state, "-o -: standard output is a terminal and a trace is binary data; "
			   "pipe it into 'gotrace-report -' or give a file with -o FILE");
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct record_opts *o = state->input;

	switch (key) {
	case 'o': o->output = arg; break;
	case 'p': add_pid(state, o, arg); break;
	case 'f': o->flags |= GTR_W_FORCE; break;
	case 's': o->str_max = parse_num(arg, "string size", 0, RECORD_STR_MAX); break;
	case 'q': o->quiet = 1; break;
	case 'U': o->stack = 1; break;
	case 'b': o->ringbuf = parse_ringbuf(arg); break;
	case 'x':
		if (o->nexcludes >= SESSION_MAX_EXCLUDES)
			argp_error(state, "too many --exclude (at most 64)");
		o->excludes[o->nexcludes++] = arg;
		break;
	case 'm': o->max_probes = parse_num(arg, "probe count", 1, 1000000); break;
	case 'd': o->duration_ns = parse_seconds(arg); break;
	case OPT_MAX_EVENTS:
		o->max_events = parse_num(arg, "event count", 1, LONG_MAX);
		break;
	case OPT_MAX_SIZE: o->max_size = parse_bytes(arg, "size"); break;
	case 'C': o->rotate_size = parse_bytes(arg, "rotation size"); break;
	case 'W': o->rotate_count = parse_num(arg, "file count", 1, 100000); break;
	case 'v': o->verbose++; break;
	case 'r': o->rate = parse_num(arg, "rate", 1, LONG_MAX); break;
	case OPT_LIST: o->list = 1; break;
	case OPT_JSON: o->json = 1; break;
	case OPT_DEBUGINFO: o->debuginfo = arg; break;
	case OPT_FLUSH: o->flush_ns = parse_seconds(arg); break;
	case OPT_NO_INHERIT: o->no_inherit = 1; break;
	case OPT_REDACT: add_redact_rule(state, o, arg); break;
	case OPT_REDACT_KEY: o->redact_key = arg; break;
	case ARGP_KEY_ARG:
		o->specs[o->nspecs++] = arg;
		break;
	case ARGP_KEY_END: check_end(state, o); break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Whether `what` is a FILE:LINE probe with its variables,
 * "main.go:39(x,xs)", which --list plans as a probe: no function glob
 * has digits between a ':' and a '('. */
static bool line_probe(const char *what)
{
	for (const char *c = strchr(what, ':'); c; c = strchr(c + 1, ':')) {
		const size_t d = strspn(c + 1, "0123456789");

		if (d && c[1 + d] == '(')
			return true;
	}
	return false;
}

/*
 * --list: of BINARY, or of the executable of -p PID as it runs it
 * (/proc/PID/exe); a GLOB holding a blank or a quote, starting "p:"
 * or "r:", or a line with its variables, is a probe, listed as a
 * recording would plan it.
 */
static int list(const struct record_opts *o)
{
	const char *bin = o->specs[0], *what = o->nspecs > 1 ? o->specs[1] : NULL;
	char exe[64];

	if (o->npids) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)o->pids[0]);
		if (access(exe, F_OK)) {   /* as a recording says it */
			fprintf(stderr, "gotrace-record: cannot list PID %d: %s\n",
				(int)o->pids[0], errno == ENOENT ? "no such process" :
				strerror(errno));
			return 1;
		}
		bin = exe;
		what = o->nspecs ? o->specs[0] : NULL;
	}
	if (what && (strpbrk(what, " \"") || !strncmp(what, "p:", 2) ||
		     !strncmp(what, "r:", 2) || line_probe(what))) {
		if (o->json) {
			fprintf(stderr, "gotrace-record: --json lists functions; "
				"a probe is listed as text (drop --json)\n");
			return 2;
		}
		return gotrace_list_probe(bin, o->debuginfo, what, stdout);
	}
	return gotrace_list(bin, o->debuginfo, what, o->json, stdout);
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options, .parser = parse_opt,
		.args_doc = "PROBE... [-- CMD [ARGS...]]", .doc = doc,
	};
	struct record_opts o = {
		.str_max = 64, .max_probes = 1000, .ringbuf = 16u << 20,
	};
	int i, rargc = argc;

	/* Installed first: a signal at any point ends with a complete file. */
	session_signals();

	/* Everything after the first "--" is the command to run. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			rargc = i;
			o.cmd = i + 1 < argc ? &argv[i + 1] : NULL;
			if (!o.cmd) {
				fprintf(stderr, "gotrace-record: nothing after '--'; give the command to run\n");
				return 2;
			}
			break;
		}
	}
	argv[rargc] = NULL;
	argp_err_exit_status = 2;   /* usage errors: 2, as documented */
	o.specs = calloc(argc + 1, sizeof(*o.specs));
	if (!o.specs)
		return 1;
	if (argp_parse(&argp, rargc, argv, 0, NULL, &o))
		return 2;
	if (o.list)
		return list(&o);
	i = session_run(&o);
	gtr_redactor_free(o.redact);   /* wipes the key */
	return i;
}
