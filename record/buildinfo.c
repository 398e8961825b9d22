/* SPDX-License-Identifier: MIT */
/*
 * .go.buildinfo (Go src/debug/buildinfo/buildinfo.go) and the ELF notes
 * (GNU build id, Go build id).
 *
 * buildinfo header, 32 bytes, 16-byte aligned: "\xff Go buildinf:" (14),
 * ptrsize (1), flags (1: bit 0 big endian, bit 1 strings inline). Inline
 * (Go 1.18+): varint length + bytes of the version, then of the modinfo,
 * from offset 32. Else (Go 1.13-1.17): two pointers at 16 and 16+ptrsize to
 * Go string headers {data, len} of the version and the modinfo.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"

static const char bi_magic[] = "\xff Go buildinf:";
#define BI_MAGIC_LEN 14
#define BI_HDR_LEN 32

int gobin_parse_minor(const char *v)
{
	int major, minor;

	if (sscanf(v, "go%d.%d", &major, &minor) != 2 || major != 1)
		return 0;
	return minor;
}

static void set_version(struct gobin *b, const uint8_t *s, uint64_t len)
{
	if (len == 0 || len >= sizeof(b->go_version))
		return;
	for (uint64_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f)
			return;
	memcpy(b->go_version, s, len);
	b->go_version[len] = '\0';
	b->go_minor = gobin_parse_minor(b->go_version);
}

/* Parses a header at d (with `len` bytes from there). */
static bool parse_buildinfo(struct gobin *b, const uint8_t *d, size_t len)
{
	int ps;
	bool be;

	if (len < BI_HDR_LEN || memcmp(d, bi_magic, BI_MAGIC_LEN) != 0)
		return false;
	ps = d[14];
	be = d[15] & 1;
	if (d[15] & 2) {
		uint64_t n = 0;
		size_t i = BI_HDR_LEN;

		for (int shift = 0; i < len && shift < 64; shift += 7) {
			const uint8_t c = d[i++];

			n |= (uint64_t)(c & 0x7f) << shift;
			if (!(c & 0x80))
				break;
		}
		if (n > len - i)
			return false;
		set_version(b, d + i, n);
		return b->go_version[0] != '\0';
	}
	if (ps != 4 && ps != 8)
		return false;
	{
		const bool save = b->big_endian;
		uint64_t vptr, sptr, slen;
		const uint8_t *hdr, *s;

		b->big_endian = be;
		vptr = gobin_rd(b, d + 16, ps);
		hdr = gobin_at_vaddr(b, vptr, 2 * (size_t)ps);
		if (hdr) {
			sptr = gobin_rd(b, hdr, ps);
			slen = gobin_rd(b, hdr + ps, ps);
			s = slen < 64 ? gobin_at_vaddr(b, sptr, slen) : NULL;
			if (s)
				set_version(b, s, slen);
		}
		b->big_endian = save;
	}
	return b->go_version[0] != '\0';
}

int gobin_buildinfo_load(struct gobin *b)
{
	GElf_Shdr sh;

	if (gobin_section(b, ".go.buildinfo", false, &sh) &&
	    sh.sh_type != SHT_NOBITS && sh.sh_offset < b->size &&
	    sh.sh_size <= b->size - sh.sh_offset &&
	    parse_buildinfo(b, b->map + sh.sh_offset, sh.sh_size))
		return 0;
	/* Section headers gone: the header is 16-byte aligned in data. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < b->nsegs; i++) {
			const struct gobin_seg *s = &b->segs[i];
			const bool w = s->flags & PF_W;
			uint64_t start;

			if (w != (pass == 0))
				continue;
			start = (16 - (s->vaddr & 15)) & 15;
			for (uint64_t o = start; o + BI_HDR_LEN <= s->filesz; o += 16) {
				const uint8_t *d = b->map + s->offset + o;

				if (d[0] != 0xff || memcmp(d, bi_magic, BI_MAGIC_LEN))
					continue;
				if (parse_buildinfo(b, d, s->filesz - o))
					return 0;
			}
		}
	}
	return -ENOENT;
}

static void hex(char *out, size_t outlen, const uint8_t *p, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && o + 3 <= outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", p[i]);
}

static void note_data(struct gobin *b, Elf_Data *data)
{
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
		const char *name = (const char *)data->d_buf + noff;
		const uint8_t *desc = (const uint8_t *)data->d_buf + doff;

		if (nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_type == NT_GNU_BUILD_ID && !b->build_id[0])
			hex(b->build_id, sizeof(b->build_id), desc, nh.n_descsz);
		/* cmd/link: ELF note "Go", type 4 (ELF_NOTE_GOBUILDID_TAG) */
		if (nh.n_namesz >= 3 && !memcmp(name, "Go", 3) && nh.n_type == 4 &&
		    !b->go_build_id[0] && nh.n_descsz < sizeof(b->go_build_id)) {
			memcpy(b->go_build_id, desc, nh.n_descsz);
			b->go_build_id[nh.n_descsz] = '\0';
		}
	}
}

void gobin_notes_load(struct gobin *b)
{
	Elf_Scn *scn = NULL;
	size_t phnum = 0;
	bool any = false;

	while ((scn = elf_nextscn(b->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		note_data(b, elf_getdata(scn, NULL));
		any = true;
	}
	if (any)
		return;
	elf_getphdrnum(b->elf, &phnum);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		note_data(b, elf_getdata_rawchunk(b->elf, (int64_t)ph.p_offset,
						  ph.p_filesz, ELF_T_NHDR));
	}
}
