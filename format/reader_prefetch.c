/* SPDX-License-Identifier: MIT */
/*
 * Decompression of event frames (and SYMBOLS blocks): in line, or ahead on
 * a second thread while the current frame is decoded. Either way the reader
 * gets the same bytes and the same verdict on a frame.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reader_internal.h"

/* Bytes past a frame's declared size given to zstd as room: its fast
 * loops need some; a frame that writes into them is reported as one that
 * does not match its declared size. */
#define ZSTD_SLACK 64

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

/* The thread: decompresses the queued frames in file order. */
static void *prefetch_main(void *arg)
{
	struct prefetch *pf = arg;

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		struct pf_slot *s = NULL;
		for (uint32_t k = 0; k < pf->count && !s; k++)
			if (pf->slot[(pf->head + k) % PF_SLOTS].state == PF_QUEUED)
				s = &pf->slot[(pf->head + k) % PF_SLOTS];
		if (pf->quit)
			break;
		if (!s) {
			pthread_cond_wait(&pf->cv, &pf->mu);
			continue;
		}
		s->state = PF_RUNNING;
		pthread_mutex_unlock(&pf->mu);
		/* capacity: from the declared size only, so that zstd's
		 * verdict on a frame never depends on the buffer's history */
		const size_t got = ZSTD_decompressDCtx(pf->dctx, s->out, s->content_size + ZSTD_SLACK,
						       s->in, s->in_len);
		pthread_mutex_lock(&pf->mu);
		s->result = got;
		/* one the reader stopped waiting for is its own again */
		s->state = s->state == PF_ABANDONED ? PF_IDLE : PF_DONE;
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
 * and the frames it held, and decompress in line from then on.
 */
static void prefetch_forked(struct prefetch *pf)
{
	if (pf->started && pf->owner != fork_gen) {
		pf->started = false;   /* not joined, not destroyed: not ours */
		pf->failed = true;
		for (uint32_t k = 0; k < PF_SLOTS; k++)
			pf->slot[k].state = PF_IDLE;
		pf->count = 0;
	}
}

/* Drops the frame at the head of the queue (pf->mu held); one the thread
 * is decompressing stays its own until it is done (PF_ABANDONED). */
static void drop_head(struct prefetch *pf)
{
	struct pf_slot *s = &pf->slot[pf->head];

	s->state = s->state == PF_RUNNING ? PF_ABANDONED : PF_IDLE;
	pf->head = (pf->head + 1) % PF_SLOTS;
	pf->count--;
}

/* Whether a slot is still the thread's (pf->mu held). */
static bool slots_busy(const struct prefetch *pf)
{
	for (uint32_t k = 0; k < PF_SLOTS; k++)
		if (pf->slot[k].state == PF_RUNNING || pf->slot[k].state == PF_ABANDONED)
			return true;
	return false;
}

/* Waits until the thread is done with the frames handed over, if any, and
 * takes ownership of the buffers back. */
void rd_prefetch_wait(struct prefetch *pf)
{
	prefetch_forked(pf);
	if (!pf->started)
		return;
	pthread_mutex_lock(&pf->mu);
	while (pf->count)
		drop_head(pf);
	while (slots_busy(pf))
		pthread_cond_wait(&pf->cv, &pf->mu);
	pthread_mutex_unlock(&pf->mu);
}

void rd_prefetch_stop(struct prefetch *pf)
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
	for (uint32_t k = 0; k < PF_SLOTS; k++) {
		struct pf_slot *s = &pf->slot[k];
		free(s->in);
		free(s->out);
		*s = (struct pf_slot){ .state = PF_IDLE };
	}
	pf->count = 0;
}

/* Decompressed bytes the thread may hold ahead beyond one frame: a few
 * frames of gotrace-record's, not PF_SLOTS of the largest a file may
 * declare. */
#define PF_AHEAD_BYTES (8u << 20)

/* How long the reader waits for a frame the thread is decompressing (ns):
 * about the time of one, so that a thread that lost its processor on a
 * busy machine does not hold the reader up. */
#define TAKE_WAIT_NS 300000L

/* Blocks that rd_prefetch_next() looks past (clock samples, processes,
 * tasks between two frames) to find the next event frame. */
#define PEEK_BLOCKS 16

/*
 * The header of the first event frame at window offset `at` or after it
 * whose block lies whole in the input window, past at most PEEK_BLOCKS
 * other blocks; NULL when there is none. Headers are taken as they read,
 * unchecked: a guess that damage makes wrong only costs the work done on
 * it, as a frame is used only when the reader reaches the same bytes.
 */
static const uint8_t *next_frame(const struct gtr_reader *r, size_t at)
{
	for (int k = 0; k <= PEEK_BLOCKS; k++) {
		if (at > r->len || r->len - at < GTR_BLOCK_HDR_LEN)
			return NULL;
		const uint8_t *h = r->buf + at;
		const uint32_t len = gtr_get_le32(h + 8);
		if (memcmp(h, GTR_BLOCK_MAGIC, 4) || len > GTR_MAX_BLOCK ||
		    r->len - at - GTR_BLOCK_HDR_LEN < (size_t)len)
			return NULL;
		if (gtr_get_le32(h + 4) == GTR_BLOCK_EVENTS)
			return h;
		at += GTR_BLOCK_HDR_LEN + (size_t)len;
	}
	return NULL;
}

/* Starts the thread. 0, or -1 (then frames decompress in line). */
static int prefetch_start(struct prefetch *pf)
{
	if (!pf->dctx && !(pf->dctx = ZSTD_createDCtx()))
		return -1;
	if (pthread_mutex_init(&pf->mu, NULL))
		return -1;
	if (pthread_cond_init(&pf->cv, NULL)) {
		pthread_mutex_destroy(&pf->mu);
		return -1;
	}
	if (pthread_create(&pf->th, NULL, prefetch_main, pf)) {
		pthread_cond_destroy(&pf->cv);
		pthread_mutex_destroy(&pf->mu);
		return -1;
	}
	pthread_once(&fork_once, fork_watch);
	pf->started = true;
	pf->owner = fork_gen;
	return 0;
}

/*
 * Copies the event frame with header h into the next free slot; false
 * when it is not one zstd frame of a declared size or memory runs out.
 */
static bool queue_frame(struct gtr_reader *r, const uint8_t *h)
{
	struct prefetch *pf = &r->pf;
	struct pf_slot *s = &pf->slot[(pf->head + pf->count) % PF_SLOTS];
	const uint32_t len = gtr_get_le32(h + 8);
	char why[128];
	size_t csize;

	pthread_mutex_lock(&pf->mu);
	const bool free_slot = s->state == PF_IDLE;   /* not one abandoned and running */
	pthread_mutex_unlock(&pf->mu);
	if (!free_slot || zframe_check(h + GTR_BLOCK_HDR_LEN, len, &csize, why, sizeof(why)))
		return false;
	/* beyond the next frame, only as much as PF_AHEAD_BYTES */
	size_t ahead = csize;
	for (uint32_t k = 0; k < pf->count; k++)
		ahead += pf->slot[(pf->head + k) % PF_SLOTS].content_size;
	if ((pf->count && ahead > PF_AHEAD_BYTES) ||
	    reserve(&s->in, &s->in_cap, len) || reserve(&s->out, &s->out_cap, csize + ZSTD_SLACK))
		return false;
	memcpy(s->in, h + GTR_BLOCK_HDR_LEN, len);
	s->in_len = len;
	s->off = r->buf_off + (size_t)(h - r->buf);
	s->content_size = csize;
	pthread_mutex_lock(&pf->mu);
	s->state = PF_QUEUED;
	pf->count++;
	pthread_mutex_unlock(&pf->mu);
	pf->end_off = s->off + GTR_BLOCK_HDR_LEN + len;
	return true;
}

/*
 * Hands the next event frames to the thread, as many as are whole in the
 * input window and free slots take (next_frame()). Reads nothing and
 * changes nothing the caller sees: a block not yet read is decompressed in
 * line when it is reached, with whatever error reading it gives then.
 */
void rd_prefetch_next(struct gtr_reader *r)
{
	struct prefetch *pf = &r->pf;
	const uint64_t here = r->buf_off + r->pos;
	bool queued = false;

	prefetch_forked(pf);
	if (!pf->on || pf->failed)
		return;
	while (pf->count < PF_SLOTS) {
		/* after the last frame handed over, if it lies ahead */
		const uint64_t from = pf->count && pf->end_off > here ? pf->end_off : here;
		const uint8_t *h = next_frame(r, (size_t)(from - r->buf_off));
		if (!h)
			break;
		/* the thread on first use: a file of one frame needs none */
		if (!pf->started && prefetch_start(pf)) {
			pf->failed = true;      /* no thread: decompress in line */
			return;
		}
		if (!queue_frame(r, h))
			break;
		queued = true;
	}
	if (queued) {
		pthread_mutex_lock(&pf->mu);
		pthread_cond_broadcast(&pf->cv);
		pthread_mutex_unlock(&pf->mu);
	}
}

/*
 * The prefetched frame, when it is the block b: swaps it into r->dbuf and
 * returns it, its length in *out_len. NULL when there is none for b
 * (frames before it are dropped, those after it kept), when the thread
 * had not started it or did not finish it within TAKE_WAIT_NS (the caller
 * decompresses it: no wait for a thread that may not run), or when it did
 * not decompress (the caller decompresses again and reports why).
 */
static const uint8_t *prefetch_take(struct gtr_reader *r, const struct block *b,
				    size_t *out_len)
{
	struct prefetch *pf = &r->pf;
	const uint8_t *d = NULL;

	prefetch_forked(pf);
	if (!pf->count)
		return NULL;
	pthread_mutex_lock(&pf->mu);
	while (pf->count && pf->slot[pf->head].off < b->off)
		drop_head(pf);
	struct pf_slot *s = &pf->slot[pf->head];
	if (!pf->count || s->off != b->off)
		goto out;
	if (s->state == PF_RUNNING) {
		/* about a frame's time; then the thread is taken to have
		 * lost its processor, and the reader goes on without it */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += TAKE_WAIT_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (s->state == PF_RUNNING &&
		       pthread_cond_timedwait(&pf->cv, &pf->mu, &until) != ETIMEDOUT)
			;
	}
	if (s->state != PF_DONE) {
		drop_head(pf);
		goto out;
	}
	if (s->in_len == b->len && !memcmp(s->in, b->payload, b->len) &&
	    !ZSTD_isError(s->result) && s->result == s->content_size) {
		uint8_t *o = r->dbuf;
		const size_t cap = r->dcap;
		r->dbuf = s->out;
		r->dcap = s->out_cap;
		s->out = o;
		s->out_cap = cap;
		*out_len = s->content_size;
		d = r->dbuf;
	}
	drop_head(pf);
out:
	pthread_mutex_unlock(&pf->mu);
	return d;
}

const uint8_t *rd_unzstd(struct gtr_reader *r, const struct block *b,
			 size_t *out_len, char *why, size_t whylen)
{
	size_t csize;
	const uint8_t *d = prefetch_take(r, b, out_len);

	if (d)
		return d;
	if (zframe_check(b->payload, b->len, &csize, why, whylen))
		return NULL;
	/* the context on first use: a file without frames never needs one */
	if (reserve(&r->dbuf, &r->dcap, csize + ZSTD_SLACK) ||
	    (!r->dctx && !(r->dctx = ZSTD_createDCtx()))) {
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
