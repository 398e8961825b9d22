/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the filter language (report/filter.h, spec/FILTER.md), its
 * second version: results and returns that see their entry, ts, cpu and
 * binary, time and duration literals, field paths, lists, regular
 * expressions, string functions, interfaces and slices.
 */
#include "filter_fixture.h"

TestSuite(filter, .init = setup);

/* main.add's return probe: results (~r0 int, err string); probe id 11 */
static struct gtr_probe probe_ret;
static struct gtr_event entry_ev;

static void ev_ret(int64_t r0, const char *errs, uint64_t latency)
{
	memset(&probe_ret, 0, sizeof(probe_ret));
	probe_ret.id = 11;
	probe_ret.kind = GTR_KIND_RETURN;
	probe_ret.func = "main.add";
	probe_ret.fmt = "";
	set_arg(&probe_ret, 0, "~r0", GTR_TYPE_INT, 8);
	set_arg(&probe_ret, 1, "err", GTR_TYPE_STRING, 16);
	/* the paired entry: add(5, 6, "bob") */
	ev_add(5, 6, "bob");
	entry_ev = ev;
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 11;
	ev.kind = GTR_KIND_RETURN;
	ev.pid = 100;
	ev.tid = 101;
	ev.goid = 7;
	ev.ts_ns = 5000 + latency;
	ev.nvals = 2;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = r0;
	ev.vals[1].kind = GTR_VAL_STR;
	ev.vals[1].v.s.data = (const uint8_t *)errs;
	ev.vals[1].v.s.len = (uint32_t)strlen(errs);
	ev.vals[1].v.s.full_len = strlen(errs);
	rev.probe = &probe_ret;
	rev.entry = &entry_ev;
	rev.entry_probe = &probe_add;
	rev.latency_ns = latency;
	rev.t0_ns = 1000;
}

Test(filter, goret_retval_and_kind)
{
	ev_add(1, 2, "x");
	cr_expect(m("kind == \"entry\""));
	cr_expect(!m("kind == \"return\""));
	cr_expect(!m("goret1 == 0"), "entry events have no results");
	cr_expect(!m("latency >= 0"), "entry events have no latency");
	ev_ret(11, "", 1500);
	cr_expect(m("kind == \"return\""));
	cr_expect(m("goret1 == 11 && retval == 11"));
	cr_expect(m("goret2 == \"\""));
	cr_expect(!m("goret3 == 0"));
}

Test(filter, return_sees_its_entry)
{
	ev_ret(11, "boom", 1500);
	/* goargN and entry parameter names come from the paired entry */
	cr_expect(m("goarg1 == 5 && goarg2 == 6 && goarg3 == \"bob\""));
	cr_expect(m("a == 5 && name == \"bob\""));
	cr_expect(m("err == \"boom\""), "result names come first");
	cr_expect(m("latency == 1500 && latency > 1us && latency < 2us"));
	cr_expect(m("latency == 1.5us"));
	/* unpaired: entry values and latency are missing */
	rev.entry = NULL;
	rev.entry_probe = NULL;
	cr_expect(!m("goarg1 == 5"));
	cr_expect(!m("a == 5"));
	cr_expect(!m("latency >= 0"));
	cr_expect(m("goret1 == 11"));
}

Test(filter, ts_cpu_binary)
{
	ev_add(1, 2, "x");
	ev.ts_ns = 3000001000;
	rev.t0_ns = 1000;
	cr_expect(m("ts == 3s && ts > 2999ms && ts < 3000000001ns"));
	ev.cpu = 3;
	cr_expect(m("cpu == 3"));
	ev.cpu = GTR_CPU_UNKNOWN;
	cr_expect(!m("cpu == 3") && !m("cpu != 3"), "unknown cpu is missing");
	cr_expect(!m("binary == \"/srv/app\""), "no binary: missing");
	rev.binary = "/srv/app";
	cr_expect(m("binary == \"/srv/app\" && glob(binary, \"*/app\")"));
	rev.binary = NULL;
}

Test(filter, time_literals)
{
	struct filter_error err;
	struct gtr_host host = { .start_mono_ns = 1000000000000ull,
				 .start_realtime_ns = 1714564800000000000ull };
	struct filter *f;

	setenv("TZ", "UTC", 1);
	tzset();
	ev_add(1, 2, "x");
	ev.ts_ns = 1000000000000ull + 3500000000ull; /* 12:00:03.5Z */
	f = filter_compile("ts >= 2024-05-01T12:00:03Z && ts < 2024-05-01T14:00:04+02:00", &err);
	cr_assert(f, "%s", err.msg);
	cr_expect(!filter_match(f, &rev), "time literals are false until bound");
	cr_assert_eq(filter_set_clock(f, &host, &err), 0);
	cr_expect(filter_match(f, &rev));
	filter_free(f);
	f = filter_compile("ts > 12:00:03.6 || ts < 12:00:03.25", &err);
	cr_assert(f, "%s", err.msg);
	cr_assert_eq(filter_set_clock(f, &host, &err), 0);
	cr_expect(!filter_match(f, &rev));
	filter_free(f);
	f = filter_compile("ts == 12:00:03.5", &err);
	cr_assert(f);
	cr_expect(filter_set_clock(f, &host, &err) == 0 && filter_match(f, &rev));
	host.start_realtime_ns = 0;
	cr_expect_eq(filter_set_clock(f, &host, &err), -1);
	cr_expect(strstr(err.msg, "clock anchor"), "%s", err.msg);
	cr_expect_eq(err.column, 7);
	filter_free(f);
}

Test(filter, durations)
{
	ev_add(1500, 2, "x");
	cr_expect(m("goarg1 == 1500ns && goarg1 == 1.5us && goarg1 < 1ms"));
	ev_add(90 * 1000000000ll, 0, "x");
	cr_expect(m("goarg1 == 1m30s && goarg1 == 1.5m && goarg1 == 90s"));
	ev_add(3600000000000ll, 0, "x");
	cr_expect(m("goarg1 == 1h && goarg1 == 60m"));
	ev_add(-2000, 0, "x");
	cr_expect(m("goarg1 == -2us"));
	ev_add(1000, 0, "x");
	cr_expect(m("goarg1 == 1\xc2\xb5s"), "micro sign");
}

Test(filter, field_paths)
{
	ev_add(5, 6, "bob");
	probe_add.args[2].name = "req.URL.Path";
	cr_expect(m("req.URL.Path == \"bob\" && startswith(req.URL.Path, \"b\")"));
	cr_expect(!m("req.URL == \"bob\""));
	bad("req. == 1", 4, "unexpected character '.'");
}

Test(filter, in_lists)
{
	ev_add(5, 6, "bob");
	cr_expect(m("goarg1 in (1, 5, 9)"));
	cr_expect(!m("goarg1 in (1, 9)"));
	cr_expect(m("name in (\"alice\", \"bob\")"));
	cr_expect(m("func in (\"main.add\")"));
	cr_expect(m("!(goarg1 in (1))"));
	cr_expect(!m("goarg9 in (1)"), "missing is false");
	cr_expect(m("pid in (100) && tid in (7, 101)"));
}

Test(filter, regex)
{
	ev_add(5, 6, "bob-42");
	cr_expect(m("name =~ \"^bob-[0-9]+$\""));
	cr_expect(!m("name =~ \"^alice\""));
	cr_expect(m("name !~ \"^alice\""));
	cr_expect(m("func =~ \"\\\\.add$\""));
	cr_expect(m("comm =~ \"^ap\""));
	cr_expect(!m("goarg9 =~ \"x\"") && !m("goarg9 !~ \"x\""), "missing is false");
	ev_add(5, 6, "\xff\xfe");
	cr_expect(!m("name =~ \"^a\""), "invalid UTF-8 does not match nor fail");
}

Test(filter, string_functions)
{
	ev_add(5, 6, "net/http.(*conn).serve");
	cr_expect(m("contains(name, \"(*conn)\")"));
	cr_expect(!m("contains(name, \"(*resp)\")"));
	cr_expect(m("startswith(name, \"net/http.\")"));
	cr_expect(m("endswith(name, \".serve\")"));
	cr_expect(m("glob(name, \"net/http.*\")"));
	cr_expect(m("glob(name, \"net/http.(\\\\*conn).serv?\")"));
	cr_expect(m("glob(name, \"*[s]erve\") && !glob(name, \"*[!e]\")"));
	cr_expect(m("glob(func, \"main.*\") && !glob(func, \"net/*\")"));
	cr_expect(m("len(name) == 22 && len(comm) == 3"));
	cr_expect(m("contains(name, \"\")"));
	/* truncated: startswith assumes the uncaptured bytes agree; endswith and
	 * contains see the captured bytes only */
	ev_str("hel", 3, 5, true, 0, 0, 0);
	cr_expect(m("startswith(s, \"hello\") && !startswith(s, \"hello!\")"));
	cr_expect(!m("endswith(s, \"lo\")"));
	cr_expect(m("contains(s, \"el\") && !contains(s, \"llo\")"));
	cr_expect(m("len(s) == 5"));
	cr_expect(!m("len(goarg2) == 1"), "len of a bool is missing");
}

Test(filter, glob_matcher)
{
	const struct { const char *pat, *s; bool want; } cases[] = {
		{ "*", "", true }, { "*", "abc", true }, { "a*c", "abbbc", true },
		{ "a*c", "abcd", false }, { "a?c", "abc", true }, { "a?c", "ac", false },
		{ "[a-c]x", "bx", true }, { "[!a-c]x", "bx", false }, { "[^a]x", "zx", true },
		{ "\\*", "*", true }, { "\\*", "a", false }, { "main.Map[*]", "main.Map[...]", false },
		{ "main.Map\\[*\\]", "main.Map[...]", true }, { "*.*.*", "a.b.c", true },
		{ "[", "[", true }, { "a*b*c*d", "aXbYcZd", true }, { "a*b*c*d", "aXbYcZ", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(filter_glob(cases[i].pat, (const uint8_t *)cases[i].s,
					 strlen(cases[i].s)), cases[i].want,
			     "glob('%s', '%s')", cases[i].pat, cases[i].s);
}

Test(filter, precedence_with_new_operators)
{
	ev_add(5, 6, "bob");
	/* in, =~ and predicates bind like comparisons: tighter than ! && || */
	cr_expect(m("!goarg1 in (1) && name =~ \"b\""));
	cr_expect(m("goarg1 in (1) || contains(name, \"o\") && goarg2 == 6"));
	cr_expect(!m("(goarg1 in (1) || contains(name, \"o\")) && goarg2 == 7"));
	cr_expect(m("!contains(name, \"x\")"));
}

Test(filter, field_values)
{
	struct filter_error err;
	struct filter_value v;
	struct filter *f = filter_compile_field("goarg1", &err);

	cr_assert(f);
	ev_add(-5, 6, "bob");
	cr_expect(filter_field(f, &rev, &v) && v.kind == FV_INT && v.i == -5);
	cr_expect(!filter_match(f, &rev), "a field is not a filter");
	filter_free(f);
	f = filter_compile_field("name", &err);
	cr_assert(f);
	cr_expect(filter_field(f, &rev, &v) && v.kind == FV_STR && v.len == 3);
	filter_free(f);
	f = filter_compile_field("len(name)", &err);
	cr_assert(f);
	cr_expect(filter_field(f, &rev, &v) && v.kind == FV_INT && v.i == 3);
	filter_free(f);
	cr_expect_null(filter_compile_field("1", &err));
	cr_expect(strstr(err.msg, "expected a field"), "%s", err.msg);
	cr_expect_null(filter_compile_field("pid pid", &err));
	cr_expect_null(filter_compile_field("", &err));
}

/* The argument filter_field_arg() gives for field `field` on rev. */
static const struct gtr_arg *field_arg(const char *field)
{
	struct filter_error err;
	struct filter *f = filter_compile_field(field, &err);
	const struct gtr_arg *a;

	cr_assert(f, "%s: %s", field, err.msg);
	a = filter_field_arg(f, &rev);
	filter_free(f);
	return a;
}

/* The argument a field's value is read from, as filter_field() reads it:
 * goargN and entry names from the entry (a return's paired entry), goretN
 * and result names from a return; none for other fields, len(), or a
 * value no probe of the event describes. */
Test(filter, field_arg_is_the_argument_the_field_reads)
{
	ev_add(5, 6, "bob");
	cr_expect_eq(field_arg("goarg2"), &probe_add.args[1]);
	cr_expect_eq(field_arg("name"), &probe_add.args[2]);
	cr_expect_null(field_arg("goret1"));
	cr_expect_null(field_arg("goarg4"));
	cr_expect_null(field_arg("len(name)"));
	cr_expect_null(field_arg("pid"));
	ev_ret(11, "boom", 1500);
	cr_expect_eq(field_arg("goarg1"), &probe_add.args[0]);
	cr_expect_eq(field_arg("a"), &probe_add.args[0]);
	cr_expect_eq(field_arg("goret2"), &probe_ret.args[1]);
	cr_expect_eq(field_arg("err"), &probe_ret.args[1]);
	rev.entry = NULL;
	rev.entry_probe = NULL;
	cr_expect_null(field_arg("goarg1"));
	cr_expect_null(field_arg("a"));
	cr_expect_eq(field_arg("goret1"), &probe_ret.args[0]);
	/* a filter, not a lone field */
	{
		struct filter_error err;
		struct filter *f = filter_compile("goret1 == 11", &err);

		cr_assert(f);
		cr_expect_null(filter_field_arg(f, &rev));
		filter_free(f);
	}
}

Test(filter, error_messages_v2)
{
	bad("goret0 == 1", 1, "goret1 to goret32");
	bad("goret33 == 1", 1, "goret1 to goret32");
	bad("kind == \"retrun\"", 9, "kind is \"entry\" or \"return\"");
	bad("ts == 12:61", 7, "malformed time of day");
	bad("ts == 2024-13-01T00:00:00Z", 7, "malformed time");
	bad("ts == 2024-05-01T00:00:00", 7, "RFC 3339");
	bad("pid == 12:00:00", 8, "a time compares only with 'ts'");
	bad("goarg1 == 1.5z", 11, "expected a unit");
	bad("goarg1 == 10mss", 15, "in duration");
	bad("goarg1 == 1h30", 11, "expected a unit");
	bad("goarg1 == 99999999999h", 11, "duration out of range");
	bad("goarg1 in 1", 11, "expected '(' after 'in'");
	bad("goarg1 in ()", 12, "expected a number or string literal");
	bad("goarg1 in (1, \"a\")", 15, "mixes integers and strings");
	bad("goarg1 in (1 2)", 14, "expected ',' or ')'");
	bad("pid in (\"a\")", 9, "cannot compare 'pid' (an integer) with a string");
	bad("comm =~ 5", 9, "expected a regular expression");
	bad("comm =~ \"(\"", 11, "bad regular expression: missing closing parenthesis");
	bad("pid =~ \"x\"", 1, "'=~' takes a string field");
	bad("\"x\" =~ \"x\"", 1, "'=~' takes a string field");
	bad("comm ~ \"x\"", 6, "did you mean '=~'");
	bad("contains(comm)", 14, "expected ','");
	bad("contains(comm, 5)", 16, "expected a string literal");
	bad("contains(pid, \"x\")", 10, "contains() takes a string field");
	bad("contains(\"x\", \"x\")", 10, "contains() takes a string field first");
	bad("glob(func, \"a\"", 15, "expected ')'");
	bad("contains(comm, \"x\") == 1", 21, "expected '&&', '||' or end of expression");
	bad("len(pid) == 1", 5, "len() takes a string or slice field");
	bad("len(1) == 1", 5, "a field in len()");
	bad("len(comm == 1", 10, "')' to close len(");
	bad("foo(comm) == 1", 1, "unknown function 'foo'");
	bad("goarg1 == contains(comm, \"x\")", 11, "is a condition, not a value");
	bad("goarg1 5", 8, "(== != < <= > >= in =~ !~)");
}

Test(filter, check_results_and_names_v2)
{
	const struct gtr_probe *ps[3];
	struct filter_error err;
	struct filter *f;

	ev_ret(0, "", 0);
	ps[0] = &probe_add;
	ps[1] = &probe_ret;
	ps[2] = &probe_str;
	f = filter_compile("goret2 == 5", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 3, NULL, &err), -1);
	cr_expect(strstr(err.msg, "cannot compare 'goret2' (a string in main.add) with an integer"), "%s", err.msg);
	filter_free(f);
	f = filter_compile("contains(a, \"x\")", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 3, NULL, &err), -1);
	cr_expect(strstr(err.msg, "'a' (a number in main.add)"), "%s", err.msg);
	filter_free(f);
	f = filter_compile("err =~ \"x\" && goret1 in (1, 2)", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 3, NULL, &err), 0, "%s", err.msg);
	filter_free(f);
}

/* Filter `expr` checked against main.add and main.(*T).str fails with `msg`. */
static void check_fails(const char *expr, const char *msg)
{
	const struct gtr_probe *ps[] = { &probe_add, &probe_str };
	struct filter_error err;
	struct filter *f = filter_compile(expr, &err);

	cr_assert(f, "%s: %s", expr, err.msg);
	cr_expect_eq(filter_check(f, ps, 2, NULL, &err), -1, "%s", expr);
	cr_expect(strstr(err.msg, msg), "%s: %s", expr, err.msg);
	filter_free(f);
}

/* a float literal is a number, not an integer; a field is named with its type */
Test(filter, check_names_each_literal_kind)
{
	check_fails("name > 9.99", "cannot compare 'name' (a string in main.add) with a number");
	check_fails("name > 1e-3", "with a number");
	check_fails("name > 9", "cannot compare 'name' (a string in main.add) with an integer");
	check_fails("name in (2.5, 3)", "with a number");
	check_fails("name in (2, 3.5)", "with an integer");
	check_fails("name == pid", "cannot compare 'name' (a string in main.add) with 'pid' (an integer)");
	check_fails("9.99 < name", "cannot compare 'name' (a string in main.add) with a number");
	check_fails("s == 1.5", "cannot compare 's' (a string in main.(*T).str) with a number");
	check_fails("f == \"x\"", "cannot compare 'f' (a number in main.(*T).str) with a string");
	check_fails("f =~ \"x\"", "cannot compare 'f' (a number in main.(*T).str) with a string");
	check_fails("len(f) > 1", "len() takes a string or slice field; 'f' is a number (in main.(*T).str)");
	check_fails("len(a) > 1", "len() takes a string or slice field; 'a' is an integer (in main.add)");
}

/* main.check(e error, v any): interfaces recorded as their dynamic type's name */
Test(filter, interfaces_compare_as_strings)
{
	static struct gtr_probe pc;
	const struct gtr_probe *probes[] = { &pc };
	struct filter_error err;
	struct filter *f;

	memset(&pc, 0, sizeof(pc));
	pc.id = 3;
	pc.func = "main.check";
	pc.fmt = "";
	set_arg(&pc, 0, "e", GTR_TYPE_IFACE, 16);
	pc.args[0].type_name = "error";
	set_arg(&pc, 1, "v", GTR_TYPE_IFACE, 16);
	pc.args[1].type_name = "interface {}";
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 3;
	ev.nvals = 2;
	ev.vals[0].kind = GTR_VAL_STR;
	ev.vals[0].v.s.data = (const uint8_t *)"*errors.errorString";
	ev.vals[0].v.s.len = 19;
	ev.vals[0].v.s.full_len = 19;
	ev.vals[1].kind = GTR_VAL_STR;
	ev.vals[1].v.s.data = (const uint8_t *)"<nil>";
	ev.vals[1].v.s.len = 5;
	ev.vals[1].v.s.full_len = 5;
	rev.probe = &pc;

	cr_expect(m("e == \"*errors.errorString\""));
	cr_expect(!m("e == \"<nil>\""));
	cr_expect(m("v == \"<nil>\""));
	cr_expect(m("e =~ \"errors\" && !(e =~ \"^io\")"));
	cr_expect(m("startswith(e, \"*errors.\") && len(e) == 19"));
	cr_expect(m("goarg2 in (\"<nil>\", \"int\")"));

	/* type-checked as strings against the probe */
	f = filter_compile("e == 5", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, probes, 1, NULL, &err), -1);
	cr_expect(strstr(err.msg, "cannot compare 'e' (a string in main.check) with an integer"),
		  "%s", err.msg);
	filter_free(f);
	f = filter_compile("e != \"<nil>\"", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, probes, 1, NULL, &err), 0);
	filter_free(f);
}

/* ------------------------------------------------------------ slices */

/*
 * main.process(n int, xs []int, ys []T): a slice is recorded as its first
 * elements' bytes (GTR_TYPE_SLICE, size = one element; full_len = length x
 * size, or the length itself when the element size is unknown).
 */
static struct gtr_probe probe_sl;
/* xs = [1 2 3]: three 8-byte elements, captured whole */
static const uint8_t xs3[24] = { 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
				 3, 0, 0, 0, 0, 0, 0, 0 };

static void ev_slice(uint32_t xs_captured, uint64_t xs_full, uint64_t ys_len)
{
	memset(&probe_sl, 0, sizeof(probe_sl));
	probe_sl.id = 5;
	probe_sl.func = "main.process";
	probe_sl.fmt = "";
	set_arg(&probe_sl, 0, "n", GTR_TYPE_INT, 8);
	set_arg(&probe_sl, 1, "xs", GTR_TYPE_SLICE, 8);
	probe_sl.args[1].type_name = "[]int";
	set_arg(&probe_sl, 2, "ys", GTR_TYPE_SLICE, 0);  /* element size unknown */
	probe_sl.args[2].type_name = "[]main.T";
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 5;
	ev.nvals = 3;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = 3;
	ev.vals[1].kind = GTR_VAL_STR;
	ev.vals[1].v.s.data = xs3;
	ev.vals[1].v.s.len = xs_captured;
	ev.vals[1].v.s.full_len = xs_full;
	ev.vals[2].kind = GTR_VAL_STR;
	ev.vals[2].v.s.data = NULL;
	ev.vals[2].v.s.len = 0;
	ev.vals[2].v.s.full_len = ys_len;
	rev.probe = &probe_sl;
	rev.entry = NULL;
	rev.entry_probe = NULL;
}

/* Compiles `expr` and checks it against probe_sl: must fail at `column`
 * with `msg`. */
static void bad_check(const char *expr, unsigned column, const char *msg)
{
	const struct gtr_probe *ps[] = { &probe_sl };
	struct filter_error err;
	struct filter *f = filter_compile(expr, &err);

	cr_assert(f, "'%s' rejected: %s", expr, err.msg);
	cr_expect_eq(filter_check(f, ps, 1, NULL, &err), -1, "'%s' passed the check", expr);
	cr_expect_eq(err.column, column, "'%s': column %u, expected %u", expr, err.column, column);
	cr_expect(strstr(err.msg, msg), "'%s': message '%s' lacks '%s'", expr, err.msg, msg);
	filter_free(f);
}

Test(filter, slices_have_only_a_length)
{
	ev_slice(24, 24, 2);
	/* len(): the element count, also when only some were captured */
	cr_expect(m("len(xs) == 3"));
	cr_expect(m("len(goarg2) == 3 && len(ys) == 2"));
	cr_expect(!m("len(xs) > 3"));
	ev_slice(16, 80, 0);
	cr_expect(m("len(xs) == 10"));
	cr_expect(m("len(ys) == 0"));

	/* never their element bytes: a slice's value is missing at run time
	 * (a probe described after the check, say) */
	cr_expect(!m("contains(xs, \"\\x01\")"));
	cr_expect(!m("startswith(xs, \"\\x01\") || endswith(xs, \"\") || glob(xs, \"*\")"));
	cr_expect(!m("xs =~ \"\" || xs == 3 || xs != 3 || xs in (\"\\x01\")"));
	cr_expect(!m("xs == \"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00\""));
	cr_expect(m("!(xs == 3) && n == 3"));

	/* and a type error when checked against the probes */
	bad_check("xs == 3", 1, "xs is a slice ([]int): only len(xs) applies");
	bad_check("n == 3 && 3 < goarg3", 15, "goarg3 is a slice ([]main.T): only len(goarg3) applies");
	bad_check("contains(xs, \"\\x01\")", 10, "xs is a slice ([]int): only len(xs) applies");
	bad_check("endswith(ys, \"a\")", 10, "ys is a slice ([]main.T): only len(ys) applies");
	bad_check("xs =~ \"a\"", 1, "xs is a slice");
	bad_check("xs !~ \"a\"", 1, "xs is a slice");
	bad_check("xs in (1, 2)", 1, "xs is a slice");
	bad_check("n == ys", 6, "ys is a slice ([]main.T)");
	/* len() of an integer the probes describe, as len(pid) is */
	bad_check("len(n) > 2", 5, "len() takes a string or slice field; 'n' is an integer "
		  "(in main.process)");
	bad_check("n == 3 || len( goarg1 ) in (1)", 16, "'goarg1' is an integer");

	const struct gtr_probe *ps[] = { &probe_sl, &probe_add };
	struct filter_error err;
	struct filter *f = filter_compile("len(xs) >= 1 && len(ys) < 5 && n > 0", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 2, NULL, &err), 0, "%s", err.msg);
	filter_free(f);

	/* a field that is a slice in one probe and not in another: fine (false
	 * on the slices) */
	f = filter_compile("goarg2 == 3", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 2, NULL, &err), 0, "%s", err.msg);
	filter_free(f);
	static struct gtr_probe other;
	memset(&other, 0, sizeof(other));
	other.id = 6;
	other.func = "main.other";
	other.fmt = "";
	set_arg(&other, 0, "xs", GTR_TYPE_INT, 8);
	const struct gtr_probe *mixed[] = { &probe_sl, &other };
	f = filter_compile("xs == 3", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, mixed, 2, NULL, &err), 0, "%s", err.msg);
	filter_free(f);
	/* len() of a field that is an integer in one probe only: fine */
	f = filter_compile("len(xs) > 2", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, mixed, 2, NULL, &err), 0, "%s", err.msg);
	filter_free(f);
}

Test(filter, slices_as_fields_and_on_returns)
{
	const struct gtr_probe *ps[] = { &probe_sl };
	struct filter_error err;
	struct filter_value v;
	struct filter *f;

	ev_slice(24, 24, 7);
	f = filter_compile_field("len(xs)", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 1, NULL, &err), 0);
	cr_expect(filter_field(f, &rev, &v) && v.kind == FV_INT && v.i == 3);
	filter_free(f);
	f = filter_compile_field("len(ys)", &err);
	cr_assert(f);
	cr_expect(filter_field(f, &rev, &v) && v.kind == FV_INT && v.i == 7);
	filter_free(f);
	/* stats --by xs: a slice has no value to group by */
	f = filter_compile_field("xs", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 1, NULL, &err), -1);
	cr_expect_eq(err.column, 1);
	cr_expect(strstr(err.msg, "xs is a slice ([]int): only len(xs) applies"), "%s", err.msg);
	cr_expect(!filter_field(f, &rev, &v), "a slice's value is missing");
	filter_free(f);
	/* stats --by len(n): an integer has no length */
	f = filter_compile_field("len(n)", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, ps, 1, NULL, &err), -1);
	cr_expect_eq(err.column, 5);
	cr_expect(strstr(err.msg, "'n' is an integer"), "%s", err.msg);
	filter_free(f);

	/* a return sees its entry's slice: length only */
	static struct gtr_event entry;
	static struct gtr_probe rp;
	entry = ev;
	memset(&rp, 0, sizeof(rp));
	rp.id = 15;
	rp.kind = GTR_KIND_RETURN;
	rp.func = "main.process";
	rp.fmt = "";
	set_arg(&rp, 0, "~r0", GTR_TYPE_INT, 8);
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 15;
	ev.kind = GTR_KIND_RETURN;
	ev.nvals = 1;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = 9;
	rev.probe = &rp;
	rev.entry = &entry;
	rev.entry_probe = &probe_sl;
	cr_expect(m("len(xs) == 3 && len(goarg2) == 3 && len(ys) == 7 && retval == 9"));
	/* an unnamed result by the name output shows it under */
	cr_expect(m("~r0 == 9 && (~r0>8) && ~r0 in (9)"));
	cr_expect(!m("~r0 != 9") && !m("~r1 == 9"));
	cr_expect(!m("contains(xs, \"\\x01\")"));
	cr_expect(!m("goarg2 == 1"));
}

Test(filter, cap_reads_the_recorded_capacity)
{
	static struct gtr_probe ps;
	static struct gtr_event e;
	struct report_event re = { .ev = &e, .probe = &ps, .comm = "" };

	memset(&ps, 0, sizeof(ps));
	ps.id = 9;
	ps.func = "main.take";
	set_arg(&ps, 0, "xs", GTR_TYPE_SLICE, 8);
	ps.args[0].type_name = "[]int";
	set_arg(&ps, 1, "cap(xs)", GTR_TYPE_INT, 8);
	e.probe_id = 9;
	e.nvals = 2;
	e.vals[0].kind = GTR_VAL_STR;
	e.vals[0].v.s.data = (const uint8_t *)"\1\0\0\0\0\0\0\0";
	e.vals[0].v.s.len = 8;
	e.vals[0].v.s.full_len = 8;
	e.vals[1].kind = GTR_VAL_INT;
	e.vals[1].v.i = 4;
	struct filter_error err;
	struct filter *f = filter_compile("cap(xs) == 4 && len(xs) == 1", &err);
	cr_assert(f, "%s", err.msg);
	const struct gtr_probe *pl[] = { &ps };
	cr_assert_eq(filter_check(f, pl, 1, NULL, &err), 0, "%s", err.msg);
	cr_expect(filter_match(f, &re));
	filter_free(f);
	f = filter_compile("cap(xs) > 4", &err);
	cr_expect(!filter_match(f, &re));
	filter_free(f);
	bad("cap(1) > 2", 5, "a slice parameter's name in cap()");
	bad("cap(xs", 7, "')' to close cap(");
}

/* Found by fuzzing: an expression whose only string literals are empty
 * has no string pool (UB when read); a time beyond what int64 nanoseconds
 * hold is refused, not overflowed. */
Test(filter, empty_string_literals_and_times_out_of_range)
{
	ev_add(1, 2, "x");
	cr_expect(!m("comm == \"\""));
	cr_expect(m("comm != \"\""));
	ev_str("", 0, 0, false, 0, 0.0, 0);
	cr_expect(m("s == \"\""));
	bad("ts >= 1012-05-01T12:00:00Z", 7, "time out of range");
	bad("ts < 2300-01-01T00:00:00Z", 6, "time out of range");
}
