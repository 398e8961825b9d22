/* SPDX-License-Identifier: MIT */
#include "utf8.h"

int utf8_seq(const uint8_t *p, size_t n, uint32_t *cp)
{
	const uint8_t c = p[0];
	int len;
	uint32_t v;
	uint8_t lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; v = c & 0x0f;
		if (c == 0xe0) lo = 0xa0;
		if (c == 0xed) hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; v = c & 0x07;
		if (c == 0xf0) lo = 0x90;
		if (c == 0xf4) hi = 0x8f;
	} else {
		return 0;
	}
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		const uint8_t d = p[i];
		if (d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xbf))
			return 0;
		v = (v << 6) | (d & 0x3f);
	}
	*cp = v;
	return len;
}

size_t utf8_encode(uint32_t cp, uint8_t t[4])
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp < 0x80) {
		t[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		t[0] = (uint8_t)(0xc0 | cp >> 6); t[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		t[0] = (uint8_t)(0xe0 | cp >> 12); t[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	t[0] = (uint8_t)(0xf0 | cp >> 18); t[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
	t[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)); t[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}
