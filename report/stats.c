/* SPDX-License-Identifier: MIT */
/*
 * Per-function statistics (report/stats.h). Each group keeps counters, an
 * exact min/max/sum, a log2 histogram of microseconds (bcc's) and a
 * log-linear histogram of nanoseconds for percentiles.
 */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "timeparse.h"

#define SUB 16                 /* sub-buckets per power of two */
#define NBUCKETS (61 * SUB)    /* stats_bucket(UINT64_MAX) < this */
#define NLOG2 64
#define EXACT 512              /* latencies kept exactly per group */

struct group {
	char *key;                 /* function, '\0', by-value text */
	size_t klen;
	uint64_t hash;
	bool num;                  /* the --by value is a number: sorted as one */
	bool dbl;
	__int128 iv;               /* FV_INT, FV_UINT */
	double dv;                 /* FV_DBL */
	uint64_t entries, returns, nlat;
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
	struct group **tab;        /* open addressing */
	uint32_t cap, count;
	uint64_t dropped;
	uint64_t span_ns;          /* stats_set_window() */
	bool have_span;
	struct buf key;            /* scratch */
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "gotrace-report: out of memory (stats, %zu bytes)\n", n * size);
		exit(1);
	}
	return p;
}

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
	struct stats *s = xcalloc(1, sizeof(*s));

	s->by = by;
	s->by_name = by_name;
	s->max = max_groups ? max_groups : 10000;
	return s;
}

void stats_free(struct stats *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->cap; i++)
		if (s->tab[i]) {
			free(s->tab[i]->key);
			free(s->tab[i]->lin);
			free(s->tab[i]->exact);
			free(s->tab[i]);
		}
	free(s->tab);
	buf_free(&s->key);
	free(s);
}

uint64_t stats_dropped(const struct stats *s)
{
	return s->dropped;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
	return h;
}

static void rehash(struct stats *s, uint32_t cap)
{
	struct group **t = xcalloc(cap, sizeof(*t));

	for (uint32_t i = 0; i < s->cap; i++) {
		if (!s->tab[i])
			continue;
		uint32_t h = (uint32_t)s->tab[i]->hash & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->cap = cap;
}

/* Text of a --by value for the key and the table. */
static void by_text(struct buf *b, const struct filter_value *v)
{
	char tmp[32];

	switch (v->kind) {
	case FV_INT: buf_i64(b, v->i); break;
	case FV_UINT: buf_u64(b, v->u); break;
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
	struct filter_value v;
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
		by_text(&s->key, &v);
	}
	const uint64_t hash = hash_bytes(s->key.data, s->key.len);
	if ((s->count + 1) * 2 > s->cap)
		rehash(s, s->cap ? s->cap * 2 : 64);
	uint32_t h = (uint32_t)hash & (s->cap - 1);
	struct group *g;
	while ((g = s->tab[h]) &&
	       !(g->hash == hash && g->klen == s->key.len && !memcmp(g->key, s->key.data, g->klen)))
		h = (h + 1) & (s->cap - 1);
	if (!g) {
		if (s->count >= s->max) {
			s->dropped++;
			return;
		}
		g = xcalloc(1, sizeof(*g));
		g->key = xcalloc(1, s->key.len + 1);
		memcpy(g->key, s->key.data, s->key.len);
		g->klen = s->key.len;
		g->hash = hash;
		g->min = UINT64_MAX;
		if (s->by && (v.kind == FV_INT || v.kind == FV_UINT || v.kind == FV_DBL)) {
			g->num = true;
			g->dbl = v.kind == FV_DBL;
			g->iv = v.kind == FV_INT ? (__int128)v.i : (__int128)v.u;
			g->dv = v.kind == FV_DBL ? v.d : v.kind == FV_INT ? (double)v.i : (double)v.u;
		}
		s->tab[h] = g;
		s->count++;
	}
	if (!ret) {
		g->entries++;
		return;
	}
	g->returns++;
	if (!e->entry)
		return;
	const uint64_t ns = e->latency_ns;
	if (!g->lin) {
		g->lin = xcalloc(NBUCKETS, sizeof(*g->lin));
		g->exact = xcalloc(EXACT, sizeof(*g->exact));
	}
	if (g->nlat < EXACT)
		g->exact[g->nlat] = ns;
	g->lin[stats_bucket(ns)]++;
	const uint64_t us = ns / 1000;
	g->log2[us < 2 ? 0 : 63 - __builtin_clzll(us)]++;
	g->nlat++;
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

struct range {
	uint32_t lo, hi;
};

/* Combining marks and zero-width characters (main blocks; sorted). */
static const struct range zero_width[] = {
	{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd }, { 0x05bf, 0x05bf },
	{ 0x05c1, 0x05c2 }, { 0x05c4, 0x05c5 }, { 0x05c7, 0x05c7 }, { 0x0610, 0x061a },
	{ 0x064b, 0x065f }, { 0x0670, 0x0670 }, { 0x06d6, 0x06dc }, { 0x06df, 0x06e4 },
	{ 0x06e7, 0x06e8 }, { 0x06ea, 0x06ed }, { 0x0711, 0x0711 }, { 0x0730, 0x074a },
	{ 0x07a6, 0x07b0 }, { 0x07eb, 0x07f3 }, { 0x0816, 0x082d }, { 0x0859, 0x085b },
	{ 0x08d3, 0x08e1 }, { 0x08e3, 0x0902 }, { 0x093a, 0x093a }, { 0x093c, 0x093c },
	{ 0x0941, 0x0948 }, { 0x094d, 0x094d }, { 0x0951, 0x0957 }, { 0x0962, 0x0963 },
	{ 0x0981, 0x0981 }, { 0x09bc, 0x09bc }, { 0x09c1, 0x09c4 }, { 0x09cd, 0x09cd },
	{ 0x0a01, 0x0a02 }, { 0x0a3c, 0x0a3c }, { 0x0a41, 0x0a51 }, { 0x0a70, 0x0a71 },
	{ 0x0a81, 0x0a82 }, { 0x0abc, 0x0abc }, { 0x0ac1, 0x0ac8 }, { 0x0acd, 0x0acd },
	{ 0x0b01, 0x0b01 }, { 0x0b3c, 0x0b3c }, { 0x0b3f, 0x0b3f }, { 0x0b41, 0x0b44 },
	{ 0x0b4d, 0x0b4d }, { 0x0bc0, 0x0bc0 }, { 0x0bcd, 0x0bcd }, { 0x0c3e, 0x0c40 },
	{ 0x0c46, 0x0c56 }, { 0x0cbc, 0x0cbc }, { 0x0ccc, 0x0ccd }, { 0x0d41, 0x0d44 },
	{ 0x0d4d, 0x0d4d }, { 0x0dca, 0x0dca }, { 0x0dd2, 0x0dd6 }, { 0x0e31, 0x0e31 },
	{ 0x0e34, 0x0e3a }, { 0x0e47, 0x0e4e }, { 0x0eb1, 0x0eb1 }, { 0x0eb4, 0x0ebc },
	{ 0x0ec8, 0x0ecd }, { 0x0f18, 0x0f19 }, { 0x0f35, 0x0f35 }, { 0x0f37, 0x0f37 },
	{ 0x0f39, 0x0f39 }, { 0x0f71, 0x0f7e }, { 0x0f80, 0x0f84 }, { 0x0f86, 0x0f87 },
	{ 0x0f8d, 0x0fbc }, { 0x102d, 0x1030 }, { 0x1032, 0x1037 }, { 0x1039, 0x103a },
	{ 0x1160, 0x11ff }, { 0x135d, 0x135f }, { 0x1712, 0x1714 }, { 0x17b4, 0x17b5 },
	{ 0x17b7, 0x17bd }, { 0x17c6, 0x17c6 }, { 0x17c9, 0x17d3 }, { 0x180b, 0x180f },
	{ 0x1ab0, 0x1aff }, { 0x1dc0, 0x1dff }, { 0x200b, 0x200f }, { 0x2060, 0x2064 },
	{ 0x20d0, 0x20ff }, { 0x2cef, 0x2cf1 }, { 0x2de0, 0x2dff }, { 0x302a, 0x302d },
	{ 0x3099, 0x309a }, { 0xa66f, 0xa672 }, { 0xa674, 0xa67d }, { 0xa69e, 0xa69f },
	{ 0xa6f0, 0xa6f1 }, { 0xa8e0, 0xa8f1 }, { 0xfe00, 0xfe0f }, { 0xfe20, 0xfe2f },
	{ 0x1d167, 0x1d169 }, { 0x1d17b, 0x1d182 }, { 0x1d185, 0x1d18b },
	{ 0x1d1aa, 0x1d1ad }, { 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
	{ 0xe0100, 0xe01ef },
};

/* East Asian Wide and Fullwidth characters (sorted). */
static const struct range wide[] = {
	{ 0x1100, 0x115f }, { 0x231a, 0x231b }, { 0x2329, 0x232a }, { 0x23e9, 0x23ec },
	{ 0x23f0, 0x23f0 }, { 0x23f3, 0x23f3 }, { 0x25fd, 0x25fe }, { 0x2614, 0x2615 },
	{ 0x2648, 0x2653 }, { 0x267f, 0x267f }, { 0x2693, 0x2693 }, { 0x26a1, 0x26a1 },
	{ 0x26aa, 0x26ab }, { 0x26bd, 0x26be }, { 0x26c4, 0x26c5 }, { 0x26ce, 0x26ce },
	{ 0x26d4, 0x26d4 }, { 0x26ea, 0x26ea }, { 0x26f2, 0x26f3 }, { 0x26f5, 0x26f5 },
	{ 0x26fa, 0x26fa }, { 0x26fd, 0x26fd }, { 0x2705, 0x2705 }, { 0x270a, 0x270b },
	{ 0x2728, 0x2728 }, { 0x274c, 0x274c }, { 0x274e, 0x274e }, { 0x2753, 0x2755 },
	{ 0x2757, 0x2757 }, { 0x2795, 0x2797 }, { 0x27b0, 0x27b0 }, { 0x27bf, 0x27bf },
	{ 0x2b1b, 0x2b1c }, { 0x2b50, 0x2b50 }, { 0x2b55, 0x2b55 }, { 0x2e80, 0x303e },
	{ 0x3041, 0x33ff }, { 0x3400, 0x4dbf }, { 0x4e00, 0x9fff }, { 0xa000, 0xa4cf },
	{ 0xa960, 0xa97f }, { 0xac00, 0xd7a3 }, { 0xf900, 0xfaff }, { 0xfe10, 0xfe19 },
	{ 0xfe30, 0xfe6f }, { 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x16fe0, 0x16fe4 },
	{ 0x17000, 0x18cff }, { 0x1b000, 0x1b2ff }, { 0x1f004, 0x1f004 }, { 0x1f0cf, 0x1f0cf },
	{ 0x1f18e, 0x1f18e }, { 0x1f191, 0x1f19a }, { 0x1f200, 0x1f202 }, { 0x1f210, 0x1f23b },
	{ 0x1f240, 0x1f248 }, { 0x1f250, 0x1f251 }, { 0x1f260, 0x1f265 }, { 0x1f300, 0x1f64f },
	{ 0x1f680, 0x1f6ff }, { 0x1f7e0, 0x1f7eb }, { 0x1f90c, 0x1f9ff }, { 0x1fa70, 0x1faff },
	{ 0x20000, 0x2fffd }, { 0x30000, 0x3fffd },
};

static bool in_ranges(const struct range *r, size_t n, uint32_t cp)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (cp > r[mid].hi)
			lo = mid + 1;
		else if (cp < r[mid].lo)
			hi = mid;
		else
			return true;
	}
	return false;
}

static int cp_width(uint32_t cp)
{
	if (cp < 0x300)
		return 1;
	if (in_ranges(zero_width, sizeof(zero_width) / sizeof(zero_width[0]), cp))
		return 0;
	if (in_ranges(wide, sizeof(wide) / sizeof(wide[0]), cp))
		return 2;
	return 1;
}

/* Bytes (1-4) of the character at s[0] (n > 0), its columns in *w; an
 * invalid UTF-8 byte is one byte of one column. */
static size_t char_at(const char *s, size_t n, int *w)
{
	const uint8_t c = (uint8_t)s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80) {
		*w = 1;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; cp = c & 0x07;
	} else {
		*w = 1;
		return 1;
	}
	if (len > n) {
		*w = 1;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		const uint8_t d = (uint8_t)s[i];
		if ((d & 0xc0) != 0x80) {
			*w = 1;
			return 1;
		}
		cp = cp << 6 | (d & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
		*w = 1;
		return 1;
	}
	*w = cp_width(cp);
	return len;
}

int stats_text_width(const char *s, size_t n)
{
	int cols = 0, w;

	for (size_t i = 0; i < n;) {
		i += char_at(s + i, n - i, &w);
		cols += w;
	}
	return cols;
}

/*
 * Bytes of s[0, n) that fit in `max` columns when a cut text ends with an
 * ellipsis (max - 1 columns of text), their columns in *cols. An escape
 * (\x41, \n: output_text_bytes()) is kept or cut whole.
 */
static size_t cut_at(const char *s, size_t n, int max, int *cols)
{
	size_t i = 0;
	int c = 0, w;

	while (i < n) {
		size_t k;
		if (s[i] == '\\' && i + 1 < n) {
			k = s[i + 1] == 'x' && i + 3 < n ? 4 : 2;
			w = (int)k;
		} else {
			k = char_at(s + i, n - i, &w);
		}
		if (c + w > max - 1)
			break;
		c += w;
		i += k;
	}
	*cols = c;
	return i;
}

/*
 * Appends text `s` (escaped already) padded with spaces to `width` columns,
 * on the right when `left`; when `max` > 0 and it is wider than `max`
 * columns, cut to fit with an ellipsis.
 */
static void put_cell_max(struct buf *b, const char *s, int width, bool left, int max)
{
	const size_t len = strlen(s);
	int cols = stats_text_width(s, len);
	size_t n = len;
	bool cut = false;

	if (max > 0 && cols > max) {
		n = cut_at(s, len, max, &cols);
		cols++;                  /* the ellipsis */
		cut = true;
	}
	if (!left)
		buf_pad(b, ' ', width - cols);
	buf_add(b, s, n);
	if (cut)
		buf_puts(b, "\xe2\x80\xa6"); /* U+2026 … */
	if (left)
		buf_pad(b, ' ', width - cols);
}

static void put_cell(struct buf *b, const char *s, int width, bool left)
{
	put_cell_max(b, s, width, left, 0);
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

/* The FUNC cell of a group: its function, escaped as in text. */
static const char *func_text(struct buf *t, const struct group *g)
{
	buf_reset(t);
	output_text_bytes(t, (const uint8_t *)g->key, strlen(g->key), false);
	return buf_cstr(t);
}

void stats_write(struct stats *s, struct buf *b, uint64_t span_ns, bool hist)
{
	struct group **gs = xcalloc(s->count + 1, sizeof(*gs));
	struct buf t = BUF_INIT;
	uint32_t n = 0;
	char t1[24], t2[24];
	int fw = 4, bw = s->by ? stats_text_width(s->by_name, strlen(s->by_name)) : 0;

	if (s->have_span)
		span_ns = s->span_ns;
	for (uint32_t i = 0; i < s->cap; i++)
		if (s->tab[i]) {
			struct group *g = s->tab[i];
			gs[n++] = g;
			const char *fn = func_text(&t, g);
			const int l = stats_text_width(fn, strlen(fn));
			if (l > fw)
				fw = l;
			const char *v = g->key + strlen(g->key) + 1;
			const int bl = stats_text_width(v, strlen(v));
			if (s->by && bl > bw)
				bw = bl;
		}
	if (fw > 48)
		fw = 48;
	if (bw > STATS_KEY_COLS)
		bw = STATS_KEY_COLS;
	qsort(gs, n, sizeof(*gs), group_cmp);
	for (uint32_t i = 0; i < n; i++)
		if (gs[i]->nlat && gs[i]->nlat <= EXACT)
			qsort(gs[i]->exact, gs[i]->nlat, sizeof(uint64_t), u64_cmp);

	put_cell(b, "FUNC", fw, true);
	if (s->by) {
		buf_putc(b, ' ');
		put_cell_max(b, s->by_name, bw, true, STATS_KEY_COLS);
	}
	buf_puts(b, "      CALLS      RATE/s        P50        P90        P99        MAX\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct group *g = gs[i];
		put_cell(b, func_text(&t, g), fw, true);
		if (s->by) {
			buf_putc(b, ' ');
			put_cell_max(b, g->key + strlen(g->key) + 1, bw, true, STATS_KEY_COLS);
		}
		snprintf(t1, sizeof(t1), "%llu", (unsigned long long)calls_of(g));
		buf_putc(b, ' ');
		put_cell(b, t1, 10, false);
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
		buf_printf(b, ": %llu calls returned, latency min %s", (unsigned long long)g->nlat,
			   rtime_fmt_duration(t1, g->min));
		buf_printf(b, " avg %s max ", rtime_fmt_duration(t2, (uint64_t)(g->sum / g->nlat)));
		buf_printf(b, "%s\n", rtime_fmt_duration(t1, g->max));
		stats_print_log2(b, g->log2, NLOG2, "usecs");
	}
	buf_free(&t);
	free(gs);
}
