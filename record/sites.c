// SPDX-License-Identifier: MIT
/*
 * Where the uprobes of a probe go (after the prologue's stack check, at
 * every RET) and how its plan finds the goroutine; see plan_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn.h"
#include "plan_int.h"

int plan_sites(struct plan *pl, struct probe *p)
{
	const struct binary *b = p->bin;
	int gc_amd64 = gobin_compiler(b->gb) == GOBIN_GC &&
		       gobin_arch(b->gb) == GOBIN_AMD64;
	size_t len = 0;
	const uint8_t *code;
	int i, n;

	if (p->spec.kind == GTR_KIND_ENTRY) {
		int bits = gobin_arch(b->gb) == GOBIN_386 ? 32 : 64;
		uint32_t skip = 0;

		p->sites = malloc(sizeof(*p->sites));
		if (!p->sites)
			return -ENOMEM;
		code = gobin_func_code(b->gb, &p->fn, 64, &len);
		if (code && gobin_compiler(b->gb) == GOBIN_GC && (gc_amd64 ||
		    gobin_arch(b->gb) == GOBIN_386))
			skip = go_prologue_skip_mode(code, len,
				gobin_func_abi(b->gb, &p->fn) == GOBIN_ABI_INTERNAL,
				bits);
		/* i386 programs were seen to crash with a uprobe on their
		 * gs-relative first instruction; x86-64 fs-relative ones
		 * (gccgo's split-stack check, ABI0 TLS loads) are fine. */
		if (code && skip < len &&
		    !go_insn_uprobe_ok(code + skip, len - skip, bits)) {
			/* runtime.abort (INT 3) and friends: the kernel
			 * refuses such an instruction. */
			fprintf(stderr, "gotrace-record: probe '%s': %s starts "
				"with an instruction uprobes cannot replace (a "
				"trap or system call); not probed\n",
				p->spec.text, p->fn.name);
			return -EPERM;
		}
		if (code && bits == 32 &&
		    go_insn_segment_prefixed(code + skip, len - skip, bits)) {
			fprintf(stderr, "gotrace-record: probe '%s': the first "
				"instruction of %s reads thread-local storage; a "
				"uprobe there is not safe, so it is not "
				"probed\n", p->spec.text, p->fn.name);
			return -EPERM;
		}
		/* The kernel's user stack walk itself adds the caller at a
		 * uprobe on these (Linux 6.10, arch/x86/events/core.c
		 * is_uprobe_at_func_entry()): the BPF side must know. */
		if (code && bits == 64 && skip < len && (code[skip] == 0x55 ||
		    (len - skip >= 4 &&
		     !memcmp(code + skip, "\xf3\x0f\x1e\xfa", 4))))
			p->plan.flags |= GT_P_AT_PUSH_BP;
		p->sites[0] = p->fn.file_offset + skip;
		p->nsites = 1;
		return 0;
	}
	if (gobin_arch(b->gb) != GOBIN_AMD64) {
		fprintf(stderr, "gotrace-record: probe '%s': return probes need "
			"an x86-64 binary for now\n", p->spec.text);
		return -ENOTSUP;
	}
	code = gobin_func_code(b->gb, &p->fn, 1 << 20, &len);
	if (!code) {
		fprintf(stderr, "gotrace-record: probe '%s': cannot read the "
			"code of %s in %s\n", p->spec.text, p->fn.name, b->path);
		return -EIO;
	}
	n = go_ret_offsets(code, len, NULL, 0);
	if (n > 0) {
		uint32_t *offs = calloc(n, sizeof(*offs));

		p->sites = calloc(n, sizeof(*p->sites));
		if (!offs || !p->sites) {
			free(offs);
			return -ENOMEM;
		}
		go_ret_offsets(code, len, offs, n);
		for (i = 0; i < n; i++)
			p->sites[i] = p->fn.file_offset + offs[i];
		p->nsites = n;
		free(offs);
	}
	if (n < 0) {
		fprintf(stderr, "gotrace-record: probe '%s': cannot decode the "
			"code of %s to find its returns\n", p->spec.text,
			p->fn.name);
		return -EINVAL;
	}
	if (n == 0) {
		/* Said once for all probes by plan_warnings(). */
		if (pl->nnoret < (int)(sizeof(pl->noret) / sizeof(pl->noret[0])))
			pl->noret[pl->nnoret] = p->fn.name;
		pl->nnoret++;
	}
	return 0;
}

void plan_warnings(const struct plan *pl)
{
	int i, shown = pl->nnoret < 5 ? pl->nnoret : 5;

	if (!pl->nnoret || pl->opts.quiet)
		return;
	fprintf(stderr, "gotrace-record: warning: %d function%s no RET "
		"instruction (never return, or end in a tail call), so %s "
		"return probe%s will not fire: ", pl->nnoret,
		pl->nnoret == 1 ? " has" : "s have", pl->nnoret == 1 ? "its" : "their",
		pl->nnoret == 1 ? "" : "s");
	for (i = 0; i < shown; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", pl->noret[i]);
	if (pl->nnoret > shown)
		fprintf(stderr, " and %d more", pl->nnoret - shown);
	fputc('\n', stderr);
}

void plan_goid(struct probe *p)
{
	const struct gobin *gb = p->bin->gb;

	p->plan.goid_off = gobin_goid_offset(gb);
	p->plan.goid_mode = GT_GOID_NONE;
	if (gobin_compiler(gb) == GOBIN_GC && !p->bin->goid_said &&
	    (p->plan.goid_off < 0 || gobin_arch(gb) != GOBIN_AMD64)) {
		/* said once per binary */
		p->bin->goid_said = true;
		if (gobin_arch(gb) != GOBIN_AMD64)
			fprintf(stderr, "gotrace-record: %s: goroutine ids are "
				"read on x86-64 only; events get goid 0 and "
				"calls are paired by thread\n", p->bin->path);
		else
			fprintf(stderr, "gotrace-record: %s: the offset of goid "
				"in runtime.g is unknown (no DWARF, a Go version "
				"the table does not know, not found in the "
				"runtime's code): events carry the goroutine's g "
				"address as goid, which pairs calls by goroutine "
				"but is not Go's goroutine id\n", p->bin->path);
	}
	if (gobin_compiler(gb) != GOBIN_GC || gobin_arch(gb) != GOBIN_AMD64)
		return;
	/* R14 holds g only in ABIInternal code; ABI0 (assembly, old Go)
	 * finds it at fs:-8. */
	p->plan.goid_mode = gobin_func_abi(gb, &p->fn) == GOBIN_ABI_INTERNAL
				    ? GT_GOID_R14 : GT_GOID_TLS;
}

