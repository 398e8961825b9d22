/* SPDX-License-Identifier: MIT */
/*
 * The gate of `gotrace-report diff` (spec/DIFF.md, "Rules"): --fail-on
 * rules, parsed here and evaluated against the computed comparison.
 *
 *   RULE   = [GLOB ":"] METRIC OP [VALUE]
 *   METRIC = p50 | p90 | p99 | calls | errors | edges | panics | crashes
 *   OP     = ">" | ">=" | "<" | "<=" | "!="
 *   VALUE  = ["+" | "-"] NUMBER ["%" | DURATION-UNIT]
 *
 * A rule fails for a function when the change of METRIC from base to new
 * compares with VALUE as OP says and, for latencies and error shares, the
 * change is significant at DIFF_ALPHA (for latencies: its whole 95%
 * interval lies beyond VALUE); with too few samples to tell, the rule says
 * "cannot tell" instead.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_int.h"
#include "edit.h"
#include "filter.h"
#include "timeparse.h"
#include "xalloc.h"

static const char *const metric_names[] = {
	[DM_P50] = "p50", [DM_P90] = "p90", [DM_P99] = "p99", [DM_CALLS] = "calls",
	[DM_ERRORS] = "errors", [DM_EDGES] = "edges", [DM_PANICS] = "panics",
	[DM_CRASHES] = "crashes",
};

const char *diff_metric_name(enum diff_metric m)
{
	return metric_names[m];
}

int diff_q_index(enum diff_metric m)
{
	return m == DM_P50 ? 0 : m == DM_P90 ? 1 : 2;
}

double diff_q_p(int qi)
{
	static const double ps[DIFF_NQ] = { 0.5, 0.9, 0.99 };

	return ps[qi];
}

/* ------------------------------------------------------------ parsing */

static void skip_space(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* The metric at *p. 0, or -1 with a message. */
static int parse_metric(const char **p, struct diff_rule *r, char *err, size_t errlen)
{
	const char *s = *p;
	size_t n = 0;

	while (isalnum((unsigned char)s[n]))
		n++;
	for (size_t m = 0; m < sizeof(metric_names) / sizeof(*metric_names); m++)
		if (n && strlen(metric_names[m]) == n && !strncmp(s, metric_names[m], n)) {
			r->metric = (enum diff_metric)m;
			*p = s + n;
			return 0;
		}
	snprintf(err, errlen, "%s '%.*s': expected one of p50, p90, p99, calls, errors, "
		 "edges, panics, crashes (e.g. 'p50 > +10%%')", n ? "unknown metric" : "no metric before",
		 n ? (int)n : (int)strlen(s), s);
	return -1;
}

static int parse_op(const char **p, struct diff_rule *r, char *err, size_t errlen)
{
	static const struct { const char *s; enum diff_op op; } ops[] = {
		{ ">=", DOP_GE }, { "<=", DOP_LE }, { "!=", DOP_NE }, { ">", DOP_GT }, { "<", DOP_LT },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (!strncmp(*p, ops[i].s, strlen(ops[i].s))) {
			r->op = ops[i].op;
			*p += strlen(ops[i].s);
			return 0;
		}
	if (**p == '=')
		snprintf(err, errlen, "'%s' is not a comparison here: a rule says when to fail, "
			 "with >, >=, <, <= or != (e.g. 'calls != ' fails on any change)", *p);
	else
		snprintf(err, errlen, "expected a comparison (>, >=, <, <=, !=) after %s, got '%s'",
			 metric_names[r->metric], *p);
	return -1;
}

/* The value after the comparison: a number, and its unit. */
static int parse_value(const char *s, struct diff_rule *r, char *err, size_t errlen)
{
	char *end;

	r->unit = DU_NONE;
	r->value = 0;
	if (!*s)
		return 0;
	const char *num = s + (*s == '+' || *s == '-');
	if (!isdigit((unsigned char)*num) && *num != '.') {
		snprintf(err, errlen, "expected a number after the comparison, got '%s'", s);
		return -1;
	}
	if (isalpha((unsigned char)num[strspn(num, "0123456789.")])) {
		int64_t ns;
		char derr[128];
		const int used = rtime_duration(num, strlen(num), &ns, derr, sizeof(derr));
		if (used <= 0 || num[used]) {
			snprintf(err, errlen, "bad duration '%s'%s%s (units ns, us, ms, s, m, h)", num,
				 used < 0 ? ": " : "", used < 0 ? derr : "");
			return -1;
		}
		r->unit = DU_NS;
		r->value = *s == '-' ? -(double)ns : (double)ns;
		return 0;
	}
	r->value = strtod(s, &end);
	if (end == s || !isfinite(r->value)) {
		snprintf(err, errlen, "bad number '%s'", s);
		return -1;
	}
	skip_space((const char **)&end);
	if (*end == '%') {
		r->unit = DU_PCT;
		end++;
		skip_space((const char **)&end);
	}
	if (*end) {
		snprintf(err, errlen, "unexpected '%s' after the value", end);
		return -1;
	}
	return 0;
}

/* Whether the unit fits the metric. 0, or -1 with a message. */
static int check_unit(const struct diff_rule *r, char *err, size_t errlen)
{
	const bool lat = r->metric <= DM_P99;

	if (lat && r->unit == DU_NONE && r->value != 0) {
		snprintf(err, errlen, "a latency limit needs a unit: a relative change ('%s > +10%%') "
			 "or a duration ('%s > +2ms')", metric_names[r->metric], metric_names[r->metric]);
		return -1;
	}
	if (!lat && r->unit == DU_NS) {
		snprintf(err, errlen, "%s is not a time: give a count ('%s > +5') or a relative "
			 "change ('%s > +10%%')", metric_names[r->metric], metric_names[r->metric],
			 metric_names[r->metric]);
		return -1;
	}
	if (r->metric == DM_ERRORS && r->unit == DU_NONE && r->value != 0) {
		snprintf(err, errlen, "errors is a share of returns: give its change in "
			 "percentage points ('errors > +5%%': from 2%% to over 7%%)");
		return -1;
	}
	if (r->metric == DM_PANICS && r->unit == DU_PCT) {
		snprintf(err, errlen, "panics counts calls cut short: give a count ('panics > 0')");
		return -1;
	}
	if (r->metric == DM_CRASHES && (r->unit == DU_PCT || r->glob)) {
		snprintf(err, errlen, "crashes counts processes that exited non-zero or by a signal, "
			 "not functions: give a count without a function glob ('crashes > 0')");
		return -1;
	}
	return 0;
}

int diff_rule_parse(const char *text, struct diff_rule *r, char *err, size_t errlen)
{
	const char *colon = strrchr(text, ':');
	const char *p = colon ? colon + 1 : text;

	memset(r, 0, sizeof(*r));
	r->text = text;
	if (colon) {
		const char *g = text, *e = colon;
		while (*g == ' ')
			g++;
		while (e > g && e[-1] == ' ')
			e--;
		if (e == g) {
			snprintf(err, errlen, "empty function glob before ':' (e.g. 'main.*: p50 > +10%%')");
			return -1;
		}
		r->glob = xcalloc(1, (size_t)(e - g) + 1, "diff rules");
		memcpy(r->glob, g, (size_t)(e - g));
	}
	skip_space(&p);
	if (parse_metric(&p, r, err, errlen))
		goto fail;
	skip_space(&p);
	if (parse_op(&p, r, err, errlen))
		goto fail;
	skip_space(&p);
	char *v = strdup(p);
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	const int bad = parse_value(v, r, err, errlen) || check_unit(r, err, errlen);
	free(v);
	if (!bad)
		return 0;
fail:
	diff_rule_free(r);
	return -1;
}

void diff_rule_free(struct diff_rule *r)
{
	free(r->glob);
	r->glob = NULL;
}

/* ------------------------------------------------------------ evaluation */

static bool holds(enum diff_op op, double change, double limit)
{
	switch (op) {
	case DOP_GT: return change > limit;
	case DOP_GE: return change >= limit;
	case DOP_LT: return change < limit;
	case DOP_LE: return change <= limit;
	default: return change != limit;
	}
}

/* The change from a to b in the rule's unit: percent of a, or b - a. */
static double change_of(const struct diff_rule *r, double a, double b)
{
	if (r->unit != DU_PCT)
		return b - a;
	if (a == 0)
		return b == 0 ? 0 : b > 0 ? INFINITY : -INFINITY;
	return (b - a) / a * 100;
}

static void add_find(struct diff *d, uint32_t rule, uint32_t func, uint32_t caller,
		     enum diff_verdict v, char *why)
{
	if (!(d->nfinds & (d->nfinds - 1)))   /* 0, 1, 2, 4...: double */
		d->finds = xrealloc(d->finds, (d->nfinds ? 2 * d->nfinds : 1) * sizeof(*d->finds),
				    "diff findings");
	d->finds[d->nfinds++] = (struct diff_finding){ rule, func, caller, v, why };
}

static bool glob_ok(const struct diff_rule *r, const char *name)
{
	return !r->glob || filter_glob(r->glob, (const uint8_t *)name, strlen(name));
}

static char *fmt_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fmt_why(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		xalloc_die("diff findings");
	va_end(ap);
	return s;
}

/*
 * Whether the interval [lo, hi] of a change lies wholly where the rule
 * holds: a change significantly beyond the limit, not just a point
 * estimate beyond it.
 */
static bool holds_all(enum diff_op op, double lo, double hi, double limit)
{
	switch (op) {
	case DOP_GT: return lo > limit;
	case DOP_GE: return lo >= limit;
	case DOP_LT: return hi < limit;
	case DOP_LE: return hi <= limit;
	default: return lo > limit || hi < limit;
	}
}

/* The interval [*lo, *hi] of the change of quantile qi of r, ns: the
 * Hodges-Lehmann interval of the shift for p50, the quantiles' intervals
 * (new - base) for p90/p99. false when there is none. */
static bool change_ci(const struct diff_fres *r, int qi, double *lo, double *hi)
{
	const struct diff_q *a = &r->q[0][qi], *b = &r->q[1][qi];

	if (qi == 0) {
		*lo = (double)r->hl.lo;
		*hi = (double)r->hl.hi;
		return r->hl.have_ci;
	}
	*lo = (double)b->lo - (double)a->hi;
	*hi = (double)b->hi - (double)a->lo;
	return a->have_ci && b->have_ci;
}

/* ns in the rule's unit: percent of `base`, else ns. */
static double in_unit(const struct diff_rule *rule, double ns, double base)
{
	if (rule->unit != DU_PCT)
		return ns;
	return base ? ns / base * 100 : ns > 0 ? INFINITY : ns < 0 ? -INFINITY : 0;
}

/* The figures of a failing latency rule, each named: the quantile's
 * change, the estimate whose interval decided it, the test, the runs. */
static char *latency_why(const struct diff_fres *r, int qi)
{
	const struct diff_q *a = &r->q[0][qi], *b = &r->q[1][qi];
	struct buf t = BUF_INIT;
	char t1[24], t2[24];

	buf_printf(&t, "%s ", qi == 0 ? "p50" : qi == 1 ? "p90" : "p99");
	diff_fmt_pct(&t, (double)a->v, (double)b->v);
	buf_printf(&t, " (%s -> %s); ", rtime_fmt_duration(t1, a->v), rtime_fmt_duration(t2, b->v));
	if (qi == 0) {
		diff_fmt_shift(&t, r);
		buf_printf(&t, " of base p50 (Hodges-Lehmann, 95%% CI), Mann-Whitney p=%.3g",
			   r->mwu.p);
	} else {
		buf_puts(&t, "95% intervals apart");
	}
	if (r->runs_ns >= 0 && a->v)
		buf_printf(&t, ", beyond the run-to-run spread of ±%.1f%%",
			   r->runs_ns / (double)a->v * 100);
	buf_printf(&t, ", n=%llu+%llu", (unsigned long long)r->nlat[0],
		   (unsigned long long)r->nlat[1]);
	char *s = fmt_why("%s", buf_cstr(&t));

	buf_free(&t);
	return s;
}

/* A latency rule on one function present on both sides. It fails when the
 * point change of the quantile holds, and so does the whole 95% interval
 * of the change (change_ci(); for p50 with the Mann-Whitney test
 * significant), and, when a side has several recordings, that interval
 * lies beyond the run-to-run spread too (runs_ns): calls of one run are
 * not independent of each other, runs are. */
static void eval_latency(struct diff *d, uint32_t ri, const struct diff_fres *r)
{
	const struct diff_rule *rule = &d->rules[ri];
	const int qi = diff_q_index(rule->metric);
	const struct diff_q *a = &r->q[0][qi], *b = &r->q[1][qi];
	const struct diff_rule pct = { .unit = DU_PCT };
	double lo, hi;

	if (r->nkept[0] < DIFF_MIN_SAMPLES || r->nkept[1] < DIFF_MIN_SAMPLES) {
		add_find(d, ri, r->func, UINT32_MAX, DV_CANNOT_TELL,
			 fmt_why("too few latencies: %u+%u, %d a side needed", r->nkept[0],
				 r->nkept[1], DIFF_MIN_SAMPLES));
		return;
	}
	if (!holds(rule->op, change_of(rule, (double)a->v, (double)b->v), rule->value))
		return;
	if (!change_ci(r, qi, &lo, &hi)) {
		add_find(d, ri, r->func, UINT32_MAX, DV_CANNOT_TELL,
			 fmt_why("%s %+.1f%%, but %u+%u latencies give no 95%% interval of the "
				 "change", diff_metric_name(rule->metric),
				 change_of(&pct, (double)a->v, (double)b->v), r->nkept[0],
				 r->nkept[1]));
		return;
	}
	const double base = (double)a->v;
	const double clo = in_unit(rule, lo, base), chi = in_unit(rule, hi, base);
	if ((qi == 0 && r->mwu.p >= DIFF_ALPHA) || !holds_all(rule->op, clo, chi, rule->value))
		return;   /* not significantly beyond the limit */
	if (r->runs_ns >= 0) {
		const double noise = in_unit(rule, r->runs_ns, base);
		const bool up = clo > noise, down = chi < -noise;
		if (!(rule->op == DOP_NE ? up || down
		      : rule->op == DOP_LT || rule->op == DOP_LE ? down : up))
			return;   /* no more than one side's runs differ among themselves */
	}
	add_find(d, ri, r->func, UINT32_MAX, DV_FAIL, latency_why(r, qi));
}

static void eval_errors(struct diff *d, uint32_t ri, const struct diff_fres *r)
{
	const struct diff_rule *rule = &d->rules[ri];
	const double pts = (r->err_share[1] - r->err_share[0]) * 100;

	if (!r->has_err || !r->in[0] || !r->in[1])
		return;
	if (!r->have_err_test) {
		add_find(d, ri, r->func, UINT32_MAX, DV_CANNOT_TELL,
			 fmt_why("too few returns with an error result (%d a side needed)",
				 DIFF_MIN_SAMPLES));
		return;
	}
	if (holds(rule->op, pts, rule->value) && r->err_p < DIFF_ALPHA)
		add_find(d, ri, r->func, UINT32_MAX, DV_FAIL,
			 fmt_why("%+.1f points (%.1f%% -> %.1f%% non-nil, p=%.3g)", pts,
				 r->err_share[0] * 100, r->err_share[1] * 100, r->err_p));
}

static void eval_count(struct diff *d, uint32_t ri, uint32_t func, uint32_t caller,
		       double a, double b)
{
	const struct diff_rule *rule = &d->rules[ri];
	const double c = change_of(rule, a, b);

	if (holds(rule->op, c, rule->value))
		add_find(d, ri, func, caller, DV_FAIL,
			 fmt_why("%.0f -> %.0f (%+.0f)", a, b, b - a));
}

static void eval_edges(struct diff *d, uint32_t ri)
{
	const struct diff_rule *rule = &d->rules[ri];

	for (uint32_t i = 0; i < d->nedges; i++) {
		const struct diff_edge *e = &d->edges[i];
		if (!glob_ok(rule, d->funcs[e->callee].name))
			continue;
		eval_count(d, ri, e->callee, e->caller,
			   (double)e->count[0] / d->opts->nfiles[0],
			   (double)e->count[1] / d->opts->nfiles[1]);
	}
}

/* Processes of side `s` that exited with a status other than 0, or by a
 * signal (exit_code -SIGNAL), per recording; those whose status is not
 * known (GTR_EXIT_UNKNOWN: a -p target or a child whose exit went unseen)
 * are not counted. */
static double crashes(const struct diff *d, int s)
{
	const struct diff_meta *m = &d->meta[s];
	uint64_t n = 0;

	for (uint32_t k = 0; k < m->nexit; k++)
		if (m->exit_code[k] && m->exit_code[k] != GTR_EXIT_UNKNOWN)
			n += m->exit_count[k];
	return (double)n / (d->opts->nfiles[s] ? d->opts->nfiles[s] : 1);
}

static void eval_crashes(struct diff *d, uint32_t ri)
{
	const double a = crashes(d, DIFF_BASE), b = crashes(d, DIFF_NEW);

	if (holds(d->rules[ri].op, change_of(&d->rules[ri], a, b), d->rules[ri].value))
		add_find(d, ri, UINT32_MAX, UINT32_MAX, DV_FAIL,
			 fmt_why("%g -> %g process(es) per recording exited with a status other "
				 "than 0 or by a signal (see exit statuses)", a, b));
}

static void eval_rule(struct diff *d, uint32_t ri)
{
	const struct diff_rule *rule = &d->rules[ri];

	if (rule->metric == DM_EDGES) {
		eval_edges(d, ri);
		return;
	}
	if (rule->metric == DM_CRASHES) {
		eval_crashes(d, ri);
		return;
	}
	for (uint32_t i = 0; i < d->nres; i++) {
		const struct diff_fres *r = &d->res[i];
		if (!glob_ok(rule, d->funcs[r->func].name))
			continue;
		switch (rule->metric) {
		case DM_CALLS:
			eval_count(d, ri, r->func, UINT32_MAX, (double)r->calls[0],
				   (double)r->calls[1]);
			break;
		case DM_PANICS:
			eval_count(d, ri, r->func, UINT32_MAX, (double)r->panics[0],
				   (double)r->panics[1]);
			break;
		case DM_ERRORS:
			eval_errors(d, ri, r);
			break;
		default:
			if (r->in[0] && r->in[1] && (r->nlat[0] || r->nlat[1]))
				eval_latency(d, ri, r);
			break;
		}
	}
}

/* ------------------------------------------------------------ checking */

/* Up to `max` names of d's functions closest to rule glob `g`: the part
 * before its first wildcard against as many bytes of each name (all of
 * the name when `g` has none), within a third of its letters (two from 4
 * letters, one below: a swapped pair is two). Nearest first; returns how
 * many. */
static int near_names(const struct diff *d, const char *g, const char **out, int max)
{
	unsigned dist[8];
	const size_t lit = strcspn(g, "*?[");
	const bool whole = !g[lit];
	const unsigned limit = lit / 3 > 2 ? (unsigned)(lit / 3) : lit >= 4 ? 2 : 1;
	int n = 0;

	if (!lit || max > 8)
		return 0;
	for (uint32_t i = 0; i < d->nres; i++) {
		const char *name = d->res[i].name;
		const size_t ln = strlen(name);
		const unsigned dd = edit_distance(g, lit, name, whole || ln < lit ? ln : lit, limit);
		if (dd > limit)
			continue;
		int pos = n;
		while (pos > 0 && dist[pos - 1] > dd)
			pos--;
		if (pos >= max)
			continue;
		if (n < max)
			n++;
		memmove(&out[pos + 1], &out[pos], (size_t)(n - 1 - pos) * sizeof(*out));
		memmove(&dist[pos + 1], &dist[pos], (size_t)(n - 1 - pos) * sizeof(*dist));
		out[pos] = name;
		dist[pos] = dd;
	}
	return n;
}

int diff_rules_check(const struct diff *d, struct buf *msg)
{
	for (uint32_t ri = 0; ri < d->nrules; ri++) {
		const struct diff_rule *rule = &d->rules[ri];
		uint32_t i = 0;
		if (!rule->glob)
			continue;
		while (i < d->nres && !glob_ok(rule, d->res[i].name))
			i++;
		if (i < d->nres)
			continue;
		const char *near[3];
		const int n = near_names(d, rule->glob, near, 3);
		buf_printf(msg, "--fail-on '%s': '%s' matches no function of either side, so "
			   "the rule could never fail", rule->text, rule->glob);
		for (int k = 0; k < n; k++)
			buf_printf(msg, "%s%s", k ? ", " : "; did you mean: ", near[k]);
		if (!n && d->nres)
			buf_puts(msg, "; no name is near it: 'gotrace-report stats FILE' lists "
				      "the functions of a recording");
		else if (!n)
			buf_puts(msg, "; neither side has calls of a traced function");
		return -1;
	}
	return 0;
}

void diff_rules_eval(struct diff *d)
{
	for (uint32_t i = 0; i < d->nrules; i++)
		eval_rule(d, i);
}
