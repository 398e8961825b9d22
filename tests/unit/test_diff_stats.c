/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the statistics of `gotrace-report diff`
 * (report/diff_stats.h). Expected figures are scipy.stats 1.10's
 * (mannwhitneyu two-sided, binom.ppf, fisher_exact), and numpy's median
 * and sorted differences for the Hodges-Lehmann shift and interval; the
 * exact Mann-Whitney distribution is also checked against enumeration.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "diff_stats.h"

#define LEN(a) (sizeof(a) / sizeof(*(a)))

static void expect_rel(double got, double want, double rel)
{
	cr_expect(fabs(got - want) <= rel * fabs(want), "got %.17g, want %.17g", got, want);
}

static uint64_t small_x[] = { 1, 5, 9, 13 };
static uint64_t small_y[] = { 2, 6, 10, 14, 20, 22 };

Test(diff_stats, mann_whitney_exact_small)
{
	struct diff_mwu m;

	cr_assert_eq(diff_mwu(small_x, LEN(small_x), small_y, LEN(small_y), &m), 0);
	cr_expect(m.exact);
	cr_expect(!m.ties);
	cr_expect_eq(m.u, 6.0);
	expect_rel(m.p, 0.2571428571428571, 1e-12);
}

Test(diff_stats, mann_whitney_exact_when_one_side_is_small)
{
	static uint64_t x[] = { 3, 11, 19, 27, 35, 43, 51 };
	static uint64_t y[] = { 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60 };
	struct diff_mwu m;

	diff_mwu(x, LEN(x), y, LEN(y), &m);
	cr_expect(m.exact);
	cr_expect_eq(m.u, 42.0);
	expect_rel(m.p, 0.49020780561028227, 1e-9);
}

Test(diff_stats, mann_whitney_ties_use_midranks_and_corrected_variance)
{
	static uint64_t x[] = { 1, 2, 2, 3, 3, 3, 4, 5, 5, 9 };
	static uint64_t y[] = { 2, 3, 3, 4, 4, 5, 6, 6, 7, 8, 9, 9 };
	struct diff_mwu m;

	diff_mwu(x, LEN(x), y, LEN(y), &m);
	cr_expect(!m.exact);
	cr_expect(m.ties);
	cr_expect_eq(m.u, 33.0);
	expect_rel(m.p, 0.07741222917000336, 1e-9);
}

/* x: multiples of 3 below 300; y: 1, 5, 9... below 500 */
static uint64_t *seq(uint64_t from, uint64_t to, uint64_t step, size_t *n)
{
	uint64_t *v = calloc((to - from) / step + 1, sizeof(*v));

	*n = 0;
	for (uint64_t k = from; k < to; k += step)
		v[(*n)++] = k;
	return v;
}

Test(diff_stats, mann_whitney_normal_approximation)
{
	size_t nx, ny;
	uint64_t *x = seq(0, 300, 3, &nx), *y = seq(1, 500, 4, &ny);
	struct diff_mwu m;

	diff_mwu(x, nx, y, ny, &m);
	cr_expect(!m.exact);
	cr_expect_eq(m.u, 3737.5);
	expect_rel(m.p, 2.2511200424713835e-07, 1e-9);
	free(x);
	free(y);
}

Test(diff_stats, mann_whitney_all_equal_is_no_evidence)
{
	static uint64_t x[] = { 7, 7, 7, 7, 7, 7, 7, 7, 7 };
	struct diff_mwu m;

	diff_mwu(x, LEN(x), x, LEN(x), &m);
	cr_expect_eq(m.p, 1.0);
	cr_expect_eq(diff_mwu(x, 0, x, 3, &m), -1);
}

/* The exact null distribution against enumeration of every split of
 * 1..m+n into sides of m and n: P(U <= u) for each u. */
Test(diff_stats, mann_whitney_exact_distribution_by_enumeration)
{
	enum { M = 4, N = 6 };
	uint64_t count[M * N + 1] = { 0 }, total = 0;

	for (unsigned mask = 0; mask < 1u << (M + N); mask++) {
		if (__builtin_popcount(mask) != M)
			continue;
		unsigned u = 0;   /* pairs (x, y) with x > y */
		for (int i = 0; i < M + N; i++)
			for (int j = 0; j < i; j++)
				u += (mask >> i & 1) && !(mask >> j & 1);
		count[u]++;
		total++;
	}
	/* every observable U: x of ranks in `mask`, y the others */
	for (unsigned mask = 0; mask < 1u << (M + N); mask++) {
		if (__builtin_popcount(mask) != M)
			continue;
		uint64_t x[M], y[N];
		size_t a = 0, b = 0;
		for (int i = 0; i < M + N; i++) {
			if (mask >> i & 1)
				x[a++] = (uint64_t)i;
			else
				y[b++] = (uint64_t)i;
		}
		struct diff_mwu m;
		diff_mwu(x, M, y, N, &m);
		const double big = fmax(m.u, M * N - m.u);
		uint64_t below = 0;
		for (int k = 0; k <= M * N - (int)big; k++)
			below += count[k];
		expect_rel(m.p, fmin(1.0, 2.0 * (double)below / (double)total), 1e-12);
	}
}

Test(diff_stats, hodges_lehmann_shift_and_interval)
{
	struct diff_hl h;

	diff_hodges_lehmann(small_x, LEN(small_x), small_y, LEN(small_y), &h);
	cr_expect_eq(h.shift, 5.0);
	cr_expect(h.have_ci);
	cr_expect_eq(h.lo, -7);
	cr_expect_eq(h.hi, 19);

	size_t nx, ny;
	uint64_t *x = seq(0, 300, 3, &nx), *y = seq(1, 500, 4, &ny);
	diff_hodges_lehmann(x, nx, y, ny, &h);
	cr_expect_eq(h.shift, 100.5);
	cr_expect_eq(h.lo, 62);
	cr_expect_eq(h.hi, 139);
	free(x);
	free(y);
}

Test(diff_stats, hodges_lehmann_too_few_for_an_interval)
{
	static uint64_t x[] = { 10, 20 }, y[] = { 15, 40 };
	struct diff_hl h;

	diff_hodges_lehmann(x, 2, y, 2, &h);
	cr_expect_eq(h.shift, 12.5);   /* median of -5, 5, 20, 30 */
	cr_expect(!h.have_ci);
}

Test(diff_stats, kth_difference_matches_sorting)
{
	static uint64_t x[] = { 1, 4, 4, 10 }, y[] = { 0, 3, 8 };
	int64_t d[12];
	size_t n = 0;

	for (size_t j = 0; j < 3; j++)
		for (size_t i = 0; i < 4; i++)
			d[n++] = (int64_t)y[j] - (int64_t)x[i];
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && d[k - 1] > d[k]; k--) {
			const int64_t t = d[k];
			d[k] = d[k - 1];
			d[k - 1] = t;
		}
	for (size_t k = 1; k <= n; k++)
		cr_expect_eq(diff_kth_difference(x, 4, y, 3, k), d[k - 1], "k=%zu", k);
}

Test(diff_stats, quantile_ranks_and_intervals_match_scipy_binom)
{
	static const struct { size_t n; double p; size_t lo, hi; } cases[] = {
		{ 10, 0.5, 2, 9 }, { 100, 0.5, 40, 61 }, { 1000, 0.9, 881, 919 },
		{ 5000, 0.99, 4936, 4964 }, { 100000, 0.5, 49690, 50311 },
	};
	size_t lo, hi;

	for (size_t i = 0; i < LEN(cases); i++) {
		cr_assert(diff_quantile_ci(cases[i].n, cases[i].p, 0.05, &lo, &hi));
		cr_expect_eq(lo, cases[i].lo, "n=%zu p=%g", cases[i].n, cases[i].p);
		cr_expect_eq(hi, cases[i].hi, "n=%zu p=%g", cases[i].n, cases[i].p);
	}
	/* p99 of 40 samples: no upper order statistic bounds it at 95% */
	cr_expect(!diff_quantile_ci(40, 0.99, 0.05, &lo, &hi));
	cr_expect(!diff_quantile_ci(5, 0.5, 0.05, &lo, &hi));
	cr_expect_eq(diff_quantile_rank(10, 0.5), 5);
	cr_expect_eq(diff_quantile_rank(10, 0.99), 10);
	cr_expect_eq(diff_quantile_rank(1000, 0.9), 900);
	cr_expect_eq(diff_quantile_rank(1, 0.5), 1);
}

Test(diff_stats, fisher_exact_matches_scipy)
{
	expect_rel(diff_fisher(3, 17, 12, 8), 0.007911693673651405, 1e-9);
	expect_rel(diff_fisher(1, 9, 11, 3), 0.0027594561852200836, 1e-9);
	expect_rel(diff_fisher(50, 950, 80, 920), 0.00830844837775692, 1e-9);
	cr_expect_eq(diff_fisher(0, 10, 0, 12), 1.0);
}

Test(diff_stats, geomean)
{
	static const double v[] = { 1, 100 };

	expect_rel(diff_geomean(v, 2), 10, 1e-12);
	cr_expect_eq(diff_geomean(v, 0), 0);
}
