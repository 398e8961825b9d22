/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/list.c, gotrace-record --list: the text and JSON
 * of the fixtures' functions with and without DWARF (fixtures:
 * gobin_fixture.h).
 */
#include "gobin_fixture.h"

#include "list.h"

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
