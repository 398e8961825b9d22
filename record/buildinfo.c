/* SPDX-License-Identifier: MIT */
/*
 * .go.buildinfo (Go src/debug/buildinfo/buildinfo.go) and the ELF notes
 * (GNU build id, Go build id).
 *
 * buildinfo header, 32 bytes, 16-byte aligned: "\xff Go buildinf:" (14),
 * ptrsize (1), flags (1: bit 0 big endian, bit 1 strings inline). Inline
 * (Go 1.18+): varint length + bytes of the version, then of the modinfo,
 * from offset 32. Else (Go 1.13-1.17): two pointers at 16 and 16+ptrsize to
 * Go string headers {data, len} of the version and the modinfo (in a PIE
 * the dynamic linker may fill them: gobin_rd_ptr).
 */
#include <ctype.h>
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

/* Keeps a copy of the modinfo string (sentinels stripped later). */
static void set_modinfo(struct gobin *b, const uint8_t *s, uint64_t len)
{
	if (b->modinfo || len == 0 || len > (1u << 24))
		return;
	b->modinfo = malloc(len + 1);
	if (!b->modinfo)
		return;
	memcpy(b->modinfo, s, len);
	b->modinfo[len] = '\0';
	b->modinfo_len = len;
}

/* Reads a uvarint at d[*i] (d has len bytes); UINT64_MAX when malformed. */
static uint64_t uvarint(const uint8_t *d, size_t len, size_t *i)
{
	uint64_t n = 0;

	for (int shift = 0; *i < len && shift < 64; shift += 7) {
		const uint8_t c = d[(*i)++];

		n |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return n;
	}
	return UINT64_MAX;
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
		size_t i = BI_HDR_LEN;
		uint64_t n = uvarint(d, len, &i);

		if (n > len - i)
			return false;
		set_version(b, d + i, n);
		i += n;
		n = uvarint(d, len, &i);
		if (n <= len - i)
			set_modinfo(b, d + i, n);
		return b->go_version[0] != '\0';
	}
	if (ps != 4 && ps != 8)
		return false;
	{
		const bool save = b->big_endian;
		uint64_t vptr, sptr, slen;
		const uint8_t *hdr, *s;

		b->big_endian = be;
		vptr = gobin_rd_ptr(b, d + 16, ps);
		hdr = gobin_at_vaddr(b, vptr, 2 * (size_t)ps);
		if (hdr) {
			sptr = gobin_rd_ptr(b, hdr, ps);
			slen = gobin_rd(b, hdr + ps, ps);
			s = slen < 64 ? gobin_at_vaddr(b, sptr, slen) : NULL;
			if (s)
				set_version(b, s, slen);
		}
		hdr = gobin_at_vaddr(b, gobin_rd_ptr(b, d + 16 + ps, ps), 2 * (size_t)ps);
		if (hdr) {
			sptr = gobin_rd_ptr(b, hdr, ps);
			slen = gobin_rd(b, hdr + ps, ps);
			s = slen < (1u << 24) ? gobin_at_vaddr(b, sptr, slen) : NULL;
			if (s)
				set_modinfo(b, s, slen);
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
	    parse_buildinfo(b, b->map + sh.sh_offset, sh.sh_size)) {
		snprintf(b->version_source, sizeof(b->version_source), "buildinfo");
		return 0;
	}
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
				if (parse_buildinfo(b, d, s->filesz - o)) {
					snprintf(b->version_source,
						 sizeof(b->version_source), "buildinfo");
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

/*
 * Whether s[0..len) is a Go release version as runtime.Version() gives it:
 * "go1.N", "go1.N.M", "go1.NrcK" or "go1.NbetaK", possibly followed by
 * " X:experiment,..." (src/cmd/dist/build.go, findgoversion).
 */
static bool release_version(const uint8_t *s, uint64_t len)
{
	uint64_t i = 4;

	if (len < 5 || len > 63 || memcmp(s, "go1.", 4) || !isdigit(s[4]))
		return false;
	while (i < len && (isdigit(s[i]) || s[i] == '.' ||
			   (s[i] >= 'a' && s[i] <= 'z')))
		i++;
	if (i < len && s[i] != ' ')
		return false;
	for (; i < len; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f)
			return false;
	return true;
}

int gobin_runtime_version_load(struct gobin *b)
{
	const int ps = b->ptrsize;

	/* runtime.buildVersion is a string variable set by the linker
	 * (src/runtime/extern.go, var buildVersion = sys.TheVersion): its
	 * header (pointer, length) lies in a writable segment and points at
	 * the version's bytes. Those bytes may be packed with other short
	 * strings, so the header, not the text, tells where it ends. */
	for (int i = 0; i < b->nsegs; i++) {
		const struct gobin_seg *sg = &b->segs[i];

		if (!(sg->flags & PF_W) || !sg->filesz)
			continue;
		for (uint64_t o = (ps - (sg->vaddr % ps)) % ps;
		     o + 2 * (uint64_t)ps <= sg->filesz; o += ps) {
			const uint8_t *h = b->map + sg->offset + o, *t;
			const uint64_t len = gobin_rd(b, h + ps, ps);

			if (len < 5 || len > 63)
				continue;
			t = gobin_at_vaddr(b, gobin_rd_ptr(b, h, ps), len);
			if (!t || t[0] != 'g' || !release_version(t, len))
				continue;
			set_version(b, t, len);
			snprintf(b->version_source, sizeof(b->version_source),
				 "runtime.buildVersion");
			return 0;
		}
	}
	return -ENOENT;
}

/* Undoes strconv.Quote for the common escapes, in place. */
static void unquote(char *v)
{
	size_t n = strlen(v), o = 0;

	if (n < 2 || v[0] != '"' || v[n - 1] != '"')
		return;
	for (size_t i = 1; i + 1 < n; i++) {
		if (v[i] == '\\' && i + 2 < n) {
			i++;
			v[o++] = v[i] == 'n' ? '\n' : v[i] == 't' ? '\t' : v[i];
		} else {
			v[o++] = v[i];
		}
	}
	v[o] = '\0';
}

/*
 * modinfo (Go src/runtime/debug/mod.go, BuildInfo.String) between two
 * 16-byte sentinels: "path\tP", "mod\tPATH\tVERSION\tSUM", "dep\t...",
 * "=>\t...", "build\tKEY=VALUE" (VALUE quoted when it needs to be).
 */
void gobin_modinfo_parse(struct gobin *b)
{
	const size_t len = b->modinfo_len;
	size_t n = 0;
	char *p, *line, *save = NULL;

	if (len < 33 || b->modinfo[len - 17] != '\n')
		return;
	b->modinfo[len - 16] = '\0';
	p = b->modinfo + 16;
	for (const char *c = p; *c; c++)
		n += *c == '\n';
	b->settings = calloc(n + 1, sizeof(*b->settings));
	if (!b->settings)
		return;
	for (line = strtok_r(p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { 0 };
		int nf = 0;

		for (char *t = line; nf < 4; ) {
			f[nf++] = t;
			t = strchr(t, '\t');
			if (!t)
				break;
			*t++ = '\0';
		}
		if (nf >= 2 && !strcmp(f[0], "path")) {
			b->main_path = f[1];
		} else if (nf >= 3 && !strcmp(f[0], "mod")) {
			b->main_mod = f[1];
			b->main_ver = f[2];
		} else if (nf >= 2 && !strcmp(f[0], "build")) {
			char *eq = strchr(f[1], '=');

			if (!eq || b->nsettings >= n + 1)
				continue;
			*eq = '\0';
			unquote(eq + 1);
			b->settings[b->nsettings++] = (struct gobin_setting){ f[1], eq + 1 };
		}
	}
}

const char *gobin_main_path(const struct gobin *b)
{
	return b->main_path ? b->main_path : "";
}

const char *gobin_main_module(const struct gobin *b)
{
	return b->main_mod ? b->main_mod : "";
}

const char *gobin_main_version(const struct gobin *b)
{
	return b->main_ver ? b->main_ver : "";
}

int gobin_build_setting(const struct gobin *b, size_t i, const char **key,
			const char **value)
{
	if (i >= b->nsettings)
		return -ENOENT;
	*key = b->settings[i].key;
	*value = b->settings[i].value;
	return 0;
}

static void hex(char *out, size_t outlen, const uint8_t *p, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && o + 3 <= outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", p[i]);
}

struct ids {
	char *gnu, *go;
	size_t gnulen, golen;
};

static void note_data(struct ids *ids, Elf_Data *data)
{
	size_t off = 0, noff, doff;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
		const char *name = (const char *)data->d_buf + noff;
		const uint8_t *desc = (const uint8_t *)data->d_buf + doff;

		if (nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_type == NT_GNU_BUILD_ID && !ids->gnu[0])
			hex(ids->gnu, ids->gnulen, desc, nh.n_descsz);
		/* cmd/link: ELF note "Go", type 4 (ELF_NOTE_GOBUILDID_TAG) */
		if (nh.n_namesz >= 3 && !memcmp(name, "Go", 3) && nh.n_type == 4 &&
		    !ids->go[0] && nh.n_descsz < ids->golen) {
			memcpy(ids->go, desc, nh.n_descsz);
			ids->go[nh.n_descsz] = '\0';
		}
	}
}

void gobin_elf_build_ids(Elf *e, char *gnu, size_t gnulen, char *go,
			 size_t golen)
{
	struct ids ids = { gnu, go, gnulen, golen };
	Elf_Scn *scn = NULL;
	size_t phnum = 0;
	bool any = false;

	gnu[0] = go[0] = '\0';
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		note_data(&ids, elf_getdata(scn, NULL));
		any = true;
	}
	if (any)
		return;
	elf_getphdrnum(e, &phnum);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		note_data(&ids, elf_getdata_rawchunk(e, (int64_t)ph.p_offset,
						     ph.p_filesz, ELF_T_NHDR));
	}
}

void gobin_notes_load(struct gobin *b)
{
	gobin_elf_build_ids(b->elf, b->build_id, sizeof(b->build_id),
			    b->go_build_id, sizeof(b->go_build_id));
}
