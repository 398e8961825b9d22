/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record-time predicates (record/pred.c): lang/'s tree of a
 * filter lowered to BPF comparisons. Accepted forms, constants at their
 * limits, every refusal with its exact message and column, syntax errors
 * word for word as gotrace-report -f gives them (report/filter.h), and
 * the lowered comparisons, run as the BPF program runs them, agree with
 * the filter evaluated at report time.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "pred.h"
#include "probe.h"

/*
 * The values a predicate may name, in fetch order: goargN is value N - 1
 * (goretN and retval, goret1, likewise at a return probe); the names below
 * are values 0 to 11.
 */
static const char *const names[] = {
	"n", "m", "s", "b", "ok", "p", "f", "u", "x", "i", "sl", "w",
};
static const enum gtr_type types[] = {
	GTR_TYPE_INT, GTR_TYPE_INT, GTR_TYPE_STRING, GTR_TYPE_BYTES, GTR_TYPE_BOOL,
	GTR_TYPE_PTR, GTR_TYPE_FLOAT, GTR_TYPE_UINT, GTR_TYPE_OTHER, GTR_TYPE_IFACE,
	GTR_TYPE_SLICE, GTR_TYPE_WORD,
};
#define NTYPES ((int)(sizeof(types) / sizeof(types[0])))

/* What resolve() was asked, in order, joined by spaces. */
static char asked[512];
/* Whether resolve() plays a return probe (goretN) or an entry (goargN). */
static bool at_return;

/* As record/values.c resolves: pred.h's pred_resolve_fn. */
static int resolve(void *ctx, const char *name)
{
	int *calls = ctx;

	(*calls)++;
	snprintf(asked + strlen(asked), sizeof(asked) - strlen(asked), "%s%s",
		 asked[0] ? " " : "", name);
	if (!strncmp(name, at_return ? "goret" : "goarg", 5) &&
	    name[5] >= '1' && name[5] <= '9') {
		const int n = atoi(name + 5);
		return n <= NTYPES ? n - 1 : -ERANGE;
	}
	for (int i = 0; i < NTYPES; i++)
		if (!strcmp(names[i], name))
			return i;
	return -ENOENT;
}

static struct gt_pred preds[GT_MAX_PRED + 2];
static char err[1024];

/* Compiles `text` (must succeed) into preds[]; returns how many. */
static int compile(const char *text)
{
	int calls = 0, n;

	memset(preds, 0xa5, sizeof(preds));
	asked[0] = '\0';
	n = pred_compile(text, resolve, &calls, types, NTYPES, preds, GT_MAX_PRED,
			 err, sizeof(err));
	cr_assert_gt(n, 0, "'%s' refused: %s", text, err);
	cr_expect_eq(calls, n, "'%s': %d look-ups for %d comparisons", text, calls, n);
	cr_expect_eq(preds[n].slot, 0xa5, "'%s': written past the last", text);
	return n;
}

static void expect_pred(int i, int slot, int op, int is_signed, uint64_t value,
			const char *text)
{
	cr_expect_eq(preds[i].slot, slot, "'%s' [%d]: slot %d", text, i, preds[i].slot);
	cr_expect_eq(preds[i].op, op, "'%s' [%d]: op %d", text, i, preds[i].op);
	cr_expect_eq(preds[i].is_signed, is_signed, "'%s' [%d]: is_signed %d", text,
		     i, preds[i].is_signed);
	cr_expect_eq(preds[i].value, value, "'%s' [%d]: value %#llx, expected %#llx",
		     text, i, (unsigned long long)preds[i].value,
		     (unsigned long long)value);
	cr_expect_eq(memcmp(preds[i].pad, "\0\0\0\0\0", 5), 0);
}

/* One comparison `text`, which must compile to exactly this. */
static void one(const char *text, int slot, int op, int is_signed, uint64_t value)
{
	cr_expect_eq(compile(text), 1, "'%s'", text);
	expect_pred(0, slot, op, is_signed, value, text);
}

/* `text` must be refused with exactly `want`. */
static void refused_as(const char *text, const char *want)
{
	int calls = 0;

	err[0] = '\0';
	cr_assert_eq(pred_compile(text, resolve, &calls, types, NTYPES, preds,
				  GT_MAX_PRED, err, sizeof(err)), -EINVAL,
		     "'%s' was accepted", text);
	cr_expect_str_eq(err, want);
}

/* A filter BPF cannot run: refused with "WHAT at column COLUMN" and the
 * pointer to report-time filtering. */
static void refused(const char *text, int column, const char *what)
{
	char want[1024];

	snprintf(want, sizeof(want), "record-time predicate '%s': %s at column %d; "
		 "in BPF gotrace compares captured integers (or len() of strings) "
		 "with constants, joined by &&; record without it and filter with "
		 "gotrace-report -f '%s'", text, what, column, text);
	refused_as(text, want);
}

/* Not a filter at all: refused with the filter's own message and column. */
static void not_a_filter(const char *text, int column, const char *what)
{
	char want[1024];
	struct filter_error ferr;
	struct filter *f = filter_compile(text, &ferr);

	cr_assert_null(f, "gotrace-report -f accepts '%s'", text);
	cr_expect_str_eq(ferr.msg, what, "'%s': the filter says '%s'", text, ferr.msg);
	cr_expect_eq(ferr.column, (unsigned)column, "'%s': the filter says column %u",
		     text, ferr.column);
	snprintf(want, sizeof(want), "record-time predicate '%s': %s at column %d "
		 "(predicates are written as filters of gotrace-report -f, "
		 "spec/FILTER.md)", text, what, column);
	refused_as(text, want);
}

/* ------------------------------------------------------------ accepted */

Test(pred, operators_and_operands)
{
	one("goarg1 == 42", 0, GT_EQ, 1, 42);
	one("n != 42", 0, GT_NE, 1, 42);
	one("m < 7", 1, GT_LT, 1, 7);
	one("goarg2 <= 7", 1, GT_LE, 1, 7);
	one("u > 7", 7, GT_GT, 0, 7);
	one("goarg8>=7", 7, GT_GE, 0, 7);
	one("len(s) > 3", 2, GT_GT, 0, 3);
	one("len( b ) == 0", 3, GT_EQ, 0, 0);
	one("len(sl) >= 2", 10, GT_GE, 0, 2);
	one("ok == true", 4, GT_EQ, 0, 1);
	one("ok != false", 4, GT_NE, 0, 0);
	one("p != 0", 5, GT_NE, 0, 0);
	one("w == 0xff", 11, GT_EQ, 0, 255);
	one("  n==1  ", 0, GT_EQ, 1, 1);
	one("(n == 1)", 0, GT_EQ, 1, 1);
	one("((((n == 1))))", 0, GT_EQ, 1, 1);
}

Test(pred, values_are_resolved_by_the_names_a_recorder_knows)
{
	at_return = true;
	one("retval == 3", 0, GT_EQ, 1, 3);
	cr_expect_str_eq(asked, "goret1");
	one("goret2 < 0", 1, GT_LT, 1, 0);
	cr_expect_str_eq(asked, "goret2");
	at_return = false;
	one("len(goarg3) > 1", 2, GT_GT, 0, 1);
	cr_expect_str_eq(asked, "goarg3");
	cr_expect_eq(compile("n == 1 && len(s) < 9 && ok == true"), 3);
	cr_expect_str_eq(asked, "n s ok");
}

Test(pred, constant_first_flips_the_operator)
{
	one("42 == n", 0, GT_EQ, 1, 42);
	one("42 != n", 0, GT_NE, 1, 42);
	one("42 < n", 0, GT_GT, 1, 42);
	one("42 <= n", 0, GT_GE, 1, 42);
	one("42 > n", 0, GT_LT, 1, 42);
	one("42 >= n", 0, GT_LE, 1, 42);
	one("1 <= len(s)", 2, GT_GE, 0, 1);
	one("true == ok", 4, GT_EQ, 0, 1);
	one("-5 < n", 0, GT_GT, 1, (uint64_t)-5);
}

Test(pred, integer_constants_as_the_filter_reads_them)
{
	one("n == 0", 0, GT_EQ, 1, 0);
	one("n == -0", 0, GT_EQ, 1, 0);
	one("n == -1", 0, GT_EQ, 1, UINT64_MAX);
	one("n == 0x2a", 0, GT_EQ, 1, 42);
	one("n == 0X2A", 0, GT_EQ, 1, 42);
	one("n == -0x10", 0, GT_EQ, 1, (uint64_t)-16);
	one("u == 0x0", 7, GT_EQ, 0, 0);
	one("u == 0x007", 7, GT_EQ, 0, 7);       /* hex digits may lead with 0 */
	/* durations are integers of nanoseconds (a time.Duration) */
	one("n < 10ms", 0, GT_LT, 1, 10000000);
	one("n >= 1h30m", 0, GT_GE, 1, 5400000000000ull);
	one("n > -1.5s", 0, GT_GT, 1, (uint64_t)-1500000000);
	one("u == 3ns", 7, GT_EQ, 0, 3);
}

Test(pred, constants_at_the_limits)
{
	one("n == 9223372036854775807", 0, GT_EQ, 1, INT64_MAX);
	one("n == -9223372036854775808", 0, GT_EQ, 1, (uint64_t)INT64_MIN);
	one("n == -0x8000000000000000", 0, GT_EQ, 1, (uint64_t)INT64_MIN);
	one("n <= 0x7fffffffffffffff", 0, GT_LE, 1, INT64_MAX);
	one("-9223372036854775808 < n", 0, GT_GT, 1, (uint64_t)INT64_MIN);
	one("u == 18446744073709551615", 7, GT_EQ, 0, UINT64_MAX);
	one("u == 0xffffffffffffffff", 7, GT_EQ, 0, UINT64_MAX);
	one("18446744073709551615 > u", 7, GT_LT, 0, UINT64_MAX);
	one("len(s) < 18446744073709551615", 2, GT_LT, 0, UINT64_MAX);
	/* beyond the value's own range the filter's answer never changes
	 * (an int64 is never 2^63): refused, not wrapped into 64 bits */
	refused("n == 9223372036854775808", 6, "constant outside the values of 'n' "
		"(-9223372036854775808..9223372036854775807)");
	refused("18446744073709551615 != goarg1", 1, "constant outside the values of "
		"'goarg1' (-9223372036854775808..9223372036854775807)");
	refused("u == -1", 6, "constant outside the values of 'u' (0..18446744073709551615)");
	refused("len(s) > -9223372036854775808", 10, "constant outside the values of "
		"'len(s)' (0..18446744073709551615)");
	refused("ok != -1", 7, "constant outside the values of 'ok' (0..18446744073709551615)");
	/* past 64 bits the filter refuses the literal itself */
	not_a_filter("goarg1 == -9223372036854775809", 11,
		     "integer literal out of range (-9223372036854775808..18446744073709551615)");
	not_a_filter("n == 18446744073709551616", 6,
		     "integer literal out of range (-9223372036854775808..18446744073709551615)");
	not_a_filter("n == 99999999999999999999999", 6,
		     "integer literal out of range (-9223372036854775808..18446744073709551615)");
	not_a_filter("n == 0x10000000000000000", 6,
		     "integer literal out of range (-9223372036854775808..18446744073709551615)");
	not_a_filter("n == -0x8000000000000001", 6,
		     "integer literal out of range (-9223372036854775808..18446744073709551615)");
	not_a_filter("-9223372036854775809 < n", 1,
		     "integer literal out of range (-9223372036854775808..18446744073709551615)");
}

Test(pred, joined_by_and)
{
	const char *t = "goarg2 >= 100 && goarg1 == 42";

	cr_assert_eq(compile(t), 2);
	expect_pred(0, 1, GT_GE, 1, 100, t);
	expect_pred(1, 0, GT_EQ, 1, 42, t);
	t = "n==1&&m!=2&&len(s)>3&&u<=4";
	cr_assert_eq(compile(t), 4);
	expect_pred(0, 0, GT_EQ, 1, 1, t);
	expect_pred(1, 1, GT_NE, 1, 2, t);
	expect_pred(2, 2, GT_GT, 0, 3, t);
	expect_pred(3, 7, GT_LE, 0, 4, t);
	/* parentheses group && with &&: the same conjunction, in order */
	t = "(n == 1 && (2 > m)) && (u == 3 && (ok == true))";
	cr_assert_eq(compile(t), 4);
	expect_pred(0, 0, GT_EQ, 1, 1, t);
	expect_pred(1, 1, GT_LT, 1, 2, t);
	expect_pred(2, 7, GT_EQ, 0, 3, t);
	expect_pred(3, 4, GT_EQ, 0, 1, t);
}

Test(pred, at_most_four_and_at_most_max)
{
	int calls = 0;

	refused("n == 1 && n == 2 && n == 3 && n == 4 && n == 5", 41,
		"too many comparisons (at most 4)");
	refused("n == 1 && (n == 2 && (n == 3 && (n == 4 && 5 == n)))", 44,
		"too many comparisons (at most 4)");
	/* a caller's max below GT_MAX_PRED is honoured, one above is capped */
	memset(preds, 0xa5, sizeof(preds));
	cr_expect_eq(pred_compile("n == 1 && n == 2", resolve, &calls, types, NTYPES,
				  preds, 1, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "too many comparisons (at most 1) at column 11"), "%s", err);
	cr_expect_eq(preds[1].slot, 0xa5, "wrote past max");
	cr_expect_eq(pred_compile("n == 1 && n == 2 && n == 3 && n == 4 && n == 5",
				  resolve, &calls, types, NTYPES, preds, GT_MAX_PRED + 2,
				  err, sizeof(err)), -EINVAL);
	cr_expect_eq(pred_compile("n == 1 && n == 2 && n == 3 && n == 4",
				  resolve, &calls, types, NTYPES, preds, GT_MAX_PRED + 2,
				  err, sizeof(err)), 4);
}

/* ------------------------------------------------------------ refused */

Test(pred, octal_and_malformed_constants_are_not_filters)
{
	/* spec/FILTER.md: no leading zeros (010 is neither 10 nor octal 8) */
	not_a_filter("goarg1 == 010", 11,
		     "integer literal with a leading zero (write decimal without it, or hex as 0x...)");
	not_a_filter("n == 00", 6,
		     "integer literal with a leading zero (write decimal without it, or hex as 0x...)");
	not_a_filter("n == -01", 7,
		     "integer literal with a leading zero (write decimal without it, or hex as 0x...)");
	not_a_filter("010 == n", 1,
		     "integer literal with a leading zero (write decimal without it, or hex as 0x...)");
	not_a_filter("n == 12ab", 8, "unexpected 'a' in integer literal");
	not_a_filter("n == 1_000", 7, "unexpected '_' in integer literal");
	not_a_filter("n == 0x", 8, "expected hex digits after '0x'");
	not_a_filter("n == 0xg", 8, "expected hex digits after '0x'");
	not_a_filter("n == 0x1g", 9, "unexpected 'g' in integer literal");
	not_a_filter("n == 10xs", 8, "unexpected 'x' in integer literal");
	not_a_filter("n == - 1", 6, "unexpected '-': a negative integer is written "
		     "with the sign against its digits, e.g. -5");
}

Test(pred, the_probe_text_reaches_the_compiler_as_written)
{
	struct probe_spec sp;

	/* "(goarg1 == 010)" after a function: refused, not compared with 8 */
	cr_assert_eq(probe_spec_parse("main.add (goarg1 == 010)", &sp, err, sizeof(err)),
		     0, "%s", err);
	not_a_filter(sp.predicate, 11,
		     "integer literal with a leading zero (write decimal without it, or hex as 0x...)");
	probe_spec_free(&sp);
}

Test(pred, syntax_errors_read_as_the_filter_says_them)
{
	not_a_filter("", 1, "empty expression: expected a field, a literal, '!' or '('");
	not_a_filter("== 1", 1, "expected a field, a literal, '!' or '(', found '=='");
	not_a_filter("n", 2, "expected a comparison operator (== != < <= > >= in =~ !~) "
		     "after 'n'");
	not_a_filter("n = 1", 3, "unexpected '=', did you mean '=='?");
	not_a_filter("n + 1 == 2", 3, "unexpected character '+'");
	not_a_filter("n == 1 & m == 2", 8, "unexpected '&', did you mean '&&'?");
	not_a_filter("n == 1 &&", 10, "expected a field, a literal, '!' or '(' after '&&'");
	not_a_filter("n ==", 5, "expected a value after '=='");
	not_a_filter("(n == 1", 8, "expected ')' to close the '(' of column 1");
	not_a_filter("len(s > 1", 7, "expected ')' to close len( after 's', found '>'");
	not_a_filter("goarg0 == 1", 1, "no such field 'goarg0': goargN runs from goarg1 "
		     "to goarg32");
	not_a_filter("n == \"x", 6, "unterminated string literal");
	not_a_filter("s =~ 1", 6, "expected a regular expression in double quotes "
		     "after '=~', found '1'");
	not_a_filter("ts > 12:00:03 && n == 1 1", 25, "expected '&&', '||' or end of "
		     "expression, found '1'");
}

Test(pred, what_bpf_cannot_do_is_refused_with_a_hint)
{
	refused("n == 1 || m == 2", 8, "'||' is evaluated at report time");
	refused("n == 1 && (m == 2 || u == 3)", 19, "'||' is evaluated at report time");
	refused("!(n == 1)", 1, "'!' is evaluated at report time");
	refused("n in (1, 2)", 3, "'in' is evaluated at report time");
	refused("s =~ \"^a\"", 3, "regular expressions are matched at report time");
	refused("s !~ \"(\"", 3, "regular expressions are matched at report time");
	refused("contains(s, \"x\")", 1, "strings are compared at report time");
	refused("s == \"x\"", 6, "strings are compared at report time");
	refused("\"x\" != s", 1, "strings are compared at report time");
	refused("n > 2.5", 5, "floats are compared at report time");
	refused("1e3 <= goarg1", 1, "floats are compared at report time");
	/* a string compared with an integer: neither BPF nor the report's
	 * filter compares that; its length, or its text */
	refused_as("b < 1", "record-time predicate 'b < 1': 'b' is a string, compared "
		   "with an integer at column 1; compare its length, which BPF does: "
		   "'len(b) < 1', or record without the predicate and compare its text "
		   "with gotrace-report -f 'b == \"...\"'");
	refused_as("n > 0 && 2 < s", "record-time predicate 'n > 0 && 2 < s': 's' is a "
		   "string, compared with an integer at column 14; compare its length, "
		   "which BPF does: 'n > 0 && 2 < len(s)', or record without the "
		   "predicate and compare its text with gotrace-report -f 's == \"...\"'");
	compile("n > 0 && 2 < len(s)");
	struct filter_error ferr;
	struct filter *f = filter_compile("s == \"...\"", &ferr);
	cr_expect(f, "the report's filter refuses the text comparison suggested");
	filter_free(f);
	refused("ts >= 12:00:03", 1, "'ts' is not a captured value but the event's, "
		"known at report time (a parameter of that name is goargN)");
	refused("pid == 1", 1, "'pid' is not a captured value but the event's, known "
		"at report time (a parameter of that name is goargN)");
	refused("7 < len(comm)", 5, "'len(comm)' is not a captured value but the "
		"event's, known at report time (a parameter of that name is goargN)");
	refused("n == latency", 6, "'latency' is not a captured value but the event's, "
		"known at report time (a parameter of that name is goargN)");
	refused("1 == 2", 1, "expected a captured value, not two constants");
	refused("n == m", 6, "expected an integer constant, not another captured value");
	refused("n == truex", 6, "expected an integer constant, not another captured value");
	refused("len(n) > 1", 1, "len() takes a string, []byte or slice (an array's length is in its type)");
	refused("len(f) > 1", 1, "len() takes a string, []byte or slice (an array's length is in its type)");
	refused("len(i) > 1", 1, "an interface's type name is compared at report time");
	refused("i == 0", 1, "an interface's type name is compared at report time");
	refused("sl == 1", 1, "a slice is compared by its length: write len() of it");
	refused("f > 1", 1, "this value is not captured as an integer");
	refused("x == 1", 1, "this value is not captured as an integer");
	refused("n == 1 && nope == 1", 11, "unknown value 'nope'");
	refused("len(nope) == 1", 1, "unknown value 'nope'");
	refused("goarg13 == 1", 1, "unknown value 'goarg13'");
	refused("goarg1 == 1 && cap(sl) > 2", 16, "unknown value 'cap(sl)'");
	refused("goret1 == 1", 1, "unknown value 'goret1' (results are captured by "
		"return probes, r:FUNCTION)");
	refused("retval != 0", 1, "unknown value 'retval' (results are captured by "
		"return probes, r:FUNCTION)");
	at_return = true;
	refused("len(goarg3) == 0", 1, "unknown value 'goarg3' (a return probe captures "
		"results, goretN; its entry's arguments are compared at report time)");
	refused("goret13 == 1", 1, "unknown value 'goret13'");
}

/* ------------------------------------------------------------ one meaning */

/* preds_hold() of bpf/gotrace.bpf.c on 64-bit slots. */
static bool bpf_holds(const struct gt_pred *p, int n, const uint64_t *slots)
{
	for (int k = 0; k < n; k++) {
		const uint64_t v = slots[p[k].slot], c = p[k].value;
		const bool s = p[k].is_signed;
		bool r;

		switch (p[k].op) {
		case GT_EQ: r = v == c; break;
		case GT_NE: r = v != c; break;
		case GT_LT: r = s ? (int64_t)v < (int64_t)c : v < c; break;
		case GT_LE: r = s ? (int64_t)v <= (int64_t)c : v <= c; break;
		case GT_GT: r = s ? (int64_t)v > (int64_t)c : v > c; break;
		default: r = s ? (int64_t)v >= (int64_t)c : v >= c; break;
		}
		if (!r)
			return false;
	}
	return true;
}

/*
 * Every predicate, lowered and run on the slots BPF would hold, keeps the
 * events the filter keeps at report time, for values at the edges.
 */
Test(pred, bpf_keeps_what_the_filter_keeps)
{
	static const char *const texts[] = {
		"n == -1", "n < 0", "-1 >= n", "n > -9223372036854775808",
		"n <= 9223372036854775807", "9223372036854775807 == n",
		"u == 18446744073709551615", "u > 9223372036854775807",
		"0x8000000000000000 <= u", "u < 1", "ok == true", "false == ok",
		"len(s) == 5", "len(s) > 4 && n != 0", "3 < len(s) && u >= 1",
		"n >= -5 && n < 5 && u != 0 && ok != false", "n < 10ms",
	};
	static const int64_t ns[] = { INT64_MIN, -5, -1, 0, 4, 9999999, INT64_MAX };
	static const uint64_t us[] = { 0, 1, (uint64_t)INT64_MAX + 1, UINT64_MAX };
	static const uint8_t str[] = "hello";
	struct gtr_probe probe = {
		.id = 1, .kind = GTR_KIND_ENTRY, .func = "main.f", .spec = "main.f",
		.fmt = "", .nargs = 5, .args_source = "DWARF",
	};
	const char *anames[5] = { "n", "m", "s", "b", "ok" };
	struct gtr_event ev = { .probe_id = 1, .kind = GTR_KIND_ENTRY, .nvals = 8 };
	struct report_event re = { .ev = &ev, .probe = &probe, .comm = "" };
	struct filter_error ferr;
	uint64_t slots[GT_MAX_FETCH] = { 0 };
	int kept = 0, dropped = 0;

	for (int k = 0; k < 5; k++) {
		probe.args[k].name = anames[k];
		probe.args[k].type_name = "";
		probe.args[k].type = types[k];
	}
	probe.nargs = 8;   /* u is value 7 */
	for (int k = 5; k < 8; k++) {
		probe.args[k].name = names[k];
		probe.args[k].type_name = "";
		probe.args[k].type = k == 7 ? GTR_TYPE_UINT : GTR_TYPE_WORD;
	}
	ev.vals[1].kind = GTR_VAL_INT;
	ev.vals[2].kind = GTR_VAL_STR;
	ev.vals[2].v.s.data = str;
	ev.vals[2].v.s.len = ev.vals[2].v.s.full_len = 5;
	ev.vals[3].kind = ev.vals[5].kind = ev.vals[6].kind = GTR_VAL_UINT;
	ev.vals[4].kind = GTR_VAL_BOOL;
	ev.vals[7].kind = GTR_VAL_UINT;
	slots[2] = 5;
	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
		const int n = compile(texts[t]);
		struct filter *f = filter_compile(texts[t], &ferr);

		cr_assert_not_null(f, "'%s': %s", texts[t], ferr.msg);
		for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
			for (size_t b = 0; b < sizeof(us) / sizeof(us[0]); b++)
				for (int ok = 0; ok < 2; ok++) {
					ev.vals[0].kind = GTR_VAL_INT;
					ev.vals[0].v.i = ns[a];
					ev.vals[7].v.u = us[b];
					ev.vals[4].v.b = ok;
					slots[0] = (uint64_t)ns[a];
					slots[7] = us[b];
					slots[4] = (uint64_t)ok;
					const bool want = filter_match(f, &re);
					cr_expect_eq(bpf_holds(preds, n, slots), want,
						     "'%s' with n=%lld u=%llu ok=%d: the "
						     "filter says %d", texts[t], (long long)ns[a],
						     (unsigned long long)us[b], ok, want);
					kept += want;
					dropped += !want;
				}
		filter_free(f);
	}
	cr_expect_gt(kept, 100);
	cr_expect_gt(dropped, 100);
}
