/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/debuginfo.c: separate debug files found by
 * .gnu_debuglink and by GNU build id, given explicitly, and refused when
 * they belong to another architecture or build (fixtures:
 * gobin_fixture.h).
 */
#include "gobin_fixture.h"


/* ------------------------------------------------------------ debug files */

static void expect_same_args(struct gobin *x, struct gobin *y, const char *fn)
{
	struct gobin_arg a[16], b[16];
	struct gobin_func f, g;
	int n;

	cr_assert_eq(gobin_func_find(x, fn, &f), 0);
	cr_assert_eq(gobin_func_find(y, fn, &g), 0);
	n = gobin_func_args(x, &f, a, 16);
	cr_assert_gt(n, 0, "%s: %d", fn, n);
	cr_assert_eq(gobin_func_args(y, &g, b, 16), n);
	for (int i = 0; i < n; i++) {
		cr_expect_str_eq(a[i].name, b[i].name);
		cr_expect_str_eq(a[i].type_name, b[i].type_name);
		expect_same_pieces(fn, &a[i], &b[i]);
	}
}

Test(gobin, debuginfo_by_debuglink)
{
	struct gobin *full = open_fixture("args");
	struct gobin *b = open_fixture("args_dl");
	char want[1024];

	cr_expect(gobin_has_dwarf(b));
	snprintf(want, sizeof(want), "%s", fix("args.debug"));
	cr_expect_str_eq(gobin_debuginfo_path(b), want);
	expect_same_args(full, b, "main.spillstr");
	expect_same_args(full, b, "main.(*T).M");
	cr_expect_eq(gobin_goid_offset(b), 152);
	gobin_close(b);
	gobin_close(full);
}

Test(gobin, debuginfo_by_build_id)
{
	char root[1024];
	struct gobin *b;

	snprintf(root, sizeof(root), "%s/dbgroot", fixdir());
	gobin_set_debug_root(root);
	b = open_fixture("args_bid_stripped");
	gobin_set_debug_root(NULL);
	cr_expect_str_eq(gobin_build_id(b), "0123456789abcdef0123");
	cr_expect(gobin_has_dwarf(b));
	cr_expect(strstr(gobin_debuginfo_path(b),
			 "/dbgroot/.build-id/01/23456789abcdef0123.debug"),
		  "%s", gobin_debuginfo_path(b));
	gobin_close(b);
	/* without the root the same binary has no DWARF */
	b = open_fixture("args_bid_stripped");
	cr_expect_not(gobin_has_dwarf(b));
	cr_expect_str_eq(gobin_debuginfo_path(b), "");
	gobin_close(b);
}

Test(gobin, debuginfo_explicit_and_checked)
{
	struct gobin *full = open_fixture("args");
	struct gobin *b = open_fixture("args_s");
	char err[512], path[1024];

	cr_expect_not(gobin_has_dwarf(b));
	/* the debug file of another architecture, of no DWARF, of another build */
	cr_expect_eq(gobin_open_debuginfo(b, fix("args_386.debug"), err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "args_386.debug") && strstr(err, "another architecture"),
		  "%s", err);
	cr_expect_eq(gobin_open_debuginfo(b, fix("args_pie"), err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "no DWARF"), "%s", err);
	cr_expect_eq(gobin_open_debuginfo(b, fix("nonexistent.debug"), err,
					  sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "nonexistent.debug"), "%s", err);
	cr_expect_not(gobin_has_dwarf(b));
	gobin_close(b);

	/* The linker writes a GNU build id by default from Go 1.24, made
	 * from the Go build id (src/cmd/link/internal/ld/main.go: -B is
	 * "gobuildid" when a Go build id is given): args.debug then has one
	 * and the GNU ids disagree first; before, only the Go ids can. */
	b = open_fixture("args_bid_stripped");
	cr_expect_eq(gobin_open_debuginfo(b, fix("args.debug"), err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "another build") &&
		  strstr(err, toolchain_minor() >= 24 ? "GNU build id" : "Go build id"),
		  "%s", err);
	gobin_close(b);
	/* without a GNU build id in the binary, by Go's, in every version */
	b = open_fixture("args_s_nognu");
	cr_expect_str_eq(gobin_build_id(b), "");
	cr_expect_eq(gobin_open_debuginfo(b, fix("args.debug"), err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "another build") && strstr(err, "Go build id"), "%s", err);
	/* both Go build ids whole (four parts, 83 characters from Go 1.10) */
	cr_expect(strlen(gobin_go_build_id(b)) > 64, "%s", gobin_go_build_id(b));
	cr_expect(strstr(err, gobin_go_build_id(b)), "%s", err);
	cr_expect(strstr(err, gobin_go_build_id(full)), "%s", err);
	gobin_close(b);

	/* args_nodbg is args without DWARF and without a debug link */
	b = open_fixture("args_nodbg");
	cr_expect_not(gobin_has_dwarf(b));
	cr_assert_eq(gobin_open_debuginfo(b, fix("args.debug"), err, sizeof(err)), 0,
		     "%s", err);
	snprintf(path, sizeof(path), "%s", fix("args.debug"));
	cr_expect_str_eq(gobin_debuginfo_path(b), path);
	expect_same_args(full, b, "main.stackmix");
	gobin_close(b);
	gobin_close(full);
}
