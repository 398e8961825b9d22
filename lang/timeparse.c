/* SPDX-License-Identifier: MIT */
/*
 * Time and duration literals (spec/FILTER.md, "Literals"; --since/--until
 * in spec/OUTPUT.md). Parsing is by hand: strptime() does not take
 * fractions or RFC 3339 offsets, and literals are not NUL-terminated inside
 * a filter expression.
 */
#include "timeparse.h"

#include "buf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static bool dig(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads exactly `k` digits at s[*i]; -1 when they are not there. */
static int fixed(const char *s, size_t n, size_t *i, int k)
{
	int v = 0;

	for (int j = 0; j < k; j++) {
		if (*i >= n || !dig(s[*i]))
			return -1;
		v = v * 10 + (s[(*i)++] - '0');
	}
	return v;
}

/* Reads ".digits" as ns (truncated after 9 digits); 0 when absent. */
static int64_t frac_ns(const char *s, size_t n, size_t *i)
{
	int64_t v = 0, scale = 100000000;

	if (*i + 1 >= n || s[*i] != '.' || !dig(s[*i + 1]))
		return 0;
	(*i)++;
	for (; *i < n && dig(s[*i]); (*i)++) {
		v += (s[*i] - '0') * scale;
		scale /= 10;
	}
	return v;
}

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
	{ "ms", 1000000 }, { "s", 1000000000 }, { "m", 60000000000 },
	{ "h", 3600000000000 },
};

/* Index of the unit at s[i] (longest match) with *end after it; -1 none. */
static int unit_at(const char *s, size_t n, size_t i, size_t *end)
{
	int u = -1;
	size_t ulen = 0;

	for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
		const size_t l = strlen(units[k].name);
		if (l > ulen && i + l <= n && !memcmp(s + i, units[k].name, l)) {
			u = (int)k;
			ulen = l;
		}
	}
	*end = i + ulen;
	return u;
}

int rtime_duration(const char *s, size_t n, int64_t *ns, char *err, size_t errlen)
{
	size_t i = 0;
	int64_t total = 0;
	int parts = 0;

	/* a plain integer (no unit after its digits) is not a duration */
	size_t j = 0, e;
	bool frac = false;
	while (j < n && dig(s[j]))
		j++;
	if (j < n && s[j] == '.') {
		frac = true;
		for (j++; j < n && dig(s[j]); j++)
			;
	}
	if (!frac && (j == 0 || unit_at(s, n, j, &e) < 0))
		return 0;

	while (i < n && (dig(s[i]) || (s[i] == '.' && i + 1 < n && dig(s[i + 1])))) {
		unsigned __int128 whole = 0;
		const size_t start = i;

		for (; i < n && dig(s[i]); i++) {
			whole = whole * 10 + (unsigned)(s[i] - '0');
			if (whole > INT64_MAX)
				goto range;
		}
		/* fraction digits, kept exactly as a decimal of up to 18 digits */
		uint64_t fnum = 0, fden = 1;
		if (i + 1 < n && s[i] == '.' && dig(s[i + 1])) {
			for (i++; i < n && dig(s[i]); i++)
				if (fden < 1000000000000000000ull) {
					fnum = fnum * 10 + (uint64_t)(s[i] - '0');
					fden *= 10;
				}
		} else if (i < n && s[i] == '.') {
			i++; /* "5." : fraction without digits */
		}
		size_t end;
		const int u = unit_at(s, n, i, &end);
		if (u < 0) {
			snprintf(err, errlen, "expected a unit (ns us ms s m h) after '%.*s'",
				 (int)(i - start), s + start);
			return -1;
		}
		i = end;
		const unsigned __int128 v = whole * (unsigned __int128)units[u].ns +
			(unsigned __int128)fnum * (unsigned __int128)units[u].ns / fden;
		if (v > (unsigned __int128)(INT64_MAX - total))
			goto range;
		total += (int64_t)v;
		parts++;
	}
	if (!parts)
		return 0;
	*ns = total;
	return (int)i;
range:
	snprintf(err, errlen, "duration out of range (at most 2562047h)");
	return -1;
}

/* The zone of an RFC 3339 time at s[*i]: "Z", or "+HH:MM" / "-HH:MM" into
 * *off (seconds east of UTC). 0, or -1 when malformed. */
static int rfc3339_zone(const char *s, size_t n, size_t *i, int *off)
{
	*off = 0;
	if (*i < n && (s[*i] == 'Z' || s[*i] == 'z')) {
		(*i)++;
		return 0;
	}
	if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
		return -1;
	const int sign = s[(*i)++] == '-' ? -1 : 1;
	const int oh = fixed(s, n, i, 2);
	if (oh < 0 || oh > 23 || *i >= n || s[(*i)++] != ':')
		return -1;
	const int om = fixed(s, n, i, 2);
	if (om < 0 || om > 59)
		return -1;
	*off = sign * (oh * 3600 + om * 60);
	return 0;
}

/* "YYYY-MM-DDTHH:MM:SS" at s[*i] into *tm. 0, or -1 when malformed. */
static int rfc3339_fields(const char *s, size_t n, size_t *i, struct tm *tm)
{
	const int y = fixed(s, n, i, 4);
	if (*i >= n || s[(*i)++] != '-')
		return -1;
	const int mo = fixed(s, n, i, 2);
	if (mo < 1 || mo > 12 || *i >= n || s[(*i)++] != '-')
		return -1;
	const int d = fixed(s, n, i, 2);
	if (d < 1 || d > 31 || *i >= n || (s[*i] != 'T' && s[*i] != 't'))
		return -1;
	(*i)++;
	const int hh = fixed(s, n, i, 2);
	if (hh < 0 || hh > 23 || *i >= n || s[(*i)++] != ':')
		return -1;
	const int mm = fixed(s, n, i, 2);
	if (mm < 0 || mm > 59 || *i >= n || s[(*i)++] != ':')
		return -1;
	const int ss = fixed(s, n, i, 2);
	if (ss < 0 || ss > 60)
		return -1;
	memset(tm, 0, sizeof(*tm));
	tm->tm_year = y - 1900;
	tm->tm_mon = mo - 1;
	tm->tm_mday = d;
	tm->tm_hour = hh;
	tm->tm_min = mm;
	tm->tm_sec = ss;
	return 0;
}

/* An RFC 3339 time at s[0, n) (it starts "DDDD-"): bytes used, or -1. */
static int rfc3339(const char *s, size_t n, struct rtime *t, char *err, size_t errlen)
{
	size_t i = 0;
	struct tm tm;
	int off;

	if (rfc3339_fields(s, n, &i, &tm)) {
		snprintf(err, errlen, "malformed time: expected RFC 3339, e.g. 2024-05-01T12:00:03.5Z or ...+02:00");
		return -1;
	}
	const int64_t fr = frac_ns(s, n, &i);
	if (rfc3339_zone(s, n, &i, &off)) {
		snprintf(err, errlen, "malformed time: expected RFC 3339, e.g. 2024-05-01T12:00:03.5Z or ...+02:00");
		return -1;
	}
	const time_t sec = timegm(&tm) - off;
	/* nanoseconds in an int64 reach from 1677 to 2262 */
	if (sec < -9223372036LL + 1 || sec > 9223372035LL) {
		snprintf(err, errlen, "time out of range: years 1678 to 2261 can be compared");
		return -1;
	}
	t->kind = RTIME_ABS;
	t->ns = (int64_t)sec * 1000000000 + fr;
	return (int)i;
}

/* A time of day "HH:MM[:SS[.frac]]" at s[0, n): bytes used, 0 when s does
 * not start with one, -1 when malformed. */
static int time_of_day(const char *s, size_t n, struct rtime *t, char *err, size_t errlen)
{
	size_t i = 0, k = 0;
	int mm, ss = 0;

	while (k < n && k < 3 && dig(s[k]))
		k++;
	if (k == 0 || k > 2 || k >= n || s[k] != ':')
		return 0;
	const int hh = fixed(s, n, &i, (int)k);
	i++;
	mm = fixed(s, n, &i, 2);
	if (hh > 23 || mm < 0 || mm > 59)
		goto bad;
	if (i < n && s[i] == ':') {
		i++;
		ss = fixed(s, n, &i, 2);
		if (ss < 0 || ss > 59)
			goto bad;
	}
	const int64_t fr = frac_ns(s, n, &i);
	t->kind = RTIME_TOD;
	t->ns = ((int64_t)hh * 3600 + mm * 60 + ss) * 1000000000 + fr;
	return (int)i;
bad:
	snprintf(err, errlen, "malformed time of day: expected HH:MM[:SS[.fraction]], e.g. 12:00:03.25");
	return -1;
}

int rtime_clock(const char *s, size_t n, struct rtime *t, char *err, size_t errlen)
{
	if (n >= 5 && dig(s[0]) && dig(s[1]) && dig(s[2]) && dig(s[3]) && s[4] == '-')
		return rfc3339(s, n, t, err, errlen);
	return time_of_day(s, n, t, err, errlen);
}

int rtime_parse(const char *s, struct rtime *t, char *err, size_t errlen)
{
	const size_t n = strlen(s);
	int k;

	if (s[0] == '+') {
		int64_t ns;
		if (!strcmp(s, "+0")) {  /* zero needs no unit */
			t->kind = RTIME_REL;
			t->ns = 0;
			return 0;
		}
		k = rtime_duration(s + 1, n - 1, &ns, err, errlen);
		if (k < 0)
			return -1;
		if (k == 0 || (size_t)k != n - 1) {
			snprintf(err, errlen, "expected a duration after '+', e.g. +5s or +1m30s");
			return -1;
		}
		t->kind = RTIME_REL;
		t->ns = ns;
		return 0;
	}
	k = rtime_clock(s, n, t, err, errlen);
	if (k < 0)
		return -1;
	if (k == 0 || (size_t)k != n) {
		snprintf(err, errlen, "expected +DURATION (from the start), an RFC 3339 time or HH:MM[:SS[.frac]]");
		return -1;
	}
	return 0;
}

bool rtime_to_mono(const struct rtime *t, const struct gtr_host *h,
		   uint64_t t0_ns, int64_t *mono)
{
	int64_t real;

	switch (t->kind) {
	case RTIME_REL:
		*mono = (int64_t)t0_ns + t->ns;
		return true;
	case RTIME_ABS:
		real = t->ns;
		break;
	default: {
		if (!h || !h->start_realtime_ns)
			return false;
		const time_t start = (time_t)(h->start_realtime_ns / 1000000000);
		struct tm tm;
		localtime_r(&start, &tm);
		const int64_t sec = t->ns / 1000000000;
		tm.tm_hour = (int)(sec / 3600);
		tm.tm_min = (int)(sec / 60 % 60);
		tm.tm_sec = (int)(sec % 60);
		tm.tm_isdst = -1;
		real = (int64_t)mktime(&tm) * 1000000000 + t->ns % 1000000000;
		break;
	}
	}
	if (!h || !h->start_realtime_ns)
		return false;
	/* a time far from the recording's start saturates at the ends */
	int64_t d;

	if (__builtin_sub_overflow(real, (int64_t)h->start_realtime_ns, &d))
		*mono = real < 0 ? INT64_MIN : INT64_MAX;
	else if (__builtin_add_overflow(d, (int64_t)h->start_mono_ns, mono))
		*mono = d < 0 ? INT64_MIN : INT64_MAX;
	return true;
}

int64_t rtime_mono_to_real(const struct gtr_host *h, uint64_t mono)
{
	return (int64_t)h->start_realtime_ns + ((int64_t)mono - (int64_t)h->start_mono_ns);
}

char *rtime_fmt_duration(char out[24], uint64_t ns)
{
	/* the unit (ns of 0.001 of it) and its suffix */
	static const struct { uint64_t below, milli; const char *unit; } units[] = {
		{ 1000000, 1, "us" }, { 1000000000, 1000, "ms" }, { UINT64_MAX, 1000000, "s" },
	};
	size_t n;

	if (ns < 1000) {
		n = u64_to_dec(out, ns);
		memcpy(out + n, "ns", 3);
		return out;
	}
	size_t k = 0;
	while (k < 2 && ns >= units[k].below)
		k++;
	/* printf's "%.3f" of the double ns / 1e3, 1e6 or 1e9 by hand: thousandths
	 * rounded to the nearest; a remainder at (or, past 2^53 ns, near) the
	 * half is left to printf, which rounds the double as it is */
	const uint64_t m = units[k].milli, rem = ns % m, half = m / 2;
	const uint64_t margin = ns >= (1ull << 53) ? m : 2;
	if (m > 1 && (rem + margin > half && rem < half + margin)) {
		snprintf(out, 24, "%.3f%s", (double)ns / (double)(m * 1000), units[k].unit);
		return out;
	}
	const uint64_t th = ns / m + (rem > half);   /* thousandths of the unit */
	n = u64_to_dec(out, th / 1000);
	n += u64_to_dec(out + n, 1000 + th % 1000);  /* "1" and three digits */
	out[n - 4] = '.';
	strcpy(out + n, units[k].unit);
	return out;
}
