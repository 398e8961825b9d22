// SPDX-License-Identifier: MIT
/*
 * `gotrace-record --list BINARY PROBE`: what a probe as written (with a
 * signature, results, field paths, a format) would capture, planned
 * exactly as a recording plans it, without attaching anything.
 */
#include <stdio.h>
#include <string.h>

#include "list.h"
#include "plan.h"

/* Where value i of p is read from: its pieces ("RAX", "SP+8"), then
 * "-> memory" for a field path that follows pointers or reads memory. */
static void where(const struct probe *p, int i, char *out, size_t len)
{
	const struct gt_fetch *f = &p->plan.fetch[i];
	const size_t o = strlen(gobin_arg_locations(&p->args[i], out, len));

	if (o < len && (p->path & 1u << i) && (f->nderef || (f->flags & GT_F_INDIRECT)))
		snprintf(out + o, len - o, " then memory (%u pointer%s, +%d)",
			 (unsigned)f->nderef + 1, f->nderef ? "s" : "", f->mem_off);
}

/*
 * Into out[len]: which pieces of value `a` DWARF places nowhere at the
 * probe's address, " (cap nowhere here)" for a slice, " (DWARF places it
 * nowhere here)" when none is anywhere (or, `at_site`, it has no pieces:
 * a variable an inlined copy kept no DIE of); "" when every piece is
 * somewhere.
 */
static void missing(const struct gobin_arg *a, bool at_site, char *out, size_t len)
{
	static const char *const words[] = { "pointer", "length", "cap" };
	static const char *const iface[] = { "type word", "data word" };
	const bool seq = a->type == GTR_TYPE_SLICE || a->type == GTR_TYPE_STRING ||
			 a->type == GTR_TYPE_BYTES;
	uint32_t none = 0;
	size_t o = 0;

	out[0] = '\0';
	for (uint32_t k = 0; k < a->npieces; k++)
		none += a->pieces[k].kind == GOBIN_LOC_NONE;
	if ((!none && (a->npieces || !at_site)) || a->folded)
		return;
	if (none == a->npieces) {
		snprintf(out, len, " (DWARF places it nowhere here)");
		return;
	}
	for (uint32_t k = 0; k < a->npieces && o < len; k++) {
		if (a->pieces[k].kind != GOBIN_LOC_NONE)
			continue;
		if (a->iface && k < 2)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : " (", iface[k]);
		else if (seq && k < 3)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : " (", words[k]);
		else
			o += (size_t)snprintf(out + o, len - o, "%spiece %u", o ? ", " : " (", k + 1);
	}
	if (o < len)
		snprintf(out + o, len - o, " nowhere here)");
}

/*
 * Prints the return sites of p, a return probe on a function: how many
 * and their addresses (the RETs its uprobes go on, in the function's
 * virtual addresses), the first LIST_SITES of them, then "and N more".
 */
static void return_sites(const struct probe *p, FILE *out)
{
	enum { LIST_SITES = 8 };
	int i;

	fprintf(out, "\nreturn sites of %s: %d", p->fn.name, p->nsites);
	if (!p->nsites)
		fputs(" (it never returns)", out);
	for (i = 0; i < p->nsites && i < LIST_SITES; i++)
		fprintf(out, "%s%#llx", i ? ", " : ", at ", (unsigned long long)
			(p->fn.entry + (p->sites[i] - p->fn.file_offset)));
	if (p->nsites > LIST_SITES)
		fprintf(out, " and %d more", p->nsites - LIST_SITES);
	fprintf(out, "; values from %s\n", p->args_source);
}

/*
 * Prints where probe p's uprobes go: a function's entry or returns, or
 * the address of its site, a line's or an inlined copy's, whose values
 * are those DWARF places at that address.
 */
static void heading(const struct probe *p, FILE *out)
{
	const struct gobin_site *s = &p->site;

	if (!p->at_site && p->spec.kind == GTR_KIND_RETURN) {
		return_sites(p, out);
		return;
	}
	if (!p->at_site) {
		fprintf(out, "\nentry site of %s at %#llx, values from %s\n", p->fn.name,
			(unsigned long long)p->fn.entry, p->args_source);
		return;
	}
	if (p->spec.line)
		fprintf(out, "\nline %s site in %s", p->meta.line ? p->meta.line :
			p->spec.file, s->func);
	else
		fprintf(out, "\nentry site of %s", s->func);
	if (s->inlined)
		fprintf(out, ", inlined into %s%s%s%s", s->outer.name,
			p->meta.call_site ? " (called at " : "",
			p->meta.call_site ? p->meta.call_site : "",
			p->meta.call_site ? ")" : "");
	fprintf(out, " at %#llx, values from %s%s\n", (unsigned long long)s->addr,
		p->args_source && p->args_source[0] ? p->args_source : "nowhere",
		p->args_source && p->args_source[0] ? " at that address" : "");
}

/* Prints what probe p captures. */
static void one(const struct probe *p, FILE *out)
{
	heading(p, out);
	for (uint32_t i = 0; i < p->meta.nargs; i++) {
		const struct gt_fetch *f = &p->plan.fetch[i];
		const bool cap = f->op != GT_OP_NONE && f->src.loc != GT_LOC_NONE;
		char loc[256], note[160];

		const char *name = p->meta.args[i].name;
		bool whole = false;

		/* a struct captured whole: its fields follow, NAME.FIELD */
		for (uint32_t k = i + 1; !cap && name[0] && k < p->meta.nargs; k++)
			whole |= !strncmp(p->meta.args[k].name, name, strlen(name)) &&
				 p->meta.args[k].name[strlen(name)] == '.' &&
				 p->plan.fetch[k].op != GT_OP_NONE;
		where(p, (int)i, loc, sizeof(loc));
		note[0] = '\0';
		if (!cap && !whole && p->args[i].in_memory)
			snprintf(note, sizeof(note), " (returned in memory, where "
				 "numbers, bools, pointers, strings, slices and "
				 "interfaces are read)");
		else if (!(p->path & 1u << i))
			missing(&p->args[i], p->at_site, note, sizeof(note));
		else if (!cap && p->args[i].npieces &&
			 p->args[i].pieces[0].kind == GOBIN_LOC_REG &&
			 !gobin_piece_readable(&p->args[i].pieces[0]))
			snprintf(note, sizeof(note), " (a float register: not in "
				 "uprobe pt_regs)");
		else if (!cap)   /* a field path at an inlined copy */
			snprintf(note, sizeof(note), " (DWARF places %.*s nowhere "
				 "here)", (int)strcspn(name, "."), name);
		if (cap && i >= (uint32_t)p->nargs && p->args[i].iface)
			/* type(NAME) of gccgo's interface (values.c) */
			snprintf(note, sizeof(note), " (the dynamic type's name from "
				 "its type descriptor; one of libgo.so's is read from "
				 "the running process, its address once the process "
				 "has exited)");
		fprintf(out, "    %-20s %-24s %-18s %s%s\n", name[0] ? name : "-",
			p->meta.args[i].type_name[0] ? p->meta.args[i].type_name :
			gtr_type_name(p->meta.args[i].type), loc,
			cap ? "captured" : whole ? "captured whole, by its fields" :
			"not captured", note);
	}
	if (p->meta.fmt && p->meta.fmt[0])
		fprintf(out, "    shown as \"%s\"\n", p->meta.fmt);
}

int gotrace_list_probe(const char *binary, const char *debuginfo,
		       const char *probe, FILE *out)
{
	const struct plan_opts o = { .str_max = 64, .max_probes = 1000,
				     .quiet = 1, .debuginfo = debuginfo };
	struct plan *pl = plan_new(&o);
	int n;

	if (!pl || plan_add(pl, probe, binary, binary)) {
		plan_free(pl);
		return 1;   /* plan_add said why */
	}
	n = plan_nprobes(pl);
	/* a line is probed at each of its addresses, one probe each */
	fprintf(out, "probe '%s': %d %s%s of %s\n", probe, n,
		n && plan_probe(pl, 0)->spec.line ? "site" : "function",
		n == 1 ? "" : "s", binary);
	for (int i = 0; i < n; i++)
		one(plan_probe(pl, i), out);
	plan_free(pl);
	return 0;
}
