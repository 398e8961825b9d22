/* SPDX-License-Identifier: MIT */
/*
 * What clang --analyze needs to know of libbpf, whose code it does not
 * read: `make lint` includes this before every file of record/ (-include).
 *
 * bpf_object__destroy_skeleton() frees the skeleton it is given, with its
 * map and program arrays (libbpf 1.x, src/libbpf.c); the error path of
 * the skeleton bpftool generates (build/gotrace.skel.h:
 * gotrace_bpf__create_skeleton) relies on it. Without this model the
 * analyzer reports that path as a leak of the skeleton.
 */
#ifndef GT_LINT_ANALYZER_LIBBPF_H
#define GT_LINT_ANALYZER_LIBBPF_H

#include <stdlib.h>

#include <bpf/libbpf.h>

static inline void gt_lint_destroy_skeleton(struct bpf_object_skeleton *s)
{
	if (!s)
		return;
	free(s->maps);
	free(s->progs);
	free(s);
}
#define bpf_object__destroy_skeleton gt_lint_destroy_skeleton

#endif /* GT_LINT_ANALYZER_LIBBPF_H */
