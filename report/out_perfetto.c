/* SPDX-License-Identifier: MIT */
/*
 * The Perfetto printer (--format perfetto, spec/OUTPUT.md "Perfetto
 * trace"): a protobuf Trace (Perfetto's protos/perfetto/trace/trace.proto)
 * of TrackEvent packets on one packet sequence: a track per process and,
 * under it, one per goroutine; a slice (SLICE_BEGIN at the entry, SLICE_END
 * at the return) per call and an instant per event that is not part of
 * one; values as debug annotations. Event names and annotation names are
 * interned: each is written once, in the InternedData of the first packet
 * that uses it. Packets go out in batches of about 1 MiB compressed with
 * zlib (on a second thread, while the next batch is built), each batch one
 * packet of `compressed_packets`, which Perfetto's importer inflates (a
 * fifth of the size).
 * Field numbers are Perfetto's (tests/e2e/perfetto/ holds the .proto
 * subset the tests decode with).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "map.h"
#include "output_int.h"
#include "protobuf.h"
#include "xalloc.h"

/* Field numbers, as Perfetto's protos/perfetto/trace/ declares them. */
enum {
	TRACE_PACKET = 1,                /* Trace.packet */
	PKT_TIMESTAMP = 8,               /* TracePacket */
	PKT_SEQ_ID = 10,                 /* trusted_packet_sequence_id */
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED = 12,
	PKT_SEQ_FLAGS = 13,
	PKT_STATE_CLEARED = 41,          /* incremental_state_cleared */
	PKT_TRACK_DESC = 60,
	PKT_COMPRESSED = 50,             /* compressed_packets: zlib of packets */
	SEQ_CLEARED = 1,                 /* TracePacket.SequenceFlags */
	SEQ_NEEDS = 2,
	TD_UUID = 1,                     /* TrackDescriptor */
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_PARENT = 5,
	PD_PID = 1,                      /* ProcessDescriptor */
	PD_NAME = 6,
	TE_ANNOTATION = 4,               /* TrackEvent.debug_annotations */
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK = 11,
	TYPE_BEGIN = 1,                  /* TrackEvent.Type */
	TYPE_END = 2,
	TYPE_INSTANT = 3,
	DA_NAME_IID = 1,                 /* DebugAnnotation */
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_POINTER = 7,
	DA_ARRAY = 12,
	ID_EVENT_NAMES = 2,              /* InternedData */
	ID_ANNOTATION_NAMES = 3,
	IN_IID = 1,                      /* EventName, DebugAnnotationName */
	IN_NAME = 2,
};

#define SEQ_ID 1                  /* the one packet sequence */
#define PROCESS_UUID_BIT (1ull << 63)
#define MAX_ENTRIES (1u << 30)    /* tracks, names: far beyond any file */
#define BATCH (1u << 20)          /* bytes of packets compressed together */

/* Strings numbered from 1 (Perfetto's iids), one table per kind of name. */
struct intern {
	struct u64map map;           /* hash of a string (+1 per collision) -> index */
	struct buf pool;             /* the strings, each NUL-terminated */
	uint32_t *off;               /* where string i starts in pool */
	uint32_t n, cap;
	uint32_t field;              /* InternedData field its new entries go to */
};

/* The iids a probe's events use, interned at their first use (0: not
 * yet): its event name, the names of its values as arguments (entry) and
 * as results (return). */
struct pnames {
	uint32_t id;                 /* gtr_probe.id */
	uint64_t name;
	uint64_t keys[2][GTR_MAX_ARGS];
};

/* Annotation names of every event, by their iid slot in struct perfetto. */
enum { K_GOID, K_NOTE, K_STATUS, K_STACK, K_INLINED_INTO, K_CALL_SITE, K_LINE,
       NFIXED };
static const char *const fixed_keys[NFIXED] = {
	"goid", "note", "status", "stack", "inlined_into", "call_site", "line",
};

/* A batch of packets and its compressed form. */
struct batch {
	struct buf raw, z;
	int rc;                      /* compress2()'s */
};

struct track {
	uint32_t pid;
	uint64_t id;                 /* goroutine id, or thread id | 1 << 63 */
};

struct perfetto {
	bool started;                /* the first packet went out */
	struct intern names, keys;   /* event names, annotation names */
	struct u64map track_map;     /* hash of (pid, id) (+1 per collision) -> index */
	struct track *tracks;        /* uuid of tracks[i]: i + 1 */
	uint32_t ntracks, tracks_cap;
	struct u64map procs;         /* pid -> 1: its track was described */
	struct u64map pn_map;        /* probe id -> index in pn */
	struct pnames *pn;
	uint32_t npn, pn_cap, pn_last;
	uint64_t fixed[NFIXED];      /* iids of fixed_keys, 0 until used */
	struct buf pk;               /* packets not compressed yet */
	struct batch job;            /* the batch being compressed */
	pthread_t thread;            /* compressing it, when `threaded` */
	bool busy, threaded;
	struct buf in;               /* InternedData of the packet being built */
	struct buf ev;               /* its TrackEvent */
	struct buf tmp;              /* a value as text */
};

/* The printer's state, its name tables told their InternedData fields. */
static struct perfetto *perfetto_of(const struct output *o)
{
	struct perfetto *pf = output_state(o);

	pf->names.field = ID_EVENT_NAMES;
	pf->keys.field = ID_ANNOTATION_NAMES;
	return pf;
}

/* ------------------------------------------------------------ interning */

/* The iid of `s` in `t`; a new one is added to pf->in, to go out with the
 * packet being built. */
static uint64_t intern(struct perfetto *pf, struct intern *t, const char *s)
{
	uint64_t key = u64map_hash_str(s, t->field);
	uint32_t *v;

	while ((v = u64map_get(&t->map, key)))
		if (!strcmp(t->pool.data + t->off[*v], s))
			return *v + 1ull;
		else
			key++;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->off = xrealloc(t->off, t->cap * sizeof(*t->off), "perfetto names");
	}
	if (t->pool.len >= UINT32_MAX / 2)
		xalloc_die("perfetto names: %zu bytes", t->pool.len);
	t->off[t->n] = (uint32_t)t->pool.len;
	buf_add(&t->pool, s, strlen(s) + 1);
	if (u64map_put(&t->map, key, t->n, MAX_ENTRIES) < 0)
		xalloc_die("perfetto names");
	t->n++;
	const size_t m = pb_open(&pf->in, t->field);
	pb_uint(&pf->in, IN_IID, t->n);
	pb_string(&pf->in, IN_NAME, s);
	pb_close(&pf->in, m);
	return t->n;
}

static void intern_free(struct intern *t)
{
	buf_free(&t->pool);
	free(t->off);
	u64map_free(&t->map);
}

/* ------------------------------------------------------------ packets */

/* Opens a TracePacket on the sequence: the first clears its state. */
static size_t packet_open(struct perfetto *pf, struct buf *b)
{
	const size_t m = pb_open(b, TRACE_PACKET);

	pb_uint(b, PKT_SEQ_ID, SEQ_ID);
	pb_uint(b, PKT_SEQ_FLAGS, pf->started ? SEQ_NEEDS : SEQ_CLEARED);
	if (!pf->started)   /* what importers before sequence_flags read */
		pb_uint(b, PKT_STATE_CLEARED, 1);
	pf->started = true;
	return m;
}

/* Describes the track of process `pid`, named "COMM PID". */
static void describe_process(struct perfetto *pf, uint32_t pid, const char *comm)
{
	struct buf *b = &pf->pk;
	char name[GTR_COMM_LEN + 16];

	if (u64map_get(&pf->procs, pid))
		return;
	if (u64map_put(&pf->procs, pid, 1, MAX_ENTRIES) < 0)
		xalloc_die("perfetto tracks");
	snprintf(name, sizeof(name), "%s %" PRIu32, comm, pid);
	const size_t m = packet_open(pf, b);
	const size_t td = pb_open(b, PKT_TRACK_DESC);
	pb_uint(b, TD_UUID, PROCESS_UUID_BIT | pid);
	const size_t pd = pb_open(b, TD_PROCESS);
	pb_uint(b, PD_PID, pid);
	pb_string(b, PD_NAME, name);
	pb_close(b, pd);
	pb_close(b, td);
	pb_close(b, m);
}

/* The uuid of the track of `e`'s goroutine (its thread when the goroutine
 * is unknown), described (with its process) the first time. */
static uint64_t track_of(struct perfetto *pf, const struct report_event *e)
{
	struct buf *b = &pf->pk;
	const struct gtr_event *ev = e->ev;
	const uint64_t id = ev->goid ? ev->goid : ev->tid | 1ull << 63;
	uint64_t key = u64map_hash2(ev->pid, id);
	uint32_t *v;

	while ((v = u64map_get(&pf->track_map, key)))
		if (pf->tracks[*v].pid == ev->pid && pf->tracks[*v].id == id)
			return *v + 1ull;
		else
			key++;
	if (pf->ntracks == pf->tracks_cap) {
		pf->tracks_cap = pf->tracks_cap ? pf->tracks_cap * 2 : 64;
		pf->tracks = xrealloc(pf->tracks, pf->tracks_cap * sizeof(*pf->tracks),
				      "perfetto tracks");
	}
	pf->tracks[pf->ntracks] = (struct track){ ev->pid, id };
	if (u64map_put(&pf->track_map, key, pf->ntracks, MAX_ENTRIES) < 0)
		xalloc_die("perfetto tracks");
	const uint64_t uuid = ++pf->ntracks;

	describe_process(pf, ev->pid, e->comm ? e->comm : "");
	char name[48];
	if (ev->goid)
		snprintf(name, sizeof(name), "goroutine %" PRIu64, ev->goid);
	else
		snprintf(name, sizeof(name), "thread %" PRIu64, (uint64_t)ev->tid);
	const size_t m = packet_open(pf, b);
	const size_t td = pb_open(b, PKT_TRACK_DESC);
	pb_uint(b, TD_UUID, uuid);
	pb_uint(b, TD_PARENT, PROCESS_UUID_BIT | ev->pid);
	pb_string(b, TD_NAME, name);
	pb_close(b, td);
	pb_close(b, m);
	return uuid;
}

/* Compresses job->raw into job->z (zlib, level 1: the fastest, a fifth
 * of the size); job->rc is zlib's answer. Runs on the batch thread. */
static void *batch_compress(void *arg)
{
	struct batch *job = arg;
	uLongf n = compressBound(job->raw.len);

	buf_reset(&job->z);
	buf_reserve(&job->z, n);
	job->rc = compress2((Bytef *)job->z.data, &n, (const Bytef *)job->raw.data,
			    job->raw.len, 1);
	job->z.len = n;
	return NULL;
}

/* Waits for the batch being compressed, if any, and appends it to `b` as
 * one packet of compressed_packets. */
static void batch_collect(struct perfetto *pf, struct buf *b)
{
	struct batch *job = &pf->job;

	if (!pf->busy)
		return;
	if (pf->threaded)
		pthread_join(pf->thread, NULL);
	pf->busy = false;
	if (job->rc != Z_OK)   /* Z_MEM_ERROR: the output was sized by compressBound */
		xalloc_die("perfetto compression, %zu bytes", job->raw.len);
	const size_t m = pb_open(b, TRACE_PACKET);
	pb_bytes(b, PKT_COMPRESSED, job->z.data, job->z.len);
	pb_close(b, m);
}

/*
 * Sends the packets of pf->pk out, compressed: on a thread of its own
 * while the next batch is built (half the time on two CPUs), its result
 * appended to `b` by the next call; `last` waits for it.
 */
static void batch_flush(struct perfetto *pf, struct buf *b, bool last)
{
	if (pf->pk.len) {
		batch_collect(pf, b);
		struct buf t = pf->job.raw;   /* the spent batch's memory, reused */
		pf->job.raw = pf->pk;
		pf->pk = t;
		buf_reset(&pf->pk);
		pf->busy = true;
		pf->threaded = !last && !pthread_create(&pf->thread, NULL, batch_compress,
							  &pf->job);
		if (!pf->threaded)
			batch_compress(&pf->job);
	}
	if (last)
		batch_collect(pf, b);
}

/* Writes the packet built in pf->in and pf->ev at `ts` and empties them;
 * sends the batch out when it is full. */
static void packet_flush(struct perfetto *pf, struct buf *out, uint64_t ts)
{
	struct buf *b = &pf->pk;
	const size_t m = packet_open(pf, b);

	pb_uint(b, PKT_TIMESTAMP, ts);
	if (pf->in.len)
		pb_bytes(b, PKT_INTERNED, pf->in.data, pf->in.len);
	pb_bytes(b, PKT_TRACK_EVENT, pf->ev.data, pf->ev.len);
	pb_close(b, m);
	buf_reset(&pf->in);
	buf_reset(&pf->ev);
	if (pf->pk.len >= BATCH)
		batch_flush(pf, out, false);
}

/* ------------------------------------------------------------ annotations */

/* The iid of annotation name fixed_keys[k]. */
static uint64_t fixed_key(struct perfetto *pf, unsigned k)
{
	if (!pf->fixed[k])
		pf->fixed[k] = intern(pf, &pf->keys, fixed_keys[k]);
	return pf->fixed[k];
}

/* The names probe `p` uses, NULL when it is not described. */
static struct pnames *probe_names(struct perfetto *pf, const struct gtr_probe *p)
{
	if (!p)
		return NULL;
	if (pf->npn && pf->pn[pf->pn_last].id == p->id)
		return &pf->pn[pf->pn_last];
	const uint32_t *v = u64map_get(&pf->pn_map, p->id);
	if (!v) {
		if (pf->npn == pf->pn_cap) {
			pf->pn_cap = pf->pn_cap ? pf->pn_cap * 2 : 16;
			pf->pn = xrealloc(pf->pn, pf->pn_cap * sizeof(*pf->pn), "perfetto names");
		}
		memset(&pf->pn[pf->npn], 0, sizeof(*pf->pn));
		pf->pn[pf->npn].id = p->id;
		if (u64map_put(&pf->pn_map, p->id, pf->npn, MAX_ENTRIES) < 0)
			xalloc_die("perfetto names");
		v = u64map_get(&pf->pn_map, p->id);
		pf->npn++;
	}
	pf->pn_last = *v;
	return &pf->pn[*v];
}

/* Opens a debug annotation whose name has iid `key` in the event being built. */
static size_t ann_open(struct perfetto *pf, uint64_t key)
{
	const size_t m = pb_open(&pf->ev, TE_ANNOTATION);

	pb_uint(&pf->ev, DA_NAME_IID, key);
	return m;
}

static void ann_uint(struct perfetto *pf, unsigned key, uint64_t v)
{
	const size_t m = ann_open(pf, fixed_key(pf, key));

	pb_uint(&pf->ev, DA_UINT, v);
	pb_close(&pf->ev, m);
}

static void ann_string(struct perfetto *pf, unsigned key, const char *s)
{
	const size_t m = ann_open(pf, fixed_key(pf, key));

	pb_string(&pf->ev, DA_STRING, s);
	pb_close(&pf->ev, m);
}

/* Value `v` (of argument `a`, NULL unknown) as the value of the annotation
 * being written: numbers as such (pointers as pointers, floats as
 * doubles), anything else as the text a CSV cell shows. */
static void ann_value(struct perfetto *pf, const struct gtr_value *v, const struct gtr_arg *a)
{
	struct buf *eb = &pf->ev;

	switch (v->kind) {
	case GTR_VAL_INT:
		pb_int(eb, DA_INT, v->v.i);
		return;
	case GTR_VAL_UINT:
		if (value_is_float(v, a))
			pb_double(eb, DA_DOUBLE, out_value_double(v, a));
		else
			pb_uint(eb, arg_is(a, GTR_TYPE_PTR) ? DA_POINTER : DA_UINT, v->v.u);
		return;
	case GTR_VAL_BOOL:
		pb_uint(eb, DA_BOOL, v->v.b);
		return;
	default:
		buf_reset(&pf->tmp);
		out_bare_value(&pf->tmp, v, a, -1);
		pb_bytes(eb, DA_STRING, pf->tmp.data, pf->tmp.len);
	}
}

/*
 * The iid of the name of value `i` of probe `p` (NULL: not described):
 * its parameter's name, or when that is unknown or already used, "argN"
 * for entries, "retN" for results (`ret`), N from 0.
 */
static uint64_t value_key(struct perfetto *pf, const struct gtr_probe *p, uint32_t i, bool ret)
{
	const struct gtr_arg *a = arg_at(p, i);
	bool named = a && name_known(a->name);
	char key[32];

	for (uint32_t j = 0; j < i && named; j++) {
		const struct gtr_arg *o = arg_at(p, j);
		named = !(o && o->name && !strcmp(o->name, a->name));
	}
	if (named)
		return intern(pf, &pf->keys, a->name);
	snprintf(key, sizeof(key), "%s%" PRIu32, ret ? "ret" : "arg", i);
	return intern(pf, &pf->keys, key);
}

/* The values of `ev` (NULL: none) from probe `p`, one annotation each,
 * named by value_key(). */
static void ann_values(struct perfetto *pf, const struct gtr_probe *p,
		       const struct gtr_event *ev, bool ret)
{
	const uint32_t nvals = !ev ? 0 : ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;
	struct pnames *pn = probe_names(pf, p);

	for (uint32_t i = 0; i < nvals; i++) {
		uint64_t key = pn ? pn->keys[ret][i] : 0;
		if (!key) {
			key = value_key(pf, p, i, ret);
			if (pn)
				pn->keys[ret][i] = key;
		}
		const size_t m = ann_open(pf, key);
		ann_value(pf, &ev->vals[i], arg_at(p, i));
		pb_close(&pf->ev, m);
	}
}

/* An element of an array annotation: the string in pf->tmp. */
static void ann_elem(struct perfetto *pf)
{
	const size_t f = pb_open(&pf->ev, DA_ARRAY);

	pb_bytes(&pf->ev, DA_STRING, pf->tmp.data, pf->tmp.len);
	pb_close(&pf->ev, f);
}

/* The stack of `ev`, when it has one: an array of "name+0xoff" frames,
 * each after the functions inlined there, "F (inlined)", deepest first,
 * as text and JSON show them. */
static void ann_stack(struct perfetto *pf, const struct output *o, const struct gtr_event *ev)
{
	if (!ev || !ev->stack || !ev->nstack)
		return;
	const size_t m = ann_open(pf, fixed_key(pf, K_STACK));
	for (uint32_t k = 0; k < ev->nstack && k < GTR_MAX_STACK; k++) {
		const char *inl[GTR_MAX_INLINE_DEPTH];
		const uint32_t ni = output_inlined(o, ev->pid, ev->stack[k], k, inl,
						   GTR_MAX_INLINE_DEPTH);

		for (uint32_t i = 0; i < ni; i++) {
			buf_reset(&pf->tmp);
			output_text_bytes(&pf->tmp, (const uint8_t *)inl[i], strlen(inl[i]),
					  false);
			buf_puts(&pf->tmp, " (inlined)");
			ann_elem(pf);
		}
		buf_reset(&pf->tmp);
		output_frame(o, &pf->tmp, ev->pid, ev->stack[k], k, false, false);
		ann_elem(pf);
	}
	pb_close(&pf->ev, m);
}

/* Where probe `p` fires, when not at a function's entry or returns: the
 * function an inlined copy is in and its call site, or a source line. */
static void ann_site(struct perfetto *pf, const struct gtr_probe *p)
{
	if (p && p->inlined_into && p->inlined_into[0])
		ann_string(pf, K_INLINED_INTO, p->inlined_into);
	if (p && p->call_site && p->call_site[0])
		ann_string(pf, K_CALL_SITE, p->call_site);
	if (p && p->line && p->line[0])
		ann_string(pf, K_LINE, p->line);
}

/* ------------------------------------------------------------ events */

/* Starts a TrackEvent of `type` on `track`, named after probe `p`. */
static void event_start(struct perfetto *pf, unsigned type, uint64_t track,
			const struct gtr_probe *p, const struct report_event *e)
{
	char tmp[32];
	struct pnames *pn = probe_names(pf, p);

	pb_uint(&pf->ev, TE_TYPE, type);
	pb_uint(&pf->ev, TE_TRACK, track);
	if (type == TYPE_END)
		return;
	uint64_t iid = pn ? pn->name : 0;
	if (!iid) {
		const char *name = p && p->func ? p->func : NULL;
		if (!name) {
			snprintf(tmp, sizeof(tmp), "probe#%" PRIu32, e->ev->probe_id);
			name = tmp;
		}
		iid = intern(pf, &pf->names, name);
		if (pn)
			pn->name = iid;
	}
	pb_uint(&pf->ev, TE_NAME_IID, iid);
}

/* The span `s` of `e`: a slice (a begin event with the entry's values,
 * an end event with the return's) or an instant. */
static void perfetto_span(struct output *o, struct buf *b, const struct report_event *e,
			  const struct out_span *s)
{
	struct perfetto *pf = perfetto_of(o);
	const uint64_t track = track_of(pf, e);

	event_start(pf, s->complete ? TYPE_BEGIN : TYPE_INSTANT, track, s->probe, e);
	ann_uint(pf, K_GOID, e->ev->goid);
	if (s->note)
		ann_string(pf, K_NOTE, s->note);
	if (s->status)
		ann_string(pf, K_STATUS, s->status);
	ann_site(pf, s->probe);
	ann_values(pf, s->eprobe, s->entry, false);
	if (!s->complete)
		ann_values(pf, s->rprobe, s->ret, true);
	ann_stack(pf, o, out_call_stack(s->entry, s->ret));
	packet_flush(pf, b, s->ts);
	if (!s->complete)
		return;
	event_start(pf, TYPE_END, track, s->probe, e);
	ann_values(pf, s->rprobe, s->ret, true);
	packet_flush(pf, b, s->end_ns);
}

static int perfetto_put(struct output *o, struct buf *b, const struct report_event *e)
{
	return out_span_put(o, b, e, perfetto_span);
}

static int perfetto_put_open(struct output *o, struct buf *b, const struct report_event *e,
			     uint64_t end_ns, const char *status)
{
	return out_span_put_open(o, b, e, end_ns, status, perfetto_span);
}

static void perfetto_free(struct output *o)
{
	struct perfetto *pf = output_state(o);

	intern_free(&pf->names);
	intern_free(&pf->keys);
	u64map_free(&pf->track_map);
	u64map_free(&pf->procs);
	u64map_free(&pf->pn_map);
	free(pf->pn);
	free(pf->tracks);
	if (pf->busy && pf->threaded)   /* a run cut short: the batch is not wanted */
		pthread_join(pf->thread, NULL);
	buf_free(&pf->pk);
	buf_free(&pf->job.raw);
	buf_free(&pf->job.z);
	buf_free(&pf->in);
	buf_free(&pf->ev);
	buf_free(&pf->tmp);
}

static void perfetto_end(struct output *o, struct buf *b)
{
	batch_flush(perfetto_of(o), b, true);
}

const struct output_format out_perfetto = {
	.name = "perfetto",
	.suffix = "pftrace",
	.flags = OUTPUT_F_UNORDERED | OUTPUT_F_BINARY,
	.state_size = sizeof(struct perfetto),
	.put = perfetto_put,
	.put_open = perfetto_put_open,
	.end = perfetto_end,
	.free = perfetto_free,
};
