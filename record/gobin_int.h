/* SPDX-License-Identifier: MIT */
/*
 * Private to gobin*.c, pclntab.c, buildinfo.c, dwarf.c, abi.c: the gobin
 * object and the helpers those files share. Nothing outside record/gobin*
 * includes this.
 */
#ifndef GOTRACE_GOBIN_INT_H
#define GOTRACE_GOBIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <gelf.h>
#include <libelf.h>

#include "elfimg.h"
#include "gobin.h"

#define GOBIN_MAX_SEGS 32

/* Per-function flags (from pclntab _func.flag). */
#define GOBIN_FF_ASM 1   /* written in Go assembly */
#define GOBIN_FF_ABI0 2  /* ABI0 in a register-ABI binary */
#define GOBIN_FF_WRAPPER 4 /* generated wrapper (funcID_wrapper) */

/* A PT_LOAD program header. */
struct gobin_seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

/* Name -> DWARF DIE offset of a subprogram (sorted by name). */
struct gobin_die_ix {
	const char *name;
	uint64_t off;
};

/* low_pc -> DWARF DIE offset of a subprogram (sorted by pc). */
struct gobin_pc_ix {
	uint64_t pc, off;
};

struct gobin {
	char *path;
	int fd;
	const uint8_t *map;   /* the whole file, read-only */
	size_t size;
	Elf *elf;
	int ptrsize;          /* 4 or 8 */
	bool big_endian;
	uint16_t machine;     /* EM_* */

	enum gobin_compiler compiler;
	enum gobin_arch arch;
	bool pie, stripped, has_dwarf, has_pclntab;
	int go_minor;         /* 19 for go1.19.8; 0 when unknown */
	int pcln_minor;       /* oldest Go the pclntab magic allows: 2, 16, 18, 20 */

	char go_version[64];
	char version_source[32]; /* "buildinfo", "runtime.buildVersion", "" */
	char build_id[128];
	char go_build_id[256];
	char note[256];       /* how something was found, for diagnostics */

	/* modinfo of .go.buildinfo, split in place (buildinfo.c) */
	char *modinfo;
	size_t modinfo_len;   /* bytes (the end sentinel holds a NUL) */
	const char *main_path, *main_mod, *main_ver;
	struct gobin_setting { const char *key, *value; } *settings;
	size_t nsettings;

	/* a PIE's RELATIVE relocations (elfimg.c), read on first use */
	struct gobin_relocs *relocs;

	/* link-time address of runtime.moduledata (Go 1.18+), 0 unknown */
	uint64_t moddata;
	/* runtime type descriptors (typedesc.c), read on first use */
	struct gobin_typedesc *td;

	/* pclntab tables the per-pc readers of inltree.c walk (Go 1.18+
	 * layouts; all NULL otherwise): _func offsets count from funcbase */
	struct gobin_pcl {
		const uint8_t *funcbase, *pctab, *nametab, *cutab, *filetab;
		size_t funcbase_len, pctab_len, nametab_len, cutab_len, filetab_len;
		uint32_t *funcoff;   /* per funcs[i]: its _func's offset */
		int quantum;         /* bytes per pc step: 1 (x86), 4 */
		int minor;           /* pclntab magic's oldest Go minor */
	} pcl;
	struct gobin_inl *inl;   /* inlined copies (inltree.c), on first use */

	/* pclntab _func.args per funcs[i]; NULL when unknown */
	int32_t *argsz;

	/* separate debug file (debuginfo.c); DWARF is read from dbg_elf */
	char *dbg_path;
	int dbg_fd;
	Elf *dbg_elf;

	struct gobin_seg segs[GOBIN_MAX_SEGS];
	int nsegs;

	/* Functions sorted by entry; byname: indexes sorted by name. */
	struct gobin_func *funcs;
	size_t nfuncs;
	uint32_t *byname;
	uint8_t *fflags;      /* per funcs[i]: GOBIN_FF_*; NULL when unknown */

	/* DWARF, opened on first use. */
	void *dwarf;          /* Dwarf * */
	bool dwarf_tried;
	struct gobin_die_ix *dies;
	size_t ndies;
	struct gobin_pc_ix *dwpcs;
	size_t ndwpcs;
	int goid_off;         /* cached; -2 = not computed */
	const char *goid_source; /* where goid_off came from (gobin_goid_source) */
	/* runtime type address -> name, from DW_AT_go_runtime_type */
	struct gobin_rtype *rtypes;
	size_t nrtypes;
	bool rtypes_built;
};

struct gobin_rtype {
	uint64_t addr;
	char *name;
};

/* One runtime type descriptor as typedesc.c reads it. */
struct gobin_td {
	unsigned kind;        /* reflect.Kind */
	uint64_t size;        /* bytes of a value */
	char name[256];       /* as the runtime names it: "http.Request",
				 "*http.Request", "[]string" */
	uint64_t elem;        /* pointer, slice, array: the element's */
	uint64_t len;         /* array: elements; struct: fields */
	uint64_t fields;      /* struct: address of its structField array */
};

/*
 * typedesc.c: the descriptor of the named type `name` as Go writes it
 * with its package path ("net/http.Request", "main.Point"), from the
 * runtime type descriptors (scanned once); 0 when the binary has none
 * of that name or none gotrace can read (Go before 1.19, gccgo).
 */
uint64_t gobin_td_find(struct gobin *b, const char *name);

/* typedesc.c: how many named types gobin_td_find knows, and the i-th
 * (sorted by name, its descriptor's address in *addr); NULL past the
 * last. */
size_t gobin_td_count(struct gobin *b);
const char *gobin_td_named(struct gobin *b, size_t i, uint64_t *addr);

/* typedesc.c: the Go name of the type whose descriptor is at `addr`
 * ("main.Rect", "*errors.errorString", "int", with package paths as
 * DWARF writes them), from the runtime type descriptors (a gccgo
 * program's: their reflection strings); NULL when it is not one gotrace
 * can read (a gccgo program's types of libgo.so are not in its file).
 * Kept until the binary is closed. */
const char *gobin_td_name_at(struct gobin *b, uint64_t addr);

/* typedesc.c: reads the descriptor at `addr`. 0, or -ENOENT / -EINVAL
 * when it is not one. */
int gobin_td_read(struct gobin *b, uint64_t addr, struct gobin_td *out);

/* typedesc.c: field i of struct `st`: its name into name[len], its
 * type's descriptor and byte offset. 0 or -EINVAL. */
int gobin_td_field(struct gobin *b, const struct gobin_td *st, size_t i,
		   char *name, size_t len, uint64_t *type, uint64_t *off);

/* typedesc.c: the gobin_type of descriptor `addr` (structs with their
 * fields, arrays with their element, nested `depth` deep), NULL when it
 * cannot be read. Free with gobin_type_free(). */
struct gobin_type *gobin_td_type(struct gobin *b, uint64_t addr, int depth);

/* typedesc.c: frees what gobin_td_* read of b. */
void gobin_typedesc_free(struct gobin *b);

/* gobin.c: index in b->funcs of the function containing link-time
 * address addr (entry <= addr < end), or -1. */
ssize_t gobin_func_index_at(const struct gobin *b, uint64_t addr);

/* inline.c: frees b->inl (NULL is fine). */
void gobin_inl_free(struct gobin *b);

/* pclntab.c: fills b->funcs from .gopclntab. 0, -ENOENT or -EINVAL. */
int gobin_pclntab_load(struct gobin *b, char *err, size_t errlen);

/* buildinfo.c: fills b->go_version (and b->go_minor). 0 or -ENOENT. */
int gobin_buildinfo_load(struct gobin *b);

/*
 * buildinfo.c: fills b->go_version (and b->go_minor) from the runtime's
 * own version string, runtime.buildVersion, for binaries whose release
 * build dropped .go.buildinfo; sets b->version_source. 0 or -ENOENT.
 */
int gobin_runtime_version_load(struct gobin *b);

/* buildinfo.c: fills b->build_id and b->go_build_id from ELF notes. */
void gobin_notes_load(struct gobin *b);

/*
 * buildinfo.c: GNU build id (hex) and Go build id of any ELF, from note
 * sections or, without section headers, PT_NOTE; "" when absent.
 */
void gobin_elf_build_ids(Elf *e, char *gnu, size_t gnulen, char *go,
			 size_t golen);

/* buildinfo.c: splits b->modinfo into path, mod and build settings. */
void gobin_modinfo_parse(struct gobin *b);

/*
 * debuginfo.c: when b has no DWARF, finds a separate debug file by build
 * id or .gnu_debuglink and loads it (silently does nothing when none).
 */
void gobin_debuginfo_find(struct gobin *b);

/* debuginfo.c: closes the separate debug file. */
void gobin_debuginfo_close(struct gobin *b);

/*
 * gobin.c: just past the closing ']' of the first type-argument list
 * "[...]" of a Go function name, with *open at its '['; NULL when the
 * name has none (or it is not closed).
 */
const char *gobin_type_args_end(const char *name, const char **open);

/* gobin.c: the calling convention of the binary's Go code (ABIInternal
 * for register-ABI gc binaries, ABI0 for other gc ones, C for gccgo). */
enum gobin_abi gobin_binary_abi(const struct gobin *b);

/* args.c: bytes of one element of slice or array type t when its
 * elements are single values (numbers, bools, pointers, strings), and in
 * *name the predeclared type the report reads their bytes as ("int64",
 * "uint8", "float32", "bool", "unsafe.Pointer" for pointers, maps, chans
 * and funcs, shown in hex; "" for strings and complex
 * numbers, shown by their length); 0 (and "") for other slices (their
 * length only), arrays and other types. */
uint32_t gobin_elem_of(const struct gobin_type *t, const char **name);


/* args.c: whether f is a generic instance ("main.Map[...]"). */
bool gobin_func_generic(const struct gobin_func *f);

/* Parses "go1.19.8" -> 19; 0 when not a go1.N version. */
int gobin_parse_minor(const char *v);

/*
 * dwarf.c: the abstract shape of a Go (or gccgo) type, as the calling
 * convention needs it.
 */
enum gobin_tk {
	TK_INT, TK_UINT, TK_BOOL, TK_FLOAT, TK_COMPLEX, TK_PTR, TK_STRING,
	TK_SLICE, TK_IFACE, TK_STRUCT, TK_ARRAY, TK_OTHER,
};

struct gobin_type {
	enum gobin_tk kind;
	uint32_t size;
	uint32_t align;
	char name[256];
	/* TK_STRUCT: fields; TK_ARRAY: elem in fields[0], count. */
	struct gobin_field *fields;
	uint32_t nfields;
	uint64_t count;
	/* TK_SLICE: the element's kind and size in bytes, from DWARF or
	 * the signature (TK_OTHER, 0: unknown) */
	enum gobin_tk elem_kind;
	uint32_t elem_size;
	/* TK_PTR written in a signature: the pointee (NULL: not kept) */
	struct gobin_type *elem;
	/* TK_STRUCT: gccgo's interface value, GOBIN_GCCGO_METHODS or
	 * GOBIN_GCCGO_EMPTY (gobin.h); 0 otherwise */
	uint8_t iface;
};

struct gobin_field {
	uint32_t offset;
	struct gobin_type *type;
	char *name;    /* written in a signature: the field's name (owned);
			  NULL from DWARF and runtime type descriptors */
};

/* sig.c: whether c may be in a Go identifier (letters, digits, '_', and
 * any byte of a non-ASCII UTF-8 character). */
bool gobin_ident_char(char c);

/*
 * sig.c: the type Go text `text` writes ("struct{X int; Name string}",
 * "*struct{A struct{B int}}", as a signature's parameter has it), with
 * its struct fields' names and a pointer's pointee, for field paths
 * without DWARF. NULL with a message in err[errlen] when it is no type
 * gotrace can size. Free with gobin_type_free().
 */
struct gobin_type *gobin_sig_type(const struct gobin *b, const char *text,
				  char *err, size_t errlen);

/* dwarf.c: a type of `kind`, `size` bytes, named `name` (NULL: ""); NULL on ENOMEM. */
struct gobin_type *gobin_type_new(enum gobin_tk kind, uint32_t size,
				  const char *name);

/* dwarf.c: the kind of a type of reflect.Kind `gk` (DW_AT_go_kind, a
 * runtime type descriptor's kind & 0x1f: src/internal/abi/type.go). */
enum gobin_tk gobin_tk_of_kind(uint64_t gk);

/* dwarf.c: appends field type ft (owned by t from now on, freed on
 * failure) at byte `off` to struct t. 0 or -ENOMEM. */
int gobin_type_add_field(struct gobin_type *t, uint32_t off, struct gobin_type *ft);

/* dwarf.c: frees t and its field types (NULL is fine). */
void gobin_type_free(struct gobin_type *t);

/* dwarf.c: sets t->align from its kind, size and fields (Go's rules). */
void gobin_type_set_align(struct gobin_type *t, int ptrsize);

/* One parameter or result of a function as DWARF describes it. */
struct gobin_param {
	char name[128];
	struct gobin_type *type;
	bool result;
};

/* dwarf.c: whether the compile unit of function `name` at `entry`
 * describes types, as one built with -g does (gccgo without -g writes
 * only its functions' names and ranges: no parameters to read). */
bool gobin_dwarf_func_typed(struct gobin *b, const char *name, uint64_t entry);

/*
 * dwarf.c: the parameters (and results) of the function at `entry` named
 * `name`, in declaration order. *out is malloc'd; free with
 * gobin_params_free(). `ret` gets gccgo's C return type (or NULL). Returns
 * the count, -ENODATA without DWARF, -ENOENT when the function has no DIE.
 */
int gobin_dwarf_params(struct gobin *b, const char *name, uint64_t entry,
		       struct gobin_param **out, struct gobin_type **ret);
void gobin_params_free(struct gobin_param *p, int n, struct gobin_type *ret);

/*
 * dwarf.c: the parameters of GCC clone `f` (gobin_func_gcc_clone) at its
 * entry, into out[max]: those of the function it copies, in declaration
 * order, each placed where the clone's own DW_TAG_formal_parameter puts
 * it at entry (its location list); one the clone folded to a constant,
 * passed in pieces or dropped has no such place and is GOBIN_LOC_NONE
 * (unavailable). Returns the count, -ENODATA without DWARF, -ENOENT when
 * DWARF has no DIE at f's entry, -ENOMEM.
 */
int gobin_dwarf_clone_args(struct gobin *b, const struct gobin_func *f,
			   struct gobin_arg *out, int max);

/* dwarf.c: offset of `goid` in runtime.g, -1 when DWARF does not say. */
int gobin_dwarf_goid_offset(struct gobin *b);

/* dwarf.c: releases the DWARF handle and index. */
void gobin_dwarf_close(struct gobin *b);

/*
 * abi.c: locations of params (results=false) or results (results=true) by
 * the calling convention `abi` (gobin_func_abi()). Fills out[max]; returns the count.
 */
int gobin_abi_assign(const struct gobin *b, enum gobin_abi abi,
		     const struct gobin_param *p, int np,
		     const struct gobin_type *cret, bool results,
		     struct gobin_arg *out, int max);

/*
 * abi.c: integer and float register words a value of type t takes under
 * Go's register ABI (abi-internal.md), in the order gobin_arg's pieces
 * list them: scalars 1, complex 2, strings and interfaces 2, slices 3,
 * structs the sum of their fields, arrays of 0 or 1 element as the
 * element; -1 when the value cannot be in registers (longer arrays).
 */
int gobin_abi_int_slots(const struct gobin_type *t);

/*
 * abi.c: the C return type of a gccgo function whose results are v[0..np) (the
 * entries with `result` set), as gccgo's C ABI returns them: the one
 * result's type, or a struct of them laid out in order (Go's and C's
 * rules agree for these), built in *shell over fields[max] with the
 * results' own types (not owned: *shell is never freed). NULL when there
 * are no results, or more than `max`.
 */
const struct gobin_type *gobin_abi_c_results(const struct gobin_param *v, int np,
					     struct gobin_type *shell,
					     struct gobin_field *fields, int max);

/*
 * abi.c: the pieces of a value of type t held whole in memory at SP +
 * `off` (a stack argument, or a variable DWARF places at the CFA), one
 * per scalar part at its offset in the value (`ps`: pointer size), into
 * a; a->npieces 0 when its shape is unknown or it has more than
 * GOBIN_MAX_PIECES parts. An array has one piece, at its first byte, as
 * has a struct of more parts (its fields are read by field paths).
 */
void gobin_abi_stack_pieces(const struct gobin_type *t, int32_t off, int ps,
			    struct gobin_arg *a);

/*
 * args.c: locations (gobin_abi_assign with the convention of f), names,
 * types and sizes of params (results=false) or results into args[max].
 * Returns the count written.
 */
int gobin_params_to_args(const struct gobin *b, const struct gobin_func *f,
			 const struct gobin_param *p, int np,
			 const struct gobin_type *cret, bool results,
			 struct gobin_arg *args, int max);

/* gccgo.c: whether `b` is a gccgo program (.go_export, libgo needed, or
 * libgo's __go_* symbols). */
bool gobin_gccgo_detect(const struct gobin *b);

/* gccgo.c: the function table of gccgo program `b` from its symbols (the
 * dynamic ones alone when stripped, said in b->note). 0, -ENOENT (none)
 * or -ENOMEM. */
int gobin_gccgo_load(struct gobin *b);

/* gccgo.c: the name in gccgo program `b` of the function Go calls `name`
 * (GCC 12's gcc/go/gofrontend/names.cc: "net/http.(*conn).serve" is
 * net_1http.conn.serve, "main.main.func1" main.main..func1, '_' "__";
 * an //export'ed main.f main.Cgoexp__f) into out[outlen]; false when
 * `name` is in `b` as it is, or has no other spelling. */
bool gobin_gccgo_name(const struct gobin *b, const char *name, char *out,
		      size_t outlen);

#endif /* GOTRACE_GOBIN_INT_H */
