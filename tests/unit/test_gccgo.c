/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/gccgo.c: Go names find gccgo's functions (GCC 12's
 * mangling, gcc/go/gofrontend/names.cc) in Debian's libgo.so.21 and in a
 * program gccgo builds here (examples/functions, with and without -s), and
 * a function that is not there says why, naming GCC's clones of it and no
 * clone of another function its name begins. Run from the repository root (or
 * set GOTRACE_SRC to it); needs gccgo (make deps).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gobin.h"

#define LIBGO "/usr/lib/x86_64-linux-gnu/libgo.so.21"

static char dir[] = "/tmp/gotrace-test-gccgo.XXXXXX";

/* Builds examples/functions with gccgo into dir: "functions" and, with
 * `strip`, "functions_s"; returns the path. */
static const char *build(bool strip)
{
	static char out[2][256];
	const char *src = getenv("GOTRACE_SRC");
	char cmd[1024];

	snprintf(out[strip], sizeof(out[strip]), "%s/functions%s", dir,
		 strip ? "_s" : "");
	if (access(out[strip], X_OK) == 0)
		return out[strip];
	snprintf(cmd, sizeof(cmd), "gccgo -g -O1 %s -o %s %s/examples/functions/main.go",
		 strip ? "-s" : "", out[strip], src ? src : ".");
	cr_assert_eq(system(cmd), 0, "%s failed (make deps installs gccgo)", cmd);
	return out[strip];
}

static struct gobin *open_or_fail(const char *path)
{
	char err[512];
	struct gobin *b = gobin_open(path, err, sizeof(err));

	cr_assert(b, "%s: %s", path, err);
	cr_assert_eq(gobin_compiler(b), GOBIN_GCCGO, "%s is not gccgo's", path);
	return b;
}

static void setup(void)
{
	cr_assert(mkdtemp(dir), "mkdtemp");
}

static void teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_gccgo: cannot remove %s\n", dir);
}

TestSuite(gccgo, .init = setup, .fini = teardown);

/* The name a Go name finds, or NULL. */
static const char *found(const struct gobin *b, const char *name)
{
	struct gobin_func f;

	return gobin_func_find_all(b, name, &f, 1) == 1 ? f.name : NULL;
}

Test(gccgo, go_names_find_libgo_functions)
{
	static const char *const pairs[][2] = {
		{ "net/http.serverHandler.ServeHTTP", "net_1http.serverHandler.ServeHTTP" },
		{ "net/http.(*conn).serve", "net_1http.conn.serve" },
		{ "syscall.Flock_t..eq", "syscall.Flock__t..eq" },
		{ "golang.org/x/crypto/chacha20.(*Cipher).XORKeyStream",
		  "golang_0org_1x_1crypto_1chacha20.Cipher.XORKeyStream" },
		/* gccgo's own spelling finds itself */
		{ "net_1http.conn.serve", "net_1http.conn.serve" },
	};
	struct gobin *b;

	if (access(LIBGO, R_OK) != 0)
		cr_assert_fail(LIBGO " missing (make deps installs gccgo)");
	b = open_or_fail(LIBGO);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *got = found(b, pairs[i][0]);

		cr_assert(got && !strcmp(got, pairs[i][1]), "%s: %s, not %s",
			  pairs[i][0], got ? got : "(none)", pairs[i][1]);
	}
	cr_assert_null(found(b, "net/http.noSuchFunction"));
	gobin_close(b);
}

Test(gccgo, methods_closures_and_why_not)
{
	struct gobin *b = open_or_fail(build(false));
	char why[512];

	cr_assert_str_eq(found(b, "main.(*T).M"), "main.T.M");
	cr_assert_str_eq(found(b, "main.T.Value"), "main.T.Value");
	cr_assert_str_eq(found(b, "main.add"), "main.add");
	/* a glob's '*' is not a pointer receiver's: no spelling of main.add */
	cr_assert_null(found(b, "main.add*"));
	cr_assert_null(found(b, "main.(*T).M*"));
	/* the standard library is libgo's: said with libgo's path */
	cr_assert_null(found(b, "fmt.Println"));
	cr_assert_gt(gobin_func_missing_why(b, "fmt.Println", why, sizeof(why)), 0);
	cr_assert(strstr(why, "a gccgo program calls the standard library in libgo.so.") &&
		  strstr(why, "'" LIBGO ":fmt.Println'"), "%s", why);
	/* a main function that is not there: nothing to add */
	cr_assert_eq(gobin_func_missing_why(b, "main.nothere", why, sizeof(why)), 0);
	gobin_close(b);
}

Test(gccgo, stripped_program_keeps_dynamic_symbols)
{
	struct gobin *b = open_or_fail(build(true));
	char why[512];

	cr_assert(gobin_is_stripped(b));
	cr_assert_str_eq(found(b, "main.main"), "main.main");
	cr_assert_null(found(b, "main.add"));
	cr_assert_gt(gobin_func_missing_why(b, "main.add", why, sizeof(why)), 0);
	cr_assert_str_eq(why, "a stripped gccgo program: only its dynamic symbols "
			 "are functions here (gccgo writes no .gopclntab); build it "
			 "without -s to probe the others");
	cr_assert_str_eq(gobin_note(b), why);
	gobin_close(b);
}

/* A program whose mix keeps its name while GCC clones its closure
 * (main.mix..func1.constprop.0), and clones add (main.add.constprop.0). */
static const char clones_src[] =
	"package main\n"
	"import (\"fmt\"; \"os\")\n"
	"var sink []string\n"
	"//go:noinline\n"
	"func add(a, b int) int { return a*len(os.Args) + b }\n"
	"//go:noinline\n"
	"func mix(n int) int {\n"
	"\tf := func(s string, k int) int {\n"
	"\t\tfor i := 0; i < k; i++ {\n"
	"\t\t\tsink = append(sink, fmt.Sprintf(\"%s-%d-%d\", s, i, k))\n"
	"\t\t\tif len(sink) > 100 { sink = sink[:0]; fmt.Println(s, k, i) }\n"
	"\t\t}\n"
	"\t\treturn len(sink)\n"
	"\t}\n"
	"\treturn f(os.Args[0], 3) + f(\"x\", 3) + n\n"
	"}\n"
	"func main() { fmt.Println(mix(len(os.Args)), add(42, 3), add(42, 3)) }\n";

Test(gccgo, clones_named_are_of_the_function_not_of_its_closures)
{
	char src[256], exe[256], cmd[1024], why[512];
	struct gobin *b;
	struct gobin_func f;
	FILE *fp;

	snprintf(src, sizeof(src), "%s/clones.go", dir);
	snprintf(exe, sizeof(exe), "%s/clones", dir);
	fp = fopen(src, "w");
	cr_assert(fp && fputs(clones_src, fp) >= 0 && !fclose(fp), "cannot write %s", src);
	snprintf(cmd, sizeof(cmd), "gccgo -g -O2 -o %s %s", exe, src);
	cr_assert_eq(system(cmd), 0, "%s failed (make deps installs gccgo)", cmd);
	b = open_or_fail(exe);
	/* what GCC made of it, as the test needs it */
	cr_assert_str_eq(found(b, "main.mix"), "main.mix");
	cr_assert_null(found(b, "main.add"));
	cr_assert_eq(gobin_func_find_all(b, "main.add.constprop.0", &f, 1), 1);
	cr_assert_eq(gobin_func_find_all(b, "main.mix..func1.constprop.0", &f, 1), 1,
		     "GCC did not clone mix's closure");
	cr_assert(gobin_func_gcc_clone(b, &f));
	/* mix's closure's clone is not one of mix */
	cr_assert_eq(gobin_func_missing_why(b, "main.mix", why, sizeof(why)), 0, "%s", why);
	cr_assert_gt(gobin_func_missing_why(b, "main.add", why, sizeof(why)), 0);
	cr_assert(strstr(why, "GCC kept only a copy of it with other parameters") &&
		  strstr(why, ": main.add.constprop.0; probe it by name"), "%s", why);
	gobin_close(b);
}
