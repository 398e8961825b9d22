/* SPDX-License-Identifier: MIT */
/*
 * encode: what capture hands over, written to the trace file (libgtr):
 * events with their values decoded by each probe's plan, the processes
 * they came from and their executable mappings (/proc/PID/maps), thread
 * names, exits, drops (full ring buffer, per probe and CPU) and events a
 * rate limit suppressed, and the header every file of a rotation starts
 * with. Single-threaded: called from the capture loop.
 */
#ifndef GOTRACE_ENCODE_H
#define GOTRACE_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture.h"
#include "gtr.h"
#include "plan.h"

struct encoder;

/*
 * An encoder for the probes of `pl` (which must outlive it). It keeps at
 * most `max_events` events (0: no limit); with `rate`, it records what
 * the rate limit suppressed. NULL when out of memory.
 */
struct encoder *encoder_new(const struct plan *pl, uint64_t max_events,
			    bool rate);

/* Frees `r` (NULL is fine); the writer and capture are the caller's. */
void encoder_free(struct encoder *r);

/* The capture whose counters encoder_drops() reads and whose ring buffer
 * encoder_processes_check() drains. */
void encoder_set_capture(struct encoder *r, struct capture *c);

/*
 * Writes to `w` from now on (NULL: nothing is written). A new writer
 * after another (a rotation) starts a file that has seen no process or
 * thread yet, so they are recorded again.
 */
void encoder_set_writer(struct encoder *r, struct gtr_writer *w);

/* The current writer, or NULL. */
struct gtr_writer *encoder_writer(const struct encoder *r);

/*
 * Writes what a reader needs before events: the binaries of `pl` with
 * their function tables (for stacks), a clock sample, the probes. 0, or
 * -1 with the reason in gtr_writer_error(w).
 */
int encoder_write_header(struct gtr_writer *w, const struct plan *pl);

/* Writes a clock sample (CLOCK_MONOTONIC, REALTIME and BOOTTIME, ns). */
void encoder_write_clock(struct gtr_writer *w);

/*
 * capture_fn: writes one ring buffer record (a struct gt_event of `size`
 * bytes; others are ignored) as an event, and first its process and
 * thread when new. Returns 0. When the writer fails (a full disk), says
 * so once, and from then on counts events instead of writing them
 * (encoder_failed(), encoder_unwritten()).
 */
int encoder_on_event(const struct gt_event *ev, size_t size, void *ctx);

/* capture_exit_fn: records the exit of process `pid` at ts_ns
 * (CLOCK_MONOTONIC) with its status (exit status, or -signal). */
void encoder_on_exit(uint32_t pid, uint64_t ts_ns, uint32_t code,
		     const char *comm, void *ctx);

/*
 * Records the exit of processes seen before that are gone (once a second
 * and at the end), so a reused PID starts afresh. `reaped` is the command
 * gotrace-record ran, if it exited with `code`; others' status is unknown
 * unless encoder_on_exit() had it.
 */
void encoder_processes_check(struct encoder *r, uint64_t now, pid_t reaped,
			     int code);

/* Records what the kernel counted since the last call: events lost to a
 * full ring buffer (per probe and CPU) and suppressed by the rate limit. */
void encoder_drops(struct encoder *r);

/* Events written; events lost and suppressed as recorded so far. */
uint64_t encoder_events(const struct encoder *r);
uint64_t encoder_dropped(const struct encoder *r);
uint64_t encoder_suppressed(const struct encoder *r);

/*
 * The windows of each rate-limited probe (indexed by probe id) as the
 * events written so far show them (format/gtr_rate.h), for the next file
 * of a rotation; NULL without a rate limit.
 */
const struct gtr_rate_windows *encoder_rate_windows(const struct encoder *r);

/* Whether writing failed (the error was printed). */
bool encoder_failed(const struct encoder *r);

/* Marks writing as failed at ts_ns (CLOCK_MONOTONIC) and says so once,
 * with the writer's error. */
void encoder_fail(struct encoder *r, uint64_t ts_ns);

/* Events read but not written since writing failed (saturating). */
uint64_t encoder_unwritten(const struct encoder *r);

/*
 * After a failure: cuts the file back to its last whole block
 * (gtr_writer_recover()) and records the events not written as one loss
 * of every probe over [failure, now_ns], so that the file says what it
 * misses. 0 when recorded (or nothing failed), -1 when there is still no
 * room (the count is then the caller's to print).
 */
int encoder_recover(struct encoder *r, uint64_t now_ns);

#endif /* GOTRACE_ENCODE_H */
