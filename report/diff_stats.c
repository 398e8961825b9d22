/* SPDX-License-Identifier: MIT */
/*
 * The statistics of `gotrace-report diff` (report/diff_stats.h). Sources:
 * - Mann–Whitney U: H. B. Mann and D. R. Whitney, "On a test of whether
 *   one of two random variables is stochastically larger than the other",
 *   Ann. Math. Statist. 18 (1947); tie-corrected variance and continuity
 *   correction as in scipy.stats.mannwhitneyu (scipy 1.10,
 *   scipy/stats/_mannwhitneyu.py: _get_mwu_z, _MWU.sf).
 * - Hodges–Lehmann shift and its interval: J. L. Hodges and E. L.
 *   Lehmann, "Estimates of location based on rank tests", Ann. Math.
 *   Statist. 34 (1963); M. Hollander and D. A. Wolfe, Nonparametric
 *   Statistical Methods, 2nd ed. (1999), section 4.3, eq. (4.41)-(4.43).
 * - Quantile intervals from order statistics: W. J. Conover, Practical
 *   Nonparametric Statistics, 3rd ed. (1999), section 3.2.
 * - Fisher's exact test: R. A. Fisher, Statistical Methods for Research
 *   Workers (1925); the two-sided p as scipy.stats.fisher_exact sums it
 *   (tables no more likely than the observed one, relative slack 1e-4).
 */
#include "diff_stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ------------------------------------------------------------ Mann–Whitney */

/*
 * Frequencies of U under the null for sample sizes m and n (no ties): the
 * coefficients of the Gaussian binomial [m+n choose m]_q, the product over
 * i = 1..m of (1 - q^(n+i)) / (1 - q^i) (Mann and Whitney 1947, eq. 4).
 * f[0, m*n]; exact integers while C(m+n, m) < 2^126.
 */
static __int128 *mwu_freqs(size_t m, size_t n)
{
	const size_t len = m * n + m + 1;
	__int128 *f = xcalloc(len, sizeof(*f), "Mann-Whitney table");

	f[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		const size_t deg = (i - 1) * n, shift = n + i;
		/* times (1 - q^(n+i)) */
		for (size_t k = deg + shift; k >= shift; k--)
			f[k] -= f[k - shift];
		/* divided by (1 - q^i): b[k] = a[k] + b[k - i] */
		for (size_t k = i; k <= deg + shift; k++)
			f[k] += f[k - i];
	}
	return f;
}

/* P(U <= k) * 2 under the null, exactly (k <= m*n/2). */
static double mwu_exact_p(size_t m, size_t n, double u)
{
	if (m > n) {
		const size_t t = m;
		m = n;
		n = t;
	}
	__int128 *f = mwu_freqs(m, n);
	const double big = u > (double)(m * n) - u ? u : (double)(m * n) - u;
	const size_t kc = (size_t)((double)(m * n) - big);  /* scipy: m*n - U */
	__int128 below = 0, total = 0;

	for (size_t k = 0; k <= m * n; k++) {
		total += f[k];
		if (k <= kc)
			below += f[k];
	}
	free(f);
	const long double p = 2.0L * (long double)below / (long double)total;
	return p > 1 ? 1.0 : (double)p;
}

int diff_mwu(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
	     struct diff_mwu *out)
{
	size_t i = 0, j = 0;
	double r1 = 0, tie = 0;     /* rank sum of x; sum of t^3 - t */
	bool ties = false;

	if (!nx || !ny)
		return -1;
	/* merge: each run of equal values gets its midrank */
	while (i < nx || j < ny) {
		const uint64_t v = j >= ny || (i < nx && x[i] <= y[j]) ? x[i] : y[j];
		size_t a = 0, b = 0;
		while (i + a < nx && x[i + a] == v)
			a++;
		while (j + b < ny && y[j + b] == v)
			b++;
		const double t = (double)(a + b), first = (double)(i + j) + 1;
		r1 += (double)a * (first + (t - 1) / 2);
		if (a + b > 1) {
			ties = true;
			tie += t * t * t - t;
		}
		i += a;
		j += b;
	}
	const double n1 = (double)nx, n2 = (double)ny, n = n1 + n2;
	const double u1 = r1 - n1 * (n1 + 1) / 2;
	const double u = u1 > n1 * n2 - u1 ? u1 : n1 * n2 - u1;  /* max(U1, U2) */
	const size_t small = nx < ny ? nx : ny, large = nx < ny ? ny : nx;

	out->u = u1;
	out->ties = ties;
	out->exact = !ties && small <= DIFF_MWU_EXACT_SMALL && large <= DIFF_MWU_EXACT_MAX;
	if (out->exact) {
		out->p = mwu_exact_p(nx, ny, u);
		return 0;
	}
	/* normal approximation, tie-corrected variance, continuity 0.5 */
	const double s = sqrt(n1 * n2 / 12 * ((n + 1) - tie / (n * (n - 1))));
	if (!(s > 0)) {
		out->p = 1;   /* every value equal: no evidence of a shift */
		return 0;
	}
	const double z = (u - n1 * n2 / 2 - 0.5) / s;
	const double p = erfc(z / sqrt(2.0));   /* 2 * P(Z > z) */
	/* below DBL_MIN erfc's denormals carry no precision (scipy says 0) */
	out->p = p > 1 ? 1 : p < DBL_MIN ? 0 : p;
	return 0;
}

/* ------------------------------------------------------------ Hodges–Lehmann */

/* #{(i, j): y[j] - x[i] <= t}, by one pass of two pointers. */
static unsigned __int128 count_le(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
				  __int128 t)
{
	unsigned __int128 c = 0;
	size_t i = 0;   /* x[i..) are those with x >= y[j] - t, for growing j */

	for (size_t j = 0; j < ny; j++) {
		const __int128 thr = (__int128)y[j] - t;
		while (i < nx && (__int128)x[i] < thr)
			i++;
		c += nx - i;
	}
	return c;
}

int64_t diff_kth_difference(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
			    unsigned __int128 k)
{
	/* the smallest t with count_le(t) >= k: differences are integers */
	__int128 lo = (__int128)y[0] - (__int128)x[nx - 1];
	__int128 hi = (__int128)y[ny - 1] - (__int128)x[0];

	while (lo < hi) {
		const __int128 mid = lo + (hi - lo) / 2;
		if (count_le(x, nx, y, ny, mid) >= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (int64_t)lo;
}

void diff_hodges_lehmann(const uint64_t *x, size_t nx, const uint64_t *y, size_t ny,
			 struct diff_hl *out)
{
	const unsigned __int128 n = (unsigned __int128)nx * ny;

	memset(out, 0, sizeof(*out));
	if (n & 1) {
		out->shift = (double)diff_kth_difference(x, nx, y, ny, (n + 1) / 2);
	} else {
		const int64_t a = diff_kth_difference(x, nx, y, ny, n / 2);
		const int64_t b = diff_kth_difference(x, nx, y, ny, n / 2 + 1);
		out->shift = ((double)a + (double)b) / 2;
	}
	/* Hollander and Wolfe (4.41)-(4.43): C = mn/2 - z sqrt(mn(m+n+1)/12),
	 * its integer part; the interval is [D(C), D(mn + 1 - C)] */
	const double mn = (double)nx * (double)ny;
	const double c = floor(mn / 2 - DIFF_Z975 * sqrt(mn * ((double)nx + (double)ny + 1) / 12));
	if (c < 1)
		return;
	const unsigned __int128 ci = (unsigned __int128)c;
	out->lo = diff_kth_difference(x, nx, y, ny, ci);
	out->hi = diff_kth_difference(x, nx, y, ny, n + 1 - ci);
	out->have_ci = true;
}

/* ------------------------------------------------------------ quantiles */

size_t diff_quantile_rank(size_t n, double p)
{
	double r = ceil(p * (double)n - 1e-9);

	if (r < 1)
		r = 1;
	if (r > (double)n)
		r = (double)n;
	return (size_t)r;
}

/* log of the binomial pmf of k in B(n, p), 0 < p < 1. */
static long double binom_logpmf(size_t k, size_t n, double p)
{
	return lgammal((long double)n + 1) - lgammal((long double)k + 1) -
	       lgammal((long double)(n - k) + 1) + (long double)k * logl(p) +
	       (long double)(n - k) * log1pl(-(long double)p);
}

size_t diff_binom_ppf(double q, size_t n, double p)
{
	if (p <= 0 || q <= 0)
		return 0;
	if (p >= 1 || q >= 1)
		return n;
	/* the pmf rises up to the mode: terms below e^-700 are left out
	 * (their sum is below n e^-700), the first one kept is found by
	 * bisection, and each next one from the last (pmf(k+1) = pmf(k)
	 * (n-k)/(k+1) p/(1-p)) */
	size_t lo = 0, hi = (size_t)((double)(n + 1) * p);
	if (hi > n)
		hi = n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (binom_logpmf(mid, n, p) < -700)
			lo = mid + 1;
		else
			hi = mid;
	}
	long double cdf = 0, pmf = expl(binom_logpmf(lo, n, p));
	const long double ratio = (long double)p / (1 - (long double)p);

	for (size_t k = lo; k <= n; k++) {
		cdf += pmf;
		if (cdf >= (long double)q * (1 - 1e-15L))
			return k;
		pmf *= (long double)(n - k) / (long double)(k + 1) * ratio;
	}
	return n;
}

bool diff_quantile_ci(size_t n, double p, double alpha, size_t *lo, size_t *hi)
{
	if (!n)
		return false;
	/* P(X(l) <= xi_p <= X(u)) = P(l <= B <= u - 1), B ~ B(n, p) */
	const size_t l = diff_binom_ppf(alpha / 2, n, p);
	const size_t u = diff_binom_ppf(1 - alpha / 2, n, p) + 1;

	if (l < 1 || u > n)
		return false;
	*lo = l;
	*hi = u;
	return true;
}

/* ------------------------------------------------------------ proportions */

/* log of the hypergeometric pmf: k successes in `draw` draws from a
 * population of `tot` with `good` successes. */
static long double hyper_logpmf(uint64_t k, uint64_t tot, uint64_t good, uint64_t draw)
{
	return lgammal((long double)good + 1) - lgammal((long double)k + 1) -
	       lgammal((long double)(good - k) + 1) + lgammal((long double)(tot - good) + 1) -
	       lgammal((long double)(draw - k) + 1) -
	       lgammal((long double)(tot - good - draw + k) + 1) -
	       (lgammal((long double)tot + 1) - lgammal((long double)draw + 1) -
		lgammal((long double)(tot - draw) + 1));
}

double diff_fisher(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	const uint64_t tot = a + b + c + d, good = a + c, draw = a + b;

	if (!tot || !good || !draw || good == tot || draw == tot)
		return 1;
	const uint64_t kmin = draw + good > tot ? draw + good - tot : 0;
	const uint64_t kmax = good < draw ? good : draw;
	const long double lobs = hyper_logpmf(a, tot, good, draw);
	const long double slack = logl(1 / (1 - 1e-4L));
	long double p = 0;

	for (uint64_t k = kmin; k <= kmax; k++) {
		const long double l = hyper_logpmf(k, tot, good, draw);
		if (l <= lobs + slack)
			p += expl(l);
	}
	return p > 1 ? 1 : (double)p;
}

double diff_geomean(const double *v, size_t n)
{
	double s = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		s += log(v[i]);
	return exp(s / (double)n);
}
