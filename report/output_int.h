/* SPDX-License-Identifier: MIT */
/*
 * What report/output.c, the printers (report/out_*.c), value.c and
 * printf.c share; nothing outside output reads this.
 */
#ifndef REPORT_OUTPUT_INT_H
#define REPORT_OUTPUT_INT_H

#include <string.h>

#include "json.h"
#include "map.h"
#include "output.h"

struct fcache_ent;

struct output {
	struct output_opts o;
	const struct output_format *fmt;  /* o.format, or text */
	uint32_t host_cols;         /* the widest host name given, in display
				       columns (output_text_host()) */
	void *state;                /* the printer's: fmt->state_size bytes */
	struct u64map fcx;          /* probe's address -> index in fc */
	struct fcache_ent *fc;      /* compiled format strings by probe (printf.c) */
	uint32_t fc_cap, fc_n;
};

/* The printer state of `o` (fmt->state_size bytes, zeroed at first). */
static inline void *output_state(const struct output *o)
{
	return o->state;
}

static inline bool arg_is(const struct gtr_arg *arg, enum gtr_type t)
{
	return arg && arg->type == t;
}

/* Whether a value holds float bits (a float argument's word). */
static inline bool value_is_float(const struct gtr_value *v, const struct gtr_arg *arg)
{
	return v->kind == GTR_VAL_UINT && arg_is(arg, GTR_TYPE_FLOAT);
}

/* Whether a string value was cut (fewer bytes kept than its length). */
static inline bool str_truncated(const struct gtr_value *v)
{
	return v->v.s.full_len > v->v.s.len;
}

/* A parameter name worth showing: known and not the blank identifier. */
static inline bool name_known(const char *name)
{
	return name && name[0] && strcmp(name, "_") != 0;
}

/* Argument i of probe p, NULL when the probe does not describe it. */
static inline const struct gtr_arg *arg_at(const struct gtr_probe *p, uint32_t i)
{
	return p && i < p->nargs && i < GTR_MAX_ARGS ? &p->args[i] : NULL;
}

/* value.c: the double a value stands for (float bits when the argument is
 * a float). */
double out_value_double(const struct gtr_value *v, const struct gtr_arg *arg);

/*
 * value.c: a value as %s and CSV show it: as text (output_text_value()),
 * except that strings, []byte and interfaces are their bytes escaped,
 * without quotes, then "...(len=N)" when cut; `prec` >= 0 limits the bytes
 * of a string shown. Slices print as in text ("[1 2 3](len=3)").
 */
void out_bare_value(struct buf *b, const struct gtr_value *v,
		    const struct gtr_arg *arg, int prec);

/*
 * value.c: a struct passed by value, value i of `ev` (probe p), shown
 * whole from its fields (values named "NAME.FIELD" after it): text
 * "{X:3 Y:4}", nested "{Min:{X:1 Y:2} Name:"box"(len=3)}", or (json) a
 * JSON object. False, writing nothing, when value i is no such struct.
 */
bool output_struct_value(struct buf *b, const struct gtr_probe *p,
			 const struct gtr_event *ev, uint32_t i, bool json);

/* value.c: whether value j of p is a field of a struct shown whole by
 * output_struct_value() (left out where the struct is shown). */
bool output_is_struct_field(const struct gtr_probe *p, uint32_t j);

/* printf.c: appends the values of `ev` through probe p's format string
 * (p->fmt, not empty), compiled once per probe when `o` is not NULL. */
void out_printf(struct output *o, struct buf *b, const struct gtr_probe *p,
		const struct gtr_event *ev);

/* printf.c: frees the compiled format strings of `o`. */
void out_printf_free(struct output *o);

/*
 * What the trace viewers' formats (Chrome, Perfetto) show of an event: a
 * slice from `ts` to `end_ns` (`complete`) or an instant at `ts`, named by
 * `probe`, with the values of `entry` (from `eprobe`) and `ret` (from
 * `rprobe`; either event may be NULL), and `note` and `status` when not
 * NULL (spec/OUTPUT.md, "Chrome trace").
 */
struct out_span {
	const struct gtr_probe *probe, *eprobe, *rprobe;
	const struct gtr_event *entry, *ret;
	uint64_t ts, end_ns;
	bool complete;
	const char *note, *status;
};

/* A printer of spans: writes span `s` of event `e` to `b`. */
typedef void out_span_fn(struct output *o, struct buf *b, const struct report_event *e,
			 const struct out_span *s);

/* output.c: output_format.put of a span printer: writes the span of `e`
 * (after pairing) through `fn`: a paired return is its call, an event
 * shown alone an instant, an entry whose return will show its call
 * nothing. Returns the records written (0 or 1). */
int out_span_put(struct output *o, struct buf *b, const struct report_event *e,
		 out_span_fn *fn);

/* output.c: output_format.put_open of a span printer: the call `e` that
 * did not return, from its entry to `end_ns` (its entry, when earlier),
 * with `status`, through `fn`. Returns 1. */
int out_span_put_open(struct output *o, struct buf *b, const struct report_event *e,
		      uint64_t end_ns, const char *status, out_span_fn *fn);

/* output.c: the stack a call shows: its entry's, else its return's. */
const struct gtr_event *out_call_stack(const struct gtr_event *entry,
				       const struct gtr_event *ret);

/* out_jsonl.c: "ARR":[values],"OBJ":{name:value} of `ev` (NULL: empty)
 * from probe `p`, as members of the object `w` is in. */
void out_json_values(struct jsonw *w, const char *arr, const char *obj,
		     const struct gtr_probe *p, const struct gtr_event *ev);

/* out_jsonl.c: "inlined_into", "call_site" and "line" of probe `p`
 * (spec/OUTPUT.md), those it has. */
void out_json_site(struct jsonw *w, const struct gtr_probe *p);

/* out_jsonl.c: "stack":["name+0xoff",...] of `ev`, when it has one. */
void out_json_stack(const struct output *o, struct jsonw *w, const struct gtr_event *ev);

#endif /* REPORT_OUTPUT_INT_H */
