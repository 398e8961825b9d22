/* SPDX-License-Identifier: MIT */
/*
 * Private to the writer (format/writer*.c): the writer's state and the
 * functions its two files share. writer.c writes the file header, event
 * frames and their records; writer_meta.c encodes the metadata blocks and
 * the summary. Nothing outside format/ includes this header; the reader
 * does not either.
 */
#ifndef GTR_WRITER_INTERNAL_H
#define GTR_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "gtr_internal.h"

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
	uint64_t span_end;       /* gtr_writer_set_span_end(), 0: none */
	bool stream;             /* a pipe, FIFO or device: no seeking, no
				  * cutting back (gtr_writer_is_stream()) */
	char *path;
	struct gtr_redactor *red; /* every value and name goes through it;
				   * NULL: none (gtr_writer_create_redacted()) */
	char err[512];
	uint64_t bytes;          /* written so far == offset of the next block */
	uint64_t good;           /* end of the last block written whole */
	bool ended;              /* gtr_writer_end() ran; end_rc its result */
	int end_rc;

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

/* ---------------------------------------------------------------- writer.c */

/* Sets the error message of w; returns rc. */
int wr_err(struct gtr_writer *w, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes one block: header (with its CRC32C) and payload. 0 or -errno. */
int wr_write_block(struct gtr_writer *w, uint32_t type, const uint8_t *payload,
		   size_t len);

/*
 * Compresses src[len] into w->zbuf as one zstd frame of *zlen bytes;
 * `what` ("frame", "block") names it in messages. 0 or -errno.
 */
int wr_compress(struct gtr_writer *w, const uint8_t *src, size_t len,
		const char *what, size_t *zlen);

/* Compresses the records with their header and writes one EVENTS block
 * (nothing when the frame is empty). 0 or -errno. */
int wr_flush_frame(struct gtr_writer *w);

/* ----------------------------------------------------------- writer_meta.c */

/* Writes the HOST block of h. 0 or -errno. */
int wr_write_host(struct gtr_writer *w, const struct gtr_host *h);

/* Writes the SUMMARY block: totals and the frame index. 0 or -errno. */
int wr_write_summary(struct gtr_writer *w);

#endif /* GTR_WRITER_INTERNAL_H */
