// SPDX-License-Identifier: MIT
/*
 * Where a probe's values are: from its signature (checked against
 * DWARF), DWARF, the argument area of Go assembly, or raw words in the
 * function's convention. See plan_int.h.
 */
#include <stdio.h>
#include <string.h>

#include "plan_int.h"

/* Whether two pieces are read from the same place: stack slot or integer
 * register (float registers are never read). */
static bool same_place(const struct gobin_piece *x, const struct gobin_piece *y)
{
	return x->kind == y->kind && x->offset == y->offset &&
	       (x->kind != GOBIN_LOC_REG || x->mreg == y->mreg ||
		(!gt_arch_reg_is_int(x->mreg) && !gt_arch_reg_is_int(y->mreg)));
}

/*
 * When DWARF describes the function too, a signature must agree with it
 * (same number of words in the same places): a wrong signature would read
 * the wrong registers. Prints why and returns 1 when they disagree.
 */
static int sig_disagrees(const struct probe *p, int n)
{
	struct gobin_arg dw[GTR_MAX_ARGS];
	int m = gobin_func_args(p->bin->gb, &p->fn, dw, GTR_MAX_ARGS), i;
	uint32_t k;

	if (m <= 0)
		return 0;   /* no DWARF, or none for this function (Go
			       assembly): the signature is all there is */
	for (i = 0; i < n && i < m; i++) {
		if (dw[i].npieces != p->args[i].npieces)
			break;
		for (k = 0; k < dw[i].npieces; k++)
			if (!same_place(&dw[i].pieces[k], &p->args[i].pieces[k]))
				break;
		if (k < dw[i].npieces)
			break;
	}
	if (i == n && n == m)
		return 0;
	fprintf(stderr, "gotrace-record: probe '%s': the signature disagrees "
		"with DWARF, which gives %s(", p->spec.text, p->fn.name);
	for (i = 0; i < m; i++)
		fprintf(stderr, "%s%s %s", i ? ", " : "", dw[i].name,
			dw[i].type_name);
	fprintf(stderr, "); drop the signature (DWARF gives the types) or "
		"correct it\n");
	return 1;
}

/*
 * Values of `p` without DWARF: raw words in the function's convention
 * (results of the register ABI come back in the argument registers; ABI0
 * results follow unknown arguments, so none). Returns the count, or -1
 * after printing why.
 */
static int locate_raw(struct probe *p)
{
	const struct gobin *gb = p->bin->gb;
	int n;

	if (p->spec.kind == GTR_KIND_RETURN &&
	    gobin_func_abi(gb, &p->fn) != GOBIN_ABI_INTERNAL) {
		/* ABI0: results follow the arguments on the stack,
		 * and without DWARF it is unknown where one ends:
		 * the return probe gives latency without values. */
		if (p->spec.nexprs > 0) {
			fprintf(stderr, "gotrace-record: probe '%s': "
				"results of %s are on the stack after "
				"its arguments, and without DWARF their "
				"place is unknown; drop the values to "
				"record its returns (latency only), or "
				"use a binary with DWARF\n",
				p->spec.text, p->fn.name);
			return -1;
		}
		/* said for a function named alone; a glob would
		 * say it for each of thousands */
		if (gobin_func_args_size(gb, &p->fn) != 0 &&
		    !strpbrk(p->spec.func, "*?"))
			fprintf(stderr, "gotrace-record: probe '%s': "
				"results of %s are on the stack after "
				"its arguments, and without DWARF their "
				"place is unknown: its returns are "
				"recorded without values (latency only)\n",
				p->spec.text, p->fn.name);
		return 0;
	}
	n = gobin_func_raw_args(gb, &p->fn, p->args,
				p->spec.nexprs > 6 ? p->spec.nexprs : 6);
	return n < 0 ? 0 : n;
}

/*
 * The words of results of `p`, whose signature gives parameters alone,
 * from the argument area pclntab records (gobin_func_args_size): on the
 * stack after the parameters, each a raw word (ABI0 counts results
 * there; the register ABI only those on the stack, none when they all
 * fit in registers). Into p->args from index 0; returns the count.
 */
static int result_words(struct probe *p, const struct gobin_arg *params, int np)
{
	const struct gobin *gb = p->bin->gb;
	const int ps = gobin_arch_info(gb)->ptrsize, argsz = gobin_func_args_size(gb, &p->fn);
	int32_t end = ps, spill = 0;   /* the return address is at SP+0 */
	int n = 0;

	for (int i = 0; i < np; i++)
		for (uint32_t k = 0; k < params[i].npieces; k++) {
			const struct gobin_piece *pc = &params[i].pieces[k];

			if (pc->kind == GOBIN_LOC_STACK && pc->offset + pc->size > end)
				end = pc->offset + pc->size;
			else if (pc->kind == GOBIN_LOC_REG)
				spill += ps;   /* its spill slot ends the area */
		}
	end = (end + ps - 1) / ps * ps;
	for (int32_t off = end; argsz >= 0 && off + ps <= ps + argsz - spill &&
	     n < GT_MAX_FETCH; off += ps, n++) {
		struct gobin_arg *a = &p->args[n];

		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "~r%d", n);
		a->type = GTR_TYPE_WORD;
		a->size = (uint32_t)ps;
		a->npieces = 1;
		a->pieces[0] = (struct gobin_piece){ .kind = GOBIN_LOC_STACK,
						     .offset = off, .size = (uint8_t)ps };
	}
	return n;
}

/*
 * Results of return probe `p` from its signature: the results it writes,
 * else the result words of the argument area (result_words). Returns
 * the count, or -1 after printing why.
 */
static int locate_sig_results(struct probe *p)
{
	const struct gobin *gb = p->bin->gb;
	struct gobin_arg params[GTR_MAX_ARGS];
	char err[512];
	int n;

	if (p->spec.results) {
		n = gobin_sig_results(gb, &p->fn, p->spec.sig, p->spec.results,
				      p->args, GTR_MAX_ARGS, err, sizeof(err));
		if (n < 0)
			fprintf(stderr, "gotrace-record: %s\n", err);
		return n < 0 ? -1 : n;
	}
	n = gobin_sig_args(gb, &p->fn, p->spec.sig, NULL, params, GTR_MAX_ARGS,
			   err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	p->args_source = "raw";
	n = result_words(p, params, n);
	/* said for a function named alone; a glob would say it for each */
	if (!n && gobin_func_abi(gb, &p->fn) == GOBIN_ABI_INTERNAL &&
	    !strpbrk(p->spec.func, "*?")) {
		fprintf(stderr, "gotrace-record: probe '%s': pclntab does not "
			"say which results %s returns in registers (none are on "
			"the stack): its returns are recorded without values; "
			"to capture them, write them after the parameters, e.g. "
			"'r:%s(%s) (n int, err error)'\n", p->spec.text,
			p->fn.name, p->spec.func, p->spec.sig);
	}
	return n;
}

/*
 * Values of entry probe `p` on a GCC clone (gobin_func_gcc_clone) that
 * DWARF does not describe: none, since its registers hold what the clone
 * takes, not the declared parameters; said once per binary. Returns 0.
 */
static int clone_without_dwarf(struct probe *p)
{
	if (!p->bin->clone_said)
		fprintf(stderr, "gotrace-record: probe '%s': %s is a copy GCC "
			"made with other parameters than its declaration's "
			"(constants folded in, pieces passed apart), and %s has "
			"no DWARF for it: its arguments (and those of other such "
			"copies, *.constprop.N, *.isra.N, *.part.N) are not "
			"captured; build with -g to capture them, or with "
			"-gccgoflags=-fno-ipa-cp -fno-ipa-sra to keep calls as "
			"declared\n", p->spec.text, p->fn.name, p->bin->path);
	p->bin->clone_said = true;
	p->args_source = "";
	return 0;
}

/*
 * Locates the values of `p` into p->args: from its signature (checked
 * against DWARF), else DWARF, else the argument area of a Go assembly
 * function, else raw words. Returns the count, or -1 after printing why.
 */
int plan_locate(struct probe *p)
{
	const struct gobin *gb = p->bin->gb;
	const int ret = p->spec.kind == GTR_KIND_RETURN;
	int n;

	p->args_source = p->spec.sig ? "signature" : "DWARF";

	if (p->spec.sig && ret)
		return locate_sig_results(p);
	if (p->spec.sig) {
		char err[512];

		/* results written on an entry probe describe the function
		 * (they place gccgo's parameters); its return probe
		 * captures them */
		n = gobin_sig_args(gb, &p->fn, p->spec.sig, p->spec.results, p->args,
				   GTR_MAX_ARGS, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "gotrace-record: %s\n", err);
			return -1;
		}
		return sig_disagrees(p, n) ? -1 : n;
	}
	n = ret ? gobin_func_results(gb, &p->fn, p->args, GTR_MAX_ARGS)
		: gobin_func_args(gb, &p->fn, p->args, GTR_MAX_ARGS);
	if (ret && n > 0 && gobin_func_gcc_clone(gb, &p->fn) && strstr(p->fn.name, ".isra"))
		/* GCC's IPA-SRA drops a result every caller ignores, and the
		 * clone's DWARF still describes it (GCC 12) */
		fprintf(stderr, "gotrace-record: warning: probe '%s': %s is a "
			"GCC IPA-SRA clone, which may not return the results "
			"its function declares (when every caller ignores them): "
			"its results may read what the register holds\n",
			p->spec.text, p->fn.name);
	if (n == 0 && !ret && gobin_func_abi(gb, &p->fn) == GOBIN_ABI0 &&
	    gobin_func_args_size(gb, &p->fn) > 0) {
		/* Go assembly: DWARF names no parameters, but the runtime
		 * knows the size of the argument area: capture its words. */
		int words = gobin_func_args_size(gb, &p->fn) /
			    gobin_arch_info(gb)->ptrsize;

		n = gobin_func_raw_args(gb, &p->fn, p->args,
					words < GT_MAX_FETCH ? words : GT_MAX_FETCH);
		p->args_source = "raw";
	}
	if (n < 0 && !ret && gobin_func_gcc_clone(gb, &p->fn))
		return clone_without_dwarf(p);
	if (n < 0 && gobin_compiler(gb) == GOBIN_GCCGO) {
		/* no pclntab argument sizes to fall back on: nothing */
		if (!p->bin->nodwarf_said)
			fprintf(stderr, "gotrace-record: probe '%s': %s has no "
				"DWARF for %s (built without -g): its values (and "
				"those of other such functions) are not captured; "
				"write its signature with its own types, as "
				"'%s%s(n int, s string) (int, error)', or build "
				"with -g\n", p->spec.text, p->bin->path, p->fn.name,
				ret ? "r:" : "", p->spec.func);
		p->bin->nodwarf_said = true;
		p->args_source = "";
		return 0;
	}
	if (n < 0)
		p->args_source = "raw";
	return n < 0 ? locate_raw(p) : n;
}
