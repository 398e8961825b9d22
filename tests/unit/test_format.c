/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libgtr (format/): CRC32C, writer/reader round trips of every
 * block and value kind, file creation rules, bad input (damaged input:
 * test_format_damage.c).
 */
#include "format_fixture.h"

TestSuite(format, .init = setup, .fini = teardown);


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


Test(format, names)
{
	cr_assert_str_eq(gtr_type_name(GTR_TYPE_STRING), "string");
	cr_assert_str_eq(gtr_type_name(GTR_TYPE_WORD), "word");
	cr_assert_str_eq(gtr_type_name((enum gtr_type)99), "other");
	cr_assert_eq(gtr_type_from_name("ptr", 3), GTR_TYPE_PTR);
	cr_assert_eq(gtr_type_from_name("complex128", 10), GTR_TYPE_OTHER);
	cr_assert_str_eq(gtr_kind_name(GTR_KIND_RETURN), "return");
}
