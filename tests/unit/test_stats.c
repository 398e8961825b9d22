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

#include "output.h"
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

/* A long name keeps its end after "...", within `max` columns; escapes and
 * wide characters are dropped whole; a name that fits is left alone. */
Test(stats, keep_tail_cuts_the_head)
{
	struct buf b = BUF_INIT;

	buf_puts(&b, "x github.com/evanw/esbuild/internal/js_lexer.(*Lexer).Next");
	text_keep_tail(&b, 2, 30);
	cr_expect_str_eq(buf_cstr(&b), "x ...rnal/js_lexer.(*Lexer).Next");
	cr_expect_eq(text_width(b.data + 2, b.len - 2), 30);
	buf_reset(&b);
	buf_puts(&b, "main.add");
	text_keep_tail(&b, 0, 8);
	cr_expect_str_eq(buf_cstr(&b), "main.add");
	buf_reset(&b);
	buf_puts(&b, "a\\x01bc.f");   /* the escape \x01 of byte 1 */
	text_keep_tail(&b, 0, 8);
	cr_expect_str_eq(buf_cstr(&b), "...bc.f");      /* dropped whole */
	buf_reset(&b);
	buf_puts(&b, "p\x01q.\xe6\x97\xa5\xe6\x9c\xac.fn");
	text_keep_tail(&b, 0, 10);
	cr_expect_str_eq(buf_cstr(&b), "...\xe6\x97\xa5\xe6\x9c\xac.fn");
	cr_expect_eq(text_width(b.data, b.len), 10);
	buf_free(&b);
}

/* The FUNC column of the stats table stays aligned when a function is wider
 * than STATS_FUNC_COLS: the name keeps its end (the function) after "...". */
Test(stats, long_function_names_stay_aligned)
{
	struct stats *s = stats_new(NULL, NULL, 0);
	struct buf b = BUF_INIT;

	probe.func = "github.com/evanw/esbuild/internal/js_lexer.(*Lexer).Next";
	greet(s, 100, "a", 0);
	probe.func = "main.add";
	probe.id = 2;
	greet(s, 200, "a", 0);
	stats_write(s, &b, 0, false);
	const char *out = buf_cstr(&b);
	const char *l1 = strchr(out, '\n') + 1, *l2 = strchr(l1, '\n') + 1;
	const int hdr = line_cols(out, (size_t)(l1 - 1 - out));

	cr_expect_eq(line_cols(l1, (size_t)(strchr(l1, '\n') - l1)), hdr, "%s", out);
	cr_expect_eq(line_cols(l2, (size_t)(strchr(l2, '\n') - l2)), hdr, "%s", out);
	cr_expect(strncmp(l1, "...evanw/esbuild/internal/js_lexer.(*Lexer).Next ", 49) == 0 ||
		  strncmp(l2, "...evanw/esbuild/internal/js_lexer.(*Lexer).Next ", 49) == 0, "%s", out);
	cr_expect_eq(strstr(out, "CALLS") - out, 48 + 6, "%s", out);
	buf_free(&b);
	stats_free(s);
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

/* ------------------------------------------------------------ addresses */

/* main.put(p *main.T, u uintptr, n int, w) (w a raw word) and its return
 * (goret1 *main.T). */
static struct gtr_probe put_probe, put_ret;

static void put_setup(void)
{
	static const struct {
		const char *name, *type_name;
		enum gtr_type type;
	} a[4] = {
		{ "p", "*main.T", GTR_TYPE_PTR }, { "u", "uintptr", GTR_TYPE_UINT },
		{ "n", "int", GTR_TYPE_INT }, { "w", "", GTR_TYPE_WORD },
	};

	memset(&put_probe, 0, sizeof(put_probe));
	put_probe.id = 3;
	put_probe.kind = GTR_KIND_ENTRY;
	put_probe.func = "main.put";
	put_probe.fmt = "";
	put_probe.nargs = 4;
	for (int i = 0; i < 4; i++) {
		put_probe.args[i].name = a[i].name;
		put_probe.args[i].type_name = a[i].type_name;
		put_probe.args[i].type = a[i].type;
		put_probe.args[i].size = 8;
	}
	put_ret = put_probe;
	put_ret.id = 4;
	put_ret.kind = GTR_KIND_RETURN;
	put_ret.nargs = 1;
	put_ret.args[0].name = "~r0";
}

/* A call of main.put: its entry, and its return `lat` ns later (none
 * when 0), returning `r`. */
static void put_call(struct stats *s, uint64_t ts, uint64_t p, uint64_t u, int64_t n,
		     uint64_t w, uint64_t r, uint64_t lat)
{
	struct gtr_event entry = { .ts_ns = ts, .probe_id = 3, .kind = GTR_KIND_ENTRY,
				   .pid = 10, .tid = 10, .goid = 1, .nvals = 4 };
	struct gtr_event ret = { .ts_ns = ts + lat, .probe_id = 4, .kind = GTR_KIND_RETURN,
				 .pid = 10, .tid = 10, .goid = 1, .nvals = 1 };
	struct report_event e = { .ev = &entry, .probe = &put_probe, .comm = "app" };

	entry.vals[0] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = p };
	entry.vals[1] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = u };
	entry.vals[2] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = n };
	entry.vals[3] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = w };
	ret.vals[0] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = r };
	stats_event(s, &e);
	if (!lat)
		return;
	e = (struct report_event){ .ev = &ret, .probe = &put_ret, .comm = "app",
				   .entry = &entry, .entry_probe = &put_probe,
				   .latency_ns = lat };
	stats_event(s, &e);
}

/* The stats of two calls grouped --by `field`, without histograms. */
static void put_stats(const char *field, struct buf *b)
{
	struct filter_error err;
	struct filter *by = filter_compile_field(field, &err);
	struct stats *s;

	cr_assert(by, "%s: %s", field, err.msg);
	s = stats_new(by, field, 0);
	put_call(s, 1000, 0xc000012300, 4096, -3, 0x7f0000001000, 0xc000099000, 500);
	put_call(s, 2000, 0x20, 8, 14, 0x10, 0, 0);
	buf_reset(b);
	stats_write(s, b, 0, false);
	stats_free(s);
	filter_free(by);
}

/* Whether the table in `out` has a row of main.put grouped by `text`. */
static bool has_row(const char *out, const char *text)
{
	char want[64];

	snprintf(want, sizeof(want), "main.put %s ", text);
	return strstr(out, want) != NULL;
}

/*
 * --by values of pointer and raw-word arguments read as text shows them,
 * in hex (output_text_value()), whether named, goargN or goretN, on
 * entries and on returns (which read their entry's arguments); numbers
 * stay decimal; the groups still sort as numbers (0x20 before 0xc0...).
 */
Test(stats, by_addresses_in_hex_as_text_shows_them, .init = put_setup)
{
	struct buf b = BUF_INIT, t = BUF_INIT;
	const struct gtr_value pv = { .kind = GTR_VAL_UINT, .v.u = 0xc000012300 };
	const char *out;

	/* the text printer's form of the same value */
	output_text_value(&t, &pv, &put_probe.args[0]);
	cr_assert_str_eq(buf_cstr(&t), "0xc000012300");

	put_stats("p", &b);
	out = buf_cstr(&b);
	cr_expect(has_row(out, "0xc000012300"), "%s", out);
	cr_expect(has_row(out, "0x20"), "%s", out);
	cr_expect(strstr(out, "main.put 0x20") < strstr(out, "main.put 0xc000012300"),
		  "numeric order: %s", out);
	/* the return, which reads p from its entry, is in the same group */
	cr_expect(!strstr(out, "824633795328"), "%s", out);

	put_stats("goarg1", &b);
	out = buf_cstr(&b);
	cr_expect(has_row(out, "0xc000012300"), "%s", out);

	put_stats("w", &b);
	out = buf_cstr(&b);
	cr_expect(has_row(out, "0x7f0000001000"), "%s", out);
	cr_expect(has_row(out, "0x10"), "%s", out);

	/* goret1: only the return has it (the entries group under '-') */
	put_stats("goret1", &b);
	out = buf_cstr(&b);
	cr_expect(has_row(out, "0xc000099000"), "%s", out);

	/* unsigned (uintptr too, as text shows it) and signed: decimal */
	put_stats("u", &b);
	out = buf_cstr(&b);
	cr_expect(has_row(out, "4096") && has_row(out, "8"), "%s", out);
	put_stats("n", &b);
	out = buf_cstr(&b);
	cr_expect(has_row(out, "-3") && has_row(out, "14"), "%s", out);

	/* the event's own fields are numbers */
	put_stats("pid", &b);
	cr_expect(has_row(buf_cstr(&b), "10"), "%s", buf_cstr(&b));
	buf_free(&b);
	buf_free(&t);
}
