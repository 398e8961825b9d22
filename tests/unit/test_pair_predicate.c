/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of pairing (report/pair.h) for functions one of whose probes
 * had a record-time predicate: the kernel kept one half of some calls
 * only, so nothing of such a function is paired, whatever the order.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

#include "pair.h"
#include "pair_fixture.h"

static struct gtr_probe probes[4];
static const struct gtr_probe *pp[4];
static struct gtr_event ev;

/* f: entry 1 (predicate `n > 3`), return 2; g: entry 3, return 4 */
static void setup(void)
{
	static const char *funcs[] = { "main.f", "main.f", "main.g", "main.g" };

	memset(probes, 0, sizeof(probes));
	for (int i = 0; i < 4; i++) {
		probes[i].id = (uint32_t)i + 1;
		probes[i].binary_id = 1;
		probes[i].kind = i % 2 ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		probes[i].func = funcs[i];
		probes[i].spec = i % 2 ? "r:main.f" : "main.f (n > 3)";
		probes[i].fmt = "";
		pp[i] = &probes[i];
	}
	probes[0].predicate = "n > 3";
	cr_redirect_stderr();
}

TestSuite(pair_predicate, .init = setup);

static struct report_event feed(struct pairer *p, uint32_t probe, uint64_t ts, int64_t v)
{
	return fixture_feed(p, &ev, &probes[probe - 1], ts, 1, v);
}

Test(pair_predicate, an_entry_predicate_leaves_the_function_unpaired)
{
	struct pairer *p = pair_new(NULL);
	struct pair_counts c;
	struct report_event e;

	pair_probes(p, pp, 4);
	/* f(5) kept, f(4) kept, f(3) left out by the kernel: its return
	 * would have closed f(4) */
	e = feed(p, 1, 100, 5);
	cr_expect(e.unpaired && !e.tracked && !e.untracked);
	e = feed(p, 1, 110, 4);
	cr_expect(e.unpaired);
	e = feed(p, 3, 115, 0);             /* g: paired as ever */
	cr_expect(e.tracked && !e.unpaired);
	e = feed(p, 4, 118, 0);
	cr_expect(e.entry && e.latency_ns == 3 && !e.unpaired);
	for (int i = 0; i < 3; i++) {      /* returns of f(3), f(4), f(5) */
		e = feed(p, 2, 120 + (uint64_t)i, 0);
		cr_expect(!e.entry && !e.lost && e.unpaired && e.latency_ns == 0);
	}
	pair_counts(p, &c);
	cr_expect_eq(c.paired, 1);
	cr_expect_eq(c.unpaired, 5);
	cr_expect_eq(c.unpaired_returns, 0, "counted apart from returns without entry");
	cr_expect_eq(c.open, 0);
	pair_free(p);
	fflush(stderr);
	cr_expect_stderr_eq_str(
		"gotrace-report: note: calls of main.f are not paired: probe 'main.f (n > 3)' had "
		"the record-time predicate 'n > 3', which left out the entries of the calls it did "
		"not hold for but not their returns, so pairing the rest could match a return with "
		"another call's entry; its entries and returns are shown alone ('unpaired'). To "
		"time the calls it selects, record both probes without it and filter the report: "
		"gotrace-report -f 'n > 3'\n");
}

Test(pair_predicate, a_return_predicate_too_and_held_events_keep_the_status)
{
	struct pair_limits lim = { .hold_ns = 1000 };
	struct pairer *p = pair_new(&lim);
	struct report_event e, out;
	struct gtr_drop d = { .probe_id = 4, .count = 1, .since_ns = 1, .ts_ns = 2 };
	int n = 0;

	probes[0].predicate = NULL;
	probes[1].predicate = "<redacted>";  /* @spec hashed it: still known */
	pair_probes(p, pp, 4);
	pair_drop(p, &d);                   /* a loss of g: returns are held */
	e = fixture_event_int(&ev, &probes[3], 50, 1, 0);
	cr_expect(!pair_push(p, &e), "a return of g waits for drop records");
	e = fixture_event_int(&ev, &probes[0], 100, 1, 7);
	cr_expect(!pair_push(p, &e), "held behind the return");
	e = fixture_event_int(&ev, &probes[1], 110, 1, 0);
	cr_expect(!pair_push(p, &e));
	pair_finish(p);
	while (pair_next(p, &out)) {
		if (out.ev->probe_id == 4) {
			cr_expect(!out.unpaired);
			continue;
		}
		cr_expect(out.unpaired && !out.entry, "probe %u", out.ev->probe_id);
		n++;
	}
	cr_expect_eq(n, 2);
	pair_free(p);
	fflush(stderr);
	cr_expect_stderr_eq_str(
		"gotrace-report: note: calls of main.f are not paired: probe 'r:main.f' had the "
		"record-time predicate '<redacted>', which left out the returns of the calls it did "
		"not hold for but not their entries, so pairing the rest could match a return with "
		"another call's entry; its entries and returns are shown alone ('unpaired'). To "
		"time the calls it selects, record both probes without it and filter the report: "
		"gotrace-report -f 'PREDICATE'\n");
}

Test(pair_predicate, a_predicate_without_the_other_kind_changes_nothing)
{
	struct pairer *p = pair_new(NULL);
	struct report_event e;

	/* f's entry alone (with its predicate), g as ever */
	const struct gtr_probe *some[] = { &probes[0], &probes[2], &probes[3] };
	pair_probes(p, some, 3);
	e = feed(p, 1, 100, 5);
	cr_expect(!e.unpaired && !e.tracked && !e.untracked, "an entry without return probe");
	pair_free(p);
	fflush(stderr);
	cr_expect_stderr_eq_str("");
}
