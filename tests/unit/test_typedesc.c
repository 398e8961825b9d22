/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/typedesc.c: types from the runtime type
 * descriptors, which stripped binaries keep, against DWARF of the same
 * program. Builds tests/fixtures/httpserver (net/http: hundreds of named
 * struct types) with the toolchain GOTRACE_GO names, with DWARF and as a
 * stripped PIE, once; `make unit` runs it per Go toolchain of
 * tests/toolchains. Run from the repository root (or set GOTRACE_SRC).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "dwarf_int.h"
#include "gofacts.h"

static char dir[] = "/tmp/gotrace-test-typedesc.XXXXXX";
static char with_dwarf[256], stripped[256];

/* Builds the fixture twice (with DWARF, stripped PIE) into dir. */
static void build(void)
{
	const char *go = getenv("GOTRACE_GO"), *src = getenv("GOTRACE_SRC");
	char cmd[4096];

	cr_assert(go && *go, "set GOTRACE_GO to the go command (make unit does)");
	cr_assert(mkdtemp(dir));
	snprintf(with_dwarf, sizeof(with_dwarf), "%s/http", dir);
	snprintf(stripped, sizeof(stripped), "%s/http_s", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/tests/fixtures/httpserver' && env CGO_ENABLED=0 %s build "
		 "-o '%s' . && env CGO_ENABLED=0 %s build -buildmode=pie "
		 "-ldflags='-s -w' -o '%s' .", src ? src : ".", go, with_dwarf,
		 go, stripped);
	cr_assert_eq(system(cmd), 0, "%s failed", cmd);
}

static void clean(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[sizeof(dir) - 7] != 'X' && system(cmd) != 0)
		cr_log_warn("could not remove %s", dir);
}

TestSuite(typedesc, .init = build, .fini = clean);

/* Named struct types of DWARF: name -> DIE offset. */
struct dw_structs {
	char **names;
	Dwarf_Off *offs;
	size_t n, cap;
};

static int collect_struct(Dwarf_Die *die, void *ctx)
{
	struct dw_structs *s = ctx;
	const char *n = dwarf_diename(die);

	if (dwarf_tag(die) != DW_TAG_structure_type || !n || !strchr(n, '.'))
		return 0;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->names = realloc(s->names, s->cap * sizeof(*s->names));
		s->offs = realloc(s->offs, s->cap * sizeof(*s->offs));
		cr_assert(s->names && s->offs);
	}
	s->names[s->n] = strdup(n);
	s->offs[s->n++] = dwarf_dieoffset(die);
	return 0;
}

static bool dw_find(const struct dw_structs *s, const char *name, Dwarf_Off *off)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name)) {
			*off = s->offs[i];
			return true;
		}
	return false;
}

/* Whether struct DIE `st` has field i named `name` at `off`. */
static bool dw_field(Dwarf_Die *st, size_t i, const char *name, uint64_t off)
{
	Dwarf_Die m;
	size_t k = 0;

	if (dwarf_child(st, &m) != 0)
		return false;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		if (k++ == i) {
			const char *mn = dwarf_diename(&m);

			return mn && !strcmp(mn, name) &&
			       gobin_die_udata(&m, DW_AT_data_member_location, ~0ull) == off;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

static size_t dw_nfields(Dwarf_Die *st)
{
	Dwarf_Die m;
	size_t k = 0;

	if (dwarf_child(st, &m) != 0)
		return 0;
	do
		k += dwarf_tag(&m) == DW_TAG_member;
	while (dwarf_siblingof(&m, &m) == 0);
	return k;
}

Test(typedesc, struct_layouts_equal_dwarfs)
{
	char err[512];
	struct gobin *b = gobin_open(with_dwarf, err, sizeof(err));
	struct dw_structs s = { 0 };
	size_t compared = 0, bad = 0;
	Dwarf *dw;

	cr_assert(b, "%s", err);
	dw = gobin_dwarf_open(b);
	cr_assert(dw);
	gobin_dwarf_each_top(dw, collect_struct, &s);
	for (size_t i = 0; i < gobin_td_count(b); i++) {
		uint64_t at;
		const char *name = gobin_td_named(b, i, &at);
		struct gobin_td d;
		Dwarf_Off off;
		Dwarf_Die st;

		cr_assert_eq(gobin_td_read(b, at, &d), 0, "%s", name);
		if (d.kind != 25 || !d.len || !dw_find(&s, name, &off) ||
		    !dwarf_offdie(dw, off, &st))
			continue;
		compared++;
		if (dw_nfields(&st) != d.len) {
			cr_log_error("%s: %zu fields in DWARF, %llu in its descriptor",
				     name, dw_nfields(&st), (unsigned long long)d.len);
			bad++;
			continue;
		}
		for (size_t k = 0; k < d.len; k++) {
			char fn[256];
			uint64_t ft, fo;

			if (gobin_td_field(b, &d, k, fn, sizeof(fn), &ft, &fo) ||
			    !dw_field(&st, k, fn, fo)) {
				cr_log_error("%s: field %zu (%s at %llu) differs from DWARF",
					     name, k, fn, (unsigned long long)fo);
				bad++;
				break;
			}
		}
	}
	cr_expect_eq(bad, 0, "%zu of %zu struct types differ", bad, compared);
	cr_expect_geq(compared, 50, "only %zu named struct types compared", compared);
	for (size_t i = 0; i < s.n; i++)
		free(s.names[i]);
	free(s.names);
	free(s.offs);
	gobin_close(b);
}

Test(typedesc, stripped_finds_what_dwarf_finds)
{
	char err[512];
	struct gobin *d = gobin_open(with_dwarf, err, sizeof(err));
	struct gobin *s = gobin_open(stripped, err, sizeof(err));
	struct gobin_td a, c;
	uint64_t x, y;

	cr_assert(d && s, "%s", err);
	cr_assert(!gobin_has_dwarf(s));
	x = gobin_td_find(d, "net/http.Request");
	y = gobin_td_find(s, "net/http.Request");
	cr_assert(x && y, "net/http.Request not found (%#llx, %#llx)",
		  (unsigned long long)x, (unsigned long long)y);
	cr_assert_eq(gobin_td_read(d, x, &a), 0);
	cr_assert_eq(gobin_td_read(s, y, &c), 0);
	cr_expect_eq(a.size, c.size);
	cr_expect_eq(a.len, c.len);
	cr_expect_str_eq(c.name, "http.Request");
	cr_expect_eq(gobin_td_count(s), gobin_td_count(d));
	cr_expect_eq(gobin_td_find(s, "net/http.NoSuchType"), 0);
	gobin_close(d);
	gobin_close(s);
}

/*
 * An interface's dynamic type named from its descriptor alone (stripped
 * binaries) as DWARF names it: every named type DWARF's runtime type
 * table knows.
 */
Test(typedesc, names_by_address_equal_dwarfs)
{
	char err[512];
	struct gobin *d = gobin_open(with_dwarf, err, sizeof(err));
	size_t n = 0, same = 0;
	const char *name, *dw, *td;
	uint64_t at;

	cr_assert(d, "%s", err);
	for (size_t i = 0; (name = gobin_td_named(d, i, &at)) != NULL; i++) {
		if (!(dw = gobin_type_name_at(d, at)))
			continue;
		td = gobin_td_name_at(d, at);
		n++;
		same += td && !strcmp(td, dw);
		cr_expect(td && !strcmp(td, name), "%#llx: %s, not %s",
			  (unsigned long long)at, td ? td : "NULL", name);
	}
	cr_assert_gt(n, 100);
	/* DWARF's spelling and the descriptor's agree but for a few: a
	 * function's local types (DWARF adds "·N"; %T does not), escaped
	 * package paths (DWARF writes "v1%2e0"), and shapes, never the
	 * dynamic type of a value (2.5% of go1.26's net/http program) */
	cr_expect_geq(same * 100, n * 97, "%zu of %zu named alike", same, n);
	cr_expect_null(gobin_td_name_at(d, 1));
	gobin_close(d);
}

/* Byte offset of member `name` of the DWARF struct named `st`; -1. */
static long member_off(struct gobin *b, const char *st, const char *name)
{
	struct dw_structs s = { 0 };
	Dwarf *dw = gobin_dwarf_open(b);
	Dwarf_Off off;
	Dwarf_Die die, m;
	long r = -1;

	gobin_dwarf_each_top(dw, collect_struct, &s);
	if (dw_find(&s, st, &off) && dwarf_offdie(dw, off, &die) &&
	    dwarf_child(&die, &m) == 0) {
		do {
			const char *mn = dwarf_diename(&m);

			if (dwarf_tag(&m) == DW_TAG_member && mn && !strcmp(mn, name))
				r = (long)gobin_die_udata(&m, DW_AT_data_member_location, 0);
		} while (dwarf_siblingof(&m, &m) == 0);
	}
	for (size_t i = 0; i < s.n; i++)
		free(s.names[i]);
	free(s.names);
	free(s.offs);
	return r;
}

/* gofacts.c's rows for this toolchain against its DWARF. */
Test(typedesc, facts_match_dwarf)
{
	char err[512];
	struct gobin *b = gobin_open(with_dwarf, err, sizeof(err));
	const char *ver;
	const struct gofact_moddata *md;
	const struct gofact_typedesc *L;
	const char *ty;
	int minor;

	cr_assert(b, "%s", err);
	ver = gobin_go_version(b);
	cr_assert(sscanf(ver, "go1.%d", &minor) == 1, "%s", ver);
	md = gofact_moduledata(minor);
	L = gofact_typedesc(minor, 8);
	cr_assert(md && L, "no rows for %s", ver);
	cr_expect_eq(member_off(b, "runtime.moduledata", "types"), md->types * 8L);
	cr_expect_eq(member_off(b, "runtime.moduledata", "etypes"), md->etypes * 8L);
	ty = member_off(b, "internal/abi.Type", "Str") >= 0 ? "internal/abi.Type" :
	     "runtime._type";
	cr_expect_eq(member_off(b, ty, minor >= 21 ? "Str" : "str"), L->str);
	cr_expect_eq(member_off(b, ty, minor >= 21 ? "Kind_" : "kind"), L->kind);
	cr_expect_eq(member_off(b, ty, minor >= 21 ? "TFlag" : "tflag"), L->tflag);
	cr_expect_eq(member_off(b, ty, minor >= 21 ? "PtrToThis" : "ptrToThis") + 4,
		     L->hdr);
	gobin_close(b);
}
