/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the probe-spec parser (record/probe.c): every form of
 * spec/PROBES.md, and refusals with their exact message and column. The
 * record-time predicates inside a probe are tested in test_pred.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* ------------------------------------------------------------ probes */

static struct probe_spec sp;
static char err[1024];

static void free_spec(void)
{
	probe_spec_free(&sp);
}

TestSuite(probe, .fini = free_spec);

/* What a probe must parse into; unset strings must be NULL. */
struct want {
	const char *text;
	enum gtr_kind kind;
	const char *binary, *func, *sig, *predicate, *fmt;
	int captures;
	const char *exprs[8];
};

/* A probe and all it parses into: kind, binary, function, signature,
 * predicate, format, whether FUNCTION(EXPR, ...) captures, expressions. */
#define W(text, kind, bin, func, sig, pred, fmt, caps, ...) \
	{ text, kind, bin, func, sig, pred, fmt, caps, { __VA_ARGS__ } }

static void expect_str(const char *what, const char *got, const char *want,
		       const char *text)
{
	if (!want)
		cr_expect_null(got, "'%s': %s is '%s', expected none", text, what, got);
	else if (!got)
		cr_expect(0, "'%s': %s is missing, expected '%s'", text, what, want);
	else
		cr_expect_str_eq(got, want, "'%s': %s is '%s', expected '%s'", text,
				 what, got, want);
}

static void check(const struct want *w)
{
	int i, n = 0;

	cr_assert_eq(probe_spec_parse(w->text, &sp, err, sizeof(err)), 0,
		     "'%s' refused: %s", w->text, err);
	expect_str("text", sp.text, w->text, w->text);
	cr_expect_eq(sp.kind, w->kind, "'%s': kind %d", w->text, sp.kind);
	expect_str("binary", sp.binary, w->binary, w->text);
	expect_str("func", sp.func, w->func, w->text);
	expect_str("signature", sp.sig, w->sig, w->text);
	expect_str("predicate", sp.predicate, w->predicate, w->text);
	expect_str("format", sp.fmt, w->fmt, w->text);
	cr_expect_eq(sp.captures, w->captures, "'%s': captures %d", w->text,
		     sp.captures);
	while (n < 8 && w->exprs[n])
		n++;
	cr_expect_eq(sp.nexprs, n, "'%s': %d expressions, expected %d", w->text,
		     sp.nexprs, n);
	for (i = 0; i < n && i < sp.nexprs; i++)
		expect_str("expression", sp.exprs[i], w->exprs[i], w->text);
	probe_spec_free(&sp);
}

/* `text` must be refused with "WHAT at column COLUMN", leaving nothing. */
static void bad(const char *text, size_t column, const char *what)
{
	char want[1024];

	snprintf(want, sizeof(want), "bad probe '%s': %s at column %zu", text,
		 what, column);
	err[0] = '\0';
	cr_assert_eq(probe_spec_parse(text, &sp, err, sizeof(err)), -EINVAL,
		     "'%s' was accepted", text);
	cr_expect_str_eq(err, want);
	cr_expect(!sp.text && !sp.binary && !sp.func && !sp.sig && !sp.predicate &&
		  !sp.fmt && !sp.nexprs, "'%s': a refused probe keeps nothing", text);
}

#define E GTR_KIND_ENTRY
#define R GTR_KIND_RETURN

#define N NULL

static void check_all(const struct want *ws, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check(&ws[i]);
}

Test(probe, kinds_and_binaries)
{
	static const struct want ws[] = {
		W("main.add", E, N, "main.add", N, N, N, 0),
		W("p:main.add", E, N, "main.add", N, N, N, 0),
		W("r:main.add", R, N, "main.add", N, N, N, 0),
		W("  main.add  ", E, N, "main.add", N, N, N, 0),
		W("./functions:main.add", E, "./functions", "main.add", N, N, N, 0),
		W("r:./functions:main.add", R, "./functions", "main.add", N, N, N, 0),
		W("/usr/bin/caddy:net/http.(*conn).serve", E, "/usr/bin/caddy",
		  "net/http.(*conn).serve", N, N, N, 0),
		/* the last ':' outside brackets ends the binary */
		W("/opt/a:b/app:main.add", E, "/opt/a:b/app", "main.add", N, N, N, 0),
		W("p:/srv/app:main.Map[a:b]", E, "/srv/app", "main.Map[a:b]", N, N, N, 0),
	};

	check_all(ws, sizeof(ws) / sizeof(ws[0]));
}

Test(probe, go_names_as_they_are)
{
	static const char *const funcs[] = {
		"main.(*T).M", "main.T.M", "main.T.M-fm", "net/http.(*response).*",
		"main.Map[...]", "main.Map[go.shape.int]", "main.Pair[...].Swap",
		"main.(*List[...]).Push", "main.main.func1", "main.(*T).M.func2.1",
		"main.glob.func1", "github.com/a/b/v2.(*Server).Serve", "main.f?",
	};

	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		const struct want w = W(funcs[i], E, N, funcs[i], N, N, N, 0);

		check(&w);
	}
}

Test(probe, signatures)
{
	static const struct want ws[] = {
		W("main.greet(s string, n int)", E, N, "main.greet", "s string, n int",
		  N, N, 0),
		W("main.f()", E, N, "main.f", "", N, N, 0),
		W("main.f( )", E, N, "main.f", "", N, N, 0),
		W("net/http.(*response).WriteHeader(code int)", E, N,
		  "net/http.(*response).WriteHeader", "code int", N, N, 0),
		W("main.(*T).M(recv *main.T, k int8)", E, N, "main.(*T).M",
		  "recv *main.T, k int8", N, N, 0),
		W("main.f(cb func(int) (int, error), n int)", E, N, "main.f",
		  "cb func(int) (int, error), n int", N, N, 0),
		W("main.Map[...](xs []int, f func(int) int)", E, N, "main.Map[...]",
		  "xs []int, f func(int) int", N, N, 0),
		W("main.g(p struct{ a, b int }, m map[string]int)", E, N, "main.g",
		  "p struct{ a, b int }, m map[string]int", N, N, 0),
		W("r:./app:main.h(s string) \"%s\" s", R, "./app", "main.h", "s string",
		  N, "%s", 0, "s"),
	};

	check_all(ws, sizeof(ws) / sizeof(ws[0]));
}

/* A signature's results: parenthesised or one type; a group holding an
 * operator is the predicate. */
Test(probe, signature_results)
{
	static const struct {
		const char *text, *sig, *results, *predicate, *fmt;
	} ws[] = {
		{ "r:main.f(a int) (n int, err error)", "a int", "n int, err error", N, N },
		{ "r:main.f(a int) (int, error) \"%d\" retval", "a int", "int, error", N, "%d" },
		{ "r:main.f(a int) error", "a int", "error", N, N },
		{ "r:main.f(a int) map[string]int", "a int", "map[string]int", N, N },
		{ "r:main.f(a int) (n int) (n > 3)", "a int", "n int", "n > 3", N },
		{ "main.f(a int) (a == 3)", "a int", N, "a == 3", N },
		{ "main.f(a int) \"%d\" a", "a int", N, N, "%d" },
		{ "main.f(a, b) (a == 3)", N, N, "a == 3", N },
	};

	for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		cr_assert_eq(probe_spec_parse(ws[i].text, &sp, err, sizeof(err)), 0,
			     "'%s' refused: %s", ws[i].text, err);
		expect_str("signature", sp.sig, ws[i].sig, ws[i].text);
		expect_str("results", sp.results, ws[i].results, ws[i].text);
		expect_str("predicate", sp.predicate, ws[i].predicate, ws[i].text);
		expect_str("format", sp.fmt, ws[i].fmt, ws[i].text);
		probe_spec_free(&sp);
	}
}

Test(probe, capture_lists)
{
	static const struct want ws[] = {
		W("net/http.serverHandler.ServeHTTP(req.Method, req.URL.Path)", E, N,
		  "net/http.serverHandler.ServeHTTP", N, N, N, 1,
		  "req.Method", "req.URL.Path"),
		W("main.add(goarg1)", E, N, "main.add", N, N, N, 1, "goarg1"),
		W("main.takePoint(k, $ptr(p, 16))", E, N, "main.takePoint", N, N, N, 1,
		  "k", "$ptr(p, 16)"),
		W("main.(*T).M( recv.n ,k )", E, N, "main.(*T).M", N, N, N, 1,
		  "recv.n", "k"),
		W("r:main.div(goret1, goret2)", R, N, "main.div", N, N, N, 1,
		  "goret1", "goret2"),
		W("main.Map[...](goarg1)", E, N, "main.Map[...]", N, N, N, 1, "goarg1"),
	};

	check_all(ws, sizeof(ws) / sizeof(ws[0]));
}

Test(probe, predicates)
{
	static const struct want ws[] = {
		W("main.add (goarg2 >= 100 && goarg1 == 42)", E, N, "main.add", N,
		  "goarg2 >= 100 && goarg1 == 42", N, 0),
		W("main.greet (len(s) > 3)", E, N, "main.greet", N, "len(s) > 3", N, 0),
		W("main.add ( goarg1 == 010 )", E, N, "main.add", N, "goarg1 == 010", N, 0),
		W("main.greet(s string, n int) (n > 3) \"%s\" s", E, N, "main.greet",
		  "s string, n int", "n > 3", "%s", 0, "s"),
		W("net/http.serverHandler.ServeHTTP(req.Method) (goarg1 != 0)", E, N,
		  "net/http.serverHandler.ServeHTTP", N, "goarg1 != 0", N, 1,
		  "req.Method"),
		W("r:main.add (retval > 5) \"%d\" retval", R, N, "main.add", N,
		  "retval > 5", "%d", 0, "retval"),
	};

	check_all(ws, sizeof(ws) / sizeof(ws[0]));
}

Test(probe, formats_and_expressions)
{
	static const struct want ws[] = {
		W("./functions:main.add \"%d %d\" goarg1, goarg2", E, "./functions",
		  "main.add", N, N, "%d %d", 0, "goarg1", "goarg2"),
		W("r:main.add \"%d\" retval", R, N, "main.add", N, N, "%d", 0, "retval"),
		W("main.add \"%d %d\", goarg1,goarg2", E, N, "main.add", N, N, "%d %d", 0,
		  "goarg1", "goarg2"),
		W("main.greet \"%s (%d)\" s, n", E, N, "main.greet", N, N, "%s (%d)", 0,
		  "s", "n"),
		W("main.takePoint \"%d\" k, $ptr(p, 16)", E, N, "main.takePoint", N, N,
		  "%d", 0, "k", "$ptr(p, 16)"),
		W("main.takePoint \"%d %s\" p.X, p.Name", E, N, "main.takePoint", N, N,
		  "%d %s", 0, "p.X", "p.Name"),
		W("main.add \"hello\"", E, N, "main.add", N, N, "hello", 0),
		W("main.add \"\"", E, N, "main.add", N, N, "", 0),
		W("main.f \"a\\n\\t\\r\\\"q\\\" \\\\ \\x\"", E, N, "main.f", N, N,
		  "a\n\t\r\"q\" \\ x", 0),
		W("main.f \"(%d)\" goarg1", E, N, "main.f", N, N, "(%d)", 0, "goarg1"),
	};

	check_all(ws, sizeof(ws) / sizeof(ws[0]));
}

Test(probe, nul_escape_ends_the_format)
{
	cr_assert_eq(probe_spec_parse("main.f \"a\\0b\" n", &sp, err, sizeof(err)), 0,
		     "%s", err);
	/* the bytes are kept, but the format is a C string: it ends at \0 */
	cr_expect_eq(memcmp(sp.fmt, "a\0b", 4), 0);
	cr_expect_str_eq(sp.fmt, "a");
	cr_expect_eq(sp.nexprs, 1);
}

Test(probe, thirty_two_expressions_at_most)
{
	char text[512], caps[512];
	size_t n = 0, c = 0;
	int i;

	n += (size_t)snprintf(text, sizeof(text), "main.f \"\"");
	c += (size_t)snprintf(caps, sizeof(caps), "main.f(");
	for (i = 1; i <= GTR_MAX_ARGS; i++) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s a%d", i > 1 ? "," : "", i);
		c += (size_t)snprintf(caps + c, sizeof(caps) - c, "%sa%d", i > 1 ? "," : "", i);
	}
	snprintf(caps + c, sizeof(caps) - c, ")");
	cr_assert_eq(probe_spec_parse(text, &sp, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sp.nexprs, GTR_MAX_ARGS);
	cr_expect_str_eq(sp.exprs[GTR_MAX_ARGS - 1], "a32");
	probe_spec_free(&sp);
	cr_assert_eq(probe_spec_parse(caps, &sp, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sp.nexprs, GTR_MAX_ARGS);
	cr_expect_eq(sp.captures, 1);
	probe_spec_free(&sp);

	/* a 33rd is refused where it stands */
	snprintf(text + n, sizeof(text) - n, ", a33");
	bad(text, n + 3, "too many expressions (at most 32)");
	snprintf(caps + c, sizeof(caps) - c, ",a33)");
	bad(caps, c + 2, "too many expressions (at most 32)");
}

Test(probe, refusals_name_what_and_where)
{
	bad("", 1, "expected a function name");
	bad("   ", 4, "expected a function name");
	bad("p:", 3, "expected a function name");
	bad("r: \"%d\" retval", 3, "expected a function name");
	bad("\"%d\" goarg1", 1, "expected a function name");
	bad(":main.add", 1, "empty binary before ':'");
	bad("p::main.add", 3, "empty binary before ':'");
	bad("./app:", 7, "expected a function name after ':'");
	bad("./app: \"%d\" n", 7, "expected a function name after ':'");
	bad("main.add)", 9, "unbalanced ')'");
	bad("main.Map]", 9, "unbalanced ']'");
	bad("main.(*T)).M", 10, "unbalanced ')'");
	bad("main.add(x", 11, "unclosed '(' or '[' in the function name");
	bad("main.Map[...", 13, "unclosed '(' or '[' in the function name");
	bad("main.add (goarg1 == 1", 10, "unclosed '(' of the predicate");
	bad("main.add ((goarg1 == 1)", 10, "unclosed '(' of the predicate");
	bad("main.add \"%d", 10, "unterminated format string");
	bad("main.add \"%d\\\"", 10, "unterminated format string");
	bad("main.add (n > 1) \"%d", 18, "unterminated format string");
	bad("main.add goarg1", 10, "expressions need a format string before them");
	bad("main.add (goarg1 == 1) goarg1, goarg2", 24,
	    "expressions need a format string before them");
	bad("main.f(a) b", 11, "expressions need a format string before them");
	bad("main.f(a) \"%d\" b", 11,
	    "give either FUNCTION(EXPR, ...) or a format string with expressions, not both");
	bad("main.f(a) (a > 1) \"x\"", 19,
	    "give either FUNCTION(EXPR, ...) or a format string with expressions, not both");
	bad("main.add \"%d\" a,, b", 17, "empty expression");
	bad("main.add \"%d\",, a", 15, "empty expression");
	bad("main.add \"%d\" a, , b", 18, "empty expression");
}

#define VERBS "(the verbs are %d %i %u %x %X %o %c %p %s %v %f %F %e %E %g %G %a %A, " \
	"and %% for a percent sign) in the format string"

/* Format strings are checked as the report applies them: every verb of
 * spec/PROBES.md with flags, width, precision and length; anything else
 * at a '%' is refused at its column, as is a conversion left without an
 * expression and a ',' that no expression follows. */
Test(probe, format_conversions_are_checked)
{
	static const struct want ws[] = {
		W("main.f \"%-08.3lld %+x %#o %% %5s %.2f %hhu %c %p %v %e %G %a %A %X %i %F %E %g\" "
		  "a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r", E, N, "main.f", N, N,
		  "%-08.3lld %+x %#o %% %5s %.2f %hhu %c %p %v %e %G %a %A %X %i %F %E %g",
		  0, "a", "b", "c", "d", "e", "f", "g", "h"),
		W("main.f \"%d\" , a", E, N, "main.f", N, N, "%d", 0, "a"),
		W("main.f \"%d\", a, b", E, N, "main.f", N, N, "%d", 0, "a", "b"),
		W("main.f \"100%%\"", E, N, "main.f", N, N, "100%%", 0),
		W("main.f \"\\%d\" a", E, N, "main.f", N, N, "%d", 0, "a"),
		W("main.f \"%d\\0 %d\" a", E, N, "main.f", N, N, "%d", 0, "a"),
	};

	/* the first has 18 expressions; check() compares the first 8 */
	cr_assert_eq(probe_spec_parse(ws[0].text, &sp, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sp.nexprs, 18);
	probe_spec_free(&sp);
	check_all(ws + 1, sizeof(ws) / sizeof(ws[0]) - 1);

	bad("main.f \"%q %d\" a, b", 9, "'%q' is no conversion gotrace knows " VERBS);
	bad("main.f \"x %*d\" a", 11, "'%*' is no conversion gotrace knows " VERBS);
	bad("main.f \"%d %\" a", 12, "'%' is no conversion gotrace knows " VERBS);
	bad("main.f \"%5l\" a", 9, "'%5l' is no conversion gotrace knows " VERBS);
	bad("main.f \"%5000d\" a", 9, "a width or precision over 4096 in the format string");
	/* control characters: refused up front, echoed escaped */
	err[0] = '\0';
	cr_expect_eq(probe_spec_parse("main.add\x01", &sp, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "bad probe 'main.add\\x01': a control character (byte 0x01): "
			 "a probe is text (in a string constant write it \\x01) at column 9");
	cr_expect(!sp.text && !sp.func);
	cr_expect_eq(probe_spec_parse("main.a\x1b[2Jdd", &sp, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "'main.a\\x1b[2Jdd'") && !strchr(err, 0x1b), "%s", err);
	cr_expect_eq(probe_spec_parse("main.greet\t(n > 1)", &sp, err, sizeof(err)), 0, "%s", err);
	probe_spec_free(&sp);
	bad("main.f \"%.99999f\" a", 9, "a width or precision over 4096 in the format string");
	bad("main.f \"%d %d\" goarg1", 12, "the format string has 2 conversions but 1 "
	    "expression follows it: this one has no value; give one expression per "
	    "conversion");
	bad("main.f \"%d\"", 9, "the format string has 1 conversion but 0 expressions "
	    "follow it: this one has no value; give one expression per conversion");
	bad("main.f \"%d\" a,", 14, "no expression follows this ','; drop it");
	bad("main.f \"%d\" a, b ,", 18, "no expression follows this ','; drop it");
	bad("main.f \"x\",", 11, "no expression follows this ','; drop it");
	bad("main.f \"x\" ,", 12, "no expression follows this ','; drop it");
}

/* A long probe is echoed cut, with its length, and the reason stays whole;
 * a format string longer than a trace file keeps is refused, not cut. */
Test(probe, long_probes_are_echoed_cut_with_the_reason_whole)
{
	static char text[12000], fmt[1200], want[1024];

	memcpy(text, "main.add (", 10);
	memset(text + 10, '(', 10000);
	strcpy(text + 10010, "goarg1 == 1");
	cr_assert_eq(probe_spec_parse(text, &sp, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "bad probe '%.260s...' (%zu bytes): unclosed '(' of the "
		 "predicate at column 10", text, strlen(text));
	cr_expect_str_eq(err, want);
	probe_spec_free(&sp);

	memset(fmt, 'x', 1100);
	snprintf(text, sizeof(text), "main.add \"%.1100s\" goarg1", fmt);
	cr_assert_eq(probe_spec_parse(text, &sp, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "bad probe '%.260s...' (%zu bytes): format string of 1100 "
		 "bytes, longer than the 1024 a trace file keeps at column 10", text, strlen(text));
	cr_expect_str_eq(err, want);
	probe_spec_free(&sp);

	snprintf(text, sizeof(text), "main.add \"%.1024s\" goarg1", fmt);
	cr_expect_eq(probe_spec_parse(text, &sp, err, sizeof(err)), 0, "%s", err);
}

/* FILE:LINE: a BINARY part ending in ".go" and a number are a source
 * line, with or without a binary before them; what a line cannot take is
 * refused with its column. */
Test(probe, source_lines)
{
	cr_assert_eq(probe_spec_parse("main.go:42", &sp, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(sp.binary);
	cr_assert_str_eq(sp.file, "main.go");
	cr_assert_eq(sp.line, 42);
	probe_spec_free(&sp);
	cr_assert_eq(probe_spec_parse("./srv:cmd/srv/main.go:7(i, sum)", &sp, err,
				      sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(sp.binary, "./srv");
	cr_assert_str_eq(sp.file, "cmd/srv/main.go");
	cr_assert_eq(sp.line, 7);
	cr_assert_eq(sp.nexprs, 2);
	cr_assert_str_eq(sp.exprs[1], "sum");
	probe_spec_free(&sp);
	/* a function of a binary named like a file stays a function */
	cr_assert_eq(probe_spec_parse("./x.go:main.f", &sp, err, sizeof(err)), 0);
	cr_assert_null(sp.file);
	cr_assert_str_eq(sp.func, "main.f");
	probe_spec_free(&sp);
	cr_assert_eq(probe_spec_parse("r:main.go:3", &sp, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "a source line has no return"), "%s", err);
	cr_assert_eq(probe_spec_parse("main.go:0", &sp, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "a line number from 1") && strstr(err, "column 9"), "%s", err);
}

Test(probe, a_filter_given_as_a_probe_says_what_f_is)
{
	/* gotrace-record -f 'goarg1 == 42': -f is --force, the filter a probe */
	static const char *const filters[] = { "goarg1 == 42", "latency > 10ms",
					       "len(s) >= 3", "n != 1 && m == 2" };

	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		char want[1024];

		snprintf(want, sizeof(want), "'%s' is a filter, not a probe: gotrace-record's -f "
			 "is --force (overwrite the output file); to keep only some events while "
			 "recording, put a predicate in parentheses after the function, "
			 "'FUNCTION (%s)' (spec/PROBES.md), or filter the recording with "
			 "gotrace-report -f '%s'", filters[i], filters[i], filters[i]);
		cr_assert_eq(probe_spec_parse(filters[i], &sp, err, sizeof(err)), -EINVAL);
		cr_expect_str_eq(err, want);
	}
	/* probes with predicates, and other mistakes, as before */
	cr_assert_eq(probe_spec_parse("main.add (goarg1 == 42)", &sp, err, sizeof(err)), 0);
	probe_spec_free(&sp);
	bad("main.add ==", 10, "expressions need a format string before them");
}
