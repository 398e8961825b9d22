// SPDX-License-Identifier: MIT
/* Entry probe placement after the Go stack check (record/prologue.c). */
#include <criterion/criterion.h>

#include "prologue.h"

Test(prologue, regabi_small_frame)
{
	/* cmp rsp,[r14+0x10]; jbe +0x2e; push rbp */
	static const uint8_t code[] = { 0x49, 0x3b, 0x66, 0x10, 0x76, 0x2e, 0x55 };

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 6);
}

Test(prologue, regabi_large_frame_uses_r12)
{
	/* lea r12,[rsp-0x200]; cmp r12,[r14+0x10]; jbe rel32; push rbp */
	static const uint8_t code[] = {
		0x4c, 0x8d, 0xa4, 0x24, 0x00, 0xfe, 0xff, 0xff,
		0x4d, 0x3b, 0x66, 0x10,
		0x0f, 0x86, 0x10, 0x01, 0x00, 0x00,
		0x55,
	};

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 18);
}

Test(prologue, abi0_tls_check)
{
	/* mov rcx,fs:[-8]; cmp rsp,[rcx+0x10]; jbe +0x20 */
	static const uint8_t code[] = {
		0x64, 0x48, 0x8b, 0x0c, 0x25, 0xf8, 0xff, 0xff, 0xff,
		0x48, 0x3b, 0x61, 0x10,
		0x76, 0x20,
	};

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 0), 15);
	/* Under the register ABI RCX holds an argument: stay at the entry. */
	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 0);
}

Test(prologue, nosplit_function_stays_at_entry)
{
	/* mov rax,[rsp+8]; ret */
	static const uint8_t code[] = { 0x48, 0x8b, 0x44, 0x24, 0x08, 0xc3 };

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 0);
}

Test(prologue, truncated_or_garbage_code)
{
	static const uint8_t code[] = { 0x49, 0x3b, 0x66 };
	static const uint8_t bad[] = { 0x0f, 0xff, 0xff, 0xff };

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 0);
	cr_assert_eq(go_prologue_skip(bad, sizeof(bad), 1), 0);
	cr_assert_eq(go_prologue_skip(code, 0, 1), 0);
}
