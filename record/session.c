// SPDX-License-Identifier: MIT
/*
 * One recording: targets, plan, output files, capture and the capture
 * loop; see session.h. The only file-level state is the signal that
 * stopped the recording (set by the handler).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "capture.h"
#include "encode.h"
#include "plan.h"
#include "session.h"
#include "targets.h"

_Static_assert(RECORD_STR_MAX == GT_STR_MAX, "-s limit and BPF cap differ");

struct session {
	const struct record_opts *o;
	struct plan *plan;
	struct encoder *enc;
	struct capture *cap;
	struct attach *att;      /* the probes' sites, per binary */
	char *dflt_path, *dflt_attach; /* the executable of CMD */
	struct targets *tg;      /* the executables of CMD or the PIDs */
	struct gtr_host host;
	struct utsname uts;
	char hostname[256];
	unsigned file_no;        /* current output file of a rotation */
	bool gone;               /* the reader of a streamed trace went away
				  * (set before the writer is closed) */
	uint64_t written;        /* bytes of the files closed before */
	pid_t child;             /* the command, while it runs */
	pid_t cmd_pid;           /* the command, once it exited */
	int go_fd;               /* a byte here lets the command run */
	int released;            /* the command was let run */
	int passed;              /* a signal passed on to the command */
	int forced;              /* a second signal: ends now, re-raised */
	int status;              /* the command's wait() status */
	const char *why;         /* which limit stopped the recording */
	/* Startup progress, on a terminal, once a second has passed. */
	FILE *progress;          /* NULL: not shown */
	uint64_t t0_ns, said_ns; /* start (CLOCK_MONOTONIC); last line */
	bool said;               /* a line is on screen */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Installs on_signal without SA_RESTART, so waitpid() sees EINTR. */
static void catch_signal(int sig)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Shows "gotrace-record: WHAT" in place on s->progress once the recording
 * has been starting for a second, at most ten times a second unless
 * `now_too` (a new step), the cursor left at its start (a message printed
 * meanwhile writes over it); NULL clears the line shown.
 */
static void startup_say(struct session *s, const char *what, bool now_too)
{
	const uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!s->progress || (what && (now - s->t0_ns < 1000000000ull ||
				      (!now_too && now - s->said_ns < 100000000ull))))
		return;
	if (what || s->said)
		fprintf(s->progress, what ? "\r\033[Kgotrace-record: %s\r" : "\r\033[K",
			what);
	fflush(s->progress);
	s->said = what != NULL;
	s->said_ns = now;
}

/* plan_opts.progress: the probes prepared so far. */
static void plan_progress(void *ctx, int nprobes)
{
	char what[64];

	snprintf(what, sizeof(what), "preparing probes: %d", nprobes);
	startup_say(ctx, what, false);
}

static void host_fill(struct gtr_host *h, struct utsname *u, char *hn,
		      size_t hnlen)
{
	memset(h, 0, sizeof(*h));
	uname(u);
	if (gethostname(hn, hnlen))
		snprintf(hn, hnlen, "%s", u->nodename);
	h->hostname = hn;
	h->kernel = u->release;
	h->machine = u->machine;
	h->recorder = "gotrace-record " GOTRACE_VERSION;
	h->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
	h->start_realtime_ns = clock_ns(CLOCK_REALTIME);
	h->start_boottime_ns = clock_ns(CLOCK_BOOTTIME);
}

/* Resolves CMD's executable through PATH, as execvp would. */
static char *which(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return strdup(cmd);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n,
			 n ? path : ".", cmd);
		if (access(buf, X_OK) == 0)
			return strdup(buf);
		path += n + (colon ? 1 : 0);
	}
	return strdup(cmd);
}

/* Whether the trace goes to our standard output: "-", or a path to the
 * same pipe or device (/dev/stdout, /proc/self/fd/1). */
static bool output_is_stdout(const char *output)
{
	struct stat a, b;

	if (!strcmp(output, "-"))
		return true;
	return !stat(output, &a) && !fstat(STDOUT_FILENO, &b) && !S_ISREG(a.st_mode) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Forks CMD stopped before exec; it runs when a byte arrives on *go_fd.
 * `stdout_to_stderr`: the trace goes to our standard output, so CMD's
 * output goes to standard error instead of into the trace.
 */
static pid_t spawn_stopped(char **cmd, int *go_fd, bool stdout_to_stderr)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;

		close(fds[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);   /* recorder gave up before exec */
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(cmd[0], cmd);
		fprintf(stderr, "gotrace-record: cannot run %s: %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go_fd = fds[1];
	return pid;
}

/*
 * Refuses early, with what to do, when this host or user cannot trace:
 * capabilities (root, or CAP_BPF and CAP_PERFMON), BTF, uprobes.
 */
static int preflight(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data) == 0) {
		uint64_t eff = data[0].effective |
			       (uint64_t)data[1].effective << 32;
		int admin = eff & (1ull << 21);            /* CAP_SYS_ADMIN */
		int bpf = eff & (1ull << 39);              /* CAP_BPF */
		int perfmon = eff & (1ull << 38);          /* CAP_PERFMON */

		if (!admin && !(bpf && perfmon)) {
			fprintf(stderr, "gotrace-record: not allowed to load "
				"BPF programs and attach uprobes; run as root, "
				"or with CAP_BPF and CAP_PERFMON (e.g. sudo "
				"gotrace-record ...)\n");
			return -1;
		}
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "gotrace-record: this kernel has no BTF "
			"(/sys/kernel/btf/vmlinux); gotrace needs a kernel "
			"built with CONFIG_DEBUG_INFO_BTF=y (5.15 or newer)\n");
		return -1;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		fprintf(stderr, "gotrace-record: this kernel has no uprobes "
			"(/sys/bus/event_source/devices/uprobe); gotrace needs "
			"CONFIG_UPROBE_EVENTS=y\n");
		return -1;
	}
	return 0;
}

/* Name of output file number `k`: FILE, then FILE1, FILE2... (tcpdump -C). */
static void output_name(const struct record_opts *o, char *buf, size_t len,
			unsigned k)
{
	if (o->rotate_count)
		k %= o->rotate_count;
	if (k)
		snprintf(buf, len, "%s%u", o->output, k);
	else
		snprintf(buf, len, "%s", o->output);
}

/* Creates output file number `k`, empty. NULL with why in err[errlen]. */
static struct gtr_writer *create_output(const struct session *s, unsigned k,
					const struct gtr_host *host, char *err,
					size_t errlen)
{
	const struct record_opts *o = s->o;
	unsigned flags = o->flags;
	char name[PATH_MAX];

	output_name(s->o, name, sizeof(name), k);
	if (o->rotate_count && k >= o->rotate_count)
		flags |= GTR_W_FORCE;   /* the ring reuses its own names */
	return gtr_writer_create_redacted(name, flags, host, o->redact, err, errlen);
}

/*
 * Removes output file number `k` of a recording that failed before its
 * first event, whose writer is closed: it would hold metadata alone. A
 * FIFO, a device or standard output is left alone.
 */
static void remove_output(const struct session *s, unsigned k)
{
	char name[PATH_MAX];
	struct stat st;

	if (output_is_stdout(s->o->output))
		return;
	output_name(s->o, name, sizeof(name), k);
	if (!lstat(name, &st) && S_ISREG(st.st_mode))
		unlink(name);
}

/* Says why writing the header to `w` failed, in err[errlen], and closes w. */
static void header_failed(struct gtr_writer *w, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", gtr_writer_error(w));
	gtr_writer_close(w, NULL, 0);
}

/*
 * Creates output file number `k` and writes everything a reader needs
 * before events: host, binaries with their symbols, a clock sample, the
 * probes. Every file of a rotation is complete on its own.
 */
static struct gtr_writer *open_output(const struct session *s, unsigned k,
				      const struct gtr_host *host, char *err,
				      size_t errlen)
{
	struct gtr_writer *w = create_output(s, k, host, err, errlen);

	if (w && encoder_write_header(w, s->plan)) {
		header_failed(w, err, errlen);
		return NULL;
	}
	return w;
}

/* Whether the status line is shown: a terminal, not CI, not -q. */
static int status_enabled(const struct record_opts *o)
{
	const char *ci = getenv("CI");

	return !o->quiet && isatty(STDERR_FILENO) && !(ci && *ci);
}

static void status_line(const struct session *s, uint64_t elapsed_ns, uint64_t rate, uint64_t dropped,
			uint64_t bytes)
{
	fprintf(stderr, "\r\033[Kgotrace-record: %d probe%s, %llu events "
		"(%llu/s), %llu dropped, %.1f MB written, %.1f B/event, %llus",
		plan_nprobes(s->plan), plan_nprobes(s->plan) == 1 ? "" : "s",
		(unsigned long long)encoder_events(s->enc), (unsigned long long)rate,
		(unsigned long long)dropped, bytes / 1e6,
		encoder_events(s->enc) ? (double)bytes / encoder_events(s->enc) : 0.0,
		(unsigned long long)(elapsed_ns / 1000000000ull));
}

/*
 * With -p, every binary named in a probe must be mapped by at least one
 * of the processes, or (without --no-inherit) be run by a process they
 * start; else its probes could never fire. Returns -1 after saying which
 * (a note only, without --no-inherit).
 */
static int targets_map_binaries(const struct session *s)
{
	const struct record_opts *o = s->o;
	int bi, t, bad = 0;

	for (bi = 0; bi < plan_nbinaries(s->plan) && o->npids; bi++) {
		struct stat want;
		int found = 0;

		if (stat(plan_binary(s->plan, bi)->attach_path, &want))
			continue;
		for (t = 0; t < o->npids && !found; t++) {
			char path[64], line[4096];
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/maps", o->pids[t]);
			f = fopen(path, "re");
			while (f && !found && fgets(line, sizeof(line), f)) {
				unsigned long long ino;
				unsigned maj, min;

				if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min,
					   &ino) == 3 && ino == want.st_ino &&
				    makedev(maj, min) == want.st_dev)
					found = 1;
			}
			if (f)
				fclose(f);
		}
		if (!found && !o->no_inherit && !o->quiet)
			fprintf(stderr, "gotrace-record: note: %s is not mapped by "
				"the traced process%s (%d%s); its probes fire only in "
				"processes they start that run it\n",
				plan_binary(s->plan, bi)->path, o->npids > 1 ? "es" : "",
				o->pids[0], o->npids > 1 ? ", ..." : "");
		else if (!found && o->no_inherit) {
			fprintf(stderr, "gotrace-record: %s is not mapped by the "
				"traced process%s (%d%s); its probes could never "
				"fire: check the PID or the BINARY: part\n",
				plan_binary(s->plan, bi)->path, o->npids > 1 ? "es" : "",
				o->pids[0], o->npids > 1 ? ", ..." : "");
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* Processes still alive among the -p targets. */
static int targets_alive(const struct record_opts *o)
{
	int i, n = 0;

	for (i = 0; i < o->npids; i++)
		if (!kill(o->pids[i], 0) || errno != ESRCH)
			n++;
	return n;
}


void session_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
}

/* The executable of CMD or of each PID: the binaries of probes that
 * name none. 0, or -1 after printing why. */
static int session_targets(struct session *s)
{
	const struct record_opts *o = s->o;
	if (o->cmd) {
		s->dflt_path = which(o->cmd[0]);
		if (access(s->dflt_path, X_OK)) {
			fprintf(stderr, "gotrace-record: cannot run %s: %s\n",
				o->cmd[0], strerror(errno));
			return -1;
		}
		s->dflt_attach = strdup(s->dflt_path);
	}
	s->tg = targets_new(o->pids, o->npids, s->dflt_path);
	return s->tg ? 0 : -1;
}

/* The plan of every probe of the command line. 0, or -1 after printing
 * why. */
static int session_plan(struct session *s)
{
	const struct record_opts *o = s->o;
	const struct plan_opts po = {
		.str_max = o->str_max, .max_probes = o->max_probes,
		.quiet = o->quiet, .stack = o->stack,
		.nexcludes = o->nexcludes, .excludes = (char **)o->excludes,
		.root_pid = o->npids ? o->pids[0] : 0,
		.debuginfo = o->debuginfo,
		.rate = o->rate,
		.progress = plan_progress, .progress_ctx = s,
	};
	int i;

	s->plan = plan_new(&po);
	if (!s->plan)
		return -1;
	for (i = 0; i < o->nspecs; i++)
		plan_name(s->plan, o->specs[i]);
	for (i = 0; i < o->nspecs; i++)
		if (targets_plan(s->tg, s->plan, o->specs[i], o->quiet, po.root_pid))
			return -1;
	if (plan_whole_calls(s->plan) || plan_chain_returns(s->plan)) {
		fprintf(stderr, "gotrace-record: out of memory for the probes\n");
		return -1;
	}
	plan_warnings(s->plan);
	return targets_map_binaries(s);
}

/*
 * Loads the BPF program, starts the command (stopped), stores the plans
 * and attaches every site. 0, or -1 after printing why.
 */
static int session_attach(struct session *s)
{
	const struct record_opts *o = s->o;
	char err[1024];
	int i, e;

	snprintf(err, sizeof(err), "loading the capture program for %d probes",
		 plan_nprobes(s->plan));
	startup_say(s, err, true);
	s->cap = capture_open(plan_nprobes(s->plan), o->ringbuf, o->verbose,
			      encoder_on_event, s->enc, err, sizeof(err));
	if (!s->cap) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	encoder_set_capture(s->enc, s->cap);
	/* exact exit times and statuses; without the tracepoint, exits are
	 * polled for and their status is unknown */
	e = capture_on_exit(s->cap, encoder_on_exit);
	if (e)
		fprintf(stderr, "gotrace-record: cannot attach to the sched_process_exit tracepoint (tp_btf, raw_tp, tp: %s): process exits are polled for, noticed within a second and recorded without their status\n",
			strerror(-e));
	else if (o->verbose)
		fprintf(stderr, "gotrace-record: process exits from the sched_process_exit tracepoint, attached as %s\n",
			capture_exit_via(s->cap));
	if (o->cmd) {
		s->child = spawn_stopped(o->cmd, &s->go_fd, output_is_stdout(o->output));
		if (s->child < 0) {
			fprintf(stderr, "gotrace-record: cannot start %s: %s\n",
				o->cmd[0], strerror(errno));
			s->child = 0;
			return -1;
		}
	}
	if (s->progress)
		capture_show_progress(s->cap, s->progress, s->t0_ns / 1e9);
	for (i = 0; i < plan_nprobes(s->plan); i++) {
		if (capture_set_plan(s->cap, i, &plan_probe(s->plan, i)->plan)) {
			fprintf(stderr, "gotrace-record: cannot store the plan of "
				"probe '%s'\n", plan_probe(s->plan, i)->spec.text);
			return -1;
		}
	}
	s->att = attach_new(s->plan, s->tg, s->cap);
	if (attach_start(s->att, o->cmd ? s->child : 0, &stop_signal, err,
			 sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	return 0;
}

/* Watches the targets' exits, says what is attached and lets the command
 * run. 0, or -1 after printing why. */
static int session_go(struct session *s)
{
	const struct record_opts *o = s->o;

	/* the targets known now are watched from the start, so that an exit
	 * before the recorder reads their first event is seen too */
	for (int t = 0; t < o->npids; t++)
		capture_watch_exit(s->cap, (uint32_t)o->pids[t]);
	if (s->child > 0)
		capture_watch_exit(s->cap, (uint32_t)s->child);
	/* the processes they start, before they can start any */
	if (o->cmd || o->npids)
		attach_follow(s->att, !o->no_inherit, o->pids, o->npids);
	if (!o->quiet)
		fprintf(stderr, "gotrace-record: %d probe%s attached (%u "
			"uprobe%s); %s\n", plan_nprobes(s->plan),
			plan_nprobes(s->plan) == 1 ? "" : "s",
			capture_nlinks(s->cap),
			capture_nlinks(s->cap) == 1 ? "" : "s",
			o->cmd ? "running the command" : "Ctrl-C to stop");
	if (o->cmd) {
		if (write(s->go_fd, "g", 1) != 1) {
			fprintf(stderr, "gotrace-record: cannot start %s\n",
				o->cmd[0]);
			return -1;
		}
		close(s->go_fd);
		s->go_fd = -1;
		s->released = 1;
	}
	return 0;
}

/* Writes the drop records of the counts read now, after the events the
 * ring buffer holds: the events kept before a count was read (the one
 * that filled a rate-limit window among them) come before its record in
 * the file, as a reader reckoning the windows in file order expects. */
static void session_drops(struct session *s)
{
	capture_poll(s->cap, 0);
	encoder_drops(s->enc);
}

/* Closes the current file and opens the next of the rotation. A full disk
 * (the flush, the next file) leaves the encoder counting what it cannot
 * write, as without rotation. Returns 0. */
static int session_rotate(struct session *s)
{
	struct gtr_writer *w = encoder_writer(s->enc), *next;
	char err[1024];

	session_drops(s);
	if (gtr_writer_flush(w)) {
		/* a full disk: stay on this file, counting what is not
		 * written, as without rotation */
		encoder_fail(s->enc, clock_ns(CLOCK_MONOTONIC));
		return 0;
	}
	gtr_writer_end(w);           /* its summary counts in its size */
	s->written += gtr_writer_bytes(w);
	if (gtr_writer_close(w, err, sizeof(err)))
		/* its frames are whole; its summary is what is missing */
		fprintf(stderr, "gotrace-record: %s\n", err);
	host_fill(&s->host, &s->uts, s->hostname, sizeof(s->hostname));
	/* its windows began in an earlier file */
	plan_rate_carry(s->plan, encoder_rate_windows(s->enc));
	next = open_output(s, ++s->file_no, &s->host, err, sizeof(err));
	encoder_set_writer(s->enc, next);
	if (!next) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		encoder_fail(s->enc, clock_ns(CLOCK_MONOTONIC));
	}
	return 0;
}

/* Whether the trace was streamed to a reader that went away (EPIPE):
 * the recording ends, and that is no error. */
static bool reader_gone(const struct session *s)
{
	return s->enc && encoder_failed(s->enc) &&
	       gtr_writer_failed(encoder_writer(s->enc)) == -EPIPE;
}

/*
 * Whether the recording ends now: the command exited, a signal, the -p
 * targets exited, or a limit (s->why). A signal while the command runs
 * is passed on to it instead.
 */
static int session_should_stop(struct session *s, uint64_t now,
			       uint64_t start, uint64_t bytes)
{
	const struct record_opts *o = s->o;

	if (s->child && waitpid(s->child, &s->status, WNOHANG) == s->child) {
		s->cmd_pid = s->child;
		s->child = 0;
		return 1;
	}
	if (stop_signal) {
		if (!s->child)
			return 1;
		/* A second one ends the recording now: capture_close()
		 * lets the processes held for an attach go on. */
		if (s->passed) {
			s->forced = stop_signal;
			return 1;
		}
		/* Pass the first on and wait for CMD to exit. */
		kill(s->child, stop_signal);
		s->passed = stop_signal;
		stop_signal = 0;
	}
	if (reader_gone(s))
		s->why = "the reader of the trace went away";
	else if (o->npids && !targets_alive(o))
		s->why = "the traced processes exited";
	else if (o->duration_ns && now - start >= o->duration_ns)
		s->why = "--duration reached";
	else if (o->max_events && encoder_events(s->enc) >= o->max_events)
		s->why = "--max-events reached";
	else if (o->max_size && bytes >= o->max_size)
		s->why = "--max-size reached";
	return s->why != NULL;
}

/* Reads events until the recording ends. 0, or -1 after printing why
 * (the file is closed by the caller either way). */
static int session_loop(struct session *s)
{
	const struct record_opts *o = s->o;
	const int status_on = status_enabled(o);
	uint64_t start, last_flush, last_events = 0;
	const uint64_t flush_ns = o->flush_ns ? o->flush_ns : 1000000000ull;
	const int poll_ms = flush_ns < 100000000ull ? (int)(flush_ns / 1000000) + 1 : 100;

	start = last_flush = clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		int n = capture_poll(s->cap, poll_ms);
		uint64_t now, bytes;

		if (n < 0) {
			fprintf(stderr, "gotrace-record: reading events: %s\n",
				strerror(-n));
			break;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		bytes = s->written + gtr_writer_bytes(encoder_writer(s->enc));
		if (session_should_stop(s, now, start, bytes))
			break;
		/* a full disk: events are counted until the end, nothing
		 * more is written */
		/* a file is rotated once it holds events: a header larger
		 * than the size alone does not make empty files */
		if (!encoder_failed(s->enc) && o->rotate_size &&
		    gtr_writer_bytes(encoder_writer(s->enc)) >= o->rotate_size &&
		    gtr_writer_events(encoder_writer(s->enc)) > 0 &&
		    session_rotate(s))
			return -1;
		if (now - last_flush >= flush_ns) {
			struct gtr_writer *w = encoder_writer(s->enc);

			if (!encoder_failed(s->enc)) {
				session_drops(s);
				encoder_processes_check(s->enc, now, 0, 0);
				encoder_write_clock(w);
				if (gtr_writer_flush(w))
					encoder_fail(s->enc, now);
			}
			if (status_on)
				status_line(s, now - start,
					    (encoder_events(s->enc) - last_events) *
						    1000000000ull / (now - last_flush),
					    encoder_dropped(s->enc), bytes);
			last_events = encoder_events(s->enc);
			last_flush = now;
		}
	}
	if (status_on)
		fprintf(stderr, "\r\033[K");
	return 0;
}

/* Drains the ring buffer and records the last drops and exits. */
static void session_drain(struct session *s)
{
	const int st = s->status;

	while (capture_poll(s->cap, 0) > 0)
		;
	if (encoder_failed(s->enc) && !reader_gone(s)) {
		const uint64_t n = encoder_unwritten(s->enc);

		/* room may have been freed since, or the cut frees it */
		if (!encoder_recover(s->enc, clock_ns(CLOCK_MONOTONIC)))
			fprintf(stderr, "gotrace-record: %llu events could not be "
				"written to %s; the file records them as lost\n",
				(unsigned long long)encoder_unwritten(s->enc),
				s->o->output);
		else
			fprintf(stderr, "gotrace-record: %llu events could not be "
				"written to %s and the file cannot say so (no room): "
				"it holds the events before the disk filled\n",
				(unsigned long long)n, s->o->output);
	}
	encoder_drops(s->enc);
	encoder_processes_check(s->enc, clock_ns(CLOCK_MONOTONIC), s->cmd_pid,
			WIFEXITED(st) ? WEXITSTATUS(st)
			: WIFSIGNALED(st) ? -WTERMSIG(st) : GTR_EXIT_UNKNOWN);
}

/* What was recorded, on stderr (not with -q). */
static void session_summary(const struct session *s)
{
	const struct record_opts *o = s->o;
	unsigned nfiles = s->file_no + 1;

	if (o->rotate_count && nfiles > o->rotate_count)
		nfiles = o->rotate_count;
	fprintf(stderr, "gotrace-record: %llu events, %llu dropped, "
		"%llu bytes written to %s",
		(unsigned long long)encoder_events(s->enc),
		(unsigned long long)encoder_dropped(s->enc),
		(unsigned long long)s->written,
		strcmp(o->output, "-") ? o->output : "standard output");
	if (nfiles == 2)
		fprintf(stderr, " and %s1 (2 files kept)", o->output);
	else if (nfiles > 2)
		fprintf(stderr, " and %s1..%s%u (%u files kept)", o->output,
			o->output, nfiles - 1, nfiles);
	if (encoder_unwritten(s->enc) && s->gone)
		fprintf(stderr, "; %llu events after the reader went away",
			(unsigned long long)encoder_unwritten(s->enc));
	else if (encoder_unwritten(s->enc))
		fprintf(stderr, "; %llu events not written (no room)",
			(unsigned long long)encoder_unwritten(s->enc));
	fputc('\n', stderr);
	if (o->rate)
		fprintf(stderr, "gotrace-record: %llu events suppressed "
			"by --rate-limit\n",
			(unsigned long long)encoder_suppressed(s->enc));
	if (s->why)
		fprintf(stderr, "gotrace-record: stopped: %s\n", s->why);
}

/* After the file is closed: a command still running (a limit ended the
 * recording, not the command) runs on untraced; its exit status is
 * still ours to return. */
static void session_wait_command(struct session *s)
{
	if (s->child <= 0)
		return;
	if (s->passed && stop_signal && !s->forced)
		s->forced = stop_signal;   /* the second came after the loop */
	if (s->forced)
		return;   /* not waited for: the recorder ends by the signal */
	if (!s->o->quiet)
		fprintf(stderr, "gotrace-record: probes detached; waiting "
			"for %s to exit\n", s->o->cmd[0]);
	catch_signal(SIGINT);
	catch_signal(SIGTERM);
	stop_signal = 0;
	while (waitpid(s->child, &s->status, 0) < 0 && errno == EINTR) {
		if (stop_signal) {
			kill(s->child, stop_signal);
			stop_signal = 0;
		}
	}
}

/*
 * Warns when -C is not well above `meta`, the bytes of metadata (host,
 * binaries with their symbols, probes) every file of the rotation starts
 * with: such files would hold their metadata and a few events each. The
 * suggested minimum is ten times the metadata, in whole MiB.
 */
static void rotate_check(const struct record_opts *o, uint64_t meta)
{
	const uint64_t mib = 1u << 20, min = (10 * meta + mib - 1) / mib;

	if (!o->rotate_size || o->rotate_size >= 2 * meta)
		return;
	fprintf(stderr, "gotrace-record: -C: every file starts with this "
		"recording's metadata (binaries, their symbols, the probes: "
		"%llu KiB), %s the %llu KiB given, so each file would hold its "
		"metadata and a few events; give -C %lluM or more\n",
		(unsigned long long)(meta + 1023) / 1024,
		o->rotate_size < meta ? "more than" : "at least half of",
		(unsigned long long)(o->rotate_size + 1023) / 1024,
		(unsigned long long)min);
}

/* The header of the first file, written beside the attaching. */
struct header_job {
	struct gtr_writer *w;
	const struct plan *plan;
	int rc;
};

static void *header_run(void *arg)
{
	struct header_job *j = arg;

	j->rc = encoder_write_header(j->w, j->plan);
	return NULL;
}

/*
 * Starts the recording up to the first event read: creates the first
 * file, then writes its header on a second thread while the BPF program
 * loads and the probes attach (the one reads the plan and the binaries,
 * the other the plan and the kernel). 0, or -1 after printing why.
 */
static int session_start(struct session *s)
{
	struct header_job job = { .plan = s->plan };
	char err[1024];
	pthread_t th;
	bool threaded;
	int rc;

	host_fill(&s->host, &s->uts, s->hostname, sizeof(s->hostname));
	s->enc = encoder_new(s->plan, s->o->max_events, s->o->rate != 0);
	if (!s->enc)
		return -1;
	job.w = create_output(s, s->file_no, &s->host, err, sizeof(err));
	if (!job.w) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	threaded = !pthread_create(&th, NULL, header_run, &job);
	if (!threaded)
		header_run(&job);
	rc = session_attach(s);
	if (threaded)
		pthread_join(th, NULL);
	startup_say(s, NULL, true);
	if (job.rc) {
		header_failed(job.w, err, sizeof(err));
		fprintf(stderr, "gotrace-record: %s\n", err);
		remove_output(s, s->file_no);
		return -1;
	}
	if (rc) {
		/* nothing was recorded: no file of metadata alone stays */
		gtr_writer_close(job.w, NULL, 0);
		remove_output(s, s->file_no);
		return -1;
	}
	rotate_check(s->o, gtr_writer_bytes(job.w));
	encoder_set_writer(s->enc, job.w);
	return 0;
}

int session_run(const struct record_opts *o)
{
	struct session s = { .o = o, .go_fd = -1, .t0_ns = clock_ns(CLOCK_MONOTONIC),
			     .progress = status_enabled(o) ? stderr : NULL };
	char err[1024];
	int ret = 1;

	if (preflight() || session_targets(&s) || session_plan(&s)) {
		startup_say(&s, NULL, true);
		goto done;
	}
	if (session_start(&s)) {
		startup_say(&s, NULL, true);
		goto out;
	}
	if (!stop_signal && session_go(&s)) {
		/* the command never ran: no file of metadata alone stays */
		gtr_writer_close(encoder_writer(s.enc), NULL, 0);
		encoder_set_writer(s.enc, NULL);
		remove_output(&s, s.file_no);
		goto out;
	}
	if (!stop_signal && session_loop(&s))
		goto out;
	session_drain(&s);
	if (!o->quiet)
		attach_note_unrun(s.att);
	ret = 0;
out:
	capture_close(s.cap);
	if (s.go_fd >= 0)
		close(s.go_fd);
	if (s.child > 0 && !s.released) {
		kill(s.child, SIGTERM);   /* never started: it is ours to stop */
		waitpid(s.child, &s.status, 0);
		s.child = 0;
		if (stop_signal) {
			/* ended by the signal before it ran: 128+N, as if
			 * it had ended the command */
			const char *sig = sigabbrev_np(stop_signal);

			fprintf(stderr, "gotrace-record: SIG%s arrived before %s "
				"started: the command never ran\n",
				sig ? sig : "?", o->cmd[0]);
			s.status = W_EXITCODE(0, stop_signal);
		}
	}
	bool gone = s.gone = reader_gone(&s);

	if (s.enc && encoder_writer(s.enc)) {
		const bool full = encoder_unwritten(s.enc) > 0;

		gtr_writer_end(encoder_writer(s.enc));   /* its summary counts in its size */
		s.written += gtr_writer_bytes(encoder_writer(s.enc));
		const int crc = gtr_writer_close(encoder_writer(s.enc), err, sizeof(err));
		/* a live reader that left before the end (Ctrl-C on both
		 * sides): nothing more to say */
		if (crc == -EPIPE)
			gone = s.gone = true;
		if (crc && !gone) {
			if (full)
				fprintf(stderr, "gotrace-record: no room for the summary of "
					"%s either: it ends after its last whole block\n",
					o->output);
			else
				fprintf(stderr, "gotrace-record: %s\n", err);
			ret = 1;
		}
	}
	/* events that could not be written (a full disk) are an error,
	 * whatever the command's status */
	if (s.enc && encoder_unwritten(s.enc) && !gone)
		ret = 1;
	if (!o->quiet && (ret == 0 || (s.enc && encoder_unwritten(s.enc))))
		session_summary(&s);
	session_wait_command(&s);
	if (s.forced) {
		/* as an uncaught signal would have ended it, now that the
		 * held processes went on and the file is whole */
		signal(s.forced, SIG_DFL);
		raise(s.forced);
	}
	if (ret == 0 && o->cmd) {
		if (WIFEXITED(s.status))
			ret = WEXITSTATUS(s.status);
		else if (WIFSIGNALED(s.status))
			ret = 128 + WTERMSIG(s.status);
	}
done:
	attach_free(s.att);
	encoder_free(s.enc);
	plan_free(s.plan);
	targets_free(s.tg);
	free(s.dflt_path);
	free(s.dflt_attach);
	return ret;
}
