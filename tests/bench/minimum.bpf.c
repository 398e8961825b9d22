// SPDX-License-Identifier: GPL-2.0
/*
 * The minimum-program anchor of `make bench` (tests/bench/capture_bench.py): a uprobe
 * program doing only what every gotrace event needs and nothing else,
 * to show in the same run what the capture program is measured against.
 * Per hit: one bpf_ktime_get_ns(), one 8-byte user read inside g (R14,
 * the ABIInternal g register of amd64) at goid_off, and a ring-buffer
 * record of gotrace's 2-slot size (header of struct gt_event and two
 * words) reserved, filled and submitted without a wakeup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "gotrace.h"

char LICENSE[] SEC("license") = "GPL";

/* runtime.g.goid's offset, set by the loader before the load */
const volatile __s32 goid_off = 152;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} minimum_events SEC(".maps");

SEC("uprobe")
int minimum_probe(struct pt_regs *regs)
{
	__u64 ts = bpf_ktime_get_ns(), goid = 0;
	struct gt_event *ev;

	bpf_probe_read_user(&goid, sizeof(goid), (void *)(regs->r14 + goid_off));
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
