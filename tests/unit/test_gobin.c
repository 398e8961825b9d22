/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/gobin and gotrace_list: builds the Go fixtures of
 * tests/fixtures/gobin (args.go, plus generic.go for gc) with the
 * installed toolchains (go for amd64, 386 and arm64, stripped, PIE,
 * externally linked; gccgo) into a temporary directory once (ReportHook
 * PRE_ALL), splits debug files off some with objcopy, then checks function
 * tables against `go tool nm` and Go's debug/gosym (gosym.go), the Go
 * version and build settings against `go version -m`, every argument
 * location computed from DWARF types and from user signatures against the
 * DWARF location at the function's entry, and Debian's stripped age and
 * caddy. Run from the repository root (or set GOTRACE_SRC to it):
 * `make unit` runs it once per Go toolchain of tests/toolchains, naming
 * the go command in GOTRACE_GO (e.g. "env GOTOOLCHAIN=go1.27.3
 * /usr/local/go/bin/go"); GOTRACE_KEEP_FIXTURES=1 keeps the built fixtures.
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
#include "list.h"

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

/* The go command of the toolchain under test (GOTRACE_GO). */
static const char *gocmd(void)
{
	const char *g = getenv("GOTRACE_GO");

	return g && *g ? g : "false GOTRACE_GO-is-not-set";
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
		fprintf(stderr, "test_gobin: %s not found (run from the repo root "
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
			fprintf(stderr, "test_gobin: failed: %s\n", cmd);
	}
	snprintf(cmd, sizeof(cmd), "cd %s && gccgo -g -O1 -o %s/args_gccgo %s 2>&1",
		 dir, dir, srcfile);
	if (run(cmd, NULL, 0) != 0)
		fprintf(stderr, "test_gobin: gccgo build failed\n");
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
		fprintf(stderr, "test_gobin: failed: %s\n", cmd);
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
		cr_assert_fail("fixture %s was not built (see the build errors above)", name);
	b = gobin_open(fix(name), err, sizeof(err));
	cr_assert_not_null(b, "gobin_open(%s): %s", name, err);
	return b;
}

/* ------------------------------------------------------------ ELF facts */

static void toolchain_version(char *out, size_t len)
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
static int toolchain_minor(void)
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
static int dict_index_of(const char *name)
{
	return strstr(name, "]).") && toolchain_minor() >= 20 ? 1 : 0;
}

/*
 * Whether DWARF lists the (unused) dictionary of the fixtures' instances:
 * Go 1.19-1.26 src/cmd/compile/internal/dwarfgen/dwarf.go
 * (createDwarfVars) drops parameters whose names start with '.', Go 1.27's
 * emits every declared parameter.
 */
static bool dwarf_lists_dict(void)
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
static bool pclntab_elides_type_args(void)
{
	return toolchain_minor() <= 20;
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

	snprintf(cmd, sizeof(cmd), "%s tool nm '%s'", gocmd(), path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned long long a;
		char t, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3)
			continue;
		/* generic instances: the symbol table says "[go.shape.int_0]",
		 * pclntab (what stripped binaries have) says "[...]" */
		if (strstr(name, "[go.shape."))
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
	/* a third of the letters at most, none in other packages below 5 */
	cr_expect_eq(gobin_func_suggest(b, "main.sq", sugg, 3), 0, "%s", sugg[0]);
	cr_expect_eq(gobin_func_suggest(b, "main.nope", sugg, 3), 0, "%s", sugg[0]);

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
		cr_assert_fail("/usr/bin/caddy not installed (make deps)");
	b = gobin_open("/usr/bin/caddy", err, sizeof(err));
	cr_assert_not_null(b, "%s", err);
	cr_expect_eq(gobin_func_find(b, "net/http.(*conn).serve", &f), 0);
	cr_expect_gt(f.end, f.entry);
	cr_expect(gobin_is_stripped(b));
	cr_expect_gt(gobin_func_count(b), 10000);
	/* `go version FILE` prints "FILE: go1.19.8" */
	snprintf(cmd, sizeof(cmd), "%s version /usr/bin/caddy 2>/dev/null", gocmd());
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
	cr_expect_str_eq(err, "/bin/ls is not a Go program (no .gopclntab and no Go build info)");
	cr_expect_null(gobin_open("/nonexistent/app", err, sizeof(err)));
	cr_expect_str_eq(err, "cannot open /nonexistent/app: No such file or directory");
	cr_expect_null(gobin_open("/etc/hostname", err, sizeof(err)));
	/* then why, which depends on the machine's file: "(too small)" */
	cr_expect(!strncmp(err, "/etc/hostname is not an ELF executable (", 40),
		  "message: %s", err);
	cr_expect_null(gobin_open("/tmp", err, sizeof(err)));
	cr_expect_str_eq(err, "cannot read /tmp: not a regular file");
	gobin_close(NULL);
}

/* ------------------------------------------------------------ locations */

/*
 * DWARF register number -> enum gobin_mreg, by architecture (x86-64 psABI:
 * 0-15 RAX RDX RCX RBX RSI RDI RBP RSP R8-R15, 17-32 XMM0-15; AAPCS64
 * DWARF: 0-30 X0-X30, 64-95 V0-V31). *fp tells a float register.
 */
static unsigned dw_mreg(enum gobin_arch arch, unsigned r, bool *fp)
{
	static const unsigned amd64[16] = {
		GOBIN_MREG_RAX, GOBIN_MREG_RDX, GOBIN_MREG_RCX, GOBIN_MREG_RBX,
		GOBIN_MREG_RSI, GOBIN_MREG_RDI, GOBIN_MREG_RBP, GOBIN_MREG_RSP,
		GOBIN_MREG_R8, GOBIN_MREG_R9, GOBIN_MREG_R10, GOBIN_MREG_R11,
		GOBIN_MREG_R12, GOBIN_MREG_R13, GOBIN_MREG_R14, GOBIN_MREG_R15,
	};

	*fp = false;
	if (arch == GOBIN_ARM64) {
		if (r <= 30)
			return GOBIN_MREG_ARM64_R0 + r;
		if (r >= 64 && r <= 95) {
			*fp = true;
			return GOBIN_MREG_ARM64_F0 + (r - 64);
		}
		return GOBIN_MREG_NONE;
	}
	if (r < 16)
		return amd64[r];
	if (r >= 17 && r <= 32) {
		*fp = true;
		return GOBIN_MREG_XMM0 + (r - 17);
	}
	return GOBIN_MREG_NONE;
}

struct dwpiece {
	int kind;     /* 0 none (optimized out), 1 reg, 2 cfa+off, 3 float reg */
	unsigned mreg; /* enum gobin_mreg, any architecture */
	int64_t off;
	uint64_t size; /* 0: the whole value (no DW_OP_piece) */
};

/* LEB128 at *p (below end), advancing *p. */
static uint64_t leb128(const unsigned char **p, const unsigned char *end, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char c = 0;

	while (*p < end) {
		c = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	if (sign && shift < 64 && (c & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

/*
 * The location expression of `at` at pc: one op list (1), none there (0)
 * or -1. Go 1.25+ writes DWARF 5 but keeps DW_FORM_block1 for a location
 * that is one expression (src/cmd/internal/dwarf/dwarf.go, the
 * DW_AT_location of its abbreviations), a form DWARF 5 gives to blocks,
 * not expressions, and which libdw's dwarf_getlocation refuses in a
 * DWARF 5 unit: such a block is decoded here (the operations Go writes
 * in one: registers, CFA, frame base offsets, pieces), into buf[max].
 */
static int location_at(Dwarf_Attribute *at, Dwarf_Addr pc, Dwarf_Op **ops,
		       size_t *nops, Dwarf_Op *buf, size_t max)
{
	const int r = dwarf_getlocation_addr(at, pc, ops, nops, 1);
	const unsigned form = dwarf_whatform(at);
	const unsigned char *p, *end;
	Dwarf_Block blk;
	size_t n = 0;

	if (r >= 0 || (form != DW_FORM_block1 && form != DW_FORM_block2 &&
		       form != DW_FORM_block4 && form != DW_FORM_block) ||
	    dwarf_formblock(at, &blk) != 0)
		return r;
	p = blk.data;
	end = blk.data + blk.length;
	while (p < end && n < max) {
		Dwarf_Op *o = &buf[n++];

		memset(o, 0, sizeof(*o));
		o->atom = *p++;
		if ((o->atom >= DW_OP_reg0 && o->atom <= DW_OP_reg31) ||
		    o->atom == DW_OP_call_frame_cfa || o->atom == DW_OP_plus ||
		    o->atom == DW_OP_stack_value)
			continue;
		if (o->atom == DW_OP_regx || o->atom == DW_OP_piece ||
		    o->atom == DW_OP_plus_uconst || o->atom == DW_OP_constu)
			o->number = leb128(&p, end, false);
		else if (o->atom == DW_OP_fbreg || o->atom == DW_OP_consts)
			o->number = leb128(&p, end, true);
		else
			return -1;  /* an operation Go does not write there */
	}
	if (p != end)
		return -1;
	*ops = buf;
	*nops = n;
	return 1;
}

/* Decodes a location expression into pieces; returns count or -1. */
static int decode_loc(enum gobin_arch arch, const Dwarf_Op *ops, size_t n,
		      struct dwpiece *out, int max)
{
	struct dwpiece cur = { 0 };
	int k = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t a = ops[i].atom;

		if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
			const unsigned dr = a == DW_OP_regx ? (unsigned)ops[i].number :
					    (unsigned)(a - DW_OP_reg0);
			bool fp;

			cur.mreg = dw_mreg(arch, dr, &fp);
			cur.kind = fp ? 3 : 1;
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
	int ps;       /* SP + ps is the CFA at entry: 0 on arm64 (return in LR) */
	int checked, skipped, funcs, generic;
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
			if (dp[i].kind == 1 && dp[i].mreg != GOBIN_MREG_NONE)
				cr_expect(p->kind == GOBIN_LOC_REG && p->mreg == dp[i].mreg,
					  "%s %s(%s) piece %d: reg %s kind %d, DWARF reg %s",
					  lc->fixture, fn, a->name, i,
					  gobin_mreg_name(p->mreg), p->kind,
					  gobin_mreg_name(dp[i].mreg));
			else if (dp[i].kind == 3)
				cr_expect(p->kind == GOBIN_LOC_REG &&
					  !gobin_piece_readable(p),
					  "%s %s(%s) float reg", lc->fixture, fn, a->name);
			if (dp[i].kind == 1 || dp[i].kind == 3)
				cr_expect_eq(p->mreg, dp[i].mreg, "%s %s(%s) piece %d: %s, "
					     "DWARF %s", lc->fixture, fn, a->name, i,
					     gobin_mreg_name(p->mreg),
					     gobin_mreg_name(dp[i].mreg));
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

		cr_expect_eq(p->kind, GOBIN_LOC_STACK, "%s %s(%s) piece %u kind",
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

/*
 * A dictionary DWARF lists (Go 1.27) in a register-ABI function: its one
 * location is the stack slot the ABI reserves to spill it, the register
 * parameters' spill slots following each other in order from the start
 * of the argument area (CFA+0 on amd64, CFA+8 on arm64, above the saved
 * link register); gobin's parameters before it are one word each here.
 */
static void check_dict_spill_slot(struct loccheck *lc, const char *fn,
				  Dwarf_Addr lowpc, Dwarf_Die *c,
				  const struct gobin_arg *args, int k)
{
	const int64_t base = gobin_arch(lc->b) == GOBIN_ARM64 ? 8 : 0;
	int64_t want = base;
	Dwarf_Attribute at;
	Dwarf_Op *ops, buf[16];
	size_t nops;
	struct dwpiece dp[8];
	int nd;

	for (int j = 0; j < k; j++)
		want += (args[j].size + 7) / 8 * 8;
	cr_assert(dwarf_attr(c, DW_AT_location, &at), "%s %s: .dict without location",
		  lc->fixture, fn);
	cr_assert_eq(location_at(&at, lowpc, &ops, &nops, buf, 16), 1,
		     "%s %s: .dict location: %s", lc->fixture, fn, dwarf_errmsg(-1));
	nd = decode_loc(gobin_arch(lc->b), ops, nops, dp, 8);
	cr_expect(nd == 1 && dp[0].kind == 2 && dp[0].off == want,
		  "%s %s: DWARF .dict at CFA%+lld (%d pieces), its spill slot is "
		  "CFA%+lld", lc->fixture, fn, nd > 0 ? (long long)dp[0].off : 0LL,
		  nd, (long long)want);
	lc->checked++;
}

static void check_subprogram(struct loccheck *lc, Dwarf_Die *sp)
{
	const char *name = dwarf_diename(sp);
	struct gobin_arg args[32];
	struct gobin_func f;
	Dwarf_Addr lowpc;
	Dwarf_Die c;
	int n, k = 0, dict = -1;

	if (!name || strncmp(name, "main.", 5) != 0 || strcmp(name, "main.main") == 0 ||
	    strstr(name, "..") || dwarf_lowpc(sp, &lowpc) != 0)
		return;
	/* generic instances: DWARF "main.f[go.shape.int_0]", pclntab "main.f[...]" */
	if ((gobin_func_find(lc->b, name, &f) != 0 || f.entry != lowpc) &&
	    (!strstr(name, "[go.shape.") || gobin_func_at(lc->b, lowpc, &f) != 0 ||
	     f.entry != lowpc))
		return; /* gccgo type-equality helpers and the like */
	n = gobin_func_args(lc->b, &f, args, 32);
	cr_assert_geq(n, 0, "%s: gobin_func_args(%s) = %d", lc->fixture, name, n);
	lc->funcs++;
	if (strstr(name, "[go.shape.")) {
		/* the hidden dictionary where this Go passes it (the receiver
		 * before it is a pointer): the first or second integer
		 * register, or stack word */
		const struct gobin_piece *p;

		dict = dict_index_of(name);
		cr_assert_gt(n, dict, "%s %s", lc->fixture, name);
		cr_expect_str_eq(args[dict].name, ".dict", "%s %s", lc->fixture, name);
		cr_expect_eq(args[dict].npieces, 1);
		p = &args[dict].pieces[0];
		if (gobin_arch(lc->b) == GOBIN_386)
			cr_expect(p->kind == GOBIN_LOC_STACK && p->offset == 4 + 4 * dict,
				  "%s %s .dict at SP%+d", lc->fixture, name, p->offset);
		else
			cr_expect_eq(p->mreg, gobin_arch(lc->b) == GOBIN_ARM64 ?
				     GOBIN_MREG_ARM64_R0 + dict :
				     dict ? GOBIN_MREG_RBX : GOBIN_MREG_RAX,
				     "%s %s .dict in %s", lc->fixture, name,
				     gobin_mreg_name(p->mreg));
		lc->generic++;
	}
	if (dwarf_child(sp, &c) != 0) {
		cr_expect_eq(n, 0);
		return;
	}
	do {
		Dwarf_Attribute at;
		bool var = false;
		Dwarf_Op *ops, buf[16];
		size_t nops;
		struct dwpiece dp[8];
		int nd, r;

		if (dwarf_tag(&c) != DW_TAG_formal_parameter)
			continue;
		if (dwarf_attr_integrate(&c, DW_AT_variable_parameter, &at))
			dwarf_formflag(&at, &var);
		if (var)
			continue;
		if (k == dict && !dwarf_lists_dict())
			k++;    /* gobin's dictionary, which this DWARF omits */
		cr_assert_lt(k, n, "%s %s: more DWARF params than gobin's %d",
			     lc->fixture, name, n);
		cr_expect_str_eq(args[k].name, dwarf_diename(&c) ? dwarf_diename(&c) : "");
		if (k == dict && gobin_arch(lc->b) != GOBIN_386) {
			/* DWARF gives the register-passed dictionary, which
			 * these functions never spill, only its spill slot
			 * (createSimpleVar): the slot of gobin's register */
			check_dict_spill_slot(lc, name, lowpc, &c, args, k);
			k++;
			continue;
		}
		if (!dwarf_attr(&c, DW_AT_location, &at)) {
			cr_log_info("%s %s(%s): no DWARF location", lc->fixture,
				    name, args[k].name);
			lc->skipped++;
			k++;
			continue;
		}
		r = location_at(&at, lowpc, &ops, &nops, buf, 16);
		nd = r == 1 ? decode_loc(gobin_arch(lc->b), ops, nops, dp, 8) : -1;
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
	if (k == dict && !dwarf_lists_dict())
		k++;    /* a dictionary after every DWARF parameter */
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
	lc.ps = gobin_arch(lc.b) == GOBIN_386 ? 4 :
		gobin_arch(lc.b) == GOBIN_ARM64 ? 0 : 8;
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
	if (gobin_compiler(lc.b) == GOBIN_GC)
		cr_expect_geq(lc.generic, 3, "%s: %d generic instances", fixture,
			      lc.generic);
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

Test(gobin, locations_match_dwarf_arm64_regabi)
{
	struct gobin *b = open_fixture("args_arm64");

	cr_expect_eq(gobin_arch(b), GOBIN_ARM64);
	cr_expect(gobin_regabi(b));
	gobin_close(b);
	check_locations("args_arm64", 60);
}

Test(gobin, locations_match_dwarf_gccgo)
{
	struct gobin *b;

	if (!exists(fix("args_gccgo")))
		cr_assert_fail("gccgo fixture not built (see the build errors above)");
	b = open_fixture("args_gccgo");
	cr_expect_eq(gobin_compiler(b), GOBIN_GCCGO);
	cr_expect(!gobin_regabi(b));
	cr_expect_eq(gobin_goid_offset(b), -1);
	gobin_close(b);
	check_locations("args_gccgo", 50);
}

static void expect_piece(const struct gobin_arg *a, int i, enum gobin_loc kind,
			 int reg_or_off, int size)
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
	expect_piece(&a[7], 0, GOBIN_LOC_REG, GOBIN_MREG_R10, 8);   /* h */
	cr_expect_eq(a[8].type, GTR_TYPE_STRING);
	cr_expect_str_eq(a[8].type_name, "string");
	cr_expect_eq(a[8].npieces, 2);
	expect_piece(&a[8], 0, GOBIN_LOC_STACK, 8, 8);          /* s: no room */
	expect_piece(&a[8], 1, GOBIN_LOC_STACK, 16, 8);
	expect_piece(&a[9], 0, GOBIN_LOC_REG, GOBIN_MREG_R11, 8);   /* x still in reg */

	/* stack-assigned aggregates have no DWARF location at entry; these
	 * offsets were read off `go tool objdump` (t.a at 8(SP), w at 32(SP)) */
	cr_assert_eq(gobin_func_find(b, "main.stackmix", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 11);
	cr_expect_eq(a[8].npieces, 3);
	expect_piece(&a[8], 0, GOBIN_LOC_STACK, 8, 8);
	expect_piece(&a[8], 1, GOBIN_LOC_STACK, 16, 8);
	expect_piece(&a[8], 2, GOBIN_LOC_STACK, 24, 8);
	expect_piece(&a[9], 0, GOBIN_LOC_REG, GOBIN_MREG_R11, 1);
	expect_piece(&a[10], 0, GOBIN_LOC_STACK, 32, 8);

	cr_assert_eq(gobin_func_find(b, "main.arrays", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 5);
	expect_piece(&a[0], 0, GOBIN_LOC_STACK, 8, 8);          /* [3]int */
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 4);   /* [1]int32 */
	cr_expect_eq(a[3].npieces, 3);                       /* []byte */
	expect_piece(&a[3], 2, GOBIN_LOC_REG, GOBIN_MREG_RSI, 8);
	expect_piece(&a[4], 1, GOBIN_LOC_REG, GOBIN_MREG_R9, 8);    /* error */

	cr_assert_eq(gobin_func_find(b, "main.(*T).M", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(a[0].name, "t");
	cr_expect_eq(a[0].type, GTR_TYPE_PTR);
	cr_expect_str_eq(a[0].type_name, "*main.T");
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RCX, 8);
	expect_piece(&a[2], 1, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);

	cr_assert_eq(gobin_func_find(b, "main.floatmid", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 3);
	cr_expect_eq(a[1].type, GTR_TYPE_FLOAT);
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_XMM0, 8);
	cr_expect(!gobin_piece_readable(&a[1].pieces[0]));  /* float: not read */
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);

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
	expect_piece(&a[9], 0, GOBIN_LOC_STACK, 8, 8);
	expect_piece(&a[10], 0, GOBIN_LOC_STACK, 16, 8);

	cr_assert_eq(gobin_func_find(b, "main.results", &f), 0);
	n = gobin_func_results(b, &f, a, 16);
	cr_assert_eq(n, 3);
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);
	expect_piece(&a[1], 1, GOBIN_LOC_REG, GOBIN_MREG_RCX, 8);
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);
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
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[3], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);
	expect_piece(&a[8], 0, GOBIN_LOC_REG, GOBIN_MREG_R11, 8);
	cr_expect_eq(a[0].type, GTR_TYPE_WORD);
	gobin_close(b);

	b = open_fixture("args_386_nosh");
	cr_expect_eq(gobin_raw_args(b, a, 3), 3);
	expect_piece(&a[0], 0, GOBIN_LOC_STACK, 4, 4);
	expect_piece(&a[2], 0, GOBIN_LOC_STACK, 12, 4);
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
		expect_piece(&a[1], 0, GOBIN_LOC_STACK, 16, 8);
		cr_assert_eq(gobin_func_find(b, "runtime.memmove", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL, "%s memmove",
			     names[k]);
		cr_assert_eq(gobin_func_find(b, "main.ints", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL);
		cr_expect_eq(gobin_func_raw_args(b, &f, a, 2), 2);
		expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);
		/* a Go function called from assembly also has an ABI0 wrapper of
		 * the same name: find returns the function itself */
		cr_assert_eq(gobin_func_find(b, "runtime.schedinit", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL, "%s", names[k]);
		if (k < 2) {
			char cmd[1024], out[64];

			snprintf(cmd, sizeof(cmd), "%s tool nm '%s' | awk '$3 == "
				 "\"runtime.schedinit\" { print $1 }'", gocmd(), fix("args"));
			cr_assert_eq(run(cmd, out, sizeof(out)), 0);
			cr_expect_eq(f.entry, strtoull(out, NULL, 16), "%s", names[k]);
		}
		gobin_close(b);
	}
}

/* ------------------------------------------------------------ signatures */

/*
 * Underlying types of the fixture's named types, as a user would write
 * them; shape types of generic instances (".param0") by their shape.
 */
static const char *underlying(const struct gobin_arg *a)
{
	const char *t = a->type_name;

	static const struct { const char *named, *under; } m[] = {
		{ "main.T", "struct{ a int; b string }" },
		{ "main.Small", "struct{ x, y int32 }" },
		{ "main.MyInt", "int" },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(m[i].named, t))
			return m[i].under;
	if (!strncmp(t, ".param", 6)) {
		if (a->type == GTR_TYPE_INT)
			return a->size == 8 ? "int64" : a->size == 4 ? "int32" : "int16";
		if (a->type == GTR_TYPE_STRING)
			return "string";
		if (a->type == GTR_TYPE_PTR)
			return "*byte";
		if (a->npieces == 3)
			return "[]byte";
	}
	return t;
}

static void expect_same_pieces(const char *what, const struct gobin_arg *x,
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

static int sig_cb(const struct gobin_func *f, void *ctx)
{
	struct sigcheck *sc = ctx;
	struct gobin_arg want[32], got[32];
	struct gobin_func sf;
	char text[2048] = "", err[512], what[2600];
	size_t o = 0;
	int nw, ng, first = 0;

	if (!strcmp(f->name, "main.main"))
		return 0;
	nw = gobin_func_args(sc->dw, f, want, 32);
	cr_assert_geq(nw, 0, "%s", f->name);
	/* a generic instance's dictionary and a pointer receiver come from
	 * the symbol (in either order); a value receiver is written */
	if (strstr(f->name, pclntab_elides_type_args() ? "[...]" : "[go.shape."))
		first++;
	if (strstr(f->name, "(*"))
		first++;
	for (int i = first; i < nw; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s %s",
				      i > first ? ", " : "",
				      i == 0 && nw && strstr(f->name, "main.T.") ?
				      "recv" : want[i].name,
				      underlying(&want[i]));
	/* by address: generic instances share their name */
	cr_assert_eq(gobin_func_at(sc->st, f->entry, &sf), 0, "%s", f->name);
	cr_assert_str_eq(sf.name, f->name);
	cr_assert_eq(gobin_has_dwarf(sc->st), false);
	ng = gobin_sig_args(sc->st, &sf, text, got, 32, err, sizeof(err));
	cr_assert_eq(ng, nw, "%s %s(%s): %d params from the signature, DWARF "
		     "%d: %s", sc->fixture, f->name, text, ng, nw, err);
	for (int i = 0; i < nw; i++) {
		snprintf(what, sizeof(what), "%s %s(%s) param %d", sc->fixture,
			 f->name, text, i);
		expect_same_pieces(what, &got[i], &want[i]);
		if (i >= first)
			cr_expect_str_eq(got[i].name, i == 0 && strstr(f->name, "main.T.") ?
					 "recv" : want[i].name, "%s", what);
		sc->params++;
	}
	sc->funcs++;
	return 0;
}

/* Locations from a signature on a stripped build equal DWARF's. */
static void check_sig_against_dwarf(const char *dwarf_fixture,
				    const char *stripped_fixture)
{
	struct sigcheck sc = { .fixture = stripped_fixture };

	sc.dw = open_fixture(dwarf_fixture);
	sc.st = open_fixture(stripped_fixture);
	gobin_func_each(sc.dw, "main.*", sig_cb, &sc);
	cr_log_info("%s: %d functions, %d params from signatures", stripped_fixture,
		    sc.funcs, sc.params);
	cr_expect_geq(sc.funcs, 15, "%s", stripped_fixture);
	cr_expect_geq(sc.params, 80, "%s", stripped_fixture);
	gobin_close(sc.dw);
	gobin_close(sc.st);
}

Test(gobin, sig_locations_match_dwarf)
{
	check_sig_against_dwarf("args", "args_s");
	check_sig_against_dwarf("args_pied", "args_pie");
	check_sig_against_dwarf("args_386", "args_386s");
	check_sig_against_dwarf("args_arm64", "args_arm64s");
}

static int sig(struct gobin *b, const char *func, const char *params,
	       struct gobin_arg *a, char *err, size_t errlen)
{
	struct gobin_func f;

	cr_assert_eq(gobin_func_find(b, func, &f), 0, "%s", func);
	return gobin_sig_args(b, &f, params, a, 16, err, errlen);
}

Test(gobin, sig_syntax)
{
	struct gobin *b = open_fixture("args_s");
	struct gobin_arg a[16];
	char err[512];

	/* grouped names; unnamed; empty */
	cr_assert_eq(sig(b, "main.many", "a, b, c int, d int", a, err, sizeof(err)), 4, "%s", err);
	cr_expect_str_eq(a[1].name, "b");
	cr_expect_str_eq(a[2].type_name, "int");
	expect_piece(&a[3], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);
	cr_assert_eq(sig(b, "main.misc", "bool, *int, string", a, err, sizeof(err)), 3, "%s", err);
	cr_expect_str_eq(a[0].name, "");
	cr_expect_eq(a[2].type, GTR_TYPE_STRING);
	expect_piece(&a[2], 1, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);
	cr_expect_eq(sig(b, "main.main", "", a, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(sig(b, "main.main", "  ", a, err, sizeof(err)), 0, "%s", err);

	/* type forms (main.ptrs has room for 32 bytes of arguments) */
	cr_assert_eq(sig(b, "main.ptrs", "m map[string][]int, ch <-chan struct{}, "
			 "fn func(a, b int) (int, error), q *net/http.Request",
			 a, err, sizeof(err)), 4, "%s", err);
	cr_expect_str_eq(a[0].type_name, "map[string][]int");
	cr_expect_str_eq(a[1].type_name, "<-chan struct{}");
	cr_expect_str_eq(a[2].type_name, "func(a, b int) (int, error)");
	cr_expect_str_eq(a[3].type_name, "*net/http.Request");
	for (int i = 0; i < 4; i++) {
		static const int regs[4] = {
			GOBIN_MREG_RAX, GOBIN_MREG_RBX, GOBIN_MREG_RCX, GOBIN_MREG_RDI,
		};

		cr_expect_eq(a[i].type, GTR_TYPE_PTR, "%d", i);
		expect_piece(&a[i], 0, GOBIN_LOC_REG, regs[i], 8);
	}
	cr_assert_eq(sig(b, "main.arrays", "arr [3]int, one [1]int32, x int, "
			 "xs ...byte", a, err, sizeof(err)), 4, "%s", err);
	expect_piece(&a[0], 0, GOBIN_LOC_STACK, 8, 8);
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 4);
	cr_expect_str_eq(a[3].type_name, "[]byte");
	cr_expect_eq(a[3].npieces, 3);
	cr_assert_eq(sig(b, "main.arrays", "e error, v any, w interface{ M() }, "
			 "d time.Duration", a, err, sizeof(err)), 4, "%s", err);
	expect_piece(&a[2], 1, GOBIN_LOC_REG, GOBIN_MREG_R8, 8);
	expect_piece(&a[3], 0, GOBIN_LOC_REG, GOBIN_MREG_R9, 8);
	cr_expect_eq(a[3].type, GTR_TYPE_INT);
	/* a struct: fields laid out with Go's alignment, split in registers */
	cr_assert_eq(sig(b, "main.stackmix", "s struct{ a int8; b int64; c bool "
			 "`json:\"c\"` }, f float64, x int", a, err, sizeof(err)),
		     3, "%s", err);
	cr_expect_eq(a[0].size, 24);
	cr_expect_eq(a[0].npieces, 3);
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 1);
	expect_piece(&a[0], 1, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);
	expect_piece(&a[0], 2, GOBIN_LOC_REG, GOBIN_MREG_RCX, 1);
	cr_expect_eq(a[1].pieces[0].kind, GOBIN_LOC_REG);
	cr_expect(!gobin_piece_readable(&a[1].pieces[0]));  /* float: not read */
	cr_expect_eq(a[1].pieces[0].mreg, GOBIN_MREG_XMM0);
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);

	/* methods: the pointer receiver from the symbol */
	cr_assert_eq(sig(b, "main.(*T).M", "x int, s string", a, err, sizeof(err)), 3,
		     "%s", err);
	cr_expect_str_eq(a[0].name, "recv");
	cr_expect_str_eq(a[0].type_name, "*T");
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RCX, 8);
	cr_assert_eq(sig(b, "main.T.V", "recv struct{ a int; b string }, y int32",
			 a, err, sizeof(err)), 2, "%s", err);
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 4);
	cr_assert_eq(sig(b, "main.main.func1", "i int", a, err, sizeof(err)), 1, "%s", err);
	gobin_close(b);
}

/* A slice's element size comes from its element type (DWARF or the
 * signature), in the binary's own words: one value per element, 0 for
 * aggregates and interfaces. */
Test(gobin, slice_elem_size_from_type)
{
	struct gobin *b = open_fixture("args");
	struct gobin_arg a[16];
	struct gobin_func f;
	char err[512];

	cr_assert_eq(gobin_func_find(b, "main.arrays", &f), 0);
	cr_assert_eq(gobin_func_args(b, &f, a, 16), 5);
	cr_expect_eq(a[3].elem_size, 1, "[]byte");
	cr_expect_eq(a[0].elem_size, 0, "[3]int is no slice");
	gobin_close(b);

	b = open_fixture("args_s");
	cr_assert_eq(sig(b, "main.many", "xs []int, ss []string, cs []complex64",
			 a, err, sizeof(err)), 3, "%s", err);
	cr_expect_eq(a[0].elem_size, 8);
	cr_expect_eq(a[1].elem_size, 16);
	cr_expect_eq(a[2].elem_size, 8);
	cr_assert_eq(sig(b, "main.many", "ps []*int, ts []struct{ a int }, "
			 "es []error", a, err, sizeof(err)), 3, "%s", err);
	cr_expect_eq(a[0].elem_size, 8);
	cr_expect_eq(a[1].elem_size, 0);
	cr_expect_eq(a[2].elem_size, 0);
	cr_assert_eq(sig(b, "main.many", "n int, xs ...uint16", a, err,
			 sizeof(err)), 2, "%s", err);
	cr_expect_eq(a[1].elem_size, 2);
	gobin_close(b);

	b = open_fixture("args_386s");
	cr_assert_eq(sig(b, "main.many", "xs []int, ss []string, bs []int64",
			 a, err, sizeof(err)), 3, "%s", err);
	cr_expect_eq(a[0].elem_size, 4);
	cr_expect_eq(a[1].elem_size, 8);
	cr_expect_eq(a[2].elem_size, 8);
	gobin_close(b);
}

Test(gobin, sig_errors_say_what_to_write)
{
	struct gobin *b = open_fixture("args_s");
	struct gobin_arg a[16];
	char err[512];

	cr_expect_eq(sig(b, "main.structarg", "t main.T, x int", a, err, sizeof(err)),
		     -EINVAL);
	cr_expect_str_eq(err, "signature 'main.structarg(t main.T, x int)': the size of type "
			 "'main.T' is not known without DWARF, nor from the binary's runtime "
			 "type descriptors, which hold no type of that name (a named type is "
			 "written with its package path, as net/http.Request); write its underlying type "
			 "instead (e.g. int, string, *main.T, struct{ a int; b string })");
	cr_expect_eq(sig(b, "main.T.V", "y int32", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.T.V(y int32)': main.T.V has a value receiver "
			 "of type T, whose size is not known without DWARF; write it first "
			 "and name it recv (the name marks it as the receiver), e.g. "
			 "'main.T.V(recv struct{ a int; b string }, ...)' or "
			 "'main.T.V(recv int, ...)'");
	cr_expect_eq(sig(b, "main.ints", "a int, *int8", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a int, *int8)': mixed named and unnamed "
			 "parameters ('*int8'); name all or none");
	cr_expect_eq(sig(b, "main.ints", "a int, int8", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a int, int8)': parameter 'int8' has no type");
	cr_expect_eq(sig(b, "main.ints", "a, b", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a, b)': the size of type 'a' is not known "
			 "without DWARF, nor from the binary's runtime type descriptors, which "
			 "hold no type of that name (a named type is written with its package "
			 "path, as net/http.Request); write its underlying type instead (e.g. int, string, "
			 "*a, struct{ a int; b string })");
	cr_expect_eq(sig(b, "main.ints", "a int,", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a int,)': empty parameter at column 7");
	cr_expect_eq(sig(b, "main.ints", "a map[string", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a map[string)': unbalanced brackets");
	cr_expect_eq(sig(b, "main.ints", "a [n]int", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a [n]int)': array length at column 4 "
			 "must be a number (at most 1048576)");
	cr_expect_eq(sig(b, "main.ints", "a int int", a, err, sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a int int)': unexpected 'int' after type "
			 "int at column 7");
	/* more bytes than the function's pclntab argument area */
	cr_expect_eq(sig(b, "main.ints", "a, b, c, d, e, f [8]int", a, err,
			 sizeof(err)), -EINVAL);
	cr_expect_str_eq(err, "signature 'main.ints(a, b, c, d, e, f [8]int)': these "
			 "parameters take 384 bytes but main.ints has only 24 bytes of "
			 "arguments and results (pclntab); check the types");
	gobin_close(b);
}

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

/* ------------------------------------------------------------ vs debug/gosym */

/*
 * Compares the whole function table with Go's debug/gosym
 * (tests/fixtures/gobin/gosym.go): same functions in the same order with
 * the same entries and ends.
 */
struct func_vec {
	struct gobin_func *v;
	size_t n;
};

static int collect_cb(const struct gobin_func *f, void *ctx)
{
	struct func_vec *fv = ctx;

	fv->v[fv->n++] = *f;
	return 0;
}

static void check_against_gosym(const char *path)
{
	struct func_vec fv = { 0 };
	char cmd[2048], line[1024];
	const char *src = getenv("GOTRACE_SRC");
	char err[512];
	struct gobin *b = gobin_open(path, err, sizeof(err));
	size_t i = 0, bad = 0;
	FILE *f;

	cr_assert_not_null(b, "%s", err);
	fv.v = calloc(gobin_func_count(b) + 1, sizeof(*fv.v));
	gobin_func_each(b, NULL, collect_cb, &fv);
	snprintf(cmd, sizeof(cmd), "cd '%s/tests/fixtures/gobin' && %s run gosym.go '%s'",
		 src ? src : ".", gocmd(), path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long entry, end;
		char name[900];
		const struct gobin_func *g;

		cr_assert_eq(sscanf(line, "%llx %llx %899[^\n]", &entry, &end, name), 3,
			     "%s", line);
		cr_assert_lt(i, gobin_func_count(b), "%s: gosym has more functions", path);
		g = &fv.v[i++];
		if (g->entry != entry || g->end != end || strcmp(g->name, name)) {
			if (bad++ < 5)
				cr_expect_fail("%s: function %zu: gotrace %s %#llx-%#llx, "
					       "gosym %s %#llx-%#llx", path, i - 1, g->name,
					       (unsigned long long)g->entry,
					       (unsigned long long)g->end, name, entry, end);
		}
	}
	cr_assert_eq(pclose(f), 0, "%s failed", cmd);
	cr_expect_eq(bad, 0, "%s: %zu of %zu functions differ", path, bad, i);
	cr_expect_eq(i, gobin_func_count(b), "%s: gosym %zu functions, gotrace %zu",
		     path, i, gobin_func_count(b));
	cr_log_info("%s: %zu functions equal to debug/gosym's", path, i);
	free(fv.v);
	gobin_close(b);
}

Test(gobin, funcs_match_debug_gosym)
{
	static const char *const names[] = {
		"args", "args_s", "args_pie", "args_386s", "args_arm64s", "args_ext",
		"args_extpie",
	};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		if (!exists(fix(names[k])))
			cr_assert_fail("fixture %s was not built", names[k]);
		check_against_gosym(fix(names[k]));
	}
}

/* Debian's own stripped Go programs: age (PIE, cgo) and caddy. */
static void check_debian_program(const char *path, const char *func)
{
	char err[512], out[4096], cmd[512], want[64];
	struct gobin_func f;
	struct gobin *b;
	const char *k, *v;
	char *p;
	size_t n = 0;

	if (!exists(path) && getenv("CI") && !strcmp(getenv("CI"), "true"))
		cr_assert_fail("%s not installed (make deps installs it)", path);
	if (!exists(path))
		cr_assert_fail("%s not installed (make deps)", path);
	b = gobin_open(path, err, sizeof(err));
	cr_assert_not_null(b, "%s", err);
	cr_expect(gobin_is_stripped(b), "%s", path);
	cr_expect_not(gobin_has_dwarf(b), "%s", path);
	cr_expect_eq(gobin_func_find(b, func, &f), 0, "%s: %s", path, func);
	/* `go version -m FILE`: "FILE: go1.19.8", "\tpath\tP", "\tbuild\tK=V" */
	snprintf(cmd, sizeof(cmd), "%s version -m '%s'", gocmd(), path);
	cr_assert_eq(run(cmd, out, sizeof(out)), 0);
	cr_assert_eq(sscanf(strstr(out, ": ") + 2, "%63s", want), 1);
	cr_expect_str_eq(gobin_go_version(b), want, "%s", path);
	p = strstr(out, "\tpath\t");
	cr_assert_not_null(p);
	p += 6;
	cr_expect(!strncmp(p, gobin_main_path(b), strlen(gobin_main_path(b))) &&
		  p[strlen(gobin_main_path(b))] == '\n' && gobin_main_path(b)[0],
		  "%s: main path '%s'", path, gobin_main_path(b));
	for (; gobin_build_setting(b, n, &k, &v) == 0; n++) {
		char line[512];

		snprintf(line, sizeof(line), "\tbuild\t%s=%s\n", k, v);
		cr_expect(strstr(out, line), "%s: build setting %s=%s not in:\n%s",
			  path, k, v, out);
	}
	cr_expect_gt(n, 3, "%s: %zu build settings", path, n);
	gobin_close(b);
	check_against_gosym(path);
}

Test(gobin, debian_age_stripped_pie)
{
	struct gobin *b;
	char err[512];

	check_debian_program("/usr/bin/age", "main.main");
	b = gobin_open("/usr/bin/age", err, sizeof(err));
	cr_assert_not_null(b, "%s", err);
	cr_expect(gobin_is_pie(b));
	cr_expect_str_eq(gobin_main_path(b), "filippo.io/age/cmd/age");
	gobin_close(b);
}

Test(gobin, debian_caddy_stripped)
{
	check_debian_program("/usr/bin/caddy", "net/http.(*conn).serve");
}

/* Build info of the fixtures: what `go version -m` prints. */
Test(gobin, buildinfo_settings)
{
	struct gobin *b = open_fixture("args_386");
	const char *k, *v;
	bool arch = false, cgo = false;

	cr_expect_str_eq(gobin_main_path(b), "command-line-arguments");
	cr_expect_str_eq(gobin_main_module(b), "");
	for (size_t i = 0; gobin_build_setting(b, i, &k, &v) == 0; i++) {
		arch |= !strcmp(k, "GOARCH") && !strcmp(v, "386");
		cgo |= !strcmp(k, "CGO_ENABLED") && !strcmp(v, "0");
	}
	cr_expect(arch && cgo);
	cr_expect_eq(gobin_build_setting(b, 100, &k, &v), -ENOENT);
	gobin_close(b);
	b = open_fixture("args_pie");
	for (size_t i = 0; gobin_build_setting(b, i, &k, &v) == 0; i++)
		if (!strcmp(k, "-ldflags"))
			cr_expect_str_eq(v, "-s -w"); /* quoted in modinfo */
		else if (!strcmp(k, "-buildmode"))
			cr_expect_str_eq(v, "pie");
	gobin_close(b);
}

/* ------------------------------------------------------------ --list */

/* Runs gotrace_list into a string (free it); *rc gets the exit status. */
static char *list_of(const char *path, const char *dbg, const char *glob,
		     bool json, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	*rc = gotrace_list(path, dbg, glob, json, f);
	fclose(f);
	return buf;
}

Test(list, text_with_dwarf)
{
	char want[320], ver[256];
	int rc, listed = 0, matched = -1, total = -1, functions = -2;
	char *out = list_of(fix("args"), NULL, "main.*", false, &rc);
	const char *l;

	cr_assert_eq(rc, 0);
	toolchain_version(ver, sizeof(ver));
	snprintf(want, sizeof(want), "\ncompiler     gc %s (from buildinfo)\n", ver);
	cr_expect(strstr(out, want), "%s not in:\n%s", want, out);
	cr_expect(strstr(out, "arch         x86-64, ABIInternal calling convention\n"));
	cr_expect(strstr(out, "main path    command-line-arguments\n"), "%s", out);
	cr_expect(strstr(out, "\nmain.misc(b bool, p *int, s string, m main.MyInt) int\n"
			 "    ABIInternal at 0x"), "%s", out);
	cr_expect(strstr(out, "\nmain.results(a int, s string) (int, string, error)\n"));
	cr_expect(strstr(out, "    goarg3   s            string               RCX,RDI\n"),
		  "%s", out);
	cr_expect(strstr(out, "    goarg2   f            float64              X0"
			 "               not captured: float register"), "%s", out);
	cr_expect(strstr(out, "    goarg9   s            string               SP+8,SP+16\n"));
	/*
	 * The instance's name is pclntab's (see pclntab_elides_type_args).
	 * The shape types are DWARF typedefs ".paramN" (src/cmd/internal/
	 * dwarf/dwarf.go, putparamtypes) of the shape ("go.shape.int_0" in
	 * Go 1.19, "go.shape.int" later): shown as the type the shape
	 * stands for. gobin names the dictionary it adds unsafe.Pointer;
	 * Go 1.27's DWARF lists it itself, as a pointer to the dictionary's
	 * words (dwarf_lists_dict).
	 */
	snprintf(want, sizeof(want), "\nmain.gsum[%s](.dict %s, xs []int, k int, s string) int\n",
		 pclntab_elides_type_args() ? "..." : "go.shape.int",
		 dwarf_lists_dict() ? "*[4]uintptr" : "unsafe.Pointer");
	cr_expect(strstr(out, want), "%s not in:\n%s", want, out);
	/* a function only ever inlined is listed after, by its copies */
	cr_expect(strstr(out, "\nmain.str (no out-of-line body)\n    inlined "), "%s", out);
	/* "N of M functions match": N functions listed, of the M of the header
	 * (the function table's: not the functions only ever inlined) */
	for (l = out; l; l = strchr(l, '\n')) {
		const char *eol;

		l += *l == '\n';
		eol = strchrnul(l, '\n');
		listed += !strncmp(l, "main.", 5) &&
			  !memmem(l, (size_t)(eol - l), "(no out-of-line body)", 21);
		if (sscanf(l, "functions    %d\n", &total) != 1)
			sscanf(l, "%d of %d functions match 'main.*'\n", &matched, &functions);
	}
	cr_expect_gt(listed, 0);
	cr_expect_eq(matched, listed, "%d of %d listed\n%s", matched, listed, out);
	cr_expect_eq(functions, total, "%d of %d functions\n%s", functions, total, out);
	cr_expect_null(strstr(out, "runtime.main"));
	free(out);
}

Test(list, stripped_and_exact_names)
{
	int rc;
	char *out = list_of(fix("args_pie"), NULL, "main.Box[...].Put", false, &rc);

	cr_assert_eq(rc, 1, "fnmatch brackets: no match expected\n%s", out);
	free(out);
	/* an exact name with brackets matches although it is no glob */
	out = list_of(fix("args_pie"), NULL, "main.(*Box[...]).Put", false, &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, pclntab_elides_type_args() ?
			 "\nmain.(*Box[...]).Put\n    ABIInternal at 0x" :
			 "\nmain.(*Box[go.shape.string]).Put\n    ABIInternal at 0x"),
		  "%s", out);
	cr_expect(strstr(out, "\n1 of "), "one instance: %s", out);
	cr_expect(strstr(out, "pie          yes\n"));
	cr_expect(strstr(out, "dwarf        no: signatures unknown"));
	free(out);
	out = list_of(fix("args_arm64"), NULL, "main.wide", false, &rc);
	cr_assert_eq(rc, 0);
	cr_expect(strstr(out, "arm64 program: listed only"));
	cr_expect(strstr(out, "    goarg16  s            string               SP+8,SP+16\n"),
		  "%s", out);
	cr_expect(strstr(out, "    goarg18  y            float64              F0\n"), "%s", out);
	free(out);
}

Test(list, errors)
{
	int rc;
	char *out = list_of("/nonexistent/app", NULL, NULL, false, &rc);

	cr_expect_eq(rc, 1);
	cr_expect_str_eq(out, "");
	free(out);
	out = list_of(fix("args_s"), fix("args_386.debug"), NULL, false, &rc);
	cr_expect_eq(rc, 1);
	free(out);
	out = list_of(fix("args_s"), NULL, "main.nosuch", true, &rc);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(out, "\"matched\":0"), "%s", out);
	free(out);
}

/* The JSON document parses and holds what the text says. */
Test(list, json_parses)
{
	char path[1024], cmd[2048], res[256];
	int rc;
	char *out = list_of(fix("args_nodbg"), fix("args.debug"), "main.*", true, &rc);
	FILE *f;

	cr_assert_eq(rc, 0);
	snprintf(path, sizeof(path), "%s/list.json", fixdir());
	f = fopen(path, "w");
	fputs(out, f);
	fclose(f);
	free(out);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
		 "f={x[\"name\"]: x for x in d[\"functions\"]}; m=f[\"main.floatmid\"]; "
		 "print(d[\"binary\"][\"debuginfo\"].endswith(\"args.debug\"), d[\"matched\"] == len(d[\"functions\"]), "
		 "m[\"signature\"], m[\"params\"][1][\"locations\"], m[\"params\"][1][\"capture\"], "
		 "m[\"params\"][2][\"locations\"], m[\"results\"][0][\"kind\"], "
		 "d[\"binary\"][\"build_settings\"][\"GOARCH\"])' '%s'", path);
	cr_assert_eq(run(cmd, res, sizeof(res)), 0, "%s", res);
	cr_expect_str_eq(res, "True True main.floatmid(a int, f float64, b int) float64 "
			 "['X0'] False ['RBX'] float amd64\n");
}
