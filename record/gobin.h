/* SPDX-License-Identifier: MIT */
/*
 * gobin: what gotrace knows about a Go executable: compiler, Go version,
 * architecture, functions (from .gopclntab, so stripped binaries work) and,
 * for a function, where each argument lives at entry (from DWARF types and
 * the calling convention). Sources of facts: Go src/cmd/compile/abi-internal.md,
 * src/debug/gosym/pclntab.go, src/debug/buildinfo/buildinfo.go.
 */
#ifndef GOTRACE_GOBIN_H
#define GOTRACE_GOBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "gtr.h"

struct gobin;

/* Words (leaves) of one argument gotrace places: a struct of up to this
 * many scalar fields, string words included. */
#define GOBIN_MAX_PIECES 16

enum gobin_compiler { GOBIN_GC = 0, GOBIN_GCCGO = 1 };

/* A function of the binary, as .gopclntab (or the ELF symbol table) names it. */
struct gobin_func {
	const char *name;     /* owned by the gobin */
	uint64_t entry;       /* link-time virtual address of the first byte */
	uint64_t end;         /* first byte after the function */
	uint64_t file_offset; /* offset of `entry` in the file (for uprobes) */
};

/* Where a piece of a value lives. */
enum gobin_loc {
	GOBIN_LOC_NONE = 0,   /* not known */
	GOBIN_LOC_REG = 1,    /* machine register `mreg` */
	GOBIN_LOC_STACK = 2,  /* memory at SP + offset */
};

/*
 * Where one piece (a machine word or less) of an argument lives at function
 * entry: a machine register of the program's architecture (arch.h), or the
 * stack at SP + offset (return address at SP + 0 on amd64). Whether this
 * gotrace can read it is the plan's business (record/fetch.c).
 */
struct gobin_piece {
	enum gobin_loc kind;  /* GOBIN_LOC_REG, GOBIN_LOC_STACK, GOBIN_LOC_NONE */
	uint8_t mreg;         /* GOBIN_LOC_REG: enum gobin_mreg */
	int32_t offset;       /* GOBIN_LOC_STACK: bytes from SP at entry */
	uint8_t size;         /* bytes: 1, 2, 4 or 8 */
};

/* "RAX", "X3", "R0", "F1" for a gobin_mreg; "" for GOBIN_MREG_NONE. */
const char *gobin_mreg_name(unsigned mreg);

/*
 * Whether a uprobe on the program's own architecture can read the piece:
 * stack slots and integer registers yes, float registers no (uprobe
 * pt_regs carries no FP state). True also for arm64 integer registers,
 * which this gotrace cannot attach to (struct gt_arch.capture).
 */
bool gobin_piece_readable(const struct gobin_piece *p);

/*
 * Writes where `p` lives into out[outlen] ("RAX", "SP+16", "X0") and
 * returns out.
 */
char *gobin_piece_str(const struct gobin_piece *p, char *out, size_t outlen);

struct gobin_arg;

/*
 * Writes where each piece of `a` lives into out[outlen], comma-separated
 * ("RBX,RCX", "SP+8"; "?" when none is known; "[RAX+8]" for a value in
 * memory at a register's address, gobin_arg.in_memory), and returns out.
 */
char *gobin_arg_locations(const struct gobin_arg *a, char *out, size_t outlen);

/* gccgo's interface values (struct gobin_arg's gccgo_iface) */
enum { GOBIN_GCCGO_METHODS = 3, GOBIN_GCCGO_EMPTY = 4 };

/*
 * One parameter of a function with the location of its parts. A string has
 * two pieces (data pointer, length); scalar types have one.
 */
struct gobin_arg {
	char name[128];       /* "" when unknown */
	char type_name[256];  /* Go type as DWARF names it, "" when unknown */
	enum gtr_type type;
	uint32_t size;        /* bytes of the whole value */
	uint32_t npieces;
	struct gobin_piece pieces[GOBIN_MAX_PIECES];
	uint8_t iface;        /* 1: interface with methods (itab, data),
				 2: empty interface (type, data),
				 GOBIN_GCCGO_METHODS: gccgo's methods table
				 (whose first word is the type descriptor),
				 0: neither */
	uint8_t gccgo_iface;  /* gccgo's interface, a struct of two words in
				 its DWARF: GOBIN_GCCGO_METHODS (methods
				 table, object) or GOBIN_GCCGO_EMPTY (type
				 descriptor, object); 0: not one */
	uint32_t elem_size;   /* a slice or array of single values
				 (numbers, bools, pointers, strings): bytes
				 of one element, from its DWARF or signature
				 type; else 0 */
	const char *elem;     /* then the predeclared type of those bytes
				 (gtr_arg.elem: "int64", "uint8", "bool"...),
				 a static string; "" or NULL: not shown */
	uint32_t array_len;   /* an array type [N]T: N; else 0 */
	bool array;           /* an array [N]T of such elements, read whole
				 (size bytes) where its one piece is
				 (gobin_arg_array(), record/fetch.c) */
	bool folded;          /* a GCC clone's parameter its DWARF gives as
				 the constant `folded_value` (gccgo -O2,
				 .constprop.N); its pieces are nowhere */
	int64_t folded_value;
	bool in_memory;       /* the value lies in memory at the address its
				 one piece (a register) holds, + mem_off: a
				 gccgo result returned in memory (System V
				 x86-64 psABI 3.2.3: the caller's hidden
				 pointer, which %rax holds at the return) */
	int32_t mem_off;      /* in_memory: bytes from that address */
};

/* Where an array a uprobe reads lies (gobin_arg_array()). */
enum gobin_array {
	GOBIN_ARRAY_NONE = 0,   /* not an array it reads */
	GOBIN_ARRAY_STACK,      /* whole on the stack, from its one piece */
	GOBIN_ARRAY_REG,        /* whole in its one piece, an integer register */
};

/*
 * Whether `a` is an array [N]T of single values (elem_size) that a
 * uprobe reads whole, and where: on the stack where its one piece
 * starts, or in one integer register (the plan sets gobin_arg.array);
 * GOBIN_ARRAY_NONE for arrays in two registers (gccgo's of 9-16 bytes)
 * or float registers, and arrays of aggregates.
 */
enum gobin_array gobin_arg_array(const struct gobin_arg *a);

/*
 * Opens `path` and reads its ELF headers, .go.buildinfo and .gopclntab
 * (located by section name, or by searching read-only data for the pclntab
 * magic when section headers are gone). Returns NULL with a message in
 * err[errlen] naming the file, e.g. "... is not a Go program (no .gopclntab)".
 */
struct gobin *gobin_open(const char *path, char *err, size_t errlen);

/* Frees everything of `b` (NULL is fine). */
void gobin_close(struct gobin *b);

/* Facts about the binary. Strings are owned by `b`; "" when unknown. */
const char *gobin_path(const struct gobin *b);
const char *gobin_go_version(const struct gobin *b);  /* "go1.19.8" */
const char *gobin_build_id(const struct gobin *b);    /* hex GNU build id */
enum gobin_compiler gobin_compiler(const struct gobin *b);
enum gobin_arch gobin_arch(const struct gobin *b);
/* What gotrace knows of the binary's architecture (arch.h). */
const struct gt_arch *gobin_arch_info(const struct gobin *b);
bool gobin_is_pie(const struct gobin *b);
bool gobin_is_stripped(const struct gobin *b);        /* no .symtab */
bool gobin_has_dwarf(const struct gobin *b);
bool gobin_regabi(const struct gobin *b); /* gc amd64/arm64 with Go >= 1.17/1.18 */

/*
 * Link-time span [*lo, *hi) of the PT_LOAD segments of `b`, and where its
 * executable segment is (*text_vaddr: p_vaddr, *text_offset: p_offset);
 * all 0 when it has none. From the program headers gobin_open read.
 */
void gobin_load_span(const struct gobin *b, uint64_t *lo, uint64_t *hi,
		     uint64_t *text_vaddr, uint64_t *text_offset);

/*
 * The machine code of `f` as the file holds it (from f->file_offset, at
 * most `max` bytes and not past f->end): a pointer into the mapping of
 * `b`, valid until gobin_close(), with its length in *len; NULL when none
 * of it is in the file.
 */
const uint8_t *gobin_func_code(const struct gobin *b, const struct gobin_func *f,
			       size_t max, size_t *len);

/*
 * The `len` bytes at link-time address `vaddr` when the file holds them in
 * a read-only PT_LOAD segment (text, .rodata: what a running process
 * cannot have changed), as a pointer into the mapping of `b`; else NULL.
 */
const uint8_t *gobin_rodata_at(const struct gobin *b, uint64_t vaddr, size_t len);

/* Fills a struct gtr_binary describing `b` (strings point into `b`). */
void gobin_describe(const struct gobin *b, struct gtr_binary *out);

/*
 * Finds the function named exactly `name` (a full Go symbol such as
 * "main.(*T).M"). Returns 0 and fills *out, or -ENOENT.
 */
int gobin_func_find(const struct gobin *b, const char *name,
		    struct gobin_func *out);

/*
 * Every function named exactly `name` that a probe on that name means:
 * each instance of a generic function ("main.Map[...]" names them all),
 * but not an ABI wrapper beside a real function of the same name. When
 * no function has that name: a generic function's name as the source
 * writes it ("main.Sum", "main.(*List).Push") means all its instances,
 * and an instance's ELF symbol ("main.Sum[go.shape.int_0]", what nm
 * prints where pclntab says "main.Sum[...]", Go 1.18-1.20) the function
 * at its address. In a gccgo binary a Go name finds the function gccgo
 * names otherwise ("main.(*T).M" is main.T.M, "main.main.func1"
 * main.main..func1). Writes up to `max` to out[] and returns how many
 * there are (0: none).
 */
int gobin_func_find_all(const struct gobin *b, const char *name,
			struct gobin_func *out, int max);

/*
 * The cgo export wrapper of the Go function `name` ("main.goCallback" or
 * "goCallback", exported with //export): "_cgoexp_<hash>_goCallback",
 * which C calls and into which gc usually inlines the function itself, so
 * that no function of the Go name is left; its one parameter points at
 * the arguments and results (src/cmd/cgo/out.go, writeExports). Returns 0
 * and fills *out, or -ENOENT.
 */
int gobin_func_find_cgo_export(const struct gobin *b, const char *name,
			       struct gobin_func *out);

/*
 * Calls fn for every function whose name matches the shell glob `pattern`
 * (fnmatch(3) without FNM_PATHNAME; NULL matches all; in a gccgo program
 * also its gobin_glob_gccgo() spelling), in address order. Stops early
 * when fn returns non-zero and returns that value; else 0.
 */
/*
 * A glob written with a pointer receiver, "main.(*T).*", as gccgo spells
 * its names ("main.T.*", gobin_gccgo_name: gccgo's names do not tell a
 * pointer receiver from a value one), into out[outlen]; NULL when `b` is
 * no gccgo program or the glob names no receiver.
 */
const char *gobin_glob_gccgo(const struct gobin *b, const char *pattern, char *out,
			     size_t outlen);

int gobin_func_each(const struct gobin *b, const char *pattern,
		    int (*fn)(const struct gobin_func *f, void *ctx), void *ctx);

/*
 * Up to `max` distinct function names closest to `name`, for "did you
 * mean" hints: those of its package first, then the others, each by edit
 * distance on the part after the package (for a bare name, also on the
 * method or function name alone), then on the whole, within a third of
 * that part's letters (at least 1) in its package and a quarter in
 * others (none below 5 letters; a misspelt package keeps its function's
 * name); a cgo export
 * wrapper by the Go name it exports; names the compiler makes up
 * (type..eq.T) never. Returns the number written to out[]; names are
 * owned by `b`.
 */
int gobin_func_suggest(const struct gobin *b, const char *name,
		       const char **out, int max);

/*
 * Every function whose method or function name (its last component) is
 * `bare` ("WriteHeader": net/http.(*response).WriteHeader,
 * net/http.(*http2responseWriter).WriteHeader...), ABI wrappers and
 * names the compiler makes up left out, in address order. Writes up to
 * `max` to out[] and returns how many there are.
 */
int gobin_func_named(const struct gobin *b, const char *bare,
		     struct gobin_func *out, int max);

/*
 * Why a function named `name` is not in `b`, when gotrace knows: GCC
 * kept only clones of it (gobin_func_gcc_clone), a stripped gccgo
 * program has only its dynamic symbols, a gccgo program's standard
 * library is in libgo.so. Writes a NUL-terminated sentence into
 * buf[len] and returns its length; 0 when there is nothing to say.
 */
size_t gobin_func_missing_why(const struct gobin *b, const char *name,
			      char *buf, size_t len);

/*
 * Parameters of `f` at entry, in order (a generic instance's hidden
 * dictionary ".dict" first, which Go 1.18-1.19 DWARF omits; then the
 * receiver), with names and types from DWARF (the binary's, or a separate
 * debug file's) and locations from the calling convention of `f`.
 * Without DWARF returns -ENODATA. Returns the number of parameters written
 * to args[max] or a negative errno.
 */
int gobin_func_args(const struct gobin *b, const struct gobin_func *f,
		    struct gobin_arg *args, int max);

/*
 * Raw argument words for a function without type information: for the
 * register ABI the first `n` integer argument registers (amd64: RAX, RBX,
 * RCX, RDI, RSI, R8, R9, R10, R11; arm64: R0-R15; struct gt_arch
 * go_iregs), for ABI0 the stack words from SP+ptrsize. Fills args[] as
 * GTR_TYPE_WORD named "" and returns the count written.
 */
int gobin_raw_args(const struct gobin *b, struct gobin_arg *args, int n);

/*
 * Byte offset of `goid` in runtime.g: from DWARF, else the per-Go-version
 * table (gofacts.c), else derived from the code of the binary's runtime
 * (gobin_goid_offset_derived()); -1 when none of them knows.
 */
int gobin_goid_offset(const struct gobin *b);

/* Where gobin_goid_offset() came from: "DWARF", "table", "derived", or ""
 * when it is unknown. */
const char *gobin_goid_source(const struct gobin *b);

/*
 * The goid offset that runtime.goroutineheader's code reads (gc
 * binaries of an architecture with a goid_from_code hook, arch.h: amd64;
 * stripped or not), or -1.
 */
int gobin_goid_offset_derived(const struct gobin *b);

/* Where the Go version came from: "buildinfo", "runtime.buildVersion",
 * or "" when it is unknown. */
const char *gobin_version_source(const struct gobin *b);

/* ------------------------------------------------ additions (gobin.c) */

/*
 * Results of `f` at a RET instruction (SP pointing at the return address
 * as at entry), in order, with names ("~r0" for unnamed), types and
 * locations by the same rules as gobin_func_args (register ABI: results
 * are assigned again from the first register; stack results follow the
 * stack arguments after pointer alignment). gccgo: RAX/RDX only. Returns
 * the count written to args[max], -ENODATA without DWARF, -ENOENT when
 * DWARF does not describe `f`.
 */
int gobin_func_results(const struct gobin *b, const struct gobin_func *f,
		       struct gobin_arg *args, int max);

/*
 * Finds the function containing link-time address `addr` (entry <= addr <
 * end). Returns 0 and fills *out, or -ENOENT.
 */
int gobin_func_at(const struct gobin *b, uint64_t addr, struct gobin_func *out);

/* Calling convention of one function. */
enum gobin_abi {
	GOBIN_ABI_INTERNAL = 0, /* gc register ABI (amd64 Go >= 1.17) */
	GOBIN_ABI0 = 1,         /* gc stack ABI: pre-regabi Go, 386, assembly */
	GOBIN_ABI_C = 2,        /* gccgo: the platform C ABI */
};

/*
 * Calling convention of `f`: the binary's, except that Go assembly
 * functions are ABI0 even in register-ABI binaries (pclntab funcFlag_ASM,
 * known from Go 1.18 on).
 */
enum gobin_abi gobin_func_abi(const struct gobin *b, const struct gobin_func *f);

/*
 * As gobin_raw_args, for the convention of `f` (gobin_func_abi): ABI0
 * words from SP+ptrsize for assembly functions, C ABI registers (RDI, RSI,
 * RDX, RCX, R8, R9) for gccgo. Returns the count written.
 */
int gobin_func_raw_args(const struct gobin *b, const struct gobin_func *f,
			struct gobin_arg *args, int n);

/*
 * Whether `f` is a copy GCC made of a function with a different parameter
 * list (gccgo -O2; gcc/ipa-cp.cc, ipa-sra.cc, ipa-split.cc): its symbol
 * ends in ".constprop.N" (constant arguments folded in), ".isra.N" (a
 * parameter passed in pieces, or dropped) or ".part.N" (a split-off part),
 * possibly several ("main.slc.constprop.0.isra.0"). Such a copy's values
 * come from its own DWARF, never from the declaration's signature.
 */
bool gobin_func_gcc_clone(const struct gobin *b, const struct gobin_func *f);

/*
 * Whether `a` is a GCC clone's parameter folded to a constant
 * (a->folded) that events record as that constant: an integer or a bool
 * (a float's or a string's constant is not kept).
 */
bool gobin_arg_folded_recorded(const struct gobin_arg *a);

/* Number of functions gobin_func_each can visit. */
size_t gobin_func_count(const struct gobin *b);

/* Go's own build id (ELF note "Go", type 4), "" when none. */
const char *gobin_go_build_id(const struct gobin *b);

/*
 * A remark on how something had to be inferred (e.g. "pclntab textStart
 * is 0; took .text start 0x401000"), "" when nothing was unusual.
 */
const char *gobin_note(const struct gobin *b);

/* ------------------------------------------------ build info (buildinfo.c) */

/*
 * From the modinfo of .go.buildinfo (Go src/runtime/debug/mod.go, the
 * text `go version -m` prints): the main package path ("path" line,
 * "filippo.io/age/cmd/age"), the main module path and version ("mod"
 * line; "" when the build had no module, e.g. GO111MODULE=off). Owned by
 * `b`; "" when unknown.
 */
const char *gobin_main_path(const struct gobin *b);
const char *gobin_main_module(const struct gobin *b);
const char *gobin_main_version(const struct gobin *b);

/*
 * Build setting number `i` ("build" lines: -buildmode, -ldflags,
 * CGO_ENABLED, GOARCH, GOAMD64, vcs.revision...): sets *key and *value
 * (owned by `b`) and returns 0, or -ENOENT past the last one.
 */
int gobin_build_setting(const struct gobin *b, size_t i, const char **key,
			const char **value);

/* ------------------------------------------------ signatures (sig.c) */

/*
 * Parameters of `f` from a Go signature the user wrote, for binaries
 * without DWARF: `params` is the text inside the parentheses of
 * 'main.greet(s string, n int)', e.g. "s string, n int", "a, b int",
 * "int, string" (unnamed: named "" and reachable as goargN), "p *net/http.Request",
 * "b []byte", "m map[string]int", "ch chan int", "fn func(int) error",
 * "e error", "v any", "x interface{}", "t struct{ a int; b string }",
 * "arr [4]int32", "xs ...int". Named types other than a few well-known
 * ones (error, any, time.Duration, context.Context, io.Reader...) have no
 * known size without DWARF and are an error; so is a value receiver
 * (main.T.M), whose type is one. A pointer receiver (main.(*T).M) comes
 * first, as a pointer named "recv". Locations follow the calling
 * convention of `f` (gobin_func_abi) exactly as gobin_func_args does.
 * `results` (NULL: not written) are the function's results as
 * gobin_sig_results takes them: not captured here, but they place the
 * parameters of a gccgo function returning more than two words, whose
 * hidden result pointer comes first (System V psABI 3.2.3).
 * Returns the count written to args[max], or -EINVAL with a message in
 * err[errlen] that quotes the signature and says what to write instead
 * (or that `f` is a GCC clone, gobin_func_gcc_clone, which no signature
 * describes).
 */
int gobin_sig_args(const struct gobin *b, const struct gobin_func *f,
		   const char *params, const char *results, struct gobin_arg *args,
		   int max, char *err, size_t errlen);

/*
 * Whether a signature (`params`, `results` as gobin_sig_results takes
 * them) fits generic instance `f`, one of several a name stands for
 * (main.Sum is main.Sum[go.shape.int] and main.Sum[go.shape.string]):
 * 1 when the types DWARF gives its parameters are the signature's (from
 * the last back to the receiver and dictionary), or without DWARF when
 * each shape its name spells (Go 1.21+) is a type the signature writes;
 * 0 when they are not; -1 when that cannot be told (a name of Go
 * 1.18-1.20, "main.Sum[...]", without DWARF) or f is no instance; -2
 * when the signature itself is wrong (gobin_sig_args says why).
 */
int gobin_sig_fits(const struct gobin *b, const struct gobin_func *f,
		   const char *params, const char *results);

/*
 * Results of `f` at a RET instruction from a signature the user wrote:
 * `params` as gobin_sig_args takes them (they place the results of the
 * stack ABI), `results` the text of its results, "n int, err error",
 * "int, error" or "error" (unnamed ones are named "~r0", "~r1"... as
 * DWARF names them). Locations as gobin_func_results gives them.
 * Returns the count written to args[max], or -EINVAL with a message in
 * err[errlen].
 */
int gobin_sig_results(const struct gobin *b, const struct gobin_func *f,
		      const char *params, const char *results,
		      struct gobin_arg *args, int max, char *err, size_t errlen);

/*
 * Bytes of the argument area the Go runtime records for `f` (pclntab
 * _func.args: stack arguments and results, plus the spill space of
 * register arguments in the register ABI), or -1 when unknown (gccgo,
 * or the runtime marks it unknown). A signature whose arguments need more
 * than this is wrong.
 */
int gobin_func_args_size(const struct gobin *b, const struct gobin_func *f);

/* ------------------------------------------------ separate debug info */

/*
 * Loads DWARF for `b` from the separate debug file `path` (as made by
 * `objcopy --only-keep-debug`, or a Debian -dbgsym package's file), for
 * `gotrace-record --debuginfo FILE`. The file must be ELF with
 * .debug_info and, when both have a GNU build id, the same one. Returns 0,
 * or a negative errno with a message in err[errlen] naming the file.
 */
int gobin_open_debuginfo(struct gobin *b, const char *path, char *err,
			 size_t errlen);

/*
 * Path of the separate debug file DWARF comes from, "" when DWARF is in
 * the binary itself or absent. gobin_open looks for one by itself when
 * the binary has no DWARF: /usr/lib/debug/.build-id/xx/rest.debug (GNU
 * build id), then the .gnu_debuglink name (CRC-checked) next to the
 * binary, in its .debug/ directory and under /usr/lib/debug.
 */
const char *gobin_debuginfo_path(const struct gobin *b);

/*
 * Root of the debug directories gobin_open searches (default
 * "/usr/lib/debug"); for tests and unusual layouts. The string must
 * outlive later gobin_open calls; NULL restores the default.
 */
void gobin_set_debug_root(const char *dir);

/* ------------------------------------------------ field paths */

#define GOBIN_PATH_MAX_DEREF 4

/*
 * Where the value of a field path lives, relative to its root parameter
 * (a pointer): follow `nderef` pointers, each read at base + deref[k]
 * (base = the root's value, then each pointer read), then the value is
 * at base + offset.
 */
struct gobin_path {
	char root[128];          /* the root parameter's name */
	/* A struct root passed by value: the root word is its field at byte
	 * value_off (on the stack) or integer register `slot` of the
	 * parameter (in registers; -1 unknown); `direct`: that field is the
	 * value itself, no memory is read. */
	bool value_root, direct;
	int slot;
	int32_t value_off;
	int nderef;
	int32_t deref[GOBIN_PATH_MAX_DEREF];
	int32_t offset;
	enum gtr_type type;      /* GTR_TYPE_OTHER: not capturable */
	uint32_t size;           /* bytes of the final value */
	uint32_t elem_size;      /* GTR_TYPE_SLICE: gobin_arg.elem_size's */
	const char *elem;        /* and gobin_arg.elem's */
	bool array;              /* GTR_TYPE_SLICE: an array [N]T of such
				    elements, read whole (size bytes) */
	char type_name[256];
};

/*
 * Resolves "r.URL.Path" for function `f` from DWARF: `r` is a pointer
 * parameter or a struct passed by value; each ".FIELD" selects a struct
 * member, following pointers on the way. Returns 0 and fills *out, or a negative errno with a message in
 * err[errlen] (-ENODATA without DWARF, -ENOENT for an unknown parameter or
 * field, -EINVAL for a non-pointer root or a non-struct step, -E2BIG for
 * more than GOBIN_PATH_MAX_DEREF pointers).
 */
int gobin_field_path(const struct gobin *b, const struct gobin_func *f,
		     const char *path, struct gobin_path *out, char *err,
		     size_t errlen);

/*
 * As gobin_field_path, without DWARF: from the runtime type descriptors
 * of `b`, the root being a parameter of type `root_type` as a signature
 * wrote it with its package path ("*net/http.Request", or a named
 * struct passed by value, "main.Point"). Returns 0 and fills *out, or a
 * negative errno with a message in err[errlen] (-ENOENT: no such type
 * or field).
 */
int gobin_field_path_td(const struct gobin *b, const char *root_type,
			const char *path, struct gobin_path *out, char *err,
			size_t errlen);

/* Bytes of a field path's text; levels of nested structs a struct
 * passed by value is captured through. */
#define GOBIN_PATH_LEN 128
#define GOBIN_STRUCT_DEPTH 4
/* Fields of one struct passed by value that a probe captures whole. */
#define GOBIN_STRUCT_FIELDS 12

/*
 * The fields of `root`, a parameter (or result) of `f` that is a struct
 * passed by value, that gotrace captures when it captures the struct
 * whole: the field paths of its integers, bools, pointers, strings and
 * []byte ("p.X", "r.Min.X", "r.Name"), in declaration order, through
 * nested structs (not pointers) at most GOBIN_STRUCT_DEPTH levels deep;
 * floats, interfaces, slices, arrays and deeper structs are left out.
 * From DWARF. Writes up to `max` into out[] and returns how many there
 * are (more than max: some were not written), -ENODATA without DWARF,
 * -ENOENT for an unknown parameter, -EINVAL when it is not a struct.
 */
int gobin_struct_fields(const struct gobin *b, const struct gobin_func *f,
			const char *root, char (*out)[GOBIN_PATH_LEN], int max);

/*
 * As gobin_struct_fields, without DWARF: the fields of `root`, a struct
 * passed by value of the named type `type_name` ("main.Point",
 * "net/http.serverHandler"), from the runtime type descriptors. Returns
 * how many there are, or -ENOENT when they hold no such type.
 */
int gobin_struct_fields_td(const struct gobin *b, const char *type_name,
			   const char *root, char (*out)[GOBIN_PATH_LEN], int max);

/*
 * Go name of the runtime type descriptor (runtime._type) at link-time
 * address `addr`, from DWARF's DW_AT_go_runtime_type, else from the
 * descriptor itself (stripped binaries, Go 1.19+); NULL when unknown (not
 * a type's address, gccgo, older Go without DWARF). Used to name the
 * dynamic type of a captured interface.
 */
const char *gobin_type_name_at(const struct gobin *b, uint64_t addr);

/*
 * gccgo's type descriptors (GCC 12's libgo/go/runtime/type.go, _type):
 * the offset of `_string *string`, after size, ptrdata (words), hash (4
 * bytes), tflag, align, fieldAlign, kind (a byte each), equal and gcdata
 * (words): 40 on x86-64.
 */
uint32_t gobin_gccgo_type_string_off(int ptrsize);

/*
 * A gccgo reflection string c[n] as its type's name into full[len]: the
 * package paths gccgo quotes between tabs ("\tmain\tmain.Rect") dropped,
 * as libgo's reflect.rtype.String drops them. False when it holds control
 * characters, an unclosed quote or nothing, or does not fit.
 */
bool gobin_gccgo_reflect_name(const uint8_t *c, size_t n, char *full, size_t len);

/* ------------------------------------------------ inlined copies, lines */

/*
 * A place a probe goes that is not a function's entry: an inlined copy of
 * a function inside another one, or the first instruction of a source
 * line in one function or inlined copy (inline.c).
 */
struct gobin_site {
	uint64_t addr;          /* link-time address of its first instruction */
	uint64_t file_offset;   /* of addr (for uprobes) */
	uint64_t end;           /* an inlined copy: end of its highest range
				   (not where it returns); 0 for a line */
	const char *func;       /* the function the code is of (owned by b) */
	struct gobin_func outer;/* the function whose body holds it */
	bool inlined;           /* the code is an inlined copy of func */
	int32_t node;           /* pclntab inline tree node, -1 none */
	const char *call_file;  /* where outer (or the copy it is inlined
				   into) calls func; "" unknown */
	int call_line;          /* 0 unknown */
	const char *file;       /* a line: its file as the line table spells
				   it; "" for an inlined copy */
	int line;               /* a line: its number; 0 for an inlined copy */
	int nparams;            /* parameters of func DWARF locates at addr */
	const struct gobin_arg *params; /* owned by b; NULL when none */
};

/*
 * Every inlined copy of the function named exactly `name`, in address
 * order: from DWARF's DW_TAG_inlined_subroutine (its lowest address, and
 * the parameters whose location lists place them there in registers or
 * on the stack of the copy's first instruction) when the binary has
 * DWARF, else from the pclntab inline tree (Go 1.16+; no parameters).
 * *source gets "DWARF" or "pclntab". Writes up to `max` to out[] and
 * returns how many there are, or -ENOMEM.
 */
int gobin_inline_sites(const struct gobin *b, const char *name,
		       struct gobin_site *out, int max, const char **source);

/*
 * Why inlined copies of some functions of b cannot be known, NULL when
 * none are missing: a Go 1.16-1.17 PIE whose inline trees' addresses are
 * relocations gotrace cannot apply ("this binary's inline tree needs
 * relocations gotrace cannot apply (N functions)"; the text lives as
 * long as b). Probes then cover the out-of-line bodies only.
 */
const char *gobin_inline_gap(const struct gobin *b);

/*
 * As gobin_inline_sites, for every function whose name matches the shell
 * glob `pattern` (fnmatch(3) without flags), functions with no
 * out-of-line body too: ordered by name, then address. *nnames (when not
 * NULL) gets how many functions they are copies of.
 */
int gobin_inline_glob(const struct gobin *b, const char *pattern,
		      struct gobin_site *out, int max, int *nnames);

/*
 * The sites of source line `line` of `file` (a path as the line table
 * spells it, or a suffix of one after a '/': "main.go", "cmd/x/main.go"):
 * per function and per inlined copy, the first address the pclntab's
 * line table maps to that line where DWARF's line table begins a
 * statement (is_stmt), else (no DWARF, or no such row there) where every
 * path into the line's code meets, or each entry into it when the paths
 * do not meet (amd64's decoder, the arch's `flow` hook), else its lowest
 * address. *path gets the file's full path.
 * Returns how many there are (up to `max` written), -ENODATA when the
 * binary has no Go 1.16+ pclntab, -EEXIST when the suffix names two
 * different files, -ENOMEM. Line 0 means every line of the file: the
 * sites of each, ordered by line then address (for --list).
 */
int gobin_line_sites(const struct gobin *b, const char *file, int line,
		     struct gobin_site *out, int max, const char **path);

/* Code of a function that is an inlined copy of another (see
 * gobin_inline_ranges). */
struct gobin_inl_range {
	uint32_t off, size;     /* bytes from the function's entry */
	uint32_t depth;         /* 1: inlined into the function itself, 2:
				   into a depth-1 copy... */
	const char *name;       /* the inlined function (owned by b) */
};

/*
 * The inlined copies in the code of `f` as ranges from the pclntab's
 * inline tree (Go 1.16+; DWARF or not): each run of instructions of a
 * copy, as deep as it is, so that the copies holding an address, deepest
 * first, and then f are the frames Go's tracebacks show there. *out is
 * malloc'd (NULL when none). Returns the count, or -ENOMEM.
 */
int gobin_inline_ranges(const struct gobin *b, const struct gobin_func *f,
			struct gobin_inl_range **out);

/*
 * Bytes of frame of gc code at `pc` (the pclntab's pcsp table of its
 * function: 0 at the entry and in a function that keeps no frame), so
 * that the return address is at SP + that; -1 unknown (gccgo, no
 * function there).
 */
int32_t gobin_frame_at(const struct gobin *b, uint64_t pc);

/*
 * The variables and parameters named names[0..n) in scope at site `s`
 * (the innermost DWARF scope holding s->addr outwards: lexical blocks,
 * inlined copies, the function), located at that address from their
 * location lists into out[n] (a value the compiler keeps nowhere there
 * has GOBIN_LOC_NONE pieces). Returns n, or a negative errno with a
 * message in err[errlen]: -ENODATA without DWARF there, -ENOENT naming a
 * variable not in scope, -ENOMEM.
 */
int gobin_site_vars(const struct gobin *b, const struct gobin_site *s,
		    char *const *names, int n, struct gobin_arg *out,
		    char *err, size_t errlen);

#endif /* GOTRACE_GOBIN_H */
