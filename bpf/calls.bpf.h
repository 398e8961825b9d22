/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole calls (spec/PROBES.md, "Whole calls"): a function probed at its
 * entry and at its returns, whose entry probe can leave calls out (a rate
 * limit, a predicate), has its entry probe note what it did with each
 * call (GT_P_CALL_MARK) and its return probe keep a return only when its
 * call was kept (GT_P_CALL_FOLLOW). The kernel then keeps or leaves out
 * whole calls, and the report pairs every call it is given. Included by
 * gotrace.bpf.c after struct hit.
 */
#ifndef GOTRACE_CALLS_BPF_H
#define GOTRACE_CALLS_BPF_H

/*
 * A call in flight: its process, its goroutine, and where its return
 * address is on the goroutine's stack. At a function's entry (after the
 * stack check) and at each of its RETs, SP points at the return address
 * (x86-64 and i386). Go's stacks move (runtime/stack.go, copystack():
 * the used part is copied to the top of the new stack, so the distance
 * from stack.hi is kept, go1.16 to go1.27): for gc code the depth is
 * stack.hi - SP, from runtime.g's first field, `stack stack` {lo, hi
 * uintptr} (runtime/runtime2.go, the same from go1.16 to go1.27).
 */
struct gt_call_key {
	__u32 pid;
	__u32 pad;
	__u64 who;    /* goid (or g's address), else tid | 1 << 63 */
	__u64 depth;  /* stack.hi - SP (GT_P_G_STACK), else SP */
};

/* What an entry probe of whole calls did with a call (the `calls` map's
 * values). */
enum gt_call_fate {
	GT_CALL_NONE = 0,  /* no entry seen (before the recording began) */
	GT_CALL_KEPT = 1,
	GT_CALL_PRED = 2,  /* left out by the entry probe's predicate */
	GT_CALL_RATE = 3,  /* left out by its rate limit */
};

/* The calls in flight of functions of whole calls, by key, and what their
 * entry probe did with each: every entry notes its call, over what a
 * call before it at the same goroutine and depth may have left (one that
 * never returned: a panic unwound it, runtime.Goexit), and its return
 * takes the note. Least recently used first out (the kernel's LRU is
 * approximate): a process that ends leaves no lasting entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, struct gt_call_key);
	__type(value, __u8);
} calls SEC(".maps");

/* The key of hit `h`'s call (struct gt_call_key). */
static __always_inline void call_key(const struct hit *h, struct gt_call_key *k)
{
	const __u64 sp = PT_REGS_SP(h->regs);
	__u64 hi = 0;

	k->pid = h->task->tgid;
	k->pad = 0;
	k->who = h->goid ? h->goid : ((__u64)h->task->pid | 1ull << 63);
	k->depth = sp;
	if (!(h->plan->flags & GT_P_G_STACK))
		return;
	if (h->g && !read_user_word(h->g + h->plan->word_size, (__u8)h->plan->word_size, &hi) &&
	    hi > sp)
		k->depth = hi - sp;
}

/* Notes what the entry probe did with the call of hit `h` (`fate`);
 * 0 when it could not. */
static __always_inline int call_note(const struct hit *h, __u8 fate)
{
	struct gt_call_key k;

	call_key(h, &k);
	return bpf_map_update_elem(&calls, &k, &fate, BPF_ANY) == 0;
}

/* What the entry probe did with the call of return hit `h` (enum
 * gt_call_fate); takes the note. */
static __always_inline __u8 call_fate(const struct hit *h)
{
	struct gt_call_key k;
	__u8 *v, fate;

	call_key(h, &k);
	v = bpf_map_lookup_elem(&calls, &k);
	if (!v)
		return GT_CALL_NONE;
	fate = *v;
	bpf_map_delete_elem(&calls, &k);
	return fate;
}

#endif
