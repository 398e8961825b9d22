/* SPDX-License-Identifier: MIT */
/*
 * Private to plan.c, locate.c, values.c, fetch.c and sites.c: the plan
 * object and the steps plan.c takes for each probe. locate.c finds where
 * a probe's values are; values.c turns located values into BPF fetches
 * (built by fetch.c) and keeps them, each array once; sites.c finds
 * where uprobes go. None calls back
 * into plan.c.
 */
#ifndef GOTRACE_PLAN_INT_H
#define GOTRACE_PLAN_INT_H

#include "map.h"
#include "plan.h"

struct argset;

struct plan {
	struct plan_opts opts;
	struct binary binaries[PLAN_MAX_BINARIES];
	int nbinaries;
	struct probe **probes;  /* each allocated once: metas point into them */
	int nprobes, cap;
	struct probe_spec *specs; /* parsed probes; probes share their strings */
	int nspecs;
	/* Functions whose return probes have no site (no RET), for one
	 * warning (plan_warnings). */
	const char *noret[8];
	int nnoret;
	/* The values of the probe being prepared (probe.args), before the
	 * ones it keeps are copied out. */
	struct gobin_arg scratch[GTR_MAX_ARGS];
	/* The values prepared probes keep, each array once: probes with
	 * the same values (every raw-word probe of a binary) share it. */
	struct argset **argsets;
	uint32_t nargsets, capargsets;
	struct u64map argset_index;  /* hash of an array -> its index */
	/* A glob leaves a function to the probe of its kind that names it
	 * (plan_name(): the probes as parsed, indexed by a hash of name,
	 * kind and BINARY:, each checked on lookup) and takes none a probe
	 * of its kind took before it (hashes of binary, the function's entry
	 * or an inlined copy's address, and kind: exact keys): each call is
	 * recorded once per kind. */
	struct probe_spec *names;
	int nnames;
	struct u64map named, taken;
};

/*
 * fetch.c: whether the BPF program can read piece `p` (a stack slot, or
 * a pt_regs register: not float registers, not other architectures').
 */
bool fetch_readable(const struct gobin_piece *p);

/* fetch.c: where the BPF program reads piece `p` into *s (GT_LOC_NONE:
 * it cannot). */
void fetch_src(const struct gobin_piece *p, struct gt_src *s);

/*
 * fetch.c: the fetch of located value `a` into *f (zeroed first;
 * GT_OP_NONE: unavailable) for a program of `word`-byte words (8, or 4
 * for i386): a word, a string's or slice's pointer and length, an array's
 * bytes, a value in memory at a register's address (gobin_arg.in_memory).
 */
void fetch_of_value(struct gt_fetch *f, const struct gobin_arg *a, uint8_t word);

/*
 * fetch.c: the fetch of field path `gp` into *f (set up by the caller)
 * whose root's first words are w0 and w1 (values.c, path_root()).
 */
void fetch_of_path(struct gt_fetch *f, const struct gobin_path *gp,
		   const struct gobin_piece *w0, const struct gobin_piece *w1);

/*
 * locate.c: locates the values of `p` (a function's entry or returns)
 * into p->args: from its signature (checked against DWARF: a signature
 * that disagrees is refused), else DWARF, else the argument area of a Go
 * assembly function, else raw words in the function's convention, and
 * sets p->args_source. Returns the count, or -1 after printing why.
 */
int plan_locate(struct probe *p);

/*
 * values.c: fills p->meta's values from p->args[0..n) (interfaces as
 * their dynamic type's name, []byte as bytes, slices with their element
 * size), then adds "cap(NAME)" of each slice parameter and the fields of
 * each struct passed by value (NAME.FIELD, at most GOBIN_STRUCT_FIELDS of
 * one struct, nested structs GOBIN_STRUCT_DEPTH deep) that fit in the
 * GT_MAX_FETCH values of a probe.
 */
void plan_values(struct probe *p, int n);

/*
 * values.c: points p->args, the plan's scratch while `p` is prepared, at
 * the values it keeps (meta.nargs of them; NULL when none) in an array
 * of the plan, shared with every probe with the same values, and points
 * meta.args' names and types there. 0, or -1 when out of memory (xalloc
 * ends the process when an array cannot be had).
 */
int plan_keep_args(struct plan *pl, struct probe *p);

/* values.c: frees the value arrays plan_keep_args() kept. */
void plan_free_args(struct plan *pl);

/*
 * values.c: resolves each expression of p->spec to a value (goargN,
 * goretN, retval, a name, $ptr(EXPR, SIZE), a field path NAME.FIELD, which
 * may add values) into p->meta.exprs, and the format of FUNCTION(EXPR,
 * ...). Returns 0, or -1 after printing why.
 */
int plan_exprs(struct probe *p);

/*
 * values.c: the BPF fetch plan of `p` (id `id`) from its located values,
 * its record-time predicate and the options `o` (string bytes, rate,
 * stacks). Returns 0, or -1 after printing why the predicate is refused.
 */
int plan_fetches(struct probe *p, uint32_t id, const struct plan_opts *o);

/*
 * sites.c: the uprobe sites of `p` as file offsets of its binary: after
 * the stack check for an entry probe, every RET for a return probe (never
 * uretprobes: the Go runtime copies stacks and would find the kernel's
 * trampoline address). A return probe of a function without RET is noted
 * in pl for plan_warnings(). Returns 0 or a negative errno after printing
 * why.
 */
int plan_sites(struct plan *pl, struct probe *p);

/*
 * sites.c: the values of `p` at its site (an inlined copy or a line):
 * the parameters DWARF places there (unavailable pieces stay
 * GOBIN_LOC_NONE and are never read), into p->args. A signature is
 * refused. Returns the count, or -1 after printing why.
 */
int plan_site_values(struct probe *p);

/* sites.c: fills p->meta's func, address, inlined_into, call_site and
 * line for a probe at a site (its text in p->site_text). 0, or -1 when
 * out of memory. */
int plan_site_meta(struct probe *p);

/*
 * sites.c: how the plan of `p` finds the goroutine id (g in R14 in
 * ABIInternal code, at fs:-8 otherwise, on x86-64 gc binaries); says once
 * per binary when goroutine ids cannot be recorded as Go's.
 */
void plan_goid(struct probe *p);

#endif /* GOTRACE_PLAN_INT_H */
