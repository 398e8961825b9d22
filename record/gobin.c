/* SPDX-License-Identifier: MIT */
/*
 * gobin: opening a Go executable (ELF through libelf), its facts, and its
 * function table. pclntab.c, buildinfo.c, dwarf.c and abi.c do the Go
 * specific parsing.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "edit.h"
#include "gobin_int.h"
#include "gofacts.h"
#include "search.h"

static const char *gobin_errmsg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static const char *gobin_errmsg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return err;
}

/* ------------------------------------------------------------ open */

static int byname_cmp(const void *a, const void *c, void *ctx)
{
	const struct gobin *sort_b = ctx;
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)c;
	const int r = strcmp(sort_b->funcs[x].name, sort_b->funcs[y].name);

	if (r)
		return r;
	if (sort_b->fflags) { /* a name's real function before its ABI wrapper */
		const int wx = !!(sort_b->fflags[x] & GOBIN_FF_WRAPPER);
		const int wy = !!(sort_b->fflags[y] & GOBIN_FF_WRAPPER);

		if (wx != wy)
			return wx - wy;
	}
	return x < y ? -1 : x > y;
}

static int finish_funcs(struct gobin *b)
{
	for (size_t i = 0; i < b->nfuncs; i++) {
		const uint64_t off = gobin_vaddr_to_offset(b, b->funcs[i].entry);

		b->funcs[i].file_offset = off == UINT64_MAX ? 0 : off;
	}
	b->byname = malloc((b->nfuncs ? b->nfuncs : 1) * sizeof(*b->byname));
	if (!b->byname)
		return -ENOMEM;
	for (size_t i = 0; i < b->nfuncs; i++)
		b->byname[i] = (uint32_t)i;
	if (b->nfuncs)
		qsort_r(b->byname, b->nfuncs, sizeof(*b->byname), byname_cmp, b);
	return 0;
}

static void mark_abi0(struct gobin *b);

struct gobin *gobin_open(const char *path, char *err, size_t errlen)
{
	struct gobin *b;
	struct stat st;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE) {
		gobin_errmsg(err, errlen, "cannot initialise libelf: %s",
			     elf_errmsg(-1));
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->path = strdup(path))) {
		free(b);
		gobin_errmsg(err, errlen, "cannot open %s: out of memory", path);
		return NULL;
	}
	b->fd = -1;
	b->dbg_fd = -1;
	b->goid_off = -2;
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd < 0) {
		gobin_errmsg(err, errlen, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(b->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		gobin_errmsg(err, errlen, "cannot read %s: not a regular file", path);
		goto fail;
	}
	b->size = (size_t)st.st_size;
	if (b->size < 64) {
		gobin_errmsg(err, errlen, "%s is not an ELF executable (too small)",
			     path);
		goto fail;
	}
	b->map = mmap(NULL, b->size, PROT_READ, MAP_PRIVATE, b->fd, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		gobin_errmsg(err, errlen, "cannot map %s: %s", path, strerror(errno));
		goto fail;
	}
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	if (!b->elf || elf_kind(b->elf) != ELF_K_ELF) {
		gobin_errmsg(err, errlen, "%s is not an ELF executable", path);
		goto fail;
	}
	gobin_elf_layout(b);
	gobin_notes_load(b);
	gobin_buildinfo_load(b);
	gobin_modinfo_parse(b);

	r = gobin_pclntab_load(b, err, errlen);
	if (r == 0 && !b->go_version[0])
		gobin_runtime_version_load(b);
	if (r == -ENOENT && gobin_gccgo_detect(b)) {
		b->compiler = GOBIN_GCCGO;
		if (gobin_gccgo_load(b) != 0) {
			gobin_errmsg(err, errlen,
				     "%s: gccgo program without function symbols "
				     "(stripped?); cannot list functions", path);
			goto fail;
		}
	} else if (r == -ENOENT) {
		gobin_errmsg(err, errlen,
			     "%s is not a Go program (no .gopclntab%s)", path,
			     b->go_version[0] ? "" : " and no Go build info");
		goto fail;
	} else if (r != 0) {
		goto fail; /* message from pclntab.c */
	} else {
		b->has_pclntab = true;
	}
	if (finish_funcs(b) != 0) {
		gobin_errmsg(err, errlen, "cannot load %s: out of memory", path);
		goto fail;
	}
	mark_abi0(b);
	if (!b->has_dwarf)
		gobin_debuginfo_find(b);
	return b;
fail:
	gobin_close(b);
	return NULL;
}

void gobin_close(struct gobin *b)
{
	if (!b)
		return;
	gobin_dwarf_close(b);
	gobin_typedesc_free(b);
	gobin_debuginfo_close(b);
	free(b->modinfo);
	free(b->settings);
	free(b->argsz);
	free(b->pcl.funcoff);
	gobin_inl_free(b);
	gobin_relocs_free(b);
	free(b->byname);
	free(b->fflags);
	free(b->funcs);
	if (b->elf)
		elf_end(b->elf);
	if (b->map)
		munmap((void *)b->map, b->size);
	if (b->fd >= 0)
		close(b->fd);
	free(b->path);
	free(b);
}

/* ------------------------------------------------------------ facts */

const char *gobin_path(const struct gobin *b) { return b->path; }
const char *gobin_go_version(const struct gobin *b) { return b->go_version; }
const char *gobin_build_id(const struct gobin *b) { return b->build_id; }
const char *gobin_go_build_id(const struct gobin *b) { return b->go_build_id; }
const char *gobin_note(const struct gobin *b) { return b->note; }
enum gobin_compiler gobin_compiler(const struct gobin *b) { return b->compiler; }
enum gobin_arch gobin_arch(const struct gobin *b) { return b->arch; }
const struct gt_arch *gobin_arch_info(const struct gobin *b) { return gt_arch_of(b->arch); }
bool gobin_is_pie(const struct gobin *b) { return b->pie; }
bool gobin_is_stripped(const struct gobin *b) { return b->stripped; }
bool gobin_has_dwarf(const struct gobin *b) { return b->has_dwarf; }

/* The facts' name for the binary's architecture. */
static enum gofact_arch fact_arch(const struct gobin *b)
{
	return gt_arch_of(b->arch)->fact;
}

bool gobin_regabi(const struct gobin *b)
{
	const int minor = b->go_minor ? b->go_minor : b->pcln_minor;

	return b->compiler == GOBIN_GC && gofact_regabi(minor, fact_arch(b));
}

void gobin_describe(const struct gobin *b, struct gtr_binary *out)
{
	const bool goid = b->compiler == GOBIN_GC && gt_arch_of(b->arch)->goid;

	out->path = b->path;
	out->build_id = b->build_id;
	out->go_build_id = b->go_build_id;
	out->go_version = b->go_version;
	out->compiler = b->compiler == GOBIN_GCCGO ? "gccgo" : "gc";
	out->arch = gt_arch_of(b->arch)->name;
	out->abi = b->compiler == GOBIN_GCCGO ? "C" :
		   gobin_regabi(b) ? "ABIInternal" : "ABI0";
	out->pie = b->pie;
	out->stripped = b->stripped;
	out->has_dwarf = b->has_dwarf;
	out->go_version_source = b->version_source;
	/* what the recording holds: Go's goroutine ids, or g's address */
	out->goid_offset = goid ? gobin_goid_offset(b) : -1;
	out->goid_source = out->goid_offset >= 0 ? gobin_goid_source(b) :
			   goid ? "g" : "";
}

void gobin_load_span(const struct gobin *b, uint64_t *lo, uint64_t *hi,
		     uint64_t *text_vaddr, uint64_t *text_offset)
{
	*lo = UINT64_MAX;
	*hi = 0;
	*text_vaddr = *text_offset = 0;
	for (int i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *s = &b->segs[i];

		if (s->flags & PF_X) {
			*text_vaddr = s->vaddr;
			*text_offset = s->offset;
		}
		if (s->vaddr < *lo)
			*lo = s->vaddr;
		if (s->vaddr + s->memsz > *hi)
			*hi = s->vaddr + s->memsz;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

const uint8_t *gobin_func_code(const struct gobin *b, const struct gobin_func *f,
			       size_t max, size_t *len)
{
	size_t n = f->end > f->entry ? f->end - f->entry : 0;

	if (n > max)
		n = max;
	if (f->file_offset >= b->size)
		return NULL;
	if (n > b->size - f->file_offset)
		n = b->size - f->file_offset;
	if (!n)
		return NULL;
	*len = n;
	return b->map + f->file_offset;
}

/* ------------------------------------------------------------ functions */

int gobin_func_find(const struct gobin *b, const char *name,
		    struct gobin_func *out)
{
	size_t lo = 0, hi = b->nfuncs;

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		const int r = strcmp(b->funcs[b->byname[mid]].name, name);

		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < b->nfuncs && strcmp(b->funcs[b->byname[lo]].name, name) == 0) {
		if (out)
			*out = b->funcs[b->byname[lo]];
		return 0;
	}
	return -ENOENT;
}

/*
 * The end of the bracketed type arguments of a generic instance's name
 * ("main.(*Box[go.shape.string]).Put" -> ").Put", "main.F[...]" -> ""),
 * with *open at their '['; NULL when the name has none. The first '['
 * opens them: package paths and identifiers hold none.
 */
const char *gobin_type_args_end(const char *name, const char **open)
{
	const char *p = strchr(name, '[');
	int depth = 0;

	*open = p;
	for (; p && *p; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && --depth == 0)
			return p + 1;
	}
	return NULL;
}

/*
 * Whether `name` with its type arguments written "[...]" (the form Go's
 * tracebacks print, src/runtime/traceback.go funcNamePiecesForPrint, and
 * the name Go 1.18-1.20 linkers put in pclntab) is `pattern`, itself
 * such a name: "main.(*Box[...]).Put" names "main.(*Box[go.shape.string]).Put"
 * of Go 1.21+ binaries, whose pclntab keeps the whole name.
 */
static bool elided_name_is(const char *name, const char *pattern)
{
	const char *open, *end = gobin_type_args_end(name, &open);
	const size_t head = open ? (size_t)(open - name) : 0;

	return end && !strncmp(name, pattern, head) &&
	       !strncmp(pattern + head, "[...]", 5) &&
	       !strcmp(pattern + head + 5, end);
}

/*
 * Whether `name` is a generic instance whose name without its type
 * arguments is `src`, the name as written in the source:
 * "main.Sum[go.shape.int]" and "main.Sum[...]" are "main.Sum",
 * "main.(*List[...]).Push" is "main.(*List).Push".
 */
static bool source_name_is(const char *name, const char *src)
{
	const char *open, *end = gobin_type_args_end(name, &open);
	const size_t head = open ? (size_t)(open - name) : 0;

	return end && !strncmp(name, src, head) && !strcmp(src + head, end);
}

/* Every real function (no ABI wrapper) of `b` that `match` says is
 * `name`, up to max into out[]; returns how many there are. */
static int find_generic(const struct gobin *b, const char *name,
			bool (*match)(const char *, const char *),
			struct gobin_func *out, int max)
{
	int n = 0;

	for (size_t i = 0; i < b->nfuncs; i++) {
		if (!match(b->funcs[i].name, name) ||
		    (b->fflags && (b->fflags[i] & GOBIN_FF_WRAPPER)))
			continue;
		if (n < max)
			out[n] = b->funcs[i];
		n++;
	}
	return n;
}

/*
 * The instance the ELF symbol `name` ("main.Sum[go.shape.int_0]", as nm
 * prints it) is, when pclntab names it otherwise ("main.Sum[...]", Go
 * 1.18-1.20): the function at the symbol's address. 1 with out[0] filled
 * (when max > 0), or 0.
 */
static int find_by_symbol(const struct gobin *b, const char *name,
			  struct gobin_func *out, int max)
{
	const uint64_t at = strstr(name, "[go.shape.") ? gobin_symbol(b, name) : 0;
	struct gobin_func f;

	if (!at || gobin_func_at(b, at, &f) || f.entry != at)
		return 0;
	if (max > 0)
		out[0] = f;
	return 1;
}

int gobin_func_find_all(const struct gobin *b, const char *name,
			struct gobin_func *out, int max)
{
	size_t lo = 0, hi = b->nfuncs, i;
	int n = 0, nreal = 0;
	char alt[512];

	if (b->compiler == GOBIN_GCCGO) {
		/* a Go name of a function gccgo names otherwise */
		if (gobin_gccgo_name(b, name, alt, sizeof(alt)))
			name = alt;
	}

	if (strstr(name, "[...]") && gobin_func_find(b, name, NULL) != 0)
		/* every instance of a generic function whose pclntab name
		 * spells its type arguments (Go 1.21+) */
		return find_generic(b, name, elided_name_is, out, max);

	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (strcmp(b->funcs[b->byname[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Same-named functions: generic instances (all real), or a real
	 * function and its ABI wrapper (sorted after it): wrappers only
	 * when nothing else has the name. */
	for (i = lo; i < b->nfuncs && !strcmp(b->funcs[b->byname[i]].name, name); i++) {
		const uint32_t k = b->byname[i];
		const bool wrapper = b->fflags && (b->fflags[k] & GOBIN_FF_WRAPPER);

		if (wrapper && nreal)
			continue;
		if (!wrapper)
			nreal++;
		if (n < max)
			out[n] = b->funcs[k];
		n++;
	}
	if (n)
		return n;
	/* a generic function by its source name: all its instances */
	if (!strchr(name, '['))
		return find_generic(b, name, source_name_is, out, max);
	return find_by_symbol(b, name, out, max);
}

/* Index in b->funcs of the function at entry `entry`, or -1. */
static ssize_t func_index(const struct gobin *b, uint64_t entry)
{
	const size_t lo = SEARCH_GE(b->funcs, b->nfuncs, entry, entry);

	return lo < b->nfuncs && b->funcs[lo].entry == entry ? (ssize_t)lo : -1;
}

enum gobin_abi gobin_binary_abi(const struct gobin *b)
{
	if (b->compiler == GOBIN_GCCGO)
		return GOBIN_ABI_C;
	return gobin_regabi(b) ? GOBIN_ABI_INTERNAL : GOBIN_ABI0;
}

enum gobin_abi gobin_func_abi(const struct gobin *b, const struct gobin_func *f)
{
	const enum gobin_abi abi = gobin_binary_abi(b);
	ssize_t i;

	if (abi != GOBIN_ABI_INTERNAL || !b->fflags)
		return abi;
	i = func_index(b, f->entry);
	return i >= 0 && (b->fflags[i] & GOBIN_FF_ABI0) ? GOBIN_ABI0 : abi;
}

static int abi0_sym_cb(const struct gobin *b, const GElf_Sym *sym,
		       const char *name, void *ctx)
{
	const size_t l = strlen(name);
	ssize_t i;

	(void)ctx;
	if (l < 5 || strcmp(name + l - 5, ".abi0") != 0 ||
	    GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return 0;
	i = func_index(b, sym->st_value);
	if (i >= 0)
		b->fflags[i] |= GOBIN_FF_ABI0;
	return 0;
}

/*
 * Assembly functions declared <ABIInternal> (grep of the *_amd64.s files
 * of Go 1.19's src); every other assembly function is ABI0. Other Go
 * versions may declare a few more or fewer.
 */
static const char *const asm_internal[] = {
	"runtime.cmpstring", "runtime.debugCallV2", "runtime.duffcopy",
	"runtime.duffzero", "runtime.gcWriteBarrier*", "runtime.mcall",
	"runtime.memclrNoHeapPointers", "runtime.memequal",
	"runtime.memequal_varlen", "runtime.memhash", "runtime.memhash32",
	"runtime.memhash64", "runtime.memmove", "runtime.panicIndex*",
	"runtime.panicSlice*", "runtime.strhash", "time.now",
	"internal/bytealg.Compare", "runtime/internal/syscall.Syscall6",
};

/*
 * Marks GOBIN_FF_ABI0 on the ABI0 functions of a register-ABI binary:
 * those the symbol table names "pkg.F.abi0"; assembly functions not
 * declared <ABIInternal>; and the ABI0-to-ABIInternal wrapper the linker
 * makes for a Go function called from assembly (funcID_wrapper, named as
 * the Go function it wraps, which is not assembly).
 */
static void mark_abi0(struct gobin *b)
{
	if (!b->fflags || !gobin_regabi(b))
		return;
	if (!b->stripped)
		gobin_each_symbol(b, abi0_sym_cb, NULL);
	for (size_t i = 0; i < b->nfuncs; i++) {
		bool internal = false;

		if (!(b->fflags[i] & GOBIN_FF_ASM))
			continue;
		for (size_t k = 0; k < sizeof(asm_internal) / sizeof(*asm_internal); k++)
			if (fnmatch(asm_internal[k], b->funcs[i].name, 0) == 0)
				internal = true;
		if (!internal)
			b->fflags[i] |= GOBIN_FF_ABI0;
	}
	for (size_t j = 0; j + 1 < b->nfuncs; j++) {
		const uint32_t first = b->byname[j];

		/* byname puts a name's non-wrappers first */
		if (b->fflags[first] & (GOBIN_FF_WRAPPER | GOBIN_FF_ASM))
			continue;
		for (size_t k = j + 1; k < b->nfuncs; k++) {
			const uint32_t w = b->byname[k];

			if (strcmp(b->funcs[w].name, b->funcs[first].name) != 0)
				break;
			if (b->fflags[w] & GOBIN_FF_WRAPPER)
				b->fflags[w] |= GOBIN_FF_ABI0;
		}
	}
}

ssize_t gobin_func_index_at(const struct gobin *b, uint64_t addr)
{
	/* the last function whose entry is at or before addr */
	const size_t lo = SEARCH_GT(b->funcs, b->nfuncs, entry, addr);

	if (lo == 0 || addr >= b->funcs[lo - 1].end)
		return -1;
	return (ssize_t)lo - 1;
}

int gobin_func_at(const struct gobin *b, uint64_t addr, struct gobin_func *out)
{
	const ssize_t i = gobin_func_index_at(b, addr);

	if (i < 0)
		return -ENOENT;
	if (out)
		*out = b->funcs[i];
	return 0;
}

const char *gobin_glob_gccgo(const struct gobin *b, const char *pattern, char *out,
			     size_t outlen)
{
	return b->compiler == GOBIN_GCCGO && strchr(pattern, '(') &&
	       gobin_gccgo_name(b, pattern, out, outlen) ? out : NULL;
}

int gobin_func_each(const struct gobin *b, const char *pattern,
		    int (*fn)(const struct gobin_func *f, void *ctx), void *ctx)
{
	char m[512];
	const char *alt = pattern ? gobin_glob_gccgo(b, pattern, m, sizeof(m)) : NULL;

	for (size_t i = 0; i < b->nfuncs; i++) {
		int r;

		if (pattern && fnmatch(pattern, b->funcs[i].name, 0) != 0 &&
		    (!alt || fnmatch(alt, b->funcs[i].name, 0) != 0))
			continue;
		r = fn(&b->funcs[i], ctx);
		if (r)
			return r;
	}
	return 0;
}

size_t gobin_func_count(const struct gobin *b) { return b->nfuncs; }

int gobin_func_args_size(const struct gobin *b, const struct gobin_func *f)
{
	const ssize_t i = b->argsz ? func_index(b, f->entry) : -1;

	if (i < 0 || b->argsz[i] < 0)
		return -1;
	return b->argsz[i];
}

/*
 * The Go name a cgo export wrapper exports ("_cgoexp_c1c9c7e88ddb_goCallback"
 * -> "goCallback"; src/cmd/cgo/out.go names it _cgoexp_<hash>_<name>), or
 * NULL for another name.
 */
static const char *cgo_export_name(const char *name)
{
	const char *p = strchr(name, '.');

	/* gccgo: "main.Cgoexp__goCallback" (gobin_gccgo_name) */
	if (p && !strncmp(p + 1, "Cgoexp__", 8) && p[9])
		return p + 9;
	if (strncmp(name, "_cgoexp_", 8))
		return NULL;
	p = name + 8 + strspn(name + 8, "0123456789abcdef");
	return *p == '_' && p > name + 8 && p[1] ? p + 1 : NULL;
}

int gobin_func_find_cgo_export(const struct gobin *b, const char *name,
			       struct gobin_func *out)
{
	const char *dot = strrchr(name, '.');
	const char *want = dot ? dot + 1 : name;

	for (size_t i = 0; i < b->nfuncs; i++) {
		const char *exp = cgo_export_name(b->funcs[i].name);

		if (exp && !strcmp(exp, want)) {
			*out = b->funcs[i];
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The part of a symbol after its package path, without the receiver
 * punctuation, into out[outlen] (NUL-terminated): "net/http.(*conn).serve"
 * -> "conn.serve". Returns its length.
 */
static size_t short_name(const char *name, char *out, size_t outlen)
{
	const char *exp = cgo_export_name(name);
	const char *slash = strrchr(name, '/');
	const char *p = slash ? slash + 1 : name;
	const char *dot = strchr(p, '.');
	size_t o = 0;

	if (exp) {
		const int n = snprintf(out, outlen, "%s", exp);
		return n < 0 ? 0 : (size_t)n < outlen ? (size_t)n : outlen - 1;
	}
	for (p = dot ? dot + 1 : name; *p && o + 1 < outlen; p++)
		if (*p != '(' && *p != ')' && *p != '*')
			out[o++] = *p;
	out[o] = '\0';
	return o;
}

/* Names the compiler makes up (type..eq.T, type:.hash.T): never meant. */
static bool generated_name(const char *name)
{
	return !strncmp(name, "type.", 5) || !strncmp(name, "type:", 5);
}

/* Length of the package path that starts `name` ("net/http" of
 * "net/http.(*conn).serve"); 0 when it has none (a bare name). */
static size_t pkg_len(const char *name)
{
	const size_t head = strcspn(name, "([");
	const char *slash = memrchr(name, '/', head);
	const char *dot = memchr(slash ? slash : name, '.',
				 head - (size_t)((slash ? slash : name) - name));

	return dot ? (size_t)(dot - name) : 0;
}

/* The last component of a function's name, outside brackets: "serve" of
 * "net/http.(*conn).serve", "Sum[go.shape.int]" of "main.Sum[go.shape.int]". */
static const char *last_part(const char *name)
{
	const char *last = name;
	int depth = 0;

	for (const char *c = name; *c; c++) {
		if (*c == '[')
			depth++;
		else if (*c == ']')
			depth--;
		else if (*c == '.' && !depth)
			last = c + 1;
	}
	return last;
}

/* Whether fname's method or function name is `bare`. */
static bool named_is(const char *fname, const char *bare)
{
	return !generated_name(fname) && !strcmp(last_part(fname), bare);
}

int gobin_func_named(const struct gobin *b, const char *bare,
		     struct gobin_func *out, int max)
{
	return find_generic(b, bare, named_is, out, max);
}

int gobin_func_suggest(const struct gobin *b, const char *name,
		       const char **out, int max)
{
	struct cand { unsigned other, d1, d2; const char *name; } *best;
	char want[256], have[256];
	unsigned limit;
	int n = 0;

	if (max <= 0)
		return 0;
	const size_t lwant = short_name(name, want, sizeof(want));
	const size_t lname = strlen(name), lpkg = pkg_len(name);
	/* a typo: a third of the name's letters in its own package (one in
	 * a short name), a quarter in another (none below 5 letters: `sq`
	 * is not `errors.Is`, nor `nope` `time.now`) */
	limit = lwant / 3 > 1 ? (unsigned)(lwant / 3) : 1;
	const unsigned limit_other = lwant >= 5 ? (unsigned)(lwant / 4) : 0;
	best = calloc((size_t)max, sizeof(*best));
	if (!best)
		return 0;
	for (size_t i = 0; i < b->nfuncs; i++) {
		const char *fname = b->funcs[i].name, *last = last_part(fname);
		/* the same package first, then the others */
		const unsigned other = lpkg && (pkg_len(fname) != lpkg ||
						strncmp(fname, name, lpkg));
		unsigned d1, d2;
		int pos;

		if (generated_name(fname))
			continue;
		const size_t lhave = short_name(fname, have, sizeof(have));
		const size_t lfname = strlen(fname);
		d1 = edit_distance(want, lwant, have, lhave, limit);
		if (!lpkg) {
			/* a bare name: as close to the method or function
			 * name alone */
			d2 = edit_distance(want, lwant, last, strlen(last), limit);
			d1 = d2 < d1 ? d2 : d1;
		}
		if (d1 > (other ? limit_other : limit))
			continue;
		d2 = edit_distance(name, lname, fname, lfname, 1000);
		{
			/* same-named functions (an ABI wrapper beside its
			 * function, generic instances) are one suggestion */
			int k = 0;

			while (k < n && strcmp(best[k].name, fname))
				k++;
			if (k < n)
				continue;
		}
		pos = n;
		while (pos > 0 && (best[pos - 1].other > other ||
				   (best[pos - 1].other == other &&
				    (best[pos - 1].d1 > d1 ||
				     (best[pos - 1].d1 == d1 && best[pos - 1].d2 > d2)))))
			pos--;
		if (pos >= max)
			continue;
		if (n < max)
			n++;
		memmove(&best[pos + 1], &best[pos],
			(size_t)(n - 1 - pos) * sizeof(*best));
		best[pos] = (struct cand){ other, d1, d2, fname };
	}
	for (int i = 0; i < n; i++)
		out[i] = best[i].name;
	free(best);
	return n;
}

int gobin_goid_offset_derived(const struct gobin *b)
{
	static const char *const print[] = { "runtime.printint", "runtime.printuint" };
	uint64_t at[2] = { 0, 0 };
	struct gobin_func f;
	const uint8_t *code;
	const struct gt_arch *ai = gt_arch_of(b->arch);

	if (b->compiler != GOBIN_GC || !ai->goid_from_code ||
	    gobin_func_find(b, "runtime.goroutineheader", &f) ||
	    f.end <= f.entry || f.end - f.entry > 1 << 16)
		return -1;
	for (int k = 0; k < 2; k++) {
		struct gobin_func pf;

		if (!gobin_func_find(b, print[k], &pf))
			at[k] = pf.entry;
	}
	code = gobin_at_vaddr(b, f.entry, f.end - f.entry);
	if (!code)
		return -1;
	{
		const int off = ai->goid_from_code(code, f.end - f.entry,
				f.entry, at, 2, gobin_regabi(b));

		return off > 0 ? off : -1;
	}
}

int gobin_goid_offset(const struct gobin *b)
{
	struct gobin *mb = (struct gobin *)b;
	int off = -1;
	int minor;

	if (b->goid_off != -2)
		return b->goid_off;
	mb->goid_source = "";
	if (getenv("GOTRACE_NO_GOID_OFFSET")) {
		/* tests: as for a binary where no source knows it */
		mb->goid_off = -1;
		return -1;
	}
	if (b->compiler == GOBIN_GC && b->has_dwarf) {
		off = gobin_dwarf_goid_offset(mb);
		if (off >= 0)
			mb->goid_source = "DWARF";
	}
	minor = b->go_minor;
	if (off < 0 && b->compiler == GOBIN_GC && minor) {
		off = gofact_goid_offset(minor, fact_arch(b), b->ptrsize);
		if (off >= 0)
			mb->goid_source = "table";
	}
	/* a Go release newer than the table, or no version string */
	if (off < 0 && b->compiler == GOBIN_GC) {
		off = gobin_goid_offset_derived(b);
		if (off >= 0)
			mb->goid_source = "derived";
	}
	mb->goid_off = off;
	return off;
}

const char *gobin_goid_source(const struct gobin *b)
{
	gobin_goid_offset(b);
	return b->goid_source;
}

const char *gobin_version_source(const struct gobin *b)
{
	return b->version_source;
}
