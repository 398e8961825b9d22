/* SPDX-License-Identifier: MIT */
/*
 * The .gtr streaming reader. Memory is bounded: one input window of at most
 * twice the largest block (2 * GTR_MAX_BLOCK), two decompressed frames
 * (<= GTR_MAX_FRAME each: the current one and the next, decompressed ahead
 * by a second thread) and one compressed copy of the next, the metadata (bounded by GTR_MAX_PROBES,
 * GTR_MAX_BINARIES, GTR_MAX_META_BYTES, GTR_MAX_SYMBOLS, GTR_MAX_MAPPINGS,
 * GTR_MAX_PROCESSES, GTR_MAX_CLOCKS, GTR_MAX_LOSSES, GTR_MAX_INDEX; what is
 * not kept is counted in struct gtr_overflow), the per-frame delta state
 * (GTR_FRAME_PROBES) and the task names (GTR_MAX_TASKS).
 * Every length and count read from the file is checked before use. Damaged
 * blocks are counted and skipped by scanning for the next block whose
 * checksum holds (spec/FORMAT.md, "Damage and truncation").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "gtr_cbor_internal.h"
#include "gtr_internal.h"

#define WINDOW_INITIAL (1u << 20)
#define WINDOW_MAX (2 * (GTR_BLOCK_HDR_LEN + GTR_MAX_BLOCK))
#define DIRECT_PROBES 1024 /* probe ids below this are found by index */
/* Bytes past a frame's declared size given to zstd as room: its fast
 * loops need some; a frame that writes into them is reported as one that
 * does not match its declared size. */
#define ZSTD_SLACK 64
/*
 * Checksum work allowed when resynchronising, beyond 16 times the file
 * offset reached (spec "Limits"): bounds the time crafted input can cost.
 */
#define GTR_RESYNC_BUDGET (1ull << 30)

static char empty_str[1];

struct comm {
	char s[GTR_COMM_LEN + 1];
};

/* Delta state of one probe in the current frame (record types 6, 7). */
struct rstate {
	uint32_t nvals;
	uint64_t vals[GTR_MAX_ARGS];
};

/* Symbols of one binary, sorted lazily by address. */
struct symtab {
	uint32_t binary_id;
	uint32_t n, cap;
	bool sorted;
	struct gtr_symbol *syms;
};

struct index_entry {
	uint64_t off, first_ts, last_ts, events;
};

/*
 * Decompression of the next event frame on a second thread while the
 * current one is decoded. The reader peeks at the block after the frame it
 * starts; when it is an event frame, a copy of its compressed bytes goes to
 * the thread. The frame is used only when the reader reaches the same bytes
 * at the same offset, after their checksum held; otherwise it is dropped.
 * The thread owns in/out/dctx while state is PF_QUEUED, the reader
 * otherwise.
 */
enum { PF_IDLE, PF_QUEUED, PF_DONE };

struct prefetch {
	bool on;                /* gtr_reader_set_prefetch(); default on */
	bool started, quit, failed;
	unsigned owner;         /* fork_gen when the thread started */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state;              /* PF_*, under mu */
	bool pending;           /* a frame was handed over and not taken back
				 * (the reader's own copy of state != PF_IDLE) */
	uint64_t off;           /* file offset of the block */
	uint8_t *in;            /* its payload (compressed) */
	size_t in_len, in_cap;
	uint8_t *out;           /* decompressed, content_size bytes */
	size_t out_cap, content_size;
	size_t result;          /* ZSTD_decompressDCtx() */
	ZSTD_DCtx *dctx;
};

struct gtr_reader {
	int fd;
	char *path;
	char err[768];
	char why[160];
	unsigned major, minor;

	/* input window: buf[pos, len) holds file bytes from buf_off + pos */
	uint8_t *buf;
	size_t cap, pos, len;
	uint64_t buf_off;
	bool eof;

	/* current event frame */
	ZSTD_DCtx *dctx;
	uint8_t *dbuf;
	size_t dcap;
	struct gcr fc;
	bool in_frame;
	uint64_t frame_off, rec_left, rec_no, prev_ts;
	bool have_ctx;
	uint32_t ctx_pid, ctx_tid, ctx_cpu;
	uint64_t ctx_goid;
	uint64_t frame_gen;                /* bumped per frame */
	uint64_t ps_dgen[DIRECT_PROBES];   /* == frame_gen: ps_dslot valid */
	uint32_t ps_dslot[DIRECT_PROBES];
	struct gtr_map ps_ix;              /* other probe ids -> slot */
	struct rstate *ps;                 /* GTR_FRAME_PROBES slots */
	uint32_t nps;
	uint64_t stack[GTR_MAX_STACK];
	uint32_t nstack;
	bool stack_pending;
	uint64_t stack_prev;

	/* metadata */
	struct gtr_host host;
	bool host_seen;
	struct gtr_probe **probes;
	uint32_t nprobes, probes_cap;
	struct gtr_map probe_ix;
	const struct gtr_probe *direct[DIRECT_PROBES];
	struct gtr_binary **binaries;
	uint32_t nbinaries, binaries_cap;
	size_t meta_bytes;

	struct symtab *symtabs;
	uint32_t nsymtabs, symtabs_cap;
	uint64_t nsyms;
	struct gtr_mapping *maps;
	uint32_t nmaps, maps_cap;
	uint32_t *map_order;               /* by (pid, start, file order) */
	bool maps_sorted;
	struct gtr_process *procs;
	uint32_t nprocs, procs_cap;
	struct gtr_clock_sample *clocks;
	uint32_t nclocks, clocks_cap;
	struct gtr_loss *losses;
	uint32_t nlosses, losses_cap;
	struct gtr_map loss_ix;
	struct gtr_overflow overflow;
	uint32_t *sum_ids;
	uint64_t *sum_events;
	struct index_entry *index;
	uint32_t nindex;
	bool index_loaded;

	/* task names */
	struct gtr_map task_ix;
	struct comm *comms;
	uint32_t ncomms, comms_cap;

	uint64_t damage, skipped;
	bool truncated;
	uint64_t crc_work;      /* bytes checksummed so far */
	struct gtr_summary summary;
	struct prefetch pf;
};

static void rmsg(struct gtr_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rmsg(struct gtr_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

static void damaged(struct gtr_reader *r, uint64_t off, const char *why,
		    const char *what)
{
	r->damage++;
	rmsg(r, "%s: damaged block at byte %llu (%s); %s", r->path,
	     (unsigned long long)off, why, what);
}

/* ------------------------------------------------------------- input window */

/*
 * Makes n bytes (n <= WINDOW_MAX / 2) available at buf + pos. Returns how many
 * are (fewer only at end of file), or -errno on a read error.
 */
static ssize_t win_fill(struct gtr_reader *r, size_t n)
{
	if (r->len - r->pos >= n)
		return (ssize_t)n;
	/*
	 * Keep cap >= 2n so that compaction runs only after n bytes were
	 * consumed: resynchronising over many candidate headers that declare
	 * large lengths then costs linear, not quadratic, time.
	 */
	if (n > r->cap / 2 && r->cap < WINDOW_MAX) {
		size_t cap = 2 * n > 2 * r->cap ? 2 * n : 2 * r->cap;
		if (cap > WINDOW_MAX)
			cap = WINDOW_MAX;
		uint8_t *b = realloc(r->buf, cap);
		if (!b) {
			rmsg(r, "%s: out of memory for a block of %zu bytes", r->path, n);
			return -ENOMEM;
		}
		r->buf = b;
		r->cap = cap;
	}
	if (r->pos + n > r->cap) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->buf_off += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	while (r->len - r->pos < n && !r->eof) {
		const ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			const int e = errno;
			rmsg(r, "%s: read error at byte %llu: %s", r->path,
			     (unsigned long long)(r->buf_off + r->len), strerror(e));
			return -e;
		}
		if (!got)
			r->eof = true;
		r->len += (size_t)got;
	}
	return (ssize_t)(r->len - r->pos < n ? r->len - r->pos : n);
}

enum { TB_OK = 1, TB_BAD = 2, TB_SHORT = 3 };

/* Checks the block at pos: TB_OK, TB_BAD (reason in r->why), TB_SHORT, -errno. */
static int try_block(struct gtr_reader *r)
{
	ssize_t a = win_fill(r, GTR_BLOCK_HDR_LEN);

	if (a < 0)
		return (int)a;
	if (a < GTR_BLOCK_HDR_LEN) {
		snprintf(r->why, sizeof(r->why), "incomplete block header");
		return TB_SHORT;
	}
	const uint8_t *h = r->buf + r->pos;
	if (memcmp(h, GTR_BLOCK_MAGIC, 4)) {
		snprintf(r->why, sizeof(r->why), "no block sync magic");
		return TB_BAD;
	}
	const uint32_t len = gtr_get_le32(h + 8);
	if (len > GTR_MAX_BLOCK) {
		snprintf(r->why, sizeof(r->why), "block length %u exceeds the limit of %u",
			 len, GTR_MAX_BLOCK);
		return TB_BAD;
	}
	a = win_fill(r, GTR_BLOCK_HDR_LEN + (size_t)len);
	if (a < 0)
		return (int)a;
	if ((size_t)a < GTR_BLOCK_HDR_LEN + (size_t)len) {
		snprintf(r->why, sizeof(r->why), "incomplete block");
		return TB_SHORT;
	}
	h = r->buf + r->pos;
	r->crc_work += GTR_BLOCK_HDR_LEN + (uint64_t)len;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* (fuzzers build with this set so mutations reach the decoders) */
	if (gtr_get_le32(h + 12) != gtr_block_crc(h, h + GTR_BLOCK_HDR_LEN, len)) {
#else
	if (0) {
#endif
		snprintf(r->why, sizeof(r->why), "bad checksum");
		return TB_BAD;
	}
	return TB_OK;
}

struct block {
	uint32_t type, len;
	const uint8_t *payload; /* valid until the next window operation */
	uint64_t off;
};

static void take_block(struct gtr_reader *r, struct block *b)
{
	const uint8_t *h = r->buf + r->pos;

	b->type = gtr_get_le32(h + 4);
	b->len = gtr_get_le32(h + 8);
	b->payload = h + GTR_BLOCK_HDR_LEN;
	b->off = r->buf_off + r->pos;
	r->pos += GTR_BLOCK_HDR_LEN + b->len;
}

/*
 * Reads the next valid block, resynchronising past damage. Returns 1 with
 * *b filled, 0 at the end of the file (clean, truncated or damaged), or
 * -errno on a read error.
 */
static int read_block(struct gtr_reader *r, struct block *b)
{
	ssize_t a = win_fill(r, 1);

	if (a <= 0)
		return (int)a;
	int rc = try_block(r);
	if (rc < 0)
		return rc;
	if (rc == TB_OK) {
		take_block(r, b);
		return 1;
	}
	const int first = rc;
	const uint64_t bad_off = r->buf_off + r->pos;
	char why[sizeof(r->why)];
	memcpy(why, r->why, sizeof(why));

	r->pos++;
	for (;;) {
		const uint8_t *m = memmem(r->buf + r->pos, r->len - r->pos,
					  GTR_BLOCK_MAGIC, 4);
		if (!m) {
			if (r->eof)
				break;
			if (r->len - r->pos > 3)
				r->pos = r->len - 3;
			a = win_fill(r, r->len - r->pos + 1);
			if (a < 0)
				return (int)a;
			continue;
		}
		r->pos = (size_t)(m - r->buf);
		rc = try_block(r);
		if (rc < 0)
			return rc;
		if (rc == TB_OK) {
			char what[64];
			snprintf(what, sizeof(what), "skipped to byte %llu",
				 (unsigned long long)(r->buf_off + r->pos));
			damaged(r, bad_off, why, what);
			take_block(r, b);
			return 1;
		}
		if (r->crc_work > GTR_RESYNC_BUDGET + 16 * (r->buf_off + r->pos)) {
			/* Only crafted input gets here: many fake headers with
			 * large lengths would make the scan quadratic. */
			damaged(r, bad_off, why,
				"no valid block found within the resynchronisation limit; reading stopped");
			r->pos = r->len;
			r->eof = true;
			return 0;
		}
		r->pos++;
	}
	r->pos = r->len;
	if (first == TB_SHORT) {
		r->truncated = true;
		rmsg(r, "%s: truncated at byte %llu (%s); events of every complete block before it were read",
		     r->path, (unsigned long long)bad_off, why);
	} else {
		damaged(r, bad_off, why, "skipped to the end of the file");
	}
	return 0;
}

/* ------------------------------------------------------------- metadata */

static void free_str(char *s)
{
	if (s != empty_str)
		free(s);
}

/* Replaces *dst by a NUL-terminated copy of s[n]. 0, or -1 over the limits. */
static int set_str(struct gtr_reader *r, char **dst, const uint8_t *s, size_t n)
{
	if (r->meta_bytes + n + 1 > GTR_MAX_META_BYTES)
		return -1;
	char *c = malloc(n + 1);
	if (!c)
		return -1;
	memcpy(c, s, n);
	c[n] = 0;
	r->meta_bytes += n + 1;
	if (*dst)
		free_str(*dst);
	*dst = c;
	return 0;
}

/* Reads a text value into *dst. */
static int get_str(struct gtr_reader *r, struct gcr *c, char **dst)
{
	const uint8_t *s;
	size_t n;

	if (gcr_text(c, &s, &n, GTR_MAX_NAME))
		return -1;
	return set_str(r, dst, s, n);
}

/* Starts a map with text keys: number of entries to *n. */
static int get_map(struct gcr *c, uint64_t *n)
{
	if (gcr_expect(c, GCR_MAP, n))
		return -1;
	return *n > (uint64_t)(c->end - c->p) ? -1 : 0;
}

static int get_key(struct gcr *c, const uint8_t **k, size_t *kn)
{
	return gcr_text(c, k, kn, GTR_MAX_NAME);
}

/*
 * Table-driven decoding of the metadata maps. A table lists the keys of a
 * map whose values go straight into a struct (`base`), by kind and offset;
 * keys with nested values go to a callback; every other key is skipped.
 */
enum mf_kind {
	MF_U64,  /* uint64_t: unsigned integer */
	MF_U32,  /* uint32_t: unsigned integer that fits 32 bits */
	MF_I32,  /* int32_t: unsigned or negative integer in [-2^31, 2^31) */
	MF_BOOL, /* bool */
	MF_STR,  /* char *: text of at most GTR_MAX_NAME bytes, copied */
	MF_TYPE, /* enum gtr_type: type name, unknown ones GTR_TYPE_OTHER */
	MF_KIND, /* enum gtr_kind: "entry" or "return", nothing else */
};

struct map_field {
	const char *key;
	enum mf_kind kind;
	size_t off;      /* of the destination in *base */
};

#define MF(key, kind, type, member) { key, kind, offsetof(type, member) }

/*
 * Decodes a key that is not in the table: 0 when done, -1 on malformed
 * input, 1 when the key is not one it knows (decode_map() skips its value).
 */
typedef int (*map_cb)(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		      size_t kn, void *base);

static int decode_field(struct gtr_reader *r, struct gcr *c,
			const struct map_field *f, void *base)
{
	void *dst = (char *)base + f->off;
	const uint8_t *s;
	size_t sn;
	unsigned major, ai;
	uint64_t v;

	switch (f->kind) {
	case MF_U64:
		return gcr_uint(c, dst);
	case MF_U32:
		return gcr_u32(c, dst);
	case MF_BOOL:
		return gcr_bool(c, dst);
	case MF_STR:
		return get_str(r, c, dst);
	case MF_I32:
		if (gcr_head(c, &major, &ai, &v) || v > INT32_MAX)
			return -1;
		if (major == GCR_UINT)
			*(int32_t *)dst = (int32_t)v;
		else if (major == GCR_NEGINT)
			*(int32_t *)dst = -(int32_t)v - 1;
		else
			return -1;
		return 0;
	case MF_TYPE:
		if (gcr_text(c, &s, &sn, GTR_MAX_NAME))
			return -1;
		*(enum gtr_type *)dst = gtr_type_from_name((const char *)s, sn);
		return 0;
	case MF_KIND:
		if (gcr_text(c, &s, &sn, GTR_MAX_NAME))
			return -1;
		if (gcr_key_is(s, sn, "entry"))
			*(enum gtr_kind *)dst = GTR_KIND_ENTRY;
		else if (gcr_key_is(s, sn, "return"))
			*(enum gtr_kind *)dst = GTR_KIND_RETURN;
		else
			return -1;
		return 0;
	}
	return -1;
}

/*
 * Decodes a map with text keys into *base: the keys of fields[] by the
 * table, others by cb when given, the rest skipped. When seen is given,
 * bit i of *seen is set if the map had fields[i]. 0, or -1 when malformed.
 */
static int decode_map(struct gtr_reader *r, struct gcr *c,
		      const struct map_field *fields, size_t nfields, void *base,
		      map_cb cb, uint32_t *seen)
{
	uint64_t n;
	const uint8_t *k;
	size_t kn;

	if (get_map(c, &n))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		if (get_key(c, &k, &kn))
			return -1;
		size_t f = 0;
		while (f < nfields && !gcr_key_is(k, kn, fields[f].key))
			f++;
		int rc;
		if (f < nfields) {
			rc = decode_field(r, c, &fields[f], base);
			if (seen && f < 32)
				*seen |= 1u << f;
		} else {
			rc = cb ? cb(r, c, k, kn, base) : 1;
			if (rc > 0)
				rc = gcr_skip(c, GTR_CBOR_DEPTH);
		}
		if (rc)
			return -1;
	}
	return 0;
}

#define DECODE_MAP(r, c, fields, base, cb, seen) \
	decode_map(r, c, fields, sizeof(fields) / sizeof((fields)[0]), base, cb, seen)

/* The "clocks" map of HOST, and a CLOCK block. */
static const struct map_field clock_fields[] = {
	MF("monotonic_ns", MF_U64, struct gtr_host, start_mono_ns),
	MF("realtime_ns", MF_U64, struct gtr_host, start_realtime_ns),
	MF("boottime_ns", MF_U64, struct gtr_host, start_boottime_ns),
};

static const struct map_field host_fields[] = {
	MF("hostname", MF_STR, struct gtr_host, hostname),
	MF("kernel", MF_STR, struct gtr_host, kernel),
	MF("machine", MF_STR, struct gtr_host, machine),
	MF("recorder", MF_STR, struct gtr_host, recorder),
};

static int host_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		    size_t kn, void *base)
{
	if (!gcr_key_is(k, kn, "clocks"))
		return 1;
	return DECODE_MAP(r, c, clock_fields, base, NULL, NULL);
}

static int parse_host(struct gtr_reader *r, struct gcr *c)
{
	return DECODE_MAP(r, c, host_fields, &r->host, host_key, NULL);
}

static void free_binary(struct gtr_binary *b)
{
	if (!b)
		return;
	free_str(b->path);
	free_str(b->build_id);
	free_str(b->go_build_id);
	free_str(b->go_version);
	free_str(b->compiler);
	free_str(b->arch);
	free_str(b->abi);
	free_str(b->go_version_source);
	free_str(b->goid_source);
	free(b);
}

static void fill_empty(char **s)
{
	if (!*s)
		*s = empty_str;
}

static const struct map_field binary_fields[] = {
	MF("id", MF_U32, struct gtr_binary, id), /* required: bit 0 of seen */
	MF("path", MF_STR, struct gtr_binary, path),
	MF("build_id", MF_STR, struct gtr_binary, build_id),
	MF("go_build_id", MF_STR, struct gtr_binary, go_build_id),
	MF("go_version", MF_STR, struct gtr_binary, go_version),
	MF("compiler", MF_STR, struct gtr_binary, compiler),
	MF("arch", MF_STR, struct gtr_binary, arch),
	MF("abi", MF_STR, struct gtr_binary, abi),
	MF("pie", MF_BOOL, struct gtr_binary, pie),
	MF("stripped", MF_BOOL, struct gtr_binary, stripped),
	MF("dwarf", MF_BOOL, struct gtr_binary, has_dwarf),
	MF("go_version_source", MF_STR, struct gtr_binary, go_version_source),
	MF("goid_offset", MF_I32, struct gtr_binary, goid_offset),
	MF("goid_source", MF_STR, struct gtr_binary, goid_source),
};

static int parse_binary(struct gtr_reader *r, struct gcr *c)
{
	uint32_t seen = 0;

	if (r->nbinaries >= GTR_MAX_BINARIES) {
		snprintf(r->why, sizeof(r->why), "more than %u binaries", GTR_MAX_BINARIES);
		return -1;
	}
	struct gtr_binary *b = calloc(1, sizeof(*b));
	if (b)
		b->goid_offset = -1;   /* absent: files of older recorders */
	if (!b || DECODE_MAP(r, c, binary_fields, b, NULL, &seen))
		goto bad;
	if (!(seen & 1) || c->p != c->end)
		goto bad;
	fill_empty(&b->path);
	fill_empty(&b->build_id);
	fill_empty(&b->go_build_id);
	fill_empty(&b->go_version);
	fill_empty(&b->compiler);
	fill_empty(&b->arch);
	fill_empty(&b->abi);
	fill_empty(&b->go_version_source);
	fill_empty(&b->goid_source);
	if (r->nbinaries == r->binaries_cap) {
		const uint32_t cap = r->binaries_cap ? r->binaries_cap * 2 : 16;
		struct gtr_binary **v = realloc(r->binaries, cap * sizeof(*v));
		if (!v)
			goto bad;
		r->binaries = v;
		r->binaries_cap = cap;
	}
	r->binaries[r->nbinaries++] = b;
	return 0;
bad:
	free_binary(b);
	return -1;
}

static void free_probe(struct gtr_probe *p)
{
	if (!p)
		return;
	free_str(p->func);
	free_str(p->spec);
	free_str(p->fmt);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++) {
		free_str(p->args[i].name);
		free_str(p->args[i].type_name);
	}
	free(p);
}

static const struct map_field arg_fields[] = {
	MF("name", MF_STR, struct gtr_arg, name),
	MF("type_name", MF_STR, struct gtr_arg, type_name),
	MF("type", MF_TYPE, struct gtr_arg, type),
	MF("size", MF_U32, struct gtr_arg, size),
};

static const struct map_field probe_fields[] = {
	MF("id", MF_U32, struct gtr_probe, id),     /* required: bit 0 of seen */
	MF("kind", MF_KIND, struct gtr_probe, kind), /* required: bit 1 */
	MF("binary_id", MF_U32, struct gtr_probe, binary_id),
	MF("func", MF_STR, struct gtr_probe, func),
	MF("address", MF_U64, struct gtr_probe, address),
	MF("spec", MF_STR, struct gtr_probe, spec),
	MF("fmt", MF_STR, struct gtr_probe, fmt),
};

/* "args" and "exprs" of a PROBE. */
static int probe_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		     size_t kn, void *base)
{
	struct gtr_probe *p = base;
	uint64_t m;
	int rc;

	if (gcr_key_is(k, kn, "args")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > GTR_MAX_ARGS)
			rc = -1;
		for (uint64_t j = 0; !rc && j < m; j++)
			rc = DECODE_MAP(r, c, arg_fields, &p->args[j], NULL, NULL);
		if (!rc)
			p->nargs = (uint32_t)m;
		return rc;
	}
	if (gcr_key_is(k, kn, "exprs")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > GTR_MAX_ARGS)
			rc = -1;
		for (uint64_t j = 0; !rc && j < m; j++)
			rc = gcr_u32(c, &p->exprs[j]);
		if (!rc)
			p->nexprs = (uint32_t)m;
		return rc;
	}
	return 1;
}

static int parse_probe(struct gtr_reader *r, struct gcr *c)
{
	uint32_t seen = 0;

	if (r->nprobes >= GTR_MAX_PROBES) {
		snprintf(r->why, sizeof(r->why), "more than %u probes", GTR_MAX_PROBES);
		return -1;
	}
	struct gtr_probe *p = calloc(1, sizeof(*p));
	if (!p)
		goto bad;
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++)
		p->args[i].type = GTR_TYPE_WORD;
	if (DECODE_MAP(r, c, probe_fields, p, probe_key, &seen))
		goto bad;
	if ((seen & 3) != 3 || c->p != c->end)
		goto bad;
	for (uint32_t i = 0; i < p->nexprs; i++)
		if (p->exprs[i] >= p->nargs)
			goto bad;
	if (gtr_map_get(&r->probe_ix, p->id)) {
		snprintf(r->why, sizeof(r->why), "probe id %u defined twice", p->id);
		free_probe(p);
		return -1;
	}
	fill_empty(&p->func);
	fill_empty(&p->spec);
	fill_empty(&p->fmt);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++) {
		fill_empty(&p->args[i].name);
		fill_empty(&p->args[i].type_name);
	}
	if (r->nprobes == r->probes_cap) {
		const uint32_t cap = r->probes_cap ? r->probes_cap * 2 : 64;
		struct gtr_probe **v = realloc(r->probes, cap * sizeof(*v));
		if (!v)
			goto bad;
		r->probes = v;
		r->probes_cap = cap;
	}
	if (gtr_map_put(&r->probe_ix, p->id, r->nprobes, GTR_MAX_PROBES))
		goto bad;
	r->probes[r->nprobes++] = p;
	if (p->id < DIRECT_PROBES)
		r->direct[p->id] = p;
	return 0;
bad:
	free_probe(p);
	return -1;
}

/* A SUMMARY as it is decoded. */
struct summary_in {
	struct gtr_summary s;
	uint32_t *ids;
	uint64_t *evs;
	struct index_entry *ix;
	uint32_t nix;
	uint64_t dropped;
};

static const struct map_field summary_fields[] = {
	MF("events", MF_U64, struct summary_in, s.events),
	MF("drops", MF_U64, struct summary_in, s.drops),
	MF("suppressed", MF_U64, struct summary_in, s.suppressed),
	MF("first_ts_ns", MF_U64, struct summary_in, s.first_ts_ns),
	MF("last_ts_ns", MF_U64, struct summary_in, s.last_ts_ns),
	MF("frames_truncated", MF_BOOL, struct summary_in, s.frames_truncated),
};

/* "probes" and "frames" of a SUMMARY. */
static int summary_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		       size_t kn, void *base)
{
	struct summary_in *v = base;
	uint64_t m;
	int rc;

	if (gcr_key_is(k, kn, "probes")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > (uint64_t)(c->end - c->p))
			rc = -1;
		free(v->ids);
		free(v->evs);
		v->ids = NULL;
		v->evs = NULL;
		v->s.nprobes = 0;
		const uint64_t keep = m < GTR_MAX_PROBES ? m : GTR_MAX_PROBES;
		if (!rc && keep) {
			v->ids = malloc(keep * sizeof(*v->ids));
			v->evs = malloc(keep * sizeof(*v->evs));
			if (!v->ids || !v->evs)
				rc = -1;
		}
		for (uint64_t j = 0; !rc && j < m; j++) {
			uint64_t e2, cnt;
			uint32_t id;
			if (gcr_expect(c, GCR_ARRAY, &e2) || e2 < 2 || gcr_u32(c, &id) ||
			    gcr_uint(c, &cnt)) {
				rc = -1;
				break;
			}
			for (uint64_t q = 2; !rc && q < e2; q++)
				rc = gcr_skip(c, GTR_CBOR_DEPTH);
			if (j < keep) {
				v->ids[v->s.nprobes] = id;
				v->evs[v->s.nprobes++] = cnt;
			} else {
				v->dropped++;
			}
		}
		return rc;
	}
	if (gcr_key_is(k, kn, "frames")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > (uint64_t)(c->end - c->p))
			rc = -1;
		free(v->ix);
		v->ix = NULL;
		v->nix = 0;
		const uint64_t keep = m < GTR_MAX_INDEX ? m : GTR_MAX_INDEX;
		if (!rc && keep && !(v->ix = malloc(keep * sizeof(*v->ix))))
			rc = -1;
		for (uint64_t j = 0; !rc && j < m; j++) {
			struct index_entry e = { 0 };
			uint64_t e2;
			if (gcr_expect(c, GCR_ARRAY, &e2) || e2 < 4 || gcr_uint(c, &e.off) ||
			    gcr_uint(c, &e.first_ts) || gcr_uint(c, &e.last_ts) ||
			    gcr_uint(c, &e.events)) {
				rc = -1;
				break;
			}
			for (uint64_t q = 4; !rc && q < e2; q++)
				rc = gcr_skip(c, GTR_CBOR_DEPTH);
			if (j < keep)
				v->ix[v->nix++] = e;
		}
		v->s.nframes = m;
		return rc;
	}
	return 1;
}

static int parse_summary(struct gtr_reader *r, struct gcr *c)
{
	struct summary_in v = { .s = { .present = true } };

	if (DECODE_MAP(r, c, summary_fields, &v, summary_key, NULL) || c->p != c->end)
		goto bad;
	free(r->sum_ids);
	free(r->sum_events);
	free(r->index);
	r->sum_ids = v.ids;
	r->sum_events = v.evs;
	r->index = v.ix;
	r->nindex = v.nix;
	r->index_loaded = true;
	v.s.probe_ids = v.ids;
	v.s.probe_events = v.evs;
	r->overflow.summary_probes = v.dropped;
	r->summary = v.s;
	return 0;
bad:
	free(v.ids);
	free(v.evs);
	free(v.ix);
	return -1;
}

/* Grows *v (of *cap elements of `size` bytes) to hold n + 1. 0 or -1. */
static int grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
	if (n < *cap)
		return 0;
	const uint32_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*v, (size_t)c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/*
 * Checks that payload[len] is one zstd frame that declares its content size,
 * at most GTR_MAX_FRAME bytes; *csize gets it. 0, or -1 with the reason in
 * why[whylen].
 */
static int zframe_check(const uint8_t *payload, size_t len, size_t *csize,
			char *why, size_t whylen)
{
	const unsigned long long cs = ZSTD_getFrameContentSize(payload, len);

	if (cs == ZSTD_CONTENTSIZE_ERROR) {
		snprintf(why, whylen, "not a zstd frame");
		return -1;
	}
	if (cs == ZSTD_CONTENTSIZE_UNKNOWN) {
		snprintf(why, whylen, "zstd frame without content size");
		return -1;
	}
	if (cs > GTR_MAX_FRAME) {
		snprintf(why, whylen, "%llu bytes exceed the limit of %u", cs, GTR_MAX_FRAME);
		return -1;
	}
	const size_t fsz = ZSTD_findFrameCompressedSize(payload, len);
	if (ZSTD_isError(fsz) || fsz != len) {
		snprintf(why, whylen, "block is not exactly one zstd frame");
		return -1;
	}
	*csize = (size_t)cs;
	return 0;
}

/* Grows *buf to hold n bytes (at least 1). 0, or -1 out of memory. */
static int reserve(uint8_t **buf, size_t *cap, size_t n)
{
	if (n <= *cap && *buf)
		return 0;
	uint8_t *d = realloc(*buf, n ? n : 1);
	if (!d)
		return -1;
	*buf = d;
	*cap = n ? n : 1;
	return 0;
}

static void *prefetch_main(void *arg)
{
	struct prefetch *pf = arg;

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		while (pf->state != PF_QUEUED && !pf->quit)
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->quit)
			break;
		pthread_mutex_unlock(&pf->mu);
		/* capacity: from the declared size only, so that zstd's
		 * verdict on a frame never depends on the buffer's history */
		const size_t got = ZSTD_decompressDCtx(pf->dctx, pf->out,
						       pf->content_size + ZSTD_SLACK,
						       pf->in, pf->in_len);
		pthread_mutex_lock(&pf->mu);
		pf->result = got;
		pf->state = PF_DONE;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

/* Forks this process went through as a child (pthread_atfork()): a
 * prefetch thread started at another count is not in this process. */
static volatile unsigned fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_child(void)
{
	fork_gen++;
}

static void fork_watch(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

/*
 * In a child forked while the thread ran, the thread is gone: forget it
 * and the frame it held, and decompress in line from then on.
 */
static void prefetch_forked(struct prefetch *pf)
{
	if (pf->started && pf->owner != fork_gen) {
		pf->started = false;   /* not joined, not destroyed: not ours */
		pf->pending = false;
		pf->failed = true;
		pf->state = PF_IDLE;
	}
}

/* Waits until the thread is done with the frame handed over, if any, and
 * takes ownership of the buffers back. */
static void prefetch_wait(struct prefetch *pf)
{
	prefetch_forked(pf);
	if (!pf->pending)
		return;
	pthread_mutex_lock(&pf->mu);
	while (pf->state == PF_QUEUED)
		pthread_cond_wait(&pf->cv, &pf->mu);
	pf->state = PF_IDLE;
	pthread_mutex_unlock(&pf->mu);
	pf->pending = false;
}

/* Stops the thread and frees what it used. */
static void prefetch_stop(struct prefetch *pf)
{
	prefetch_forked(pf);
	if (pf->started) {
		pthread_mutex_lock(&pf->mu);
		pf->quit = true;
		pthread_cond_broadcast(&pf->cv);
		pthread_mutex_unlock(&pf->mu);
		pthread_join(pf->th, NULL);
		pthread_mutex_destroy(&pf->mu);
		pthread_cond_destroy(&pf->cv);
		pf->started = false;
	}
	ZSTD_freeDCtx(pf->dctx);
	pf->dctx = NULL;
	free(pf->in);
	free(pf->out);
	pf->in = pf->out = NULL;
	pf->in_cap = pf->out_cap = 0;
	pf->state = PF_IDLE;
	pf->pending = false;
}

/*
 * Hands the block that follows the current position to the thread when it
 * is a whole event frame already in the input window. Reads nothing and
 * changes nothing the caller sees: a block not yet read is decompressed in
 * line when it is reached, with whatever error reading it gives then.
 */
static void prefetch_next(struct gtr_reader *r)
{
	struct prefetch *pf = &r->pf;
	char why[128];
	size_t csize;

	prefetch_forked(pf);
	if (!pf->on || pf->failed || pf->pending)
		return;
	const size_t have = r->len - r->pos;
	const uint8_t *h = r->buf + r->pos;
	if (have < GTR_BLOCK_HDR_LEN || memcmp(h, GTR_BLOCK_MAGIC, 4) ||
	    gtr_get_le32(h + 4) != GTR_BLOCK_EVENTS)
		return;
	const uint32_t len = gtr_get_le32(h + 8);
	if (len > GTR_MAX_BLOCK || have < GTR_BLOCK_HDR_LEN + (size_t)len ||
	    zframe_check(h + GTR_BLOCK_HDR_LEN, len, &csize, why, sizeof(why)))
		return;
	if (!pf->started) {
		if (!pf->dctx && !(pf->dctx = ZSTD_createDCtx()))
			goto fail;
		if (pthread_mutex_init(&pf->mu, NULL))
			goto fail;
		if (pthread_cond_init(&pf->cv, NULL)) {
			pthread_mutex_destroy(&pf->mu);
			goto fail;
		}
		if (pthread_create(&pf->th, NULL, prefetch_main, pf)) {
			pthread_cond_destroy(&pf->cv);
			pthread_mutex_destroy(&pf->mu);
			goto fail;
		}
		pthread_once(&fork_once, fork_watch);
		pf->started = true;
		pf->owner = fork_gen;
	}
	if (reserve(&pf->in, &pf->in_cap, len) ||
	    reserve(&pf->out, &pf->out_cap, csize + ZSTD_SLACK))
		return;
	memcpy(pf->in, h + GTR_BLOCK_HDR_LEN, len);
	pf->in_len = len;
	pf->off = r->buf_off + r->pos;
	pf->content_size = csize;
	pthread_mutex_lock(&pf->mu);
	pf->state = PF_QUEUED;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pf->pending = true;
	return;
fail:
	pf->failed = true;      /* no thread: decompress in line */
}

/*
 * The prefetched frame, when it is the block b: swaps it into r->dbuf and
 * returns it, its length in *out_len. NULL when it is not (the prefetch is
 * then dropped) or it did not decompress (the caller decompresses again and
 * reports why).
 */
static const uint8_t *prefetch_take(struct gtr_reader *r, const struct block *b,
				    size_t *out_len)
{
	struct prefetch *pf = &r->pf;

	if (!pf->pending)
		return NULL;
	prefetch_wait(pf);
	if (pf->off != b->off || pf->in_len != b->len ||
	    memcmp(pf->in, b->payload, b->len) ||
	    ZSTD_isError(pf->result) || pf->result != pf->content_size)
		return NULL;
	uint8_t *d = r->dbuf;
	const size_t cap = r->dcap;
	r->dbuf = pf->out;
	r->dcap = pf->out_cap;
	pf->out = d;
	pf->out_cap = cap;
	*out_len = pf->content_size;
	return r->dbuf;
}

/* Decompresses event block b into r->dbuf. NULL with the reason in
 * why[whylen] when it is not one bounded frame. */
static const uint8_t *unzstd(struct gtr_reader *r, const struct block *b,
			     size_t *out_len, char *why, size_t whylen)
{
	size_t csize;
	const uint8_t *d = prefetch_take(r, b, out_len);

	if (d)
		return d;
	if (zframe_check(b->payload, b->len, &csize, why, whylen))
		return NULL;
	if (reserve(&r->dbuf, &r->dcap, csize + ZSTD_SLACK)) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	/* capacity: from the declared size (see prefetch_main()) */
	const size_t got = ZSTD_decompressDCtx(r->dctx, r->dbuf, csize + ZSTD_SLACK,
					       b->payload, b->len);
	if (ZSTD_isError(got) || got != csize) {
		snprintf(why, whylen, "zstd: %s",
			 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size mismatch");
		return NULL;
	}
	*out_len = got;
	return r->dbuf;
}

static struct symtab *symtab_of(const struct gtr_reader *r, uint32_t binary_id)
{
	for (uint32_t i = 0; i < r->nsymtabs; i++)
		if (r->symtabs[i].binary_id == binary_id)
			return &r->symtabs[i];
	return NULL;
}

/* A SYMBOLS block's map; its symbols are read once binary_id is known. */
struct symbols_in {
	uint32_t bin;
	struct gcr syms;
	uint64_t nsyms;
};

static const struct map_field symbols_fields[] = {
	MF("binary_id", MF_U32, struct symbols_in, bin), /* required: bit 0 */
};

/* "symbols": checks the array's shape and notes where it is. */
static int symbols_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		       size_t kn, void *base)
{
	struct symbols_in *v = base;
	uint64_t m;

	if (!gcr_key_is(k, kn, "symbols"))
		return 1;
	int rc = gcr_expect(c, GCR_ARRAY, &m);
	if (!rc && m > (uint64_t)(c->end - c->p))
		rc = -1;
	v->syms.p = c->p;
	v->nsyms = m;
	for (uint64_t j = 0; !rc && j < m; j++)
		rc = gcr_skip(c, 3);
	v->syms.end = c->p;
	return rc;
}

static int parse_symbols(struct gtr_reader *r, const struct block *b)
{
	size_t len;
	const uint8_t *d = unzstd(r, b, &len, r->why, sizeof(r->why));
	struct symbols_in v = { 0 };
	uint32_t seen = 0;

	if (!d)
		return -1;
	struct gcr c = { d, d + len };
	/* First pass: find binary_id and the symbols array, wherever they are. */
	if (DECODE_MAP(r, &c, symbols_fields, &v, symbols_key, &seen))
		return -1;
	const bool have_bin = seen & 1;
	if (c.p != c.end || !have_bin) {
		snprintf(r->why, sizeof(r->why), "%s", have_bin ? "bytes after the map" : "no binary_id");
		return -1;
	}
	const uint32_t bin = v.bin;
	const uint64_t nsyms = v.nsyms;
	struct gcr syms = v.syms;
	struct symtab *t = symtab_of(r, bin);
	if (!t) {
		if (r->nsymtabs >= GTR_MAX_BINARIES) {
			r->overflow.symbols += nsyms;
			return 0;
		}
		if (grow((void **)&r->symtabs, &r->symtabs_cap, r->nsymtabs, sizeof(*t)))
			return -1;
		t = &r->symtabs[r->nsymtabs++];
		*t = (struct symtab){ .binary_id = bin, .sorted = true };
	}
	uint64_t addr = 0;
	for (uint64_t j = 0; j < nsyms; j++) {
		uint64_t e, delta, size;
		const uint8_t *name;
		size_t nl;
		if (gcr_expect(&syms, GCR_ARRAY, &e) || e < 3 || gcr_uint(&syms, &delta) ||
		    gcr_uint(&syms, &size) || gcr_text(&syms, &name, &nl, GTR_MAX_NAME)) {
			snprintf(r->why, sizeof(r->why), "symbol %llu malformed", (unsigned long long)j);
			return -1;
		}
		for (uint64_t q = 3; q < e; q++)
			if (gcr_skip(&syms, GTR_CBOR_DEPTH))
				return -1;
		if (delta > UINT64_MAX - addr) {
			snprintf(r->why, sizeof(r->why), "symbol %llu: address overflows",
				 (unsigned long long)j);
			return -1;
		}
		addr += delta;
		if (r->nsyms >= GTR_MAX_SYMBOLS) {
			r->overflow.symbols++;
			continue;
		}
		if (grow((void **)&t->syms, &t->cap, t->n, sizeof(*t->syms)))
			return -1;
		char *str = NULL;
		if (set_str(r, &str, name, nl)) {
			r->overflow.symbols++;
			continue;
		}
		if (t->n && t->syms[t->n - 1].address > addr)
			t->sorted = false;
		t->syms[t->n++] = (struct gtr_symbol){ .address = addr, .size = size, .name = str };
		r->nsyms++;
	}
	return 0;
}

/* A MAPPING as it is decoded: path is the reader's until it is kept. */
struct mapping_in {
	struct gtr_mapping m;
	char *path;
};

static const struct map_field mapping_fields[] = {
	MF("ts_ns", MF_U64, struct mapping_in, m.ts_ns),
	MF("pid", MF_U32, struct mapping_in, m.pid),
	MF("start", MF_U64, struct mapping_in, m.start),
	MF("end", MF_U64, struct mapping_in, m.end),
	MF("offset", MF_U64, struct mapping_in, m.offset),
	MF("vaddr", MF_U64, struct mapping_in, m.vaddr),
	MF("binary_id", MF_U32, struct mapping_in, m.binary_id),
	MF("path", MF_STR, struct mapping_in, path),
};

static int parse_mapping(struct gtr_reader *r, struct gcr *c)
{
	struct mapping_in v = { .m = { .binary_id = UINT32_MAX } };
	struct gtr_mapping *m = &v.m;

	if (DECODE_MAP(r, c, mapping_fields, &v, NULL, NULL))
		goto bad;
	if (c->p != c->end || m->end <= m->start) {
		snprintf(r->why, sizeof(r->why), "%s",
			 m->end <= m->start ? "mapping end not above its start" : "bytes after the map");
		goto bad;
	}
	if (r->nmaps >= GTR_MAX_MAPPINGS) {
		r->overflow.mappings++;
		free(v.path);
		return 0;
	}
	if (grow((void **)&r->maps, &r->maps_cap, r->nmaps, sizeof(*m)))
		goto bad;
	m->path = v.path ? v.path : empty_str;
	r->maps[r->nmaps++] = *m;
	r->maps_sorted = false;
	return 0;
bad:
	free(v.path);
	return -1;
}

/* A PROCESS as it is decoded: comm is the reader's until it is kept. */
struct process_in {
	struct gtr_process p;
	char *comm;
};

static const struct map_field process_fields[] = {
	MF("ts_ns", MF_U64, struct process_in, p.ts_ns),
	MF("pid", MF_U32, struct process_in, p.pid),
	MF("binary_id", MF_U32, struct process_in, p.binary_id),
	MF("comm", MF_STR, struct process_in, comm),
	MF("exited", MF_BOOL, struct process_in, p.exited),
	MF("exit_code", MF_I32, struct process_in, p.exit_code),
};

static int parse_process(struct gtr_reader *r, struct gcr *c)
{
	struct process_in v = { .p = { .binary_id = UINT32_MAX,
				       .exit_code = GTR_EXIT_UNKNOWN } };

	if (DECODE_MAP(r, c, process_fields, &v, NULL, NULL) || c->p != c->end)
		goto bad;
	if (!v.p.exited)
		v.p.exit_code = 0;
	if (r->nprocs >= GTR_MAX_PROCESSES) {
		r->overflow.processes++;
		free(v.comm);
		return 0;
	}
	if (grow((void **)&r->procs, &r->procs_cap, r->nprocs, sizeof(v.p)))
		goto bad;
	v.p.comm = v.comm ? v.comm : empty_str;
	r->procs[r->nprocs++] = v.p;
	return 0;
bad:
	free(v.comm);
	return -1;
}

static int parse_clock(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_host h = { 0 };

	if (DECODE_MAP(r, c, clock_fields, &h, NULL, NULL) || c->p != c->end)
		return -1;
	const struct gtr_clock_sample cs = {
		.monotonic_ns = h.start_mono_ns,
		.realtime_ns = h.start_realtime_ns,
		.boottime_ns = h.start_boottime_ns,
	};
	if (r->nclocks >= GTR_MAX_CLOCKS) {
		/* Keep the span covered: drop every second sample. */
		uint32_t j = 0;
		for (uint32_t i = 0; i < r->nclocks; i += 2)
			r->clocks[j++] = r->clocks[i];
		r->overflow.clocks += r->nclocks - j;
		r->nclocks = j;
	}
	if (grow((void **)&r->clocks, &r->clocks_cap, r->nclocks, sizeof(cs)))
		return -1;
	/* Kept in monotonic order (the writer writes them in order). */
	uint32_t at = r->nclocks;
	while (at && r->clocks[at - 1].monotonic_ns > cs.monotonic_ns)
		at--;
	memmove(&r->clocks[at + 1], &r->clocks[at], (r->nclocks - at) * sizeof(cs));
	r->clocks[at] = cs;
	r->nclocks++;
	return 0;
}

/* ------------------------------------------------------------- frames */

static void start_frame(struct gtr_reader *r, const struct block *b)
{
	char buf[160], zwhy[128];
	const char *why = NULL;
	size_t got;

	if (!unzstd(r, b, &got, zwhy, sizeof(zwhy))) {
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
		gtr_map_clear(&r->ps_ix);
	r->stack_pending = false;
	r->stack_prev = 0;
	prefetch_next(r);
	return;
bad:
	damaged(r, b->off, why, "skipped");
	prefetch_next(r);
}

/* Absorbs one valid block. 0, or a negative code that ends reading. */
static int absorb(struct gtr_reader *r, const struct block *b)
{
	struct gcr c = { b->payload, b->payload + b->len };
	const char *what;
	int rc;

	r->why[0] = 0;
	switch (b->type) {
	case GTR_BLOCK_EVENTS:
		start_frame(r, b);
		return 0;
	case GTR_BLOCK_HOST:
		if (r->host_seen) {
			r->skipped++;
			return 0;
		}
		what = "host";
		rc = parse_host(r, &c);
		if (!rc && c.p != c.end)
			rc = -1;
		if (!rc)
			r->host_seen = true;
		break;
	case GTR_BLOCK_BINARY:
		what = "binary";
		rc = parse_binary(r, &c);
		break;
	case GTR_BLOCK_PROBE:
		what = "probe";
		rc = parse_probe(r, &c);
		break;
	case GTR_BLOCK_SUMMARY:
		what = "summary";
		rc = parse_summary(r, &c);
		break;
	case GTR_BLOCK_SYMBOLS:
		what = "symbols";
		rc = parse_symbols(r, b);
		break;
	case GTR_BLOCK_MAPPING:
		what = "mapping";
		rc = parse_mapping(r, &c);
		break;
	case GTR_BLOCK_CLOCK:
		what = "clock";
		rc = parse_clock(r, &c);
		break;
	case GTR_BLOCK_PROCESS:
		what = "process";
		rc = parse_process(r, &c);
		break;
	default:
		r->skipped++;
		return 0;
	}
	if (rc) {
		char why[256];
		snprintf(why, sizeof(why), "undecodable %s block%s%s", what,
			 r->why[0] ? ": " : "", r->why);
		damaged(r, b->off, why, "skipped");
	}
	return 0;
}

/* ------------------------------------------------------------- records */

static inline const struct gtr_probe *find_probe(const struct gtr_reader *r,
						 uint32_t id)
{
	if (id < DIRECT_PROBES)
		return r->direct[id];
	const uint32_t *ix = gtr_map_get(&r->probe_ix, id);
	return ix ? r->probes[*ix] : NULL;
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
	uint32_t *ix = gtr_map_get(&r->task_ix, key);
	uint32_t i;

	if (ix) {
		i = *ix;
	} else {
		if (r->ncomms >= GTR_MAX_TASKS) {
			/* Bounded table: forget every name rather than grow. */
			gtr_map_clear(&r->task_ix);
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
		if (gtr_map_put(&r->task_ix, key, i, GTR_MAX_TASKS))
			return -1;
		r->ncomms++;
	}
	memcpy(r->comms[i].s, s, n);
	r->comms[i].s[n] = 0;
	return 0;
}

/* Delta state of probe `id` in this frame; created when `create` and the
 * frame has fewer than GTR_FRAME_PROBES. NULL when none. */
static inline struct rstate *pstate(struct gtr_reader *r, uint32_t id, bool create)
{
	if (id < DIRECT_PROBES) {
		if (r->ps_dgen[id] == r->frame_gen)
			return &r->ps[r->ps_dslot[id]];
	} else if (r->ps_ix.n) {
		const uint32_t *v = gtr_map_get(&r->ps_ix, id);
		if (v)
			return &r->ps[*v];
	}
	if (!create || r->nps >= GTR_FRAME_PROBES)
		return NULL;
	if (!r->ps && !(r->ps = malloc(GTR_FRAME_PROBES * sizeof(*r->ps))))
		return NULL;
	if (id < DIRECT_PROBES) {
		r->ps_dgen[id] = r->frame_gen;
		r->ps_dslot[id] = r->nps;
	} else if (gtr_map_put(&r->ps_ix, id, r->nps, GTR_FRAME_PROBES)) {
		return NULL;
	}
	return &r->ps[r->nps++];
}

/* Sums a drop record into the (probe, cpu) loss table. */
static void add_loss(struct gtr_reader *r, const struct gtr_drop *d)
{
	/* One entry per (probe, cpu, reason); reasons are 0 or small. */
	const uint64_t key = ((uint64_t)d->probe_id << 32 | d->cpu) ^
			     ((uint64_t)(d->reason != GTR_DROP_BUFFER) << 62);
	const uint64_t first = d->since_ns && d->since_ns <= d->ts_ns ? d->since_ns : d->ts_ns;
	uint32_t *ix = gtr_map_get(&r->loss_ix, key);
	struct gtr_loss *l;

	if (!ix) {
		if (r->nlosses >= GTR_MAX_LOSSES ||
		    grow((void **)&r->losses, &r->losses_cap, r->nlosses, sizeof(*l)) ||
		    gtr_map_put(&r->loss_ix, key, r->nlosses, GTR_MAX_LOSSES)) {
			r->overflow.losses++;
			return;
		}
		l = &r->losses[r->nlosses++];
		*l = (struct gtr_loss){ .probe_id = d->probe_id, .cpu = d->cpu,
					.first_ns = first, .last_ns = d->ts_ns,
					.reason = d->reason };
	} else {
		l = &r->losses[*ix];
	}
	l->count = d->count > UINT64_MAX - l->count ? UINT64_MAX : l->count + d->count;
	l->records++;
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
 * record (types 6, 7) of a probe id below 24 whose timestamp and values are
 * all integer deltas with heads of at most 9 bytes. Returns 1 with *ev
 * filled, or 0 with nothing consumed or changed when the record is of
 * another shape (decode_record() then reads it and reports what is wrong).
 * Gives exactly what decode_record() gives for the same bytes.
 */
static inline int decode_delta_fast(struct gtr_reader *r, struct gtr_event *ev)
{
	const uint8_t *p = r->fc.p, *const end = r->fc.end;
	uint64_t d[1 + GTR_MAX_ARGS];

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
	/* d[0]: the timestamp delta (unsigned); d[1..]: value deltas */
	for (unsigned i = 0; i < n - 2; i++) {
		if (p >= end)
			return 0;
		const unsigned major = p[0] >> 5, ai = p[0] & 31;
		uint64_t v;
		if (major > GCR_NEGINT || (i == 0 && major != GCR_UINT))
			return 0;
		if (ai < 24) {
			v = ai;
			p++;
		} else if (ai <= 27) {
			const unsigned k = 1u << (ai - 24);
			if ((size_t)(end - p) < 1 + k)
				return 0;
			v = 0;
			for (unsigned j = 1; j <= k; j++)
				v = (v << 8) | p[j];
			p += 1 + k;
		} else {
			return 0;
		}
		d[i] = major == GCR_UINT ? v : ~v;
	}
	if (d[0] > UINT64_MAX - r->prev_ts)
		return 0;
	/* the record is well formed: take it */
	r->fc.p = p;
	r->rec_left--;
	r->rec_no++;
	r->prev_ts += d[0];
	ev->probe_id = id;
	ev->ts_ns = r->prev_ts;
	ev->kind = (t & 1) ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
	ev->pid = r->ctx_pid;
	ev->tid = r->ctx_tid;
	ev->goid = r->ctx_goid;
	ev->cpu = r->ctx_cpu;
	ev->nvals = n - 3;
	const struct gtr_probe *pr = find_probe(r, id);
	const uint32_t typed = pr ? pr->nargs : 0;
	for (uint32_t i = 0; i < ev->nvals; i++) {
		const uint64_t raw = (i < st->nvals ? st->vals[i] : 0) + d[1 + i];
		struct gtr_value *v = &ev->vals[i];
		if (i < typed && pr->args[i].type == GTR_TYPE_INT) {
			v->kind = GTR_VAL_INT;
			v->v.i = (int64_t)raw;
		} else {
			v->kind = GTR_VAL_UINT;
			v->v.u = raw;
		}
		st->vals[i] = raw;
	}
	st->nvals = ev->nvals;
	take_stack(r, ev);
	return 1;
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
	case GTR_REC_RETURN_CPU: {
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
		if (gcr_u32(c, &ev->probe_id) || read_ts(r, &ev->ts_ns))
			goto bad_event;
		if (full) {
			if (gcr_u32(c, &r->ctx_pid) || gcr_u32(c, &r->ctx_tid) ||
			    gcr_uint(c, &r->ctx_goid))
				goto bad_event;
			r->ctx_cpu = GTR_CPU_UNKNOWN;
			if (with_cpu && (gcr_u32(c, &r->ctx_cpu) || r->ctx_cpu == GTR_CPU_UNKNOWN))
				goto bad_event;
			r->have_ctx = true;
		}
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
		const struct gtr_probe *p = find_probe(r, ev->probe_id);
		const uint32_t typed = p ? p->nargs : 0;
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
					goto bad_event;
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
				goto bad_event;
			}
			if (st)
				st->vals[i] = v->kind == GTR_VAL_INT ? (uint64_t)v->v.i :
					      v->kind == GTR_VAL_UINT ? v->v.u : 0;
		}
		if (st)
			st->nvals = ev->nvals;
		take_stack(r, ev);
		return GTR_ITEM_EVENT;
	bad_event:
		snprintf(r->why, sizeof(r->why), "malformed event record");
		return -1;
	}
	case GTR_REC_STACK: {
		if (r->stack_pending || n < 2 || n - 1 > GTR_MAX_STACK) {
			snprintf(r->why, sizeof(r->why), "malformed stack record");
			return -1;
		}
		uint64_t prev = r->stack_prev;
		for (uint64_t i = 0; i + 1 < n; i++) {
			uint64_t d;
			if (gcr_head(c, &major, &ai, &d) || major > GCR_NEGINT) {
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
	case GTR_REC_TASK: {
		uint32_t pid, tid;
		if (n < 4 || gcr_u32(c, &pid) || gcr_u32(c, &tid) ||
		    gcr_head(c, &major, &ai, &t) ||
		    (major != GCR_TEXT && major != GCR_BYTES) || t > GTR_COMM_LEN) {
			snprintf(r->why, sizeof(r->why), "malformed task record");
			return -1;
		}
		const uint8_t *s = c->p;
		c->p += t;
		for (uint64_t i = 4; i < n; i++)
			if (gcr_skip(c, GTR_CBOR_DEPTH)) {
				snprintf(r->why, sizeof(r->why), "malformed task record");
				return -1;
			}
		if (set_task(r, pid, tid, s, (size_t)t)) {
			snprintf(r->why, sizeof(r->why), "out of memory for task names");
			return -1;
		}
		return 0;
	}
	case GTR_REC_DROP: {
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
	struct block b;

	if (!ev)
		ev = &ev_scratch;
	if (!drop)
		drop = &drop_scratch;
	for (;;) {
		if (r->in_frame) {
			if (!r->rec_left) {
				r->in_frame = false;
				if (r->fc.p != r->fc.end)
					damaged(r, r->frame_off,
						"event frame: bytes after its last record",
						"ignored them");
				else if (r->stack_pending)
					damaged(r, r->frame_off,
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
				damaged(r, r->frame_off, why, "rest of the frame skipped");
				r->in_frame = false;
			}
			continue;
		}
		int rc = read_block(r, &b);
		if (rc <= 0)
			return rc;
		rc = absorb(r, &b);
		if (rc < 0)
			return rc;
	}
}

int gtr_reader_preload(struct gtr_reader *r)
{
	struct block b;

	while (!r->in_frame) {
		int rc = read_block(r, &b);
		if (rc <= 0)
			return rc;
		rc = absorb(r, &b);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------- open, close */

struct gtr_reader *gtr_reader_open(const char *path, char *err, size_t errlen)
{
	struct gtr_reader *r;
	struct stat st;
	struct block b;

	const bool in = !path || !strcmp(path, "-");

	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(in ? "standard input" : path))) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	path = r->path;
	r->host.hostname = r->host.kernel = r->host.machine = r->host.recorder = empty_str;
	/* standard input reads as a file does, but without seeking: no
	 * frame index (gtr_reader_seek_ts()) */
	r->fd = in ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		rmsg(r, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!fstat(r->fd, &st) && S_ISDIR(st.st_mode)) {
		rmsg(r, "%s is a directory; expected a .gtr file from gotrace-record", path);
		goto fail;
	}
	r->cap = WINDOW_INITIAL;
	r->buf = malloc(r->cap);
	r->dctx = ZSTD_createDCtx();
	r->pf.on = true;
	if (!r->buf || !r->dctx) {
		rmsg(r, "out of memory");
		goto fail;
	}
	ssize_t a = win_fill(r, GTR_FILE_HDR_LEN);
	if (a < 0)
		goto fail;
	if (a == 0) {
		rmsg(r, "%s: empty file; expected a .gtr file from gotrace-record", path);
		goto fail;
	}
	if (memcmp(r->buf, GTR_MAGIC, a < GTR_MAGIC_LEN ? (size_t)a : GTR_MAGIC_LEN)) {
		rmsg(r, "%s: not a gotrace trace (bad magic); expected a .gtr file from gotrace-record", path);
		goto fail;
	}
	if (a < GTR_FILE_HDR_LEN) {
		rmsg(r, "%s: truncated at byte %zd (incomplete file header); the recording was cut short", path, a);
		goto fail;
	}
	r->major = gtr_get_le16(r->buf + 8);
	r->minor = gtr_get_le16(r->buf + 10);
	if (r->major > GTR_VERSION_MAJOR || r->major == 0) {
		rmsg(r, "%s: trace format version %u.%u is not supported by this gotrace (reads %u.x); use a gotrace-report that supports it",
		     path, r->major, r->minor, GTR_VERSION_MAJOR);
		goto fail;
	}
	r->pos = GTR_FILE_HDR_LEN;
	/* The host block comes first; read it (or whatever is there) now. */
	int rc = read_block(r, &b);
	if (rc > 0)
		rc = absorb(r, &b);
	if (rc < 0)
		goto fail;
	return r;
fail:
	snprintf(err, errlen, "%s", r->err);
	gtr_reader_close(r);
	return NULL;
}

void gtr_reader_close(struct gtr_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (uint32_t i = 0; i < r->nprobes; i++)
		free_probe(r->probes[i]);
	free(r->probes);
	for (uint32_t i = 0; i < r->nbinaries; i++)
		free_binary(r->binaries[i]);
	free(r->binaries);
	free_str(r->host.hostname);
	free_str(r->host.kernel);
	free_str(r->host.machine);
	free_str(r->host.recorder);
	gtr_map_free(&r->probe_ix);
	gtr_map_free(&r->task_ix);
	gtr_map_free(&r->ps_ix);
	gtr_map_free(&r->loss_ix);
	free(r->ps);
	for (uint32_t i = 0; i < r->nsymtabs; i++) {
		for (uint32_t j = 0; j < r->symtabs[i].n; j++)
			free((char *)r->symtabs[i].syms[j].name);
		free(r->symtabs[i].syms);
	}
	free(r->symtabs);
	for (uint32_t i = 0; i < r->nmaps; i++)
		free_str((char *)r->maps[i].path);
	free(r->maps);
	free(r->map_order);
	for (uint32_t i = 0; i < r->nprocs; i++)
		free_str((char *)r->procs[i].comm);
	free(r->procs);
	free(r->clocks);
	free(r->losses);
	free(r->sum_ids);
	free(r->sum_events);
	free(r->index);
	free(r->comms);
	prefetch_stop(&r->pf);
	ZSTD_freeDCtx(r->dctx);
	free(r->dbuf);
	free(r->buf);
	free(r->path);
	free(r);
}

void gtr_reader_set_prefetch(struct gtr_reader *r, bool on)
{
	prefetch_wait(&r->pf);
	r->pf.on = on;
}

/* ------------------------------------------------------------- accessors */

const struct gtr_probe *gtr_reader_probe(const struct gtr_reader *r, uint32_t id)
{
	return find_probe(r, id);
}

uint32_t gtr_reader_nprobes(const struct gtr_reader *r)
{
	return r->nprobes;
}

const struct gtr_probe *gtr_reader_probe_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nprobes ? r->probes[i] : NULL;
}

uint32_t gtr_reader_nbinaries(const struct gtr_reader *r)
{
	return r->nbinaries;
}

const struct gtr_binary *gtr_reader_binary_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nbinaries ? r->binaries[i] : NULL;
}

const struct gtr_host *gtr_reader_host(const struct gtr_reader *r)
{
	return &r->host;
}

const char *gtr_reader_comm(const struct gtr_reader *r, uint32_t pid, uint32_t tid)
{
	const uint32_t *ix = gtr_map_get(&r->task_ix, (uint64_t)pid << 32 | tid);
	return ix ? r->comms[*ix].s : "";
}

void gtr_reader_version(const struct gtr_reader *r, unsigned *major, unsigned *minor)
{
	if (major)
		*major = r->major;
	if (minor)
		*minor = r->minor;
}

uint64_t gtr_reader_damage(const struct gtr_reader *r)
{
	return r->damage;
}

bool gtr_reader_truncated(const struct gtr_reader *r)
{
	return r->truncated;
}

uint64_t gtr_reader_skipped(const struct gtr_reader *r)
{
	return r->skipped;
}

const struct gtr_summary *gtr_reader_summary(const struct gtr_reader *r)
{
	return &r->summary;
}

const char *gtr_reader_error(const struct gtr_reader *r)
{
	return r->err;
}

/* ------------------------------------------------------------- symbols, clocks */

static int sym_cmp(const void *a, const void *b)
{
	const struct gtr_symbol *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

static void symtab_sort(struct symtab *t)
{
	if (!t->sorted) {
		qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
		t->sorted = true;
	}
}

/* Symbol of binary `bin` containing link-time address `a`, or NULL. */
static const struct gtr_symbol *sym_find(const struct gtr_reader *r, uint32_t bin,
					 uint64_t a)
{
	struct symtab *t = symtab_of(r, bin);

	if (!t || !t->n)
		return NULL;
	symtab_sort(t);
	/* last symbol with address <= a */
	uint32_t lo = 0, hi = t->n;
	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].address <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct gtr_symbol *s = &t->syms[lo - 1];
	if (s->size ? a - s->address < s->size : true)
		return s;
	return NULL;
}

static const struct gtr_reader *map_sort_r;

static int map_cmp(const void *a, const void *b)
{
	const struct gtr_mapping *x = &map_sort_r->maps[*(const uint32_t *)a];
	const struct gtr_mapping *y = &map_sort_r->maps[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static const struct gtr_binary *binary_by_id(const struct gtr_reader *r, uint32_t id)
{
	for (uint32_t i = 0; i < r->nbinaries; i++)
		if (r->binaries[i]->id == id)
			return r->binaries[i];
	return NULL;
}

const char *gtr_reader_symbolize(const struct gtr_reader *r, uint32_t pid,
				 uint64_t addr, uint64_t *offset)
{
	struct gtr_reader *rw = (struct gtr_reader *)r; /* lazy index */
	const struct gtr_symbol *s = NULL;
	uint64_t link = addr;

	if (!r->maps_sorted && r->nmaps) {
		uint32_t *o = realloc(rw->map_order, r->nmaps * sizeof(*o));
		if (o) {
			for (uint32_t i = 0; i < r->nmaps; i++)
				o[i] = i;
			map_sort_r = r;
			qsort(o, r->nmaps, sizeof(*o), map_cmp);
			rw->map_order = o;
			rw->maps_sorted = true;
		}
	}
	if (r->maps_sorted) {
		/* the pid's mappings, in file order: the latest containing addr wins */
		uint32_t lo = 0, hi = r->nmaps;
		while (lo < hi) {
			const uint32_t mid = lo + (hi - lo) / 2;
			if (r->maps[r->map_order[mid]].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct gtr_mapping *m = NULL;
		for (uint32_t i = lo; i < r->nmaps && r->maps[r->map_order[i]].pid == pid; i++) {
			const struct gtr_mapping *x = &r->maps[r->map_order[i]];
			if (addr >= x->start && addr < x->end)
				m = x;
		}
		if (m && m->binary_id != UINT32_MAX) {
			if (m->vaddr) {
				link = m->vaddr + (addr - m->start);
			} else {
				const struct gtr_binary *b = binary_by_id(r, m->binary_id);
				link = b && !b->pie ? addr : addr - m->start + m->offset;
			}
			s = sym_find(r, m->binary_id, link);
		}
		if (m)
			goto done;
	}
	/* No mapping: non-PIE executables are loaded at their link addresses. */
	for (uint32_t i = 0; !s && i < r->nbinaries; i++)
		if (!r->binaries[i]->pie)
			s = sym_find(r, r->binaries[i]->id, addr);
done:
	if (!s)
		return NULL;
	if (offset)
		*offset = link - s->address;
	return s->name;
}

int gtr_reader_realtime(const struct gtr_reader *r, uint64_t mono_ns,
			uint64_t *realtime_ns)
{
	uint64_t mono, real;
	uint32_t lo = 0, hi = r->nclocks;

	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;
		if (r->clocks[mid].monotonic_ns <= mono_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		mono = r->clocks[lo - 1].monotonic_ns;
		real = r->clocks[lo - 1].realtime_ns;
	} else if (r->host.start_realtime_ns) {
		mono = r->host.start_mono_ns;
		real = r->host.start_realtime_ns;
	} else if (r->nclocks) {
		mono = r->clocks[0].monotonic_ns;
		real = r->clocks[0].realtime_ns;
	} else {
		return -ENOENT;
	}
	*realtime_ns = real + (mono_ns - mono); /* mod 2^64: signed offset */
	return 0;
}

uint32_t gtr_reader_nclocks(const struct gtr_reader *r)
{
	return r->nclocks;
}

const struct gtr_clock_sample *gtr_reader_clock_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nclocks ? &r->clocks[i] : NULL;
}

uint32_t gtr_reader_nprocesses(const struct gtr_reader *r)
{
	return r->nprocs;
}

const struct gtr_process *gtr_reader_process_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nprocs ? &r->procs[i] : NULL;
}

uint32_t gtr_reader_nmappings(const struct gtr_reader *r)
{
	return r->nmaps;
}

const struct gtr_mapping *gtr_reader_mapping_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nmaps ? &r->maps[i] : NULL;
}

uint32_t gtr_reader_nsymbols(const struct gtr_reader *r, uint32_t binary_id)
{
	const struct symtab *t = symtab_of(r, binary_id);

	return t ? t->n : 0;
}

const struct gtr_symbol *gtr_reader_symbol_at(const struct gtr_reader *r,
					      uint32_t binary_id, uint32_t i)
{
	struct symtab *t = symtab_of(r, binary_id);

	if (!t || i >= t->n)
		return NULL;
	symtab_sort(t);
	return &t->syms[i];
}

uint32_t gtr_reader_nlosses(const struct gtr_reader *r)
{
	return r->nlosses;
}

const struct gtr_loss *gtr_reader_loss_at(const struct gtr_reader *r, uint32_t i)
{
	return i < r->nlosses ? &r->losses[i] : NULL;
}

const struct gtr_overflow *gtr_reader_overflow(const struct gtr_reader *r)
{
	return &r->overflow;
}

/* ------------------------------------------------------------- seeking */

/*
 * Finds the SUMMARY block that ends the file and parses it: scans the last
 * 1 MiB, then the last 64 MiB, backwards for a "GTRB" header of type 5
 * whose payload ends exactly at the end of the file and whose CRC holds.
 */
static int load_index(struct gtr_reader *r)
{
	struct stat st;

	if (fstat(r->fd, &st) || st.st_size < GTR_FILE_HDR_LEN + GTR_BLOCK_HDR_LEN)
		return -ENOENT;
	const uint64_t size = (uint64_t)st.st_size;
	for (uint64_t want = 1u << 20;; want = GTR_MAX_BLOCK + GTR_BLOCK_HDR_LEN) {
		const uint64_t tail = want < size - GTR_FILE_HDR_LEN ? want : size - GTR_FILE_HDR_LEN;
		uint8_t *t = malloc(tail);
		if (!t)
			return -ENOMEM;
		const uint64_t base = size - tail;
		if (pread(r->fd, t, tail, (off_t)base) != (ssize_t)tail) {
			free(t);
			return -EIO;
		}
		for (uint64_t i = tail - GTR_BLOCK_HDR_LEN + 1; i-- > 0;) {
			if (memcmp(t + i, GTR_BLOCK_MAGIC, 4) || gtr_get_le32(t + i + 4) != GTR_BLOCK_SUMMARY ||
			    i + GTR_BLOCK_HDR_LEN + gtr_get_le32(t + i + 8) != tail ||
			    gtr_get_le32(t + i + 12) != gtr_block_crc(t + i, t + i + GTR_BLOCK_HDR_LEN,
								       tail - i - GTR_BLOCK_HDR_LEN))
				continue;
			struct gcr c = { t + i + GTR_BLOCK_HDR_LEN, t + tail };
			const int rc = parse_summary(r, &c);
			free(t);
			return rc ? -ENOENT : 0;
		}
		free(t);
		if (tail == size - GTR_FILE_HDR_LEN || want > GTR_MAX_BLOCK)
			return -ENOENT;
	}
}

int gtr_reader_seek_ts(struct gtr_reader *r, uint64_t mono_ns)
{
	struct block b;

	if (!r->index_loaded) {
		const int rc = load_index(r);
		if (rc) {
			rmsg(r, "%s: no frame index to seek with (the file has no summary: recording not closed cleanly); read it from the start",
			     r->path);
			return rc;
		}
	}
	const uint64_t here = r->buf_off + r->pos;
	uint64_t target = UINT64_MAX;
	for (uint32_t i = 0; i < r->nindex; i++)
		if (r->index[i].off >= here && r->index[i].last_ts >= mono_ns) {
			target = r->index[i].off;
			break;
		}
	r->in_frame = false;
	/* Read metadata up to the target, skipping events frames unread. */
	while (r->buf_off + r->pos < target) {
		const int rc = read_block(r, &b);
		if (rc <= 0)
			return rc;
		if (b.type == GTR_BLOCK_EVENTS)
			continue;
		absorb(r, &b);
	}
	return 0;
}
