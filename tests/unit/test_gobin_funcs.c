/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/gobin's function table and facts: the Go version,
 * architecture, PIE and build ids of each fixture; functions against
 * `go tool nm` and Go's debug/gosym (gosym.go), file offsets through
 * PT_LOAD, globs and suggestions; build settings against
 * `go version -m`; Debian's stripped age and caddy
 * (fixtures: gobin_fixture.h).
 */
#include "gobin_fixture.h"

#include <fcntl.h>

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
