/* SPDX-License-Identifier: MIT */
/*
 * .gopclntab: the function table every gc-compiled Go binary keeps, even
 * stripped. Layouts by magic (Go src/debug/gosym/pclntab.go and
 * src/runtime/symtab.go, pcHeader):
 *
 *   0xfffffffb Go 1.2-1.15  nfunc; functab {pc, funcoff}[nfunc], endpc
 *              (words); _func at table+funcoff {entry, nameoff int32};
 *              names at table+nameoff.
 *   0xfffffffa Go 1.16-1.17 header words: nfunc nfiles funcnameOffset
 *              cuOffset filetabOffset pctabOffset pclnOffset; functab at
 *              pclnOffset, as above; _func at functab+funcoff; names at
 *              funcnameOffset+nameoff.
 *   0xfffffff0 Go 1.18-1.19, 0xfffffff1 Go 1.20+: as 1.16 with textStart
 *              after nfiles; functab entries are uint32 {entryoff,
 *              funcoff}, entry = textStart + entryoff.
 *
 * Header: magic u32, 0, 0, quantum (1 or 4, instruction size), ptrsize.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"
#include "gofacts.h"
#include "utf8.h"

struct pcln {
	const uint8_t *d;
	size_t len;
	uint32_t magic;
	int ps;
	uint64_t nfunc;
	const uint8_t *functab;    /* start of {pc, funcoff} pairs */
	size_t functab_len;        /* bytes available from functab */
	const uint8_t *nametab;
	size_t nametab_len;
	uint64_t text_start;       /* 1.18+ */
	uint64_t cutab_off, filetab_off, pctab_off; /* 1.16+ */
	bool u32tab;               /* 1.18+: uint32 functab entries */
};

static bool pcln_header(const struct gobin *b, const uint8_t *d, size_t len,
			struct pcln *p)
{
	uint64_t w[8];
	int ps, nw;

	if (len < 16)
		return false;
	memset(p, 0, sizeof(*p));
	p->d = d;
	p->len = len;
	p->magic = (uint32_t)gobin_rd(b, d, 4);
	if (d[4] != 0 || d[5] != 0)
		return false;
	if (d[6] != 1 && d[6] != 2 && d[6] != 4)
		return false;
	ps = d[7];
	if (ps != 4 && ps != 8)
		return false;
	p->ps = ps;
	switch (p->magic) {
	case 0xfffffffb: nw = 1; break;
	case 0xfffffffa: nw = 7; break;
	case 0xfffffff0:
	case 0xfffffff1: nw = 8; break;
	default: return false;
	}
	if (8 + (size_t)nw * ps > len)
		return false;
	/* textStart (Go 1.18-1.25) is a pointer: in a PIE whose linker left
	 * it to the dynamic linker (lld), its relocation's value */
	for (int i = 0; i < nw; i++)
		w[i] = gobin_rd_ptr(b, d + 8 + i * ps, ps);
	p->nfunc = w[0];
	if (p->nfunc == 0 || p->nfunc > len / 8)
		return false;
	if (p->magic == 0xfffffffb) {
		p->functab = d + 8 + ps;
		p->nametab = d;
		p->nametab_len = len;
	} else {
		const uint64_t nameoff = p->magic == 0xfffffffa ? w[2] : w[3];
		const uint64_t pclnoff = p->magic == 0xfffffffa ? w[6] : w[7];

		if (nameoff >= len || pclnoff >= len)
			return false;
		p->nametab = d + nameoff;
		p->nametab_len = len - nameoff;
		p->functab = d + pclnoff;
		/* cutab, filetab, pctab: after funcnameOffset */
		p->cutab_off = p->magic == 0xfffffffa ? w[3] : w[4];
		p->filetab_off = p->magic == 0xfffffffa ? w[4] : w[5];
		p->pctab_off = p->magic == 0xfffffffa ? w[5] : w[6];
		if (p->magic != 0xfffffffa) {
			p->text_start = w[2];
			p->u32tab = true;
		}
	}
	p->functab_len = len - (size_t)(p->functab - d);
	{
		const size_t es = p->u32tab ? 4 : (size_t)ps;

		if ((p->nfunc * 2 + 1) > p->functab_len / es)
			return false;
	}
	return true;
}

/* Entry pc (or text offset for 1.18+) and _func offset of function i. */
static void pcln_ent(const struct gobin *b, const struct pcln *p, uint64_t i,
		     uint64_t *pc, uint64_t *funcoff)
{
	const int es = p->u32tab ? 4 : p->ps;

	/* up to Go 1.17 an address, which a PIE's dynamic linker may fill */
	*pc = p->u32tab ? gobin_rd(b, p->functab + (2 * i) * es, es) :
	      gobin_rd_ptr(b, p->functab + (2 * i) * es, es);
	if (funcoff)
		*funcoff = gobin_rd(b, p->functab + (2 * i + 1) * es, es);
}

/* Name of the function whose _func is at funcoff, or NULL if malformed. */
static const char *pcln_name(const struct gobin *b, const struct pcln *p,
			     uint64_t funcoff, uint64_t *fentry)
{
	/* _func is relative to the table start (1.2) or to functab (1.16+) */
	const uint8_t *base = p->magic == 0xfffffffb ? p->d : p->functab;
	const size_t avail = p->len - (size_t)(base - p->d);
	const int es = p->u32tab ? 4 : p->ps;
	int32_t nameoff;
	const char *name;

	if (funcoff > avail || avail - funcoff < (size_t)es + 4)
		return NULL;
	*fentry = p->u32tab ? gobin_rd(b, base + funcoff, es) :
		  gobin_rd_ptr(b, base + funcoff, es);
	nameoff = (int32_t)gobin_rd(b, base + funcoff + es, 4);
	if (nameoff < 0 || (size_t)nameoff >= p->nametab_len)
		return NULL;
	name = (const char *)p->nametab + nameoff;
	if (!memchr(name, '\0', p->nametab_len - (size_t)nameoff))
		return NULL;
	return name;
}

/*
 * _func.args of the _func at funcoff (right after nameoff in every
 * layout): bytes of arguments and results, INT32_MIN
 * (ArgsSizeUnknown, runtime/symtab.go) or when out of bounds.
 */
static int32_t pcln_args(const struct gobin *b, const struct pcln *p,
			 uint64_t funcoff)
{
	const uint8_t *base = p->magic == 0xfffffffb ? p->d : p->functab;
	const size_t avail = p->len - (size_t)(base - p->d);
	const size_t at = (size_t)(p->u32tab ? 4 : p->ps) + 4;

	if (funcoff > avail || avail - funcoff < at + 4)
		return INT32_MIN;
	return (int32_t)gobin_rd(b, base + funcoff + at, 4);
}

/*
 * GOBIN_FF_* of the _func at funcoff (1.18+ layouts only). runtime2.go
 * _func: entryoff nameoff args deferreturn pcsp pcfile pcln npcdata
 * cuOffset [startLine, Go 1.20+] (int32/uint32 each), funcID u8, flag u8;
 * funcFlag_ASM = 1 << 2, funcID_wrapper = 21 (runtime/symtab.go of 1.19,
 * internal/abi since 1.21).
 */
static uint8_t pcln_flag(const struct gobin *b, const struct pcln *p,
			 uint64_t funcoff)
{
	const size_t at = p->magic == 0xfffffff0 ? 37 : 41;
	const size_t avail = p->len - (size_t)(p->functab - p->d);
	uint8_t ff = 0;

	(void)b;
	if (funcoff > avail || avail - funcoff <= at)
		return 0;
	if (p->functab[funcoff + at] & (1 << 2))
		ff |= GOBIN_FF_ASM;
	return ff;
}

/* The _func.funcID byte (just before flag), or 0. */
static uint8_t pcln_funcid(const struct pcln *p, uint64_t funcoff)
{
	const size_t at = p->magic == 0xfffffff0 ? 36 : 40;
	const size_t avail = p->len - (size_t)(p->functab - p->d);

	return funcoff < avail && avail - funcoff > at ? p->functab[funcoff + at] : 0;
}

/* A symbol name: printable ASCII or well-formed UTF-8 (lib/utf8.h), no
 * control bytes. */
static bool plausible_name(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	const size_t n = strlen(s);
	uint32_t cp;

	if (!n)
		return false;
	for (size_t i = 0; i < n;) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			return false;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		const int k = utf8_seq(p + i, n - i, &cp);
		if (!k)
			return false;
		i += (size_t)k;
	}
	return true;
}

/*
 * Checks a few functions: names are text, _func.entry equals the functab
 * pc, entries strictly increase and the end pc follows the last.
 */
static bool pcln_validate(const struct gobin *b, const struct pcln *p)
{
	const uint64_t n = p->nfunc;
	const uint64_t probe[] = { 0, 1, n / 2, n - 1 };
	uint64_t prev = 0, last = UINT64_MAX, endpc;

	for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
		uint64_t pc, off, fentry;
		const char *name;

		if (probe[k] >= n || probe[k] == last)
			continue;
		pcln_ent(b, p, probe[k], &pc, &off);
		name = pcln_name(b, p, off, &fentry);
		if (!name || !plausible_name(name) || fentry != pc)
			return false;
		if (last != UINT64_MAX && pc <= prev)
			return false;
		prev = pc;
		last = probe[k];
	}
	pcln_ent(b, p, n, &endpc, NULL);
	return endpc > prev;
}

/*
 * runtime.text from the candidate moduledata at md (need bytes), or 0
 * when md is not the moduledata of the pclntab p. runtime.moduledata
 * (src/runtime/symtab.go, Go 1.16-1.27) begins pcHeader, funcnametab
 * (slice), ..., then minpc, maxpc and text at words 20, 21 and
 * GOFACT_MODULEDATA_TEXT_WORD: pcHeader must be the table's address,
 * funcnametab's data its name table, and minpc and maxpc the first
 * function's entry and the last one's end counted from text.
 */
static uint64_t moduledata_check(const struct gobin *b, const struct pcln *p,
				 uint64_t pcln_va, const uint8_t *md)
{
	const int ps = p->ps;
	uint64_t text, first, end;

	if (gobin_rd_ptr(b, md, ps) != pcln_va ||
	    gobin_rd_ptr(b, md + ps, ps) != pcln_va + (uint64_t)(p->nametab - p->d))
		return 0;
	text = gobin_rd_ptr(b, md + GOFACT_MODULEDATA_TEXT_WORD * ps, ps);
	pcln_ent(b, p, 0, &first, NULL);
	pcln_ent(b, p, p->nfunc, &end, NULL);
	if (!text || gobin_rd_ptr(b, md + 20 * ps, ps) != text + first ||
	    gobin_rd_ptr(b, md + 21 * ps, ps) != text + end)
		return 0;
	return text;
}

/*
 * runtime.text as the moduledata holds it, or 0. Go 1.26 writes
 * moduledata in a section of its own, .go.module
 * (cmd/link/internal/ld/data.go); without section headers it is
 * searched for in the writable segments (Segdata, where the linker puts
 * it) by its first word, the pclntab's address. Words a PIE's linker
 * left to the dynamic linker (lld, GNU ld on arm64: 0 in the file) are
 * read from their R_*_RELATIVE relocations (gobin_rd_ptr).
 */
static uint64_t moduledata_text(struct gobin *b, const struct pcln *p)
{
	const size_t ps = (size_t)p->ps, need = (GOFACT_MODULEDATA_TEXT_WORD + 1) * ps;
	const uint64_t pcln_va = gobin_file_vaddr(b, p->d);
	const uint8_t *md;
	uint64_t text;
	GElf_Shdr sh;

	if (!pcln_va)
		return 0;
	if (gobin_section(b, ".go.module", false, &sh) && sh.sh_size >= need &&
	    (md = gobin_at_vaddr(b, sh.sh_addr, need)) != NULL &&
	    (text = moduledata_check(b, p, pcln_va, md)) != 0) {
		b->moddata = sh.sh_addr;
		return text;
	}
	if ((b->moddata = gobin_symbol(b, "runtime.firstmoduledata")) != 0 &&
	    (md = gobin_at_vaddr(b, b->moddata, need)) != NULL &&
	    (text = moduledata_check(b, p, pcln_va, md)) != 0)
		return text;
	b->moddata = 0;
	for (int i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *s = &b->segs[i];
		const uint8_t *d = b->map + s->offset;

		if (!(s->flags & PF_W) || s->filesz < need)
			continue;
		for (size_t o = 0; o + need <= s->filesz; o += ps) {
			if (gobin_rd_ptr(b, d + o, (int)ps) != pcln_va)
				continue;
			text = moduledata_check(b, p, pcln_va, d + o);
			if (text) {
				b->moddata = s->vaddr + o;
				if (p->text_start)
					return text;   /* only its address wanted */
				snprintf(b->note, sizeof(b->note),
					 "pclntab textStart is 0; took runtime.text "
					 "%#llx from the moduledata found at %#llx",
					 (unsigned long long)text,
					 (unsigned long long)(s->vaddr + o));
				return text;
			}
		}
	}
	return 0;
}

/* runtime.text when the pclntab header does not hold it (Go 1.26+). */
static uint64_t text_start_fallback(struct gobin *b, const struct pcln *p)
{
	GElf_Shdr sh;
	uint64_t v;

	v = moduledata_text(b, p);
	if (v)
		return v;
	/* Each guess below is wrong where C code precedes runtime.text
	 * (cgo, external linking): a note says which was taken. */
	v = gobin_symbol(b, "runtime.text");
	if (v) {
		snprintf(b->note, sizeof(b->note),
			 "pclntab textStart is 0 and no moduledata; took runtime.text %#llx",
			 (unsigned long long)v);
		return v;
	}
	if (gobin_section(b, ".text", false, &sh) && sh.sh_addr) {
		snprintf(b->note, sizeof(b->note),
			 "pclntab textStart is 0, no moduledata, no runtime.text; took .text start %#llx",
			 (unsigned long long)sh.sh_addr);
		return sh.sh_addr;
	}
	for (int i = 0; i < b->nsegs; i++) {
		if (b->segs[i].flags & PF_X) {
			snprintf(b->note, sizeof(b->note),
				 "pclntab textStart is 0 and no .text: guessed "
				 "the executable segment start %#llx",
				 (unsigned long long)b->segs[i].vaddr);
			return b->segs[i].vaddr;
		}
	}
	return 0;
}

/*
 * Keeps the tables of a Go 1.16+ pclntab in b->pcl for inltree.c (each
 * bounded by the table's end; funcoff allocated, filled by pcln_load).
 */
static void pcl_keep(struct gobin *b, const struct pcln *p)
{
	struct gobin_pcl *c = &b->pcl;

	if (p->magic == 0xfffffffb || p->cutab_off >= p->len || p->filetab_off >= p->len ||
	    p->pctab_off >= p->len)
		return;
	c->funcoff = calloc((size_t)p->nfunc, sizeof(*c->funcoff));
	if (!c->funcoff)
		return;
	c->funcbase = p->functab;
	c->funcbase_len = p->functab_len;
	c->pctab = p->d + p->pctab_off;
	c->pctab_len = p->len - p->pctab_off;
	c->nametab = p->nametab;
	c->nametab_len = p->nametab_len;
	c->cutab = p->d + p->cutab_off;
	c->cutab_len = p->len - p->cutab_off;
	c->filetab = p->d + p->filetab_off;
	c->filetab_len = p->len - p->filetab_off;
	c->quantum = p->d[6];
	c->minor = gofact_pclntab_minor(p->magic);
}

static int pcln_load(struct gobin *b, const struct pcln *p)
{
	uint64_t text = 0;
	struct gobin_func *v;
	uint8_t *fids = NULL, wrapper = 0;  /* _func.funcID per funcs[i] */
	size_t out = 0;

	if (p->u32tab) {
		text = p->text_start;
		if (!text)
			text = text_start_fallback(b, p);
		else
			(void)moduledata_text(b, p);   /* b->moddata */
	}
	pcl_keep(b, p);
	v = calloc((size_t)p->nfunc, sizeof(*v));
	b->argsz = calloc((size_t)p->nfunc, sizeof(*b->argsz));
	if (!v || !b->argsz) {
		free(v);
		return -ENOMEM;
	}
	if (p->u32tab) {
		b->fflags = calloc((size_t)p->nfunc, 1);
		fids = calloc((size_t)p->nfunc, 1);
		if (!b->fflags || !fids) {
			free(v);
			free(fids);
			return -ENOMEM;
		}
	}
	for (uint64_t i = 0; i < p->nfunc; i++) {
		uint64_t pc, off, next, fentry;
		const char *name;

		pcln_ent(b, p, i, &pc, &off);
		pcln_ent(b, p, i + 1, &next, NULL);
		name = pcln_name(b, p, off, &fentry);
		if (!name)
			continue;
		if (b->fflags && fids) {
			b->fflags[out] = pcln_flag(b, p, off);
			fids[out] = pcln_funcid(p, off);
			if (!strcmp(name, "runtime.deferreturn"))
				wrapper = fids[out];
		}
		b->argsz[out] = pcln_args(b, p, off);
		if (b->pcl.funcoff)
			b->pcl.funcoff[out] = (uint32_t)off;
		v[out++] = (struct gobin_func){
			.name = name,
			.entry = text + pc,
			.end = text + (next > pc ? next : pc),
		};
	}
	b->funcs = v;
	b->nfuncs = out;
	b->pcln_minor = gofact_pclntab_minor(p->magic);
	/* FuncIDWrapper moves as runtime functions get ids of their own:
	 * runtime.deferreturn carries it, else the table says */
	if (fids && !wrapper)
		wrapper = gofact_funcid_wrapper(b->go_minor ? b->go_minor : b->pcln_minor);
	for (size_t i = 0; fids && wrapper && i < out; i++)
		if (fids[i] == wrapper)
			b->fflags[i] |= GOBIN_FF_WRAPPER;
	free(fids);
	return 0;
}

/* Searches the loaded file data for a pclntab header that parses. */
static bool pcln_search(struct gobin *b, struct pcln *p)
{
	/* read-only data first, then RELRO/writable (PIE), then text */
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < b->nsegs; i++) {
			const struct gobin_seg *s = &b->segs[i];
			const bool w = s->flags & PF_W, x = s->flags & PF_X;
			const int seg_pass = x ? 2 : w ? 1 : 0;
			const uint8_t *d = b->map + s->offset;

			if (seg_pass != pass)
				continue;
			for (size_t o = 0; o + 16 <= s->filesz; o += 4) {
				if (d[o] != 0xff && d[o + 3] != 0xff)
					continue;
				if (!pcln_header(b, d + o, s->filesz - o, p))
					continue;
				if (pcln_validate(b, p))
					return true;
			}
		}
	}
	return false;
}

int gobin_pclntab_load(struct gobin *b, char *err, size_t errlen)
{
	GElf_Shdr sh;
	struct pcln p;
	bool found = false;

	if (gobin_section(b, ".gopclntab", true, &sh) && sh.sh_type != SHT_NOBITS &&
	    sh.sh_offset < b->size && sh.sh_size <= b->size - sh.sh_offset) {
		if (!pcln_header(b, b->map + sh.sh_offset, sh.sh_size, &p) ||
		    !pcln_validate(b, &p)) {
			snprintf(err, errlen,
				 "%s: .gopclntab is malformed or of an unknown "
				 "Go version (magic %#x)", b->path,
				 sh.sh_size >= 4 ?
				 (unsigned)gobin_rd(b, b->map + sh.sh_offset, 4) : 0);
			return -EINVAL;
		}
		found = true;
	}
	if (!found && pcln_search(b, &p)) {
		found = true;
		if (!b->note[0])
			snprintf(b->note, sizeof(b->note),
				 "pclntab found by searching for its header");
	}
	if (!found)
		return -ENOENT;
	return pcln_load(b, &p);
}
