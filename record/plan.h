/* SPDX-License-Identifier: MIT */
/*
 * plan: from probes as written to what gotrace-record attaches: binaries
 * opened once, globs expanded, values located (DWARF or raw registers),
 * format expressions resolved, fetch plans built and uprobe sites found
 * (after the stack check at entry, every RET for returns).
 */
#ifndef GOTRACE_PLAN_H
#define GOTRACE_PLAN_H

#include <stdint.h>

#include "gobin.h"
#include "gotrace.h"
#include "gtr.h"
#include "gtr_rate.h"
#include "probe.h"

#define PLAN_MAX_BINARIES 64

/* Options that shape plans (from the command line). */
struct plan_opts {
	unsigned str_max;      /* bytes captured per string */
	unsigned max_probes;   /* refuse more probes than this */
	int quiet;             /* no warnings */
	int stack;             /* capture user stacks */
	int nexcludes;
	char **excludes;       /* globs of functions to skip */
	const char *debuginfo; /* separate debug file for the first binary */
	uint64_t rate;         /* events/s kept per probe, 0: no limit */
	int root_pid;          /* a BINARY missing here is looked up under
				  /proc/ROOT_PID/root (containers); 0: none */
	/* Called with the number of probes prepared so far, every
	 * PLAN_PROGRESS_EVERY of them (NULL: never). */
	void (*progress)(void *ctx, int nprobes);
	void *progress_ctx;
};

#define PLAN_PROGRESS_EVERY 1024

struct binary {
	char *path;          /* as the user named it, or the resolved default */
	char *attach_path;   /* path given to the kernel (/proc/PID/exe, ...) */
	struct gobin *gb;
	uint32_t id;
	uint64_t load_lo, load_hi; /* link-time span of its PT_LOAD segments */
	uint64_t text_vaddr, text_offset; /* its executable PT_LOAD */
	bool goid_said;      /* told that its goroutine ids are not recorded */
	bool inline_gap_said; /* told that its inlined copies are unknown */
	bool clone_said;     /* told that its GCC clones without DWARF
				capture no arguments */
	bool nodwarf_said;   /* told that gccgo functions without DWARF
				capture nothing without a signature */
};

/*
 * One probe as planned. While plan_add() prepares it, `args` points at
 * the plan's scratch (GTR_MAX_ARGS values); once prepared, at an array of
 * its own holding the meta.nargs values it captures (the names and types
 * meta.args point into), and nothing else of the scratch is kept.
 */
struct probe {
	struct probe_spec spec;
	struct binary *bin;
	struct gobin_func fn;   /* the function whose code it probes (an
				   inlined copy's or a line's: the one
				   holding it, whose ABI and g it has) */
	bool at_site;           /* probes `site`, not fn's entry or returns */
	struct gobin_site site; /* an inlined copy of a function, or a line */
	char *site_text[2];     /* the call site, the line (meta.call_site,
				   meta.line point here); NULL: none */
	uint64_t *sites;        /* file offsets of its uprobes */
	int nsites;
	int chained_site;       /* a site reached through the entry probe at
				   its address (plan_chain_returns()), not
				   attached itself; -1: none */
	struct gtr_probe meta;
	struct gt_plan plan;
	int nargs;              /* parameters or results located (while
				   prepared; the values kept: meta.nargs) */
	struct gobin_arg *args;
	const char *args_source; /* "DWARF", "signature", "raw" (gtr_probe) */
	/* Values from field paths (bit i: value i): their fetch is built
	 * whole, not from args[i]'s location. */
	uint32_t path;
	char *capfmt;           /* format of FUNCTION(EXPR, ...); NULL: none */
};

/* The probes of one recording and the binaries they are in. */
struct plan;

/*
 * A new, empty plan shaped by `o` (copied; the strings it points to must
 * outlive the plan). NULL when out of memory.
 */
struct plan *plan_new(const struct plan_opts *o);

/* Closes the binaries and frees the probes of `pl` (NULL is fine). */
void plan_free(struct plan *pl);

/*
 * Notes the function probe `text` (as written) names exactly, if it does:
 * a glob of plan_add() then leaves that function to it, whichever comes
 * first, so that a call is recorded once per kind ('main.*' with
 * 'main.work(s)'). Call for every probe before the first plan_add(); a
 * probe it cannot parse is plan_add()'s to say. No-op when out of memory
 * (the glob then takes the function too, and plan_warnings() says so
 * unless quiet).
 */
void plan_name(struct plan *pl, const char *text);

/*
 * Parses one probe as written and adds a probe for its function, or for
 * every function its glob matches. BINARY defaults to dflt_path (opened
 * as dflt_attach, e.g. /proc/PID/exe; each binary is opened once).
 * Returns 0 or -1 after printing why (gotrace-record: probe 'X': ...).
 */
int plan_add(struct plan *pl, const char *text, const char *dflt_path,
	     const char *dflt_attach);

/*
 * Prints, once, what the plans cannot do as asked (return probes of
 * functions without a RET instruction; calls the report cannot pair, as a
 * record-time predicate keeps only one half of them). Call after the last
 * plan_add().
 */
void plan_warnings(const struct plan *pl);

/*
 * Makes whole calls (bpf/calls.bpf.h) of each function probed at its
 * entry, by one probe that can leave calls out (a rate limit, a
 * predicate), and at its returns (a RET at least), by one probe without
 * a predicate: the entry probe's plan takes GT_P_CALL_MARK, the return
 * probe's GT_P_CALL_FOLLOW and its metadata whole_calls. Call after the last
 * plan_add(), before plan_warnings() and before the plans are stored.
 * 0, or -1 when out of memory.
 */
int plan_whole_calls(struct plan *pl);

/*
 * Chains each return probe's site at the address of an entry probe's
 * (a function whose body is one RET, or starts with it) to that entry
 * probe: its plan takes GT_P_THEN and the site's cookie, the site is
 * left unattached (probe.chained_site), and one uprobe sends the entry,
 * then the return. Call after the last plan_add(), before the plans are
 * stored. 0, or -1 when out of memory.
 */
int plan_chain_returns(struct plan *pl);

/*
 * Gives the probes' metadata the window of each rate-limited probe that
 * is current as the next file of a rotation begins (w[probe id], from
 * encoder_rate_windows(): gtr_probe.rate_window_*), which that file does
 * not hold the events of, so that a reader reckons its windows alone; a
 * probe whose windows are not known (w NULL, or off) loses its
 * rate_limit.
 */
void plan_rate_carry(struct plan *pl, const struct gtr_rate_windows *w);

/* Probes added so far; probe i has id i (its BPF plan slot). */
int plan_nprobes(const struct plan *pl);
const struct probe *plan_probe(const struct plan *pl, int i);

/* Binaries opened so far; binary i has id i. */
int plan_nbinaries(const struct plan *pl);
const struct binary *plan_binary(const struct plan *pl, int i);

#endif /* GOTRACE_PLAN_H */
