/* SPDX-License-Identifier: MIT */
/*
 * The pushed-down count (gtr_reader_count_run() with filter_count_plan())
 * against the general path (gtr_reader_next() and filter_match()) on random
 * traces and random filters (comparisons of values, pid, tid, goid and ts,
 * func and kind, in (...), && and ||, a negated part): the same events
 * counted, the same matches, the same last time, and the reader left
 * exactly where the general path leaves it (every later item read back the
 * same). Then the whole report (report_run() --count) against the general
 * path's count.
 */
#include "format_fixture.h"
#include "filter.h"
#include "output.h"
#include "run.h"

TestSuite(count_pushdown, .init = setup, .fini = teardown);

static uint64_t rng = 88172645463325252ull;

/* xorshift64: a reproducible stream for the traces and filters. */
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const int64_t vals[] = { 0, 1, -1, 2, 3, -3, 42, 43, 41, 1000, -1000, INT64_MIN,
				INT64_MAX, (int64_t)(1ull << 40), -(int64_t)(1ull << 40) };
#define NVALS (sizeof(vals) / sizeof(vals[0]))

/* Probe 4: x int, y uint64, w word; probe 40 (past the fast path's ids): x int;
 * probe 5: the return of main.xy, r int. */
static void add_probes(struct gtr_writer *w)
{
	struct gtr_probe p = {
		.id = 4, .binary_id = 3, .kind = GTR_KIND_ENTRY, .func = "main.xy",
		.address = 0x401000, .spec = "main.xy", .fmt = "", .nargs = 3,
	};
	p.args[0] = (struct gtr_arg){ "x", "int", GTR_TYPE_INT, 8, "" };
	p.args[1] = (struct gtr_arg){ "y", "uint64", GTR_TYPE_UINT, 8, "" };
	p.args[2] = (struct gtr_arg){ "w", "uintptr", GTR_TYPE_WORD, 8, "" };
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
	p.id = 40;
	p.nargs = 1;
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
	p.id = 5;
	p.kind = GTR_KIND_RETURN;
	p.spec = "main.xy%return";
	p.args[0] = (struct gtr_arg){ "r", "int", GTR_TYPE_INT, 8, "" };
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
}

/* A random integer value of the kind type t reads as; now and then a
 * string where an integer is expected, or nothing. */
static void rnd_value(struct gtr_value *v, enum gtr_type t)
{
	const uint64_t r = rnd();
	const int64_t x = vals[r % NVALS];

	if (t == GTR_TYPE_STRING || r % 97 == 5) {
		v->kind = GTR_VAL_STR;
		v->v.s.data = (const uint8_t *)"abcdef";
		v->v.s.len = (uint32_t)(r >> 8) % 7;
		v->v.s.full_len = v->v.s.len;
	} else if (t == GTR_TYPE_BOOL) {
		v->kind = GTR_VAL_BOOL;
		v->v.b = r >> 9 & 1;
	} else if (t == GTR_TYPE_INT && !(r % 89 == 3)) {
		v->kind = GTR_VAL_INT;
		v->v.i = x;
	} else {
		v->kind = GTR_VAL_UINT;
		v->v.u = (r >> 12) % 5 == 0 ? UINT64_MAX - (r >> 20) % 3 : (uint64_t)x;
	}
}

/* A random trace of n events at `path`: probes 1 (the fixture's), 4, 40 and
 * with `returns` the return probes 5 and 2000; contexts that change,
 * tasks, drops, stacks, frames cut at random, clock samples and symbols
 * between frames, some values missing. */
static void write_trace(const char *path, uint32_t n, bool returns)
{
	char err[256];
	struct gtr_writer *w;
	static const uint64_t stack[3] = { 0x401000, 0x402000, 0x403000 };
	static const uint32_t ids[] = { 4, 4, 4, 4, 1, 40, 2000, 5, 5, 5 };
	/* the fixture's probe 1: a int, b uint64, s string, ok bool, f float64, p pointer */
	static const enum gtr_type types1[6] = { GTR_TYPE_INT, GTR_TYPE_UINT, GTR_TYPE_STRING,
						 GTR_TYPE_BOOL, GTR_TYPE_UINT, GTR_TYPE_UINT };
	uint64_t ts = 1000000;

	unlink(path);
	w = gtr_writer_create(path, 0, &test_host, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	add_meta(w);
	add_probes(w);
	for (uint32_t i = 0; i < n; i++) {
		struct gtr_event ev = { 0 };
		const uint64_t r = rnd();
		ev.probe_id = ids[r % (returns ? 10 : 6)];
		ev.kind = ev.probe_id == 2000 || ev.probe_id == 5 ? GTR_KIND_RETURN
								   : GTR_KIND_ENTRY;
		ts += (r >> 8) % 1000;
		ev.ts_ns = ts;
		ev.pid = 100;
		ev.tid = 100 + (uint32_t)((r >> 16) % 64 == 0);
		ev.goid = 1 + (r >> 24) % 64 / 60;
		ev.cpu = (r >> 30) % 50 == 0 ? 1 : GTR_CPU_UNKNOWN;
		const uint32_t nargs = ev.probe_id == 1 ? 6 : ev.probe_id == 4 ? 3 : 1;
		ev.nvals = (r >> 36) % 40 == 0 ? nargs - 1 : nargs;
		for (uint32_t k = 0; k < ev.nvals; k++)
			rnd_value(&ev.vals[k], ev.probe_id == 1 ? types1[k] :
					       k == 0 ? GTR_TYPE_INT : GTR_TYPE_UINT);
		if ((r >> 42) % 300 == 0) {
			ev.nstack = 3;
			ev.stack = stack;
		}
		cr_assert_eq(gtr_writer_event(w, &ev), 0, "%s", gtr_writer_error(w));
		if ((r >> 50) % 400 == 0) {
			const struct gtr_drop d = { .ts_ns = ts, .probe_id = 4, .count = 3, .cpu = 0 };
			cr_assert_eq(gtr_writer_drop(w, &d), 0);
		}
		if ((r >> 50) % 500 == 1)
			cr_assert_eq(gtr_writer_task(w, 100, 100, (r >> 40) & 1 ? "hot" : "cold"), 0);
		if ((r >> 50) % 300 == 2)
			cr_assert_eq(gtr_writer_flush(w), 0);
		/* blocks between frames, which the prefetch looks past or
		 * reads before the frames it holds */
		if ((r >> 50) % 700 == 3) {
			const struct gtr_clock_sample c = { ts, ts + 7, ts + 9 };
			cr_assert_eq(gtr_writer_clock(w, &c), 0);
		}
		if ((r >> 50) % 1500 == 4) {
			const struct gtr_symbol sym = { .address = 0x401000 + (r >> 20) % 64,
						 .size = 16, .name = "main.sym" };
			cr_assert_eq(gtr_writer_symbols(w, 3, &sym, 1), 0);
		}
	}
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
}

/* A random comparison or test for rnd_filter(): mostly of the shapes a
 * plan holds, now and then one it does not. */
static size_t rnd_leaf(char *out, size_t len)
{
	static const char *fields[] = { "goarg1", "goarg2", "goarg3", "x", "y", "a", "b", "goarg4",
					"goarg5", "w", "r", "goret1", "pid", "tid", "goid", "ts" };
	static const char *ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	static const char *lits[] = { "0", "1", "-1", "42", "43", "-3", "1000", "-1000",
				      "9223372036854775807", "-9223372036854775808",
				      "18446744073709551615", "18446744073709551614",
				      "1099511627776", "-99999999999999999999", "100", "101",
				      "2", "1ms", "2500us", "3ms" };
	static const char *fixed[] = { "func == \"main.xy\"", "func != \"main.(*T).add\"",
				       "kind == \"entry\"", "kind == \"return\"",
				       "startswith(func, \"main.x\")", "func =~ \"^main\\\\.x\"",
				       "func in (\"main.xy\", \"main.q\")", "func < \"main.y\"" };
	static const char *other[] = { "comm == \"hot\"", "!(goarg1 == 42)", "len(s) > 2",
				       "ts >= 12:00:03", "s == \"abc\"", "cpu == 1" };
	const uint64_t r = rnd() % 20;
	const char *f = fields[rnd() % 16];

	if (r < 13) {
		const char *op = ops[rnd() % 6], *lit = lits[rnd() % 20];
		if (rnd() % 5 == 0)   /* the literal first */
			return (size_t)snprintf(out, len, "%s %s %s", lit, op, f);
		return (size_t)snprintf(out, len, "%s %s %s", f, op, lit);
	}
	if (r < 15)
		return (size_t)snprintf(out, len, "%s in (%s, %s, %s)", f, lits[rnd() % 20],
					lits[rnd() % 20], lits[rnd() % 20]);
	if (r < 17)
		return (size_t)snprintf(out, len, "%s", fixed[rnd() % 8]);
	if (r < 18)
		return (size_t)snprintf(out, len, "!(%s)", fixed[rnd() % 8]);
	return (size_t)snprintf(out, len, "%s", other[rnd() % 6]);
}

/* A random filter: comparisons joined by && and ||, some in parentheses. */
static void rnd_filter(char *out, size_t len)
{
	const uint32_t n = 1 + rnd() % 4;
	size_t at = 0;
	bool open = false;

	out[0] = 0;
	for (uint32_t k = 0; k < n && at + 100 < len; k++) {
		if (k)
			at += (size_t)snprintf(out + at, len - at, rnd() % 3 ? " && " : " || ");
		if (!open && k + 1 < n && rnd() % 4 == 0) {
			at += (size_t)snprintf(out + at, len - at, "(");
			open = true;
		}
		at += rnd_leaf(out + at, len - at);
		if (open && rnd() % 2) {
			at += (size_t)snprintf(out + at, len - at, ")");
			open = false;
		}
	}
	if (open)
		snprintf(out + at, len - at, ")");
}

/* The values of two events read back alike. */
static void same_event(const struct gtr_event *a, const struct gtr_event *b)
{
	cr_assert_eq(a->ts_ns, b->ts_ns);
	cr_assert_eq(a->probe_id, b->probe_id);
	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->tid, b->tid);
	cr_assert_eq(a->goid, b->goid);
	cr_assert_eq(a->cpu, b->cpu);
	cr_assert_eq(a->nvals, b->nvals);
	cr_assert_eq(a->nstack, b->nstack);
	for (uint32_t k = 0; k < a->nvals; k++) {
		cr_assert_eq(a->vals[k].kind, b->vals[k].kind);
		if (a->vals[k].kind == GTR_VAL_STR)
			cr_assert_eq(a->vals[k].v.s.len, b->vals[k].v.s.len);
		else if (a->vals[k].kind == GTR_VAL_BOOL)
			cr_assert_eq(a->vals[k].v.b, b->vals[k].v.b);
		else if (a->vals[k].kind != GTR_VAL_NONE)
			cr_assert_eq(a->vals[k].v.u, b->vals[k].v.u, "value %u", k);
	}
}

/* The start relative times (ts) count from: the first event's time, as
 * in the report (lockstep() sets it). */
static uint64_t t0_ns;

/* Whether filter f keeps ev of reader r, as the lean count asks it. */
static bool keeps(struct filter *f, struct gtr_reader *r, const struct gtr_event *ev)
{
	const bool comm = filter_uses(f) & FILTER_USES_COMM;
	const struct report_event e = { .ev = ev, .probe = gtr_reader_probe(r, ev->probe_id),
					.comm = comm ? gtr_reader_comm(r, ev->pid, ev->tid) : "",
					.t0_ns = t0_ns };

	return filter_match(f, &e);
}

/* The plans of a lockstep read, one per (probe, kind) met, as
 * report/pushdown.c keeps them; ok[k]: the filter made plans[k]. */
struct plans {
	struct gtr_count_plan plans[16];
	bool ok[16];
	uint32_t n;
};

/* The plan of f for (id, kind) in ps, made on first use; NULL when the
 * filter makes none. */
static const struct gtr_count_plan *plan_for(struct plans *ps, struct filter *f,
					     struct gtr_reader *r, uint32_t id,
					     enum gtr_kind kind)
{
	const struct gtr_probe *pr = gtr_reader_probe(r, id);
	uint32_t k = 0;

	while (k < ps->n && (ps->plans[k].probe_id != id || ps->plans[k].kind != kind))
		k++;
	if (k == ps->n) {
		cr_assert_lt(ps->n, 16);
		memset(&ps->plans[k], 0, sizeof(ps->plans[k]));
		ps->plans[k].probe_id = id;
		ps->plans[k].kind = kind;
		ps->ok[k] = pr && !filter_count_plan(f, pr, kind, t0_ns, &ps->plans[k]);
		ps->n++;
	}
	return ps->ok[k] ? &ps->plans[k] : NULL;
}

/*
 * Counts through reader p what follows its last event, as the report's
 * pushed-down count does (report/pushdown.c): the plan of f for the next
 * record's (probe, kind) first, with the others made so far, while a call
 * takes records. Reader g, in step with p, reads the same events the
 * general way; each call must match alike. Returns the events counted;
 * *mp and *mg get the matches of each way.
 */
static uint64_t count_runs(struct filter *f, struct plans *ps, struct gtr_reader *p,
			   struct gtr_reader *g, uint64_t *mp, uint64_t *mg)
{
	struct gtr_event eg;
	struct gtr_drop dg;
	uint64_t total = 0;
	uint32_t id;
	enum gtr_kind kind;

	while (gtr_reader_count_peek(p, &id, &kind)) {
		const struct gtr_count_plan *first = plan_for(ps, f, p, id, kind), *all[16];
		uint32_t n_all = 0;
		if (!first)
			break;
		all[n_all++] = first;
		for (uint32_t k = 0; k < ps->n; k++)
			if (ps->ok[k] && &ps->plans[k] != first)
				all[n_all++] = &ps->plans[k];
		uint64_t m = 0, last = 0, mg_run = 0;
		const uint64_t n = gtr_reader_count_plans(p, all, n_all, &m, &last);
		if (!n)
			break;
		for (uint64_t k = 0; k < n; k++) {
			cr_assert_eq(gtr_reader_next(g, &eg, &dg), GTR_ITEM_EVENT);
			cr_assert_not_null(plan_for(ps, f, g, eg.probe_id, eg.kind));
			mg_run += keeps(f, g, &eg);
		}
		cr_assert_eq(m, mg_run, "filter '%s': pushed down %llu of %llu, general %llu",
			     filter_expr(f), (unsigned long long)m, (unsigned long long)n,
			     (unsigned long long)mg_run);
		cr_assert_eq(last, eg.ts_ns);
		*mg += mg_run;
		*mp += m;
		total += n;
	}
	return total;
}

/*
 * Reads `path` twice in lockstep: `g` by the general path only and with
 * frames decompressed in line, `p` with a pushed-down count after each
 * event and frames decompressed ahead. Returns the general count of f;
 * *pushed: the events the pushed-down count took.
 */
static uint64_t lockstep(const char *path, struct filter *f, uint64_t *pushed)
{
	char err[256];
	struct gtr_reader *g = gtr_reader_open(path, err, sizeof(err));
	struct gtr_reader *p = gtr_reader_open(path, err, sizeof(err));
	struct gtr_event eg, ep;
	struct gtr_drop dg, dp;
	uint64_t mg = 0, mp = 0;
	bool first = true;
	struct plans ps = { .n = 0 };

	cr_assert(g && p, "%s", err);
	gtr_reader_set_prefetch(g, false);
	*pushed = 0;
	for (;;) {
		const int ig = gtr_reader_next(g, &eg, &dg), ip = gtr_reader_next(p, &ep, &dp);
		cr_assert_eq(ig, ip);
		if (ig <= 0)
			break;
		if (ig != GTR_ITEM_EVENT) {
			cr_assert_eq(dg.count, dp.count);
			continue;
		}
		same_event(&eg, &ep);
		if (first) {
			t0_ns = eg.ts_ns;
			first = false;
		}
		mg += keeps(f, g, &eg);
		mp += keeps(f, p, &ep);
		*pushed += count_runs(f, &ps, p, g, &mp, &mg);
	}
	cr_assert_eq(mg, mp);
	cr_assert_eq(gtr_reader_damage(g), gtr_reader_damage(p));
	cr_assert_eq(gtr_reader_nlosses(g), gtr_reader_nlosses(p));
	gtr_reader_close(g);
	gtr_reader_close(p);
	return mg;
}

/* A random filter (rnd_filter()) into expr[len] that compiles, checks
 * against the probes of `path` and binds to its clock, as the report would
 * take it. */
static struct filter *rnd_checked(const char *path, char *expr, size_t len)
{
	char err[256];
	struct filter_error ferr;
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	const struct gtr_probe *probes[8];
	FILE *null = fopen("/dev/null", "w");
	struct filter *f = NULL;

	cr_assert_not_null(r, "%s", err);
	cr_assert_eq(gtr_reader_preload(r) >= 0, true);
	const uint32_t np = gtr_reader_nprobes(r);
	for (uint32_t i = 0; i < np && i < 8; i++)
		probes[i] = gtr_reader_probe_at(r, i);
	for (int tries = 0; !f && tries < 1000; tries++) {
		rnd_filter(expr, len);
		f = filter_compile(expr, &ferr);
		/* wall-clock times bound to the file's anchor, as the report does */
		if (f && (filter_check(f, probes, np, null, &ferr) ||
			  filter_set_clock(f, gtr_reader_host(r), &ferr))) {
			filter_free(f);
			f = NULL;
		}
	}
	cr_assert_not_null(f, "no random filter checks");
	fclose(null);
	gtr_reader_close(r);
	return f;
}

Test(count_pushdown, random_filters_count_as_the_general_path)
{
	uint64_t pushed_all = 0, checked = 0;

	for (int t = 0; t < 8; t++) {
		char path[256];
		snprintf(path, sizeof(path), "%s", tpath("r.gtr"));
		write_trace(path, 3000 + (uint32_t)(rnd() % 5000), t % 4 == 3);
		for (int k = 0; k < 60; k++) {
			char expr[256];
			uint64_t pushed;
			struct filter *f = rnd_checked(path, expr, sizeof(expr));
			lockstep(path, f, &pushed);
			pushed_all += pushed;
			checked++;
			filter_free(f);
		}
	}
	/* the comparison meant something: most events went the pushed-down way */
	cr_assert_eq(checked, 480);
	cr_assert_gt(pushed_all, checked * 1000);
}

/* report_run() --count of `expr` on `path`, its output as a number. */
static uint64_t report_count(const char *path, const char *expr)
{
	struct report_opts o = { .path = path, .name = path, .format = &out_text, .count = true,
				 .progress = -1, .lim = { 0 } };
	const char *out = tpath("count.txt");
	unsigned long long n = ~0ull;

	if (expr)
		o.filters[o.nfilters++] = expr;
	fflush(stdout);
	const int saved = dup(1);
	FILE *f = fopen(out, "w+");
	cr_assert_not_null(f);
	dup2(fileno(f), 1);
	const int rc = report_run(&o);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	cr_assert_eq(rc, 0, "report_run of '%s'", expr ? expr : "");
	rewind(f);
	cr_assert_eq(fscanf(f, "%llu", &n), 1);
	fclose(f);
	return n;
}

Test(count_pushdown, report_count_is_the_general_count)
{
	for (int t = 0; t < 4; t++) {
		char path[256];
		snprintf(path, sizeof(path), "%s", tpath("c.gtr"));
		write_trace(path, 20000, t == 3);
		cr_assert_eq(report_count(path, NULL), 20000);
		/* with returns a filter of values pairs (a return reads its
		 * entry's arguments): the general path does not read alike */
		for (int k = 0, n = 0; k < 200 && n < 25; k++) {
			char expr[256];
			uint64_t pushed;
			struct filter *f = rnd_checked(path, expr, sizeof(expr));
			if (t == 3 && (filter_uses(f) & (FILTER_USES_VALUES | FILTER_USES_LATENCY))) {
				filter_free(f);
				continue;
			}
			const uint64_t want = lockstep(path, f, &pushed);
			filter_free(f);
			cr_assert_eq(report_count(path, expr), want, "filter '%s'", expr);
			n++;
		}
	}
}

/* The plan of `expr` for probe 4's entries in `path`: 0, or -1. */
static int plan_of(const char *path, const char *expr)
{
	char err[256];
	struct filter_error ferr;
	struct gtr_count_plan plan = { .probe_id = 4, .kind = GTR_KIND_ENTRY };
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));

	cr_assert_not_null(r, "%s", err);
	cr_assert_eq(gtr_reader_preload(r) >= 0, true);
	struct filter *f = filter_compile(expr, &ferr);
	cr_assert_not_null(f, "'%s': %s", expr, ferr.msg);
	cr_assert_eq(filter_set_clock(f, gtr_reader_host(r), &ferr), 0, "%s", ferr.msg);
	const int rc = filter_count_plan(f, gtr_reader_probe(r, 4), GTR_KIND_ENTRY, 1000000,
					 &plan);
	filter_free(f);
	gtr_reader_close(r);
	return rc;
}

Test(count_pushdown, the_shapes_a_plan_holds)
{
	static const char *const pushed[] = {
		"goarg1 == 42", "x > 1 && y <= 1000", "pid == 100", "tid != 101 && goid < 2",
		"ts > 1ms", "ts >= 12:00:03", "x == 1 || y == 2", "(x == 1 || y == 2) && pid == 100",
		"x in (1, 2, 42)", "42 < x", "func == \"main.xy\" && x > 0",
		"kind == \"return\" || x == 3", "!(func =~ \"^main\\\\.q\") && x > 0",
		"startswith(func, \"main\") || goid == 7", "func == \"main.zz\"",
	};
	static const char *const general[] = {
		"comm == \"hot\"", "!(x == 42)", "len(x) > 1", "x == 1 || comm == \"a\"",
		"cpu == 1", "latency > 1ms",
		"(x == 1 || x == 2) && (y == 1 || y == 2) && (w == 1 || w == 2) && "
		"(x == 3 || x == 4) && (y == 3 || y == 4)",
	};
	const char *path = tpath("shapes.gtr");

	write_trace(path, 2000, false);
	for (size_t k = 0; k < sizeof(pushed) / sizeof(pushed[0]); k++) {
		uint64_t n;
		char err[256];
		struct filter_error ferr;
		struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
		struct filter *f = filter_compile(pushed[k], &ferr);

		cr_assert_eq(plan_of(path, pushed[k]), 0, "'%s' makes no plan", pushed[k]);
		cr_assert(r && f);
		cr_assert_eq(filter_set_clock(f, gtr_reader_host(r), &ferr), 0);
		gtr_reader_close(r);
		lockstep(path, f, &n);
		cr_assert_gt(n, 1000, "'%s': %llu events pushed down", pushed[k],
			     (unsigned long long)n);
		filter_free(f);
	}
	for (size_t k = 0; k < sizeof(general) / sizeof(general[0]); k++)
		cr_assert_eq(plan_of(path, general[k]), -1, "'%s' makes a plan", general[k]);
}

/* Entries and returns that alternate count in the reader alike, one call
 * taking records of several probes: most events go that way. */
Test(count_pushdown, probes_that_alternate_count_in_the_reader)
{
	static const char *const exprs[] = { "pid == 100", "kind == \"return\" || tid == 101",
					     "ts > 1ms && goid != 2", "func == \"main.xy\"" };
	const char *path = tpath("alt.gtr");
	char err[256];
	struct gtr_event ev;
	struct gtr_drop d;
	uint64_t events = 0;

	write_trace(path, 6000, true);
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	while (gtr_reader_next(r, &ev, &d) > 0)
		events++;
	gtr_reader_close(r);
	for (size_t k = 0; k < sizeof(exprs) / sizeof(exprs[0]); k++) {
		struct filter_error ferr;
		struct filter *f = filter_compile(exprs[k], &ferr);
		uint64_t pushed;

		cr_assert_not_null(f, "%s", ferr.msg);
		lockstep(path, f, &pushed);
		/* all but the first event of a frame, those of probes 40
		 * and 2000 (ids past the reader's fast path) and of a new
		 * context, and those that follow such */
		cr_assert_gt(pushed, events * 45 / 100, "'%s': %llu of %llu events pushed down",
			     exprs[k], (unsigned long long)pushed, (unsigned long long)events);
		filter_free(f);
	}
}
