/* SPDX-License-Identifier: MIT */
/*
 * What the parts of report/filter share (compilation through lang/'s
 * parser and PCRE2, filter_compile.c; the type check, filter_check.c; the
 * evaluator, filter.c; the plan of a pushed-down count, filter_push.c):
 * the filter object around lang/'s tree.
 */
#ifndef REPORT_FILTER_INT_H
#define REPORT_FILTER_INT_H

#include "filter.h"
#include "lang.h"
#include "width.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "xalloc.h"

/* Where the value of a slot is, for one (probe, entry probe). */
enum where { W_NONE = 0, W_EVENT = 1, W_ENTRY = 2 };
#define SF_F32 1              /* value is the bits of a float32 */
#define SF_F64 2              /* value is the bits of a float64 */
#define SF_SLICE 4            /* value is a slice's element bytes
				 (GTR_TYPE_SLICE): only its length is used */

struct res {
	int16_t idx;          /* value index */
	uint8_t where;        /* enum where */
	uint8_t flg;          /* SF_* */
};

struct pc_ent {               /* per-probe cache entry */
	uint32_t id;
	bool used;
	const struct gtr_probe *probe;
	const struct gtr_probe *entry_probe;
};

struct regex {
	pcre2_code *code;
	pcre2_match_data *md;
};

struct filter {
	struct lang_tree t;   /* the parsed expression */
	struct regex *res;    /* regular expression i of t: res[i] */
	uint32_t nres;
	bool time_bound;      /* filter_set_clock() ran */
	/* Events whose evaluation failed (a regex that hit a PCRE2 limit):
	 * counted, never a silent false; why: the first failure's reason. */
	uint64_t eval_errors;
	char eval_why[160];
	unsigned uses;        /* FILTER_USES_* */
	/* The filter as a flat list of "argument OP integer" joined by &&
	 * (nfast > 0), evaluated without recursion; -1: not of that shape,
	 * 0: not looked at yet. */
	int nfast;
	uint32_t fast[16];    /* N_CMP node indexes */
	/* fast[] resolved for the two (probe, entry probe) pairs met last
	 * (an entry and its return alternate), so that an event of either
	 * reads its values directly; fsets[0] is the newer */
	struct fast_set {
		bool ok;
		const struct gtr_probe *probe, *entry;
		struct fast_op {
			i128 lit;
			int16_t idx;  /* value index */
			uint8_t where;  /* enum where */
			uint8_t flg;  /* SF_* */
			uint8_t cmp;  /* enum cmp */
		} ops[16];
	} fsets[2];

	/* per-probe resolution: slot s of cache entry e at [e * nslots + s];
	 * entries in the order probes were met, found by probe id */
	struct pc_ent *ents;
	struct res *rtab;
	uint32_t cap_ents, nents;
	struct u64map ent_ix;  /* probe id -> entry */
	struct res *scratch;  /* resolution for events of an undescribed probe */
	/* the entries of the two (probe, entry probe) pairs met last, in
	 * front of the table; mru[0] is the newer */
	struct {
		bool ok;
		const struct gtr_probe *probe, *entry_probe;
		uint32_t ent;
	} mru[2];
};

/* Index of the argument or result named `name` (NUL-terminated) among
 * pr->args, or -1 when the probe has none of that name. */
int filter_arg_index(const struct gtr_probe *pr, const char *name);

/*
 * Where slot `s` is for an event of kind `kind` from probe `pr` (NULL:
 * undescribed) whose paired entry came from `epr` (NULL: none/unknown).
 */
struct res filter_resolve_slot(const struct filter *f, uint32_t s, enum gtr_kind kind,
			       const struct gtr_probe *pr, const struct gtr_probe *epr);

/* Node `ni` of f's tree evaluated on e: 1 or 0, or -1 when a regular
 * expression had no answer (PCRE2's limits; not counted as an error). */
int filter_eval_node(struct filter *f, uint32_t ni, const struct report_event *e);

#endif /* REPORT_FILTER_INT_H */
