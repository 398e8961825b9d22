/* SPDX-License-Identifier: MIT */
/*
 * utf8: the one UTF-8 decoder of gotrace (well-formed sequences as
 * Unicode 15, table 3-7, defines them) and its encoder.
 */
#ifndef LIB_UTF8_H
#define LIB_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length (2-4) of the well-formed UTF-8 sequence starting at p[0] (a byte
 * >= 0x80; n > 0 bytes available), with its code point in *cp; 0 when it
 * is not one (stray continuation byte, overlong form, surrogate, above
 * U+10FFFF, cut short). Unicode 15, table 3-7.
 */
int utf8_seq(const uint8_t *p, size_t n, uint32_t *cp);

/*
 * Writes code point `cp` as UTF-8 into out[4]. Returns its length (1-4),
 * or 0 when `cp` is a surrogate or above U+10FFFF (nothing written).
 */
size_t utf8_encode(uint32_t cp, uint8_t out[4]);

#endif /* LIB_UTF8_H */
