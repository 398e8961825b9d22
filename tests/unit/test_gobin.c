/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/gobin: builds the Go fixtures of tests/fixtures/gobin
 * with the installed toolchains (go, gccgo) into a temporary directory once
 * (ReportHook PRE_ALL), then checks function tables against `go tool nm`,
 * the Go version against `go version`, and every computed argument location
 * against the DWARF location at the function's entry.
 *
 * Build: gcc -std=gnu11 -D_GNU_SOURCE -Iformat -Ibpf -Irecord \
 *   -o /tmp/tg tests/unit/test_gobin.c record/gobin.c record/pclntab.c \
 *   record/buildinfo.c record/dwarf.c record/abi.c -lcriterion -lelf -ldw
 * Run from the repository root (or set GOTRACE_SRC to it).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "gobin.h"

#define FIXDIR_ENV "GOTRACE_GOBIN_FIXDIR"

static const char *fixdir(void)
{
	const char *d = getenv(FIXDIR_ENV);

	return d ? d : "/tmp";
}

static const char *fix(const char *name)
{
	static char path[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", fixdir(), name);
	return path[k];
}

static bool exists(const char *p)
{
	return access(p, F_OK) == 0;
}

/* Runs cmd with output captured into buf; returns the exit status. */
static int run(const char *cmd, char *buf, size_t len)
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
static int strip_section_headers(const char *src, const char *dst)
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
	char rel[1024], srcfile[PATH_MAX], cmd[3 * PATH_MAX];
	static const struct { const char *out, *env, *flags; } gc[] = {
		{ "args", "", "" },
		{ "args_s", "", "-ldflags='-s -w'" },
		{ "args_pie", "", "-buildmode=pie -ldflags='-s -w'" },
		{ "args_pied", "", "-buildmode=pie" },
		{ "args_386", "GOARCH=386", "" },
		{ "args_386s", "GOARCH=386", "-ldflags='-s -w'" },
	};

	(void)set;
	if (!mkdtemp(dir))
		return;
	setenv(FIXDIR_ENV, dir, 1);
	snprintf(rel, sizeof(rel), "%s/tests/fixtures/gobin/args.go",
		 src ? src : ".");
	if (!realpath(rel, srcfile)) {
		fprintf(stderr, "test_gobin: %s not found (run from the repo root "
			"or set GOTRACE_SRC)\n", rel);
		return;
	}
	for (size_t i = 0; i < sizeof(gc) / sizeof(gc[0]); i++) {
		snprintf(cmd, sizeof(cmd),
			 "cd %s && env HOME=%s GOCACHE=/tmp/gotrace-gocache "
			 "GOPATH=%s/gopath GO111MODULE=off CGO_ENABLED=0 %s "
			 "go build %s -o %s/%s %s 2>&1",
			 dir, dir, dir, gc[i].env, gc[i].flags, dir, gc[i].out,
			 srcfile);
		if (run(cmd, NULL, 0) != 0)
			fprintf(stderr, "test_gobin: failed: %s\n", cmd);
	}
	snprintf(cmd, sizeof(cmd), "cd %s && gccgo -g -O1 -o %s/args_gccgo %s 2>&1",
		 dir, dir, srcfile);
	if (run(cmd, NULL, 0) != 0)
		fprintf(stderr, "test_gobin: gccgo build failed (skipping gccgo)\n");
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
			fprintf(stderr, "test_gobin: cannot remove %s\n", d);
	}
}

static struct gobin *open_fixture(const char *name)
{
	char err[512];
	struct gobin *b;

	if (!exists(fix(name)))
		cr_skip_test("fixture %s was not built", name);
	b = gobin_open(fix(name), err, sizeof(err));
	cr_assert_not_null(b, "gobin_open(%s): %s", name, err);
	return b;
}

/* ------------------------------------------------------------ ELF facts */

static void toolchain_version(char *out, size_t len)
{
	char buf[256];

	cr_assert_eq(run("go version 2>/dev/null", buf, sizeof(buf)), 0);
	/* "go version go1.19.8 linux/amd64" */
	cr_assert_eq(sscanf(buf, "go version %255s", out), 1);
	(void)len;
}

Test(gobin, facts_of_fixtures)
{
	static const struct {
		const char *name;
		bool pie, stripped, dwarf;
		enum gobin_arch arch;
	} fx[] = {
		{ "args", false, false, true, GOBIN_AMD64 },
		{ "args_s", false, true, false, GOBIN_AMD64 },
		{ "args_pie", true, true, false, GOBIN_AMD64 },
		{ "args_pied", true, false, true, GOBIN_AMD64 },
		{ "args_nosh", false, true, false, GOBIN_AMD64 },
		{ "args_pie_nosh", true, true, false, GOBIN_AMD64 },
		{ "args_386", false, false, true, GOBIN_386 },
		{ "args_386_nosh", false, true, false, GOBIN_386 },
	};
	char want[256];

	toolchain_version(want, sizeof(want));
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		struct gobin *b = open_fixture(fx[i].name);
		struct gtr_binary d;

		cr_expect_str_eq(gobin_go_version(b), want, "%s", fx[i].name);
		cr_expect_eq(gobin_is_pie(b), fx[i].pie, "%s pie", fx[i].name);
		cr_expect_eq(gobin_is_stripped(b), fx[i].stripped, "%s", fx[i].name);
		cr_expect_eq(gobin_has_dwarf(b), fx[i].dwarf, "%s", fx[i].name);
		cr_expect_eq(gobin_arch(b), fx[i].arch, "%s", fx[i].name);
		cr_expect_eq(gobin_compiler(b), GOBIN_GC);
		cr_expect_eq(gobin_regabi(b), fx[i].arch == GOBIN_AMD64, "%s",
			     fx[i].name);
		cr_expect_neq(gobin_go_build_id(b)[0], '\0', "%s go build id",
			      fx[i].name);
		cr_expect_eq(gobin_goid_offset(b), fx[i].arch == GOBIN_AMD64 ? 152 : 80,
			     "%s goid offset", fx[i].name);
		gobin_describe(b, &d);
		cr_expect_str_eq(d.compiler, "gc");
		cr_expect_str_eq(d.abi, fx[i].arch == GOBIN_AMD64 ? "ABIInternal" :
				 "ABI0");
		cr_expect_str_eq(d.go_version, want);
		gobin_close(b);
	}
}

/* ------------------------------------------------------------ functions */

struct nm_sym {
	char name[256];
	uint64_t addr;
};

/* `go tool nm` text symbols of package main. */
static int nm_main(const char *path, struct nm_sym *out, int max)
{
	char cmd[1024], line[512];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "go tool nm '%s'", path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned long long a;
		char t, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
			continue;
		if ((t != 'T' && t != 't') || strncmp(name, "main.", 5) != 0)
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", name);
		out[n++].addr = a;
	}
	cr_assert_eq(pclose(f), 0, "go tool nm %s failed", path);
	return n;
}

static void check_funcs_against(const char *fixture, const char *nm_of)
{
	struct nm_sym syms[128];
	struct gobin *b = open_fixture(fixture);
	const int n = nm_main(fix(nm_of), syms, 128);

	cr_assert_gt(n, 15, "nm found %d main functions", n);
	for (int i = 0; i < n; i++) {
		struct gobin_func f;

		cr_assert_eq(gobin_func_find(b, syms[i].name, &f), 0,
			     "%s: %s not found", fixture, syms[i].name);
		cr_expect_eq(f.entry, syms[i].addr, "%s: %s entry %#llx, nm %#llx",
			     fixture, syms[i].name, (unsigned long long)f.entry,
			     (unsigned long long)syms[i].addr);
		cr_expect_gt(f.end, f.entry, "%s", syms[i].name);
		cr_expect_str_eq(f.name, syms[i].name);
	}
	gobin_close(b);
}

Test(gobin, funcs_match_nm)
{
	check_funcs_against("args", "args");
	check_funcs_against("args_s", "args");
	check_funcs_against("args_nosh", "args");
	check_funcs_against("args_pied", "args_pied");
	check_funcs_against("args_pie", "args_pied");
	check_funcs_against("args_pie_nosh", "args_pied");
	check_funcs_against("args_386", "args_386");
	check_funcs_against("args_386_nosh", "args_386");
}

/* file_offset: the entry's bytes in the file are the function's code. */
Test(gobin, file_offset_through_pt_load)
{
	const char *names[] = { "args", "args_pie", "args_386" };

	for (size_t k = 0; k < 3; k++) {
		struct gobin *b = open_fixture(names[k]);
		struct gobin_func f;
		int fd = open(fix(names[k]), O_RDONLY);
		Elf *e;
		size_t np;

		cr_assert_eq(gobin_func_find(b, "main.ints", &f), 0);
		elf_version(EV_CURRENT);
		e = elf_begin(fd, ELF_C_READ, NULL);
		cr_assert_eq(elf_getphdrnum(e, &np), 0);
		for (size_t i = 0; i < np; i++) {
			GElf_Phdr ph;

			gelf_getphdr(e, (int)i, &ph);
			if (ph.p_type == PT_LOAD && f.entry >= ph.p_vaddr &&
			    f.entry < ph.p_vaddr + ph.p_filesz)
				cr_expect_eq(f.file_offset,
					     f.entry - ph.p_vaddr + ph.p_offset);
		}
		elf_end(e);
		close(fd);
		gobin_close(b);
	}
}

struct count_ctx {
	int n;
	char first[256];
};

static int count_cb(const struct gobin_func *f, void *ctx)
{
	struct count_ctx *c = ctx;

	if (!c->n++)
		snprintf(c->first, sizeof(c->first), "%s", f->name);
	return 0;
}

static int stop_cb(const struct gobin_func *f, void *ctx)
{
	(void)f;
	(void)ctx;
	return 7;
}

Test(gobin, names_are_plain_strings)
{
	struct gobin *b = open_fixture("args_pie");
	struct count_ctx c = { 0 };
	struct gobin_func f, g;
	const char *sugg[3];
	int n;

	cr_expect_eq(gobin_func_find(b, "main.(*T).M", &f), 0);
	cr_expect_eq(gobin_func_find(b, "main.T.V", &f), 0);
	cr_expect_eq(gobin_func_find(b, "main.main.func1", &f), 0);
	cr_expect_eq(gobin_func_find(b, "main.(*T)", &f), -ENOENT);
	cr_expect_eq(gobin_func_find(b, "main.*", &f), -ENOENT);
	cr_expect_eq(gobin_func_find(b, "", &f), -ENOENT);

	/* glob: brackets escaped, no FNM_PATHNAME: '*' crosses '/' */
	gobin_func_each(b, "main.(\\*T).*", count_cb, &c);
	cr_expect_eq(c.n, 1);
	cr_expect_str_eq(c.first, "main.(*T).M");
	c.n = 0;
	gobin_func_each(b, "*http*", count_cb, &c);
	cr_expect_eq(c.n, 0);
	c.n = 0;
	gobin_func_each(b, "internal/*.*", count_cb, &c);
	cr_expect_gt(c.n, 10);
	c.n = 0;
	gobin_func_each(b, NULL, count_cb, &c);
	cr_expect_eq((size_t)c.n, gobin_func_count(b));
	cr_expect_eq(gobin_func_each(b, "main.*", stop_cb, NULL), 7);

	n = gobin_func_suggest(b, "main.spilstr", sugg, 3);
	cr_assert_geq(n, 1);
	cr_expect_str_eq(sugg[0], "main.spillstr");
	n = gobin_func_suggest(b, "main.T.M", sugg, 3);
	cr_assert_geq(n, 1);
	cr_expect_str_eq(sugg[0], "main.(*T).M");

	cr_assert_eq(gobin_func_find(b, "main.many", &f), 0);
	cr_expect_eq(gobin_func_at(b, f.entry + 3, &g), 0);
	cr_expect_str_eq(g.name, "main.many");
	gobin_close(b);
}

Test(gobin, caddy)
{
	char err[512], want[512], cmd[256];
	struct gobin_func f;
	struct gobin *b;
	char *p;

	if (!exists("/usr/bin/caddy"))
		cr_skip_test("/usr/bin/caddy not installed");
	b = gobin_open("/usr/bin/caddy", err, sizeof(err));
	cr_assert_not_null(b, "%s", err);
	cr_expect_eq(gobin_func_find(b, "net/http.(*conn).serve", &f), 0);
	cr_expect_gt(f.end, f.entry);
	cr_expect(gobin_is_stripped(b));
	cr_expect_gt(gobin_func_count(b), 10000);
	/* `go version FILE` prints "FILE: go1.19.8" */
	snprintf(cmd, sizeof(cmd), "go version /usr/bin/caddy 2>/dev/null");
	cr_assert_eq(run(cmd, want, sizeof(want)), 0);
	p = strstr(want, ": ");
	cr_assert_not_null(p);
	p += 2;
	p[strcspn(p, " \n")] = '\0';
	cr_expect_str_eq(gobin_go_version(b), p);
	cr_expect_neq(gobin_build_id(b)[0], '\0');
	cr_expect_eq(gobin_goid_offset(b), 152);
	gobin_close(b);
}

Test(gobin, not_go_and_missing)
{
	char err[512];

	cr_expect_null(gobin_open("/bin/ls", err, sizeof(err)));
	cr_expect(strstr(err, "/bin/ls") && strstr(err, "not a Go program"),
		  "message: %s", err);
	cr_expect_null(gobin_open("/nonexistent/app", err, sizeof(err)));
	cr_expect(strstr(err, "/nonexistent/app") &&
		  strstr(err, "No such file or directory"), "message: %s", err);
	cr_expect_null(gobin_open("/etc/hostname", err, sizeof(err)));
	cr_expect(strstr(err, "not an ELF"), "message: %s", err);
	cr_expect_null(gobin_open("/tmp", err, sizeof(err)));
	cr_expect(strstr(err, "not a regular file"), "message: %s", err);
	gobin_close(NULL);
}

/* ------------------------------------------------------------ locations */

/* x86-64 DWARF register numbers -> enum gt_reg (-2: XMM; -1: other). */
static int dw_reg_amd64(unsigned r)
{
	static const int map[] = {
		GT_REG_RAX, GT_REG_RDX, GT_REG_RCX, GT_REG_RBX, GT_REG_RSI,
		GT_REG_RDI, GT_REG_RBP, GT_REG_RSP, GT_REG_R8, GT_REG_R9,
		GT_REG_R10, GT_REG_R11, GT_REG_R12, GT_REG_R13, GT_REG_R14,
		GT_REG_R15,
	};

	if (r < 16)
		return map[r];
	if (r >= 17 && r <= 32)
		return -2;
	return -1;
}

struct dwpiece {
	int kind;     /* 0 none (optimized out), 1 reg, 2 cfa+off, 3 xmm */
	int reg;
	int64_t off;
	uint64_t size; /* 0: the whole value (no DW_OP_piece) */
};

/* Decodes a location expression into pieces; returns count or -1. */
static int decode_loc(const Dwarf_Op *ops, size_t n, struct dwpiece *out, int max)
{
	struct dwpiece cur = { 0 };
	int k = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t a = ops[i].atom;

		if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
			const int r = dw_reg_amd64(a - DW_OP_reg0);

			cur.kind = r == -2 ? 3 : 1;
			cur.reg = r;
		} else if (a == DW_OP_regx) {
			const int r = dw_reg_amd64((unsigned)ops[i].number);

			cur.kind = r == -2 ? 3 : 1;
			cur.reg = r;
		} else if (a == DW_OP_call_frame_cfa) {
			cur.kind = 2;
			cur.off = 0;
		} else if (a == DW_OP_fbreg) {
			/* Go and gcc here use DW_OP_call_frame_cfa as frame base */
			cur.kind = 2;
			cur.off = (int64_t)ops[i].number;
		} else if (a == DW_OP_consts || a == DW_OP_constu) {
			cur.off += (int64_t)ops[i].number; /* then DW_OP_plus */
		} else if (a == DW_OP_plus_uconst) {
			cur.off += (int64_t)ops[i].number;
		} else if (a == DW_OP_plus) {
			;
		} else if (a == DW_OP_piece) {
			if (k >= max)
				return -1;
			cur.size = ops[i].number;
			out[k++] = cur;
			memset(&cur, 0, sizeof(cur));
		} else if (a == DW_OP_stack_value || a == DW_OP_entry_value ||
			   a == DW_OP_GNU_entry_value) {
			return -1; /* not a location */
		} else {
			return -1;
		}
	}
	if (cur.kind && k < max)
		out[k++] = cur; /* whole value, no DW_OP_piece */
	return k;
}

struct loccheck {
	struct gobin *b;
	int ps;
	int checked, skipped, funcs;
	const char *fixture;
};

/*
 * Compares gobin's pieces of one argument with the DWARF pieces at entry.
 * Registers: piece for piece (Go and gcc describe each register-held part
 * with its own DW_OP_piece). Stack: by byte ranges, since DWARF may give a
 * stack value whole or split differently (int64 on 386 as two words):
 * every gobin piece must lie in a DWARF stack range at the same offset, and
 * every DWARF range must start where a gobin piece starts.
 */
static void compare_arg(struct loccheck *lc, const char *fn,
			const struct gobin_arg *a, struct dwpiece *dp, int nd)
{
	const int ps = lc->ps;
	bool any_reg = false, any_xmm = false;

	if (nd == 1 && dp[0].size == 0)
		dp[0].size = a->size; /* whole value */
	for (int i = 0; i < nd; i++) {
		any_reg |= dp[i].kind == 1;
		any_xmm |= dp[i].kind == 3;
	}
	if (!any_reg && !any_xmm) {
		/* merge contiguous stack pieces into ranges */
		int m = 0;

		for (int i = 0; i < nd; i++) {
			if (m && dp[m - 1].kind == 2 && dp[i].kind == 2 &&
			    dp[i].off == dp[m - 1].off + (int64_t)dp[m - 1].size)
				dp[m - 1].size += dp[i].size;
			else
				dp[m++] = dp[i];
		}
		nd = m;
	}
	if (any_reg || any_xmm) {
		cr_expect_eq(a->npieces, (uint32_t)nd, "%s %s(%s): %u pieces, DWARF %d",
			     lc->fixture, fn, a->name, a->npieces, nd);
		for (int i = 0; i < nd && i < (int)a->npieces; i++) {
			const struct gobin_piece *p = &a->pieces[i];

			if (dp[i].kind == 0)
				continue;
			cr_expect_eq(p->size, dp[i].size, "%s %s(%s) piece %d size %u, "
				     "DWARF %llu", lc->fixture, fn, a->name, i, p->size,
				     (unsigned long long)dp[i].size);
			if (dp[i].kind == 1)
				cr_expect(p->kind == GT_LOC_REG && (int)p->reg == dp[i].reg,
					  "%s %s(%s) piece %d: reg %d kind %d, DWARF reg %d",
					  lc->fixture, fn, a->name, i, p->reg, p->kind,
					  dp[i].reg);
			else if (dp[i].kind == 3)
				cr_expect_eq(p->kind, GT_LOC_NONE, "%s %s(%s) XMM",
					     lc->fixture, fn, a->name);
			else
				cr_expect(false, "%s %s(%s): mixed reg/stack in DWARF",
					  lc->fixture, fn, a->name);
		}
		lc->checked++;
		return;
	}
	cr_expect_gt(a->npieces, 0, "%s %s(%s): no pieces, DWARF on stack",
		     lc->fixture, fn, a->name);
	for (uint32_t i = 0; i < a->npieces; i++) {
		const struct gobin_piece *p = &a->pieces[i];
		bool inside = false;

		cr_expect_eq(p->kind, GT_LOC_STACK, "%s %s(%s) piece %u kind",
			     lc->fixture, fn, a->name, i);
		for (int j = 0; j < nd; j++)
			if (dp[j].kind == 2 && p->offset >= ps + dp[j].off &&
			    p->offset + p->size <= ps + dp[j].off + (int64_t)dp[j].size)
				inside = true;
		/* pieces DWARF calls optimized out may be anywhere */
		for (int j = 0; j < nd; j++)
			if (dp[j].kind == 0)
				inside = true;
		cr_expect(inside, "%s %s(%s) piece %u: SP+%d/%u not in DWARF's "
			  "stack ranges", lc->fixture, fn, a->name, i, p->offset,
			  p->size);
	}
	for (int j = 0; j < nd; j++) {
		bool starts = false;

		if (dp[j].kind != 2)
			continue;
		for (uint32_t i = 0; i < a->npieces; i++)
			if (a->pieces[i].offset == ps + dp[j].off)
				starts = true;
		cr_expect(starts, "%s %s(%s): DWARF CFA%+lld (SP+%lld) starts no "
			  "piece; first piece SP+%d", lc->fixture, fn, a->name,
			  (long long)dp[j].off, (long long)(ps + dp[j].off),
			  a->npieces ? a->pieces[0].offset : -1);
	}
	lc->checked++;
}

static void check_subprogram(struct loccheck *lc, Dwarf_Die *sp)
{
	const char *name = dwarf_diename(sp);
	struct gobin_arg args[32];
	struct gobin_func f;
	Dwarf_Addr lowpc;
	Dwarf_Die c;
	int n, k = 0;

	if (!name || strncmp(name, "main.", 5) != 0 || strcmp(name, "main.main") == 0 ||
	    strstr(name, "..") || dwarf_lowpc(sp, &lowpc) != 0)
		return;
	if (gobin_func_find(lc->b, name, &f) != 0 || f.entry != lowpc)
		return; /* gccgo type-equality helpers and the like */
	n = gobin_func_args(lc->b, &f, args, 32);
	cr_assert_geq(n, 0, "%s: gobin_func_args(%s) = %d", lc->fixture, name, n);
	lc->funcs++;
	if (dwarf_child(sp, &c) != 0) {
		cr_expect_eq(n, 0);
		return;
	}
	do {
		Dwarf_Attribute at;
		bool var = false;
		Dwarf_Op *ops;
		size_t nops;
		struct dwpiece dp[8];
		int nd, r;

		if (dwarf_tag(&c) != DW_TAG_formal_parameter)
			continue;
		if (dwarf_attr_integrate(&c, DW_AT_variable_parameter, &at))
			dwarf_formflag(&at, &var);
		if (var)
			continue;
		cr_assert_lt(k, n, "%s %s: more DWARF params than gobin's %d",
			     lc->fixture, name, n);
		cr_expect_str_eq(args[k].name, dwarf_diename(&c) ? dwarf_diename(&c) : "");
		if (!dwarf_attr(&c, DW_AT_location, &at)) {
			cr_log_info("%s %s(%s): no DWARF location", lc->fixture,
				    name, args[k].name);
			lc->skipped++;
			k++;
			continue;
		}
		r = dwarf_getlocation_addr(&at, lowpc, &ops, &nops, 1);
		nd = r == 1 ? decode_loc(ops, nops, dp, 8) : -1;
		if (nd <= 0) {
			cr_log_info("%s %s(%s): no DWARF location at entry",
				    lc->fixture, name, args[k].name);
			lc->skipped++;
			k++;
			continue;
		}
		compare_arg(lc, name, &args[k], dp, nd);
		k++;
	} while (dwarf_siblingof(&c, &c) == 0);
	cr_expect_eq(k, n, "%s %s: %d DWARF params, gobin %d", lc->fixture, name, k, n);
}

static void check_locations(const char *fixture, int min_checked)
{
	struct loccheck lc = { .fixture = fixture };
	int fd;
	Dwarf *dw;
	Dwarf_Off off = 0, next;
	size_t hsize;

	lc.b = open_fixture(fixture);
	cr_assert(gobin_has_dwarf(lc.b));
	lc.ps = gobin_arch(lc.b) == GOBIN_386 ? 4 : 8;
	fd = open(fix(fixture), O_RDONLY);
	dw = dwarf_begin(fd, DWARF_C_READ);
	cr_assert_not_null(dw, "%s: %s", fixture, dwarf_errmsg(-1));
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &c) == 0) {
			do {
				if (dwarf_tag(&c) == DW_TAG_subprogram)
					check_subprogram(&lc, &c);
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	cr_log_info("%s: %d functions, %d params checked, %d without DWARF "
		    "location at entry", fixture, lc.funcs, lc.checked, lc.skipped);
	cr_expect_geq(lc.funcs, 14, "%s: %d functions", fixture, lc.funcs);
	cr_expect_geq(lc.checked, min_checked, "%s: only %d params checked (%d "
		      "skipped)", fixture, lc.checked, lc.skipped);
	dwarf_end(dw);
	close(fd);
	gobin_close(lc.b);
}

Test(gobin, locations_match_dwarf_amd64_regabi)
{
	check_locations("args", 60);
}

Test(gobin, locations_match_dwarf_pie)
{
	check_locations("args_pied", 60);
}

Test(gobin, locations_match_dwarf_386_abi0)
{
	check_locations("args_386", 60);
}

Test(gobin, locations_match_dwarf_gccgo)
{
	struct gobin *b;

	if (!exists(fix("args_gccgo")))
		cr_skip_test("gccgo fixture not built");
	b = open_fixture("args_gccgo");
	cr_expect_eq(gobin_compiler(b), GOBIN_GCCGO);
	cr_expect(!gobin_regabi(b));
	cr_expect_eq(gobin_goid_offset(b), -1);
	gobin_close(b);
	check_locations("args_gccgo", 50);
}

static void expect_piece(const struct gobin_arg *a, int i, enum gt_loc kind,
			 int reg_or_off, int size)
{
	const struct gobin_piece *p = &a->pieces[i];

	cr_expect_eq(p->kind, kind, "%s piece %d kind", a->name, i);
	if (kind == GT_LOC_REG)
		cr_expect_eq((int)p->reg, reg_or_off, "%s piece %d reg", a->name, i);
	else if (kind == GT_LOC_STACK)
		cr_expect_eq(p->offset, reg_or_off, "%s piece %d offset", a->name, i);
	cr_expect_eq(p->size, size, "%s piece %d size", a->name, i);
}

/* Register ABI cases written out, independent of the DWARF check. */
Test(gobin, regabi_explicit)
{
	struct gobin *b = open_fixture("args");
	struct gobin_arg a[16];
	struct gobin_func f;
	int n;

	cr_assert_eq(gobin_func_find(b, "main.spillstr", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 10);
	expect_piece(&a[7], 0, GT_LOC_REG, GT_REG_R10, 8);   /* h */
	cr_expect_eq(a[8].type, GTR_TYPE_STRING);
	cr_expect_str_eq(a[8].type_name, "string");
	cr_expect_eq(a[8].npieces, 2);
	expect_piece(&a[8], 0, GT_LOC_STACK, 8, 8);          /* s: no room */
	expect_piece(&a[8], 1, GT_LOC_STACK, 16, 8);
	expect_piece(&a[9], 0, GT_LOC_REG, GT_REG_R11, 8);   /* x still in reg */

	/* stack-assigned aggregates have no DWARF location at entry; these
	 * offsets were read off `go tool objdump` (t.a at 8(SP), w at 32(SP)) */
	cr_assert_eq(gobin_func_find(b, "main.stackmix", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 11);
	cr_expect_eq(a[8].npieces, 3);
	expect_piece(&a[8], 0, GT_LOC_STACK, 8, 8);
	expect_piece(&a[8], 1, GT_LOC_STACK, 16, 8);
	expect_piece(&a[8], 2, GT_LOC_STACK, 24, 8);
	expect_piece(&a[9], 0, GT_LOC_REG, GT_REG_R11, 1);
	expect_piece(&a[10], 0, GT_LOC_STACK, 32, 8);

	cr_assert_eq(gobin_func_find(b, "main.arrays", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 5);
	expect_piece(&a[0], 0, GT_LOC_STACK, 8, 8);          /* [3]int */
	expect_piece(&a[1], 0, GT_LOC_REG, GT_REG_RAX, 4);   /* [1]int32 */
	cr_expect_eq(a[3].npieces, 3);                       /* []byte */
	expect_piece(&a[3], 2, GT_LOC_REG, GT_REG_RSI, 8);
	expect_piece(&a[4], 1, GT_LOC_REG, GT_REG_R9, 8);    /* error */

	cr_assert_eq(gobin_func_find(b, "main.(*T).M", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(a[0].name, "t");
	cr_expect_eq(a[0].type, GTR_TYPE_PTR);
	cr_expect_str_eq(a[0].type_name, "*main.T");
	expect_piece(&a[0], 0, GT_LOC_REG, GT_REG_RAX, 8);
	expect_piece(&a[2], 0, GT_LOC_REG, GT_REG_RCX, 8);
	expect_piece(&a[2], 1, GT_LOC_REG, GT_REG_RDI, 8);

	cr_assert_eq(gobin_func_find(b, "main.floatmid", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 3);
	cr_expect_eq(a[1].type, GTR_TYPE_FLOAT);
	expect_piece(&a[1], 0, GT_LOC_NONE, 0, 8);
	expect_piece(&a[2], 0, GT_LOC_REG, GT_REG_RBX, 8);

	cr_assert_eq(gobin_func_find(b, "main.misc", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 4);
	cr_expect_eq(a[0].type, GTR_TYPE_BOOL);
	cr_expect_eq(a[0].size, 1);
	cr_expect_eq(a[3].type, GTR_TYPE_INT);
	cr_expect_str_eq(a[3].type_name, "main.MyInt");

	cr_assert_eq(gobin_func_find(b, "main.ptrs", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(a[i].type, GTR_TYPE_PTR, "%s", a[i].name);

	/* max smaller than the count */
	cr_assert_eq(gobin_func_find(b, "main.many", &f), 0);
	cr_expect_eq(gobin_func_args(b, &f, a, 3), 3);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 11);
	expect_piece(&a[9], 0, GT_LOC_STACK, 8, 8);
	expect_piece(&a[10], 0, GT_LOC_STACK, 16, 8);

	cr_assert_eq(gobin_func_find(b, "main.results", &f), 0);
	n = gobin_func_results(b, &f, a, 16);
	cr_assert_eq(n, 3);
	expect_piece(&a[0], 0, GT_LOC_REG, GT_REG_RAX, 8);
	expect_piece(&a[1], 0, GT_LOC_REG, GT_REG_RBX, 8);
	expect_piece(&a[1], 1, GT_LOC_REG, GT_REG_RCX, 8);
	expect_piece(&a[2], 0, GT_LOC_REG, GT_REG_RDI, 8);
	gobin_close(b);
}

Test(gobin, stripped_has_no_args_but_raw)
{
	struct gobin *b = open_fixture("args_pie");
	struct gobin_arg a[12];
	struct gobin_func f;

	cr_assert_eq(gobin_func_find(b, "main.ints", &f), 0);
	cr_expect_eq(gobin_func_args(b, &f, a, 12), -ENODATA);
	cr_expect_eq(gobin_raw_args(b, a, 12), 9);
	expect_piece(&a[0], 0, GT_LOC_REG, GT_REG_RAX, 8);
	expect_piece(&a[3], 0, GT_LOC_REG, GT_REG_RDI, 8);
	expect_piece(&a[8], 0, GT_LOC_REG, GT_REG_R11, 8);
	cr_expect_eq(a[0].type, GTR_TYPE_WORD);
	gobin_close(b);

	b = open_fixture("args_386_nosh");
	cr_expect_eq(gobin_raw_args(b, a, 3), 3);
	expect_piece(&a[0], 0, GT_LOC_STACK, 4, 4);
	expect_piece(&a[2], 0, GT_LOC_STACK, 12, 4);
	gobin_close(b);
}

/* Assembly functions are ABI0 even in register-ABI binaries, stripped or not. */
Test(gobin, asm_functions_are_abi0)
{
	const char *names[] = { "args", "args_s", "args_pie_nosh" };

	for (size_t k = 0; k < 3; k++) {
		struct gobin *b = open_fixture(names[k]);
		struct gobin_func f;
		struct gobin_arg a[2];

		cr_assert_eq(gobin_func_find(b, "internal/cpu.cpuid", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI0, "%s cpuid", names[k]);
		cr_expect_eq(gobin_func_raw_args(b, &f, a, 2), 2);
		expect_piece(&a[1], 0, GT_LOC_STACK, 16, 8);
		cr_assert_eq(gobin_func_find(b, "runtime.memmove", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL, "%s memmove",
			     names[k]);
		cr_assert_eq(gobin_func_find(b, "main.ints", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL);
		cr_expect_eq(gobin_func_raw_args(b, &f, a, 2), 2);
		expect_piece(&a[1], 0, GT_LOC_REG, GT_REG_RBX, 8);
		/* a Go function called from assembly also has an ABI0 wrapper of
		 * the same name: find returns the function itself */
		cr_assert_eq(gobin_func_find(b, "runtime.schedinit", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL, "%s", names[k]);
		if (k < 2) {
			char cmd[1024], out[64];

			snprintf(cmd, sizeof(cmd), "go tool nm '%s' | awk '$3 == "
				 "\"runtime.schedinit\" { print $1 }'", fix("args"));
			cr_assert_eq(run(cmd, out, sizeof(out)), 0);
			cr_expect_eq(f.entry, strtoull(out, NULL, 16), "%s", names[k]);
		}
		gobin_close(b);
	}
}
