/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of event rendering (report/output.h, spec/OUTPUT.md): the text
 * layout, format strings with each verb, string escaping and truncation,
 * and exact JSON Lines output.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

static struct gtr_probe probe;
static struct gtr_event ev;
static struct report_event rev;
static struct buf b = BUF_INIT;

static void setup(void)
{
	memset(&probe, 0, sizeof(probe));
	probe.id = 3;
	probe.func = "main.add";
	probe.fmt = "";
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 123456789;
	ev.probe_id = 3;
	ev.pid = 4242;
	ev.tid = 4243;
	ev.goid = 17;
	rev.ev = &ev;
	rev.probe = &probe;
	rev.comm = "app";
	buf_reset(&b);
}

static void teardown(void)
{
	buf_free(&b);
}

TestSuite(output, .init = setup, .fini = teardown);

static void arg(uint32_t i, const char *name, enum gtr_type t, uint32_t size)
{
	probe.args[i].name = name;
	probe.args[i].type_name = "";
	probe.args[i].type = t;
	probe.args[i].size = size;
	if (probe.nargs <= i)
		probe.nargs = i + 1;
}

static void vint(uint32_t i, int64_t v)
{
	ev.vals[i].kind = GTR_VAL_INT;
	ev.vals[i].v.i = v;
	if (ev.nvals <= i)
		ev.nvals = i + 1;
}

static void vuint(uint32_t i, uint64_t v)
{
	ev.vals[i].kind = GTR_VAL_UINT;
	ev.vals[i].v.u = v;
	if (ev.nvals <= i)
		ev.nvals = i + 1;
}

static void vdbl(uint32_t i, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	vuint(i, u);
}

static void vbool(uint32_t i, bool v)
{
	ev.vals[i].kind = GTR_VAL_BOOL;
	ev.vals[i].v.b = v;
	if (ev.nvals <= i)
		ev.nvals = i + 1;
}

static void vstr(uint32_t i, const char *s, uint32_t len, uint64_t full)
{
	ev.vals[i].kind = GTR_VAL_STR;
	ev.vals[i].v.s.data = (const uint8_t *)s;
	ev.vals[i].v.s.len = len;
	ev.vals[i].v.s.full_len = full;
	if (ev.nvals <= i)
		ev.nvals = i + 1;
}

static void vnone(uint32_t i)
{
	ev.vals[i].kind = GTR_VAL_NONE;
	if (ev.nvals <= i)
		ev.nvals = i + 1;
}

static const char *text(void)
{
	buf_reset(&b);
	output_text_event(&b, &rev);
	return buf_cstr(&b);
}

static const char *json(void)
{
	buf_reset(&b);
	output_jsonl_event(&b, &rev);
	return buf_cstr(&b);
}

/* Applies `fmt` with exprs 0..n-1 to the current values. */
static const char *fmt(const char *f)
{
	probe.nexprs = ev.nvals;
	for (uint32_t i = 0; i < ev.nvals; i++)
		probe.exprs[i] = i;
	buf_reset(&b);
	output_text_format(&b, f, &rev);
	return buf_cstr(&b);
}

#define FMT(f, want) cr_expect_str_eq(fmt(f), want, "format '%s'", f)

/* ------------------------------------------------------------ text */

Test(output, header)
{
	output_text_header(&b);
	cr_expect_str_eq(buf_cstr(&b), "PID     TID     COMM            FUNC             -\n");
}

Test(output, text_named_values)
{
	arg(0, "a", GTR_TYPE_INT, 8);
	arg(1, "b", GTR_TYPE_INT, 8);
	vint(0, 1);
	vint(1, -2);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         a=1 b=-2\n");
}

Test(output, text_unnamed_values)
{
	arg(0, "", GTR_TYPE_WORD, 8);
	arg(1, "_", GTR_TYPE_INT, 8);
	vuint(0, 5);
	vint(1, 6);
	vuint(2, 7); /* more values than described arguments */
	/* a raw word in hex, an undescribed value in decimal */
	cr_expect_str_eq(text(), "4242    4243    app             main.add         0x5 6 7\n");
}

Test(output, text_no_values_keeps_trace_py_layout)
{
	cr_expect_str_eq(text(), "4242    4243    app             main.add         \n");
}

Test(output, text_long_names_are_not_cut)
{
	probe.func = "net/http.(*conn).serve";
	rev.comm = "averyverylongcomm";
	cr_expect_str_eq(text(), "4242    4243    averyverylongcomm net/http.(*conn).serve \n");
}

Test(output, text_unknown_probe)
{
	rev.probe = NULL;
	ev.probe_id = 99;
	vint(0, 1);
	cr_expect_str_eq(text(), "4242    4243    app             probe#99         1\n");
}

Test(output, text_value_kinds)
{
	arg(0, "p", GTR_TYPE_PTR, 8);
	arg(1, "ok", GTR_TYPE_BOOL, 1);
	arg(2, "f", GTR_TYPE_FLOAT, 8);
	arg(3, "g", GTR_TYPE_FLOAT, 4);
	arg(4, "x", GTR_TYPE_FLOAT, 8);
	arg(5, "u", GTR_TYPE_UINT, 8);
	arg(6, "n", GTR_TYPE_INT, 8);
	vuint(0, 0xc000012345);
	vbool(1, true);
	vdbl(2, 0.1);
	float g = 1.5f;
	uint32_t gb;
	memcpy(&gb, &g, 4);
	vuint(3, gb);
	vnone(4);
	vuint(5, UINT64_MAX);
	vint(6, INT64_MIN);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         "
			 "p=0xc000012345 ok=true f=0.1 g=1.5 x=<unavailable> "
			 "u=18446744073709551615 n=-9223372036854775808\n");
}

Test(output, text_return_event)
{
	ev.kind = GTR_KIND_RETURN;
	arg(0, "~r0", GTR_TYPE_INT, 8);
	vint(0, 3);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         <- (no entry) ~r0=3\n");
	/* paired with its entry: the latency */
	static struct gtr_event entry;
	rev.entry = &entry;
	rev.latency_ns = 12345;
	cr_expect_str_eq(text(), "4242    4243    app             main.add         <- (12.345us) ~r0=3\n");
	ev.nvals = 0;
	cr_expect_str_eq(text(), "4242    4243    app             main.add         <- (12.345us)\n");
	rev.entry = NULL;
}

Test(output, text_strings)
{
	arg(0, "s", GTR_TYPE_STRING, 16);
	vstr(0, "hello", 5, 5);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         s=\"hello\"(len=5)\n");
	vstr(0, "hello", 5, 300);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         s=\"hello\"...(len=300)\n");
	vstr(0, "", 0, 0);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         s=\"\"(len=0)\n");
}

Test(output, text_escaping)
{
	static const struct { const char *in; size_t n; const char *want; } cases[] = {
		{ "plain", 5, "plain" },
		{ "q\"b\\", 4, "q\\\"b\\\\" },
		{ "\n\t\r", 3, "\\n\\t\\r" },
		{ "\x01\x1f\x7f", 3, "\\x01\\x1f\\x7f" },
		{ "a\0b", 3, "a\\x00b" },
		{ "h\xc3\xa9!", 4, "h\xc3\xa9!" },                 /* é as is */
		{ "\xe2\x82\xac", 3, "\xe2\x82\xac" },              /* € */
		{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },      /* emoji */
		{ "\xff\xfe", 2, "\\xff\\xfe" },                    /* never UTF-8 */
		{ "\xc3", 1, "\\xc3" },                             /* cut short */
		{ "\xc3(", 2, "\\xc3(" },                           /* bad continuation */
		{ "\xc0\xaf", 2, "\\xc0\\xaf" },                    /* overlong '/' */
		{ "\xed\xa0\x80", 3, "\\xed\\xa0\\x80" },           /* surrogate */
		{ "\xf4\x90\x80\x80", 4, "\\xf4\\x90\\x80\\x80" },  /* > U+10FFFF */
		{ "\xc2\x85", 2, "\\xc2\\x85" },                    /* C1 control NEL */
		{ "\xe2\x80\xae", 3, "\\xe2\\x80\\xae" },           /* RLO bidi override */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_reset(&b);
		output_text_bytes(&b, (const uint8_t *)cases[i].in, cases[i].n, true);
		cr_expect_str_eq(buf_cstr(&b), cases[i].want, "case %zu", i);
	}
	buf_reset(&b);
	output_text_bytes(&b, (const uint8_t *)"a\"b", 3, false);
	cr_expect_str_eq(buf_cstr(&b), "a\"b", "quotes stay outside quotes");
}

Test(output, text_comm_is_escaped_and_padded)
{
	rev.comm = "a\tb";
	cr_expect_str_eq(text(), "4242    4243    a\\tb            main.add         \n");
	rev.comm = "caf\xc3\xa9";
	cr_expect_str_eq(text(), "4242    4243    caf\xc3\xa9            main.add         \n");
	/* a wide character takes two columns: 日本 is padded to 15 like café */
	rev.comm = "\xe6\x97\xa5\xe6\x9c\xac";
	cr_expect_str_eq(text(), "4242    4243    \xe6\x97\xa5\xe6\x9c\xac            main.add         \n");
}

/* ------------------------------------------------------------ format strings */

Test(output, format_integer_verbs)
{
	arg(0, "n", GTR_TYPE_INT, 8);
	arg(1, "u", GTR_TYPE_UINT, 8);
	vint(0, -42);
	vuint(1, 255);
	FMT("%d %u", "-42 255");
	FMT("%i|%x|%X|%o", "-42|ff|<missing>|<missing>");
	FMT("%x %X %o", "ffffffffffffffd6 FF <missing>");
	FMT("%ld %llu", "-42 255");
	FMT("%lld %hhx", "-42 ff");
	FMT("%zd %jx", "-42 ff");
	FMT("[%5d] [%-5u]", "[  -42] [255  ]");
	FMT("[%05d] [%#x]", "[-0042] [0xff]");
	FMT("[%+d] [%.4u]", "[-42] [0255]");
	FMT("%%d %d%%", "%d -42%");
}

Test(output, format_signedness)
{
	arg(0, "i32", GTR_TYPE_INT, 4);
	arg(1, "w", GTR_TYPE_WORD, 8);
	arg(2, "u", GTR_TYPE_UINT, 8);
	vint(0, -1);
	vuint(1, UINT64_MAX);
	vuint(2, UINT64_MAX);
	FMT("%d %d %d", "-1 -1 18446744073709551615");
	FMT("%u %u %u", "4294967295 18446744073709551615 18446744073709551615");
	FMT("%x %x %x", "ffffffff ffffffffffffffff ffffffffffffffff");
	vint(0, INT64_MIN);
	arg(0, "i64", GTR_TYPE_INT, 8);
	FMT("%d", "-9223372036854775808");
}

Test(output, format_pointer_char_bool)
{
	arg(0, "p", GTR_TYPE_PTR, 8);
	arg(1, "c", GTR_TYPE_INT, 4);
	arg(2, "ok", GTR_TYPE_BOOL, 1);
	vuint(0, 0xc000010000);
	vint(1, 'A');
	vbool(2, true);
	FMT("%p %c %d", "0xc000010000 A 1");
	FMT("%s %s %s", "0xc000010000 65 true");
	FMT("[%14p]", "[  0xc000010000]");
	vint(1, 0x20ac);
	FMT("%p %c", "0xc000010000 \xe2\x82\xac");
	vint(1, '\n');
	FMT("%p %c", "0xc000010000 \\n");
	vint(1, 0x110000);
	FMT("%p %c", "0xc000010000 \\x{110000}");
}

Test(output, format_strings)
{
	arg(0, "s", GTR_TYPE_STRING, 16);
	arg(1, "t", GTR_TYPE_STRING, 16);
	vstr(0, "hi\n\xff", 4, 4);
	vstr(1, "hello", 5, 300);
	FMT("s=%s t=%s", "s=hi\\n\\xff t=hello...(len=300)");
	FMT("[%6s]", "[hi\\n\\xff]");
	FMT("[%8s][%-8s]", "[hi\\n\\xff][hello...(len=300)]");
	FMT("[%.2s]", "[hi]");
	FMT("%d", "hi\\n\\xff");  /* a verb that does not fit: shown as %s */
	vstr(0, "\"q\"", 3, 3);
	FMT("%s", "\"q\"");
}

Test(output, format_floats)
{
	arg(0, "f", GTR_TYPE_FLOAT, 8);
	arg(1, "n", GTR_TYPE_INT, 8);
	vdbl(0, 2.5);
	vint(1, 3);
	FMT("%f %.1f", "2.500000 3.0");
	FMT("%g %e", "2.5 3.000000e+00");
	FMT("%s %s", "2.5 3");
	FMT("%d", "2.5");
}

Test(output, format_unavailable_missing_and_unknown)
{
	arg(0, "x", GTR_TYPE_FLOAT, 8);
	vnone(0);
	FMT("%d|%s|%f", "<unavailable>|<missing>|<missing>");
	FMT("a %q b %", "a %q b %");
	FMT("%*d", "%*d");
	FMT("100%", "100%");
	FMT("tab\there", "tab\\there");
	/* an expression that points past the event's values */
	probe.nexprs = 1;
	probe.exprs[0] = 7;
	buf_reset(&b);
	output_text_format(&b, "%d", &rev);
	cr_expect_str_eq(buf_cstr(&b), "<missing>");
}

Test(output, text_event_uses_format)
{
	arg(0, "a", GTR_TYPE_INT, 8);
	arg(1, "b", GTR_TYPE_INT, 8);
	vint(0, 2);
	vint(1, 3);
	probe.fmt = "%d + %d";
	probe.nexprs = 2;
	probe.exprs[0] = 1;
	probe.exprs[1] = 0;
	cr_expect_str_eq(text(), "4242    4243    app             main.add         3 + 2\n");
}

Test(output, double_shortest)
{
	char t[32];

	cr_expect_str_eq(output_double(t, 0.1), "0.1");
	cr_expect_str_eq(output_double(t, 1.0 / 3), "0.3333333333333333");
	cr_expect_str_eq(output_double(t, 1e300), "1e+300");
	cr_expect_str_eq(output_double(t, -0.0), "-0");
	cr_expect_str_eq(output_double(t, __builtin_nan("")), "NaN");
	cr_expect_str_eq(output_double(t, __builtin_inf()), "+Inf");
	cr_expect_str_eq(output_double(t, -__builtin_inf()), "-Inf");
	cr_expect_str_eq(output_double(t, 5e-324), "5e-324");
}

/* ------------------------------------------------------------ JSON */

Test(output, json_event)
{
	arg(0, "a", GTR_TYPE_INT, 8);
	arg(1, "b", GTR_TYPE_INT, 8);
	vint(0, 1);
	vint(1, 2);
	cr_expect_str_eq(json(),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\","
		"\"func\":\"main.add\",\"kind\":\"entry\",\"probe\":3,"
		"\"goargs\":[1,2],\"args\":{\"a\":1,\"b\":2}}\n");
}

Test(output, json_exact_integers)
{
	arg(0, "min", GTR_TYPE_INT, 8);
	arg(1, "max", GTR_TYPE_UINT, 8);
	arg(2, "imax", GTR_TYPE_INT, 8);
	vint(0, INT64_MIN);
	vuint(1, UINT64_MAX);
	vint(2, INT64_MAX);
	ev.ts_ns = UINT64_MAX;
	ev.goid = UINT64_MAX;
	ev.pid = UINT32_MAX;
	ev.kind = GTR_KIND_RETURN;
	cr_expect_str_eq(json(),
		"{\"ts_ns\":18446744073709551615,\"pid\":4294967295,\"tid\":4243,"
		"\"goid\":18446744073709551615,\"comm\":\"app\",\"func\":\"main.add\","
		"\"kind\":\"return\",\"probe\":3,\"latency_ns\":null,"
		"\"goargs\":[-9223372036854775808,18446744073709551615,9223372036854775807],"
		"\"args\":{\"min\":-9223372036854775808,\"max\":18446744073709551615,"
		"\"imax\":9223372036854775807}}\n");
}

Test(output, json_value_kinds)
{
	arg(0, "ok", GTR_TYPE_BOOL, 1);
	arg(1, "x", GTR_TYPE_FLOAT, 8);
	arg(2, "f", GTR_TYPE_FLOAT, 8);
	arg(3, "nan", GTR_TYPE_FLOAT, 8);
	arg(4, "p", GTR_TYPE_PTR, 8);
	vbool(0, false);
	vnone(1);
	vdbl(2, -2.25);
	vdbl(3, __builtin_nan(""));
	vuint(4, 0xc000010000);
	cr_expect_str_eq(json(),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\","
		"\"func\":\"main.add\",\"kind\":\"entry\",\"probe\":3,"
		"\"goargs\":[false,null,-2.25,\"NaN\",824633786368],"
		"\"args\":{\"ok\":false,\"x\":null,\"f\":-2.25,\"nan\":\"NaN\",\"p\":824633786368}}\n");
}

Test(output, json_strings)
{
	arg(0, "s", GTR_TYPE_STRING, 16);
	arg(1, "t", GTR_TYPE_STRING, 16);
	vstr(0, "a\"b\\c\n\x01\x7f\xc3\xa9\xff", 11, 11);
	vstr(1, "hello", 5, 300);
	cr_expect_str_eq(json(),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\","
		"\"func\":\"main.add\",\"kind\":\"entry\",\"probe\":3,"
		"\"goargs\":[\"a\\\"b\\\\c\\n\\u0001\\u007f\xc3\xa9\\u00ff\","
		"{\"str\":\"hello\",\"len\":300,\"truncated\":true}],"
		"\"args\":{\"s\":\"a\\\"b\\\\c\\n\\u0001\\u007f\xc3\xa9\\u00ff\","
		"\"t\":{\"str\":\"hello\",\"len\":300,\"truncated\":true}}}\n");
}

Test(output, json_escaping)
{
	static const struct { const char *in; size_t n; const char *want; } cases[] = {
		{ "\b\f\r\t", 4, "\\b\\f\\r\\t" },
		{ "\x00\x1f", 2, "\\u0000\\u001f" },
		{ "\xe2\x80\xa8\xe2\x80\xa9", 6, "\\u2028\\u2029" },
		{ "\xc2\x85\xe2\x80\xae", 5, "\xc2\x85\xe2\x80\xae" }, /* valid: as is */
		{ "\xc3", 1, "\\u00c3" },
		{ "\xed\xa0\x80", 3, "\\u00ed\\u00a0\\u0080" },
		{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },
		{ "/", 1, "/" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_reset(&b);
		output_json_bytes(&b, (const uint8_t *)cases[i].in, cases[i].n);
		cr_expect_str_eq(buf_cstr(&b), cases[i].want, "case %zu", i);
	}
}

Test(output, json_names)
{
	/* unknown names are left out of args; duplicates keep the first */
	arg(0, "", GTR_TYPE_INT, 8);
	arg(1, "_", GTR_TYPE_INT, 8);
	arg(2, "x", GTR_TYPE_INT, 8);
	arg(3, "x", GTR_TYPE_INT, 8);
	arg(4, "we\"ird", GTR_TYPE_INT, 8);
	for (uint32_t i = 0; i < 5; i++)
		vint(i, i);
	rev.comm = "c\xff";
	cr_expect_str_eq(json(),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"c\\u00ff\","
		"\"func\":\"main.add\",\"kind\":\"entry\",\"probe\":3,"
		"\"goargs\":[0,1,2,3,4],\"args\":{\"x\":2,\"we\\\"ird\":4}}\n");
}

Test(output, json_unknown_probe)
{
	rev.probe = NULL;
	vint(0, 1);
	cr_expect_str_eq(json(),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\","
		"\"func\":null,\"kind\":\"entry\",\"probe\":3,\"goargs\":[1],\"args\":{}}\n");
}

Test(output, format_names)
{
	const struct output_format *f = &out_jsonl;

	cr_expect_eq(output_format_parse("text", &f), 0);
	cr_expect_eq(f, &out_text);
	cr_expect_eq(output_format_parse("jsonl", &f), 0);
	cr_expect_eq(f, &out_jsonl);
	cr_expect_eq(output_format_parse("json", &f), -1);
	cr_expect_str_eq(output_format_names(), "text, jsonl, csv, chrome, perfetto, folded");
}

Test(output, buffer_grows)
{
	for (int i = 0; i < 10000; i++)
		buf_printf(&b, "%d,", i);
	buf_u64(&b, 0);
	cr_expect_eq(b.len, 48891);
	cr_expect(!strncmp(buf_cstr(&b), "0,1,2,", 6));
}

/* ------------------------------------------------------------ version 2 */

static const char *put(struct output *o)
{
	buf_reset(&b);
	output_put(o, &b, &rev);
	return buf_cstr(&b);
}

Test(output, format_v_verb)
{
	arg(0, "p", GTR_TYPE_PTR, 8);
	arg(1, "s", GTR_TYPE_STRING, 16);
	arg(2, "f", GTR_TYPE_FLOAT, 8);
	arg(3, "ok", GTR_TYPE_BOOL, 1);
	vuint(0, 0xc000010000);
	vstr(1, "hi", 2, 2);
	vdbl(2, 0.5);
	vbool(3, true);
	FMT("%v %v %v %v", "0xc000010000 hi 0.5 true");
	FMT("%5v|%-4v|", "0xc000010000|hi  |");
}

Test(output, compiled_formats_are_cached_per_probe)
{
	const struct output_opts oo = { .format = &out_text };
	struct output *o = output_new(&oo);

	arg(0, "a", GTR_TYPE_INT, 8);
	vint(0, 42);
	probe.fmt = "a is %d%%";
	probe.nexprs = 1;
	for (int i = 0; i < 3; i++)
		cr_expect_str_eq(put(o), "4242    4243    app             main.add         a is 42%\n");
	vint(0, -1);
	cr_expect_str_eq(put(o), "4242    4243    app             main.add         a is -1%\n");
	output_free(o);
}

Test(output, time_columns)
{
	const struct output_opts oo = { .format = &out_text, .time_rel = true, .time_wall = true };
	struct output *o = output_new(&oo);

	setenv("TZ", "UTC", 1);
	ev.ts_ns = 1000 + 1234567890;
	rev.t0_ns = 1000;
	rev.real_ns = 1714564800000000000ull + 1234567890;
	buf_reset(&b);
	output_begin(o, &b);
	cr_expect_str_eq(buf_cstr(&b), "TIME            TIME       PID     TID     COMM            FUNC             -\n");
	cr_expect_str_eq(put(o), "12:00:01.234567 1.234567   4242    4243    app             main.add         \n");
	output_free(o);
}

Test(output, calls_view)
{
	const struct output_opts oo = { .format = &out_text, .calls = true };
	struct output *o = output_new(&oo);
	static struct gtr_probe rp;
	static struct gtr_event entry;

	arg(0, "a", GTR_TYPE_INT, 8);
	vint(0, 7);
	rev.tracked = true;
	cr_expect_str_eq(put(o), "", "a tracked entry waits for its return");
	entry = ev;
	rp = probe;
	rp.kind = GTR_KIND_RETURN;
	rp.args[0].name = "~r0";
	ev.kind = GTR_KIND_RETURN;
	ev.vals[0].v.i = 8;
	rev.probe = &rp;
	rev.tracked = false;
	rev.entry = &entry;
	rev.entry_probe = &probe;
	rev.latency_ns = 1500000;
	cr_expect_str_eq(put(o), "4242    4243    app             main.add         1.500ms      a=7 -> ~r0=8\n");
	rev.entry = NULL;
	cr_expect_str_eq(put(o), "4242    4243    app             main.add         ?            ? -> ~r0=8\n");
	ev.kind = GTR_KIND_ENTRY;
	ev.vals[0].v.i = 7;
	rev.probe = &probe;
	cr_expect_str_eq(put(o), "4242    4243    app             main.add         -            a=7\n",
			 "an entry without a return probe");
	buf_reset(&b);
	rev.tracked = true;
	cr_expect_eq(output_put_open(o, &b, &rev, 0, "open"), 1);
	cr_expect_str_eq(buf_cstr(&b), "4242    4243    app             main.add         open         a=7 -> ?\n");
	buf_reset(&b);
	output_put_open(o, &b, &rev, 0, "unwound");
	cr_expect_str_eq(buf_cstr(&b), "4242    4243    app             main.add         unwound      a=7 -> ?\n");
	buf_reset(&b);
	output_put_open(o, &b, &rev, 0, "exited");
	cr_expect_str_eq(buf_cstr(&b), "4242    4243    app             main.add         exited       a=7 -> ?\n");
	output_free(o);
}

Test(output, unfinished_calls_in_each_format)
{
	const struct output_opts jo = { .format = &out_jsonl, .calls = true };
	const struct output_opts ev_only = { .format = &out_jsonl };
	const struct output_opts to = { .format = &out_text };
	const struct output_opts co = { .format = &out_chrome };
	struct output *o = output_new(&jo);

	arg(0, "n", GTR_TYPE_INT, 8);
	vint(0, 3);
	rev.tracked = true;
	buf_reset(&b);
	cr_expect_eq(output_put_open(o, &b, &rev, 999, "unwound"), 1);
	cr_expect_str_eq(buf_cstr(&b),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\",\"func\":\"main.add\","
		"\"kind\":\"call\",\"probe\":3,\"status\":\"unwound\",\"latency_ns\":null,\"goargs\":[3],"
		"\"args\":{\"n\":3},\"goret\":[],\"rets\":{}}\n");
	output_free(o);

	/* the event views show no record for them: their entry was shown */
	o = output_new(&ev_only);
	buf_reset(&b);
	cr_expect_eq(output_put_open(o, &b, &rev, 999, "unwound"), 0);
	output_free(o);
	o = output_new(&to);
	cr_expect_eq(output_put_open(o, &b, &rev, 999, "open"), 0);
	cr_expect_str_eq(buf_cstr(&b), "");
	output_free(o);

	/* Chrome: a slice from the entry to the outer return, with its status */
	o = output_new(&co);
	rev.t0_ns = 123456789 - 1000;
	buf_reset(&b);
	cr_expect_eq(output_put_open(o, &b, &rev, 123456789 + 2500, "unwound"), 1);
	cr_expect_str_eq(buf_cstr(&b),
		"\n{\"name\":\"main.add\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":1.000,\"dur\":2.500,"
		"\"pid\":4242,\"tid\":17,\"args\":{\"goid\":17,\"status\":\"unwound\",\"goargs\":[3],"
		"\"args\":{\"n\":3},\"goret\":[],\"rets\":{}}}");
	output_free(o);
}

/* ------------------------------------------------------------ interfaces */

Test(output, interfaces_are_type_names)
{
	const struct output_opts co = { .format = &out_csv, .csv_values = 3 };
	struct output *o;

	arg(0, "e", GTR_TYPE_IFACE, 16);
	probe.args[0].type_name = "error";
	arg(1, "v", GTR_TYPE_IFACE, 16);
	probe.args[1].type_name = "interface {}";
	arg(2, "s", GTR_TYPE_STRING, 16);
	probe.args[2].type_name = "string";
	vstr(0, "*errors.errorString", 19, 19);
	vstr(1, "<nil>", 5, 5);
	vstr(2, "<nil>", 5, 5);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         "
			 "e=*errors.errorString v=<nil> s=\"<nil>\"(len=5)\n");
	cr_expect(strstr(json(), "\"args\":{\"e\":\"*errors.errorString\",\"v\":\"<nil>\",\"s\":\"<nil>\"}"),
		  "%s", json());
	FMT("%s|%v|%s", "*errors.errorString|<nil>|<nil>");
	FMT("%.7s|%6s|", "*errors| <nil>|");
	FMT("%d", "*errors.errorString");  /* an integer verb prints it as %s */
	o = output_new(&co);
	cr_expect_str_eq(put(o), "123456789,4242,4243,17,app,main.add,entry,,*errors.errorString,<nil>,<nil>\r\n");
	output_free(o);

	/* a name with bytes to escape, and one cut short */
	vstr(0, "main.T\n", 7, 7);
	vstr(1, "main.Long", 4, 9);
	ev.nvals = 2;
	cr_expect_str_eq(text(), "4242    4243    app             main.add         e=main.T\\n v=main...(len=9)\n");

	/* files written before GTR_TYPE_IFACE: a string typed as an interface */
	probe.args[0].type = GTR_TYPE_STRING;
	probe.args[1].type = GTR_TYPE_STRING;
	vstr(0, "<nil>", 5, 5);
	vstr(1, "int", 3, 3);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         e=<nil> v=int\n");
	probe.args[1].type_name = "main.Name";  /* a named string type */
	cr_expect_str_eq(text(), "4242    4243    app             main.add         e=<nil> v=\"int\"(len=3)\n");
	cr_expect(output_arg_is_iface(&(struct gtr_arg){ .type = GTR_TYPE_STRING, .type_name = "any" }));
	cr_expect(output_arg_is_iface(&(struct gtr_arg){ .type = GTR_TYPE_IFACE, .type_name = "io.Reader" }));
	cr_expect(!output_arg_is_iface(&(struct gtr_arg){ .type = GTR_TYPE_STRING, .type_name = "string" }));
	cr_expect(!output_arg_is_iface(NULL));
}

/* ------------------------------------------------------------ stacks */

/* A fake symbol table: main.f [0x401000, 0x401100), main.g [0x401100, 0x401200). */
static const char *fake_sym(void *ctx, uint32_t pid, uint64_t addr, uint64_t *off)
{
	cr_expect_eq(pid, 4242);
	cr_expect_eq(ctx, (void *)&probe);
	if (addr >= 0x401000 && addr < 0x401100) {
		*off = addr - 0x401000;
		return "main.f";
	}
	if (addr >= 0x401100 && addr < 0x401200) {
		*off = addr - 0x401100;
		return "main.g";
	}
	return NULL;
}

Test(output, stacks_under_text_lines_and_in_json)
{
	/* frame 0: the probe; frame 1: a return address just past main.f's last
	 * byte (a call at its end), named by the byte before; frame 2 unknown */
	static const uint64_t st[] = { 0x401104, 0x401100, 0x7f0000001234 };
	const struct output_opts to = { .format = &out_text, .symbolize = fake_sym, .sym_ctx = &probe };
	const struct output_opts jo = { .format = &out_jsonl, .symbolize = fake_sym, .sym_ctx = &probe };
	const struct output_opts co = { .format = &out_chrome, .symbolize = fake_sym, .sym_ctx = &probe };
	struct output *o = output_new(&to);

	arg(0, "a", GTR_TYPE_INT, 8);
	vint(0, 1);
	ev.stack = st;
	ev.nstack = 3;
	cr_expect_str_eq(put(o),
		"4242    4243    app             main.add         a=1\n"
		"        main.g+0x4\n"
		"        main.f+0x100\n"
		"        0x7f0000001234\n");
	output_free(o);
	/* without a symbolizer: hex */
	cr_expect_str_eq(text(),
		"4242    4243    app             main.add         a=1\n"
		"        0x401104\n"
		"        0x401100\n"
		"        0x7f0000001234\n");

	o = output_new(&jo);
	cr_expect_str_eq(put(o),
		"{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\",\"func\":\"main.add\","
		"\"kind\":\"entry\",\"probe\":3,\"goargs\":[1],\"args\":{\"a\":1},"
		"\"stack\":[\"main.g+0x4\",\"main.f+0x100\",\"0x7f0000001234\"]}\n");
	/* no key on events without a stack */
	ev.nstack = 0;
	ev.stack = NULL;
	cr_expect(!strstr(put(o), "stack"));
	output_free(o);

	/* frame names alone, for folded stacks */
	o = output_new(&to);
	buf_reset(&b);
	output_frame(o, &b, 4242, 0x401100, 1, false, true);
	buf_putc(&b, ' ');
	output_frame(o, &b, 4242, 0x401100, 0, false, true);
	cr_expect_str_eq(buf_cstr(&b), "main.f main.g");
	output_free(o);

	/* Chrome and the call view: the entry's stack */
	static struct gtr_event entry;
	static struct gtr_probe rp;
	entry = ev;
	entry.stack = st;
	entry.nstack = 1;
	rp = probe;
	rp.kind = GTR_KIND_RETURN;
	ev.kind = GTR_KIND_RETURN;
	rev.probe = &rp;
	rev.entry = &entry;
	rev.entry_probe = &probe;
	rev.latency_ns = 1000;
	o = output_new(&co);
	cr_expect(strstr(put(o), "\"rets\":{\"a\":1},\"stack\":[\"main.g+0x4\"]}}"), "%s", buf_cstr(&b));
	output_free(o);
	const struct output_opts cv = { .format = &out_text, .calls = true, .symbolize = fake_sym,
					.sym_ctx = &probe };
	o = output_new(&cv);
	cr_expect_str_eq(put(o), "4242    4243    app             main.add         1.000us      a=1 -> a=1\n"
			 "        main.g+0x4\n");
	output_free(o);
}

Test(output, csv)
{
	const struct output_opts oo = { .format = &out_csv, .csv_values = 2 };
	struct output *o = output_new(&oo);

	buf_reset(&b);
	output_begin(o, &b);
	cr_expect_str_eq(buf_cstr(&b), "ts_ns,pid,tid,goid,comm,func,kind,latency_ns,v1,v2\r\n");
	arg(0, "s", GTR_TYPE_STRING, 16);
	vstr(0, "a,\"b\"\n", 6, 9);
	vint(1, -3);
	vint(2, 4);
	cr_expect_str_eq(put(o), "123456789,4242,4243,17,app,main.add,entry,,\"a,\"\"b\"\"\\n...(len=9)\",-3\r\n");
	cr_expect_eq(output_csv_cut(o), 1);
	buf_reset(&b);
	output_csv_field(&b, "plain", 5);
	cr_expect_str_eq(buf_cstr(&b), "plain");
	output_free(o);
}

Test(output, chrome)
{
	const struct output_opts oo = { .format = &out_chrome };
	struct output *o = output_new(&oo);
	static struct gtr_event entry;

	buf_reset(&b);
	output_begin(o, &b);
	arg(0, "a", GTR_TYPE_INT, 8);
	vint(0, 1);
	entry = ev;
	entry.ts_ns = 1500;
	rev.t0_ns = 1000;
	ev.kind = GTR_KIND_RETURN;
	ev.ts_ns = 4000;
	rev.entry = &entry;
	rev.entry_probe = &probe;
	rev.latency_ns = 2500;
	output_put(o, &b, &rev);
	output_end(o, &b);
	cr_expect_str_eq(buf_cstr(&b),
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"gotrace-report\"},\"traceEvents\":[\n"
		"{\"name\":\"main.add\",\"cat\":\"call\",\"ph\":\"X\",\"ts\":0.500,\"dur\":2.500,\"pid\":4242,\"tid\":17,"
		"\"args\":{\"goid\":17,\"goargs\":[1],\"args\":{\"a\":1},\"goret\":[1],\"rets\":{\"a\":1}}},\n"
		"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4242,\"tid\":0,\"args\":{\"name\":\"app 4242\"}},\n"
		"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":4242,\"tid\":17,\"args\":{\"name\":\"goroutine 17\"}}\n"
		"]}\n");
	output_free(o);
}

Test(output, json_return_latency)
{
	static struct gtr_event entry;

	ev.kind = GTR_KIND_RETURN;
	arg(0, "~r0", GTR_TYPE_INT, 8);
	vint(0, 5);
	rev.entry = &entry;
	rev.latency_ns = 77;
	cr_expect_str_eq(json(), "{\"ts_ns\":123456789,\"pid\":4242,\"tid\":4243,\"goid\":17,\"comm\":\"app\","
			 "\"func\":\"main.add\",\"kind\":\"return\",\"probe\":3,\"latency_ns\":77,"
			 "\"goargs\":[5],\"args\":{\"~r0\":5}}\n");
}

/* ------------------------------------------------------------ slices */

/* xs []int (8-byte elements) = [1 -2 300], captured whole */
static const uint8_t slice3[24] = {
	1, 0, 0, 0, 0, 0, 0, 0,
	0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x2c, 0x01, 0, 0, 0, 0, 0, 0,
};

static void slice_arg(uint32_t i, const char *name, const char *type_name, uint32_t esize)
{
	arg(i, name, GTR_TYPE_SLICE, esize);
	probe.args[i].type_name = type_name;
}

/* CSV shows every value as text does (strings unquoted): never a slice's
 * raw element bytes */
Test(output, csv_values_are_rendered_as_in_text)
{
	const struct output_opts co = { .format = &out_csv, .csv_values = 9 };
	struct output *o = output_new(&co);

	slice_arg(0, "xs", "[]int", 8);
	vstr(0, (const char *)slice3, 24, 24);
	slice_arg(1, "empty", "[]int", 8);
	vstr(1, "", 0, 0);
	slice_arg(2, "cut", "[]int", 8);
	vstr(2, (const char *)slice3, 16, 80);          /* 2 of 10 elements captured */
	slice_arg(3, "ss", "[]string", 16);
	vstr(3, "", 0, 32);                             /* elements not shown */
	arg(4, "e", GTR_TYPE_IFACE, 16);
	probe.args[4].type_name = "error";
	vstr(4, "*errors.errorString", 19, 19);
	arg(5, "bs", GTR_TYPE_BYTES, 24);
	vstr(5, "a\x01,", 3, 7);
	arg(6, "f", GTR_TYPE_FLOAT, 8);
	vdbl(6, 0.1);
	arg(7, "ok", GTR_TYPE_BOOL, 1);
	vbool(7, true);
	arg(8, "x", GTR_TYPE_FLOAT, 8);
	vnone(8);
	cr_expect_str_eq(text(), "4242    4243    app             main.add         "
			 "xs=[1 -2 300](len=3) empty=[](len=0) cut=[1 -2 ...](len=10) ss=[...](len=2) "
			 "e=*errors.errorString bs=\"a\\x01,\"...(len=7) f=0.1 ok=true x=<unavailable>\n");
	cr_expect_str_eq(put(o), "123456789,4242,4243,17,app,main.add,entry,,"
			 "[1 -2 300](len=3),[](len=0),[1 -2 ...](len=10),[...](len=2),"
			 "*errors.errorString,\"a\\x01,...(len=7)\",0.1,true,<unavailable>\r\n");
	output_free(o);

	/* format strings: %s and %v of a slice, and verbs that do not fit it */
	FMT("%s|%v|%d|%x|%f|%.1s|%8s|", "[1 -2 300](len=3)|[](len=0)|[1 -2 ...](len=10)|"
	    "[...](len=2)|*errors.errorString|a...(len=7)|     0.1|");
	/* the exported single-value renderer */
	buf_reset(&b);
	output_text_value(&b, &ev.vals[0], &probe.args[0]);
	cr_expect_str_eq(buf_cstr(&b), "[1 -2 300](len=3)");
}

/* An array ([N]T, recorded as a slice value with its count, spec/FORMAT.md)
 * prints as Go's %v does when whole, and with its length when cut; its
 * elements by their predeclared type (elem), whatever the type's name. */
Test(output, arrays_print_as_go_prints_them)
{
	static const uint8_t two[2] = { 1, 0 };

	slice_arg(0, "xs", "main.Vec", 8);
	probe.args[0].elem = "int64";
	probe.args[0].count = 3;
	vstr(0, (const char *)slice3, 24, 24);
	slice_arg(1, "cut", "[10]int", 8);
	probe.args[1].elem = "int64";
	probe.args[1].count = 10;
	vstr(1, (const char *)slice3, 16, 80);
	slice_arg(2, "b", "[2]bool", 1);
	probe.args[2].elem = "bool";
	probe.args[2].count = 2;
	vstr(2, (const char *)two, 2, 2);
	slice_arg(3, "ss", "[2]string", 16);
	probe.args[3].count = 2;
	vstr(3, "", 0, 32);                             /* elements not shown */
	cr_expect_str_eq(text(), "4242    4243    app             main.add         "
			 "xs=[1 -2 300] cut=[1 -2 ...](len=10) b=[true false] ss=[...](len=2)\n");
	buf_reset(&b);
	output_json_value(&b, &ev.vals[0], &probe.args[0]);
	cr_expect_str_eq(buf_cstr(&b), "[1,-2,300]");
	buf_reset(&b);
	output_json_value(&b, &ev.vals[1], &probe.args[1]);
	cr_expect_str_eq(buf_cstr(&b), "{\"elems\":[1,-2],\"len\":10,\"truncated\":true}");
}

/* ------------------------------------------------------------ call view context */

/* A call's row shows its entry's time, pid, tid and goroutine (the return
 * may run on another thread), in text and JSON Lines alike. */
Test(output, call_rows_take_context_from_the_entry)
{
	const struct output_opts to = { .format = &out_text, .calls = true, .time_rel = true };
	const struct output_opts jo = { .format = &out_jsonl, .calls = true };
	static struct gtr_probe rp;
	static struct gtr_event entry;
	struct output *o;

	arg(0, "a", GTR_TYPE_INT, 8);
	vint(0, 7);
	entry = ev;
	entry.ts_ns = 1000;
	entry.tid = 4250;
	entry.cpu = 1;
	rp = probe;
	rp.id = 4;
	rp.kind = GTR_KIND_RETURN;
	rp.args[0].name = "~r0";
	ev.kind = GTR_KIND_RETURN;
	ev.probe_id = 4;
	ev.ts_ns = 3500;
	ev.tid = 4243;
	ev.cpu = 2;
	rev.t0_ns = 0;
	rev.probe = &rp;
	rev.entry = &entry;
	rev.entry_probe = &probe;
	rev.latency_ns = 2500;
	o = output_new(&to);
	cr_expect_str_eq(put(o), "0.000001   4242    4250    app             main.add         2.500us      a=7 -> ~r0=7\n");
	output_free(o);
	o = output_new(&jo);
	cr_expect_str_eq(put(o),
		"{\"ts_ns\":1000,\"pid\":4242,\"tid\":4250,\"goid\":17,\"comm\":\"app\",\"func\":\"main.add\","
		"\"kind\":\"call\",\"probe\":3,\"status\":\"returned\",\"latency_ns\":2500,\"goargs\":[7],"
		"\"args\":{\"a\":7},\"goret\":[7],\"rets\":{\"~r0\":7}}\n");
	output_free(o);

	/* an entry whose probe the file does not describe: its own id */
	rev.entry_probe = NULL;
	rev.probe = NULL;
	o = output_new(&to);
	cr_expect_str_eq(put(o), "0.000001   4242    4250    app             probe#3          2.500us      7 -> 7\n");
	output_free(o);
}

/* ------------------------------------------------------------ printf flags */

/* Our conversion `f` of the current values against C's snprintf of `c`. */
#define FMT_C(f, c, ...)                                                   \
	do {                                                               \
		char want_[128];                                           \
		const char *c_ = (c); /* not a literal: C's own flags, \
					 warnings and all */              \
		snprintf(want_, sizeof(want_), c_, __VA_ARGS__);           \
		cr_expect_str_eq(fmt(f), want_, "format '%s'", f);         \
	} while (0)

Test(output, format_flags_as_c)
{
	arg(0, "n", GTR_TYPE_INT, 8);
	arg(1, "m", GTR_TYPE_INT, 8);
	arg(2, "z", GTR_TYPE_INT, 8);
	arg(3, "k", GTR_TYPE_INT, 8);
	vint(0, 5);
	vint(1, -5);
	vint(2, 0);
	vint(3, 5);
	FMT_C("%+d|", "%+lld|", 5LL);
	FMT_C("%+d %+d %+d %+d", "%+lld %+lld %+lld %+lld", 5LL, -5LL, 0LL, 5LL);
	FMT_C("% d % d % d % d", "% lld % lld % lld % lld", 5LL, -5LL, 0LL, 5LL);
	FMT_C("%+i|%+5d|%-+5d|%+05d", "%+lli|%+5lld|%-+5lld|%+05lld", 5LL, -5LL, 0LL, 5LL);
	FMT_C("[% 05d] [%+.3d] [%+ d] [%+.0d]", "[% 05lld] [%+.3lld] [%+ lld] [%+.0lld]", 5LL, -5LL, 0LL, 5LL);
	FMT_C("[%+.0d] [% .0d] [%-+4d] [% -4d]", "[%+.0lld] [% .0lld] [%-+4lld] [% -4lld]", 5LL, -5LL, 0LL, 5LL);
	/* '+' and ' ' do not apply to unsigned conversions; '#' does */
	vint(0, 255);
	vint(1, 8);
	vint(2, 0);
	vint(3, 255);
	FMT_C("%+u|% x|%+X|% o", "%+llu|% llx|%+llX|% llo", 255ULL, 8ULL, 0ULL, 255ULL);
	FMT_C("%#x|%#X|%#o|%#o", "%#llx|%#llX|%#llo|%#llo", 255ULL, 8ULL, 0ULL, 255ULL);
	FMT_C("%#8x|%#-8o|%#010x|%#.3o", "%#8llx|%#-8llo|%#010llx|%#.3llo", 255ULL, 8ULL, 0ULL, 255ULL);
	/* an unsigned or bool value under %d: signed layout, '+' included */
	arg(0, "u", GTR_TYPE_UINT, 8);
	arg(1, "ok", GTR_TYPE_BOOL, 1);
	vuint(0, 7);
	vbool(1, true);
	ev.nvals = 2;
	FMT_C("%+d % d", "%+lld % lld", 7LL, 1LL);
	vuint(0, UINT64_MAX);
	ev.nvals = 1;
	FMT("%+d|", "+18446744073709551615|");
	FMT("% d|", " 18446744073709551615|");
	FMT("%d|", "18446744073709551615|");
	FMT("[%+24d]", "[   +18446744073709551615]");
	FMT("[%-+23d]", "[+18446744073709551615  ]");
	FMT("[%+024d]", "[+00018446744073709551615]");
	FMT("[%+.22d]", "[+0018446744073709551615]");
	FMT("[%+025.22d]", "[  +0018446744073709551615]");
	/* floats: flags as C has them */
	arg(0, "f", GTR_TYPE_FLOAT, 8);
	arg(1, "g", GTR_TYPE_FLOAT, 8);
	arg(2, "h", GTR_TYPE_FLOAT, 8);
	arg(3, "i", GTR_TYPE_FLOAT, 8);
	vdbl(0, 1.5);
	vdbl(1, 1.5);
	vdbl(2, -2.0);
	vdbl(3, -2.0);
	FMT_C("%+e|% f|%+g|% g", "%+e|% f|%+g|% g", 1.5, 1.5, -2.0, -2.0);
	FMT_C("%#.0f|%#.0e|%#g|%+010.2f", "%#.0f|%#.0e|%#g|%+010.2f", 1.5, 1.5, -2.0, -2.0);
	FMT_C("% .3E|%+F|%#G|% 010.1e", "% .3E|%+F|%#G|% 010.1e", 1.5, 1.5, -2.0, -2.0);
}
