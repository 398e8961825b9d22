/* SPDX-License-Identifier: MIT */
/* The edit distance (lib/edit.h): one row of the Levenshtein table. */
#include "edit.h"

#include <string.h>

unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb, unsigned limit)
{
	unsigned row[256];

	if (la >= 255 || lb >= 255)
		return la != lb || memcmp(a, b, la) ? limit + 1 : 0;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0], best;

		row[0] = (unsigned)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			const unsigned up = row[j];
			unsigned v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
	}
	return row[lb];
}
