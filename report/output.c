/* SPDX-License-Identifier: MIT */
/*
 * The output table (one row per --format, each printer in a file of its
 * own: report/out_*.c), the output object that carries a printer's state
 * from event to event, and recorded stacks (spec/OUTPUT.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_int.h"
#include "xalloc.h"

/* The output table: --format NAME selects a row. */
static const struct output_format *const formats[] = {
	&out_text, &out_jsonl, &out_csv, &out_chrome, &out_perfetto, &out_folded,
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

int output_format_parse(const char *name, const struct output_format **fmt)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(name, formats[i]->name)) {
			*fmt = formats[i];
			return 0;
		}
	return -1;
}

const char *output_format_names(void)
{
	static char names[256];

	if (!names[0])
		for (size_t i = 0; i < NFORMATS; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", formats[i]->name);
	return names;
}

/* ------------------------------------------------------------ output object */

struct output *output_new(const struct output_opts *opts)
{
	struct output *o = xcalloc(1, sizeof(*o), "output");

	o->o = *opts;
	o->fmt = opts->format ? opts->format : &out_text;
	o->o.format = o->fmt;
	if (!o->o.csv_values)
		o->o.csv_values = 1;
	o->state = xcalloc(1, o->fmt->state_size, "output");
	return o;
}

void output_free(struct output *o)
{
	if (!o)
		return;
	if (o->fmt->free)
		o->fmt->free(o);
	out_printf_free(o);
	free(o->state);
	free(o);
}

void output_begin(struct output *o, struct buf *b)
{
	if (o->fmt->begin)
		o->fmt->begin(o, b);
}

int output_put(struct output *o, struct buf *b, const struct report_event *e)
{
	return o->fmt->put ? o->fmt->put(o, b, e) : 0;
}

int output_put_open(struct output *o, struct buf *b, const struct report_event *e,
		    uint64_t end_ns, const char *status)
{
	return o->fmt->put_open ? o->fmt->put_open(o, b, e, end_ns, status) : 0;
}

void output_end(struct output *o, struct buf *b)
{
	if (o->fmt->end)
		o->fmt->end(o, b);
}

void output_warnings(const struct output *o, FILE *err)
{
	if (o->fmt->warnings)
		o->fmt->warnings(o, err);
}


/* ------------------------------------------------------------ stacks */

void output_frame(const struct output *o, struct buf *b, uint32_t pid, uint64_t addr,
		  uint32_t k, bool json, bool name_only)
{
	const char *name = NULL;
	uint64_t off = 0;

	if (o && o->o.symbolize) {
		/* a return address may be just past its function's last byte */
		const uint64_t a = k && addr ? addr - 1 : addr;
		name = o->o.symbolize(o->o.sym_ctx, pid, a, &off);
		if (k && addr)
			off++;
	}
	if (!name) {
		buf_printf(b, "0x%" PRIx64, addr);
		return;
	}
	if (json)
		output_json_bytes(b, (const uint8_t *)name, strlen(name));
	else
		output_text_bytes(b, (const uint8_t *)name, strlen(name), false);
	if (!name_only)
		buf_printf(b, "+0x%" PRIx64, off);
}

uint32_t output_inlined(const struct output *o, uint32_t pid, uint64_t addr, uint32_t k,
			const char **names, uint32_t max)
{
	if (!o || !o->o.inlined || !addr)
		return 0;
	const uint32_t n = o->o.inlined(o->o.sym_ctx, pid, k ? addr - 1 : addr, names, max);
	return n < max ? n : max;
}

/* The span of `e` into *s; false when the view shows nothing for it. */
static bool out_span_of(const struct report_event *e, struct out_span *s)
{
	const struct gtr_event *ev = e->ev;

	memset(s, 0, sizeof(*s));
	s->ts = s->end_ns = ev->ts_ns;
	if (ev->kind == GTR_KIND_RETURN && e->entry) {
		s->probe = s->eprobe = e->entry_probe ? e->entry_probe : e->probe;
		s->rprobe = e->probe;
		s->entry = e->entry;
		s->ret = ev;
		s->ts = e->entry->ts_ns;
		s->complete = true;
	} else if (ev->kind == GTR_KIND_RETURN) {
		s->probe = s->rprobe = e->probe;
		s->ret = ev;
		s->note = e->lost ? NULL : "return without entry";
		s->status = e->lost ? "lost" : NULL;
	} else if (!e->tracked) {
		s->probe = s->eprobe = e->probe;
		s->entry = ev;
	} else {
		return false;
	}
	return true;
}

int out_span_put(struct output *o, struct buf *b, const struct report_event *e,
		 out_span_fn *fn)
{
	struct out_span s;

	if (!out_span_of(e, &s))
		return 0;
	fn(o, b, e, &s);
	return 1;
}

int out_span_put_open(struct output *o, struct buf *b, const struct report_event *e,
		      uint64_t end_ns, const char *status, out_span_fn *fn)
{
	const struct gtr_event *ev = e->ev;
	const struct out_span s = {
		.probe = e->probe, .eprobe = e->probe, .entry = ev, .ts = ev->ts_ns,
		.end_ns = end_ns > ev->ts_ns ? end_ns : ev->ts_ns, .complete = true,
		.status = status,
	};

	fn(o, b, e, &s);
	return 1;
}

/* The stack a call shows: its entry's, else its return's. */
const struct gtr_event *out_call_stack(const struct gtr_event *entry,
				       const struct gtr_event *ret)
{
	if (entry && entry->stack && entry->nstack)
		return entry;
	if (ret && ret->stack && ret->nstack)
		return ret;
	return NULL;
}
