/* SPDX-License-Identifier: MIT */
/*
 * gccgo programs (GCC 12): telling them from other ELF files, their
 * function table from the symbol table (gccgo writes no .gopclntab), Go
 * names in gccgo's spelling, and why a function is not there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gobin_int.h"

struct sym_collect {
	struct gobin_func *v;
	size_t n, cap;
	int err;
};

static int sym_collect_cb(const struct gobin *b, const GElf_Sym *sym,
			  const char *name, void *ctx)
{
	struct sym_collect *sc = ctx;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    sym->st_value == 0)
		return 0;
	if (sc->n == sc->cap) {
		const size_t cap = sc->cap ? sc->cap * 2 : 1024;
		struct gobin_func *v = realloc(sc->v, cap * sizeof(*v));

		if (!v) {
			sc->err = -ENOMEM;
			return 1;
		}
		sc->v = v;
		sc->cap = cap;
	}
	sc->v[sc->n++] = (struct gobin_func){
		.name = name,
		.entry = sym->st_value,
		.end = sym->st_size ? sym->st_value + sym->st_size : 0,
	};
	(void)b;
	return 0;
}

static int func_cmp_entry(const void *a, const void *b)
{
	const struct gobin_func *x = a, *y = b;

	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int gccgo_sym_cb(const struct gobin *b, const GElf_Sym *sym,
			const char *name, void *ctx)
{
	(void)b;
	(void)sym;
	(void)ctx;
	return strncmp(name, "__go_", 5) == 0 || strcmp(name, "runtime.main") == 0;
}

/*
 * The name of the libgo the dynamic section of `b` needs ("libgo.so.21"),
 * or NULL.
 */
static const char *needed_libgo(const struct gobin *b)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(b->elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize &&
				   i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *n;

			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED)
				continue;
			n = elf_strptr(b->elf, sh.sh_link, dyn.d_un.d_val);
			if (n && strncmp(n, "libgo.so", 8) == 0)
				return n;
		}
	}
	return NULL;
}

bool gobin_gccgo_detect(const struct gobin *b)
{
	return gobin_section(b, ".go_export", false, NULL) || needed_libgo(b) ||
	       gobin_each_symbol(b, gccgo_sym_cb, NULL) != 0;
}

int gobin_gccgo_load(struct gobin *b)
{
	struct sym_collect sc = { 0 };
	size_t out = 0;

	gobin_each_symbol(b, sym_collect_cb, &sc);
	if (sc.err) {
		free(sc.v);
		return sc.err;
	}
	if (sc.n)
		qsort(sc.v, sc.n, sizeof(*sc.v), func_cmp_entry);
	for (size_t i = 0; i < sc.n; i++) {
		if (out && sc.v[out - 1].entry == sc.v[i].entry &&
		    strcmp(sc.v[out - 1].name, sc.v[i].name) == 0)
			continue;
		sc.v[out++] = sc.v[i];
	}
	for (size_t i = 0; i < out; i++) {
		if (sc.v[i].end)
			continue;
		sc.v[i].end = sc.v[i].entry;
		for (size_t j = i + 1; j < out; j++) {
			if (sc.v[j].entry > sc.v[i].entry) {
				sc.v[i].end = sc.v[j].entry;
				break;
			}
		}
	}
	b->funcs = sc.v;
	b->nfuncs = out;
	if (out && b->stripped && !b->note[0])
		snprintf(b->note, sizeof(b->note), "a stripped gccgo program: "
			 "only its dynamic symbols are functions here (gccgo "
			 "writes no .gopclntab); build it without -s to probe "
			 "the others");
	return out ? 0 : -ENOENT;
}

/*
 * gccgo's spelling of `name` into out[outlen] (gobin_gccgo_name); whether
 * it fits.
 */
static bool mangle(const char *name, char *out, size_t outlen)
{
	const char *slash = strrchr(name, '/');
	const char *dot = strchr(slash ? slash : name, '.'), *s = name;
	size_t o = 0;

	if (!dot)
		return false;
	for (; *s && o + 3 < outlen; s++) {
		if (s < dot && (*s == '/' || *s == '.')) {
			out[o++] = '_';
			out[o++] = *s == '/' ? '1' : '0';
			continue;
		}
		/* "(*T).M" -> "T.M"; any other '*' is a glob's, kept, so
		 * that "main.big*" is no spelling of main.big */
		if (s > dot && (*s == '(' || *s == ')' ||
				(*s == '*' && s[-1] == '(')))
			continue;
		if (*s == '_')
			out[o++] = '_';
		else if (s > dot && !strncmp(s, ".func", 5) &&
			 s[5] >= '0' && s[5] <= '9' && s[-1] != '.')
			out[o++] = '.';
		out[o++] = *s;
	}
	out[o] = '\0';
	return !*s;
}

bool gobin_gccgo_name(const struct gobin *b, const char *name, char *out,
		      size_t outlen)
{
	const char *dot;
	char m[512];
	int n;

	if (gobin_func_find(b, name, NULL) == 0 || !mangle(name, m, sizeof(m)))
		return false;
	/* in m the package path holds no dot: the first one ends it */
	dot = strchr(m, '.');
	if (gobin_func_find(b, m, NULL) != 0 && dot && !strchr(dot + 1, '.')) {
		/* an //export'ed function: cgo renames it Cgoexp_NAME for
		 * gccgo (src/cmd/cgo/out.go, writeGccgoExports); C calls it
		 * through NAME of _cgo_export.c */
		n = snprintf(out, outlen, "%.*sCgoexp__%s", (int)(dot - m + 1),
			     m, dot + 1);
		if (n > 0 && (size_t)n < outlen && gobin_func_find(b, out, NULL) == 0)
			return true;
	}
	n = snprintf(out, outlen, "%s", m);
	return n > 0 && (size_t)n < outlen && strcmp(m, name) != 0;
}

/* The suffixes GCC gives a clone of a function, each before a number. */
static const char *const clone_kinds[] = { ".constprop.", ".isra.", ".part." };

bool gobin_func_gcc_clone(const struct gobin *b, const struct gobin_func *f)
{
	if (b->compiler != GOBIN_GCCGO)
		return false;
	for (size_t i = 0; i < sizeof(clone_kinds) / sizeof(clone_kinds[0]); i++) {
		const size_t lk = strlen(clone_kinds[i]);

		/* a Go identifier never starts with a digit: ".isra.0" is
		 * GCC's, not a method or field named isra */
		for (const char *s = strstr(f->name, clone_kinds[i]); s;
		     s = strstr(s + 1, clone_kinds[i]))
			if (s[lk] >= '0' && s[lk] <= '9')
				return true;
	}
	return false;
}

/*
 * Whether `s` is nothing but GCC's clone suffixes: one or more of
 * ".constprop.N", ".isra.N", ".part.N" (".constprop.0.isra.0").
 */
static bool only_clone_suffixes(const char *s)
{
	if (!*s)
		return false;
	while (*s) {
		size_t i = 0, lk = 0;

		while (i < sizeof(clone_kinds) / sizeof(clone_kinds[0]) &&
		       strncmp(s, clone_kinds[i], lk = strlen(clone_kinds[i])))
			i++;
		if (i == sizeof(clone_kinds) / sizeof(clone_kinds[0]) ||
		    s[lk] < '0' || s[lk] > '9')
			return false;
		for (s += lk; *s >= '0' && *s <= '9'; s++)
			;
	}
	return true;
}

/*
 * Where the dynamic loader of a Debian or Fedora system finds library
 * `lib` (the multiarch directories, then lib64 and lib), into out[len];
 * "LIBDIR/lib" when none of them has it.
 */
static void library_path(const char *lib, char *out, size_t len)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/i386-linux-gnu",
		"/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib64",
		"/lib",
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(out, len, "%s/%s", dirs[i], lib);
		if (access(out, R_OK) == 0)
			return;
	}
	snprintf(out, len, "LIBDIR/%s", lib);
}

/*
 * Names the GCC clones of function `name` of `b` (gobin_func_gcc_clone:
 * "main.mix.constprop.0" of main.mix, its name then clone suffixes only)
 * into buf[len], comma-separated;
 * returns how many there are.
 */
static int clones_of(const struct gobin *b, const char *name, char *buf,
		     size_t len)
{
	const size_t ln = strlen(name);
	size_t o = 0;
	int n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < b->nfuncs; i++) {
		const struct gobin_func *f = &b->funcs[i];

		/* main.mix.constprop.0, not main.mix..func1.constprop.0 (a
		 * clone of mix's closure) */
		if (strncmp(f->name, name, ln) || !only_clone_suffixes(f->name + ln) ||
		    !gobin_func_gcc_clone(b, f))
			continue;
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      n ? ", " : "", f->name);
		n++;
	}
	return n;
}

size_t gobin_func_missing_why(const struct gobin *b, const char *name,
			      char *buf, size_t len)
{
	const char *libgo = b->compiler == GOBIN_GCCGO ? needed_libgo(b) : NULL;
	char path[512], clones[512];
	int n = 0, nc;

	if (b->compiler != GOBIN_GCCGO || !len)
		return 0;
	nc = clones_of(b, name, clones, sizeof(clones));
	if (nc) {
		n = snprintf(buf, len, "GCC kept only %s of it with other "
			     "parameters (constants folded in, pieces passed "
			     "apart): %s; probe %s by name (%s values come from "
			     "its DWARF), or build with -gccgoflags=-fno-ipa-cp "
			     "-fno-ipa-sra to keep it as declared",
			     nc == 1 ? "a copy" : "copies", clones,
			     nc == 1 ? "it" : "them",
			     nc == 1 ? "its" : "each one's");
	} else if (b->note[0] && b->stripped) {
		n = snprintf(buf, len, "%s", b->note);
	} else if (libgo && strncmp(name, "main.", 5) != 0) {
		/* the standard library of a gccgo program is libgo's */
		library_path(libgo, path, sizeof(path));
		n = snprintf(buf, len, "a gccgo program calls the standard "
			     "library in %s (ldd %s shows where): name it as the "
			     "probe's binary, '%s:%s'", libgo, gobin_path(b), path,
			     name);
	}
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}
