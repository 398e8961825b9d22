/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the --fail-on rules of `gotrace-report diff`
 * (report/diff_rules.c, spec/DIFF.md "Rules"): what parses to what, the
 * errors that say what is wrong, and what a rule decides on computed
 * results (fail, `~`, cannot tell).
 */
#include <criterion/criterion.h>
#include <math.h>
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
