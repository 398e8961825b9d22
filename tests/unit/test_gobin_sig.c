/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/sig.c: argument locations from user signatures on
 * stripped builds against DWARF's of the same program, the signature
 * syntax, slice element sizes, and the errors that say what to write
 * (fixtures: gobin_fixture.h).
 */
#include "gobin_fixture.h"


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
	ng = gobin_sig_args(sc->st, &sf, text, NULL, got, 32, err, sizeof(err));
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
	return gobin_sig_args(b, &f, params, NULL, a, 16, err, errlen);
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
	cr_expect_eq(a[0].elem_size, 8, "[3]int: its elements");
	cr_expect_eq(gobin_arg_array(&a[0]), GOBIN_ARRAY_STACK, "[3]int lies on the stack");
	cr_expect_str_eq(a[0].type_name, "[3]int");
	cr_expect_eq(gobin_arg_array(&a[1]), GOBIN_ARRAY_REG, "[1]int32 is in a register");
	cr_expect_eq(gobin_arg_array(&a[3]), GOBIN_ARRAY_NONE, "[]byte is no array");
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
	/* a pointer receiver written as a parameter: it is implicit (the
	 * argument area's size varies between releases) */
	cr_expect_eq(sig(b, "main.(*T).M", "t [2]int, x int, s string", a, err,
			 sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "signature 'main.(*T).M(t [2]int, x int, s string)': these "
			 "parameters take 48 bytes but main.(*T).M has only ") == err, "%s", err);
	cr_expect(strstr(err, " bytes of arguments and results (pclntab); the receiver is "
			 "implicit (gotrace passes it first, as recv): write M(x int, s string)"),
		  "%s", err);
	gobin_close(b);
}

/* --------------------------------------- struct literals in a signature */

/*
 * The field paths of a struct a signature writes as a literal, without
 * DWARF, against DWARF's of the same parameter: the same fields captured
 * whole, and each path at the same register, offset and type.
 */
static void check_literal_paths(const char *dwarf_fixture, const char *stripped,
				const char *func, const char *root, const char *literal)
{
	struct gobin *dw = open_fixture(dwarf_fixture), *st = open_fixture(stripped);
	char want[GOBIN_STRUCT_FIELDS][GOBIN_PATH_LEN], got[GOBIN_STRUCT_FIELDS][GOBIN_PATH_LEN];
	char err[512], ptr[256];
	struct gobin_func f;
	int nw, ng;

	cr_assert_eq(gobin_func_find(dw, func, &f), 0, "%s", func);
	nw = gobin_struct_fields(dw, &f, root, want, GOBIN_STRUCT_FIELDS);
	ng = gobin_struct_fields_td(st, literal, root, got, GOBIN_STRUCT_FIELDS);
	cr_assert_gt(nw, 0, "%s %s", dwarf_fixture, func);
	cr_assert_eq(ng, nw, "%s: %s", stripped, literal);
	snprintf(ptr, sizeof(ptr), "*%s", literal);
	for (int i = 0; i < nw; i++) {
		struct gobin_path a, b, c;

		cr_expect_str_eq(got[i], want[i], "%s", literal);
		cr_assert_eq(gobin_field_path(dw, &f, want[i], &a, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(gobin_field_path_td(st, literal, got[i], &b, err, sizeof(err)), 0,
			     "%s", err);
		cr_expect(a.value_root && b.value_root && a.direct && b.direct, "%s", got[i]);
		cr_expect_eq(b.slot, a.slot, "%s", got[i]);
		cr_expect_eq(b.value_off, a.value_off, "%s", got[i]);
		cr_expect_eq(b.type, a.type, "%s", got[i]);
		cr_expect_eq(b.size, a.size, "%s", got[i]);
		/* through a pointer: no register, the field's offset in memory */
		cr_assert_eq(gobin_field_path_td(st, ptr, got[i], &c, err, sizeof(err)), 0,
			     "%s", err);
		cr_expect(!c.value_root && !c.nderef, "%s", got[i]);
		cr_expect_eq(c.offset, a.value_off, "%s", got[i]);
		cr_expect_eq(c.type, a.type, "%s", got[i]);
	}
	gobin_close(dw);
	gobin_close(st);
}

Test(gobin, struct_literal_paths_match_dwarf)
{
	struct gobin *b;
	struct gobin_path p;
	char err[512];

	check_literal_paths("args", "args_s", "main.structarg", "t", "struct{a int; b string}");
	check_literal_paths("args", "args_s", "main.smallstruct", "s", "struct{ x, y int32 }");
	check_literal_paths("args_386", "args_386s", "main.structarg", "t",
			    "struct{a int; b string}");
	b = open_fixture("args_s");
	/* nested literals, a pointer field followed, and what is not there */
	cr_assert_eq(gobin_field_path_td(b, "struct{A int8; In struct{B, C string}; "
					 "P *struct{D, E int32}}", "v.In.C", &p, err,
					 sizeof(err)), 0, "%s", err);
	cr_expect(p.value_root && p.direct);
	cr_expect_eq(p.slot, 3);
	cr_expect_eq(p.value_off, 24);
	cr_expect_eq(p.type, GTR_TYPE_STRING);
	cr_assert_eq(gobin_field_path_td(b, "struct{A int8; In struct{B, C string}; "
					 "P *struct{D, E int32}}", "v.P.E", &p, err,
					 sizeof(err)), 0, "%s", err);
	cr_expect(p.value_root && !p.direct);
	cr_expect_eq(p.slot, 5);
	cr_expect_eq(p.value_off, 40);
	cr_expect_eq(p.offset, 4);
	cr_expect_eq(p.type, GTR_TYPE_INT);
	cr_expect_eq(p.size, 4);
	cr_assert_eq(gobin_field_path_td(b, "*struct{N *struct{X, Y int}}", "v.N.Y", &p, err,
					 sizeof(err)), 0, "%s", err);
	cr_expect_eq(p.nderef, 1);
	cr_expect_eq(p.deref[0], 0);
	cr_expect_eq(p.offset, 8);
	cr_expect_eq(gobin_field_path_td(b, "struct{X int}", "v.Z", &p, err, sizeof(err)),
		     -ENOENT);
	cr_expect_str_eq(err, "field path 'v.Z': struct{X int} has no field 'Z'");
	cr_expect_eq(gobin_field_path_td(b, "struct{X int}", "v.X.Y", &p, err, sizeof(err)),
		     -EINVAL);
	cr_expect_str_eq(err, "field path 'v.X.Y': 'Y' is not a field of a struct");
	gobin_close(b);
}
