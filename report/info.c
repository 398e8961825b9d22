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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gtr.h"
#include "buf.h"
#include "info.h"
#include "output.h"

#define PROG "gotrace-report"
#define MAX_IDS 65536u   /* distinct probe ids counted; others go to "other" */

/* Events per probe id: a small open-addressing table. */
struct counts {
	uint32_t *ids;
	uint64_t *n;
	uint8_t *used;
	uint32_t cap, len;
	uint64_t other;   /* events of ids beyond MAX_IDS distinct ones */
};

static void count_add(struct counts *c, uint32_t id)
{
	if ((c->len + 1) * 2 > c->cap) {
		if (c->len >= MAX_IDS) {
			c->other++;
			return;
		}
		struct counts g = { .cap = c->cap ? c->cap * 2 : 256, .other = c->other };
		g.ids = malloc(g.cap * sizeof(*g.ids));
		g.n = malloc(g.cap * sizeof(*g.n));
		g.used = calloc(g.cap, 1);
		if (!g.ids || !g.n || !g.used) {
			free(g.ids);
			free(g.n);
			free(g.used);
			c->other++;
			return;
		}
		for (uint32_t i = 0; i < c->cap; i++) {
			if (!c->used[i])
				continue;
			uint32_t j = (c->ids[i] * 2654435761u) & (g.cap - 1);
			while (g.used[j])
				j = (j + 1) & (g.cap - 1);
			g.used[j] = 1;
			g.ids[j] = c->ids[i];
			g.n[j] = c->n[i];
		}
		g.len = c->len;
		free(c->ids);
		free(c->n);
		free(c->used);
		*c = g;
	}
	uint32_t j = (id * 2654435761u) & (c->cap - 1);
	while (c->used[j] && c->ids[j] != id)
		j = (j + 1) & (c->cap - 1);
	if (!c->used[j]) {
		c->used[j] = 1;
		c->ids[j] = id;
		c->n[j] = 0;
		c->len++;
	}
	c->n[j]++;
}

struct idn {
	uint32_t id;
	uint64_t n;
};

static int idn_cmp(const void *a, const void *b)
{
	const struct idn *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The table as an array sorted by id; *len entries. */
static struct idn *count_sorted(const struct counts *c, uint32_t *len)
{
	struct idn *v = malloc((c->len ? c->len : 1) * sizeof(*v));
	uint32_t k = 0;

	if (!v) {
		*len = 0;
		return NULL;
	}
	for (uint32_t i = 0; i < c->cap; i++)
		if (c->used[i])
			v[k++] = (struct idn){ c->ids[i], c->n[i] };
	qsort(v, k, sizeof(*v), idn_cmp);
	*len = k;
	return v;
}

/* ------------------------------------------------------------- output helpers */

/* A JSON string: escapes quotes, backslashes and controls; bytes that are
 * not UTF-8 (only a malformed file has them) become U+FFFD. */
static void jstr(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	while (*p) {
		const unsigned char c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc(c, f);
			p++;
		} else {
			int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
			if (c > 0xf4)
				n = 0;
			bool ok = n > 0;
			for (int i = 1; ok && i < n; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok && n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f)))
				ok = false;
			if (ok && n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)))
				ok = false;
			if (ok) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
			} else {
				fputs("\\ufffd", f);
				p++;
			}
		}
	}
	fputc('"', f);
}

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

static void jkey(FILE *f, bool *first, const char *k)
{
	fputs(*first ? "" : ",", f);
	*first = false;
	jstr(f, k);
	fputc(':', f);
}

static void ju64(FILE *f, bool *first, const char *k, uint64_t v)
{
	jkey(f, first, k);
	fprintf(f, "%" PRIu64, v);
}

static void jtext(FILE *f, bool *first, const char *k, const char *v)
{
	jkey(f, first, k);
	jstr(f, v);
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

static void jnull(FILE *f, bool *first, const char *k)
{
	jkey(f, first, k);
	fputs("null", f);
}

/* One of the words gotrace-record writes in a source field, or "?" (the
 * file's text is never printed raw to a terminal). */
static const char *source_word(const char *s)
{
	static const char *const known[] = {
		"buildinfo", "runtime.buildVersion", "DWARF", "table", "derived", "g",
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(s, known[i]))
			return known[i];
	return "?";
}

static void jbool(FILE *f, bool *first, const char *k, bool v)
{
	jkey(f, first, k);
	fputs(v ? "true" : "false", f);
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
			st->events++;
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
			st->drop_records++;
		}
	}
}

/* ------------------------------------------------------------- JSON */

static void json_clock(FILE *f, uint64_t mono, uint64_t real, uint64_t boot)
{
	bool k = true;

	fputc('{', f);
	ju64(f, &k, "monotonic_ns", mono);
	ju64(f, &k, "realtime_ns", real);
	ju64(f, &k, "boottime_ns", boot);
	fputc('}', f);
}

static void json_id_or_null(FILE *f, bool *first, const char *k, uint32_t v)
{
	jkey(f, first, k);
	if (v == UINT32_MAX)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu32, v);
}

static void print_json(FILE *f, const char *path, struct gtr_reader *r,
		       const struct stats *st)
{
	unsigned maj, min;
	bool k = true;
	char buf[64];

	gtr_reader_version(r, &maj, &min);
	fputc('{', f);
	jtext(f, &k, "file", path);
	jkey(f, &k, "format");
	fprintf(f, "[%u,%u]", maj, min);

	const struct gtr_host *h = gtr_reader_host(r);
	jkey(f, &k, "host");
	{
		bool k2 = true;
		fputc('{', f);
		jtext(f, &k2, "hostname", h->hostname);
		jtext(f, &k2, "kernel", h->kernel);
		jtext(f, &k2, "machine", h->machine);
		jtext(f, &k2, "recorder", h->recorder);
		jkey(f, &k2, "clocks");
		json_clock(f, h->start_mono_ns, h->start_realtime_ns, h->start_boottime_ns);
		fputc('}', f);
	}

	jkey(f, &k, "clock_samples");
	fputc('[', f);
	for (uint32_t i = 0; i < gtr_reader_nclocks(r); i++) {
		const struct gtr_clock_sample *c = gtr_reader_clock_at(r, i);
		fputs(i ? "," : "", f);
		json_clock(f, c->monotonic_ns, c->realtime_ns, c->boottime_ns);
	}
	fputc(']', f);

	jkey(f, &k, "binaries");
	fputc('[', f);
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++) {
		const struct gtr_binary *b = gtr_reader_binary_at(r, i);
		bool k2 = true;
		fputs(i ? ",{" : "{", f);
		ju64(f, &k2, "id", b->id);
		jtext(f, &k2, "path", b->path);
		jtext(f, &k2, "build_id", b->build_id);
		jtext(f, &k2, "go_build_id", b->go_build_id);
		jtext(f, &k2, "go_version", b->go_version);
		jtext(f, &k2, "compiler", b->compiler);
		jtext(f, &k2, "arch", b->arch);
		jtext(f, &k2, "abi", b->abi);
		jbool(f, &k2, "pie", b->pie);
		jbool(f, &k2, "stripped", b->stripped);
		jbool(f, &k2, "dwarf", b->has_dwarf);
		jtext(f, &k2, "go_version_source", b->go_version_source);
		if (b->goid_offset >= 0)
			ju64(f, &k2, "goid_offset", (uint64_t)b->goid_offset);
		else
			jnull(f, &k2, "goid_offset");
		jtext(f, &k2, "goid_source", b->goid_source);
		ju64(f, &k2, "symbols", gtr_reader_nsymbols(r, b->id));
		fputc('}', f);
	}
	fputc(']', f);

	jkey(f, &k, "probes");
	fputc('[', f);
	for (uint32_t i = 0; i < gtr_reader_nprobes(r); i++) {
		const struct gtr_probe *p = gtr_reader_probe_at(r, i);
		bool k2 = true;
		fputs(i ? ",{" : "{", f);
		ju64(f, &k2, "id", p->id);
		ju64(f, &k2, "binary_id", p->binary_id);
		jtext(f, &k2, "kind", gtr_kind_name(p->kind));
		jtext(f, &k2, "func", p->func);
		ju64(f, &k2, "address", p->address);
		jtext(f, &k2, "spec", p->spec);
		jtext(f, &k2, "fmt", p->fmt);
		jkey(f, &k2, "args");
		fputc('[', f);
		for (uint32_t a = 0; a < p->nargs; a++) {
			bool k3 = true;
			fputs(a ? ",{" : "{", f);
			jtext(f, &k3, "name", p->args[a].name);
			jtext(f, &k3, "type_name", p->args[a].type_name);
			jtext(f, &k3, "type", gtr_type_name(p->args[a].type));
			ju64(f, &k3, "size", p->args[a].size);
			fputc('}', f);
		}
		fputc(']', f);
		jkey(f, &k2, "exprs");
		fputc('[', f);
		for (uint32_t a = 0; a < p->nexprs; a++)
			fprintf(f, "%s%" PRIu32, a ? "," : "", p->exprs[a]);
		fputs("]}", f);
	}
	fputc(']', f);

	/* every symbol, per binary id that has any (binaries first, in order) */
	jkey(f, &k, "symbols");
	fputc('{', f);
	{
		bool k2 = true;
		for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++) {
			const uint32_t id = gtr_reader_binary_at(r, i)->id;
			const uint32_t n = gtr_reader_nsymbols(r, id);
			if (!n)
				continue;
			snprintf(buf, sizeof(buf), "%" PRIu32, id);
			jkey(f, &k2, buf);
			fputc('[', f);
			for (uint32_t j = 0; j < n; j++) {
				const struct gtr_symbol *s = gtr_reader_symbol_at(r, id, j);
				fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",", j ? "," : "", s->address, s->size);
				jstr(f, s->name);
				fputc(']', f);
			}
			fputc(']', f);
		}
	}
	fputc('}', f);

	jkey(f, &k, "mappings");
	fputc('[', f);
	for (uint32_t i = 0; i < gtr_reader_nmappings(r); i++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(r, i);
		bool k2 = true;
		fputs(i ? ",{" : "{", f);
		ju64(f, &k2, "ts_ns", m->ts_ns);
		ju64(f, &k2, "pid", m->pid);
		ju64(f, &k2, "start", m->start);
		ju64(f, &k2, "end", m->end);
		ju64(f, &k2, "offset", m->offset);
		ju64(f, &k2, "vaddr", m->vaddr);
		json_id_or_null(f, &k2, "binary_id", m->binary_id);
		jtext(f, &k2, "path", m->path);
		fputc('}', f);
	}
	fputc(']', f);

	jkey(f, &k, "processes");
	fputc('[', f);
	for (uint32_t i = 0; i < gtr_reader_nprocesses(r); i++) {
		const struct gtr_process *p = gtr_reader_process_at(r, i);
		bool k2 = true;
		fputs(i ? ",{" : "{", f);
		ju64(f, &k2, "ts_ns", p->ts_ns);
		ju64(f, &k2, "pid", p->pid);
		json_id_or_null(f, &k2, "binary_id", p->binary_id);
		jtext(f, &k2, "comm", p->comm);
		jbool(f, &k2, "exited", p->exited);
		jkey(f, &k2, "exit_code");
		if (p->exited && p->exit_code == GTR_EXIT_UNKNOWN)
			fputs("null}", f);
		else
			fprintf(f, "%" PRId32 "}", p->exited ? p->exit_code : 0);
	}
	fputc(']', f);

	ju64(f, &k, "events", st->events);
	uint32_t n;
	struct idn *v = count_sorted(&st->per_probe, &n);
	jkey(f, &k, "events_per_probe");
	fputc('[', f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s[%" PRIu32 ",%" PRIu64 "]", i ? "," : "", v[i].id, v[i].n);
	fputc(']', f);
	free(v);

	jkey(f, &k, "time_range");
	if (!st->any) {
		fputs("null", f);
	} else {
		bool k2 = true;
		uint64_t r0 = 0, r1 = 0;
		fputc('{', f);
		ju64(f, &k2, "first_ts_ns", st->first_ts);
		ju64(f, &k2, "last_ts_ns", st->last_ts);
		if (!gtr_reader_realtime(r, st->first_ts, &r0) &&
		    !gtr_reader_realtime(r, st->last_ts, &r1)) {
			ju64(f, &k2, "first_realtime_ns", r0);
			ju64(f, &k2, "last_realtime_ns", r1);
			utc(buf, sizeof(buf), r0);
			jtext(f, &k2, "first_utc", buf);
			utc(buf, sizeof(buf), r1);
			jtext(f, &k2, "last_utc", buf);
		}
		fputc('}', f);
	}

	ju64(f, &k, "drops", st->drops);
	ju64(f, &k, "suppressed", st->suppressed);
	jkey(f, &k, "losses");
	fputc('[', f);
	for (uint32_t i = 0; i < gtr_reader_nlosses(r); i++) {
		const struct gtr_loss *l = gtr_reader_loss_at(r, i);
		bool k2 = true;
		fputs(i ? ",{" : "{", f);
		json_id_or_null(f, &k2, "probe", l->probe_id);
		json_id_or_null(f, &k2, "cpu", l->cpu);
		ju64(f, &k2, "count", l->count);
		jtext(f, &k2, "reason", l->reason == GTR_DROP_RATE ? "rate-limit" : "lost");
		ju64(f, &k2, "first_ns", l->first_ns);
		ju64(f, &k2, "last_ns", l->last_ns);
		ju64(f, &k2, "records", l->records);
		fputc('}', f);
	}
	fputc(']', f);

	const struct gtr_summary *s = gtr_reader_summary(r);
	jkey(f, &k, "summary");
	if (!s->present) {
		fputs("null", f);
	} else {
		bool k2 = true;
		fputc('{', f);
		ju64(f, &k2, "events", s->events);
		ju64(f, &k2, "drops", s->drops);
		ju64(f, &k2, "suppressed", s->suppressed);
		ju64(f, &k2, "first_ts_ns", s->first_ts_ns);
		ju64(f, &k2, "last_ts_ns", s->last_ts_ns);
		ju64(f, &k2, "frames", s->nframes);
		jbool(f, &k2, "frames_truncated", s->frames_truncated);
		jkey(f, &k2, "probes");
		fputc('[', f);
		for (uint32_t i = 0; i < s->nprobes; i++)
			fprintf(f, "%s[%" PRIu32 ",%" PRIu64 "]", i ? "," : "", s->probe_ids[i],
				s->probe_events[i]);
		fputs("]}", f);
	}

	ju64(f, &k, "damage", gtr_reader_damage(r));
	jbool(f, &k, "truncated", gtr_reader_truncated(r));
	ju64(f, &k, "skipped", gtr_reader_skipped(r));
	const struct gtr_overflow *o = gtr_reader_overflow(r);
	jkey(f, &k, "overflow");
	{
		bool k2 = true;
		fputc('{', f);
		ju64(f, &k2, "symbols", o->symbols);
		ju64(f, &k2, "mappings", o->mappings);
		ju64(f, &k2, "processes", o->processes);
		ju64(f, &k2, "clocks", o->clocks);
		ju64(f, &k2, "losses", o->losses);
		ju64(f, &k2, "summary_probes", o->summary_probes);
		ju64(f, &k2, "event_probe_ids", st->per_probe.other);
		fputc('}', f);
	}
	jtext(f, &k, "message", gtr_reader_error(r));
	fputs("}\n", f);
}

/* ------------------------------------------------------------- text */

static const struct gtr_binary *binary_of(struct gtr_reader *r, uint32_t id)
{
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++)
		if (gtr_reader_binary_at(r, i)->id == id)
			return gtr_reader_binary_at(r, i);
	return NULL;
}

static void print_text(FILE *f, const char *path, struct gtr_reader *r,
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
		else if (!strcmp(bi->compiler, "gc"))
			fprintf(f, "      goroutine ids not recorded (goid 0): calls are paired by thread\n");
	}

	uint32_t n;
	struct idn *v = count_sorted(&st->per_probe, &n);
	fprintf(f, "probes:      %" PRIu32 "\n", gtr_reader_nprobes(r));
	for (uint32_t i = 0; i < gtr_reader_nprobes(r); i++) {
		const struct gtr_probe *p = gtr_reader_probe_at(r, i);
		const struct idn key = { p->id, 0 };
		const struct idn *hit = n ? bsearch(&key, v, n, sizeof(*v), idn_cmp) : NULL;
		const uint64_t cnt = hit ? hit->n : 0;
		const struct gtr_binary *bi = binary_of(r, p->binary_id);
		fprintf(f, "  [%" PRIu32 "] %s %s in %s: %" PRIu64 " events\n", p->id, tx(p->func),
			gtr_kind_name(p->kind), bi ? tx(bi->path) : "?", cnt);
		if (p->fmt[0])
			fprintf(f, "      format \"%s\"\n", tx(p->fmt));
		for (uint32_t a2 = 0; a2 < p->nargs; a2++)
			fprintf(f, "      %s %s (%s, %" PRIu32 " bytes)\n",
				p->args[a2].name[0] ? tx(p->args[a2].name) : "_",
				p->args[a2].type_name[0] ? tx(p->args[a2].type_name) : "?",
				gtr_type_name(p->args[a2].type), p->args[a2].size);
	}
	for (uint32_t j = 0; j < n; j++)
		if (!gtr_reader_probe(r, v[j].id))
			fprintf(f, "  [%" PRIu32 "] (not described in the file): %" PRIu64 " events\n",
				v[j].id, v[j].n);
	free(v);
	fprintf(f, "events:      %" PRIu64 "\n", st->events);
	fprintf(f, "processes:   %" PRIu32 " records; mappings: %" PRIu32 "\n",
		gtr_reader_nprocesses(r), gtr_reader_nmappings(r));

	fprintf(f, "lost:        %s%" PRIu64 " events in %" PRIu64 " drop records\n",
		st->drops == UINT64_MAX ? "at least " : "", st->drops,
		st->drop_records);
	if (st->suppressed)
		fprintf(f, "suppressed:  %s%" PRIu64 " events by the recorder's --rate-limit\n",
			st->suppressed == UINT64_MAX ? "at least " : "", st->suppressed);
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
		fprintf(f, "  %s%s%s, %s: %" PRIu64 " %s between %s and %s\n", who,
			p ? " " : "", p ? tx(p->func) : "", cpu, l->count,
			l->reason == GTR_DROP_RATE ? "suppressed by --rate-limit" : "lost",
			a, b);
	}

	const struct gtr_summary *s = gtr_reader_summary(r);
	if (s->present)
		fprintf(f, "summary:     closed cleanly; %" PRIu64 " events, %" PRIu64 " lost, %" PRIu64 " frames indexed%s\n",
			s->events, s->drops, s->nframes,
			s->frames_truncated ? " (index truncated)" : "");
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
		fprintf(f, "over limits: %" PRIu64 " symbols, %" PRIu64 " mappings, %" PRIu64
			" processes, %" PRIu64 " clock samples, %" PRIu64 " loss entries not kept\n",
			o->symbols, o->mappings, o->processes, o->clocks, o->losses);
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
	free(st.per_probe.ids);
	free(st.per_probe.n);
	free(st.per_probe.used);
	gtr_reader_close(r);
	return ret;
}
