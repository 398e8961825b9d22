/* SPDX-License-Identifier: MIT */
/*
 * Test driver of libgtr for tests/e2e/test_format_*.py, built by the tests
 * with ASan and UBSan from the sources:
 *
 *   format_tool gen FILE          writes a file using every block and record
 *   format_tool satdrops FILE     writes drop records whose counts overflow
 *   format_tool hostile FILE      writes a file whose every string holds
 *                                 terminal escape sequences
 *   format_tool events FILE       every event and drop as JSON Lines
 *   format_tool info [--json] FILE   report_info() (gotrace-report info)
 *   format_tool cuts FILE         the file cut at every byte: checks reading
 *   format_tool flips FILE        one byte flipped everywhere: checks reading
 *
 * cuts and flips print "ok N" or the first failure and exit 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gtr.h"
#include "info.h"

static void die(const char *fmt, const char *a)
{
	fprintf(stderr, "format_tool: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(1);
}

/* ------------------------------------------------------------- gen */

static int gen(const char *path)
{
	char err[512];
	const struct gtr_host host = {
		.hostname = "gen-host", .kernel = "6.1.0", .machine = "x86_64",
		.recorder = "format_tool gen", .start_mono_ns = 1000000000ull,
		.start_realtime_ns = 1700000000000000000ull, .start_boottime_ns = 1500000000ull,
	};
	struct gtr_writer *w = gtr_writer_create(path, GTR_W_FORCE, &host, err, sizeof(err));
	if (!w)
		die("%s", err);
#define CK(x) do { if (x) die("%s", gtr_writer_error(w)); } while (0)
	const struct gtr_binary b1 = { .id = 1, .path = "/srv/app", .build_id = "ab12",
		.go_build_id = "x/y", .go_version = "go1.21.5", .compiler = "gc",
		.arch = "x86-64", .abi = "ABIInternal", .pie = false, .has_dwarf = true };
	const struct gtr_binary b2 = { .id = 2, .path = "/srv/pie", .compiler = "gc",
		.arch = "x86-64", .abi = "ABIInternal", .pie = true, .stripped = true };
	CK(gtr_writer_binary(w, &b1));
	CK(gtr_writer_binary(w, &b2));
	struct gtr_probe p = { .id = 0, .binary_id = 1, .kind = GTR_KIND_ENTRY,
		.func = "main.add", .address = 0x401000, .spec = "main.add", .fmt = "%d %d",
		.nargs = 4, .nexprs = 2, .exprs = { 0, 1 } };
	p.args[0] = (struct gtr_arg){ "x", "int", GTR_TYPE_INT, 8 };
	p.args[1] = (struct gtr_arg){ "y", "uint64", GTR_TYPE_UINT, 8 };
	p.args[2] = (struct gtr_arg){ "s", "string", GTR_TYPE_STRING, 16 };
	p.args[3] = (struct gtr_arg){ "ok", "bool", GTR_TYPE_BOOL, 1 };
	CK(gtr_writer_probe(w, &p));
	struct gtr_probe q = { .id = 5000, .binary_id = 2, .kind = GTR_KIND_RETURN,
		.func = "main.(*T).M", .address = 0x1200, .spec = "r:main.(*T).M", .nargs = 1 };
	q.args[0] = (struct gtr_arg){ "~r0", "int", GTR_TYPE_INT, 8 };
	CK(gtr_writer_probe(w, &q));

	static struct gtr_symbol syms[20000];
	static char names[20000][32];
	for (int i = 0; i < 20000; i++) {
		/* written out of order on purpose */
		const int k = (i * 7919) % 20000;
		snprintf(names[i], sizeof(names[i]), "pkg%d.func%d", k % 13, k);
		syms[i] = (struct gtr_symbol){ .address = 0x401000 + 0x40 * (uint64_t)k,
					       .size = k % 5 ? 0x30 : 0, .name = names[i] };
	}
	CK(gtr_writer_symbols(w, 1, syms, 20000));
	const struct gtr_symbol psyms[] = {
		{ 0x1000, 0x100, "main.main" }, { 0x1200, 0x80, "main.(*T).M" },
		{ 0x1300, 0, "runtime.goexit" },
	};
	CK(gtr_writer_symbols(w, 2, psyms, 3));
	const struct gtr_process pr = { .ts_ns = 1000000100, .pid = 77, .binary_id = 1, .comm = "app" };
	CK(gtr_writer_process(w, &pr));
	const struct gtr_process pr2 = { .ts_ns = 1000000200, .pid = 78, .binary_id = 2, .comm = "pie" };
	CK(gtr_writer_process(w, &pr2));
	const struct gtr_mapping m1 = { .ts_ns = 1000000100, .pid = 77, .start = 0x401000,
		.end = 0x800000, .offset = 0x1000, .binary_id = 1, .path = "/srv/app",
		.vaddr = 0x401000 };
	const struct gtr_mapping m2 = { .ts_ns = 1000000200, .pid = 78, .start = 0x7f0000001000,
		.end = 0x7f0000002000, .offset = 0x1000, .binary_id = 2, .path = "/srv/pie" };
	const struct gtr_mapping m3 = { .ts_ns = 1000000200, .pid = 78, .start = 0x7f1000000000,
		.end = 0x7f1000100000, .offset = 0, .binary_id = UINT32_MAX,
		.path = "/usr/lib/libc.so.6" };
	CK(gtr_writer_mapping(w, &m1));
	CK(gtr_writer_mapping(w, &m2));
	CK(gtr_writer_mapping(w, &m3));

	struct gtr_event ev;
	uint64_t ts = 1000001000;
	uint64_t stack[5];
	for (uint32_t i = 0; i < 3000; i++) {
		if (i % 1000 == 0) {
			const struct gtr_clock_sample c = { ts, 1700000000000000000ull + ts - 1000000000ull + i,
							    ts + 500000000ull };
			CK(gtr_writer_clock(w, &c));
			CK(gtr_writer_task(w, 77, 77 + i / 1000, i ? "worker" : "app"));
		}
		memset(&ev, 0, sizeof(ev));
		ts += 900 + (i * 7919) % 300;
		ev.ts_ns = ts - (i % 17 == 5 ? 2000 : 0);
		ev.pid = 77;
		ev.tid = 77 + i / 1000;
		ev.goid = 1 + (i % 50 == 0);
		ev.cpu = i % 100 < 60 ? (i / 300) % 2 : GTR_CPU_UNKNOWN;
		if (i % 10 != 9) {
			ev.probe_id = 0;
			ev.kind = GTR_KIND_ENTRY;
			ev.nvals = 4;
			ev.vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = i % 33 == 0 ? -5 : 42 };
			ev.vals[1] = (struct gtr_value){ .kind = GTR_VAL_UINT,
							 .v.u = i % 97 == 0 ? UINT64_MAX - i : i };
			ev.vals[2].kind = GTR_VAL_STR;
			ev.vals[2].v.s.data = (const uint8_t *)"hello\xff world";
			ev.vals[2].v.s.len = i % 12;
			ev.vals[2].v.s.full_len = i % 5 ? i % 12 : 1000;
			ev.vals[3] = (struct gtr_value){ .kind = i % 7 ? GTR_VAL_BOOL : GTR_VAL_NONE,
							 .v.b = i & 1 };
			if (i % 4 == 0) {
				stack[0] = 0x401000 + 0x40 * (i % 20000) + 5;
				stack[1] = 0x401000 + 0x40 * ((i * 3) % 20000) + 9;
				stack[2] = 0x7f0000001210;
				stack[3] = 0x7f1000000010;
				stack[4] = 0x1;
				ev.nstack = 1 + i % 5;
				ev.stack = stack;
			}
		} else {
			ev.probe_id = 5000;
			ev.kind = GTR_KIND_RETURN;
			ev.pid = 78;
			ev.tid = 78;
			ev.nvals = 1;
			ev.vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT,
							 .v.i = i == 9 ? INT64_MIN : (int64_t)i * -3 };
			stack[0] = 0x7f0000001210;
			stack[1] = 0x7f0000001010;
			ev.nstack = 2;
			ev.stack = stack;
		}
		CK(gtr_writer_event(w, &ev));
		if (i % 700 == 699) {
			const struct gtr_drop d = { .ts_ns = ts, .probe_id = i % 1400 == 699 ? 0 : UINT32_MAX,
				.count = i, .cpu = i % 2100 == 699 ? GTR_CPU_UNKNOWN : 1,
				.since_ns = i == 699 ? 0 : ts - 500000,
				.reason = i % 3 == 1 ? GTR_DROP_RATE : GTR_DROP_BUFFER };
			CK(gtr_writer_drop(w, &d));
			CK(gtr_writer_flush(w));
		}
	}
	const struct gtr_process pe = { .ts_ns = ts + 1, .pid = 78, .binary_id = 2, .comm = "pie",
					.exited = true, .exit_code = -9 };
	CK(gtr_writer_process(w, &pe));
	if (gtr_writer_close(w, err, sizeof(err)))
		die("%s", err);
	return 0;
}

/* ------------------------------------------------------------- hostile */

/* Terminal escape sequences: retitle, clear, and a C1 CSI. */
#define ESC "\x1b]0;pwned\x07\x1b[2J\xc2\x9b"

/* Every string of a file holds escape sequences: host, binary, probe
 * (function, spec, format, argument names and types), symbols, process,
 * task and mapping names, and string values of entries and returns. */
static int hostile(const char *path)
{
	char err[512];
	const struct gtr_host host = {
		.hostname = "h" ESC, .kernel = "k" ESC, .machine = "m" ESC,
		.recorder = "r" ESC, .start_mono_ns = 1000000000ull,
		.start_realtime_ns = 1700000000000000000ull, .start_boottime_ns = 1500000000ull,
	};
	struct gtr_writer *w = gtr_writer_create(path, GTR_W_FORCE, &host, err, sizeof(err));
	if (!w)
		die("%s", err);
	const struct gtr_binary b = { .id = 1, .path = "/srv/" ESC, .build_id = "b" ESC,
		.go_build_id = "g" ESC, .go_version = "go" ESC, .compiler = "c" ESC,
		.arch = "a" ESC, .abi = "i" ESC, .go_version_source = "s" ESC,
		.goid_offset = 152, .goid_source = "t" ESC };
	CK(gtr_writer_binary(w, &b));
	for (uint32_t k = 0; k < 2; k++) {
		struct gtr_probe p = { .id = k, .binary_id = 1,
			.kind = k ? GTR_KIND_RETURN : GTR_KIND_ENTRY,
			.func = "main.f" ESC, .address = 0x401000,
			.spec = "main.f" ESC, .fmt = k ? "" : "%s " ESC,
			.nargs = 1, .nexprs = k ? 0 : 1, .exprs = { 0 } };
		p.args[0] = (struct gtr_arg){ "a" ESC, "string" ESC, GTR_TYPE_STRING, 16 };
		CK(gtr_writer_probe(w, &p));
	}
	const struct gtr_symbol syms[] = { { 0x401000, 0x100, "main.f" ESC },
					   { 0x402000, 0x100, "main.main" ESC } };
	CK(gtr_writer_symbols(w, 1, syms, 2));
	const struct gtr_process pr = { .ts_ns = 1000000100, .pid = 7, .binary_id = 1,
					.comm = "p" ESC };
	CK(gtr_writer_process(w, &pr));
	const struct gtr_mapping m = { .ts_ns = 1000000100, .pid = 7, .start = 0x401000,
		.end = 0x800000, .offset = 0x1000, .binary_id = 1, .path = "/srv/" ESC,
		.vaddr = 0x401000 };
	CK(gtr_writer_mapping(w, &m));
	CK(gtr_writer_task(w, 7, 7, "t" ESC));
	uint64_t stack[2] = { 0x401010, 0x402010 };
	for (uint32_t i = 0; i < 4; i++) {
		struct gtr_event ev = { .ts_ns = 1000001000 + i * 1000, .pid = 7, .tid = 7,
			.goid = 1, .cpu = 0, .probe_id = i & 1,
			.kind = i & 1 ? GTR_KIND_RETURN : GTR_KIND_ENTRY, .nvals = 1,
			.nstack = 2, .stack = stack };

		ev.vals[0].kind = GTR_VAL_STR;
		ev.vals[0].v.s.data = (const uint8_t *)"v" ESC;
		ev.vals[0].v.s.len = ev.vals[0].v.s.full_len = sizeof("v" ESC) - 1;
		CK(gtr_writer_event(w, &ev));
	}
	const struct gtr_drop d = { .ts_ns = 1000009000, .probe_id = 0, .count = 1, .cpu = 0,
				    .since_ns = 1000008000, .reason = GTR_DROP_BUFFER };
	CK(gtr_writer_drop(w, &d));
	if (gtr_writer_close(w, err, sizeof(err)))
		die("%s", err);
	return 0;
}

/* Two drop records of 2^64-1 lost events each, and one of suppressed
 * ones: the sums saturate. */
static int satdrops(const char *path)
{
	char err[512];
	const struct gtr_host host = { .hostname = "h", .kernel = "k", .machine = "m",
		.recorder = "format_tool satdrops", .start_mono_ns = 1000000000ull };
	struct gtr_writer *w = gtr_writer_create(path, GTR_W_FORCE, &host, err, sizeof(err));

	if (!w)
		die("%s", err);
	for (int i = 0; i < 3; i++) {
		const struct gtr_drop d = { .ts_ns = 1000001000 + i, .probe_id = UINT32_MAX,
			.count = UINT64_MAX, .cpu = GTR_CPU_UNKNOWN,
			.reason = i == 2 ? GTR_DROP_RATE : GTR_DROP_BUFFER };
		CK(gtr_writer_drop(w, &d));
	}
	if (gtr_writer_close(w, err, sizeof(err)))
		die("%s", err);
	return 0;
}

/* ------------------------------------------------------------- events */

static void jstr_bytes(const uint8_t *p, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	putchar('"');
}

static int events(const char *path)
{
	char err[768];
	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	static struct gtr_event ev;
	struct gtr_drop d;
	int it;

	if (!r)
		die("%s", err);
	while ((it = gtr_reader_next(r, &ev, &d)) > 0) {
		if (it == GTR_ITEM_DROP) {
			printf("{\"drop\":true,\"ts_ns\":%" PRIu64 ",\"probe\":", d.ts_ns);
			if (d.probe_id == UINT32_MAX)
				printf("null");
			else
				printf("%" PRIu32, d.probe_id);
			printf(",\"count\":%" PRIu64 ",\"cpu\":", d.count);
			if (d.cpu == GTR_CPU_UNKNOWN)
				printf("null");
			else
				printf("%" PRIu32, d.cpu);
			printf(",\"since_ns\":%" PRIu64 ",\"reason\":%" PRIu32 "}\n",
			       d.since_ns, d.reason);
			continue;
		}
		printf("{\"ts_ns\":%" PRIu64 ",\"probe\":%" PRIu32 ",\"kind\":\"%s\",\"pid\":%" PRIu32
		       ",\"tid\":%" PRIu32 ",\"goid\":%" PRIu64 ",\"cpu\":",
		       ev.ts_ns, ev.probe_id, gtr_kind_name(ev.kind), ev.pid, ev.tid, ev.goid);
		if (ev.cpu == GTR_CPU_UNKNOWN)
			printf("null");
		else
			printf("%" PRIu32, ev.cpu);
		printf(",\"comm\":");
		jstr_bytes((const uint8_t *)gtr_reader_comm(r, ev.pid, ev.tid),
			   strlen(gtr_reader_comm(r, ev.pid, ev.tid)));
		printf(",\"vals\":[");
		for (uint32_t i = 0; i < ev.nvals; i++) {
			const struct gtr_value *v = &ev.vals[i];
			printf("%s", i ? "," : "");
			switch (v->kind) {
			case GTR_VAL_INT:
				printf("[\"int\",%" PRId64 "]", v->v.i);
				break;
			case GTR_VAL_UINT:
				printf("[\"uint\",%" PRIu64 "]", v->v.u);
				break;
			case GTR_VAL_BOOL:
				printf("[\"bool\",%s]", v->v.b ? "true" : "false");
				break;
			case GTR_VAL_STR:
				printf("[\"str\",");
				jstr_bytes(v->v.s.data, v->v.s.len);
				printf(",%" PRIu64 "]", v->v.s.full_len);
				break;
			default:
				printf("null");
			}
		}
		printf("],\"stack\":[");
		for (uint32_t i = 0; i < ev.nstack; i++) {
			uint64_t off = 0;
			const char *s = gtr_reader_symbolize(r, ev.pid, ev.stack[i], &off);
			printf("%s[%" PRIu64 ",", i ? "," : "", ev.stack[i]);
			if (s)
				printf("\"%s\",%" PRIu64 "]", s, off);
			else
				printf("null,null]");
		}
		printf("]}\n");
	}
	if (it < 0)
		die("%s", gtr_reader_error(r));
	gtr_reader_close(r);
	return 0;
}

/* ------------------------------------------------------------- cuts, flips */

struct fp {
	uint64_t ts;
	uint32_t probe, pid, tid;
	int kind;
};

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	const long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(len ? (size_t)len : 1);
	if (!b || fread(b, 1, (size_t)len, f) != (size_t)len)
		die("cannot read %s", path);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static int memfd = -1;
static char mpath[64];

/* Reads buf[n] through a memfd; fingerprints of the events to out (max). */
static struct gtr_reader *read_buf(const uint8_t *buf, size_t n, struct fp *out, size_t max,
				   size_t *nev, int *end)
{
	char err[768];

	if (memfd < 0) {
		memfd = memfd_create("gtr", 0);
		snprintf(mpath, sizeof(mpath), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) || pwrite(memfd, buf, n, 0) != (ssize_t)n)
		die("%s", "memfd write failed");
	struct gtr_reader *r = gtr_reader_open(mpath, err, sizeof(err));
	*nev = 0;
	if (!r)
		return NULL;
	static struct gtr_event ev;
	int it;
	while ((it = gtr_reader_next(r, &ev, NULL)) > 0)
		if (it == GTR_ITEM_EVENT) {
			if (*nev < max)
				out[*nev] = (struct fp){ ev.ts_ns, ev.probe_id, ev.pid, ev.tid, ev.kind };
			(*nev)++;
		}
	*end = it;
	return r;
}

struct blk {
	size_t off, end;
	uint32_t type;
	size_t ev_first, ev_n; /* its events in the full file's sequence */
};

static int layout(const uint8_t *b, size_t n, struct blk *bl, int max)
{
	int k = 0;
	for (size_t off = 16; off + 16 <= n && k < max; k++) {
		uint32_t len, type;
		memcpy(&type, b + off + 4, 4);
		memcpy(&len, b + off + 8, 4);
		bl[k] = (struct blk){ off, off + 16 + len, type, 0, 0 };
		off += 16 + len;
	}
	return k;
}

static int same_fp(const struct fp *a, const struct fp *b)
{
	return a->ts == b->ts && a->probe == b->probe && a->pid == b->pid && a->tid == b->tid &&
	       a->kind == b->kind;
}

static int cuts_flips(const char *path, bool flips)
{
	size_t n, nall, ngot;
	int end;
	uint8_t *b = slurp(path, &n);
	static struct blk bl[4096];
	const int nb = layout(b, n, bl, 4096);
	struct fp *all = malloc(1000000 * sizeof(*all)), *got = malloc(1000000 * sizeof(*got));

	struct gtr_reader *r = read_buf(b, n, all, 1000000, &nall, &end);
	if (!r || gtr_reader_damage(r) || gtr_reader_truncated(r) || nall > 1000000)
		die("%s: the uncut file does not read cleanly", path);
	gtr_reader_close(r);
	/* events of each block: read each prefix ending at a block end */
	size_t before = 0;
	for (int k = 0; k < nb; k++) {
		size_t m;
		r = read_buf(b, bl[k].end, got, 1000000, &m, &end);
		gtr_reader_close(r);
		bl[k].ev_first = before;
		bl[k].ev_n = m - before;
		before = m;
	}
	size_t checks = 0;
	if (!flips) {
		for (size_t len = 0; len <= n; len++) {
			r = read_buf(b, len, got, 1000000, &ngot, &end);
			if (len < 16) {
				if (r)
					die("%s", "a file shorter than its header was accepted");
				continue;
			}
			size_t want = 0;
			bool boundary = len == 16;
			for (int k = 0; k < nb; k++)
				if (bl[k].end <= len) {
					want = bl[k].ev_first + bl[k].ev_n;
					boundary |= bl[k].end == len;
				}
			char msg[256];
			snprintf(msg, sizeof(msg), "cut at %zu: %zu events (want %zu), end %d, truncated %d, damage %llu",
				 len, ngot, want, end, r ? gtr_reader_truncated(r) : -1,
				 r ? (unsigned long long)gtr_reader_damage(r) : 0ull);
			if (!r || end != GTR_ITEM_END || ngot != want || gtr_reader_damage(r) ||
			    gtr_reader_truncated(r) != !boundary ||
			    (!boundary && !strstr(gtr_reader_error(r), "truncated at byte")))
				die("%s", msg);
			for (size_t i = 0; i < want; i++)
				if (!same_fp(&got[i], &all[i]))
					die("%s: an event differs", msg);
			gtr_reader_close(r);
			checks++;
		}
	} else {
		for (size_t off = 16; off < n; off++) {
			int hit = -1;
			for (int k = 0; k < nb; k++)
				if (bl[k].off <= off && off < bl[k].end)
					hit = k;
			{
				const uint8_t x = off & 1 ? 0x01 : 0xa5;
				b[off] ^= x;
				r = read_buf(b, n, got, 1000000, &ngot, &end);
				b[off] ^= x;
				char msg[256];
				snprintf(msg, sizeof(msg), "flip 0x%02x at %zu (block %d at %zu)", x, off, hit,
					 hit >= 0 ? bl[hit].off : 0);
				if (!r || end != GTR_ITEM_END)
					die("%s: reading failed", msg);
				if (!gtr_reader_damage(r) && !gtr_reader_truncated(r))
					die("%s: not noticed", msg);
				if (gtr_reader_damage(r) && !strstr(gtr_reader_error(r), "damaged block at byte"))
					die("%s: message without offset", msg);
				/* every event of every other events block is still read */
				size_t j = 0;
				for (int k = 0; k < nb; k++) {
					if (k == hit || bl[k].type != 4)
						continue;
					for (size_t e = bl[k].ev_first; e < bl[k].ev_first + bl[k].ev_n; e++) {
						while (j < ngot && !same_fp(&got[j], &all[e]))
							j++;
						if (j == ngot)
							die("%s: an event of another frame was lost", msg);
					}
				}
				gtr_reader_close(r);
				checks++;
			}
		}
	}
	printf("ok %zu checks, %d blocks, %zu events\n", checks, nb, nall);
	free(all);
	free(got);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "gen"))
		return gen(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "satdrops"))
		return satdrops(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "hostile"))
		return hostile(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "events"))
		return events(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "info"))
		return report_info(argv[2], false, stdout);
	if (argc == 4 && !strcmp(argv[1], "info") && !strcmp(argv[2], "--json"))
		return report_info(argv[3], true, stdout);
	if (argc == 3 && !strcmp(argv[1], "cuts"))
		return cuts_flips(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "flips"))
		return cuts_flips(argv[2], true);
	fprintf(stderr, "usage: format_tool gen|hostile|events|info [--json]|cuts|flips FILE\n");
	return 2;
}
