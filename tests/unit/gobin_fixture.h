/* SPDX-License-Identifier: MIT */
/*
 * What the tests of record/gobin share (test_gobin_funcs.c,
 * test_gobin_locations.c, test_gobin_sig.c, test_gobin_debuginfo.c,
 * test_gobin_list.c): the Go fixtures of tests/fixtures/gobin (args.go,
 * plus generic.go for gc), built with the installed toolchains (go for
 * amd64, 386 and arm64, stripped, PIE, externally linked; gccgo) into a
 * temporary directory once per test program (ReportHook PRE_ALL), some
 * with their debug files split off by objcopy, and removed after
 * (POST_ALL); the toolchain's Go version and the facts keyed on it; and
 * the comparisons of argument pieces. Run from the repository root (or
 * set GOTRACE_SRC to it): `make unit` runs each test_gobin_* once per Go
 * toolchain of tests/toolchains, naming the go command in GOTRACE_GO
 * (e.g. "env GOTOOLCHAIN=go1.27.3 /usr/local/go/bin/go");
 * GOTRACE_KEEP_FIXTURES=1 keeps the built fixtures. Include it in one
 * file of a test program only (it defines the hooks).
 */
#ifndef TESTS_GOBIN_FIXTURE_H
#define TESTS_GOBIN_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "gobin.h"

#define FIXDIR_ENV "GOTRACE_GOBIN_FIXDIR"

static inline const char *fixdir(void)
{
	const char *d = getenv(FIXDIR_ENV);

	return d ? d : "/tmp";
}

static inline const char *fix(const char *name)
{
	static char path[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", fixdir(), name);
	return path[k];
}

/* The go command of the toolchain under test (GOTRACE_GO). */
static inline const char *gocmd(void)
{
	const char *g = getenv("GOTRACE_GO");

	return g && *g ? g : "false GOTRACE_GO-is-not-set";
}

static inline bool exists(const char *p)
{
	return access(p, F_OK) == 0;
}

/* Runs cmd with output captured into buf; returns the exit status. */
static inline int run(const char *cmd, char *buf, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;

	if (!f)
		return -1;
	if (buf) {
		n = fread(buf, 1, len - 1, f);
		buf[n] = '\0';
	} else {
		char tmp[4096];

		while (fread(tmp, 1, sizeof(tmp), f) > 0)
			;
	}
	return pclose(f);
}

/* Copies src to dst with the ELF section headers removed (e_shoff = 0). */
static inline int strip_section_headers(const char *src, const char *dst)
{
	char cmd[2048];
	unsigned char h[64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, dst);
	if (system(cmd) != 0)
		return -1;
	f = fopen(dst, "r+b");
	if (!f || fread(h, 1, 64, f) != 64) {
		if (f)
			fclose(f);
		return -1;
	}
	if (h[EI_CLASS] == ELFCLASS64) {
		memset(h + 0x28, 0, 8);  /* e_shoff */
		memset(h + 0x3a, 0, 6);  /* e_shentsize, e_shnum, e_shstrndx */
	} else {
		memset(h + 0x20, 0, 4);
		memset(h + 0x2e, 0, 6);
	}
	rewind(f);
	fwrite(h, 1, 64, f);
	return fclose(f);
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	static char dir[] = "/tmp/gotrace-test-gobin.XXXXXX";
	const char *src = getenv("GOTRACE_SRC");
	char rel[1024], srcfile[PATH_MAX], genfile[PATH_MAX], cmd[4 * PATH_MAX];
	static const struct { const char *out, *env, *flags; } gc[] = {
		{ "args", "", "" },
		{ "args_s", "", "-ldflags='-s -w'" },
		{ "args_pie", "", "-buildmode=pie -ldflags='-s -w'" },
		{ "args_pied", "", "-buildmode=pie" },
		{ "args_386", "GOARCH=386", "" },
		{ "args_386s", "GOARCH=386", "-ldflags='-s -w'" },
		{ "args_arm64", "GOARCH=arm64", "" },
		{ "args_arm64s", "GOARCH=arm64", "-ldflags='-s -w'" },
		{ "args_bid", "", "-ldflags=-B=0x0123456789abcdef0123" },
		/* C code before runtime.text: textStart != .text start */
		{ "args_ext", "CGO_ENABLED=1", "-ldflags=-linkmode=external" },
		{ "args_extpie", "CGO_ENABLED=1",
		  "-buildmode=pie -ldflags='-linkmode=external -s -w'" },
	};

	(void)set;
	if (!mkdtemp(dir))
		return;
	setenv(FIXDIR_ENV, dir, 1);
	snprintf(rel, sizeof(rel), "%s/tests/fixtures/gobin/args.go",
		 src ? src : ".");
	if (!realpath(rel, srcfile)) {
		fprintf(stderr, "gobin fixtures: %s not found (run from the repo root "
			"or set GOTRACE_SRC)\n", rel);
		return;
	}
	snprintf(rel, sizeof(rel), "%s/tests/fixtures/gobin/generic.go",
		 src ? src : ".");
	if (!realpath(rel, genfile))
		snprintf(genfile, sizeof(genfile), "%s", rel);
	for (size_t i = 0; i < sizeof(gc) / sizeof(gc[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 "cd %s && env CGO_ENABLED=0 %s "
			 "%s build %s -o %s/%s %s %s 2>&1",
			 dir, gc[i].env, gocmd(), gc[i].flags, dir, gc[i].out,
			 srcfile, genfile);
		if (run(cmd, NULL, 0) != 0)
			fprintf(stderr, "gobin fixtures: failed: %s\n", cmd);
	}
	snprintf(cmd, sizeof(cmd), "cd %s && gccgo -g -O1 -o %s/args_gccgo %s 2>&1",
		 dir, dir, srcfile);
	if (run(cmd, NULL, 0) != 0)
		fprintf(stderr, "gobin fixtures: gccgo build failed\n");
	/* separate debug files: by .gnu_debuglink, and by GNU build id */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug args args.debug && "
		 "objcopy --strip-debug --add-gnu-debuglink=args.debug args args_dl && "
		 "mkdir -p dbgroot/.build-id/01 && objcopy --only-keep-debug args_bid "
		 "dbgroot/.build-id/01/23456789abcdef0123.debug && "
		 "objcopy --strip-debug args_bid args_bid_stripped && "
		 "objcopy --strip-debug args args_nodbg && "
		 "objcopy --remove-section=.note.gnu.build-id args_s args_s_nognu && "
		 "objcopy --only-keep-debug args_386 args_386.debug 2>&1", dir);
	if (run(cmd, NULL, 0) != 0)
		fprintf(stderr, "gobin fixtures: failed: %s\n", cmd);
	strip_section_headers(fix("args_s"), fix("args_nosh"));
	strip_section_headers(fix("args_pie"), fix("args_pie_nosh"));
	strip_section_headers(fix("args_386s"), fix("args_386_nosh"));
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	const char *d = getenv(FIXDIR_ENV);
	char cmd[1024];

	(void)stats;
	if (d && strncmp(d, "/tmp/gotrace-test-gobin.", 24) == 0 &&
	    !getenv("GOTRACE_KEEP_FIXTURES")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
		if (system(cmd) != 0)
			fprintf(stderr, "gobin fixtures: cannot remove %s\n", d);
	}
}

/* The built fixture `name` opened; fails the test if it is missing. */
static inline struct gobin *open_fixture(const char *name)
{
	char err[512];
	struct gobin *b;

	if (!exists(fix(name)))
		cr_assert_fail("fixture %s was not built (see the build errors above)", name);
	b = gobin_open(fix(name), err, sizeof(err));
	cr_assert_not_null(b, "gobin_open(%s): %s", name, err);
	return b;
}

/* The toolchain's Go version ("go1.26.1") into out[len]. */
static inline void toolchain_version(char *out, size_t len)
{
	char buf[256], cmd[512];

	snprintf(cmd, sizeof(cmd), "%s version 2>/dev/null", gocmd());
	cr_assert_eq(run(cmd, buf, sizeof(buf)), 0);
	/* "go version go1.19.8 linux/amd64" */
	cr_assert_eq(sscanf(buf, "go version %255s", out), 1);
	(void)len;
}

/*
 * N of the go1.N the toolchain under test reports: the fixtures' Go
 * version, on which the expectations below that differ between Go
 * releases are keyed (each with what differs and where in Go's source).
 */
static inline int toolchain_minor(void)
{
	static int minor;
	char v[256];

	if (!minor) {
		toolchain_version(v, sizeof(v));
		cr_assert_eq(sscanf(v, "go1.%d", &minor), 1, "%s", v);
	}
	return minor;
}

/*
 * Per-version facts of the fixtures' generic instances, asserted as such.
 *
 * Where gc passes a method instance's dictionary: before the receiver in
 * Go 1.18-1.19 (src/cmd/compile/internal/noder/stencil.go: "We add the
 * dictionary as the first parameter"), after it from Go 1.20 (the unified
 * IR's src/cmd/compile/internal/noder/reader.go, shapeSig). Functions
 * take it first.
 */
static inline int dict_index_of(const char *name)
{
	return strstr(name, "]).") && toolchain_minor() >= 20 ? 1 : 0;
}

/*
 * Whether DWARF lists the (unused) dictionary of the fixtures' instances:
 * Go 1.19-1.26 src/cmd/compile/internal/dwarfgen/dwarf.go
 * (createDwarfVars) drops parameters whose names start with '.', Go 1.27's
 * emits every declared parameter.
 */
static inline bool dwarf_lists_dict(void)
{
	return toolchain_minor() >= 27;
}

/*
 * How pclntab, which stripped binaries have, names a generic instance:
 * Go 1.18-1.20 linkers write the type arguments as "[...]"
 * (src/cmd/link/internal/ld/pcln.go, nameParts), Go 1.21+ write the
 * whole name (golang/go#58712) and only tracebacks shorten it
 * (src/runtime/traceback.go, funcNamePiecesForPrint).
 */
static inline bool pclntab_elides_type_args(void)
{
	return toolchain_minor() <= 20;
}

/* Expects piece i of a to be of kind at reg_or_off (a register or an
 * SP offset) and of size bytes. */
static inline void expect_piece(const struct gobin_arg *a, int i,
				enum gobin_loc kind, int reg_or_off, int size)
{
	const struct gobin_piece *p = &a->pieces[i];

	cr_expect_eq(p->kind, kind, "%s piece %d kind", a->name, i);
	if (kind == GOBIN_LOC_REG)
		cr_expect_eq((int)p->mreg, reg_or_off, "%s piece %d reg %s", a->name,
			     i, gobin_mreg_name(p->mreg));
	else if (kind == GOBIN_LOC_STACK)
		cr_expect_eq(p->offset, reg_or_off, "%s piece %d offset", a->name, i);
	cr_expect_eq(p->size, size, "%s piece %d size", a->name, i);
}


/* Expects x and y to have the same size, type and pieces. */
static inline void expect_same_pieces(const char *what, const struct gobin_arg *x,
				      const struct gobin_arg *y)
{
	cr_expect_eq(x->npieces, y->npieces, "%s: %u pieces, DWARF %u", what,
		     x->npieces, y->npieces);
	cr_expect_eq(x->size, y->size, "%s: size %u, DWARF %u", what, x->size,
		     y->size);
	cr_expect_eq(x->type, y->type, "%s: type %d, DWARF %d", what, x->type,
		     y->type);
	for (uint32_t i = 0; i < x->npieces && i < y->npieces; i++) {
		const struct gobin_piece *p = &x->pieces[i], *q = &y->pieces[i];
		char a[32], b[32];

		cr_expect(p->kind == q->kind && p->size == q->size &&
			  p->mreg == q->mreg &&
			  (p->kind != GOBIN_LOC_STACK || p->offset == q->offset),
			  "%s piece %u: %s/%u, DWARF %s/%u", what, i,
			  gobin_piece_str(p, a, sizeof(a)), p->size,
			  gobin_piece_str(q, b, sizeof(b)), q->size);
	}
}

struct sigcheck {
	struct gobin *dw, *st;  /* with DWARF, and stripped */
	const char *fixture;
	int funcs, params;
};

#endif
