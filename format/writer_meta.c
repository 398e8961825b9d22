/* SPDX-License-Identifier: MIT */
/*
 * Metadata blocks of the writer: CBOR maps encoded by the field schemas
 * shared with the reader (schema.c), SYMBOLS compressed as one zstd frame,
 * and the SUMMARY block written at close. spec/FORMAT.md describes every
 * byte written here.
 */
#include <cbor.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer_internal.h"

static bool enc_reserve(struct enc *e, size_t n)
{
	if (e->oom)
		return false;
	if (e->cap - e->len >= n)
		return true;
	size_t cap = e->cap ? e->cap : 1024;
	while (cap - e->len < n)
		cap *= 2;
	uint8_t *p = realloc(e->p, cap);
	if (!p) {
		e->oom = true;
		return false;
	}
	e->p = p;
	e->cap = cap;
	return true;
}

static void e_uint(struct enc *e, uint64_t v)
{
	if (enc_reserve(e, 9))
		e->len += cbor_encode_uint(v, e->p + e->len, e->cap - e->len);
}

static void e_int(struct enc *e, int64_t v)
{
	if (!enc_reserve(e, 9))
		return;
	if (v >= 0)
		e->len += cbor_encode_uint((uint64_t)v, e->p + e->len, e->cap - e->len);
	else
		e->len += cbor_encode_negint(~(uint64_t)v, e->p + e->len, e->cap - e->len);
}

static void e_map(struct enc *e, size_t n)
{
	if (enc_reserve(e, 9))
		e->len += cbor_encode_map_start(n, e->p + e->len, e->cap - e->len);
}

static void e_array(struct enc *e, size_t n)
{
	if (enc_reserve(e, 9))
		e->len += cbor_encode_array_start(n, e->p + e->len, e->cap - e->len);
}

static void e_bool(struct enc *e, bool b)
{
	if (enc_reserve(e, 1))
		e->len += cbor_encode_bool(b, e->p + e->len, e->cap - e->len);
}

/* Text string: at most GTR_MAX_NAME bytes, invalid UTF-8 replaced by '?'. */
static void e_text(struct enc *e, const char *s)
{
	if (!s)
		s = "";
	const size_t n = strnlen(s, GTR_MAX_NAME);
	if (!enc_reserve(e, 9 + n))
		return;
	e->len += cbor_encode_string_start(n, e->p + e->len, e->cap - e->len);
	e->len += gtr_utf8_sanitize(e->p + e->len, s, n, n);
}

/* Whether field f of *base is written: not when it is GTR_F_OPTIONAL and
 * holds the value its absence means. */
static bool field_present(const struct gtr_field *f, const void *base)
{
	const void *v = (const char *)base + f->off;

	if (!(f->flags & GTR_F_OPTIONAL))
		return true;
	switch (f->kind) {
	case GTR_F_U64:
		return *(const uint64_t *)v != (uint64_t)f->absent;
	case GTR_F_U32:
		return *(const uint32_t *)v != (uint32_t)f->absent;
	case GTR_F_I32:
		return *(const int32_t *)v != (int32_t)f->absent;
	case GTR_F_BOOL:
		return *(const bool *)v != (f->absent != 0);
	case GTR_F_STR:   /* optional text: absent when "" */
		return *(const char *const *)v && **(const char *const *)v;
	default:
		return true;
	}
}

/* Number of fields of schema s that *base writes. */
static size_t e_count(const struct gtr_schema *s, const void *base)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += field_present(&s->fields[i], base);
	return n;
}

static void e_object(struct enc *e, const struct gtr_schema *s, const void *base);

/* The fields of schema s in *base, as keys and values in table order. */
static void e_fields(struct enc *e, const struct gtr_schema *s, const void *base)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct gtr_field *f = &s->fields[i];
		const void *v = (const char *)base + f->off;

		if (!field_present(f, base))
			continue;
		e_text(e, f->key);
		switch (f->kind) {
		case GTR_F_U64:
			e_uint(e, *(const uint64_t *)v);
			break;
		case GTR_F_U32:
			e_uint(e, *(const uint32_t *)v);
			break;
		case GTR_F_I32:
			e_int(e, *(const int32_t *)v);
			break;
		case GTR_F_BOOL:
			e_bool(e, *(const bool *)v);
			break;
		case GTR_F_STR:
			e_text(e, *(const char *const *)v);
			break;
		case GTR_F_TYPE:
			e_text(e, gtr_type_name(*(const enum gtr_type *)v));
			break;
		case GTR_F_KIND:
			e_text(e, gtr_kind_name(*(const enum gtr_kind *)v));
			break;
		case GTR_F_MAP:
			e_object(e, f->sub, v);
			break;
		}
	}
}

/* A map of the fields of schema s in *base. */
static void e_object(struct enc *e, const struct gtr_schema *s, const void *base)
{
	e_map(e, e_count(s, base));
	e_fields(e, s, base);
}

/*
 * Writes the metadata block encoded in w->meta. The pending events frame
 * goes first, so blocks and events stay in call order (spec "Order").
 */
static int write_meta(struct gtr_writer *w, uint32_t type)
{
	const int rc = wr_flush_frame(w);
	if (rc)
		return rc;
	if (w->meta.oom) {
		w->meta.oom = false;
		return wr_err(w, -ENOMEM, "out of memory encoding metadata for %s", w->path);
	}
	return wr_write_block(w, type, w->meta.p, w->meta.len);
}

int wr_write_host(struct gtr_writer *w, const struct gtr_host *h)
{
	struct enc *e = &w->meta;

	e->len = 0;
	e_map(e, 1 + e_count(&gtr_host_schema, h));
	e_text(e, "format");
	e_array(e, 2);
	e_uint(e, GTR_VERSION_MAJOR);
	e_uint(e, GTR_VERSION_MINOR);
	e_fields(e, &gtr_host_schema, h);
	return write_meta(w, GTR_BLOCK_HOST);
}

int gtr_writer_peer(struct gtr_writer *w, uint32_t index, const struct gtr_host *h)
{
	struct enc *e = &w->meta;
	struct gtr_peer p = { .h = *h, .index = index };

	if (w->failed)
		return w->failed;
	if (!index || index >= GTR_MAX_HOSTS)
		return wr_err(w, -EINVAL, "host index %u out of range 1..%u", index, GTR_MAX_HOSTS - 1);
	if (w->red)
		gtr_redact_host(w->red, &p.h);
	e->len = 0;
	e_object(e, &gtr_peer_schema, &p);
	return write_meta(w, GTR_BLOCK_PEER);
}

int gtr_writer_binary(struct gtr_writer *w, const struct gtr_binary *b)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	if (u64map_get(&w->binaries, b->id))
		return wr_err(w, -EEXIST, "binary id %u written twice to %s", b->id, w->path);
	if (u64map_put(&w->binaries, b->id, 0, UINT32_MAX))
		return wr_err(w, -ENOMEM, "out of memory");
	struct gtr_binary v = *b;
	if (w->red)
		v.path = gtr_redact_path(w->red, b->path);
	e->len = 0;
	e_object(e, &gtr_binary_schema, &v);
	return write_meta(w, GTR_BLOCK_BINARY);
}

int gtr_writer_probe(struct gtr_writer *w, const struct gtr_probe *in)
{
	struct enc *e = &w->meta;
	struct gtr_probe red;
	const struct gtr_probe *p = in;

	if (w->failed)
		return w->failed;
	if (w->red) {
		red = *in;
		p = &red;
		if (gtr_redact_probe(w->red, &red))
			return wr_err(w, -ENOMEM, "out of memory");
	}
	if (p->nargs > GTR_MAX_ARGS || p->nexprs > GTR_MAX_ARGS)
		return wr_err(w, -EINVAL, "probe %u (%s): %u arguments, %u expressions; at most %d each",
			      p->id, p->func ? p->func : "", p->nargs, p->nexprs, GTR_MAX_ARGS);
	for (uint32_t i = 0; i < p->nexprs; i++)
		if (p->exprs[i] >= p->nargs)
			return wr_err(w, -EINVAL, "probe %u (%s): expression %u names argument %u of %u",
				      p->id, p->func ? p->func : "", i, p->exprs[i], p->nargs);
	if (p->kind != GTR_KIND_ENTRY && p->kind != GTR_KIND_RETURN)
		return wr_err(w, -EINVAL, "probe %u: kind %d is neither entry nor return",
			      p->id, (int)p->kind);
	if (!u64map_get(&w->binaries, p->binary_id))
		return wr_err(w, -ENOENT, "probe %u (%s) names binary %u, not written to %s yet",
			      p->id, p->func ? p->func : "", p->binary_id, w->path);
	if (u64map_get(&w->probes, p->id))
		return wr_err(w, -EEXIST, "probe id %u written twice to %s", p->id, w->path);
	if (w->nprobes == w->probe_cap) {
		const uint32_t cap = w->probe_cap ? w->probe_cap * 2 : 64;
		uint32_t *ids = realloc(w->probe_ids, cap * sizeof(*ids));
		if (ids)
			w->probe_ids = ids;
		uint64_t *ev = realloc(w->probe_events, cap * sizeof(*ev));
		if (ev)
			w->probe_events = ev;
		uint32_t *im = realloc(w->probe_intmask, cap * sizeof(*im));
		if (im)
			w->probe_intmask = im;
		struct pstate *ps = realloc(w->pstates, cap * sizeof(*ps));
		if (ps)
			w->pstates = ps;
		if (!ids || !ev || !im || !ps)
			return wr_err(w, -ENOMEM, "out of memory");
		w->probe_cap = cap;
	}
	if (u64map_put(&w->probes, p->id, w->nprobes, UINT32_MAX))
		return wr_err(w, -ENOMEM, "out of memory");
	w->probe_ids[w->nprobes] = p->id;
	w->probe_events[w->nprobes] = 0;
	w->probe_intmask[w->nprobes] = 0;
	for (uint32_t i = 0; i < p->nargs; i++)
		if (p->args[i].type == GTR_TYPE_INT)
			w->probe_intmask[w->nprobes] |= 1u << i;
	w->pstates[w->nprobes].gen = 0;
	w->nprobes++;

	e->len = 0;
	e_map(e, e_count(&gtr_probe_schema, p) + 2);
	e_fields(e, &gtr_probe_schema, p);
	e_text(e, "args");
	e_array(e, p->nargs);
	for (uint32_t i = 0; i < p->nargs; i++)
		e_object(e, &gtr_arg_schema, &p->args[i]);
	e_text(e, "exprs");
	e_array(e, p->nexprs);
	for (uint32_t i = 0; i < p->nexprs; i++)
		e_uint(e, p->exprs[i]);
	return write_meta(w, GTR_BLOCK_PROBE);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct gtr_symbol *x = a, *y = b;

	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Compresses w->meta into one zstd frame and writes it as a block. */
static int write_meta_zstd(struct gtr_writer *w, uint32_t type)
{
	int rc = wr_flush_frame(w);
	if (rc)
		return rc;
	if (w->meta.oom) {
		w->meta.oom = false;
		return wr_err(w, -ENOMEM, "out of memory encoding metadata for %s", w->path);
	}
	size_t zlen = 0;
	rc = wr_compress(w, w->meta.p, w->meta.len, "block", &zlen);
	if (rc)
		return rc;
	return wr_write_block(w, type, w->zbuf, zlen);
}

int gtr_writer_symbols(struct gtr_writer *w, uint32_t binary_id,
		       const struct gtr_symbol *syms, size_t n)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	if (!u64map_get(&w->binaries, binary_id))
		return wr_err(w, -ENOENT, "symbols of binary %u, which was not written to %s before",
			      binary_id, w->path);
	if (n && !syms)
		return wr_err(w, -EINVAL, "symbols of binary %u: no array", binary_id);
	struct gtr_symbol *s = malloc((n ? n : 1) * sizeof(*s));
	if (!s)
		return wr_err(w, -ENOMEM, "out of memory for %zu symbols", n);
	memcpy(s, syms, n * sizeof(*s));
	qsort(s, n, sizeof(*s), sym_cmp);
	int rc = 0;
	for (size_t at = 0; at < n && !rc; at += GTR_SYMS_PER_BLOCK) {
		const size_t k = n - at < GTR_SYMS_PER_BLOCK ? n - at : GTR_SYMS_PER_BLOCK;
		uint64_t prev = 0;
		e->len = 0;
		e_map(e, 2);
		e_text(e, "binary_id");
		e_uint(e, binary_id);
		e_text(e, "symbols");
		e_array(e, k);
		for (size_t i = at; i < at + k; i++) {
			const uint32_t ni = s[i].inlined ? s[i].ninlined : 0;

			e_array(e, ni ? 4 : 3);
			e_uint(e, s[i].address - prev);
			e_uint(e, s[i].size);
			e_text(e, s[i].name);
			prev = s[i].address;
			if (!ni)
				continue;
			/* off, size, name, depth per inlined range, in one
			 * flat array (readers before it skip it: depth 2) */
			e_array(e, (size_t)ni * 4);
			for (uint32_t j = 0; j < ni; j++) {
				e_uint(e, s[i].inlined[j].off);
				e_uint(e, s[i].inlined[j].size);
				e_text(e, s[i].inlined[j].name);
				e_uint(e, s[i].inlined[j].depth);
			}
		}
		rc = write_meta_zstd(w, GTR_BLOCK_SYMBOLS);
	}
	free(s);
	return rc;
}

int gtr_writer_mapping(struct gtr_writer *w, const struct gtr_mapping *m)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	if (m->end <= m->start)
		return wr_err(w, -EINVAL, "mapping of pid %u: end 0x%llx is not above start 0x%llx",
			      m->pid, (unsigned long long)m->end, (unsigned long long)m->start);
	struct gtr_mapping v = *m;
	if (w->red)
		v.path = gtr_redact_path(w->red, m->path);
	e->len = 0;
	e_object(e, &gtr_mapping_schema, &v);
	return write_meta(w, GTR_BLOCK_MAPPING);
}

int gtr_writer_clock(struct gtr_writer *w, const struct gtr_clock_sample *c)
{
	struct enc *e = &w->meta;
	/* the clock fields are those of the host's anchor (schema.c) */
	const struct gtr_host h = {
		.start_mono_ns = c->monotonic_ns,
		.start_realtime_ns = c->realtime_ns,
		.start_boottime_ns = c->boottime_ns,
	};

	if (w->failed)
		return w->failed;
	e->len = 0;
	e_object(e, &gtr_clock_schema, &h);
	return write_meta(w, GTR_BLOCK_CLOCK);
}

int gtr_writer_process(struct gtr_writer *w, const struct gtr_process *p)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	struct gtr_process v = *p;
	/* an exit code goes only with the exit */
	if (!v.exited)
		v.exit_code = GTR_EXIT_UNKNOWN;
	if (w->red)
		v.comm = gtr_redact_comm(w->red, p->comm);
	e->len = 0;
	e_object(e, &gtr_process_schema, &v);
	return write_meta(w, GTR_BLOCK_PROCESS);
}

int wr_write_summary(struct gtr_writer *w)
{
	struct enc *e = &w->meta;

	e->len = 0;
	e_map(e, (w->frames_capped ? 7 : 6) + (w->suppressed ? 1 : 0) + (w->span_end ? 1 : 0));
	e_text(e, "events");
	e_uint(e, w->events);
	e_text(e, "drops");
	e_uint(e, w->dropped);
	if (w->suppressed) {
		e_text(e, "suppressed");
		e_uint(e, w->suppressed);
	}
	e_text(e, "first_ts_ns");
	e_uint(e, w->any_ts ? w->first_ts : 0);
	e_text(e, "last_ts_ns");
	e_uint(e, w->any_ts ? w->last_ts : 0);
	e_text(e, "probes");
	e_array(e, w->nprobes);
	for (uint32_t i = 0; i < w->nprobes; i++) {
		e_array(e, 2);
		e_uint(e, w->probe_ids[i]);
		e_uint(e, w->probe_events[i]);
	}
	e_text(e, "frames");
	e_array(e, w->nframes);
	for (size_t i = 0; i < w->nframes; i++) {
		const struct frame_ix *f = &w->frames[i];
		e_array(e, 4);
		e_uint(e, f->off);
		e_uint(e, f->first_ts);
		e_uint(e, f->last_ts);
		e_uint(e, f->events);
	}
	if (w->frames_capped) {
		e_text(e, "frames_truncated");
		e_bool(e, true);
	}
	if (w->span_end) {
		e_text(e, "span_end_ns");
		e_uint(e, w->span_end);
	}
	return write_meta(w, GTR_BLOCK_SUMMARY);
}
