// SPDX-License-Identifier: MIT
/*
 * A traced process that execs from a thread other than its first (and,
 * through capture_follow.c, one of the followed tree that execs a
 * probed binary). Its uprobes were attached by its pid, and the kernel keeps the task it
 * found then, the first thread: a uprobe-multi link's filter compares
 * that task's memory with the one being probed
 * (bpf_uprobe_multi_link_attach(), uprobe_multi_link_filter(),
 * kernel/trace/bpf_trace.c), a perf-event uprobe runs in that task's
 * context only; de_thread() (fs/exec.c) ends that task when another
 * thread execs, so the new image would run unprobed (Linux 6.18). The
 * BPF program stopped the process (on_process_exec()); here its links
 * are made again for the pid, whose task is now the thread that exec'd,
 * the old ones are closed (their handlers would still run for the
 * process: they match its thread group) and it goes on.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "capture_int.h"
#include "xalloc.h"

uint32_t slots_take(struct slots *s, uint32_t n)
{
	return s->n ? s->v[--s->n] : n;
}

void slots_put(struct slots *s, uint32_t at)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v), "links");
	}
	s->v[s->n++] = at;
}

void capture_relink_add(struct capture *c, pid_t pid, bool multi, uint32_t at,
			const char *path, uint32_t n, const uint64_t *cookies,
			const uint64_t *offsets)
{
	const uint32_t key = (uint32_t)pid;
	const uint8_t one = 1;
	struct relink *r;
	struct stat st;
	uint32_t i;

	if (stat(path, &st)) {
		if (errno == ENOENT && !strncmp(path, "/proc/", 6))
			return;   /* the process exited: nothing to make again */
		fprintf(stderr, "gotrace-record: warning: cannot stat %s (%s): "
			"if process %d execs from a thread other than its first, "
			"its new image runs untraced\n", path, strerror(errno), (int)pid);
		return;
	}
	i = slots_take(&c->free_relinks, c->nrelinks);
	if (i == c->nrelinks) {
		if (c->nrelinks == c->caprelinks) {
			c->caprelinks = c->caprelinks ? c->caprelinks * 2 : 8;
			c->relinks = xrealloc(c->relinks, c->caprelinks * sizeof(*r),
					      "links");
		}
		c->nrelinks++;
	}
	if (u64map_add(&c->relink_of, key, i, UINT32_MAX))
		xalloc_die("links");
	r = &c->relinks[i];
	*r = (struct relink){ .pid = pid, .multi = multi, .at = at,
			      .dev = st.st_dev, .ino = st.st_ino, .n = n };
	r->path = strcpy(xcalloc(strlen(path) + 1, 1, "links"), path);
	r->cookies = memcpy(xcalloc(n, sizeof(*cookies), "links"), cookies,
			    n * sizeof(*cookies));
	r->offsets = memcpy(xcalloc(n, sizeof(*offsets), "links"), offsets,
			    n * sizeof(*offsets));
	/* a full table (16384 processes) leaves this one unwatched */
	bpf_map_update_elem(c->execs_fd, &key, &one, BPF_ANY);
}

/* The relinks[] indices of process `pid`, in a new array of *n. */
static uint32_t *relinks_of(const struct capture *c, pid_t pid, uint32_t *n)
{
	uint32_t pos = 0, cap = 0, *v = NULL;
	const uint32_t *at;

	*n = 0;
	while ((at = u64map_find(&c->relink_of, (uint32_t)pid, &pos))) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			v = xrealloc(v, cap * sizeof(*v), "links");
		}
		v[(*n)++] = *at;
	}
	return v;
}

/* Frees relink i (its link already closed or handed on) and gives its
 * slots back. */
static void relink_release(struct capture *c, uint32_t i)
{
	struct relink *r = &c->relinks[i];

	slots_put(r->multi ? &c->free_multi : &c->free_links, r->at);
	u64map_del(&c->relink_of, (uint32_t)r->pid, i);
	free(r->path);
	free(r->cookies);
	free(r->offsets);
	*r = (struct relink){ 0 };
	slots_put(&c->free_relinks, i);
}

/* Whether r->path still names the file r was attached to (not another
 * one an exec of a different program put at /proc/PID/exe, or a file
 * replaced on disk). */
static bool same_file(const struct relink *r)
{
	struct stat st;

	return !stat(r->path, &st) && st.st_dev == r->dev && st.st_ino == r->ino;
}

/*
 * Makes link r again for its pid; a multi link's old fd goes to
 * old[(*nold)++] for the caller to close, a perf-event link is destroyed
 * here. 0 or -errno (the link is then gone).
 */
static int relink(struct capture *c, const struct relink *r, int *old,
		  uint32_t *nold)
{
	struct bpf_link *l;
	int fd;

	if (r->multi) {
		fd = capture_multi_link(c, r->n, r->cookies, r->path, r->offsets, r->pid);
		old[(*nold)++] = c->multi_fds[r->at];
		c->multi_fds[r->at] = fd >= 0 ? fd : -1;
		return fd < 0 ? fd : 0;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = r->cookies[0]);
	l = bpf_program__attach_uprobe_opts(c->prog, r->pid, r->path,
					    r->offsets[0], &opts);
	fd = l ? 0 : -errno;
	bpf_link__destroy(c->links[r->at]);
	c->links[r->at] = l;
	return fd;
}

/* Closes link i for good: its process runs another file now. */
static void relink_drop(struct capture *c, uint32_t i, int *old,
			uint32_t *nold)
{
	struct relink *r = &c->relinks[i];

	if (r->multi) {
		old[(*nold)++] = c->multi_fds[r->at];
		c->multi_fds[r->at] = -1;
	} else {
		bpf_link__destroy(c->links[r->at]);
		c->links[r->at] = NULL;
	}
	relink_release(c, i);
}

uint64_t capture_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Makes the links of x->pid again after its exec from a thread other
 * than its first (those whose file is another now are closed), and says
 * so (with -v) or what failed.
 */
static void relink_process(struct capture *c, const struct gt_exec *x)
{
	uint32_t nold = 0, again = 0, gone = 0, failed = 0, nat;
	uint32_t *at = relinks_of(c, (pid_t)x->pid, &nat);
	int *old = xcalloc(nat + 1, sizeof(*old), "links");
	int e = 0;

	for (uint32_t j = 0; j < nat && !c->closing; j++) {
		struct relink *r = &c->relinks[at[j]];
		int k;

		if (!same_file(r)) {
			relink_drop(c, at[j], old, &nold);
			gone++;
			continue;
		}
		k = relink(c, r, old, &nold);
		if (k) {
			e = k;
			failed++;
		} else {
			again++;
		}
	}
	capture_close_links(old, nold);
	free(old);
	free(at);
	if (failed)
		fprintf(stderr, "gotrace-record: warning: process %u exec'd from "
			"a thread other than its first and %u of its uprobe links "
			"could not be attached again (%s): its new image is traced "
			"in part\n", x->pid, failed, strerror(-e));
	if (c->verbose && !c->closing)
		fprintf(stderr, "gotrace-record: process %u exec'd from thread %u, "
			"not its first: %u uprobe link%s attached again, %u of "
			"another file closed; %s %.1f ms\n", x->pid, x->old_tid,
			again, again == 1 ? "" : "s", gone,
			x->stopped ? "stopped for" : "not stopped (events may be "
			"lost), after",
			(double)(capture_now_ns() - x->ts_ns) / 1e6);
}

/* Lets the stopped process x->pid go on: through `pidfd` (the process
 * the record was about), by pid only where pidfds are not (before Linux
 * 5.3). */
static void let_go(const struct capture *c, const struct gt_exec *x, int pidfd)
{
	int k = pidfd >= 0 ? (int)syscall(SYS_pidfd_send_signal, pidfd, SIGCONT,
					  NULL, 0)
			   : kill((pid_t)x->pid, SIGCONT);

	if (k && errno != ESRCH)
		fprintf(stderr, "gotrace-record: cannot let process %u go on "
			"(%s): run kill -CONT %u\n", x->pid, strerror(errno), x->pid);
	/* after the signal: the guardian (guardian.c) lets go what is left
	 * here should this process die in between */
	bpf_map_delete_elem(c->held_fd, &x->pid);
}

void capture_on_exec_record(struct capture *c, const struct gt_exec *x)
{
	/* the process of this record, whatever comes to its pid after */
	const int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)x->pid, 0);
	int spawned = 0;

	c->exec_records++;
	if (pidfd < 0 && errno == ESRCH)
		return;   /* gone (its exit closes its links) */
	if (x->old_tid != x->pid && !capture_pidfd_exited(pidfd))
		relink_process(c, x);
	if (x->bin != GT_NO_BIN)
		spawned = capture_on_spawn(c, x, pidfd);
	if (x->stopped)
		let_go(c, x, pidfd);
	if (pidfd >= 0)
		close(pidfd);
	if (spawned > 0 && c->verbose)
		fprintf(stderr, "gotrace-record: process %u of the traced tree "
			"exec'd a probed binary: its uprobes attached; %s %.1f ms\n",
			x->pid, x->stopped ? "stopped for" : "not stopped "
			"(events may be lost), after",
			(double)(capture_now_ns() - x->ts_ns) / 1e6);
}

/* Links of exited processes, closed on a detached thread. */
struct dead_links {
	int *fds;
	struct bpf_link **links;
	uint32_t nfds, nlinks;
};

static void *dead_close(void *arg)
{
	struct dead_links *d = arg;

	for (uint32_t i = 0; i < d->nfds; i++)
		close(d->fds[i]);
	for (uint32_t i = 0; i < d->nlinks; i++)
		bpf_link__destroy(d->links[i]);
	free(d->fds);
	free(d->links);
	free(d);
	return NULL;
}

void capture_relinks_exited(struct capture *c, pid_t pid)
{
	struct dead_links *d = xcalloc(1, sizeof(*d), "links");
	const uint32_t key = (uint32_t)pid;
	pthread_attr_t attr;
	uint32_t nat;
	uint32_t *at = relinks_of(c, pid, &nat);
	pthread_t t;

	d->fds = xcalloc(nat + 1, sizeof(*d->fds), "links");
	d->links = xcalloc(nat + 1, sizeof(*d->links), "links");
	for (uint32_t j = 0; j < nat; j++) {
		struct relink *r = &c->relinks[at[j]];

		if (r->multi && c->multi_fds[r->at] >= 0) {
			d->fds[d->nfds++] = c->multi_fds[r->at];
			c->multi_fds[r->at] = -1;
		} else if (!r->multi && c->links[r->at]) {
			d->links[d->nlinks++] = c->links[r->at];
			c->links[r->at] = NULL;
		}
		relink_release(c, at[j]);
	}
	free(at);
	if (nat)   /* its pid may be another process's next */
		bpf_map_delete_elem(c->execs_fd, &key);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!d->nfds && !d->nlinks)
		dead_close(d);
	else if (pthread_create(&t, &attr, dead_close, d))
		dead_close(d);   /* no thread: here, then */
	pthread_attr_destroy(&attr);
}

void capture_relinks_free(struct capture *c)
{
	for (uint32_t i = 0; i < c->nrelinks; i++) {
		free(c->relinks[i].path);
		free(c->relinks[i].cookies);
		free(c->relinks[i].offsets);
	}
	free(c->relinks);
	c->relinks = NULL;
	c->nrelinks = c->caprelinks = 0;
	u64map_free(&c->relink_of);
	free(c->free_relinks.v);
	free(c->free_links.v);
	free(c->free_multi.v);
	free(c->files);
}
