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
