// SPDX-License-Identifier: MIT
/* Entry probe placement after the Go stack check (record/prologue.c). */
#include <criterion/criterion.h>

#include <errno.h>
#include <string.h>

#include "insn.h"

Test(insn, regabi_small_frame)
{
	/* cmp rsp,[r14+0x10]; jbe +0x2e; push rbp */
	static const uint8_t code[] = { 0x49, 0x3b, 0x66, 0x10, 0x76, 0x2e, 0x55 };

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 6);
}

Test(insn, regabi_large_frame_uses_r12)
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

Test(insn, abi0_tls_check)
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

Test(insn, huge_frame_checks_wraparound_first)
{
	/* a frame over 4 KiB, go1.17 on (go1.19, go1.26: main.big of 16
	 * KiB): mov r12,rsp; sub r12,0x3f98; jb L; cmp r12,[r14+0x10];
	 * jbe L; push rbp. A probe at the entry fired again each time the
	 * stack grew (morestack starts the function over). */
	static const uint8_t code[] = {
		0x49, 0x89, 0xe4,
		0x49, 0x81, 0xec, 0x98, 0x3f, 0x00, 0x00,
		0x0f, 0x82, 0x98, 0x00, 0x00, 0x00,
		0x4d, 0x3b, 0x66, 0x10,
		0x0f, 0x86, 0x8e, 0x00, 0x00, 0x00,
		0x55,
	};
	/* i386: mov ecx,gs:0; mov ecx,[ecx-4]; mov eax,esp; sub eax,0x3f90;
	 * jb L; cmp eax,[ecx+8]; jbe L */
	static const uint8_t code32[] = {
		0x65, 0x8b, 0x0d, 0x00, 0x00, 0x00, 0x00,
		0x8b, 0x89, 0xfc, 0xff, 0xff, 0xff,
		0x89, 0xe0,
		0x2d, 0x90, 0x3f, 0x00, 0x00,
		0x0f, 0x82, 0xb8, 0x00, 0x00, 0x00,
		0x3b, 0x41, 0x08,
		0x0f, 0x86, 0xaf, 0x00, 0x00, 0x00,
	};
	uint8_t other[sizeof(code)];

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 26);
	cr_assert_eq(go_prologue_skip_mode(code32, sizeof(code32), 0, 32), 35);
	/* branches that go to two places are not a prologue */
	memcpy(other, code, sizeof(code));
	other[22]++;
	cr_assert_eq(go_prologue_skip(other, sizeof(other), 1), 0);
}

Test(insn, huge_frame_before_go1_17)
{
	/* mov rcx,fs:[-8]; mov rsi,[rcx+0x10]; cmp rsi,StackPreempt; je L;
	 * lea rax,[rsp+0x370]; sub rax,rsi; cmp rax,0x4100; jbe L
	 * (cmd/internal/obj/x86/obj6.go of go1.16) */
	static const uint8_t code[] = {
		0x64, 0x48, 0x8b, 0x0c, 0x25, 0xf8, 0xff, 0xff, 0xff,
		0x48, 0x8b, 0x71, 0x10,
		0x48, 0x81, 0xfe, 0xde, 0xfa, 0xff, 0xff,
		0x0f, 0x84, 0x43, 0x00, 0x00, 0x00,
		0x48, 0x8d, 0x84, 0x24, 0x70, 0x03, 0x00, 0x00,
		0x48, 0x29, 0xf0,
		0x48, 0x3d, 0x00, 0x41, 0x00, 0x00,
		0x0f, 0x86, 0x2c, 0x00, 0x00, 0x00,
	};

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 0), 49);
}

Test(insn, nosplit_function_stays_at_entry)
{
	/* mov rax,[rsp+8]; ret */
	static const uint8_t code[] = { 0x48, 0x8b, 0x44, 0x24, 0x08, 0xc3 };

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 0);
}

Test(insn, truncated_or_garbage_code)
{
	static const uint8_t code[] = { 0x49, 0x3b, 0x66 };
	static const uint8_t bad[] = { 0x0f, 0xff, 0xff, 0xff };

	cr_assert_eq(go_prologue_skip(code, sizeof(code), 1), 0);
	cr_assert_eq(go_prologue_skip(bad, sizeof(bad), 1), 0);
	cr_assert_eq(go_prologue_skip(code, 0, 1), 0);
}

Test(insn, ret_sites_of_a_function_with_two_returns)
{
	/* cmp rsp,[r14+16]; jbe; push rbp; mov rbp,rsp; test rax,rax;
	 * je +3; pop rbp; ret; pop rbp; ret; int3 padding */
	static const uint8_t code[] = {
		0x49, 0x3b, 0x66, 0x10, 0x76, 0x0c,
		0x55, 0x48, 0x89, 0xe5,
		0x48, 0x85, 0xc0,
		0x74, 0x02,
		0x5d, 0xc3,
		0x5d, 0xc3,
		0xcc, 0xcc, 0xcc,
	};
	uint32_t offs[4];

	cr_assert_eq(go_ret_offsets(code, sizeof(code), offs, 4), 2);
	cr_assert_eq(offs[0], 16);
	cr_assert_eq(offs[1], 18);
	/* Only `max` are written, all are counted. */
	cr_assert_eq(go_ret_offsets(code, sizeof(code), offs, 1), 2);
}

Test(insn, ret_with_immediate_and_bytes_that_look_like_ret)
{
	/* mov eax,0xc3c3c3c3 (C3 bytes inside an immediate); ret 8 */
	static const uint8_t code[] = {
		0xb8, 0xc3, 0xc3, 0xc3, 0xc3,
		0xc2, 0x08, 0x00,
	};
	uint32_t offs[4];

	cr_assert_eq(go_ret_offsets(code, sizeof(code), offs, 4), 1);
	cr_assert_eq(offs[0], 5);
}

Test(insn, undecodable_code_is_an_error)
{
	static const uint8_t code[] = { 0xc3, 0x0f, 0xff, 0xff, 0xff };
	uint32_t offs[4];

	cr_assert_eq(go_ret_offsets(code, sizeof(code), offs, 4), -EINVAL);
}

Test(insn, flow_of_branches_jumps_and_tables)
{
	/* test rax,rax; jge +3 (to 8); nop; nop; nop; inc rax; ret;
	 * jmp -13 (to 0); jmp rax (a jump table's); int3 */
	static const uint8_t code[] = {
		0x48, 0x85, 0xc0, 0x7d, 0x03, 0x90, 0x90, 0x90,
		0x48, 0xff, 0xc0, 0xc3, 0xeb, 0xf2, 0xff, 0xe0, 0xcc,
	};
	struct go_flow f[16];

	cr_assert_eq(go_insn_flow(code, sizeof(code), f, 16), 10);
	cr_assert(f[0].falls && f[0].target == UINT32_MAX);
	cr_assert(f[1].falls && f[1].off == 3 && f[1].target == 8);
	cr_assert_eq(f[5].off, 8);
	cr_assert(!f[6].falls && f[6].off == 11);               /* ret */
	cr_assert(!f[7].falls && f[7].target == 0 && !f[7].indirect);
	cr_assert(!f[8].falls && f[8].indirect && f[8].target == UINT32_MAX);
	cr_assert(!f[9].falls);                                  /* int3 */
	/* only `max` are written, all are counted */
	cr_assert_eq(go_insn_flow(code, sizeof(code), f, 2), 10);
	cr_assert_eq(go_insn_flow((const uint8_t *)"\xc3\x0f\xff\xff\xff", 5, f, 16), -EINVAL);
}

Test(insn, instructions_uprobes_refuse)
{
	static const uint8_t int3[] = { 0xcc }, int_3[] = { 0xcd, 0x03 },
		ud2[] = { 0x0f, 0x0b }, sys[] = { 0x0f, 0x05 },
		push[] = { 0x55 }, cmp[] = { 0x49, 0x3b, 0x66, 0x10 };

	cr_assert_not(go_insn_uprobe_ok(int3, sizeof(int3), 64));
	cr_assert_not(go_insn_uprobe_ok(int_3, sizeof(int_3), 64)); /* runtime.abort */
	cr_assert_not(go_insn_uprobe_ok(ud2, sizeof(ud2), 64));
	cr_assert_not(go_insn_uprobe_ok(sys, sizeof(sys), 64));
	cr_assert(go_insn_uprobe_ok(push, sizeof(push), 64));
	cr_assert(go_insn_uprobe_ok(cmp, sizeof(cmp), 64));
}

Test(insn, i386_prologue_through_gs)
{
	/* mov ecx,gs:0; mov ecx,[ecx-4]; cmp esp,[ecx+8]; jbe +0xf;
	 * mov eax,[esp+8] (Go 1.19, GOARCH=386, main.add) */
	static const uint8_t code[] = {
		0x65, 0x8b, 0x0d, 0x00, 0x00, 0x00, 0x00,
		0x8b, 0x89, 0xfc, 0xff, 0xff, 0xff,
		0x3b, 0x61, 0x08,
		0x76, 0x0f,
		0x8b, 0x44, 0x24, 0x08,
	};

	cr_assert_eq(go_prologue_skip_mode(code, sizeof(code), 0, 32), 18);
	cr_assert(go_insn_segment_prefixed(code, sizeof(code), 32));
	cr_assert_not(go_insn_segment_prefixed(code + 18, sizeof(code) - 18, 32));
	/* The same bytes decoded as 64-bit code are no Go prologue. */
	cr_assert_eq(go_prologue_skip_mode(code, sizeof(code), 0, 64), 0);
}

Test(insn, push_bp_or_endbr64_first)
{
	static const uint8_t push[] = { 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };
	static const uint8_t sub[] = { 0x48, 0x83, 0xec, 0x18 };

	cr_expect(go_insn_push_bp(push, sizeof(push)));
	cr_expect(go_insn_push_bp(endbr, sizeof(endbr)));
	cr_expect(!go_insn_push_bp(endbr, 3));
	cr_expect(!go_insn_push_bp(sub, sizeof(sub)));
	cr_expect(!go_insn_push_bp(push, 0));
}
