/* SPDX-License-Identifier: MIT */
/*
 * What the unit tests of the filter language share (test_filter.c,
 * test_filter_v2.c): two probes, an event of each, and helpers that
 * compile and evaluate an expression or check that it is refused.
 */
#ifndef GOTRACE_TEST_FILTER_FIXTURE_H
#define GOTRACE_TEST_FILTER_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"

/* ------------------------------------------------------------ fixtures */

/* main.add(a int, b int, name string); probe id 1 */
static struct gtr_probe probe_add;
/* main.str(s string, flag bool, p *T, f float64, w word); probe id 2 */
static struct gtr_probe probe_str;
static struct gtr_event ev;
static struct report_event rev;

static inline void set_arg(struct gtr_probe *p, uint32_t i, const char *name,
		    enum gtr_type t, uint32_t size)
{
	p->args[i].name = name;
	p->args[i].type_name = "";
	p->args[i].type = t;
	p->args[i].size = size;
	if (p->nargs <= i)
		p->nargs = i + 1;
}

static inline void setup(void)
{
	memset(&probe_add, 0, sizeof(probe_add));
	probe_add.id = 1;
	probe_add.func = "main.add";
	probe_add.fmt = "";
	set_arg(&probe_add, 0, "a", GTR_TYPE_INT, 8);
	set_arg(&probe_add, 1, "b", GTR_TYPE_INT, 8);
	set_arg(&probe_add, 2, "name", GTR_TYPE_STRING, 16);

	memset(&probe_str, 0, sizeof(probe_str));
	probe_str.id = 2;
	probe_str.func = "main.(*T).str";
	probe_str.fmt = "";
	set_arg(&probe_str, 0, "s", GTR_TYPE_STRING, 16);
	set_arg(&probe_str, 1, "flag", GTR_TYPE_BOOL, 1);
	set_arg(&probe_str, 2, "p", GTR_TYPE_PTR, 8);
	set_arg(&probe_str, 3, "f", GTR_TYPE_FLOAT, 8);
	set_arg(&probe_str, 4, "", GTR_TYPE_WORD, 8);

	memset(&ev, 0, sizeof(ev));
	rev.ev = &ev;
	rev.probe = NULL;
	rev.comm = "app";
}

static inline void ev_add(int64_t a, int64_t b, const char *name)
{
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 1;
	ev.pid = 100;
	ev.tid = 101;
	ev.goid = 7;
	ev.nvals = 3;
	ev.vals[0].kind = GTR_VAL_INT;
	ev.vals[0].v.i = a;
	ev.vals[1].kind = GTR_VAL_INT;
	ev.vals[1].v.i = b;
	ev.vals[2].kind = GTR_VAL_STR;
	ev.vals[2].v.s.data = (const uint8_t *)name;
	ev.vals[2].v.s.len = (uint32_t)strlen(name);
	ev.vals[2].v.s.full_len = strlen(name);
	rev.probe = &probe_add;
	rev.comm = "app";
}

static inline void ev_str(const char *s, size_t len, uint64_t full_len, bool flag,
		   uint64_t p, double f, uint64_t w)
{
	memset(&ev, 0, sizeof(ev));
	ev.probe_id = 2;
	ev.pid = 200;
	ev.tid = 202;
	ev.goid = 9;
	ev.nvals = 5;
	ev.vals[0].kind = GTR_VAL_STR;
	ev.vals[0].v.s.data = (const uint8_t *)s;
	ev.vals[0].v.s.len = (uint32_t)len;
	ev.vals[0].v.s.full_len = full_len;
	ev.vals[1].kind = GTR_VAL_BOOL;
	ev.vals[1].v.b = flag;
	ev.vals[2].kind = GTR_VAL_UINT;
	ev.vals[2].v.u = p;
	ev.vals[3].kind = GTR_VAL_UINT;
	memcpy(&ev.vals[3].v.u, &f, sizeof(f));
	ev.vals[4].kind = GTR_VAL_UINT;
	ev.vals[4].v.u = w;
	rev.probe = &probe_str;
	rev.comm = "worker";
}

/* Compiles `expr` (must succeed) and evaluates it on the current event. */
static inline bool m(const char *expr)
{
	struct filter_error err;
	struct filter *f = filter_compile(expr, &err);

	cr_assert(f, "filter '%s' rejected: %s at column %u", expr, err.msg, err.column);
	const bool r = filter_match(f, &rev);
	filter_free(f);
	return r;
}

/* Compiles `expr`, which must fail at `column` with a message containing
 * `needle`. */
static inline void bad(const char *expr, unsigned column, const char *needle)
{
	struct filter_error err;
	struct filter *f = filter_compile(expr, &err);

	cr_assert_null(f, "filter '%s' was accepted", expr);
	cr_expect_eq(err.column, column, "'%s': column %u, expected %u (%s)", expr,
		     err.column, column, err.msg);
	cr_expect(strstr(err.msg, needle), "'%s': message '%s' lacks '%s'", expr,
		  err.msg, needle);
}

#endif
