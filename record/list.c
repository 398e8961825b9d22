/* SPDX-License-Identifier: MIT */
/*
 * gotrace-record --list: the facts of a Go binary and its functions.
 *
 * JSON document (--json), one object:
 *   "binary": { "path", "compiler" ("gc"|"gccgo"), "go_version",
 *     "go_version_source" ("buildinfo"|"runtime.buildVersion"|""),
 *     "goid" { "offset" (bytes in runtime.g, or null when unknown),
 *     "source" ("DWARF"|"table"|"derived"|""), "derived" (what the
 *     runtime's code reads, or null) }, "arch"
 *     ("x86-64"|"aarch64"|"i386"), "abi" ("ABIInternal"|"ABI0"|"C"),
 *     "pie", "stripped", "dwarf" (bools), "debuginfo" (path of a separate
 *     debug file or null), "build_id", "go_build_id", "main_path",
 *     "main_module", "main_version" (strings, "" when unknown),
 *     "build_settings" { KEY: VALUE }, "functions" (count in the binary),
 *     "note" (string, "" when nothing was unusual) },
 *   "glob": string or null, "matched": count,
 *   "functions": [ { "name", "entry", "end", "file_offset" (numbers:
 *     link-time addresses, file offset of the entry), "size" (bytes),
 *     "abi", "args_size" (pclntab bytes of arguments and results, or
 *     null), "signature" (string or null without DWARF), "params" and
 *     "results" (arrays, or null without DWARF): { "goarg" (1-based,
 *     params only), "name", "type" (Go type), "kind" (gotrace's value
 *     type: int, uint, bool, ptr, string, float, other), "size" (bytes),
 *     "locations" (["RAX", "RBX"], ["SP+8"], ["X0"]), "capture" (bool),
 *     "why" (reason when not captured, else null) }, and with a glob
 *     "inlined": [ { "into" (the function holding the copy), "call_site"
 *     ("main.go:57" or null), "address", "params" (names located there) } ]
 *     (a function only ever inlined: "entry" null and this alone) } ],
 *   for a glob "FILE.go", "FILE.go:*" or "FILE.go:LINE" instead of
 *   functions: "file" (its path), "lines": [ { "line", "func",
 *   "inlined_into" (or null), "address" } ] (the sites a FILE:LINE probe
 *   takes), and "functions" [].
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gobin.h"
#include "gotrace.h"
#include "json.h"
#include "list.h"

#define LIST_MAX_ARGS 64
/* GT_MAX_FETCH of bpf/gotrace.h, spelled out for messages */
#define GT_MAX_FETCH_STR "16"
_Static_assert(GT_MAX_FETCH == 16, "GT_MAX_FETCH_STR spells GT_MAX_FETCH");

/* ------------------------------------------------------------ JSON */

/* Strings as gotrace-report's JSON Lines: bytes that are not UTF-8 become
 * U+FFFD, \n and \t are short (lib/json.h). */
#define LIST_JSON_ESC (JSON_ESC_FFFD | JSON_ESC_JS)
#define LIST_FLUSH (64u << 10)   /* bytes of JSON held before a write */

/* Writes the JSON held in `b` to `out` when there are more than `min`
 * bytes of it (the buffer is emptied). */
static void json_flush(struct buf *b, FILE *out, size_t min)
{
	if (b->len <= min)
		return;
	fwrite(b->data, 1, b->len, out);
	buf_reset(b);
}

/* A string member, or null when `v` is NULL. */
static void json_str_or_null(struct jsonw *w, const char *k, const char *v)
{
	jsonw_name(w, k);
	if (v)
		jsonw_string(w, v);
	else
		jsonw_null(w);
}

/* A number member that is null when negative (unknown). */
static void json_count(struct jsonw *w, const char *k, long long v)
{
	if (v >= 0)
		jsonw_uint_field(w, k, (uint64_t)v);
	else
		jsonw_null_field(w, k);
}

/* ------------------------------------------------------------ facts */

static const char *abi_name(enum gobin_abi abi)
{
	switch (abi) {
	case GOBIN_ABI_INTERNAL: return "ABIInternal";
	case GOBIN_ABI0: return "ABI0";
	default: return "C";
	}
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static void facts_text(const struct gobin *b, FILE *out)
{
	struct gtr_binary d;
	const char *k, *v;

	gobin_describe(b, &d);
	fprintf(out, "binary       %s\n", d.path);
	fprintf(out, "compiler     %s %s", d.compiler, or_dash(d.go_version));
	if (gobin_version_source(b)[0])
		fprintf(out, " (from %s)", gobin_version_source(b));
	fputc('\n', out);
	if (gobin_compiler(b) == GOBIN_GC) {
		if (gobin_goid_offset(b) >= 0)
			fprintf(out, "goid         at runtime.g+%d (from %s)\n",
				gobin_goid_offset(b), gobin_goid_source(b));
		else
			fprintf(out, "goid         offset unknown: %s\n",
				gobin_arch_info(b)->goid
				? "events carry the goroutine's g address instead"
				: "goroutine ids are read on x86-64 and i386 only");
	} else {
		fprintf(out, "goid         not read: libgo keeps g behind thread-local "
			"storage of libgo.so; events get goid 0, calls pair by thread\n");
	}
	fprintf(out, "arch         %s, %s calling convention\n", d.arch, d.abi);
	fprintf(out, "pie          %s\n", d.pie ? "yes" : "no");
	fprintf(out, "stripped     %s\n", d.stripped ? "yes (no symbol table)" : "no");
	if (gobin_debuginfo_path(b)[0])
		fprintf(out, "dwarf        yes, from %s\n", gobin_debuginfo_path(b));
	else
		fprintf(out, "dwarf        %s\n", d.has_dwarf ? "yes" :
			"no: signatures unknown; give one in the probe, e.g. "
			"'main.greet(s string, n int)', or a debug file");
	fprintf(out, "build id     %s\n", or_dash(d.build_id));
	fprintf(out, "go build id  %s\n", or_dash(d.go_build_id));
	fprintf(out, "main path    %s\n", or_dash(gobin_main_path(b)));
	if (gobin_main_module(b)[0])
		fprintf(out, "main module  %s %s\n", gobin_main_module(b),
			gobin_main_version(b));
	if (gobin_build_setting(b, 0, &k, &v) == 0) {
		fprintf(out, "build       ");
		for (size_t i = 0; gobin_build_setting(b, i, &k, &v) == 0; i++)
			fprintf(out, " %s=%s%s%s", k, strchr(v, ' ') ? "\"" : "", v,
				strchr(v, ' ') ? "\"" : "");
		fputc('\n', out);
	}
	if (!gobin_arch_info(b)->capture)
		fprintf(out, "note         %s program: listed only; this "
			"gotrace-record traces x86-64 and i386 programs\n",
			gobin_arch_info(b)->goarch);
	if (gobin_note(b)[0])
		fprintf(out, "note         %s\n", gobin_note(b));
	if (gobin_inline_gap(b))
		fprintf(out, "note         inlined copies unknown: %s; probes "
			"cover out-of-line bodies only\n", gobin_inline_gap(b));
}

static void facts_json(const struct gobin *b, struct jsonw *w)
{
	struct gtr_binary d;
	const char *k, *v;

	gobin_describe(b, &d);
	jsonw_name(w, "binary");
	jsonw_start_object(w);
	jsonw_string_field(w, "path", d.path);
	jsonw_string_field(w, "compiler", d.compiler);
	jsonw_string_field(w, "go_version", d.go_version);
	jsonw_string_field(w, "go_version_source", gobin_version_source(b));
	jsonw_name(w, "goid");
	jsonw_start_object(w);
	json_count(w, "offset", gobin_goid_offset(b));
	jsonw_string_field(w, "source", gobin_goid_source(b));
	json_count(w, "derived", gobin_goid_offset_derived(b));
	jsonw_end_object(w);
	jsonw_string_field(w, "arch", d.arch);
	jsonw_string_field(w, "abi", d.abi);
	jsonw_bool_field(w, "pie", d.pie);
	jsonw_bool_field(w, "stripped", d.stripped);
	jsonw_bool_field(w, "dwarf", d.has_dwarf);
	json_str_or_null(w, "debuginfo", gobin_debuginfo_path(b)[0] ?
			 gobin_debuginfo_path(b) : NULL);
	jsonw_string_field(w, "build_id", d.build_id);
	jsonw_string_field(w, "go_build_id", d.go_build_id);
	jsonw_string_field(w, "main_path", gobin_main_path(b));
	jsonw_string_field(w, "main_module", gobin_main_module(b));
	jsonw_string_field(w, "main_version", gobin_main_version(b));
	jsonw_name(w, "build_settings");
	jsonw_start_object(w);
	for (size_t i = 0; gobin_build_setting(b, i, &k, &v) == 0; i++)
		jsonw_string_field(w, k, v);
	jsonw_end_object(w);
	jsonw_uint_field(w, "functions", gobin_func_count(b));
	jsonw_string_field(w, "note", gobin_note(b));
	json_str_or_null(w, "inline_gap", gobin_inline_gap(b));
	jsonw_end_object(w);
}

/* ------------------------------------------------------------ functions */

/*
 * Whether gotrace-record captures `a` (what record/plan.c's plan_fetch
 * turns into a fetch: integers, bool, pointers, raw words from their first
 * piece; strings and []byte from two; other slices from three, their
 * elements when the element size is known; interfaces from their type
 * word), and why not; `listed_only` is the reason for every argument of a
 * program of an architecture gotrace does not capture on, else NULL.
 * `index`: a's place among the parameters (or results), 0-based: a probe
 * captures the first GT_MAX_FETCH values only.
 */
static bool arg_capture(const char *listed_only, int fields, int index,
			const struct gobin_arg *a, const char **why)
{
	uint32_t need = 1;

	*why = NULL;
	if (index >= GT_MAX_FETCH) {
		*why = "a probe captures " GT_MAX_FETCH_STR " values at most";
		return false;
	}
	if (gobin_arg_folded_recorded(a))
		return true;   /* recorded as its constant */
	if (a->npieces == 0) {
		*why = "location unknown";
		return false;
	}
	for (uint32_t i = 0; i < a->npieces; i++) {
		if (a->pieces[i].kind == GOBIN_LOC_NONE) {
			/* a GCC clone's parameter it was not passed */
			*why = a->folded ? "a constant in this GCC clone "
					   "(folded in), not passed" :
			       "DWARF places it nowhere at entry (folded to a "
			       "constant, passed in pieces or dropped)";
			return false;
		}
		/* a struct captured whole has its fields read one by one,
		 * those in float registers unavailable */
		if (!gobin_piece_readable(&a->pieces[i]) &&
		    !(a->type == GTR_TYPE_OTHER && fields > 0 &&
		      fields <= GOBIN_STRUCT_FIELDS && !listed_only)) {
			*why = "float register: not in uprobe pt_regs";
			return false;
		}
	}
	switch (a->type) {
	case GTR_TYPE_INT: case GTR_TYPE_UINT: case GTR_TYPE_BOOL:
	case GTR_TYPE_PTR: case GTR_TYPE_WORD:
		break;
	case GTR_TYPE_STRING:
	case GTR_TYPE_BYTES:
		need = 2;
		break;
	case GTR_TYPE_IFACE:
		break;    /* the name of its dynamic type */
	case GTR_TYPE_SLICE:
		need = 3;
		break;
	case GTR_TYPE_OTHER:
		if (a->iface)
			break;    /* plan.c records the dynamic type's name */
		if (!strcmp(a->type_name, "[]uint8") || !strcmp(a->type_name, "[]byte")) {
			need = 2; /* plan.c captures []byte as bytes */
			break;
		}
		if (!strncmp(a->type_name, "[]", 2)) {
			need = 3; /* elements, length and capacity */
			break;
		}
		if (fields > 0 && fields <= GOBIN_STRUCT_FIELDS)
			break;    /* plan.c captures the struct whole */
		if (gobin_arg_array(a))
			break;    /* its bytes, from the stack or its register */
		if (a->array_len) {
			*why = a->elem_size ? "an array in two registers: not captured yet" :
			       "an array of structs, arrays or interfaces: not captured";
			return false;
		}
		*why = fields > GOBIN_STRUCT_FIELDS ?
		       "a struct of more fields than gotrace captures whole: capture its fields with NAME.FIELD" :
		       "a struct or array passed by value: capture its fields with NAME.FIELD";
		return false;
	case GTR_TYPE_FLOAT:
		if (a->npieces == 1 && a->pieces[0].size == a->size)
			break;    /* its bits, from a stack slot or memory */
		*why = "a float in pieces";
		return false;
	default:
		*why = "aggregates are not captured yet";
		return false;
	}
	if (a->npieces < need) {
		*why = "location unknown";
		return false;
	}
	if (listed_only) {
		*why = listed_only;
		return false;
	}
	return true;
}

static bool unnamed(const char *n)
{
	return !n[0] || n[0] == '~' || n[0] == '$';
}

/* "main.f(a int, s string) (int, error)" into out[outlen]. */
static void signature(const char *name, const struct gobin_arg *p, int np,
		      const struct gobin_arg *r, int nr, char *out,
		      size_t outlen)
{
	size_t o = 0;
	bool named = false;

#define PUT(...) do { \
		if (o < outlen) \
			o += (size_t)snprintf(out + o, outlen - o, __VA_ARGS__); \
	} while (0)
	PUT("%s(", name);
	for (int i = 0; i < np; i++)
		PUT("%s%s%s%s", i ? ", " : "", p[i].name, p[i].name[0] ? " " : "",
		    p[i].type_name[0] ? p[i].type_name : "?");
	PUT(")");
	for (int i = 0; i < nr; i++)
		named |= !unnamed(r[i].name);
	if (nr == 1 && !named) {
		PUT(" %s", r[0].type_name[0] ? r[0].type_name : "?");
	} else if (nr > 0) {
		PUT(" (");
		for (int i = 0; i < nr; i++)
			PUT("%s%s%s%s", i ? ", " : "", named ? r[i].name : "",
			    named ? " " : "", r[i].type_name[0] ? r[i].type_name : "?");
		PUT(")");
	}
#undef PUT
	if (o >= outlen && outlen > 4)
		memcpy(out + outlen - 4, "...", 4);
}


struct list_ctx {
	const struct gobin *b;
	const char *glob;
	const char *glob_gccgo;  /* gobin_glob_gccgo() of glob, or NULL */
	char glob_buf[512];
	bool json;
	FILE *out;
	struct buf jb;           /* JSON not yet written to out */
	struct jsonw w;
	size_t matched;
	/* what a probe on the glob taken as a name means (every instance of
	 * "main.Map[...]", whatever pclntab calls them) */
	struct gobin_func *named;
	int nnamed;
	struct gobin_arg p[LIST_MAX_ARGS], r[LIST_MAX_ARGS];
	/* "arm64 program: listed only" when gotrace does not capture on
	 * the binary's architecture (struct gt_arch.capture), else NULL */
	const char *listed_only;
	char listed_buf[64];
};

/* Whether f is one of the functions the glob names exactly. */
static bool is_named(const struct list_ctx *c, const struct gobin_func *f)
{
	for (int i = 0; i < c->nnamed; i++)
		if (c->named[i].entry == f->entry)
			return true;
	return false;
}

/* How many fields of struct `a` of f a probe captures whole (0: none,
 * more than GOBIN_STRUCT_FIELDS: too many to). */
static int whole_fields(const struct list_ctx *c, const struct gobin_func *f,
			const struct gobin_arg *a)
{
	if (a->type != GTR_TYPE_OTHER || a->iface || !a->name[0])
		return 0;
	return gobin_struct_fields(c->b, f, a->name, NULL, 0);
}

static void args_json(struct list_ctx *c, const struct gobin_func *f,
		      const char *key, const struct gobin_arg *a, int n,
		      bool params)
{
	struct jsonw *w = &c->w;
	char loc[32];

	jsonw_name(w, key);
	if (n < 0) {
		jsonw_null(w);
		return;
	}
	jsonw_start_array(w);
	for (int i = 0; i < n; i++) {
		const char *why;
		const bool cap = arg_capture(c->listed_only, whole_fields(c, f, &a[i]),
					     i, &a[i], &why);

		jsonw_start_object(w);
		if (params)
			jsonw_uint_field(w, "goarg", (uint64_t)i + 1);
		jsonw_string_field(w, "name", a[i].name);
		jsonw_string_field(w, "type", a[i].type_name);
		jsonw_string_field(w, "kind", gtr_type_name(a[i].type));
		jsonw_uint_field(w, "size", a[i].size);
		jsonw_name(w, "locations");
		jsonw_start_array(w);
		for (uint32_t k = 0; k < a[i].npieces; k++)
			jsonw_string(w, gobin_piece_str(&a[i].pieces[k], loc, sizeof(loc)));
		jsonw_end_array(w);
		jsonw_bool_field(w, "capture", cap);
		json_str_or_null(w, "why", why);
		if (a[i].folded)
			jsonw_int_field(w, "constant", a[i].folded_value);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static int list_inlined(struct list_ctx *c, const char *name);

/* The JSON object of function `f` (its line of the "functions" array). */
static void func_json(struct list_ctx *c, const struct gobin_func *f, int argsz,
		      enum gobin_abi abi, const char *sig, int np, int nr)
{
	struct jsonw *w = &c->w;

	jsonw_start_object(w);
	jsonw_string_field(w, "name", f->name);
	jsonw_uint_field(w, "entry", f->entry);
	jsonw_uint_field(w, "end", f->end);
	jsonw_uint_field(w, "file_offset", f->file_offset);
	jsonw_uint_field(w, "size", f->end - f->entry);
	jsonw_string_field(w, "abi", abi_name(abi));
	json_count(w, "args_size", argsz);
	json_str_or_null(w, "signature", np >= 0 ? sig : NULL);
	args_json(c, f, "params", c->p, np, true);
	args_json(c, f, "results", c->r, nr, false);
	if (c->glob)
		list_inlined(c, f->name);
	jsonw_end_object(w);
	buf_putc(&c->jb, '\n');
	json_flush(&c->jb, c->out, LIST_FLUSH);
}

/* ------------------------------------------------ inlined copies, lines */

/*
 * The inlined copies of function `name`: text lines "    inlined into
 * F at FILE:LINE (ADDR)", or a JSON "inlined" array of { "into",
 * "call_site" (or null), "address", "params" (names DWARF locates there)
 * }. Returns how many there are.
 */
static int list_inlined(struct list_ctx *c, const char *name)
{
	const char *source;
	int n = gobin_inline_sites(c->b, name, NULL, 0, &source);
	struct gobin_site *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;

	if (!v) {
		if (c->json)
			jsonw_null_field(&c->w, "inlined");
		return 0;
	}
	gobin_inline_sites(c->b, name, v, n, &source);
	if (c->json) {
		jsonw_name(&c->w, "inlined");
		jsonw_start_array(&c->w);
	} else {
		fprintf(c->out, "    inlined %d time%s (from %s):\n", n,
			n == 1 ? "" : "s", source);
	}
	for (int i = 0; i < n; i++) {
		const char *base = strrchr(v[i].call_file, '/');

		base = base ? base + 1 : v[i].call_file;
		if (!c->json) {
			fprintf(c->out, "      into %s", v[i].outer.name);
			if (v[i].call_line)
				fprintf(c->out, " at %s:%d", base, v[i].call_line);
			fprintf(c->out, " (%#llx)", (unsigned long long)v[i].addr);
			for (int k = 0; k < v[i].nparams; k++)
				fprintf(c->out, "%s%s%s", k ? ", " : " params ",
					v[i].params[k].name,
					gobin_piece_readable(&v[i].params[k].pieces[0]) &&
					v[i].params[k].pieces[0].kind != GOBIN_LOC_NONE ?
					"" : " (unavailable)");
			fputc('\n', c->out);
			continue;
		}
		jsonw_start_object(&c->w);
		jsonw_string_field(&c->w, "into", v[i].outer.name);
		if (v[i].call_line) {
			char at[1100];

			snprintf(at, sizeof(at), "%s:%d", base, v[i].call_line);
			jsonw_string_field(&c->w, "call_site", at);
		} else {
			jsonw_null_field(&c->w, "call_site");
		}
		jsonw_uint_field(&c->w, "address", v[i].addr);
		jsonw_name(&c->w, "params");
		jsonw_start_array(&c->w);
		for (int k = 0; k < v[i].nparams; k++)
			if (v[i].params[k].pieces[0].kind != GOBIN_LOC_NONE)
				jsonw_string(&c->w, v[i].params[k].name);
		jsonw_end_array(&c->w);
		jsonw_end_object(&c->w);
	}
	if (c->json)
		jsonw_end_array(&c->w);
	free(v);
	return n;
}

/* A function only ever inlined (no out-of-line body), `name`, listed
 * with its copies when it has some; `count`: as a function the glob
 * matched. */
static void list_only_one(struct list_ctx *c, const char *name, bool count)
{
	int n;

	if (gobin_inline_sites(c->b, name, NULL, 0, NULL) <= 0)
		return;
	if (c->json) {
		jsonw_start_object(&c->w);
		jsonw_string_field(&c->w, "name", name);
		jsonw_null_field(&c->w, "entry");
	} else {
		fprintf(c->out, "\n%s (no out-of-line body)\n", name);
	}
	n = list_inlined(c, name);
	c->matched += count && n > 0;
	if (c->json)
		jsonw_end_object(&c->w);
}

/* The functions only ever inlined that a glob's wildcards match (as it
 * probes them), other than the one it names: in JSON an array
 * "only_inlined" after "functions". */
static void list_only_inlined(struct list_ctx *c)
{
	const int n = strpbrk(c->glob, "*?[") ?
		      gobin_inline_glob(c->b, c->glob, NULL, 0, NULL) : 0;
	struct gobin_site *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;

	if (c->json) {
		jsonw_name(&c->w, "only_inlined");
		jsonw_start_array(&c->w);
	}
	if (v)
		gobin_inline_glob(c->b, c->glob, v, n, NULL);
	for (int i = 0; v && i < n; i++)   /* sorted by name: each name once */
		if ((!i || strcmp(v[i].func, v[i - 1].func)) &&
		    strcmp(v[i].func, c->glob) &&
		    gobin_func_find_all(c->b, v[i].func, NULL, 0) == 0)
			list_only_one(c, v[i].func, false);
	if (c->json)
		jsonw_end_array(&c->w);
	free(v);
}

/* Whether the glob names a file's lines: "FILE.go", "FILE.go:*" or
 * "FILE.go:LINE"; sets *line (0: all) and the file into file[len]. */
static bool file_glob(const char *glob, char *file, size_t len, int *line)
{
	const char *colon = glob ? strrchr(glob, ':') : NULL;
	const size_t n = colon ? (size_t)(colon - glob) : glob ? strlen(glob) : 0;
	const char *wild = glob ? strpbrk(glob, "*?[") : NULL;

	if (n < 4 || n >= len || strncmp(glob + n - 3, ".go", 3) ||
	    (wild && wild < glob + n))
		return false;
	*line = 0;
	if (colon && strcmp(colon + 1, "*") &&
	    ((*line = atoi(colon + 1)) <= 0 || strspn(colon + 1, "0123456789") != strlen(colon + 1)))
		return false;
	memcpy(file, glob, n);
	file[n] = '\0';
	return true;
}

/*
 * The lines of `file` a FILE:LINE probe can take (only `line` when not
 * 0): per line, each function or inlined copy with code there and its
 * first address. Returns the exit status.
 */
static int list_lines(struct list_ctx *c, const char *file, int line)
{
	const char *path = "";
	int n = gobin_line_sites(c->b, file, line, NULL, 0, &path);
	struct gobin_site *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;

	if (n > 0 && v)
		n = gobin_line_sites(c->b, file, line, v, n, &path);
	if (c->json) {
		jsonw_string_field(&c->w, "file", path);
		jsonw_name(&c->w, "lines");
		jsonw_start_array(&c->w);
	} else if (n > 0) {
		fprintf(c->out, "\nlines of %s that can be probed (FILE:LINE):\n", path);
	}
	for (int i = 0; v && i < n; i++) {
		if (c->json) {
			jsonw_start_object(&c->w);
			jsonw_int_field(&c->w, "line", v[i].line);
			jsonw_string_field(&c->w, "func", v[i].func);
			json_str_or_null(&c->w, "inlined_into",
					 v[i].inlined ? v[i].outer.name : NULL);
			jsonw_uint_field(&c->w, "address", v[i].addr);
			jsonw_end_object(&c->w);
			continue;
		}
		fprintf(c->out, "  %6d  %s%s%s (%#llx)\n", v[i].line, v[i].func,
			v[i].inlined ? ", inlined into " : "",
			v[i].inlined ? v[i].outer.name : "", (unsigned long long)v[i].addr);
	}
	if (c->json)
		jsonw_end_array(&c->w);
	free(v);
	if (n > 0)
		return 0;
	fprintf(stderr, "gotrace-record: %s: %s\n", gobin_path(c->b),
		n == -EEXIST ? "more than one file ends so; write more of its path" :
		n == -ENODATA ? "no Go 1.16+ line table (pclntab)" :
		n == 0 ? "no code of that file and line" : "out of memory");
	return 1;
}

/* The constant a GCC clone's parameter `a` is (a->folded), as Go writes
 * it, into out[len]; returns out. */
static const char *folded_str(const struct gobin_arg *a, char *out, size_t len)
{
	if (a->type == GTR_TYPE_BOOL)
		snprintf(out, len, "%s", a->folded_value ? "true" : "false");
	else if (a->type == GTR_TYPE_UINT)
		snprintf(out, len, "%llu", (unsigned long long)a->folded_value);
	else
		snprintf(out, len, "%lld", (long long)a->folded_value);
	return out;
}

static int list_one(const struct gobin_func *f, void *vctx)
{
	struct list_ctx *c = vctx;
	const struct gobin *b = c->b;
	const enum gobin_abi abi = gobin_func_abi(b, f);
	const int argsz = gobin_func_args_size(b, f);
	int np = -1, nr = -1;
	char sig[1024];

	if (c->glob && fnmatch(c->glob, f->name, 0) != 0 &&
	    (!c->glob_gccgo || fnmatch(c->glob_gccgo, f->name, 0) != 0) &&
	    strcmp(c->glob, f->name) != 0 && !is_named(c, f))
		return 0;
	c->matched++;
	if (gobin_has_dwarf(b)) {
		np = gobin_func_args(b, f, c->p, LIST_MAX_ARGS);
		nr = np >= 0 ? gobin_func_results(b, f, c->r, LIST_MAX_ARGS) : -1;
		if (nr < 0)
			nr = np >= 0 ? 0 : -1;
	}
	if (np >= 0)
		signature(f->name, c->p, np, c->r, nr, sig, sizeof(sig));
	if (c->json) {
		func_json(c, f, argsz, abi, sig, np, nr);
		return 0;
	}
	fprintf(c->out, "\n%s\n", np >= 0 ? sig : f->name);
	fprintf(c->out, "    %s at %#llx, %llu bytes", abi_name(abi),
		(unsigned long long)f->entry,
		(unsigned long long)(f->end - f->entry));
	if (argsz >= 0)
		fprintf(c->out, ", %d bytes of arguments and results", argsz);
	fputc('\n', c->out);
	for (int i = 0; i < np; i++) {
		const struct gobin_arg *a = &c->p[i];
		const char *why;
		char loc[128], num[24];

		gobin_arg_locations(a, loc, sizeof(loc));
		fprintf(c->out, "    goarg%-3d %-12s %-20s ", i + 1,
			a->name[0] ? a->name : "-", a->type_name[0] ? a->type_name : "?");
		/* listed only: the header says it once */
		if (!c->listed_only && i < GT_MAX_FETCH && gobin_arg_folded_recorded(a))
			fprintf(c->out, "%-16s the constant %s in this GCC clone "
				"(folded in, not passed): recorded as it\n", loc,
				folded_str(a, num, sizeof(num)));
		else if (!arg_capture(c->listed_only, whole_fields(c, f, a), i, a, &why) &&
			 !c->listed_only && a->folded)
			fprintf(c->out, "%-16s not captured: the constant %s in "
				"this GCC clone (folded in), not passed\n", loc,
				folded_str(a, num, sizeof(num)));
		else if (!c->listed_only && why)
			fprintf(c->out, "%-16s not captured: %s\n", loc, why);
		else
			fprintf(c->out, "%s\n", loc);
	}
	if (c->glob)
		list_inlined(c, f->name);
	return 0;
}

int gotrace_list(const char *binary, const char *debuginfo, const char *glob,
		 bool json, FILE *out)
{
	struct list_ctx *c;
	char err[1024], file[512];
	struct gobin *b;
	int rc = 0, line;

	b = gobin_open(binary, err, sizeof(err));
	if (!b) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return 1;
	}
	if (debuginfo && gobin_open_debuginfo(b, debuginfo, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		gobin_close(b);
		return 1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "gotrace-record: cannot list %s: out of memory\n",
			binary);
		gobin_close(b);
		return 1;
	}
	c->b = b;
	if (!gobin_arch_info(b)->capture) {
		snprintf(c->listed_buf, sizeof(c->listed_buf),
			 "%s program: listed only", gobin_arch_info(b)->goarch);
		c->listed_only = c->listed_buf;
	}
	c->glob = glob && *glob ? glob : NULL;
	c->glob_gccgo = c->glob ? gobin_glob_gccgo(b, c->glob, c->glob_buf,
						   sizeof(c->glob_buf)) : NULL;
	c->nnamed = c->glob ? gobin_func_find_all(b, c->glob, NULL, 0) : 0;
	if (c->nnamed > 0) {
		c->named = calloc((size_t)c->nnamed, sizeof(*c->named));
		if (!c->named) {
			fprintf(stderr, "gotrace-record: cannot list %s: out of "
				"memory\n", binary);
			free(c);
			gobin_close(b);
			return 1;
		}
		gobin_func_find_all(b, c->glob, c->named, c->nnamed);
	}
	c->json = json;
	c->out = out;
	jsonw_init(&c->w, &c->jb, LIST_JSON_ESC);
	if (json) {
		jsonw_start_object(&c->w);
		facts_json(b, &c->w);
		json_str_or_null(&c->w, "glob", c->glob);
		buf_putc(&c->jb, '\n');
	} else {
		facts_text(b, out);
		fprintf(out, "functions    %zu\n", gobin_func_count(b));
	}
	const bool lines = file_glob(c->glob, file, sizeof(file), &line);

	if (lines) {
		rc = list_lines(c, file, line);
		c->glob = NULL;      /* no function is asked for */
	}
	if (json) {
		jsonw_name(&c->w, "functions");
		jsonw_start_array(&c->w);
		buf_putc(&c->jb, '\n');
	}
	if (!lines)
		gobin_func_each(b, NULL, list_one, c);
	if (c->glob && !c->matched)
		list_only_one(c, c->glob, true);
	if (json)
		jsonw_end_array(&c->w);
	if (c->glob)
		list_only_inlined(c);
	if (json) {
		jsonw_uint_field(&c->w, "matched", c->matched);
		jsonw_end_object(&c->w);
		buf_putc(&c->jb, '\n');
		json_flush(&c->jb, out, 0);
	} else if (c->glob) {
		fprintf(out, "\n%zu of %zu functions match '%s'\n", c->matched,
			gobin_func_count(b), c->glob);
	}
	if (c->glob && c->matched == 0) {
		const char *near[5];
		const int n = gobin_func_suggest(b, c->glob, near, 5);

		struct buf t = BUF_INIT, u = BUF_INIT;

		fprintf(stderr, "gotrace-record: no function of %s matches '%s'",
			buf_shown(&t, binary), buf_shown(&u, c->glob));
		for (int i = 0; i < n; i++)   /* names of the binary: controls escaped */
			fprintf(stderr, "%s%s", i ? ", " : "; did you mean: ",
				buf_shown(&t, near[i]));
		buf_free(&t);
		buf_free(&u);
		fprintf(stderr, "%s\n", n ? "" : " (globs: * ? [...]; quote the "
			"pattern for the shell)");
		rc = 1;
	}
	buf_free(&c->jb);
	free(c->named);
	free(c);
	gobin_close(b);
	return rc;
}
