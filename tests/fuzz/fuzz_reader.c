/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the .gtr reader (format/reader*.c), built with
 * clang -fsanitize=fuzzer,address,undefined (Makefile: `make fuzz`).
 *
 * The first input byte picks how the rest is used, so mutations reach every
 * decoder past the checksums:
 *   0: the whole file as is;
 *   1: the content of one events frame (compressed and framed here);
 *   2: the CBOR payload of one metadata block of type data[1] % 10;
 *   3: the content of one SYMBOLS block (compressed and framed here).
 * Modes 1-3 put a header and a probe block first. Everything the reader
 * exposes is then walked: accessors, symbolization, clocks, seeking.
 * Bit 0x40 of the second byte leaves the reader's prefetch thread on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "gtr.h"
#include "gtr_internal.h"

static uint8_t out[1 << 20];
static uint8_t z[1 << 19];

static size_t put_block(size_t o, uint32_t type, const uint8_t *p, size_t len)
{
	if (o + 16 + len > sizeof(out))
		return o;
	memcpy(out + o, "GTRB", 4);
	gtr_put_le32(out + o + 4, type);
	gtr_put_le32(out + o + 8, (uint32_t)len);
	memcpy(out + o + 16, p, len);
	gtr_put_le32(out + o + 12, gtr_block_crc(out + o, out + o + 16, len));
	return o + 16 + len;
}

/* {"id": 1, "kind": "entry", "binary_id": 0, "args": [{"type": "int"},
 *  {"type": "string"}], "exprs": [1]} */
static const uint8_t probe[] = {
	0xa5, 0x62, 'i', 'd', 0x01, 0x64, 'k', 'i', 'n', 'd', 0x65, 'e', 'n', 't', 'r', 'y',
	0x69, 'b', 'i', 'n', 'a', 'r', 'y', '_', 'i', 'd', 0x00, 0x64, 'a', 'r', 'g', 's',
	0x82, 0xa1, 0x64, 't', 'y', 'p', 'e', 0x63, 'i', 'n', 't', 0xa1, 0x64, 't', 'y', 'p',
	'e', 0x66, 's', 't', 'r', 'i', 'n', 'g', 0x65, 'e', 'x', 'p', 'r', 's', 0x81, 0x01,
};

/*
 * The reader allocates a window of 1 MiB or more per file: ASan would clear
 * the shadow of each such block by mapping it anew, a third of the time of
 * a small input; memset is cheaper. Detection is the same. ASAN_OPTIONS
 * still overrides it.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "clear_shadow_mmap_threshold=1073741824";
}

static void walk(struct gtr_reader *r)
{
	volatile size_t acc = 0;

	for (uint32_t i = 0; i < gtr_reader_nprobes(r); i++) {
		const struct gtr_probe *p = gtr_reader_probe_at(r, i);
		acc += strlen(p->func) + strlen(p->spec) + strlen(p->fmt);
		if (p->nargs > GTR_MAX_ARGS || p->nexprs > GTR_MAX_ARGS)
			abort();
		for (uint32_t k = 0; k < p->nargs; k++)
			acc += strlen(p->args[k].name) + strlen(p->args[k].type_name);
		for (uint32_t k = 0; k < p->nexprs; k++)
			if (p->exprs[k] >= p->nargs)
				abort();
	}
	for (uint32_t i = 0; i < gtr_reader_nbinaries(r); i++) {
		const struct gtr_binary *b = gtr_reader_binary_at(r, i);
		acc += strlen(b->path) + strlen(b->abi);
		const uint32_t n = gtr_reader_nsymbols(r, b->id);
		for (uint32_t k = 0; k < n && k < 64; k++)
			acc += strlen(gtr_reader_symbol_at(r, b->id, k)->name);
	}
	for (uint32_t i = 0; i < gtr_reader_nmappings(r); i++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(r, i);
		uint64_t off;
		const char *s = gtr_reader_symbolize(r, m->pid, m->start + (m->end - m->start) / 2, &off);
		acc += strlen(m->path) + (s ? strlen(s) : 0);
	}
	for (uint32_t i = 0; i < gtr_reader_nprocesses(r); i++)
		acc += strlen(gtr_reader_process_at(r, i)->comm);
	for (uint32_t i = 0; i < gtr_reader_nlosses(r); i++)
		acc += gtr_reader_loss_at(r, i)->count;
	(void)acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	char err[512];

	if (fd < 0) {
		fd = memfd_create("gtr", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (size < 2)
		return 0;
	const uint8_t *buf = data + 2;
	size_t n = size - 2;
	const unsigned mode = data[0] % 4;
	if (mode) {
		size_t o = 16;
		memcpy(out, "\x89GTR\r\n\x1a\n\x01\0\0\0\0\0\0\0", 16);
		o = put_block(o, 3, probe, sizeof(probe));
		if (mode == 1 || mode == 3) {
			/* one context for all inputs: ZSTD_compress() would
			 * allocate and clear one per input */
			static ZSTD_CCtx *cctx;
			if (!cctx && !(cctx = ZSTD_createCCtx()))
				abort();
			const size_t zl = ZSTD_compressCCtx(cctx, z, sizeof(z), buf, n, 1);
			if (ZSTD_isError(zl))
				return 0;
			o = put_block(o, mode == 1 ? 4 : 6, z, zl);
		} else {
			o = put_block(o, data[1] % 10, buf, n);
		}
		buf = out;
		n = o;
	}
	if (ftruncate(fd, 0) || pwrite(fd, buf, n, 0) != (ssize_t)n)
		return 0;
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	if (!r)
		return 0;
	/* the prefetch thread (a thread per reader) only for inputs that ask
	 * for it: it costs more than reading most inputs does */
	if (!(data[1] & 0x40))
		gtr_reader_set_prefetch(r, false);
	gtr_reader_preload(r);
	walk(r);
	if (data[1] & 0x80)
		gtr_reader_seek_ts(r, (uint64_t)data[1] << 20);
	static struct gtr_event e;
	struct gtr_drop d;
	int it;
	volatile uint64_t acc = 0;
	while ((it = gtr_reader_next(r, &e, &d)) > 0) {
		if (it != GTR_ITEM_EVENT)
			continue;
		if (e.nvals > GTR_MAX_ARGS || e.nstack > GTR_MAX_STACK)
			abort();
		for (uint32_t k = 0; k < e.nvals; k++)
			if (e.vals[k].kind == GTR_VAL_STR && e.vals[k].v.s.len)
				acc += e.vals[k].v.s.data[e.vals[k].v.s.len - 1];
		for (uint32_t k = 0; k < e.nstack; k++)
			acc += gtr_reader_symbolize(r, e.pid, e.stack[k], NULL) != NULL;
		uint64_t rt;
		acc += gtr_reader_realtime(r, e.ts_ns, &rt) ? 0 : rt;
		acc += (uint8_t)gtr_reader_comm(r, e.pid, e.tid)[0];
	}
	walk(r);
	gtr_reader_close(r);
	return 0;
}
