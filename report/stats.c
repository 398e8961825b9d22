/* SPDX-License-Identifier: MIT */
/*
 * Per-function statistics (report/stats.h). Each group keeps counters, an
 * exact min/max/sum, a log2 histogram of microseconds (bcc's) and a
 * log-linear histogram of nanoseconds for percentiles.
 */
#include "stats.h"
#include "width.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "output.h"
#include "timeparse.h"
#include "xalloc.h"

#define SUB 16                 /* sub-buckets per power of two */
#define NBUCKETS (61 * SUB)    /* stats_bucket(UINT64_MAX) < this */
#define NLOG2 64
#define EXACT 512              /* latencies kept exactly per group */

struct group {
	char *key;                 /* function, '\0', by-value text */
	size_t klen;
	bool num;                  /* the --by value is a number: sorted as one */
	bool dbl;
	__int128 iv;               /* FV_INT, FV_UINT */
	double dv;                 /* FV_DBL */
	uint64_t entries, returns, nlat;
	uint64_t lost;             /* returns shown alone as lost: no latency */
	uint64_t min, max;
	unsigned __int128 sum;
	uint64_t *lin;             /* NBUCKETS, allocated with the first latency */
	uint64_t *exact;           /* the first EXACT latencies */
	uint64_t log2[NLOG2];
};

struct stats {
	struct filter *by;
	const char *by_name;
	uint32_t max;
	struct u64map ix;          /* hash of a key -> index in groups */
	struct group **groups;     /* in the order they were met */
	uint32_t count, cap;
	uint64_t dropped;
	uint64_t span_ns;          /* stats_set_window() */
	bool have_span;
	struct buf key;            /* scratch */
};

uint32_t stats_bucket(uint64_t v)
{
	if (v < SUB)
		return (uint32_t)v;
	const int msb = 63 - __builtin_clzll(v);
	const uint32_t sub = (uint32_t)(v >> (msb - 4)) & (SUB - 1);
	return (uint32_t)(msb - 3) * SUB + sub;
}

uint64_t stats_bucket_mid(uint32_t i)
{
	const uint32_t major = i / SUB, sub = i % SUB;

	if (major == 0)
		return sub;
	const int msb = (int)major + 3;
	const uint64_t lo = (uint64_t)(SUB + sub) << (msb - 4);
	const uint64_t width = 1ull << (msb - 4);
	return lo + width / 2;
}

struct stats *stats_new(struct filter *by, const char *by_name, uint32_t max_groups)
{
	struct stats *s = xcalloc(1, sizeof(*s), "stats");

	s->by = by;
	s->by_name = by_name;
	s->max = max_groups ? max_groups : 10000;
	return s;
}

void stats_free(struct stats *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->count; i++) {
		free(s->groups[i]->key);
		free(s->groups[i]->lin);
		free(s->groups[i]->exact);
		free(s->groups[i]);
	}
	free(s->groups);
	u64map_free(&s->ix);
	buf_free(&s->key);
	free(s);
}

uint64_t stats_dropped(const struct stats *s)
{
	return s->dropped;
}

/* The group of the key in s->key, NULL when there is none yet. */
static struct group *group_find(const struct stats *s, uint64_t hash)
{
	uint32_t pos = 0;

	for (const uint32_t *i; (i = u64map_find(&s->ix, hash, &pos));) {
		struct group *g = s->groups[*i];
		if (g->klen == s->key.len && !memcmp(g->key, s->key.data, g->klen))
			return g;
	}
	return NULL;
}

/* A new group for the key in s->key, filed under `hash`. */
static struct group *group_new(struct stats *s, uint64_t hash)
{
	if (s->count == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->groups = xrealloc(s->groups, s->cap * sizeof(*s->groups), "stats");
	}
	struct group *g = xcalloc(1, sizeof(*g), "stats");
	g->key = xcalloc(1, s->key.len + 1, "stats");
	memcpy(g->key, s->key.data, s->key.len);
	g->klen = s->key.len;
	g->min = UINT64_MAX;
	if (u64map_add(&s->ix, hash, s->count, UINT32_MAX))
		xalloc_die("stats: group index");
	s->groups[s->count++] = g;
	return g;
}

/* Text of a --by value for the key and the table; integers of an
 * address argument (`arg`, NULL unknown) in hex, as text shows them. */
static void by_text(struct buf *b, const struct filter_value *v,
		    const struct gtr_arg *arg)
{
	char tmp[32];

	switch (v->kind) {
	case FV_INT:
		if (output_arg_is_address(arg))
			buf_hex(b, (uint64_t)v->i);
		else
			buf_i64(b, v->i);
		break;
	case FV_UINT:
		if (output_arg_is_address(arg))
			buf_hex(b, v->u);
		else
			buf_u64(b, v->u);
		break;
	case FV_DBL: buf_puts(b, output_double(tmp, v->d)); break;
	case FV_STR:
		buf_putc(b, '"');
		output_text_bytes(b, v->s, v->len, true);
		buf_putc(b, '"');
		if (v->full_len > v->len)
			buf_printf(b, "...(len=%llu)", (unsigned long long)v->full_len);
		break;
	default: buf_puts(b, "-"); break;
	}
}

void stats_event(struct stats *s, const struct report_event *e)
{
	const struct gtr_probe *p = e->entry_probe ? e->entry_probe : e->probe;
	const bool ret = e->ev->kind == GTR_KIND_RETURN;
	struct filter_value v = { .kind = FV_MISSING };
	char tmp[32];

	buf_reset(&s->key);
	if (p && p->func) {
		buf_puts(&s->key, p->func);
	} else {
		snprintf(tmp, sizeof(tmp), "probe#%u", e->ev->probe_id);
		buf_puts(&s->key, tmp);
	}
	buf_putc(&s->key, '\0');
	if (s->by) {
		if (!filter_field(s->by, e, &v))
			v.kind = FV_MISSING;
		by_text(&s->key, &v, v.kind == FV_INT || v.kind == FV_UINT ?
					 filter_field_arg(s->by, e) : NULL);
	}
	const uint64_t hash = u64map_hash_mem(s->key.data, s->key.len, 0);
	struct group *g = group_find(s, hash);
	if (!g) {
		if (s->count >= s->max) {
			s->dropped = gtr_add_sat(s->dropped, 1);
			return;
		}
		g = group_new(s, hash);
		if (s->by && (v.kind == FV_INT || v.kind == FV_UINT || v.kind == FV_DBL)) {
			g->num = true;
			g->dbl = v.kind == FV_DBL;
			g->iv = v.kind == FV_INT ? (__int128)v.i : (__int128)v.u;
			g->dv = v.kind == FV_DBL ? v.d : v.kind == FV_INT ? (double)v.i : (double)v.u;
		}
	}
	/* every count saturates (its column then reads ">=N") */
	if (!ret) {
		g->entries = gtr_add_sat(g->entries, 1);
		return;
	}
	g->returns = gtr_add_sat(g->returns, 1);
	if (e->lost)
		g->lost = gtr_add_sat(g->lost, 1);
	if (!e->entry)
		return;
	const uint64_t ns = e->latency_ns;
	if (!g->lin) {
		g->lin = xcalloc(NBUCKETS, sizeof(*g->lin), "stats");
		g->exact = xcalloc(EXACT, sizeof(*g->exact), "stats");
	}
	if (g->nlat < EXACT)
		g->exact[g->nlat] = ns;
	uint64_t *lin = &g->lin[stats_bucket(ns)];
	*lin = gtr_add_sat(*lin, 1);
	const uint64_t us = ns / 1000;
	uint64_t *l2 = &g->log2[us < 2 ? 0 : 63 - __builtin_clzll(us)];
	*l2 = gtr_add_sat(*l2, 1);
	g->nlat = gtr_add_sat(g->nlat, 1);
	g->sum += ns;
	if (ns < g->min)
		g->min = ns;
	if (ns > g->max)
		g->max = ns;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The p-th percentile (0 < p <= 100) of a group's latencies: the value of
 * rank ceil(p/100 * n), exact while the group has at most EXACT latencies,
 * else the midpoint of its log-linear bucket (within 1/32).
 */
static uint64_t percentile(const struct group *g, double p)
{
	uint64_t rank = (uint64_t)(p / 100.0 * (double)g->nlat + 0.999999);
	uint64_t cum = 0;

	if (rank < 1)
		rank = 1;
	if (rank > g->nlat)
		rank = g->nlat;
	if (g->nlat <= EXACT)
		return g->exact[rank - 1];
	for (uint32_t i = 0; i < NBUCKETS; i++) {
		cum += g->lin[i];
		if (cum >= rank) {
			uint64_t v = stats_bucket_mid(i);
			return v < g->min ? g->min : v > g->max ? g->max : v;
		}
	}
	return g->max;
}

static uint64_t calls_of(const struct group *g)
{
	return g->entries ? g->entries : g->returns;
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a;
	const struct group *y = *(const struct group *const *)b;

	if (calls_of(x) != calls_of(y))
		return calls_of(x) > calls_of(y) ? -1 : 1;
	/* the function, then a numeric --by value as a number (14 before 1000) */
	const int rf = strcmp(x->key, y->key);
	if (rf)
		return rf;
	if (x->num && y->num) {
		if (x->dbl || y->dbl) {
			if (x->dv != y->dv)
				return x->dv < y->dv ? -1 : 1;
		} else if (x->iv != y->iv) {
			return x->iv < y->iv ? -1 : 1;
		}
	} else if (x->num != y->num) {
		return x->num ? -1 : 1;   /* numbers before '-' (missing) and strings */
	}
	const size_t n = x->klen < y->klen ? x->klen : y->klen;
	const int r = memcmp(x->key, y->key, n);
	return r ? r : (x->klen > y->klen) - (x->klen < y->klen);
}

/* ------------------------------------------------------------ columns */


/* Appends `s` padded to `width` columns (text_cell() without a cut). */
static void put_cell(struct buf *b, const char *s, int width, bool left)
{
	text_cell(b, s, width, left, 0);
}

void stats_print_log2(struct buf *b, const uint64_t *vals, int n, const char *unit)
{
	int idx_max = -1;
	uint64_t val_max = 0;

	for (int i = 0; i < n; i++) {
		if (vals[i])
			idx_max = i;
		if (vals[i] > val_max)
			val_max = vals[i];
	}
	if (idx_max < 0)
		return;
	/* bcc libbpf-tools trace_helpers.c print_log2_hist() */
	const bool narrow = idx_max <= 32;
	const int stars = narrow ? 40 : 20;
	buf_printf(b, "%*s%-*s : count    distribution\n", narrow ? 5 : 15, "",
		   narrow ? 19 : 29, unit);
	for (int i = 0; i <= idx_max; i++) {
		const uint64_t low = i ? 1ull << i : 0;
		const uint64_t high = !i ? 1 : i < 63 ? (1ull << (i + 1)) - 1 : UINT64_MAX;
		const int width = narrow ? 10 : 20;
		buf_printf(b, "%*llu -> %-*llu : %-8llu |", width, (unsigned long long)low,
			   width, (unsigned long long)high, (unsigned long long)vals[i]);
		const int k = (int)((double)vals[i] * stars / (double)val_max);
		buf_pad(b, '*', k);
		buf_pad(b, ' ', stars - k);
		buf_puts(b, "|\n");
	}
}

uint64_t stats_window_span(uint64_t first_ns, uint64_t last_ns, int64_t since_ns,
			   int64_t until_ns)
{
	uint64_t lo = first_ns, hi = last_ns;

	if (since_ns > 0 && (uint64_t)since_ns > lo)
		lo = (uint64_t)since_ns;
	if (until_ns < 0)
		return 0;
	if ((uint64_t)until_ns < hi)
		hi = (uint64_t)until_ns;
	return hi > lo ? hi - lo : 0;
}

void stats_set_window(struct stats *s, uint64_t first_ns, uint64_t last_ns,
		      int64_t since_ns, int64_t until_ns)
{
	s->span_ns = stats_window_span(first_ns, last_ns, since_ns, until_ns);
	s->have_span = true;
}

/* The FUNC cell of a group: its function, escaped as in text, a name over
 * STATS_FUNC_COLS columns cut to its end. */
static const char *func_text(struct buf *t, const struct group *g)
{
	buf_reset(t);
	output_text_bytes(t, (const uint8_t *)g->key, strlen(g->key), false);
	text_keep_tail(t, 0, STATS_FUNC_COLS);
	return buf_cstr(t);
}

/* A count column: ' ' and n right-aligned in 10 columns, ">=" before a
 * count that saturated (it then takes 22). */
static void put_count(struct buf *b, uint64_t n)
{
	char t[32];

	snprintf(t, sizeof(t), "%s%llu", n == UINT64_MAX ? ">=" : "", (unsigned long long)n);
	buf_putc(b, ' ');
	put_cell(b, t, 10, false);
}

void stats_write(struct stats *s, struct buf *b, uint64_t span_ns, bool hist)
{
	struct group **gs = xcalloc(s->count + 1, sizeof(*gs), "stats");
	struct buf t = BUF_INIT;
	uint32_t n = 0;
	bool lost = false;         /* the LOST column: only when some group has one */
	char t1[24], t2[24];
	int fw = 4, bw = s->by ? text_width(s->by_name, strlen(s->by_name)) : 0;

	if (s->have_span)
		span_ns = s->span_ns;
	for (uint32_t i = 0; i < s->count; i++) {
		struct group *g = s->groups[i];
		gs[n++] = g;
		lost |= g->lost > 0;
		const char *fn = func_text(&t, g);
		const int l = text_width(fn, strlen(fn));
		if (l > fw)
			fw = l;
		const char *v = g->key + strlen(g->key) + 1;
		const int bl = text_width(v, strlen(v));
		if (s->by && bl > bw)
			bw = bl;
	}
	if (bw > STATS_KEY_COLS)
		bw = STATS_KEY_COLS;
	qsort(gs, n, sizeof(*gs), group_cmp);
	for (uint32_t i = 0; i < n; i++)
		if (gs[i]->nlat && gs[i]->nlat <= EXACT)
			qsort(gs[i]->exact, gs[i]->nlat, sizeof(uint64_t), u64_cmp);

	put_cell(b, "FUNC", fw, true);
	if (s->by) {
		buf_putc(b, ' ');
		text_cell(b, s->by_name, bw, true, STATS_KEY_COLS);
	}
	buf_puts(b, lost ? "      CALLS       LOST      RATE/s        P50        P90        P99        MAX\n"
			 : "      CALLS      RATE/s        P50        P90        P99        MAX\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct group *g = gs[i];
		put_cell(b, func_text(&t, g), fw, true);
		if (s->by) {
			buf_putc(b, ' ');
			text_cell(b, g->key + strlen(g->key) + 1, bw, true, STATS_KEY_COLS);
		}
		put_count(b, calls_of(g));
		if (lost)
			put_count(b, g->lost);
		if (span_ns)
			snprintf(t1, sizeof(t1), "%.1f", (double)calls_of(g) * 1e9 / (double)span_ns);
		else
			snprintf(t1, sizeof(t1), "-");
		buf_putc(b, ' ');
		put_cell(b, t1, 11, false);
		const double ps[] = { 50, 90, 99 };
		for (int k = 0; k < 3; k++) {
			buf_putc(b, ' ');
			put_cell(b, g->nlat ? rtime_fmt_duration(t2, percentile(g, ps[k])) : "-", 10, false);
		}
		buf_putc(b, ' ');
		put_cell(b, g->nlat ? rtime_fmt_duration(t2, g->max) : "-", 10, false);
		buf_putc(b, '\n');
	}
	for (uint32_t i = 0; hist && i < n; i++) {
		const struct group *g = gs[i];
		if (!g->nlat)
			continue;
		buf_putc(b, '\n');
		output_text_bytes(b, (const uint8_t *)g->key, strlen(g->key), false);
		if (s->by) {
			buf_printf(b, " %s=", s->by_name);
			buf_puts(b, g->key + strlen(g->key) + 1);
		}
		buf_printf(b, ": %s%llu calls returned, latency min %s", output_at_least(g->nlat),
			   (unsigned long long)g->nlat, rtime_fmt_duration(t1, g->min));
		buf_printf(b, " avg %s max ", rtime_fmt_duration(t2, (uint64_t)(g->sum / g->nlat)));
		buf_printf(b, "%s\n", rtime_fmt_duration(t1, g->max));
		stats_print_log2(b, g->log2, NLOG2, "usecs");
	}
	buf_free(&t);
	free(gs);
}
