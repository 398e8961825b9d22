/* SPDX-License-Identifier: MIT */
/*
 * `gotrace-report info [--json] FILE`: what a trace file holds (format
 * version, host, clocks, binaries, probes, symbols, mappings, processes,
 * time range in wall-clock time, event counts, losses, summary, damaged and
 * skipped parts). Reads the whole file once through libgtr (format/gtr.h).
 */
#ifndef REPORT_INFO_H
#define REPORT_INFO_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Prints the contents of trace `path` to `out`: text for people, or with
 * `json` one JSON object (keys in spec/FORMAT.md, "gotrace-report info").
 * Messages about unreadable files go to stderr prefixed "gotrace-report: ".
 * Returns the exit status: 0 (also for a damaged or truncated file, which
 * the output reports), 1 when the file cannot be opened or read or the
 * output cannot be written.
 */
int report_info(const char *path, bool json, FILE *out);

#endif /* REPORT_INFO_H */
