/* SPDX-License-Identifier: MIT */
/*
 * The text printer's lines made from parts kept per probe and per task
 * (report/out_text.c) are the lines it makes without them
 * (output_text_event(), no output object): over probes with names, blank
 * and unknown names, structs shown whole, values past the described ones,
 * tasks and names that change back and forth; and the -t and -T columns
 * written by hand are those of spec/OUTPUT.md, and so are its latencies
 * (rtime_fmt_duration()), as printf wrote them.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "timeparse.h"

static struct gtr_probe probes[3];

/* Probe 0: a, _, s; probe 1: a struct r{X, Y} and a bare word; probe 2: a
 * wide name and no argument names. */
static void make_probes(void)
{
	memset(probes, 0, sizeof(probes));
	for (int k = 0; k < 3; k++) {
		probes[k].id = 10 + (uint32_t)k;
		probes[k].fmt = "";
	}
	probes[0].func = "main.add";
	probes[0].nargs = 3;
	probes[0].args[0] = (struct gtr_arg){ "a", "int", GTR_TYPE_INT, 8, "" };
	probes[0].args[1] = (struct gtr_arg){ "_", "int", GTR_TYPE_INT, 8, "" };
	probes[0].args[2] = (struct gtr_arg){ "s", "string", GTR_TYPE_STRING, 16, "" };
	probes[1].func = "main.(*Server).handleRequestWithAVeryLongName";
	probes[1].nargs = 4;
	probes[1].args[0] = (struct gtr_arg){ "r", "main.Rect", GTR_TYPE_OTHER, 16, "" };
	probes[1].args[1] = (struct gtr_arg){ "r.X", "int", GTR_TYPE_INT, 8, "" };
	probes[1].args[2] = (struct gtr_arg){ "r.Y", "int", GTR_TYPE_INT, 8, "" };
	probes[1].args[3] = (struct gtr_arg){ "w", "uintptr", GTR_TYPE_WORD, 8, "" };
	probes[2].func = "main.\xe4\xb8\xad";     /* a wide character: 2 columns */
	probes[2].nargs = 1;
	probes[2].args[0] = (struct gtr_arg){ "", "uint", GTR_TYPE_UINT, 8, "" };
}

/* Event i: one of the probes, one of four tasks, values of each kind. */
static void make_event(struct gtr_event *ev, struct report_event *e, uint32_t i)
{
	static const char *const comms[] = { "app", "app", "w\xc3\xa9rker", "a\tb",
					     "longer-than-sixteen-bytes" };
	const struct gtr_probe *p = &probes[i % 3];

	memset(ev, 0, sizeof(*ev));
	memset(e, 0, sizeof(*e));
	ev->probe_id = p->id;
	ev->ts_ns = 1000000000ull + i;
	ev->pid = i % 4 == 3 ? 123456789 : 100;
	ev->tid = 100 + i / 2 % 3;
	ev->nvals = p->nargs + (i % 5 == 0);   /* sometimes one undescribed */
	for (uint32_t k = 0; k < ev->nvals; k++) {
		struct gtr_value *v = &ev->vals[k];
		if (k < p->nargs && p->args[k].type == GTR_TYPE_STRING) {
			v->kind = GTR_VAL_STR;
			v->v.s.data = (const uint8_t *)"h\"i";
			v->v.s.len = 3;
			v->v.s.full_len = 3 + i % 2;
		} else if (k < p->nargs && p->args[k].type == GTR_TYPE_INT) {
			v->kind = GTR_VAL_INT;
			v->v.i = (int64_t)i * (i % 2 ? -7919 : 104729);
		} else {
			v->kind = GTR_VAL_UINT;
			v->v.u = (uint64_t)i << 33;
		}
	}
	e->ev = ev;
	e->probe = p;
	e->comm = comms[i / 7 % 5];
}

Test(out_text, lines_from_kept_parts_are_the_lines_made_afresh)
{
	const struct output_opts oo = { .format = &out_text };
	struct output *o = output_new(&oo);
	struct buf got = BUF_INIT, want = BUF_INIT;
	struct gtr_event ev;
	struct report_event e;

	make_probes();
	for (uint32_t i = 0; i < 500; i++) {
		make_event(&ev, &e, i);
		buf_reset(&got);
		buf_reset(&want);
		cr_assert_eq(output_put(o, &got, &e), 1);
		output_text_event(&want, &e);
		cr_assert_str_eq(buf_cstr(&got), buf_cstr(&want), "event %u", i);
	}
	/* an undescribed probe: named by its id */
	make_event(&ev, &e, 1);
	e.probe = NULL;
	buf_reset(&got);
	output_put(o, &got, &e);
	cr_assert_str_eq(buf_cstr(&got),
			 "100     100     app             probe#11         8589934592 -7919 -7919 "
			 "8589934592\n");
	buf_free(&got);
	buf_free(&want);
	output_free(o);
}

Test(out_text, time_columns_by_hand)
{
	const struct output_opts oo = { .format = &out_text, .time_rel = true, .time_wall = true };
	struct output *o = output_new(&oo);
	struct buf b = BUF_INIT;
	struct gtr_event ev;
	struct report_event e;
	static const struct {
		uint64_t ts, t0, real;
		const char *line;
	} rows[] = {
		{ 5000, 5000, 1714564800000000000ull,
		  "12:00:00.000000 0.000000   " },
		{ 1000, 5000, 1714564800999999999ull,     /* before the start */
		  "12:00:00.999999 -0.000004  " },
		{ 123456789012345ull, 5000, 1714564859000001000ull,
		  "12:00:59.000001 123456.789007 " },
		{ 7000000000ull, 5000, 1714651199123456789ull,
		  "11:59:59.123456 6.999995   " },
	};

	setenv("TZ", "UTC", 1);
	make_probes();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char want[160];

		make_event(&ev, &e, 3);
		ev.ts_ns = rows[i].ts;
		e.t0_ns = rows[i].t0;
		e.real_ns = rows[i].real;
		buf_reset(&b);
		output_put(o, &b, &e);
		snprintf(want, sizeof(want), "%s%s", rows[i].line,
			 "123456789101     app             main.add         a=-23757 -23757 "
			 "s=\"h\\\"i\"...(len=4)\n");
		cr_assert_str_eq(buf_cstr(&b), want, "row %zu: %s", i, buf_cstr(&b));
	}
	buf_free(&b);
	output_free(o);
}

/* What rtime_fmt_duration() wrote with printf, its reference. */
static void duration_ref(char out[24], uint64_t ns)
{
	if (ns < 1000)
		snprintf(out, 24, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(out, 24, "%.3fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(out, 24, "%.3fms", ns / 1e6);
	else
		snprintf(out, 24, "%.3fs", ns / 1e9);
}

/* The latency column, written by hand, is printf's "%.3f" of the double:
 * every value up to 3 ms, values at and near each rounding half (ties go
 * to printf, which rounds the double), the unit edges, 2^53 and beyond. */
Test(out_text, durations_as_printf_rounds_them)
{
	char got[24], want[24];
	uint64_t x = 88172645463325252ull;
	static const uint64_t edges[] = {
		999, 1000, 999999, 1000000, 999999499, 999999500, 999999501, 999999999,
		1000000000, 1062500, 62500, 1999999500, 2500000, (1ull << 53) - 1,
		1ull << 53, UINT64_MAX,
	};

	for (uint64_t ns = 0; ns < 3000000; ns++) {
		duration_ref(want, ns);
		cr_assert_str_eq(rtime_fmt_duration(got, ns), want);
	}
	for (int i = 0; i < 2000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t ns = x >> (x % 64);
		if (i % 3 == 0)
			ns = ns / 1000 * 1000 + 499 + (x >> 60) % 3;
		else if (i % 3 == 1)
			ns = ns / 1000000 * 1000000 + 499998 + (x >> 59) % 5;
		duration_ref(want, ns);
		cr_assert_str_eq(rtime_fmt_duration(got, ns), want, "%llu", (unsigned long long)ns);
	}
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		duration_ref(want, edges[i]);
		cr_assert_str_eq(rtime_fmt_duration(got, edges[i]), want);
	}
}
