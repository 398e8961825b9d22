/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of entry/return pairing (report/pair.h), statistics
 * (report/stats.h), folded stacks (report/folded.h) and time literals
 * (report/timeparse.h) on synthetic events.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "folded.h"
#include "pair.h"
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
		probes[i].func = (char *)funcs[i];
		probes[i].fmt = (char *)"";
		pp[i] = &probes[i];
	}
}

TestSuite(pair, .init = setup);

static struct report_event feed(struct pairer *p, uint32_t probe, uint64_t ts,
				uint64_t goid, int64_t v)
{
	struct report_event e = { .ev = &ev, .probe = &probes[probe - 1], .comm = "app" };

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.probe_id = probe;
	ev.kind = probes[probe - 1].kind;
	ev.pid = 10;
	ev.tid = 11;
	ev.goid = goid;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = v;
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
