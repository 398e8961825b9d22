/* SPDX-License-Identifier: MIT */
/*
 * One pass over a trace file (report/run.h): the read loop, pairing, the
 * time window and the filters, calls that never returned, and the
 * warnings at the end. What becomes of each event is the sink's
 * (report/sink.c), chosen once.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "pair.h"
#include "rotation.h"
#include "run_int.h"

#define FLUSH_AT (64 * 1024)     /* bytes of formatted output per write */
#define PROGRESS_MIN_BYTES (32u << 20) /* files smaller than this get no bar */

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

/* ------------------------------------------------------------ events */


/* ------------------------------------------------------------ the pass */

static bool write_out(struct buf *b)
{
	const bool ok = !b->len || fwrite(b->data, 1, b->len, stdout) == b->len;

	buf_reset(b);
	return ok;
}

static inline bool keep(struct run *run, const struct report_event *e)
{
	/* the call view dates a call by its entry, and so does the window */
	const int64_t ts = (int64_t)(run->opts->calls && e->entry ? e->entry->ts_ns
							 : e->ev->ts_ns);

	for (int k = 0; k < run->opts->npids; k++)
		if (e->ev->pid == run->opts->pids[k])
			run->pids_seen |= 1ull << k;
	if (ts < run->since || ts > run->until)
		return false;
	for (int k = 0; k < run->opts->nfilters; k++)
		if (!filter_match(run->filters[k], e))
			return false;
	return true;
}

/* Shows a call that did not return, in the sinks that show calls. */
static void put_unfinished(struct run *run, const struct report_event *oe, uint64_t end_ns,
			   const char *status)
{
	struct report_event e = *oe;
	uint64_t real;

	if (run->stop || !run->sink->unfinished)
		return;
	e.t0_ns = run->t0;
	if (run->opts->time_wall && !gtr_reader_realtime(run->r, e.ev->ts_ns, &real))
		e.real_ns = real;
	if (keep(run, &e))
		run->sink->unfinished(run, &e, end_ns, status);
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
		run->exited_end = gtr_add_sat(run->exited_end, 1);
		put_unfinished(run, e, exit_ns, "exited");
	} else {
		run->open_end = gtr_add_sat(run->open_end, 1);
		put_unfinished(run, e, run->last_ts, "open");
	}
}

/* output_opts.symbolize: names recorded stack addresses. */
static const char *symbolize(void *ctx, uint32_t pid, uint64_t addr, uint64_t *off)
{
	return gtr_reader_symbolize(ctx, pid, addr, off);
}

/* output_opts.inlined: the inlined frames at a recorded stack address. */
static uint32_t inlined(void *ctx, uint32_t pid, uint64_t addr, const char **names,
			uint32_t max)
{
	return gtr_reader_inlined(ctx, pid, addr, names, max);
}

/* Resolves --since/--until once the first event (the start) is known. */
static int resolve_window(struct run *run)
{
	const struct gtr_host *h = gtr_reader_host(run->r);
	int64_t v;

	if (run->opts->since) {
		if (!rtime_to_mono(&run->since_t, h, run->t0, &v)) {
			fprintf(stderr, PROG ": --since %s: %s has no wall-clock anchor; use +DURATION\n",
				run->opts->since, run->opts->name);
			return -1;
		}
		run->since = v;
	}
	if (run->opts->until) {
		if (!rtime_to_mono(&run->until_t, h, run->t0, &v)) {
			fprintf(stderr, PROG ": --until %s: %s has no wall-clock anchor; use +DURATION\n",
				run->opts->until, run->opts->name);
			return -1;
		}
		run->until = v;
	}
	if (run->opts->since && run->opts->until && run->since > run->until) {
		fprintf(stderr, PROG ": --since %s is later than --until %s: no event can match\n",
			run->opts->since, run->opts->until);
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
	/* probes are only added: the new ones are those after *np */
	for (uint32_t i = *np < n ? *np : 0; i < n; i++) {
		p[i] = gtr_reader_probe_at(run->r, i);
		run->any_return |= p[i]->kind == GTR_KIND_RETURN;
	}
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
/* The name of the host of process `pid` in a file of several hosts. */
static const char *host_name(const struct gtr_reader *r, uint32_t pid)
{
	const struct gtr_host *h = gtr_reader_host_at(r, gtr_reader_pid_host(r, pid));

	return h && h->hostname[0] ? h->hostname : "?";
}

/* Whether the recordings of a merged file (one host entry each) were made
 * on more than one host name: reports show hosts by name, so recordings
 * of one host name read as one host (spec/FORMAT.md, "PEER"). */
static bool several_host_names(const struct gtr_reader *r)
{
	const struct gtr_host *first = NULL;

	for (uint32_t i = 0; i < gtr_reader_nhosts(r); i++) {
		const struct gtr_host *h = gtr_reader_host_at(r, i);
		if (h && !first)
			first = h;
		else if (h && strcmp(h->hostname, first->hostname))
			return true;
	}
	return false;
}

static bool emit(struct run *run, struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	uint64_t real;

	e->t0_ns = run->t0;
	if (!run->lean || (run->uses & FILTER_USES_BINARY))
		e->binary = binary_path(run->r, e->probe);
	if (run->hosts)
		e->host = host_name(run->r, ev->pid);
	if (run->opts->time_wall && !gtr_reader_realtime(run->r, ev->ts_ns, &real))
		e->real_ns = real;
	/* calls this return closed over: a recovered panic unwound them (or
	 * it is shown alone as lost: its entry, alone too) */
	if (ev->kind == GTR_KIND_RETURN)
		pair_foreach_unwound(run->pair, put_unwound, run);
	if (run->stop)
		return true;
	const bool kept = keep(run, e);
	if (kept || (run->sink->flags & SINK_ALL))
		run->sink->event(run, e, kept);
	if (!kept)
		return true;
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
 * Whether the file is known to hold no drop record: a regular file (`input`
 * reads it) whose summary (read from its end by a second reader of `path`)
 * counts no lost and no suppressed event. Pairing then need not hold events
 * for drop records.
 */
static bool file_lossless(struct gtr_reader *input, const char *path)
{
	char err[256];
	bool none = false;

	/* a pipe cannot be opened twice, nor standard input */
	if (!strcmp(path, "-") || gtr_reader_is_stream(input))
		return false;
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	if (!r)
		return false;
	if (!gtr_reader_seek_ts(r, 0)) {
		const struct gtr_summary *s = gtr_reader_summary(r);
		none = s->present && !s->drops && !s->suppressed;
	}
	gtr_reader_close(r);
	return none;
}

/* ------------------------------------------------------------ the pass */

/* Compiles the filters and --by, parses --since and --until. 0, or -1
 * with a message (a usage error). */
static int compile_args(struct run *run)
{
	const struct report_opts *o = run->opts;
	struct filter_error ferr;
	char err[512];

	for (int i = 0; i < o->nfilters; i++) {
		run->filters[i] = filter_compile(o->filters[i], &ferr);
		if (!run->filters[i]) {
			filter_error_print(stderr, PROG ": ", o->filters[i], &ferr);
			return -1;
		}
	}
	if (o->by) {
		run->by = filter_compile_field(o->by, &ferr);
		if (!run->by) {
			filter_error_print_as(stderr, PROG ": ", "--by field", o->by, &ferr);
			return -1;
		}
	}
	if (o->since && rtime_parse(o->since, &run->since_t, err, sizeof(err))) {
		fprintf(stderr, PROG ": bad --since '%s': %s\n", o->since, err);
		return -1;
	}
	if (o->until && rtime_parse(o->until, &run->until_t, err, sizeof(err))) {
		fprintf(stderr, PROG ": bad --until '%s': %s\n", o->until, err);
		return -1;
	}
	/* times of one kind compare now; mixed kinds once the start is known */
	if (o->since && o->until && run->since_t.kind == run->until_t.kind &&
	    run->since_t.ns > run->until_t.ns) {
		fprintf(stderr, PROG ": --since %s is later than --until %s: no event can match\n",
			o->since, o->until);
		return -1;
	}
	return 0;
}

/*
 * Set by SIGINT and SIGTERM while a live input is read (a pipe, or
 * --follow); a second signal sets `give_up`. A terminal's Ctrl-C reaches
 * the recorder too, which then writes what it still holds and its
 * summary: the report reads on to the end of its input, for at most
 * INTERRUPT_GRACE_NS or until a second signal, and ends as at the end of
 * the file. A signal handler has no context argument, hence globals.
 */
#define INTERRUPT_GRACE_NS 2000000000ull
static volatile sig_atomic_t interrupted, give_up;

static void on_interrupt(int sig)
{
	(void)sig;
	if (interrupted)
		give_up = 1;
	interrupted = 1;
}

/* Now on CLOCK_MONOTONIC, in ns. */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The reader waits for input (gtr_wait_fn, at least every 100 ms while it
 * waits): what is formatted goes out now, so that a live view shows it;
 * nonzero when reading is to stop: output failed, a second signal, or
 * the grace after the first is over. */
static int on_input_wait(void *ctx)
{
	struct run *run = ctx;

	if (!write_out(&run->buf) || fflush(stdout))
		run->werr = true;
	if (interrupted && !run->interrupted_ns)
		run->interrupted_ns = mono_ns();
	if (interrupted && mono_ns() - run->interrupted_ns >= INTERRUPT_GRACE_NS)
		give_up = 1;
	return give_up || run->werr;
}

/* Live input: output is flushed whenever the reader waits, and Ctrl-C
 * ends the report cleanly instead of killing it (SA_RESTART: output
 * blocked on a slow reader goes on). */
static void live_input(struct run *run)
{
	const struct report_opts *o = run->opts;

	gtr_reader_follow(run->r, o->follow, on_input_wait, run);
	if (gtr_reader_is_stream(run->r) || o->follow) {
		struct sigaction sa = { .sa_handler = on_interrupt, .sa_flags = SA_RESTART };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
}

/*
 * Whether pairing may hold events in this run, so that knowing the file
 * free of drop records (file_lossless(): a second reader, a read of the
 * file's head and tail) can pay: not in a lean count whose filters read
 * nothing pairing gives, nor in one whose probes described up front all
 * are entries (one described later is paired as ever, only held longer
 * before it counts; the count is the same).
 */
static bool may_hold(const struct run *run)
{
	unsigned uses = 0;

	if (!(run->sink->flags & SINK_LEAN))
		return true;
	for (int i = 0; i < run->opts->nfilters; i++)
		uses |= filter_uses(run->filters[i]);
	if (!(uses & (FILTER_USES_LATENCY | FILTER_USES_VALUES)))
		return false;
	for (uint32_t i = 0; i < gtr_reader_nprobes(run->r); i++)
		if (gtr_reader_probe_at(run->r, i)->kind == GTR_KIND_RETURN)
			return true;
	return false;
}

/* Opens the file and starts pairing. 0, or -1 with a message. */
static int open_file(struct run *run)
{
	const struct report_opts *o = run->opts;
	char err[512];

	run->r = gtr_reader_open(o->path, err, sizeof(err));
	if (!run->r) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	live_input(run);
	if (gtr_reader_preload(run->r) < 0) {
		fprintf(stderr, PROG ": %s\n", gtr_reader_error(run->r));
		return -1;
	}
	/* entries of paired functions show nothing in the call view, Chrome
	 * and folded, and stats and counts need no order: they need not wait
	 * behind the returns pairing holds */
	struct pair_limits lim = o->lim;
	lim.unordered = (run->sink->flags & SINK_UNORDERED) || o->calls ||
			(o->format->flags & OUTPUT_F_UNORDERED);
	lim.lossless = may_hold(run) && file_lossless(run->r, o->path);
	run->pair = pair_new(&lim);
	return refresh_probes(run, &run->probes, &run->np);
}

/* Type-checks the filters and --by against the probes described up front,
 * and -T against the file's clock anchor. 0, or -1 with a message. */
static int check_args(struct run *run)
{
	const struct report_opts *o = run->opts;
	struct filter_error ferr;

	for (int i = 0; i < o->nfilters; i++) {
		if (filter_check(run->filters[i], run->probes, run->np, stderr, &ferr) ||
		    filter_set_clock(run->filters[i], gtr_reader_host(run->r), &ferr)) {
			filter_error_print(stderr, PROG ": ", o->filters[i], &ferr);
			return -1;
		}
	}
	if (run->by && filter_check(run->by, run->probes, run->np, stderr, &ferr)) {
		filter_error_print_as(stderr, PROG ": ", "--by field", o->by, &ferr);
		return -1;
	}
	if (o->time_wall && !gtr_reader_host(run->r)->start_realtime_ns) {
		fprintf(stderr, PROG ": -T: %s has no wall-clock anchor (host start_realtime_ns); use -t\n",
			o->name);
		return -1;
	}
	return 0;
}

/* Creates the output and the sink's state; sets up the progress bar. */
static void prepare(struct run *run, struct progress *prog)
{
	const struct report_opts *o = run->opts;

	run->hosts = several_host_names(run->r);
	run->maxvals = 1;
	for (uint32_t i = 0; i < run->np; i++)
		if (run->probes[i]->nargs > run->maxvals)
			run->maxvals = run->probes[i]->nargs;
	const struct output_opts oo = {
		.format = o->format, .calls = o->calls, .time_rel = o->time_rel,
		.time_wall = o->time_wall, .csv_values = run->maxvals,
		.symbolize = symbolize, .inlined = inlined, .sym_ctx = run->r,
		.hosts = run->hosts,
	};
	/* --count needs neither names nor pairing unless a filter reads
	 * them (return events read their entry's arguments). */
	for (int i = 0; i < o->nfilters; i++)
		run->uses |= filter_uses(run->filters[i]);
	run->lean = run->sink->flags & SINK_LEAN;
	run->out = output_new(&oo);
	if (run->sink->begin)
		run->sink->begin(run);

	struct stat st;
	if (o->progress >= 0 && (o->progress > 0 || isatty(2)) && strcmp(o->path, "-") &&
	    !stat(o->path, &st) &&
	    (o->progress > 0 || (uint64_t)st.st_size >= PROGRESS_MIN_BYTES) && st.st_size > 0) {
		prog->on = true;
		prog->size = (uint64_t)st.st_size;
	}
}

/* Whether event `ev` goes through pairing: always, but for a lean count
 * whose filters read nothing pairing gives, and for an entry while no
 * probe of the file returns (pairing then holds nothing and gives an
 * entry nothing: no depth, not tracked, not lost). */
static inline bool needs_pairing(const struct run *run, const struct gtr_event *ev)
{
	if (!run->any_return && ev->kind == GTR_KIND_ENTRY)
		return false;
	return !run->lean || (run->uses & FILTER_USES_LATENCY) ||
	       ((run->uses & FILTER_USES_VALUES) && ev->kind == GTR_KIND_RETURN) ||
	       (run->uses & FILTER_USES_VALUES && run->any_return);
}

/* The first event: the start, which relative times count from. 0, or -1
 * with a message. */
static int first_event(struct run *run, const struct gtr_event *ev)
{
	const uint64_t origin = gtr_reader_host(run->r)->origin_ns;

	run->have_t0 = true;
	/* a file selected from another counts from the original's start */
	run->t0 = origin && origin <= ev->ts_ns ? origin : ev->ts_ns;
	return resolve_window(run);
}

/* A drop record: counted, and given to pairing. false to stop. */
static bool on_drop(struct run *run, const struct gtr_drop *drop)
{
	if (drop->reason == GTR_DROP_RATE)
		run->suppressed = gtr_add_sat(run->suppressed, drop->count);
	else
		run->lost = gtr_add_sat(run->lost, drop->count);
	if (run->sink->drop)
		run->sink->drop(run, drop);
	/* calls held for it may now be decided */
	pair_drop(run->pair, drop);
	return drain(run);
}

/* The name of the last task asked for, kept while the reader reads no
 * task record (gtr_reader_task_gen()). */
struct comm_memo {
	bool ok;
	uint32_t pid, tid;
	uint64_t gen;
	const char *comm;
};

/* gtr_reader_comm() through the memo `m`. */
static inline const char *task_comm(struct gtr_reader *r, struct comm_memo *m, uint32_t pid,
				    uint32_t tid)
{
	const uint64_t gen = gtr_reader_task_gen(r);

	if (!m->ok || m->pid != pid || m->tid != tid || m->gen != gen)
		*m = (struct comm_memo){ true, pid, tid, gen, gtr_reader_comm(r, pid, tid) };
	return m->comm;
}

/*
 * Reads every event and drop record, or up to --limit, counting through
 * `pd` where it is on. Returns 0, or the exit status of an error
 * (reported).
 */
static int read_events(struct run *run, struct progress *prog, struct pushdown *pd)
{
	static struct gtr_event ev;
	const struct gtr_probe *last_probe = NULL;
	uint32_t last_id = 0;
	bool have_last = false;     /* last_id/last_probe hold a lookup */
	struct comm_memo memo = { 0 };
	struct gtr_drop drop;

	while (!run->stop) {
		const int item = gtr_reader_next(run->r, &ev, &drop);
		if (item < 0) {
			progress_clear(prog);
			write_out(&run->buf);
			fflush(stdout);
			const char *msg = gtr_reader_error(run->r);
			fprintf(stderr, PROG ": %s: %s\n", run->opts->name,
				msg && msg[0] ? msg : strerror(-item));
			return EXIT_READ;
		}
		if (item == GTR_ITEM_END)
			break;
		if (item == GTR_ITEM_DROP) {
			if (!on_drop(run, &drop))
				break;
			continue;
		}
		if (item != GTR_ITEM_EVENT)
			continue;
		if (gtr_reader_nprobes(run->r) != run->np) {
			if (refresh_probes(run, &run->probes, &run->np))
				return EXIT_READ;
			have_last = false;
		}
		if (!have_last || ev.probe_id != last_id) {
			/* probes are never redefined: only a new one changes this */
			last_probe = gtr_reader_probe(run->r, ev.probe_id);
			last_id = ev.probe_id;
			have_last = true;
		}
		if (!run->have_t0 && first_event(run, &ev))
			return EXIT_USAGE;
		if (ev.ts_ns > run->last_ts)
			run->last_ts = ev.ts_ns;
		run->nevents = gtr_add_sat(run->nevents, 1);
		struct report_event e = {
			.ev = &ev,
			.probe = last_probe,
			.comm = run->lean && !(run->uses & FILTER_USES_COMM) ? ""
				: task_comm(run->r, &memo, ev.pid, ev.tid),
			.t0_ns = run->t0,
		};
		/* pairing holds events until the drop records that may
		 * concern them are read, and releases them in file order */
		if (run->lean && !needs_pairing(run, &ev)) {
			/* a lean count: of emit(), only the filters apply */
			if (run->uses & FILTER_USES_BINARY)
				e.binary = binary_path(run->r, e.probe);
			if (keep(run, &e))
				run->sink->event(run, &e, true);
			const uint64_t before = run->nevents;
			if (pd->on && !run->stop && pushdown_count(run, pd) &&
			    prog->on && (before >> 16) != (run->nevents >> 16))
				progress_draw(prog, false, false);
		} else if (needs_pairing(run, &ev)) {
			const bool now = pair_push(run->pair, &e);
			if (!drain(run) || (now && !emit(run, &e)))
				break;
		} else if (!emit(run, &e)) {
			break;
		}
		if (run->stop)
			break;
		if (prog->on && !(run->nevents & 0xffff))
			progress_draw(prog, false, false);
	}
	return 0;
}

/* read_events() with a pushed-down count where the run allows one. */
static int read_loop(struct run *run, struct progress *prog)
{
	struct pushdown pd;

	pushdown_init(&pd, run);
	const int rc = read_events(run, prog, &pd);

	pushdown_free(&pd);
	return rc;
}

/*
 * After the last event: what pairing still holds, the calls that never
 * returned, the sink's end, all written out. 0, or EXIT_READ when output
 * cannot be written.
 */
static int finish(struct run *run, struct progress *prog)
{
	const struct gtr_summary *sum = gtr_reader_summary(run->r);

	/* a file selected from another spans the original's time */
	if (sum->present && sum->span_end_ns > run->last_ts && run->have_t0)
		run->last_ts = sum->span_end_ns;
	if (!run->stop && !run->werr) {
		/* the end: every loss is known, the held events go out */
		pair_finish(run->pair);
		drain(run);
	}
	if (prog->on && !run->stop)
		progress_draw(prog, true, true);
	progress_clear(prog);

	/* calls that never returned: in a process that exited, or still open
	 * (these may reach --limit: the file was read to its end all the same) */
	run->at_end = !run->stop;
	if (run->at_end) {
		load_exits(run);
		pair_foreach_open(run->pair, put_open, run);
	}
	if (run->sink->end)
		run->sink->end(run);
	if (!write_out(&run->buf) || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": cannot write output: %s\n", strerror(errno));
		return EXIT_READ;
	}
	/* output that failed on the way (said so then: -w, a live flush) */
	return run->werr ? EXIT_READ : 0;
}

/* ------------------------------------------------------------ warnings */

/* Losses, damage, and a file cut short or not closed. */
static void read_warnings(const struct run *run, bool at_end)
{
	const char *name = run->opts->name;
	const struct gtr_summary *sum = gtr_reader_summary(run->r);
	const struct gtr_host *host = gtr_reader_host(run->r);

	if (run->lost)
		fprintf(stderr, PROG ": warning: %s%" PRIu64 " event(s) were lost while recording %s (the recorder could not keep up)\n",
			output_at_least(run->lost), run->lost, name);
	if (run->suppressed)
		fprintf(stderr, PROG ": note: %s%" PRIu64 " event(s) were suppressed by the recorder's --rate-limit in %s\n",
			output_at_least(run->suppressed), run->suppressed, name);
	if (gtr_reader_damage(run->r)) {
		const char *msg = gtr_reader_error(run->r);
		fprintf(stderr, PROG ": warning: skipped %" PRIu64 " damaged block(s) of %s%s%s\n",
			gtr_reader_damage(run->r), name, msg && msg[0] ? "; last: " : "",
			msg ? msg : "");
		if (at_end && sum->present && sum->events > run->nevents)
			fprintf(stderr, PROG ": warning: %" PRIu64 " of the %s%" PRIu64 " events gotrace-record "
				"wrote were in damaged blocks and are missing from this report\n",
				sum->events - run->nevents, output_at_least(sum->events), sum->events);
	}
	if (at_end && !sum->present && !run->nevents && !run->np && !run->lost &&
	    !run->suppressed && !host->start_mono_ns && !(host->recorder && host->recorder[0]))
		fprintf(stderr, PROG ": warning: %s holds nothing but the file header: gotrace-record "
			"was stopped (killed or crashed) before it wrote anything\n", name);
	else if (gtr_reader_truncated(run->r))
		fprintf(stderr, PROG ": warning: %s ends in the middle of a block: the recording was "
			"interrupted or the file was cut short (an incomplete copy?); events up to the "
			"last complete frame were read\n", name);
	else if (at_end && !sum->present && gtr_reader_summary_damaged(run->r))
		fprintf(stderr, PROG ": warning: the summary at the end of %s is damaged (its "
			"checksum fails): the recording was closed, but its counts are lost; every "
			"event before it was read\n", name);
	else if (at_end && !sum->present && !interrupted)
		fprintf(stderr, PROG ": warning: %s was not closed by gotrace-record (killed or crashed); "
			"read up to its last complete frame\n", name);
	if (interrupted && !give_up)
		fprintf(stderr, PROG ": interrupted: %" PRIu64 " event(s) read from %s, to %s\n",
			run->nevents, name, sum->present ? "its summary: the whole recording"
			: "the end of its input");
	else if (interrupted)
		fprintf(stderr, PROG ": interrupted: %" PRIu64 " event(s) read from %s; reading "
			"stopped at a second signal or %llu s after the first, its writer still "
			"going: what it wrote later is not in this report\n", run->nevents, name,
			INTERRUPT_GRACE_NS / 1000000000ull);
}

/* What pairing could not pair, and drop records that came too late. */
static void pair_notes(const struct run *run, bool at_end)
{
	struct pair_counts pc;

	pair_counts(run->pair, &pc);
	const uint64_t open = pc.open - pc.lost_open;  /* lost: counted below */
	const bool notes = at_end && !run->opts->count;
	if (notes && (pc.unpaired_returns || pc.abandoned || open || pc.dropped))
		fprintf(stderr, PROG ": note: %" PRIu64 " call(s) paired; unpaired: %" PRIu64
			" return(s) without entry, %" PRIu64 " entr%s without return (%" PRIu64
			" unwound by a panic: closed over by an outer return, %" PRIu64
			" in a process that exited, %" PRIu64 " still open at the end), %" PRIu64
			" entr%s not tracked (--max-depth/--max-goroutines)\n",
			pc.paired, pc.unpaired_returns, open + pc.abandoned,
			open + pc.abandoned == 1 ? "y" : "ies", pc.abandoned, run->exited_end,
			run->open_end, pc.dropped, pc.dropped == 1 ? "y" : "ies");
	if (at_end && pc.over)
		fprintf(stderr, PROG ": warning: %" PRIu64 " call(s) past --max-depth (or the "
			"memory limit) on their goroutine were not tracked; their %" PRIu64
			" return(s) are shown unpaired, not matched with outer calls (raise "
			"--max-depth to pair them)\n", pc.over, pc.over_returns);
	if (notes && (pc.lost_returns || pc.lost_entries))
		fprintf(stderr, PROG ": note: %" PRIu64 " return(s) and %" PRIu64 " entr%s shown alone "
			"as 'lost', not paired: events of their function were lost or suppressed while "
			"they ran, so the other half may be another call's\n",
			pc.lost_returns, pc.lost_entries, pc.lost_entries == 1 ? "y" : "ies");
	if (at_end && pc.late)
		fprintf(stderr, PROG ": warning: %" PRIu64 " drop record(s) of %s came after calls "
			"their losses may concern had been shown as paired (calls are held for the drop "
			"records up to 2 s of trace after their return, 128 MiB at most); those calls may "
			"be paired wrongly\n", pc.late, run->opts->name);
}

/* --pid values no event of the file had (when it was read to its end). */
static void pid_notes(const struct run *run)
{
	const struct report_opts *o = run->opts;

	for (int k = 0; k < o->npids && run->at_end && !run->stop; k++)
		if (!(run->pids_seen & (1ull << k)))
			fprintf(stderr, PROG ": warning: --pid %" PRIu32 ": no event of process %"
				PRIu32 " in %s (gotrace-report info lists its processes)\n",
				o->pids[k], o->pids[k], o->name);
}

/* Events filters had no answer for. Returns the exit status they make. */
static int filter_notes(const struct run *run)
{
	const struct report_opts *o = run->opts;
	int ret = 0;

	for (int k = 0; k < o->nfilters; k++) {
		const char *why;
		const uint64_t n = filter_eval_errors(run->filters[k], &why);

		if (!n)
			continue;
		fprintf(stderr, PROG ": %s: %" PRIu64 " event(s) had no answer for filter '%s' and "
			"were left out: %s%s\n", o->strict ? "error" : "warning", n,
			filter_expr(run->filters[k]), why,
			o->strict ? "" : " (--strict makes this an error)");
		if (o->strict)
			ret = EXIT_USAGE;
	}
	return ret;
}

/* ------------------------------------------------------------ the run */

static void run_free(struct run *run)
{
	if (run->sink->free && run->state)
		run->sink->free(run);
	free(run->probes);
	free(run->exits);
	buf_free(&run->buf);
	output_free(run->out);
	filter_free(run->by);
	pair_free(run->pair);
	gtr_reader_close(run->r);
	for (int i = 0; i < run->opts->nfilters; i++)
		filter_free(run->filters[i]);
}

/* The pass, from compiling the filters to the last warning. */
static int run_pass(struct run *run)
{
	struct progress prog = { 0 };
	int ret;

	if (compile_args(run))
		return EXIT_USAGE;
	prog.base = bytes_read();
	if (open_file(run))
		return EXIT_READ;
	if (check_args(run))
		return EXIT_USAGE;
	prepare(run, &prog);
	ret = read_loop(run, &prog);
	if (!ret)
		ret = finish(run, &prog);
	if (ret || run->opts->quiet)
		return ret;
	read_warnings(run, run->at_end);
	pair_notes(run, run->at_end);
	pid_notes(run);
	if (run->sink->warnings)
		run->sink->warnings(run);
	return filter_notes(run);
}

/* rotation_next()'s stop: Ctrl-C or SIGTERM ends the wait for a file. */
static int stop_following(void *ctx)
{
	(void)ctx;
	return interrupted;
}

/*
 * Waits (up to 10 s, in 100 ms ticks; Ctrl-C ends it) until the next file
 * of a rotation opens: the recorder may not have written its header whole
 * yet when it is found.
 */
static void wait_openable(const char *path)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	char err[512];

	for (int t = 0; t < 100 && !interrupted; t++) {
		struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));

		if (r) {
			gtr_reader_close(r);
			return;
		}
		nanosleep(&tick, NULL);
	}
}

int report_run(const struct report_opts *o)
{
	if (o->write_path && !o->sink)
		return report_write(o);   /* comes back with its sink */

	/* --follow goes on to the next file of a rotation, one pass each */
	struct report_opts cur = *o;
	char names[2][PATH_MAX];
	int ret;

	for (int k = 0;; k ^= 1) {
		struct run run = {
			.opts = &cur, .sink = o->sink ? o->sink : sink_select(o),
			.since = INT64_MIN, .until = INT64_MAX,
		};
		ret = run_pass(&run);
		const bool closed = !ret && run.at_end && !interrupted &&
				    gtr_reader_summary(run.r)->present;

		run_free(&run);
		if (!o->follow || !closed || !strcmp(o->path, "-") ||
		    !rotation_next(o->path, cur.path, names[k], sizeof(names[k]),
				   stop_following, NULL))
			return ret;
		cur.path = cur.name = names[k];
		wait_openable(cur.path);
	}
}
