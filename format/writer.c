/* SPDX-License-Identifier: MIT */
/*
 * The .gtr writer: file header, metadata blocks encoded as CBOR maps, event
 * records accumulated in a frame buffer and written as one zstd frame per
 * EVENTS block, and the SUMMARY block at close. spec/FORMAT.md describes
 * every byte written here.
 */
#include <cbor.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "gtr_internal.h"

/*
 * zstd level 1: on recording-like streams it compresses event frames better
 * than 3 or 5 (1.70 vs 2.23 bytes/event for add(42, i), tests/bench) and
 * costs the recorder least.
 */
#define ZSTD_LEVEL 1
/* Room kept before the records for the frame header [base_ts, nrecords]. */
#define FRAME_RESERVE (1 + 9 + 9)
/* Frame index entries kept for the summary (spec "SUMMARY block"). */
#define MAX_INDEX_FRAMES (1u << 20)

/* Growable buffer for metadata blocks. */
struct enc {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

struct frame_ix {
	uint64_t off, first_ts, last_ts, events;
};

/* Per-probe state of the current frame, for delta records (types 6, 7). */
struct pstate {
	uint64_t gen;            /* == frame_gen when valid in this frame */
	uint32_t nvals;
	uint64_t vals[GTR_MAX_ARGS]; /* integer bits of the last event's values */
};

struct gtr_writer {
	int fd;
	int failed;              /* sticky negative errno */
	char *path;
	char err[512];
	uint64_t bytes;          /* written so far == offset of the next block */
	uint64_t good;           /* end of the last block written whole */

	/* current frame */
	uint8_t *buf;            /* FRAME_RESERVE bytes, then records */
	size_t len, cap;
	uint64_t nrec, frame_events;
	bool have_ts;
	uint64_t base_ts, prev_ts, f_first, f_last;
	bool have_ctx;
	uint32_t ctx_pid, ctx_tid, ctx_cpu;
	uint64_t ctx_goid;
	uint64_t frame_gen;      /* bumped per frame: invalidates pstates */
	uint32_t frame_pstates;  /* probes with state in this frame */
	uint64_t stack_prev;     /* first address of the last stack record */
	ZSTD_CCtx *cctx;
	uint8_t *zbuf;
	size_t zcap;

	/* metadata */
	struct enc meta;
	struct u64map binaries;  /* id -> 0 */
	struct u64map probes;    /* id -> index in probe_ids/probe_events */
	uint32_t *probe_ids;
	uint64_t *probe_events;
	uint32_t *probe_intmask; /* bit i: args[i].type is int */
	struct pstate *pstates;
	uint32_t nprobes, probe_cap;
	uint32_t last_id, last_ix;
	bool last_valid;

	/* summary */
	uint64_t events, dropped, suppressed;
	bool any_ts;
	uint64_t first_ts, last_ts;
	struct frame_ix *frames;
	size_t nframes, frames_cap;
	bool frames_capped;
};

static int werr(struct gtr_writer *w, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int werr(struct gtr_writer *w, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* An I/O failure ends the writer: later calls return the same code. */
static int wfail(struct gtr_writer *w, int rc, const char *what)
{
	werr(w, rc, "cannot %s %s: %s", what, w->path, strerror(-rc));
	w->failed = rc;
	return rc;
}

/* ------------------------------------------------------------- output */

static int write_all(struct gtr_writer *w, struct iovec *iov, int n)
{
	while (n > 0) {
		const ssize_t r = writev(w->fd, iov, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return wfail(w, -errno, "write");
		}
		w->bytes += (uint64_t)r;
		size_t left = (size_t)r;
		while (n > 0 && left >= iov->iov_len) {
			left -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + left;
			iov->iov_len -= left;
		}
	}
	return 0;
}

static int write_block(struct gtr_writer *w, uint32_t type,
		       const uint8_t *payload, size_t len)
{
	uint8_t hdr[GTR_BLOCK_HDR_LEN];

	if (w->failed)
		return w->failed;
	if (len > GTR_MAX_BLOCK)
		return werr(w, -EFBIG, "block of %zu bytes exceeds the format's limit of %u",
			    len, GTR_MAX_BLOCK);
	memcpy(hdr, GTR_BLOCK_MAGIC, 4);
	gtr_put_le32(hdr + 4, type);
	gtr_put_le32(hdr + 8, (uint32_t)len);
	gtr_put_le32(hdr + 12, gtr_block_crc(hdr, payload, len));
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};
	const int rc = write_all(w, iov, len ? 2 : 1);

	if (!rc)
		w->good = w->bytes;
	return rc;
}

/* ------------------------------------------------------------- metadata CBOR */

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

static int flush_frame(struct gtr_writer *w);

/*
 * Writes the metadata block encoded in w->meta. The pending events frame
 * goes first, so blocks and events stay in call order (spec "Order").
 */
static int write_meta(struct gtr_writer *w, uint32_t type)
{
	const int rc = flush_frame(w);
	if (rc)
		return rc;
	if (w->meta.oom) {
		w->meta.oom = false;
		return werr(w, -ENOMEM, "out of memory encoding metadata for %s", w->path);
	}
	return write_block(w, type, w->meta.p, w->meta.len);
}

static int write_host(struct gtr_writer *w, const struct gtr_host *h)
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

int gtr_writer_binary(struct gtr_writer *w, const struct gtr_binary *b)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	if (u64map_get(&w->binaries, b->id))
		return werr(w, -EEXIST, "binary id %u written twice to %s", b->id, w->path);
	if (u64map_put(&w->binaries, b->id, 0, UINT32_MAX))
		return werr(w, -ENOMEM, "out of memory");
	e->len = 0;
	e_object(e, &gtr_binary_schema, b);
	return write_meta(w, GTR_BLOCK_BINARY);
}

int gtr_writer_probe(struct gtr_writer *w, const struct gtr_probe *p)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	if (p->nargs > GTR_MAX_ARGS || p->nexprs > GTR_MAX_ARGS)
		return werr(w, -EINVAL, "probe %u (%s): %u arguments, %u expressions; at most %d each",
			    p->id, p->func ? p->func : "", p->nargs, p->nexprs, GTR_MAX_ARGS);
	for (uint32_t i = 0; i < p->nexprs; i++)
		if (p->exprs[i] >= p->nargs)
			return werr(w, -EINVAL, "probe %u (%s): expression %u names argument %u of %u",
				    p->id, p->func ? p->func : "", i, p->exprs[i], p->nargs);
	if (p->kind != GTR_KIND_ENTRY && p->kind != GTR_KIND_RETURN)
		return werr(w, -EINVAL, "probe %u: kind %d is neither entry nor return",
			    p->id, (int)p->kind);
	if (!u64map_get(&w->binaries, p->binary_id))
		return werr(w, -ENOENT, "probe %u (%s) names binary %u, not written to %s yet",
			    p->id, p->func ? p->func : "", p->binary_id, w->path);
	if (u64map_get(&w->probes, p->id))
		return werr(w, -EEXIST, "probe id %u written twice to %s", p->id, w->path);
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
			return werr(w, -ENOMEM, "out of memory");
		w->probe_cap = cap;
	}
	if (u64map_put(&w->probes, p->id, w->nprobes, UINT32_MAX))
		return werr(w, -ENOMEM, "out of memory");
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

/* ------------------------------------------------------------- frames */

static void frame_reset(struct gtr_writer *w)
{
	w->len = FRAME_RESERVE;
	w->nrec = 0;
	w->frame_events = 0;
	w->have_ts = false;
	w->have_ctx = false;
	w->frame_gen++;
	w->frame_pstates = 0;
	w->stack_prev = 0;
}

/* Compresses the records with their header and writes one EVENTS block. */
static int flush_frame(struct gtr_writer *w)
{
	uint8_t hdr[FRAME_RESERVE];
	size_t hlen = 0;

	if (w->failed)
		return w->failed;
	if (!w->nrec)
		return 0;
	hlen += cbor_encode_array_start(2, hdr, sizeof(hdr));
	hlen += cbor_encode_uint(w->have_ts ? w->base_ts : 0, hdr + hlen, sizeof(hdr) - hlen);
	hlen += cbor_encode_uint(w->nrec, hdr + hlen, sizeof(hdr) - hlen);
	uint8_t *src = w->buf + FRAME_RESERVE - hlen;
	memcpy(src, hdr, hlen);
	const size_t srclen = w->len - (FRAME_RESERVE - hlen);

	const size_t bound = ZSTD_compressBound(srclen);
	if (bound > w->zcap) {
		uint8_t *z = realloc(w->zbuf, bound);
		if (!z)
			return werr(w, -ENOMEM, "out of memory compressing a frame");
		w->zbuf = z;
		w->zcap = bound;
	}
	const size_t zlen = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, src, srclen);
	if (ZSTD_isError(zlen))
		return werr(w, -EIO, "zstd cannot compress a frame of %s: %s",
			    w->path, ZSTD_getErrorName(zlen));

	const uint64_t off = w->bytes;
	const int rc = write_block(w, GTR_BLOCK_EVENTS, w->zbuf, zlen);
	if (rc)
		return rc;
	if (w->nframes < MAX_INDEX_FRAMES) {
		if (w->nframes == w->frames_cap) {
			const size_t cap = w->frames_cap ? w->frames_cap * 2 : 256;
			struct frame_ix *f = realloc(w->frames, cap * sizeof(*f));
			if (f) {
				w->frames = f;
				w->frames_cap = cap;
			}
		}
		if (w->nframes < w->frames_cap)
			w->frames[w->nframes++] = (struct frame_ix){
				.off = off,
				.first_ts = w->have_ts ? w->f_first : 0,
				.last_ts = w->have_ts ? w->f_last : 0,
				.events = w->frame_events,
			};
		else
			w->frames_capped = true;
	} else {
		w->frames_capped = true;
	}
	frame_reset(w);
	return 0;
}

int gtr_writer_flush(struct gtr_writer *w)
{
	return flush_frame(w);
}

int gtr_writer_recover(struct gtr_writer *w, uint64_t *lost)
{
	*lost = 0;
	if (!w->failed)
		return 0;
	if (w->fd < 0 || w->good < GTR_FILE_HDR_LEN)
		return w->failed;
	if (ftruncate(w->fd, (off_t)w->good) || lseek(w->fd, (off_t)w->good, SEEK_SET) < 0)
		return wfail(w, -errno, "cut back");
	*lost = w->frame_events;
	w->events -= w->frame_events;
	w->bytes = w->good;
	w->failed = 0;
	frame_reset(w);
	return 0;
}

/* Makes room for a record of at most `need` bytes in the frame buffer. */
static int frame_room(struct gtr_writer *w, size_t need)
{
	if (w->cap - w->len >= need)
		return 0;
	if (w->nrec) {
		const int rc = flush_frame(w);
		if (rc)
			return rc;
		if (w->cap - w->len >= need)
			return 0;
	}
	const size_t cap = FRAME_RESERVE + need + GTR_FRAME_TARGET;
	uint8_t *b = realloc(w->buf, cap);
	if (!b)
		return werr(w, -ENOMEM, "out of memory for a record of %zu bytes", need);
	w->buf = b;
	w->cap = cap;
	return 0;
}

/* Timestamp of a record: signed difference from the previous one. */
static inline uint8_t *put_ts(struct gtr_writer *w, uint8_t *p, uint64_t ts)
{
	if (!w->have_ts) {
		w->have_ts = true;
		w->base_ts = w->prev_ts = w->f_first = w->f_last = ts;
	}
	if (ts >= w->prev_ts)
		p += cbor_encode_uint(ts - w->prev_ts, p, 9);
	else
		p += cbor_encode_negint(w->prev_ts - ts - 1, p, 9);
	w->prev_ts = ts;
	if (ts < w->f_first)
		w->f_first = ts;
	if (ts > w->f_last)
		w->f_last = ts;
	if (!w->any_ts) {
		w->any_ts = true;
		w->first_ts = w->last_ts = ts;
	}
	if (ts < w->first_ts)
		w->first_ts = ts;
	if (ts > w->last_ts)
		w->last_ts = ts;
	return p;
}

static inline int probe_index(struct gtr_writer *w, uint32_t id, uint32_t *ix)
{
	if (w->last_valid && w->last_id == id) {
		*ix = w->last_ix;
		return 0;
	}
	const uint32_t *v = u64map_get(&w->probes, id);
	if (!v)
		return -1;
	w->last_valid = true;
	w->last_id = id;
	w->last_ix = *v;
	*ix = *v;
	return 0;
}

/* A signed 64-bit difference as a CBOR integer (spec "Stacks", "Deltas"). */
static inline uint8_t *put_sdiff(uint8_t *p, uint64_t d)
{
	if ((int64_t)d >= 0)
		return p + cbor_encode_uint(d, p, 9);
	return p + cbor_encode_negint(~d, p, 9);
}

/* Integer bits of a value for the delta state: INT/UINT, else 0. */
static inline uint64_t int_bits(const struct gtr_value *v)
{
	if (v->kind == GTR_VAL_INT)
		return (uint64_t)v->v.i;
	if (v->kind == GTR_VAL_UINT)
		return v->v.u;
	return 0;
}

int gtr_writer_event(struct gtr_writer *w, const struct gtr_event *ev)
{
	uint32_t ix;
	size_t need = 64;

	if (w->failed)
		return w->failed;
	if (ev->nvals > GTR_MAX_ARGS)
		return werr(w, -EINVAL, "event of probe %u has %u values; at most %d",
			    ev->probe_id, ev->nvals, GTR_MAX_ARGS);
	if (ev->kind != GTR_KIND_ENTRY && ev->kind != GTR_KIND_RETURN)
		return werr(w, -EINVAL, "event of probe %u: kind %d is neither entry nor return",
			    ev->probe_id, (int)ev->kind);
	if (ev->nstack > GTR_MAX_STACK || (ev->nstack && !ev->stack))
		return werr(w, -EINVAL, "event of probe %u: stack of %u frames (at most %d, with addresses)",
			    ev->probe_id, ev->nstack, GTR_MAX_STACK);
	if (probe_index(w, ev->probe_id, &ix))
		return werr(w, -ENOENT, "event of probe %u, which was not written to %s before it",
			    ev->probe_id, w->path);
	for (uint32_t i = 0; i < ev->nvals; i++) {
		const struct gtr_value *v = &ev->vals[i];
		switch (v->kind) {
		case GTR_VAL_NONE:
		case GTR_VAL_INT:
		case GTR_VAL_UINT:
		case GTR_VAL_BOOL:
			need += 9;
			break;
		case GTR_VAL_STR:
			if (v->v.s.len && !v->v.s.data)
				return werr(w, -EINVAL, "event of probe %u: value %u has no data",
					    ev->probe_id, i);
			need += 20 + (v->v.s.len < GTR_MAX_STRING ? v->v.s.len : GTR_MAX_STRING);
			break;
		default:
			return werr(w, -EINVAL, "event of probe %u: value %u has kind %d",
				    ev->probe_id, i, (int)v->kind);
		}
	}
	need += 2 + 9 * (size_t)ev->nstack;
	int rc = frame_room(w, need);
	if (rc)
		return rc;

	uint8_t *p = w->buf + w->len;
	if (ev->nstack) {
		p += cbor_encode_array_start(1 + ev->nstack, p, 9);
		*p++ = GTR_REC_STACK;
		p = put_sdiff(p, ev->stack[0] - w->stack_prev);
		for (uint32_t i = 1; i < ev->nstack; i++)
			p = put_sdiff(p, ev->stack[i] - ev->stack[i - 1]);
		w->stack_prev = ev->stack[0];
		w->nrec++;
	}
	const bool entry = ev->kind == GTR_KIND_ENTRY;
	const bool same = w->have_ctx && w->ctx_pid == ev->pid &&
			  w->ctx_tid == ev->tid && w->ctx_goid == ev->goid &&
			  w->ctx_cpu == ev->cpu;
	struct pstate *ps = &w->pstates[ix];
	bool have_ps = ps->gen == w->frame_gen;
	bool delta = same && have_ps;
	const uint32_t intmask = w->probe_intmask[ix];
	/* A delta record decodes integers by the probe's types: use it only
	 * when every integer value is of the kind its type decodes to. */
	for (uint32_t i = 0; delta && i < ev->nvals; i++) {
		const enum gtr_value_kind k = ev->vals[i].kind;
		if ((k == GTR_VAL_INT && !(intmask >> i & 1)) ||
		    (k == GTR_VAL_UINT && (intmask >> i & 1)))
			delta = false;
	}
	if (same) {
		p += cbor_encode_array_start(3 + ev->nvals, p, 9);
		*p++ = (uint8_t)(delta ? (entry ? GTR_REC_ENTRY_DELTA : GTR_REC_RETURN_DELTA)
				       : (entry ? GTR_REC_ENTRY_CTX : GTR_REC_RETURN_CTX));
	} else if (ev->cpu == GTR_CPU_UNKNOWN) {
		p += cbor_encode_array_start(6 + ev->nvals, p, 9);
		*p++ = (uint8_t)(entry ? GTR_REC_ENTRY : GTR_REC_RETURN);
	} else {
		p += cbor_encode_array_start(7 + ev->nvals, p, 9);
		*p++ = (uint8_t)(entry ? GTR_REC_ENTRY_CPU : GTR_REC_RETURN_CPU);
	}
	p += cbor_encode_uint(ev->probe_id, p, 9);
	p = put_ts(w, p, ev->ts_ns);
	if (!same) {
		p += cbor_encode_uint(ev->pid, p, 9);
		p += cbor_encode_uint(ev->tid, p, 9);
		p += cbor_encode_uint(ev->goid, p, 9);
		if (ev->cpu != GTR_CPU_UNKNOWN)
			p += cbor_encode_uint(ev->cpu, p, 9);
		w->have_ctx = true;
		w->ctx_pid = ev->pid;
		w->ctx_tid = ev->tid;
		w->ctx_goid = ev->goid;
		w->ctx_cpu = ev->cpu;
	}
	for (uint32_t i = 0; i < ev->nvals; i++) {
		const struct gtr_value *v = &ev->vals[i];
		switch (v->kind) {
		case GTR_VAL_INT:
			if (delta)
				p = put_sdiff(p, (uint64_t)v->v.i -
						 (i < ps->nvals ? ps->vals[i] : 0));
			else if (v->v.i >= 0)
				p += cbor_encode_uint((uint64_t)v->v.i, p, 9);
			else
				p += cbor_encode_negint(~(uint64_t)v->v.i, p, 9);
			break;
		case GTR_VAL_UINT:
			if (delta)
				p = put_sdiff(p, v->v.u - (i < ps->nvals ? ps->vals[i] : 0));
			else
				p += cbor_encode_uint(v->v.u, p, 9);
			break;
		case GTR_VAL_BOOL:
			*p++ = v->v.b ? 0xf5 : 0xf4;
			break;
		case GTR_VAL_STR: {
			const uint32_t n = v->v.s.len < GTR_MAX_STRING ? v->v.s.len : GTR_MAX_STRING;
			const uint64_t full = v->v.s.full_len > n ? v->v.s.full_len : n;
			if (full != n) {
				*p++ = 0x82; /* array(2) */
				p += cbor_encode_uint(full, p, 9);
			}
			p += cbor_encode_bytestring_start(n, p, 9);
			if (n)
				memcpy(p, v->v.s.data, n);
			p += n;
			break;
		}
		default:
			*p++ = 0xf6; /* null */
			break;
		}
	}
	/* Every event updates its probe's state, while the frame has room. */
	if (!have_ps && w->frame_pstates < GTR_FRAME_PROBES) {
		w->frame_pstates++;
		ps->gen = w->frame_gen;
		have_ps = true;
	}
	if (have_ps) {
		ps->nvals = ev->nvals;
		for (uint32_t i = 0; i < ev->nvals; i++)
			ps->vals[i] = int_bits(&ev->vals[i]);
	}
	w->len = (size_t)(p - w->buf);
	w->nrec++;
	w->frame_events++;
	w->events++;
	w->probe_events[ix]++;
	if (w->len - FRAME_RESERVE >= GTR_FRAME_TARGET)
		return flush_frame(w);
	return 0;
}

int gtr_writer_task(struct gtr_writer *w, uint32_t pid, uint32_t tid,
		    const char *comm)
{
	if (w->failed)
		return w->failed;
	if (!comm)
		comm = "";
	const size_t n = strnlen(comm, GTR_COMM_LEN);
	int rc = frame_room(w, 32 + n);
	if (rc)
		return rc;
	uint8_t *p = w->buf + w->len;
	*p++ = 0x84; /* array(4) */
	*p++ = GTR_REC_TASK;
	p += cbor_encode_uint(pid, p, 9);
	p += cbor_encode_uint(tid, p, 9);
	p += cbor_encode_string_start(n, p, 9);
	p += gtr_utf8_sanitize(p, comm, n, n);
	w->len = (size_t)(p - w->buf);
	w->nrec++;
	return 0;
}

int gtr_writer_drop(struct gtr_writer *w, const struct gtr_drop *d)
{
	if (w->failed)
		return w->failed;
	int rc = frame_room(w, 64);
	if (rc)
		return rc;
	uint8_t *p = w->buf + w->len;
	*p++ = d->reason ? 0x87 : 0x86; /* array(7) with a reason, else 6 */
	*p++ = GTR_REC_DROP;
	if (d->probe_id == UINT32_MAX)
		*p++ = 0xf6; /* null */
	else
		p += cbor_encode_uint(d->probe_id, p, 9);
	p = put_ts(w, p, d->ts_ns);
	p += cbor_encode_uint(d->count, p, 9);
	if (d->cpu == GTR_CPU_UNKNOWN)
		*p++ = 0xf6;
	else
		p += cbor_encode_uint(d->cpu, p, 9);
	p += cbor_encode_uint(d->since_ns, p, 9);
	if (d->reason)
		p += cbor_encode_uint(d->reason, p, 9);
	w->len = (size_t)(p - w->buf);
	w->nrec++;
	if (d->reason == GTR_DROP_RATE)
		w->suppressed += d->count;
	else
		w->dropped = gtr_add_sat(w->dropped, d->count);
	return 0;
}

/* ------------------------------------------------------------- process metadata */


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
	int rc = flush_frame(w);
	if (rc)
		return rc;
	if (w->meta.oom) {
		w->meta.oom = false;
		return werr(w, -ENOMEM, "out of memory encoding metadata for %s", w->path);
	}
	const size_t bound = ZSTD_compressBound(w->meta.len);
	if (bound > w->zcap) {
		uint8_t *z = realloc(w->zbuf, bound);
		if (!z)
			return werr(w, -ENOMEM, "out of memory compressing a block");
		w->zbuf = z;
		w->zcap = bound;
	}
	const size_t zlen = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, w->meta.p, w->meta.len);
	if (ZSTD_isError(zlen))
		return werr(w, -EIO, "zstd cannot compress a block of %s: %s", w->path,
			    ZSTD_getErrorName(zlen));
	return write_block(w, type, w->zbuf, zlen);
}

int gtr_writer_symbols(struct gtr_writer *w, uint32_t binary_id,
		       const struct gtr_symbol *syms, size_t n)
{
	struct enc *e = &w->meta;

	if (w->failed)
		return w->failed;
	if (!u64map_get(&w->binaries, binary_id))
		return werr(w, -ENOENT, "symbols of binary %u, which was not written to %s before",
			    binary_id, w->path);
	if (n && !syms)
		return werr(w, -EINVAL, "symbols of binary %u: no array", binary_id);
	struct gtr_symbol *s = malloc((n ? n : 1) * sizeof(*s));
	if (!s)
		return werr(w, -ENOMEM, "out of memory for %zu symbols", n);
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
			e_array(e, 3);
			e_uint(e, s[i].address - prev);
			e_uint(e, s[i].size);
			e_text(e, s[i].name);
			prev = s[i].address;
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
		return werr(w, -EINVAL, "mapping of pid %u: end 0x%llx is not above start 0x%llx",
			    m->pid, (unsigned long long)m->end, (unsigned long long)m->start);
	e->len = 0;
	e_object(e, &gtr_mapping_schema, m);
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
	e->len = 0;
	e_object(e, &gtr_process_schema, &v);
	return write_meta(w, GTR_BLOCK_PROCESS);
}

uint64_t gtr_writer_bytes(const struct gtr_writer *w)
{
	return w ? w->bytes : 0;
}

uint64_t gtr_writer_events(const struct gtr_writer *w)
{
	return w ? w->events : 0;
}

const char *gtr_writer_error(const struct gtr_writer *w)
{
	return w ? w->err : "";
}

/* ------------------------------------------------------------- create, close */

static int write_summary(struct gtr_writer *w)
{
	struct enc *e = &w->meta;

	e->len = 0;
	e_map(e, (w->frames_capped ? 7 : 6) + (w->suppressed ? 1 : 0));
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
	return write_meta(w, GTR_BLOCK_SUMMARY);
}

static void writer_free(struct gtr_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	u64map_free(&w->binaries);
	u64map_free(&w->probes);
	free(w->probe_ids);
	free(w->probe_events);
	free(w->probe_intmask);
	free(w->pstates);
	free(w->frames);
	free(w->meta.p);
	free(w->zbuf);
	free(w->buf);
	free(w->path);
	free(w);
}

static void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Opens `path` for a new trace as gtr_writer_create() documents. */
static int open_new(struct gtr_writer *w, unsigned flags)
{
	struct stat st;

	if (!lstat(w->path, &st)) {
		if (S_ISLNK(st.st_mode))
			return werr(w, -ELOOP, "%s is a symbolic link; refusing to write a trace through it (remove it or choose another path)",
				    w->path);
		if (!(flags & GTR_W_FORCE))
			return werr(w, -EEXIST, "%s exists; use --force to overwrite", w->path);
		if (!S_ISREG(st.st_mode))
			return werr(w, -EEXIST, "%s exists and is not a regular file; refusing to replace it",
				    w->path);
		if (unlink(w->path) && errno != ENOENT)
			return werr(w, -errno, "cannot remove %s to overwrite it: %s",
				    w->path, strerror(errno));
	}
	w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		if (errno == EEXIST)
			return werr(w, -EEXIST, "%s exists; use --force to overwrite", w->path);
		return werr(w, -errno, "cannot create %s: %s", w->path, strerror(errno));
	}
	return 0;
}

struct gtr_writer *gtr_writer_create(const char *path, unsigned flags,
				     const struct gtr_host *host, char *err,
				     size_t errlen)
{
	struct gtr_writer *w;
	struct gtr_host h = { 0 };
	struct utsname un;
	char hostname[256] = "";

	if (!path || !*path) {
		set_err(err, errlen, "no output file given");
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	w->fd = -1;
	w->cap = FRAME_RESERVE + GTR_FRAME_TARGET + 64 * 1024;
	w->buf = malloc(w->cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->buf || !w->cctx) {
		werr(w, -ENOMEM, "out of memory");
		goto fail;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0);
	frame_reset(w);

	if (host) {
		h = *host;
	} else {
		if (!uname(&un)) {
			h.kernel = un.release;
			h.machine = un.machine;
		}
		if (!gethostname(hostname, sizeof(hostname) - 1))
			h.hostname = hostname;
		h.start_mono_ns = clock_ns(CLOCK_MONOTONIC);
		h.start_realtime_ns = clock_ns(CLOCK_REALTIME);
		h.start_boottime_ns = clock_ns(CLOCK_BOOTTIME);
	}

	if (open_new(w, flags))
		goto fail;
	uint8_t fh[GTR_FILE_HDR_LEN];
	memcpy(fh, GTR_MAGIC, GTR_MAGIC_LEN);
	gtr_put_le16(fh + 8, GTR_VERSION_MAJOR);
	gtr_put_le16(fh + 10, GTR_VERSION_MINOR);
	gtr_put_le32(fh + 12, 0);
	struct iovec iov = { .iov_base = fh, .iov_len = sizeof(fh) };
	if (write_all(w, &iov, 1) || write_host(w, &h))
		goto fail;
	return w;
fail:
	set_err(err, errlen, w->err);
	writer_free(w);
	return NULL;
}

int gtr_writer_close(struct gtr_writer *w, char *err, size_t errlen)
{
	int rc;

	if (!w)
		return 0;
	rc = w->failed;
	if (!rc)
		rc = flush_frame(w);
	if (!rc)
		rc = write_summary(w);
	if (w->fd >= 0) {
		if (close(w->fd) && !rc)
			rc = wfail(w, -errno, "close");
		w->fd = -1;
	}
	set_err(err, errlen, rc ? w->err : "");
	writer_free(w);
	return rc;
}
