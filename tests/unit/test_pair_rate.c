/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of pairing (report/pair.h) under gotrace-record --rate-limit:
 * a file that says its probes' limit (gtr_probe.rate_limit) shows the
 * BPF program's one-second windows through the events they kept, so only
 * the calls that meet a window's span after its `rate`-th kept event are
 * `lost`; files that do not say it keep the drop records' spans. A
 * return probe that kept whole calls (gtr_probe.whole_calls) needs no
 * windows: every call it kept pairs.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "pair.h"
#include "pair_fixture.h"

#define S 1000000000ull

static struct gtr_probe probes[2];
static const struct gtr_probe *pp[2];
static struct gtr_event ev;

/* main.f: entry 1, return 2, at most 2 events each per second */
static void setup(void)
{
	fixture_probe_pair(probes, pp, "main.f");
	probes[0].rate_limit = probes[1].rate_limit = 2;
}

TestSuite(pair_rate, .init = setup);

/* What became of the calls fed: per return, in order, 'P' paired or 'L'
 * lost; drop records are fed where calls[] says 'D' (rate) or 'B' (ring
 * buffer), with the span [since, ts] of drops[]. */
struct call {
	char what;                /* 'C' a call, 'D'/'B' a drop record */
	uint64_t a, b;            /* entry and return times; since, ts */
	uint64_t goid;
};

static void run(const struct call *c, int n, char *out)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;
	int k = 0;

	pair_probes(p, pp, 2);
	for (int i = 0; i < n; i++) {
		if (c[i].what != 'C') {
			const struct gtr_drop d = {
				.probe_id = 1, .count = 3, .since_ns = c[i].a, .ts_ns = c[i].b,
				.cpu = GTR_CPU_UNKNOWN,
				.reason = c[i].what == 'D' ? GTR_DROP_RATE : GTR_DROP_BUFFER,
			};
			pair_drop(p, &d);
			continue;
		}
		e = fixture_event_int(&ev, &probes[0], c[i].a, c[i].goid, 1);
		pair_push(p, &e);
		e = fixture_event_int(&ev, &probes[1], c[i].b, c[i].goid, 2);
		pair_push(p, &e);
	}
	pair_finish(p);
	while (pair_next(p, &e))
		if (e.ev->kind == GTR_KIND_RETURN)
			out[k++] = e.entry ? 'P' : e.lost ? 'L' : '?';
	out[k] = 0;
	pair_free(p);
}

/* Two windows, 2 calls each then suppression (the drop record counts
 * it): the second call of each window meets its span, the first not. */
static const struct call two_windows[] = {
	{ 'C', 1000, 1010, 1 }, { 'C', 2000, 2010, 1 },
	{ 'C', S + 5000, S + 5010, 1 }, { 'C', S + 6000, S + 6010, 1 },
	{ 'D', 1, S + S / 2, 0 },
	{ 'C', 3 * S, 3 * S + 10, 1 },
};

Test(pair_rate, only_calls_after_a_full_window_can_be_split)
{
	char out[16];

	run(two_windows, 6, out);
	cr_expect_str_eq(out, "PLPLP");
}

Test(pair_rate, without_the_limit_in_the_file_drop_records_decide)
{
	char out[16];

	probes[0].rate_limit = probes[1].rate_limit = 0;   /* older recorders */
	run(two_windows, 6, out);
	cr_expect_str_eq(out, "LLLLP", "the drop record's span covers both windows");
}

Test(pair_rate, a_drop_record_written_before_the_events_it_follows_waits_for_them)
{
	/* the recorder read the count at S + 9000 while the second
	 * window's calls were still in the ring buffer: the record comes
	 * before them in the file, and the third call, which filled the
	 * window, explains it; only that call can have been split */
	static const struct call c[] = {
		{ 'C', 1000, 1010, 1 }, { 'D', S / 2, S + 9000, 0 },
		{ 'C', S + 5000, S + 5010, 1 }, { 'C', S + 6000, S + 6010, 1 },
		{ 'C', 3 * S, 3 * S + 10, 1 },
	};
	char out[16];

	run(c, 5, out);
	cr_expect_str_eq(out, "PPLP");
	/* the same record with no window filling at all: its span stands */
	static const struct call d[] = {
		{ 'C', 1000, 1010, 1 }, { 'D', S / 2, S + 9000, 0 },
		{ 'C', S + 5000, S + 5010, 1 }, { 'C', 3 * S, 3 * S + 10, 1 },
	};
	run(d, 4, out);
	cr_expect_str_eq(out, "PLP");
}

Test(pair_rate, a_suppression_no_window_explains_keeps_its_span)
{
	/* one call a second: no window ever fills, yet a record says the
	 * limit suppressed something: the model is wrong, the span stands */
	static const struct call c[] = {
		{ 'C', 1000, 1010, 1 }, { 'C', S + 2000, S + 2010, 1 },
		{ 'D', 1, S + S / 2, 0 }, { 'C', 3 * S, 3 * S + 10, 1 },
	};
	char out[16];

	run(c, 4, out);
	cr_expect_str_eq(out, "LLP");
}

Test(pair_rate, a_window_opened_by_two_goroutines_at_once_is_not_reckoned)
{
	/* goroutines 1 and 2 within 1 ms where a window opens: which
	 * counted first is unsure, so the drop records' spans stand */
	static const struct call c[] = {
		{ 'C', 1000, 1010, 1 }, { 'C', 1500, 1600, 2 },
		{ 'D', 1, S / 2, 0 }, { 'C', 2 * S, 2 * S + 10, 1 },
	};
	char out[16];

	run(c, 4, out);
	cr_expect_str_eq(out, "LLP");
	/* the same 400 us apart on one goroutine: counted in order */
	static const struct call d[] = {
		{ 'C', 1000, 1010, 1 }, { 'C', 1500, 1600, 1 },
		{ 'D', 1, S / 2, 0 }, { 'C', 2 * S, 2 * S + 10, 1 },
	};
	run(d, 4, out);
	cr_expect_str_eq(out, "PLP");
}

Test(pair_rate, events_lost_from_the_ring_buffer_reach_to_their_windows_end)
{
	/* a lost event counted in its window: the window may have filled
	 * unseen, to its end, a second after the loss at most */
	static const struct call c[] = {
		{ 'C', 1000, 1010, 1 }, { 'B', 1, 2000, 0 },
		{ 'C', S / 2, S / 2 + 10, 1 }, { 'C', S + 3000, S + 3010, 1 },
	};
	char out[16];

	probes[0].rate_limit = probes[1].rate_limit = 3;   /* no window fills */
	run(c, 4, out);
	cr_expect_str_eq(out, "LLP");
}

Test(pair_rate, whole_calls_are_paired_across_every_window)
{
	/* the return probe kept the returns of the calls the entry probe
	 * kept (gtr_probe.whole_calls): a suppressed event never parts a
	 * call from its other half, so every window's calls pair, and the
	 * drop records of suppressed events make no span */
	char out[16];

	probes[1].whole_calls = true;
	run(two_windows, 6, out);
	cr_expect_str_eq(out, "PPPPP");
	/* events lost from the ring buffer still make one */
	static const struct call c[] = {
		{ 'C', 1000, 1010, 1 }, { 'B', 1, 2000, 0 }, { 'C', 3000, 3010, 1 },
		{ 'C', S + 3000, S + 3010, 1 },
	};
	run(c, 4, out);
	cr_expect_str_eq(out, "LPP");
}

Test(pair_rate, whole_calls_pair_under_an_entry_predicate)
{
	/* a record-time predicate on the entry probe, whose return probe
	 * followed it: the calls it kept are whole, and paired */
	char out[16];

	probes[0].predicate = "x > 1";
	probes[1].whole_calls = true;
	run(two_windows, 6, out);
	cr_expect_str_eq(out, "PPPPP");
}

/* Whether an entry of probes[0] is shown unpaired when the function's
 * probes are `tp` (n of them). */
static bool entry_unpaired(const struct gtr_probe *const *tp, size_t n)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;

	pair_probes(p, tp, n);
	e = fixture_event_int(&ev, &probes[0], 1000, 1, 1);
	pair_push(p, &e);
	const bool unpaired = e.unpaired;
	pair_free(p);
	return unpaired;
}

Test(pair_rate, whole_calls_need_every_return_probe_of_the_function)
{
	/* a merge of two recordings of one binary: one kept whole calls of
	 * main.f under an entry predicate, the other had a return probe
	 * that did not (or one with a predicate): the function is not
	 * paired, as in the second recording alone */
	struct gtr_probe other = probes[1];
	const struct gtr_probe *tp[3] = { &probes[0], &probes[1], &other };

	probes[0].predicate = "x > 1";
	probes[1].whole_calls = true;
	other.id = 3;
	cr_expect_not(entry_unpaired(tp, 2));
	cr_expect(entry_unpaired(tp, 3));
	other.whole_calls = true;
	cr_expect_not(entry_unpaired(tp, 3));
	other.predicate = "retval > 3";   /* kept returns whose entries stay */
	cr_expect(entry_unpaired(tp, 3));
}
