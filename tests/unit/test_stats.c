/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of `gotrace-report stats` (report/stats.h, spec/OUTPUT.md,
 * "Statistics"): rates over the --since/--until window, and columns that
 * line up by display width with wide characters and long --by values.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "timeparse.h"
#include "width.h"

static struct gtr_probe probe;
static struct gtr_event ev;

static void setup(void)
{
	memset(&probe, 0, sizeof(probe));
	probe.id = 1;
	probe.binary_id = 1;
	probe.kind = GTR_KIND_ENTRY;
	probe.func = "main.greet";
	probe.fmt = "";
	probe.nargs = 1;
	probe.args[0].name = "s";
	probe.args[0].type_name = "string";
	probe.args[0].type = GTR_TYPE_STRING;
	probe.args[0].size = 16;
}

TestSuite(stats, .init = setup);

/* Counts an entry of main.greet(s) at `ts`; s of `full` bytes when cut. */
static void greet(struct stats *s, uint64_t ts, const char *str, uint64_t full)
{
	struct report_event e = { .ev = &ev, .probe = &probe, .comm = "app" };

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.probe_id = 1;
	ev.kind = GTR_KIND_ENTRY;
	ev.pid = 10;
	ev.tid = 10;
	ev.goid = 1;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_STR;
	ev.vals[0].v.s.data = (const uint8_t *)str;
	ev.vals[0].v.s.len = (uint32_t)strlen(str);
	ev.vals[0].v.s.full_len = full ? full : strlen(str);
	stats_event(s, &e);
}

Test(stats, window_span_is_clamped_to_the_file)
{
	const uint64_t t0 = 1000000, last = t0 + 9000000;

	cr_expect_eq(stats_window_span(t0, last, INT64_MIN, INT64_MAX), 9000000);
	cr_expect_eq(stats_window_span(t0, last, (int64_t)t0 + 4000000, (int64_t)t0 + 5000000),
		     1000000);
	cr_expect_eq(stats_window_span(t0, last, (int64_t)t0 + 4000000, INT64_MAX), 5000000);
	cr_expect_eq(stats_window_span(t0, last, INT64_MIN, (int64_t)t0 + 2000000), 2000000);
	cr_expect_eq(stats_window_span(t0, last, 0, (int64_t)last + 5000000), 9000000);
	cr_expect_eq(stats_window_span(t0, last, (int64_t)last + 1, INT64_MAX), 0);
	cr_expect_eq(stats_window_span(t0, last, (int64_t)t0 + 5, (int64_t)t0 + 5), 0);
}

/* 4 calls in a 1 ms window of a 9 ms file: 4000/s, not 444.4/s. */
Test(stats, rate_uses_the_time_window)
{
	struct stats *s = stats_new(NULL, NULL, 0);
	struct buf b = BUF_INIT;
	const uint64_t t0 = 1000000;

	for (int i = 0; i < 4; i++)
		greet(s, t0 + 4000000 + 250000 * (uint64_t)i, "a", 0);
	stats_set_window(s, t0, t0 + 9000000, (int64_t)t0 + 4000000, (int64_t)t0 + 5000000);
	stats_write(s, &b, 9000000, false);
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC            CALLS      RATE/s        P50        P90        P99        MAX\n"
		"main.greet          4      4000.0          -          -          -          -\n");
	buf_free(&b);
	stats_free(s);

	/* without a window: the span given to stats_write() */
	s = stats_new(NULL, NULL, 0);
	for (int i = 0; i < 4; i++)
		greet(s, t0 + 4000000 + 250000 * (uint64_t)i, "a", 0);
	stats_set_window(s, t0, t0 + 8000000, INT64_MIN, INT64_MAX);
	stats_write(s, &b, 1, false);
	cr_expect(strstr(buf_cstr(&b), " 4       500.0 "), "%s", buf_cstr(&b));
	buf_free(&b);
	stats_free(s);
}

Test(stats, text_width)
{
	cr_expect_eq(text_width("abc", 3), 3);
	cr_expect_eq(text_width("h\xc3\xa9llo", 6), 5);            /* é */
	cr_expect_eq(text_width("\xe6\x97\xa5\xe6\x9c\xac", 6), 4); /* 日本 */
	cr_expect_eq(text_width("e\xcc\x81", 3), 1);                /* e + U+0301 */
	cr_expect_eq(text_width("\xef\xbc\xa1", 3), 2);             /* fullwidth A */
	cr_expect_eq(text_width("\xf0\x9f\x98\x80", 4), 2);         /* emoji */
	cr_expect_eq(text_width("\xff" "a", 2), 2);                 /* invalid byte */
	cr_expect_eq(text_width("\xe2\x80\xa6", 3), 1);             /* … */
}

/* Display width of the line l[0, n). */
static int line_cols(const char *l, size_t n)
{
	return text_width(l, n);
}

/* The columns where "CALLS" and each row's count end line up, whatever
 * the bytes of the --by values; long values are cut with an ellipsis. */
Test(stats, by_columns_align_by_display_width)
{
	struct filter_error err;
	struct filter *by = filter_compile_field("goarg1", &err);
	struct stats *s;
	struct buf b = BUF_INIT;
	char longs[101];

	cr_assert(by);
	memset(longs, 'x', 64);
	longs[64] = '\0';
	s = stats_new(by, "goarg1", 0);
	greet(s, 100, "h\xc3\xa9llo,\xe6\x97\xa5\xe6\x9c\xac", 0);   /* "héllo,日本" */
	greet(s, 200, "a", 0);
	greet(s, 300, longs, 100);                                  /* cut by the recorder */
	greet(s, 400, "\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac"
		      "\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac"
		      "\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac"
		      "\xe6\x97\xa5\xe6\x9c\xac\xe6\x97\xa5\xe6\x9c\xac", 0);  /* 22 wide */
	greet(s, 500, "tab\there\\and\xff more text to go past forty columns", 0);
	greet(s, 600, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xff" "tail", 0);  /* 36 a */
	stats_write(s, &b, 0, true);

	const char *out = buf_cstr(&b);
	const char *hdr_end = strchr(out, '\n');
	const int calls_end = line_cols(out, (size_t)(strstr(out, "CALLS") - out)) + 5;
	int rows = 0;
	for (const char *l = hdr_end + 1; *l && *l != '\n'; l = strchr(l, '\n') + 1) {
		const char *nl = strchr(l, '\n');
		/* the row's CALLS cell: "1" right-aligned under CALLS */
		const char *one = strstr(l, " 1 ");
		cr_assert(one && one < nl, "%.*s", (int)(nl - l), l);
		cr_expect_eq(line_cols(l, (size_t)(one - l)) + 2, calls_end,
			     "misaligned: %.*s", (int)(nl - l), l);
		rows++;
	}
	cr_expect_eq(rows, 6);
	/* cut values: 39 columns of text and an ellipsis, escapes kept whole */
	cr_expect(strstr(out, " \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xe2\x80\xa6 "), "%s", out);
	cr_expect(strstr(out, " \"tab\\there\\\\and\\xff more text to go pas\xe2\x80\xa6 "), "%s", out);
	cr_expect(strstr(out, " \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe2\x80\xa6   "), "%s", out);
	char kanji[128] = " \"";
	for (int i = 0; i < 19; i++)                      /* 1 + 19 x 2 columns */
		strcat(kanji, i % 2 ? "\xe6\x9c\xac" : "\xe6\x97\xa5");
	strcat(kanji, "\xe2\x80\xa6 ");
	cr_expect(strstr(out, kanji), "%s", out);
	buf_free(&b);
	stats_free(s);
	filter_free(by);
}

/* The histogram title of a group keeps its whole --by value. */
Test(stats, histogram_title_keeps_the_whole_value)
{
	struct filter_error err;
	struct filter *by = filter_compile_field("goarg1", &err);
	struct stats *s = stats_new(by, "goarg1", 0);
	struct buf b = BUF_INIT;
	struct gtr_event entry;
	struct gtr_probe ret = probe;
	char longs[65];

	memset(longs, 'x', 64);
	longs[64] = '\0';
	greet(s, 100, longs, 100);
	entry = ev;
	ret.id = 2;
	ret.kind = GTR_KIND_RETURN;
	ret.nargs = 0;
	struct report_event e = { .ev = &ev, .probe = &ret, .comm = "app", .entry = &entry,
				  .entry_probe = &probe, .latency_ns = 5000 };
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 5100;
	ev.probe_id = 2;
	ev.kind = GTR_KIND_RETURN;
	ev.pid = ev.tid = 10;
	ev.goid = 1;
	stats_event(s, &e);
	stats_write(s, &b, 0, true);
	cr_expect(strstr(buf_cstr(&b), "\nmain.greet goarg1=\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			 "xxxxxxxxxxxxxxxxxxxxxxxx\"...(len=100): 1 calls returned"), "%s", buf_cstr(&b));
	cr_expect(strstr(buf_cstr(&b), "xx\xe2\x80\xa6          1 "), "%s", buf_cstr(&b));
	buf_free(&b);
	stats_free(s);
	filter_free(by);
}

/* With the longest value under the cap, the column is as wide as it. */
Test(stats, by_column_fits_short_values)
{
	struct filter_error err;
	struct filter *by = filter_compile_field("goarg1", &err);
	struct stats *s = stats_new(by, "goarg1", 0);
	struct buf b = BUF_INIT;

	greet(s, 100, "h\xc3\xa9llo,\xe6\x97\xa5\xe6\x9c\xac", 0);
	greet(s, 100, "h\xc3\xa9llo,\xe6\x97\xa5\xe6\x9c\xac", 0);
	greet(s, 200, "a", 0);
	stats_write(s, &b, 0, false);
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC       goarg1            CALLS      RATE/s        P50        P90        P99        MAX\n"
		"main.greet \"h\xc3\xa9llo,\xe6\x97\xa5\xe6\x9c\xac\"          2           -          -          -          -          -\n"
		"main.greet \"a\"                   1           -          -          -          -          -\n");
	buf_free(&b);
	stats_free(s);
	filter_free(by);
}

/* A return of main.greet at `ts` on goroutine `goid`: paired with
 * latency `lat`, or shown alone as lost (lat 0). */
static void greet_ret(struct stats *s, uint64_t ts, uint64_t lat, uint64_t goid)
{
	static struct gtr_event entry;
	struct report_event e = { .ev = &ev, .probe = &probe, .comm = "app" };

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.probe_id = 2;
	ev.kind = GTR_KIND_RETURN;
	ev.pid = 10;
	ev.tid = 10;
	ev.goid = goid;
	memset(&entry, 0, sizeof(entry));
	entry.ts_ns = ts - lat;
	entry.probe_id = 1;
	entry.kind = GTR_KIND_ENTRY;
	entry.goid = goid;
	if (lat) {
		e.entry = &entry;
		e.entry_probe = &probe;
		e.latency_ns = lat;
	} else {
		e.lost = true;
	}
	stats_event(s, &e);
}

/*
 * Returns shown as lost (their pair met a loss span) have no latency and
 * are counted in a LOST column, which only appears when there are some;
 * the percentiles come from the pairs that stand.
 */
Test(stats, lost_returns_are_counted_apart)
{
	struct stats *s = stats_new(NULL, NULL, 0);
	struct buf b = BUF_INIT;

	for (int i = 0; i < 4; i++) {
		greet(s, 1000 + 100 * (uint64_t)i, "a", 0);
		greet_ret(s, 1050 + 100 * (uint64_t)i, i == 2 ? 0 : 10 + (uint64_t)i, 1);
	}
	stats_write(s, &b, 0, true);
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC            CALLS       LOST      RATE/s        P50        P90        P99        MAX\n"
		"main.greet          4          1           -       11ns       13ns       13ns       13ns\n"
		"\n"
		"main.greet: 3 calls returned, latency min 10ns avg 11ns max 13ns\n"
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 3        |****************************************|\n");
	buf_free(&b);
	stats_free(s);

	/* with --by: each group its own count; 0 where none was lost */
	struct filter_error err;
	struct filter *by = filter_compile_field("goid", &err);
	cr_assert(by);
	s = stats_new(by, "goid", 0);
	greet_ret(s, 1100, 100, 7);
	greet_ret(s, 2100, 0, 8);
	stats_write(s, &b, 0, false);
	cr_expect_str_eq(buf_cstr(&b),
		"FUNC       goid      CALLS       LOST      RATE/s        P50        P90        P99        MAX\n"
		"main.greet 7             1          0           -      100ns      100ns      100ns      100ns\n"
		"main.greet 8             1          1           -          -          -          -          -\n");
	buf_free(&b);
	stats_free(s);
	filter_free(by);
}

/*
 * Latencies at the limit: the sum behind the average does not wrap (two
 * calls of 2^64-1 ns average 2^64-1 ns, not 2^63-1), the top buckets hold
 * them, and the percentiles and maximum read the same.
 */
Test(stats, latencies_at_the_limit)
{
	struct stats *s = stats_new(NULL, NULL, 0);
	struct buf b = BUF_INIT;
	char want[64];

	cr_assert_lt(stats_bucket(UINT64_MAX), 61 * 16);   /* stats.c: NBUCKETS */
	cr_assert_geq(stats_bucket_mid(stats_bucket(UINT64_MAX)), UINT64_MAX / 2);
	greet_ret(s, UINT64_MAX, UINT64_MAX, 1);
	greet_ret(s, UINT64_MAX, UINT64_MAX, 1);
	stats_write(s, &b, 0, true);
	snprintf(want, sizeof(want), "avg %s max", rtime_fmt_duration((char[24]){ 0 }, UINT64_MAX));
	cr_expect(strstr(buf_cstr(&b), want), "%s", buf_cstr(&b));
	cr_expect(strstr(buf_cstr(&b), "main.greet: 2 calls returned"), "%s", buf_cstr(&b));
	buf_free(&b);
	stats_free(s);
}
