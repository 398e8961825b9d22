/* SPDX-License-Identifier: MIT */
/*
 * The JSON Lines printer (--format jsonl, spec/OUTPUT.md "JSON Lines"):
 * one object per event, or per call with --calls, written through the
 * JSON writer of lib/json.h.
 */
#include <string.h>

#include "output_int.h"

void out_json_values(struct jsonw *w, const char *arr, const char *obj,
		     const struct gtr_probe *p, const struct gtr_event *ev)
{
	const uint32_t nvals = !ev ? 0 : ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;

	jsonw_name(w, arr);
	jsonw_start_array(w);
	for (uint32_t i = 0; i < nvals; i++) {
		struct buf *raw = jsonw_raw(w);

		if (!output_struct_value(raw, p, ev, i, true))
			output_json_value(raw, &ev->vals[i], arg_at(p, i));
	}
	jsonw_end_array(w);
	jsonw_name(w, obj);
	jsonw_start_object(w);
	for (uint32_t i = 0; i < nvals; i++) {
		const struct gtr_arg *a = arg_at(p, i);
		if (!a || !name_known(a->name) || output_is_struct_field(p, i))
			continue;   /* fields are shown in their struct */
		bool dup = false;
		for (uint32_t j = 0; j < i && !dup; j++) {
			const struct gtr_arg *o = arg_at(p, j);
			dup = o && o->name && !strcmp(o->name, a->name);
		}
		if (dup)
			continue;
		jsonw_name(w, a->name);
		struct buf *raw = jsonw_raw(w);

		if (!output_struct_value(raw, p, ev, i, true))
			output_json_value(raw, &ev->vals[i], a);
	}
	jsonw_end_object(w);
}

void out_json_stack(const struct output *o, struct jsonw *w, const struct gtr_event *ev)
{
	if (!ev || !ev->stack || !ev->nstack)
		return;
	jsonw_name(w, "stack");
	jsonw_start_array(w);
	for (uint32_t k = 0; k < ev->nstack && k < GTR_MAX_STACK; k++) {
		const char *inl[GTR_MAX_INLINE_DEPTH];
		const uint32_t ni = output_inlined(o, ev->pid, ev->stack[k], k, inl,
						   GTR_MAX_INLINE_DEPTH);
		struct buf *b;

		/* inlined frames first, named "F (inlined)", as text shows them */
		for (uint32_t i = 0; i < ni; i++) {
			b = jsonw_raw(w);
			buf_putc(b, '"');
			output_json_bytes(b, (const uint8_t *)inl[i], strlen(inl[i]));
			buf_puts(b, " (inlined)\"");
		}
		b = jsonw_raw(w);
		buf_putc(b, '"');
		output_frame(o, b, ev->pid, ev->stack[k], k, true, false);
		buf_putc(b, '"');
	}
	jsonw_end_array(w);
}

/*
 * Opens the object and writes "ts_ns", "pid", "tid", "goid", "comm" and
 * "func" of `ev`: e->ev, or a call's entry in the call view; comm is
 * e->comm.
 */
static void json_head(struct jsonw *w, const struct report_event *e,
		      const struct gtr_probe *p, const struct gtr_event *ev)
{
	jsonw_start_object(w);
	jsonw_uint_field(w, "ts_ns", ev->ts_ns);
	if (e->host)
		jsonw_string_field(w, "host", e->host);
	jsonw_uint_field(w, "pid", ev->pid);
	jsonw_uint_field(w, "tid", ev->tid);
	jsonw_uint_field(w, "goid", ev->goid);
	jsonw_string_field(w, "comm", e->comm ? e->comm : "");
	if (p && p->func)
		jsonw_string_field(w, "func", p->func);
	else
		jsonw_null_field(w, "func");
}

void out_json_site(struct jsonw *w, const struct gtr_probe *p)
{
	if (p && p->inlined_into && p->inlined_into[0])
		jsonw_string_field(w, "inlined_into", p->inlined_into);
	if (p && p->call_site && p->call_site[0])
		jsonw_string_field(w, "call_site", p->call_site);
	if (p && p->line && p->line[0])
		jsonw_string_field(w, "line", p->line);
}

static void jsonl_event(const struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;
	struct jsonw w;

	jsonw_init(&w, b, JSON_ESC_JS);
	json_head(&w, e, e->probe, ev);
	jsonw_string_field(&w, "kind", ev->kind == GTR_KIND_RETURN ? "return" : "entry");
	jsonw_uint_field(&w, "probe", ev->probe_id);
	out_json_site(&w, e->probe);
	if (ev->kind == GTR_KIND_RETURN) {
		if (e->entry)
			jsonw_uint_field(&w, "latency_ns", e->latency_ns);
		else
			jsonw_null_field(&w, "latency_ns");
	}
	/* a return's own values are its results: same keys as an entry's */
	out_json_values(&w, "goargs", "args", e->probe, ev);
	out_json_stack(o, &w, ev);
	jsonw_end_object(&w);
	buf_putc(b, '\n');
}

void output_jsonl_event(struct buf *b, const struct report_event *e)
{
	jsonl_event(NULL, b, e);
}

/* One call: `entry` or `ret` may be NULL; `status` as spec/OUTPUT.md says. */
static void json_call(const struct output *o, struct buf *b, const struct report_event *e,
		      const struct gtr_event *entry, const struct gtr_probe *eprobe,
		      const struct gtr_event *ret, const char *status)
{
	const struct gtr_probe *p = eprobe ? eprobe : e->probe;
	struct jsonw w;

	jsonw_init(&w, b, JSON_ESC_JS);
	/* every field of the entry (comm: e->comm, see json_head) */
	json_head(&w, e, p, entry ? entry : e->ev);
	jsonw_string_field(&w, "kind", "call");
	jsonw_uint_field(&w, "probe", entry ? entry->probe_id : e->ev->probe_id);
	out_json_site(&w, p);
	jsonw_string_field(&w, "status", status);
	if (entry && ret)
		jsonw_uint_field(&w, "latency_ns", e->latency_ns);
	else
		jsonw_null_field(&w, "latency_ns");
	out_json_values(&w, "goargs", "args", eprobe, entry);
	out_json_values(&w, "goret", "rets", ret ? e->probe : NULL, ret);
	out_json_stack(o, &w, out_call_stack(entry, ret));
	jsonw_end_object(&w);
	buf_putc(b, '\n');
}

static int jsonl_put(struct output *o, struct buf *b, const struct report_event *e)
{
	const struct gtr_event *ev = e->ev;

	if (!o->o.calls) {
		jsonl_event(o, b, e);
		return 1;
	}
	/* the call view: a line per return, and per entry that gets none */
	if (ev->kind != GTR_KIND_RETURN) {
		if (e->tracked)
			return 0;
		json_call(o, b, e, ev, e->probe, NULL, e->unpaired ? "unpaired" :
			  e->untracked ? "not_tracked" : "no_return_probe");
		return 1;
	}
	json_call(o, b, e, e->entry, e->entry_probe, ev, e->entry ? "returned" :
		  e->lost ? "lost" : e->unpaired ? "unpaired" : "no_entry");
	return 1;
}

static int jsonl_put_open(struct output *o, struct buf *b, const struct report_event *e,
			  uint64_t end_ns, const char *status)
{
	/* an open call is shown from its entry, e->ev (never NULL: pairing
	 * rebuilds it); checked so that json_call() has one to show */
	if (!o->o.calls || !e->ev)
		return 0;
	json_call(o, b, e, e->ev, e->probe, NULL, status);
	return 1;
}

const struct output_format out_jsonl = {
	.name = "jsonl",
	.flags = OUTPUT_F_CALLS,
	.put = jsonl_put,
	.put_open = jsonl_put_open,
};
