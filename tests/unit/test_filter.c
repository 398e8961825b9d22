/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the filter language (report/filter.h, spec/FILTER.md) on
 * synthetic events: every operator and precedence level, literal forms,
 * fields present and missing, string semantics, error messages and columns
 * (returns, time, lists, regular expressions and slices: test_filter_v2.c).
 */
#include "filter_fixture.h"

TestSuite(filter, .init = setup);

/* ------------------------------------------------------------ operators */

Test(filter, comparison_operators_on_ints)
{
	ev_add(42, -3, "x");
	cr_expect(m("goarg1 == 42"));
	cr_expect(!m("goarg1 == 41"));
	cr_expect(m("goarg1 != 41"));
	cr_expect(!m("goarg1 != 42"));
	cr_expect(m("goarg1 < 43"));
	cr_expect(!m("goarg1 < 42"));
	cr_expect(m("goarg1 <= 42"));
	cr_expect(!m("goarg1 <= 41"));
	cr_expect(m("goarg1 > 41"));
	cr_expect(!m("goarg1 > 42"));
	cr_expect(m("goarg1 >= 42"));
	cr_expect(!m("goarg1 >= 43"));
	cr_expect(m("goarg2 == -3"));
	cr_expect(m("goarg2 < 0"));
	cr_expect(m("-4 < goarg2"), "literal on the left");
	cr_expect(m("goarg1 > goarg2"), "field against field");
	cr_expect(m("goarg1==42"), "no spaces needed");
}

Test(filter, logical_operators)
{
	ev_add(1, 2, "x");
	cr_expect(m("goarg1 == 1 && goarg2 == 2"));
	cr_expect(!m("goarg1 == 1 && goarg2 == 3"));
	cr_expect(!m("goarg1 == 0 && goarg2 == 2"));
	cr_expect(m("goarg1 == 0 || goarg2 == 2"));
	cr_expect(m("goarg1 == 1 || goarg2 == 0"));
	cr_expect(!m("goarg1 == 0 || goarg2 == 0"));
	cr_expect(m("!goarg1 == 0"), "! applies to the comparison");
	cr_expect(!m("!goarg1 == 1"));
	cr_expect(m("!!goarg1 == 1"));
	cr_expect(m("!(goarg1 == 0)"));
	cr_expect(m("goarg1 == 1 && goarg2 == 2 && a == 1 && b == 2"), "chains");
	cr_expect(m("goarg1 == 9 || goarg1 == 8 || goarg1 == 1"));
}

Test(filter, precedence)
{
	ev_add(1, 2, "x");
	/* && binds tighter than ||: false && false || true == true */
	cr_expect(m("goarg1 == 0 && goarg2 == 0 || goarg1 == 1"));
	/* true || true && false == true (not (true||true) && false) */
	cr_expect(m("goarg1 == 1 || goarg2 == 2 && goarg1 == 0"));
	cr_expect(!m("(goarg1 == 1 || goarg2 == 2) && goarg1 == 0"));
	/* ! binds tighter than && */
	cr_expect(!m("!goarg1 == 1 && goarg2 == 2"));
	cr_expect(m("!(goarg1 == 1 && goarg2 == 3)"));
	cr_expect(m("((((goarg1 == 1))))"));
}

/* ------------------------------------------------------------ literals */

Test(filter, integer_literals)
{
	ev_add(255, INT64_MIN, "x");
	cr_expect(m("goarg1 == 0xff"));
	cr_expect(m("goarg1 == 0XFF"));
	cr_expect(m("goarg1 == 0xFf"));
	cr_expect(m("goarg2 == -9223372036854775808"));
	cr_expect(m("goarg2 == -0x8000000000000000"));
	cr_expect(m("goarg2 < -9223372036854775807"));
	ev_add(0, 0, "x");
	cr_expect(m("goarg1 == 0"));
	cr_expect(m("goarg1 == -0"));
}

Test(filter, unsigned_and_signed_compare_exactly)
{
	ev_str("", 0, 0, true, UINT64_MAX, 0.0, UINT64_MAX);
	cr_expect(m("p == 18446744073709551615"));
	cr_expect(m("p == 0xffffffffffffffff"));
	cr_expect(m("p > 0"), "uint64 max is not -1");
	cr_expect(!m("p == -1"));
	cr_expect(m("goarg5 > 9223372036854775807"));
	ev_add(-1, 0, "x");
	cr_expect(!m("goarg1 == 18446744073709551615"), "int -1 is not uint max");
	cr_expect(m("goarg1 < 18446744073709551615"));
}

Test(filter, bool_literals)
{
	ev_str("", 0, 0, true, 0, 0.0, 0);
	cr_expect(m("flag == true"));
	cr_expect(!m("flag == false"));
	cr_expect(m("flag == 1"));
	cr_expect(m("flag != 0"));
}

Test(filter, string_literals_and_escapes)
{
	ev_str("a\"b\\c\nd\te\x01\xff", 11, 11, false, 0, 0.0, 0);
	cr_expect(m("s == \"a\\\"b\\\\c\\nd\\te\\x01\\xff\""));
	cr_expect(m("s == \"a\\\"b\\\\c\\nd\\te\\x01\\xFF\""));
	cr_expect(!m("s == \"a\\\"b\\\\c\\nd\\te\\x01\""));
	ev_str("héllo", 6, 6, false, 0, 0.0, 0);
	cr_expect(m("s == \"héllo\""), "UTF-8 passes through");
	cr_expect(m("s == \"h\\xc3\\xa9llo\""));
	ev_str("", 0, 0, false, 0, 0.0, 0);
	cr_expect(m("s == \"\""));
	cr_expect(!m("s != \"\""));
	ev_str("r\r", 2, 2, false, 0, 0.0, 0);
	cr_expect(m("s == \"r\\r\""));
}

Test(filter, string_bytes_with_nul)
{
	ev_str("a\0b", 3, 3, false, 0, 0.0, 0);
	cr_expect(m("s == \"a\\x00b\""));
	cr_expect(!m("s == \"a\""));
}

Test(filter, string_ordering)
{
	ev_str("abc", 3, 3, false, 0, 0.0, 0);
	cr_expect(m("s < \"abd\""));
	cr_expect(m("s > \"abb\""));
	cr_expect(m("s > \"ab\""), "a prefix sorts first");
	cr_expect(m("s < \"abcd\""));
	cr_expect(m("s <= \"abc\""));
	cr_expect(m("s >= \"abc\""));
	ev_str("\xff", 1, 1, false, 0, 0.0, 0);
	cr_expect(m("s > \"a\""), "bytes compare unsigned");
}

Test(filter, truncated_strings)
{
	/* captured "hel" of a 5-byte string */
	ev_str("hel", 3, 5, false, 0, 0.0, 0);
	cr_expect(m("s == \"hello\""), "same length, captured prefix agrees");
	cr_expect(m("s == \"helps\""), "the unseen tail is assumed to agree");
	cr_expect(!m("s == \"hel\""), "true lengths differ");
	cr_expect(!m("s == \"help\""));
	cr_expect(!m("s == \"hex!!\""), "captured prefix differs");
	cr_expect(m("s != \"hel\""));
	cr_expect(m("s > \"hel\""), "longer true length sorts after");
}

/* ------------------------------------------------------------ fields */

Test(filter, builtin_fields)
{
	ev_add(1, 2, "x");
	rev.comm = "my-app";
	cr_expect(m("pid == 100"));
	cr_expect(m("tid == 101"));
	cr_expect(m("goid == 7"));
	cr_expect(m("comm == \"my-app\""));
	cr_expect(m("func == \"main.add\""));
	cr_expect(!m("func == \"main.sub\""));
	ev_str("", 0, 0, false, 0, 0.0, 0);
	cr_expect(m("func == \"main.(*T).str\""), "method names are plain strings");
}

Test(filter, argument_names)
{
	ev_add(5, 6, "bob");
	cr_expect(m("a == 5 && b == 6 && name == \"bob\""));
	cr_expect(m("a < b"));
	ev_str("bob", 3, 3, true, 0x10, 0.0, 0);
	cr_expect(m("s == \"bob\""));
	cr_expect(m("p == 0x10"));
}

Test(filter, missing_fields_make_comparisons_false)
{
	ev_add(5, 6, "bob");
	cr_expect(!m("goarg4 == 0"), "only 3 values");
	cr_expect(!m("goarg4 != 0"), "!= is false too");
	cr_expect(m("!(goarg4 == 0)"), "but its negation holds");
	cr_expect(!m("flag == true"), "a name of another probe");
	cr_expect(!m("flag != true"));
	cr_expect(m("flag == true || a == 5"));
	/* an event of the other probe, then back: per-probe resolution */
	ev_str("x", 1, 1, true, 0, 0.0, 0);
	cr_expect(m("flag == true"));
	cr_expect(!m("a == 5"));
}

Test(filter, unavailable_values_are_missing)
{
	ev_add(5, 6, "bob");
	ev.vals[0].kind = GTR_VAL_NONE;
	cr_expect(!m("a == 0"));
	cr_expect(!m("a != 0"));
	cr_expect(!m("goarg1 < 100"));
}

Test(filter, unknown_probe)
{
	ev_add(5, 6, "bob");
	rev.probe = NULL;
	cr_expect(m("goarg1 == 5"), "goargN needs no description");
	cr_expect(!m("a == 5"), "names do");
	cr_expect(!m("func == \"main.add\""));
	cr_expect(!m("func != \"main.add\""));
	cr_expect(m("pid == 100"));
}

Test(filter, mixed_types_at_run_time_are_false)
{
	/* goarg1 is a string in probe_str and an int in probe_add */
	ev_str("5", 1, 1, false, 0, 0.0, 0);
	cr_expect(!m("goarg1 == 5"));
	cr_expect(!m("goarg1 != 5"));
	ev_add(5, 0, "x");
	cr_expect(m("goarg1 == 5"));
}

Test(filter, floats)
{
	ev_str("", 0, 0, false, 0, 2.5, 0);
	cr_expect(m("f > 2"));
	cr_expect(m("f < 3"));
	cr_expect(!m("f == 2"));
	ev_str("", 0, 0, false, 0, 3.0, 0);
	cr_expect(m("f == 3"));
	ev_str("", 0, 0, false, 0, __builtin_nan(""), 0);
	cr_expect(!m("f == 0"));
	cr_expect(!m("f < 0"));
	cr_expect(m("f != 0"), "NaN is unequal to everything");
}

Test(filter, float_literals)
{
	ev_str("", 7, 0, false, 0, 2.25, 0);
	cr_expect(m("f == 2.25"));
	cr_expect(m("f > 2.2 && f < 2.3"));
	cr_expect(m("f >= 225e-2 && f <= .0225E2"), "exponents, a leading point");
	cr_expect(m("f in (1.5, 2.25)"));
	cr_expect(m("f > -1.5"));
	cr_expect(!m("f == 2"));
	ev_add(7, 0, "x");
	cr_expect(m("a == 7.0"), "an integer against a float: compared as numbers");
	cr_expect(m("a > 6.5") && !m("a > 7.5"));
	cr_expect(m("a in (7.0, 8)"));
	cr_expect(m("a < 1.5s") && !m("a < 1.5ns"), "1.5s is still a duration");
	ev_str("", 0, 0, false, 0, __builtin_nan(""), 0);
	cr_expect(!m("f == 2.5") && !m("f < 2.5") && m("f != 2.5"));
}

Test(filter, cache_follows_many_probes)
{
	/* more probe ids than the cache's first size, alternating */
	static struct gtr_probe ps[100];
	struct filter_error err;
	struct filter *f = filter_compile("x == 1 && goarg2 == 2", &err);

	cr_assert(f);
	for (int i = 0; i < 100; i++) {
		memset(&ps[i], 0, sizeof(ps[i]));
		ps[i].id = (uint32_t)i * 7919u;
		ps[i].func = "f";
		set_arg(&ps[i], 0, i % 2 ? "x" : "y", GTR_TYPE_INT, 8);
		set_arg(&ps[i], 1, "z", GTR_TYPE_INT, 8);
	}
	memset(&ev, 0, sizeof(ev));
	ev.nvals = 2;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = 1;
	ev.vals[1].kind = GTR_VAL_INT;
	ev.vals[1].v.i = 2;
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 100; i++) {
			rev.probe = &ps[i];
			ev.probe_id = ps[i].id;
			cr_expect_eq(filter_match(f, &rev), i % 2 == 1, "probe %d round %d", i, round);
		}
	filter_free(f);
}

/*
 * A conjunction of "argument OP integer" takes a flat path resolved once per
 * probe; "!!(...)" of the same conjunction takes the general evaluator. Over
 * events that switch probe, value kind and presence, both must agree.
 */
Test(filter, flat_conjunction_agrees_with_general_evaluation)
{
	static const char *const exprs[] = {
		"goarg1 == 5 && goarg2 >= 0",
		"goarg1 != 5 && goarg2 < 7",
		"goarg2 > -1 && goarg1 <= 5",
		"goarg1 >= 0",
		"f > 2 && goarg2 == 1",
		"goarg4 == 0 && goarg1 == 5",
		"goarg5 != 18446744073709551615",
		"goarg5 > 9223372036854775807",
	};
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		char general[256];
		struct filter_error err;

		snprintf(general, sizeof(general), "!!(%s)", exprs[i]);
		struct filter *flat = filter_compile(exprs[i], &err);
		struct filter *gen = filter_compile(general, &err);
		cr_assert(flat && gen, "%s", exprs[i]);
		for (int step = 0; step < 12; step++) {
			switch (step % 6) {
			case 0: ev_add(5, 6, "bob"); break;
			case 1: ev_add(4, -2, "x"); break;
			case 2: ev_str("5", 1, 1, true, 0, 2.5, UINT64_MAX); break;
			case 3: ev_str("", 0, 0, false, 3, 1.0, 1ull << 63); break;
			case 4: ev_add(5, 0, "y"); rev.probe = NULL; break;
			case 5: ev_add(5, 6, "z"); ev.vals[1].kind = GTR_VAL_NONE; break;
			}
			cr_expect_eq(filter_match(flat, &rev), filter_match(gen, &rev),
				     "'%s' at step %d", exprs[i], step);
		}
		filter_free(flat);
		filter_free(gen);
	}
	/* and the flat path gives the expected answers */
	ev_add(5, 6, "bob");
	cr_expect(m("goarg1 == 5 && goarg2 >= 0"));
	cr_expect(!m("goarg1 == 5 && goarg2 > 6"));
	ev_str("", 0, 0, false, 0, 0.0, UINT64_MAX);
	cr_expect(m("goarg5 > 9223372036854775807 && goarg2 == 0"));
}

/*
 * The flat form's integer comparisons at the edges of int64, with literals
 * inside it and above it (up to 2^64 - 1, the largest literal): it answers
 * as the general evaluator does.
 */
Test(filter, flat_comparisons_at_the_edges_of_int64)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	static const char *const lits[] = {
		"-9223372036854775808", "-9223372036854775807", "-1", "0", "1",
		"9223372036854775806", "9223372036854775807", "9223372036854775808",
		"18446744073709551615",
	};
	static const int64_t xs[] = { INT64_MIN, INT64_MIN + 1, -2, -1, 0, 1, 2,
				      INT64_MAX - 1, INT64_MAX };
	struct filter_error err;

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (size_t l = 0; l < sizeof(lits) / sizeof(lits[0]); l++) {
			char flat_expr[96], gen_expr[112];

			snprintf(flat_expr, sizeof(flat_expr), "goarg1 %s %s", ops[o], lits[l]);
			snprintf(gen_expr, sizeof(gen_expr), "!!(%s)", flat_expr);
			struct filter *flat = filter_compile(flat_expr, &err);
			struct filter *gen = filter_compile(gen_expr, &err);
			cr_assert(flat && gen, "%s: %s", flat_expr, err.msg);
			for (size_t k = 0; k < sizeof(xs) / sizeof(xs[0]); k++) {
				ev_add(xs[k], 0, "");
				cr_expect_eq(filter_match(flat, &rev), filter_match(gen, &rev),
					     "%s with goarg1 = %lld", flat_expr, (long long)xs[k]);
			}
			filter_free(flat);
			filter_free(gen);
		}
	}
	ev_add(INT64_MIN, 0, "");
	cr_expect(m("goarg1 < -9223372036854775807"));
	cr_expect(!m("goarg1 < -9223372036854775808"));
	cr_expect(m("goarg1 != 9223372036854775808"));
	cr_expect(!m("goarg1 == 18446744073709551615"));
}

/* ------------------------------------------------------------ errors */

Test(filter, error_columns_and_messages)
{
	bad("goarg1 == ", 10, "expected a value after '=='");
	bad("goarg1 ==", 10, "expected a value after '=='");
	bad("goarg1 == )", 11, "expected a value after '==', found ')'");
	bad("", 1, "empty expression");
	bad("   ", 1, "empty expression");
	bad("goarg1", 7, "expected a comparison operator");
	bad("goarg1 42", 8, "expected a comparison operator");
	bad("goarg1 = 42", 8, "did you mean '=='");
	bad("goarg1 == 1 & goarg2 == 2", 13, "did you mean '&&'");
	bad("goarg1 == 1 | goarg2 == 2", 13, "did you mean '||'");
	bad("goarg1 == 1 goarg2 == 2", 13, "expected '&&', '||' or end of expression");
	bad("goarg1 == 1)", 12, "unmatched ')'");
	bad("(goarg1 == 1", 13, "expected ')' to close the '(' of column 1");
	bad("goarg1 == 1 &&", 15, "expected a field, a literal, '!' or '(' after '&&'");
	bad("!", 2, "after '!'");
	bad("()", 2, "after '(', found ')'");
	bad("goarg1 == 1 @", 13, "unexpected character '@'");
	bad("goarg1 == 'a'", 11, "double quotes");
	bad("goarg1 == - 5", 11, "negative integer");
	bad("name ~ \"a*\"", 6, "did you mean '=~' (regular expression) or glob(");
	bad("~r0x == 1", 1, "(an unnamed result is ~rN, or goretN counting from 1)");
	bad("~r == 1", 1, "an unnamed result is ~rN");
}

Test(filter, error_literals)
{
	bad("goarg1 == 18446744073709551616", 11, "out of range");
	bad("goarg1 == 0x10000000000000000", 11, "out of range");
	bad("goarg1 == -9223372036854775809", 11, "out of range");
	bad("goarg1 == 0x", 13, "hex digits");
	bad("goarg1 == 0xg", 13, "hex digits");
	bad("goarg1 == 12ab", 13, "in integer literal");
	bad("goarg1 == 012", 11, "leading zero");
	bad("goarg1 == 2.5x", 11, "a unit");
	bad("goarg1 == 2.2.2", 14, "'.2'");
	bad("goarg1 == 1.5 == 2", 15, "'=='");
	bad("comm == 2.5", 6, "with a number");
	bad("comm == \"abc", 9, "unterminated string");
	bad("comm == \"abc\\", 9, "unterminated string");
	bad("comm == \"a\\qb\"", 11, "unknown escape '\\q'");
	bad("comm == \"a\\x4\"", 11, "two hex digits");
	bad("comm == \"a\\xzz\"", 11, "two hex digits");
}

Test(filter, error_fields_and_types)
{
	bad("goarg0 == 1", 1, "goarg1 to goarg32");
	bad("goarg33 == 1", 1, "goarg1 to goarg32");
	bad("comm == 1", 6, "cannot compare 'comm' (a string) with an integer");
	bad("pid == \"x\"", 5, "cannot compare 'pid' (an integer) with a string");
	bad("1 == func", 3, "cannot compare an integer with 'func' (a string)");
	bad("\"a\" < 1", 5, "cannot compare a string with an integer");
	bad("goid == true && tid == \"1\"", 21, "cannot compare 'tid'");
}

Test(filter, error_nesting_is_bounded)
{
	char expr[4096];
	size_t n = 0;

	for (int i = 0; i < 1000; i++)
		expr[n++] = '(';
	strcpy(expr + n, "pid == 1");
	bad(expr, 201, "nested too deeply");
	memset(expr, '!', 1000);
	strcpy(expr + 1000, "pid == 1");
	bad(expr, 201, "nested too deeply");
}

Test(filter, long_chains_do_not_recurse)
{
	/* 5000 comparisons joined by || compile and evaluate without deep
	 * recursion */
	const size_t n = 5000;
	char *expr = malloc(n * 16 + 1);
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(expr + len, "%spid == %zu", i ? " || " : "", i + 1000);
	ev_add(0, 0, "x");
	ev.pid = 5999;
	cr_expect(m(expr));
	ev.pid = 6000;
	cr_expect(!m(expr));
	free(expr);
}

Test(filter, check_against_probes)
{
	const struct gtr_probe *both[] = { &probe_add, &probe_str };
	const struct gtr_probe *add[] = { &probe_add };
	struct filter_error err;
	struct filter *f;
	char *warn = NULL;
	size_t wlen = 0;
	FILE *w;

	/* name is a string in main.add, the only probe having it */
	f = filter_compile("name == 5", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, both, 2, NULL, &err), -1);
	cr_expect_eq(err.column, 6);
	cr_expect(strstr(err.msg, "cannot compare 'name' (a string in main.add) with an integer"), "%s", err.msg);
	filter_free(f);

	/* goarg1: int in main.add, string in main.(*T).str: fine */
	f = filter_compile("goarg1 == 5", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, both, 2, NULL, &err), 0);
	cr_expect_eq(filter_check(f, add, 1, NULL, &err), 0);
	filter_free(f);

	f = filter_compile("s == 5", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, both, 2, NULL, &err), -1);
	cr_expect_eq(filter_check(f, add, 1, NULL, &err), 0, "no probe has s");
	filter_free(f);

	f = filter_compile("a == \"x\"", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, both, 2, NULL, &err), -1);
	filter_free(f);

	/* unknown names: warnings, not errors */
	w = open_memstream(&warn, &wlen);
	f = filter_compile("nmae == \"x\" || goarg9 == 1 || a == 1", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, both, 2, w, &err), 0);
	fclose(w);
	cr_expect(strstr(warn, "an argument or result named 'nmae'"), "%s", warn);
	cr_expect(strstr(warn, "goarg9"), "%s", warn);
	cr_expect(!strstr(warn, "'a'"), "%s", warn);
	free(warn);
	filter_free(f);

	/* no probes known yet: nothing to check */
	f = filter_compile("name == 5", &err);
	cr_assert(f);
	cr_expect_eq(filter_check(f, NULL, 0, NULL, &err), 0);
	filter_free(f);
}

Test(filter, error_print_layout)
{
	struct filter_error err;
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	const char *expr = "goarg1 == ";

	cr_assert_null(filter_compile(expr, &err));
	filter_error_print(o, "gotrace-report: ", expr, &err);
	fclose(o);
	cr_expect_str_eq(out,
			 "gotrace-report: bad filter: expected a value after '==' at column 10\n"
			 "  goarg1 == \n"
			 "           ^\n");
	free(out);

	/* the caret counts characters, not UTF-8 bytes */
	out = NULL;
	o = open_memstream(&out, &len);
	expr = "comm == \"é\" @";
	cr_assert_null(filter_compile(expr, &err));
	cr_expect_eq(err.column, 14);
	filter_error_print(o, "", expr, &err);
	fclose(o);
	cr_expect_str_eq(out,
			 "bad filter: unexpected character '@' at column 14\n"
			 "  comm == \"é\" @\n"
			 "              ^\n");
	free(out);

	/* and a wide character takes two columns on a terminal */
	out = NULL;
	o = open_memstream(&out, &len);
	expr = "comm == \"日本\" @";
	cr_assert_null(filter_compile(expr, &err));
	filter_error_print(o, "", expr, &err);
	fclose(o);
	cr_expect_str_eq(out,
			 "bad filter: unexpected character '@' at column 18\n"
			 "  comm == \"日本\" @\n"
			 "                 ^\n");
	free(out);
}

Test(filter, expr_is_kept)
{
	struct filter_error err;
	struct filter *f = filter_compile("pid == 1", &err);

	cr_assert(f);
	cr_expect_str_eq(filter_expr(f), "pid == 1");
	filter_free(f);
	filter_free(NULL);
}
