/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole calls (spec/PROBES.md, "Whole calls"): a function probed at its
 * entry and at its returns, whose entry probe can leave calls out (a rate
 * limit, a predicate), has its entry probe note each call it keeps
 * (GT_P_CALL_MARK) and its return probe keep a return only when its call
 * was kept (GT_P_CALL_FOLLOW). The kernel then keeps or leaves out
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

/* The calls in flight that entry probes of whole calls kept, by key. An
 * entry left out forgets the note a call before it at the same goroutine
 * and depth may have left (one that never returned: a panic unwound it,
 * runtime.Goexit), so the map holds kept calls only. Least recently used
 * first out (the kernel's LRU is approximate): a process that ends leaves
 * no lasting entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
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

/* Notes the call of entry hit `h` as kept; 0 when it could not. */
static __always_inline int call_note(const struct hit *h)
{
	struct gt_call_key k;
	__u8 one = 1;

	call_key(h, &k);
	return bpf_map_update_elem(&calls, &k, &one, BPF_ANY) == 0;
}

/* Forgets any note at the place of entry hit `h`'s call, which is left out. */
static __always_inline void call_forget(const struct hit *h)
{
	struct gt_call_key k;

	call_key(h, &k);
	bpf_map_delete_elem(&calls, &k);
}

/* Whether the call of return hit `h` was kept by its entry probe; takes
 * the note. */
static __always_inline int call_taken(const struct hit *h)
{
	struct gt_call_key k;

	call_key(h, &k);
	return bpf_map_delete_elem(&calls, &k) == 0;
}

#endif
