/* SPDX-License-Identifier: MIT */
/*
 * gotrace-report: reads a .gtr trace file through libgtr (format/gtr.h),
 * pairs returns with entries (report/pair.h), filters events
 * (report/filter.h) and prints them (report/output.h, report/folded.h) or
 * summarises them (report/stats.h). One streaming pass; memory does not
 * grow with the file.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "filter.h"
#include "folded.h"
#include "gtr.h"
#include "info.h"
#include "output.h"
#include "pair.h"
#include "stats.h"
#include "timeparse.h"

#define PROG "gotrace-report"
#define FLUSH_AT (64 * 1024)     /* bytes of formatted output per write */
#define MAX_FILTERS 64
#define PROGRESS_MIN_BYTES (32u << 20) /* files smaller than this get no bar */

enum { EXIT_READ = 1, EXIT_USAGE = 2 };

const char *argp_program_version = "gotrace-report " GOTRACE_VERSION;

struct env {
	bool stats;                /* the stats command */
	const char *path;          /* "-": standard input */
	const char *name;          /* the path, as messages name it */
	const char *filters[MAX_FILTERS];
	int nfilters;
	enum output_format format;
	bool calls, time_rel, time_wall, count, hist;
	bool strict;               /* a filter evaluation error fails the run */
	int progress;              /* -1 never, 0 on a terminal, 1 always */
	const char *since, *until, *by;
	uint64_t limit;            /* 0: none */
	struct pair_limits lim;
};

enum {
	OPT_FORMAT = 0x100, OPT_SINCE, OPT_UNTIL, OPT_LIMIT, OPT_CALLS, OPT_COUNT,
	OPT_BY, OPT_NO_HIST, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_MAX_DEPTH,
	OPT_MAX_GOROUTINES, OPT_KEEP_STR, OPT_STRICT,
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
	{ "limit", OPT_LIMIT, "N", 0, "Stop after N output records (events, calls)", 0 },
	{ "progress", OPT_PROGRESS, 0, 0, "Show a progress bar on stderr even when it is not a terminal", 0 },
	{ "no-progress", OPT_NO_PROGRESS, 0, 0, "Never show a progress bar", 0 },
	{ "max-depth", OPT_MAX_DEPTH, "N", 0, "Open calls tracked per goroutine (default 1024)", 0 },
	{ "max-goroutines", OPT_MAX_GOROUTINES, "N", 0, "Goroutines with open calls tracked (default 65536)", 0 },
	{ "strict", OPT_STRICT, 0, 0,
	  "Exit 2 when a filter had no answer for some event (a regular expression hit a PCRE2 limit)", 0 },
	{ "keep-string", OPT_KEEP_STR, "BYTES", 0,
	  "Bytes of each string kept from an entry until its return (default 256)", 0 },
	{ 0 },
};

static const struct argp_option print_options[] = {
	{ "format", OPT_FORMAT, "FMT", 0,
	  "Output format: text (default), jsonl, csv, chrome, folded", 0 },
	{ "calls", OPT_CALLS, 0, 0, "One line per call: entry, return and latency (text, jsonl)", 0 },
	{ 0, 't', 0, 0, "Text: add a TIME column, seconds since the first event", 0 },
	{ 0, 'T', 0, 0, "Text: add a TIME column, wall-clock HH:MM:SS.us (local time)", 0 },
	{ "count", OPT_COUNT, 0, 0, "Print only the number of matching events", 0 },
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
	{ 0 },
};

static const char print_doc[] =
	"Print the events of a gotrace trace file.\n"
	"\n"
	"USAGE: gotrace-report [print] [OPTION...] FILE  events or calls\n"
	"       gotrace-report stats [OPTION...] FILE    latency per function\n"
	"       gotrace-report info [--json] FILE        what the file holds\n"
	"(gotrace-report stats --help: the options of stats)\n"
	"\n"
	"EXAMPLES:\n"
	"  gotrace-report app.gtr                      # every event, trace.py style\n"
	"  gotrace-report -t -f 'goarg1 == 42' app.gtr # first argument 42, with time\n"
	"  gotrace-report -f 'glob(func, \"net/http.*\") && latency > 10ms' app.gtr\n"
	"                                              # slow returns of net/http\n"
	"  gotrace-report --calls app.gtr              # a line per call, latency\n"
	"  gotrace-report --format jsonl app.gtr | jq .args  # JSON Lines for jq\n"
	"  gotrace-report --format chrome app.gtr > t.json   # for ui.perfetto.dev\n"
	"  gotrace-report --format folded app.gtr | flamegraph.pl > f.svg\n"
	"  gotrace-report stats --by goarg1 app.gtr    # latency per first argument\n"
	"  gotrace-report --since +5s --until +6s app.gtr    # one second of it\n"
	"  gotrace-report info app.gtr                 # host, probes, counts, losses\n";

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
	uint64_t v;

	if (parse_u64(arg, &v) || v > max)
		argp_error(state, "invalid %s '%s': expected an integer from 0 to %llu", opt, arg,
			   (unsigned long long)max);
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct env *env = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		/* the common options' child parser works on the same env */
		if (state->root_argp->children && state->child_inputs)
			state->child_inputs[0] = env;
		return 0;
	case 'f':
		if (env->nfilters == MAX_FILTERS)
			argp_error(state, "too many --filter options (at most %d; join them with &&)",
				   MAX_FILTERS);
		env->filters[env->nfilters++] = arg;
		return 0;
	case OPT_BY:
	case OPT_NO_HIST:
		if (!env->stats)
			argp_error(state, "%s belongs to 'gotrace-report stats' (gotrace-report stats %s FILE)",
				   key == OPT_BY ? "--by" : "--no-hist",
				   key == OPT_BY ? "--by FIELD" : "--no-hist");
		if (key == OPT_BY)
			env->by = arg;
		else
			env->hist = false;
		return 0;
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
		break;
	default:
		break;
	}

	switch (key) {
	case OPT_FORMAT:
		if (output_format_parse(arg, &env->format))
			argp_error(state, "unknown output format '%s' (known: text, jsonl, csv, chrome, folded)", arg);
		return 0;
	case OPT_SINCE: env->since = arg; return 0;
	case OPT_UNTIL: env->until = arg; return 0;
	case OPT_LIMIT:
		if (parse_u64(arg, &env->limit) || !env->limit)
			argp_error(state, "invalid --limit '%s': expected an integer from 1 to %llu (leave --limit out for no limit)",
				   arg, (unsigned long long)UINT64_MAX);
		return 0;
	case OPT_CALLS: env->calls = true; return 0;
	case OPT_COUNT: env->count = true; return 0;
	case 't': env->time_rel = true; return 0;
	case 'T': env->time_wall = true; return 0;
	case OPT_PROGRESS: env->progress = 1; return 0;
	case OPT_NO_PROGRESS: env->progress = -1; return 0;
	case OPT_MAX_DEPTH:
		env->lim.max_depth = (uint32_t)parse_num(state, "--max-depth", arg, 1u << 20);
		return 0;
	case OPT_MAX_GOROUTINES:
		env->lim.max_goroutines = (uint32_t)parse_num(state, "--max-goroutines", arg, 1u << 24);
		return 0;
	case OPT_KEEP_STR:
		env->lim.keep_str = (uint32_t)parse_num(state, "--keep-string", arg, GTR_MAX_STRING);
		return 0;
	case OPT_STRICT:
		env->strict = true;
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
		env->name = strcmp(env->path, "-") ? env->path : "standard input";
		if (env->calls && env->format != OUTPUT_TEXT && env->format != OUTPUT_JSONL)
			argp_error(state, "--calls works with --format text or jsonl (chrome shows calls already)");
		if ((env->time_rel || env->time_wall) && env->format != OUTPUT_TEXT)
			argp_error(state, "-t and -T add columns to --format text only");
		if (env->limit && (env->stats || env->format == OUTPUT_FOLDED))
			argp_error(state, "--limit counts printed events and calls; %s summarises every event "
				   "that matches: narrow it with --since/--until or -f instead",
				   env->stats ? "stats" : "--format folded");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* ------------------------------------------------------------ progress */

/* Bytes this process has read so far (/proc/self/io rchar), 0 unknown. */
static uint64_t bytes_read(void)
{
	char line[128];
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/io", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v;
}

struct progress {
	bool on;
	uint64_t size, base;       /* file bytes; bytes read before opening it */
	struct timespec last;
	bool drawn;
};

static void progress_draw(struct progress *p, bool force, bool done_all)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	const int64_t ms = (now.tv_sec - p->last.tv_sec) * 1000 +
			   (now.tv_nsec - p->last.tv_nsec) / 1000000;
	if (!force && ms < 200)
		return;
	p->last = now;
	uint64_t done = bytes_read();
	done = done > p->base ? done - p->base : 0;
	if (done > p->size || done_all)
		done = p->size;
	const int pct = (int)(done * 100 / p->size);
	const int w = 40, k = pct * w / 100;
	fprintf(stderr, "\r" PROG ": [%.*s%*s] %3d%% %" PRIu64 "/%" PRIu64 " MiB", k,
		"########################################", w - k, "", pct, done >> 20,
		p->size >> 20);
	p->drawn = true;
}

static void progress_clear(struct progress *p)
{
	if (p->drawn)
		fprintf(stderr, "\r%*s\r", 79, "");
	p->drawn = false;
}

/* ------------------------------------------------------------ the pass */

static bool write_out(struct buf *b)
{
	const bool ok = !b->len || fwrite(b->data, 1, b->len, stdout) == b->len;

	buf_reset(b);
	return ok;
}

struct run {
	struct env *env;
	struct gtr_reader *r;
	struct filter *filters[MAX_FILTERS];
	struct output *out;
	struct folded *folded;
	struct stats *stats;
	struct filter *by;
	struct pairer *pair;
	struct buf buf;
	uint64_t t0, last_ts;
	bool have_t0;
	int64_t since, until;      /* monotonic ns; INT64_MIN / INT64_MAX none */
	struct rtime since_t, until_t;
	uint64_t records, matched;
	bool stop;
	bool werr;                 /* output could not be written */
	bool lean;                 /* --count of events: no names, no pairing */
	unsigned uses;             /* FILTER_USES_* of all filters */
	struct exit_rec *exits;    /* process exits, by pid then time */
	uint32_t nexits;
	uint64_t open_end, exited_end; /* calls open at the end: still open, exited */
	struct buf tmp;            /* scratch */
};

struct exit_rec {
	uint32_t pid;
	uint64_t ts_ns;
};

static inline bool keep(struct run *run, const struct report_event *e)
{
	/* the call view dates a call by its entry, and so does the window */
	const int64_t ts = (int64_t)(run->env->calls && e->entry ? e->entry->ts_ns
							 : e->ev->ts_ns);

	if (ts < run->since || ts > run->until)
		return false;
	for (int k = 0; k < run->env->nfilters; k++)
		if (!filter_match(run->filters[k], e))
			return false;
	return true;
}

/* Shows a call that did not return, in the views that show calls. */
static void put_unfinished(struct run *run, const struct report_event *oe, uint64_t end_ns,
			   const char *status)
{
	struct report_event e = *oe;
	uint64_t real;

	if (run->stop || (run->env->count && !run->env->calls) || run->stats || run->folded)
		return;
	e.t0_ns = run->t0;
	if (run->env->time_wall && !gtr_reader_realtime(run->r, e.ev->ts_ns, &real))
		e.real_ns = real;
	if (!keep(run, &e))
		return;
	if (run->env->count) {
		/* --calls --count: the calls the call view would show */
		run->matched++;
		if (run->env->limit && run->matched >= run->env->limit)
			run->stop = true;
		return;
	}
	run->records += (uint64_t)output_put_open(run->out, &run->buf, &e, end_ns, status);
	if (run->env->limit && run->records >= run->env->limit)
		run->stop = true;
}

/* pair_foreach_unwound(): a call closed over by an outer return, or the
 * entry of a return shown alone because of losses. */
static void put_unwound(void *arg, const struct report_event *e, uint64_t end_ns)
{
	put_unfinished(arg, e, end_ns, e->lost ? "lost" : "unwound");
}

static int exit_cmp(const void *a, const void *b)
{
	const struct exit_rec *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

/* The process exits the file records, sorted, for exit_after(). */
static void load_exits(struct run *run)
{
	const uint32_t n = gtr_reader_nprocesses(run->r);

	run->exits = calloc(n + 1, sizeof(*run->exits));
	if (!run->exits)
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct gtr_process *p = gtr_reader_process_at(run->r, i);
		if (p->exited)
			run->exits[run->nexits++] = (struct exit_rec){ p->pid, p->ts_ns };
	}
	qsort(run->exits, run->nexits, sizeof(*run->exits), exit_cmp);
}

/* The first recorded exit of process `pid` at or after `ts`; 0 when none. */
static uint64_t exit_after(const struct run *run, uint32_t pid, uint64_t ts)
{
	uint32_t lo = 0, hi = run->nexits;

	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		const struct exit_rec *x = &run->exits[mid];
		if (x->pid < pid || (x->pid == pid && x->ts_ns < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < run->nexits && run->exits[lo].pid == pid ? run->exits[lo].ts_ns : 0;
}

/* pair_foreach_open() at the end: a call that never returned. */
static void put_open(void *arg, const struct report_event *e, uint64_t end_ns)
{
	struct run *run = arg;
	const uint64_t exit_ns = exit_after(run, e->ev->pid, e->ev->ts_ns);

	(void)end_ns;
	if (e->lost)    /* its return may be among lost events */
		put_unfinished(run, e, e->ev->ts_ns, "lost");
	else if (exit_ns) {
		run->exited_end++;
		put_unfinished(run, e, exit_ns, "exited");
	} else {
		run->open_end++;
		put_unfinished(run, e, run->last_ts, "open");
	}
}

/* output_opts.symbolize: names recorded stack addresses. */
static const char *symbolize(void *ctx, uint32_t pid, uint64_t addr, uint64_t *off)
{
	return gtr_reader_symbolize(ctx, pid, addr, off);
}

/* Resolves --since/--until once the first event (the start) is known. */
static int resolve_window(struct run *run)
{
	const struct gtr_host *h = gtr_reader_host(run->r);
	int64_t v;

	if (run->env->since) {
		if (!rtime_to_mono(&run->since_t, h, run->t0, &v)) {
			fprintf(stderr, PROG ": --since %s: %s has no wall-clock anchor; use +DURATION\n",
				run->env->since, run->env->name);
			return -1;
		}
		run->since = v;
	}
	if (run->env->until) {
		if (!rtime_to_mono(&run->until_t, h, run->t0, &v)) {
			fprintf(stderr, PROG ": --until %s: %s has no wall-clock anchor; use +DURATION\n",
				run->env->until, run->env->name);
			return -1;
		}
		run->until = v;
	}
	if (run->env->since && run->env->until && run->since > run->until) {
		fprintf(stderr, PROG ": --since %s is later than --until %s: no event can match\n",
			run->env->since, run->env->until);
		return -1;
	}
	return 0;
}

static const char *binary_path(struct gtr_reader *r, const struct gtr_probe *p)
{
	if (!p)
		return NULL;
	const uint32_t n = gtr_reader_nbinaries(r);
	for (uint32_t i = 0; i < n; i++) {
		const struct gtr_binary *b = gtr_reader_binary_at(r, i);
		if (b->id == p->binary_id)
			return b->path;
	}
	return NULL;
}

static int refresh_probes(struct run *run, const struct gtr_probe ***probes, uint32_t *np)
{
	const uint32_t n = gtr_reader_nprobes(run->r);
	const struct gtr_probe **p = realloc(*probes, (n + 1) * sizeof(*p));

	if (!p) {
		fprintf(stderr, PROG ": out of memory (%" PRIu32 " probes)\n", n);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		p[i] = gtr_reader_probe_at(run->r, i);
	*probes = p;
	*np = n;
	pair_probes(run->pair, p, n);
	return 0;
}

/*
 * Everything done with one event once pairing has released it (in file
 * order, with its final pairing), or at once when it is not paired. false
 * when output cannot be written.
 */
static bool emit(struct run *run, struct report_event *e)
{
	const struct env *env = run->env;
	const struct gtr_event *ev = e->ev;
	uint64_t real;

	e->t0_ns = run->t0;
	if (!run->lean || (run->uses & FILTER_USES_BINARY))
		e->binary = binary_path(run->r, e->probe);
	if (env->time_wall && !gtr_reader_realtime(run->r, ev->ts_ns, &real))
		e->real_ns = real;
	/* calls this return closed over: a recovered panic unwound them (or
	 * it is shown alone as lost: its entry, alone too) */
	if (ev->kind == GTR_KIND_RETURN)
		pair_foreach_unwound(run->pair, put_unwound, run);
	if (run->stop)
		return true;
	const bool kept = keep(run, e);
	/* every paired return, kept or not: its time is its caller's
	 * callee time */
	if (run->folded)
		folded_call(run->folded, run->pair, run->out, e, kept);
	if (!kept)
		return true;
	/* --calls --count counts calls: an entry that will have a
	 * return (or end unfinished) is counted then */
	if (env->count && env->calls && ev->kind == GTR_KIND_ENTRY && e->tracked)
		return true;
	run->matched++;
	if (env->count) {
		if (env->limit && run->matched >= env->limit)
			run->stop = true;
	} else if (run->stats) {
		stats_event(run->stats, e);
	} else if (!run->folded) {	/* folded: folded_call() above */
		run->records += (uint64_t)output_put(run->out, &run->buf, e);
		if (env->limit && run->records >= env->limit)
			run->stop = true;
	}
	if (run->buf.len >= FLUSH_AT && !write_out(&run->buf)) {
		run->werr = true;
		return false;
	}
	return true;
}

/* Emits what pairing can release now. false when output cannot be written. */
static bool drain(struct run *run)
{
	struct report_event e;

	while (!run->stop && pair_next(run->pair, &e))
		if (!emit(run, &e))
			return false;
	return true;
}

/*
 * Whether the file is known to hold no drop record: a regular file whose
 * summary (read from its end by a second reader) counts no lost and no
 * suppressed event. Pairing then need not hold events for drop records.
 */
static bool file_lossless(const struct env *env)
{
	struct stat st;
	char err[256];
	bool none = false;

	if (!strcmp(env->path, "-") || stat(env->path, &st) || !S_ISREG(st.st_mode))
		return false;
	struct gtr_reader *r = gtr_reader_open(env->path, err, sizeof(err));
	if (!r)
		return false;
	if (!gtr_reader_seek_ts(r, 0)) {
		const struct gtr_summary *s = gtr_reader_summary(r);
		none = s->present && !s->drops && !s->suppressed;
	}
	gtr_reader_close(r);
	return none;
}

static int run_pass(struct env *env)
{
	struct run run = { .env = env, .since = INT64_MIN, .until = INT64_MAX };
	struct filter_error ferr;
	const struct gtr_probe **probes = NULL;
	uint32_t np = 0, last_id = 0;
	bool have_last = false;     /* last_id/last_probe hold a lookup */
	const struct gtr_probe *last_probe = NULL;
	static struct gtr_event ev;
	struct gtr_drop drop;
	struct progress prog = { 0 };
	uint64_t lost = 0, suppressed = 0, nevents = 0;
	unsigned uses = 0;          /* FILTER_USES_* of all filters */
	bool lean = false, any_return = false;
	char err[512];
	int ret = EXIT_USAGE;

	for (int i = 0; i < env->nfilters; i++) {
		run.filters[i] = filter_compile(env->filters[i], &ferr);
		if (!run.filters[i]) {
			filter_error_print(stderr, PROG ": ", env->filters[i], &ferr);
			goto out;
		}
	}
	if (env->by) {
		run.by = filter_compile_field(env->by, &ferr);
		if (!run.by) {
			filter_error_print_as(stderr, PROG ": ", "--by field", env->by, &ferr);
			goto out;
		}
	}
	if (env->since && rtime_parse(env->since, &run.since_t, err, sizeof(err))) {
		fprintf(stderr, PROG ": bad --since '%s': %s\n", env->since, err);
		goto out;
	}
	if (env->until && rtime_parse(env->until, &run.until_t, err, sizeof(err))) {
		fprintf(stderr, PROG ": bad --until '%s': %s\n", env->until, err);
		goto out;
	}
	/* times of one kind compare now; mixed kinds once the start is known */
	if (env->since && env->until && run.since_t.kind == run.until_t.kind &&
	    run.since_t.ns > run.until_t.ns) {
		fprintf(stderr, PROG ": --since %s is later than --until %s: no event can match\n",
			env->since, env->until);
		goto out;
	}

	ret = EXIT_READ;
	prog.base = bytes_read();
	run.r = gtr_reader_open(env->path, err, sizeof(err));
	if (!run.r) {
		fprintf(stderr, PROG ": %s\n", err);
		goto out;
	}
	if (gtr_reader_preload(run.r) < 0) {
		fprintf(stderr, PROG ": %s\n", gtr_reader_error(run.r));
		goto out;
	}
	/* entries of paired functions show nothing in the call view, Chrome
	 * and folded, and stats and counts need no order: they need not wait
	 * behind the returns pairing holds */
	struct pair_limits lim = env->lim;
	lim.unordered = env->stats || env->calls || env->count || env->format == OUTPUT_CHROME ||
			env->format == OUTPUT_FOLDED;
	lim.lossless = file_lossless(env);
	run.pair = pair_new(&lim);
	if (refresh_probes(&run, &probes, &np))
		goto out;

	/* type-check the filters against the probes described up front */
	ret = EXIT_USAGE;
	for (int i = 0; i < env->nfilters; i++) {
		if (filter_check(run.filters[i], probes, np, stderr, &ferr) ||
		    filter_set_clock(run.filters[i], gtr_reader_host(run.r), &ferr)) {
			filter_error_print(stderr, PROG ": ", env->filters[i], &ferr);
			goto out;
		}
	}
	if (run.by && filter_check(run.by, probes, np, stderr, &ferr)) {
		filter_error_print_as(stderr, PROG ": ", "--by field", env->by, &ferr);
		goto out;
	}
	if (env->time_wall && !gtr_reader_host(run.r)->start_realtime_ns) {
		fprintf(stderr, PROG ": -T: %s has no wall-clock anchor (host start_realtime_ns); use -t\n",
			env->name);
		goto out;
	}
	ret = EXIT_READ;

	uint32_t maxvals = 1;
	for (uint32_t i = 0; i < np; i++)
		if (probes[i]->nargs > maxvals)
			maxvals = probes[i]->nargs;
	const struct output_opts oo = {
		.format = env->format, .calls = env->calls, .time_rel = env->time_rel,
		.time_wall = env->time_wall, .csv_values = maxvals,
		.symbolize = symbolize, .sym_ctx = run.r,
	};
	/* --count needs neither names nor pairing unless a filter reads
	 * them (return events read their entry's arguments). */
	for (int i = 0; i < env->nfilters; i++)
		uses |= filter_uses(run.filters[i]);
	for (uint32_t i = 0; i < np; i++)
		any_return |= probes[i]->kind == GTR_KIND_RETURN;
	lean = env->count && !env->stats && !env->calls;
	run.lean = lean;
	run.uses = uses;
	if (env->stats)
		run.stats = stats_new(run.by, env->by, 0);
	else if (env->format == OUTPUT_FOLDED)
		run.folded = folded_new(0);
	run.out = output_new(&oo);
	if (!env->stats && !env->count)
		output_begin(run.out, &run.buf);

	if (env->progress >= 0 && (env->progress > 0 || isatty(2))) {
		struct stat st;
		if (strcmp(env->path, "-") && !stat(env->path, &st) && (env->progress > 0 || (uint64_t)st.st_size >= PROGRESS_MIN_BYTES) &&
		    st.st_size > 0) {
			prog.on = true;
			prog.size = (uint64_t)st.st_size;
		}
	}

	while (!run.stop) {
		const int item = gtr_reader_next(run.r, &ev, &drop);
		if (item < 0) {
			progress_clear(&prog);
			write_out(&run.buf);
			fflush(stdout);
			const char *msg = gtr_reader_error(run.r);
			fprintf(stderr, PROG ": %s: %s\n", env->name,
				msg && msg[0] ? msg : strerror(-item));
			goto out;
		}
		if (item == GTR_ITEM_END)
			break;
		if (item == GTR_ITEM_DROP) {
			if (drop.reason == GTR_DROP_RATE)
				suppressed = gtr_add_sat(suppressed, drop.count);
			else
				lost = gtr_add_sat(lost, drop.count);
			/* calls held for it may now be decided */
			pair_drop(run.pair, &drop);
			if (!drain(&run))
				break;
			continue;
		}
		if (item != GTR_ITEM_EVENT)
			continue;
		if (gtr_reader_nprobes(run.r) != np) {
			if (refresh_probes(&run, &probes, &np))
				goto out;
			have_last = false;
		}
		if (!have_last || ev.probe_id != last_id) {
			/* probes are never redefined: only a new one changes this */
			last_probe = gtr_reader_probe(run.r, ev.probe_id);
			last_id = ev.probe_id;
			have_last = true;
		}
		if (!run.have_t0) {
			run.have_t0 = true;
			run.t0 = ev.ts_ns;
			if (resolve_window(&run)) {
				ret = EXIT_USAGE;
				goto out;
			}
		}
		if (ev.ts_ns > run.last_ts)
			run.last_ts = ev.ts_ns;
		nevents++;
		struct report_event e = {
			.ev = &ev,
			.probe = last_probe,
			.comm = lean && !(uses & FILTER_USES_COMM) ? ""
				: gtr_reader_comm(run.r, ev.pid, ev.tid),
			.t0_ns = run.t0,
		};
		/* pairing holds events until the drop records that may
		 * concern them are read, and releases them in file order */
		if (!lean || (uses & FILTER_USES_LATENCY) ||
		    ((uses & FILTER_USES_VALUES) && ev.kind == GTR_KIND_RETURN) ||
		    (uses & FILTER_USES_VALUES && any_return)) {
			const bool now = pair_push(run.pair, &e);
			if (!drain(&run) || (now && !emit(&run, &e)))
				break;
		} else if (!emit(&run, &e)) {
			break;
		}
		if (run.stop)
			break;
		if (prog.on && !(nevents & 0xffff))
			progress_draw(&prog, false, false);
	}
	if (!run.stop && !run.werr) {
		/* the end: every loss is known, the held events go out */
		pair_finish(run.pair);
		drain(&run);
	}
	if (prog.on && !run.stop)
		progress_draw(&prog, true, true);
	progress_clear(&prog);

	/* calls that never returned: in a process that exited, or still open */
	const bool at_end = !run.stop;
	if (at_end) {
		load_exits(&run);
		pair_foreach_open(run.pair, put_open, &run);
	}
	if (env->count)
		buf_printf(&run.buf, "%" PRIu64 "\n", run.matched);
	else if (run.stats) {
		stats_set_window(run.stats, run.t0, run.last_ts, run.since, run.until);
		stats_write(run.stats, &run.buf, run.last_ts > run.t0 ? run.last_ts - run.t0 : 0,
			    env->hist);
	} else if (run.folded)
		folded_write(run.folded, &run.buf);
	else
		output_end(run.out, &run.buf);
	if (!write_out(&run.buf) || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": cannot write output: %s\n", strerror(errno));
		goto out;
	}

	if (lost)
		fprintf(stderr, PROG ": warning: %s%" PRIu64 " event(s) were lost while recording %s (the recorder could not keep up)\n",
			lost == UINT64_MAX ? "at least " : "", lost, env->name);
	if (suppressed)
		fprintf(stderr, PROG ": note: %s%" PRIu64 " event(s) were suppressed by the recorder's --rate-limit in %s\n",
			suppressed == UINT64_MAX ? "at least " : "", suppressed, env->name);
	if (gtr_reader_damage(run.r)) {
		const char *msg = gtr_reader_error(run.r);
		fprintf(stderr, PROG ": warning: skipped %" PRIu64 " damaged block(s) of %s%s%s\n",
			gtr_reader_damage(run.r), env->name, msg && msg[0] ? "; last: " : "",
			msg ? msg : "");
		const struct gtr_summary *sum = gtr_reader_summary(run.r);
		if (at_end && sum->present && sum->events > nevents)
			fprintf(stderr, PROG ": warning: %" PRIu64 " of the %" PRIu64 " events gotrace-record "
				"wrote were in damaged blocks and are missing from this report\n",
				sum->events - nevents, sum->events);
	}
	const struct gtr_host *host = gtr_reader_host(run.r);
	if (at_end && !gtr_reader_summary(run.r)->present && !nevents && !np && !lost &&
	    !suppressed && !host->start_mono_ns && !(host->recorder && host->recorder[0]))
		fprintf(stderr, PROG ": warning: %s holds nothing but the file header: gotrace-record "
			"was stopped (killed or crashed) before it wrote anything\n", env->name);
	else if (gtr_reader_truncated(run.r))
		fprintf(stderr, PROG ": warning: %s ends in the middle of a block: the recording was "
			"interrupted or the file was cut short (an incomplete copy?); events up to the "
			"last complete frame were read\n", env->name);
	else if (at_end && !gtr_reader_summary(run.r)->present)
		fprintf(stderr, PROG ": warning: %s was not closed by gotrace-record (killed or crashed); "
			"read up to its last complete frame\n", env->name);
	struct pair_counts pc;
	pair_counts(run.pair, &pc);
	const uint64_t open = pc.open - pc.lost_open;  /* lost: counted below */
	if (at_end && !env->count && (pc.unpaired_returns || pc.abandoned || open || pc.dropped))
		fprintf(stderr, PROG ": note: %" PRIu64 " call(s) paired; unpaired: %" PRIu64
			" return(s) without entry, %" PRIu64 " entr%s without return (%" PRIu64
			" unwound by a panic: closed over by an outer return, %" PRIu64
			" in a process that exited, %" PRIu64 " still open at the end), %" PRIu64
			" entr%s not tracked (--max-depth/--max-goroutines)\n",
			pc.paired, pc.unpaired_returns, open + pc.abandoned,
			open + pc.abandoned == 1 ? "y" : "ies", pc.abandoned, run.exited_end,
			run.open_end, pc.dropped, pc.dropped == 1 ? "y" : "ies");
	if (at_end && !env->count && (pc.lost_returns || pc.lost_entries))
		fprintf(stderr, PROG ": note: %" PRIu64 " return(s) and %" PRIu64 " entr%s shown alone "
			"as 'lost', not paired: events of their function were lost or suppressed while "
			"they ran, so the other half may be another call's\n",
			pc.lost_returns, pc.lost_entries, pc.lost_entries == 1 ? "y" : "ies");
	if (at_end && pc.late)
		fprintf(stderr, PROG ": warning: %" PRIu64 " drop record(s) of %s came after calls "
			"their losses may concern had been shown as paired (calls are held for the drop "
			"records up to 2 s of trace after their return, 128 MiB at most); those calls may "
			"be paired wrongly\n", pc.late, env->name);
	if (output_csv_cut(run.out))
		fprintf(stderr, PROG ": warning: %" PRIu64 " value(s) left out of CSV: events of probes described after the start had more values than the %u columns\n",
			output_csv_cut(run.out), maxvals);
	if (run.folded && folded_dropped(run.folded))
		fprintf(stderr, PROG ": warning: %" PRIu64 " call(s) left out of the folded stacks (more than 1M distinct stacks)\n",
			folded_dropped(run.folded));
	if (run.stats && stats_dropped(run.stats))
		fprintf(stderr, PROG ": warning: %" PRIu64 " event(s) left out of the statistics (more than 10000 groups)\n",
			stats_dropped(run.stats));
	ret = 0;
	for (int k = 0; k < env->nfilters; k++) {
		const char *why;
		const uint64_t n = filter_eval_errors(run.filters[k], &why);

		if (!n)
			continue;
		fprintf(stderr, PROG ": %s: %" PRIu64 " event(s) had no answer for filter '%s' and "
			"were left out: %s%s\n", env->strict ? "error" : "warning", n,
			filter_expr(run.filters[k]), why,
			env->strict ? "" : " (--strict makes this an error)");
		if (env->strict)
			ret = 2;
	}
out:
	free(probes);
	free(run.exits);
	buf_free(&run.tmp);
	buf_free(&run.buf);
	output_free(run.out);
	folded_free(run.folded);
	stats_free(run.stats);
	filter_free(run.by);
	pair_free(run.pair);
	gtr_reader_close(run.r);
	for (int i = 0; i < env->nfilters; i++)
		filter_free(run.filters[i]);
	return ret;
}

/* ------------------------------------------------------------ commands */

static const struct argp_child common_child[] = {
	{ &(const struct argp){ .options = common_options, .parser = parse_opt }, 0,
	  "Selecting events:", 1 },
	{ 0 },
};

static int cmd_print(int argc, char **argv)
{
	static const struct argp argp = {
		.options = print_options,
		.parser = parse_opt,
		.args_doc = "FILE",
		.doc = print_doc,
		.children = common_child,
	};
	struct env env = { .format = OUTPUT_TEXT, .hist = true };

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return EXIT_USAGE;
	return run_pass(&env);
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
	struct env env = { .stats = true, .hist = true };

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return EXIT_USAGE;
	return run_pass(&env);
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
};

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
