/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libgtr's copier (format/copy.c) as a merge uses it: a
 * merged input keeps each of its hosts at its own index past the hosts
 * before it, its renumbered pids go back to their pids on their hosts,
 * hosts of one pid space (gtr_id_space_share()) share processes and
 * binaries, and a selection (no id space) keeps hosts and host pids
 * (spec/FORMAT.md, "PEER"); a rotated file's rate limit keeps its key.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gtr.h"

#define RENUMBERED (1u << 22)

static char dir[64];

static const char *tpath(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) & 3;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void setup(void)
{
	strcpy(dir, "/tmp/gtr-copy-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	const char *const names[] = { "m.gtr", "c.gtr", "b2.gtr", "out.gtr", "sel.gtr" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(tpath(names[i]));
	rmdir(dir);
}

TestSuite(copy, .init = setup, .fini = teardown);

/* A host named `name` whose start is `start` (all three clocks). */
static struct gtr_host host(const char *name, uint64_t start)
{
	return (struct gtr_host){ .hostname = name, .kernel = "6.1.0", .machine = "x86_64",
				  .recorder = "test", .start_mono_ns = start,
				  .start_realtime_ns = 1700000000000000000ull + start,
				  .start_boottime_ns = start };
}

static void binary(struct gtr_writer *w, uint32_t id, uint32_t h, const char *build_id)
{
	const struct gtr_binary b = { .id = id, .path = "/srv/app", .build_id = build_id,
				      .go_build_id = "", .go_version = "go1.22.0",
				      .compiler = "gc", .arch = "x86-64", .abi = "ABIInternal",
				      .go_version_source = "", .goid_offset = -1,
				      .goid_source = "", .host = h };
	cr_assert_eq(gtr_writer_binary(w, &b), 0, "%s", gtr_writer_error(w));
	const struct gtr_probe p = { .id = id, .binary_id = id, .func = "main.f", .spec = "main.f",
				     .fmt = "", .args_source = "" };
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
}

static void process(struct gtr_writer *w, uint32_t pid, uint32_t h, uint32_t host_pid,
		    uint32_t bin)
{
	const struct gtr_process p = { .ts_ns = 100, .pid = pid, .binary_id = bin, .comm = "app",
				       .exit_code = GTR_EXIT_UNKNOWN, .host = h,
				       .host_pid = host_pid };
	cr_assert_eq(gtr_writer_process(w, &p), 0, "%s", gtr_writer_error(w));
}

static void event(struct gtr_writer *w, uint64_t ts, uint32_t probe, uint32_t pid)
{
	const struct gtr_event ev = { .ts_ns = ts, .probe_id = probe, .pid = pid, .tid = pid,
				      .cpu = GTR_CPU_UNKNOWN };
	cr_assert_eq(gtr_writer_event(w, &ev), 0, "%s", gtr_writer_error(w));
}

static void close_w(struct gtr_writer *w)
{
	char err[256];

	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
}

/* A recording of one host: binary and probe `id`, pid 100, an event at `ts`. */
static void write_one(const char *name, const struct gtr_host *h, uint32_t id,
		      const char *build_id, uint64_t ts)
{
	char err[256];
	struct gtr_writer *w = gtr_writer_create(tpath(name), 0, h, err, sizeof(err));

	cr_assert_not_null(w, "%s", err);
	binary(w, id, 0, build_id);
	process(w, 100, 0, 0, id);
	event(w, ts, id, 100);
	close_w(w);
}

/*
 * m.gtr: a merged file of alpha (host 0, pid 100) and beta (host 1, its
 * pid 100 renumbered to 2^22); c.gtr: gamma, pid 100; b2.gtr: another
 * recording of beta's pid 100, with beta's binary.
 */
static void write_inputs(void)
{
	char err[256];
	const struct gtr_host alpha = host("alpha", 1000), beta = host("beta", 2000);
	const struct gtr_host gamma = host("gamma", 3000), beta2 = host("beta", 4000);
	struct gtr_writer *w = gtr_writer_create(tpath("m.gtr"), 0, &alpha, err, sizeof(err));

	cr_assert_not_null(w, "%s", err);
	cr_assert_eq(gtr_writer_peer(w, 1, &beta), 0);
	binary(w, 1, 0, "aa");
	binary(w, 2, 1, "bb");
	process(w, 100, 0, 0, 1);
	process(w, RENUMBERED, 1, 100, 2);
	event(w, 5000, 1, 100);
	event(w, 5001, 2, RENUMBERED);
	close_w(w);

	write_one("c.gtr", &gamma, 7, "cc", 5002);
	write_one("b2.gtr", &beta2, 3, "bb", 5003);
}

static struct gtr_reader *open_r(const char *name)
{
	char err[512];
	struct gtr_reader *r = gtr_reader_open(tpath(name), err, sizeof(err));

	cr_assert_not_null(r, "%s", err);
	cr_assert_geq(gtr_reader_preload(r), 0);
	return r;
}

/* Copies every event of `r` through a copier with options `o`. */
static void copy_all(struct gtr_reader *r, struct gtr_writer *w, const struct gtr_copy_opts *o)
{
	struct gtr_copier *c = gtr_copier_new(r, w, o);
	struct gtr_event ev;
	struct gtr_drop d;

	cr_assert_not_null(c);
	cr_assert_eq(gtr_copier_start(c), 0);
	while (gtr_reader_next(r, &ev, &d) == GTR_ITEM_EVENT)
		cr_assert_eq(gtr_copier_event(c, &ev), 0, "%s", gtr_writer_error(w));
	cr_assert_eq(gtr_copier_finish(c), 0);
	gtr_copier_free(c);
}

/* The process record of output pid `pid` (the first), or NULL. */
static const struct gtr_process *proc_of(const struct gtr_reader *r, uint32_t pid)
{
	for (uint32_t i = 0; i < gtr_reader_nprocesses(r); i++)
		if (gtr_reader_process_at(r, i)->pid == pid)
			return gtr_reader_process_at(r, i);
	return NULL;
}

Test(copy, merged_input_keeps_its_hosts_and_pid_spaces)
{
	const char *const names[] = { "m.gtr", "c.gtr", "b2.gtr" };
	const uint32_t base[] = { 0, 2, 3 };
	struct gtr_reader *in[3];
	struct gtr_id_space *ids = gtr_id_space_new();
	char err[256];

	write_inputs();
	for (int i = 0; i < 3; i++)
		in[i] = open_r(names[i]);
	cr_assert_eq(gtr_reader_nhosts(in[0]), 2);
	cr_assert_not_null(ids);
	cr_assert_eq(gtr_id_space_share(ids, 1, 3), -EINVAL);
	cr_assert_eq(gtr_id_space_share(ids, 3, 1), 0);   /* b2.gtr: beta's machine */

	struct gtr_writer *w = gtr_writer_create(tpath("out.gtr"), 0, gtr_reader_host(in[0]),
						 err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert_eq(gtr_writer_peer(w, 1, gtr_reader_host_at(in[0], 1)), 0);
	cr_assert_eq(gtr_writer_peer(w, 2, gtr_reader_host(in[1])), 0);
	cr_assert_eq(gtr_writer_peer(w, 3, gtr_reader_host(in[2])), 0);
	for (int i = 0; i < 3; i++) {
		const struct gtr_copy_opts o = { .host = base[i], .ids = ids };
		copy_all(in[i], w, &o);
		gtr_reader_close(in[i]);
	}
	close_w(w);
	gtr_id_space_free(ids);

	struct gtr_reader *r = open_r("out.gtr");
	struct gtr_event ev;
	uint32_t pids[4], n = 0;

	cr_assert_eq(gtr_reader_nhosts(r), 4);
	cr_assert_str_eq(gtr_reader_host_at(r, 1)->hostname, "beta");
	cr_assert_eq(gtr_reader_host_at(r, 1)->start_mono_ns, 2000);
	cr_assert_str_eq(gtr_reader_host_at(r, 3)->hostname, "beta");
	cr_assert_eq(gtr_reader_host_at(r, 3)->start_mono_ns, 4000);
	while (n < 4 && gtr_reader_next(r, &ev, NULL) == GTR_ITEM_EVENT)
		pids[n++] = ev.pid;
	cr_assert_eq(n, 4);
	/* alpha keeps 100; beta's 100 is renumbered once more, as is gamma's;
	 * b2.gtr's 100 is beta's process: beta's output pid */
	cr_assert_eq(pids[0], 100);
	cr_assert_eq(pids[1], RENUMBERED);
	cr_assert_eq(pids[2], RENUMBERED + 1);
	cr_assert_eq(pids[3], RENUMBERED);
	cr_assert_eq(gtr_reader_pid_host(r, 100), 0);
	cr_assert_eq(gtr_reader_pid_host(r, RENUMBERED + 1), 2);
	const struct gtr_process *p = proc_of(r, RENUMBERED);
	cr_assert_not_null(p);
	cr_assert_eq(p->host, 1);
	cr_assert_eq(p->host_pid, 100);
	cr_assert_eq(proc_of(r, RENUMBERED + 1)->host_pid, 100);
	cr_assert_eq(proc_of(r, 100)->host_pid, 0);
	/* beta's binary is described once for both of its recordings */
	cr_assert_eq(gtr_reader_nbinaries(r), 3);
	cr_assert_eq(gtr_reader_binary_at(r, 1)->host, 1);
	cr_assert_eq(gtr_reader_binary_at(r, 2)->host, 2);
	gtr_reader_close(r);
}

Test(copy, selection_keeps_hosts_and_host_pids)
{
	char err[256];

	write_inputs();
	struct gtr_reader *in = open_r("m.gtr");
	struct gtr_writer *w = gtr_writer_create(tpath("sel.gtr"), 0, gtr_reader_host(in),
						 err, sizeof(err));
	cr_assert_not_null(w, "%s", err);
	cr_assert_eq(gtr_writer_peer(w, 1, gtr_reader_host_at(in, 1)), 0);
	copy_all(in, w, NULL);
	gtr_reader_close(in);
	close_w(w);

	struct gtr_reader *r = open_r("sel.gtr");
	struct gtr_event ev;

	cr_assert_eq(gtr_reader_nhosts(r), 2);
	cr_assert_eq(gtr_reader_next(r, &ev, NULL), GTR_ITEM_EVENT);
	cr_assert_eq(ev.pid, 100);
	cr_assert_eq(gtr_reader_next(r, &ev, NULL), GTR_ITEM_EVENT);
	cr_assert_eq(ev.pid, RENUMBERED);
	cr_assert_eq(gtr_reader_pid_host(r, RENUMBERED), 1);
	cr_assert_eq(proc_of(r, RENUMBERED)->host_pid, 100);
	cr_assert_eq(gtr_reader_binary_at(r, 1)->host, 1);
	gtr_reader_close(r);
}

/*
 * A rotated file's probe: the limit as rate_window_limit (or, written
 * before that key, as rate_limit) with the window current when it began.
 */
static void write_rotated(void)
{
	char err[256];
	const struct gtr_host h = host("alpha", 1000);
	struct gtr_writer *w = gtr_writer_create(tpath("c.gtr"), 0, &h, err, sizeof(err));

	cr_assert_not_null(w, "%s", err);
	binary(w, 1, 0, "aa");
	struct gtr_probe p = { .id = 2, .binary_id = 1, .func = "main.g", .spec = "main.g",
			       .fmt = "", .args_source = "", .rate_window_limit = 50,
			       .rate_window_ns = 4000, .rate_window_kept = 7,
			       .rate_window_last_ns = 4500 };
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
	p = (struct gtr_probe){ .id = 3, .binary_id = 1, .func = "main.h", .spec = "main.h",
				.fmt = "", .args_source = "", .rate_limit = 20,
				.rate_window_ns = 4100, .rate_window_kept = 3,
				.rate_window_last_ns = 4200 };
	cr_assert_eq(gtr_writer_probe(w, &p), 0, "%s", gtr_writer_error(w));
	process(w, 100, 0, 0, 1);
	event(w, 5000, 2, 100);
	event(w, 5001, 3, 100);
	close_w(w);
}

/* Copies c.gtr into `out` with `o`; the output's reader. */
static struct gtr_reader *copy_rotated(const char *out, const struct gtr_copy_opts *o)
{
	char err[256];
	struct gtr_reader *in = open_r("c.gtr");
	struct gtr_writer *w = gtr_writer_create(tpath(out), 0, gtr_reader_host(in),
						 err, sizeof(err));

	cr_assert_not_null(w, "%s", err);
	copy_all(in, w, o);
	gtr_reader_close(in);
	close_w(w);
	return open_r(out);
}

/*
 * A merge keeps a later rotated file's limit under rate_window_limit, which
 * older readers skip, its window moved onto the output's clock, and gives
 * a limit written with a window as rate_limit the same key; a selection
 * keeps neither (spec/FORMAT.md, PROBE).
 */
Test(copy, rotated_rate_limit_keeps_its_key)
{
	write_rotated();
	const struct gtr_copy_opts merge = { .ts_offset = 1000 };
	struct gtr_reader *r = copy_rotated("out.gtr", &merge);
	const struct gtr_probe *p = gtr_reader_probe(r, 2);

	cr_assert_not_null(p);
	cr_assert_eq(p->rate_limit, 0);
	cr_assert_eq(p->rate_window_limit, 50);
	cr_assert_eq(p->rate_window_ns, 5000);
	cr_assert_eq(p->rate_window_kept, 7);
	cr_assert_eq(p->rate_window_last_ns, 5500);
	p = gtr_reader_probe(r, 3);
	cr_assert_eq(p->rate_limit, 0);
	cr_assert_eq(p->rate_window_limit, 20);
	cr_assert_eq(p->rate_window_kept, 3);
	gtr_reader_close(r);

	const struct gtr_copy_opts sel = { .partial = true };
	r = copy_rotated("sel.gtr", &sel);
	for (uint32_t id = 2; id <= 3; id++) {
		p = gtr_reader_probe(r, id);
		cr_assert_not_null(p);
		cr_assert_eq(gtr_probe_rate_limit(p), 0, "probe %u", id);
	}
	gtr_reader_close(r);
}
