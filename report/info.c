/* SPDX-License-Identifier: MIT */
/*
 * gotrace-report info: reads a trace file once and prints every piece of
 * metadata libgtr exposes, the events per probe, the time range (monotonic
 * and wall clock), losses, the summary and what was damaged or skipped.
 * Text for people, or one JSON object (--json) that tests compare with an
 * independent reader (tests/e2e/gtr_reader.py).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gtr.h"
#include "buf.h"
#include "info.h"
#include "json.h"
#include "map.h"
#include "output.h"

#define PROG "gotrace-report"
#define MAX_IDS 65536u   /* distinct probe ids counted; others go to "other" */

struct idn {
	uint32_t id;
	uint64_t n;
};

/* Events per probe id, in the order the ids were met. */
struct counts {
	struct u64map ix;     /* id -> index in v */
	struct idn *v;
	uint32_t len, cap;
	uint64_t other;       /* events of ids beyond MAX_IDS distinct ones,
				 or that found no memory */
};

static void count_add(struct counts *c, uint32_t id)
{
	/* nothing counted yet: nothing to look up (and v is NULL) */
	const uint32_t *i = c->len ? u64map_get(&c->ix, id) : NULL;

	if (i) {
		c->v[*i].n = gtr_add_sat(c->v[*i].n, 1);
		return;
	}
	if (c->len == c->cap) {
		const uint32_t cap = c->cap ? c->cap * 2 : 256;
		struct idn *v = c->len < MAX_IDS ? realloc(c->v, cap * sizeof(*v)) : NULL;
		if (!v) {
			c->other = gtr_add_sat(c->other, 1);
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	if (u64map_put(&c->ix, id, c->len, MAX_IDS)) {
		c->other = gtr_add_sat(c->other, 1);
		return;
	}
	c->v[c->len++] = (struct idn){ id, 1 };
}

static void count_free(struct counts *c)
{
	u64map_free(&c->ix);
	free(c->v);
}

static int idn_cmp(const void *a, const void *b)
{
	const struct idn *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The counts as an array sorted by id (to free); *len entries. */
static struct idn *count_sorted(const struct counts *c, uint32_t *len)
{
	struct idn *v = malloc((c->len ? c->len : 1) * sizeof(*v));

	if (!v) {
		*len = 0;
		return NULL;
	}
	if (c->len)
		memcpy(v, c->v, c->len * sizeof(*v));
	qsort(v, c->len, sizeof(*v), idn_cmp);
	*len = c->len;
	return v;
}

/* ------------------------------------------------------------- output helpers */

/* "2024-01-02T03:04:05.123456789Z" for ns since 1970 UTC. */
static void utc(char *buf, size_t len, uint64_t ns)
{
	const time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(ns % 1000000000u));
}

/*
 * `s` as text is shown everywhere else (output_text_bytes(): controls,
 * invalid UTF-8 and terminal-confusing code points escaped), so that no
 * string from a file reaches a terminal raw. The result lives until the
 * eighth call after.
 */
static const char *tx(const char *s)
{
	static struct buf ring[8];
	static unsigned k;
	struct buf *b = &ring[k++ % 8];

	buf_reset(b);
	output_text_bytes(b, (const uint8_t *)s, strlen(s), false);
	return buf_cstr(b);
}

/* One of the words gotrace-record writes in a source field, or "?" (the
 * file's text is never printed raw to a terminal). */
static const char *source_word(const char *s)
{
	static const char *const known[] = {
		"buildinfo", "runtime.buildVersion", "DWARF", "table", "derived", "g",
		"signature", "raw",
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, known[i]))
			return known[i];
	return "?";
}

/* ------------------------------------------------------------- reading */

struct stats {
	struct counts per_probe;
	uint64_t events, drops, drop_records, suppressed;
	bool any;
	uint64_t first_ts, last_ts;
	int rc;            /* negative: reading ended on an error */
};

static void read_all(struct gtr_reader *r, struct stats *st)
{
	static struct gtr_event ev;
	struct gtr_drop d;

	for (;;) {
		const int it = gtr_reader_next(r, &ev, &d);
		if (it <= 0) {
			st->rc = it;
			return;
		}
		if (it == GTR_ITEM_EVENT) {
			st->events = gtr_add_sat(st->events, 1);
			count_add(&st->per_probe, ev.probe_id);
			if (!st->any || ev.ts_ns < st->first_ts)
				st->first_ts = ev.ts_ns;
			if (!st->any || ev.ts_ns > st->last_ts)
				st->last_ts = ev.ts_ns;
			st->any = true;
		} else if (it == GTR_ITEM_DROP) {
			if (d.reason == GTR_DROP_RATE)
				st->suppressed = gtr_add_sat(st->suppressed, d.count);
			else
				st->drops = gtr_add_sat(st->drops, d.count);
			st->drop_records = gtr_add_sat(st->drop_records, 1);
		}
	}
}

/* ------------------------------------------------------------- JSON */

static void json_clock(struct jsonw *w, uint64_t mono, uint64_t real, uint64_t boot)
{
	jsonw_start_object(w);
	jsonw_uint_field(w, "monotonic_ns", mono);
	jsonw_uint_field(w, "realtime_ns", real);
	jsonw_uint_field(w, "boottime_ns", boot);
	jsonw_end_object(w);
}

/* "k": v, or null when v is UINT32_MAX (none). */
static void json_id_or_null(struct jsonw *w, const char *k, uint32_t v)
{
	if (v == UINT32_MAX)
		jsonw_null_field(w, k);
	else
		jsonw_uint_field(w, k, v);
}

/* [[a,b],...] of two parallel arrays. */
static void json_pairs(struct jsonw *w, const uint32_t *a, const uint64_t *b, uint32_t n)
{
	jsonw_start_array(w);
	for (uint32_t i = 0; i < n; i++) {
		jsonw_start_array(w);
		jsonw_uint(w, a[i]);
		jsonw_uint(w, b[i]);
		jsonw_end_array(w);
	}
	jsonw_end_array(w);
}

/* One host: its names and its start anchor. */
static void json_host_object(struct jsonw *w, const struct gtr_host *h)
{
	jsonw_start_object(w);
	jsonw_string_field(w, "hostname", h->hostname);
	jsonw_string_field(w, "kernel", h->kernel);
	jsonw_string_field(w, "machine", h->machine);
	jsonw_string_field(w, "recorder", h->recorder);
	jsonw_name(w, "clocks");
	json_clock(w, h->start_mono_ns, h->start_realtime_ns, h->start_boottime_ns);
	if (h->redacted && h->redacted[0])   /* spec/REDACT.md */
		jsonw_string_field(w, "redacted", h->redacted);
	jsonw_end_object(w);
}

static void json_host(struct jsonw *w, struct gtr_reader *r)
{
	jsonw_name(w, "host");
	json_host_object(w, gtr_reader_host(r));
	if (gtr_reader_nhosts(r) > 1) {     /* a merged file: every host, by index */
		jsonw_name(w, "hosts");
		jsonw_start_array(w);
		for (uint32_t i = 0; i < gtr_reader_nhosts(r); i++) {
			const struct gtr_host *h = gtr_reader_host_at(r, i);
			if (h)
				json_host_object(w, h);
			else
				jsonw_null(w);
		}
		jsonw_end_array(w);
	}

	jsonw_name(w, "clock_samples");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < gtr_reader_nclocks(r); i++) {
		const struct gtr_clock_sample *c = gtr_reader_clock_at(r, i);
		json_clock(w, c->monotonic_ns, c->realtime_ns, c->boottime_ns);
	}
	jsonw_end_array(w);
}

static void json_binaries(struct jsonw *w, struct gtr_reader *r)
{
	jsonw_name(w, "binaries");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++) {
		const struct gtr_binary *b = gtr_reader_binary_at(r, i);
		jsonw_start_object(w);
		jsonw_uint_field(w, "id", b->id);
		jsonw_string_field(w, "path", b->path);
		jsonw_string_field(w, "build_id", b->build_id);
		jsonw_string_field(w, "go_build_id", b->go_build_id);
		jsonw_string_field(w, "go_version", b->go_version);
		jsonw_string_field(w, "compiler", b->compiler);
		jsonw_string_field(w, "arch", b->arch);
		jsonw_string_field(w, "abi", b->abi);
		jsonw_bool_field(w, "pie", b->pie);
		jsonw_bool_field(w, "stripped", b->stripped);
		jsonw_bool_field(w, "dwarf", b->has_dwarf);
		jsonw_string_field(w, "go_version_source", b->go_version_source);
		if (b->goid_offset >= 0)
			jsonw_uint_field(w, "goid_offset", (uint64_t)b->goid_offset);
		else
			jsonw_null_field(w, "goid_offset");
		jsonw_string_field(w, "goid_source", b->goid_source);
		jsonw_uint_field(w, "symbols", gtr_reader_nsymbols(r, b->id));
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static void json_probe(struct jsonw *w, const struct gtr_probe *p)
{
	jsonw_start_object(w);
	jsonw_uint_field(w, "id", p->id);
	jsonw_uint_field(w, "binary_id", p->binary_id);
	jsonw_string_field(w, "kind", gtr_kind_name(p->kind));
	jsonw_string_field(w, "func", p->func);
	jsonw_uint_field(w, "address", p->address);
	jsonw_string_field(w, "spec", p->spec);
	jsonw_string_field(w, "fmt", p->fmt);
	jsonw_string_field(w, "args_source", p->args_source);
	if (p->inlined_into[0])
		jsonw_string_field(w, "inlined_into", p->inlined_into);
	if (p->call_site[0])
		jsonw_string_field(w, "call_site", p->call_site);
	if (p->line[0])
		jsonw_string_field(w, "line", p->line);
	if (p->predicate[0])
		jsonw_string_field(w, "predicate", p->predicate);
	/* the limit, whichever key of the file gives it */
	if (gtr_probe_rate_limit(p))
		jsonw_uint_field(w, "rate_limit", gtr_probe_rate_limit(p));
	if (gtr_probe_rate_limit(p) && p->rate_window_kept) {
		jsonw_uint_field(w, "rate_window_ns", p->rate_window_ns);
		jsonw_uint_field(w, "rate_window_kept", p->rate_window_kept);
		jsonw_uint_field(w, "rate_window_last_ns", p->rate_window_last_ns);
	}
	if (p->whole_calls)
		jsonw_bool_field(w, "whole_calls", true);
	jsonw_name(w, "args");
	jsonw_start_array(w);
	for (uint32_t a = 0; a < p->nargs; a++) {
		jsonw_start_object(w);
		jsonw_string_field(w, "name", p->args[a].name);
		jsonw_string_field(w, "type_name", p->args[a].type_name);
		jsonw_string_field(w, "type", gtr_type_name(p->args[a].type));
		jsonw_uint_field(w, "size", p->args[a].size);
		if (p->args[a].redacted && p->args[a].redacted[0])
			jsonw_string_field(w, "redacted", p->args[a].redacted);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_name(w, "exprs");
	jsonw_start_array(w);
	for (uint32_t a = 0; a < p->nexprs; a++)
		jsonw_uint(w, p->exprs[a]);
	jsonw_end_array(w);
	jsonw_end_object(w);
}

/* Every symbol, per binary id that has any (binaries first, in order). */
static void json_symbols(struct jsonw *w, struct gtr_reader *r)
{
	char id_s[16];

	jsonw_name(w, "symbols");
	jsonw_start_object(w);
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++) {
		const uint32_t id = gtr_reader_binary_at(r, i)->id;
		const uint32_t n = gtr_reader_nsymbols(r, id);
		if (!n)
			continue;
		snprintf(id_s, sizeof(id_s), "%" PRIu32, id);
		jsonw_name(w, id_s);
		jsonw_start_array(w);
		for (uint32_t j = 0; j < n; j++) {
			const struct gtr_symbol *s = gtr_reader_symbol_at(r, id, j);
			jsonw_start_array(w);
			jsonw_uint(w, s->address);
			jsonw_uint(w, s->size);
			jsonw_string(w, s->name);
			jsonw_end_array(w);
		}
		jsonw_end_array(w);
	}
	jsonw_end_object(w);
}

static void json_processes(struct jsonw *w, struct gtr_reader *r)
{
	jsonw_name(w, "mappings");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < gtr_reader_nmappings(r); i++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(r, i);
		jsonw_start_object(w);
		jsonw_uint_field(w, "ts_ns", m->ts_ns);
		jsonw_uint_field(w, "pid", m->pid);
		jsonw_uint_field(w, "start", m->start);
		jsonw_uint_field(w, "end", m->end);
		jsonw_uint_field(w, "offset", m->offset);
		jsonw_uint_field(w, "vaddr", m->vaddr);
		json_id_or_null(w, "binary_id", m->binary_id);
		jsonw_string_field(w, "path", m->path);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);

	jsonw_name(w, "processes");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < gtr_reader_nprocesses(r); i++) {
		const struct gtr_process *p = gtr_reader_process_at(r, i);
		jsonw_start_object(w);
		jsonw_uint_field(w, "ts_ns", p->ts_ns);
		jsonw_uint_field(w, "pid", p->pid);
		json_id_or_null(w, "binary_id", p->binary_id);
		jsonw_string_field(w, "comm", p->comm);
		jsonw_bool_field(w, "exited", p->exited);
		if (p->exited && p->exit_code == GTR_EXIT_UNKNOWN)
			jsonw_null_field(w, "exit_code");
		else
			jsonw_int_field(w, "exit_code", p->exited ? p->exit_code : 0);
		if (p->host)      /* a merged file */
			jsonw_uint_field(w, "host", p->host);
		if (p->host_pid)
			jsonw_uint_field(w, "host_pid", p->host_pid);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

/* Events, per probe, the time range they span, drops and losses. */
static void json_events(struct jsonw *w, struct gtr_reader *r, const struct stats *st)
{
	char t[64];
	uint32_t n;
	struct idn *v = count_sorted(&st->per_probe, &n);

	jsonw_uint_field(w, "events", st->events);
	jsonw_name(w, "events_per_probe");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < n; i++) {
		jsonw_start_array(w);
		jsonw_uint(w, v[i].id);
		jsonw_uint(w, v[i].n);
		jsonw_end_array(w);
	}
	jsonw_end_array(w);
	free(v);

	jsonw_name(w, "time_range");
	if (!st->any) {
		jsonw_null(w);
	} else {
		uint64_t r0 = 0, r1 = 0;
		jsonw_start_object(w);
		jsonw_uint_field(w, "first_ts_ns", st->first_ts);
		jsonw_uint_field(w, "last_ts_ns", st->last_ts);
		if (!gtr_reader_realtime(r, st->first_ts, &r0) &&
		    !gtr_reader_realtime(r, st->last_ts, &r1)) {
			jsonw_uint_field(w, "first_realtime_ns", r0);
			jsonw_uint_field(w, "last_realtime_ns", r1);
			utc(t, sizeof(t), r0);
			jsonw_string_field(w, "first_utc", t);
			utc(t, sizeof(t), r1);
			jsonw_string_field(w, "last_utc", t);
		}
		jsonw_end_object(w);
	}

	jsonw_uint_field(w, "drops", st->drops);
	jsonw_uint_field(w, "suppressed", st->suppressed);
	jsonw_name(w, "losses");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < gtr_reader_nlosses(r); i++) {
		const struct gtr_loss *l = gtr_reader_loss_at(r, i);
		jsonw_start_object(w);
		json_id_or_null(w, "probe", l->probe_id);
		json_id_or_null(w, "cpu", l->cpu);
		jsonw_uint_field(w, "count", l->count);
		jsonw_string_field(w, "reason", l->reason == GTR_DROP_RATE ? "rate-limit" : "lost");
		jsonw_uint_field(w, "first_ns", l->first_ns);
		jsonw_uint_field(w, "last_ns", l->last_ns);
		jsonw_uint_field(w, "records", l->records);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

/* The summary, damage and what went over the reader's limits. */
static void json_tail(struct jsonw *w, struct gtr_reader *r, const struct stats *st)
{
	const struct gtr_summary *s = gtr_reader_summary(r);
	const struct gtr_overflow *o = gtr_reader_overflow(r);

	jsonw_name(w, "summary");
	if (!s->present) {
		jsonw_null(w);
	} else {
		jsonw_start_object(w);
		jsonw_uint_field(w, "events", s->events);
		jsonw_uint_field(w, "drops", s->drops);
		jsonw_uint_field(w, "suppressed", s->suppressed);
		jsonw_uint_field(w, "first_ts_ns", s->first_ts_ns);
		jsonw_uint_field(w, "last_ts_ns", s->last_ts_ns);
		jsonw_uint_field(w, "frames", s->nframes);
		jsonw_bool_field(w, "frames_truncated", s->frames_truncated);
		jsonw_name(w, "probes");
		json_pairs(w, s->probe_ids, s->probe_events, s->nprobes);
		jsonw_end_object(w);
	}

	jsonw_uint_field(w, "damage", gtr_reader_damage(r));
	jsonw_bool_field(w, "truncated", gtr_reader_truncated(r));
	jsonw_uint_field(w, "skipped", gtr_reader_skipped(r));
	jsonw_name(w, "overflow");
	jsonw_start_object(w);
	jsonw_uint_field(w, "symbols", o->symbols);
	jsonw_uint_field(w, "mappings", o->mappings);
	jsonw_uint_field(w, "processes", o->processes);
	jsonw_uint_field(w, "clocks", o->clocks);
	jsonw_uint_field(w, "losses", o->losses);
	jsonw_uint_field(w, "summary_probes", o->summary_probes);
	jsonw_uint_field(w, "event_probe_ids", st->per_probe.other);
	jsonw_end_object(w);
	jsonw_string_field(w, "message", gtr_reader_error(r));
}

/* Adds the JSON Pointer built from fmt to the array when n is at UINT64_MAX. */
static void json_sat(struct jsonw *w, uint64_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void json_sat(struct jsonw *w, uint64_t n, const char *fmt, ...)
{
	char ptr[64];
	va_list ap;

	if (n != UINT64_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(ptr, sizeof(ptr), fmt, ap);
	va_end(ap);
	jsonw_string(w, ptr);
}

/*
 * "saturated": the JSON Pointers (RFC 6901) of the counts above that stand
 * at 2^64-1, in document order. Counts add up saturating (gtr_add_sat()),
 * so such a count says "at least this many" (text prints "at least N").
 */
static void json_saturated(struct jsonw *w, struct gtr_reader *r, const struct stats *st)
{
	const struct gtr_summary *s = gtr_reader_summary(r);
	uint32_t n;
	struct idn *v = count_sorted(&st->per_probe, &n);

	jsonw_name(w, "saturated");
	jsonw_start_array(w);
	json_sat(w, st->events, "/events");
	for (uint32_t i = 0; i < n; i++)
		json_sat(w, v[i].n, "/events_per_probe/%" PRIu32 "/1", i);
	free(v);
	json_sat(w, st->drops, "/drops");
	json_sat(w, st->suppressed, "/suppressed");
	for (uint32_t i = 0; i < gtr_reader_nlosses(r); i++) {
		const struct gtr_loss *l = gtr_reader_loss_at(r, i);
		json_sat(w, l->count, "/losses/%" PRIu32 "/count", i);
		json_sat(w, l->records, "/losses/%" PRIu32 "/records", i);
	}
	if (s->present) {
		json_sat(w, s->events, "/summary/events");
		json_sat(w, s->drops, "/summary/drops");
		json_sat(w, s->suppressed, "/summary/suppressed");
		for (uint32_t i = 0; i < s->nprobes; i++)
			json_sat(w, s->probe_events[i], "/summary/probes/%" PRIu32 "/1", i);
	}
	jsonw_end_array(w);
}

static void print_json(FILE *f, const char *path, struct gtr_reader *r,
		       const struct stats *st)
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	unsigned maj, min;

	jsonw_init(&w, &b, JSON_ESC_FFFD);
	gtr_reader_version(r, &maj, &min);
	jsonw_start_object(&w);
	jsonw_string_field(&w, "file", path);
	jsonw_name(&w, "format");
	jsonw_start_array(&w);
	jsonw_uint(&w, maj);
	jsonw_uint(&w, min);
	jsonw_end_array(&w);
	json_host(&w, r);
	json_binaries(&w, r);
	jsonw_name(&w, "probes");
	jsonw_start_array(&w);
	for (uint32_t i = 0; i < gtr_reader_nprobes(r); i++)
		json_probe(&w, gtr_reader_probe_at(r, i));
	jsonw_end_array(&w);
	json_symbols(&w, r);
	json_processes(&w, r);
	json_events(&w, r, st);
	json_tail(&w, r, st);
	json_saturated(&w, r, st);
	jsonw_end_object(&w);
	buf_putc(&b, '\n');
	fwrite(b.data, 1, b.len, f);
	buf_free(&b);
}

/* ------------------------------------------------------------- text */

static const struct gtr_binary *binary_of(struct gtr_reader *r, uint32_t id)
{
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++)
		if (gtr_reader_binary_at(r, i)->id == id)
			return gtr_reader_binary_at(r, i);
	return NULL;
}

/* File, format, host, clocks and the time range of the events. */
static void text_head(FILE *f, const char *path, struct gtr_reader *r,
		      const struct stats *st)
{
	unsigned maj, min;
	char a[64], b[64];

	gtr_reader_version(r, &maj, &min);
	const struct gtr_host *h = gtr_reader_host(r);
	fprintf(f, "file:        %s\n", strcmp(path, "-") ? tx(path) : "standard input");
	fprintf(f, "format:      %u.%u\n", maj, min);
	fprintf(f, "host:        %s (%s %s), recorded by %s\n", h->hostname[0] ? tx(h->hostname) : "?",
		h->kernel[0] ? tx(h->kernel) : "?", h->machine[0] ? tx(h->machine) : "?",
		h->recorder[0] ? tx(h->recorder) : "?");
	if (h->redacted && h->redacted[0])
		fprintf(f, "redacted:    %s (spec/REDACT.md)\n", tx(h->redacted));
	for (uint32_t i = 1; i < gtr_reader_nhosts(r); i++) {   /* a merged file */
		const struct gtr_host *p = gtr_reader_host_at(r, i);
		if (!p)
			continue;
		fprintf(f, "host %-7u%s (%s %s), recorded by %s", i,
			p->hostname[0] ? tx(p->hostname) : "?", p->kernel[0] ? tx(p->kernel) : "?",
			p->machine[0] ? tx(p->machine) : "?", p->recorder[0] ? tx(p->recorder) : "?");
		if (p->start_realtime_ns) {   /* one entry per recording: which one */
			utc(a, sizeof(a), p->start_realtime_ns);
			fprintf(f, ", started %s", a);
		}
		fputc('\n', f);
	}
	if (h->start_realtime_ns) {
		utc(a, sizeof(a), h->start_realtime_ns);
		fprintf(f, "started:     %s (monotonic %" PRIu64 ".%09" PRIu64 " s)\n", a,
			h->start_mono_ns / 1000000000u, h->start_mono_ns % 1000000000u);
	}
	fprintf(f, "clocks:      %" PRIu32 " sample%s after the start anchor\n",
		gtr_reader_nclocks(r), gtr_reader_nclocks(r) == 1 ? "" : "s");
	if (st->any) {
		uint64_t r0, r1;
		const double secs = (double)(st->last_ts - st->first_ts) / 1e9;
		if (!gtr_reader_realtime(r, st->first_ts, &r0) &&
		    !gtr_reader_realtime(r, st->last_ts, &r1)) {
			utc(a, sizeof(a), r0);
			utc(b, sizeof(b), r1);
			fprintf(f, "time range:  %s .. %s (%.6f s)\n", a, b, secs);
		} else {
			fprintf(f, "time range:  monotonic %" PRIu64 " .. %" PRIu64 " ns (%.6f s; no wall-clock anchor)\n",
				st->first_ts, st->last_ts, secs);
		}
	} else {
		fprintf(f, "time range:  no events\n");
	}
}

/* Each binary: its facts, and where its Go version and goid offset came from. */
static void text_binaries(FILE *f, struct gtr_reader *r)
{
	fprintf(f, "binaries:    %" PRIu32 "\n", gtr_reader_nbinaries(r));
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++) {
		const struct gtr_binary *bi = gtr_reader_binary_at(r, i);
		fprintf(f, "  [%" PRIu32 "] %s\n", bi->id, tx(bi->path));
		fprintf(f, "      build id %s, Go %s, compiler %s, %s, ABI %s%s%s%s, %" PRIu32 " symbols\n",
			bi->build_id[0] ? tx(bi->build_id) : "(none)",
			bi->go_version[0] ? tx(bi->go_version) : "(unknown)",
			bi->compiler[0] ? tx(bi->compiler) : "?", bi->arch[0] ? tx(bi->arch) : "?",
			bi->abi[0] ? tx(bi->abi) : "?", bi->pie ? ", PIE" : "",
			bi->stripped ? ", stripped" : "", bi->has_dwarf ? ", DWARF" : "",
			gtr_reader_nsymbols(r, bi->id));
		if (bi->go_version_source[0])
			fprintf(f, "      Go version from %s\n", source_word(bi->go_version_source));
		if (bi->goid_offset >= 0)
			fprintf(f, "      goroutine ids from runtime.g+%" PRId32 " (offset from %s)\n",
				bi->goid_offset, source_word(bi->goid_source));
		else if (!strcmp(bi->goid_source, "g"))
			fprintf(f, "      goroutine ids unknown (no goid offset): goid is the goroutine's g address\n");
		else if (!strcmp(bi->compiler, "gc") || !strcmp(bi->compiler, "gccgo"))
			fprintf(f, "      goroutine ids not recorded (goid 0): calls are paired by thread\n");
	}
}

/* Each probe with its events, then the events of probes not described. */
static void text_probes(FILE *f, struct gtr_reader *r, const struct stats *st)
{
	uint32_t n;
	struct idn *v = count_sorted(&st->per_probe, &n);
	fprintf(f, "probes:      %" PRIu32 "\n", gtr_reader_nprobes(r));
	for (uint32_t i = 0; i < gtr_reader_nprobes(r); i++) {
		const struct gtr_probe *p = gtr_reader_probe_at(r, i);
		const struct idn key = { p->id, 0 };
		const struct idn *hit = n ? bsearch(&key, v, n, sizeof(*v), idn_cmp) : NULL;
		const uint64_t cnt = hit ? hit->n : 0;
		const struct gtr_binary *bi = binary_of(r, p->binary_id);
		fprintf(f, "  [%" PRIu32 "] %s %s in %s: %s%" PRIu64 " events\n", p->id, tx(p->func),
			gtr_kind_name(p->kind), bi ? tx(bi->path) : "?", output_at_least(cnt), cnt);
		if (p->inlined_into[0])
			fprintf(f, "      an inlined copy in %s%s%s (no return: no latency)\n",
				tx(p->inlined_into), p->call_site[0] ? " at " : "",
				tx(p->call_site));
		if (p->line[0])
			fprintf(f, "      line %s\n", tx(p->line));
		if (p->predicate[0])
			fprintf(f, "      record-time predicate (%s): events it did not hold "
				"for were never written\n", tx(p->predicate));
		if (p->whole_calls)
			fprintf(f, "      whole calls: kept the returns of the calls the entry "
				"probe of %s kept, and no others\n", tx(p->func));
		else if (gtr_probe_rate_limit(p) && p->rate_window_kept)
			fprintf(f, "      rate limit %" PRIu64 " events per second (windows "
				"known: an earlier file of the rotation kept %" PRIu64
				" in the window current when this one began)\n",
				gtr_probe_rate_limit(p), p->rate_window_kept);
		else if (p->rate_window_limit)
			fprintf(f, "      rate limit %" PRIu64 " events per second (windows "
				"known: the earlier files of the rotation kept none)\n",
				p->rate_window_limit);
		else if (p->rate_limit)
			fprintf(f, "      rate limit %" PRIu64 " events per second (windows "
				"known from the start of the recording)\n", p->rate_limit);
		if (p->fmt[0])
			fprintf(f, "      format \"%s\"\n", tx(p->fmt));
		if (p->args_source[0])
			fprintf(f, "      arguments from %s\n", source_word(p->args_source));
		for (uint32_t a2 = 0; a2 < p->nargs; a2++)
			fprintf(f, "      %s %s (%s, %" PRIu32 " bytes)%s%s\n",
				p->args[a2].name[0] ? tx(p->args[a2].name) : "_",
				p->args[a2].type_name[0] ? tx(p->args[a2].type_name) : "?",
				gtr_type_name(p->args[a2].type), p->args[a2].size,
				p->args[a2].redacted[0] ? ", redacted: " : "", tx(p->args[a2].redacted));
	}
	for (uint32_t j = 0; j < n; j++)
		if (!gtr_reader_probe(r, v[j].id))
			fprintf(f, "  [%" PRIu32 "] (not described in the file): %s%" PRIu64 " events\n",
				v[j].id, output_at_least(v[j].n), v[j].n);
	free(v);
}

/* Events lost or suppressed, in all and per loss entry. */
static void text_losses(FILE *f, struct gtr_reader *r, const struct stats *st)
{
	char a[64], b[64];

	fprintf(f, "events:      %s%" PRIu64 "\n", output_at_least(st->events), st->events);
	fprintf(f, "processes:   %" PRIu32 " records; mappings: %" PRIu32 "\n",
		gtr_reader_nprocesses(r), gtr_reader_nmappings(r));
	for (uint32_t i = 0; i < gtr_reader_nprocesses(r); i++) {   /* a merged file */
		const struct gtr_process *p = gtr_reader_process_at(r, i);
		const struct gtr_host *h = gtr_reader_host_at(r, p->host);
		if (p->host_pid && !p->exited)
			fprintf(f, "  pid %" PRIu32 " is pid %" PRIu32 " on host %" PRIu32 " (%s)\n",
				p->pid, p->host_pid, p->host, h && h->hostname[0] ? tx(h->hostname) : "?");
	}

	fprintf(f, "lost:        %s%" PRIu64 " events in %s%" PRIu64 " drop records\n",
		output_at_least(st->drops), st->drops, output_at_least(st->drop_records),
		st->drop_records);
	if (st->suppressed)
		fprintf(f, "suppressed:  %s%" PRIu64 " events by the recorder's --rate-limit\n",
			output_at_least(st->suppressed), st->suppressed);
	for (uint32_t i = 0; i < gtr_reader_nlosses(r); i++) {
		const struct gtr_loss *l = gtr_reader_loss_at(r, i);
		const struct gtr_probe *p = l->probe_id == UINT32_MAX ? NULL :
					    gtr_reader_probe(r, l->probe_id);
		char who[64], cpu[32];
		if (l->probe_id == UINT32_MAX)
			snprintf(who, sizeof(who), "all probes");
		else
			snprintf(who, sizeof(who), "probe %" PRIu32, l->probe_id);
		if (l->cpu == GTR_CPU_UNKNOWN)
			snprintf(cpu, sizeof(cpu), "all CPUs");
		else
			snprintf(cpu, sizeof(cpu), "CPU %" PRIu32, l->cpu);
		uint64_t r0, r1;
		if (!gtr_reader_realtime(r, l->first_ns, &r0) && !gtr_reader_realtime(r, l->last_ns, &r1)) {
			utc(a, sizeof(a), r0);
			utc(b, sizeof(b), r1);
		} else {
			snprintf(a, sizeof(a), "monotonic %" PRIu64 " ns", l->first_ns);
			snprintf(b, sizeof(b), "%" PRIu64 " ns", l->last_ns);
		}
		fprintf(f, "  %s%s%s, %s: %s%" PRIu64 " %s between %s and %s\n", who,
			p ? " " : "", p ? tx(p->func) : "", cpu, output_at_least(l->count), l->count,
			l->reason == GTR_DROP_RATE ? "suppressed by --rate-limit" : "lost",
			a, b);
	}
}

/* The summary, damage, skipped blocks and what went over the limits. */
static void text_tail(FILE *f, struct gtr_reader *r, const struct stats *st)
{
	const struct gtr_summary *s = gtr_reader_summary(r);

	if (s->present)
		fprintf(f, "summary:     closed cleanly; %s%" PRIu64 " events, %s%" PRIu64 " lost, %" PRIu64 " frames indexed%s\n",
			output_at_least(s->events), s->events, output_at_least(s->drops), s->drops, s->nframes,
			s->frames_truncated ? " (index truncated)" : "");
	else if (gtr_reader_summary_damaged(r))
		fprintf(f, "summary:     damaged (the last block, the summary, fails its checksum; the recording was closed)\n");
	else
		fprintf(f, "summary:     none (the recording was not closed: crash, kill -9 or full disk)\n");

	const struct gtr_overflow *o = gtr_reader_overflow(r);
	fprintf(f, "damage:      ");
	if (!gtr_reader_damage(r) && !gtr_reader_truncated(r))
		fprintf(f, "none\n");
	else
		fprintf(f, "%" PRIu64 " damaged part%s skipped%s; last: %s\n", gtr_reader_damage(r),
			gtr_reader_damage(r) == 1 ? "" : "s",
			gtr_reader_truncated(r) ? ", file truncated" : "", tx(gtr_reader_error(r)));
	fprintf(f, "skipped:     %" PRIu64 " unknown block%s or record%s (newer format minor)\n",
		gtr_reader_skipped(r), gtr_reader_skipped(r) == 1 ? "" : "s",
		gtr_reader_skipped(r) == 1 ? "" : "s");
	if (o->symbols || o->mappings || o->processes || o->clocks || o->losses ||
	    o->summary_probes || st->per_probe.other)
		fprintf(f, "over limits: %s%" PRIu64 " symbols, %" PRIu64 " mappings, %" PRIu64
			" processes, %" PRIu64 " clock samples, %" PRIu64 " loss entries not kept\n",
			output_at_least(o->symbols), o->symbols, o->mappings, o->processes, o->clocks,
			o->losses);
}

static void print_text(FILE *f, const char *path, struct gtr_reader *r,
		       const struct stats *st)
{
	text_head(f, path, r, st);
	text_binaries(f, r);
	text_probes(f, r, st);
	text_losses(f, r, st);
	text_tail(f, r, st);
}

int report_info(const char *path, bool json, FILE *out)
{
	char err[768];
	struct stats st = { 0 };
	int ret = 1;

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	read_all(r, &st);
	if (st.rc < 0) {
		fprintf(stderr, PROG ": %s\n", gtr_reader_error(r)[0] ? gtr_reader_error(r)
								   : strerror(-st.rc));
		goto out;
	}
	if (json)
		print_json(out, path, r, &st);
	else
		print_text(out, path, r, &st);
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, PROG ": cannot write output: %s\n", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	count_free(&st.per_probe);
	gtr_reader_close(r);
	return ret;
}
