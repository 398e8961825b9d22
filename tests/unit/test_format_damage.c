/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libgtr (format/) on damaged input: truncation at every
 * byte, a flipped byte anywhere, garbage between blocks, hand-written
 * files and hostile lengths; the reader with and without prefetch.
 */
#include "format_fixture.h"

TestSuite(format_damage, .init = setup, .fini = teardown);


/* Offsets and types of the blocks of a well-formed file. */
struct blk {
	size_t off, end;
	uint32_t type;
};

static int walk_blocks(const uint8_t *b, size_t n, struct blk *out, int max)
{
	int k = 0;
	for (size_t off = GTR_FILE_HDR_LEN; off < n && k < max; k++) {
		const uint32_t len = gtr_get_le32(b + off + 8);
		out[k] = (struct blk){ off, off + 16 + len, gtr_get_le32(b + off + 4) };
		off += 16 + len;
	}
	return k;
}

/* Reads all of path; counts events, checks each one, records which. */
static struct gtr_reader *read_all(const char *path, uint32_t *nev, bool *seen,
				   uint32_t seen_max, bool check_values)
{
	char err[512];
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	if (!r)
		return NULL;
	struct gtr_event ev;
	struct gtr_drop d;
	int it;
	*nev = 0;
	while ((it = gtr_reader_next(r, &ev, &d)) > 0) {
		if (it != GTR_ITEM_EVENT)
			continue;
		/* inverse of make_event's ts: i*1000 or i*1000 - 1400 */
		const uint64_t t = ev.ts_ns - 1000000000ull + 2000;
		const uint32_t i = (uint32_t)(t % 1000 ? (t - 600) / 1000 : t / 1000 - 2);
		if (i < seen_max)
			seen[i] = true;
		if (check_values)
			assert_event_eq(&ev, i);
		(*nev)++;
	}
	cr_assert_eq(it, GTR_ITEM_END, "%s", gtr_reader_error(r));
	return r;
}

Test(format_damage, truncation_at_every_byte)
{
	const char *full = tpath("full.gtr");
	const char *cut = tpath("cut.gtr");
	size_t n;
	struct blk blk[32];
	const int per = 6;

	write_test_file(full, 3, per);
	uint8_t *b = slurp(full, &n);
	const int nb = walk_blocks(b, n, blk, 32);
	cr_assert_eq(blk[0].type, GTR_BLOCK_HOST);
	cr_assert_eq(blk[nb - 1].type, GTR_BLOCK_SUMMARY);
	cr_assert_eq(blk[nb - 1].end, n);

	for (size_t len = 0; len <= n; len++) {
		char err[512];
		spit(cut, b, len);
		if (len < GTR_FILE_HDR_LEN) {
			cr_assert_null(gtr_reader_open(cut, err, sizeof(err)));
			cr_assert(len == 0 ? strstr(err, "empty file") != NULL
					   : strstr(err, "truncated at byte") != NULL, "%zu: %s", len, err);
			continue;
		}
		uint32_t want = 0, frames = 0;
		bool boundary = len == GTR_FILE_HDR_LEN;
		for (int k = 0; k < nb; k++) {
			if (blk[k].end == len)
				boundary = true;
			if (blk[k].type == GTR_BLOCK_EVENTS && blk[k].end <= len)
				want += per, frames++;
		}
		uint32_t got;
		bool seen[64] = { 0 };
		struct gtr_reader *r = read_all(cut, &got, seen, 64, true);
		cr_assert_not_null(r, "cut at %zu", len);
		cr_assert_eq(got, want, "cut at %zu: %u events, want %u", len, got, want);
		for (uint32_t i = 0; i < want; i++)
			cr_assert(seen[i], "cut at %zu: event %u missing", len, i);
		cr_assert_eq(gtr_reader_damage(r), 0, "cut at %zu: %s", len, gtr_reader_error(r));
		cr_assert_eq(gtr_reader_truncated(r), !boundary, "cut at %zu", len);
		if (!boundary) {
			char want_msg[64];
			size_t start = 0;
			for (int k = 0; k < nb; k++)
				if (blk[k].off < len && blk[k].end > len)
					start = blk[k].off;
			snprintf(want_msg, sizeof(want_msg), "truncated at byte %zu", start);
			cr_assert(strstr(gtr_reader_error(r), want_msg), "cut at %zu: %s", len,
				  gtr_reader_error(r));
		}
		cr_assert_eq(gtr_reader_summary(r)->present, len == n);
		gtr_reader_close(r);
	}
	free(b);
}

Test(format_damage, flipped_byte_anywhere)
{
	const char *full = tpath("full.gtr");
	const char *bad = tpath("bad.gtr");
	size_t n;
	struct blk blk[32];
	const int per = 6;

	write_test_file(full, 3, per);
	uint8_t *b = slurp(full, &n);
	const int nb = walk_blocks(b, n, blk, 32);

	for (size_t off = GTR_FILE_HDR_LEN; off < n; off++) {
		b[off] ^= 0x5a;
		spit(bad, b, n);
		b[off] ^= 0x5a;
		int hit = -1;
		for (int k = 0; k < nb; k++)
			if (blk[k].off <= off && off < blk[k].end)
				hit = k;
		cr_assert_geq(hit, 0);
		uint32_t got;
		bool seen[64] = { 0 };
		/* values may decode generically when a probe block is hit */
		struct gtr_reader *r = read_all(bad, &got, seen, 64,
						blk[hit].type != GTR_BLOCK_PROBE);
		cr_assert_not_null(r, "flip at %zu", off);
		cr_assert(gtr_reader_damage(r) >= 1 || gtr_reader_truncated(r),
			  "flip at %zu not noticed", off);
		if (gtr_reader_damage(r))
			cr_assert(strstr(gtr_reader_error(r), "damaged block at byte"), "%s",
				  gtr_reader_error(r));
		/* every event of an untouched frame is still there */
		uint32_t frame = 0;
		for (int k = 0; k < nb; k++) {
			if (blk[k].type != GTR_BLOCK_EVENTS)
				continue;
			if (k != hit)
				for (int i = 0; i < per; i++)
					cr_assert(seen[frame * per + i],
						  "flip at %zu (block %d): event %u of frame %u lost",
						  off, hit, frame * per + i, frame);
			frame++;
		}
		gtr_reader_close(r);
	}
	/* a damaged frame is reported by its offset */
	int ev1 = -1;
	for (int k = 0; k < nb; k++)
		if (blk[k].type == GTR_BLOCK_EVENTS) {
			ev1 = k;
			break;
		}
	b[blk[ev1].off + 20] ^= 1;
	spit(bad, b, n);
	uint32_t got;
	bool seen[64] = { 0 };
	struct gtr_reader *r = read_all(bad, &got, seen, 64, true);
	cr_assert_eq(got, 2 * per);
	cr_assert_eq(gtr_reader_damage(r), 1);
	char msg[128];
	snprintf(msg, sizeof(msg), "%s: damaged block at byte %zu (bad checksum); skipped to byte %zu",
		 bad, blk[ev1].off, blk[ev1].end);
	cr_assert_str_eq(gtr_reader_error(r), msg);
	gtr_reader_close(r);
	free(b);
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* What reading path gives: a digest of every item, the item count, the
 * damage, truncation and last message. */
struct outcome {
	uint64_t digest, items, damage;
	bool truncated, opened;
	int end;
	char msg[768];
};

static void read_outcome(const char *path, bool prefetch, struct outcome *o)
{
	char err[512];
	struct gtr_event ev;
	struct gtr_drop d;
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));

	memset(o, 0, sizeof(*o));
	o->digest = 14695981039346656037ull;
	if (!r) {
		snprintf(o->msg, sizeof(o->msg), "%s", err);
		return;
	}
	o->opened = true;
	gtr_reader_set_prefetch(r, prefetch);
	while ((o->end = gtr_reader_next(r, &ev, &d)) > 0) {
		o->items++;
		o->digest = fnv(o->digest, &o->end, sizeof(o->end));
		if (o->end == GTR_ITEM_DROP) {
			o->digest = fnv(o->digest, &d.count, sizeof(d.count));
			o->digest = fnv(o->digest, &d.ts_ns, sizeof(d.ts_ns));
			continue;
		}
		o->digest = fnv(o->digest, &ev.ts_ns, sizeof(ev.ts_ns));
		o->digest = fnv(o->digest, &ev.probe_id, sizeof(ev.probe_id));
		o->digest = fnv(o->digest, &ev.goid, sizeof(ev.goid));
		o->digest = fnv(o->digest, &ev.nvals, sizeof(ev.nvals));
		for (uint32_t i = 0; i < ev.nvals; i++) {
			const struct gtr_value *v = &ev.vals[i];
			o->digest = fnv(o->digest, &v->kind, sizeof(v->kind));
			if (v->kind == GTR_VAL_STR)
				o->digest = fnv(o->digest, v->v.s.data, v->v.s.len);
			else
				o->digest = fnv(o->digest, &v->v.u, sizeof(v->v.u));
		}
		const char *comm = gtr_reader_comm(r, ev.pid, ev.tid);
		o->digest = fnv(o->digest, comm, strlen(comm));
	}
	o->damage = gtr_reader_damage(r);
	o->truncated = gtr_reader_truncated(r);
	snprintf(o->msg, sizeof(o->msg), "%s", gtr_reader_error(r) ? gtr_reader_error(r) : "");
	gtr_reader_close(r);
}

/*
 * Decompressing the next frame ahead on a second thread changes nothing the
 * caller sees: the same items, damage and messages as one thread, for a
 * file cut anywhere and for a byte flipped anywhere.
 */
Test(format_damage, prefetch_on_and_off_agree)
{
	const char *full = tpath("full.gtr");
	const char *bad = tpath("bad.gtr");
	struct outcome a, b1;
	size_t n;

	write_test_file(full, 5, 7);
	uint8_t *b = slurp(full, &n);
	read_outcome(full, true, &a);
	read_outcome(full, false, &b1);
	cr_assert_eq(a.items, 5 * 8, "%llu items", (unsigned long long)a.items);
	cr_assert_eq(a.digest, b1.digest);
	for (size_t off = GTR_FILE_HDR_LEN; off < n; off++) {
		b[off] ^= 0x21;
		spit(bad, b, n);
		b[off] ^= 0x21;
		read_outcome(bad, true, &a);
		read_outcome(bad, false, &b1);
		cr_assert(a.digest == b1.digest && a.items == b1.items &&
			  a.damage == b1.damage && a.truncated == b1.truncated &&
			  a.end == b1.end && !strcmp(a.msg, b1.msg),
			  "flip at %zu: %llu vs %llu items, damage %llu vs %llu, '%s' vs '%s'", off,
			  (unsigned long long)a.items, (unsigned long long)b1.items,
			  (unsigned long long)a.damage, (unsigned long long)b1.damage, a.msg, b1.msg);
	}
	for (size_t len = GTR_FILE_HDR_LEN; len <= n; len += 3) {
		spit(bad, b, len);
		read_outcome(bad, true, &a);
		read_outcome(bad, false, &b1);
		cr_assert(a.digest == b1.digest && a.items == b1.items &&
			  a.truncated == b1.truncated && !strcmp(a.msg, b1.msg),
			  "cut at %zu", len);
	}
	free(b);
}

/*
 * A child forked while a frame is being decompressed ahead has no prefetch
 * thread: it reads on, in line, to the same items.
 */
Test(format_damage, prefetch_survives_fork)
{
	const char *full = tpath("full.gtr");
	char err[512];
	struct gtr_event ev;
	struct gtr_drop d;
	uint64_t before = 0, total = 0;

	write_test_file(full, 8, 7);
	struct gtr_reader *r = gtr_reader_open(full, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	while (gtr_reader_next(r, &ev, &d) > 0)
		total++;
	gtr_reader_close(r);

	r = gtr_reader_open(full, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	for (int i = 0; i < 10; i++, before++)   /* into the second frame */
		cr_assert_gt(gtr_reader_next(r, &ev, &d), 0);
	const pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		uint64_t n = before;
		alarm(10);
		while (gtr_reader_next(r, &ev, &d) > 0)
			n++;
		_exit(n == total && !gtr_reader_damage(r) ? 0 : 1);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	uint64_t n = before;
	while (gtr_reader_next(r, &ev, &d) > 0)
		n++;
	cr_assert_eq(n, total);
	gtr_reader_close(r);
}

Test(format_damage, garbage_between_blocks)
{
	const char *full = tpath("full.gtr");
	const char *bad = tpath("bad.gtr");
	size_t n;
	struct blk blk[32];

	write_test_file(full, 3, 4);
	uint8_t *b = slurp(full, &n);
	const int nb = walk_blocks(b, n, blk, 32);
	/* insert "GTRB" and junk after the second block */
	const size_t at = blk[1].end;
	const char junk[] = "xxGTRBjunkjunkjunkjunkGTRB\x04\0\0\0";
	uint8_t *c = malloc(n + sizeof(junk));
	memcpy(c, b, at);
	memcpy(c + at, junk, sizeof(junk));
	memcpy(c + at + sizeof(junk), b + at, n - at);
	spit(bad, c, n + sizeof(junk));
	uint32_t got;
	bool seen[64] = { 0 };
	struct gtr_reader *r = read_all(bad, &got, seen, 64, true);
	cr_assert_eq(got, 12);
	cr_assert_eq(gtr_reader_damage(r), 1);
	cr_assert(gtr_reader_summary(r)->present);
	(void)nb;
	gtr_reader_close(r);
	free(b);
	free(c);
}

/* Appends a raw block to f. */
static void put_block(FILE *f, uint32_t type, const void *payload, uint32_t len)
{
	uint8_t h[16];
	memcpy(h, "GTRB", 4);
	gtr_put_le32(h + 4, type);
	gtr_put_le32(h + 8, len);
	gtr_put_le32(h + 12, gtr_block_crc(h, payload, len));
	fwrite(h, 1, 16, f);
	fwrite(payload, 1, len, f);
}

static void put_frame(FILE *f, const void *cbor, size_t len)
{
	uint8_t z[1024];
	const size_t zl = ZSTD_compress(z, sizeof(z), cbor, len, 3);
	cr_assert(!ZSTD_isError(zl));
	put_block(f, GTR_BLOCK_EVENTS, z, (uint32_t)zl);
}

/* Files written by hand, as an independent writer would: unknown block and
 * record types, unknown map keys, events of an unknown probe, bad records. */
Test(format_damage, hand_written_file)
{
	const char *path = tpath("hand.gtr");
	char err[256];
	FILE *f = fopen(path, "wb");
	fwrite("\x89GTR\r\n\x1a\n\x01\x00\x03\x00\x00\x00\x00\x00", 1, 16, f);
	/* host: {"hostname": "h", "zzz": [1, {"a": 2}]} */
	const uint8_t host[] = { 0xa2, 0x68, 'h', 'o', 's', 't', 'n', 'a', 'm', 'e', 0x61, 'h',
				 0x63, 'z', 'z', 'z', 0x82, 0x01, 0xa1, 0x61, 'a', 0x02 };
	put_block(f, GTR_BLOCK_HOST, host, sizeof(host));
	put_block(f, 77, "whatever", 8);
	/* frame: [100, 6] then:
	 * [99, "x", 1]               unknown record type, skipped
	 * [2, 5, 6, "comm"]          task
	 * [0, 77, 10, 5, 6, 7, 42, -3, h'ff00', [9, h'61'], true, null]  unknown probe 77
	 * [4, 77, -5, 1]             same context, ts goes back
	 * [3, null, 1, 2]            drop
	 * [5, 77, 0]                 return, no values */
	const uint8_t fr[] = {
		0x82, 0x18, 100, 0x06,
		0x83, 0x18, 99, 0x61, 'x', 0x01,
		0x84, 0x02, 0x05, 0x06, 0x64, 'c', 'o', 'm', 'm',
		0x8c, 0x00, 0x18, 77, 0x0a, 0x05, 0x06, 0x07, 0x18, 42, 0x22, 0x42, 0xff, 0x00,
		0x82, 0x09, 0x41, 0x61, 0xf5, 0xf6,
		0x84, 0x04, 0x18, 77, 0x24, 0x01,
		0x84, 0x03, 0xf6, 0x01, 0x02,
		0x83, 0x05, 0x18, 77, 0x00,
	};
	put_frame(f, fr, sizeof(fr));
	/* a frame whose second record is malformed: the first is still read */
	const uint8_t fr2[] = {
		0x82, 0x19, 0x03, 0xe8, 0x02,
		0x86, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01,
		0x83, 0x04, 0x01, 0x7f, /* indefinite text: rejected */
	};
	put_frame(f, fr2, sizeof(fr2));
	/* short-form event first in a frame: no context */
	const uint8_t fr3[] = { 0x82, 0x01, 0x01, 0x83, 0x04, 0x01, 0x00 };
	put_frame(f, fr3, sizeof(fr3));
	/* last: a valid one */
	const uint8_t fr4[] = { 0x82, 0x01, 0x01, 0x86, 0x01, 0x01, 0x00, 0x02, 0x03, 0x04 };
	put_frame(f, fr4, sizeof(fr4));
	fclose(f);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	cr_assert_str_eq(gtr_reader_host(r)->hostname, "h");
	cr_assert_str_eq(gtr_reader_host(r)->kernel, "");
	struct gtr_event ev;
	struct gtr_drop d;
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_EVENT, "%s", gtr_reader_error(r));
	cr_assert_eq(gtr_reader_skipped(r), 2);
	cr_assert_str_eq(gtr_reader_comm(r, 5, 6), "comm");
	cr_assert_eq(ev.probe_id, 77);
	cr_assert_eq(ev.ts_ns, 110);
	cr_assert_eq(ev.pid, 5);
	cr_assert_eq(ev.tid, 6);
	cr_assert_eq(ev.goid, 7);
	cr_assert_eq(ev.kind, GTR_KIND_ENTRY);
	cr_assert_eq(ev.nvals, 6);
	cr_assert_eq(ev.vals[0].kind, GTR_VAL_UINT);
	cr_assert_eq(ev.vals[0].v.u, 42);
	cr_assert_eq(ev.vals[1].kind, GTR_VAL_INT);
	cr_assert_eq(ev.vals[1].v.i, -3);
	cr_assert_eq(ev.vals[2].kind, GTR_VAL_STR);
	cr_assert_eq(ev.vals[2].v.s.len, 2);
	cr_assert_eq(ev.vals[2].v.s.data[0], 0xff);
	cr_assert_eq(ev.vals[3].kind, GTR_VAL_STR);
	cr_assert_eq(ev.vals[3].v.s.len, 1);
	cr_assert_eq(ev.vals[3].v.s.full_len, 9);
	cr_assert_eq(ev.vals[4].kind, GTR_VAL_BOOL);
	cr_assert(ev.vals[4].v.b);
	cr_assert_eq(ev.vals[5].kind, GTR_VAL_NONE);
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_EVENT);
	cr_assert_eq(ev.ts_ns, 105);
	cr_assert_eq(ev.tid, 6);
	cr_assert_eq(ev.nvals, 1);
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_DROP);
	cr_assert_eq(d.probe_id, UINT32_MAX);
	cr_assert_eq(d.ts_ns, 106);
	cr_assert_eq(d.count, 2);
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_EVENT);
	cr_assert_eq(ev.kind, GTR_KIND_RETURN);
	cr_assert_eq(ev.nvals, 0);
	cr_assert_eq(ev.ts_ns, 106);
	cr_assert_eq(gtr_reader_damage(r), 0);
	/* frame 2: first record fine, second malformed */
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_EVENT);
	cr_assert_eq(ev.ts_ns, 1000);
	/* frames 2 (rest) and 3 are damage; frame 4 is read */
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_EVENT);
	cr_assert_eq(gtr_reader_damage(r), 2);
	cr_assert_eq(ev.kind, GTR_KIND_RETURN);
	cr_assert_eq(ev.pid, 2);
	cr_assert(strstr(gtr_reader_error(r), "without a previous context"), "%s",
		  gtr_reader_error(r));
	cr_assert_eq(gtr_reader_next(r, &ev, &d), GTR_ITEM_END);
	cr_assert(!gtr_reader_summary(r)->present);
	gtr_reader_close(r);
}

/* Declared lengths far beyond the file or the limits are refused without
 * allocating them. */
Test(format_damage, hostile_lengths)
{
	const char *path = tpath("hostile.gtr");
	char err[256];
	FILE *f = fopen(path, "wb");
	fwrite("\x89GTR\r\n\x1a\n\x01\x00\x00\x00\x00\x00\x00\x00", 1, 16, f);
	/* block claiming 4 GiB */
	fwrite("GTRB\x04\0\0\0\xff\xff\xff\xff\0\0\0\0", 1, 16, f);
	/* frame declaring a 1 TiB decompressed size: a zstd header by hand
	 * (magic, FHD with 8-byte FCS, single segment) */
	const uint8_t z[] = { 0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 0x01, 0, 0 };
	put_block(f, GTR_BLOCK_EVENTS, z, sizeof(z));
	/* frame header promising 2^60 records */
	const uint8_t fr[] = { 0x82, 0x00, 0x1b, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00 };
	put_frame(f, fr, sizeof(fr));
	/* probe with 2^32 args and a map of 2^63 entries */
	const uint8_t pr[] = { 0xbb, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	put_block(f, GTR_BLOCK_PROBE, pr, sizeof(pr));
	/* deep nesting inside an unknown key */
	uint8_t deep[300];
	deep[0] = 0xa1;
	deep[1] = 0x61;
	deep[2] = 'q';
	for (int i = 3; i < 299; i++)
		deep[i] = 0x81;
	deep[299] = 0x00;
	put_block(f, GTR_BLOCK_BINARY, deep, sizeof(deep));
	fclose(f);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	struct gtr_event ev;
	cr_assert_eq(gtr_reader_next(r, &ev, NULL), GTR_ITEM_END);
	cr_assert_eq(gtr_reader_damage(r), 5, "%llu: %s",
		     (unsigned long long)gtr_reader_damage(r), gtr_reader_error(r));
	cr_assert_eq(gtr_reader_nprobes(r), 0);
	cr_assert_eq(gtr_reader_nbinaries(r), 0);
	gtr_reader_close(r);
}
