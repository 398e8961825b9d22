/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of pairing past its limits (report/pair.h): entries not
 * tracked once a goroutine's stack is full are counted, and their returns
 * stay unpaired instead of closing the outer calls of their function.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "pair.h"
#include "pair_fixture.h"

static struct gtr_probe probes[2];
static const struct gtr_probe *pp[2];
static struct gtr_event ev;

/* main.depth: entry probe 1, return probe 2 */
static void setup(void)
{
	fixture_probe_pair(probes, pp, "main.depth");
}

TestSuite(pair_depth, .init = setup);

/* Feeds an event of probe 1 (entry, value v) or 2 (return) at ts. */
static struct report_event feed(struct pairer *p, uint32_t probe, uint64_t ts, int64_t v)
{
	struct report_event e = fixture_event_int(&ev, &probes[probe - 1], ts, 1, v);

	pair_event(p, &e);
	return e;
}

/* Recursion n deep past max_depth m: the m outermost calls pair with
 * their own returns (the last m), the n - m inner returns are unpaired. */
static void recurse(uint32_t n, uint32_t m)
{
	struct pair_limits lim = { .max_depth = m };
	struct pairer *p = pair_new(&lim);
	struct pair_counts c;
	struct report_event e;

	pair_probes(p, pp, 2);
	for (uint32_t i = 0; i < n; i++) {
		e = feed(p, 1, 1000 + i, n - i);
		cr_expect_eq(e.depth, i);
		cr_expect_eq(e.tracked, i < m, "entry %u of %u tracked: %d", i, n, e.tracked);
	}
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t level = n - 1 - i;    /* the call returning */
		e = feed(p, 2, 10000 + i, 0);
		if (level >= m) {
			cr_expect_null(e.entry, "return of untracked level %u paired", level);
			continue;
		}
		cr_assert_not_null(e.entry, "return of level %u unpaired", level);
		cr_expect_eq(e.entry->vals[0].v.i, (int64_t)(n - level),
			     "level %u paired with n=%ld", level, (long)e.entry->vals[0].v.i);
		cr_expect_eq(e.latency_ns, 10000 + i - (1000 + level));
	}
	pair_counts(p, &c);
	cr_expect_eq(c.paired, m);
	cr_expect_eq(c.dropped, n - m);
	cr_expect_eq(c.over, n - m);
	cr_expect_eq(c.over_returns, n - m);
	cr_expect_eq(c.unpaired_returns, n - m);
	cr_expect_eq(c.abandoned, 0);
	cr_expect_eq(c.open, 0);
	pair_free(p);
}

Test(pair_depth, recursion_past_max_depth_pairs_outer_calls_only)
{
	recurse(1500, 1024);
	recurse(10, 4);
	recurse(4, 4);
}

/* After the stack came back under the limit, calls pair again. */
Test(pair_depth, pairs_again_below_the_limit)
{
	struct pair_limits lim = { .max_depth = 2 };
	struct pairer *p = pair_new(&lim);
	struct report_event e;
	struct pair_counts c;

	pair_probes(p, pp, 2);
	feed(p, 1, 100, 1);
	feed(p, 1, 110, 2);
	cr_expect_not(feed(p, 1, 120, 3).tracked);
	cr_expect_null(feed(p, 2, 130, 0).entry);    /* 3's */
	e = feed(p, 2, 140, 0);
	cr_expect(e.entry && e.entry->vals[0].v.i == 2 && e.latency_ns == 30);
	e = feed(p, 1, 150, 4);                      /* room again */
	cr_expect(e.tracked && e.depth == 1);
	e = feed(p, 2, 160, 0);
	cr_expect(e.entry && e.entry->vals[0].v.i == 4 && e.latency_ns == 10);
	e = feed(p, 2, 170, 0);
	cr_expect(e.entry && e.entry->vals[0].v.i == 1 && e.latency_ns == 70);
	pair_counts(p, &c);
	cr_expect_eq(c.paired, 3);
	cr_expect_eq(c.over_returns, 1);
	cr_expect_eq(c.unpaired_returns, 1);
	pair_free(p);
}

/* Entries past the limit and their returns, held for drop records
 * (pair_push/pair_next), pair the same. */
Test(pair_depth, held_returns_past_the_limit)
{
	struct pair_limits lim = { .max_depth = 1, .hold_ns = 1000 };
	struct pairer *p = pair_new(&lim);
	struct report_event e, out;
	struct pair_counts c;
	const uint32_t seq[] = { 1, 1, 2, 2 };
	uint32_t paired = 0, unpaired = 0;

	pair_probes(p, pp, 2);
	for (uint32_t i = 0; i < 4; i++) {
		e = fixture_event(&ev, &probes[seq[i] - 1], 100 + i, 1);
		pair_push(p, &e);
		while (pair_next(p, &out))
			;
	}
	pair_finish(p);
	while (pair_next(p, &out))
		if (out.ev->kind == GTR_KIND_RETURN) {
			paired += out.entry != NULL;
			unpaired += out.entry == NULL;
			if (out.entry)
				cr_expect_eq(out.latency_ns, 3);
		}
	cr_expect_eq(paired, 1);
	cr_expect_eq(unpaired, 1);
	pair_counts(p, &c);
	cr_expect_eq(c.over_returns, 1);
	pair_free(p);
}
