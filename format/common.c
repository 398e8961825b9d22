/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of libgtr: CRC32C, enum names and UTF-8 sanitising (with
 * lib/utf8.c's decoder). See gtr_internal.h.
 */
#include <pthread.h>
#include <stdlib.h>

#include "gtr_internal.h"
#include "utf8.h"

/* ------------------------------------------------------------- CRC32C */

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* Slice-by-8 (Intel, "A Systematic Approach to Building High Performance
 * Software-based CRC Generators", 2005). */
uint32_t gtr_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		const uint32_t lo = crc ^ gtr_get_le32(p);
		const uint32_t hi = gtr_get_le32(p + 4);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* SSE4.2 CRC32 instruction computes exactly CRC32C. */
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

uint32_t gtr_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static int hw = -1;

	if (hw < 0)
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	return hw ? crc32c_hw(crc, buf, len) : gtr_crc32c_sw(crc, buf, len);
}
#else
uint32_t gtr_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return gtr_crc32c_sw(crc, buf, len);
}
#endif

uint32_t gtr_block_crc(const uint8_t hdr[GTR_BLOCK_HDR_LEN],
		       const uint8_t *payload, size_t len)
{
	return gtr_crc32c(gtr_crc32c(0, hdr + 4, 8), payload, len);
}

/* ------------------------------------------------------------- names */

static const char *const type_names[] = {
	[GTR_TYPE_WORD] = "word",   [GTR_TYPE_INT] = "int",
	[GTR_TYPE_UINT] = "uint",   [GTR_TYPE_BOOL] = "bool",
	[GTR_TYPE_PTR] = "ptr",     [GTR_TYPE_STRING] = "string",
	[GTR_TYPE_FLOAT] = "float", [GTR_TYPE_OTHER] = "other",
	[GTR_TYPE_BYTES] = "bytes",
	[GTR_TYPE_IFACE] = "iface",
	[GTR_TYPE_SLICE] = "slice",
};

const char *gtr_type_name(enum gtr_type t)
{
	if ((unsigned)t < sizeof(type_names) / sizeof(type_names[0]))
		return type_names[t];
	return "other";
}

enum gtr_type gtr_type_from_name(const char *s, size_t len)
{
	for (unsigned i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strlen(type_names[i]) == len && !memcmp(type_names[i], s, len))
			return (enum gtr_type)i;
	return GTR_TYPE_OTHER;
}

const char *gtr_kind_name(enum gtr_kind k)
{
	switch (k) {
	case GTR_KIND_ENTRY:
		return "entry";
	case GTR_KIND_RETURN:
		return "return";
	}
	return "unknown";
}

/* ------------------------------------------------------------- UTF-8 */

size_t gtr_utf8_sanitize(uint8_t *out, const char *s, size_t len, size_t max)
{
	const size_t n = len < max ? len : max;

	memcpy(out, s, n);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		const int l = out[i] < 0x80 ? 1 : utf8_seq(out + i, n - i, &cp);
		if (l) {
			i += (size_t)l;
		} else {
			out[i] = '?';
			i++;
		}
	}
	return n;
}
