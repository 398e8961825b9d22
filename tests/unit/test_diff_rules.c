/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the --fail-on rules of `gotrace-report diff`
 * (report/diff_rules.c, spec/DIFF.md "Rules"): what parses to what, the
 * errors that say what is wrong, and what a rule decides on computed
 * results (fail, `~`, cannot tell).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_int.h"

static struct diff_rule r;
static char err[512];

static void parse_ok(const char *text)
{
	cr_assert_eq(diff_rule_parse(text, &r, err, sizeof(err)), 0, "'%s': %s", text, err);
}

static void parse_bad(const char *text, const char *says)
{
	cr_assert_eq(diff_rule_parse(text, &r, err, sizeof(err)), -1, "'%s' parsed", text);
	cr_expect(strstr(err, says), "'%s': '%s' does not say '%s'", text, err, says);
}

Test(diff_rules, relative_latency)
{
	parse_ok("p50 > +10%");
	cr_expect_eq(r.metric, DM_P50);
	cr_expect_eq(r.op, DOP_GT);
	cr_expect_eq(r.unit, DU_PCT);
	cr_expect_eq(r.value, 10);
	cr_expect_null(r.glob);
	diff_rule_free(&r);
}

Test(diff_rules, glob_duration_and_spaces)
{
	parse_ok("  net/http.*:p99>=+2ms ");
	cr_expect_str_eq(r.glob, "net/http.*");
	cr_expect_eq(r.metric, DM_P99);
	cr_expect_eq(r.op, DOP_GE);
	cr_expect_eq(r.unit, DU_NS);
	cr_expect_eq(r.value, 2e6);
	diff_rule_free(&r);
	parse_ok("main.*: p90 < -500us");
	cr_expect_eq(r.op, DOP_LT);
	cr_expect_eq(r.value, -500e3);
	diff_rule_free(&r);
}

Test(diff_rules, any_change_of_calls)
{
	parse_ok("calls != ");
	cr_expect_eq(r.metric, DM_CALLS);
	cr_expect_eq(r.op, DOP_NE);
	cr_expect_eq(r.unit, DU_NONE);
	cr_expect_eq(r.value, 0);
	diff_rule_free(&r);
	parse_ok("errors > +5%");
	cr_expect_eq(r.metric, DM_ERRORS);
	diff_rule_free(&r);
	parse_ok("edges > +100%");
	diff_rule_free(&r);
	parse_ok("panics > 0");
	diff_rule_free(&r);
}

Test(diff_rules, errors_say_what_to_write)
{
	parse_bad("p51 > +10%", "unknown metric 'p51'");
	parse_bad("> 3", "no metric");
	parse_bad("p50 = +10%", "not a comparison");
	parse_bad("p50 ~ 3", "expected a comparison");
	parse_bad("p50 > +10", "needs a unit");
	parse_bad("p50 > fast", "expected a number");
	parse_bad("p50 > +3parsecs", "bad duration");
	parse_bad("calls > +2ms", "not a time");
	parse_bad("errors > 3", "percentage points");
	parse_bad("panics > 10%", "a count");
	parse_bad("p50 > +10% or so", "unexpected");
	parse_bad(" : p50 > +10%", "empty function glob");
}

/* A comparison of one function with the given p50s and p-value. */
static void one_func(struct diff *d, struct diff_opts *o, struct diff_func *f,
		     struct diff_fres *res, uint64_t p50a, uint64_t p50b, double p, uint32_t n)
{
	memset(d, 0, sizeof(*d));
	memset(o, 0, sizeof(*o));
	memset(res, 0, sizeof(*res));
	o->nfiles[0] = o->nfiles[1] = 1;
	f->name = "main.work";
	d->opts = o;
	d->funcs = f;
	d->nfuncs = 1;
	res->name = f->name;
	res->in[0] = res->in[1] = true;
	res->nlat[0] = res->nlat[1] = n;
	res->nkept[0] = res->nkept[1] = n;
	res->q[0][0] = (struct diff_q){ true, true, p50a, p50a - 1, p50a + 1 };
	res->q[1][0] = (struct diff_q){ true, true, p50b, p50b - 1, p50b + 1 };
	res->have_test = n >= DIFF_MIN_SAMPLES;
	res->runs_ns = -1;   /* one recording a side */
	res->mwu.p = p;
	/* the shift's interval: +-2% of base around the change */
	res->hl = (struct diff_hl){ (double)p50b - (double)p50a, true,
				    (int64_t)p50b - (int64_t)p50a - (int64_t)p50a / 50,
				    (int64_t)p50b - (int64_t)p50a + (int64_t)p50a / 50 };
	d->res = res;
	d->nres = 1;
	d->rules = &r;
	d->nrules = 1;
}

static void free_finds(struct diff *d)
{
	for (uint32_t i = 0; i < d->nfinds; i++)
		free(d->finds[i].why);
	free(d->finds);
	d->finds = NULL;
	d->nfinds = 0;
}

Test(diff_rules, a_latency_rule_needs_size_and_significance)
{
	struct diff d;
	struct diff_opts o;
	struct diff_func f;
	struct diff_fres res;

	parse_ok("p50 > +10%");
	one_func(&d, &o, &f, &res, 1000, 1300, 0.001, 100);
	diff_rules_eval(&d);
	cr_assert_eq(d.nfinds, 1);
	cr_expect_eq(d.finds[0].verdict, DV_FAIL);
	cr_expect(strstr(d.finds[0].why, "+30.0%"), "%s", d.finds[0].why);
	free_finds(&d);

	/* large but not significant: `~`, no finding */
	one_func(&d, &o, &f, &res, 1000, 1300, 0.2, 100);
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);

	/* significant but small */
	one_func(&d, &o, &f, &res, 1000, 1050, 0.001, 100);
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);

	/* beyond the limit, but its interval reaches below it (+9%..+13%) */
	one_func(&d, &o, &f, &res, 1000, 1110, 0.001, 100);
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);

	/* too few samples: cannot tell, never a pass or a fail */
	one_func(&d, &o, &f, &res, 1000, 1300, 0.001, 3);
	diff_rules_eval(&d);
	cr_assert_eq(d.nfinds, 1);
	cr_expect_eq(d.finds[0].verdict, DV_CANNOT_TELL);
	free_finds(&d);
	diff_rule_free(&r);
}

Test(diff_rules, glob_selects_functions)
{
	struct diff d;
	struct diff_opts o;
	struct diff_func f;
	struct diff_fres res;

	parse_ok("net/*: p50 > +10%");
	one_func(&d, &o, &f, &res, 1000, 2000, 0.001, 100);
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);
	diff_rule_free(&r);
	parse_ok("main.w*: calls != ");
	one_func(&d, &o, &f, &res, 1000, 2000, 0.001, 100);
	res.calls[0] = 10;
	res.calls[1] = 11;
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 1);
	free_finds(&d);
	diff_rule_free(&r);
}

/* Latencies: `na` of value a, then `nb` of value b (sorted when a < b). */
static uint64_t *two_modes(uint64_t *v, size_t na, uint64_t a, size_t nb, uint64_t b)
{
	for (size_t i = 0; i < na + nb; i++)
		v[i] = i < na ? a : b;
	return v;
}

/* The comparison of one function as report/diff.c computes it from
 * sorted latencies x (base) and y (new): p50s with their intervals, the
 * Mann-Whitney test and the Hodges-Lehmann shift. */
static void from_samples(struct diff *d, struct diff_opts *o, struct diff_func *f,
			 struct diff_fres *res, const uint64_t *x, const uint64_t *y, uint32_t n)
{
	const uint64_t *v[2] = { x, y };

	one_func(d, o, f, res, 1, 1, 1, n);
	for (int s = 0; s < 2; s++) {
		size_t lo, hi;
		cr_assert(diff_quantile_ci(n, 0.5, DIFF_ALPHA, &lo, &hi));
		res->q[s][0] = (struct diff_q){ true, true, v[s][diff_quantile_rank(n, 0.5) - 1],
						v[s][lo - 1], v[s][hi - 1] };
	}
	cr_assert_eq(diff_mwu(x, n, y, n, &res->mwu), 0);
	diff_hodges_lehmann(x, n, y, n, &res->hl);
	res->runs_ns = -1;
}

/* A number in `s` right after `label`. */
static double figure_after(const char *s, const char *label)
{
	const char *p = strstr(s, label);

	cr_assert(p, "'%s' does not say '%s'", s, label);
	return strtod(p + strlen(label), NULL);
}

Test(diff_rules, p50_change_and_shift_are_named_and_each_consistent)
{
	struct diff d;
	struct diff_opts o;
	struct diff_func f;
	struct diff_fres res;
	uint64_t x[100], y[100];

	/* base: p50 200ns; new: p50 230ns (+15%), but most differences new -
	 * base are +100ns: the shift, +50% of base's p50, interval
	 * [D(4198), D(5803)] = [+100ns, +130ns] = [+50%, +65%] */
	two_modes(x, 49, 100, 51, 200);
	two_modes(y, 51, 230, 49, 300);
	from_samples(&d, &o, &f, &res, x, y, 100);
	cr_expect_eq(res.q[0][0].v, 200);
	cr_expect_eq(res.q[1][0].v, 230);
	cr_expect_eq(res.hl.shift, 100);
	cr_expect_eq(res.hl.lo, 100);
	cr_expect_eq(res.hl.hi, 130);
	cr_expect_lt(res.mwu.p, DIFF_ALPHA);
	parse_ok("p50 > +10%");
	diff_rules_eval(&d);
	cr_assert_eq(d.nfinds, 1);
	cr_expect_eq(d.finds[0].verdict, DV_FAIL);
	/* each figure says what it is; the shift lies in its own interval */
	const char *why = d.finds[0].why;
	cr_expect_eq(figure_after(why, "p50 "), 15.0, "%s", why);
	const double shift = figure_after(why, "shift ");
	const double lo = figure_after(why, "shift +50.0% ["), hi = figure_after(why, "%, ");
	cr_expect_eq(shift, 50.0, "%s", why);
	cr_expect(lo <= shift && shift <= hi, "%s", why);
	cr_expect_eq(lo, 50.0, "%s", why);
	cr_expect_eq(hi, 65.0, "%s", why);
	cr_expect(strstr(why, "Hodges-Lehmann") && strstr(why, "Mann-Whitney p="), "%s", why);
	free_finds(&d);

	/* the same shift next to runs that differ by 60% of base's p50 among
	 * themselves: its interval (from +50%) is within that, no failure */
	res.runs_ns = 120;
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);
	cr_expect(!diff_p50_significant(&res));
	/* runs that differ by 20%: beyond them, and the finding says so */
	res.runs_ns = 40;
	diff_rules_eval(&d);
	cr_assert_eq(d.nfinds, 1);
	cr_expect(strstr(d.finds[0].why, "beyond the run-to-run spread of ±20.0%"), "%s",
		  d.finds[0].why);
	cr_expect(diff_p50_significant(&res));
	free_finds(&d);
	diff_rule_free(&r);
}

Test(diff_rules, p50_and_shift_of_opposite_signs_fail_no_rule)
{
	struct diff d;
	struct diff_opts o;
	struct diff_func f;
	struct diff_fres res;
	uint64_t x[100], y[100];
	struct buf b = BUF_INIT;

	/* base: p50 200ns; new: p50 190ns (-5%), while the median difference
	 * is +90ns (+45%): the latencies changed shape, they did not move */
	two_modes(x, 49, 100, 51, 200);
	two_modes(y, 51, 190, 49, 300);
	from_samples(&d, &o, &f, &res, x, y, 100);
	cr_expect_eq(res.q[1][0].v, 190);
	cr_expect_eq(res.hl.shift, 90);
	diff_fmt_shift(&b, &res);
	cr_expect_str_eq(buf_cstr(&b), "shift +45.0% [+45.0%, +50.0%]");
	buf_free(&b);
	parse_ok("p50 < -3%");     /* the p50 fell, the shift says it rose */
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);
	diff_rule_free(&r);
	parse_ok("p50 > +10%");    /* the shift rose, the p50 fell */
	diff_rules_eval(&d);
	cr_expect_eq(d.nfinds, 0);
	diff_rule_free(&r);
}

Test(diff_rules, a_glob_that_matches_nothing_is_an_error)
{
	struct diff d;
	struct diff_opts o;
	struct diff_func f;
	struct diff_fres res;
	struct buf msg = BUF_INIT;

	parse_ok("main.wrok: p50 > +10%");
	one_func(&d, &o, &f, &res, 1000, 1300, 0.001, 100);
	cr_expect_eq(diff_rules_check(&d, &msg), -1);
	cr_expect(strstr(buf_cstr(&msg), "--fail-on 'main.wrok: p50 > +10%'") &&
		  strstr(buf_cstr(&msg), "matches no function") &&
		  strstr(buf_cstr(&msg), "did you mean: main.work"), "%s", buf_cstr(&msg));
	diff_rule_free(&r);
	buf_reset(&msg);
	parse_ok("mian.*: calls != ");
	cr_expect_eq(diff_rules_check(&d, &msg), -1);
	cr_expect(strstr(buf_cstr(&msg), "did you mean: main.work"), "%s", buf_cstr(&msg));
	diff_rule_free(&r);
	buf_reset(&msg);
	parse_ok("net/http.*: p99 > +1ms");
	cr_expect_eq(diff_rules_check(&d, &msg), -1);
	cr_expect(strstr(buf_cstr(&msg), "no name is near it"), "%s", buf_cstr(&msg));
	diff_rule_free(&r);
	buf_reset(&msg);
	parse_ok("main.w*: p50 > +10%");
	cr_expect_eq(diff_rules_check(&d, &msg), 0);
	diff_rule_free(&r);
	parse_ok("p50 > +10%");
	cr_expect_eq(diff_rules_check(&d, &msg), 0);
	diff_rule_free(&r);
	buf_free(&msg);
}

/* The line of d's text output that holds the p50 row of its function. */
static const char *p50_row(struct diff *d)
{
	static struct buf b = BUF_INIT;
	static char line[512];

	for (int s = 0; s < 2; s++)
		d->meta[s] = (struct diff_meta){ .go_version = "go1.26", .arch = "x86_64",
					   .kernel = "6.1" };
	buf_reset(&b);
	diff_write(d, &b);
	const char *row = strstr(buf_cstr(&b), "main.work");
	cr_assert(row, "%s", buf_cstr(&b));
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(row, "\n"), row);
	return line;
}

/* The p50 row's verdict (diff_p50_significant()): the Mann-Whitney p
 * strictly below DIFF_ALPHA, as benchstat has it, and, with one run a
 * side, the shift's 95% interval clear of 0, so that a row never shows a
 * change beside an interval that holds none. */
Test(diff_rules, p50_significance_needs_p_below_alpha_and_an_interval_clear_of_0)
{
	struct diff d;
	struct diff_opts o;
	struct diff_func f;
	struct diff_fres res;
	/* 8+8 latencies with ties (normal approximation): p = 0.042, but the
	 * shift's interval is [0ns, +50ns] */
	const uint64_t x[8] = { 100, 100, 110, 120, 130, 140, 150, 150 };
	const uint64_t y[8] = { 120, 140, 140, 150, 150, 150, 160, 190 };

	from_samples(&d, &o, &f, &res, x, y, 8);
	cr_assert_lt(res.mwu.p, DIFF_ALPHA);
	cr_expect_gt(res.mwu.p, 0.04);
	cr_assert(res.hl.have_ci);
	cr_expect_eq(res.hl.lo, 0);
	cr_expect_eq(res.hl.hi, 50);
	cr_expect(!diff_p50_significant(&res), "an interval holding 0 is no change");
	/* and the p50 row says so: "~", why, and no change */
	const char *text = p50_row(&d);
	cr_expect(strstr(text, "main.work") && strstr(text, "~ (p=0.042, but the shift's 95% "
							  "interval holds 0; n=8+8)"), "%s", text);
	res.hl.lo = 1;   /* clear of 0: a change */
	cr_expect(diff_p50_significant(&res));
	res.hl.lo = -50, res.hl.hi = -1;
	cr_expect(diff_p50_significant(&res));
	res.hl.hi = 0;
	cr_expect(!diff_p50_significant(&res));

	/* p == alpha is not below it: not significant, whatever the interval */
	one_func(&d, &o, &f, &res, 100, 150, DIFF_ALPHA, 8);
	cr_assert_gt(res.hl.lo, 0);
	cr_expect(!diff_p50_significant(&res));
	text = p50_row(&d);
	cr_expect(strstr(text, "~ (p=0.0500 n=8+8)"), "%s", text);
	res.mwu.p = nextafter(DIFF_ALPHA, 0);
	cr_expect(diff_p50_significant(&res));
	res.mwu.p = 0.0498;   /* a fourth digit where three would say 0.050 */
	text = p50_row(&d);
	cr_expect(strstr(text, "+50.0% (shift +50.0% [+48.0%, +52.0%], p=0.0498 n=8+8)"), "%s", text);
	res.hl.have_ci = false;   /* too few for an interval: the test alone */
	cr_expect(diff_p50_significant(&res));
	res.have_test = false;
	cr_expect(!diff_p50_significant(&res));
}
