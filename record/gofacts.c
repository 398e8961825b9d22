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
