/* SPDX-License-Identifier: MIT */
/*
 * Where an entry uprobe goes in a gc-compiled amd64 function: after the
 * stack-bound check of its prologue, so that a call that grows the stack
 * (prologue -> runtime.morestack -> back to the entry) is seen once.
 */
#ifndef GOTRACE_PROLOGUE_H
#define GOTRACE_PROLOGUE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the first instructions of a function (code[len], the bytes from
 * its entry) with Zydis and returns the byte offset from
 * the entry of the instruction that follows the prologue's conditional
 * jump to runtime.morestack: `CMP reg, [g+16]; JBE` (g in R14 in
 * ABIInternal code, loaded from TLS in ABI0 code). Returns 0 (probe at the
 * entry) when there is no stack check (NOSPLIT functions) or when an
 * instruction before it writes one of the register ABI's argument
 * registers (RAX, RBX, RCX, RDI, RSI, R8-R11) and `regabi` is set.
 * Source: Go src/cmd/internal/obj/x86/obj6.go, stacksplit().
 */
uint32_t go_prologue_skip(const uint8_t *code, size_t len, int regabi);

#endif /* GOTRACE_PROLOGUE_H */
