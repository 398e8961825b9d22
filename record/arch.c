// SPDX-License-Identifier: MIT
/*
 * The architectures gotrace knows, one struct gt_arch each; see arch.h.
 * Sources: Go src/cmd/compile/abi-internal.md (register ABI), the System
 * V x86-64 psABI (gccgo on amd64), Go src/runtime/asm_*.s (g register).
 */
#include <elf.h>
#include <string.h>

#include "arch.h"
#include "insn.h"

static const char *const x86_inames[16] = {
	"RAX", "RCX", "RDX", "RBX", "RSP", "RBP", "RSI", "RDI", "R8", "R9",
	"R10", "R11", "R12", "R13", "R14", "R15",
};
static const char *const x86_fnames[16] = {
	"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10",
	"X11", "X12", "X13", "X14", "X15",
};
static const char *const arm64_inames[31] = {
	"R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10",
	"R11", "R12", "R13", "R14", "R15", "R16", "R17", "R18", "R19", "R20",
	"R21", "R22", "R23", "R24", "R25", "R26", "R27", "R28", "R29", "R30",
};
static const char *const arm64_fnames[32] = {
	"F0", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10",
	"F11", "F12", "F13", "F14", "F15", "F16", "F17", "F18", "F19", "F20",
	"F21", "F22", "F23", "F24", "F25", "F26", "F27", "F28", "F29", "F30",
	"F31",
};

/* amd64 ABIInternal: RAX RBX RCX RDI RSI R8 R9 R10 R11, X0-X14. */
static const uint8_t amd64_go_iregs[] = {
	GOBIN_MREG_RAX, GOBIN_MREG_RBX, GOBIN_MREG_RCX, GOBIN_MREG_RDI,
	GOBIN_MREG_RSI, GOBIN_MREG_R8, GOBIN_MREG_R9, GOBIN_MREG_R10,
	GOBIN_MREG_R11,
};
/* System V x86-64: RDI RSI RDX RCX R8 R9, XMM0-7; results RAX, RDX. */
static const uint8_t amd64_c_iregs[] = {
	GOBIN_MREG_RDI, GOBIN_MREG_RSI, GOBIN_MREG_RDX, GOBIN_MREG_RCX,
	GOBIN_MREG_R8, GOBIN_MREG_R9,
};
/* arm64 ABIInternal: R0-R15, F0-F15. */
static const uint8_t arm64_go_iregs[] = {
	GOBIN_MREG_ARM64_R0 + 0, GOBIN_MREG_ARM64_R0 + 1, GOBIN_MREG_ARM64_R0 + 2,
	GOBIN_MREG_ARM64_R0 + 3, GOBIN_MREG_ARM64_R0 + 4, GOBIN_MREG_ARM64_R0 + 5,
	GOBIN_MREG_ARM64_R0 + 6, GOBIN_MREG_ARM64_R0 + 7, GOBIN_MREG_ARM64_R0 + 8,
	GOBIN_MREG_ARM64_R0 + 9, GOBIN_MREG_ARM64_R0 + 10,
	GOBIN_MREG_ARM64_R0 + 11, GOBIN_MREG_ARM64_R0 + 12,
	GOBIN_MREG_ARM64_R0 + 13, GOBIN_MREG_ARM64_R0 + 14,
	GOBIN_MREG_ARM64_R0 + 15,
};

static uint32_t skip64(const uint8_t *code, size_t len, int regabi)
{
	return go_prologue_skip_mode(code, len, regabi, 64);
}

static uint32_t skip32(const uint8_t *code, size_t len, int regabi)
{
	return go_prologue_skip_mode(code, len, regabi, 32);
}

static bool uprobe_ok64(const uint8_t *code, size_t len)
{
	return go_insn_uprobe_ok(code, len, 64);
}

static int ret_offsets32(const uint8_t *code, size_t len, uint32_t *offs, int max)
{
	return go_ret_offsets_mode(code, len, 32, offs, max);
}

static bool uprobe_ok32(const uint8_t *code, size_t len)
{
	return go_insn_uprobe_ok(code, len, 32);
}

/* i386 programs were seen to crash with a uprobe on their gs-relative
 * first instruction; x86-64 fs-relative ones (gccgo's split-stack check,
 * ABI0 TLS loads) are fine. */
static bool tls_unsafe32(const uint8_t *code, size_t len)
{
	return go_insn_segment_prefixed(code, len, 32);
}

static const struct gt_arch arches[] = {
	[GOBIN_AMD64] = {
		.id = GOBIN_AMD64, .elf_machine = EM_X86_64, .name = "x86-64",
		.goarch = "amd64", .fact = GOFACT_AMD64, .ptrsize = 8,
		.ireg0 = GOBIN_MREG_RAX, .nireg = 16, .inames = x86_inames,
		.freg0 = GOBIN_MREG_XMM0, .nfreg = 16, .fnames = x86_fnames,
		.go_iregs = amd64_go_iregs, .go_nireg = 9,
		.go_freg0 = GOBIN_MREG_XMM0, .go_nfreg = 15,
		.g_reg = GOBIN_MREG_R14, .ra_size = 8,
		.c_iregs = amd64_c_iregs, .c_nireg = 6,
		.c_freg0 = GOBIN_MREG_XMM0, .c_nfreg = 8,
		.c_ret = { GOBIN_MREG_RAX, GOBIN_MREG_RDX },
		.prologue_skip = skip64, .ret_offsets = go_ret_offsets,
		.uprobe_ok = uprobe_ok64, .at_push_bp = go_insn_push_bp,
		.sets_fp = go_insn_sets_fp,
		.goid_from_code = go_goid_offset_from_code,
		.flow = go_insn_flow,
		.capture = true, .goid = true,
	},
	[GOBIN_ARM64] = {
		/* listed only: no decoder hooks, no capture */
		.id = GOBIN_ARM64, .elf_machine = EM_AARCH64, .name = "aarch64",
		.goarch = "arm64", .fact = GOFACT_ARM64, .ptrsize = 8,
		.ireg0 = GOBIN_MREG_ARM64_R0, .nireg = 31, .inames = arm64_inames,
		.freg0 = GOBIN_MREG_ARM64_F0, .nfreg = 32, .fnames = arm64_fnames,
		.go_iregs = arm64_go_iregs, .go_nireg = 16,
		.go_freg0 = GOBIN_MREG_ARM64_F0, .go_nfreg = 16,
		.g_reg = GOBIN_MREG_ARM64_R0 + 28, .ra_size = 0,
	},
	[GOBIN_386] = {
		/* ABI0 and cdecl: every argument on the stack */
		.id = GOBIN_386, .elf_machine = EM_386, .name = "i386",
		.goarch = "386", .fact = GOFACT_386, .ptrsize = 4, .ra_size = 4,
		.prologue_skip = skip32, .uprobe_ok = uprobe_ok32,
		.ret_offsets = ret_offsets32, .tls_unsafe = tls_unsafe32,
		.capture = true, .goid = true,
	},
	[GOBIN_ARCH_OTHER] = {
		.id = GOBIN_ARCH_OTHER, .name = "unknown", .goarch = "unknown",
		.fact = GOFACT_OTHER,
	},
};

const struct gt_arch *gt_arch_of(enum gobin_arch a)
{
	return &arches[(unsigned)a < GOBIN_ARCH_OTHER ? a : GOBIN_ARCH_OTHER];
}

enum gobin_arch gt_arch_by_machine(uint16_t em)
{
	for (unsigned i = 0; i < GOBIN_ARCH_OTHER; i++)
		if (arches[i].elf_machine == em)
			return arches[i].id;
	return GOBIN_ARCH_OTHER;
}

const char *gt_arch_reg_name(unsigned mreg)
{
	for (unsigned i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		const struct gt_arch *a = &arches[i];

		if (mreg >= a->ireg0 && mreg < (unsigned)a->ireg0 + a->nireg)
			return a->inames[mreg - a->ireg0];
		if (mreg >= a->freg0 && mreg < (unsigned)a->freg0 + a->nfreg)
			return a->fnames[mreg - a->freg0];
	}
	return "";
}

bool gt_arch_reg_is_int(unsigned mreg)
{
	for (unsigned i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (mreg >= arches[i].ireg0 &&
		    mreg < (unsigned)arches[i].ireg0 + arches[i].nireg)
			return true;
	return false;
}
