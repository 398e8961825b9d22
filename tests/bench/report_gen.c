/* SPDX-License-Identifier: MIT */
/*
 * report_gen: writes synthetic .gtr traces with libgtr's writer, for the
 * gotrace-report end-to-end tests and benchmark (no BPF needed).
 *
 *   report_gen calls OUT.gtr ITERATIONS   several goroutines calling
 *       main.add(a, b, name) -> int, recursive main.fib(n) -> int (depth 3),
 *       main.log(msg) (entry probe only), plus one return without entry and
 *       one call left open at the end; timestamps and latencies are exact
 *       (see tests/e2e/test_report_synthetic.py for the arithmetic).
 *   report_gen flat OUT.gtr EVENTS        main.add entry/return pairs on
 *       one goroutine: the benchmark's million-event file.
 *   report_gen upfront OUT.gtr N          N functions, each with an entry
 *   report_gen interleaved OUT.gtr N      and a return probe, called once:
 *       all probes before the events, or each pair of probes just before
 *       its call, between event frames (as mass attach writes them).
 *
 * Host clock anchor: CLOCK_MONOTONIC 1000 s = 2024-05-01T12:00:00Z. The
 * host is "gen", or $REPORT_GEN_HOST with a PROCESS record of pid 100 (a
 * merge then files pid 100 under that host); its start then reads the three
 * clocks up to a millisecond earlier, by a hash of the name, so that
 * recordings of two hosts are two recordings to a merge (events keep their
 * times and wall-clock times).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gtr.h"

#define T0 1000000000000ull          /* monotonic ns of the first event */
#define REAL0 1714564800000000000ull /* 2024-05-01T12:00:00Z */

static struct gtr_writer *w;

static void die(const char *what, int rc)
{
	fprintf(stderr, "report_gen: %s failed (%d): %s\n", what, rc, gtr_writer_error(w));
	exit(1);
}

static void probe(uint32_t id, enum gtr_kind kind, const char *func, const char *fmt,
		  int nargs, const char *const *names, const enum gtr_type *types)
{
	struct gtr_probe p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.id = id;
	p.binary_id = 1;
	p.kind = kind;
	p.func = func;
	p.spec = func;
	p.fmt = fmt;
	p.address = 0x401000 + id * 0x40;
	p.nargs = (uint32_t)nargs;
	for (int i = 0; i < nargs; i++) {
		p.args[i].name = names[i];
		p.args[i].type_name = types[i] == GTR_TYPE_STRING ? "string" : "int";
		p.args[i].type = types[i];
		p.args[i].size = types[i] == GTR_TYPE_STRING ? 16 : 8;
	}
	if (fmt[0]) {
		p.nexprs = (uint32_t)nargs;
		for (int i = 0; i < nargs; i++)
			p.exprs[i] = (uint32_t)i;
	}
	if ((rc = gtr_writer_probe(w, &p)))
		die("gtr_writer_probe", rc);
}

static struct gtr_event ev;

static void begin(uint64_t ts, uint32_t probe_id, enum gtr_kind kind, uint32_t pid,
		  uint32_t tid, uint64_t goid)
{
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.probe_id = probe_id;
	ev.kind = kind;
	ev.pid = pid;
	ev.tid = tid;
	ev.goid = goid;
	ev.cpu = tid % 4;
}

static void vint(int64_t v)
{
	ev.vals[ev.nvals].kind = GTR_VAL_INT;
	ev.vals[ev.nvals++].v.i = v;
}

static void vstr(const char *s)
{
	ev.vals[ev.nvals].kind = GTR_VAL_STR;
	ev.vals[ev.nvals].v.s.data = (const uint8_t *)s;
	ev.vals[ev.nvals].v.s.len = (uint32_t)strlen(s);
	ev.vals[ev.nvals++].v.s.full_len = strlen(s);
}

static void emit(void)
{
	int rc = gtr_writer_event(w, &ev);

	if (rc)
		die("gtr_writer_event", rc);
}

/* report_bench.c includes this file with REPORT_GEN_LIB to call it. */
#ifdef REPORT_GEN_LIB
static int report_gen_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
	static const char *const add_names[] = { "a", "b", "name" };
	static const enum gtr_type add_types[] = { GTR_TYPE_INT, GTR_TYPE_INT, GTR_TYPE_STRING };
	static const char *const ret_names[] = { "~r0" };
	static const enum gtr_type int1[] = { GTR_TYPE_INT };
	static const char *const fib_names[] = { "n" };
	static const char *const log_names[] = { "msg" };
	static const enum gtr_type str1[] = { GTR_TYPE_STRING };
	struct gtr_host host = { 0 };
	struct gtr_binary bin = { 0 };
	char err[512], name[64];
	int rc;

	if (argc != 4 || (strcmp(argv[1], "calls") && strcmp(argv[1], "flat") &&
			  strcmp(argv[1], "upfront") && strcmp(argv[1], "interleaved"))) {
		fprintf(stderr, "usage: report_gen calls|flat|upfront|interleaved OUT.gtr N\n");
		return 2;
	}
	const unsigned long n = strtoul(argv[3], NULL, 10);
	host.hostname = getenv("REPORT_GEN_HOST") ? getenv("REPORT_GEN_HOST") : "gen";
	host.kernel = "6.1.0";
	host.machine = "x86_64";
	host.recorder = "report_gen";
	host.start_mono_ns = T0;
	if (getenv("REPORT_GEN_HOST")) {
		uint64_t h = 0;

		for (const char *c = host.hostname; *c; c++)
			h = h * 31 + (unsigned char)*c;
		host.start_mono_ns -= 1000 * (1 + h % 999);
	}
	host.start_realtime_ns = REAL0 - (T0 - host.start_mono_ns);
	host.start_boottime_ns = host.start_mono_ns;
	w = gtr_writer_create(argv[2], GTR_W_FORCE, &host, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "report_gen: %s\n", err);
		return 1;
	}
	bin.id = 1;
	bin.path = "/srv/app";
	bin.build_id = bin.go_build_id = "";
	bin.go_version = "go1.19.8";
	bin.compiler = "gc";
	bin.arch = "x86-64";
	bin.abi = "ABIInternal";
	bin.has_dwarf = true;
	if ((rc = gtr_writer_binary(w, &bin)))
		die("gtr_writer_binary", rc);
	probe(1, GTR_KIND_ENTRY, "main.add", "", 3, add_names, add_types);
	probe(2, GTR_KIND_RETURN, "main.add", "", 1, ret_names, int1);
	probe(3, GTR_KIND_ENTRY, "main.fib", "", 1, fib_names, int1);
	probe(4, GTR_KIND_RETURN, "main.fib", "", 1, ret_names, int1);
	probe(5, GTR_KIND_ENTRY, "main.log", "log: %s", 1, log_names, str1);
	if ((rc = gtr_writer_task(w, 100, 100, "app")) || (rc = gtr_writer_task(w, 100, 101, "app-worker")))
		die("gtr_writer_task", rc);
	if (getenv("REPORT_GEN_HOST")) {
		const struct gtr_process proc = { .ts_ns = T0, .pid = 100, .binary_id = 1,
						  .comm = "app", .exit_code = GTR_EXIT_UNKNOWN };

		if ((rc = gtr_writer_process(w, &proc)))
			die("gtr_writer_process", rc);
	}

	if (!strcmp(argv[1], "upfront") || !strcmp(argv[1], "interleaved")) {
		/* n functions main.f<i>, probes 100+2i (entry) and 101+2i (return) */
		const bool inter = !strcmp(argv[1], "interleaved");
		static char fname[64];

		for (unsigned long i = 0; !inter && i < n; i++) {
			snprintf(fname, sizeof(fname), "main.f%lu", i);
			probe(100 + 2 * (uint32_t)i, GTR_KIND_ENTRY, fname, "", 1, fib_names, int1);
			probe(101 + 2 * (uint32_t)i, GTR_KIND_RETURN, fname, "", 1, ret_names, int1);
		}
		for (unsigned long i = 0; i < n; i++) {
			if (inter) {
				snprintf(fname, sizeof(fname), "main.f%lu", i);
				probe(100 + 2 * (uint32_t)i, GTR_KIND_ENTRY, fname, "", 1, fib_names, int1);
				probe(101 + 2 * (uint32_t)i, GTR_KIND_RETURN, fname, "", 1, ret_names, int1);
			}
			begin(T0 + i * 1000, 100 + 2 * (uint32_t)i, GTR_KIND_ENTRY, 100, 100, 1);
			vint((int64_t)i);
			emit();
			begin(T0 + i * 1000 + 500, 101 + 2 * (uint32_t)i, GTR_KIND_RETURN, 100, 100, 1);
			vint((int64_t)i);
			emit();
			if (inter && (rc = gtr_writer_flush(w)))
				die("gtr_writer_flush", rc);
		}
	} else if (!strcmp(argv[1], "flat")) {
		/* n events: entry/return pairs of main.add, 1 us apart, latency 500 ns */
		for (unsigned long i = 0; i < n; i++) {
			const uint64_t k = i / 2;
			if (i % 2 == 0) {
				begin(T0 + k * 1000, 1, GTR_KIND_ENTRY, 100, 100, 1);
				vint((int64_t)(k % 100));
				vint(7);
				snprintf(name, sizeof(name), "n%lu", (unsigned long)(k % 10));
				vstr(name);
			} else {
				begin(T0 + k * 1000 + 500, 2, GTR_KIND_RETURN, 100, 100, 1);
				vint((int64_t)(k % 100) + 7);
			}
			emit();
		}
	} else {
		/*
		 * Iteration i (i from 0), at t = T0 + i * 1 ms, on goroutine
		 * g = 1 + i % 3 (tid 100 for g 1, else 101):
		 *   +0      add(i, 2i, "name-i") entry
		 *   +10us   fib(3) entry  (nested in add)
		 *   +20us     fib(2) entry
		 *   +30us     fib(2) return 1       (latency 10us)
		 *   +40us   fib(3) return 2         (latency 30us)
		 *   +(100 + 100 * (i % 10))us add return 3i  (latency 100..1000us)
		 *   +900us  log("done i")           (no return probe)
		 */
		for (unsigned long i = 0; i < n; i++) {
			const uint64_t t = T0 + i * 1000000;
			const uint64_t g = 1 + i % 3;
			const uint32_t tid = g == 1 ? 100 : 101;
			begin(t, 1, GTR_KIND_ENTRY, 100, tid, g);
			vint((int64_t)i);
			vint(2 * (int64_t)i);
			snprintf(name, sizeof(name), "name-%lu", i);
			vstr(name);
			emit();
			begin(t + 10000, 3, GTR_KIND_ENTRY, 100, tid, g);
			vint(3);
			emit();
			begin(t + 20000, 3, GTR_KIND_ENTRY, 100, tid, g);
			vint(2);
			emit();
			begin(t + 30000, 4, GTR_KIND_RETURN, 100, tid, g);
			vint(1);
			emit();
			begin(t + 40000, 4, GTR_KIND_RETURN, 100, tid, g);
			vint(2);
			emit();
			begin(t + 100000 + 100000 * (i % 10), 2, GTR_KIND_RETURN, 100, tid, g);
			vint(3 * (int64_t)i);
			emit();
			begin(t + 900000, 5, GTR_KIND_ENTRY, 100, tid, g);
			snprintf(name, sizeof(name), "done %lu", i);
			vstr(name);
			emit();
		}
		const uint64_t t = T0 + n * 1000000;
		/* a return of main.add on goroutine 7 that has no entry */
		begin(t, 2, GTR_KIND_RETURN, 100, 101, 7);
		vint(-1);
		emit();
		/* main.add on goroutine 8 that never returns */
		begin(t + 1000, 1, GTR_KIND_ENTRY, 100, 101, 8);
		vint(-5);
		vint(-6);
		vstr("open");
		emit();
	}
	if ((rc = gtr_writer_close(w, err, sizeof(err)))) {
		fprintf(stderr, "report_gen: %s\n", err);
		return 1;
	}
	return 0;
}
