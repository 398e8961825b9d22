/* SPDX-License-Identifier: MIT */
/*
 * What the parts of `gotrace-report diff` share (spec/DIFF.md): the
 * samples collected per function and side (report/diff.c), the results
 * computed from them, the rules (report/diff_rules.c) and their findings,
 * which report/diff_out.c writes as text, JSON or Markdown.
 */
#ifndef REPORT_DIFF_INT_H
#define REPORT_DIFF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "diff.h"
#include "diff_stats.h"
#include "map.h"

#define DIFF_SAMPLES 100000   /* latencies kept exactly per function and side;
				 past it a uniform reservoir of this many */
#define DIFF_MIN_SAMPLES 6    /* fewer a side: "cannot tell" */
#define DIFF_ALPHA 0.05       /* significance level */
#define DIFF_NQ 3             /* p50, p90, p99 */

enum { DIFF_BASE = 0, DIFF_NEW = 1 };

/* One function on one side, pooled over that side's recordings. */
struct diff_fside {
	uint64_t entries, returns;
	uint64_t nlat;             /* paired returns (latencies) seen */
	uint64_t *lat;             /* kept latencies, ns: all while nlat <=
				      DIFF_SAMPLES, else a uniform reservoir */
	uint32_t nkept;
	uint64_t err_returns;      /* returns carrying an `error` result */
	uint64_t err_nonnil;       /* of those, not nil */
	uint64_t unwound;          /* calls closed over by a recovered panic */
	uint64_t exited;           /* calls whose process exited under them */
	uint32_t *hist;            /* this recording's latencies, log-linear
				      buckets (stats_bucket()), for its p50 */
	uint64_t run_n;            /* latencies in hist */
	double *run_p50;           /* p50 of each recording it has latencies in */
	uint32_t nruns;
};

/* A name (function or caller), and the function by that name. */
struct diff_func {
	char *name;
	struct diff_fside side[2];
};

/* caller -> callee calls per side (name indexes). */
struct diff_edge {
	uint32_t caller, callee;
	uint64_t count[2];
};

/* What one side is: its recordings and how they were made. */
struct diff_meta {
	const char *const *paths;
	int nfiles;
	char *go_version, *arch, *kernel;  /* joined, distinct, of all files */
	char *mixed;               /* what differs between its own files, or NULL */
	uint64_t lost, suppressed, damaged, events;
	uint32_t nexit;            /* exit statuses seen: code and count */
	int32_t exit_code[16];
	uint64_t exit_count[16];
};

/* A quantile of one side with its 95% confidence interval. */
struct diff_q {
	bool have, have_ci;
	uint64_t v, lo, hi;        /* ns */
};

/* The computed comparison of one function. */
struct diff_fres {
	uint32_t func;             /* index in diff.funcs */
	const char *name;          /* its name */
	bool in[2];                /* called on that side */
	uint64_t calls[2];         /* per recording of the side (pooled / runs) */
	uint64_t total[2];         /* calls summed over the recordings */
	uint64_t nlat[2];
	uint32_t nkept[2];
	bool sampled;              /* a side kept a reservoir, not every latency */
	struct diff_q q[2][DIFF_NQ];
	double spread[2];          /* run-to-run: max |run p50 - p50| / p50; < 0 none */
	double runs_ns;            /* run-to-run noise of p50, ns: the larger of
				      spread[s] * p50 of the sides that have it;
				      < 0 unknown (one recording a side) */
	bool have_test;            /* both sides have DIFF_MIN_SAMPLES latencies */
	struct diff_mwu mwu;
	struct diff_hl hl;
	bool has_err;              /* some return carried an `error` result */
	double err_share[2];       /* non-nil / returns with an error result */
	bool have_err_test;
	double err_p;              /* Fisher's exact test */
	uint64_t panics[2];        /* unwound + exited */
};

/* A metric a rule talks about. */
enum diff_metric {
	DM_P50, DM_P90, DM_P99, DM_CALLS, DM_ERRORS, DM_EDGES, DM_PANICS,
	DM_CRASHES,                /* processes that exited non-zero or by a signal */
};

enum diff_op { DOP_GT, DOP_GE, DOP_LT, DOP_LE, DOP_NE };

enum diff_unit {
	DU_NONE,                   /* a plain number: the metric's own unit */
	DU_PCT,                    /* percent: relative, or points of a share */
	DU_NS,                     /* a duration */
};

/* One --fail-on rule (spec/DIFF.md, "Rules"). */
struct diff_rule {
	const char *text;          /* as written */
	char *glob;                /* function glob, NULL: every function */
	enum diff_metric metric;
	enum diff_op op;
	enum diff_unit unit;
	double value;              /* in `unit` */
};

/* What a rule said about one function (or edge). */
enum diff_verdict { DV_FAIL, DV_CANNOT_TELL };

struct diff_finding {
	uint32_t rule;             /* index in the rules */
	uint32_t func;             /* function (the callee of an edge);
				      UINT32_MAX: the processes (crashes) */
	uint32_t caller;           /* edge rules: the caller; else UINT32_MAX */
	enum diff_verdict verdict;
	char *why;                 /* the figures, "+31.2% (p=0.000)" */
};

/* A whole comparison: the samples, then the results and findings. */
struct diff {
	const struct diff_opts *opts;
	struct diff_func *funcs;
	uint32_t nfuncs, capfuncs;
	struct u64map fmap;        /* hash of a name -> index in funcs */
	struct diff_edge *edges;
	uint32_t nedges, capedges;
	struct u64map emap;        /* (caller, callee) -> index in edges */
	char **probes[2];          /* "entry FUNC" / "return FUNC" per side */
	uint32_t nprobes[2];
	struct u64map pmap[2];     /* hash of a probe key -> index in probes */
	struct diff_meta meta[2];
	int side;                  /* being read */
	uint64_t rng;              /* reservoir sampling, fixed seed */
	/* results */
	struct diff_fres *res;
	uint32_t nres;
	double geomean[2];         /* of the p50s of functions on both sides */
	uint32_t ngeo;
	struct diff_rule *rules;
	uint32_t nrules;
	struct diff_finding *finds;
	uint32_t nfinds;
	char *incomparable;        /* what differs, or NULL */
	bool accepted;             /* it differs, and --accept covers it */
	unsigned differs;          /* DIFF_ACCEPT_* of what differs */
};

/* The name of a metric ("p50"...). */
const char *diff_metric_name(enum diff_metric m);

/* Index of quantile metric m (DM_P50..DM_P99) in diff_fres.q, and its p. */
int diff_q_index(enum diff_metric m);
double diff_q_p(int qi);

/*
 * Parses rule `text` (spec/DIFF.md, "Rules") into *r. 0, or -1 with a
 * message for the user in err[errlen] (what is wrong, where, an example).
 */
int diff_rule_parse(const char *text, struct diff_rule *r, char *err, size_t errlen);

/* Frees what diff_rule_parse() allocated in `r`. */
void diff_rule_free(struct diff_rule *r);

/*
 * Whether every rule with a function glob matches some function called on
 * either side (d->res, computed). 0, or -1 with one line for the user in
 * `msg` (no newline): the first rule that matches nothing, with the names
 * nearest its glob ("did you mean") -- a mistyped rule would never fail.
 */
int diff_rules_check(const struct diff *d, struct buf *msg);

/* Evaluates every rule of `d` against its results and edges, filling
 * d->finds (failures and "cannot tell"s). */
void diff_rules_eval(struct diff *d);

/* The names of DIFF_ACCEPT_* bits in `kinds`, "go,kernel", in out[n]. */
const char *diff_accept_names(unsigned kinds, char *out, size_t n);

/* Adds the kinds named in `s` ("go,kernel", "all") to *kinds. 0, or -1
 * when a name is unknown. */
int diff_accept_parse(const char *s, unsigned *kinds);

/* Writes the comparison as the options ask (text, JSON, Markdown). */
void diff_write(const struct diff *d, struct buf *b);

/* Appends "+12.3%" (or "-", "+inf%") for the change from a to b. */
void diff_fmt_pct(struct buf *b, double a, double b2);

/*
 * Appends the Hodges-Lehmann shift of r as a share of base's p50, named
 * and with its 95% interval: "shift +46.0% [+44.6%, +46.4%]" (no interval:
 * "shift +46.0%"). The shift is the median of the differences new - base,
 * not the difference of the p50s: the two differ, even in sign, when the
 * latencies change shape (several modes) rather than move.
 */
void diff_fmt_shift(struct buf *b, const struct diff_fres *r);

/* Whether the p50 change of r is significant: the Mann-Whitney test below
 * DIFF_ALPHA and, when the run-to-run noise is known, the shift's whole
 * interval beyond it. */
bool diff_p50_significant(const struct diff_fres *r);

/* What the verdict says when both sides are one recording. */
#define DIFF_ONE_RUN_NOTE "one run per side: run-to-run variation unknown; give several " \
	"runs per side (BASE1 BASE2 BASE3 -- NEW1 NEW2 NEW3)"

#endif /* REPORT_DIFF_INT_H */
