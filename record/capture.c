// SPDX-License-Identifier: MIT
/* Loading, attaching and draining the BPF program; see capture.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/btf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "capture_int.h"
#include "guardian.h"
#include "gotrace.skel.h"

static int verbose_libbpf;

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose_libbpf < 2)
		return 0;
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Kernel ABI of BPF_LINK_CREATE for uprobe-multi links (Linux 6.6,
 * include/uapi/linux/bpf.h); libbpf 1.1 predates it. */
#define GT_BPF_LINK_CREATE 28
#define GT_TRACE_UPROBE_MULTI 48

struct gt_link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
};

/*
 * Whether the kernel has uprobe-multi links: it has BTF for
 * bpf_uprobe_multi_link (Linux 6.6 and later), unless GOTRACE_NO_MULTI
 * is set (to test the fallback).
 */
static int multi_supported(void)
{
	struct btf *btf;
	int ok;

	if (getenv("GOTRACE_NO_MULTI"))
		return 0;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return 0;
	ok = btf__find_by_name_kind(btf, "bpf_uprobe_multi_link",
				    BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	return ok;
}

/*
 * What the BPF side assumes until a hit tells (gotrace.bpf.c,
 * kernel_adds_entry_caller): 1 when the running kernel is Linux 6.10 or
 * later, whose x86 user stack walk adds the caller at a uprobe on push
 * %rbp (commit "perf,x86: avoid missing caller address in stack traces
 * captured in uprobe"), else 2.
 */
static uint32_t kernel_adds_entry_caller(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 10) ? 1 : 2;
}

/* The initial pid namespace's inode number (PROC_PID_INIT_INO,
 * include/linux/proc_ns.h, Linux 3.8+). */
#define PID_NS_INIT_INO 0xEFFFFFFCu

/*
 * Tells the BPF program the pid namespace gotrace-record runs in when it
 * is not the initial one (a container without the host's pids), so that
 * the program numbers processes as the recorder does (ns_ids(),
 * bpf/gotrace.bpf.c): the device (the kernel's dev_t, major << 20 |
 * minor) and inode of /proc/self/ns/pid. Left 0 (the kernel's ids) when
 * it cannot be read.
 */
static void set_pid_namespace(struct gotrace_bpf *skel)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == PID_NS_INIT_INO)
		return;
	skel->rodata->pidns_dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	skel->rodata->pidns_ino = st.st_ino;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct capture *c = ctx;

	if (size >= sizeof(struct gt_exec) &&
	    ((const struct gt_exec *)data)->type == GT_REC_EXEC) {
		capture_on_exec_record(c, data);
		return 0;
	}
	if (c->closing)
		return 0;
	if (size >= sizeof(struct gt_exit) &&
	    ((const struct gt_exit *)data)->type == GT_REC_EXIT) {
		const struct gt_exit *x = data;

		char comm[sizeof(x->comm) + 1];

		memcpy(comm, x->comm, sizeof(x->comm));
		comm[sizeof(x->comm)] = '\0';
		capture_relinks_exited(c, (pid_t)x->pid);
		if (c->exit_fn)
			c->exit_fn(x->pid, x->ts_ns, x->code, comm, c->ctx);
		return 0;
	}
	if (size < GT_EVENT_HDR_SIZE)
		return 0;
	return c->fn((const struct gt_event *)data, size, c->ctx);
}

/* Maps the plans map into c->plans_mm; left NULL when the kernel does not
 * map it (capture_set_plan() then writes each plan with a syscall). */
static void map_plans(struct capture *c)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (size_t)c->nplans * ((sizeof(struct gt_plan) + 7) & ~(size_t)7);
	void *p;

	len = (len + page - 1) / page * page;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.plans), 0);
	if (p == MAP_FAILED)
		return;
	c->plans_mm = p;
	c->plans_len = len;
}

struct capture *capture_open(uint32_t nplans, uint32_t ringbuf_bytes,
			     int verbose, capture_fn fn, void *ctx, char *err,
			     size_t errlen)
{
	struct capture *c = calloc(1, sizeof(*c));
	int e;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	verbose_libbpf = verbose;
	c->verbose = verbose;
	libbpf_set_print(libbpf_log);
	c->fn = fn;
	c->ctx = ctx;
	c->nplans = nplans ? nplans : 1;
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0)
		c->ncpus = 1;
	c->percpu = calloc(c->ncpus, sizeof(uint64_t));
	c->multi = multi_supported();
again:
	c->skel = gotrace_bpf__open();
	if (!c->percpu || !c->skel) {
		snprintf(err, errlen, "cannot open the BPF program: %s",
			 strerror(errno));
		goto fail;
	}
	if (c->multi)
		bpf_program__set_expected_attach_type(c->skel->progs.gotrace_probe,
						      GT_TRACE_UPROBE_MULTI);
	if (c->exit_level >= EXIT_NO_BTF) {
		bpf_program__set_autoload(c->skel->progs.gotrace_exit_btf, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_exec_btf, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_fork_btf, false);
	}
	if (c->exit_level >= EXIT_NONE) {
		bpf_program__set_autoload(c->skel->progs.gotrace_exit_raw, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_exit_tp, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_exec_raw, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_exec_tp, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_fork_raw, false);
		bpf_program__set_autoload(c->skel->progs.gotrace_fork_tp, false);
	}
	bpf_map__set_max_entries(c->skel->maps.plans, c->nplans);
	bpf_map__set_max_entries(c->skel->maps.drops, c->nplans);
	bpf_map__set_max_entries(c->skel->maps.suppressed, c->nplans);
	bpf_map__set_max_entries(c->skel->maps.rates, c->nplans);
	bpf_map__set_max_entries(c->skel->maps.events, ringbuf_bytes);
	/* Wake the reader every so many records per CPU: at most about a
	 * quarter of the buffer (records of 128 bytes or more). */
	{
		uint32_t every = 1;

		while (every * 2 <= ringbuf_bytes / 4 / 128 && every < 4096)
			every *= 2;
		c->skel->rodata->wakeup_every = every;
	}
	c->skel->rodata->watch_exits = c->exit_level != EXIT_NONE;
	set_pid_namespace(c->skel);
	c->skel->bss->kernel_adds_entry_caller = kernel_adds_entry_caller();
	e = gotrace_bpf__load(c->skel);
	if (e && c->exit_level != EXIT_NONE) {
		/* The exit programs are a refinement (exits are polled for
		 * too): load without them rather than fail. */
		gotrace_bpf__destroy(c->skel);
		c->skel = NULL;
		c->exit_level++;
		goto again;
	}
	if (e && c->multi) {
		/* The kernel may know the link but refuse the program type:
		 * fall back to one perf-event uprobe per site. */
		gotrace_bpf__destroy(c->skel);
		c->skel = NULL;
		c->multi = 0;
		c->exit_level = EXIT_ALL;
		goto again;
	}
	if (e) {
		snprintf(err, errlen,
			 "cannot load the BPF program: %s (gotrace-record needs "
			 "root or CAP_BPF+CAP_PERFMON and a kernel with BTF; "
			 "-v shows the verifier log)", strerror(-e));
		goto fail;
	}
	map_plans(c);
	c->prog = c->skel->progs.gotrace_probe;
	c->execs_fd = bpf_map__fd(c->skel->maps.execs);
	c->held_fd = bpf_map__fd(c->skel->maps.held);
	/* before any process can be held, and before any thread */
	c->guardian = guardian_start(c->held_fd);
	if (!c->guardian)
		fprintf(stderr, "gotrace-record: warning: cannot start the guardian "
			"process (%s): a process held when gotrace-record is killed "
			"(SIGKILL) stays stopped until kill -CONT\n", strerror(errno));
	c->tree_fd = bpf_map__fd(c->skel->maps.tree);
	c->bins_fd = bpf_map__fd(c->skel->maps.bins);
	c->bins_run_fd = bpf_map__fd(c->skel->maps.bins_run);
	c->fork_progs[0] = c->skel->progs.gotrace_fork_btf;
	c->fork_progs[1] = c->skel->progs.gotrace_fork_raw;
	c->fork_progs[2] = c->skel->progs.gotrace_fork_tp;
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_record,
				 c, NULL);
	if (c->rb && ring_buffer__add(c->rb, bpf_map__fd(c->skel->maps.procs),
				      on_record, c)) {
		ring_buffer__free(c->rb);
		c->rb = NULL;
	}
	if (!c->rb) {
		snprintf(err, errlen, "cannot create the ring buffer: %s",
			 strerror(errno));
		goto fail;
	}
	return c;
fail:
	capture_close(c);
	return NULL;
}

/*
 * Whether every fetch of `plan` is a word as it is, in a register or a
 * stack slot (no pointer followed, no bytes), and no stack is taken: the
 * BPF program's GT_P_WORDS, which lets it write the record in place.
 */
static int plan_words_only(const struct gt_plan *plan)
{
	if (plan->flags & GT_P_STACK)
		return 0;
	for (uint32_t i = 0; i < plan->nfetch && i < GT_MAX_FETCH; i++) {
		const struct gt_fetch *f = &plan->fetch[i];

		if (f->op == GT_OP_NONE)
			continue;
		if (f->op != GT_OP_WORD || f->nderef || (f->flags & GT_F_INDIRECT))
			return 0;
	}
	return 1;
}

/* Whether every fetch of `plan` reads a register (or nothing). */
static int plan_in_registers(const struct gt_plan *plan)
{
	for (uint32_t i = 0; i < plan->nfetch && i < GT_MAX_FETCH; i++)
		if (plan->fetch[i].op != GT_OP_NONE && plan->fetch[i].src.loc != GT_LOC_REG)
			return 0;
	return 1;
}

int capture_set_plan(struct capture *c, uint32_t slot,
		     const struct gt_plan *plan)
{
	struct gt_plan q = *plan;

	if (slot >= c->nplans)
		return -ERANGE;
	q.flags &= ~(uint32_t)(GT_P_WORDS | GT_P_FAST);
	if (plan_words_only(&q)) {
		q.flags |= GT_P_WORDS;
		if (q.nfetch <= GT_FAST_WORDS && !q.npred && !q.rate &&
		    !(q.flags & (GT_P_THEN | GT_P_CALL_MARK | GT_P_CALL_FOLLOW)) &&
		    (q.goid_mode == GT_GOID_R14 || q.goid_mode == GT_GOID_NONE) &&
		    plan_in_registers(&q))
			q.flags |= GT_P_FAST;
	}
	if (c->plans_mm) {
		memcpy(c->plans_mm + (size_t)slot * ((sizeof(q) + 7) & ~(size_t)7),
		       &q, sizeof(q));
		return 0;
	}
	if (bpf_map__update_elem(c->skel->maps.plans, &slot, sizeof(slot),
				 &q, sizeof(q), BPF_ANY))
		return -errno;
	return 0;
}

int capture_attach(struct capture *c, uint32_t slot, uint32_t site,
		   const char *path, uint64_t file_offset, pid_t pid,
		   char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts,
		    .bpf_cookie = slot | (uint64_t)site << 32);
	struct bpf_link *link;
	const uint32_t at = slots_take(&c->free_links, c->nlinks);

	if (at == c->nlinks && c->nlinks == c->caplinks) {
		uint32_t n = c->caplinks ? c->caplinks * 2 : 16;
		struct bpf_link **l = realloc(c->links, n * sizeof(*l));

		if (!l)
			return -ENOMEM;
		c->links = l;
		c->caplinks = n;
	}
	link = bpf_program__attach_uprobe_opts(c->skel->progs.gotrace_probe,
					       pid, path, file_offset, &opts);
	if (!link) {
		int e = -errno;

		if (at < c->nlinks)
			slots_put(&c->free_links, at);
		snprintf(err, errlen, "cannot attach a uprobe to %s at offset "
			 "0x%llx: %s", path, (unsigned long long)file_offset,
			 strerror(-e));
		return e;
	}
	if (pid > 0) {
		const uint64_t cookie = opts.bpf_cookie, off = file_offset;

		capture_relink_add(c, pid, false, at, path, 1, &cookie, &off);
	}
	c->links[at] = link;
	if (at == c->nlinks)
		c->nlinks++;
	c->nuprobes++;
	return 0;
}

int capture_multi_link(struct capture *c, uint32_t n, const uint64_t *cookies,
		      const char *path, const uint64_t *offsets, pid_t pid)
{
	struct gt_link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = bpf_program__fd(c->skel->progs.gotrace_probe);
	attr.attach_type = GT_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = n;
	attr.pid = pid > 0 ? (uint32_t)pid : 0;
	fd = syscall(__NR_bpf, GT_BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/*
 * Attaches sites [0, n) as one link; when the kernel refuses the batch,
 * halves it until the refused sites are alone, reports each through
 * `refused` and attaches the rest. Returns the number attached or -errno
 * for a failure that is not about particular sites.
 */
static int attach_split(struct capture *c, uint32_t n, const uint64_t *cookies,
			const char *path, const uint64_t *offsets, pid_t pid,
			capture_refused_fn refused, void *ctx)
{
	int fd, a, b;
	const uint32_t at = slots_take(&c->free_multi, c->nmulti);

	if (at == c->nmulti && c->nmulti == c->capmulti) {
		uint32_t cap = c->capmulti ? c->capmulti * 2 : 8;
		int *fds = realloc(c->multi_fds, cap * sizeof(*fds));

		if (!fds)
			return -ENOMEM;
		c->multi_fds = fds;
		c->capmulti = cap;
	}
	fd = capture_multi_link(c, n, cookies, path, offsets, pid);
	if (fd >= 0) {
		if (pid > 0)
			capture_relink_add(c, pid, true, at, path, n,
					   cookies, offsets);
		c->multi_fds[at] = fd;
		if (at == c->nmulti)
			c->nmulti++;
		c->nuprobes += n;
		return n;
	}
	if (at < c->nmulti)
		slots_put(&c->free_multi, at);
	if (fd == -ENOMEM || fd == -EPERM || fd == -EACCES || fd == -ESRCH ||
	    fd == -ENOENT || fd == -EBADF)
		return fd;      /* not about one site: give up */
	if (n == 1) {
		refused(cookies[0], -fd, ctx);
		return 0;
	}
	a = attach_split(c, n / 2, cookies, path, offsets, pid, refused, ctx);
	if (a < 0)
		return a;
	b = attach_split(c, n - n / 2, cookies + n / 2, path, offsets + n / 2,
			 pid, refused, ctx);
	return b < 0 ? b : a + b;
}

/* Sites per uprobe-multi link: the kernel registers a link's uprobes one
 * after the other and undoes them all when one is refused, so a refused
 * site costs about two batches of work before it is found alone. */
#define ATTACH_CHUNK 4096

/* Monotonic seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Shows "attaching N uprobes to PATH: done/N" on c->progress, a terminal,
 * rewritten in place, once the recording has taken a second; the line is
 * cleared when done. `shown`: whether it is on screen.
 */
static void attach_progress(struct capture *c, const char *path, uint32_t done,
			    uint32_t n, bool *shown)
{
	if (done < n && now_s() - c->progress_t0 >= 1) {
		fprintf(c->progress, "\rgotrace-record: attaching %u uprobes to %s: %u/%u\033[K",
			n, path, done, n);
		*shown = true;
	} else if (done >= n && *shown) {
		fputs("\r\033[K", c->progress);
	}
	fflush(c->progress);
}

/*
 * Whether the kernel refuses a uprobe on the x86 instruction at p[0, n):
 * one with a LOCK or an ES, CS, SS or DS segment prefix (Linux,
 * arch/x86/kernel/uprobes.c, is_prefix_bad(): ENOTSUPP). Go's atomic
 * operations in assembly start so (lock xadd).
 */
static bool insn_refused(const uint8_t *p, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
	for (size_t i = 0; i < n && i < 14; i++) {
		switch (p[i]) {
		case 0xf0: case 0x26: case 0x2e: case 0x36: case 0x3e:
			return true;
		case 0xf2: case 0xf3: case 0x64: case 0x65: case 0x66: case 0x67:
			continue;   /* other legacy prefixes */
		default:
			return false;
		}
	}
#endif
	(void)p;
	(void)n;
	return false;
}

/*
 * Leaves out of cookies/offsets[0, *n) (in place) the sites whose
 * instruction the kernel refuses (insn_refused(), read from `path`),
 * passing each to `refused` with ENOTSUPP (524), as the kernel would:
 * a refused site found by the kernel costs a batch or two of attaching
 * and undoing. Nothing is left out when `path` cannot be read.
 */
static void drop_refused(uint64_t *cookies, uint64_t *offsets, uint32_t *n,
			 const char *path, capture_refused_fn refused, void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const uint8_t *img;
	uint32_t k = 0;

	if (fd < 0)
		return;
	img = fstat(fd, &st) || st.st_size <= 0 ? MAP_FAILED
		: mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return;
	for (uint32_t i = 0; i < *n; i++) {
		if (offsets[i] < (uint64_t)st.st_size &&
		    insn_refused(img + offsets[i], (size_t)st.st_size - offsets[i])) {
			refused(cookies[i], 524, ctx);
			continue;
		}
		cookies[k] = cookies[i];
		offsets[k++] = offsets[i];
	}
	munmap((void *)img, (size_t)st.st_size);
	*n = k;
}

int capture_attach_many(struct capture *c, uint32_t n, const uint64_t *cookies_in,
			const char *path, const uint64_t *offsets_in, pid_t pid,
			capture_refused_fn refused, void *ctx, char *err,
			size_t errlen)
{
	uint64_t *cookies = malloc((n ? n : 1) * sizeof(*cookies));
	uint64_t *offsets = malloc((n ? n : 1) * sizeof(*offsets));
	bool shown = false;
	uint32_t i;
	int r = 0;

	if (!cookies || !offsets) {
		free(cookies);
		free(offsets);
		snprintf(err, errlen, "out of memory for %u uprobes", n);
		return -ENOMEM;
	}
	memcpy(cookies, cookies_in, n * sizeof(*cookies));
	memcpy(offsets, offsets_in, n * sizeof(*offsets));
	drop_refused(cookies, offsets, &n, path, refused, ctx);
	for (i = 0; i < n; ) {
		const uint32_t m = n - i < ATTACH_CHUNK ? n - i : ATTACH_CHUNK;

		if (c->multi) {
			r = attach_split(c, m, cookies + i, path, offsets + i, pid, refused, ctx);
			if (r < 0)
				break;
		} else {
			for (uint32_t k = i; k < i + m; k++) {
				r = capture_attach(c, (uint32_t)cookies[k], cookies[k] >> 32,
						   path, offsets[k], pid, err, errlen);
				if (r == -ENOMEM || r == -EPERM || r == -EACCES ||
				    r == -ESRCH || r == -ENOENT)
					break;
				if (r)
					refused(cookies[k], -r, ctx);
				r = 0;
			}
			if (r < 0)
				break;
		}
		i += m;
		if (c->progress)
			attach_progress(c, path, i, n, &shown);
	}
	free(cookies);
	free(offsets);
	if (r < 0) {
		if (c->multi)   /* capture_attach() said why already */
			snprintf(err, errlen, "cannot attach %u uprobes to %s: %s", n,
				 path, strerror(-r));
		return r;
	}
	return 0;
}

void capture_show_progress(struct capture *c, FILE *out, double t0)
{
	c->progress = out && isatty(fileno(out)) ? out : NULL;
	c->progress_t0 = t0;
}

int capture_poll(struct capture *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, timeout_ms), m;

	if (n < 0 && n != -EINTR)
		return n;
	/* The BPF side skips most wakeups (BPF_RB_NO_WAKEUP), so epoll may
	 * time out with records waiting: always consume what is there. */
	m = ring_buffer__consume(c->rb);
	if (m < 0)
		return m;
	return (n > 0 ? n : 0) + m;
}

/* Reads every slot of per-CPU counter map `map` into k->v: 0, or -1 when
 * the kernel has no batch lookup for it (k->batch is then -1). */
static int counters_read(struct capture *c, struct bpf_map *map, struct counters *k)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t done = 0, out = 0, count;
	const size_t per = (size_t)c->ncpus;
	int e = 0;

	if (!k->v) {
		k->v = calloc((size_t)c->nplans * per, sizeof(uint64_t));
		k->keys = calloc(c->nplans, sizeof(uint32_t));
		if (!k->v || !k->keys)
			return -1;
	}
	while (done < c->nplans) {
		count = c->nplans - done;
		e = bpf_map_lookup_batch(bpf_map__fd(map), done ? &out : NULL, &out,
					 k->keys + done, k->v + done * per, &count, &opts);
		done += count;
		if (e)
			break;
	}
	if (e && errno != ENOENT)
		return -1;
	return 0;
}

/*
 * The counts of `slot` on each CPU of per-CPU map `map` into *out: from
 * k's batch, read again when a pass over the slots starts; else (no batch
 * lookups) read alone into c->percpu. False when unreadable (*out is then
 * not set): a flag, not a NULL, so that a caller falling back to
 * c->percpu is not read as handed NULL by clang --analyze.
 */
static bool counters_of(struct capture *c, struct bpf_map *map, struct counters *k,
			uint32_t slot, const uint64_t **out)
{
	if (slot >= c->nplans)
		return false;
	if (k->batch >= 0 && (!k->batch || slot <= k->last)) {
		k->batch = counters_read(c, map, k) ? -1 : 1;
	}
	k->last = slot;
	if (k->batch > 0) {
		*out = k->v + (size_t)slot * c->ncpus;
		return true;
	}
	if (bpf_map__lookup_elem(map, &slot, sizeof(slot), c->percpu,
				 sizeof(uint64_t) * c->ncpus, 0))
		return false;
	*out = c->percpu;
	return true;
}

const uint64_t *capture_drops_percpu(struct capture *c, uint32_t slot)
{
	const uint64_t *v;

	if (counters_of(c, c->skel->maps.drops, &c->drops, slot, &v))
		return v;
	memset(c->percpu, 0, sizeof(uint64_t) * c->ncpus);
	return c->percpu;
}

int capture_ncpus(const struct capture *c)
{
	return c->ncpus;
}

uint64_t capture_suppressed(struct capture *c, uint32_t slot)
{
	const uint64_t *v;
	uint64_t sum = 0;

	if (!counters_of(c, c->skel->maps.suppressed, &c->suppressed, slot, &v))
		return 0;
	for (int i = 0; i < c->ncpus; i++)
		sum += v[i];
	return sum;
}

uint32_t capture_nlinks(const struct capture *c)
{
	return c->nuprobes;
}

int capture_on_exit(struct capture *c, capture_exit_fn fn)
{
	const struct {
		const char *via;
		struct bpf_program *prog, *exec;
		int loaded;
	} ways[] = {
		/* no tracefs needed for the first two */
		{ "tp_btf", c->skel->progs.gotrace_exit_btf, c->skel->progs.gotrace_exec_btf,
		  c->exit_level < EXIT_NO_BTF },
		{ "raw_tp", c->skel->progs.gotrace_exit_raw, c->skel->progs.gotrace_exec_raw,
		  c->exit_level < EXIT_NONE },
		{ "tp", c->skel->progs.gotrace_exit_tp, c->skel->progs.gotrace_exec_tp,
		  c->exit_level < EXIT_NONE },
	};
	const char *only = getenv("GOTRACE_EXIT_VIA");
	int e = -ENOTSUP;
	size_t i;

	for (i = 0; !c->exit_link && i < sizeof(ways) / sizeof(ways[0]); i++) {
		if (!ways[i].loaded || (only && strcmp(only, ways[i].via)))
			continue;
		c->exit_link = bpf_program__attach(ways[i].prog);
		if (!c->exit_link)
			e = -errno;
		else
			c->exit_via = ways[i].via;
	}
	/* sched_process_exec the same way, else any other: an exec from a
	 * thread other than the first needs it (capture_exec.c) */
	for (i = 0; c->exit_link && !c->exec_link && i < sizeof(ways) / sizeof(ways[0]); i++)
		if (ways[i].loaded && !strcmp(c->exit_via, ways[i].via))
			c->exec_link = bpf_program__attach(ways[i].exec);
	for (i = 0; c->exit_link && !c->exec_link && i < sizeof(ways) / sizeof(ways[0]); i++)
		if (ways[i].loaded)
			c->exec_link = bpf_program__attach(ways[i].exec);
	if (!c->exit_link)
		return e;
	if (!c->exec_link)
		fprintf(stderr, "gotrace-record: warning: cannot attach to the "
			"sched_process_exec tracepoint (%s): a traced process that "
			"execs from a thread other than its first runs its new "
			"image untraced\n", strerror(errno));
	c->exit_fn = fn;
	return 0;
}

const char *capture_exit_via(const struct capture *c)
{
	return c->exit_via;
}

int capture_consume(struct capture *c)
{
	return ring_buffer__consume(c->rb);
}

int capture_unwatch_exit(struct capture *c, uint32_t pid)
{
	if (bpf_map__delete_elem(c->skel->maps.watched, &pid, sizeof(pid), 0))
		return -errno;
	return 0;
}

int capture_watch_exit(struct capture *c, uint32_t pid)
{
	const uint8_t one = 1;

	if (!c->exit_link)
		return -ENOTSUP;
	if (bpf_map__update_elem(c->skel->maps.watched, &pid, sizeof(pid), &one,
				 sizeof(one), BPF_ANY))
		return -errno;
	return 0;
}

/*
 * With GOTRACE_BPF_STATS set (a measuring hook: tests/bench/capture_bench.py),
 * prints the kernel's run statistics of the probe program to stderr:
 * "gotrace-record: bpf_stats: N runs, T ns, T/N ns per run". The kernel
 * counts them only while sysctl kernel.bpf_stats_enabled is 1.
 */
static void print_bpf_stats(const struct capture *c)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	if (!getenv("GOTRACE_BPF_STATS"))
		return;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(c->skel->progs.gotrace_probe), &info, &len)) {
		fprintf(stderr, "gotrace-record: bpf_stats: %s\n", strerror(errno));
		return;
	}
	fprintf(stderr, "gotrace-record: bpf_stats: %llu runs, %llu ns, %.1f ns per run\n",
		(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
		info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0);
}

/* Closing threads of close_links(): each closes fds[k], fds[k + n], ... */
#define CLOSERS 8

struct closer {
	const int *fds;
	uint32_t n, first;
};

static void *closer_run(void *arg)
{
	const struct closer *w = arg;

	for (uint32_t k = w->first; k < w->n; k += CLOSERS)
		if (w->fds[k] >= 0)
			close(w->fds[k]);
	return NULL;
}

/* About 0.1 s a link: several threads wait at once. */
void capture_close_links(const int *fds, uint32_t n)
{
	struct closer w[CLOSERS];
	pthread_t t[CLOSERS];
	bool started[CLOSERS] = { false };

	for (uint32_t k = 0; k < CLOSERS; k++) {
		w[k] = (struct closer){ fds, n, k };
		started[k] = k < n && n > 1 && !pthread_create(&t[k], NULL, closer_run, &w[k]);
	}
	for (uint32_t k = 0; k < CLOSERS; k++)
		if (started[k])
			pthread_join(t[k], NULL);
		else if (k < n)
			closer_run(&w[k]);   /* no thread: here */
}

/*
 * After the exec program's link is gone: reads the ring buffer until no
 * exec record has come for 10 ms (at most 1 s), so that a process that
 * an instance of the program still running on another CPU stopped as
 * the link went is let go too.
 */
static void drain_execs(struct capture *c)
{
	const double start = now_s();
	double last = start;
	uint64_t seen = c->exec_records;

	if (!c->rb)
		return;
	ring_buffer__consume(c->rb);
	while (now_s() - last < 0.010 && now_s() - start < 1.0) {
		ring_buffer__poll(c->rb, 2);
		if (c->exec_records != seen) {
			seen = c->exec_records;
			last = now_s();
		}
	}
}

uint64_t capture_execs_lost(struct capture *c)
{
	uint64_t *v = calloc((size_t)c->ncpus, sizeof(*v)), n = 0;
	uint32_t zero = 0;
	int i;

	if (!v || bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.procs_lost), &zero, v)) {
		free(v);
		return 0;
	}
	for (i = 0; i < c->ncpus; i++)
		n += v[i];
	free(v);
	return n;
}

void capture_close(struct capture *c)
{
	uint32_t i;

	if (!c)
		return;
	print_bpf_stats(c);
	bpf_link__destroy(c->exit_link);
	bpf_link__destroy(c->fork_link);
	/* a process the exec program stopped since the last read goes on */
	bpf_link__destroy(c->exec_link);
	if (c->skel && capture_execs_lost(c))
		fprintf(stderr, "gotrace-record: warning: %llu processes ran unprobed: "
			"they exec'd a probed binary while the exec records' ring "
			"buffer was full\n", (unsigned long long)capture_execs_lost(c));
	c->closing = true;
	drain_execs(c);
	for (i = 0; i < c->nlinks; i++)
		bpf_link__destroy(c->links[i]);
	free(c->links);
	capture_close_links(c->multi_fds, c->nmulti);
	capture_relinks_free(c);
	/* every held process is let go: the guardian ends */
	guardian_stop(c->guardian);
	free(c->multi_fds);
	ring_buffer__free(c->rb);
	if (c->plans_mm)
		munmap(c->plans_mm, c->plans_len);
	gotrace_bpf__destroy(c->skel);
	free(c->percpu);
	free(c->drops.v);
	free(c->drops.keys);
	free(c->suppressed.v);
	free(c->suppressed.keys);
	free(c);
}
