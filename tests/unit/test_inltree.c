/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/inltree.c on a crafted Go 1.16-1.17 pclntab
 * (src/runtime/runtime2.go _func, symtab.go funcdata and inlinedCall of
 * go1.16): _func begins with a pointer-sized entry and its funcdata are
 * pointers after the pcdata, aligned to the pointer size; both 8- and
 * 4-byte pointers. The 64-bit layout is checked on real binaries by
 * tests/e2e/test_inline.py (esbuild built by go1.16 and go1.17). A PIE's
 * funcdata may be left to the dynamic linker: the crafted bytes then
 * become an ELF (ET_DYN, PT_DYNAMIC) whose RELATIVE relocations give
 * them (elfimg.c, gobin_dyn_word).
 */
#include <criterion/criterion.h>

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"
#include "inl_int.h"

#define VADDR 0x200000ull
#define ENTRY 0x401000ull
#define FUNCBASE 0x100
#define PCTAB 0x300
#define NAMES 0x400
#define TREE 0x500
#define DYN 0x600          /* PT_DYNAMIC of a crafted ELF */
#define RELOCS 0x680       /* its DT_RELA or DT_REL table */
#define SIZE 0x800

static void put(uint8_t *m, size_t at, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		m[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/*
 * main.f at ENTRY, 0x40 bytes: main.a inlined into it at [0x10, 0x28),
 * main.b inlined into that copy at [0x20, 0x28). Returns the gobin (its
 * bytes in *mem).
 */
static struct gobin *craft(int ps, int minor, uint8_t **mem)
{
	static const uint8_t index[] = {   /* PCDATA_InlTreeIndex */
		0x00, 0x10,   /* -1 for 0x10 bytes */
		0x02, 0x10,   /* +1: node 0 */
		0x02, 0x08,   /* +1: node 1 */
		0x03, 0x18,   /* -2: none */
		0x00,
	};
	static const char names[] = "main.f\0main.a\0main.b";
	struct gobin *g = calloc(1, sizeof(*g));
	const size_t sh = (size_t)ps - 4;    /* fields after entry move by this */
	uint8_t *m = calloc(1, SIZE);
	size_t fd;

	*mem = m;
	/* _func: entry, nameoff, args, deferreturn, pcsp, pcfile, pcln,
	 * npcdata 3, cuOffset, funcID, _, nfuncdata 4 */
	put(m, FUNCBASE, ENTRY, ps);
	put(m, FUNCBASE + 28 + sh, 3, 4);
	m[FUNCBASE + 39 + sh] = 4;
	put(m, FUNCBASE + 40 + sh + 2 * 4, 1, 4);   /* pcdata[2]: pctab+1 */
	fd = FUNCBASE + 40 + sh + 3 * 4;
	fd = (fd + (size_t)ps - 1) & ~((size_t)ps - 1);
	put(m, fd + 3 * (size_t)ps, VADDR + TREE, ps);  /* funcdata[3] */
	memcpy(m + PCTAB + 1, index, sizeof(index));
	memcpy(m + NAMES, names, sizeof(names));
	/* inlinedCall {parent int16, funcID, _, file, line, func_, parentPc} */
	put(m, TREE, (uint16_t)-1, 2);
	put(m, TREE + 12, 7, 4);                    /* "main.a" */
	put(m, TREE + 16, 0x08, 4);
	put(m, TREE + 20, 0, 2);                    /* parent: node 0 */
	put(m, TREE + 20 + 12, 14, 4);              /* "main.b" */
	put(m, TREE + 20 + 16, 0x18, 4);

	g->path = (char *)"crafted";
	g->map = m;
	g->size = SIZE;
	g->ptrsize = ps;
	g->go_minor = minor;
	g->fd = -1;
	g->dbg_fd = -1;
	g->segs[0] = (struct gobin_seg){ .vaddr = VADDR, .memsz = SIZE,
					 .offset = 0, .filesz = SIZE,
					 .flags = PF_R };
	g->nsegs = 1;
	g->funcs = calloc(1, sizeof(*g->funcs));
	g->funcs[0] = (struct gobin_func){ .name = "main.f", .entry = ENTRY,
					   .end = ENTRY + 0x40 };
	g->nfuncs = 1;
	g->pcl.funcoff = calloc(1, sizeof(*g->pcl.funcoff));
	g->pcl.funcbase = m + FUNCBASE;
	g->pcl.funcbase_len = SIZE - FUNCBASE;
	g->pcl.pctab = m + PCTAB;
	g->pcl.pctab_len = 0x100;
	g->pcl.nametab = m + NAMES;
	g->pcl.nametab_len = sizeof(names);
	g->pcl.quantum = 1;
	g->pcl.minor = 16;
	return g;
}

static void check(int ps, int minor)
{
	struct gobin_inl_range *r;
	struct inl_tree t;
	uint8_t *mem;
	struct gobin *g = craft(ps, minor, &mem);
	int n;

	cr_assert(inl_tree(g, 0, &t), "go1.%d, %d-byte pointers", minor, ps);
	cr_expect_eq(t.va, VADDR + TREE);
	cr_expect_eq(t.nruns, 4);
	cr_expect_str_eq(inl_node_name(g, &t, 0), "main.a");
	cr_expect_str_eq(inl_node_name(g, &t, 1), "main.b");
	cr_expect_eq(inl_node_parent(g, &t, 1), 0);
	cr_expect_eq(inl_node_parent(g, &t, 0), -1);
	cr_expect_eq(inl_node_callpc(g, &t, 1), ENTRY + 0x18);
	cr_expect_eq(inl_run_at(t.runs, t.nruns, ENTRY + 0x22), 1);
	inl_tree_free(&t);
	n = gobin_inline_ranges(g, &g->funcs[0], &r);
	cr_assert_eq(n, 2);
	cr_expect(r[0].off == 0x10 && r[0].size == 0x18 && r[0].depth == 1 &&
		  !strcmp(r[0].name, "main.a"), "%u %u %u %s", r[0].off,
		  r[0].size, r[0].depth, r[0].name);
	cr_expect(r[1].off == 0x20 && r[1].size == 0x08 && r[1].depth == 2 &&
		  !strcmp(r[1].name, "main.b"));
	free(r);
	free(g->pcl.funcoff);
	free(g->funcs);
	free(g);
	free(mem);
}

Test(inltree, go116_pointers_after_the_pcdata)
{
	check(8, 16);
	check(4, 16);
	check(8, 17);
	check(4, 17);
}

Test(inltree, go116_no_tree_without_the_funcdata)
{
	struct inl_tree t;
	uint8_t *mem;
	struct gobin *g = craft(8, 16, &mem);

	mem[FUNCBASE + 43] = 3;           /* nfuncdata: no FUNCDATA_InlTree */
	cr_expect_not(inl_tree(g, 0, &t));
	mem[FUNCBASE + 43] = 4;
	put(mem, FUNCBASE + 56 + 24, 0, 8); /* a nil funcdata[3] */
	cr_expect_not(inl_tree(g, 0, &t));
	free(g->pcl.funcoff);
	free(g->funcs);
	free(g);
	free(mem);
}

/* File offset of main.f's funcdata[FUNCDATA_InlTree] in craft()'s bytes. */
static size_t tree_slot(int ps)
{
	const size_t fd = FUNCBASE + 40 + (size_t)ps - 4 + 3 * 4;

	return ((fd + (size_t)ps - 1) & ~((size_t)ps - 1)) + 3 * (size_t)ps;
}

/* One relocation of a crafted ELF: RELA (with addend) or REL. */
struct reloc {
	size_t off;     /* file offset = vaddr - VADDR */
	uint32_t type;
	uint64_t addend;
};

/*
 * Makes craft()'s bytes an ET_DYN ELF of `machine` (class by ps): one
 * PT_LOAD mapping the file at VADDR and a PT_DYNAMIC whose DT_RELA (rela)
 * or DT_REL table holds r[n]; opens it and lays g out from it.
 */
static void elfify(struct gobin *g, uint8_t *m, uint16_t machine, int ps,
		   bool rela, const struct reloc *r, int n)
{
	const int64_t tab = rela ? DT_RELA : DT_REL, sz = rela ? DT_RELASZ : DT_RELSZ;
	const int64_t dyn[] = { tab, (int64_t)(VADDR + RELOCS), sz, 0, DT_NULL, 0 };
	size_t es;

	if (ps == 8) {
		Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = machine,
				  .e_version = EV_CURRENT, .e_phoff = sizeof(eh),
				  .e_ehsize = sizeof(eh),
				  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2 };
		const Elf64_Phdr ph[2] = {
			{ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_vaddr = VADDR,
			  .p_filesz = SIZE, .p_memsz = SIZE, .p_align = 0x1000 },
			{ .p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W, .p_offset = DYN,
			  .p_vaddr = VADDR + DYN, .p_filesz = sizeof(dyn),
			  .p_memsz = sizeof(dyn), .p_align = 8 },
		};

		memcpy(eh.e_ident, ELFMAG, SELFMAG);
		memcpy(m, &eh, sizeof(eh));
		memcpy(m + sizeof(eh), ph, sizeof(ph));
		memcpy(m + DYN, dyn, sizeof(dyn));
		es = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
		for (int i = 0; i < n; i++) {
			const Elf64_Rela e = { VADDR + r[i].off,
					       ELF64_R_INFO(0, r[i].type),
					       (int64_t)r[i].addend };

			memcpy(m + RELOCS + (size_t)i * es, &e, es);
		}
	} else {
		Elf32_Ehdr eh = { .e_type = ET_DYN, .e_machine = machine,
				  .e_version = EV_CURRENT, .e_phoff = sizeof(eh),
				  .e_ehsize = sizeof(eh),
				  .e_phentsize = sizeof(Elf32_Phdr), .e_phnum = 2 };
		const Elf32_Phdr ph[2] = {
			{ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_vaddr = VADDR,
			  .p_filesz = SIZE, .p_memsz = SIZE, .p_align = 0x1000 },
			{ .p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W, .p_offset = DYN,
			  .p_vaddr = VADDR + DYN, .p_filesz = sizeof(dyn) / 2,
			  .p_memsz = sizeof(dyn) / 2, .p_align = 4 },
		};

		memcpy(eh.e_ident, ELFMAG, SELFMAG);
		memcpy(m, &eh, sizeof(eh));
		memcpy(m + sizeof(eh), ph, sizeof(ph));
		for (size_t i = 0; i < sizeof(dyn) / sizeof(dyn[0]); i++)
			put(m, DYN + 4 * i, (uint64_t)dyn[i], 4);
		es = rela ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel);
		for (int i = 0; i < n; i++) {
			const Elf32_Rela e = { (Elf32_Addr)(VADDR + r[i].off),
					       ELF32_R_INFO(0, r[i].type),
					       (int32_t)r[i].addend };

			memcpy(m + RELOCS + (size_t)i * es, &e, es);
		}
	}
	m[EI_CLASS] = (uint8_t)(ps == 8 ? ELFCLASS64 : ELFCLASS32);
	m[EI_DATA] = ELFDATA2LSB;
	m[EI_VERSION] = EV_CURRENT;
	/* the table's size, now that the entry size is known */
	put(m, DYN + 3 * (size_t)ps, (uint64_t)n * es, ps);
	elf_version(EV_CURRENT);
	g->elf = elf_memory((char *)m, SIZE);
	cr_assert(g->elf && elf_kind(g->elf) == ELF_K_ELF, "%s", elf_errmsg(-1));
	g->nsegs = 0;
	gobin_elf_layout(g);
	cr_assert(g->pie && g->nsegs == 1 && g->ptrsize == ps);
}

static void unelf(struct gobin *g, uint8_t *mem)
{
	gobin_inl_free(g);
	gobin_relocs_free(g);
	elf_end(g->elf);
	free(g->pcl.funcoff);
	free(g->funcs);
	free(g);
	free(mem);
}

/*
 * main.f's inline tree in a PIE whose funcdata word is 0 in the file
 * (RELA: the addend gives it) or holds the value (REL: the word is the
 * addend), beside relocations of other kinds and places.
 */
static void check_reloc(uint16_t machine, uint32_t relative, int ps, bool rela)
{
	struct inl_tree t;
	uint8_t *mem;
	struct gobin *g = craft(ps, 16, &mem);
	const size_t slot = tree_slot(ps);
	const struct reloc r[] = {
		{ 0x5f0, relative, VADDR + 0x123 },          /* elsewhere */
		{ slot, relative, VADDR + TREE },
		{ 0x5f8, 1, VADDR + 0x456 },                 /* not RELATIVE */
	};

	cr_assert_eq(gobin_rd(g, mem + slot, ps), VADDR + TREE);
	if (rela)
		put(mem, slot, 0, ps);
	put(mem, 0x5f0, rela ? 0 : VADDR + 0x123, ps);
	elfify(g, mem, machine, ps, rela, r, 3);
	cr_expect_eq(gobin_dyn_word(g, VADDR + slot, ps), VADDR + TREE,
		     "machine %u, %d-byte pointers", machine, ps);
	cr_expect_eq(gobin_dyn_word(g, VADDR + 0x5f0, ps), VADDR + 0x123);
	cr_expect_eq(gobin_dyn_word(g, VADDR + 0x5f8, ps), 0,
		     "only RELATIVE relocations are applied");
	cr_expect_eq(gobin_dyn_word(g, VADDR + SIZE, ps), 0, "outside the file");
	cr_expect_eq(gobin_rd_ptr(g, mem + slot, ps), VADDR + TREE);
	cr_assert(inl_tree(g, 0, &t), "machine %u, %d-byte pointers", machine, ps);
	cr_expect_eq(t.va, VADDR + TREE);
	cr_expect_str_eq(inl_node_name(g, &t, 1), "main.b");
	cr_expect_eq(inl_node_parent(g, &t, 1), 0);
	inl_tree_free(&t);
	cr_expect_null(gobin_inline_gap(g));
	cr_expect_eq(gobin_inline_sites(g, "main.a", NULL, 0, NULL), 1);
	unelf(g, mem);
}

Test(inltree, go116_pie_tree_through_relocations)
{
	check_reloc(EM_X86_64, R_X86_64_RELATIVE, 8, true);
	check_reloc(EM_AARCH64, R_AARCH64_RELATIVE, 8, true);
	check_reloc(EM_386, R_386_RELATIVE, 4, false);
	check_reloc(EM_386, R_386_RELATIVE, 4, true);
}

Test(inltree, go116_pie_tree_gotrace_cannot_relocate_says_so)
{
	struct inl_tree t;
	uint8_t *mem;
	struct gobin *g = craft(8, 17, &mem);
	const struct reloc r = { 0x5f0, R_X86_64_RELATIVE, VADDR + TREE };
	const char *gap;

	put(mem, tree_slot(8), 0, 8);     /* and no relocation there */
	elfify(g, mem, EM_X86_64, 8, true, &r, 1);
	cr_expect_not(inl_tree(g, 0, &t));
	cr_expect(t.unreloc, "inlined code whose tree cannot be found");
	cr_expect_eq(gobin_inline_sites(g, "main.a", NULL, 0, NULL), 0);
	gap = gobin_inline_gap(g);
	cr_assert_not_null(gap);
	cr_expect_str_eq(gap, "this binary's inline tree needs relocations "
			 "gotrace cannot apply (1 function)");
	unelf(g, mem);
}

Test(inltree, go116_nil_tree_without_inlined_code_is_no_gap)
{
	struct inl_tree t;
	uint8_t *mem;
	struct gobin *g = craft(8, 16, &mem);

	put(mem, tree_slot(8), 0, 8);
	put(mem, FUNCBASE + 40 + 4 + 2 * 4, 0, 4);  /* no PCDATA_InlTreeIndex */
	elfify(g, mem, EM_X86_64, 8, true, NULL, 0);
	cr_expect_not(inl_tree(g, 0, &t));
	cr_expect_not(t.unreloc);
	cr_expect_null(gobin_inline_gap(g));
	unelf(g, mem);
}
