/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/pclntab.c on crafted tables, one per layout of Go's
 * function table (Go src/runtime/symtab.go pcHeader, src/debug/gosym):
 * 1.2 (magic 0xfffffffb), 1.16 (0xfffffffa), 1.18 (0xfffffff0), 1.20+
 * (0xfffffff1, also with textStart 0 as Go 1.26 writes it), 32- and 64-bit,
 * found by searching the loaded data as in a binary without section
 * headers; and broken tables, which must be refused without crashing.
 * Real binaries are checked against Go's debug/gosym in test_gobin_funcs.c.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"

#define TAB_VADDR 0x200000ull
#define TEXT_VADDR 0x401000ull

struct cfunc {
	const char *name;
	uint32_t off;      /* from the text start */
	int32_t args;
	uint8_t funcid, flag;
};

static const struct cfunc cfuncs[] = {
	{ "runtime.text.stub", 0x00, 0, 0, 0 },
	{ "main.add", 0x40, 16, 0, 0 },
	{ "main.(*T).M", 0x80, 24, 0, 0 },
	{ "internal/cpu.cpuid", 0xc0, 24, 0, 1 << 2 },  /* funcFlag_ASM */
	{ "main.add", 0x100, 16, 21, 0 },              /* funcID_wrapper */
	{ "main.Map[...]", 0x140, INT32_MIN, 0, 0 },    /* ArgsSizeUnknown */
};
#define NF (sizeof(cfuncs) / sizeof(cfuncs[0]))
#define TEXT_END 0x180u

struct buf {
	uint8_t d[8192];
	size_t n;
};

static void put(struct buf *b, size_t at, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		b->d[at + (size_t)i] = (uint8_t)(v >> (8 * i)); /* little endian */
	if (at + (size_t)size > b->n)
		b->n = at + (size_t)size;
}

/*
 * Builds a table of `magic` with pointer size ps. Layout: header, names,
 * then functab and _func records, as the linker orders them.
 */
static void build(struct buf *b, uint32_t magic, int ps, uint64_t text_start)
{
	const bool u32 = magic == 0xfffffff0 || magic == 0xfffffff1;
	const int es = u32 ? 4 : ps;             /* functab entry size */
	const int nw = magic == 0xfffffffb ? 1 : magic == 0xfffffffa ? 7 : 8;
	const size_t hdr = 8 + (size_t)nw * (size_t)ps;
	const size_t names = (hdr + 7) & ~(size_t)7;
	size_t nameoff[NF], o = names, functab, funcs;
	const uint64_t pcbase = u32 ? 0 : TEXT_VADDR; /* old layouts: absolute */

	memset(b, 0, sizeof(*b));
	put(b, 0, magic, 4);
	b->d[6] = 1;          /* quantum */
	b->d[7] = (uint8_t)ps;
	for (size_t i = 0; i < NF; i++) {
		nameoff[i] = o;
		memcpy(b->d + o, cfuncs[i].name, strlen(cfuncs[i].name) + 1);
		o += strlen(cfuncs[i].name) + 1;
	}
	functab = (o + 7) & ~(size_t)7;
	funcs = functab + (2 * NF + 1) * (size_t)es;
	funcs = (funcs + 7) & ~(size_t)7;
	put(b, 8, NF, ps);                                   /* nfunc */
	if (magic == 0xfffffffa) {
		put(b, 8 + 2 * (size_t)ps, 0, ps);           /* funcnameOffset */
		put(b, 8 + 6 * (size_t)ps, functab, ps);     /* pclnOffset */
	} else if (u32) {
		put(b, 8 + 2 * (size_t)ps, text_start, ps);  /* textStart */
		put(b, 8 + 3 * (size_t)ps, 0, ps);           /* funcnameOffset */
		put(b, 8 + 7 * (size_t)ps, functab, ps);     /* pclnOffset */
	} /* 1.2 tables are built by build12 */
	for (size_t i = 0; i < NF; i++) {
		/* _func offsets: from the table start (1.2) or functab (1.16+) */
		const size_t rec = funcs + i * 48;
		const size_t rel = magic == 0xfffffffb ? rec : rec - functab;
		const size_t flag_at = magic == 0xfffffff0 ? 37 : 41;

		put(b, functab + 2 * i * (size_t)es, pcbase + cfuncs[i].off, es);
		put(b, functab + (2 * i + 1) * (size_t)es, rel, es);
		put(b, rec, pcbase + cfuncs[i].off, es);             /* entry */
		put(b, rec + (size_t)es, nameoff[i], 4);              /* nameoff */
		put(b, rec + (size_t)es + 4, (uint32_t)cfuncs[i].args, 4);
		if (u32) {
			b->d[rec + flag_at - 1] = cfuncs[i].funcid;
			b->d[rec + flag_at] = cfuncs[i].flag;
		}
		if (rec + 48 > b->n)
			b->n = rec + 48;
	}
	put(b, functab + 2 * NF * (size_t)es, pcbase + TEXT_END, es); /* end pc */
}

/* The 1.2 layout: header, nfunc, functab, end pc, _func records, names. */
static void build12(struct buf *b, int ps)
{
	const size_t functab = 8 + (size_t)ps;
	const size_t funcs = (functab + (2 * NF + 1) * (size_t)ps + 7) & ~(size_t)7;
	size_t o = funcs + NF * 32;

	memset(b, 0, sizeof(*b));
	put(b, 0, 0xfffffffb, 4);
	b->d[6] = 1;
	b->d[7] = (uint8_t)ps;
	put(b, 8, NF, ps);
	for (size_t i = 0; i < NF; i++) {
		const size_t rec = funcs + i * 32;

		put(b, functab + 2 * i * (size_t)ps, TEXT_VADDR + cfuncs[i].off, ps);
		put(b, functab + (2 * i + 1) * (size_t)ps, rec, ps);
		put(b, rec, TEXT_VADDR + cfuncs[i].off, ps);
		put(b, rec + (size_t)ps, o, 4);
		put(b, rec + (size_t)ps + 4, (uint32_t)cfuncs[i].args, 4);
		memcpy(b->d + o, cfuncs[i].name, strlen(cfuncs[i].name) + 1);
		o += strlen(cfuncs[i].name) + 1;
	}
	put(b, functab + 2 * NF * (size_t)ps, TEXT_VADDR + TEXT_END, ps);
	b->n = o;
}

/*
 * A gobin over the bytes of `b` (plus `lead` zero bytes before them),
 * mapped read-only at TAB_VADDR, with an executable segment at
 * TEXT_VADDR, and no ELF section headers: the table is found by search.
 */
static struct gobin *fake(const struct buf *b, size_t lead, int ps,
			  uint8_t **mem)
{
	struct gobin *g = calloc(1, sizeof(*g));

	*mem = calloc(1, lead + b->n + 64);
	memcpy(*mem + lead, b->d, b->n);
	g->path = (char *)"crafted";
	g->map = *mem;
	g->size = lead + b->n + 64;
	g->ptrsize = ps;
	g->fd = -1;
	g->dbg_fd = -1;
	g->segs[0] = (struct gobin_seg){ .vaddr = TAB_VADDR, .memsz = g->size,
					 .offset = 0, .filesz = g->size,
					 .flags = PF_R };
	g->segs[1] = (struct gobin_seg){ .vaddr = TEXT_VADDR, .memsz = TEXT_END,
					 .offset = 0, .filesz = 0,
					 .flags = PF_R | PF_X };
	g->nsegs = 2;
	return g;
}

static void unfake(struct gobin *g, uint8_t *mem)
{
	free(g->funcs);
	free(g->argsz);
	free(g->fflags);
	free(g->pcl.funcoff);   /* the Go 1.18+ tables kept for the inline tree */
	free(g);
	free(mem);
}

static void check_table(const struct gobin *g, bool flags)
{
	cr_assert_eq(g->nfuncs, NF);
	for (size_t i = 0; i < NF; i++) {
		const struct gobin_func *f = &g->funcs[i];
		const uint64_t end = i + 1 < NF ? cfuncs[i + 1].off : TEXT_END;

		cr_expect_str_eq(f->name, cfuncs[i].name);
		cr_expect_eq(f->entry, TEXT_VADDR + cfuncs[i].off, "%s entry %#llx",
			     f->name, (unsigned long long)f->entry);
		cr_expect_eq(f->end, TEXT_VADDR + end, "%s end %#llx", f->name,
			     (unsigned long long)f->end);
		cr_expect_eq(g->argsz[i], cfuncs[i].args, "%s args %d", f->name,
			     g->argsz[i]);
	}
	if (flags) {
		cr_assert_not_null(g->fflags);
		cr_expect_eq(g->fflags[3], GOBIN_FF_ASM);
		cr_expect_eq(g->fflags[4], GOBIN_FF_WRAPPER);
		cr_expect_eq(g->fflags[1], 0);
	} else {
		cr_expect_null(g->fflags);
	}
}

static void load_ok(const struct buf *b, int ps, int minor, bool flags,
		    const char *note)
{
	char err[256] = "";
	uint8_t *mem;
	/* a few bytes before the table, so the search has to find it */
	struct gobin *g = fake(b, 64, ps, &mem);

	g->segs[0].vaddr -= 64;
	cr_assert_eq(gobin_pclntab_load(g, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(g->pcln_minor, minor);
	check_table(g, flags);
	if (note)
		cr_expect(strstr(g->note, note), "note: %s", g->note);
	unfake(g, mem);
}

Test(pclntab, go12_64bit)
{
	struct buf b;

	build12(&b, 8);
	load_ok(&b, 8, 2, false, NULL);
}

Test(pclntab, go12_32bit)
{
	struct buf b;

	build12(&b, 4);
	load_ok(&b, 4, 2, false, NULL);
}

Test(pclntab, go116)
{
	struct buf b;

	build(&b, 0xfffffffa, 8, 0);
	load_ok(&b, 8, 16, false, NULL);
	build(&b, 0xfffffffa, 4, 0);
	load_ok(&b, 4, 16, false, NULL);
}

Test(pclntab, go118)
{
	struct buf b;

	build(&b, 0xfffffff0, 8, TEXT_VADDR);
	load_ok(&b, 8, 18, true, NULL);
	build(&b, 0xfffffff0, 4, TEXT_VADDR);
	load_ok(&b, 4, 18, true, NULL);
}

Test(pclntab, go120)
{
	struct buf b;

	build(&b, 0xfffffff1, 8, TEXT_VADDR);
	load_ok(&b, 8, 20, true, NULL);
}

/* Go 1.26 leaves textStart 0: the text start comes from the binary. */
Test(pclntab, go120_text_start_zero)
{
	struct buf b;

	build(&b, 0xfffffff1, 8, 0);
	load_ok(&b, 8, 20, true, "textStart is 0");
}

/* Broken tables are refused (-ENOENT: no table found), never crash. */
Test(pclntab, broken_tables_are_refused)
{
	struct buf b, c;
	char err[256];
	uint8_t *mem;
	struct gobin *g;

	build(&b, 0xfffffff1, 8, TEXT_VADDR);
	/* cut short: the functab does not fit */
	for (size_t cut = 8; cut < 200; cut += 8) {
		c = b;
		c.n = cut;
		g = fake(&c, 0, 8, &mem);
		cr_expect_eq(gobin_pclntab_load(g, err, sizeof(err)), -ENOENT, "cut %zu", cut);
		unfake(g, mem);
	}
	/* nfunc far beyond the data */
	c = b;
	put(&c, 8, 1u << 30, 8);
	g = fake(&c, 0, 8, &mem);
	cr_expect_eq(gobin_pclntab_load(g, err, sizeof(err)), -ENOENT);
	unfake(g, mem);
	/* a name that is not text */
	c = b;
	for (size_t i = 0; i < c.n; i++)
		if (!memcmp(c.d + i, "main.add", 8))
			c.d[i] = 0x01;
	g = fake(&c, 0, 8, &mem);
	cr_expect_eq(gobin_pclntab_load(g, err, sizeof(err)), -ENOENT);
	unfake(g, mem);
	/* functab entries out of order */
	c = b;
	{
		const size_t functab = (size_t)c.d[8 + 7 * 8] | (size_t)c.d[8 + 7 * 8 + 1] << 8;

		put(&c, functab + 2 * 4 * 3, 0x10, 4); /* 4th entry before the 2nd */
	}
	g = fake(&c, 0, 8, &mem);
	cr_expect_eq(gobin_pclntab_load(g, err, sizeof(err)), -ENOENT);
	unfake(g, mem);
	/* an unknown magic */
	c = b;
	put(&c, 0, 0xfffffff5, 4);
	g = fake(&c, 0, 8, &mem);
	cr_expect_eq(gobin_pclntab_load(g, err, sizeof(err)), -ENOENT);
	unfake(g, mem);
}
