/* SPDX-License-Identifier: MIT */
/* UTF-8 decoding and display width of text (report/width.c). */
#ifndef REPORT_WIDTH_H
#define REPORT_WIDTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length (2-4) of the well-formed UTF-8 sequence starting at p[0] (a byte
 * >= 0x80), with its code point in *cp; 0 when it is not one (stray
 * continuation byte, overlong form, surrogate, above U+10FFFF, cut short).
 * Unicode 15, table 3-7.
 */
int utf8_seq(const uint8_t *p, size_t n, uint32_t *cp);

/*
 * Bytes (1-4) of the character at s[0] (n > 0), its columns in *w; a byte
 * that does not start well-formed UTF-8 is one byte of one column.
 */
size_t text_char(const char *s, size_t n, int *w);

/* Columns that s[0, n) takes on a terminal. */
int text_width(const char *s, size_t n);

#endif /* REPORT_WIDTH_H */
