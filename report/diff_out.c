/* SPDX-License-Identifier: MIT */
/*
 * The output of `gotrace-report diff` (spec/DIFF.md, "Output"): text in
 * the style of benchstat (one table per metric, `~` for a change that is
 * not significant), one JSON document (lib/json.h), or Markdown for a
 * pull-request comment.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_int.h"
#include "json.h"
#include "output.h"
#include "timeparse.h"
#include "width.h"
#include "xalloc.h"

/* The function a finding is about, or "(processes)" for crashes. */
static const char *find_name(const struct diff *d, const struct diff_finding *f)
{
	return f->func == UINT32_MAX ? "(processes)" : d->funcs[f->func].name;
}

static const char *const side_names[2] = { "base", "new" };
static const char *const q_names[DIFF_NQ] = { "p50", "p90", "p99" };

void diff_fmt_pct(struct buf *b, double a, double b2)
{
	if (a == 0)
		buf_puts(b, b2 == 0 ? "0%" : "+inf%");
	else
		buf_printf(b, "%+.1f%%", (b2 - a) / a * 100);
}

void diff_fmt_shift(struct buf *b, const struct diff_fres *r)
{
	const double base = (double)r->q[0][0].v;

	buf_puts(b, "shift ");
	if (!base) {
		buf_printf(b, "%+.0fns", r->hl.shift);
		return;
	}
	buf_printf(b, "%+.1f%%", r->hl.shift / base * 100);
	if (r->hl.have_ci)
		buf_printf(b, " [%+.1f%%, %+.1f%%]", (double)r->hl.lo / base * 100,
			   (double)r->hl.hi / base * 100);
}

bool diff_p50_significant(const struct diff_fres *r)
{
	if (!r->have_test || !(r->mwu.p < DIFF_ALPHA))
		return false;
	if (r->runs_ns < 0)   /* one run a side: the interval must not hold 0 */
		return !r->hl.have_ci || r->hl.lo > 0 || r->hl.hi < 0;
	return r->hl.have_ci && ((double)r->hl.lo > r->runs_ns || (double)r->hl.hi < -r->runs_ns);
}

/* Appends "p=0.032", with a fourth digit when three would round to
 * DIFF_ALPHA's 0.050 (p=0.0496 below it, p=0.0504 above). */
static void fmt_p(struct buf *b, double p)
{
	if (fabs(p - DIFF_ALPHA) < 0.0005)
		buf_printf(b, "p=%.4f", p);
	else
		buf_printf(b, "p=%.3f", p);
}

/* Appends the p50 change of r as its row says it: "~" or the change of
 * the p50s, then the shift, the test and the samples it rests on. */
static void p50_change(struct buf *b, const struct diff_fres *r)
{
	const bool sig = diff_p50_significant(r);

	if (!r->have_test) {
		buf_printf(b, "? (n=%" PRIu64 "+%" PRIu64 ": too few to tell)", r->nlat[0],
			   r->nlat[1]);
		return;
	}
	if (sig)
		diff_fmt_pct(b, (double)r->q[0][0].v, (double)r->q[1][0].v);
	else
		buf_putc(b, '~');
	buf_puts(b, " (");
	if (sig) {
		diff_fmt_shift(b, r);
		buf_puts(b, ", ");
	}
	fmt_p(b, r->mwu.p);
	if (r->mwu.p < DIFF_ALPHA && !sig)
		buf_puts(b, r->runs_ns >= 0 ? ", within the run-to-run spread;"
					    : ", but the shift's 95% interval holds 0;");
	buf_printf(b, " n=%" PRIu64 "+%" PRIu64 ")", r->nlat[0], r->nlat[1]);
}

/* Appends `s` padded with spaces to `w` columns (on the right: `left`). */
static void cell(struct buf *b, const char *s, int w, bool left)
{
	const int cols = text_width(s, strlen(s));

	if (!left)
		buf_pad(b, ' ', w - cols);
	buf_puts(b, s);
	if (left)
		buf_pad(b, ' ', w - cols);
}

/* A function's name as text shows it (controls escaped). */
static const char *name_text(struct buf *t, const char *name)
{
	buf_reset(t);
	output_text_bytes(t, (const uint8_t *)name, strlen(name), false);
	text_keep_tail(t, 0, 60);   /* the widest function column */
	return buf_cstr(t);
}

/* "1.234ms ± 2%", "1.234ms ± ∞" without an interval, "-" without samples. */
static const char *q_text(struct buf *t, const struct diff_q *q)
{
	char d[24];

	buf_reset(t);
	if (!q->have)
		return "-";
	buf_puts(t, rtime_fmt_duration(d, q->v));
	if (!q->have_ci) {
		buf_puts(t, " ± ∞");
		return buf_cstr(t);
	}
	const double dv = (double)q->v, w = fmax(dv - (double)q->lo, (double)q->hi - dv);
	buf_printf(t, " ± %.0f%%", dv ? w / dv * 100 : 0);
	return buf_cstr(t);
}

/* Whether the change of quantile qi of r is significant. */
static bool q_significant(const struct diff_fres *r, int qi)
{
	const struct diff_q *a = &r->q[0][qi], *b = &r->q[1][qi];

	if (qi == 0)
		return diff_p50_significant(r);
	return a->have_ci && b->have_ci && (a->hi < b->lo || b->hi < a->lo);
}

/* ------------------------------------------------------------ text */

struct tctx {
	const struct diff *d;
	struct buf *b;
	struct buf t, u;
	int fw;                    /* function column */
	bool runs;                 /* a side has several recordings */
	bool footnote;             /* some ± ∞ was shown */
	bool shape;                /* a p50 change and its shift differ in sign */
};

static void text_header(struct tctx *c)
{
	const struct diff *d = c->d;

	for (int s = 0; s < 2; s++) {
		const struct diff_meta *m = &d->meta[s];
		buf_printf(c->b, "%-5s ", side_names[s]);
		for (int i = 0; i < m->nfiles; i++)
			buf_printf(c->b, "%s%s", i ? " " : "", m->paths[i]);
		buf_printf(c->b, " (%d recording%s; %s, %s, kernel %s)\n", m->nfiles,
			   m->nfiles == 1 ? "" : "s", m->go_version, m->arch, m->kernel);
	}
	if (d->incomparable)
		buf_printf(c->b, "%s: %s\n", d->accepted ? "compared although" : "NOT COMPARABLE",
			   d->incomparable);
	if (c->runs)
		buf_puts(c->b, "latencies of all recordings of a side are pooled; \"runs\" is the "
			       "largest distance of one recording's p50 from the pooled p50\n");
}

/* One row of a quantile table. */
static void text_q_row(struct tctx *c, const struct diff_fres *r, int qi)
{
	struct buf *b = c->b;

	cell(b, name_text(&c->t, r->name), c->fw, true);
	for (int s = 0; s < 2; s++) {
		buf_puts(b, "  ");
		if (r->q[s][qi].have && !r->q[s][qi].have_ci)
			c->footnote = true;
		cell(b, q_text(&c->t, &r->q[s][qi]), 18, false);
		if (c->runs) {
			buf_reset(&c->t);
			if (r->spread[s] >= 0)
				buf_printf(&c->t, "runs ±%.0f%%", r->spread[s] * 100);
			buf_putc(b, ' ');
			cell(b, buf_cstr(&c->t), 10, true);
		}
	}
	buf_puts(b, "  ");
	if (!r->q[0][qi].have || !r->q[1][qi].have) {
		buf_puts(b, "-\n");
		return;
	}
	if (qi == 0) {
		p50_change(b, r);
		/* the two estimators disagree: say why, once */
		c->shape |= diff_p50_significant(r) &&
			    (r->hl.shift > 0) != (r->q[1][0].v > r->q[0][0].v);
	} else if (!q_significant(r, qi)) {
		buf_puts(b, "~");
	} else {
		diff_fmt_pct(b, (double)r->q[0][qi].v, (double)r->q[1][qi].v);
	}
	buf_putc(b, '\n');
}

static void text_quantiles(struct tctx *c)
{
	const struct diff *d = c->d;
	char t1[24], t2[24];

	for (int qi = 0; qi < DIFF_NQ; qi++) {
		buf_printf(c->b, "\n");
		buf_reset(&c->u);
		buf_printf(&c->u, "latency %s", q_names[qi]);
		cell(c->b, buf_cstr(&c->u), c->fw, true);
		for (int s = 0; s < 2; s++) {
			buf_puts(c->b, "  ");
			cell(c->b, side_names[s], 18, false);
			if (c->runs)
				buf_pad(c->b, ' ', 11);
		}
		buf_puts(c->b, "  vs base\n");
		for (uint32_t i = 0; i < d->nres; i++)
			if (d->res[i].in[0] && d->res[i].in[1] && (d->res[i].nlat[0] || d->res[i].nlat[1]))
				text_q_row(c, &d->res[i], qi);
		if (qi == 0 && d->ngeo) {
			cell(c->b, "geomean", c->fw, true);
			buf_puts(c->b, "  ");
			cell(c->b, rtime_fmt_duration(t1, (uint64_t)llround(d->geomean[0])), 18, false);
			buf_pad(c->b, ' ', c->runs ? 11 : 0);
			buf_puts(c->b, "  ");
			cell(c->b, rtime_fmt_duration(t2, (uint64_t)llround(d->geomean[1])), 18, false);
			buf_pad(c->b, ' ', c->runs ? 11 : 0);
			buf_puts(c->b, "  ");
			diff_fmt_pct(c->b, d->geomean[0], d->geomean[1]);
			buf_putc(c->b, '\n');
		}
	}
}

static void text_shift(struct tctx *c)
{
	const struct diff *d = c->d;
	char t1[24], t2[24], t3[24];
	bool head = false;

	for (uint32_t i = 0; i < d->nres; i++) {
		const struct diff_fres *r = &d->res[i];
		if (!r->have_test)
			continue;
		if (!head) {
			buf_puts(c->b, "\nshift new - base (Hodges-Lehmann: the median of the "
				       "differences of a new and a base latency, 95% CI)\n");
			head = true;
		}
		cell(c->b, name_text(&c->t, r->name), c->fw, true);
		const double s = r->hl.shift;
		buf_printf(c->b, "  %s%s", s < 0 ? "-" : "+",
			   rtime_fmt_duration(t1, (uint64_t)llround(fabs(s))));
		if (r->hl.have_ci)
			buf_printf(c->b, " [%s%s, %s%s]", r->hl.lo < 0 ? "-" : "+",
				   rtime_fmt_duration(t2, (uint64_t)llabs(r->hl.lo)),
				   r->hl.hi < 0 ? "-" : "+",
				   rtime_fmt_duration(t3, (uint64_t)llabs(r->hl.hi)));
		if (r->q[0][0].v) {
			buf_puts(c->b, "  = ");
			diff_fmt_shift(c->b, r);
			buf_puts(c->b, " of base p50");
		}
		buf_puts(c->b, r->sampled ? "  (sampled)\n" : "\n");
	}
}

static void text_calls(struct tctx *c)
{
	const struct diff *d = c->d;

	buf_puts(c->b, "\n");
	cell(c->b, "calls", c->fw, true);
	buf_puts(c->b, "        base         new  change\n");
	for (uint32_t i = 0; i < d->nres; i++) {
		const struct diff_fres *r = &d->res[i];
		if (!r->in[0] || !r->in[1])
			continue;
		cell(c->b, name_text(&c->t, r->name), c->fw, true);
		buf_printf(c->b, "  %10" PRIu64 "  %10" PRIu64 "  ", r->calls[0], r->calls[1]);
		if (r->calls[0] == r->calls[1]) {
			buf_puts(c->b, "0");
		} else {
			buf_printf(c->b, "%+" PRId64 " (", (int64_t)(r->calls[1] - r->calls[0]));
			diff_fmt_pct(c->b, (double)r->calls[0], (double)r->calls[1]);
			buf_putc(c->b, ')');
		}
		buf_putc(c->b, '\n');
	}
	for (int s = 1; s >= 0; s--) {
		bool head = false;
		for (uint32_t i = 0; i < d->nres; i++) {
			const struct diff_fres *r = &d->res[i];
			if (r->in[s] == r->in[!s] || !r->in[s])
				continue;
			if (!head)
				buf_printf(c->b, "\n%s functions (called only in %s)\n",
					   s ? "new" : "vanished", side_names[s]);
			head = true;
			cell(c->b, name_text(&c->t, r->name), c->fw, true);
			buf_printf(c->b, "  %10" PRIu64 " calls\n", r->calls[s]);
		}
	}
}

static void text_errors(struct tctx *c)
{
	const struct diff *d = c->d;
	bool head = false;

	for (uint32_t i = 0; i < d->nres; i++) {
		const struct diff_fres *r = &d->res[i];
		if (!r->has_err)
			continue;
		if (!head) {
			buf_puts(c->b, "\n");
			cell(c->b, "non-nil error returns", c->fw, true);
			buf_puts(c->b, "      base       new  vs base\n");
			head = true;
		}
		cell(c->b, name_text(&c->t, r->name), c->fw, true);
		buf_printf(c->b, "  %8.1f%%  %8.1f%%  ", r->err_share[0] * 100, r->err_share[1] * 100);
		if (!r->have_err_test)
			buf_puts(c->b, "(too few to tell)\n");
		else {
			if (r->err_p >= DIFF_ALPHA)
				buf_puts(c->b, "~ (");
			else
				buf_printf(c->b, "%+.1f points (",
					   (r->err_share[1] - r->err_share[0]) * 100);
			fmt_p(c->b, r->err_p);
			buf_puts(c->b, ")\n");
		}
	}
}

static int edge_kind(const struct diff_edge *e)
{
	return !e->count[0] ? 0 : !e->count[1] ? 1 : e->count[0] != e->count[1] ? 2 : 3;
}

static void text_edges(struct tctx *c)
{
	static const char *const heads[] = { "new call edges", "vanished call edges",
					     "call edges that changed count" };
	const struct diff *d = c->d;

	for (int k = 0; k < 3; k++) {
		bool head = false;
		for (uint32_t i = 0; i < d->nedges; i++) {
			const struct diff_edge *e = &d->edges[i];
			if (edge_kind(e) != k)
				continue;
			if (!head)
				buf_printf(c->b, "\n%s (caller -> callee: base, new calls)\n", heads[k]);
			head = true;
			buf_printf(c->b, "%s -> ", name_text(&c->t, d->funcs[e->caller].name));
			buf_printf(c->b, "%s: %" PRIu64 ", %" PRIu64 "\n",
				   name_text(&c->t, d->funcs[e->callee].name), e->count[0], e->count[1]);
		}
	}
}

static void text_panics(struct tctx *c)
{
	const struct diff *d = c->d;
	bool head = false;

	for (uint32_t i = 0; i < d->nres; i++) {
		const struct diff_fres *r = &d->res[i];
		if (!r->panics[0] && !r->panics[1])
			continue;
		if (!head)
			buf_puts(c->b, "\ncalls that did not return (a panic, an exit): base, new\n");
		head = true;
		buf_printf(c->b, "%s: %" PRIu64 ", %" PRIu64 "\n", name_text(&c->t, r->name),
			   r->panics[0], r->panics[1]);
	}
	buf_puts(c->b, "\nexit statuses:");
	for (int s = 0; s < 2; s++) {
		const struct diff_meta *m = &d->meta[s];
		buf_printf(c->b, " %s", side_names[s]);
		if (!m->nexit)
			buf_puts(c->b, " none recorded");
		for (uint32_t k = 0; k < m->nexit; k++)
			buf_printf(c->b, "%s %" PRId32 " x%" PRIu64, k ? "," : "", m->exit_code[k],
				   m->exit_count[k]);
		buf_puts(c->b, s ? "\n" : ";");
	}
}

static void text_gate(struct tctx *c)
{
	const struct diff *d = c->d;
	uint32_t fails = 0, unsure = 0;

	buf_puts(c->b, "\nrules:");
	for (uint32_t i = 0; i < d->nrules; i++)
		buf_printf(c->b, "%s '%s'", i ? "," : "", d->rules[i].text);
	buf_putc(c->b, '\n');
	for (uint32_t i = 0; i < d->nfinds; i++) {
		const struct diff_finding *f = &d->finds[i];
		const bool fail = f->verdict == DV_FAIL;
		fails += fail;
		unsure += !fail;
		buf_printf(c->b, "%s %s", fail ? "FAIL" : "cannot tell",
			   f->caller != UINT32_MAX ? name_text(&c->t, d->funcs[f->caller].name) : "");
		buf_printf(c->b, "%s%s: %s: %s\n", f->caller != UINT32_MAX ? " -> " : "",
			   name_text(&c->t, find_name(d, f)), d->rules[f->rule].text, f->why);
	}
	if (d->opts->nfiles[0] < 2 && d->opts->nfiles[1] < 2)
		buf_puts(c->b, "note: " DIFF_ONE_RUN_NOTE "\n");
	if (d->incomparable && !d->accepted)
		buf_puts(c->b, "gate: not comparable (exit 3)\n");
	else if (fails)
		buf_printf(c->b, "gate: FAIL (%" PRIu32 " failure%s, %" PRIu32 " cannot tell)\n", fails,
			   fails == 1 ? "" : "s", unsure);
	else if (unsure)
		buf_printf(c->b, "gate: no rule fails, but %" PRIu32 " cannot tell (too few samples): "
			   "those are neither a pass nor a fail\n", unsure);
	else
		buf_puts(c->b, "gate: pass\n");
}

static void write_text(const struct diff *d, struct buf *b)
{
	struct tctx c = { .d = d, .b = b, .fw = 24 };

	c.runs = d->opts->nfiles[0] > 1 || d->opts->nfiles[1] > 1;
	for (uint32_t i = 0; i < d->nres; i++) {
		const int w = text_width(name_text(&c.t, d->res[i].name), c.t.len);
		if (w > c.fw)
			c.fw = w;
	}
	text_header(&c);
	text_quantiles(&c);
	if (c.footnote)
		buf_printf(b, "± ∞: too few latencies for a 95%% interval of that quantile\n");
	if (c.shape)
		buf_puts(b, "p50 change and shift differ in sign: the latencies changed shape (several "
			    "modes, a longer tail), not only moved; see p90, p99\n");
	text_shift(&c);
	for (uint32_t i = 0; i < d->nres; i++)
		if (d->res[i].sampled) {
			buf_printf(b, "(sampled): over %d latencies on a side; its statistics are of a "
				   "uniform sample of %d of them, whose intervals hold for the whole\n",
				   DIFF_SAMPLES, DIFF_SAMPLES);
			break;
		}
	text_calls(&c);
	text_errors(&c);
	text_edges(&c);
	text_panics(&c);
	text_gate(&c);
	buf_free(&c.t);
	buf_free(&c.u);
}

/* ------------------------------------------------------------ JSON */

static void j_double(struct jsonw *w, const char *name, double v)
{
	jsonw_name(w, name);
	if (!isfinite(v)) {
		jsonw_null(w);
		return;
	}
	buf_printf(jsonw_raw(w), "%.17g", v);
}

static void j_q(struct jsonw *w, const char *name, const struct diff_q *q)
{
	jsonw_name(w, name);
	if (!q->have) {
		jsonw_null(w);
		return;
	}
	jsonw_start_object(w);
	jsonw_uint_field(w, "ns", q->v);
	jsonw_name(w, "ci");
	if (q->have_ci) {
		jsonw_start_array(w);
		jsonw_uint(w, q->lo);
		jsonw_uint(w, q->hi);
		jsonw_end_array(w);
	} else {
		jsonw_null(w);
	}
	jsonw_end_object(w);
}

static void j_meta(struct jsonw *w, const struct diff_meta *m)
{
	jsonw_start_object(w);
	jsonw_name(w, "files");
	jsonw_start_array(w);
	for (int i = 0; i < m->nfiles; i++)
		jsonw_string(w, m->paths[i]);
	jsonw_end_array(w);
	jsonw_string_field(w, "go_version", m->go_version);
	jsonw_string_field(w, "arch", m->arch);
	jsonw_string_field(w, "kernel", m->kernel);
	jsonw_uint_field(w, "events", m->events);
	jsonw_uint_field(w, "lost", m->lost);
	jsonw_uint_field(w, "suppressed", m->suppressed);
	jsonw_uint_field(w, "damaged", m->damaged);
	jsonw_name(w, "exit_statuses");
	jsonw_start_array(w);
	for (uint32_t k = 0; k < m->nexit; k++) {
		jsonw_start_object(w);
		jsonw_int_field(w, "code", m->exit_code[k]);
		jsonw_uint_field(w, "count", m->exit_count[k]);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
}

static void j_side(struct jsonw *w, const struct diff_fres *r, int s)
{
	jsonw_name(w, side_names[s]);
	jsonw_start_object(w);
	jsonw_uint_field(w, "calls", r->calls[s]);
	jsonw_uint_field(w, "calls_total", r->total[s]);
	jsonw_uint_field(w, "latencies", r->nlat[s]);
	jsonw_uint_field(w, "latencies_kept", r->nkept[s]);
	for (int qi = 0; qi < DIFF_NQ; qi++)
		j_q(w, q_names[qi], &r->q[s][qi]);
	if (r->spread[s] >= 0)
		j_double(w, "run_spread", r->spread[s]);
	if (r->has_err)
		j_double(w, "error_share", r->err_share[s]);
	jsonw_uint_field(w, "panics", r->panics[s]);
	jsonw_end_object(w);
}

static void j_func(struct jsonw *w, const struct diff_fres *r)
{
	jsonw_start_object(w);
	jsonw_string_field(w, "name", r->name);
	jsonw_string_field(w, "status", r->in[0] && r->in[1] ? "both" : r->in[1] ? "new" : "vanished");
	jsonw_bool_field(w, "sampled", r->sampled);
	j_side(w, r, 0);
	j_side(w, r, 1);
	if (r->have_test) {
		jsonw_name(w, "mann_whitney");
		jsonw_start_object(w);
		j_double(w, "u", r->mwu.u);
		j_double(w, "p", r->mwu.p);
		jsonw_bool_field(w, "exact", r->mwu.exact);
		jsonw_bool_field(w, "significant", r->mwu.p < DIFF_ALPHA);
		jsonw_end_object(w);
		jsonw_name(w, "shift");
		jsonw_start_object(w);
		j_double(w, "ns", r->hl.shift);
		jsonw_name(w, "ci");
		if (r->hl.have_ci) {
			jsonw_start_array(w);
			jsonw_int(w, r->hl.lo);
			jsonw_int(w, r->hl.hi);
			jsonw_end_array(w);
		} else {
			jsonw_null(w);
		}
		jsonw_end_object(w);
	}
	if (r->have_test)
		jsonw_bool_field(w, "p50_changed", diff_p50_significant(r));
	if (r->runs_ns >= 0)
		j_double(w, "run_noise_ns", r->runs_ns);
	if (r->have_err_test)
		j_double(w, "error_p", r->err_p);
	jsonw_end_object(w);
}

static void j_edges(struct jsonw *w, const struct diff *d)
{
	static const char *const kinds[] = { "new", "vanished", "changed", "same" };

	jsonw_name(w, "edges");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < d->nedges; i++) {
		const struct diff_edge *e = &d->edges[i];
		jsonw_start_object(w);
		jsonw_string_field(w, "caller", d->funcs[e->caller].name);
		jsonw_string_field(w, "callee", d->funcs[e->callee].name);
		jsonw_uint_field(w, "base", e->count[0]);
		jsonw_uint_field(w, "new", e->count[1]);
		jsonw_string_field(w, "status", kinds[edge_kind(e)]);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static void j_findings(struct jsonw *w, const struct diff *d)
{
	bool fail = false, unsure = false;

	jsonw_name(w, "rules");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < d->nrules; i++)
		jsonw_string(w, d->rules[i].text);
	jsonw_end_array(w);
	jsonw_name(w, "findings");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < d->nfinds; i++) {
		const struct diff_finding *f = &d->finds[i];
		jsonw_start_object(w);
		jsonw_string_field(w, "rule", d->rules[f->rule].text);
		if (f->func == UINT32_MAX)
			jsonw_null_field(w, "function");   /* crashes: the processes */
		else
			jsonw_string_field(w, "function", d->funcs[f->func].name);
		if (f->caller != UINT32_MAX)
			jsonw_string_field(w, "caller", d->funcs[f->caller].name);
		jsonw_string_field(w, "verdict", f->verdict == DV_FAIL ? "fail" : "cannot tell");
		jsonw_string_field(w, "detail", f->why);
		jsonw_end_object(w);
		fail |= f->verdict == DV_FAIL;
		unsure |= f->verdict == DV_CANNOT_TELL;
	}
	jsonw_end_array(w);
	jsonw_string_field(w, "verdict", d->incomparable && !d->accepted ? "not comparable"
					 : fail ? "fail" : unsure ? "cannot tell" : "pass");
}

static void write_json(const struct diff *d, struct buf *b)
{
	struct jsonw w;

	jsonw_init(&w, b, JSON_ESC_FFFD);
	jsonw_start_object(&w);
	for (int s = 0; s < 2; s++) {
		jsonw_name(&w, side_names[s]);
		j_meta(&w, &d->meta[s]);
	}
	jsonw_bool_field(&w, "comparable", !d->incomparable);
	if (d->incomparable)
		jsonw_string_field(&w, "differences", d->incomparable);
	jsonw_bool_field(&w, "accepted", d->accepted);
	j_double(&w, "alpha", DIFF_ALPHA);
	jsonw_bool_field(&w, "run_to_run_known", d->opts->nfiles[0] > 1 || d->opts->nfiles[1] > 1);
	jsonw_uint_field(&w, "exact_up_to", DIFF_SAMPLES);
	jsonw_name(&w, "functions");
	jsonw_start_array(&w);
	for (uint32_t i = 0; i < d->nres; i++)
		j_func(&w, &d->res[i]);
	jsonw_end_array(&w);
	jsonw_name(&w, "geomean_p50");
	jsonw_start_object(&w);
	j_double(&w, "base", d->geomean[0]);
	j_double(&w, "new", d->geomean[1]);
	jsonw_uint_field(&w, "functions", d->ngeo);
	jsonw_end_object(&w);
	j_edges(&w, d);
	j_findings(&w, d);
	jsonw_end_object(&w);
	buf_putc(b, '\n');
}

/* ------------------------------------------------------------ Markdown */

/* A name in a table cell: backquoted, '|' and '`' kept out. */
static void md_name(struct buf *b, struct buf *t, const char *name)
{
	const char *s = name_text(t, name);

	buf_putc(b, '`');
	for (; *s; s++)
		buf_putc(b, *s == '|' || *s == '`' ? '?' : *s);
	buf_putc(b, '`');
}

static void md_findings(const struct diff *d, struct buf *b, struct buf *t)
{
	uint32_t fails = 0;

	for (uint32_t i = 0; i < d->nfinds; i++)
		fails += d->finds[i].verdict == DV_FAIL;
	if (d->incomparable && !d->accepted)
		buf_printf(b, "### gotrace diff: not comparable\n\n%s\n\n", d->incomparable);
	else
		buf_printf(b, "### gotrace diff: %s\n\n", fails ? "FAIL" : d->nfinds ?
			   "no failure, some cannot tell (too few samples)" : "pass");
	for (uint32_t i = 0; i < d->nfinds; i++) {
		const struct diff_finding *f = &d->finds[i];
		buf_puts(b, f->verdict == DV_FAIL ? "- **fail** " : "- cannot tell: ");
		if (f->caller != UINT32_MAX) {
			md_name(b, t, d->funcs[f->caller].name);
			buf_puts(b, " → ");
		}
		md_name(b, t, find_name(d, f));
		buf_printf(b, " `%s`: %s\n", d->rules[f->rule].text, f->why);
	}
	if (d->nfinds)
		buf_putc(b, '\n');
}

static void write_markdown(const struct diff *d, struct buf *b)
{
	struct buf t = BUF_INIT, u = BUF_INIT;

	md_findings(d, b, &t);
	buf_puts(b, "| function | calls base | calls new | p50 base | p50 new | vs base |\n"
		    "|---|---:|---:|---:|---:|---|\n");
	for (uint32_t i = 0; i < d->nres; i++) {
		const struct diff_fres *r = &d->res[i];
		buf_puts(b, "| ");
		md_name(b, &t, r->name);
		buf_printf(b, "%s | %" PRIu64 " | %" PRIu64 " | ", !r->in[0] ? " (new)" :
			   !r->in[1] ? " (vanished)" : "", r->calls[0], r->calls[1]);
		buf_printf(b, "%s | ", q_text(&u, &r->q[0][0]));
		buf_printf(b, "%s | ", q_text(&u, &r->q[1][0]));
		if (!r->have_test) {
			buf_puts(b, "? |\n");
		} else {
			p50_change(b, r);
			buf_puts(b, " |\n");
		}
	}
	bool head = false;
	for (uint32_t i = 0; i < d->nedges; i++) {
		const struct diff_edge *e = &d->edges[i];
		if (edge_kind(e) > 1)
			continue;
		if (!head)
			buf_puts(b, "\nCall edges that appeared or vanished:\n\n");
		head = true;
		buf_puts(b, edge_kind(e) ? "- vanished: " : "- new: ");
		md_name(b, &t, d->funcs[e->caller].name);
		buf_puts(b, " → ");
		md_name(b, &t, d->funcs[e->callee].name);
		buf_printf(b, " (%" PRIu64 " → %" PRIu64 " calls)\n", e->count[0], e->count[1]);
	}
	if (d->opts->nfiles[0] < 2 && d->opts->nfiles[1] < 2)
		buf_puts(b, "\nNote: " DIFF_ONE_RUN_NOTE ".\n");
	buf_printf(b, "\n<sub>gotrace-report diff: %d+%d recording(s), α = %.2f, rules: ",
		   d->opts->nfiles[0], d->opts->nfiles[1], DIFF_ALPHA);
	for (uint32_t i = 0; i < d->nrules; i++)
		buf_printf(b, "%s`%s`", i ? ", " : "", d->rules[i].text);
	buf_puts(b, "</sub>\n");
	buf_free(&t);
	buf_free(&u);
}

void diff_write(const struct diff *d, struct buf *b)
{
	switch (d->opts->format) {
	case DIFF_FMT_JSON: write_json(d, b); break;
	case DIFF_FMT_MARKDOWN: write_markdown(d, b); break;
	default: write_text(d, b); break;
	}
}
