/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of record/gobin's argument locations (abi.c, args.c): every
 * parameter's pieces computed from DWARF types against the DWARF location
 * at the function's entry, for gc's register ABI (amd64, arm64), ABI0
 * (386) and gccgo's C ABI; register ABI cases written out, raw words of
 * stripped builds, assembly functions as ABI0 (fixtures: gobin_fixture.h).
 */
#include "gobin_fixture.h"

#include <fcntl.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

/* ------------------------------------------------------------ locations */

/*
 * DWARF register number -> enum gobin_mreg, by architecture (x86-64 psABI:
 * 0-15 RAX RDX RCX RBX RSI RDI RBP RSP R8-R15, 17-32 XMM0-15; AAPCS64
 * DWARF: 0-30 X0-X30, 64-95 V0-V31). *fp tells a float register.
 */
static unsigned dw_mreg(enum gobin_arch arch, unsigned r, bool *fp)
{
	static const unsigned amd64[16] = {
		GOBIN_MREG_RAX, GOBIN_MREG_RDX, GOBIN_MREG_RCX, GOBIN_MREG_RBX,
		GOBIN_MREG_RSI, GOBIN_MREG_RDI, GOBIN_MREG_RBP, GOBIN_MREG_RSP,
		GOBIN_MREG_R8, GOBIN_MREG_R9, GOBIN_MREG_R10, GOBIN_MREG_R11,
		GOBIN_MREG_R12, GOBIN_MREG_R13, GOBIN_MREG_R14, GOBIN_MREG_R15,
	};

	*fp = false;
	if (arch == GOBIN_ARM64) {
		if (r <= 30)
			return GOBIN_MREG_ARM64_R0 + r;
		if (r >= 64 && r <= 95) {
			*fp = true;
			return GOBIN_MREG_ARM64_F0 + (r - 64);
		}
		return GOBIN_MREG_NONE;
	}
	if (r < 16)
		return amd64[r];
	if (r >= 17 && r <= 32) {
		*fp = true;
		return GOBIN_MREG_XMM0 + (r - 17);
	}
	return GOBIN_MREG_NONE;
}

struct dwpiece {
	int kind;     /* 0 none (optimized out), 1 reg, 2 cfa+off, 3 float reg */
	unsigned mreg; /* enum gobin_mreg, any architecture */
	int64_t off;
	uint64_t size; /* 0: the whole value (no DW_OP_piece) */
};

/* LEB128 at *p (below end), advancing *p. */
static uint64_t leb128(const unsigned char **p, const unsigned char *end, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char c = 0;

	while (*p < end) {
		c = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	if (sign && shift < 64 && (c & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

/*
 * The location expression of `at` at pc: one op list (1), none there (0)
 * or -1. Go 1.25+ writes DWARF 5 but keeps DW_FORM_block1 for a location
 * that is one expression (src/cmd/internal/dwarf/dwarf.go, the
 * DW_AT_location of its abbreviations), a form DWARF 5 gives to blocks,
 * not expressions, and which libdw's dwarf_getlocation refuses in a
 * DWARF 5 unit: such a block is decoded here (the operations Go writes
 * in one: registers, CFA, frame base offsets, pieces), into buf[max].
 */
static int location_at(Dwarf_Attribute *at, Dwarf_Addr pc, Dwarf_Op **ops,
		       size_t *nops, Dwarf_Op *buf, size_t max)
{
	const int r = dwarf_getlocation_addr(at, pc, ops, nops, 1);
	const unsigned form = dwarf_whatform(at);
	const unsigned char *p, *end;
	Dwarf_Block blk;
	size_t n = 0;

	if (r >= 0 || (form != DW_FORM_block1 && form != DW_FORM_block2 &&
		       form != DW_FORM_block4 && form != DW_FORM_block) ||
	    dwarf_formblock(at, &blk) != 0)
		return r;
	p = blk.data;
	end = blk.data + blk.length;
	while (p < end && n < max) {
		Dwarf_Op *o = &buf[n++];

		memset(o, 0, sizeof(*o));
		o->atom = *p++;
		if ((o->atom >= DW_OP_reg0 && o->atom <= DW_OP_reg31) ||
		    o->atom == DW_OP_call_frame_cfa || o->atom == DW_OP_plus ||
		    o->atom == DW_OP_stack_value)
			continue;
		if (o->atom == DW_OP_regx || o->atom == DW_OP_piece ||
		    o->atom == DW_OP_plus_uconst || o->atom == DW_OP_constu)
			o->number = leb128(&p, end, false);
		else if (o->atom == DW_OP_fbreg || o->atom == DW_OP_consts)
			o->number = leb128(&p, end, true);
		else
			return -1;  /* an operation Go does not write there */
	}
	if (p != end)
		return -1;
	*ops = buf;
	*nops = n;
	return 1;
}

/* Decodes a location expression into pieces; returns count or -1. */
static int decode_loc(enum gobin_arch arch, const Dwarf_Op *ops, size_t n,
		      struct dwpiece *out, int max)
{
	struct dwpiece cur = { 0 };
	int k = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t a = ops[i].atom;

		if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
			const unsigned dr = a == DW_OP_regx ? (unsigned)ops[i].number :
					    (unsigned)(a - DW_OP_reg0);
			bool fp;

			cur.mreg = dw_mreg(arch, dr, &fp);
			cur.kind = fp ? 3 : 1;
		} else if (a == DW_OP_call_frame_cfa) {
			cur.kind = 2;
			cur.off = 0;
		} else if (a == DW_OP_fbreg) {
			/* Go and gcc here use DW_OP_call_frame_cfa as frame base */
			cur.kind = 2;
			cur.off = (int64_t)ops[i].number;
		} else if (a == DW_OP_consts || a == DW_OP_constu) {
			cur.off += (int64_t)ops[i].number; /* then DW_OP_plus */
		} else if (a == DW_OP_plus_uconst) {
			cur.off += (int64_t)ops[i].number;
		} else if (a == DW_OP_plus) {
			;
		} else if (a == DW_OP_piece) {
			if (k >= max)
				return -1;
			cur.size = ops[i].number;
			out[k++] = cur;
			memset(&cur, 0, sizeof(cur));
		} else if (a == DW_OP_stack_value || a == DW_OP_entry_value ||
			   a == DW_OP_GNU_entry_value) {
			return -1; /* not a location */
		} else {
			return -1;
		}
	}
	if (cur.kind && k < max)
		out[k++] = cur; /* whole value, no DW_OP_piece */
	return k;
}

struct loccheck {
	struct gobin *b;
	int ps;       /* SP + ps is the CFA at entry: 0 on arm64 (return in LR) */
	int checked, skipped, funcs, generic;
	const char *fixture;
};

/*
 * Compares gobin's pieces of one argument with the DWARF pieces at entry.
 * Registers: piece for piece (Go and gcc describe each register-held part
 * with its own DW_OP_piece). Stack: by byte ranges, since DWARF may give a
 * stack value whole or split differently (int64 on 386 as two words):
 * every gobin piece must lie in a DWARF stack range at the same offset, and
 * every DWARF range must start where a gobin piece starts.
 */
static void compare_arg(struct loccheck *lc, const char *fn,
			const struct gobin_arg *a, struct dwpiece *dp, int nd)
{
	const int ps = lc->ps;
	bool any_reg = false, any_xmm = false;

	if (nd == 1 && dp[0].size == 0)
		dp[0].size = a->size; /* whole value */
	for (int i = 0; i < nd; i++) {
		any_reg |= dp[i].kind == 1;
		any_xmm |= dp[i].kind == 3;
	}
	if (!any_reg && !any_xmm) {
		/* merge contiguous stack pieces into ranges */
		int m = 0;

		for (int i = 0; i < nd; i++) {
			if (m && dp[m - 1].kind == 2 && dp[i].kind == 2 &&
			    dp[i].off == dp[m - 1].off + (int64_t)dp[m - 1].size)
				dp[m - 1].size += dp[i].size;
			else
				dp[m++] = dp[i];
		}
		nd = m;
	}
	if (any_reg || any_xmm) {
		cr_expect_eq(a->npieces, (uint32_t)nd, "%s %s(%s): %u pieces, DWARF %d",
			     lc->fixture, fn, a->name, a->npieces, nd);
		for (int i = 0; i < nd && i < (int)a->npieces; i++) {
			const struct gobin_piece *p = &a->pieces[i];

			if (dp[i].kind == 0)
				continue;
			cr_expect_eq(p->size, dp[i].size, "%s %s(%s) piece %d size %u, "
				     "DWARF %llu", lc->fixture, fn, a->name, i, p->size,
				     (unsigned long long)dp[i].size);
			if (dp[i].kind == 1 && dp[i].mreg != GOBIN_MREG_NONE)
				cr_expect(p->kind == GOBIN_LOC_REG && p->mreg == dp[i].mreg,
					  "%s %s(%s) piece %d: reg %s kind %d, DWARF reg %s",
					  lc->fixture, fn, a->name, i,
					  gobin_mreg_name(p->mreg), p->kind,
					  gobin_mreg_name(dp[i].mreg));
			else if (dp[i].kind == 3)
				cr_expect(p->kind == GOBIN_LOC_REG &&
					  !gobin_piece_readable(p),
					  "%s %s(%s) float reg", lc->fixture, fn, a->name);
			if (dp[i].kind == 1 || dp[i].kind == 3)
				cr_expect_eq(p->mreg, dp[i].mreg, "%s %s(%s) piece %d: %s, "
					     "DWARF %s", lc->fixture, fn, a->name, i,
					     gobin_mreg_name(p->mreg),
					     gobin_mreg_name(dp[i].mreg));
			else
				cr_expect(false, "%s %s(%s): mixed reg/stack in DWARF",
					  lc->fixture, fn, a->name);
		}
		lc->checked++;
		return;
	}
	cr_expect_gt(a->npieces, 0, "%s %s(%s): no pieces, DWARF on stack",
		     lc->fixture, fn, a->name);
	for (uint32_t i = 0; i < a->npieces; i++) {
		const struct gobin_piece *p = &a->pieces[i];
		bool inside = false;

		cr_expect_eq(p->kind, GOBIN_LOC_STACK, "%s %s(%s) piece %u kind",
			     lc->fixture, fn, a->name, i);
		for (int j = 0; j < nd; j++)
			if (dp[j].kind == 2 && p->offset >= ps + dp[j].off &&
			    p->offset + p->size <= ps + dp[j].off + (int64_t)dp[j].size)
				inside = true;
		/* pieces DWARF calls optimized out may be anywhere */
		for (int j = 0; j < nd; j++)
			if (dp[j].kind == 0)
				inside = true;
		cr_expect(inside, "%s %s(%s) piece %u: SP+%d/%u not in DWARF's "
			  "stack ranges", lc->fixture, fn, a->name, i, p->offset,
			  p->size);
	}
	for (int j = 0; j < nd; j++) {
		bool starts = false;

		if (dp[j].kind != 2)
			continue;
		for (uint32_t i = 0; i < a->npieces; i++)
			if (a->pieces[i].offset == ps + dp[j].off)
				starts = true;
		cr_expect(starts, "%s %s(%s): DWARF CFA%+lld (SP+%lld) starts no "
			  "piece; first piece SP+%d", lc->fixture, fn, a->name,
			  (long long)dp[j].off, (long long)(ps + dp[j].off),
			  a->npieces ? a->pieces[0].offset : -1);
	}
	lc->checked++;
}

/*
 * A dictionary DWARF lists (Go 1.27) in a register-ABI function: its one
 * location is the stack slot the ABI reserves to spill it, the register
 * parameters' spill slots following each other in order from the start
 * of the argument area (CFA+0 on amd64, CFA+8 on arm64, above the saved
 * link register); gobin's parameters before it are one word each here.
 */
static void check_dict_spill_slot(struct loccheck *lc, const char *fn,
				  Dwarf_Addr lowpc, Dwarf_Die *c,
				  const struct gobin_arg *args, int k)
{
	const int64_t base = gobin_arch(lc->b) == GOBIN_ARM64 ? 8 : 0;
	int64_t want = base;
	Dwarf_Attribute at;
	Dwarf_Op *ops, buf[16];
	size_t nops;
	struct dwpiece dp[8];
	int nd;

	for (int j = 0; j < k; j++)
		want += (args[j].size + 7) / 8 * 8;
	cr_assert(dwarf_attr(c, DW_AT_location, &at), "%s %s: .dict without location",
		  lc->fixture, fn);
	cr_assert_eq(location_at(&at, lowpc, &ops, &nops, buf, 16), 1,
		     "%s %s: .dict location: %s", lc->fixture, fn, dwarf_errmsg(-1));
	nd = decode_loc(gobin_arch(lc->b), ops, nops, dp, 8);
	cr_expect(nd == 1 && dp[0].kind == 2 && dp[0].off == want,
		  "%s %s: DWARF .dict at CFA%+lld (%d pieces), its spill slot is "
		  "CFA%+lld", lc->fixture, fn, nd > 0 ? (long long)dp[0].off : 0LL,
		  nd, (long long)want);
	lc->checked++;
}

static void check_subprogram(struct loccheck *lc, Dwarf_Die *sp)
{
	const char *name = dwarf_diename(sp);
	struct gobin_arg args[32];
	struct gobin_func f;
	Dwarf_Addr lowpc;
	Dwarf_Die c;
	int n, k = 0, dict = -1;

	if (!name || strncmp(name, "main.", 5) != 0 || strcmp(name, "main.main") == 0 ||
	    strstr(name, "..") || dwarf_lowpc(sp, &lowpc) != 0)
		return;
	/* generic instances: DWARF "main.f[go.shape.int_0]", pclntab "main.f[...]" */
	if ((gobin_func_find(lc->b, name, &f) != 0 || f.entry != lowpc) &&
	    (!strstr(name, "[go.shape.") || gobin_func_at(lc->b, lowpc, &f) != 0 ||
	     f.entry != lowpc))
		return; /* gccgo type-equality helpers and the like */
	n = gobin_func_args(lc->b, &f, args, 32);
	cr_assert_geq(n, 0, "%s: gobin_func_args(%s) = %d", lc->fixture, name, n);
	lc->funcs++;
	if (strstr(name, "[go.shape.")) {
		/* the hidden dictionary where this Go passes it (the receiver
		 * before it is a pointer): the first or second integer
		 * register, or stack word */
		const struct gobin_piece *p;

		dict = dict_index_of(name);
		cr_assert_gt(n, dict, "%s %s", lc->fixture, name);
		cr_expect_str_eq(args[dict].name, ".dict", "%s %s", lc->fixture, name);
		cr_expect_eq(args[dict].npieces, 1);
		p = &args[dict].pieces[0];
		if (gobin_arch(lc->b) == GOBIN_386)
			cr_expect(p->kind == GOBIN_LOC_STACK && p->offset == 4 + 4 * dict,
				  "%s %s .dict at SP%+d", lc->fixture, name, p->offset);
		else
			cr_expect_eq(p->mreg, gobin_arch(lc->b) == GOBIN_ARM64 ?
				     GOBIN_MREG_ARM64_R0 + dict :
				     dict ? GOBIN_MREG_RBX : GOBIN_MREG_RAX,
				     "%s %s .dict in %s", lc->fixture, name,
				     gobin_mreg_name(p->mreg));
		lc->generic++;
	}
	if (dwarf_child(sp, &c) != 0) {
		cr_expect_eq(n, 0);
		return;
	}
	do {
		Dwarf_Attribute at;
		bool var = false;
		Dwarf_Op *ops, buf[16];
		size_t nops;
		struct dwpiece dp[8];
		int nd, r;

		if (dwarf_tag(&c) != DW_TAG_formal_parameter)
			continue;
		if (dwarf_attr_integrate(&c, DW_AT_variable_parameter, &at))
			dwarf_formflag(&at, &var);
		if (var)
			continue;
		if (k == dict && !dwarf_lists_dict())
			k++;    /* gobin's dictionary, which this DWARF omits */
		cr_assert_lt(k, n, "%s %s: more DWARF params than gobin's %d",
			     lc->fixture, name, n);
		cr_expect_str_eq(args[k].name, dwarf_diename(&c) ? dwarf_diename(&c) : "");
		if (k == dict && gobin_arch(lc->b) != GOBIN_386) {
			/* DWARF gives the register-passed dictionary, which
			 * these functions never spill, only its spill slot
			 * (createSimpleVar): the slot of gobin's register */
			check_dict_spill_slot(lc, name, lowpc, &c, args, k);
			k++;
			continue;
		}
		if (!dwarf_attr(&c, DW_AT_location, &at)) {
			cr_log_info("%s %s(%s): no DWARF location", lc->fixture,
				    name, args[k].name);
			lc->skipped++;
			k++;
			continue;
		}
		r = location_at(&at, lowpc, &ops, &nops, buf, 16);
		nd = r == 1 ? decode_loc(gobin_arch(lc->b), ops, nops, dp, 8) : -1;
		if (nd <= 0) {
			cr_log_info("%s %s(%s): no DWARF location at entry",
				    lc->fixture, name, args[k].name);
			lc->skipped++;
			k++;
			continue;
		}
		compare_arg(lc, name, &args[k], dp, nd);
		k++;
	} while (dwarf_siblingof(&c, &c) == 0);
	if (k == dict && !dwarf_lists_dict())
		k++;    /* a dictionary after every DWARF parameter */
	cr_expect_eq(k, n, "%s %s: %d DWARF params, gobin %d", lc->fixture, name, k, n);
}

static void check_locations(const char *fixture, int min_checked)
{
	struct loccheck lc = { .fixture = fixture };
	int fd;
	Dwarf *dw;
	Dwarf_Off off = 0, next;
	size_t hsize;

	lc.b = open_fixture(fixture);
	cr_assert(gobin_has_dwarf(lc.b));
	lc.ps = gobin_arch(lc.b) == GOBIN_386 ? 4 :
		gobin_arch(lc.b) == GOBIN_ARM64 ? 0 : 8;
	fd = open(fix(fixture), O_RDONLY);
	dw = dwarf_begin(fd, DWARF_C_READ);
	cr_assert_not_null(dw, "%s: %s", fixture, dwarf_errmsg(-1));
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &c) == 0) {
			do {
				if (dwarf_tag(&c) == DW_TAG_subprogram)
					check_subprogram(&lc, &c);
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	cr_log_info("%s: %d functions, %d params checked, %d without DWARF "
		    "location at entry", fixture, lc.funcs, lc.checked, lc.skipped);
	cr_expect_geq(lc.funcs, 14, "%s: %d functions", fixture, lc.funcs);
	if (gobin_compiler(lc.b) == GOBIN_GC)
		cr_expect_geq(lc.generic, 3, "%s: %d generic instances", fixture,
			      lc.generic);
	cr_expect_geq(lc.checked, min_checked, "%s: only %d params checked (%d "
		      "skipped)", fixture, lc.checked, lc.skipped);
	dwarf_end(dw);
	close(fd);
	gobin_close(lc.b);
}

Test(gobin, locations_match_dwarf_amd64_regabi)
{
	check_locations("args", 60);
}

Test(gobin, locations_match_dwarf_pie)
{
	check_locations("args_pied", 60);
}

Test(gobin, locations_match_dwarf_386_abi0)
{
	check_locations("args_386", 60);
}

Test(gobin, locations_match_dwarf_arm64_regabi)
{
	struct gobin *b = open_fixture("args_arm64");

	cr_expect_eq(gobin_arch(b), GOBIN_ARM64);
	cr_expect(gobin_regabi(b));
	gobin_close(b);
	check_locations("args_arm64", 60);
}

Test(gobin, locations_match_dwarf_gccgo)
{
	struct gobin *b;

	if (!exists(fix("args_gccgo")))
		cr_assert_fail("gccgo fixture not built (see the build errors above)");
	b = open_fixture("args_gccgo");
	cr_expect_eq(gobin_compiler(b), GOBIN_GCCGO);
	cr_expect(!gobin_regabi(b));
	cr_expect_eq(gobin_goid_offset(b), -1);
	gobin_close(b);
	check_locations("args_gccgo", 50);
}

/* Register ABI cases written out, independent of the DWARF check. */
Test(gobin, regabi_explicit)
{
	struct gobin *b = open_fixture("args");
	struct gobin_arg a[16];
	struct gobin_func f;
	int n;

	cr_assert_eq(gobin_func_find(b, "main.spillstr", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 10);
	expect_piece(&a[7], 0, GOBIN_LOC_REG, GOBIN_MREG_R10, 8);   /* h */
	cr_expect_eq(a[8].type, GTR_TYPE_STRING);
	cr_expect_str_eq(a[8].type_name, "string");
	cr_expect_eq(a[8].npieces, 2);
	expect_piece(&a[8], 0, GOBIN_LOC_STACK, 8, 8);          /* s: no room */
	expect_piece(&a[8], 1, GOBIN_LOC_STACK, 16, 8);
	expect_piece(&a[9], 0, GOBIN_LOC_REG, GOBIN_MREG_R11, 8);   /* x still in reg */

	/* stack-assigned aggregates have no DWARF location at entry; these
	 * offsets were read off `go tool objdump` (t.a at 8(SP), w at 32(SP)) */
	cr_assert_eq(gobin_func_find(b, "main.stackmix", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 11);
	cr_expect_eq(a[8].npieces, 3);
	expect_piece(&a[8], 0, GOBIN_LOC_STACK, 8, 8);
	expect_piece(&a[8], 1, GOBIN_LOC_STACK, 16, 8);
	expect_piece(&a[8], 2, GOBIN_LOC_STACK, 24, 8);
	expect_piece(&a[9], 0, GOBIN_LOC_REG, GOBIN_MREG_R11, 1);
	expect_piece(&a[10], 0, GOBIN_LOC_STACK, 32, 8);

	cr_assert_eq(gobin_func_find(b, "main.arrays", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 5);
	expect_piece(&a[0], 0, GOBIN_LOC_STACK, 8, 8);          /* [3]int */
	cr_expect_eq(a[0].npieces, 1, "an array: one piece, at its start");
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 4);   /* [1]int32 */
	cr_expect_eq(a[3].npieces, 3);                       /* []byte */
	expect_piece(&a[3], 2, GOBIN_LOC_REG, GOBIN_MREG_RSI, 8);
	expect_piece(&a[4], 1, GOBIN_LOC_REG, GOBIN_MREG_R9, 8);    /* error */

	cr_assert_eq(gobin_func_find(b, "main.(*T).M", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(a[0].name, "t");
	cr_expect_eq(a[0].type, GTR_TYPE_PTR);
	cr_expect_str_eq(a[0].type_name, "*main.T");
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RCX, 8);
	expect_piece(&a[2], 1, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);

	cr_assert_eq(gobin_func_find(b, "main.floatmid", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 3);
	cr_expect_eq(a[1].type, GTR_TYPE_FLOAT);
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_XMM0, 8);
	cr_expect(!gobin_piece_readable(&a[1].pieces[0]));  /* float: not read */
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);

	cr_assert_eq(gobin_func_find(b, "main.misc", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 4);
	cr_expect_eq(a[0].type, GTR_TYPE_BOOL);
	cr_expect_eq(a[0].size, 1);
	cr_expect_eq(a[3].type, GTR_TYPE_INT);
	cr_expect_str_eq(a[3].type_name, "main.MyInt");

	cr_assert_eq(gobin_func_find(b, "main.ptrs", &f), 0);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(a[i].type, GTR_TYPE_PTR, "%s", a[i].name);

	/* max smaller than the count */
	cr_assert_eq(gobin_func_find(b, "main.many", &f), 0);
	cr_expect_eq(gobin_func_args(b, &f, a, 3), 3);
	n = gobin_func_args(b, &f, a, 16);
	cr_assert_eq(n, 11);
	expect_piece(&a[9], 0, GOBIN_LOC_STACK, 8, 8);
	expect_piece(&a[10], 0, GOBIN_LOC_STACK, 16, 8);

	cr_assert_eq(gobin_func_find(b, "main.results", &f), 0);
	n = gobin_func_results(b, &f, a, 16);
	cr_assert_eq(n, 3);
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);
	expect_piece(&a[1], 1, GOBIN_LOC_REG, GOBIN_MREG_RCX, 8);
	expect_piece(&a[2], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);
	gobin_close(b);
}

Test(gobin, stripped_has_no_args_but_raw)
{
	struct gobin *b = open_fixture("args_pie");
	struct gobin_arg a[12];
	struct gobin_func f;

	cr_assert_eq(gobin_func_find(b, "main.ints", &f), 0);
	cr_expect_eq(gobin_func_args(b, &f, a, 12), -ENODATA);
	cr_expect_eq(gobin_raw_args(b, a, 12), 9);
	expect_piece(&a[0], 0, GOBIN_LOC_REG, GOBIN_MREG_RAX, 8);
	expect_piece(&a[3], 0, GOBIN_LOC_REG, GOBIN_MREG_RDI, 8);
	expect_piece(&a[8], 0, GOBIN_LOC_REG, GOBIN_MREG_R11, 8);
	cr_expect_eq(a[0].type, GTR_TYPE_WORD);
	gobin_close(b);

	b = open_fixture("args_386_nosh");
	cr_expect_eq(gobin_raw_args(b, a, 3), 3);
	expect_piece(&a[0], 0, GOBIN_LOC_STACK, 4, 4);
	expect_piece(&a[2], 0, GOBIN_LOC_STACK, 12, 4);
	gobin_close(b);
}

/* Assembly functions are ABI0 even in register-ABI binaries, stripped or not. */
Test(gobin, asm_functions_are_abi0)
{
	const char *names[] = { "args", "args_s", "args_pie_nosh" };

	for (size_t k = 0; k < 3; k++) {
		struct gobin *b = open_fixture(names[k]);
		struct gobin_func f;
		struct gobin_arg a[2];

		cr_assert_eq(gobin_func_find(b, "internal/cpu.cpuid", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI0, "%s cpuid", names[k]);
		cr_expect_eq(gobin_func_raw_args(b, &f, a, 2), 2);
		expect_piece(&a[1], 0, GOBIN_LOC_STACK, 16, 8);
		cr_assert_eq(gobin_func_find(b, "runtime.memmove", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL, "%s memmove",
			     names[k]);
		cr_assert_eq(gobin_func_find(b, "main.ints", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL);
		cr_expect_eq(gobin_func_raw_args(b, &f, a, 2), 2);
		expect_piece(&a[1], 0, GOBIN_LOC_REG, GOBIN_MREG_RBX, 8);
		/* a Go function called from assembly also has an ABI0 wrapper of
		 * the same name: find returns the function itself */
		cr_assert_eq(gobin_func_find(b, "runtime.schedinit", &f), 0);
		cr_expect_eq(gobin_func_abi(b, &f), GOBIN_ABI_INTERNAL, "%s", names[k]);
		if (k < 2) {
			char cmd[1024], out[64];

			snprintf(cmd, sizeof(cmd), "%s tool nm '%s' | awk '$3 == "
				 "\"runtime.schedinit\" { print $1 }'", gocmd(), fix("args"));
			cr_assert_eq(run(cmd, out, sizeof(out)), 0);
			cr_expect_eq(f.entry, strtoull(out, NULL, 16), "%s", names[k]);
		}
		gobin_close(b);
	}
}
