/* SPDX-License-Identifier: MIT */
/*
 * The next file of a rotation (gotrace-record -C), for --follow
 * (report/rotation.c).
 */
#ifndef REPORT_ROTATION_H
#define REPORT_ROTATION_H

#include <stdbool.h>
#include <stddef.h>

/*
 * After `cur`, a file of the rotation that `given` (the file --follow
 * was given) is part of, was read to its summary: waits up to 10 s, in
 * 100 ms ticks, for the next file to exist as a regular file written
 * since cur was closed (not older than cur: a file of an earlier
 * recording at that name is). The rotation of FILE is FILE, FILE1,
 * FILE2...; given FILEk, it is FILE's when FILE exists. The next of
 * FILEk is FILE(k+1), or FILE again when the ring of -W starts over.
 * True with its name in out[outlen]; false when none came (the
 * recording ended), cur is no name of that rotation, or stop(ctx)
 * (called every tick; NULL: never) returned nonzero.
 */
bool rotation_next(const char *given, const char *cur, char *out, size_t outlen,
		   int (*stop)(void *), void *ctx);

#endif /* REPORT_ROTATION_H */
