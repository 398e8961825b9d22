/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process programs of gotrace's BPF program, included by
 * gotrace.bpf.c after its maps (one object, one skeleton): the exit of
 * a traced process (sched_process_exit), the execs that must stop a
 * process until the recorder attached its uprobes (sched_process_exec),
 * and the tree of processes a recording follows (sched_process_fork).
 * Each is attached as a BTF-typed tracepoint, else a raw one, else a
 * classic one (capture.c, capture_follow.c).
 */
#ifndef GOTRACE_PROCESS_BPF_H
#define GOTRACE_PROCESS_BPF_H

/*
 * The processes a recording follows (spec/PROBES.md): tgid -> mask of
 * the probed binaries (bit i: index i of `bins`) whose uprobes are
 * attached for it. gotrace-record puts the command and each -p target
 * here; a process they start (fork, not a new thread) joins with its
 * parent's tree and an empty mask (on_process_fork(), when following is
 * on); its exit takes it out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} tree SEC(".maps");

/* The probed binaries by inode number (struct gt_bin_key) -> index <
 * GT_MAX_BINS, filled by gotrace-record. The number alone: the device of
 * a file as the kernel holds it (i_sb->s_dev) is not always the one
 * stat() gives (btrfs subvolumes), so gotrace-record confirms that the
 * process runs that very file (stat() of /proc/PID/exe) before it
 * attaches. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GT_MAX_BINS * 4);
	__type(key, struct gt_bin_key);
	__type(value, __u32);
} bins SEC(".maps");

/*
 * The exec records (struct gt_exec), in a ring buffer of their own so
 * that a buffer full of events never leaves a process that must be held
 * running unprobed: 64 KiB, about 2,000 records, each read at once.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} procs SEC(".maps");

/* Entry 0, per CPU: exec records lost (`procs` full): processes that ran
 * on without being held; gotrace-record reports their count. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} procs_lost SEC(".maps");

/*
 * The processes held now: pid (in gotrace-record's namespace) -> 1, put
 * here as one is stopped and taken out by gotrace-record as it lets it go
 * (capture_exec.c). The guardian (record/guardian.c) lets go those still
 * here should gotrace-record die without doing so (SIGKILL).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} held SEC(".maps");

/* Entry 0: mask of the probed binaries a process of the tree exec'd. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} bins_run SEC(".maps");

/*
 * The exit of a watched process, when its last thread exits: a struct
 * gt_exit record with the exact time and exit code. signal->live counts
 * the live threads and is decremented before this tracepoint fires
 * (kernel/exit.c, do_exit()); deleting the map entry first makes sure
 * that only one of several threads exiting at once reports it. The code
 * is the process's as wait() reports it: the group exit code when the
 * whole group was told to exit (exit_group(), a fatal signal), else the
 * last thread's own (kernel/exit.c, wait_task_zombie()).
 */
#define GT_SIGNAL_GROUP_EXIT 0x00000004   /* include/linux/sched/signal.h */

/*
 * The body shared by the three ways of attaching to sched_process_exit.
 * It reads only the current task (the one exiting) through CO-RE, never
 * the tracepoint's arguments, so it holds for both layouts of the
 * tracepoint: (struct task_struct *p) before Linux 6.16 and
 * (struct task_struct *p, bool group_dead) since (include/trace/events/
 * sched.h); signal->live is 0 after the last thread's atomic_dec_and_test()
 * in do_exit() on both, which is what group_dead says.
 */
static __always_inline int on_process_exit(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 ids = ns_ids();
	__u32 tgid = ids >> 32, tid = (__u32)ids;
	struct gt_exit x = {};

	if (!ids)
		return 0;

	/* a thread the classic fork tracepoint put in `tree` (it cannot
	 * tell a thread from a process) */
	if (tid != tgid && bpf_map_lookup_elem(&tree, &tid))
		bpf_map_delete_elem(&tree, &tid);
	if (!bpf_map_lookup_elem(&watched, &tgid) &&
	    !bpf_map_lookup_elem(&execs, &tgid) &&
	    !bpf_map_lookup_elem(&tree, &tgid))
		return 0;
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	/* its pid may be another process's next */
	bpf_map_delete_elem(&execs, &tgid);
	bpf_map_delete_elem(&tree, &tgid);
	if (bpf_map_delete_elem(&watched, &tgid))
		return 0;
	x.type = GT_REC_EXIT;
	x.pid = tgid;
	x.ts_ns = bpf_ktime_get_ns();
	x.code = BPF_CORE_READ(task, signal, flags) & GT_SIGNAL_GROUP_EXIT
			 ? BPF_CORE_READ(task, signal, group_exit_code)
			 : BPF_CORE_READ(task, exit_code);
	bpf_get_current_comm(&x.comm, sizeof(x.comm));
	bpf_ringbuf_output(&events, &x, sizeof(x), BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* BTF-typed tracepoint: found through the kernel's BTF, needs no tracefs. */
SEC("tp_btf/sched_process_exit")
int gotrace_exit_btf(void *ctx)
{
	return on_process_exit();
}

/* Raw tracepoint: found by name, needs no tracefs (Linux 4.17+). */
SEC("raw_tp/sched_process_exit")
int gotrace_exit_raw(void *ctx)
{
	return on_process_exit();
}

/* Classic tracepoint: its id is read from tracefs, which must be mounted. */
SEC("tp/sched/sched_process_exit")
int gotrace_exit_tp(void *ctx)
{
	return on_process_exit();
}

#define GT_SIGSTOP 19   /* include/uapi/asm-generic/signal.h */

/*
 * The index in `bins` of the file the current process runs now (its
 * mm->exe_file, which exec just set: the file bprm->file named, the
 * interpreter of a script), and marks it run in `bins_run`; GT_NO_BIN
 * when it is not a probed binary.
 */
static __always_inline __u32 exec_bin(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct inode *ino = BPF_CORE_READ(task, mm, exe_file, f_inode);
	struct gt_bin_key k = {};
	__u32 zero = 0, *bin;
	__u64 *run;

	if (!ino)
		return GT_NO_BIN;
	k.ino = BPF_CORE_READ(ino, i_ino);
	bin = bpf_map_lookup_elem(&bins, &k);
	if (!bin || *bin >= GT_MAX_BINS)
		return GT_NO_BIN;
	run = bpf_map_lookup_elem(&bins_run, &zero);
	if (run)
		__sync_fetch_and_or(run, 1ull << *bin);
	return *bin;
}

/*
 * An exec the recorder must act on (struct gt_exec):
 * - in a process of `execs` from a thread other than its first (old_pid,
 *   the exec'ing thread's id before the exec, is not the tgid): the
 *   kernel's pid filter of the process's uprobes followed its first
 *   thread, which de_thread() (fs/exec.c) just ended, so the new image
 *   would run unprobed;
 * - in a process of the followed `tree`, of a probed binary whose
 *   uprobes are not attached for it yet (a child of the command that
 *   runs a probed program).
 * The process is stopped (the signal is taken on the way back to user
 * space, before the new image's first instruction) and the record wakes
 * gotrace-record, which attaches the probes for the pid and lets it go
 * on (SIGCONT). The record goes to `procs`, not the events' buffer;
 * without room there it is not stopped (nobody would let it go on) and
 * counted in `procs_lost`. Any other exec is left alone.
 */
static __always_inline int on_process_exec(__u32 old_pid)
{
	__u32 tgid = ns_ids() >> 32, bin = GT_NO_BIN, zero = 0;
	__u8 one = 1;
	/* old_pid is the kernel's id (the initial namespace's) */
	bool other = old_pid != bpf_get_current_pid_tgid() >> 32;
	bool again = other && bpf_map_lookup_elem(&execs, &tgid);
	__u64 *mask = bpf_map_lookup_elem(&tree, &tgid), *lost;
	struct gt_exec *x;

	if (!tgid)
		return 0;
	/* the exec'ing thread's old id, put in `tree` by the classic fork
	 * program (only in the initial namespace): de_thread() gave it up,
	 * another process may get it */
	if (other && !pidns_ino)
		bpf_map_delete_elem(&tree, &old_pid);
	if (mask) {
		bin = exec_bin();
		if (bin != GT_NO_BIN && (*mask & (1ull << bin)))
			bin = GT_NO_BIN;   /* attached for it already */
	}
	if (!again && bin == GT_NO_BIN)
		return 0;
	x = bpf_ringbuf_reserve(&procs, sizeof(*x), 0);
	if (!x) {
		lost = bpf_map_lookup_elem(&procs_lost, &zero);
		if (lost)
			*lost += 1;
		return 0;
	}
	x->type = GT_REC_EXEC;
	x->pid = tgid;
	x->ts_ns = bpf_ktime_get_ns();
	/* in a nested namespace the old thread's id there is not known: 0 */
	x->old_tid = !other ? tgid : pidns_ino ? 0 : old_pid;
	x->bin = bin;
	x->pad = 0;
	/* in `held` before the stop, so that the guardian finds every
	 * process stopped; a process `held` has no room for is not stopped */
	x->stopped = bpf_map_update_elem(&held, &tgid, &one, BPF_ANY) == 0 &&
		     bpf_send_signal(GT_SIGSTOP) == 0;
	if (!x->stopped)
		bpf_map_delete_elem(&held, &tgid);
	bpf_ringbuf_submit(x, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* sched_process_exec(struct task_struct *p, pid_t old_pid, struct
 * linux_binprm *bprm) (include/trace/events/sched.h, Linux 3.4+), attached
 * as the exit programs are: its arguments as 64-bit words. */
SEC("tp_btf/sched_process_exec")
int gotrace_exec_btf(__u64 *ctx)
{
	return on_process_exec((__u32)ctx[1]);
}

SEC("raw_tp/sched_process_exec")
int gotrace_exec_raw(__u64 *ctx)
{
	return on_process_exec((__u32)ctx[1]);
}

/* Classic tracepoint: the record's old_pid field (read through CO-RE). */
SEC("tp/sched/sched_process_exec")
int gotrace_exec_tp(struct trace_event_raw_sched_process_exec *ctx)
{
	return on_process_exec((__u32)BPF_CORE_READ(ctx, old_pid));
}

/*
 * The id of new process `child` (its first thread) in gotrace-record's
 * pid namespace, the current thread's (its parent's, which ns_ids()
 * numbered): struct pid numbers[level] (include/linux/pid.h), level the
 * parent's; 0 when it has none there.
 */
static __always_inline __u32 ns_child_tgid(struct task_struct *child)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	unsigned int lvl = BPF_CORE_READ(cur, thread_pid, level);
	struct pid *p = BPF_CORE_READ(child, thread_pid);
	struct upid up = {};

	if (!p || lvl > 32 || lvl > BPF_CORE_READ(p, level) ||
	    bpf_probe_read_kernel(&up, sizeof(up), (char *)p +
				  bpf_core_field_offset(struct pid, numbers) +
				  lvl * sizeof(struct upid)) ||
	    !up.ns || BPF_CORE_READ(up.ns, ns.inum) != pidns_ino)
		return 0;
	return (__u32)up.nr;
}

/*
 * A process (not a new thread: CLONE_THREAD children share the tgid)
 * started by one of the followed `tree` joins it, with no binary
 * attached. The tracepoint fires in kernel_clone() (kernel/fork.c)
 * before the child is first woken, so it joins before it can exec.
 */
static __always_inline int on_process_fork(__u32 child_pid, __u32 child_tgid,
					   struct task_struct *child)
{
	__u32 tgid = ns_ids() >> 32;
	__u64 none = 0;

	if (child_pid != child_tgid || !tgid || !bpf_map_lookup_elem(&tree, &tgid))
		return 0;
	if (pidns_ino) {
		/* the classic tracepoint gives no task to number */
		child_tgid = child ? ns_child_tgid(child) : 0;
		if (!child_tgid)
			return 0;
	}
	if (child_tgid == tgid)
		return 0;
	/* a full tree (16384 processes) leaves the child unfollowed */
	bpf_map_update_elem(&tree, &child_tgid, &none, BPF_ANY);
	return 0;
}

/* sched_process_fork(struct task_struct *parent, struct task_struct
 * *child) (include/trace/events/sched.h), attached as the exit programs
 * are; only while following is on. */
SEC("tp_btf/sched_process_fork")
int gotrace_fork_btf(__u64 *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx[1];

	return on_process_fork(BPF_CORE_READ(child, pid), BPF_CORE_READ(child, tgid), child);
}

SEC("raw_tp/sched_process_fork")
int gotrace_fork_raw(__u64 *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx[1];

	return on_process_fork(BPF_CORE_READ(child, pid), BPF_CORE_READ(child, tgid), child);
}

/*
 * Classic tracepoint: the record holds the child's thread id only. A new
 * thread is told from a process by the parent's thread list
 * (signal->thread_head), at whose tail copy_process() (kernel/fork.c,
 * Linux 3.14+) just put it. Should another thread of the parent start
 * one at the same time, the new thread joins by its id, which no exec
 * looks up (an exec keeps the tgid); an exec from it or its exit takes
 * it out (on_process_exec(), on_process_exit()).
 */
SEC("tp/sched/sched_process_fork")
int gotrace_fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct list_head *tail = BPF_CORE_READ(cur, signal, thread_head.prev);
	__u32 child = (__u32)BPF_CORE_READ(ctx, child_pid);

	if (tail) {
		struct task_struct *last = (void *)tail -
			bpf_core_field_offset(struct task_struct, thread_node);

		if ((__u32)BPF_CORE_READ(last, pid) == child)
			return 0;   /* a thread of the parent */
	}
	return on_process_fork(child, child, NULL);
}

#endif /* GOTRACE_PROCESS_BPF_H */
