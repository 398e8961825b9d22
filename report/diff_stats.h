/* SPDX-License-Identifier: MIT */
/*
 * diff_stats: the statistics of `gotrace-report diff` (spec/DIFF.md,
 * "Statistics"), on latency samples in nanoseconds, each sample array
 * sorted ascending: the Mann–Whitney U test with tie correction, the
 * Hodges–Lehmann shift with its confidence interval, distribution-free
 * confidence intervals of quantiles (order statistics), Fisher's exact
 * test of two proportions, and a geometric mean. Pure functions: no I/O,
 * no allocation that outlives a call. Each follows a written definition,
 * named beside its code; the figures match scipy.stats 1.10 (tested).
 */
#ifndef REPORT_DIFF_STATS_H
#define REPORT_DIFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* z of the two-sided 95% level: the 0.975 quantile of N(0, 1). */
#define DIFF_Z975 1.959963984540054

/* Exact Mann–Whitney p-values: the smaller sample at most this many
 * (scipy's rule), the larger at most DIFF_MWU_EXACT_MAX. */
#define DIFF_MWU_EXACT_SMALL 8
#define DIFF_MWU_EXACT_MAX 10000

/* The result of diff_mwu(). */
struct diff_mwu {
	double u;       /* U of the first sample: its rank sum - n1(n1+1)/2 */
	double p;       /* two-sided p-value, in [0, 1] */
	bool exact;     /* p from the exact null distribution (no ties, a
			   small side); else the normal approximation with
			   tie and continuity correction */
	bool ties;      /* some value occurs more than once across both */
};

/*
 * Two-sided Mann–Whitney U test of x[0, nx) against y[0, ny), both sorted
 * ascending and not empty. Midranks for ties. 0, or -1 when a side is
 * empty (*out untouched).
 */
int diff_mwu(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
	     struct diff_mwu *out);

/*
 * The k-th smallest (1-based, 1 <= k <= nx*ny) of the nx*ny differences
 * y[j] - x[i], for sorted x and y, in O((nx + ny) log range) without
 * forming them.
 */
int64_t diff_kth_difference(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
			    unsigned __int128 k);

/* The Hodges–Lehmann estimate of the shift from x to y, and its CI. */
struct diff_hl {
	double shift;       /* median of the differences y[j] - x[i], ns */
	bool have_ci;       /* false: too few samples for the level */
	int64_t lo, hi;     /* the 95% confidence interval of the shift, ns */
};

/* Hodges–Lehmann shift of sorted y from sorted x (both not empty). */
void diff_hodges_lehmann(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
			 struct diff_hl *out);

/* The 1-based rank of the p-quantile (0 < p <= 1) of n sorted samples:
 * ceil(p * n), at least 1 (numpy's method "inverted_cdf"). */
size_t diff_quantile_rank(size_t n, double p);

/*
 * The 1-based ranks [*lo, *hi] of the order statistics that bound the
 * p-quantile of n samples with confidence at least 1 - alpha (binomial,
 * distribution-free). false when n is too small for that level.
 */
bool diff_quantile_ci(size_t n, double p, double alpha, size_t *lo, size_t *hi);

/*
 * The alpha-quantile of the binomial distribution B(n, p): the smallest k
 * with P(B <= k) >= q (scipy.stats.binom.ppf).
 */
size_t diff_binom_ppf(double q, size_t n, double p);

/*
 * Two-sided p-value of Fisher's exact test on the 2x2 table
 * [[a, b], [c, d]] (scipy.stats.fisher_exact).
 */
double diff_fisher(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* exp(mean(log v[i])) of the n > 0 positive values v; 0 when n is 0. */
double diff_geomean(const double *v, size_t n);

#endif /* REPORT_DIFF_STATS_H */
