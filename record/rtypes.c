/* SPDX-License-Identifier: MIT */
/*
 * Names of runtime type descriptors (runtime._type) by address, from
 * DWARF's DW_AT_go_runtime_type, else from the descriptor itself
 * (typedesc.c): how a captured interface's dynamic type is named
 * (gobin_type_name_at, gobin.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_int.h"
#include "search.h"


#define DW_AT_go_runtime_type 0x2904

struct rtype_build {
	struct gobin_rtype *v;
	size_t n, cap;
	uint64_t base;   /* runtime.types */
	bool oom;
};

/*
 * Start of the runtime type descriptors (runtime.types), which
 * DW_AT_go_runtime_type values are offsets from (Go 1.19: DWARF writes
 * type symbol - runtime.types). From the symbol table, else the section
 * the linker puts them at the start of: .rodata, or .data.rel.ro in PIE.
 */
static uint64_t symtab_lookup(Elf *e, const char *want)
{
	Elf_Scn *scn = NULL;

	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *sn;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (sn = elf_strptr(e, sh.sh_link, sym.st_name)) &&
			    !strcmp(sn, want))
				return sym.st_value;
		}
	}
	return 0;
}

static uint64_t types_base(struct gobin *b)
{
	const char *want = b->pie ? ".data.rel.ro" : ".rodata";
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t v;

	if ((v = symtab_lookup(b->elf, "runtime.types")) ||
	    (v = symtab_lookup(gobin_dwarf_elf(b), "runtime.types")))
		return v;
	if (elf_getshdrstrndx(b->elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) &&
		    (name = elf_strptr(b->elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, want))
			return sh.sh_addr;
	}
	return 0;
}

static int rtype_cb(Dwarf_Die *die, void *ctx)
{
	struct rtype_build *rb = ctx;
	Dwarf_Attribute attr;
	Dwarf_Addr off;
	uint64_t addr;
	const char *name;

	if (!dwarf_attr(die, DW_AT_go_runtime_type, &attr) ||
	    !(name = dwarf_diename(die)))
		return 0;
	/* Written with DW_FORM_addr, holding an offset from runtime.types. */
	if (dwarf_formaddr(&attr, &off) != 0 && dwarf_formudata(&attr, &off) != 0)
		return 0;
	addr = rb->base + off;
	if (rb->n == rb->cap) {
		size_t cap = rb->cap ? rb->cap * 2 : 1024;
		struct gobin_rtype *v = realloc(rb->v, cap * sizeof(*v));

		if (!v) {
			rb->oom = true;
			return 1;
		}
		rb->v = v;
		rb->cap = cap;
	}
	rb->v[rb->n].addr = addr;
	rb->v[rb->n].name = strdup(name);
	if (!rb->v[rb->n].name) {
		rb->oom = true;
		return 1;
	}
	rb->n++;
	return 0;
}

static int rtype_cmp(const void *a, const void *b)
{
	const struct gobin_rtype *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const char *gobin_type_name_at(const struct gobin *cb, uint64_t addr)
{
	struct gobin *b = (struct gobin *)cb;   /* the index is built lazily */
	size_t lo;

	if (!b->rtypes_built) {
		struct rtype_build rb = {};

		b->rtypes_built = true;
		if (gobin_dwarf_open(b)) {
			rb.base = types_base(b);
			gobin_dwarf_each_top(b->dwarf, rtype_cb, &rb);
		}
		if (rb.n)
			qsort(rb.v, rb.n, sizeof(*rb.v), rtype_cmp);
		b->rtypes = rb.v;
		b->nrtypes = rb.n;
	}
	lo = SEARCH_GE(b->rtypes, b->nrtypes, addr, addr);
	if (lo < b->nrtypes && b->rtypes[lo].addr == addr)
		return b->rtypes[lo].name;
	/* stripped (or a type DWARF leaves out): the descriptor's own name */
	return addr ? gobin_td_name_at(b, addr) : NULL;
}
