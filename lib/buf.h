/* SPDX-License-Identifier: MIT */
/*
 * buf: a growable byte buffer the formatters append to. The read loop keeps
 * one for the whole run and writes it out in large chunks, so formatting an
 * event allocates nothing once the buffer has reached its working size.
 * Allocation failure is fatal (the message names it and the process exits
 * with status 1): a formatter has no useful way to go on without memory.
 */
#ifndef LIB_BUF_H
#define LIB_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;   /* not NUL-terminated unless buf_cstr() was called */
	size_t len;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0 }

/* Grows `b` to hold `n` more bytes; returns data + len (buf_reserve()'s
 * slow path). */
char *buf_grow(struct buf *b, size_t n);

/* Makes room for `n` more bytes; returns where they go (data + len). */
static inline char *buf_reserve(struct buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return b->data + b->len;
	return buf_grow(b, n);
}

/* Appends `n` bytes at `p`. */
void buf_add(struct buf *b, const void *p, size_t n);

/* Appends a NUL-terminated string. */
void buf_puts(struct buf *b, const char *s);

/* Appends one byte. */
static inline void buf_putc(struct buf *b, char c)
{
	if (b->len == b->cap)
		buf_grow(b, 1);
	b->data[b->len++] = c;
}

/* Appends `n` copies of byte `c` (nothing when n <= 0). */
void buf_pad(struct buf *b, char c, int n);

/* Appends printf-formatted text. */
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends the decimal form of an unsigned / signed 64-bit integer. */
void buf_u64(struct buf *b, uint64_t v);
void buf_i64(struct buf *b, int64_t v);

/* Appends "0x" and the lower-case hex digits of v, no leading zeros
 * (printf's "0x%" PRIx64). */
void buf_hex(struct buf *b, uint64_t v);

/* Writes the decimal digits of v at out (no NUL); returns how many (1-20).
 * buf_u64() without a buffer, for a fixed array. */
size_t u64_to_dec(char out[20], uint64_t v);

/* NUL-terminates the contents (not counted in len) and returns data. */
const char *buf_cstr(struct buf *b);

/*
 * Empties `b` and puts text `s` in it as a message shows it: a control
 * character (0x00-0x1f, 0x7f, U+0080-U+009F: each byte) and a byte that
 * is not part of well-formed UTF-8 are escaped (\x01), so that input or a name from a
 * binary cannot move the cursor or hide what it holds. Returns the text.
 */
const char *buf_shown(struct buf *b, const char *s);

/* Empties the buffer, keeping its memory. */
static inline void buf_reset(struct buf *b) { b->len = 0; }

/* Frees the memory; the buffer is empty and reusable afterwards. */
void buf_free(struct buf *b);

#endif /* LIB_BUF_H */
