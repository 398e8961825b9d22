/* SPDX-License-Identifier: MIT */
/*
 * The ELF layer under Go-binary inspection (elfimg.c): reads of the
 * mapped file, PT_LOAD translation, sections and symbols, through libelf.
 * It calls nothing of the Go-specific files. Private to the inspection
 * files; they reach it through gobin_int.h. (Not named elf.h: under
 * -Irecord that would hide the system <elf.h> libelf includes.)
 */
#ifndef GOTRACE_ELFIMG_H
#define GOTRACE_ELFIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>
#include <libelf.h>

struct gobin;

/* Unsigned `size`-byte (1..8) value at p in the file's byte order. The
 * caller checks that p[size] lies inside the file image. */
uint64_t gobin_rd(const struct gobin *b, const uint8_t *p, int size);

/* File bytes at link-time address `vaddr` with at least `len` bytes behind
 * them in the same PT_LOAD, or NULL. */
const uint8_t *gobin_at_vaddr(const struct gobin *b, uint64_t vaddr, size_t len);

/* Link-time address of the file bytes at p (in a PT_LOAD), or 0. */
uint64_t gobin_file_vaddr(const struct gobin *b, const uint8_t *p);

/*
 * The `size`-byte (4 or 8) word at link-time address `vaddr` as the
 * dynamic linker leaves it, counted from a load address of 0: the file's
 * word when it is not 0, else, in a PIE (ET_DYN), the addend of an
 * R_*_RELATIVE relocation (RELA: DT_RELA of PT_DYNAMIC) at vaddr, which
 * some linkers (lld, GNU ld on arm64) leave the file's word 0 for. With
 * REL (i386) the file's word is the addend. The relocations are read
 * once per binary, at the first word that needs them. 0 when vaddr is
 * not in the file or nothing gives a value.
 */
uint64_t gobin_dyn_word(const struct gobin *b, uint64_t vaddr, int size);

/* gobin_dyn_word() of the file bytes at p (which lie inside the file). */
uint64_t gobin_rd_ptr(const struct gobin *b, const uint8_t *p, int size);

/* Frees what gobin_dyn_word() read of b (NULL relocations are fine). */
void gobin_relocs_free(struct gobin *b);

/* File offset of `vaddr` through the PT_LOAD containing it, or UINT64_MAX. */
uint64_t gobin_vaddr_to_offset(const struct gobin *b, uint64_t vaddr);

/* Section by exact name (or, with suffix set, by name ending in `name`);
 * fills *shdr when not NULL. NULL when there is none (or no section
 * headers). */
Elf_Scn *gobin_section(const struct gobin *b, const char *name, bool suffix,
		       GElf_Shdr *shdr);

/* Value of an ELF symbol (.symtab then .dynsym), 0 when absent. */
uint64_t gobin_symbol(const struct gobin *b, const char *name);

/*
 * Calls fn for each named symbol of .symtab (else .dynsym). Stops when fn
 * returns non-zero and returns that value; else 0.
 */
int gobin_each_symbol(const struct gobin *b,
		      int (*fn)(const struct gobin *b, const GElf_Sym *sym,
				const char *name, void *ctx),
		      void *ctx);

/*
 * Fills from the ELF header, program and section headers: ptrsize, byte
 * order, machine and architecture, PIE, PT_LOAD segments (clipped to the
 * file), stripped (no .symtab) and has_dwarf (.debug_info or .zdebug_info).
 */
void gobin_elf_layout(struct gobin *b);

/* The ELF DWARF comes from: the separate debug file when there is one. */
Elf *gobin_dwarf_elf(const struct gobin *b);

#endif /* GOTRACE_ELFIMG_H */
