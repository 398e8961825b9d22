// SPDX-License-Identifier: GPL-2.0
/*
 * The minimum-program anchor of `make bench` (tests/bench/capture_bench.py): a uprobe
 * program doing only what every gotrace event needs and nothing else,
 * to show in the same run what the capture program is measured against.
 * Per hit: one bpf_ktime_get_ns(), one 8-byte user read inside g (R14,
 * the ABIInternal g register of amd64) at goid_off, and a ring-buffer
 * record of gotrace's 2-slot size (header of struct gt_event and two
 * words) reserved, filled and submitted without a wakeup.
 * cfg.parts selects which of the three run (GT_MIN_* bits, all by
 * default), so that the bench also measures each alone: the verifier
 * drops the code of the parts left out, as cfg is read-only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "gotrace.h"

char LICENSE[] SEC("license") = "GPL";

#define GT_MIN_KTIME  1u   /* bpf_ktime_get_ns() */
#define GT_MIN_GOID   2u   /* the 8-byte user read of g.goid */
#define GT_MIN_RECORD 4u   /* the ring-buffer record */

/* set by the loader before the load: runtime.g.goid's offset and the
 * parts to run (one struct, so that the loader finds both in .rodata
 * in this order) */
const volatile struct {
	__s32 goid_off;
	__u32 parts;
} cfg = { 152, GT_MIN_KTIME | GT_MIN_GOID | GT_MIN_RECORD };

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} minimum_events SEC(".maps");

SEC("uprobe")
int minimum_probe(struct pt_regs *regs)
{
	__u64 ts = 0, goid = 0;
	struct gt_event *ev;

	if (cfg.parts & GT_MIN_KTIME)
		ts = bpf_ktime_get_ns();
	if (cfg.parts & GT_MIN_GOID)
		bpf_probe_read_user(&goid, sizeof(goid), (void *)(regs->r14 + cfg.goid_off));
	if (!(cfg.parts & GT_MIN_RECORD))
		return goid == ts; /* kept: the values are used */
	ev = bpf_ringbuf_reserve(&minimum_events, GT_EVENT_HDR_SIZE + 16, 0);
	if (!ev)
		return 0;
	ev->type = GT_REC_EVENT;
	ev->ts_ns = ts;
	ev->goid = goid;
	ev->nslots = 2;
	ev->slots[0] = regs->ax;
	ev->slots[1] = regs->bx;
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
	return 0;
}
