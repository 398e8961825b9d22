// SPDX-License-Identifier: MIT
/* Go-version facts as data, each row with its source; see gofacts.h. */
#include <stddef.h>

#include "gofacts.h"

/*
 * runtime.g up to goid (src/runtime/runtime2.go): stack (2 words),
 * stackguard0, stackguard1, _panic, _defer, m, sched (gobuf), syscallsp,
 * syscallpc, [syscallbp], stktopsp, param (1 word each), atomicstatus and
 * stackLock (uint32 each), goid. The rows differ in the words before the
 * two uint32s; the layout is the same on amd64, arm64 and 386 (uint64
 * needs only 4-byte alignment on 386).
 */
static const struct goid_row {
	int from, to;       /* Go minor versions, inclusive */
	int words;          /* pointer-sized words before atomicstatus */
	const char *source;
} goid_rows[] = {
	{ 9, 22, 18, "go1.9-go1.22 src/runtime/runtime2.go: gobuf of 7 words "
		     "(sp pc g ctxt ret lr bp)" },
	{ 23, 24, 19, "go1.23 src/runtime/runtime2.go: syscallbp added after "
		      "syscallpc" },
	{ 25, 27, 18, "go1.25 src/runtime/runtime2.go: gobuf.ret removed "
		      "(CL 652276); unchanged in go1.26, go1.27" },
};

int gofact_goid_offset(int minor, enum gofact_arch arch, int ptrsize)
{
	size_t i;

	if (arch == GOFACT_OTHER || (ptrsize != 4 && ptrsize != 8))
		return -1;
	for (i = 0; i < sizeof(goid_rows) / sizeof(goid_rows[0]); i++)
		if (minor >= goid_rows[i].from && minor <= goid_rows[i].to)
			return goid_rows[i].words * ptrsize + 8;
	return -1;
}

int gofact_goid_newest(void)
{
	return goid_rows[sizeof(goid_rows) / sizeof(goid_rows[0]) - 1].to;
}

int gofact_regabi(int minor, enum gofact_arch arch)
{
	switch (arch) {
	case GOFACT_AMD64: return minor >= 17;  /* Go 1.17 release notes */
	case GOFACT_ARM64: return minor >= 18;  /* Go 1.18 release notes */
	default: return 0;                      /* 386 is ABI0 only */
	}
}

int gofact_pclntab_minor(uint32_t magic)
{
	switch (magic) {
	case 0xfffffffb: return 2;   /* go12magic */
	case 0xfffffffa: return 16;  /* go116magic */
	case 0xfffffff0: return 18;  /* go118magic */
	case 0xfffffff1: return 20;  /* go120magic */
	default: return 0;
	}
}

/*
 * The dictionary of a generic method's instance, relative to the
 * receiver. Versions before the first row have no generics.
 */
static const struct dict_row {
	int from, to;       /* Go minor versions, inclusive */
	enum gofact_dict pos;
	const char *source;
} dict_rows[] = {
	{ 18, 19, GOFACT_DICT_FIRST,
	  "go1.18-go1.19 src/cmd/compile/internal/noder/stencil.go "
	  "(genericSubst): \"We add the dictionary as the first parameter "
	  "... (make the receiver be the next parameter after the "
	  "dictionary)\"" },
	{ 20, 27, GOFACT_DICT_AFTER_RECEIVER,
	  "go1.20 src/cmd/compile/internal/noder/reader.go (shapeSig, unified "
	  "IR, the default front end from go1.20): the receiver stays the "
	  "receiver, the dictionary is the first ordinary parameter; "
	  "unchanged in go1.26, go1.27" },
};

enum gofact_dict gofact_dict_position(int minor)
{
	const size_t n = sizeof(dict_rows) / sizeof(dict_rows[0]);

	for (size_t i = 0; i < n; i++)
		if (minor >= dict_rows[i].from && minor <= dict_rows[i].to)
			return dict_rows[i].pos;
	return minor > dict_rows[n - 1].to ? dict_rows[n - 1].pos :
	       dict_rows[0].pos;
}

int gofact_funcid_wrapper(int minor)
{
	if (minor >= 25 && minor <= 27)
		return 23;
	if (minor >= 23)
		return minor <= 24 ? 22 : 0;
	if (minor >= 18)
		return 21;
	return 0;
}

/*
 * Where runtime.moduledata keeps the runtime type descriptors, in words
 * (every field before them is a word or a slice of 3 words, so the
 * index holds for 4- and 8-byte words). Checked against DW_AT_
 * data_member_location of runtime.moduledata in the DWARF of each
 * toolchain of tests/toolchains (tests/unit/test_typedesc.c).
 */
static const struct moddata_row {
	int from, to;       /* Go minor versions, inclusive */
	struct gofact_moddata md;
	const char *source;
} moddata_rows[] = {
	{ 18, 19, { 35, 36 },
	  "go1.19 src/runtime/symtab.go (moduledata): ... noptrbss, "
	  "enoptrbss; end, gcdata, gcbss; types, etypes" },
	{ 20, 26, { 37, 38 },
	  "go1.20 src/runtime/symtab.go (moduledata) adds covctrs, "
	  "ecovctrs before end; checked with go1.26" },
	{ 27, 27, { 37, 39 },
	  "go1.27 src/runtime/symtab.go (moduledata): types, typedesclen, "
	  "etypes (typelinks and itablinks are gone)" },
};

const struct gofact_moddata *gofact_moduledata(int minor)
{
	const size_t n = sizeof(moddata_rows) / sizeof(moddata_rows[0]);

	for (size_t i = 0; i < n; i++)
		if (minor >= moddata_rows[i].from && minor <= moddata_rows[i].to)
			return &moddata_rows[i].md;
	return NULL;
}

/*
 * The runtime type descriptor (runtime._type of Go 1.19-1.20,
 * internal/abi.Type from Go 1.21): size, ptrdata, hash u32, tflag u8,
 * align u8, fieldAlign u8, kind u8, equal, gcdata, str nameOff (int32),
 * ptrToThis typeOff; 48 bytes with 8-byte words, 32 with 4. After it,
 * by kind: ptr and slice {elem}; array {elem, slice, len}; struct
 * {pkgPath name, fields []structField}, a structField {name, typ,
 * offset} (offset plain from Go 1.19; Go 1.9-1.18 kept offset<<1 |
 * embedded); interface {pkgPath, methods []imethod}; then, when tflag
 * has tflagUncommon, uncommonType {pkgpath nameOff, mcount, xcount,
 * moff, _}. Names: a flags byte, a varint length, the bytes (Go 1.17+).
 * Sources: go1.19 src/runtime/type.go, go1.21-go1.27
 * src/internal/abi/type.go; checked against DWARF with go1.19, go1.26
 * and go1.27 (tests/unit/test_typedesc.c).
 */
static const struct gofact_typedesc typedesc_rows[] = {
	{ .ptrsize = 8, .size = 0, .tflag = 20, .kind = 23, .str = 40, .hdr = 48 },
	{ .ptrsize = 4, .size = 0, .tflag = 12, .kind = 15, .str = 24, .hdr = 32 },
};

const struct gofact_typedesc *gofact_typedesc(int minor, int ptrsize)
{
	if (minor < 19 || minor > 27)
		return NULL;
	for (size_t i = 0; i < sizeof(typedesc_rows) / sizeof(typedesc_rows[0]); i++)
		if (typedesc_rows[i].ptrsize == ptrsize)
			return &typedesc_rows[i];
	return NULL;
}

static const struct gofact_inltree inltree_rows[] = {
	{ 16, 17, 39, 40, -1, 20, 12, 16,
	  "go1.16-go1.17 src/runtime/runtime2.go: _func {entry uintptr, "
	  "nameoff, args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset, "
	  "funcID, _ [2]byte (go1.17: flag, _), nfuncdata} (nfuncdata at "
	  "byte 43 with 8-byte pointers); src/runtime/symtab.go: funcdata() "
	  "reads pointers after the pcdata, aligned to PtrSize; inlinedCall "
	  "{parent int16, funcID, _, file, line, func_, parentPc}", 1, 0 },
	{ 18, 19, 39, 40, 38, 20, 12, 16,
	  "go1.18-go1.19 src/runtime/symtab.go: _func ends funcID flag _ "
	  "nfuncdata at 36; inlinedCall {parent int16, funcID, _, file, line, "
	  "func_, parentPc}; moduledata gofunc after rodata (word 38)", 0, 0 },
	{ 20, 26, 43, 44, 40, 16, 4, 8,
	  "go1.20 src/runtime/runtime2.go: _func.startLine before funcID; "
	  "src/runtime/symtabinl.go: inlinedCall {funcID, _ [3]byte, nameOff, "
	  "parentPc, startLine}; symtab.go: covctrs, ecovctrs in moduledata "
	  "(gofunc word 40); unchanged to go1.26", 0, -1 },
	{ 27, 27, 43, 44, 43, 16, 4, 8,
	  "go1.27 src/runtime/symtab.go: moduledata gains typedesclen, "
	  "itaboffset, itabsize before rodata (gofunc word 43)", 0, -1 },
};

const struct gofact_inltree *gofact_inltree(int minor)
{
	const size_t n = sizeof(inltree_rows) / sizeof(inltree_rows[0]);

	if (minor < inltree_rows[0].from)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (minor >= inltree_rows[i].from && minor <= inltree_rows[i].to)
			return &inltree_rows[i];
	return &inltree_rows[n - 1];
}
