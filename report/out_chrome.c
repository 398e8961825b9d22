/* SPDX-License-Identifier: MIT */
/*
 * The Chrome trace printer (--format chrome, spec/OUTPUT.md "Chrome trace
 * JSON"): one "X" event per call and an "i" event per event that is not
 * part of one, a track per goroutine, named in metadata at the end; for
 * ui.perfetto.dev and chrome://tracing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "output_int.h"
#include "xalloc.h"

#define MAX_TRACKS 65536

struct track {
	uint32_t pid;
	uint64_t tid;
	char comm[GTR_COMM_LEN + 1];
};

struct chrome {
	bool any;                   /* an event was written */
	struct u64map tix;          /* hash of (pid, tid) -> index in tracks */
	struct track *tracks;       /* tracks, for their names */
	uint32_t tracks_cap, tracks_n;
};

/* Chrome's tid: the goroutine id, or the thread id when it is unknown. */
static uint64_t chrome_tid(const struct gtr_event *ev)
{
	return ev->goid ? ev->goid : ev->tid;
}

/* Notes the track of `e` (its goroutine) and the name of its thread. */
static void chrome_track(struct chrome *c, const struct report_event *e)
{
	const uint64_t tid = chrome_tid(e->ev);
	const uint32_t pid = e->ev->pid;
	const uint64_t h = u64map_hash2(tid, pid);
	uint32_t pos = 0;

	for (const uint32_t *i; (i = u64map_find(&c->tix, h, &pos));)
		if (c->tracks[*i].pid == pid && c->tracks[*i].tid == tid)
			return;
	if (c->tracks_n >= MAX_TRACKS)
		return; /* unnamed beyond this: Perfetto shows the number */
	if (c->tracks_n == c->tracks_cap) {
		c->tracks_cap = c->tracks_cap ? c->tracks_cap * 2 : 64;
		c->tracks = xrealloc(c->tracks, c->tracks_cap * sizeof(*c->tracks), "output");
	}
	if (u64map_add(&c->tix, h, c->tracks_n, UINT32_MAX))
		xalloc_die("chrome track index");
	struct track *t = &c->tracks[c->tracks_n++];
	t->pid = pid;
	t->tid = tid;
	snprintf(t->comm, sizeof(t->comm), "%s", e->comm ? e->comm : "");
}

/* Microseconds since t0 with 3 decimals, exactly. */
static void chrome_us(struct buf *b, uint64_t ts, uint64_t t0)
{
	const bool neg = ts < t0;
	const uint64_t d = neg ? t0 - ts : ts - t0;

	if (neg)
		buf_putc(b, '-');
	buf_u64(b, d / 1000);
	buf_printf(b, ".%03u", (unsigned)(d % 1000));
}

/* Starts an element of "traceEvents" and a writer for it in *w. */
static void chrome_next(struct chrome *c, struct buf *b, struct jsonw *w)
{
	buf_puts(b, c->any ? ",\n" : "\n");
	c->any = true;
	jsonw_init(w, b, JSON_ESC_JS);
}

/* One Chrome trace event: "X" for a complete span, else "i". */
static void chrome_event(struct output *o, struct buf *b, const struct report_event *e,
			 const struct out_span *s)
{
	struct chrome *c = output_state(o);
	struct jsonw w;
	char tmp[32];

	chrome_track(c, e);
	chrome_next(c, b, &w);
	jsonw_start_object(&w);
	if (s->probe && s->probe->func) {
		jsonw_string_field(&w, "name", s->probe->func);
	} else {
		snprintf(tmp, sizeof(tmp), "probe#%" PRIu32, e->ev->probe_id);
		jsonw_string_field(&w, "name", tmp);
	}
	jsonw_string_field(&w, "cat", "call");
	jsonw_string_field(&w, "ph", s->complete ? "X" : "i");
	if (!s->complete)
		jsonw_string_field(&w, "s", "t");
	jsonw_name(&w, "ts");
	chrome_us(jsonw_raw(&w), s->ts, e->t0_ns);
	if (s->complete) {
		jsonw_name(&w, "dur");
		chrome_us(jsonw_raw(&w), s->end_ns - s->ts, 0);
	}
	jsonw_uint_field(&w, "pid", e->ev->pid);
	jsonw_uint_field(&w, "tid", chrome_tid(e->ev));
	jsonw_name(&w, "args");
	jsonw_start_object(&w);
	if (e->host)
		jsonw_string_field(&w, "host", e->host);
	jsonw_uint_field(&w, "goid", e->ev->goid);
	if (s->note)
		jsonw_string_field(&w, "note", s->note);
	if (s->status)
		jsonw_string_field(&w, "status", s->status);
	out_json_site(&w, s->probe);
	out_json_values(&w, "goargs", "args", s->eprobe, s->entry);
	out_json_values(&w, "goret", "rets", s->rprobe, s->ret);
	out_json_stack(o, &w, out_call_stack(s->entry, s->ret));
	jsonw_end_object(&w);
	jsonw_end_object(&w);
}

static int track_cmp(const void *a, const void *b)
{
	const struct track *x = *(const struct track *const *)a, *y = *(const struct track *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* A metadata event `what` (process_name, thread_name) naming a track. */
static void chrome_meta(struct jsonw *w, const char *what, uint32_t pid, uint64_t tid,
			const char *name)
{
	jsonw_start_object(w);
	jsonw_string_field(w, "name", what);
	jsonw_string_field(w, "ph", "M");
	jsonw_uint_field(w, "pid", pid);
	jsonw_uint_field(w, "tid", tid);
	jsonw_name(w, "args");
	jsonw_start_object(w);
	jsonw_string_field(w, "name", name);
	jsonw_end_object(w);
	jsonw_end_object(w);
}

static void chrome_begin(struct output *o, struct buf *b)
{
	buf_puts(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"gotrace-report\"},\"traceEvents\":[");
}

/*
 * Metadata: a name per goroutine track, and one per process, from the
 * thread name of its lowest goroutine (goroutine 1 runs main.main).
 */
static void chrome_end(struct output *o, struct buf *b)
{
	struct chrome *c = output_state(o);
	const struct track **v = calloc(c->tracks_n + 1, sizeof(*v));
	uint32_t n = 0;
	struct jsonw w;
	char name[64];

	if (!v)
		xalloc_die("chrome track names");
	for (uint32_t i = 0; i < c->tracks_n; i++)
		v[n++] = &c->tracks[i];
	qsort(v, n, sizeof(*v), track_cmp);
	for (uint32_t i = 0; i < n; i++) {
		const struct track *t = v[i];

		chrome_next(c, b, &w);
		if (i == 0 || v[i - 1]->pid != t->pid) {
			snprintf(name, sizeof(name), "%s %u", t->comm, t->pid);
			chrome_meta(&w, "process_name", t->pid, 0, name);
			buf_puts(b, ",\n");
		}
		snprintf(name, sizeof(name), "goroutine %llu", (unsigned long long)t->tid);
		chrome_meta(&w, "thread_name", t->pid, t->tid, name);
	}
	free(v);
	buf_puts(b, "\n]}\n");
}

static int chrome_put(struct output *o, struct buf *b, const struct report_event *e)
{
	return out_span_put(o, b, e, chrome_event);
}

static int chrome_put_open(struct output *o, struct buf *b, const struct report_event *e,
			        uint64_t end_ns, const char *status)
{
	return out_span_put_open(o, b, e, end_ns, status, chrome_event);
}

static void chrome_free(struct output *o)
{
	struct chrome *c = output_state(o);

	free(c->tracks);
	u64map_free(&c->tix);
}

const struct output_format out_chrome = {
	.name = "chrome",
	.flags = OUTPUT_F_UNORDERED,
	.state_size = sizeof(struct chrome),
	.begin = chrome_begin,
	.put = chrome_put,
	.put_open = chrome_put_open,
	.end = chrome_end,
	.free = chrome_free,
};
