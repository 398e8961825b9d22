/* SPDX-License-Identifier: MIT */
/*
 * The corrupt golden files of tests/golden/ read exactly as
 * tests/golden/EXPECTED says: events and drops delivered, damage counted
 * with its byte offset, truncation, skipped unknown parts, summary, or the
 * file refused with a message. Run from the repository root (make unit).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gtr.h"

#define GOLDEN "tests/golden/"

Test(format_golden, every_file_reads_as_expected)
{
	FILE *f = fopen(GOLDEN "EXPECTED", "r");
	char line[1024];
	int files = 0;

	cr_assert_not_null(f, "run from the repository root: " GOLDEN "EXPECTED not found");
	while (fgets(line, sizeof(line), f)) {
		char name[128], open_s[16];
		unsigned long long events, drops, damage, skipped;
		int truncated, summary, msg_at = 0;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert_eq(sscanf(line, "%127s %15s %llu %llu %llu %d %llu %d %n", name, open_s,
				    &events, &drops, &damage, &truncated, &skipped, &summary,
				    &msg_at), 8, "bad line: %s", line);
		char *msg = line + msg_at;
		msg[strcspn(msg, "\n")] = 0;
		char path[256], err[768];
		snprintf(path, sizeof(path), GOLDEN "%s", name);
		struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
		files++;
		if (!strcmp(open_s, "refused")) {
			cr_assert_null(r, "%s: opened", name);
			cr_assert(strstr(err, msg), "%s: message '%s' lacks '%s'", name, err, msg);
			continue;
		}
		cr_assert_not_null(r, "%s: %s", name, err);
		static struct gtr_event ev;
		struct gtr_drop d;
		unsigned long long nev = 0, ndrop = 0;
		int it;
		while ((it = gtr_reader_next(r, &ev, &d)) > 0) {
			if (it == GTR_ITEM_EVENT)
				nev++;
			else
				ndrop += d.count;
		}
		cr_assert_eq(it, GTR_ITEM_END, "%s: %s", name, gtr_reader_error(r));
		cr_assert_eq(nev, events, "%s: %llu events, want %llu", name, nev, events);
		cr_assert_eq(ndrop, drops, "%s: %llu dropped, want %llu", name, ndrop, drops);
		cr_assert_eq(gtr_reader_damage(r), damage, "%s: damage %llu: %s", name,
			     (unsigned long long)gtr_reader_damage(r), gtr_reader_error(r));
		cr_assert_eq(gtr_reader_truncated(r), truncated != 0, "%s", name);
		cr_assert_eq(gtr_reader_skipped(r), skipped, "%s", name);
		cr_assert_eq(gtr_reader_summary(r)->present, summary != 0, "%s", name);
		if (strcmp(msg, "-")) {
			cr_assert(strstr(gtr_reader_error(r), msg), "%s: message '%s' lacks '%s'", name,
				  gtr_reader_error(r), msg);
			cr_assert(strstr(gtr_reader_error(r), path), "%s: message does not name the file",
				  name);
		} else {
			cr_assert_str_eq(gtr_reader_error(r), "", "%s", name);
		}
		gtr_reader_close(r);
	}
	fclose(f);
	cr_assert_geq(files, 17);
}
