/* SPDX-License-Identifier: MIT */
/*
 * xalloc: allocation that cannot fail. Running out of memory ends the
 * process with status 1 and a message naming what was being allocated
 * ("PROG: out of memory (what, N bytes)"), PROG being
 * program_invocation_short_name (glibc; gotrace-report sets it to its
 * own name). For code that has no useful way to go on without memory.
 */
#ifndef LIB_XALLOC_H
#define LIB_XALLOC_H

#include <stddef.h>

/* Prints "PROG: out of memory (" fmt ")" and exits with status 1. */
void xalloc_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* realloc(p, n) (n 0 counts as 1); `what` names the memory in the message. */
void *xrealloc(void *p, size_t n, const char *what) __attribute__((returns_nonnull));

/* calloc(n, size) (n 0 counts as 1); `what` names the memory in the message. */
void *xcalloc(size_t n, size_t size, const char *what) __attribute__((returns_nonnull));

#endif /* LIB_XALLOC_H */
