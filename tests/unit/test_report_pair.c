/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of entry/return pairing (report/pair.h), statistics
 * (report/stats.h), folded stacks (report/folded.h) and time literals
 * (lang/timeparse.h) on synthetic events.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "folded.h"
#include "pair.h"
#include "pair_fixture.h"
#include "stats.h"
#include "timeparse.h"

static struct gtr_probe probes[6];
static const struct gtr_probe *pp[6];
static struct gtr_event ev;

/* f entry 1 / return 2 (binary 1); g entry 3 / return 4; h entry 5 only;
 * f in binary 2: entry 6 has no return probe there */
static void setup(void)
{
	static const char *funcs[] = { "main.f", "main.f", "main.g", "main.g", "main.h", "main.f" };
	memset(probes, 0, sizeof(probes));
	for (int i = 0; i < 6; i++) {
		probes[i].id = (uint32_t)i + 1;
		probes[i].binary_id = i == 5 ? 2 : 1;
		probes[i].kind = (i == 1 || i == 3) ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		probes[i].func = funcs[i];
		probes[i].fmt = "";
		pp[i] = &probes[i];
	}
}

TestSuite(pair, .init = setup);

static struct report_event feed(struct pairer *p, uint32_t probe, uint64_t ts,
				uint64_t goid, int64_t v)
{
	struct report_event e = fixture_event_int(&ev, &probes[probe - 1], ts, goid, v);

	pair_event(p, &e);
	return e;
}

Test(pair, nested_and_recursive_calls)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;
	struct pair_counts c;
	uint32_t n;
	uint64_t self;

	pair_probes(p, pp, 6);
	e = feed(p, 1, 100, 1, 7);          /* f(7) */
	cr_expect(e.tracked && e.depth == 0 && !e.entry);
	e = feed(p, 1, 110, 1, 8);          /*   f(8) recursion */
	cr_expect_eq(e.depth, 1);
	e = feed(p, 3, 120, 1, 9);          /*     g(9) */
	e = feed(p, 5, 125, 1, 0);          /*     h: no return probe */
	cr_expect(!e.tracked && e.depth == 3);
	e = feed(p, 4, 150, 1, 0);          /*     g returns */
	cr_expect(e.entry && e.latency_ns == 30 && e.depth == 2);
	cr_expect_eq(e.entry->vals[0].v.i, 9);
	cr_expect_eq(e.entry_probe, &probes[2]);
	const uint32_t *st = pair_last_stack(p, &n, &self);
	cr_assert(st);
	cr_expect(n == 3 && self == 30);
	cr_expect_str_eq(pair_func_name(p, st[0]), "main.f");
	cr_expect_str_eq(pair_func_name(p, st[2]), "main.g");
	e = feed(p, 2, 170, 1, 0);          /*   inner f returns */
	cr_expect(e.entry && e.latency_ns == 60 && e.entry->vals[0].v.i == 8);
	st = pair_last_stack(p, &n, &self);
	cr_expect(n == 2 && self == 30, "self = 60 - 30 of g");
	e = feed(p, 2, 200, 1, 0);          /* outer f returns */
	cr_expect(e.entry && e.latency_ns == 100 && e.entry->vals[0].v.i == 7);
	pair_counts(p, &c);
	cr_expect(c.paired == 3 && c.open == 0 && c.unpaired_returns == 0 && c.abandoned == 0);
	pair_free(p);
}

Test(pair, goroutines_are_separate_and_unpaired_are_counted)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;
	struct pair_counts c;
	int opened = 0;

	pair_probes(p, pp, 6);
	feed(p, 1, 100, 1, 1);
	feed(p, 1, 101, 2, 2);
	e = feed(p, 2, 150, 1, 0);
	cr_expect(e.entry && e.entry->vals[0].v.i == 1 && e.latency_ns == 50);
	e = feed(p, 2, 160, 3, 0);          /* goroutine 3 has nothing open */
	cr_expect(!e.entry);
	/* an outer return closes over an inner call whose return was lost */
	feed(p, 1, 200, 4, 1);
	feed(p, 3, 210, 4, 2);
	e = feed(p, 2, 300, 4, 0);
	cr_expect(e.entry && e.latency_ns == 100);
	/* f of binary 2 has no return probe: not tracked */
	e = feed(p, 6, 400, 5, 0);
	cr_expect(!e.tracked);
	pair_counts(p, &c);
	cr_expect_eq(c.paired, 2);
	cr_expect_eq(c.unpaired_returns, 1);
	cr_expect_eq(c.abandoned, 1);
	cr_expect_eq(c.open, 1, "goroutine 2's call");
	void cb(void *arg, const struct report_event *oe, uint64_t end_ns)
	{
		(*(int *)arg)++;
		cr_expect_eq(end_ns, 0);
		cr_expect(oe->ev->goid == 2 && oe->ev->vals[0].v.i == 2 && oe->ev->ts_ns == 101);
		cr_expect_str_eq(oe->comm, "app");
	}
	pair_foreach_open(p, cb, &opened);
	cr_expect_eq(opened, 1);
	pair_free(p);
}

Test(pair, goid_zero_pairs_by_thread)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;

	pair_probes(p, pp, 6);
	feed(p, 1, 100, 0, 1);
	e = feed(p, 2, 130, 0, 0);
	cr_expect(e.entry && e.latency_ns == 30);
	pair_free(p);
}

Test(pair, limits_are_counted)
{
	struct pair_limits lim = { .max_depth = 4, .max_goroutines = 2 };
	struct pairer *p = pair_new(&lim);
	struct pair_counts c;

	pair_probes(p, pp, 6);
	for (int i = 0; i < 10; i++)
		feed(p, 1, 100 + (uint64_t)i, 1, i);
	feed(p, 1, 200, 2, 0);
	feed(p, 1, 201, 3, 0);           /* a third goroutine: no room */
	pair_counts(p, &c);
	cr_expect_eq(c.dropped, 6 + 1);
	cr_expect_eq(c.open, 5);
	/* goroutines with nothing open are reclaimed */
	feed(p, 2, 300, 2, 0);
	feed(p, 1, 301, 3, 0);
	pair_counts(p, &c);
	cr_expect_eq(c.dropped, 7);
	pair_free(p);
}

Test(pair, strings_are_kept_cut)
{
	struct pair_limits lim = { .keep_str = 4 };
	struct pairer *p = pair_new(&lim);
	struct report_event e = { .ev = &ev, .probe = &probes[0], .comm = "app" };

	pair_probes(p, pp, 6);
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 1;
	ev.pid = 10;
	ev.goid = 1;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_STR;
	ev.vals[0].v.s.data = (const uint8_t *)"abcdefgh";
	ev.vals[0].v.s.len = 8;
	ev.vals[0].v.s.full_len = 100;
	pair_event(p, &e);
	e = feed(p, 2, 10, 1, 0);
	cr_assert(e.entry);
	cr_expect_eq(e.entry->vals[0].v.s.len, 4);
	cr_expect_eq(e.entry->vals[0].v.s.full_len, 100);
	cr_expect(!memcmp(e.entry->vals[0].v.s.data, "abcd", 4));
	pair_free(p);
}

/* ------------------------------------------------------------ folded */

Test(pair, folded_sums_and_sorts)
{
	struct pairer *p = pair_new(NULL);
	struct folded *f = folded_new(2);
	struct buf b = BUF_INIT;

	pair_probes(p, pp, 6); /* fid 0 main.f, 1 main.g */
	const uint32_t f0 = folded_intern(f, pair_func_name(p, 0), 6);
	const uint32_t g0 = folded_intern(f, "main.gXX", 6);   /* a length, not a NUL */
	cr_expect_eq(folded_intern(f, "main.f", 6), f0);
	cr_expect_eq(folded_intern(f, pair_func_name(p, 1), 6), g0);
	cr_expect_neq(f0, g0);
	const uint32_t ab[] = { f0, g0 }, a[] = { f0 }, b1[] = { g0 };
	folded_add(f, ab, 2, 10);
	folded_add(f, a, 1, 5);
	folded_add(f, ab, 2, 7);
	folded_add(f, b1, 1, 1); /* third distinct stack: over the limit */
	folded_write(f, &b);
	cr_expect_str_eq(buf_cstr(&b), "main.f 5\nmain.f;main.g 17\n");
	cr_expect_eq(folded_dropped(f), 1);
	buf_free(&b);
	folded_free(f);
	pair_free(p);
}

/* ------------------------------------------------------------ stats */

Test(pair, stats_buckets_are_close)
{
	for (uint64_t v = 0; v < 100000000; v = v * 3 / 2 + 1) {
		const uint64_t mid = stats_bucket_mid(stats_bucket(v));
		const double err = v ? ((double)mid - (double)v) / (double)v : 0;
		cr_expect(err <= 1.0 / 32 && err >= -1.0 / 32, "v %llu mid %llu",
			  (unsigned long long)v, (unsigned long long)mid);
	}
	cr_expect_lt(stats_bucket(UINT64_MAX), 61 * 16);
}

Test(pair, log2_histogram_like_bcc)
{
	struct buf b = BUF_INIT;
	uint64_t vals[64] = { 0 };

	vals[0] = 1;
	vals[3] = 4;
	vals[4] = 2;
	stats_print_log2(&b, vals, 64, "usecs");
	cr_expect_str_eq(buf_cstr(&b),
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 1        |**********                              |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 0        |                                        |\n"
		"         8 -> 15         : 4        |****************************************|\n"
		"        16 -> 31         : 2        |********************                    |\n");
	const char *s = buf_cstr(&b);
	for (const char *l = s; *l; l = strchr(l, '\n') + 1)
		cr_expect_lt(strchr(l, '\n') - l, 80);
	buf_free(&b);
}

Test(pair, stats_table)
{
	struct pairer *p = pair_new(NULL);
	struct stats *s = stats_new(NULL, NULL, 0);
	struct buf b = BUF_INIT;
	struct report_event e;

	pair_probes(p, pp, 6);
	for (int i = 0; i < 100; i++) {
		e = feed(p, 1, 1000 * (uint64_t)i, 1, i);
		stats_event(s, &e);
		e = feed(p, 2, 1000 * (uint64_t)i + 1000 * (uint64_t)(i + 1) / 10, 1, 0);
		stats_event(s, &e);
	}
	stats_write(s, &b, 1000000000, false);
	/* latencies 100, 200, ... 10000 ns: p50 5000, p90 9000, p99 9900 */
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC        CALLS      RATE/s        P50        P90        P99        MAX\n"
		"main.f        100       100.0    5.000us    9.000us    9.900us   10.000us\n");
	buf_free(&b);
	stats_free(s);
	pair_free(p);
}

/* ------------------------------------------------------------ time */

Test(pair, time_parsing)
{
	struct rtime t;
	char err[200];
	int64_t ns, mono;
	struct gtr_host h = { .start_mono_ns = 5000000000ull,
			      .start_realtime_ns = 1714564800000000000ull };

	setenv("TZ", "UTC", 1);
	tzset();
	cr_expect_eq(rtime_duration("250ms", 5, &ns, err, sizeof(err)), 5);
	cr_expect_eq(ns, 250000000);
	cr_expect_eq(rtime_duration("42", 2, &ns, err, sizeof(err)), 0, "a plain integer");
	cr_expect_eq(rtime_duration("1.5", 3, &ns, err, sizeof(err)), -1);
	cr_expect_eq(rtime_parse("+5s", &t, err, sizeof(err)), 0);
	cr_expect(t.kind == RTIME_REL && t.ns == 5000000000);
	cr_expect(rtime_to_mono(&t, &h, 7, &mono) && mono == 5000000007);
	cr_expect_eq(rtime_parse("2024-05-01T12:00:01.5Z", &t, err, sizeof(err)), 0);
	cr_expect(rtime_to_mono(&t, &h, 0, &mono) && mono == 6500000000);
	cr_expect_eq(rtime_parse("12:00:02", &t, err, sizeof(err)), 0);
	cr_expect(rtime_to_mono(&t, &h, 0, &mono) && mono == 7000000000);
	cr_expect_eq(rtime_parse("5s", &t, err, sizeof(err)), -1);
	cr_expect(strstr(err, "+DURATION"), "%s", err);
	cr_expect_eq(rtime_parse("+", &t, err, sizeof(err)), -1);
	cr_expect_eq(rtime_parse("25:00", &t, err, sizeof(err)), -1);
	h.start_realtime_ns = 0;
	cr_expect_eq(rtime_parse("12:00:02", &t, err, sizeof(err)), 0);
	cr_expect(!rtime_to_mono(&t, &h, 0, &mono));
	char d[24];
	cr_expect_str_eq(rtime_fmt_duration(d, 999), "999ns");
	cr_expect_str_eq(rtime_fmt_duration(d, 1500), "1.500us");
	cr_expect_str_eq(rtime_fmt_duration(d, 2500000), "2.500ms");
	cr_expect_str_eq(rtime_fmt_duration(d, 3000000000ull), "3.000s");
}

/* ------------------------------------------------------------ unwound calls */

struct seen {
	int n;
	int64_t v[4];
	uint64_t end[4];
	uint32_t depth[4], nstack[4], cpu[4];
	uint64_t stack0[4];
};

static void note_call(void *arg, const struct report_event *e, uint64_t end_ns)
{
	struct seen *s = arg;

	cr_assert_lt(s->n, 4);
	s->v[s->n] = e->ev->vals[0].v.i;
	s->end[s->n] = end_ns;
	s->depth[s->n] = e->depth;
	s->nstack[s->n] = e->ev->nstack;
	s->stack0[s->n] = e->ev->nstack ? e->ev->stack[0] : 0;
	s->cpu[s->n] = e->ev->cpu;
	s->n++;
}

Test(pair, calls_closed_over_are_reported_as_unwound)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;
	struct pair_counts c;
	struct seen s = { 0 };
	static const uint64_t st[] = { 0x401234, 0x401500 };

	pair_probes(p, pp, 6);
	feed(p, 1, 100, 1, 1);              /* f(1): safe */
	ev.stack = NULL;
	feed(p, 3, 110, 1, 2);              /*   g(2): boom, panics */
	/* g(3), with a recorded stack, on cpu 2 */
	struct report_event in = { .ev = &ev, .probe = &probes[2], .comm = "app" };
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 120;
	ev.probe_id = 3;
	ev.kind = GTR_KIND_ENTRY;
	ev.pid = 10;
	ev.tid = 11;
	ev.goid = 1;
	ev.cpu = 2;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = 3;
	ev.stack = st;
	ev.nstack = 2;
	pair_event(p, &in);
	cr_expect(in.tracked);
	cr_expect_eq(pair_foreach_unwound(p, note_call, &s), 0, "after an entry: nothing");

	e = feed(p, 2, 150, 1, -1);         /* f returns: g(3) and g(2) were unwound */
	cr_expect(e.entry && e.latency_ns == 50);
	cr_expect_eq(pair_foreach_unwound(p, note_call, &s), 2);
	cr_assert_eq(s.n, 2);
	cr_expect(s.v[0] == 3 && s.v[1] == 2, "innermost first");
	cr_expect(s.end[0] == 150 && s.end[1] == 150, "they end at the outer return");
	cr_expect(s.depth[0] == 2 && s.depth[1] == 1);
	cr_expect(s.nstack[0] == 2 && s.stack0[0] == 0x401234, "the entry's stack is kept");
	cr_expect_eq(s.cpu[0], 2);
	cr_expect_eq(s.nstack[1], 0);
	/* the paired return's entry is intact */
	cr_expect_eq(e.entry->vals[0].v.i, 1);
	pair_counts(p, &c);
	cr_expect_eq(c.abandoned, 2);
	cr_expect_eq(c.open, 0);

	/* the next event forgets them */
	s.n = 0;
	feed(p, 1, 200, 1, 4);
	e = feed(p, 2, 210, 1, 0);
	cr_expect(e.entry);
	cr_expect_eq(pair_foreach_unwound(p, note_call, &s), 0);

	/* open calls keep their stack too */
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 300;
	ev.probe_id = 3;
	ev.kind = GTR_KIND_ENTRY;
	ev.pid = 10;
	ev.tid = 11;
	ev.goid = 1;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = 5;
	ev.stack = st;
	ev.nstack = 2;
	pair_event(p, &in);
	memset(&ev, 0, sizeof(ev));         /* the caller's event is gone */
	s.n = 0;
	pair_foreach_open(p, note_call, &s);
	cr_assert_eq(s.n, 1);
	cr_expect(s.v[0] == 5 && s.nstack[0] == 2 && s.stack0[0] == 0x401234 && s.end[0] == 0);
	pair_free(p);
}

Test(pair, stats_by_integer_sorts_numerically)
{
	struct pairer *p = pair_new(NULL);
	struct filter_error err;
	struct filter *by = filter_compile_field("goarg1", &err);
	struct stats *s;
	struct buf b = BUF_INIT;
	struct report_event e;
	const int64_t vals[] = { 1000, 14, -3, 2, 14 };

	cr_assert(by);
	s = stats_new(by, "goarg1", 0);
	pair_probes(p, pp, 6);
	for (int i = 0; i < 5; i++) {
		e = feed(p, 5, 100 * (uint64_t)i, 1, vals[i]);
		stats_event(s, &e);
	}
	stats_write(s, &b, 0, false);
	/* 14 has two calls: first; then by value, as numbers */
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC   goarg1      CALLS      RATE/s        P50        P90        P99        MAX\n"
		"main.h 14              2           -          -          -          -          -\n"
		"main.h -3              1           -          -          -          -          -\n"
		"main.h 2               1           -          -          -          -          -\n"
		"main.h 1000            1           -          -          -          -          -\n");
	buf_free(&b);
	stats_free(s);
	filter_free(by);
	pair_free(p);
}

/* ------------------------------------------------------------ losses */

/*
 * Loss-aware pairing. Events go in with pair_push() and drop records with
 * pair_drop(); what pair_next() releases is written down as tokens:
 *   e100        an entry at ts 100
 *   r150<100    a return at 150 paired with the entry at 100
 *   r150!       a return at 150 shown alone as lost
 *   r150?       a return at 150 without entry (not lost)
 *   l100        an entry at 100 shown alone as lost (pair_foreach_unwound)
 *   u110        an entry at 110 closed over by that return (unwound)
 */
struct tape {
	char s[2048];
	char prev[48], last[48];  /* the last two tokens */
	uint64_t max_latency;
	int released;
};

static void tape_put(struct tape *t, const char *tok)
{
	if (t->s[0])
		strncat(t->s, " ", sizeof(t->s) - strlen(t->s) - 1);
	strncat(t->s, tok, sizeof(t->s) - strlen(t->s) - 1);
	memcpy(t->prev, t->last, sizeof(t->prev));
	snprintf(t->last, sizeof(t->last), "%s", tok);
}

static void tape_alone(void *arg, const struct report_event *e, uint64_t end_ns)
{
	char tok[48];

	snprintf(tok, sizeof(tok), "%c%llu", e->lost ? 'l' : 'u',
		 (unsigned long long)e->ev->ts_ns);
	cr_expect(e->lost ? end_ns == e->ev->ts_ns : end_ns > e->ev->ts_ns,
		  "a lost call ends where it began, an unwound one at the outer return");
	tape_put(arg, tok);
}

/* Writes down event `e` as released (after its pair_next() or at once). */
static void tape_event(struct pairer *p, struct tape *t, struct report_event e)
{
	const struct gtr_event *ev = e.ev;
	char tok[48];

	if (ev->kind == GTR_KIND_RETURN)
		pair_foreach_unwound(p, tape_alone, t);
	if (ev->kind == GTR_KIND_ENTRY)
			snprintf(tok, sizeof(tok), "e%llu", (unsigned long long)ev->ts_ns);
		else if (e.entry)
			snprintf(tok, sizeof(tok), "r%llu<%llu", (unsigned long long)ev->ts_ns,
				 (unsigned long long)e.entry->ts_ns);
	else
		snprintf(tok, sizeof(tok), "r%llu%c", (unsigned long long)ev->ts_ns,
			 e.lost ? '!' : '?');
	cr_expect(!(e.entry && e.lost), "a lost return has no entry");
	/* the return carries its own value: the call it belongs to */
	if (e.entry) {
		cr_expect_eq(e.entry->vals[0].v.i, ev->vals[0].v.i,
			     "r%llu paired with another call's entry",
			     (unsigned long long)ev->ts_ns);
		if (e.latency_ns > t->max_latency)
			t->max_latency = e.latency_ns;
	}
	tape_put(t, tok);
	t->released++;
}

/* Releases what pair_next() gives, onto the tape; returns how many. */
static int drain(struct pairer *p, struct tape *t)
{
	struct report_event e;
	int n = 0;

	while (pair_next(p, &e)) {
		tape_event(p, t, e);
		n++;
	}
	return n;
}

/* Pushes an event of probe `probe` at `ts` on goroutine `goid`; `call`
 * names the call it belongs to (its entry and return carry it). An event
 * final at once goes on the tape, after what pair_next() has to give. */
static void put(struct pairer *p, struct tape *t, uint32_t probe, uint64_t ts, uint64_t goid,
		int64_t call)
{
	struct report_event e = { .ev = &ev, .probe = &probes[probe - 1], .comm = "app" };

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.probe_id = probe;
	ev.kind = probes[probe - 1].kind;
	ev.pid = 10;
	ev.tid = 11;
	ev.goid = goid;
	ev.cpu = 0;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = call;
	if (pair_push(p, &e)) {
		drain(p, t);
		tape_event(p, t, e);
	}
	memset(&ev, 0xa5, sizeof(ev));      /* the caller's event is gone */
}

static void lose(struct pairer *p, uint32_t probe, uint32_t cpu, uint64_t since, uint64_t ts,
		 uint64_t count)
{
	const struct gtr_drop d = {
		.ts_ns = ts, .probe_id = probe, .count = count, .cpu = cpu, .since_ns = since,
	};
	pair_drop(p, &d);
}

static struct pairer *lossy(uint64_t hold_ns)
{
	const struct pair_limits lim = { .hold_ns = hold_ns };
	struct pairer *p = pair_new(&lim);

	pair_probes(p, pp, 6);
	return p;
}

/*
 * The reported bug: f(2)'s return and f(3)'s entry are lost; without the
 * drop records f(3)'s return closes f(2)'s entry (a latency of 150, f(2)'s
 * arguments with f(3)'s result). With them both halves stand alone.
 */
Test(pair, loss_in_the_middle_of_calls_splits_the_pair)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };
	struct pair_counts c;

	put(p, &t, 1, 100, 1, 1);
	put(p, &t, 2, 150, 1, 1);
	put(p, &t, 1, 300, 1, 2);
	/* lost: f(2) returns at 350, f(3) enters at 400 */
	put(p, &t, 2, 450, 1, 3);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100", "returns wait for the drop records");
	/* noticed later, at 500, for the span since 320 */
	lose(p, 2, 0, 320, 500, 1);
	lose(p, 1, 0, 320, 500, 1);
	put(p, &t, 1, 5000, 1, 4);
	put(p, &t, 2, 5050, 1, 4);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100 r150<100 e300 l300 r450! e5000");
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100 r150<100 e300 l300 r450! e5000 r5050<5000");
	cr_expect_eq(t.max_latency, 50, "never longer than a real call");
	pair_counts(p, &c);
	cr_expect_eq(c.paired, 2);
	cr_expect_eq(c.lost_returns, 1);
	cr_expect_eq(c.lost_entries, 1);
	cr_expect_eq(c.unpaired_returns, 0);
	cr_expect_eq(c.late, 0);
	cr_expect_eq(c.held, 0);
	pair_free(p);

	/* the same events without drop records: the wrong pair, as before */
	p = lossy(1000);
	memset(&t, 0, sizeof(t));
	put(p, &t, 1, 300, 1, 2);
	put(p, &t, 2, 450, 1, 3);
	pair_finish(p);
	struct report_event e;
	cr_assert(pair_next(p, &e));
	cr_expect(e.entry && e.latency_ns == 150 && !e.lost);
	cr_expect_str_eq(t.s, "e300");
	pair_free(p);
}

/* A span meets a call when it starts at or before its return and ends at
 * or after its entry: the bounds count. */
Test(pair, losses_before_and_after_a_call_leave_it_paired)
{
	static const struct {
		uint64_t since, ts;
		const char *tape;
	} cases[] = {
		{ 10, 99, "e100 r150<100" },      /* ends before the entry */
		{ 10, 100, "e100 l100 r150!" },   /* ends at the entry */
		{ 120, 130, "e100 l100 r150!" },  /* inside */
		{ 10, 1000, "e100 l100 r150!" },  /* around */
		{ 150, 200, "e100 l100 r150!" },  /* starts at the return */
		{ 151, 200, "e100 r150<100" },    /* starts after it */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pairer *p = lossy(1000);
		struct tape t = { 0 };
		put(p, &t, 1, 100, 1, 1);
		put(p, &t, 2, 150, 1, 1);
		lose(p, 1, 3, cases[i].since, cases[i].ts, 2);
		pair_finish(p);
		drain(p, &t);
		cr_expect_str_eq(t.s, cases[i].tape, "span [%llu, %llu]",
				 (unsigned long long)cases[i].since, (unsigned long long)cases[i].ts);
		pair_free(p);
	}
}

/* since_ns 0: the span reaches back to the previous drop record of the
 * same probe and cpu, else to the start of the trace. */
Test(pair, unknown_since_reaches_back_to_the_previous_record)
{
	struct pairer *p = lossy(100000);
	struct tape t = { 0 };

	put(p, &t, 1, 100, 1, 1);
	put(p, &t, 2, 150, 1, 1);
	lose(p, 2, 0, 900, 1000, 1);       /* [900, 1000] */
	put(p, &t, 1, 1500, 1, 2);
	put(p, &t, 2, 1600, 1, 2);
	lose(p, 2, 0, 0, 3000, 1);         /* [1000, 3000]: f(2) */
	lose(p, 2, 1, 0, 800, 0);          /* cpu 1, nothing lost: only its time */
	put(p, &t, 1, 3500, 1, 3);
	put(p, &t, 2, 3600, 1, 3);
	lose(p, 2, 1, 0, 4000, 1);         /* [800, 4000]: f(3), not f(1) */
	put(p, &t, 1, 4500, 1, 4);
	put(p, &t, 2, 4600, 1, 4);
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100 r150<100 e1500 l1500 r1600! e3500 l3500 r3600! e4500 r4600<4500");
	pair_free(p);

	/* a first record without since_ns: back to the start */
	p = lossy(100000);
	memset(&t, 0, sizeof(t));
	put(p, &t, 1, 100, 1, 1);
	put(p, &t, 2, 150, 1, 1);
	lose(p, 1, 2, 0, 5000, 1);
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100 l100 r150!");
	pair_free(p);
}

/* Losses are per function, not per goroutine: a loss of f's return probe
 * makes every call of f across it unsure, on any goroutine; g is not
 * concerned; a drop record of no known probe concerns every function. */
Test(pair, losses_concern_every_goroutine_of_the_function)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };
	struct pair_counts c;

	put(p, &t, 1, 100, 2, 21);             /* goroutine 2: f before the loss */
	put(p, &t, 2, 200, 2, 21);
	put(p, &t, 1, 250, 1, 11);             /* goroutine 1: f across it */
	put(p, &t, 3, 300, 3, 31);             /* goroutine 3: g across it */
	put(p, &t, 2, 350, 1, 11);
	put(p, &t, 1, 380, 2, 22);             /* goroutine 2: f across its end */
	put(p, &t, 4, 400, 3, 31);
	put(p, &t, 2, 500, 2, 22);
	lose(p, 2, 0, 300, 390, 4);
	put(p, &t, 1, 600, 1, 12);             /* goroutine 1: f after it */
	put(p, &t, 2, 610, 1, 12);
	put(p, &t, 3, 650, 3, 32);             /* g across an unknown probe's loss */
	put(p, &t, 4, 660, 3, 32);
	lose(p, UINT32_MAX, GTR_CPU_UNKNOWN, 640, 700, 1);
	put(p, &t, 3, 900, 3, 33);
	put(p, &t, 4, 910, 3, 33);
	lose(p, 5, 0, 890, 920, 1);        /* h has no return probe: not paired */
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100 r200<100 e250 e300 l250 r350! e380 r400<300 l380 r500! "
			 "e600 r610<600 e650 l650 r660! e900 r910<900");
	pair_counts(p, &c);
	cr_expect(c.paired == 4 && c.lost_returns == 3 && c.lost_entries == 3);
	pair_free(p);
}

/* Calls closed over by an outer return are unwound unless their function
 * lost events meanwhile (their return may be among them); calls open at
 * the end likewise; a return without entry is lost after a loss of its
 * function (its entry may be among them). */
Test(pair, unwound_open_and_unpaired_calls_across_losses)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };
	struct pair_counts c;
	struct seen s = { 0 };

	put(p, &t, 2, 50, 1, 0);               /* no entry, no loss before it */
	put(p, &t, 1, 100, 1, 1);              /* f */
	put(p, &t, 3, 110, 1, 2);              /*   g: its return is lost */
	put(p, &t, 3, 120, 1, 3);              /*     g: unwound (a panic) */
	lose(p, 4, 0, 112, 118, 1);
	put(p, &t, 2, 200, 1, 1);              /* f returns over both */
	put(p, &t, 4, 300, 2, 0);              /* g without entry, after g's loss */
	put(p, &t, 1, 1000, 1, 4);             /* f, open at the end, across a loss */
	put(p, &t, 3, 1010, 1, 5);             /* g, open at the end */
	lose(p, 2, 0, 1100, 1200, 1);
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "r50? e100 e110 e120 u120 l110 r200<100 r300! e1000 e1010");
	pair_counts(p, &c);
	cr_expect_eq(c.paired, 1);
	cr_expect_eq(c.abandoned, 1);
	cr_expect_eq(c.unpaired_returns, 1);
	cr_expect_eq(c.lost_returns, 1);
	cr_expect_eq(c.lost_entries, 2, "g(2), and f(4) open at the end");
	cr_expect_eq(c.lost_open, 1);
	cr_expect_eq(c.open, 2);
	pair_foreach_open(p, note_call, &s);
	cr_assert_eq(s.n, 2);
	cr_expect(s.v[0] == 4 && s.v[1] == 5);
	pair_free(p);
}

/* Who is lost in open calls, as pair_foreach_open() tells it. */
static void note_lost(void *arg, const struct report_event *e, uint64_t end_ns)
{
	(void)end_ns;
	tape_put(arg, e->lost ? "lost" : "open");
}

Test(pair, open_calls_are_lost_when_their_function_lost_events_after_them)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };

	put(p, &t, 1, 1000, 1, 4);
	put(p, &t, 3, 1010, 1, 5);
	put(p, &t, 1, 1020, 1, 6);
	lose(p, 1, 0, 1015, 1200, 1);       /* f's entry probe, after f(4) */
	pair_finish(p);
	cr_expect_str_eq(t.s, "e1000 e1010 e1020");
	memset(&t, 0, sizeof(t));
	pair_foreach_open(p, note_lost, &t);
	cr_expect_str_eq(t.s, "lost open lost");
	pair_free(p);
}

/* Returns wait hold_ns of trace time (events or drop records) after them,
 * and everything after a held return waits behind it: file order. */
Test(pair, returns_are_held_for_hold_ns_and_released_in_file_order)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };
	struct pair_counts c;

	put(p, &t, 1, 100, 1, 1);
	cr_expect_str_eq(t.s, "e100", "an entry goes at once");
	put(p, &t, 2, 200, 1, 1);
	put(p, &t, 1, 300, 1, 2);
	put(p, &t, 5, 1199, 2, 0);
	cr_expect_eq(drain(p, &t), 0);
	pair_counts(p, &c);
	cr_expect_eq(c.held, 3);
	lose(p, 3, 0, 1100, 1200, 1);       /* a drop record's time counts too */
	cr_expect_eq(drain(p, &t), 3);
	cr_expect_str_eq(t.s, "e100 r200<100 e300 e1199");
	put(p, &t, 2, 1300, 1, 2);
	put(p, &t, 1, 2299, 1, 3);
	cr_expect_eq(drain(p, &t), 0);
	put(p, &t, 1, 2300, 1, 4);
	cr_expect_eq(drain(p, &t), 3);
	cr_expect_str_eq(t.s, "e100 r200<100 e300 e1199 r1300<300 e2299 e2300");
	pair_counts(p, &c);
	cr_expect_eq(c.held, 0);
	pair_free(p);
}

/* A drop record whose span is longer than hold_ns makes later returns
 * wait twice that span. */
Test(pair, long_drop_spans_lengthen_the_hold)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };

	lose(p, 5, 0, 10000, 15000, 1);     /* a 5000 ns span */
	put(p, &t, 1, 20000, 1, 1);
	put(p, &t, 2, 20100, 1, 1);
	put(p, &t, 5, 25000, 1, 0);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e20000", "held 10000, not 1000");
	lose(p, 2, 0, 20050, 29000, 1);     /* 8950 ns: now held 17900 */
	put(p, &t, 5, 37999, 1, 0);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e20000");
	put(p, &t, 5, 38000, 1, 0);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e20000 l20000 r20100! e25000 e37999 e38000");
	pair_free(p);
}

/* Memory: beyond hold_bytes returns go early (counted); a drop record that
 * comes after a call it may concern was released counts as late. */
Test(pair, hold_bytes_bound_memory_and_late_records_are_counted)
{
	const struct pair_limits lim = { .hold_ns = 1000000, .hold_bytes = 256 << 10 };
	struct pairer *p = pair_new(&lim);
	struct tape t = { 0 };
	struct pair_counts c;
	pair_probes(p, pp, 6);
	/* 100000 calls of 10 ns, 1 us apart: 100 ms of trace, 1000 times
	 * more than the hold bytes keep */
	for (int i = 0; i < 100000; i++) {
		put(p, &t, 1, 1000 + (uint64_t)i * 1000, 1, i);
		put(p, &t, 2, 1010 + (uint64_t)i * 1000, 1, i);
		t.s[0] = 0;
		drain(p, &t);
		pair_counts(p, &c);
		cr_assert_leq(c.held * 64, 2 * lim.hold_bytes, "held %llu events",
			      (unsigned long long)c.held);
	}
	pair_counts(p, &c);
	cr_expect_gt(c.early, 90000);
	cr_expect_eq(c.late, 0);
	/* a loss in the first calls, known only now: late */
	lose(p, 2, 0, 1500, 2500, 1);
	pair_counts(p, &c);
	cr_expect_eq(c.late, 1);
	/* one in the calls still held is not late, and they are lost */
	lose(p, 2, 0, 100000005, 100000600, 1);
	pair_counts(p, &c);
	cr_expect_eq(c.late, 1);
	pair_finish(p);
	t.s[0] = 0;
	drain(p, &t);
	cr_expect_eq(t.released, 200000);
	pair_counts(p, &c);
	cr_expect_eq(c.paired + c.lost_returns, 100000);
	cr_expect_eq(c.lost_returns, 1);
	cr_expect_str_eq(t.prev, "l100000000");
	cr_expect_str_eq(t.last, "r100000010!");
	pair_free(p);
}

/* Many loss spans: the oldest merge (more calls lost, never a wrong pair);
 * the recent ones stay exact. */
Test(pair, loss_spans_are_bounded)
{
	struct pairer *p = lossy(1000);
	struct tape t = { 0 };

	for (uint64_t i = 0; i < 100; i++)
		lose(p, 2, 0, 10000 * i + 1000, 10000 * i + 2000, 1);
	put(p, &t, 1, 5000, 1, 1);             /* between the first two: merged */
	put(p, &t, 2, 5100, 1, 1);
	put(p, &t, 1, 995000, 1, 2);           /* between the last two: exact */
	put(p, &t, 2, 995100, 1, 2);
	put(p, &t, 1, 991500, 2, 3);           /* in the last but one */
	put(p, &t, 2, 991600, 2, 3);
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e5000 l5000 r5100! e995000 r995100<995000 e991500 l991500 r991600!");
	pair_free(p);
}

/* Feeds the events pairing releases to folded stacks and stats. */
static void consume(struct pairer *p, struct folded *f, struct stats *s)
{
	struct report_event e;

	while (pair_next(p, &e)) {
		folded_call(f, p, NULL, &e, true);
		stats_event(s, &e);
	}
}

/* Folded stacks and stats count only the pairs that stand: a lost call
 * adds no time and no latency, and stats counts it apart. */
Test(pair, folded_and_stats_leave_lost_calls_out)
{
	const struct pair_limits lim = { .hold_ns = 1000, .unordered = true };
	struct pairer *p = pair_new(&lim);
	struct folded *f = folded_new(0);
	struct stats *s = stats_new(NULL, NULL, 0);
	struct buf b = BUF_INIT;
	static const struct { uint32_t probe; uint64_t ts; } evs[] = {
		{ 1, 1000 },                   /* f(1): 1000 */
		{ 3, 1100 }, { 4, 1200 },      /*   g(2): 100 */
		{ 3, 1300 }, { 4, 1400 },      /*   g(3): lost */
		{ 2, 2000 },
	};

	pair_probes(p, pp, 6);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct report_event e = { .ev = &ev, .probe = &probes[evs[i].probe - 1] };
		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = evs[i].ts;
		ev.probe_id = evs[i].probe;
		ev.kind = probes[evs[i].probe - 1].kind;
		ev.pid = 10;
		ev.tid = 11;
		ev.goid = 1;
		const bool now = pair_push(p, &e);
		cr_expect_eq(now, ev.kind == GTR_KIND_ENTRY, "unordered: entries go at once");
		consume(p, f, s);
		if (now) {
			folded_call(f, p, NULL, &e, true);
			stats_event(s, &e);
		}
	}
	lose(p, 3, 0, 1250, 1350, 1);
	pair_finish(p);
	consume(p, f, s);
	folded_write(f, &b);
	/* f's self time keeps the lost g(3)'s 100, as for an unwound call */
	cr_expect_str_eq(buf_cstr(&b), "main.f 900\nmain.f;main.g 100\n");
	buf_reset(&b);
	stats_write(s, &b, 0, false);
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC        CALLS       LOST      RATE/s        P50        P90        P99        MAX\n"
		"main.g          2          1           -      100ns      100ns      100ns      100ns\n"
		"main.f          1          0           -    1.000us    1.000us    1.000us    1.000us\n");
	buf_free(&b);
	stats_free(s);
	folded_free(f);
	pair_free(p);
}

/* pair_event() releases at once, with the losses fed so far. */
Test(pair, pair_event_uses_the_losses_known)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;

	pair_probes(p, pp, 6);
	e = feed(p, 1, 100, 1, 1);
	lose(p, 1, 0, 120, 130, 1);
	e = feed(p, 2, 150, 1, 1);
	cr_expect(e.lost && !e.entry);
	e = feed(p, 1, 200, 1, 2);
	e = feed(p, 2, 250, 1, 2);
	cr_expect(!e.lost && e.entry && e.latency_ns == 50);
	pair_free(p);
}

/* Held events keep their strings and stacks whole, also events larger
 * than a chunk of the queue, and come back intact in file order. */
Test(pair, held_events_are_copied_whole)
{
	struct pairer *p = lossy(1000);
	static uint8_t big[3][65536];
	static const uint64_t st[] = { 0x401234, 0x401500, 0x401600 };
	struct report_event e;
	uint64_t ts = 100;

	for (int k = 0; k < 3; k++)
		memset(big[k], 'a' + k, sizeof(big[k]));
	/* entries 0, 4, 8... and returns 3, 7, 11... of 3 x 64 KiB */
#define BIG(i) ((i) % 4 == 0 || (i) % 4 == 3)
	for (int i = 0; i < 20; i++) {
		const uint32_t probe = i % 2 ? 2 : 1;
		struct report_event in = fixture_event(&ev, &probes[probe - 1], ts, 1);
		in.comm = "worker";
		ev.nvals = BIG(i) ? 3 : 1;
		for (uint32_t k = 0; k < ev.nvals; k++) {
			ev.vals[k].kind = GTR_VAL_STR;
			ev.vals[k].v.s.data = big[k];
			ev.vals[k].v.s.len = BIG(i) ? 65536 : 10 + (uint32_t)i;
			ev.vals[k].v.s.full_len = 100000;
		}
		ev.stack = st;
		ev.nstack = 3;
		/* the first entry: nothing held yet, it goes at once */
		cr_expect_eq(pair_push(p, &in), i == 0);
		memset(&ev, 0, sizeof(ev));
		ts += 10;
	}
	pair_finish(p);
	for (int i = 1; i < 20; i++) {
		cr_assert(pair_next(p, &e), "event %d", i);
		cr_expect_eq(e.ev->ts_ns, 100 + 10 * (uint64_t)i);
		cr_expect_str_eq(e.comm, "worker");
		cr_expect(e.ev->nstack == 3 && e.ev->stack[2] == 0x401600);
		cr_expect_eq(e.ev->nvals, BIG(i) ? 3u : 1u);
		for (uint32_t k = 0; k < e.ev->nvals; k++) {
			const struct gtr_value *v = &e.ev->vals[k];
			const uint32_t len = BIG(i) ? 65536 : 10 + (uint32_t)i;
			cr_assert(v->kind == GTR_VAL_STR && v->v.s.len == len &&
				  v->v.s.full_len == 100000);
			cr_expect(!memcmp(v->v.s.data, big[k], len), "event %d value %u", i, k);
		}
		if (i % 2) {
			/* its entry: as kept open, strings cut to --keep-string */
			const uint32_t len = BIG(i - 1) ? 256 : 10 + (uint32_t)i - 1;
			cr_assert(e.entry, "return %d paired", i);
			cr_assert_eq(e.entry->nvals, BIG(i - 1) ? 3u : 1u);
			cr_assert_eq(e.entry->vals[0].v.s.len, len);
			cr_expect(!memcmp(e.entry->vals[0].v.s.data, big[0], len));
			cr_expect_eq(e.entry->vals[0].v.s.full_len, 100000u);
			cr_expect_eq(e.entry->nstack, 3u);
		}
	}
	cr_expect(!pair_next(p, &e));
#undef BIG
	pair_free(p);
}

/* unordered: entries of tracked functions go out at once, ahead of held
 * returns; events of untracked functions keep their place; the verdicts
 * are the same. */
Test(pair, unordered_entries_go_at_once)
{
	const struct pair_limits lim = { .hold_ns = 1000, .unordered = true };
	struct pairer *p = pair_new(&lim);
	struct tape t = { 0 };
	struct pair_counts c;

	pair_probes(p, pp, 6);
	put(p, &t, 1, 100, 1, 1);
	put(p, &t, 2, 200, 1, 1);
	put(p, &t, 1, 300, 1, 2);
	put(p, &t, 5, 310, 1, 0);           /* h: no return probe, waits */
	put(p, &t, 1, 400, 1, 3);
	put(p, &t, 2, 500, 1, 3);
	cr_expect_str_eq(t.s, "e100 e300 e400");
	lose(p, 2, 0, 350, 450, 1);
	pair_finish(p);
	drain(p, &t);
	cr_expect_str_eq(t.s, "e100 e300 e400 r200<100 e310 l400 r500!");
	pair_counts(p, &c);
	/* f(2), open at the end, lost too: f lost events after its entry */
	cr_expect(c.paired == 1 && c.lost_returns == 1 && c.lost_entries == 2 && c.open == 1 &&
		  c.lost_open == 1);
	pair_free(p);
}

/* A return shown as lost still closed a call: the paired calls made under
 * it are its caller's callees, not those of the next call at its depth. */
Test(pair, folded_passes_the_callees_of_a_lost_call_up)
{
	struct pairer *p = lossy(1000);
	struct folded *f = folded_new(0);
	struct stats *s = stats_new(NULL, NULL, 0);
	struct tape t = { 0 };
	struct buf b = BUF_INIT;

	put(p, &t, 1, 1000, 1, 1);         /* f */
	put(p, &t, 3, 1100, 1, 2);         /*   g: lost */
	put(p, &t, 3, 1200, 1, 3);         /*     g: 50 */
	put(p, &t, 4, 1250, 1, 3);
	put(p, &t, 4, 1500, 1, 2);
	put(p, &t, 3, 1600, 1, 4);         /*   g: 100 */
	put(p, &t, 4, 1700, 1, 4);
	put(p, &t, 2, 2000, 1, 1);         /* f: 1000 */
	lose(p, 4, 0, 1300, 1400, 1);
	pair_finish(p);
	consume(p, f, s);
	folded_write(f, &b);
	cr_expect_str_eq(buf_cstr(&b), "main.f 850\nmain.f;main.g 100\nmain.f;main.g;main.g 50\n");
	buf_free(&b);
	stats_free(s);
	folded_free(f);
	pair_free(p);
}

/* A file whose summary counts no loss: nothing waits, returns go out at
 * once from the goroutine's memory; a drop record all the same (a file
 * that contradicts its summary) is counted as late. */
Test(pair, lossless_files_hold_nothing)
{
	const struct pair_limits lim = { .lossless = true };
	struct pairer *p = pair_new(&lim);
	struct tape t = { 0 };
	struct pair_counts c;
	struct report_event e;

	pair_probes(p, pp, 6);
	put(p, &t, 1, 100, 1, 1);
	put(p, &t, 3, 110, 1, 2);          /* unwound */
	put(p, &t, 2, 200, 1, 1);
	put(p, &t, 2, 300, 2, 9);          /* no entry */
	cr_expect_str_eq(t.s, "e100 e110 u110 r200<100 r300?");
	cr_expect(!pair_next(p, &e));
	pair_counts(p, &c);
	cr_expect(c.held == 0 && c.paired == 1 && c.abandoned == 1 && c.unpaired_returns == 1);
	lose(p, 2, 0, 150, 250, 1);
	pair_counts(p, &c);
	cr_expect_eq(c.late, 1);
	pair_free(p);
}
