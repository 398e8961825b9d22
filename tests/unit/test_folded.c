/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of folded stacks (report/folded.h, spec/OUTPUT.md, "Folded
 * stacks"): self times with calls closed over by a recovered panic
 * (unwound), filtered callees, goroutines, and recorded stacks; events are
 * paired by report/pair.h as the read loop does.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "pair.h"
#include "pair_fixture.h"

enum { SAFE = 1, SAFE_RET, BOOM, BOOM_RET, FUNC1, FUNC1_RET, NPROBES = FUNC1_RET };

static struct gtr_probe probes[NPROBES];
static const struct gtr_probe *pp[NPROBES];
static struct gtr_event ev;
static struct pairer *p;
static struct folded *f;
static struct buf b = BUF_INIT;

static void setup(void)
{
	static const char *funcs[] = { "main.safe", "main.boom", "main.safe.func1" };

	memset(probes, 0, sizeof(probes));
	for (int i = 0; i < NPROBES; i++) {
		probes[i].id = (uint32_t)i + 1;
		probes[i].binary_id = 1;
		probes[i].kind = i % 2 ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		probes[i].func = funcs[i / 2];
		probes[i].fmt = "";
		pp[i] = &probes[i];
	}
	p = pair_new(NULL);
	pair_probes(p, pp, NPROBES);
	f = folded_new(0);
	buf_reset(&b);
}

static void teardown(void)
{
	folded_free(f);
	pair_free(p);
	buf_free(&b);
}

TestSuite(folded, .init = setup, .fini = teardown);

/* Pairs one event and feeds it to the folded stacks as the read loop
 * does; `count`: it passed the filters. */
static void feed_g(uint32_t probe, uint64_t ts, uint64_t goid, bool count,
		       const uint64_t *stack, uint32_t nstack)
{
	struct report_event e = fixture_event(&ev, &probes[probe - 1], ts, goid);

	ev.stack = stack;
	ev.nstack = nstack;
	pair_event(p, &e);
	folded_call(f, p, NULL, &e, count);
}

static void feed(uint32_t probe, uint64_t ts, bool count)
{
	feed_g(probe, ts, 1, count, NULL, 0);
}

static const char *written(void)
{
	buf_reset(&b);
	folded_write(f, &b);
	return buf_cstr(&b);
}

/* Sum of the values of the lines whose stack starts with `prefix`. */
static uint64_t sum_under(const char *out, const char *prefix)
{
	uint64_t sum = 0;
	const size_t n = strlen(prefix);

	for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
		const char *sp = strchr(l, ' ');
		if (!strncmp(l, prefix, n) && (l[n] == ' ' || l[n] == ';'))
			sum += strtoull(sp + 1, NULL, 10);
	}
	return sum;
}

/*
 * safe(2) returns normally; safe(3): boom panics, the deferred safe.func1
 * runs (above boom, which never returns) and recovers, then safe returns
 * and closes boom over. safe.func1's 400 ns are its own, under boom: they
 * are not safe's self time as well.
 */
Test(folded, recovered_panic_counts_time_once)
{
	/* safe(2): 500 ns, boom 100, func1 100 */
	feed(SAFE, 0, true);
	feed(BOOM, 100, true);
	feed(BOOM_RET, 200, true);
	feed(FUNC1, 300, true);
	feed(FUNC1_RET, 400, true);
	feed(SAFE_RET, 500, true);
	/* safe(3): 1000 ns */
	feed(SAFE, 1000, true);
	feed(BOOM, 1100, true);
	feed(FUNC1, 1200, true);
	feed(FUNC1_RET, 1600, true);
	feed(SAFE_RET, 2000, true);         /* closes boom over */

	const char *out = written();
	cr_expect_str_eq(out,
		"main.safe 900\n"                   /* 300 + (1000 - 400) */
		"main.safe;main.boom 100\n"
		"main.safe;main.boom;main.safe.func1 400\n"
		"main.safe;main.safe.func1 100\n");
	/* the stacks of safe add up to the time of its two calls */
	cr_expect_eq(sum_under(out, "main.safe"), 500 + 1000);
}

/* Two calls closed over at once, each with a paired callee; a later call
 * at the same depth starts from zero. */
Test(folded, nested_unwound_callees_are_the_closing_calls)
{
	feed(SAFE, 0, true);                /* safe            0..1000 */
	feed(BOOM, 100, true);              /*   boom (unwound) */
	feed(FUNC1, 110, true);             /*     func1 110..160 */
	feed(FUNC1_RET, 160, true);
	feed(BOOM, 200, true);              /*     boom (unwound) */
	feed(FUNC1, 300, true);             /*       func1 300..600 */
	feed(FUNC1_RET, 600, true);
	feed(SAFE_RET, 1000, true);
	feed(SAFE, 2000, true);             /* safe 2000..2100, no callee */
	feed(SAFE_RET, 2100, true);

	const char *out = written();
	cr_expect_str_eq(out,
		"main.safe 750\n"                   /* 1000 - 50 - 300, then 100 */
		"main.safe;main.boom;main.boom;main.safe.func1 300\n"
		"main.safe;main.boom;main.safe.func1 50\n");
	cr_expect_eq(sum_under(out, "main.safe"), 1000 + 100);
}

/* A callee the filters leave out is still its caller's callee, also when
 * it ran under a call that was closed over. */
Test(folded, filtered_callees_still_count_as_callees)
{
	feed(SAFE, 0, true);
	feed(BOOM, 100, false);
	feed(BOOM_RET, 200, false);
	feed(BOOM, 300, false);
	feed(FUNC1, 400, false);
	feed(FUNC1_RET, 700, false);
	feed(SAFE_RET, 1000, true);
	cr_expect_str_eq(written(), "main.safe 600\n");
}

/* Goroutines keep their own accounts, interleaved; goroutine 0 is keyed
 * by thread. */
Test(folded, goroutines_are_separate)
{
	feed_g(SAFE, 0, 1, true, NULL, 0);
	feed_g(SAFE, 10, 2, true, NULL, 0);
	feed_g(BOOM, 20, 1, true, NULL, 0);
	feed_g(BOOM, 30, 2, true, NULL, 0);
	feed_g(FUNC1, 40, 1, true, NULL, 0);
	feed_g(FUNC1_RET, 60, 1, true, NULL, 0);     /* 20 under boom (g1) */
	feed_g(BOOM_RET, 100, 2, true, NULL, 0);     /* 70 (g2) */
	feed_g(SAFE_RET, 200, 1, true, NULL, 0);     /* g1: 200 - 20 */
	feed_g(SAFE_RET, 300, 2, true, NULL, 0);     /* g2: 290 - 70 */
	feed_g(SAFE, 400, 0, true, NULL, 0);
	feed_g(SAFE_RET, 450, 0, true, NULL, 0);
	cr_expect_str_eq(written(),
		"main.safe 450\n"
		"main.safe;main.boom 70\n"
		"main.safe;main.boom;main.safe.func1 20\n");
}

/* Self times from direct calls match pairing's (pair_last_stack()). */
Test(folded, self_time_without_panic_matches_pairing)
{
	struct report_event e = { .ev = &ev };
	uint32_t n;
	uint64_t self;
	const uint64_t ts[] = { 0, 10, 20, 50, 60, 70, 90, 100 };
	const uint32_t pr[] = { SAFE, BOOM, FUNC1, FUNC1_RET, BOOM_RET, FUNC1, FUNC1_RET, SAFE_RET };

	for (int i = 0; i < 8; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = ts[i];
		ev.probe_id = pr[i];
		ev.kind = probes[pr[i] - 1].kind;
		ev.pid = 10;
		ev.goid = 1;
		e.probe = &probes[pr[i] - 1];
		pair_event(p, &e);
		if (!pair_last_stack(p, &n, &self)) {
			cr_expect_eq(folded_self(f, &e), 0);   /* an entry: ignored */
			continue;
		}
		cr_expect_eq(folded_self(f, &e), self, "event %d", i);
	}
}

/* A recorded stack names the path (root first; unknown addresses in hex). */
Test(folded, recorded_stack_is_the_path)
{
	static const uint64_t st_safe[] = { 0x1000, 0x2000 };
	static const uint64_t st_f1[] = { 0x3000, 0x1010, 0x2000 };

	feed_g(SAFE, 0, 1, true, st_safe, 2);
	feed_g(BOOM, 10, 1, true, NULL, 0);
	feed_g(FUNC1, 20, 1, true, st_f1, 3);
	feed_g(FUNC1_RET, 50, 1, true, NULL, 0);
	feed_g(SAFE_RET, 100, 1, true, NULL, 0);
	cr_expect_str_eq(written(),
		"0x2000;0x1000 70\n"
		"0x2000;0x1010;0x3000 30\n");
}
