/* SPDX-License-Identifier: MIT */
/*
 * Private to format/: constants of the .gtr byte layout (spec/FORMAT.md),
 * little-endian helpers, CRC32C and the small maps the writer and reader
 * share. Nothing outside format/ includes this header.
 */
#ifndef GTR_INTERNAL_H
#define GTR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gtr.h"

#include "map.h"

/* File header: magic, u16 major, u16 minor, u32 flags (spec "File header"). */
#define GTR_MAGIC "\x89GTR\r\n\x1a\n"
#define GTR_MAGIC_LEN 8
#define GTR_FILE_HDR_LEN 16

/* Block header: "GTRB", u32 type, u32 payload length, u32 CRC32C. */
#define GTR_BLOCK_MAGIC "GTRB"
#define GTR_BLOCK_HDR_LEN 16

enum gtr_block_type {
	GTR_BLOCK_HOST = 1,
	GTR_BLOCK_BINARY = 2,
	GTR_BLOCK_PROBE = 3,
	GTR_BLOCK_EVENTS = 4,
	GTR_BLOCK_SUMMARY = 5,
	GTR_BLOCK_SYMBOLS = 6,
	GTR_BLOCK_MAPPING = 7,
	GTR_BLOCK_CLOCK = 8,
	GTR_BLOCK_PROCESS = 9,
	GTR_BLOCK_PEER = 10,
};

/* Record types inside an EVENTS frame (spec "Records"). */
enum gtr_rec_type {
	GTR_REC_ENTRY = 0,       /* full event: pid, tid, goid present */
	GTR_REC_RETURN = 1,
	GTR_REC_TASK = 2,
	GTR_REC_DROP = 3,
	GTR_REC_ENTRY_CTX = 4,   /* event in the context of the previous one */
	GTR_REC_RETURN_CTX = 5,
	GTR_REC_ENTRY_DELTA = 6, /* same context, integers as deltas */
	GTR_REC_RETURN_DELTA = 7,
	GTR_REC_ENTRY_CPU = 8,   /* full event with its CPU */
	GTR_REC_RETURN_CPU = 9,
	GTR_REC_STACK = 10,      /* stack of the next event record */
};

/* Limits of the format; the reader rejects files that exceed them. */
#define GTR_MAX_BLOCK (64u << 20)      /* payload bytes of one block */
#define GTR_MAX_FRAME (64u << 20)      /* decompressed bytes of one frame */
#define GTR_FRAME_TARGET (128u << 10)  /* writer flushes a frame at this size */
#define GTR_MAX_PROBES 65536u          /* probes per file (reader) */
#define GTR_MAX_BINARIES 4096u         /* binaries per file (reader) */
#define GTR_MAX_META_BYTES (256u << 20) /* reader heap for metadata strings */
#define GTR_MAX_TASKS 65536u           /* (pid, tid) names the reader keeps */
#define GTR_CBOR_DEPTH 16              /* nesting the reader will skip */
#define GTR_FRAME_PROBES 4096u         /* probes with delta state per frame */
#define GTR_SYMS_PER_BLOCK 8192u       /* writer: symbols per SYMBOLS block */
#define GTR_MAX_SYMBOLS (1u << 21)     /* symbols the reader keeps */
#define GTR_MAX_MAPPINGS 65536u        /* mappings the reader keeps */
#define GTR_MAX_PROCESSES 65536u       /* process records the reader keeps */
#define GTR_MAX_CLOCKS 65536u          /* clock samples the reader keeps */
#define GTR_MAX_LOSSES 4096u           /* (probe, cpu) loss entries kept */
#define GTR_MAX_INDEX (1u << 20)       /* frame index entries (summary) */

static inline void gtr_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void gtr_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint16_t gtr_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t gtr_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF) of buf[len], continuing from `crc` (0 to start).
 * crc32c(0, "123456789", 9) == 0xE3069283 (RFC 3720 B.4).
 */
uint32_t gtr_crc32c(uint32_t crc, const void *buf, size_t len);

/* Same, always with the portable table code (for tests). */
uint32_t gtr_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* CRC of a block: over its type and length fields, then its payload. */
uint32_t gtr_block_crc(const uint8_t hdr[GTR_BLOCK_HDR_LEN],
		       const uint8_t *payload, size_t len);

/* Type from its name ("int"...), GTR_TYPE_OTHER for names not known. */
enum gtr_type gtr_type_from_name(const char *s, size_t len);



/*
 * Field schemas of the metadata maps (format/schema.c): one table per map
 * says, for each key, the kind of its value and where the value lives in
 * the public struct. The writer writes the keys in table order
 * (writer_meta.c, e_fields()); the reader takes them in any order and skips
 * keys it does not know (reader_meta.c, decode_map()).
 */
enum gtr_fkind {
	GTR_F_U64,  /* uint64_t: unsigned integer */
	GTR_F_U32,  /* uint32_t: unsigned integer that fits 32 bits */
	GTR_F_I32,  /* int32_t: integer in [-2^31, 2^31) */
	GTR_F_BOOL, /* bool */
	GTR_F_STR,  /* const char *: text of at most GTR_MAX_NAME bytes;
		       NULL is written, and read back, as "" */
	GTR_F_TYPE, /* enum gtr_type: its name; unknown names read as OTHER */
	GTR_F_KIND, /* enum gtr_kind: "entry" or "return" */
	GTR_F_MAP,  /* a nested map of schema `sub`, at the same base + off */
};

/* Flags of a field. */
#define GTR_F_REQUIRED 1u /* the reader rejects a map without it */
#define GTR_F_OPTIONAL 2u /* the writer leaves it out when it holds `absent`
			   (a GTR_F_STR: when it is NULL or "") */

struct gtr_schema;

struct gtr_field {
	const char *key;
	enum gtr_fkind kind;
	unsigned flags;
	size_t off;       /* of the value in the struct */
	int64_t absent;   /* what a map without the key means (integers) */
	const struct gtr_schema *sub; /* GTR_F_MAP: the nested map's fields */
};

struct gtr_schema {
	const struct gtr_field *fields;
	size_t n;         /* at most 32 (the reader's bit set of keys seen) */
};

/* A field of struct `type`; with flags and the value its absence means. */
#define GTR_FIELD(key, kind, type, member) \
	{ key, kind, 0, offsetof(type, member), 0, NULL }
#define GTR_FIELD_X(key, kind, type, member, flags, absent) \
	{ key, kind, flags, offsetof(type, member), absent, NULL }
#define GTR_SCHEMA(fields) { fields, sizeof(fields) / sizeof((fields)[0]) }

/* HOST (after "format", which the writer adds and the reader skips: the
 * version is the file header's), its "clocks" map, and a CLOCK block; the
 * clock fields are those of struct gtr_host (start_*_ns). */
extern const struct gtr_schema gtr_host_schema, gtr_clock_schema;

/* A PEER block: another host of a merged file (gtr_writer_peer()). */
struct gtr_peer {
	struct gtr_host h;
	uint32_t index;
};
extern const struct gtr_schema gtr_peer_schema;
/* BINARY, PROCESS and MAPPING: the whole map. */
extern const struct gtr_schema gtr_binary_schema, gtr_process_schema,
	gtr_mapping_schema;
/* PROBE without its arrays "args" (maps of gtr_arg_schema) and "exprs". */
extern const struct gtr_schema gtr_probe_schema, gtr_arg_schema;

/*
 * Copies at most `max` bytes of s[len] to out and replaces every byte that
 * is not part of a well-formed UTF-8 sequence (lib/utf8.h: utf8_seq) by '?'. Returns the
 * number of bytes written (== min(len, max)).
 */
size_t gtr_utf8_sanitize(uint8_t *out, const char *s, size_t len, size_t max);

#endif /* GTR_INTERNAL_H */
