/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gen: writes valid .gtr seeds for the fuzz targets with libgtr's
 * writer, so that large and interleaved metadata is reachable by
 * mutation: random counts, sizes and order of binaries, probes (entry
 * and return, up to 12 arguments of every type), symbols, mappings,
 * processes, clock samples, task names, drops and events (with stacks).
 *
 *   fuzz_gen DIR N [BYTES]   writes DIR/gen-0 .. DIR/gen-(N-1), each at
 *                            most BYTES long (default 32768)
 *
 * Events are few (EVENTS_FEW a file, EVENTS_MANY in one file of eight):
 * the report's cost grows with the events it prints, while what it can
 * reach grows with the variety of the metadata around them. A file that
 * comes out longer than BYTES is written again with half the items, half
 * the events and half the symbols a block, until it fits.
 *
 * Each file starts with the two option bytes of fuzz_report (and of
 * fuzz_reader, whose mode 0 reads the rest as a whole file: the first
 * byte is a multiple of 4).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gtr.h"

#define EVENTS_FEW 150
#define EVENTS_MANY 1500

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

static struct gtr_writer *w;
static uint32_t nbin, nprobe, npid, nevent, max_event;
static uint32_t scale = 1;   /* divides the counts of one_file() */
static uint64_t ts = 1000000000000ull;
static struct gtr_probe probes[64];
static char names[64][48];

static void fail(const char *what, int rc)
{
	fprintf(stderr, "fuzz_gen: %s: %d: %s\n", what, rc, gtr_writer_error(w));
	exit(1);
}

#define CHECK(call, what) do { const int rc_ = (call); if (rc_) fail(what, rc_); } while (0)

static const char *const words[] = {
	"main", "net/http.(*conn).serve", "main.(*T).Get[...]", "runtime.goexit",
	"fmt.Sprintf", "main.add", "main.fib", "x", "", "日本語.f", "a.b.c.d.e.f.g",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static void binary(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/opt/app%u/bin", nbin);
	const struct gtr_binary b = {
		.id = nbin, .path = path, .build_id = rnd(2) ? "abcdef0123" : "",
		.go_build_id = "", .go_version = rnd(2) ? "go1.22.1" : "", .compiler = "gc",
		.arch = "x86-64", .abi = rnd(2) ? "ABIInternal" : "ABI0", .pie = rnd(2),
		.stripped = rnd(2), .has_dwarf = rnd(2), .go_version_source = "buildinfo",
	};
	CHECK(gtr_writer_binary(w, &b), "binary");
	nbin++;
}

static void probe(void)
{
	static const enum gtr_type types[] = {
		GTR_TYPE_WORD, GTR_TYPE_INT, GTR_TYPE_UINT, GTR_TYPE_BOOL, GTR_TYPE_PTR,
		GTR_TYPE_STRING, GTR_TYPE_FLOAT, GTR_TYPE_OTHER, GTR_TYPE_BYTES,
		GTR_TYPE_IFACE, GTR_TYPE_SLICE,
	};
	static const char *const argn[] = { "a", "name", "n", "ok", "", "err", "s" };
	if (nprobe >= 64 || !nbin)
		return;
	struct gtr_probe *p = &probes[nprobe];
	memset(p, 0, sizeof(*p));
	p->id = nprobe * (1 + rnd(3));
	for (uint32_t i = 0; i < nprobe; i++)
		if (probes[i].id == p->id)
			p->id = 1000 + nprobe;
	p->binary_id = rnd(nbin);
	/* returns often follow their entry's probe, to be paired */
	const bool ret = nprobe && rnd(2) && probes[nprobe - 1].kind == GTR_KIND_ENTRY;
	p->kind = ret ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
	if (ret) {
		memcpy(names[nprobe], names[nprobe - 1], sizeof(names[0]));
		p->binary_id = probes[nprobe - 1].binary_id;
	} else {
		snprintf(names[nprobe], sizeof(names[0]), "%s%u", words[rnd(NWORDS)], rnd(4));
	}
	p->func = names[nprobe];
	p->address = 0x401000 + 0x100 * rnd(64);
	p->spec = p->func;
	p->fmt = rnd(3) ? "" : "%d %s %x %c %%";
	p->nargs = rnd(13);
	for (uint32_t i = 0; i < p->nargs; i++) {
		p->args[i].type = types[rnd(sizeof(types) / sizeof(types[0]))];
		p->args[i].name = argn[rnd(7)];
		p->args[i].type_name = "T";
		p->args[i].size = 1u << rnd(4);
	}
	p->nexprs = p->nargs ? rnd(p->nargs + 1) : 0;
	for (uint32_t i = 0; i < p->nexprs; i++)
		p->exprs[i] = rnd(p->nargs);
	p->args_source = rnd(2) ? "DWARF" : "raw";
	CHECK(gtr_writer_probe(w, p), "probe");
	nprobe++;
}

static void symbols(void)
{
	static struct gtr_symbol syms[400];
	static char buf[400][24];
	const uint32_t n = rnd(400 / scale);

	if (!nbin)
		return;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "main.f%u", rnd(100000));
		syms[i].address = 0x401000 + 0x40 * (uint64_t)rnd(4096);
		syms[i].size = rnd(3) ? 0x40 : rnd(0x1000);
		syms[i].name = buf[i];
	}
	/* now and then for a binary never written: refused */
	const int rc = gtr_writer_symbols(w, rnd(nbin + 1), syms, n);
	if (rc && rc != -ENOENT)
		fail("symbols", rc);
}

static void mapping(void)
{
	const uint64_t start = 0x400000 + 0x1000ull * rnd(1024);
	const struct gtr_mapping m = {
		.ts_ns = ts, .pid = 100 + rnd(npid + 1), .start = start,
		.end = start + 0x1000ull * (1 + rnd(512)), .offset = 0x1000ull * rnd(4),
		.binary_id = rnd(4) ? rnd(nbin + 1) : UINT32_MAX, .path = "/opt/app0/bin",
		.vaddr = rnd(2) ? start : 0,
	};
	CHECK(gtr_writer_mapping(w, &m), "mapping");
}

static void process(void)
{
	const struct gtr_process p = {
		.ts_ns = ts, .pid = 100 + rnd(npid + 2), .binary_id = rnd(nbin + 1),
		.comm = words[rnd(NWORDS)], .exit_code = (int32_t)rnd(300) - 20,
		.exited = rnd(3) == 0,
	};
	if (p.pid >= 100 + npid)
		npid++;
	CHECK(gtr_writer_process(w, &p), "process");
}

static void event(void)
{
	static const uint8_t bytes[300] = "hello, world, a string that is long enough";
	static uint64_t stack[GTR_MAX_STACK];
	if (!nprobe || nevent >= max_event)
		return;
	nevent++;
	const struct gtr_probe *p = &probes[rnd(nprobe)];
	struct gtr_event e = {
		.ts_ns = ts, .probe_id = p->id, .kind = p->kind, .pid = 100 + rnd(npid + 1),
		.goid = rnd(6), .cpu = rnd(4) ? rnd(4) : GTR_CPU_UNKNOWN, .nvals = p->nargs,
	};
	e.tid = e.pid + rnd(3);
	for (uint32_t i = 0; i < e.nvals; i++) {
		struct gtr_value *v = &e.vals[i];
		switch (p->args[i].type) {
		case GTR_TYPE_INT:
			v->kind = GTR_VAL_INT;
			v->v.i = (int64_t)rnd(1000) - 500;
			break;
		case GTR_TYPE_BOOL:
			v->kind = GTR_VAL_BOOL;
			v->v.b = rnd(2);
			break;
		case GTR_TYPE_STRING: case GTR_TYPE_BYTES: case GTR_TYPE_IFACE:
		case GTR_TYPE_SLICE:
			v->kind = GTR_VAL_STR;
			v->v.s.data = bytes;
			v->v.s.len = rnd(3) ? rnd(20) : rnd(sizeof(bytes));
			v->v.s.full_len = v->v.s.len + (rnd(3) ? 0 : rnd(100000));
			break;
		case GTR_TYPE_FLOAT: case GTR_TYPE_OTHER:
			v->kind = rnd(2) ? GTR_VAL_NONE : GTR_VAL_UINT;
			v->v.u = rng;
			break;
		default:
			v->kind = GTR_VAL_UINT;
			v->v.u = rnd(4) ? rnd(100) : rng;
		}
	}
	if (!rnd(4)) {
		e.nstack = 1 + rnd(rnd(8) ? 8 : GTR_MAX_STACK);
		for (uint32_t i = 0; i < e.nstack; i++)
			stack[i] = 0x400000 + rnd(0x300000);
		e.stack = stack;
	}
	const int rc = gtr_writer_event(w, &e);
	if (rc && rc != -EINVAL)
		fail("event", rc);
}

static void one_file(const char *path, uint32_t seed)
{
	char err[256];
	const struct gtr_host host = {
		.hostname = "fuzz", .kernel = "6.1", .machine = "x86_64", .recorder = "gen",
		.start_mono_ns = ts, .start_realtime_ns = seed % 3 ? 1714564800000000000ull : 0,
		.start_boottime_ns = ts + 5,
	};
	rng = 0x9e3779b97f4a7c15ull * (seed + 1);
	nbin = nprobe = npid = nevent = 0;
	max_event = (seed % 8 == 5 ? EVENTS_MANY : 20 + rnd(EVENTS_FEW - 20)) / scale;
	ts = 1000000000000ull;
	w = gtr_writer_create(path, GTR_W_FORCE, &host, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "fuzz_gen: %s\n", err);
		exit(1);
	}
	binary();
	/* weights of each kind of block differ from file to file */
	uint32_t weight[10];
	for (int i = 0; i < 10; i++)
		weight[i] = rnd(8);
	weight[9] += 20;   /* events */
	uint32_t total = 0;
	for (int i = 0; i < 10; i++)
		total += weight[i];
	const uint32_t items = (20 + rnd(seed % 4 ? 400 : 3000)) / scale;
	for (uint32_t k = 0; k < items; k++) {
		uint32_t r = rnd(total), i = 0;
		while (r >= weight[i])
			r -= weight[i++];
		ts += rnd(4) ? rnd(100000) : 0;
		switch (i) {
		case 0: rnd(3) ? mapping() : binary(); break;
		case 1: probe(); break;
		case 2: symbols(); break;
		case 3: mapping(); break;
		case 4: process(); break;
		case 5: {
			const struct gtr_clock_sample c = {
				ts, 1714564800000000000ull + ts + rnd(1000), ts + 7 };
			CHECK(gtr_writer_clock(w, &c), "clock");
			break;
		}
		case 6:
			CHECK(gtr_writer_task(w, 100 + rnd(npid + 1), 100 + rnd(8),
					      words[rnd(NWORDS)]), "task");
			break;
		case 7: {
			if (rnd(3)) {
				event();
				break;
			}
			const struct gtr_drop d = {
				.ts_ns = ts, .probe_id = rnd(2) && nprobe ? probes[rnd(nprobe)].id : UINT32_MAX,
				.count = 1 + rnd(1000), .cpu = rnd(2) ? rnd(4) : GTR_CPU_UNKNOWN,
				.since_ns = rnd(2) ? ts - rnd(1000000) : 0, .reason = rnd(4),
			};
			CHECK(gtr_writer_drop(w, &d), "drop");
			break;
		}
		case 8:
			if (rnd(4) == 0)
				CHECK(gtr_writer_flush(w), "flush");
			else
				probe();
			break;
		default:
			for (uint32_t n = rnd(50); n--; ts += rnd(5000))
				event();
		}
	}
	/* some files end unclosed, as after a crash of the recorder */
	if (seed % 7 == 3) {
		CHECK(gtr_writer_flush(w), "flush");
		return;   /* the writer is leaked: this program ends soon */
	}
	if (gtr_writer_close(w, err, sizeof(err))) {
		fprintf(stderr, "fuzz_gen: %s\n", err);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char tmp[4096], out[4096];

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: fuzz_gen DIR N [BYTES]\n");
		return 2;
	}
	const uint32_t n = (uint32_t)atoi(argv[2]);
	const long max = argc == 4 ? atol(argv[3]) : 32768;
	if (max < 512) {
		fprintf(stderr, "fuzz_gen: BYTES %s is too small; give 512 or more\n", argv[3]);
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s/.tmp.gtr", argv[1]);
	for (uint32_t i = 0; i < n; i++) {
		struct stat st;
		/* the two option bytes count too */
		for (scale = 1;; scale *= 2) {
			one_file(tmp, i);
			if (stat(tmp, &st)) {
				perror(tmp);
				return 1;
			}
			if (st.st_size + 2 <= max || scale >= 1024)
				break;
		}
		FILE *in = fopen(tmp, "rb");
		snprintf(out, sizeof(out), "%s/gen-%u", argv[1], i);
		FILE *o = fopen(out, "wb");
		if (!in || !o) {
			perror(out);
			return 1;
		}
		/* option bytes: format i % 5 through fuzz_report's a % 5, mode 0 of
		 * fuzz_reader (a % 4 == 0), the other options from i */
		const uint8_t opt[2] = { (uint8_t)((4 * i) % 256 & ~3u), (uint8_t)(i * 37) };
		fwrite(opt, 1, 2, o);
		char buf[65536];
		size_t k;
		while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, k, o);
		fclose(in);
		if (fclose(o)) {
			perror(out);
			return 1;
		}
	}
	unlink(tmp);
	return 0;
}
