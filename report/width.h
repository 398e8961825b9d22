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

#endif /* REPORT_WIDTH_H */
