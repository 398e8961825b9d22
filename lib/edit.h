/* SPDX-License-Identifier: MIT */
/*
 * edit: the one edit distance, for "did you mean" suggestions of names
 * a user mistyped (a function of a binary, a rule's function glob).
 */
#ifndef LIB_EDIT_H
#define LIB_EDIT_H

#include <stddef.h>

/*
 * Levenshtein distance of the bytes a[0, la) and b[0, lb) (insertions,
 * deletions and substitutions of one byte each count 1), giving up
 * (returning limit + 1) as soon as it is beyond `limit`. Strings of 255
 * bytes or more are only compared for equality: 0, or limit + 1. The
 * lengths are passed, so only the bytes given are read. Allocates nothing.
 */
unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb, unsigned limit);

#endif /* LIB_EDIT_H */
