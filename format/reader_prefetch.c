/* SPDX-License-Identifier: MIT */
/*
 * Decompression of event frames (and SYMBOLS blocks): in line, or ahead on
 * a second thread while the current frame is decoded. Either way the reader
 * gets the same bytes and the same verdict on a frame.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
void rd_prefetch_wait(struct prefetch *pf)
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
	free(pf->in);
	free(pf->out);
	pf->in = pf->out = NULL;
	pf->in_cap = pf->out_cap = 0;
	pf->state = PF_IDLE;
	pf->pending = false;
}

/* Blocks that rd_prefetch_next() looks past (clock samples, processes,
 * tasks between two frames) to find the next event frame. */
#define PEEK_BLOCKS 16

/*
 * The header of the first event frame at or after the current position
 * whose block lies whole in the input window, past at most PEEK_BLOCKS
 * other blocks; NULL when there is none. Headers are taken as they read,
 * unchecked: a guess that damage makes wrong only costs the work done on
 * it, as the frame is used only when the reader reaches the same bytes.
 */
static const uint8_t *next_frame(const struct gtr_reader *r)
{
	size_t at = r->pos;

	for (int k = 0; k <= PEEK_BLOCKS; k++) {
		if (r->len - at < GTR_BLOCK_HDR_LEN)
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

/*
 * Hands the next event frame to the thread when it is whole in the input
 * window (next_frame()). Reads nothing and changes nothing the caller
 * sees: a block not yet read is decompressed in line when it is reached,
 * with whatever error reading it gives then.
 */
void rd_prefetch_next(struct gtr_reader *r)
{
	struct prefetch *pf = &r->pf;
	char why[128];
	size_t csize;

	prefetch_forked(pf);
	if (!pf->on || pf->failed || pf->pending)
		return;
	const uint8_t *h = next_frame(r);
	if (!h)
		return;
	const uint32_t len = gtr_get_le32(h + 8);
	if (zframe_check(h + GTR_BLOCK_HDR_LEN, len, &csize, why, sizeof(why)))
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
	pf->off = r->buf_off + (size_t)(h - r->buf);
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
 * then dropped, unless b comes before it) or it did not decompress (the caller decompresses again and
 * reports why).
 */
static const uint8_t *prefetch_take(struct gtr_reader *r, const struct block *b,
				    size_t *out_len)
{
	struct prefetch *pf = &r->pf;

	if (!pf->pending)
		return NULL;
	/* a block before the frame handed over (symbols): the frame is
	 * still to come */
	if (b->off < pf->off)
		return NULL;
	rd_prefetch_wait(pf);
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
