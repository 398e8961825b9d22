/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the filter language of `gotrace-report -f`
 * (report/filter*.c, spec/FILTER.md): the input is an expression; the
 * first byte picks whether it is compiled as a filter or as a --by field.
 * What compiles is checked against a probe, given a clock, evaluated on
 * an entry and on a paired return, and its errors printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

static const struct gtr_probe probe = {
	.id = 1, .kind = GTR_KIND_ENTRY, .func = "main.add", .spec = "main.add",
	.fmt = "", .nargs = 4, .args_source = "DWARF",
	.args = {
		{ "a", "int", GTR_TYPE_INT, 8 },
		{ "name", "string", GTR_TYPE_STRING, 16 },
		{ "ok", "bool", GTR_TYPE_BOOL, 1 },
		{ "u", "uint64", GTR_TYPE_UINT, 8 },
	},
};
static const struct gtr_probe rprobe = {
	.id = 2, .kind = GTR_KIND_RETURN, .func = "main.add", .spec = "r:main.add",
	.fmt = "", .nargs = 2, .args_source = "DWARF",
	.args = { { "", "int", GTR_TYPE_INT, 8 }, { "err", "string", GTR_TYPE_STRING, 16 } },
};
static const struct gtr_host host = {
	.hostname = "h", .kernel = "k", .machine = "x86_64", .recorder = "r",
	.start_mono_ns = 1000000000000ull, .start_realtime_ns = 1714564800000000000ull,
};

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	return devnull ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	char *expr = malloc(size);
	if (!expr)
		return 0;
	memcpy(expr, data + 1, size - 1);
	expr[size - 1] = '\0';
	struct filter_error err;
	const bool field = data[0] & 1;
	struct filter *f = field ? filter_compile_field(expr, &err) : filter_compile(expr, &err);
	if (!f) {
		if (err.column > size)
			abort();
		filter_error_print(devnull, "fuzz: ", expr, &err);
		free(expr);
		return 0;
	}
	const struct gtr_probe *const probes[] = { &probe, &rprobe };
	if (filter_check(f, probes, 2, devnull, &err) ||
	    filter_set_clock(f, &host, &err))
		filter_error_print(devnull, "fuzz: ", expr, &err);
	(void)filter_uses(f);
	(void)filter_expr(f);

	static const uint8_t str[] = "hello, world\xff";
	struct gtr_event entry = {
		.ts_ns = host.start_mono_ns + 5000, .probe_id = 1, .kind = GTR_KIND_ENTRY,
		.pid = 10, .tid = 11, .goid = 7, .cpu = data[0] & 2 ? 1 : GTR_CPU_UNKNOWN,
		.nvals = 4,
	};
	entry.vals[0].kind = GTR_VAL_INT;
	entry.vals[0].v.i = -42;
	entry.vals[1].kind = GTR_VAL_STR;
	entry.vals[1].v.s.data = str;
	entry.vals[1].v.s.len = sizeof(str) - 1;
	entry.vals[1].v.s.full_len = 100;
	entry.vals[2].kind = GTR_VAL_BOOL;
	entry.vals[2].v.b = true;
	entry.vals[3].kind = data[0] & 4 ? GTR_VAL_UINT : GTR_VAL_NONE;
	entry.vals[3].v.u = UINT64_MAX;
	struct gtr_event ret = {
		.ts_ns = entry.ts_ns + 123456, .probe_id = 2, .kind = GTR_KIND_RETURN,
		.pid = 10, .tid = 11, .goid = 7, .cpu = 0, .nvals = 2,
	};
	ret.vals[0].kind = GTR_VAL_INT;
	ret.vals[0].v.i = 3;
	ret.vals[1].kind = GTR_VAL_STR;
	ret.vals[1].v.s.data = str;
	ret.vals[1].v.s.len = 0;
	ret.vals[1].v.s.full_len = 0;

	const struct report_event re[] = {
		{ .ev = &entry, .probe = &probe, .comm = "worker", .binary = "/bin/app",
		  .t0_ns = host.start_mono_ns, .tracked = true },
		{ .ev = &ret, .probe = &rprobe, .comm = "", .binary = NULL,
		  .t0_ns = host.start_mono_ns, .entry = &entry, .entry_probe = &probe,
		  .latency_ns = 123456, .depth = 1 },
		{ .ev = &ret, .probe = NULL, .comm = "", .t0_ns = host.start_mono_ns,
		  .lost = true },
	};
	volatile uint64_t acc = 0;
	for (size_t i = 0; i < sizeof(re) / sizeof(re[0]); i++) {
		if (field) {
			struct filter_value v;
			if (filter_field(f, &re[i], &v) && v.kind == FV_STR && v.len)
				acc += v.s[v.len - 1];
		} else {
			acc += filter_match(f, &re[i]);
		}
	}
	const char *why = NULL;
	acc += filter_eval_errors(f, &why);
	if (why)
		acc += strlen(why);
	(void)acc;
	filter_free(f);
	free(expr);
	return 0;
}
