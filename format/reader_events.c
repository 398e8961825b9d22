/* SPDX-License-Identifier: MIT */
/*
 * Event frames: one zstd frame of CBOR records per EVENTS block, decoded
 * record by record (spec/FORMAT.md, "Records"), with the per-frame context
 * and delta state, task names and the loss table. gtr_reader_next() is
 * here so that the record loop stays in one file with its decoders.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

void rd_start_frame(struct gtr_reader *r, const struct block *b)
{
	char buf[160], zwhy[128];
	const char *why = NULL;
	size_t got;

	if (!rd_unzstd(r, b, &got, zwhy, sizeof(zwhy))) {
		snprintf(buf, sizeof(buf), "event frame: %s", zwhy);
		why = buf;
		goto bad;
	}
	r->fc.p = r->dbuf;
	r->fc.end = r->dbuf + got;
	uint64_t n, nrec;
	if (gcr_expect(&r->fc, GCR_ARRAY, &n) || n < 2 ||
	    gcr_uint(&r->fc, &r->prev_ts) || gcr_uint(&r->fc, &nrec)) {
		why = "event frame: bad frame header";
		goto bad;
	}
	for (uint64_t i = 2; i < n; i++)
		if (gcr_skip(&r->fc, GTR_CBOR_DEPTH)) {
			why = "event frame: bad frame header";
			goto bad;
		}
	if (nrec > (uint64_t)(r->fc.end - r->fc.p) / 2) {
		why = "event frame: record count exceeds the frame's size";
		goto bad;
	}
	r->in_frame = true;
	r->frame_off = b->off;
	r->rec_left = nrec;
	r->rec_no = 0;
	r->have_ctx = false;
	r->frame_gen++;
	r->nps = 0;
	if (r->ps_ix.n)
		u64map_clear(&r->ps_ix);
	r->stack_pending = false;
	r->stack_prev = 0;
	rd_prefetch_next(r);
	return;
bad:
	rd_damaged(r, b->off, why, "skipped");
	rd_prefetch_next(r);
}


static inline int read_ts(struct gtr_reader *r, uint64_t *ts)
{
	unsigned major, ai;
	uint64_t v;

	if (gcr_head(&r->fc, &major, &ai, &v))
		return -1;
	if (major == GCR_UINT) {
		if (v > UINT64_MAX - r->prev_ts)
			return -1;
		r->prev_ts += v;
	} else if (major == GCR_NEGINT) {
		if (v >= r->prev_ts)
			return -1;
		r->prev_ts -= v + 1;
	} else {
		return -1;
	}
	*ts = r->prev_ts;
	return 0;
}

static inline int read_value(struct gcr *c, enum gtr_type type,
			     struct gtr_value *out)
{
	unsigned major, ai;
	uint64_t v, full;

	if (gcr_head(c, &major, &ai, &v))
		return -1;
	switch (major) {
	case GCR_UINT:
		if (type == GTR_TYPE_INT && v <= INT64_MAX) {
			out->kind = GTR_VAL_INT;
			out->v.i = (int64_t)v;
		} else {
			out->kind = GTR_VAL_UINT;
			out->v.u = v;
		}
		return 0;
	case GCR_NEGINT:
		if (v > INT64_MAX)
			return -1;
		out->kind = GTR_VAL_INT;
		out->v.i = -(int64_t)v - 1;
		return 0;
	case GCR_ARRAY:
		if (v != 2 || gcr_uint(c, &full) || gcr_expect(c, GCR_BYTES, &v) || full < v)
			return -1;
		goto bytes;
	case GCR_BYTES:
		full = v;
	bytes:
		if (v > GTR_MAX_STRING)
			return -1;
		out->kind = GTR_VAL_STR;
		out->v.s.data = c->p;
		out->v.s.len = (uint32_t)v;
		out->v.s.full_len = full;
		c->p += v;
		return 0;
	case GCR_SIMPLE:
		if (ai == GCR_FALSE || ai == GCR_TRUE) {
			out->kind = GTR_VAL_BOOL;
			out->v.b = ai == GCR_TRUE;
			return 0;
		}
		if (ai == GCR_NULL || ai == GCR_UNDEF) {
			out->kind = GTR_VAL_NONE;
			return 0;
		}
		return -1;
	default:
		return -1;
	}
}

static int set_task(struct gtr_reader *r, uint32_t pid, uint32_t tid,
		    const uint8_t *s, size_t n)
{
	const uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t *ix = u64map_get(&r->task_ix, key);
	uint32_t i;

	if (ix) {
		i = *ix;
	} else {
		if (r->ncomms >= GTR_MAX_TASKS) {
			/* Bounded table: forget every name rather than grow. */
			u64map_clear(&r->task_ix);
			r->ncomms = 0;
		}
		if (r->ncomms == r->comms_cap) {
			const uint32_t cap = r->comms_cap ? r->comms_cap * 2 : 64;
			struct comm *v = realloc(r->comms, cap * sizeof(*v));
			if (!v)
				return -1;
			r->comms = v;
			r->comms_cap = cap;
		}
		i = r->ncomms;
		if (u64map_put(&r->task_ix, key, i, GTR_MAX_TASKS))
			return -1;
		r->ncomms++;
	}
	memcpy(r->comms[i].s, s, n);
	r->comms[i].s[n] = 0;
	r->task_gen++;
	return 0;
}

/* Sums a drop record into the (probe, cpu) loss table. */
static void add_loss(struct gtr_reader *r, const struct gtr_drop *d)
{
	/* One entry per (probe, cpu, reason); reasons are 0 or small. */
	const uint64_t key = ((uint64_t)d->probe_id << 32 | d->cpu) ^
			     ((uint64_t)(d->reason != GTR_DROP_BUFFER) << 62);
	const uint64_t first = d->since_ns && d->since_ns <= d->ts_ns ? d->since_ns : d->ts_ns;
	uint32_t *ix = u64map_get(&r->loss_ix, key);
	struct gtr_loss *l;

	if (!ix) {
		if (r->nlosses >= GTR_MAX_LOSSES ||
		    rd_grow((void **)&r->losses, &r->losses_cap, r->nlosses, sizeof(*l)) ||
		    u64map_put(&r->loss_ix, key, r->nlosses, GTR_MAX_LOSSES)) {
			r->overflow.losses = gtr_add_sat(r->overflow.losses, 1);
			return;
		}
		l = &r->losses[r->nlosses++];
		*l = (struct gtr_loss){ .probe_id = d->probe_id, .cpu = d->cpu,
					.first_ns = first, .last_ns = d->ts_ns,
					.reason = d->reason };
	} else {
		l = &r->losses[*ix];
	}
	l->count = gtr_add_sat(l->count, d->count);
	l->records = gtr_add_sat(l->records, 1);
	if (first < l->first_ns)
		l->first_ns = first;
	if (d->ts_ns > l->last_ns)
		l->last_ns = d->ts_ns;
}

/* Gives ev the stack record that came before it, if one did. */
static inline void take_stack(struct gtr_reader *r, struct gtr_event *ev)
{
	if (r->stack_pending) {
		ev->nstack = r->nstack;
		ev->stack = r->stack;
		r->stack_pending = false;
	} else {
		ev->nstack = 0;
		ev->stack = NULL;
	}
}

/*
 * The common record, read without the general decoder: a delta event
 * record (types 6, 7) of a probe id below 24 whose timestamp is an
 * unsigned delta and whose values are integer deltas or byte strings
 * captured whole. Returns 1 with *ev filled, or 0 with nothing consumed
 * when the record is of another shape (decode_record() then reads it and
 * reports what is wrong; *ev may have been written). Gives exactly what
 * decode_record() gives for the same bytes.
 */
static inline int decode_delta_fast(struct gtr_reader *r, struct gtr_event *ev)
{
	const uint8_t *p = r->fc.p, *const end = r->fc.end;
	uint64_t x[GTR_MAX_ARGS], dts;

	if (end - p < 4 || !r->have_ctx || (p[0] >> 5) != GCR_ARRAY)
		return 0;
	const unsigned n = p[0] & 31;
	if (n < 3 || n >= 24 || n - 3 > GTR_MAX_ARGS ||
	    (p[1] != GTR_REC_ENTRY_DELTA && p[1] != GTR_REC_RETURN_DELTA) || p[2] >= 24)
		return 0;
	const uint32_t id = p[2];
	struct rstate *st = pstate(r, id, false);
	if (!st)
		return 0;
	const uint8_t t = p[1];
	p += 3;
	if ((*p >> 5) != GCR_UINT || fast_arg(&p, end, &dts) || dts > UINT64_MAX - r->prev_ts)
		return 0;
	/* first the values' heads, checked, into x[] (strings: into ev) */
	const uint32_t nv = n - 3;
	uint32_t strs;
	if (delta_values(&p, end, nv, 0, x, &strs, ev->vals))
		return 0;
	/* the record is well formed: take it */
	r->fc.p = p;
	r->rec_left--;
	r->rec_no++;
	r->prev_ts += dts;
	ev->probe_id = id;
	ev->ts_ns = r->prev_ts;
	ev->kind = (t & 1) ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
	ev->pid = r->ctx_pid;
	ev->tid = r->ctx_tid;
	ev->goid = r->ctx_goid;
	ev->cpu = r->ctx_cpu;
	ev->nvals = nv;
	const struct gtr_probe *pr = rd_find_probe(r, id);
	const uint32_t typed = pr ? pr->nargs : 0;
	for (uint32_t i = 0; i < nv; i++) {
		struct gtr_value *v = &ev->vals[i];
		if (strs >> i & 1) {
			st->vals[i] = 0;
			continue;
		}
		const uint64_t raw = (i < st->nvals ? st->vals[i] : 0) + x[i];
		if (i < typed && pr->args[i].type == GTR_TYPE_INT) {
			v->kind = GTR_VAL_INT;
			v->v.i = (int64_t)raw;
		} else {
			v->kind = GTR_VAL_UINT;
			v->v.u = raw;
		}
		st->vals[i] = raw;
	}
	st->nvals = nv;
	take_stack(r, ev);
	return 1;
}

/* The context of a full event record: pid, tid, goid, and cpu when
 * with_cpu. 0, or -1 when malformed. */
static int read_ctx(struct gtr_reader *r, bool with_cpu)
{
	struct gcr *c = &r->fc;

	if (gcr_u32(c, &r->ctx_pid) || gcr_u32(c, &r->ctx_tid) ||
	    gcr_uint(c, &r->ctx_goid))
		return -1;
	r->ctx_cpu = GTR_CPU_UNKNOWN;
	if (with_cpu && (gcr_u32(c, &r->ctx_cpu) || r->ctx_cpu == GTR_CPU_UNKNOWN))
		return -1;
	r->have_ctx = true;
	return 0;
}

/*
 * The ev->nvals values of an event record, typed by its probe; integers of
 * a delta record are deltas. 0, or -1 when malformed.
 */
static int read_values(struct gtr_reader *r, struct gtr_event *ev,
		       struct rstate *st, bool delta)
{
	struct gcr *c = &r->fc;
	const struct gtr_probe *p = rd_find_probe(r, ev->probe_id);
	const uint32_t typed = p ? p->nargs : 0;
	unsigned major, ai;

	/* A value's delta base is the same value of the probe's last event
	 * in this frame; st (NULL past GTR_FRAME_PROBES) is updated as the
	 * values are read. A malformed record skips the rest of the frame,
	 * so a partial update is never used. */
	for (uint32_t i = 0; i < ev->nvals; i++) {
		const enum gtr_type type = i < typed ? p->args[i].type : GTR_TYPE_WORD;
		struct gtr_value *v = &ev->vals[i];
		if (delta && c->p < c->end && (*c->p >> 5) <= GCR_NEGINT) {
			uint64_t d;
			if (gcr_head(c, &major, &ai, &d))
				return -1;
			const uint64_t raw = (i < st->nvals ? st->vals[i] : 0) +
					     (major == GCR_UINT ? d : ~d);
			if (type == GTR_TYPE_INT) {
				v->kind = GTR_VAL_INT;
				v->v.i = (int64_t)raw;
			} else {
				v->kind = GTR_VAL_UINT;
				v->v.u = raw;
			}
		} else if (read_value(c, type, v)) {
			return -1;
		}
		if (st)
			st->vals[i] = v->kind == GTR_VAL_INT ? (uint64_t)v->v.i :
				      v->kind == GTR_VAL_UINT ? v->v.u : 0;
	}
	if (st)
		st->nvals = ev->nvals;
	return 0;
}

/* An event record (types 0-9) of n elements. GTR_ITEM_EVENT or -1. */
static int decode_event(struct gtr_reader *r, struct gtr_event *ev, uint64_t t,
			uint64_t n)
{
	const bool with_cpu = t >= GTR_REC_ENTRY_CPU;
	const bool full = t < 2 || with_cpu;
	const bool delta = t == GTR_REC_ENTRY_DELTA || t == GTR_REC_RETURN_DELTA;
	const uint64_t hdr = with_cpu ? 7 : full ? 6 : 3;

	if (n < hdr || n - hdr > GTR_MAX_ARGS) {
		snprintf(r->why, sizeof(r->why), "event record of %llu elements",
			 (unsigned long long)n);
		return -1;
	}
	if (!full && !r->have_ctx) {
		snprintf(r->why, sizeof(r->why), "event record without a previous context");
		return -1;
	}
	if (gcr_u32(&r->fc, &ev->probe_id) || read_ts(r, &ev->ts_ns) ||
	    (full && read_ctx(r, with_cpu)))
		goto bad_event;
	ev->kind = (t & 1) ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
	ev->pid = r->ctx_pid;
	ev->tid = r->ctx_tid;
	ev->goid = r->ctx_goid;
	ev->cpu = r->ctx_cpu;
	ev->nvals = (uint32_t)(n - hdr);
	struct rstate *st = pstate(r, ev->probe_id, false);
	if (delta && !st) {
		snprintf(r->why, sizeof(r->why),
			 "delta event record of probe %u without a previous event of it",
			 ev->probe_id);
		return -1;
	}
	if (!st)
		st = pstate(r, ev->probe_id, true);
	if (read_values(r, ev, st, delta))
		goto bad_event;
	take_stack(r, ev);
	return GTR_ITEM_EVENT;
bad_event:
	snprintf(r->why, sizeof(r->why), "malformed event record");
	return -1;
}

/* A stack record of n elements: kept for the next event record. 0 or -1. */
static int decode_stack(struct gtr_reader *r, uint64_t n)
{
	unsigned major, ai;

	if (r->stack_pending || n < 2 || n - 1 > GTR_MAX_STACK) {
		snprintf(r->why, sizeof(r->why), "malformed stack record");
		return -1;
	}
	uint64_t prev = r->stack_prev;
	for (uint64_t i = 0; i + 1 < n; i++) {
		uint64_t d;
		if (gcr_head(&r->fc, &major, &ai, &d) || major > GCR_NEGINT) {
			snprintf(r->why, sizeof(r->why), "malformed stack record");
			return -1;
		}
		prev += major == GCR_UINT ? d : ~d;
		r->stack[i] = prev;
	}
	r->nstack = (uint32_t)(n - 1);
	r->stack_prev = r->stack[0];
	r->stack_pending = true;
	return 0;
}

/* A task record of n elements: the name of (pid, tid). 0 or -1. */
static int decode_task(struct gtr_reader *r, uint64_t n)
{
	struct gcr *c = &r->fc;
	unsigned major, ai;
	uint32_t pid, tid;
	uint64_t len;

	if (n < 4 || gcr_u32(c, &pid) || gcr_u32(c, &tid) ||
	    gcr_head(c, &major, &ai, &len) ||
	    (major != GCR_TEXT && major != GCR_BYTES) || len > GTR_COMM_LEN) {
		snprintf(r->why, sizeof(r->why), "malformed task record");
		return -1;
	}
	const uint8_t *s = c->p;
	c->p += len;
	for (uint64_t i = 4; i < n; i++)
		if (gcr_skip(c, GTR_CBOR_DEPTH)) {
			snprintf(r->why, sizeof(r->why), "malformed task record");
			return -1;
		}
	if (set_task(r, pid, tid, s, (size_t)len)) {
		snprintf(r->why, sizeof(r->why), "out of memory for task names");
		return -1;
	}
	return 0;
}

/* A drop record of n elements, summed into the loss table too.
 * GTR_ITEM_DROP or -1. */
static int decode_drop(struct gtr_reader *r, struct gtr_drop *drop, uint64_t n)
{
	struct gcr *c = &r->fc;
	unsigned major, ai;
	uint64_t v;

	if (n < 4 || gcr_head(c, &major, &ai, &v))
		goto bad_drop;
	if (major == GCR_UINT && v < UINT32_MAX)
		drop->probe_id = (uint32_t)v;
	else if (major == GCR_SIMPLE && ai == GCR_NULL)
		drop->probe_id = UINT32_MAX;
	else
		goto bad_drop;
	if (read_ts(r, &drop->ts_ns) || gcr_uint(c, &drop->count))
		goto bad_drop;
	drop->cpu = GTR_CPU_UNKNOWN;
	drop->since_ns = 0;
	if (n >= 5) {
		if (gcr_head(c, &major, &ai, &v))
			goto bad_drop;
		if (major == GCR_UINT && v < UINT32_MAX)
			drop->cpu = (uint32_t)v;
		else if (!(major == GCR_SIMPLE && ai == GCR_NULL))
			goto bad_drop;
	}
	if (n >= 6 && gcr_uint(c, &drop->since_ns))
		goto bad_drop;
	drop->reason = GTR_DROP_BUFFER;
	if (n >= 7) {
		uint64_t why;

		if (gcr_uint(c, &why))
			goto bad_drop;
		drop->reason = why > UINT32_MAX ? UINT32_MAX : (uint32_t)why;
	}
	for (uint64_t i = 7; i < n; i++)
		if (gcr_skip(c, GTR_CBOR_DEPTH))
			goto bad_drop;
	add_loss(r, drop);
	return GTR_ITEM_DROP;
bad_drop:
	snprintf(r->why, sizeof(r->why), "malformed drop record");
	return -1;
}

/*
 * Decodes the next record of the frame. Returns GTR_ITEM_EVENT or
 * GTR_ITEM_DROP, 0 for a record that produces no item, or -1 when the
 * record is malformed (reason in r->why).
 */
static int decode_record(struct gtr_reader *r, struct gtr_event *ev,
			 struct gtr_drop *drop)
{
	struct gcr *c = &r->fc;
	unsigned major, ai;
	uint64_t n, t;

	if (decode_delta_fast(r, ev))
		return GTR_ITEM_EVENT;
	r->rec_left--;
	r->rec_no++;
	if (gcr_head(c, &major, &ai, &n) || major != GCR_ARRAY || n < 1 ||
	    gcr_uint(c, &t)) {
		snprintf(r->why, sizeof(r->why), "record is not an array starting with its type");
		return -1;
	}
	if (r->stack_pending && (t > GTR_REC_RETURN_CPU || t == GTR_REC_TASK || t == GTR_REC_DROP)) {
		snprintf(r->why, sizeof(r->why), "stack record not followed by an event record");
		return -1;
	}
	switch (t) {
	case GTR_REC_ENTRY:
	case GTR_REC_RETURN:
	case GTR_REC_ENTRY_CTX:
	case GTR_REC_RETURN_CTX:
	case GTR_REC_ENTRY_DELTA:
	case GTR_REC_RETURN_DELTA:
	case GTR_REC_ENTRY_CPU:
	case GTR_REC_RETURN_CPU:
		return decode_event(r, ev, t, n);
	case GTR_REC_STACK:
		return decode_stack(r, n);
	case GTR_REC_TASK:
		return decode_task(r, n);
	case GTR_REC_DROP:
		return decode_drop(r, drop, n);
	default:
		for (uint64_t i = 1; i < n; i++)
			if (gcr_skip(c, GTR_CBOR_DEPTH)) {
				snprintf(r->why, sizeof(r->why), "malformed record of type %llu",
					 (unsigned long long)t);
				return -1;
			}
		r->skipped++;
		return 0;
	}
}

int gtr_reader_next(struct gtr_reader *r, struct gtr_event *ev,
		    struct gtr_drop *drop)
{
	struct gtr_event ev_scratch;
	struct gtr_drop drop_scratch;

	if (!ev)
		ev = &ev_scratch;
	if (!drop)
		drop = &drop_scratch;
	for (;;) {
		if (r->in_frame) {
			if (!r->rec_left) {
				r->in_frame = false;
				if (r->fc.p != r->fc.end)
					rd_damaged(r, r->frame_off,
						   "event frame: bytes after its last record",
						   "ignored them");
				else if (r->stack_pending)
					rd_damaged(r, r->frame_off,
						   "event frame: stack record not followed by an event record",
						   "ignored it");
				continue;
			}
			const int rc = decode_record(r, ev, drop);
			if (rc > 0)
				return rc;
			if (rc < 0) {
				char why[sizeof(r->why) + 64];
				snprintf(why, sizeof(why), "event frame, record %llu: %s",
					 (unsigned long long)r->rec_no, r->why);
				rd_damaged(r, r->frame_off, why, "rest of the frame skipped");
				r->in_frame = false;
			}
			continue;
		}
		const int rc = rd_advance(r);
		if (rc <= 0)
			return rc;
	}
}
