/* SPDX-License-Identifier: MIT */
/*
 * The ELF layer of inspection: bounds-checked reads of the mapped file,
 * PT_LOAD translation, sections and symbols (libelf). It knows nothing of
 * Go; pclntab.c, buildinfo.c, debuginfo.c, dwarf.c and gobin.c build on it
 * (elfimg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"
#include "map.h"

uint64_t gobin_rd(const struct gobin *b, const uint8_t *p, int size)
{
	uint64_t v = 0;

	if (b->big_endian) {
		for (int i = 0; i < size; i++)
			v = (v << 8) | p[i];
	} else {
		for (int i = size - 1; i >= 0; i--)
			v = (v << 8) | p[i];
	}
	return v;
}

uint64_t gobin_file_vaddr(const struct gobin *b, const uint8_t *p)
{
	const size_t off = (size_t)(p - b->map);

	for (int i = 0; i < b->nsegs; i++)
		if (off >= b->segs[i].offset &&
		    off - b->segs[i].offset < b->segs[i].filesz)
			return b->segs[i].vaddr + (off - b->segs[i].offset);
	return 0;
}

/*
 * The R_*_RELATIVE relocations with an addend (RELA) of a PIE: by the
 * link-time address the dynamic linker writes, the link-time value it
 * writes there (the load address added).
 */
struct gobin_relocs {
	struct u64map at;      /* r_offset -> index in addend[] */
	uint64_t *addend;
	size_t n;
};

/* R_*_RELATIVE of ELF machine m (<elf.h>), 0 when gotrace knows none. */
static uint32_t relative_type(uint16_t m)
{
	switch (m) {
	case EM_X86_64: return R_X86_64_RELATIVE;
	case EM_386: return R_386_RELATIVE;
	case EM_AARCH64: return R_AARCH64_RELATIVE;
	case EM_ARM: return R_ARM_RELATIVE;
	case EM_PPC64: return R_PPC64_RELATIVE;
	case EM_RISCV: return R_RISCV_RELATIVE;
	case EM_S390: return R_390_RELATIVE;
	default: return 0;
	}
}

/* DT_RELA and DT_RELASZ of PT_DYNAMIC into *at, *sz (0 when absent). */
static void dyn_rela(const struct gobin *b, uint64_t *at, uint64_t *sz)
{
	size_t phnum = 0;

	*at = *sz = 0;
	elf_getphdrnum(b->elf, &phnum);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const size_t es = gelf_fsize(b->elf, ELF_T_DYN, 1, EV_CURRENT);

		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC ||
		    !es || ph.p_offset > b->size || ph.p_filesz > b->size - ph.p_offset)
			continue;
		d = elf_getdata_rawchunk(b->elf, (int64_t)ph.p_offset,
					 ph.p_filesz, ELF_T_DYN);
		for (size_t k = 0; d && k < ph.p_filesz / es; k++) {
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, (int)k, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_RELA)
				*at = dyn.d_un.d_ptr;
			else if (dyn.d_tag == DT_RELASZ)
				*sz = dyn.d_un.d_val;
		}
		return;
	}
}

/* Reads the RELATIVE relocations of b's DT_RELA table into r; what it
 * cannot read (no table, out of memory) stays out. */
static void relocs_read(const struct gobin *b, struct gobin_relocs *r)
{
	const uint32_t rel = relative_type(b->machine);
	const size_t es = gelf_fsize(b->elf, ELF_T_RELA, 1, EV_CURRENT);
	uint64_t at, sz, off;
	Elf_Data *d;
	size_t n;

	dyn_rela(b, &at, &sz);
	off = at ? gobin_vaddr_to_offset(b, at) : UINT64_MAX;
	if (!rel || !es || off == UINT64_MAX || sz > b->size - off)
		return;
	n = sz / es;
	d = elf_getdata_rawchunk(b->elf, (int64_t)off, n * es, ELF_T_RELA);
	r->addend = d && n ? malloc(n * sizeof(*r->addend)) : NULL;
	for (size_t k = 0; r->addend && k < n; k++) {
		GElf_Rela e;

		if (!gelf_getrela(d, (int)k, &e))
			break;
		if (GELF_R_TYPE(e.r_info) != rel ||
		    u64map_put(&r->at, e.r_offset, (uint32_t)r->n, UINT32_MAX) != 0)
			continue;
		r->addend[r->n++] = (uint64_t)e.r_addend;
	}
}

uint64_t gobin_dyn_word(const struct gobin *cb, uint64_t vaddr, int size)
{
	struct gobin *b = (struct gobin *)cb;   /* the relocations, once */
	const uint8_t *p = gobin_at_vaddr(b, vaddr, (size_t)size);
	const uint64_t v = p ? gobin_rd(b, p, size) : 0;
	const uint32_t *i;

	if (v || !p || !b->pie || !b->elf)
		return v;
	if (!b->relocs) {
		b->relocs = calloc(1, sizeof(*b->relocs));
		if (!b->relocs)
			return 0;
		relocs_read(b, b->relocs);
	}
	i = u64map_get(&b->relocs->at, vaddr);
	if (!i || !b->relocs->addend)
		return 0;
	return size < 8 ? b->relocs->addend[*i] & UINT32_MAX :
	       b->relocs->addend[*i];
}

uint64_t gobin_rd_ptr(const struct gobin *b, const uint8_t *p, int size)
{
	const uint64_t v = gobin_rd(b, p, size);

	return v || !b->pie ? v : gobin_dyn_word(b, gobin_file_vaddr(b, p), size);
}

void gobin_relocs_free(struct gobin *b)
{
	if (!b->relocs)
		return;
	u64map_free(&b->relocs->at);
	free(b->relocs->addend);
	free(b->relocs);
	b->relocs = NULL;
}

uint64_t gobin_vaddr_to_offset(const struct gobin *b, uint64_t vaddr)
{
	for (int i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *s = &b->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return vaddr - s->vaddr + s->offset;
	}
	return UINT64_MAX;
}

const uint8_t *gobin_at_vaddr(const struct gobin *b, uint64_t vaddr, size_t len)
{
	for (int i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *s = &b->segs[i];

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (len > s->filesz - (vaddr - s->vaddr))
			return NULL;
		if (s->offset + (vaddr - s->vaddr) + len > b->size)
			return NULL;
		return b->map + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

const uint8_t *gobin_rodata_at(const struct gobin *b, uint64_t vaddr, size_t len)
{
	for (int i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *s = &b->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return s->flags & PF_W ? NULL : gobin_at_vaddr(b, vaddr, len);
	}
	return NULL;
}

Elf_Scn *gobin_section(const struct gobin *b, const char *name, bool suffix,
		       GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	const size_t nlen = strlen(name);

	if (elf_getshdrstrndx(b->elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(b->elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(b->elf, shstrndx, sh.sh_name);
		if (!n)
			continue;
		if (suffix) {
			const size_t l = strlen(n);

			if (l < nlen || strcmp(n + l - nlen, name) != 0)
				continue;
		} else if (strcmp(n, name) != 0) {
			continue;
		}
		if (shdr)
			*shdr = sh;
		return scn;
	}
	return NULL;
}

int gobin_each_symbol(const struct gobin *b,
		       int (*fn)(const struct gobin *b, const GElf_Sym *sym,
				 const char *name, void *ctx),
		       void *ctx)
{
	static const Elf64_Word types[] = { SHT_SYMTAB, SHT_DYNSYM };

	for (int t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;
		bool seen = false;

		while ((scn = elf_nextscn(b->elf, scn)) != NULL) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] ||
			    sh.sh_entsize == 0)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			seen = true;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *name;
				int r;

				if (!gelf_getsym(data, (int)i, &sym))
					break;
				name = elf_strptr(b->elf, sh.sh_link, sym.st_name);
				if (!name || !*name)
					continue;
				r = fn(b, &sym, name, ctx);
				if (r)
					return r;
			}
		}
		if (seen)
			return 0;
	}
	return 0;
}

struct sym_find {
	const char *name;
	uint64_t value;
};

static int sym_find_cb(const struct gobin *b, const GElf_Sym *sym,
		       const char *name, void *ctx)
{
	struct sym_find *sf = ctx;

	(void)b;
	if (strcmp(name, sf->name) != 0 || sym->st_shndx == SHN_UNDEF)
		return 0;
	sf->value = sym->st_value;
	return 1;
}

uint64_t gobin_symbol(const struct gobin *b, const char *name)
{
	struct sym_find sf = { .name = name };

	gobin_each_symbol(b, sym_find_cb, &sf);
	return sf.value;
}

void gobin_elf_layout(struct gobin *b)
{
	GElf_Ehdr eh;
	size_t phnum = 0;

	gelf_getehdr(b->elf, &eh);
	b->ptrsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	b->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	b->machine = eh.e_machine;
	b->pie = eh.e_type == ET_DYN;
	b->arch = gt_arch_by_machine(eh.e_machine);
	elf_getphdrnum(b->elf, &phnum);
	for (size_t i = 0; i < phnum && b->nsegs < GOBIN_MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > b->size)
			continue;
		if (ph.p_filesz > b->size - ph.p_offset)
			ph.p_filesz = b->size - ph.p_offset;
		b->segs[b->nsegs++] = (struct gobin_seg){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz,
			.flags = ph.p_flags,
		};
	}
	b->stripped = true;
	{
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(b->elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
				b->stripped = false;
		}
	}
	b->has_dwarf = gobin_section(b, ".debug_info", false, NULL) ||
		       gobin_section(b, ".zdebug_info", false, NULL);
}

Elf *gobin_dwarf_elf(const struct gobin *b)
{
	return b->dbg_elf ? b->dbg_elf : b->elf;
}
