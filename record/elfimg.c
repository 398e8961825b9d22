/* SPDX-License-Identifier: MIT */
/*
 * The ELF layer of inspection: bounds-checked reads of the mapped file,
 * PT_LOAD translation, sections and symbols (libelf). It knows nothing of
 * Go; pclntab.c, buildinfo.c, debuginfo.c, dwarf.c and gobin.c build on it
 * (elfimg.h).
 */
#include <string.h>

#include "gobin_int.h"

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
