/* SPDX-License-Identifier: MIT */
/*
 * The view of one event that the filter and the output formatters work on:
 * the decoded event, the probe that produced it, the name of its thread and
 * what pairing (report/pair.h) found out about it. Built by the read loop
 * from libgtr (gtr_reader_next/probe/comm) and, in the unit tests, by hand;
 * neither filter nor output calls into libgtr. A zeroed report_event with
 * `ev` set is a valid, unpaired event.
 */
#ifndef REPORT_EVENT_H
#define REPORT_EVENT_H

#include "gtr.h"

struct report_event {
	const struct gtr_event *ev;
	const struct gtr_probe *probe; /* NULL when the file has not described it */
	const char *comm;              /* NUL-terminated task name, "" unknown */
	const char *binary;            /* path of the probe's binary, NULL unknown */
	const char *host;              /* a file of several hosts (merged): the name
				        * of the event's host; NULL otherwise */
	uint64_t t0_ns;                /* ts_ns of the file's first event ("start") */
	uint64_t real_ns;              /* CLOCK_REALTIME of ts_ns, 0 when not computed */
	/*
	 * Return events paired with their entry: the entry (its values, with
	 * strings cut to the bytes pairing keeps) and its probe; latency_ns is
	 * ev->ts_ns - entry->ts_ns. NULL / 0 for entries and unpaired returns.
	 */
	const struct gtr_event *entry;
	const struct gtr_probe *entry_probe;
	uint64_t latency_ns;
	uint32_t depth;                /* calls open below this one in its goroutine */
	bool tracked;                  /* an entry kept open until its return (its
				        * function has a return probe) */
	bool untracked;                /* an entry of a function with a return
				        * probe that pairing did not keep (a
				        * limit: --max-depth, --max-goroutines):
				        * its return shows unpaired */
	bool lost;                     /* shown alone with status `lost`: events of
				        * its function were lost or suppressed
				        * where its other half may lie, so it is
				        * not paired (report/pair.h, "Losses") */
	bool unpaired;                 /* an entry or return of a function with
				        * both probes, one of which had a
				        * record-time predicate: shown alone,
				        * never paired (report/pair.h) */
};

#endif /* REPORT_EVENT_H */
