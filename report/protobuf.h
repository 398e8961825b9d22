/* SPDX-License-Identifier: MIT */
/*
 * protobuf: a small encoder of the protobuf wire format
 * (https://protobuf.dev/programming-guides/encoding/) appending to a
 * struct buf, for --format perfetto. Fields are written in the order the
 * caller gives; a nested message is opened with pb_open(), which leaves
 * one byte for its length, and closed with pb_close(), which writes the
 * length and moves the body up when it needs more bytes. Nothing here
 * knows a .proto: field numbers are the caller's.
 */
#ifndef REPORT_PROTOBUF_H
#define REPORT_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends `v` as a base-128 varint (1 to 10 bytes). */
void pb_varint(struct buf *b, uint64_t v);

/* Appends field `field` of wire type VARINT holding `v` (uint32, uint64,
 * bool and enum fields; int32 and int64 through pb_int()). */
void pb_uint(struct buf *b, uint32_t field, uint64_t v);

/* Appends int32/int64 field `field` holding `v` (negative: ten bytes, two's
 * complement, as protobuf encodes them). */
void pb_int(struct buf *b, uint32_t field, int64_t v);

/* Appends fixed64 or double field `field` holding the 8 bytes of `bits`,
 * little-endian. */
void pb_fixed64(struct buf *b, uint32_t field, uint64_t bits);

/* Appends double field `field` holding `d`. */
void pb_double(struct buf *b, uint32_t field, double d);

/* Appends string or bytes field `field` holding p[0, n). A string field
 * must be valid UTF-8: the caller's duty. */
void pb_bytes(struct buf *b, uint32_t field, const void *p, size_t n);

/* Appends string field `field` holding the NUL-terminated `s`. */
void pb_string(struct buf *b, uint32_t field, const char *s);

/* Opens message field `field`: returns the mark pb_close() takes. */
size_t pb_open(struct buf *b, uint32_t field);

/* Closes the message opened at `mark`: writes its length (the bytes
 * appended since pb_open()), moving them when it takes over one byte.
 * Messages close innermost first. */
void pb_close(struct buf *b, size_t mark);

#endif /* REPORT_PROTOBUF_H */
