/* SPDX-License-Identifier: MIT */
/*
 * Separate debug files: DWARF stripped off a binary into a file of its
 * own (`objcopy --only-keep-debug`, Debian's -dbgsym packages). Found the
 * way GDB finds them (GDB manual, "Debugging Information in Separate
 * Files"): by GNU build id at ROOT/.build-id/xx/rest.debug, or by the
 * .gnu_debuglink section (file name, padding to 4 bytes, CRC-32 of the
 * debug file) in the binary's directory, its .debug/ subdirectory and
 * ROOT/<directory of the binary>, where ROOT is /usr/lib/debug.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gobin_int.h"

static const char *debug_root = "/usr/lib/debug";

void gobin_set_debug_root(const char *dir)
{
	debug_root = dir ? dir : "/usr/lib/debug";
}

const char *gobin_debuginfo_path(const struct gobin *b)
{
	return b->dbg_path ? b->dbg_path : "";
}

void gobin_debuginfo_close(struct gobin *b)
{
	if (b->dbg_elf)
		elf_end(b->dbg_elf);
	if (b->dbg_fd >= 0)
		close(b->dbg_fd);
	free(b->dbg_path);
	b->dbg_elf = NULL;
	b->dbg_fd = -1;
	b->dbg_path = NULL;
}

/* CRC-32 (IEEE, reflected, as zlib's crc32 and .gnu_debuglink use). */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static int file_crc32(const char *path, uint32_t *out)
{
	uint8_t buf[65536];
	uint32_t crc = 0;
	ssize_t n;
	const int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32_update(crc, buf, (size_t)n);
	close(fd);
	if (n < 0)
		return -EIO;
	*out = crc;
	return 0;
}

static bool elf_has_dwarf(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info")))
			return true;
	}
	return false;
}

/*
 * Opens `path` as the debug file of `b`. Checks the ELF machine, that it
 * holds DWARF, and that build ids (GNU, then Go's) agree where both
 * files have one. Returns 0 or -errno with a message.
 */
static int load_debug(struct gobin *b, const char *path, char *err,
		      size_t errlen)
{
	char gnu[128], go[256];
	GElf_Ehdr eh;
	Elf *e = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		const int r = -errno;

		snprintf(err, errlen, "cannot open debug file %s: %s", path,
			 strerror(errno));
		return r;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		snprintf(err, errlen, "debug file %s is not ELF", path);
		goto bad;
	}
	if (eh.e_machine != b->machine) {
		snprintf(err, errlen, "debug file %s is for another architecture "
			 "(ELF machine %u, %s has %u)", path, eh.e_machine,
			 b->path, b->machine);
		goto bad;
	}
	if (!elf_has_dwarf(e)) {
		snprintf(err, errlen, "debug file %s has no DWARF (.debug_info); "
			 "make one with 'objcopy --only-keep-debug'", path);
		goto bad;
	}
	gobin_elf_build_ids(e, gnu, sizeof(gnu), go, sizeof(go));
	if ((b->build_id[0] && gnu[0] && strcmp(b->build_id, gnu) != 0) ||
	    (b->go_build_id[0] && go[0] && strcmp(b->go_build_id, go) != 0)) {
		const bool g = b->build_id[0] && gnu[0];

		snprintf(err, errlen, "debug file %s belongs to another build of "
			 "%s (%s build id %s, the binary's %s); give the "
			 "debug file of this very build", path, b->path,
			 g ? "GNU" : "Go", g ? gnu : go,
			 g ? b->build_id : b->go_build_id);
		goto bad;
	}
	gobin_debuginfo_close(b);
	gobin_dwarf_close(b);
	b->dwarf_tried = false;
	b->goid_off = -2;
	b->dbg_path = strdup(path);
	b->dbg_fd = fd;
	b->dbg_elf = e;
	b->has_dwarf = true;
	return 0;
bad:
	if (e)
		elf_end(e);
	close(fd);
	return -EINVAL;
}

int gobin_open_debuginfo(struct gobin *b, const char *path, char *err,
			 size_t errlen)
{
	char tmp[1];

	if (!err || !errlen) {
		err = tmp;
		errlen = sizeof(tmp);
	}
	err[0] = '\0';
	return load_debug(b, path, err, errlen);
}

/* Name and CRC of .gnu_debuglink; false when absent or malformed. */
static bool debuglink(const struct gobin *b, char *name, size_t namelen,
		      uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = gobin_section(b, ".gnu_debuglink", false, &sh);
	Elf_Data *d;
	size_t n;

	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf || d->d_size < 8)
		return false;
	n = strnlen(d->d_buf, d->d_size);
	if (n == 0 || n >= namelen || strchr(d->d_buf, '/'))
		return false;
	memcpy(name, d->d_buf, n + 1);
	n = (n + 1 + 3) & ~(size_t)3;
	if (n + 4 > d->d_size)
		return false;
	*crc = (uint32_t)gobin_rd(b, (const uint8_t *)d->d_buf + n, 4);
	return true;
}

void gobin_debuginfo_find(struct gobin *b)
{
	char path[2 * PATH_MAX], real[PATH_MAX], name[256], err[512], *slash;
	uint32_t crc, have = 0;
	const size_t idlen = strlen(b->build_id);

	if (idlen > 2) {
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
			 debug_root, b->build_id, b->build_id + 2);
		if (access(path, R_OK) == 0 && load_debug(b, path, err, sizeof(err)) == 0)
			return;
	}
	if (!debuglink(b, name, sizeof(name), &crc) || !realpath(b->path, real))
		return;
	slash = strrchr(real, '/');
	*slash = '\0';
	for (int k = 0; k < 3; k++) {
		static const char *const fmt[] = { "%s/%s", "%s/.debug/%s", "%s%s/%s" };

		if (k < 2)
			snprintf(path, sizeof(path), fmt[k], real, name);
		else if (strlen(debug_root) < 512)
			snprintf(path, sizeof(path), fmt[k], debug_root, real, name);
		else
			continue;
		if (strcmp(path, b->path) == 0 || access(path, R_OK) != 0)
			continue;
		if (file_crc32(path, &have) != 0 || have != crc) {
			snprintf(b->note, sizeof(b->note), "debug file %.160s does not "
				 "match .gnu_debuglink (CRC %08x, want %08x)", path,
				 have, crc);
			continue;
		}
		if (load_debug(b, path, err, sizeof(err)) == 0)
			return;
		snprintf(b->note, sizeof(b->note), "%.250s", err);
	}
}
