/* SPDX-License-Identifier: MIT */
/*
 * The text printer (--format text, spec/OUTPUT.md "Text"): bcc trace.py's
 * layout, one line per event, or per call with --calls; time columns with
 * -t and -T; recorded stacks under the line, a frame a line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "output_int.h"
#include "timeparse.h"
#include "width.h"

/* Appends `s` escaped, padded with spaces to `width` columns. */
static void put_padded(struct buf *b, const char *s, int width)
{
	const size_t start = b->len;

	output_text_bytes(b, (const uint8_t *)s, strlen(s), false);
	/* by display width: a wide character takes two columns */
	buf_pad(b, ' ', width - text_width(b->data + start, b->len - start));
}

/* Seconds since t0 with 6 decimals, exactly, into out. */
static void rel_seconds(char out[32], uint64_t ts, uint64_t t0)
{
	const bool neg = ts < t0;
	const uint64_t d = neg ? t0 - ts : ts - t0;

	snprintf(out, 32, "%s%llu.%06llu", neg ? "-" : "", (unsigned long long)(d / 1000000000),
		 (unsigned long long)(d / 1000 % 1000000));
}

/* HH:MM:SS.uuuuuu of CLOCK_REALTIME `real` ns, in local time. */
static void wall_clock(char out[32], uint64_t real)
{
	const time_t sec = (time_t)(real / 1000000000);
	struct tm tm;

	localtime_r(&sec, &tm);
	snprintf(out, 32, "%02d:%02d:%02d.%06u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(real % 1000000000 / 1000));
}

/*
 * Time columns, pid, tid, comm and function: the trace.py line prefix.
 * `ev` gives the time, pid, tid and probe id: e->ev, or a call's entry in
 * the call view (e->real_ns is always the time of e->ev).
 */
static void text_prefix(const struct output *o, struct buf *b,
			const struct report_event *e, const struct gtr_probe *p,
			const struct gtr_event *ev)
{
	const uint64_t ts = ev->ts_ns;
	char tmp[32];
	size_t start;

	if (o && o->o.time_wall) {
		/* the call view dates a call by its entry */
		wall_clock(tmp, e->real_ns - (ts < e->ev->ts_ns ? e->ev->ts_ns - ts : 0));
		put_padded(b, tmp, 15);
		buf_putc(b, ' ');
	}
	if (o && o->o.time_rel) {
		rel_seconds(tmp, ts, e->t0_ns);
		put_padded(b, tmp, 10);
		buf_putc(b, ' ');
	}
	if (o && o->o.hosts) {
		put_padded(b, e->host ? e->host : "", 15);
		buf_putc(b, ' ');
	}
	start = b->len;
	buf_u64(b, ev->pid);
	buf_pad(b, ' ', 8 - (int)(b->len - start));
	start = b->len;
	buf_u64(b, ev->tid);
	buf_pad(b, ' ', 8 - (int)(b->len - start));
	put_padded(b, e->comm ? e->comm : "", 15);
	buf_putc(b, ' ');
	if (p && p->func) {
		put_padded(b, p->func, 16);
	} else {
		snprintf(tmp, sizeof(tmp), "probe#%" PRIu32, ev->probe_id);
		put_padded(b, tmp, 16);
	}
	buf_putc(b, ' ');
}

static void text_header(const struct output *o, struct buf *b)
{
	if (o && o->o.time_wall)
		buf_puts(b, "TIME            ");
	if (o && o->o.time_rel)
		buf_puts(b, "TIME       ");
	if (o && o->o.hosts)
		buf_puts(b, "HOST            ");
	if (o && o->o.calls)
		buf_puts(b, "PID     TID     COMM            FUNC             LATENCY      -\n");
	else
		buf_puts(b, "PID     TID     COMM            FUNC             -\n");
}

void output_text_header(struct buf *b)
{
	text_header(NULL, b);
}

/* The stack of `ev` under its text line, one frame a line (trace.py -U). */
static void text_stack(const struct output *o, struct buf *b, const struct gtr_event *ev)
{
	if (!ev || !ev->stack)
		return;
	for (uint32_t k = 0; k < ev->nstack && k < GTR_MAX_STACK; k++) {
		const char *inl[GTR_MAX_INLINE_DEPTH];
		const uint32_t ni = output_inlined(o, ev->pid, ev->stack[k], k, inl,
						   GTR_MAX_INLINE_DEPTH);

		for (uint32_t i = 0; i < ni; i++) {
			buf_puts(b, "        ");
			output_text_bytes(b, (const uint8_t *)inl[i], strlen(inl[i]), false);
			buf_puts(b, " (inlined)\n");
		}
		buf_puts(b, "        ");
		output_frame(o, b, ev->pid, ev->stack[k], k, false, false);
		buf_putc(b, '\n');
	}
}

/* The values of `ev` from probe `p`: its format string, or name=value. */
static void put_values(struct output *o, struct buf *b, const struct gtr_probe *p,
		       const struct gtr_event *ev)
{
	if (p && p->fmt && p->fmt[0]) {
		out_printf(o, b, p, ev);
		return;
	}
	for (uint32_t i = 0, shown = 0; i < ev->nvals && i < GTR_MAX_ARGS; i++) {
		const struct gtr_arg *a = arg_at(p, i);

		if (output_is_struct_field(p, i))
			continue;   /* shown in its struct */
		if (shown++)
			buf_putc(b, ' ');
		if (a && name_known(a->name)) {
			output_text_bytes(b, (const uint8_t *)a->name, strlen(a->name), false);
			buf_putc(b, '=');
		}
		if (!output_struct_value(b, p, ev, i, false))
			output_text_value(b, &ev->vals[i], a);
	}
}

/* Where probe `p` fires when it is not a function's entry or return,
 * after the values written from b->len `values_at` on: "[inlined into F
 * at FILE:LINE]", "[line FILE:LINE]". */
static void put_site(struct buf *b, const struct gtr_probe *p, size_t values_at)
{
	const char *base;
	/* no blank before it when no value was shown */
	const char *sep = b->len > values_at ? " " : "";

	if (p && p->inlined_into && p->inlined_into[0]) {
		buf_puts(b, sep);
		sep = " ";
		buf_puts(b, "[inlined into ");
		buf_puts(b, p->inlined_into);
		if (p->call_site && p->call_site[0]) {
			buf_puts(b, " at ");
			buf_puts(b, p->call_site);
		}
		buf_putc(b, ']');
	}
	if (p && p->line && p->line[0]) {
		base = strrchr(p->line, '/');
		buf_puts(b, sep);
		buf_puts(b, "[line ");
		buf_puts(b, base ? base + 1 : p->line);
		buf_putc(b, ']');
	}
}

static void text_event(struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	char tmp[24];

	text_prefix(o, b, e, e->probe, ev);
	if (ev->kind == GTR_KIND_RETURN) {
		/* the values stay last, where trace.py has them */
		buf_puts(b, "<- (");
		buf_puts(b, e->entry ? rtime_fmt_duration(tmp, e->latency_ns)
			    : e->lost ? "lost" : "no entry");
		buf_puts(b, ev->nvals ? ") " : ")");
		put_values(o, b, e->probe, ev);
	} else {
		const size_t at = b->len;

		put_values(o, b, e->probe, ev);
		put_site(b, e->probe, at);
	}
	buf_putc(b, '\n');
	text_stack(o, b, ev);
}

void output_text_event(struct buf *b, const struct report_event *e)
{
	text_event(NULL, b, e);
}

/* The call view: entry and return on one line. `entry`/`ret` may be NULL. */
static void text_call(struct output *o, struct buf *b, const struct report_event *e,
		      const struct gtr_event *entry, const struct gtr_probe *eprobe,
		      const struct gtr_event *ret, const char *latency, bool arrow)
{
	const struct gtr_probe *p = eprobe ? eprobe : e->probe;

	/* time, pid, tid and goroutine of the entry (comm: e->comm) */
	text_prefix(o, b, e, p, entry ? entry : e->ev);
	put_padded(b, latency, 12);
	buf_putc(b, ' ');
	if (entry) {
		const size_t at = b->len;

		put_values(o, b, eprobe, entry);
		if (!arrow)
			put_site(b, eprobe, at);
	} else {
		buf_putc(b, '?');
	}
	if (arrow) {
		buf_puts(b, " -> ");
		if (ret)
			put_values(o, b, e->probe, ret);
		else
			buf_putc(b, '?');
	}
	buf_putc(b, '\n');
	text_stack(o, b, out_call_stack(entry, ret));
}

static void text_begin(struct output *o, struct buf *b)
{
	text_header(o, b);
}

static int text_put(struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	char tmp[24];

	if (!o->o.calls) {
		text_event(o, b, e);
		return 1;
	}
	/* the call view: a line per return, and per entry that gets none */
	if (ev->kind != GTR_KIND_RETURN) {
		if (e->tracked)
			return 0;
		text_call(o, b, e, ev, e->probe, NULL, "-", false);
		return 1;
	}
	text_call(o, b, e, e->entry, e->entry_probe, ev,
		  e->entry ? rtime_fmt_duration(tmp, e->latency_ns) : e->lost ? "lost" : "?",
		  true);
	return 1;
}

static int text_put_open(struct output *o, struct buf *b, const struct report_event *e,
			 uint64_t end_ns, const char *status)
{
	/* an open call is shown from its entry, e->ev (never NULL: pairing
	 * rebuilds it); checked so that text_call() has one to show */
	if (!o->o.calls || !e->ev)
		return 0;
	text_call(o, b, e, e->ev, e->probe, NULL, status, true);
	return 1;
}

const struct output_format out_text = {
	.name = "text",
	.flags = OUTPUT_F_CALLS | OUTPUT_F_TIME,
	.begin = text_begin,
	.put = text_put,
	.put_open = text_put_open,
};
