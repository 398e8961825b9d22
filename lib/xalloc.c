/* SPDX-License-Identifier: MIT */
#include "xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void xalloc_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: out of memory (", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(")\n", stderr);
	exit(1);
}

void *xrealloc(void *p, size_t n, const char *what)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		xalloc_die("%s, %zu bytes", what, n);
	return q;
}

void *xcalloc(size_t n, size_t size, const char *what)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		xalloc_die("%s, %zu bytes", what, n * size);
	return p;
}
