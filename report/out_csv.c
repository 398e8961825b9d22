/* SPDX-License-Identifier: MIT */
/*
 * The CSV printer (--format csv, spec/OUTPUT.md "CSV"): RFC 4180, a
 * header row, then one row per event with its values in columns v1..vN
 * as %s shows them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_int.h"

struct csv {
	struct buf cell;            /* scratch for one field */
	uint64_t cut;               /* values left out */
};

void output_csv_field(struct buf *b, const char *p, size_t n)
{
	bool quote = false;

	for (size_t i = 0; i < n && !quote; i++)
		quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
	if (!quote) {
		buf_add(b, p, n);
		return;
	}
	buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '"')
			buf_putc(b, '"');
		buf_putc(b, p[i]);
	}
	buf_putc(b, '"');
}

static void csv_header(struct output *o, struct buf *b)
{
	buf_puts(b, o->o.hosts ? "ts_ns,host,pid,tid,goid,comm,func,kind,latency_ns"
		 : "ts_ns,pid,tid,goid,comm,func,kind,latency_ns");
	for (uint32_t i = 0; i < o->o.csv_values; i++)
		buf_printf(b, ",v%u", i + 1);
	buf_puts(b, "\r\n");
}

/* Appends the field made in c->cell. */
static void put_cell(struct buf *b, const struct csv *c)
{
	output_csv_field(b, c->cell.data ? c->cell.data : "", c->cell.len);
}

/* Appends a text cell (escaped as text, without quotes) as a CSV field. */
static void csv_text(struct csv *c, struct buf *b, const char *s)
{
	buf_reset(&c->cell);
	output_text_bytes(&c->cell, (const uint8_t *)s, strlen(s), false);
	put_cell(b, c);
}

static int csv_put(struct output *o, struct buf *b, const struct report_event *e)
{
	struct csv *c = output_state(o);
	const struct gtr_event *ev = e->ev;
	const struct gtr_probe *p = e->probe;

	buf_u64(b, ev->ts_ns);
	buf_putc(b, ',');
	if (o->o.hosts) {
		csv_text(c, b, e->host ? e->host : "");
		buf_putc(b, ',');
	}
	buf_u64(b, ev->pid);
	buf_putc(b, ',');
	buf_u64(b, ev->tid);
	buf_putc(b, ',');
	buf_u64(b, ev->goid);
	buf_putc(b, ',');
	csv_text(c, b, e->comm ? e->comm : "");
	buf_putc(b, ',');
	if (p && p->func)
		csv_text(c, b, p->func);
	else
		buf_printf(b, "probe#%" PRIu32, ev->probe_id);
	buf_puts(b, ev->kind == GTR_KIND_RETURN ? ",return," : ",entry,");
	if (e->entry)
		buf_u64(b, e->latency_ns);
	for (uint32_t i = 0; i < o->o.csv_values; i++) {
		buf_putc(b, ',');
		if (i >= ev->nvals || i >= GTR_MAX_ARGS)
			continue;
		buf_reset(&c->cell);
		/* a struct captured whole: its fields, as text shows them
		 * (they have columns of their own too) */
		if (!p || !output_struct_value(&c->cell, p, ev, i, false))
			out_bare_value(&c->cell, &ev->vals[i], arg_at(p, i), -1);
		put_cell(b, c);
	}
	if (ev->nvals > o->o.csv_values)
		c->cut += ev->nvals - o->o.csv_values;
	buf_puts(b, "\r\n");
	return 1;
}

uint64_t output_csv_cut(const struct output *o)
{
	const struct csv *c = output_state(o);

	return o->fmt == &out_csv ? c->cut : 0;
}

static void csv_warnings(const struct output *o, FILE *err)
{
	const uint64_t cut = output_csv_cut(o);

	if (cut)
		fprintf(err, "%s: warning: %" PRIu64 " value(s) left out of CSV: events of probes "
			"described after the start had more values than the %u columns\n",
			program_invocation_short_name, cut, o->o.csv_values);
}

static void csv_free(struct output *o)
{
	struct csv *c = output_state(o);

	buf_free(&c->cell);
}

const struct output_format out_csv = {
	.name = "csv",
	.state_size = sizeof(struct csv),
	.begin = csv_header,
	.put = csv_put,
	.warnings = csv_warnings,
	.free = csv_free,
};
