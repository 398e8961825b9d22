/* SPDX-License-Identifier: MIT */
/*
 * The reader's input: a window over the file and the blocks in it. A block
 * is taken only when its checksum holds; damage is skipped by scanning for
 * the next block that does (spec/FORMAT.md, "Damage and truncation").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reader_internal.h"

/*
 * Checksum work allowed when resynchronising, beyond 16 times the file
 * offset reached (spec "Limits"): bounds the time crafted input can cost.
 */
#define GTR_RESYNC_BUDGET (1ull << 30)

/* Whether a read(2) of the input would block now (a pipe with nothing
 * in it); regular files never block. */
static bool would_block(const struct gtr_reader *r)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN };

	return r->stream && poll(&p, 1, 0) == 0;
}

#define FOLLOW_IDLE_TICKS 50   /* 5 s without growth: check for a writer */

/*
 * Whether the followed file has a writer: it grew within the last
 * FOLLOW_IDLE_TICKS waits, or a process holds the lock every libgtr
 * writer takes on the file it creates (flock(2), which the kernel
 * releases when the writer ends, SIGKILL included). A copy of a file,
 * on any machine, has none.
 */
static bool follow_writer_alive(struct gtr_reader *r)
{
	struct stat st;

	if (fstat(r->fd, &st))
		return true;
	if ((uint64_t)st.st_size != r->idle_size) {
		r->idle_size = (uint64_t)st.st_size;
		r->idle_ticks = 0;
		return true;
	}
	if (++r->idle_ticks < FOLLOW_IDLE_TICKS)
		return true;
	r->idle_ticks = 0;
	if (flock(r->fd, LOCK_SH | LOCK_NB))
		return errno != EWOULDBLOCK;   /* held: the writer lives */
	flock(r->fd, LOCK_UN);
	return false;
}

/*
 * At the end of a followed file: 1 when more may come (after waiting up
 * to 100 ms), 0 when reading ends here (the summary was read, the wait
 * hook said stop, or the writer is gone: the file did not grow for 5 s
 * and no process holds its writer's lock).
 */
static int follow_wait(struct gtr_reader *r)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };

	if (!r->follow || r->ended)
		return 0;
	if (r->on_wait && r->on_wait(r->wait_ctx))
		return 0;
	if (!follow_writer_alive(r))
		return 0;
	nanosleep(&tick, NULL);
	return 1;
}

ssize_t rd_win_fill(struct gtr_reader *r, size_t n)
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
			rd_msg(r, "%s: out of memory for a block of %zu bytes", r->path, n);
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
		if (r->on_wait && would_block(r)) {
			if (r->on_wait(r->wait_ctx)) {
				r->eof = true;
				break;
			}
			/* a tick: on_wait is asked again while nothing comes */
			struct pollfd p = { .fd = r->fd, .events = POLLIN };
			poll(&p, 1, 100);
			continue;
		}
		const ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			const int e = errno;
			rd_msg(r, "%s: read error at byte %llu: %s", r->path,
			       (unsigned long long)(r->buf_off + r->len), strerror(e));
			return -e;
		}
		if (!got && follow_wait(r))
			continue;
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
	ssize_t a = rd_win_fill(r, GTR_BLOCK_HDR_LEN);

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
	/* A length past the end of a regular file (as it is now: it may be
	 * growing) cannot be read whole: say so without growing the window
	 * to hold it, so that a forged length costs no memory. */
	if (GTR_BLOCK_HDR_LEN + (size_t)len > r->len - r->pos) {
		struct stat st;

		if (!r->follow && !fstat(r->fd, &st) && S_ISREG(st.st_mode) &&
		    r->buf_off + r->pos + GTR_BLOCK_HDR_LEN + len > (uint64_t)st.st_size) {
			snprintf(r->why, sizeof(r->why), "incomplete block");
			return TB_SHORT;
		}
	}
	a = rd_win_fill(r, GTR_BLOCK_HDR_LEN + (size_t)len);
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

static void take_block(struct gtr_reader *r, struct block *b)
{
	const uint8_t *h = r->buf + r->pos;

	b->type = gtr_get_le32(h + 4);
	b->len = gtr_get_le32(h + 8);
	b->payload = h + GTR_BLOCK_HDR_LEN;
	b->off = r->buf_off + r->pos;
	r->pos += GTR_BLOCK_HDR_LEN + b->len;
}

int rd_read_block(struct gtr_reader *r, struct block *b)
{
	ssize_t a = rd_win_fill(r, 1);

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
	/* what the damaged block's header claims it is, when it says */
	const uint32_t claimed = r->len - r->pos >= 8 &&
				 !memcmp(r->buf + r->pos, GTR_BLOCK_MAGIC, 4)
				 ? gtr_get_le32(r->buf + r->pos + 4) : 0;
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
			a = rd_win_fill(r, r->len - r->pos + 1);
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
			rd_damaged(r, bad_off, why, what);
			take_block(r, b);
			return 1;
		}
		if (r->crc_work > GTR_RESYNC_BUDGET + 16 * (r->buf_off + r->pos)) {
			/* Only crafted input gets here: many fake headers with
			 * large lengths would make the scan quadratic. */
			rd_damaged(r, bad_off, why,
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
		rd_msg(r, "%s: truncated at byte %llu (%s); events of every complete block before it were read",
		       r->path, (unsigned long long)bad_off, why);
	} else {
		rd_damaged(r, bad_off, why, "skipped to the end of the file");
		r->summary_damaged = claimed == GTR_BLOCK_SUMMARY;
	}
	return 0;
}
