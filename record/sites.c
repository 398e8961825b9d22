// SPDX-License-Identifier: MIT
/*
 * Where the uprobes of a probe go (after the prologue's stack check, at
 * every RET) and how its plan finds the goroutine; see plan_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/*
 * The entry site of `p`: after the prologue's stack check (gc code of an
 * architecture with a prologue_skip hook), where a uprobe may go. Returns
 * 0, or a negative errno after printing why.
 */
static int entry_site(struct probe *p)
{
	const struct binary *b = p->bin;
	const struct gt_arch *ai = gobin_arch_info(b->gb);
	size_t len = 0;
	const uint8_t *code;
	uint32_t skip = 0;

	p->sites = malloc(sizeof(*p->sites));
	if (!p->sites)
		return -ENOMEM;
	code = gobin_func_code(b->gb, &p->fn, 64, &len);
	if (code && gobin_compiler(b->gb) == GOBIN_GC && ai->prologue_skip)
		skip = ai->prologue_skip(code, len,
			gobin_func_abi(b->gb, &p->fn) == GOBIN_ABI_INTERNAL);
	if (code && skip < len && ai->uprobe_ok &&
	    !ai->uprobe_ok(code + skip, len - skip)) {
		/* runtime.abort (INT 3) and friends: the kernel refuses such
		 * an instruction. */
		fprintf(stderr, "gotrace-record: probe '%s': %s starts "
			"with an instruction uprobes cannot replace (a "
			"trap or system call); not probed\n",
			p->spec.text, p->fn.name);
		return -EPERM;
	}
	if (code && ai->tls_unsafe && ai->tls_unsafe(code + skip, len - skip)) {
		fprintf(stderr, "gotrace-record: probe '%s': the first "
			"instruction of %s reads thread-local storage; a "
			"uprobe there is not safe, so it is not "
			"probed\n", p->spec.text, p->fn.name);
		return -EPERM;
	}
	if (code && skip < len && ai->at_push_bp &&
	    ai->at_push_bp(code + skip, len - skip))
		p->plan.flags |= GT_P_AT_PUSH_BP;
	p->sites[0] = p->fn.file_offset + skip;
	p->nsites = 1;
	return 0;
}

/*
 * The variables a line probe names (each expression a Go identifier, each
 * once), located at its site from DWARF, into p->args. Returns the count,
 * or -1 after printing why.
 */
static int line_vars(struct probe *p)
{
	char *names[GTR_MAX_ARGS];
	char err[512];
	int n = 0, rc;

	for (int i = 0; i < p->spec.nexprs; i++) {
		const char *e = p->spec.exprs[i];
		int k = 0;

		if (strspn(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			   "0123456789_") != strlen(e) || (*e >= '0' && *e <= '9')) {
			fprintf(stderr, "gotrace-record: probe '%s': a line probe "
				"captures variables by name; '%s' is not one\n",
				p->spec.text, e);
			return -1;
		}
		while (k < n && strcmp(names[k], e))
			k++;
		if (k == n)
			names[n++] = p->spec.exprs[i];
	}
	rc = gobin_site_vars(p->bin->gb, &p->site, names, n, p->args, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "gotrace-record: probe '%s': %s\n", p->spec.text, err);
		return -1;
	}
	p->args_source = "DWARF";
	return rc;
}

int plan_site_values(struct probe *p)
{
	const struct gobin_site *s = &p->site;

	if (p->spec.sig) {
		fprintf(stderr, "gotrace-record: probe '%s': a signature describes "
			"the out-of-line body of %s, not its inlined copy in %s; "
			"drop it\n", p->spec.text, s->func, s->outer.name);
		return -1;
	}
	if (p->spec.line && p->spec.nexprs)
		return line_vars(p);
	p->args_source = s->nparams ? "DWARF" : "";
	for (int i = 0; i < s->nparams && i < GTR_MAX_ARGS; i++)
		p->args[i] = s->params[i];
	return s->nparams < GTR_MAX_ARGS ? s->nparams : GTR_MAX_ARGS;
}

int plan_site_meta(struct probe *p)
{
	const struct gobin_site *s = &p->site;
	char text[GTR_MAX_NAME + 1];
	const char *base;

	p->meta.func = s->func;
	p->meta.address = s->addr;
	if (s->inlined)
		p->meta.inlined_into = s->outer.name;
	if (s->call_line) {
		base = strrchr(s->call_file, '/');
		snprintf(text, sizeof(text), "%s:%d", base ? base + 1 : s->call_file,
			 s->call_line);
		p->meta.call_site = p->site_text[0] = strdup(text);
		if (!p->site_text[0])
			return -1;
	}
	if (p->spec.line) {
		snprintf(text, sizeof(text), "%s:%d", s->file && s->file[0] ? s->file
			 : p->spec.file, p->spec.line);
		p->meta.line = p->site_text[1] = strdup(text);
		if (!p->site_text[1])
			return -1;
	}
	return 0;
}

/*
 * How the stack of a probe at a site in the body of p->fn is walked
 * (bpf/gotrace.h): gc code on x86-64 with a frame at the site set its
 * frame pointer in the prologue (PUSHQ BP; MOVQ SP, BP, cmd/internal/obj/
 * x86/obj6.go), so the walk from BP is the stack; gc code with no frame
 * there (a leaf, or the epilogue) and 386 code (no frame pointers) have
 * the return address at SP + the pclntab's frame size; gccgo code is
 * walked from BP when the function's prologue sets it (GCC's
 * -fno-omit-frame-pointer), else shows the probed instruction alone.
 */
static void site_stack(struct probe *p, const struct gt_arch *ai,
		       const uint8_t *code, size_t len)
{
	const int32_t frame = gobin_frame_at(p->bin->gb, p->site.addr);

	if (gobin_compiler(p->bin->gb) == GOBIN_GC && frame >= 0) {
		if (frame > 0 && ai->ptrsize == 8)
			p->plan.flags |= GT_P_FRAME_BP;
		else
			p->plan.ret_sp = (uint32_t)frame;
	} else if (code && ai->sets_fp && ai->sets_fp(code, len)) {
		p->plan.flags |= GT_P_FRAME_BP;
	} else {
		p->plan.flags |= GT_P_IP_ONLY;
	}
}

/*
 * The one uprobe of a probe at a site: its first instruction, unless
 * that is the function's entry (then after the stack check, as an entry
 * probe). Returns 0, or a negative errno after printing why.
 */
static int site_uprobe(struct probe *p)
{
	const struct gt_arch *ai = gobin_arch_info(p->bin->gb);
	size_t len = 0;
	const uint8_t *code;

	if (p->site.addr == p->fn.entry)
		return entry_site(p);
	code = gobin_func_code(p->bin->gb, &p->fn, p->site.end > p->site.addr ?
			       p->site.addr - p->fn.entry + 16 : 1 << 20, &len);
	if (code && ai->uprobe_ok && p->site.addr - p->fn.entry < len &&
	    !ai->uprobe_ok(code + (p->site.addr - p->fn.entry),
			   len - (p->site.addr - p->fn.entry))) {
		fprintf(stderr, "gotrace-record: probe '%s': the instruction at "
			"%#llx in %s cannot be replaced by a uprobe; not probed\n",
			p->spec.text, (unsigned long long)p->site.addr, p->fn.name);
		return -EPERM;
	}
	site_stack(p, ai, code, len);
	p->sites = malloc(sizeof(*p->sites));
	if (!p->sites)
		return -ENOMEM;
	p->sites[0] = p->site.file_offset;
	p->nsites = 1;
	return 0;
}

int plan_sites(struct plan *pl, struct probe *p)
{
	enum { NFEW = 64 };
	const struct binary *b = p->bin;
	const struct gt_arch *ai = gobin_arch_info(b->gb);
	uint32_t few[NFEW];
	size_t len = 0;
	const uint8_t *code;
	int i, n;

	if (ai->ptrsize == 4)
		p->plan.flags |= GT_P_PTR32;
	if (p->at_site)
		return site_uprobe(p);
	if (p->spec.kind == GTR_KIND_ENTRY)
		return entry_site(p);
	if (!ai->ret_offsets) {
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
	/* one decoding pass, a second only for a function of more RETs */
	n = ai->ret_offsets(code, len, few, NFEW);
	if (n > 0) {
		uint32_t *offs = n <= NFEW ? few : calloc(n, sizeof(*offs));

		p->sites = calloc(n, sizeof(*p->sites));
		if (!offs || !p->sites) {
			if (offs != few)
				free(offs);
			return -ENOMEM;
		}
		if (offs != few)
			ai->ret_offsets(code, len, offs, n);
		for (i = 0; i < n; i++)
			p->sites[i] = p->fn.file_offset + offs[i];
		p->nsites = n;
		if (offs != few)
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

/* Whether probes `a` and `b` are on the same function's entry or returns
 * (neither an inlined copy nor a line). */
static bool same_func(const struct probe *a, const struct probe *b)
{
	return a->bin == b->bin && a->fn.entry == b->fn.entry && !a->at_site && !b->at_site;
}

/*
 * Says, once per function, that a record-time predicate on its entry or
 * return probe, with a probe of the other kind, leaves its calls unpaired
 * in the report (spec/PROBES.md): the kernel drops one half of the calls
 * it does not hold for, and not the other. An entry probe's predicate
 * whose return probe follows it (whole calls, plan_whole_calls()) is not.
 */
static void pred_warnings(const struct plan *pl)
{
	for (int i = 0; i < pl->nprobes; i++) {
		const struct probe *p = pl->probes[i];
		int j, k;

		if (!p->spec.predicate || (p->plan.flags & GT_P_CALL_MARK))
			continue;
		/* a probe of the other kind; said at the function's first
		 * probe with a predicate */
		for (j = 0; j < pl->nprobes; j++)
			if (same_func(p, pl->probes[j]) && pl->probes[j]->spec.kind != p->spec.kind)
				break;
		for (k = 0; k < i; k++)
			if (same_func(p, pl->probes[k]) && pl->probes[k]->spec.predicate)
				break;
		if (j == pl->nprobes || k < i)
			continue;
		fprintf(stderr, "gotrace-record: note: probe '%s': its predicate keeps the %s of "
			"the calls it holds for, not their %s, so gotrace-report shows the entries "
			"and returns of %s alone, not paired into calls; to time the calls it "
			"selects, leave the predicate out and filter the report: gotrace-report "
			"-f '%s'\n", p->spec.text,
			p->spec.kind == GTR_KIND_RETURN ? "returns" : "entries",
			p->spec.kind == GTR_KIND_RETURN ? "entries" : "returns",
			p->fn.name, p->spec.predicate);
	}
}

/* Puts probe `i` in `m` under its function, or `twice` over an index there. */
static int one_per_func(struct u64map *m, const struct probe *p, int i, uint32_t twice)
{
	const uint64_t key = u64map_hash2(p->bin->id, p->fn.entry);
	uint32_t *v = u64map_get(m, key);

	if (!v)
		return u64map_put(m, key, (uint32_t)i, UINT32_MAX);
	*v = twice;
	return 0;
}

int plan_whole_calls(struct plan *pl)
{
	const uint32_t twice = UINT32_MAX;
	struct u64map entries = { 0 }, returns = { 0 };
	int i, rc = 0;

	/* (binary, function) -> its entry probe, its return probe, or
	 * `twice` where it has several (or a return probe with a predicate,
	 * which keeps returns whose entries stay) */
	for (i = 0; i < pl->nprobes && !rc; i++) {
		const struct probe *p = pl->probes[i];

		if (p->at_site)
			continue;
		rc = one_per_func(p->spec.kind == GTR_KIND_ENTRY ? &entries : &returns, p, i,
				  twice);
		if (!rc && p->spec.kind == GTR_KIND_RETURN && p->spec.predicate)
			rc = one_per_func(&returns, p, i, twice);
	}
	for (i = 0; i < pl->nprobes && !rc; i++) {
		struct probe *r = pl->probes[i], *e;
		const uint64_t key = u64map_hash2(r->bin->id, r->fn.entry);
		const uint32_t *ri = u64map_get(&returns, key), *ei = u64map_get(&entries, key);

		/* a function without RET keeps no return: its notes would
		 * only fill the map */
		if (!ri || *ri != (uint32_t)i || !ei || *ei == twice || !r->nsites)
			continue;
		e = pl->probes[*ei];
		if (!same_func(e, r) || (!e->spec.predicate && !e->plan.rate))
			continue;
		e->plan.flags |= GT_P_CALL_MARK;
		r->plan.flags |= GT_P_CALL_FOLLOW;
		r->meta.whole_calls = true;
		/* its events follow no windows of their own (spec/FORMAT.md,
		 * PROBE): readers that know no whole calls see its
		 * suppressions as a probe without a limit's */
		r->meta.rate_limit = 0;
	}
	u64map_free(&entries);
	u64map_free(&returns);
	return rc ? -1 : 0;
}

/*
 * Warns of functions that more than one probe of one kind (entries, or
 * returns) take at their entry or returns: one named twice, or named in
 * two spellings a glob does not tell apart ('main.Sum' and 'main.S*': a
 * generic function's instances).
 * Each records every call once per probe, so the report's call view and
 * stats count each call once per probe, with latencies measured between
 * the wrong halves. Says the first few functions (by their probes) and how
 * many more; nothing when memory runs out (a warning only).
 */
static void twice_warnings(const struct plan *pl)
{
	struct u64map seen = { 0 };
	int n = 0;

	for (int i = 0; i < pl->nprobes; i++) {
		const struct probe *p = pl->probes[i];
		const uint64_t key = u64map_hash2(p->bin->id, p->fn.entry) ^
				     (p->spec.kind == GTR_KIND_RETURN);
		uint32_t *first;

		if (p->at_site)
			continue;
		first = u64map_get(&seen, key);
		if (!first) {
			if (u64map_put(&seen, key, (uint32_t)i, UINT32_MAX))
				break;
			continue;
		}
		if (*first == UINT32_MAX)
			continue;   /* said for this function and kind */
		const struct probe *o = pl->probes[*first];

		if (!same_func(o, p) || o->spec.kind != p->spec.kind)
			continue;
		*first = UINT32_MAX;
		if (n++ >= 5)
			continue;
		/* --exclude leaves a function out of every glob: the way out
		 * when one of the two is a glob and the other names it */
		const bool g1 = strpbrk(o->spec.func, "*?[") && strcmp(o->spec.func, p->fn.name),
			   g2 = strpbrk(p->spec.func, "*?[") && strcmp(p->spec.func, p->fn.name);
		fprintf(stderr, "gotrace-record: warning: %s has more than one %s probe ('%s', "
			"'%s'): a call is recorded once per probe, so gotrace-report's calls "
			"and stats count it more than once; ", p->fn.name,
			p->spec.kind == GTR_KIND_RETURN ? "return" : "entry", o->spec.text,
			p->spec.text);
		if (g1 != g2) {
			/* the name as a glob matching it alone: fnmatch(3)'s
			 * special characters escaped ("main.Sum\[go.shape.int]") */
			fputs("leave it out of the glob (--exclude '", stderr);
			for (const char *c = p->fn.name; *c; c++) {
				if (strchr("*?[\\", *c))
					fputc('\\', stderr);
				fputc(*c, stderr);
			}
			fputs("')\n", stderr);
		} else
			fprintf(stderr, "put its values in one probe%s\n",
				g1 ? ", or narrow one glob" : "");
	}
	if (n > 5)
		fprintf(stderr, "gotrace-record: warning: and %d more functions with more than "
			"one probe of one kind\n", n - 5);
	u64map_free(&seen);
}

void plan_warnings(const struct plan *pl)
{
	int i, shown = pl->nnoret < 5 ? pl->nnoret : 5;

	if (pl->opts.quiet)
		return;
	pred_warnings(pl);
	twice_warnings(pl);
	if (!pl->nnoret)
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
	const struct gt_arch *ai = gobin_arch_info(gb);

	p->plan.goid_off = gobin_goid_offset(gb);
	p->plan.goid_mode = GT_GOID_NONE;
	if (gobin_compiler(gb) == GOBIN_GC && !p->bin->goid_said &&
	    (p->plan.goid_off < 0 || !ai->goid)) {
		/* said once per binary */
		p->bin->goid_said = true;
		if (!ai->goid)
			fprintf(stderr, "gotrace-record: %s: goroutine ids are "
				"read on x86-64 and i386 only; events get goid 0 and "
				"calls are paired by thread\n", p->bin->path);
		else
			fprintf(stderr, "gotrace-record: %s: the offset of goid "
				"in runtime.g is unknown (no DWARF, a Go version "
				"the table does not know, not found in the "
				"runtime's code): events carry the goroutine's g "
				"address as goid, which pairs calls by goroutine "
				"but is not Go's goroutine id\n", p->bin->path);
	}
	if (gobin_compiler(gb) == GOBIN_GCCGO && !p->bin->goid_said) {
		/* libgo keeps g in a thread-local variable of libgo.so
		 * (libgo/runtime/proc.c), whose place in the thread's TLS
		 * the dynamic loader decides */
		p->bin->goid_said = true;
		fprintf(stderr, "gotrace-record: %s: a gccgo program: goroutine "
			"ids are not read (libgo keeps them behind thread-local "
			"storage of libgo.so); events get goid 0 and calls are "
			"paired by thread\n", p->bin->path);
	}
	if (gobin_compiler(gb) != GOBIN_GC || !ai->goid)
		return;
	/* g is in its register (R14) only in ABIInternal code; ABI0
	 * (assembly, old Go) finds it in thread-local storage (fs:-8), and
	 * i386 code at -4(GS) */
	if (ai->ptrsize == 4)
		p->plan.goid_mode = GT_GOID_GS32;
	else
		p->plan.goid_mode = gobin_func_abi(gb, &p->fn) == GOBIN_ABI_INTERNAL &&
				    ai->g_reg == GOBIN_MREG_R14 ? GT_GOID_R14 : GT_GOID_TLS;
	/* runtime.g starts with `stack stack` {lo, hi} (runtime/runtime2.go,
	 * go1.16 to go1.27): the depth of a call of whole calls */
	p->plan.flags |= GT_P_G_STACK;
}

int plan_chain_returns(struct plan *pl)
{
	struct u64map entries = { 0 };
	int i, k, rc = 0;

	/* (binary, file offset) of each entry probe's uprobe -> its index */
	for (i = 0; i < pl->nprobes && !rc; i++) {
		const struct probe *e = pl->probes[i];

		if (e->spec.kind == GTR_KIND_ENTRY && !e->at_site && e->nsites == 1)
			rc = u64map_put(&entries, u64map_hash2(e->bin->id, e->sites[0]),
					(uint32_t)i, UINT32_MAX);
	}
	for (i = 0; i < pl->nprobes && !rc; i++) {
		struct probe *r = pl->probes[i];

		if (r->spec.kind != GTR_KIND_RETURN || r->at_site)
			continue;
		for (k = 0; k < r->nsites; k++) {
			const uint32_t *ei = u64map_get(&entries,
							u64map_hash2(r->bin->id, r->sites[k]));
			struct probe *e = ei ? pl->probes[*ei] : NULL;

			if (!e || e->bin != r->bin || e->sites[0] != r->sites[k] ||
			    (e->plan.flags & GT_P_THEN))
				continue;
			e->plan.flags |= GT_P_THEN;
			e->plan.then_cookie = (uint64_t)i | (uint64_t)k << 32;
			r->chained_site = k;
			break;
		}
	}
	u64map_free(&entries);
	return rc ? -1 : 0;
}
