/* SPDX-License-Identifier: MIT */
/*
 * Private to the reader (format/reader*.c): the reader's state and the
 * functions its files share. The reader is split by concern:
 *
 *   reader.c          opening, closing, preloading and seeking
 *   reader_input.c    the input window and block framing (resynchronising)
 *   reader_prefetch.c decompression of frames, in line or on a second thread
 *   reader_meta.c     metadata blocks: the table-driven map decoders
 *   reader_events.c   event frames and their records, gtr_reader_next()
 *   reader_query.c    accessors and lookups (symbols, clocks)
 *
 * Nothing outside format/ includes this header; the writer does not either.
 */
#ifndef GTR_READER_INTERNAL_H
#define GTR_READER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>

#include "gtr_cbor_internal.h"
#include "gtr_internal.h"

#define WINDOW_INITIAL (1u << 20)
#define WINDOW_MAX (2 * (GTR_BLOCK_HDR_LEN + GTR_MAX_BLOCK))
#define DIRECT_PROBES 1024 /* probe ids below this are found by index */

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
 * Decompression of the next event frames on a second thread while the
 * current one is decoded. The reader peeks at the blocks after the frame
 * it starts; the event frames among them (past clock samples and other
 * small blocks) go to the thread, a copy of their compressed bytes each,
 * up to PF_SLOTS ahead. A frame is used only when the reader reaches the
 * same bytes at the same offset, after their checksum held; a block
 * reached before it leaves it queued, one reached after drops it. A frame
 * the thread has not started when the reader reaches it is decompressed
 * by the reader itself, and so is one the thread has been on for longer
 * than a frame takes (it never waits long for a thread that does not
 * run). A slot is the thread's while PF_RUNNING or PF_ABANDONED, the
 * reader's otherwise.
 */
enum { PF_IDLE, PF_QUEUED, PF_RUNNING, PF_DONE,
       PF_ABANDONED };  /* running, no longer awaited: the thread's until done */
#define PF_SLOTS 3

struct pf_slot {
	int state;              /* PF_*, under mu */
	uint64_t off;           /* file offset of the block */
	uint8_t *in;            /* its payload (compressed) */
	size_t in_len, in_cap;
	uint8_t *out;           /* decompressed, content_size bytes */
	size_t out_cap, content_size;
	size_t result;          /* ZSTD_decompressDCtx() */
};

struct prefetch {
	bool on;                /* gtr_reader_set_prefetch(); default on */
	bool started, quit, failed;
	unsigned owner;         /* fork_gen when the thread started */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* handed over, in file order: slot[(head + k) % PF_SLOTS], k < count */
	struct pf_slot slot[PF_SLOTS];
	uint32_t head, count;
	uint64_t end_off;       /* file offset past the last frame handed over */
	ZSTD_DCtx *dctx;        /* the thread's */
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
	/* live input (gtr_reader_follow()): a pipe, or a file being written */
	bool stream;            /* not a regular file: reads may block */
	bool follow;            /* at the end of the file, wait for more */
	bool ended;             /* the summary was read: nothing follows */
	uint64_t idle_size;     /* followed file: its size when it last grew, */
	unsigned idle_ticks;    /* and the waits since (100 ms each) */
	gtr_wait_fn on_wait;    /* called before waiting for input; may be NULL */
	void *wait_ctx;

	/* current event frame */
	ZSTD_DCtx *dctx;                   /* created on first use */
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
	struct u64map ps_ix;              /* other probe ids -> slot */
	struct rstate *ps;                 /* ps_cap <= GTR_FRAME_PROBES slots */
	uint32_t nps, ps_cap;
	uint64_t stack[GTR_MAX_STACK];
	uint32_t nstack;
	bool stack_pending;
	uint64_t stack_prev;

	/* metadata */
	struct gtr_host host;
	bool host_seen;
	struct gtr_host **peers;  /* PEER blocks: host i at peers[i - 1] (may be NULL) */
	uint32_t npeers;          /* 1 + the largest index given */
	struct u64map pid_host;   /* pid -> host index, from PROCESS records */
	struct gtr_probe **probes;
	uint32_t nprobes, probes_cap;
	struct u64map probe_ix;
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
	struct u64map loss_ix;
	struct gtr_overflow overflow;
	uint32_t *sum_ids;
	uint64_t *sum_events;
	struct index_entry *index;
	uint32_t nindex;
	bool index_loaded;

	/* task names */
	struct u64map task_ix;
	struct comm *comms;
	uint32_t ncomms, comms_cap;
	uint64_t task_gen;      /* task records absorbed (gtr_reader_task_gen()) */

	uint64_t damage, skipped;
	bool truncated;
	bool summary_damaged;  /* the last block claimed to be the summary */
	uint64_t crc_work;      /* bytes checksummed so far */
	struct gtr_summary summary;
	struct prefetch pf;
};

/* A valid block, as rd_read_block() found it. */
struct block {
	uint32_t type, len;
	const uint8_t *payload; /* valid until the next window operation */
	uint64_t off;
};

/* ---------------------------------------------------------------- reader.c */

/* Sets the error message of r (gtr_reader_error()). */
void rd_msg(struct gtr_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Counts a damaged block at byte `off` and says why and what was done. */
void rd_damaged(struct gtr_reader *r, uint64_t off, const char *why,
		const char *what);

/*
 * Reads the next valid block and absorbs it. 1, 0 at the end of the file,
 * or a negative code that ends reading.
 */
int rd_advance(struct gtr_reader *r);

/* Grows *v (of *cap elements of `size` bytes) to hold n + 1. 0 or -1. */
int rd_grow(void **v, uint32_t *cap, uint32_t n, size_t size);

/* ---------------------------------------------------------- reader_input.c */

/*
 * Makes n bytes (n <= WINDOW_MAX / 2) available at buf + pos. Returns how many
 * are (fewer only at end of file), or -errno on a read error.
 */
ssize_t rd_win_fill(struct gtr_reader *r, size_t n);

/*
 * Reads the next valid block, resynchronising past damage. Returns 1 with
 * *b filled, 0 at the end of the file (clean, truncated or damaged), or
 * -errno on a read error.
 */
int rd_read_block(struct gtr_reader *r, struct block *b);

/* ------------------------------------------------------- reader_prefetch.c */

/*
 * Hands the block that follows the current position to the prefetch thread
 * when it is a whole event frame already in the input window.
 */
void rd_prefetch_next(struct gtr_reader *r);

/* Waits until the thread is done with the frame handed over, if any. */
void rd_prefetch_wait(struct prefetch *pf);

/* Stops the thread and frees what it used. */
void rd_prefetch_stop(struct prefetch *pf);

/* Decompresses event block b into r->dbuf. NULL with the reason in
 * why[whylen] when it is not one bounded frame. */
const uint8_t *rd_unzstd(struct gtr_reader *r, const struct block *b,
			 size_t *out_len, char *why, size_t whylen);

/* ----------------------------------------------------------- reader_meta.c */

/* Sets the metadata that must read as "" before any block fills it. */
void rd_meta_init(struct gtr_reader *r);

/* Frees every metadata string and table of r. */
void rd_meta_free(struct gtr_reader *r);

/* Absorbs one valid block. 0, or a negative code that ends reading. */
int rd_absorb(struct gtr_reader *r, const struct block *b);

/* Decodes a SUMMARY payload into r (also used to load the frame index). */
int rd_parse_summary(struct gtr_reader *r, struct gcr *c);

/* Symbols of binary `binary_id`, or NULL. */
struct symtab *rd_symtab_of(const struct gtr_reader *r, uint32_t binary_id);

/* --------------------------------------------------------- reader_events.c */

/* Starts event frame b: decompresses it and reads its header. */
void rd_start_frame(struct gtr_reader *r, const struct block *b);

/* Probe `id`, or NULL (gtr_reader_probe()). */
static inline const struct gtr_probe *rd_find_probe(const struct gtr_reader *r,
						    uint32_t id)
{
	if (id < DIRECT_PROBES)
		return r->direct[id];
	const uint32_t *ix = u64map_get(&r->probe_ix, id);
	return ix ? r->probes[*ix] : NULL;
}

/* ------------------------------------ shared by reader_events.c and reader_count.c */

/* Delta state of probe `id` in this frame; created when `create` and the
 * frame has fewer than GTR_FRAME_PROBES. NULL when none. */
static inline struct rstate *pstate(struct gtr_reader *r, uint32_t id, bool create)
{
	if (id < DIRECT_PROBES) {
		if (r->ps_dgen[id] == r->frame_gen)
			return &r->ps[r->ps_dslot[id]];
	} else if (r->ps_ix.n) {
		const uint32_t *v = u64map_get(&r->ps_ix, id);
		if (v)
			return &r->ps[*v];
	}
	if (!create || r->nps >= GTR_FRAME_PROBES)
		return NULL;
	/* grown as probes appear: most frames hold few */
	if (rd_grow((void **)&r->ps, &r->ps_cap, r->nps, sizeof(*r->ps)))
		return NULL;
	if (id < DIRECT_PROBES) {
		r->ps_dgen[id] = r->frame_gen;
		r->ps_dslot[id] = r->nps;
	} else if (u64map_put(&r->ps_ix, id, r->nps, GTR_FRAME_PROBES)) {
		return NULL;
	}
	return &r->ps[r->nps++];
}

/*
 * The argument of the CBOR head at *pp, whose major type the caller has
 * checked, when it takes at most 9 bytes before `end`: 0 with *pp moved
 * past the head, or -1 (reserved or indefinite lengths, bytes missing).
 */
static inline int fast_arg(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	const unsigned ai = *p & 31;

	if (ai < 24) {
		*v = ai;
		*pp = p + 1;
		return 0;
	}
	if (ai > 27 || (size_t)(end - p) <= (1u << (ai - 24)))
		return -1;
	switch (ai) {
	case 24:
		*v = p[1];
		break;
	case 25: {
		uint16_t x;
		memcpy(&x, p + 1, 2);
		*v = __builtin_bswap16(x);
		break;
	}
	case 26: {
		uint32_t x;
		memcpy(&x, p + 1, 4);
		*v = __builtin_bswap32(x);
		break;
	}
	default: {
		uint64_t x;
		memcpy(&x, p + 1, 8);
		*v = __builtin_bswap64(x);
		break;
	}
	}
	*pp = p + 1 + (1u << (ai - 24));
	return 0;
}

/*
 * The values of the delta event record at *pp (its heads past the
 * timestamp) into x[0, nv): integer deltas (a negative one as its two's
 * complement), byte strings captured whole with their lengths, skipped,
 * their bits in *strs and, when `vals` is not NULL, their bytes in
 * vals[i]. 0 with *pp past the values, or -1 for another shape (a head
 * of another major type, bytes missing, a string too long) or a string
 * at an index whose bit `no_str` has.
 */
static inline int delta_values(const uint8_t **pp, const uint8_t *end, uint32_t nv,
			       uint32_t no_str, uint64_t *x, uint32_t *strs,
			       struct gtr_value *vals)
{
	const uint8_t *p = *pp;

	*strs = 0;
	for (uint32_t i = 0; i < nv; i++) {
		if (p >= end)
			return -1;
		const unsigned major = *p >> 5;
		if (major > GCR_BYTES || fast_arg(&p, end, &x[i]))
			return -1;
		if (major == GCR_NEGINT) {
			x[i] = ~x[i];
		} else if (major == GCR_BYTES) {
			/* a string captured whole: no delta base */
			if (x[i] > GTR_MAX_STRING || x[i] > (uint64_t)(end - p) ||
			    (no_str >> i & 1))
				return -1;
			if (vals) {
				vals[i].kind = GTR_VAL_STR;
				vals[i].v.s.data = p;
				vals[i].v.s.len = (uint32_t)x[i];
				vals[i].v.s.full_len = x[i];
			}
			p += x[i];
			*strs |= 1u << i;
		}
	}
	*pp = p;
	return 0;
}

#endif /* GTR_READER_INTERNAL_H */
