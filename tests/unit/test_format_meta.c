/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libgtr's symbols, mappings, processes, clock samples, CPUs,
 * stacks, delta-coded values, losses per (probe, cpu), the metadata order
 * rule, seeking by time and a rotated file's rate limit (spec/FORMAT.md).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gtr.h"
#include "gtr_internal.h"
#include "gtr_rate.h"

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/gtr-meta-%d.gtr", getpid());
	unlink(path);
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(meta, .init = setup, .fini = teardown);

static const struct gtr_host host = {
	.hostname = "h", .kernel = "k", .machine = "m", .recorder = "r",
	.start_mono_ns = 1000, .start_realtime_ns = 5000000, .start_boottime_ns = 2000,
};

static struct gtr_writer *open_w(void)
{
	char err[256];
	struct gtr_writer *w = gtr_writer_create(path, 0, &host, err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	const struct gtr_binary exe = { .id = 1, .path = "/exe", .pie = false };
	const struct gtr_binary pie = { .id = 2, .path = "/pie", .pie = true };
	cr_assert_eq(gtr_writer_binary(w, &exe), 0);
	cr_assert_eq(gtr_writer_binary(w, &pie), 0);
	struct gtr_probe p = { .id = 3, .binary_id = 1, .func = "main.f", .nargs = 3 };
	p.args[0] = (struct gtr_arg){ "a", "int", GTR_TYPE_INT, 8, "" };
	p.args[1] = (struct gtr_arg){ "b", "uint", GTR_TYPE_UINT, 8, "" };
	p.args[2] = (struct gtr_arg){ "c", "", GTR_TYPE_WORD, 8, "" };
	cr_assert_eq(gtr_writer_probe(w, &p), 0);
	return w;
}

static struct gtr_reader *open_r(void)
{
	char err[512];
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	return r;
}

static void close_w(struct gtr_writer *w)
{
	char err[256];
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
}

Test(meta, symbols_mappings_symbolize)
{
	struct gtr_writer *w = open_w();
	const uint32_t n = 3 * GTR_SYMS_PER_BLOCK + 5;
	struct gtr_symbol *s = calloc(n, sizeof(*s));
	char (*names)[24] = calloc(n, 24);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t k = (i * 7919u) % n; /* any order */
		snprintf(names[i], 24, "f%u", k);
		s[i] = (struct gtr_symbol){ 0x400000 + 0x100ull * k, k % 3 ? 0x80 : 0, names[i], 0, NULL };
	}
	cr_assert_eq(gtr_writer_symbols(w, 1, s, n), 0, "%s", gtr_writer_error(w));
	/* p.b holds an inlined copy of p.c at +4..+12, which holds one of
	 * p.d at +6..+8 */
	const struct gtr_inlined inl[] = { { 6, 2, 2, "p.d" }, { 4, 8, 1, "p.c" } };
	const struct gtr_symbol ps[] = { { 0x1000, 0x20, "p.a", 0, NULL },
					 { 0x1020, 0x20, "p.b", 2, inl } };
	cr_assert_eq(gtr_writer_symbols(w, 2, ps, 2), 0);
	cr_assert_eq(gtr_writer_symbols(w, 9, ps, 2), -ENOENT);
	/* pid 10 runs /pie twice mapped; the later mapping wins */
	struct gtr_mapping m = { .ts_ns = 1, .pid = 10, .start = 0x7000, .end = 0x9000,
				 .offset = 0x1000, .binary_id = 2, .path = "/pie" };
	cr_assert_eq(gtr_writer_mapping(w, &m), 0);
	m.start = 0x50000;
	m.end = 0x52000;
	m.vaddr = 0x1000;
	cr_assert_eq(gtr_writer_mapping(w, &m), 0);
	m.start = 0x7000;
	m.end = 0x8000;
	m.binary_id = UINT32_MAX; /* replaced by an unknown file */
	m.vaddr = 0;
	cr_assert_eq(gtr_writer_mapping(w, &m), 0);
	m.end = m.start;
	cr_assert_eq(gtr_writer_mapping(w, &m), -EINVAL);
	const struct gtr_process pr = { .ts_ns = 2, .pid = 10, .binary_id = 2, .comm = "pie" };
	cr_assert_eq(gtr_writer_process(w, &pr), 0);
	const struct gtr_process pe = { .ts_ns = 3, .pid = 10, .binary_id = UINT32_MAX,
					.comm = "pie", .exited = true, .exit_code = -11 };
	cr_assert_eq(gtr_writer_process(w, &pe), 0);
	/* an exit whose status is not known: no exit_code in the file */
	const struct gtr_process pu = { .ts_ns = 4, .pid = 11, .binary_id = UINT32_MAX,
					.comm = "gone", .exited = true,
					.exit_code = GTR_EXIT_UNKNOWN };
	cr_assert_eq(gtr_writer_process(w, &pu), 0);
	close_w(w);
	free(s);
	free(names);

	struct gtr_reader *r = open_r();
	while (gtr_reader_next(r, NULL, NULL) > 0)
		;
	cr_assert_eq(gtr_reader_damage(r), 0, "%s", gtr_reader_error(r));
	cr_assert_eq(gtr_reader_nsymbols(r, 1), n);
	for (uint32_t i = 1; i < n; i++)
		cr_assert_lt(gtr_reader_symbol_at(r, 1, i - 1)->address,
			     gtr_reader_symbol_at(r, 1, i)->address);
	uint64_t off = 99;
	/* non-PIE without a mapping: 1:1 */
	cr_assert_str_eq(gtr_reader_symbolize(r, 77, 0x400000 + 0x100 * 5 + 7, &off), "f5");
	cr_assert_eq(off, 7);
	/* f3 has size 0: extends to f4 */
	cr_assert_str_eq(gtr_reader_symbolize(r, 77, 0x400000 + 0x300 + 0xf0, &off), "f3");
	/* f4 has size 0x80: 0x90 into it is nothing */
	cr_assert_null(gtr_reader_symbolize(r, 77, 0x400000 + 0x400 + 0x90, NULL));
	/* PIE through a mapping with vaddr */
	cr_assert_str_eq(gtr_reader_symbolize(r, 10, 0x50024, &off), "p.b");
	cr_assert_eq(off, 4);
	/* its inlined frames, deepest first */
	const char *fr[4] = { 0 };
	cr_assert_eq(gtr_reader_inlined(r, 10, 0x50024, fr, 4), 1);
	cr_assert_str_eq(fr[0], "p.c");
	cr_assert_eq(gtr_reader_inlined(r, 10, 0x50027, fr, 4), 2);
	cr_assert_str_eq(fr[0], "p.d");
	cr_assert_str_eq(fr[1], "p.c");
	cr_assert_eq(gtr_reader_inlined(r, 10, 0x50027, fr, 1), 2); /* one written */
	cr_assert_str_eq(fr[0], "p.d");
	cr_assert_eq(gtr_reader_inlined(r, 10, 0x5002c, fr, 4), 0);
	cr_assert_eq(gtr_reader_inlined(r, 10, 0x50004, fr, 4), 0); /* p.a: none */
	cr_assert_eq(gtr_reader_symbol_at(r, 2, 1)->ninlined, 2);
	/* PIE mapping without vaddr: start - offset; upper half still the old one */
	cr_assert_null(gtr_reader_symbolize(r, 10, 0x8010, &off)); /* link 0x2010: no symbol */
	cr_assert_null(gtr_reader_symbolize(r, 10, 0x7010, NULL)); /* replaced: unknown file */
	cr_assert_eq(gtr_reader_nmappings(r), 3);
	cr_assert_str_eq(gtr_reader_mapping_at(r, 2)->path, "/pie");
	cr_assert_eq(gtr_reader_mapping_at(r, 2)->binary_id, UINT32_MAX);
	cr_assert_eq(gtr_reader_mapping_at(r, 1)->vaddr, 0x1000);
	cr_assert_eq(gtr_reader_nprocesses(r), 3);
	cr_assert(gtr_reader_process_at(r, 2)->exited);
	cr_assert_eq(gtr_reader_process_at(r, 2)->exit_code, GTR_EXIT_UNKNOWN);
	cr_assert_eq(gtr_reader_process_at(r, 0)->exit_code, 0);
	cr_assert(gtr_reader_process_at(r, 1)->exited);
	cr_assert_eq(gtr_reader_process_at(r, 1)->exit_code, -11);
	cr_assert_eq(gtr_reader_process_at(r, 0)->binary_id, 2);
	cr_assert_str_eq(gtr_reader_process_at(r, 0)->comm, "pie");
	gtr_reader_close(r);
}

Test(meta, pie_mapping_without_vaddr)
{
	struct gtr_writer *w = open_w();
	const struct gtr_symbol ps[] = { { 0x1000, 0x20, "p.a", 0, NULL } };
	cr_assert_eq(gtr_writer_symbols(w, 2, ps, 1), 0);
	const struct gtr_mapping m = { .pid = 4, .start = 0x7f0000, .end = 0x7f2000,
				       .offset = 0x1000, .binary_id = 2, .path = "/pie" };
	cr_assert_eq(gtr_writer_mapping(w, &m), 0);
	close_w(w);
	struct gtr_reader *r = open_r();
	cr_assert_eq(gtr_reader_preload(r), 0);
	uint64_t off;
	cr_assert_str_eq(gtr_reader_symbolize(r, 4, 0x7f0008, &off), "p.a");
	cr_assert_eq(off, 8);
	gtr_reader_close(r);
}

Test(meta, clocks_realtime)
{
	struct gtr_writer *w = open_w();
	const struct gtr_clock_sample c1 = { 2000, 6000000, 3000 }, c2 = { 3000, 9000000, 4000 };
	cr_assert_eq(gtr_writer_clock(w, &c1), 0);
	cr_assert_eq(gtr_writer_clock(w, &c2), 0);
	close_w(w);
	struct gtr_reader *r = open_r();
	cr_assert_eq(gtr_reader_next(r, NULL, NULL), GTR_ITEM_END);
	uint64_t rt;
	cr_assert_eq(gtr_reader_nclocks(r), 2);
	cr_assert_eq(gtr_reader_clock_at(r, 1)->boottime_ns, 4000);
	cr_assert_eq(gtr_reader_realtime(r, 1500, &rt), 0);
	cr_assert_eq(rt, 5000500);   /* host anchor */
	cr_assert_eq(gtr_reader_realtime(r, 500, &rt), 0);
	cr_assert_eq(rt, 4999500);   /* before everything: host anchor */
	cr_assert_eq(gtr_reader_realtime(r, 2999, &rt), 0);
	cr_assert_eq(rt, 6000999);
	cr_assert_eq(gtr_reader_realtime(r, 3001, &rt), 0);
	cr_assert_eq(rt, 9000001);   /* clock stepped: the later sample */
	gtr_reader_close(r);
}

/* Values, CPUs, stacks and the delta records, including every fallback. */
Test(meta, events_cpu_stack_delta)
{
	struct gtr_writer *w = open_w();
	struct gtr_probe q = { .id = 70000, .binary_id = 1, .func = "main.g", .nargs = 1 };
	q.args[0] = (struct gtr_arg){ "x", "int", GTR_TYPE_INT, 8, "" };
	cr_assert_eq(gtr_writer_probe(w, &q), 0);
	enum { N = 3000 };
	static struct gtr_event evs[N];
	static uint64_t stacks[N][4];
	for (int i = 0; i < N; i++) {
		struct gtr_event *e = &evs[i];
		e->ts_ns = 10000 + i * 100 - (i % 9 == 4 ? 350 : 0);
		e->probe_id = i % 5 == 4 ? 70000 : 3;
		e->kind = i % 3 == 2 ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		e->pid = 10;
		e->tid = 10 + (i / 700);
		e->goid = 1 + (i % 40 == 39);
		e->cpu = i % 250 < 100 ? GTR_CPU_UNKNOWN : (uint32_t)(i / 250);
		if (e->probe_id == 3) {
			e->nvals = i % 11 == 5 ? 2 : 3;
			e->vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT,
				.v.i = i % 13 == 0 ? INT64_MIN : i % 13 == 1 ? INT64_MAX : 42 - i };
			/* a UINT value for the int argument sometimes: no delta record */
			if (i % 17 == 3)
				e->vals[0] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = 7 };
			e->vals[1] = (struct gtr_value){ .kind = GTR_VAL_UINT,
				.v.u = i % 7 == 0 ? UINT64_MAX : (uint64_t)i * 1000 };
			if (i % 19 == 2)
				e->vals[1] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = -4 };
			e->vals[2] = (struct gtr_value){ .kind = i % 6 ? GTR_VAL_UINT : GTR_VAL_BOOL,
							 .v.u = i % 6 ? 0xc000000000 + i : 1 };
		} else {
			e->nvals = 1;
			e->vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = -(int64_t)i };
		}
		if (i % 3 == 0) {
			stacks[i][0] = i % 2 ? UINT64_MAX - (uint64_t)i : 0x401000u + (uint64_t)i;
			stacks[i][1] = 0;
			stacks[i][2] = 0x7fff00000000ull + i;
			stacks[i][3] = 5;
			e->nstack = 1 + i % 4;
			e->stack = stacks[i];
		}
		cr_assert_eq(gtr_writer_event(w, e), 0, "%d: %s", i, gtr_writer_error(w));
		if (i % 1000 == 999)
			cr_assert_eq(gtr_writer_flush(w), 0);
		if (i % 500 == 250) {
			const struct gtr_drop d = { .ts_ns = e->ts_ns + 1, .probe_id = i % 1000 == 250 ? 3 : UINT32_MAX,
						    .count = 10, .cpu = i < 1500 ? 1 : GTR_CPU_UNKNOWN,
						    .since_ns = e->ts_ns - 5000 };
			cr_assert_eq(gtr_writer_drop(w, &d), 0);
		}
	}
	struct gtr_event bad = evs[0];
	bad.nstack = GTR_MAX_STACK + 1;
	cr_assert_eq(gtr_writer_event(w, &bad), -EINVAL);
	close_w(w);

	struct gtr_reader *r = open_r();
	static struct gtr_event got;
	struct gtr_drop d;
	int it, i = 0, drops = 0;
	while ((it = gtr_reader_next(r, &got, &d)) > 0) {
		if (it == GTR_ITEM_DROP) {
			cr_assert_eq(d.count, 10);
			cr_assert_eq(d.ts_ns - d.since_ns, 5001);
			drops++;
			continue;
		}
		const struct gtr_event *e = &evs[i];
		cr_assert_eq(got.ts_ns, e->ts_ns, "%d", i);
		cr_assert_eq(got.probe_id, e->probe_id, "%d", i);
		cr_assert_eq(got.kind, e->kind, "%d", i);
		cr_assert_eq(got.tid, e->tid, "%d", i);
		cr_assert_eq(got.goid, e->goid, "%d", i);
		cr_assert_eq(got.cpu, e->cpu, "%d", i);
		cr_assert_eq(got.nvals, e->nvals, "%d", i);
		for (uint32_t k = 0; k < e->nvals; k++) {
			/* spec "Values": a uint for an "int" argument reads back as INT */
			const enum gtr_value_kind want =
				e->probe_id == 3 && k == 0 && e->vals[k].kind == GTR_VAL_UINT
					? GTR_VAL_INT : e->vals[k].kind;
			cr_assert_eq(got.vals[k].kind, want, "%d/%u", i, k);
			if (want == GTR_VAL_BOOL)
				cr_assert_eq(got.vals[k].v.b, e->vals[k].v.b, "%d/%u", i, k);
			else
				cr_assert_eq(got.vals[k].v.u, e->vals[k].v.u, "%d/%u", i, k);
		}
		cr_assert_eq(got.nstack, e->nstack, "%d", i);
		for (uint32_t k = 0; k < e->nstack; k++)
			cr_assert_eq(got.stack[k], e->stack[k], "%d/%u", i, k);
		i++;
	}
	cr_assert_eq(it, GTR_ITEM_END, "%s", gtr_reader_error(r));
	cr_assert_eq(i, N);
	cr_assert_eq(drops, 6);
	cr_assert_eq(gtr_reader_damage(r), 0);
	/* losses per (probe, cpu) with their span */
	cr_assert_eq(gtr_reader_nlosses(r), 4);
	uint64_t total = 0;
	for (uint32_t k = 0; k < gtr_reader_nlosses(r); k++) {
		const struct gtr_loss *l = gtr_reader_loss_at(r, k);
		total += l->count;
		cr_assert_lt(l->first_ns, l->last_ns);
	}
	cr_assert_eq(total, 60);
	const struct gtr_loss *l0 = gtr_reader_loss_at(r, 0);
	cr_assert_eq(l0->probe_id, 3);
	cr_assert_eq(l0->cpu, 1);
	gtr_reader_close(r);
}

/* Every distinct probe of a frame beyond the delta-state limit still reads. */
Test(meta, many_probes_in_one_frame)
{
	struct gtr_writer *w = open_w();
	const uint32_t np = GTR_FRAME_PROBES + 300;
	for (uint32_t i = 0; i < np; i++) {
		struct gtr_probe p = { .id = 100 + i * 3, .binary_id = 1, .func = "f", .nargs = 1 };
		p.args[0] = (struct gtr_arg){ "x", "int", GTR_TYPE_INT, 8, "" };
		cr_assert_eq(gtr_writer_probe(w, &p), 0);
	}
	for (uint32_t round = 0; round < 3; round++)
		for (uint32_t i = 0; i < np; i++) {
			struct gtr_event e = { .ts_ns = 1000 + round * np + i, .probe_id = 100 + i * 3,
					       .pid = 1, .tid = 1, .cpu = GTR_CPU_UNKNOWN, .nvals = 1 };
			e.vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = (int64_t)(i * round) - 5 };
			cr_assert_eq(gtr_writer_event(w, &e), 0);
		}
	close_w(w);
	struct gtr_reader *r = open_r();
	struct gtr_event got;
	uint32_t n = 0;
	while (gtr_reader_next(r, &got, NULL) == GTR_ITEM_EVENT) {
		const uint32_t round = n / np, i = n % np;
		cr_assert_eq(got.probe_id, 100 + i * 3);
		cr_assert_eq(got.vals[0].kind, GTR_VAL_INT);
		cr_assert_eq(got.vals[0].v.i, (int64_t)(i * round) - 5, "%u", n);
		n++;
	}
	cr_assert_eq(n, 3 * np);
	cr_assert_eq(gtr_reader_damage(r), 0, "%s", gtr_reader_error(r));
	gtr_reader_close(r);
}

/* Blocks appear in call order: metadata after the events appended before. */
Test(meta, metadata_after_pending_events)
{
	struct gtr_writer *w = open_w();
	struct gtr_event e = { .ts_ns = 5000, .probe_id = 3, .pid = 1, .tid = 1,
			       .cpu = GTR_CPU_UNKNOWN };
	cr_assert_eq(gtr_writer_event(w, &e), 0);
	const struct gtr_clock_sample c = { 6000, 7000, 8000 };
	cr_assert_eq(gtr_writer_clock(w, &c), 0);
	e.ts_ns = 6500;
	cr_assert_eq(gtr_writer_event(w, &e), 0);
	close_w(w);
	struct gtr_reader *r = open_r();
	struct gtr_event got;
	cr_assert_eq(gtr_reader_next(r, &got, NULL), GTR_ITEM_EVENT);
	cr_assert_eq(gtr_reader_nclocks(r), 0); /* not yet: written after it */
	cr_assert_eq(gtr_reader_next(r, &got, NULL), GTR_ITEM_EVENT);
	cr_assert_eq(gtr_reader_nclocks(r), 1);
	uint64_t rt;
	cr_assert_eq(gtr_reader_realtime(r, got.ts_ns, &rt), 0);
	cr_assert_eq(rt, 7500);
	gtr_reader_close(r);
}

Test(meta, seek_by_time)
{
	struct gtr_writer *w = open_w();
	for (int f = 0; f < 20; f++) {
		for (int i = 0; i < 10; i++) {
			struct gtr_event e = { .ts_ns = 100000 + f * 1000 + i * 10, .probe_id = 3,
					       .pid = 1, .tid = 1, .cpu = GTR_CPU_UNKNOWN };
			cr_assert_eq(gtr_writer_event(w, &e), 0);
		}
		if (f == 10) {
			struct gtr_probe p = { .id = 9, .binary_id = 1, .func = "late" };
			cr_assert_eq(gtr_writer_probe(w, &p), 0);
		}
		cr_assert_eq(gtr_writer_flush(w), 0);
	}
	close_w(w);
	struct gtr_reader *r = open_r();
	cr_assert_eq(gtr_reader_seek_ts(r, 100000 + 12 * 1000 + 50), 0, "%s", gtr_reader_error(r));
	struct gtr_event got;
	cr_assert_eq(gtr_reader_next(r, &got, NULL), GTR_ITEM_EVENT);
	cr_assert_eq(got.ts_ns, 100000 + 12 * 1000);
	cr_assert_not_null(gtr_reader_probe(r, 9)); /* metadata on the way was read */
	cr_assert(gtr_reader_summary(r)->present);
	cr_assert_eq(gtr_reader_summary(r)->nframes, 20);
	cr_assert_eq(gtr_reader_summary(r)->nprobes, 2);
	/* forward only: an earlier time stays at the current frame's next one */
	cr_assert_eq(gtr_reader_seek_ts(r, 0), 0);
	cr_assert_eq(gtr_reader_next(r, &got, NULL), GTR_ITEM_EVENT);
	cr_assert_eq(got.ts_ns, 100000 + 13 * 1000);
	gtr_reader_close(r);

	/* a file without summary cannot seek */
	size_t n;
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	n = (size_t)ftell(f);
	fclose(f);
	cr_assert_eq(truncate(path, (off_t)(n - 5)), 0);
	r = open_r();
	cr_assert_eq(gtr_reader_seek_ts(r, 5), -ENOENT);
	cr_assert(strstr(gtr_reader_error(r), "no frame index"), "%s", gtr_reader_error(r));
	gtr_reader_close(r);
}

/*
 * The input window starts at the size of a small file; when the file grows
 * after it was opened (a recording still being written), the window grows
 * to hold frames many times larger, and everything reads.
 */
/* splitmix64's finaliser: values that do not compress */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

Test(meta, window_grows_with_the_file)
{
	struct gtr_writer *w = open_w();
	const uint32_t n = 60000;
	for (uint32_t i = 0; i < n; i++) {
		struct gtr_event e = { .ts_ns = 1000 + i, .probe_id = 3, .pid = 1, .tid = 1,
				       .cpu = GTR_CPU_UNKNOWN, .nvals = 3 };
		e.vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = (int64_t)(i * 7919u % 100003u) - 5000 };
		e.vals[1] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = mix(i) };
		e.vals[2] = (struct gtr_value){ .kind = GTR_VAL_UINT, .v.u = i };
		cr_assert_eq(gtr_writer_event(w, &e), 0);
	}
	close_w(w);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	static uint8_t b[8 << 20];
	const size_t len = fread(b, 1, sizeof(b), f);
	fclose(f);
	cr_assert(len > 0 && len < sizeof(b));
	/* the first part: the file header and the host block (a window of
	 * 4 KiB); the rest holds blocks many times that */
	const size_t head = GTR_FILE_HDR_LEN + GTR_BLOCK_HDR_LEN + gtr_get_le32(b + GTR_FILE_HDR_LEN + 8);
	uint32_t biggest = 0;
	for (size_t o = head; o + GTR_BLOCK_HDR_LEN <= len; o += GTR_BLOCK_HDR_LEN + gtr_get_le32(b + o + 8))
		if (gtr_get_le32(b + o + 8) > biggest)
			biggest = gtr_get_le32(b + o + 8);
	cr_assert_lt(head, 1024);
	cr_assert_gt(biggest, 64 << 10, "largest block %u bytes", biggest);

	char part[96];
	snprintf(part, sizeof(part), "%s.part", path);
	f = fopen(part, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, head, f), head);
	fclose(f);
	char err[512];
	struct gtr_reader *r = gtr_reader_open(part, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	f = fopen(part, "ab");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b + head, 1, len - head, f), len - head);
	fclose(f);
	struct gtr_event got;
	uint32_t i = 0;
	while (gtr_reader_next(r, &got, NULL) == GTR_ITEM_EVENT) {
		cr_assert_eq(got.ts_ns, 1000 + i);
		cr_assert_eq(got.vals[0].v.i, (int64_t)(i * 7919u % 100003u) - 5000, "%u", i);
		cr_assert_eq(got.vals[1].v.u, mix(i), "%u", i);
		cr_assert_eq(got.vals[2].v.u, i);
		i++;
	}
	cr_assert_eq(i, n, "%s", gtr_reader_error(r));
	cr_assert_eq(gtr_reader_damage(r), 0, "%s", gtr_reader_error(r));
	cr_assert(!gtr_reader_truncated(r));
	cr_assert(gtr_reader_summary(r)->present);
	gtr_reader_close(r);
	unlink(part);
}

/*
 * Losses per (probe, CPU) at the limit: counts that add past 2^64-1 stop
 * there (UINT64_MAX reads "at least"), per CPU apart, and the writer's
 * total in the summary does too.
 */
Test(meta, loss_counts_saturate)
{
	struct gtr_writer *w = open_w();
	const uint64_t counts[] = { UINT64_MAX - 1, 5, UINT64_MAX };
	for (int i = 0; i < 3; i++) {
		const struct gtr_drop d = { .ts_ns = 2000 + i, .probe_id = 3, .count = counts[i],
					    .cpu = 1, .reason = GTR_DROP_BUFFER };
		cr_assert_eq(gtr_writer_drop(w, &d), 0);
	}
	const struct gtr_drop other = { .ts_ns = 2010, .probe_id = 3, .count = UINT64_MAX - 1,
					.cpu = 2, .reason = GTR_DROP_BUFFER };
	cr_assert_eq(gtr_writer_drop(w, &other), 0);
	close_w(w);
	struct gtr_reader *r = open_r();
	struct gtr_event got;
	struct gtr_drop d;
	int it, drops = 0;
	while ((it = gtr_reader_next(r, &got, &d)) > 0)
		drops += it == GTR_ITEM_DROP;
	cr_assert_eq(it, GTR_ITEM_END, "%s", gtr_reader_error(r));
	cr_assert_eq(drops, 4);
	cr_assert_eq(gtr_reader_nlosses(r), 2);
	for (uint32_t i = 0; i < 2; i++) {
		const struct gtr_loss *l = gtr_reader_loss_at(r, i);
		cr_assert_eq(l->probe_id, 3);
		if (l->cpu == 1) {
			cr_expect_eq(l->count, UINT64_MAX);
			cr_expect_eq(l->records, 3);
		} else {
			cr_expect_eq(l->cpu, 2);
			cr_expect_eq(l->count, UINT64_MAX - 1);
			cr_expect_eq(l->records, 1);
		}
	}
	cr_expect_eq(gtr_reader_summary(r)->drops, UINT64_MAX);
	cr_expect_eq(gtr_add_sat(UINT64_MAX - 1, 1), UINT64_MAX);
	cr_expect_eq(gtr_add_sat(UINT64_MAX, UINT64_MAX), UINT64_MAX);
	cr_expect_eq(gtr_add_sat(UINT64_MAX - 2, 1), UINT64_MAX - 1);
	gtr_reader_close(r);
}

/* Whether the file at `path` holds CBOR text `key` (its header byte first). */
static bool file_has_key(const char *key)
{
	const size_t n = strlen(key);
	char want[32], buf[1 << 16];
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	const size_t got = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	want[0] = (char)(0x60 + n);   /* major type 3, length n < 24 */
	memcpy(want + 1, key, n);
	return memmem(buf, got, want, n + 1) != NULL;
}

/*
 * A later file of a rotation gives the rate limit as rate_window_limit,
 * never rate_limit, which a reader of an older release would reckon the
 * windows with from the file's first event (spec/FORMAT.md, PROBE and
 * Versioning); today's reader takes the limit and the window from it, and
 * from rate_limit in a first file.
 */
Test(meta, rate_window_limit_of_a_later_rotated_file)
{
	struct gtr_writer *w = open_w();
	struct gtr_probe first = { .id = 4, .binary_id = 1, .func = "main.g", .rate_limit = 50 };
	struct gtr_probe later = { .id = 5, .binary_id = 1, .func = "main.h" };
	const struct gtr_rate_windows carried = { .rate = 50, .win = 7000, .kept = 12,
						  .last_ts = 7400 };
	gtr_rate_windows_carry(&carried, &later);
	cr_assert_eq(later.rate_limit, 0);
	cr_assert_eq(later.rate_window_limit, 50);
	cr_assert_eq(gtr_writer_probe(w, &first), 0);
	cr_assert_eq(gtr_writer_probe(w, &later), 0);
	close_w(w);
	cr_assert(file_has_key("rate_limit"));          /* probe 4 only */
	cr_assert(file_has_key("rate_window_limit"));
	cr_assert(file_has_key("rate_window_kept"));

	struct gtr_reader *r = open_r();
	cr_assert_eq(gtr_reader_preload(r), 0);
	const struct gtr_probe *p = gtr_reader_probe(r, 5);
	cr_assert_not_null(p);
	cr_assert_eq(p->rate_limit, 0);
	cr_assert_eq(p->rate_window_limit, 50);
	cr_assert_eq(gtr_probe_rate_limit(p), 50);
	struct gtr_rate_windows rw;
	gtr_rate_windows_init(&rw, p);
	cr_assert_eq(rw.rate, 50);
	cr_assert_eq(rw.win, 7000);
	cr_assert_eq(rw.kept, 12);
	cr_assert_eq(rw.last_ts, 7400);
	cr_assert_eq(rw.last_key, GTR_RATE_KEY_UNKNOWN);
	/* the window goes on: the 50th event from 7000 fills it */
	for (uint64_t i = 13; i < 50; i++)
		cr_assert_eq(gtr_rate_windows_add(&rw, 8000 + i * 5000000, 1, 9), GTR_RATE_KEPT);
	cr_assert_eq(gtr_rate_windows_add(&rw, 900000000, 1, 9), GTR_RATE_FILLED);

	p = gtr_reader_probe(r, 4);
	cr_assert_eq(p->rate_limit, 50);
	cr_assert_eq(p->rate_window_limit, 0);
	cr_assert_eq(gtr_probe_rate_limit(p), 50);
	gtr_rate_windows_init(&rw, p);
	cr_assert_eq(rw.rate, 50);
	cr_assert_eq(rw.kept, 0);       /* the first event opens the first window */
	p = gtr_reader_probe(r, 3);     /* no limit */
	cr_assert_eq(gtr_probe_rate_limit(p), 0);
	cr_assert_eq(gtr_reader_skipped(r), 0);
	gtr_reader_close(r);
}

/* Windows no longer known (off): a later file gives no limit under either key. */
Test(meta, rate_windows_off_carry_no_limit)
{
	struct gtr_probe p = { .rate_limit = 50 };
	const struct gtr_rate_windows off = { .rate = 50, .kept = 3, .off = true };

	gtr_rate_windows_carry(&off, &p);
	cr_assert_eq(p.rate_limit, 0);
	cr_assert_eq(p.rate_window_limit, 0);
	cr_assert_eq(gtr_probe_rate_limit(&p), 0);
}

/* A return probe of whole calls says so (PROBE whole_calls); the key is
 * left out of every other probe. */
Test(meta, whole_calls_round_trip)
{
	struct gtr_writer *w = open_w();
	struct gtr_probe ret = { .id = 6, .binary_id = 1, .kind = GTR_KIND_RETURN,
				 .func = "main.g", .rate_limit = 50, .whole_calls = true };
	struct gtr_probe other = { .id = 7, .binary_id = 1, .func = "main.h" };

	cr_assert_eq(gtr_writer_probe(w, &ret), 0);
	cr_assert_eq(gtr_writer_probe(w, &other), 0);
	close_w(w);
	cr_assert(file_has_key("whole_calls"));
	struct gtr_reader *r = open_r();
	cr_assert_eq(gtr_reader_preload(r), 0);
	cr_assert(gtr_reader_probe(r, 6)->whole_calls);
	cr_assert_not(gtr_reader_probe(r, 7)->whole_calls);
	cr_assert_not(gtr_reader_probe(r, 3)->whole_calls);
	gtr_reader_close(r);
}

/* A slice's element type and an array's length (arg elem, count) are kept
 * when given and left out otherwise; a reader gets "" and 0 without them. */
Test(meta, slice_elem_and_array_count_round_trip)
{
	struct gtr_writer *w = open_w();
	struct gtr_probe p = { .id = 8, .binary_id = 1, .func = "main.f", .nargs = 3 };

	p.args[0] = (struct gtr_arg){ .name = "id", .type_name = "main.ID",
				      .type = GTR_TYPE_SLICE, .size = 1,
				      .elem = "uint8", .count = 16 };
	p.args[1] = (struct gtr_arg){ .name = "xs", .type_name = "[]main.Celsius",
				      .type = GTR_TYPE_SLICE, .size = 8, .elem = "float64" };
	p.args[2] = (struct gtr_arg){ .name = "n", .type_name = "int",
				      .type = GTR_TYPE_INT, .size = 8 };
	cr_assert_eq(gtr_writer_probe(w, &p), 0);
	close_w(w);
	cr_assert(file_has_key("elem") && file_has_key("count"));
	struct gtr_reader *r = open_r();
	cr_assert_eq(gtr_reader_preload(r), 0);
	const struct gtr_probe *q = gtr_reader_probe(r, 8);
	cr_assert_str_eq(q->args[0].elem, "uint8");
	cr_assert_eq(q->args[0].count, 16);
	cr_assert_str_eq(q->args[1].elem, "float64");
	cr_assert_eq(q->args[1].count, 0);
	cr_assert_str_eq(q->args[2].elem ? q->args[2].elem : "", "");
	cr_assert_eq(q->args[2].count, 0);
	gtr_reader_close(r);
}
