/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libgtr (format/): CRC32C, writer/reader round trips of every
 * block and value kind, file creation rules, bad input, truncation at every
 * byte and damage anywhere.
 */
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "gtr.h"
#include "gtr_internal.h"

static char tdir[64];

static void setup(void)
{
	umask(022);
	strcpy(tdir, "/tmp/gtr-test-XXXXXX");
	cr_assert_not_null(mkdtemp(tdir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(format, .init = setup, .fini = teardown);

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tdir, name);
	return buf[i];
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n ? n : 1);
	cr_assert_eq(fread(b, 1, n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void spit(const char *path, const void *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, len, f), len);
	fclose(f);
}

static const struct gtr_host test_host = {
	.hostname = "prod-7",
	.kernel = "6.1.0-18-amd64",
	.machine = "x86_64",
	.recorder = "gotrace-record 0.1",
	.start_mono_ns = 123456789012ull,
	.start_realtime_ns = 1700000000123456789ull,
	.start_boottime_ns = 223456789012ull,
};

static void add_meta(struct gtr_writer *w)
{
	struct gtr_binary b = {
		.id = 3, .path = "/srv/app", .build_id = "deadbeef",
		.go_build_id = "abc/def", .go_version = "go1.21.5",
		.compiler = "gc", .arch = "x86-64", .abi = "ABIInternal",
		.pie = true, .stripped = false, .has_dwarf = true,
	};
	cr_assert_eq(gtr_writer_binary(w, &b), 0, "%s", gtr_writer_error(w));

	struct gtr_probe p = {
		.id = 1, .binary_id = 3, .kind = GTR_KIND_ENTRY,
		.func = "main.(*T).add", .address = 0x4a1b20,
		.spec = "main.(*T).add(a, b)", .fmt = "a=%d s=%s",
		.nargs = 6, .nexprs = 2, .exprs = { 0, 2 },
	};
	const struct gtr_arg args[6] = {
		{ "a", "int", GTR_TYPE_INT, 8, "" },
		{ "b", "uint64", GTR_TYPE_UINT, 8, "" },
		{ "s", "string", GTR_TYPE_STRING, 16, "" },
		{ "ok", "bool", GTR_TYPE_BOOL, 1, "" },
		{ "f", "float64", GTR_TYPE_FLOAT, 8, "" },
		{ "p", "*main.T", GTR_TYPE_PTR, 8, "" },
	};
	memcpy(p.args, args, sizeof(args));
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));

	struct gtr_probe q = {
		.id = 2000, .binary_id = 3, .kind = GTR_KIND_RETURN,
		.func = "main.(*T).add", .address = 0x4a1b20, .spec = "main.(*T).add%return",
		.fmt = "", .nargs = 1,
	};
	q.args[0] = (struct gtr_arg){ "~r0", "int", GTR_TYPE_INT, 8, "" };
	cr_assert_eq(gtr_writer_probe(w, &q), 0, "%s", gtr_writer_error(w));
}

static const uint8_t bad_utf8[] = { 'o', 'k', 0xff, 0xc3, 0x28, 0x00, 0xe2, 0x82 };

/* The i-th event of the test stream (deterministic). */
static void make_event(struct gtr_event *ev, uint32_t i, uint8_t *strbuf)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = 1000000000ull + i * 1000ull - (i % 7 == 3 ? 1400 : 0);
	ev->pid = 4242;
	ev->tid = 4242 + (i / 5) % 3;
	ev->goid = 1 + (i / 3) % 4;
	if (i % 2 == 0) {
		ev->probe_id = 1;
		ev->kind = GTR_KIND_ENTRY;
		ev->nvals = 6;
		ev->vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT,
						  .v.i = (i % 4 == 0) ? -(int64_t)i - 1 : (int64_t)i };
		ev->vals[1] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = UINT64_MAX - i };
		const uint32_t slen = i % 11;
		for (uint32_t k = 0; k < slen; k++)
			strbuf[k] = (uint8_t)('a' + (i + k) % 26);
		if (i % 6 == 0)
			memcpy(strbuf, bad_utf8, slen < sizeof(bad_utf8) ? slen : sizeof(bad_utf8));
		ev->vals[2].kind = GTR_VAL_STR;
		ev->vals[2].v.s.data = strbuf;
		ev->vals[2].v.s.len = slen;
		ev->vals[2].v.s.full_len = (i % 3 == 0) ? slen + 1000 + i : slen;
		ev->vals[3] = (struct gtr_value){ .kind = GTR_VAL_BOOL, .v.b = i % 4 == 2 };
		ev->vals[4] = (struct gtr_value){ .kind = GTR_VAL_NONE };
		ev->vals[5] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = 0xc000012345ull + i };
	} else {
		ev->probe_id = 2000;
		ev->kind = GTR_KIND_RETURN;
		ev->nvals = 1;
		ev->vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT,
						  .v.i = i == 1 ? INT64_MIN : (i == 3 ? INT64_MAX : 42 + (int64_t)i) };
	}
}

static void assert_value_eq(const struct gtr_value *a, const struct gtr_value *b,
			    uint32_t i, uint32_t k)
{
	cr_assert_eq(a->kind, b->kind, "event %u value %u: kind %d != %d", i, k, a->kind, b->kind);
	switch (a->kind) {
	case GTR_VAL_INT:
		cr_assert_eq(a->v.i, b->v.i, "event %u value %u: %lld != %lld", i, k,
			     (long long)a->v.i, (long long)b->v.i);
		break;
	case GTR_VAL_UINT:
		cr_assert_eq(a->v.u, b->v.u, "event %u value %u", i, k);
		break;
	case GTR_VAL_BOOL:
		cr_assert_eq(a->v.b, b->v.b, "event %u value %u", i, k);
		break;
	case GTR_VAL_STR:
		cr_assert_eq(a->v.s.len, b->v.s.len, "event %u value %u", i, k);
		cr_assert_eq(a->v.s.full_len, b->v.s.full_len, "event %u value %u", i, k);
		cr_assert(!memcmp(a->v.s.data, b->v.s.data, a->v.s.len), "event %u value %u", i, k);
		break;
	default:
		break;
	}
}

static void assert_event_eq(const struct gtr_event *got, uint32_t i)
{
	struct gtr_event want;
	uint8_t sb[64];

	make_event(&want, i, sb);
	cr_assert_eq(got->ts_ns, want.ts_ns, "event %u ts %llu != %llu", i,
		     (unsigned long long)got->ts_ns, (unsigned long long)want.ts_ns);
	cr_assert_eq(got->probe_id, want.probe_id, "event %u", i);
	cr_assert_eq(got->kind, want.kind, "event %u", i);
	cr_assert_eq(got->pid, want.pid, "event %u", i);
	cr_assert_eq(got->tid, want.tid, "event %u", i);
	cr_assert_eq(got->goid, want.goid, "event %u", i);
	cr_assert_eq(got->nvals, want.nvals, "event %u", i);
	for (uint32_t k = 0; k < want.nvals; k++)
		assert_value_eq(&got->vals[k], &want.vals[k], i, k);
}

/*
 * Writes the standard test file: metadata, `nframes` frames of `per` events
 * each (with a task record and a drop record in each frame), summary.
 */
static void write_test_file(const char *path, int nframes, int per)
{
	char err[256];
	uint8_t sb[64];
	struct gtr_event ev;

	struct gtr_writer *w = gtr_writer_create(path, 0, &test_host, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	add_meta(w);
	uint32_t i = 0;
	for (int f = 0; f < nframes; f++) {
		char comm[32];
		snprintf(comm, sizeof(comm), "worker-%d", f);
		cr_assert_eq(gtr_writer_task(w, 4242, 4243, comm), 0);
		for (int k = 0; k < per; k++, i++) {
			make_event(&ev, i, sb);
			cr_assert_eq(gtr_writer_event(w, &ev), 0, "%s", gtr_writer_error(w));
		}
		struct gtr_drop d = { .ts_ns = 1000000000ull + i * 1000ull - 1,
				      .probe_id = f % 2 ? UINT32_MAX : 1, .count = 10u + f };
		cr_assert_eq(gtr_writer_drop(w, &d), 0);
		cr_assert_eq(gtr_writer_flush(w), 0);
	}
	cr_assert_eq(gtr_writer_events(w), (uint64_t)i);
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
}

Test(format, crc32c)
{
	cr_assert_eq(gtr_crc32c(0, "123456789", 9), 0xE3069283u);
	cr_assert_eq(gtr_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	/* 32 bytes of zeros: RFC 3720 B.4 */
	uint8_t z[32] = { 0 };
	cr_assert_eq(gtr_crc32c_sw(0, z, 32), 0x8A9136AAu);
	uint8_t buf[1000];
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (unsigned off = 0; off < 9; off++)
		for (unsigned len = 0; len < 300; len += 7) {
			const uint32_t a = gtr_crc32c(0, buf + off, len);
			cr_assert_eq(a, gtr_crc32c_sw(0, buf + off, len));
			/* incremental == one shot */
			cr_assert_eq(gtr_crc32c(gtr_crc32c(0, buf + off, len / 2), buf + off + len / 2,
						len - len / 2), a);
		}
}

Test(format, round_trip_everything)
{
	const char *path = tpath("rt.gtr");
	char err[256];

	write_test_file(path, 3, 40);

	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	unsigned maj, min;
	gtr_reader_version(r, &maj, &min);
	cr_assert_eq(maj, GTR_VERSION_MAJOR);
	cr_assert_eq(min, GTR_VERSION_MINOR);

	const struct gtr_host *h = gtr_reader_host(r);
	cr_assert_str_eq(h->hostname, "prod-7");
	cr_assert_str_eq(h->kernel, "6.1.0-18-amd64");
	cr_assert_str_eq(h->machine, "x86_64");
	cr_assert_str_eq(h->recorder, "gotrace-record 0.1");
	cr_assert_eq(h->start_mono_ns, 123456789012ull);
	cr_assert_eq(h->start_realtime_ns, 1700000000123456789ull);
	cr_assert_eq(h->start_boottime_ns, 223456789012ull);

	cr_assert_eq(gtr_reader_preload(r), 0);
	cr_assert_eq(gtr_reader_nbinaries(r), 1);
	const struct gtr_binary *b = gtr_reader_binary_at(r, 0);
	cr_assert_eq(b->id, 3);
	cr_assert_str_eq(b->path, "/srv/app");
	cr_assert_str_eq(b->build_id, "deadbeef");
	cr_assert_str_eq(b->go_build_id, "abc/def");
	cr_assert_str_eq(b->go_version, "go1.21.5");
	cr_assert_str_eq(b->compiler, "gc");
	cr_assert_str_eq(b->arch, "x86-64");
	cr_assert_str_eq(b->abi, "ABIInternal");
	cr_assert(b->pie && !b->stripped && b->has_dwarf);

	cr_assert_eq(gtr_reader_nprobes(r), 2);
	const struct gtr_probe *p = gtr_reader_probe(r, 1);
	cr_assert_not_null(p);
	cr_assert_eq(p, gtr_reader_probe_at(r, 0));
	cr_assert_eq(p->binary_id, 3);
	cr_assert_eq(p->kind, GTR_KIND_ENTRY);
	cr_assert_str_eq(p->func, "main.(*T).add");
	cr_assert_eq(p->address, 0x4a1b20);
	cr_assert_str_eq(p->spec, "main.(*T).add(a, b)");
	cr_assert_str_eq(p->fmt, "a=%d s=%s");
	cr_assert_eq(p->nargs, 6);
	cr_assert_str_eq(p->args[2].name, "s");
	cr_assert_str_eq(p->args[2].type_name, "string");
	cr_assert_eq(p->args[2].type, GTR_TYPE_STRING);
	cr_assert_eq(p->args[2].size, 16);
	cr_assert_eq(p->args[4].type, GTR_TYPE_FLOAT);
	cr_assert_eq(p->args[5].type, GTR_TYPE_PTR);
	cr_assert_str_eq(p->args[5].type_name, "*main.T");
	cr_assert_eq(p->nexprs, 2);
	cr_assert_eq(p->exprs[1], 2);
	const struct gtr_probe *q = gtr_reader_probe(r, 2000);
	cr_assert_not_null(q);
	cr_assert_eq(q->kind, GTR_KIND_RETURN);
	cr_assert_str_eq(q->args[0].name, "~r0");
	cr_assert_null(gtr_reader_probe(r, 5));

	struct gtr_event ev;
	struct gtr_drop d;
	uint32_t i = 0, drops = 0;
	int it;
	while ((it = gtr_reader_next(r, &ev, &d)) > 0) {
		if (it == GTR_ITEM_EVENT) {
			assert_event_eq(&ev, i);
			/* task record precedes the frame's events */
			char want[32];
			snprintf(want, sizeof(want), "worker-%u", i / 40);
			cr_assert_str_eq(gtr_reader_comm(r, 4242, 4243), want);
			i++;
		} else {
			cr_assert_eq(it, GTR_ITEM_DROP);
			cr_assert_eq(d.count, 10u + drops);
			cr_assert_eq(d.probe_id, drops % 2 ? UINT32_MAX : 1u);
			cr_assert_eq(d.ts_ns, 1000000000ull + i * 1000ull - 1);
			cr_assert_eq(i, (drops + 1) * 40);
			drops++;
		}
	}
	cr_assert_eq(it, GTR_ITEM_END, "%s", gtr_reader_error(r));
	cr_assert_eq(i, 120);
	cr_assert_eq(drops, 3);
	cr_assert_str_eq(gtr_reader_comm(r, 4242, 4242), "");
	cr_assert_eq(gtr_reader_damage(r), 0);
	cr_assert(!gtr_reader_truncated(r));
	cr_assert_eq(gtr_reader_skipped(r), 0);
	cr_assert_str_eq(gtr_reader_error(r), "");
	const struct gtr_summary *s = gtr_reader_summary(r);
	cr_assert(s->present);
	cr_assert_eq(s->events, 120);
	cr_assert_eq(s->drops, 10 + 11 + 12);
	cr_assert_eq(s->nframes, 3);
	cr_assert_eq(s->first_ts_ns, 1000000000ull);
	cr_assert_eq(s->last_ts_ns, 1000000000ull + 120 * 1000ull - 1);
	gtr_reader_close(r);
}

Test(format, strings_truncated_and_sanitized)
{
	const char *path = tpath("str.gtr");
	char err[256];
	static uint8_t big[GTR_MAX_STRING + 100];

	memset(big, 'x', sizeof(big));
	struct gtr_writer *w = gtr_writer_create(path, 0, NULL, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	struct gtr_binary b = { .id = 0, .path = "/tmp/\xff\xfe" "bad" };
	cr_assert_eq(gtr_writer_binary(w, &b), 0);
	struct gtr_probe p = { .id = 7, .binary_id = 0, .func = "main.f" };
	p.nargs = 1;
	p.args[0] = (struct gtr_arg){ "s", "string", GTR_TYPE_STRING, 16, "" };
	cr_assert_eq(gtr_writer_probe(w, &p), 0);
	cr_assert_eq(gtr_writer_task(w, 1, 2, "averyveryverylongthreadname"), 0);
	cr_assert_eq(gtr_writer_task(w, 1, 3, "b\xff" "d"), 0);
	struct gtr_event ev = { .ts_ns = 5, .probe_id = 7, .pid = 1, .tid = 2, .nvals = 1 };
	ev.vals[0].kind = GTR_VAL_STR;
	ev.vals[0].v.s.data = big;
	ev.vals[0].v.s.len = sizeof(big);
	ev.vals[0].v.s.full_len = 1ull << 40;
	cr_assert_eq(gtr_writer_event(w, &ev), 0);
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	/* host block filled in by the writer when NULL */
	cr_assert_gt(gtr_reader_host(r)->start_mono_ns, 0);
	cr_assert_gt(strlen(gtr_reader_host(r)->kernel), 0);
	struct gtr_event got;
	cr_assert_eq(gtr_reader_next(r, &got, NULL), GTR_ITEM_EVENT);
	cr_assert_str_eq(gtr_reader_binary_at(r, 0)->path, "/tmp/??bad");
	cr_assert_eq(got.vals[0].kind, GTR_VAL_STR);
	cr_assert_eq(got.vals[0].v.s.len, GTR_MAX_STRING);
	cr_assert_eq(got.vals[0].v.s.full_len, 1ull << 40);
	cr_assert_eq(got.vals[0].v.s.data[GTR_MAX_STRING - 1], 'x');
	cr_assert_str_eq(gtr_reader_comm(r, 1, 2), "averyveryverylon");
	cr_assert_str_eq(gtr_reader_comm(r, 1, 3), "b?d");
	cr_assert_eq(gtr_reader_next(r, &got, NULL), GTR_ITEM_END);
	gtr_reader_close(r);
}

Test(format, many_events_auto_frames)
{
	const char *path = tpath("many.gtr");
	char err[256];
	const uint32_t n = 200000;

	struct gtr_writer *w = gtr_writer_create(path, 0, &test_host, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	add_meta(w);
	struct gtr_event ev = { .probe_id = 1, .kind = GTR_KIND_ENTRY, .pid = 9, .tid = 9,
				.goid = 1, .nvals = 2 };
	for (uint32_t i = 0; i < n; i++) {
		ev.ts_ns = 5000000000ull + i * 3100ull + (i * 7919) % 200;
		ev.vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = 42 };
		ev.vals[1] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = i };
		cr_assert_eq(gtr_writer_event(w, &ev), 0);
	}
	const uint64_t bytes_before = gtr_writer_bytes(w);
	cr_assert_gt(bytes_before, 16);
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_log_info("%u events of add(42, i): %lld bytes, %.2f bytes/event", n,
		    (long long)st.st_size, (double)st.st_size / n);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	uint32_t i = 0;
	struct gtr_event got;
	while (gtr_reader_next(r, &got, NULL) == GTR_ITEM_EVENT) {
		cr_assert_eq(got.ts_ns, 5000000000ull + i * 3100ull + (i * 7919) % 200);
		cr_assert_eq(got.nvals, 2);
		cr_assert_eq(got.vals[0].kind, GTR_VAL_INT);
		cr_assert_eq(got.vals[0].v.i, 42);
		cr_assert_eq(got.vals[1].v.i, (int64_t)i);
		cr_assert_eq(got.goid, 1);
		i++;
	}
	cr_assert_eq(i, n);
	cr_assert_gt(gtr_reader_summary(r)->nframes, 1);
	cr_assert_eq(gtr_reader_summary(r)->events, n);
	cr_assert_eq(gtr_reader_damage(r), 0);
	gtr_reader_close(r);
}

Test(format, refuse_overwrite_and_symlink)
{
	const char *path = tpath("exists.gtr");
	const char *target = tpath("target.txt");
	const char *link = tpath("link.gtr");
	char err[256];

	spit(path, "old", 3);
	struct gtr_writer *w = gtr_writer_create(path, 0, &test_host, err, sizeof(err));
	cr_assert_null(w);
	cr_assert(strstr(err, "exists; use --force to overwrite"), "%s", err);
	cr_assert(strstr(err, path), "%s", err);
	size_t n;
	free(slurp(path, &n));
	cr_assert_eq(n, 3);

	/* with force, an existing regular file is replaced */
	cr_assert_eq(chmod(path, 0644), 0);
	w = gtr_writer_create(path, GTR_W_FORCE, &test_host, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_gt(st.st_size, 32);

	/* never through a symbolic link, with or without force */
	spit(target, "keep", 4);
	cr_assert_eq(symlink(target, link), 0);
	for (int force = 0; force < 2; force++) {
		w = gtr_writer_create(link, force ? GTR_W_FORCE : 0, &test_host, err, sizeof(err));
		cr_assert_null(w);
		cr_assert(strstr(err, "symbolic link"), "%s", err);
	}
	uint8_t *t = slurp(target, &n);
	cr_assert_eq(n, 4);
	cr_assert(!memcmp(t, "keep", 4));
	free(t);
	/* dangling symlink too */
	cr_assert_eq(unlink(target), 0);
	w = gtr_writer_create(link, GTR_W_FORCE, &test_host, err, sizeof(err));
	cr_assert_null(w);
	cr_assert_eq(access(target, F_OK), -1);

	/* a directory is not replaced */
	w = gtr_writer_create(tdir, GTR_W_FORCE, &test_host, err, sizeof(err));
	cr_assert_null(w);
	cr_assert(strstr(err, "not a regular file"), "%s", err);
	/* missing directory */
	w = gtr_writer_create(tpath("no/such/dir.gtr"), 0, &test_host, err, sizeof(err));
	cr_assert_null(w);
	cr_assert(strstr(err, "cannot create"), "%s", err);
}

Test(format, writer_rejects_bad_order)
{
	char err[256];
	struct gtr_writer *w = gtr_writer_create(tpath("order.gtr"), 0, &test_host, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	struct gtr_probe p = { .id = 1, .binary_id = 9, .func = "main.f" };
	cr_assert_eq(gtr_writer_probe(w, &p), -ENOENT);
	cr_assert(strstr(gtr_writer_error(w), "binary 9"), "%s", gtr_writer_error(w));
	struct gtr_event ev = { .probe_id = 1 };
	cr_assert_eq(gtr_writer_event(w, &ev), -ENOENT);
	struct gtr_binary b = { .id = 9 };
	cr_assert_eq(gtr_writer_binary(w, &b), 0);
	cr_assert_eq(gtr_writer_binary(w, &b), -EEXIST);
	p.nargs = 1;
	p.nexprs = 1;
	p.exprs[0] = 1;
	cr_assert_eq(gtr_writer_probe(w, &p), -EINVAL);
	p.exprs[0] = 0;
	cr_assert_eq(gtr_writer_probe(w, &p), 0);
	cr_assert_eq(gtr_writer_probe(w, &p), -EEXIST);
	ev.nvals = GTR_MAX_ARGS + 1;
	cr_assert_eq(gtr_writer_event(w, &ev), -EINVAL);
	ev.nvals = 1;
	ev.vals[0].kind = 99;
	cr_assert_eq(gtr_writer_event(w, &ev), -EINVAL);
	ev.vals[0].kind = GTR_VAL_UINT;
	cr_assert_eq(gtr_writer_event(w, &ev), 0);
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
}

Test(format, not_a_trace)
{
	char err[256];
	const char *path = tpath("notes.txt");

	spit(path, "hello, this is not a trace at all\n", 34);
	cr_assert_null(gtr_reader_open(path, err, sizeof(err)));
	cr_assert(strstr(err, "not a gotrace trace (bad magic); expected a .gtr file from gotrace-record"),
		  "%s", err);
	cr_assert(strstr(err, path));

	spit(path, "", 0);
	cr_assert_null(gtr_reader_open(path, err, sizeof(err)));
	cr_assert(strstr(err, "empty file"), "%s", err);

	cr_assert_null(gtr_reader_open(tpath("missing.gtr"), err, sizeof(err)));
	cr_assert(strstr(err, "cannot open"), "%s", err);
	cr_assert(strstr(err, "No such file"), "%s", err);

	/* "-" is standard input, named so in messages */
	int devnull = open("/dev/null", O_RDONLY);
	cr_assert_geq(devnull, 0);
	cr_assert_eq(dup2(devnull, STDIN_FILENO), STDIN_FILENO);
	close(devnull);
	cr_assert_null(gtr_reader_open("-", err, sizeof(err)));
	cr_assert(strstr(err, "standard input: empty file"), "%s", err);
	cr_assert_null(gtr_reader_open(tdir, err, sizeof(err)));
	cr_assert(strstr(err, "directory"), "%s", err);
}

/* A trace on standard input (a pipe: no seeking) reads as the file does. */
Test(format, standard_input)
{
	const char *full = tpath("full.gtr");
	char err[512];
	struct gtr_event ev;
	struct gtr_drop d;
	uint64_t want = 0, got = 0;
	size_t n;
	int fds[2];

	write_test_file(full, 3, 5);
	uint8_t *b = slurp(full, &n);
	struct gtr_reader *r = gtr_reader_open(full, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	while (gtr_reader_next(r, &ev, &d) > 0)
		want++;
	gtr_reader_close(r);
	cr_assert_eq(pipe(fds), 0);
	const pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(write(fds[1], b, n) == (ssize_t)n ? 0 : 1);
	}
	close(fds[1]);
	cr_assert_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	r = gtr_reader_open("-", err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	while (gtr_reader_next(r, &ev, &d) > 0)
		got++;
	cr_assert_eq(got, want);
	cr_assert_eq(gtr_reader_damage(r), 0, "%s", gtr_reader_error(r));
	cr_assert(gtr_reader_summary(r)->present);
	gtr_reader_close(r);
	waitpid(pid, NULL, 0);
	free(b);
}

Test(format, newer_major_version)
{
	char err[256];
	const char *path = tpath("v2.gtr");
	size_t n;

	write_test_file(path, 1, 3);
	uint8_t *b = slurp(path, &n);
	b[8] = 2; /* major 2 */
	b[10] = 5;
	spit(path, b, n);
	cr_assert_null(gtr_reader_open(path, err, sizeof(err)));
	cr_assert(strstr(err, "version 2.5 is not supported"), "%s", err);

	/* newer minor: fine */
	b[8] = 1;
	b[10] = 9;
	spit(path, b, n);
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	unsigned maj, min;
	gtr_reader_version(r, &maj, &min);
	cr_assert_eq(maj, 1);
	cr_assert_eq(min, 9);
	gtr_reader_close(r);
	free(b);
}

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

Test(format, truncation_at_every_byte)
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

Test(format, flipped_byte_anywhere)
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
Test(format, prefetch_on_and_off_agree)
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
Test(format, prefetch_survives_fork)
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

Test(format, garbage_between_blocks)
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
Test(format, hand_written_file)
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
Test(format, hostile_lengths)
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

Test(format, names)
{
	cr_assert_str_eq(gtr_type_name(GTR_TYPE_STRING), "string");
	cr_assert_str_eq(gtr_type_name(GTR_TYPE_WORD), "word");
	cr_assert_str_eq(gtr_type_name((enum gtr_type)99), "other");
	cr_assert_eq(gtr_type_from_name("ptr", 3), GTR_TYPE_PTR);
	cr_assert_eq(gtr_type_from_name("complex128", 10), GTR_TYPE_OTHER);
	cr_assert_str_eq(gtr_kind_name(GTR_KIND_RETURN), "return");
}
