/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the filter language (report/filter.h, spec/FILTER.md) on
 * synthetic events: every operator and precedence level, literal forms,
 * fields present and missing, string semantics, error messages and columns.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"

/* ------------------------------------------------------------ fixtures */

/* main.add(a int, b int, name string); probe id 1 */
static struct gtr_probe probe_add;
/* main.str(s string, flag bool, p *T, f float64, w word); probe id 2 */
static struct gtr_probe probe_str;
static struct gtr_event ev;
static struct report_event rev;

static void set_arg(struct gtr_probe *p, uint32_t i, const char *name,
		    enum gtr_type t, uint32_t size)
{
	p->args[i].name = name;
	p->args[i].type_name = "";
	p->args[i].type = t;
	p->args[i].size = size;
	if (p->nargs <= i)
		p->nargs = i + 1;
}

static void setup(void)
{
	memset(&probe_add, 0, sizeof(probe_add));
	probe_add.id = 1;
	probe_add.func = "main.add";
	probe_add.fmt = "";
	set_arg(&probe_add, 0, "a", GTR_TYPE_INT, 8);
	set_arg(&probe_add, 1, "b", GTR_TYPE_INT, 8);
	set_arg(&probe_add, 2, "name", GTR_TYPE_STRING, 16);

	memset(&probe_str, 0, sizeof(probe_str));
	probe_str.id = 2;
	probe_str.func = "main.(*T).str";
	probe_str.fmt = "";
	set_arg(&probe_str, 0, "s", GTR_TYPE_STRING, 16);
	set_arg(&probe_str, 1, "flag", GTR_TYPE_BOOL, 1);
	set_arg(&probe_str, 2, "p", GTR_TYPE_PTR, 8);
	set_arg(&probe_str, 3, "f", GTR_TYPE_FLOAT, 8);
	set_arg(&probe_str, 4, "", GTR_TYPE_WORD, 8);

	memset(&ev, 0, sizeof(ev));
	rev.ev = &ev;
	rev.probe = NULL;
	rev.comm = "app";
}

static void ev_add(int64_t a, int64_t b, const char *name)
{
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 1;
	ev.pid = 100;
	ev.tid = 101;
	ev.goid = 7;
	ev.nvals = 3;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = a;
	ev.vals[1].kind = GTR_VAL_INT;
	ev.vals[1].v.i = b;
	ev.vals[2].kind = GTR_VAL_STR;
	ev.vals[2].v.s.data = (const uint8_t *)name;
	ev.vals[2].v.s.len = (uint32_t)strlen(name);
	ev.vals[2].v.s.full_len = strlen(name);
	rev.probe = &probe_add;
	rev.comm = "app";
}

static void ev_str(const char *s, size_t len, uint64_t full_len, bool flag,
		   uint64_t p, double f, uint64_t w)
{
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 2;
	ev.pid = 200;
	ev.tid = 202;
	ev.goid = 9;
	ev.nvals = 5;
	ev.vals[0].kind = GTR_VAL_STR;
	ev.vals[0].v.s.data = (const uint8_t *)s;
	ev.vals[0].v.s.len = (uint32_t)len;
	ev.vals[0].v.s.full_len = full_len;
	ev.vals[1].kind = GTR_VAL_BOOL;
	ev.vals[1].v.b = flag;
	ev.vals[2].kind = GTR_VAL_UINT;
	ev.vals[2].v.u = p;
	ev.vals[3].kind = GTR_VAL_UINT;
	memcpy(&ev.vals[3].v.u, &f, sizeof(f));
	ev.vals[4].kind = GTR_VAL_UINT;
	ev.vals[4].v.u = w;
	rev.probe = &probe_str;
	rev.comm = "worker";
}

/* Compiles `expr` (must succeed) and evaluates it on the current event. */
static bool m(const char *expr)
{
	struct filter_error err;
	struct filter *f = filter_compile(expr, &err);

	cr_assert(f, "filter '%s' rejected: %s at column %u", expr, err.msg, err.column);
	const bool r = filter_match(f, &rev);
	filter_free(f);
	return r;
}

/* Compiles `expr`, which must fail at `column` with a message containing
 * `needle`. */
static void bad(const char *expr, unsigned column, const char *needle)
{
	struct filter_error err;
	struct filter *f = filter_compile(expr, &err);

	cr_assert_null(f, "filter '%s' was accepted", expr);
	cr_expect_eq(err.column, column, "'%s': column %u, expected %u (%s)", expr,
		     err.column, column, err.msg);
	cr_expect(strstr(err.msg, needle), "'%s': message '%s' lacks '%s'", expr,
		  err.msg, needle);
}

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

/* ------------------------------------------------------------ version 2 */

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

Test(filter, error_messages_v2)
{
	bad("goret0 == 1", 1, "goret1 to goret32");
	bad("goret33 == 1", 1, "goret1 to goret32");
	bad("kind == \"retrun\"", 9, "kind is \"entry\" or \"return\"");
	bad("ts == 12:61", 7, "malformed time of day");
	bad("ts == 2024-13-01T00:00:00Z", 7, "malformed time");
	bad("ts == 2024-05-01T00:00:00", 7, "RFC 3339");
	bad("pid == 12:00:00", 8, "a time compares only with 'ts'");
	bad("goarg1 == 1.5", 11, "expected a unit");
	bad("goarg1 == 10mss", 15, "in duration");
	bad("goarg1 == 1h30", 11, "expected a unit");
	bad("goarg1 == 99999999999h", 11, "duration out of range");
	bad("goarg1 in 1", 11, "expected '(' after 'in'");
	bad("goarg1 in ()", 12, "expected an integer or string literal");
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
