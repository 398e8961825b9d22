// SPDX-License-Identifier: MIT
/*
 * How a located value becomes a struct gt_fetch of the BPF program
 * (bpf/gotrace.h): which pieces it can read (pt_regs registers, stack
 * slots), and the fetch of a parameter or result (its pieces, or memory
 * at a register's address) and of a field path; see plan_int.h.
 */
#include <string.h>

#include "plan_int.h"

/*
 * The pt_regs register (enum gt_reg, bpf/gotrace.h: x86-64, which i386
 * processes share) the BPF program reads for machine register `mreg`
 * (arch.h); -1 for one it cannot read: float registers (pt_regs holds no
 * FP state) and other architectures' registers.
 */
static int bpf_reg(unsigned mreg)
{
	static const enum gt_reg x86[16] = {
		GT_REG_RAX, GT_REG_RCX, GT_REG_RDX, GT_REG_RBX, GT_REG_RSP,
		GT_REG_RBP, GT_REG_RSI, GT_REG_RDI, GT_REG_R8, GT_REG_R9,
		GT_REG_R10, GT_REG_R11, GT_REG_R12, GT_REG_R13, GT_REG_R14,
		GT_REG_R15,
	};

	if (mreg >= GOBIN_MREG_RAX && mreg <= GOBIN_MREG_R15)
		return (int)x86[mreg - GOBIN_MREG_RAX];
	return -1;
}

/* Whether the BPF program can read piece `p`: a stack slot, or a
 * register it has (bpf_reg). */
bool fetch_readable(const struct gobin_piece *p)
{
	return p->kind == GOBIN_LOC_STACK ||
	       (p->kind == GOBIN_LOC_REG && bpf_reg(p->mreg) >= 0);
}

/* Where the BPF program reads piece `p` (GT_LOC_NONE: it cannot). */
void fetch_src(const struct gobin_piece *p, struct gt_src *s)
{
	memset(s, 0, sizeof(*s));
	if (!fetch_readable(p))
		return;
	s->loc = p->kind == GOBIN_LOC_STACK ? GT_LOC_STACK : GT_LOC_REG;
	s->reg = p->kind == GOBIN_LOC_REG ? (__u8)bpf_reg(p->mreg) : 0;
	s->off = p->offset;
	s->size = p->size;
}

/* The fetch of value `a` that lies in memory at the address its register
 * holds (gobin_arg.in_memory): a number, bool or pointer of up to a word,
 * a float's bits, a string, []byte or slice (its pointer and length words
 * there), or a gccgo
 * interface's dynamic type descriptor (fetch_of_value()); other types stay
 * unavailable (f->op GT_OP_NONE). */
static void mem_fetch(struct gt_fetch *f, const struct gobin_arg *a, uint8_t word)
{
	f->flags = GT_F_INDIRECT;
	f->mem_off = a->mem_off;
	if (a->iface == GOBIN_GCCGO_METHODS || a->iface == 2) {
		f->op = GT_OP_WORD;
		f->flags |= GT_F_NIL_ZERO;
		f->size = word;
		if (a->iface == GOBIN_GCCGO_METHODS) {
			/* the methods table's address there, its first word */
			f->nderef = 1;
			f->deref[0] = a->mem_off;
			f->mem_off = 0;
		}
		return;
	}
	switch (a->type) {
	case GTR_TYPE_INT:
		f->flags |= GT_F_SIGNED;
		/* fall through */
	case GTR_TYPE_UINT:
	case GTR_TYPE_BOOL:
	case GTR_TYPE_PTR:
	case GTR_TYPE_WORD:
		if (a->size && a->size <= word) {
			f->op = GT_OP_WORD;
			f->size = (uint8_t)a->size;
		}
		break;
	case GTR_TYPE_FLOAT:   /* its bits */
		if (a->size == 4 || a->size == 8) {
			f->op = GT_OP_WORD;
			f->size = (uint8_t)a->size;
		}
		break;
	case GTR_TYPE_STRING:
	case GTR_TYPE_BYTES:
	case GTR_TYPE_SLICE:
		if (a->size >= 2u * word) {
			f->op = GT_OP_STRING;
			f->size = word;
			if (a->type == GTR_TYPE_SLICE)   /* elements, or length only */
				f->mem_size = a->elem_size ? a->elem_size : UINT32_MAX;
		}
		break;
	default:
		break;
	}
}

/* Makes f read `size` bytes of memory from SP + `off` on (bytes): a
 * value read whole from its stack slot, an array or one in a struct
 * passed there. */
static void fetch_stack_mem(struct gt_fetch *f, uint32_t off, uint32_t size)
{
	memset(&f->src, 0, sizeof(f->src));
	f->src.loc = GT_LOC_REG;
	f->src.reg = GT_REG_RSP;
	f->op = GT_OP_MEM;
	f->flags = GT_F_INDIRECT;
	f->mem_off = off;
	f->mem_size = size;
}

/* Turns one argument's location into a fetch of the plan, a program of
 * `word`-byte words. */
void fetch_of_value(struct gt_fetch *f, const struct gobin_arg *a,
		       uint8_t word)
{
	memset(f, 0, sizeof(*f));
	if (!a->npieces || !fetch_readable(&a->pieces[0]))
		return;
	fetch_src(&a->pieces[0], &f->src);
	if (a->in_memory) {
		mem_fetch(f, a, word);
		return;
	}
	if (a->iface) {
		/* The dynamic type's descriptor: word 0 of an empty interface,
		 * the itab's type (its second word) otherwise (struct itab
		 * of Go src/runtime/runtime2.go, Go 1.19; abi.ITab of
		 * src/internal/abi/iface.go by Go 1.26), word 0 of gccgo's
		 * methods table (GCC 12, libgo/runtime/go-type.h, the
		 * table's first entry); the recorder names it. */
		if (a->pieces[0].size != word)
			return;
		f->op = GT_OP_WORD;
		f->flags = GT_F_NIL_ZERO;
		if (a->iface == 1 || a->iface == GOBIN_GCCGO_METHODS) {
			f->flags |= GT_F_INDIRECT;
			f->mem_off = a->iface == 1 ? word : 0;
			f->size = word;
		}
		return;
	}
	switch (a->type) {
	case GTR_TYPE_INT:
		f->flags = GT_F_SIGNED;
		/* fall through */
	case GTR_TYPE_UINT:
	case GTR_TYPE_BOOL:
	case GTR_TYPE_PTR:
	case GTR_TYPE_WORD:
		f->op = GT_OP_WORD;
		break;
	case GTR_TYPE_FLOAT:
		/* its bits, where a uprobe reads them: a stack slot (ABI0,
		 * i386) or memory; float registers are not in pt_regs, and
		 * fetch_readable() refused those above */
		if (a->npieces == 1 && a->pieces[0].size == a->size &&
		    (a->size == 4 || a->size == 8))
			f->op = GT_OP_WORD;
		break;
	case GTR_TYPE_BYTES:
		if (a->npieces == 1) {
			/* $ptr(E, SIZE): a->size bytes where E points. */
			f->op = GT_OP_MEM;
			f->mem_size = a->size;
			break;
		}
		/* []byte is (ptr, len, cap), read like a string */
		__attribute__((fallthrough));
	case GTR_TYPE_SLICE:
		if (a->array && a->pieces[0].kind == GOBIN_LOC_REG) {
			/* the register's word, whose first size bytes the
			 * encoder writes as the array's */
			f->op = GT_OP_WORD;
			break;
		}
		if (a->array) {
			fetch_stack_mem(f, a->pieces[0].offset, a->size);
			break;
		}
		__attribute__((fallthrough));
	case GTR_TYPE_STRING:
		if (a->npieces < 2 || !fetch_readable(&a->pieces[1]))
			return;
		f->op = GT_OP_STRING;
		if (a->type == GTR_TYPE_SLICE) {
			f->mem_size = a->elem_size;   /* from its element type */
			if (!f->mem_size)
				f->mem_size = UINT32_MAX;   /* length only */
		}
		fetch_src(&a->pieces[1], &f->src2);
		break;
	default:
		break;   /* other aggregates: unavailable */
	}
}


/* The fetch of field path gp whose root's first words are w0 and w1. */
void fetch_of_path(struct gt_fetch *f, const struct gobin_path *gp,
		       const struct gobin_piece *w0, const struct gobin_piece *w1)
{
	fetch_src(w0, &f->src);
	if (gp->array) {
		/* size bytes where the array starts: after the pointers, or
		 * in the stack slot of a struct passed there */
		if (!gp->direct) {
			f->op = GT_OP_MEM;
			f->flags = GT_F_INDIRECT;
			f->mem_size = gp->size;
			f->nderef = (uint8_t)gp->nderef;
			memcpy(f->deref, gp->deref, sizeof(f->deref));
			f->mem_off = gp->offset;
		} else if (w0->kind == GOBIN_LOC_STACK) {
			fetch_stack_mem(f, w0->offset, gp->size);
		} else if (fetch_readable(w0) && gp->size <= w0->size) {
			/* gc's [1]T field in its register: the word, whose
			 * first size bytes the encoder writes as the array's */
			f->op = GT_OP_WORD;
			f->flags = 0;
			f->mem_size = 0;
		} else {
			f->op = GT_OP_NONE;   /* in registers: unavailable */
		}
		return;
	}
	f->op = gp->type == GTR_TYPE_STRING || gp->type == GTR_TYPE_BYTES ||
		gp->type == GTR_TYPE_SLICE ? GT_OP_STRING : GT_OP_WORD;
	if (gp->type == GTR_TYPE_SLICE)   /* its elements, or its length only */
		f->mem_size = gp->elem_size ? gp->elem_size : UINT32_MAX;
	f->flags = gp->type == GTR_TYPE_INT ? GT_F_SIGNED : 0;
	if (gp->direct) {
		/* The field itself is in a register or stack slot. */
		fetch_src(w1, &f->src2);
	} else {
		f->nderef = gp->nderef;
		memcpy(f->deref, gp->deref, sizeof(f->deref));
		f->flags |= GT_F_INDIRECT;
		f->mem_off = gp->offset;
		f->size = gp->size <= 8 ? gp->size : 8;
	}
}
