/* SPDX-License-Identifier: MIT */
/*
 * The view of one event that the filter and the output formatters work on:
 * the decoded event, the probe that produced it and the name of its thread.
 * Built by the read loop from libgtr (gtr_reader_next/probe/comm) and, in
 * the unit tests, by hand; neither filter nor output calls into libgtr.
 */
#ifndef REPORT_EVENT_H
#define REPORT_EVENT_H

#include "gtr.h"

struct report_event {
	const struct gtr_event *ev;
	const struct gtr_probe *probe; /* NULL when the file has not described it */
	const char *comm;              /* NUL-terminated task name, "" unknown */
};

#endif /* REPORT_EVENT_H */
