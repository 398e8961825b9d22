/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/inltree.c on a crafted Go 1.16-1.17 pclntab
 * (src/runtime/runtime2.go _func, symtab.go funcdata and inlinedCall of
 * go1.16): _func begins with a pointer-sized entry and its funcdata are
 * pointers after the pcdata, aligned to the pointer size; both 8- and
 * 4-byte pointers. The 64-bit layout is checked on real binaries by
 * tests/e2e/test_inline.py (esbuild built by go1.16 and go1.17).
 */
#include <criterion/criterion.h>

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
	uint8_t *m = calloc(1, 0x600);
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
	g->size = 0x600;
	g->ptrsize = ps;
	g->go_minor = minor;
	g->fd = -1;
	g->dbg_fd = -1;
	g->segs[0] = (struct gobin_seg){ .vaddr = VADDR, .memsz = 0x600,
					 .offset = 0, .filesz = 0x600,
					 .flags = PF_R };
	g->nsegs = 1;
	g->funcs = calloc(1, sizeof(*g->funcs));
	g->funcs[0] = (struct gobin_func){ .name = "main.f", .entry = ENTRY,
					   .end = ENTRY + 0x40 };
	g->nfuncs = 1;
	g->pcl.funcoff = calloc(1, sizeof(*g->pcl.funcoff));
	g->pcl.funcbase = m + FUNCBASE;
	g->pcl.funcbase_len = 0x600 - FUNCBASE;
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
