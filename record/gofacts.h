/* SPDX-License-Identifier: MIT */
/*
 * Facts about Go that move between releases, kept as data in one place
 * (gofacts.c), each with its source in the Go tree. Everything in record/
 * that depends on a Go version asks here; nothing else keys on go_minor.
 * tests/unit/test_gobin_*.c, test_typedesc.c and tests/e2e check the rows
 * against DWARF and the binaries of every toolchain of tests/toolchains.
 */
#ifndef GOTRACE_GOFACTS_H
#define GOTRACE_GOFACTS_H

#include <stdint.h>

/* Architectures as the facts distinguish them. */
enum gofact_arch { GOFACT_AMD64, GOFACT_ARM64, GOFACT_386, GOFACT_OTHER };

/*
 * Word index of `text` (runtime.text) in runtime.moduledata: pcHeader,
 * six slices of 3 words (funcnametab, cutab, filetab, pctab, pclntable,
 * ftab), findfunctab, minpc, maxpc, then text. Go 1.16 to 1.27,
 * src/runtime/symtab.go (moduledata).
 */
#define GOFACT_MODULEDATA_TEXT_WORD 22

/*
 * Byte offset of goid in runtime.g for Go 1.`minor` on `arch` with
 * pointers of `ptrsize` bytes, from the table of gofacts.c; -1 when the
 * table has no row for that version (a release newer than the table, or
 * older than Go 1.9). Source: src/runtime/runtime2.go of each version.
 */
int gofact_goid_offset(int minor, enum gofact_arch arch, int ptrsize);

/* The newest Go minor version the goid table has a row for. */
int gofact_goid_newest(void);

/*
 * Whether gc of Go 1.`minor` passes Go function arguments in registers
 * (ABIInternal) on `arch`: amd64 from Go 1.17, arm64 from 1.18, never on
 * 386. Source: src/cmd/compile/abi-internal.md, and the Go 1.17 and 1.18
 * release notes.
 */
int gofact_regabi(int minor, enum gofact_arch arch);

/*
 * Oldest Go minor version that writes a pclntab with this header magic
 * (src/debug/gosym/pclntab.go: go12magic, go116magic, go118magic,
 * go120magic): 2, 16, 18 or 20; 0 for an unknown magic.
 */
int gofact_pclntab_minor(uint32_t magic);

/* Where gc passes the dictionary of a generic method's instance. */
enum gofact_dict {
	GOFACT_DICT_FIRST,          /* before the receiver */
	GOFACT_DICT_AFTER_RECEIVER, /* right after the receiver */
};

/*
 * Where gc of Go 1.`minor` passes the hidden dictionary parameter of an
 * instance of a generic type's method, from the table of gofacts.c
 * (before the receiver in Go 1.18-1.19, after it from Go 1.20); an
 * instance of a generic function takes it first in every version. A
 * release newer than the table takes its newest row.
 */
enum gofact_dict gofact_dict_position(int minor);

/*
 * The _func.funcID of generated wrappers (abi.FuncIDWrapper, the last of
 * the enumeration) in pclntabs of Go 1.`minor`: 21 in Go 1.18-1.22, 22
 * from 1.23 (FuncID_corostart), 23 from 1.25 (FuncID_runCleanups); 0 when
 * unknown. Source: src/internal/abi/symtab.go (src/runtime/symtab.go
 * before Go 1.21), checked on the binaries of each toolchain.
 */
int gofact_funcid_wrapper(int minor);

/* Words of runtime.moduledata that bound the type descriptors. */
struct gofact_moddata {
	int types, etypes;   /* word indexes of types and etypes */
};

/*
 * Where runtime.moduledata of Go 1.`minor` holds types and etypes, the
 * span of the runtime type descriptors (and the names they refer to),
 * from the table of gofacts.c; NULL for a version it has no row for.
 * Source: src/runtime/symtab.go of each version.
 */
const struct gofact_moddata *gofact_moduledata(int minor);

/* Byte offsets in a runtime type descriptor, and its header's size. */
struct gofact_typedesc {
	int ptrsize;
	int size, tflag, kind, str;  /* fields of the common header */
	int hdr;                     /* bytes of the header; the kind's
					fields follow */
};

/*
 * The layout of runtime type descriptors of Go 1.`minor` with pointers
 * of `ptrsize` bytes (see gofacts.c for the kinds' parts); NULL when
 * the table has no row (before Go 1.19, whose struct fields kept their
 * offset shifted, or after the newest it knows). Source:
 * src/runtime/type.go (Go 1.19-1.20), src/internal/abi/type.go (1.21+).
 */
const struct gofact_typedesc *gofact_typedesc(int minor, int ptrsize);

/*
 * The pclntab's inline tree as gc of Go 1.`minor` writes it (magics
 * 0xfffffffa of Go 1.16-1.17, 0xfffffff0 and 0xfffffff1 of 1.18+):
 * _func (runtime2.go) has nfuncdata at byte `nfuncdata_at` and its pcdata
 * offsets (into pctab) from `pcdata_at`; FUNCDATA_InlTree (3) locates an
 * array of inlinedCall of `size` bytes each, whose called function's name
 * is at `name_at` (an offset into funcnametab) and parentPc (an offset
 * from the function's entry) at `parentpc_at`; PCDATA_InlTreeIndex (2)
 * maps each pc to its innermost inlinedCall (-1: none). Up to Go 1.19 an
 * inlinedCall names its parent node (int16 at `parent_at`); from Go 1.20
 * (`parent_at` -1) the parent is the node at parentPc.
 *
 * Go 1.18+: funcdata are uint32 offsets from moduledata.gofunc (word
 * `gofunc_word` of runtime.moduledata), ~0 for none. Go 1.16-1.17
 * (`ptrs`): _func begins with entry, a pointer, so every _func offset
 * (these and GOFACT_*_AT) is ptrsize - 4 bytes further, and funcdata are
 * pointers (link-time addresses, 0 for none) after the pcdata, aligned to
 * ptrsize; gofunc_word is -1.
 */
struct gofact_inltree {
	int from, to;           /* Go minor versions, inclusive */
	int nfuncdata_at, pcdata_at;
	int gofunc_word;
	int size, name_at, parentpc_at;
	const char *source;
	int ptrs;               /* 1: Go 1.16-1.17 layout (see above) */
	int parent_at;          /* inlinedCall.parent, -1 from Go 1.20 */
};

#define GOFACT_PCDATA_INLTREEINDEX 2
#define GOFACT_FUNCDATA_INLTREE 3
/* _func fields after entry, at these bytes with a 4-byte entry (Go
 * 1.18+; Go 1.16-1.17 add ptrsize - 4) */
#define GOFACT_PCDATA_SP_AT 16    /* _func.pcsp */
#define GOFACT_PCDATA_FILE_AT 20  /* _func.pcfile */
#define GOFACT_PCDATA_LINE_AT 24  /* _func.pcln */
#define GOFACT_NPCDATA_AT 28      /* _func.npcdata */
#define GOFACT_CUOFFSET_AT 32     /* _func.cuOffset */

/*
 * The inline tree layout of Go 1.`minor` (a release newer than the table
 * takes its newest row), or NULL before Go 1.16.
 */
const struct gofact_inltree *gofact_inltree(int minor);

#endif
