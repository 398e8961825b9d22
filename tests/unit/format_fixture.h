/* SPDX-License-Identifier: MIT */
/*
 * What the unit tests of libgtr share: a temporary directory per test,
 * files slurped and spat, a host, metadata of every kind, and events of
 * every value kind with their checks (test_format.c, test_format_damage.c).
 */
#ifndef GOTRACE_TEST_FORMAT_FIXTURE_H
#define GOTRACE_TEST_FORMAT_FIXTURE_H

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

static inline void setup(void)
{
	umask(022);
	strcpy(tdir, "/tmp/gtr-test-XXXXXX");
	cr_assert_not_null(mkdtemp(tdir));
}

static inline void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
	cr_assert_eq(system(cmd), 0);
}


static inline const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tdir, name);
	return buf[i];
}

static inline uint8_t *slurp(const char *path, size_t *len)
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

static inline void spit(const char *path, const void *b, size_t len)
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

static inline void add_meta(struct gtr_writer *w)
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
static inline void make_event(struct gtr_event *ev, uint32_t i, uint8_t *strbuf)
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

static inline void assert_value_eq(const struct gtr_value *a, const struct gtr_value *b,
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

static inline void assert_event_eq(const struct gtr_event *got, uint32_t i)
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
static inline void write_test_file(const char *path, int nframes, int per)
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

#endif
