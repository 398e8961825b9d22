/* SPDX-License-Identifier: MIT */
/* Display width of UTF-8 text on a terminal (report/width.c; decoding:
 * lib/utf8.h). */
#ifndef REPORT_WIDTH_H
#define REPORT_WIDTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Bytes (1-4) of the character at s[0] (n > 0), its columns in *w; a byte
 * that does not start well-formed UTF-8 is one byte of one column.
 */
size_t text_char(const char *s, size_t n, int *w);

/* Columns that s[0, n) takes on a terminal. */
int text_width(const char *s, size_t n);

struct buf;

/*
 * Bytes of display text s[0, n) (escaped by output_text_bytes(): an
 * escape such as \x01 or \n is kept or cut whole) that fit in `max`
 * columns when the cut text ends with an ellipsis (max - 1 columns of
 * text); their columns in *cols.
 */
size_t text_fit_head(const char *s, size_t n, int max, int *cols);

/*
 * Cuts the display text in b from byte `start` to its end so that it takes
 * at most `max` columns (max > 3): a wider text keeps its end after "...",
 * so that a long Go name keeps its function ("...esbuild/internal/
 * js_lexer.(*Lexer).Next"). Escapes are kept or cut whole.
 */
void text_keep_tail(struct buf *b, size_t start, int max);

/*
 * Appends display text `s` padded with spaces to `width` columns (on the
 * right when `left`); when max > 0 and `s` is wider than `max` columns, its
 * head is kept, cut with an ellipsis (U+2026) to fit.
 */
void text_cell(struct buf *b, const char *s, int width, bool left, int max);

#endif /* REPORT_WIDTH_H */
