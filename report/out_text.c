/* SPDX-License-Identifier: MIT */
/*
 * The text printer (--format text, spec/OUTPUT.md "Text"): bcc trace.py's
 * layout, one line per event, or per call with --calls; time columns with
 * -t and -T; recorded stacks under the line, a frame a line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output_int.h"
#include "timeparse.h"
#include "width.h"
#include "xalloc.h"

/*
 * What a line of one probe always holds, made once per probe
 * (text_probe()): the FUNC column and, for each value, its "NAME=" and
 * whether it shows at all; so a line is mostly copied, not formatted.
 */
struct tprobe {
	char *func;            /* the FUNC column, escaped, padded, its blank */
	uint32_t func_len;
	uint32_t skip;         /* bit i: value i is shown in its struct only */
	uint32_t structs;      /* bit i: value i may be a struct shown whole */
	char *names;           /* "NAME=" of value i at name_at[i] .. name_at[i + 1] */
	uint32_t name_at[GTR_MAX_ARGS + 1];
};

/* The text printer's state (output_state()). */
struct text_state {
	struct u64map ix;      /* probe's address -> index in tp */
	struct tprobe *tp;
	uint32_t n, cap;
	const struct gtr_probe *last;  /* the probe of tp[last_i] */
	uint32_t last_i;
	bool task_ok;          /* task_col is the PID, TID and COMM columns, and
				* FUNC when `head` is a probe, of: */
	uint32_t pid, tid;
	char comm[GTR_COMM_LEN + 1];
	const struct gtr_probe *head;
	struct buf task_col;
	int64_t wall_sec;      /* wall_hms is HH:MM:SS of this second (+1: none) */
	char wall_hms[16];
};

/* Appends `s` escaped, padded with spaces to `width` columns. */
static void put_padded(struct buf *b, const char *s, int width)
{
	const size_t start = b->len;

	output_text_bytes(b, (const uint8_t *)s, strlen(s), false);
	/* by display width: a wide character takes two columns (an empty
	 * name into an empty buffer added nothing: b->data may be NULL) */
	const int w = b->len > start ? text_width(b->data + start, b->len - start) : 0;

	buf_pad(b, ' ', width - w);
}

/* The parts of probe p's lines (struct tprobe), made when p is first met. */
static const struct tprobe *text_probe(struct output *o, const struct gtr_probe *p)
{
	struct text_state *ts = output_state(o);

	if (ts->last == p)
		return &ts->tp[ts->last_i];
	const uint32_t *ix = u64map_get(&ts->ix, (uintptr_t)p);
	if (ix) {
		ts->last = p;
		ts->last_i = *ix;
		return &ts->tp[*ix];
	}
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 16;
		ts->tp = xrealloc(ts->tp, ts->cap * sizeof(*ts->tp), "output");
	}
	if (u64map_put(&ts->ix, (uintptr_t)p, ts->n, UINT32_MAX))
		xalloc_die("output: probe index");
	struct tprobe *t = &ts->tp[ts->n];
	struct buf b = BUF_INIT;

	memset(t, 0, sizeof(*t));
	put_padded(&b, p->func ? p->func : "", 16);  /* used when p->func is set */
	buf_putc(&b, ' ');
	t->func_len = (uint32_t)b.len;
	t->func = b.data;
	b = (struct buf)BUF_INIT;
	buf_reserve(&b, 1);   /* names is never NULL */
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++) {
		const struct gtr_arg *a = arg_at(p, i);

		t->name_at[i] = (uint32_t)b.len;
		if (!a)
			continue;
		if (output_is_struct_field(p, i))
			t->skip |= 1u << i;
		if (a->type == GTR_TYPE_OTHER)
			t->structs |= 1u << i;
		if (name_known(a->name)) {
			output_text_bytes(&b, (const uint8_t *)a->name, strlen(a->name), false);
			buf_putc(&b, '=');
		}
	}
	t->name_at[GTR_MAX_ARGS] = (uint32_t)b.len;
	t->names = b.data;
	ts->last = p;
	ts->last_i = ts->n;
	return &ts->tp[ts->n++];
}

/* Appends the PID, TID and COMM columns, each with its blanks. */
static void put_task(struct buf *b, uint32_t pid, uint32_t tid, const char *comm)
{
	size_t start = b->len;

	buf_u64(b, pid);
	buf_pad(b, ' ', 8 - (int)(b->len - start));
	start = b->len;
	buf_u64(b, tid);
	buf_pad(b, ' ', 8 - (int)(b->len - start));
	put_padded(b, comm, 15);
	buf_putc(b, ' ');
}

/* Whether NUL-terminated a and b are the same (short strings: no call). */
static inline bool same_str(const char *a, const char *b)
{
	for (; *a == *b; a++, b++)
		if (!*a)
			return true;
	return false;
}

/*
 * put_task() and, when p has a function name, the FUNC column of p (its
 * blank too; true then): the line's head as last made, kept in o's state.
 */
static bool put_head_cached(struct output *o, struct buf *b, uint32_t pid, uint32_t tid,
			    const char *comm, const struct gtr_probe *p)
{
	struct text_state *ts = output_state(o);
	const struct gtr_probe *head = p && p->func ? p : NULL;

	if (!ts->task_ok || ts->pid != pid || ts->tid != tid || ts->head != head ||
	    !same_str(ts->comm, comm)) {
		const size_t n = strlen(comm);
		if (n > GTR_COMM_LEN) {
			put_task(b, pid, tid, comm);
			return false;
		}
		memcpy(ts->comm, comm, n + 1);
		ts->pid = pid;
		ts->tid = tid;
		ts->head = head;
		buf_reset(&ts->task_col);
		put_task(&ts->task_col, pid, tid, comm);
		if (head) {
			const struct tprobe *t = text_probe(o, head);
			buf_add(&ts->task_col, t->func, t->func_len);
		}
		ts->task_ok = true;
	}
	buf_add(b, ts->task_col.data, ts->task_col.len);
	return head != NULL;
}

static void text_free(struct output *o)
{
	struct text_state *ts = output_state(o);

	for (uint32_t i = 0; i < ts->n; i++) {
		free(ts->tp[i].func);
		free(ts->tp[i].names);
	}
	free(ts->tp);
	u64map_free(&ts->ix);
	buf_free(&ts->task_col);
}

/* Appends '.' and the 6 digits of `frac` (below 1000000), zeros first. */
static void put_frac6(struct buf *b, uint64_t frac)
{
	const size_t at = b->len;

	buf_u64(b, 1000000 + frac);   /* "1" and the six digits */
	b->data[at] = '.';
}

/* The -t column: seconds since t0 with 6 decimals, exactly, padded to 10
 * columns, and its blank. */
static void put_rel_seconds(struct buf *b, uint64_t ts, uint64_t t0)
{
	const bool neg = ts < t0;
	const uint64_t d = neg ? t0 - ts : ts - t0;
	const size_t start = b->len;

	if (neg)
		buf_putc(b, '-');
	buf_u64(b, d / 1000000000);
	put_frac6(b, d / 1000 % 1000000);
	buf_pad(b, ' ', 10 - (int)(b->len - start));
	buf_putc(b, ' ');
}

/* The -T column: HH:MM:SS.uuuuuu of CLOCK_REALTIME `real` ns in local
 * time, and its blank; localtime_r() once a second of trace (kept in o's
 * state when o is not NULL). */
static void put_wall_clock(struct output *o, struct buf *b, uint64_t real)
{
	struct text_state *ts = o ? output_state(o) : NULL;
	const int64_t sec = (int64_t)(real / 1000000000);
	char hms[16];

	if (!ts || ts->wall_sec != sec + 1) {
		const time_t t = (time_t)sec;
		struct tm tm = { 0 };

		localtime_r(&t, &tm);
		snprintf(hms, sizeof(hms), "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
		if (ts) {
			memcpy(ts->wall_hms, hms, sizeof(hms));
			ts->wall_sec = sec + 1;
		}
	} else {
		memcpy(hms, ts->wall_hms, sizeof(hms));
	}
	const size_t start = b->len;
	buf_puts(b, hms);
	put_frac6(b, real % 1000000000 / 1000);
	buf_pad(b, ' ', 15 - (int)(b->len - start));
	buf_putc(b, ' ');
}

#define HOST_COLS 15   /* the HOST column when every name fits */

void output_text_host(struct output *o, const char *name)
{
	struct buf t = BUF_INIT;

	output_text_bytes(&t, (const uint8_t *)name, strlen(name), false);
	const uint32_t w = t.len ? (uint32_t)text_width(t.data, t.len) : 0;

	if (w > o->host_cols)
		o->host_cols = w;
	buf_free(&t);
}

/* The width of the HOST column: the widest host name given, else 15. */
static int host_cols(const struct output *o)
{
	return o->host_cols > HOST_COLS ? (int)o->host_cols : HOST_COLS;
}

/*
 * Time columns, pid, tid, comm and function: the trace.py line prefix.
 * `ev` gives the time, pid, tid and probe id: e->ev, or a call's entry in
 * the call view (e->real_ns is always the time of e->ev).
 */
static void text_prefix(struct output *o, struct buf *b,
			const struct report_event *e, const struct gtr_probe *p,
			const struct gtr_event *ev)
{
	const uint64_t ts = ev->ts_ns;
	char tmp[32];

	if (o && o->o.time_wall)   /* the call view dates a call by its entry */
		put_wall_clock(o, b, e->real_ns - (ts < e->ev->ts_ns ? e->ev->ts_ns - ts : 0));
	if (o && o->o.time_rel)
		put_rel_seconds(b, ts, e->t0_ns);
	if (o && o->o.hosts) {
		put_padded(b, e->host ? e->host : "", host_cols(o));
		buf_putc(b, ' ');
	}
	if (o) {
		if (put_head_cached(o, b, ev->pid, ev->tid, e->comm ? e->comm : "", p))
			return;
	} else {
		put_task(b, ev->pid, ev->tid, e->comm ? e->comm : "");
	}
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
	if (o && o->o.hosts) {
		buf_puts(b, "HOST");
		buf_pad(b, ' ', host_cols(o) + 1 - 4);
	}
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
	if (o && p) {
		/* the same, from the probe's parts made once */
		const struct tprobe *t = text_probe(o, p);
		for (uint32_t i = 0, shown = 0; i < ev->nvals && i < GTR_MAX_ARGS; i++) {
			if (t->skip >> i & 1)
				continue;
			if (shown++)
				buf_putc(b, ' ');
			buf_add(b, t->names + t->name_at[i], t->name_at[i + 1] - t->name_at[i]);
			if (!(t->structs >> i & 1) || !output_struct_value(b, p, ev, i, false))
				output_text_value(b, &ev->vals[i], arg_at(p, i));
		}
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
static void put_site_marks(struct buf *b, const struct gtr_probe *p, size_t values_at)
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

/* put_site_marks() when p has a site to show (most probes have none). */
static inline void put_site(struct buf *b, const struct gtr_probe *p, size_t values_at)
{
	if (p && ((p->inlined_into && p->inlined_into[0]) || (p->line && p->line[0])))
		put_site_marks(b, p, values_at);
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
		text_call(o, b, e, ev, e->probe, NULL,
			  e->unpaired ? "unpaired" : e->untracked ? "untracked" : "-", false);
		return 1;
	}
	text_call(o, b, e, e->entry, e->entry_probe, ev,
		  e->entry ? rtime_fmt_duration(tmp, e->latency_ns) : e->lost ? "lost" :
		  e->unpaired ? "unpaired" : "?",
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
	.state_size = sizeof(struct text_state),
	.free = text_free,
	.begin = text_begin,
	.put = text_put,
	.put_open = text_put_open,
};
