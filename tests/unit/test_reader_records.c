/* SPDX-License-Identifier: MIT */
/*
 * The reader's delta event records (format/reader_events.c): the common
 * shapes, which a fast path reads, and the others, which the general
 * decoder reads, give back exactly what was written: integer deltas of
 * every head size and sign, strings captured whole (empty, long) and cut,
 * probes with ids past the fast path's, contexts that change, frames that
 * end in the middle of a run.
 */
#include "format_fixture.h"

TestSuite(reader_records, .init = setup, .fini = teardown);

/* Probe 7 (fast path ids are below 24) and probe 300 (beyond): a, s, u. */
static void add_probes(struct gtr_writer *w)
{
	const uint32_t ids[2] = { 7, 300 };

	for (int k = 0; k < 2; k++) {
		struct gtr_probe p = {
			.id = ids[k], .binary_id = 3, .kind = k ? GTR_KIND_RETURN : GTR_KIND_ENTRY,
			.func = "main.mix", .address = 0x401000, .spec = "main.mix", .fmt = "",
			.nargs = 3,
		};
		p.args[0] = (struct gtr_arg){ "a", "int", GTR_TYPE_INT, 8, "" };
		p.args[1] = (struct gtr_arg){ "s", "string", GTR_TYPE_STRING, 16, "" };
		p.args[2] = (struct gtr_arg){ "u", "uint64", GTR_TYPE_UINT, 8, "" };
		cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
	}
}

/* Event i: integers whose deltas need heads of 0 to 8 bytes, either sign;
 * strings of 0 to 300 bytes, every 13th cut. */
static void mix_event(struct gtr_event *ev, uint32_t i, uint8_t *sb)
{
	static const int64_t steps[] = { 0, 1, -1, 23, 24, -25, 255, 256, -70000,
					 65536, 1ll << 31, -(1ll << 33), INT64_MAX / 3 };
	const size_t nsteps = sizeof(steps) / sizeof(steps[0]);
	const uint32_t slen = i % 29 == 5 ? 300 : i % 9;

	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = 5000000000ull + i * 977ull;
	ev->probe_id = i % 5 == 4 ? 300 : 7;
	ev->kind = ev->probe_id == 7 ? GTR_KIND_ENTRY : GTR_KIND_RETURN;
	ev->pid = 10;
	ev->tid = 10 + i / 40 % 2;          /* the context changes now and then */
	ev->goid = 3;
	ev->cpu = GTR_CPU_UNKNOWN;
	ev->nvals = 3;
	ev->vals[0].kind = GTR_VAL_INT;
	ev->vals[0].v.i = (int64_t)((uint64_t)steps[i % nsteps] * (i / nsteps + 1));
	for (uint32_t k = 0; k < slen; k++)
		sb[k] = (uint8_t)('a' + (i + k) % 26);
	ev->vals[1].kind = GTR_VAL_STR;
	ev->vals[1].v.s.data = sb;
	ev->vals[1].v.s.len = slen;
	ev->vals[1].v.s.full_len = i % 13 == 0 ? slen + 7 : slen;
	ev->vals[2].kind = GTR_VAL_UINT;
	ev->vals[2].v.u = i % 7 == 0 ? UINT64_MAX - i : (uint64_t)i * 1000003u;
}

/* A writer of `path` with the fixture's metadata and the two probes. */
static struct gtr_writer *mix_writer(const char *path)
{
	char err[256];
	struct gtr_writer *w = gtr_writer_create(path, 0, &test_host, err, sizeof(err));

	cr_assert_not_null(w, "%s", err);
	add_meta(w);
	add_probes(w);
	return w;
}

Test(reader_records, delta_records_read_back_exactly)
{
	const char *path = tpath("mix.gtr");
	const uint32_t n = 20000;
	uint8_t sb[512];
	char err[256];
	struct gtr_event ev;

	struct gtr_writer *w = mix_writer(path);
	for (uint32_t i = 0; i < n; i++) {
		mix_event(&ev, i, sb);
		cr_assert_eq(gtr_writer_event(w, &ev), 0, "%s", gtr_writer_error(w));
		if (i % 4999 == 4998)   /* frames that end in the middle of a run */
			cr_assert_eq(gtr_writer_flush(w), 0);
	}
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	static struct gtr_event got;
	uint32_t i = 0;
	int item;
	while ((item = gtr_reader_next(r, &got, NULL)) > 0) {
		if (item != GTR_ITEM_EVENT)
			continue;
		cr_assert_lt(i, n);
		mix_event(&ev, i, sb);
		cr_assert_eq(got.ts_ns, ev.ts_ns, "event %u", i);
		cr_assert_eq(got.probe_id, ev.probe_id, "event %u", i);
		cr_assert_eq(got.kind, ev.kind, "event %u", i);
		cr_assert_eq(got.tid, ev.tid, "event %u", i);
		cr_assert_eq(got.cpu, ev.cpu, "event %u", i);
		cr_assert_eq(got.nvals, 3, "event %u", i);
		for (uint32_t k = 0; k < 3; k++)
			assert_value_eq(&got.vals[k], &ev.vals[k], i, k);
		i++;
	}
	cr_assert_eq(item, GTR_ITEM_END, "%s", gtr_reader_error(r));
	cr_assert_eq(i, n);
	cr_assert_eq(gtr_reader_damage(r), 0);
	gtr_reader_close(r);
}

/* gtr_reader_is_stream(): a regular file is not, a pipe is, a regular
 * file as standard input is not. */
Test(reader_records, stream_or_regular_file)
{
	const char *path = tpath("s.gtr");
	char err[256];
	int fds[2];

	write_test_file(path, 1, 3);
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	cr_assert_not(gtr_reader_is_stream(r));
	gtr_reader_close(r);

	const int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	r = gtr_reader_open("-", err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	cr_assert_not(gtr_reader_is_stream(r));
	gtr_reader_close(r);

	cr_assert_eq(pipe(fds), 0);
	cr_assert_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	/* the whole file in the pipe (it fits) before the reader opens it */
	size_t n;
	uint8_t *b = slurp(path, &n);
	cr_assert_eq(write(fds[1], b, n), (ssize_t)n);
	close(fds[1]);
	r = gtr_reader_open("-", err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	cr_assert(gtr_reader_is_stream(r));
	gtr_reader_close(r);
	free(b);
}

/* gtr_reader_task_gen() moves at each task record and only then; a name
 * kept while it stays is the name gtr_reader_comm() gives. */
Test(reader_records, task_generation)
{
	const char *path = tpath("t.gtr");
	char err[256];
	struct gtr_event ev;

	struct gtr_writer *w = mix_writer(path);
	for (uint32_t i = 0; i < 600; i++) {
		uint8_t sb[512];
		if (i % 50 == 0) {
			char name[16];
			snprintf(name, sizeof(name), "w%u", i / 50);
			cr_assert_eq(gtr_writer_task(w, 10, 10 + i / 40 % 2, name), 0);
		}
		mix_event(&ev, i, sb);
		cr_assert_eq(gtr_writer_event(w, &ev), 0, "%s", gtr_writer_error(w));
	}
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	uint64_t gen = gtr_reader_task_gen(r), moves = 0;
	const char *kept = NULL;
	uint32_t kept_tid = 0;
	while (gtr_reader_next(r, &ev, NULL) == GTR_ITEM_EVENT) {
		const uint64_t g = gtr_reader_task_gen(r);
		if (g != gen) {
			moves++;
			gen = g;
			kept = NULL;
		}
		if (kept && kept_tid == ev.tid)
			cr_assert_str_eq(kept, gtr_reader_comm(r, ev.pid, ev.tid));
		kept = gtr_reader_comm(r, ev.pid, ev.tid);
		kept_tid = ev.tid;
	}
	cr_assert_eq(moves, 12, "one move per task record: %llu", (unsigned long long)moves);
	gtr_reader_close(r);
}
