/* SPDX-License-Identifier: MIT */
/*
 * What the pairing tests (test_report_pair.c, test_pair_depth.c,
 * test_folded.c) share: an event of a probe as the read loop hands it to
 * report/pair.h.
 */
#ifndef TESTS_PAIR_FIXTURE_H
#define TESTS_PAIR_FIXTURE_H

#include <string.h>

#include "event.h"
#include "pair.h"

/*
 * Fills *ev (zeroed first) with an event of probe `pr` (its id and kind)
 * at `ts` in pid 10, tid 11 and goroutine `goid`, and returns the
 * report_event of it (task "app").
 */
static inline struct report_event fixture_event(struct gtr_event *ev, const struct gtr_probe *pr,
						uint64_t ts, uint64_t goid)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = ts;
	ev->probe_id = pr->id;
	ev->kind = pr->kind;
	ev->pid = 10;
	ev->tid = 11;
	ev->goid = goid;
	return (struct report_event){ .ev = ev, .probe = pr, .comm = "app" };
}

/* fixture_event() with one integer value `v`. */
static inline struct report_event fixture_event_int(struct gtr_event *ev,
						    const struct gtr_probe *pr, uint64_t ts,
						    uint64_t goid, int64_t v)
{
	struct report_event e = fixture_event(ev, pr, ts, goid);

	ev->nvals = 1;
	ev->vals[0].kind = GTR_VAL_INT;
	ev->vals[0].v.i = v;
	return e;
}

/* Fills pr[0] (id 1) and pr[1] (id 2) as the entry and return probes of
 * `func` in binary 1, and pp[] with their addresses. */
static inline void fixture_probe_pair(struct gtr_probe pr[2], const struct gtr_probe *pp[2],
				      const char *func)
{
	memset(pr, 0, 2 * sizeof(*pr));
	for (int i = 0; i < 2; i++) {
		pr[i].id = (uint32_t)i + 1;
		pr[i].binary_id = 1;
		pr[i].kind = i ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		pr[i].func = func;
		pr[i].spec = func;
		pr[i].fmt = "";
		pp[i] = &pr[i];
	}
}

/* fixture_event_int() fed to pairer `p` at once (pair_event()). */
static inline struct report_event fixture_feed(struct pairer *p, struct gtr_event *ev,
					       const struct gtr_probe *pr, uint64_t ts,
					       uint64_t goid, int64_t v)
{
	struct report_event e = fixture_event_int(ev, pr, ts, goid, v);

	pair_event(p, &e);
	return e;
}

#endif /* TESTS_PAIR_FIXTURE_H */
