/* SPDX-License-Identifier: MIT */
/*
 * Benchmark of libgtr (make bench): on a recording-like stream of a Go loop
 * calling add(42, i) — one goroutine, timestamps ~10 us apart with the
 * jitter measured on a real recording (sd ~250 ns, 1% outliers up to
 * 40 us) — prints bytes per event on disk (target <= 3), encode rate
 * (target >= 5 M events/s on one core) and decode + filter
 * (goarg1 == 42) + count rate (target >= 20 M events/s).
 *
 *   format_bench [EVENTS] [REAL.gtr]
 *
 * With a recorded file, also prints its bytes per event and the decode
 * rate on it, and re-encodes its events to measure the encoder on them.
 * Figures only: nothing is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gtr.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Delta between calls: 10 us, jitter of sd ~250 ns, 1% outliers. */
static uint64_t delta_ns(void)
{
	int64_t j = 0;
	for (int k = 0; k < 4; k++)
		j += (int64_t)(xorshift() % 866) - 433;
	if (xorshift() % 100 == 0)
		j += (int64_t)(xorshift() % 40000);
	return (uint64_t)(10246 + j);
}

static long long file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) ? -1 : (long long)st.st_size;
}

static struct gtr_writer *writer(const char *path)
{
	char err[256];
	struct gtr_writer *w = gtr_writer_create(path, GTR_W_FORCE, NULL, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "format_bench: %s\n", err);
		exit(1);
	}
	const struct gtr_binary b = { .id = 0, .path = "./hot", .compiler = "gc",
				      .arch = "x86-64", .abi = "ABIInternal" };
	struct gtr_probe p = { .id = 0, .binary_id = 0, .kind = GTR_KIND_ENTRY,
			       .func = "main.add", .spec = "main.add", .nargs = 2 };
	p.args[0] = (struct gtr_arg){ "x", "int", GTR_TYPE_INT, 8 };
	p.args[1] = (struct gtr_arg){ "y", "int", GTR_TYPE_INT, 8 };
	if (gtr_writer_binary(w, &b) || gtr_writer_probe(w, &p)) {
		fprintf(stderr, "format_bench: %s\n", gtr_writer_error(w));
		exit(1);
	}
	return w;
}

/* Reads path, counts events whose first value is the integer 42. */
static void decode(const char *label, const char *path)
{
	char err[512];
	static struct gtr_event ev;
	uint64_t n = 0, hit = 0;
	double best = 1e9;

	for (int rep = 0; rep < 3; rep++) {
		struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
		if (!r) {
			fprintf(stderr, "format_bench: %s\n", err);
			exit(1);
		}
		const double t0 = now();
		n = hit = 0;
		int it;
		while ((it = gtr_reader_next(r, &ev, NULL)) > 0) {
			if (it != GTR_ITEM_EVENT)
				continue;
			n++;
			hit += ev.nvals && ev.vals[0].kind == GTR_VAL_INT && ev.vals[0].v.i == 42;
		}
		const double t = now() - t0;
		if (t < best)
			best = t;
		gtr_reader_close(r);
	}
	printf("%-34s %10.1f M events/s   (%llu events, %llu match goarg1 == 42; target >= 20)\n",
	       label, n / best / 1e6, (unsigned long long)n, (unsigned long long)hit);
}

static void synthetic(uint64_t n)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/gtr-bench-%d.gtr", getpid());
	struct gtr_event *evs = malloc(n * sizeof(*evs));
	uint64_t ts = 5000000000ull;

	for (uint64_t i = 0; i < n; i++) {
		struct gtr_event *e = &evs[i];
		ts += delta_ns();
		*e = (struct gtr_event){ .ts_ns = ts, .probe_id = 0, .kind = GTR_KIND_ENTRY,
					 .pid = 4242, .tid = 4242, .goid = 1,
					 .cpu = GTR_CPU_UNKNOWN, .nvals = 2 };
		e->vals[0] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = 42 };
		e->vals[1] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = (int64_t)i };
	}
	struct gtr_writer *w = writer(path);
	char err[256];
	const double t0 = now();
	for (uint64_t i = 0; i < n; i++)
		if (gtr_writer_event(w, &evs[i])) {
			fprintf(stderr, "format_bench: %s\n", gtr_writer_error(w));
			exit(1);
		}
	gtr_writer_close(w, err, sizeof(err));
	const double t = now() - t0;
	const long long size = file_size(path);
	printf("synthetic add(42, i), %llu events\n", (unsigned long long)n);
	printf("  %-32s %10.2f bytes/event (%lld bytes; target <= 3)\n", "on disk", (double)size / n,
	       size);
	printf("  %-32s %10.1f M events/s   (target >= 5)\n", "encode (writer, zstd, write)",
	       n / t / 1e6);
	decode("  decode + filter + count", path);
	unlink(path);
	free(evs);
}

static void real(const char *in)
{
	char err[512], path[64];
	static struct gtr_event ev;
	uint64_t n = 0;

	snprintf(path, sizeof(path), "/tmp/gtr-bench-re-%d.gtr", getpid());
	struct gtr_reader *r = gtr_reader_open(in, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "format_bench: %s\n", err);
		exit(1);
	}
	while (gtr_reader_next(r, &ev, NULL) > 0)
		n++;
	gtr_reader_close(r);
	printf("recorded file %s, %llu events and drops\n", in, (unsigned long long)n);
	printf("  %-32s %10.2f bytes/event (%lld bytes, all metadata included)\n", "on disk",
	       n ? (double)file_size(in) / n : 0.0, file_size(in));
	decode("  decode + filter + count", in);

	/* re-encode its events (values copied: they live in the reader) */
	struct gtr_event *evs = malloc((n ? n : 1) * sizeof(*evs));
	uint64_t k = 0;
	r = gtr_reader_open(in, err, sizeof(err));
	int it;
	while ((it = gtr_reader_next(r, &ev, NULL)) > 0 && k < n)
		if (it == GTR_ITEM_EVENT && ev.probe_id == 0 && ev.nvals <= 2) {
			evs[k] = ev;
			evs[k].probe_id = 0;
			evs[k].nstack = 0;
			for (uint32_t i = 0; i < ev.nvals; i++)
				if (evs[k].vals[i].kind == GTR_VAL_STR)
					evs[k].vals[i].kind = GTR_VAL_NONE;
			k++;
		}
	gtr_reader_close(r);
	struct gtr_writer *w = writer(path);
	const double t0 = now();
	for (uint64_t i = 0; i < k; i++)
		gtr_writer_event(w, &evs[i]);
	gtr_writer_close(w, err, sizeof(err));
	const double t = now() - t0;
	if (k)
		printf("  %-32s %10.1f M events/s   (%llu events of probe 0 re-encoded: %.2f bytes/event)\n",
		       "encode", k / t / 1e6, (unsigned long long)k, (double)file_size(path) / k);
	unlink(path);
	free(evs);
}

int main(int argc, char **argv)
{
	const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;

	synthetic(n ? n : 2000000);
	if (argc > 2)
		real(argv[2]);
	return 0;
}
