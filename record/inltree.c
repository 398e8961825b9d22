// SPDX-License-Identifier: MIT
/*
 * The per-pc tables of a Go 1.16+ pclntab (src/runtime/symtab.go,
 * pcvalue; symtabinl.go of Go 1.20+): the inline tree (FUNCDATA_InlTree,
 * PCDATA_InlTreeIndex), file and line. They survive stripping, so every gc
 * binary says which code is an inlined copy of which function, and which
 * source line each instruction belongs to. Layouts per Go version are
 * gofacts.c's (gofact_inltree). See gobin.h: gobin_inline_sites,
 * gobin_line_sites, gobin_inline_frames.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"
#include "gofacts.h"
#include "inl_int.h"
#include "search.h"

bool inl_leb128(const uint8_t *p, size_t n, size_t *i, bool sign, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *i < n && shift < 64; shift += 7) {
		const uint8_t c = p[(*i)++];

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			if (sign && shift + 7 < 64 && (c & 0x40))
				v |= ~(uint64_t)0 << (shift + 7);
			*out = v;
			return true;
		}
	}
	return false;
}

/* An unsigned varint of a pc-value table (a uint32). */
static bool uvarint(const uint8_t *p, size_t end, size_t *i, uint32_t *out)
{
	uint64_t v;

	if (!inl_leb128(p, end, i, false, &v) || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

int inl_pcruns(const struct gobin *b, uint32_t tab, uint64_t entry,
	       uint64_t end, struct inl_run **out)
{
	const struct gobin_pcl *c = &b->pcl;
	struct inl_run *v = NULL;
	size_t i = tab, n = 0, cap = 0;
	uint64_t pc = entry;
	int32_t val = -1;

	*out = NULL;
	if (!tab || tab >= c->pctab_len)
		return 0;
	while (pc < end) {
		uint32_t dv, dpc;

		if (!uvarint(c->pctab, c->pctab_len, &i, &dv) ||
		    (dv == 0 && n > 0) ||
		    !uvarint(c->pctab, c->pctab_len, &i, &dpc) || !dpc)
			break;
		val += (int32_t)(-(dv & 1) ^ (dv >> 1));
		if (n == cap) {
			const size_t ncap = cap ? cap * 2 : 16;
			struct inl_run *nv = realloc(v, ncap * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[n++] = (struct inl_run){ pc, pc + (uint64_t)dpc * c->quantum, val };
		pc += (uint64_t)dpc * c->quantum;
	}
	*out = v;
	return (int)n;
}

int32_t inl_run_at(const struct inl_run *r, int n, uint64_t pc)
{
	/* the first run that ends after pc */
	const int lo = n > 0 ? (int)SEARCH_GT(r, (size_t)n, hi, pc) : 0;

	return lo < n && r[lo].lo <= pc ? r[lo].val : -1;
}

/* The inline tree layout of b's Go version (else its pclntab's). */
static const struct gofact_inltree *layout(const struct gobin *b)
{
	return gofact_inltree(b->go_minor ? b->go_minor : b->pcl.minor);
}

/* Byte `at` of a _func as gofacts.h gives it (after a 4-byte entry),
 * in layout t with b's pointers. */
static size_t fld(const struct gobin *b, const struct gofact_inltree *t, int at)
{
	return (size_t)at + (t->ptrs ? (size_t)b->ptrsize - 4 : 0);
}

/* The u32 at byte `at` (as fld() counts) of the _func of funcs[fi];
 * false out of bounds. */
static bool func_u32(const struct gobin *b, size_t fi, int at, uint32_t *v)
{
	const struct gofact_inltree *t = layout(b);
	const size_t off = b->pcl.funcoff[fi], f = t ? fld(b, t, at) : 0;

	if (!t || off > b->pcl.funcbase_len || b->pcl.funcbase_len - off < f + 4)
		return false;
	*v = (uint32_t)gobin_rd(b, b->pcl.funcbase + off + f, 4);
	return true;
}

uint32_t inl_tab(const struct gobin *b, size_t fi, int k)
{
	const struct gofact_inltree *t = layout(b);
	uint32_t np, v;

	if (!t || !b->pcl.funcoff)
		return 0;
	if (k < 0)
		return func_u32(b, fi, k == INL_TAB_FILE ? GOFACT_PCDATA_FILE_AT :
				k == INL_TAB_LINE ? GOFACT_PCDATA_LINE_AT :
				GOFACT_PCDATA_SP_AT, &v) ? v : 0;
	if (!func_u32(b, fi, GOFACT_NPCDATA_AT, &np) || (uint32_t)k >= np ||
	    !func_u32(b, fi, t->pcdata_at + 4 * k, &v))
		return 0;
	return v;
}

/*
 * The link-time address of funcs[fi]'s inline tree (it has np pcdata),
 * 0 when it has none. Go 1.18+: moduledata.gofunc plus a uint32 offset
 * (~0: none). Go 1.16-1.17: a pointer after the pcdata, aligned to
 * ptrsize (mapped file bytes keep their address's alignment: PT_LOAD
 * offsets and addresses agree modulo the page size), which a PIE's
 * dynamic linker may fill (gobin_rd_ptr: a RELATIVE relocation).
 */
static uint64_t tree_va(const struct gobin *b, const struct gofact_inltree *t,
			size_t fi, uint32_t np)
{
	const int ps = b->ptrsize;
	const uint8_t *md;
	uint64_t gofunc;
	uint32_t fd;

	if (t->ptrs) {
		const size_t off = b->pcl.funcoff[fi];
		size_t at = off + fld(b, t, t->pcdata_at) + 4 * (size_t)np;

		if ((uintptr_t)(b->pcl.funcbase + at) % (size_t)ps)
			at += (size_t)ps - (uintptr_t)(b->pcl.funcbase + at) % (size_t)ps;
		at += (size_t)GOFACT_FUNCDATA_INLTREE * ps;
		return at + ps <= b->pcl.funcbase_len ?
		       gobin_rd_ptr(b, b->pcl.funcbase + at, ps) : 0;
	}
	if (!b->moddata ||
	    !func_u32(b, fi, t->pcdata_at + 4 * (int)(np + GOFACT_FUNCDATA_INLTREE), &fd) ||
	    fd == UINT32_MAX)
		return 0;
	md = gobin_at_vaddr(b, b->moddata, (size_t)(t->gofunc_word + 1) * ps);
	gofunc = md ? gobin_rd_ptr(b, md + (size_t)t->gofunc_word * ps, ps) : 0;
	return gofunc ? gofunc + fd : 0;
}

/* The bytes of node i of tree t, NULL when they are not in the file. */
static const uint8_t *node_at(const struct gobin *b, const struct inl_tree *t,
			      int32_t i)
{
	return i < 0 ? NULL : gobin_at_vaddr(b, t->va + (uint64_t)i * t->t->size,
					     (size_t)t->t->size);
}

bool inl_tree(const struct gobin *b, size_t fi, struct inl_tree *out)
{
	const struct gofact_inltree *t = layout(b);
	const size_t off = b->pcl.funcoff ? b->pcl.funcoff[fi] : 0;
	uint32_t np;

	memset(out, 0, sizeof(*out));
	if (!t || !b->pcl.funcoff ||
	    off + fld(b, t, t->nfuncdata_at) >= b->pcl.funcbase_len ||
	    b->pcl.funcbase[off + fld(b, t, t->nfuncdata_at)] <= GOFACT_FUNCDATA_INLTREE ||
	    !func_u32(b, fi, GOFACT_NPCDATA_AT, &np) || np > 64)
		return false;
	out->t = t;
	out->va = tree_va(b, t, fi, np);
	/* code marked inlined whose tree is nowhere: its address is a
	 * relocation gotrace did not find or cannot apply */
	out->unreloc = t->ptrs && b->pie &&
		       (!out->va || !node_at(b, out, 0)) &&
		       inl_tab(b, fi, GOFACT_PCDATA_INLTREEINDEX) != 0;
	if (!out->va || out->unreloc)
		return false;
	out->entry = b->funcs[fi].entry;
	out->nruns = inl_pcruns(b, inl_tab(b, fi, GOFACT_PCDATA_INLTREEINDEX),
				b->funcs[fi].entry, b->funcs[fi].end, &out->runs);
	if (out->nruns <= 0) {
		free(out->runs);
		out->runs = NULL;
		return false;
	}
	return true;
}

const char *inl_node_name(const struct gobin *b, const struct inl_tree *t,
			  int32_t i)
{
	const uint8_t *e = node_at(b, t, i);
	int32_t no;

	if (!e)
		return NULL;
	no = (int32_t)gobin_rd(b, e + t->t->name_at, 4);
	if (no < 0 || (size_t)no >= b->pcl.nametab_len ||
	    !memchr(b->pcl.nametab + no, 0, b->pcl.nametab_len - (size_t)no))
		return NULL;
	return (const char *)b->pcl.nametab + no;
}

uint64_t inl_node_callpc(const struct gobin *b, const struct inl_tree *t,
			 int32_t i)
{
	const uint8_t *e = node_at(b, t, i);

	return e ? t->entry + (uint32_t)gobin_rd(b, e + t->t->parentpc_at, 4) : 0;
}

int32_t inl_node_parent(const struct gobin *b, const struct inl_tree *t,
			int32_t i)
{
	const uint8_t *e = t->t->parent_at >= 0 ? node_at(b, t, i) : NULL;
	const uint64_t pc = e ? 0 : inl_node_callpc(b, t, i);
	const int32_t p = e ? (int16_t)gobin_rd(b, e + t->t->parent_at, 2) :
			  pc ? inl_run_at(t->runs, t->nruns, pc) : -1;

	/* a parent has a smaller index (the tree is written parents first);
	 * anything else would loop */
	return p < i ? p : -1;
}

void inl_tree_free(struct inl_tree *t)
{
	free(t->runs);
	t->runs = NULL;
}

const char *inl_file(const struct gobin *b, size_t fi, int32_t fileno)
{
	uint32_t cu, off;

	if (fileno < 0 || !func_u32(b, fi, GOFACT_CUOFFSET_AT, &cu) ||
	    ((uint64_t)cu + (uint32_t)fileno + 1) * 4 > b->pcl.cutab_len)
		return NULL;
	off = (uint32_t)gobin_rd(b, b->pcl.cutab + ((size_t)cu + fileno) * 4, 4);
	if (off >= b->pcl.filetab_len ||
	    !memchr(b->pcl.filetab + off, 0, b->pcl.filetab_len - off))
		return NULL;
	return (const char *)b->pcl.filetab + off;
}

int32_t inl_pcvalue(const struct gobin *b, size_t fi, int k, uint64_t pc)
{
	struct inl_run *r;
	const int n = inl_pcruns(b, inl_tab(b, fi, k), b->funcs[fi].entry,
				 pc + 1, &r);
	const int32_t v = n > 0 ? inl_run_at(r, n, pc) : -1;

	free(r);
	return v;
}
