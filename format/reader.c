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
 *
 * This file opens, closes, preloads and seeks; reader_internal.h lists the
 * others.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_internal.h"

void rd_msg(struct gtr_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

void rd_damaged(struct gtr_reader *r, uint64_t off, const char *why,
		const char *what)
{
	r->damage++;
	rd_msg(r, "%s: damaged block at byte %llu (%s); %s", r->path,
	       (unsigned long long)off, why, what);
}

int rd_advance(struct gtr_reader *r)
{
	struct block b;
	int rc = rd_read_block(r, &b);

	if (rc <= 0)
		return rc;
	rc = rd_absorb(r, &b);
	return rc < 0 ? rc : 1;
}

int rd_grow(void **v, uint32_t *cap, uint32_t n, size_t size)
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

/* ------------------------------------------------------------- open, close */

/*
 * The input window's first size in bytes: WINDOW_INITIAL, or a regular
 * file's size when that is smaller (rounded up to 4 KiB, and room for one
 * more block header), so that opening a small file neither allocates nor
 * faults in 1 MiB. The window grows as blocks need (rd_win_fill()), as it
 * does for a file that grows while it is read.
 */
static size_t window_initial(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size >= WINDOW_INITIAL - GTR_BLOCK_HDR_LEN)
		return WINDOW_INITIAL;
	return ((size_t)st.st_size + GTR_BLOCK_HDR_LEN + 4095) & ~(size_t)4095;
}

struct gtr_reader *gtr_reader_open(const char *path, char *err, size_t errlen)
{
	struct gtr_reader *r;
	struct stat st;

	const bool in = !path || !strcmp(path, "-");

	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(in ? "standard input" : path))) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	path = r->path;
	rd_meta_init(r);
	/* standard input reads as a file does, but without seeking: no
	 * frame index (gtr_reader_seek_ts()) */
	r->fd = in ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		rd_msg(r, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!fstat(r->fd, &st) && S_ISDIR(st.st_mode)) {
		rd_msg(r, "%s is a directory; expected a .gtr file from gotrace-record", path);
		goto fail;
	}
	r->stream = !fstat(r->fd, &st) && !S_ISREG(st.st_mode);
	r->cap = window_initial(r->fd);
	r->buf = malloc(r->cap);
	r->pf.on = true;
	if (!r->buf) {
		rd_msg(r, "out of memory");
		goto fail;
	}
	ssize_t a = rd_win_fill(r, GTR_FILE_HDR_LEN);
	if (a < 0)
		goto fail;
	if (a == 0) {
		rd_msg(r, "%s: empty file; expected a .gtr file from gotrace-record", path);
		goto fail;
	}
	if (memcmp(r->buf, GTR_MAGIC, a < GTR_MAGIC_LEN ? (size_t)a : GTR_MAGIC_LEN)) {
		rd_msg(r, "%s: not a gotrace trace (bad magic); expected a .gtr file from gotrace-record", path);
		goto fail;
	}
	if (a < GTR_FILE_HDR_LEN) {
		rd_msg(r, "%s: truncated at byte %zd (incomplete file header); the recording was cut short", path, a);
		goto fail;
	}
	r->major = gtr_get_le16(r->buf + 8);
	r->minor = gtr_get_le16(r->buf + 10);
	if (r->major > GTR_VERSION_MAJOR || r->major == 0) {
		rd_msg(r, "%s: trace format version %u.%u is not supported by this gotrace (reads %u.x); use a gotrace-report that supports it",
		       path, r->major, r->minor, GTR_VERSION_MAJOR);
		goto fail;
	}
	r->pos = GTR_FILE_HDR_LEN;
	/* The host block comes first; read it (or whatever is there) now. */
	if (rd_advance(r) < 0)
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
	rd_meta_free(r);
	u64map_free(&r->task_ix);
	u64map_free(&r->ps_ix);
	u64map_free(&r->loss_ix);
	free(r->ps);
	free(r->losses);
	free(r->comms);
	rd_prefetch_stop(&r->pf);
	ZSTD_freeDCtx(r->dctx);
	free(r->dbuf);
	free(r->buf);
	free(r->path);
	free(r);
}

void gtr_reader_follow(struct gtr_reader *r, bool follow, gtr_wait_fn on_wait,
		       void *ctx)
{
	r->follow = follow && !r->stream;
	r->on_wait = on_wait;
	r->wait_ctx = ctx;
}

void gtr_reader_set_prefetch(struct gtr_reader *r, bool on)
{
	rd_prefetch_wait(&r->pf);
	r->pf.on = on;
}

int gtr_reader_preload(struct gtr_reader *r)
{
	while (!r->in_frame) {
		const int rc = rd_advance(r);
		if (rc <= 0)
			return rc;
	}
	return 0;
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
		/* candidates from the end back: memrchr() finds each "G" */
		const uint8_t *g = t + tail - GTR_BLOCK_HDR_LEN + 1;
		while ((g = memrchr(t, GTR_BLOCK_MAGIC[0], (size_t)(g - t)))) {
			const uint64_t i = (uint64_t)(g - t);
			if (memcmp(t + i, GTR_BLOCK_MAGIC, 4) ||
			    gtr_get_le32(t + i + 4) != GTR_BLOCK_SUMMARY ||
			    i + GTR_BLOCK_HDR_LEN + gtr_get_le32(t + i + 8) != tail ||
			    gtr_get_le32(t + i + 12) != gtr_block_crc(t + i, t + i + GTR_BLOCK_HDR_LEN,
								       tail - i - GTR_BLOCK_HDR_LEN))
				continue;
			struct gcr c = { t + i + GTR_BLOCK_HDR_LEN, t + tail };
			const int rc = rd_parse_summary(r, &c);
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
			rd_msg(r, "%s: no frame index to seek with (the file has no summary: recording not closed cleanly); read it from the start",
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
		const int rc = rd_read_block(r, &b);
		if (rc <= 0)
			return rc;
		if (b.type == GTR_BLOCK_EVENTS)
			continue;
		rd_absorb(r, &b);
	}
	return 0;
}
