/* SPDX-License-Identifier: MIT */
/*
 * The .gtr writer: file header, event records accumulated in a frame
 * buffer and written as one zstd frame per EVENTS block, create and close.
 * The metadata blocks and the SUMMARY block are writer_meta.c's.
 * spec/FORMAT.md describes every byte written here.
 */
#include <cbor.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "writer_internal.h"

/*
 * zstd level 1: on recording-like streams it compresses event frames better
 * than 3 or 5 (1.70 vs 2.23 bytes/event for add(42, i), tests/bench) and
 * costs the recorder least.
 */
#define ZSTD_LEVEL 1

int wr_err(struct gtr_writer *w, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int wr_err(struct gtr_writer *w, int rc, const char *fmt, ...)
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
	wr_err(w, rc, "cannot %s %s: %s", what, w->path, strerror(-rc));
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

int wr_write_block(struct gtr_writer *w, uint32_t type,
		       const uint8_t *payload, size_t len)
{
	uint8_t hdr[GTR_BLOCK_HDR_LEN];

	if (w->failed)
		return w->failed;
	if (len > GTR_MAX_BLOCK)
		return wr_err(w, -EFBIG, "block of %zu bytes exceeds the format's limit of %u",
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

int wr_compress(struct gtr_writer *w, const uint8_t *src, size_t len,
		const char *what, size_t *zlen)
{
	const size_t bound = ZSTD_compressBound(len);
	if (bound > w->zcap) {
		uint8_t *z = realloc(w->zbuf, bound);
		if (!z)
			return wr_err(w, -ENOMEM, "out of memory compressing a %s", what);
		w->zbuf = z;
		w->zcap = bound;
	}
	const size_t n = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, src, len);
	if (ZSTD_isError(n))
		return wr_err(w, -EIO, "zstd cannot compress a %s of %s: %s", what,
			      w->path, ZSTD_getErrorName(n));
	*zlen = n;
	return 0;
}

int wr_flush_frame(struct gtr_writer *w)
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

	size_t zlen = 0;
	int rc = wr_compress(w, src, srclen, "frame", &zlen);
	if (rc)
		return rc;

	const uint64_t off = w->bytes;
	rc = wr_write_block(w, GTR_BLOCK_EVENTS, w->zbuf, zlen);
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
	return wr_flush_frame(w);
}

int gtr_writer_recover(struct gtr_writer *w, uint64_t *lost)
{
	*lost = 0;
	if (!w->failed)
		return 0;
	if (w->fd < 0 || w->good < GTR_FILE_HDR_LEN || w->stream)
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
		const int rc = wr_flush_frame(w);
		if (rc)
			return rc;
		if (w->cap - w->len >= need)
			return 0;
	}
	const size_t cap = FRAME_RESERVE + need + GTR_FRAME_TARGET;
	uint8_t *b = realloc(w->buf, cap);
	if (!b)
		return wr_err(w, -ENOMEM, "out of memory for a record of %zu bytes", need);
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

/*
 * Checks ev, finds the index of its probe (*ix) and the most bytes its
 * records can take (*need). 0, or the negative code of wr_err().
 */
static int event_check(struct gtr_writer *w, const struct gtr_event *ev,
		       uint32_t *ix, size_t *need)
{
	size_t n = 64;

	if (ev->nvals > GTR_MAX_ARGS)
		return wr_err(w, -EINVAL, "event of probe %u has %u values; at most %d",
			      ev->probe_id, ev->nvals, GTR_MAX_ARGS);
	if (ev->kind != GTR_KIND_ENTRY && ev->kind != GTR_KIND_RETURN)
		return wr_err(w, -EINVAL, "event of probe %u: kind %d is neither entry nor return",
			      ev->probe_id, (int)ev->kind);
	if (ev->nstack > GTR_MAX_STACK || (ev->nstack && !ev->stack))
		return wr_err(w, -EINVAL, "event of probe %u: stack of %u frames (at most %d, with addresses)",
			      ev->probe_id, ev->nstack, GTR_MAX_STACK);
	if (probe_index(w, ev->probe_id, ix))
		return wr_err(w, -ENOENT, "event of probe %u, which was not written to %s before it",
			      ev->probe_id, w->path);
	for (uint32_t i = 0; i < ev->nvals; i++) {
		const struct gtr_value *v = &ev->vals[i];
		switch (v->kind) {
		case GTR_VAL_NONE:
		case GTR_VAL_INT:
		case GTR_VAL_UINT:
		case GTR_VAL_BOOL:
			n += 9;
			break;
		case GTR_VAL_STR:
			if (v->v.s.len && !v->v.s.data)
				return wr_err(w, -EINVAL, "event of probe %u: value %u has no data",
					      ev->probe_id, i);
			n += 20 + (v->v.s.len < GTR_MAX_STRING ? v->v.s.len : GTR_MAX_STRING);
			break;
		default:
			return wr_err(w, -EINVAL, "event of probe %u: value %u has kind %d",
				      ev->probe_id, i, (int)v->kind);
		}
	}
	*need = n + 2 + 9 * (size_t)ev->nstack;
	return 0;
}

/* The stack record that goes before ev's record (spec "Stacks"). */
static inline uint8_t *put_stack(struct gtr_writer *w, uint8_t *p,
				 const struct gtr_event *ev)
{
	p += cbor_encode_array_start(1 + ev->nstack, p, 9);
	*p++ = GTR_REC_STACK;
	p = put_sdiff(p, ev->stack[0] - w->stack_prev);
	for (uint32_t i = 1; i < ev->nstack; i++)
		p = put_sdiff(p, ev->stack[i] - ev->stack[i - 1]);
	w->stack_prev = ev->stack[0];
	w->nrec++;
	return p;
}

/*
 * Whether every integer value of ev is of the kind its type decodes to in
 * a delta record (bit i of intmask: argument i is an int).
 */
static inline bool delta_fits(const struct gtr_event *ev, uint32_t intmask)
{
	for (uint32_t i = 0; i < ev->nvals; i++) {
		const enum gtr_value_kind k = ev->vals[i].kind;
		if ((k == GTR_VAL_INT && !(intmask >> i & 1)) ||
		    (k == GTR_VAL_UINT && (intmask >> i & 1)))
			return false;
	}
	return true;
}

/*
 * The head of ev's record: array, record type, probe, timestamp and, when
 * the context is not the same as the previous event's, the context.
 */
static inline uint8_t *put_event_head(struct gtr_writer *w, uint8_t *p,
				      const struct gtr_event *ev, bool same,
				      bool delta)
{
	const bool entry = ev->kind == GTR_KIND_ENTRY;

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
	return p;
}

/* The values of ev; with delta, integers as differences from ps. */
static inline uint8_t *put_values(uint8_t *p, const struct gtr_event *ev,
				  const struct pstate *ps, bool delta)
{
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
	return p;
}

int gtr_writer_event(struct gtr_writer *w, const struct gtr_event *ev)
{
	uint32_t ix = 0;
	size_t need = 0;

	if (w->failed)
		return w->failed;
	if (w->red)
		ev = gtr_redact_event(w->red, ev);
	int rc = event_check(w, ev, &ix, &need);
	if (!rc)
		rc = frame_room(w, need);
	if (rc)
		return rc;

	uint8_t *p = w->buf + w->len;
	if (ev->nstack)
		p = put_stack(w, p, ev);
	const bool same = w->have_ctx && w->ctx_pid == ev->pid &&
			  w->ctx_tid == ev->tid && w->ctx_goid == ev->goid &&
			  w->ctx_cpu == ev->cpu;
	struct pstate *ps = &w->pstates[ix];
	bool have_ps = ps->gen == w->frame_gen;
	/* A delta record decodes integers by the probe's types: use it only
	 * when every integer value is of the kind its type decodes to. */
	const bool delta = same && have_ps && delta_fits(ev, w->probe_intmask[ix]);
	p = put_event_head(w, p, ev, same, delta);
	p = put_values(p, ev, ps, delta);
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
		return wr_flush_frame(w);
	return 0;
}

int gtr_writer_task(struct gtr_writer *w, uint32_t pid, uint32_t tid,
		    const char *comm)
{
	if (w->failed)
		return w->failed;
	if (!comm)
		comm = "";
	if (w->red)
		comm = gtr_redact_comm(w->red, comm);
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

void gtr_writer_set_span_end(struct gtr_writer *w, uint64_t ns)
{
	w->span_end = ns;
}

int gtr_writer_failed(const struct gtr_writer *w)
{
	return w ? w->failed : 0;
}

/* ------------------------------------------------------------- create, close */

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

/* True for what a trace can be streamed into: a pipe, FIFO, socket or
 * character device (never a regular file, directory or block device). */
static bool streamable(mode_t m)
{
	return S_ISFIFO(m) || S_ISSOCK(m) || S_ISCHR(m);
}

/*
 * Opens an existing pipe, FIFO, socket or character device at `path` (or
 * standard output for "-"), for a streamed trace. 1 when `path` is not
 * one (nothing opened), 0 when opened, or a negative errno with w->err.
 */
static int open_stream(struct gtr_writer *w)
{
	struct stat st;

	if (!strcmp(w->path, "-")) {
		if (isatty(STDOUT_FILENO))
			return wr_err(w, -EINVAL, "standard output is a terminal and a trace is binary data; pipe it into 'gotrace-report -' or write it to a file");
		w->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
		if (w->fd < 0)
			return wr_err(w, -errno, "cannot write the trace to standard output: %s", strerror(errno));
		free(w->path);
		w->path = strdup("standard output");
		w->stream = true;
		return w->path ? 0 : wr_err(w, -ENOMEM, "out of memory");
	}
	/* stat(2) follows links: /dev/stdout is one, to the process's fd 1 */
	if (stat(w->path, &st) || !streamable(st.st_mode))
		return 1;
	w->fd = open(w->path, O_WRONLY | O_CLOEXEC);
	if (w->fd < 0)
		return wr_err(w, -errno, "cannot open %s for writing: %s", w->path, strerror(errno));
	w->stream = true;
	return 0;
}

/* Opens `path` for a new trace as gtr_writer_create() documents. */
static int open_new(struct gtr_writer *w, unsigned flags)
{
	struct stat st;
	const int s = open_stream(w);

	if (s <= 0)
		return s;
	if (!lstat(w->path, &st)) {
		if (S_ISLNK(st.st_mode))
			return wr_err(w, -ELOOP, "%s is a symbolic link; refusing to write a trace through it (remove it or choose another path)",
				      w->path);
		if (!(flags & GTR_W_FORCE))
			return wr_err(w, -EEXIST, "%s exists; use --force to overwrite", w->path);
		if (!S_ISREG(st.st_mode))
			return wr_err(w, -EEXIST, "%s exists and is not a regular file, pipe or FIFO; refusing to replace it",
				      w->path);
		if (unlink(w->path) && errno != ENOENT)
			return wr_err(w, -errno, "cannot remove %s to overwrite it: %s",
				      w->path, strerror(errno));
	}
	w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		if (errno == EEXIST)
			return wr_err(w, -EEXIST, "%s exists; use --force to overwrite", w->path);
		return wr_err(w, -errno, "cannot create %s: %s", w->path, strerror(errno));
	}
	/* held while the file is written, released by the kernel however
	 * the writer ends: a follower (gtr_reader_follow()) sees it gone */
	(void)flock(w->fd, LOCK_EX | LOCK_NB);
	return 0;
}

bool gtr_writer_is_stream(const struct gtr_writer *w)
{
	return w->stream;
}

struct gtr_writer *gtr_writer_create(const char *path, unsigned flags,
				     const struct gtr_host *host, char *err,
				     size_t errlen)
{
	return gtr_writer_create_redacted(path, flags, host, NULL, err, errlen);
}

struct gtr_writer *gtr_writer_create_redacted(const char *path, unsigned flags,
					      const struct gtr_host *host,
					      struct gtr_redactor *red, char *err,
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
	w->red = red;
	w->cap = FRAME_RESERVE + GTR_FRAME_TARGET + 64 * 1024;
	w->buf = malloc(w->cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->buf || !w->cctx) {
		wr_err(w, -ENOMEM, "out of memory");
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
	if (red)
		gtr_redact_host(red, &h);

	if (open_new(w, flags))
		goto fail;
	uint8_t fh[GTR_FILE_HDR_LEN];
	memcpy(fh, GTR_MAGIC, GTR_MAGIC_LEN);
	gtr_put_le16(fh + 8, GTR_VERSION_MAJOR);
	gtr_put_le16(fh + 10, GTR_VERSION_MINOR);
	gtr_put_le32(fh + 12, 0);
	struct iovec iov = { .iov_base = fh, .iov_len = sizeof(fh) };
	if (write_all(w, &iov, 1) || wr_write_host(w, &h))
		goto fail;
	return w;
fail:
	set_err(err, errlen, w->err);
	writer_free(w);
	return NULL;
}

int gtr_writer_end(struct gtr_writer *w)
{
	int rc;

	if (!w || w->ended)
		return w ? w->end_rc : 0;
	rc = w->failed;
	if (!rc)
		rc = wr_flush_frame(w);
	if (!rc)
		rc = wr_write_summary(w);
	/* a block cut short (a full disk) is cut off: the file ends after
	 * its last whole block and stays readable to its end */
	if (rc && w->fd >= 0 && !w->stream && w->good >= GTR_FILE_HDR_LEN && w->bytes > w->good &&
	    ftruncate(w->fd, (off_t)w->good) == 0)
		w->bytes = w->good;
	w->ended = true;
	w->end_rc = rc;
	return rc;
}

int gtr_writer_close(struct gtr_writer *w, char *err, size_t errlen)
{
	int rc;

	if (!w)
		return 0;
	rc = gtr_writer_end(w);
	if (w->fd >= 0) {
		if (close(w->fd) && !rc)
			rc = wfail(w, -errno, "close");
		w->fd = -1;
	}
	set_err(err, errlen, rc ? w->err : "");
	writer_free(w);
	return rc;
}
