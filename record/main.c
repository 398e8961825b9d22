// SPDX-License-Identifier: MIT
/*
 * gotrace-record: attach uprobes to functions of Go programs, capture their
 * arguments with the calling convention the binary uses, and write a .gtr
 * trace file (spec/FORMAT.md).
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "capture.h"
#include "gobin.h"
#include "gtr.h"
#include "list.h"
#include "plan.h"


const char *argp_program_version = "gotrace-record " GOTRACE_VERSION;
static const char doc[] =
	"Record calls of Go functions, with their arguments, to a trace file.\n"
	"\n"
	"USAGE: gotrace-record -o FILE [OPTIONS] PROBE... -- CMD [ARGS...]\n"
	"       gotrace-record -o FILE -p PID [-p PID...] [OPTIONS] PROBE...\n"
	"       gotrace-record -o FILE [OPTIONS] BINARY:PROBE...\n"
	"\n"
	"PROBE is [p:|r:][BINARY:]FUNCTION [\"FORMAT\" EXPR, ...] as in bcc's\n"
	"trace.py (spec/PROBES.md); FUNCTION is the full Go symbol or a glob;\n"
	"EXPR is goargN, goretN, retval, a parameter name or $ptr(EXPR, SIZE).\n"
	"Without DWARF, a signature gives names and types:\n"
	"'main.greet(s string, n int) \"%s\" s'.\n"
	"Without -p or a command, every process running BINARY is traced,\n"
	"including ones started later, until Ctrl-C.\n"
	"\n"
	"EXAMPLES:\n"
	"  gotrace-record -o t.gtr 'main.add \"%d %d\" goarg1, goarg2' -- ./app\n"
	"                          # run ./app, record main.add with 2 arguments\n"
	"  gotrace-record -o t.gtr -p 1234 'net/http.(*conn).serve'\n"
	"                          # attach to PID 1234 until Ctrl-C\n"
	"  gotrace-record -o t.gtr '/usr/bin/caddy:net/http.*' -x '*.func*'\n"
	"                          # every caddy process, net/http functions\n"
	"  gotrace-record -o t.gtr -d 30 'main.lookup' 'r:main.lookup' -p 1234\n"
	"                          # entries and returns for 30 s\n"
	"  gotrace-report t.gtr    # print what was recorded\n";

enum {
	OPT_MAX_EVENTS = 1000, OPT_MAX_SIZE, OPT_LIST, OPT_JSON, OPT_DEBUGINFO,
};

static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "Write the trace to FILE (required)", 0 },
	{ "pid", 'p', "PID", 0, "Trace the running process PID (repeatable)", 0 },
	{ "force", 'f', NULL, 0, "Overwrite FILE if it exists", 0 },
	{ "string-size", 's', "BYTES", 0,
	  "Capture at most BYTES of each string (default 64, max 512)", 0 },
	{ "stack", 'U', NULL, 0, "Record the user stack of each event", 0 },
	{ "exclude", 'x', "GLOB", 0, "Skip functions matching GLOB (repeatable)", 0 },
	{ "max-probes", 'm', "N", 0,
	  "Refuse to attach more than N probes (default 1000)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 1 },
	{ "max-events", OPT_MAX_EVENTS, "N", 0, "Stop after N events", 1 },
	{ "max-size", OPT_MAX_SIZE, "BYTES", 0,
	  "Stop when the file reaches BYTES (K, M, G suffixes)", 1 },
	{ "rotate-size", 'C', "BYTES", 0,
	  "Start a new file when one reaches BYTES: FILE, FILE1, FILE2...", 1 },
	{ "rotate-count", 'W', "COUNT", 0,
	  "With -C, keep at most COUNT files, reusing names in a ring", 1 },
	{ "debuginfo", OPT_DEBUGINFO, "FILE", 0,
	  "DWARF of the (first) binary from this separate debug file", 0 },
	{ "list", OPT_LIST, NULL, 0,
	  "List what gotrace knows of BINARY: gotrace-record --list BINARY [GLOB]", 3 },
	{ "json", OPT_JSON, NULL, 0, "With --list: one JSON document", 3 },
	{ "rate-limit", 'r', "N", 0,
	  "Keep at most N events per second of each probe; count the rest", 1 },
	{ "buffer-size", 'b', "BYTES", 0,
	  "Ring buffer size (power of two, default 16M; K and M suffixes)", 2 },
	{ "quiet", 'q', NULL, 0, "No status line or summary; errors only", 2 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's log (twice: debug)", 2 },
	{},
};

#define MAX_PIDS 64

struct env {
	const char *output;
	pid_t pids[MAX_PIDS];
	int npids;
	unsigned flags;
	unsigned str_max;
	int quiet, verbose, stack;
	int nspecs;
	char **specs;        /* argc entries: probes as written */
	char **cmd;          /* after "--", NULL-terminated */
	unsigned max_probes;
	unsigned ringbuf;    /* bytes, power of two */
	int nexcludes;
	char *excludes[64];
	uint64_t duration_ns, max_events, max_size;
	uint64_t rotate_size;
	unsigned rotate_count;
	int list, json;
	const char *debuginfo;
	uint64_t rate;
};

static struct env env = {
	.str_max = 64, .max_probes = 1000, .ringbuf = 16u << 20,
};

static long parse_num(const char *arg, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max) {
		fprintf(stderr, "gotrace-record: invalid %s '%s' (expected a "
			"number from %ld to %ld)\n", what, arg, min, max);
		exit(2);
	}
	return v;
}

/* Parses a byte count with an optional K, M or G suffix (powers of 1024). */
static uint64_t parse_bytes(const char *arg, const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (errno || end == arg || *end || !v || arg[0] == '-') {
		fprintf(stderr, "gotrace-record: invalid %s '%s' (expected "
			"bytes, e.g. 100M)\n", what, arg);
		exit(2);
	}
	return v;
}

/* Parses a power-of-two byte count from 4K to 1024M. */
static unsigned parse_ringbuf(const char *arg)
{
	uint64_t v = parse_bytes(arg, "buffer size");

	if (v < 4096 || v > (1ull << 30) || (v & (v - 1))) {
		fprintf(stderr, "gotrace-record: invalid buffer size '%s' "
			"(expected a power of two from 4K to 1024M)\n", arg);
		exit(2);
	}
	return v;
}

/* Parses seconds, fractions allowed ("0.5", "30"). */
static uint64_t parse_seconds(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e9) {
		fprintf(stderr, "gotrace-record: invalid duration '%s' "
			"(expected seconds, e.g. 30 or 0.5)\n", arg);
		exit(2);
	}
	return (uint64_t)(v * 1e9);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'o': env.output = arg; break;
	case 'p': {
		pid_t pid = parse_num(arg, "PID", 1, INT_MAX);
		int i;

		for (i = 0; i < env.npids; i++)
			if (env.pids[i] == pid)
				break;       /* given twice: traced once */
		if (i < env.npids)
			break;
		if (env.npids >= MAX_PIDS)
			argp_error(state, "too many -p (at most %d)", MAX_PIDS);
		env.pids[env.npids++] = pid;
		break;
	}
	case 'f': env.flags |= GTR_W_FORCE; break;
	case 's': env.str_max = parse_num(arg, "string size", 0, GT_STR_MAX); break;
	case 'q': env.quiet = 1; break;
	case 'U': env.stack = 1; break;
	case 'b': env.ringbuf = parse_ringbuf(arg); break;
	case 'x':
		if (env.nexcludes >= 64)
			argp_error(state, "too many --exclude (at most 64)");
		env.excludes[env.nexcludes++] = arg;
		break;
	case 'm': env.max_probes = parse_num(arg, "probe count", 1, 1000000); break;
	case 'd': env.duration_ns = parse_seconds(arg); break;
	case OPT_MAX_EVENTS:
		env.max_events = parse_num(arg, "event count", 1, LONG_MAX);
		break;
	case OPT_MAX_SIZE: env.max_size = parse_bytes(arg, "size"); break;
	case 'C': env.rotate_size = parse_bytes(arg, "rotation size"); break;
	case 'W': env.rotate_count = parse_num(arg, "file count", 1, 100000); break;
	case 'v': env.verbose++; break;
	case 'r': env.rate = parse_num(arg, "rate", 1, LONG_MAX); break;
	case OPT_LIST: env.list = 1; break;
	case OPT_JSON: env.json = 1; break;
	case OPT_DEBUGINFO: env.debuginfo = arg; break;
	case ARGP_KEY_ARG:
		env.specs[env.nspecs++] = arg;
		break;
	case ARGP_KEY_END:
		if (env.list) {
			if (env.nspecs < 1 || env.nspecs > 2)
				argp_error(state, "--list takes BINARY [GLOB]");
			break;
		}
		if (env.json)
			argp_error(state, "--json goes with --list");
		if (!env.output)
			argp_error(state, "no output file; give one with -o FILE");
		if (!env.nspecs)
			argp_error(state, "no probe given; name a function, e.g. 'main.add'");
		if (env.npids && env.cmd)
			argp_error(state, "give either -p PID or -- CMD, not both");
		if (env.rotate_count && !env.rotate_size)
			argp_error(state, "-W COUNT needs -C SIZE");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ------------------------------------------------------------ events */

struct task {
	uint32_t pid, tid;
	char comm[16];
};

#define TASK_SLOTS 4096   /* small cache; a miss only re-records a name */

struct recorder {
	struct gtr_writer *w;
	struct capture *cap;
	struct task tasks[TASK_SLOTS];
	uint64_t events, errors;
	uint64_t *drops_seen;
	uint64_t *suppressed_seen; /* rate-limited events already recorded */
	uint64_t *drops_cpu;       /* lost events recorded, [probe][cpu] */
	uint64_t drops_ts;   /* when drops were last read, CLOCK_MONOTONIC */
	uint32_t last_pid;   /* pid of the previous event */
	int last_slot;       /* its slot in procs[] */
	struct {
		uint32_t pid;
		char comm[16];  /* a new name means an exec: mappings again */
		int mapped;     /* a mapping of a traced binary was written */
		uint64_t bias;  /* runtime - link-time address of its binary */
		uint32_t binary; /* the traced binary `bias` is of */
	} procs[1024];       /* processes whose mappings were recorded */
	int nprocs;
	int werr;
};

static struct recorder rec;
static struct plan *plan;

static uint64_t clock_ns(clockid_t id);

/* Binary id of the file at `path`, or UINT32_MAX when it is not traced. */
static uint32_t binary_of(const char *path)
{
	struct stat a, b;
	int i;

	if (stat(path, &a))
		return UINT32_MAX;
	for (i = 0; i < plan_nbinaries(plan); i++)
		if (!stat(plan_binary(plan, i)->attach_path, &b) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return plan_binary(plan, i)->id;
	return UINT32_MAX;
}

/*
 * Records a process the first time one of its events arrives (or after an
 * exec): a process record and its executable mappings (from
 * /proc/PID/maps), so addresses of PIE code can be named from the file
 * alone. Returns its slot in r->procs.
 */
static int process_seen(struct recorder *r, uint32_t pid, uint64_t ts,
			const char *comm, uint32_t binary_hint)
{
	struct gtr_process proc = { .ts_ns = ts, .pid = pid, .comm = comm,
				    .binary_id = UINT32_MAX };
	char path[64], line[4096];
	FILE *f;
	int i;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			break;
	if (i < r->nprocs && !strncmp(r->procs[i].comm, comm, 16))
		return i;
	if (i == r->nprocs) {
		if (r->nprocs == (int)(sizeof(r->procs) / sizeof(r->procs[0])))
			i = pid % r->nprocs;   /* full: reuse a slot */
		else
			r->nprocs++;
	}
	r->procs[i].pid = pid;
	r->procs[i].mapped = 0;
	r->procs[i].bias = 0;
	memcpy(r->procs[i].comm, comm, 16);
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	proc.binary_id = binary_of(path);
	if (proc.binary_id == UINT32_MAX)
		proc.binary_id = binary_hint;   /* gone: the binary it was probed in */
	gtr_writer_process(r->w, &proc);
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return i;   /* gone already: process_bias() may still help */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], file[PATH_MAX + 1] = "";
		struct gtr_mapping m = { .ts_ns = ts, .pid = pid };

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4096[^\n]", &start,
			   &end, perms, &off, file) < 4 || perms[2] != 'x' ||
		    file[0] != '/')
			continue;
		m.start = start;
		m.end = end;
		m.offset = off;
		m.path = file;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx",
			 pid, start, end);
		m.binary_id = binary_of(path);
		if (m.binary_id != UINT32_MAX) {
			const struct binary *b = plan_binary(plan, m.binary_id);

			m.vaddr = b->text_vaddr + (off - b->text_offset);
			r->procs[i].mapped = 1;
			r->procs[i].bias = m.start - m.vaddr;
			r->procs[i].binary = m.binary_id;
		}
		gtr_writer_mapping(r->w, &m);
	}
	fclose(f);
	return i;
}

/*
 * When a process exited before its mappings could be read (a short
 * command), the probed instruction's address and the uprobe that fired
 * give the load bias of its binary: record the image as one mapping.
 */
static void process_bias(struct recorder *r, int slot, const struct probe *p,
			 const struct gt_event *ev, uint64_t ip)
{
	const struct binary *b = p->bin;
	struct gtr_mapping m = { .ts_ns = ev->ts_ns, .pid = ev->pid };
	uint64_t site_vaddr, bias;

	if (ev->site >= (uint32_t)p->nsites || !b->load_hi)
		return;
	site_vaddr = p->fn.entry + (p->sites[ev->site] - p->fn.file_offset);
	bias = ip - site_vaddr;
	m.start = bias + b->load_lo;
	m.end = bias + b->load_hi;
	m.offset = 0;
	m.vaddr = b->load_lo;
	m.binary_id = b->id;
	m.path = b->path;
	gtr_writer_mapping(r->w, &m);
	r->procs[slot].mapped = 1;
	r->procs[slot].bias = bias;
	r->procs[slot].binary = b->id;
}

/*
 * capture_on_exit(): a process seen before ended; its exit is recorded at
 * the time the kernel saw its last thread exit, with its status (spec
 * FORMAT.md: exit status, or -signal).
 */
static void on_exit_seen(uint32_t pid, uint64_t ts_ns, uint32_t code,
			 const char *comm, void *ctx)
{
	struct recorder *r = ctx;
	struct gtr_process proc = {
		.ts_ns = ts_ns, .pid = pid, .comm = comm,
		.binary_id = UINT32_MAX, .exited = true,
		.exit_code = (code & 0x7f) ? -(int32_t)(code & 0x7f)
					   : (int32_t)((code >> 8) & 0xff),
	};

	if (!r->w || r->werr)
		return;
	for (int i = 0; i < r->nprocs; i++) {
		if (r->procs[i].pid != pid)
			continue;
		proc.comm = r->procs[i].comm;
		r->procs[i] = r->procs[--r->nprocs];
		r->last_pid = 0;
		break;
	}
	/* also a process this file has not seen (after a rotation): the
	 * kernel reports only processes that hit a probe or were named */
	gtr_writer_process(r->w, &proc);
}

/*
 * Once a second and at the end: records the exit of processes seen
 * before, so a reused PID starts afresh (its mappings are written again).
 * `reaped` is the command gotrace-record ran, if it exited with `code`.
 */
static void processes_check(struct recorder *r, uint64_t now, pid_t reaped,
			    int code)
{
	int i;

	for (i = 0; i < r->nprocs; i++)
		if (kill(r->procs[i].pid, 0) && errno == ESRCH)
			break;
	if (i < r->nprocs)
		/* the exact exit of a process is in the ring buffer before it
		 * can be reaped: read it (on_exit_seen()) before guessing */
		capture_consume(r->cap);
	for (i = 0; i < r->nprocs; i++) {
		struct gtr_process proc = {
			.ts_ns = now, .pid = r->procs[i].pid,
			.comm = r->procs[i].comm, .binary_id = UINT32_MAX,
			.exited = true,
			/* the command's status is known; others' is not
			 * (their exit, when the tracepoint saw it, was
			 * recorded by on_exit_seen()) */
			.exit_code = (pid_t)r->procs[i].pid == reaped ? code : GTR_EXIT_UNKNOWN,
		};

		if (!kill(r->procs[i].pid, 0) || errno != ESRCH)
			continue;
		gtr_writer_process(r->w, &proc);
		r->procs[i--] = r->procs[--r->nprocs];
	}
	r->last_pid = 0;
}

/* Forgets what the previous file of a rotation was told. */
static void recorder_reset(struct recorder *r)
{
	memset(r->tasks, 0, sizeof(r->tasks));
	r->nprocs = 0;
	r->last_pid = 0;
}

/* Writes the function table of every traced binary (for stacks). */
struct symtab {
	struct gtr_symbol *v;
	size_t n, cap;
};

static int add_symbol(const struct gobin_func *f, void *ctx)
{
	struct symtab *t = ctx;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct gtr_symbol *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].address = f->entry;
	t->v[t->n].size = f->end > f->entry ? f->end - f->entry : 0;
	t->v[t->n].name = f->name;
	t->n++;
	return 0;
}

static int write_symbols(struct gtr_writer *w, const struct binary *b)
{
	struct symtab t = {};
	int e = gobin_func_each(b->gb, NULL, add_symbol, &t);

	if (!e)
		e = gtr_writer_symbols(w, b->id, t.v, t.n);
	free(t.v);
	return e;
}

static void write_clock(struct gtr_writer *w)
{
	struct gtr_clock_sample c;

	c.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	c.realtime_ns = clock_ns(CLOCK_REALTIME);
	c.boottime_ns = clock_ns(CLOCK_BOOTTIME);
	gtr_writer_clock(w, &c);
}

/*
 * An interface's value: the name of its dynamic type, from the address of
 * its type descriptor (runtime, so less the process's load bias), "<nil>"
 * for a nil interface, the address in hex when DWARF does not name it.
 */
static void iface_value(struct recorder *r, const struct probe *p,
			struct gtr_value *v, uint64_t taddr, uint32_t i)
{
	static char hex[GTR_MAX_ARGS][24];
	const char *name;

	if (!taddr) {
		name = "<nil>";
	} else {
		name = gobin_type_name_at(p->bin->gb,
					  taddr - r->procs[r->last_slot].bias);
		if (!name) {
			snprintf(hex[i], sizeof(hex[i]), "0x%llx",
				 (unsigned long long)taddr);
			name = hex[i];
		}
	}
	v->kind = GTR_VAL_STR;
	v->v.s.data = (const uint8_t *)name;
	v->v.s.len = strlen(name);
	v->v.s.full_len = v->v.s.len;
}

static int on_event(const struct gt_event *ev, size_t size, void *ctx)
{
	struct recorder *r = ctx;
	struct gtr_event out;
	const struct probe *p;
	struct task *t;
	uint32_t i, doff = 0;
	size_t dmax;

	if (r->werr || ev->type != GT_REC_EVENT || ev->probe_id >= (uint32_t)plan_nprobes(plan))
		return 0;
	if (env.max_events && r->events >= env.max_events)
		return 0;   /* --max-events: the file holds exactly that many */
	p = plan_probe(plan, ev->probe_id);
	dmax = size > GT_EVENT_HDR_SIZE + sizeof(ev->slots)
		       ? size - GT_EVENT_HDR_SIZE - sizeof(ev->slots) : 0;
	if (dmax > ev->data_len)
		dmax = ev->data_len;
	if (ev->pid != r->last_pid) {
		r->last_slot = process_seen(r, ev->pid, ev->ts_ns, ev->comm,
					    p->bin->id);
		r->last_pid = ev->pid;
	}
	if (r->procs[r->last_slot].mapped &&
	    p->bin->id == r->procs[r->last_slot].binary &&
	    (ev->ip - r->procs[r->last_slot].bias < p->bin->load_lo ||
	     ev->ip - r->procs[r->last_slot].bias >= p->bin->load_hi)) {
		/* The probed code is not where the process had its binary:
		 * it exec'ed (same PID, same name, new load address).
		 * Record it afresh. */
		r->procs[r->last_slot].comm[0] = '\0';
		r->last_slot = process_seen(r, ev->pid, ev->ts_ns, ev->comm,
					    p->bin->id);
	}
	if (!r->procs[r->last_slot].mapped)
		process_bias(r, r->last_slot, p, ev, ev->ip);
	out.nstack = 0;
	out.stack = NULL;
	if (ev->nstack && (size_t)ev->nstack * 8 <= dmax) {
		out.nstack = ev->nstack;
		out.stack = (const uint64_t *)ev->data;
		doff = ev->nstack * 8;
	}

	t = &r->tasks[(ev->tid * 2654435761u) % TASK_SLOTS];
	if (t->tid != ev->tid || t->pid != ev->pid ||
	    strncmp(t->comm, ev->comm, sizeof(t->comm))) {
		t->pid = ev->pid;
		t->tid = ev->tid;
		memcpy(t->comm, ev->comm, sizeof(t->comm));
		t->comm[15] = '\0';
		gtr_writer_task(r->w, ev->pid, ev->tid, t->comm);
	}

	out.ts_ns = ev->ts_ns;
	out.probe_id = ev->probe_id;
	out.kind = p->meta.kind;
	out.pid = ev->pid;
	out.tid = ev->tid;
	out.goid = ev->goid;
	out.cpu = ev->cpu;
	out.nvals = p->meta.nargs < ev->nslots ? p->meta.nargs : ev->nslots;
	for (i = 0; i < out.nvals; i++) {
		struct gtr_value *v = &out.vals[i];
		uint64_t s = ev->slots[i];

		if (p->plan.fetch[i].op == GT_OP_NONE ||
		    (ev->unavail & (1u << i))) {
			/* Byte fetches leave their (empty) entry in the
			 * data even when unreadable: step over it. */
			if ((p->plan.fetch[i].op == GT_OP_STRING ||
			     p->plan.fetch[i].op == GT_OP_MEM) &&
			    doff + 2 <= dmax)
				doff += 2 + (ev->data[doff] | ev->data[doff + 1] << 8);
			v->kind = GTR_VAL_NONE;
			continue;
		}
		if (p->args[i].iface) {
			iface_value(r, p, v, s, i);
			continue;
		}
		switch (p->meta.args[i].type) {
		case GTR_TYPE_INT:
			v->kind = GTR_VAL_INT;
			v->v.i = (int64_t)s;
			break;
		case GTR_TYPE_BOOL:
			v->kind = GTR_VAL_BOOL;
			v->v.b = s != 0;
			break;
		case GTR_TYPE_STRING:
		case GTR_TYPE_SLICE:
		case GTR_TYPE_BYTES: {
			uint32_t n = 0;

			if (doff + 2 <= dmax) {
				n = ev->data[doff] | ev->data[doff + 1] << 8;
				doff += 2;
				if (doff + n > dmax)
					n = dmax - doff;
			}
			v->kind = GTR_VAL_STR;
			v->v.s.data = ev->data + doff;
			v->v.s.len = n;
			v->v.s.full_len = s;
			/* a slice's length is in elements; the value's in bytes */
			if (p->meta.args[i].type == GTR_TYPE_SLICE &&
			    p->meta.args[i].size)
				v->v.s.full_len = s * p->meta.args[i].size;
			doff += n;
			break;
		}
		default:
			v->kind = GTR_VAL_UINT;
			v->v.u = s;
			break;
		}
	}
	if (gtr_writer_event(r->w, &out)) {
		fprintf(stderr, "gotrace-record: %s\n", gtr_writer_error(r->w));
		r->werr = 1;
		return -1;
	}
	r->events++;
	return 0;
}

/*
 * Records what the kernel counted since the last call: events lost to a
 * full ring buffer, per probe and CPU, and events a rate limit
 * suppressed, per probe; each with the span [last call, now].
 */
static void record_drops(struct recorder *r)
{
	int ncpus = capture_ncpus(r->cap), i, cpu;
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (!r->drops_cpu)
		r->drops_cpu = calloc((size_t)plan_nprobes(plan) * ncpus, sizeof(uint64_t));
	for (i = 0; i < plan_nprobes(plan); i++) {
		/* suppressed first: the per-CPU counts share one buffer */
		uint64_t q = env.rate ? capture_suppressed(r->cap, i) : 0;
		const uint64_t *d = capture_drops_percpu(r->cap, i);
		struct gtr_drop drop = {
			.ts_ns = now, .probe_id = i, .cpu = GTR_CPU_UNKNOWN,
			.since_ns = r->drops_ts,
		};

		for (cpu = 0; r->drops_cpu && cpu < ncpus; cpu++) {
			uint64_t *seen = &r->drops_cpu[(size_t)i * ncpus + cpu];

			if (d[cpu] <= *seen)
				continue;
			drop.count = d[cpu] - *seen;
			drop.cpu = cpu;
			drop.reason = GTR_DROP_BUFFER;
			gtr_writer_drop(r->w, &drop);
			r->drops_seen[i] += drop.count;
			*seen = d[cpu];
		}
		if (q > r->suppressed_seen[i]) {
			drop.count = q - r->suppressed_seen[i];
			drop.cpu = GTR_CPU_UNKNOWN;
			drop.reason = GTR_DROP_RATE;
			gtr_writer_drop(r->w, &drop);
			r->suppressed_seen[i] = q;
		}
	}
	r->drops_ts = now;
}

/* ------------------------------------------------------------ main */

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

/* Forks CMD stopped before exec; it runs when a byte arrives on *go_fd. */
static pid_t spawn_stopped(char **cmd, int *go_fd)
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
static void output_name(char *buf, size_t len, unsigned k)
{
	if (env.rotate_count)
		k %= env.rotate_count;
	if (k)
		snprintf(buf, len, "%s%u", env.output, k);
	else
		snprintf(buf, len, "%s", env.output);
}

/*
 * Creates output file number `k` and writes everything a reader needs
 * before events: host, binaries with their symbols, a clock sample, the
 * probes. Every file of a rotation is complete on its own.
 */
static struct gtr_writer *open_output(unsigned k, const struct gtr_host *host,
				      char *err, size_t errlen)
{
	unsigned flags = env.flags;
	struct gtr_writer *w;
	char name[PATH_MAX];
	int i;

	output_name(name, sizeof(name), k);
	if (env.rotate_count && k >= env.rotate_count)
		flags |= GTR_W_FORCE;   /* the ring reuses its own names */
	w = gtr_writer_create(name, flags, host, err, errlen);
	if (!w)
		return NULL;
	for (i = 0; i < plan_nbinaries(plan); i++) {
		struct gtr_binary gb;

		gobin_describe(plan_binary(plan, i)->gb, &gb);
		gb.id = plan_binary(plan, i)->id;
		gb.path = plan_binary(plan, i)->path;
		if (gtr_writer_binary(w, &gb) || write_symbols(w, plan_binary(plan, i)))
			goto fail;
	}
	write_clock(w);
	for (i = 0; i < plan_nprobes(plan); i++)
		if (gtr_writer_probe(w, &plan_probe(plan, i)->meta))
			goto fail;
	return w;
fail:
	snprintf(err, errlen, "%s", gtr_writer_error(w));
	gtr_writer_close(w, NULL, 0);
	return NULL;
}

/* Whether the status line is shown: a terminal, not CI, not -q. */
static int status_enabled(void)
{
	const char *ci = getenv("CI");

	return !env.quiet && isatty(STDERR_FILENO) && !(ci && *ci);
}

static void status_line(uint64_t elapsed_ns, uint64_t rate, uint64_t dropped,
			uint64_t bytes)
{
	fprintf(stderr, "\r\033[Kgotrace-record: %d probe%s, %llu events "
		"(%llu/s), %llu dropped, %.1f MB written, %.1f B/event, %llus",
		plan_nprobes(plan), plan_nprobes(plan) == 1 ? "" : "s",
		(unsigned long long)rec.events, (unsigned long long)rate,
		(unsigned long long)dropped, bytes / 1e6,
		rec.events ? (double)bytes / rec.events : 0.0,
		(unsigned long long)(elapsed_ns / 1000000000ull));
}

static uint64_t total_drops(void)
{
	uint64_t d = 0;
	int i;

	for (i = 0; i < plan_nprobes(plan); i++)
		d += rec.drops_seen[i];
	return d;
}

static uint64_t total_suppressed(void)
{
	uint64_t d = 0;
	int i;

	for (i = 0; i < plan_nprobes(plan); i++)
		d += rec.suppressed_seen[i];
	return d;
}

/*
 * With -p, every binary named in a probe must be mapped by at least one
 * of the processes; else its probes could never fire. Returns -1 after
 * saying which.
 */
static int targets_map_binaries(void)
{
	int bi, t, bad = 0;

	for (bi = 0; bi < plan_nbinaries(plan) && env.npids; bi++) {
		struct stat want;
		int found = 0;

		if (stat(plan_binary(plan, bi)->attach_path, &want))
			continue;
		for (t = 0; t < env.npids && !found; t++) {
			char path[64], line[4096];
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/maps", env.pids[t]);
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
		if (!found) {
			fprintf(stderr, "gotrace-record: %s is not mapped by the "
				"traced process%s (%d%s); its probes could never "
				"fire: check the PID or the BINARY: part\n",
				plan_binary(plan, bi)->path, env.npids > 1 ? "es" : "",
				env.pids[0], env.npids > 1 ? ", ..." : "");
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* Processes still alive among the -p targets. */
static int targets_alive(void)
{
	int i, n = 0;

	for (i = 0; i < env.npids; i++)
		if (!kill(env.pids[i], 0) || errno != ESRCH)
			n++;
	return n;
}

/* Sites the kernel refused, for one warning after attaching. */
static int nrefused;
static const char *refused_names[5];
static int refused_err;

static void on_refused(uint64_t cookie, int err, void *ctx)
{
	uint32_t slot = (uint32_t)cookie;

	(void)ctx;
	if (nrefused < 5 && slot < (uint32_t)plan_nprobes(plan))
		refused_names[nrefused] = plan_probe(plan, slot)->fn.name;
	refused_err = err;
	nrefused++;
}

/*
 * Attaches every site of every probe: per binary and target process, one
 * batch (a uprobe-multi link where the kernel has them).
 */
static int attach_all(pid_t child, char *err, size_t errlen)
{
	int ntargets = env.npids ? env.npids : 1, bi, t, i, k, e = 0;
	uint64_t *offs = NULL, *cookies = NULL;
	size_t n, cap = 0;

	for (i = 0; i < plan_nprobes(plan); i++)
		cap += plan_probe(plan, i)->nsites;
	offs = calloc(cap ? cap : 1, sizeof(*offs));
	cookies = calloc(cap ? cap : 1, sizeof(*cookies));
	if (!offs || !cookies) {
		snprintf(err, errlen, "out of memory for %zu uprobes", cap);
		e = -ENOMEM;
		goto out;
	}
	for (bi = 0; bi < plan_nbinaries(plan) && !e; bi++) {
		n = 0;
		for (i = 0; i < plan_nprobes(plan); i++) {
			if (plan_probe(plan, i)->bin != plan_binary(plan, bi))
				continue;
			for (k = 0; k < plan_probe(plan, i)->nsites; k++) {
				offs[n] = plan_probe(plan, i)->sites[k];
				cookies[n++] = (uint64_t)i | (uint64_t)k << 32;
			}
		}
		for (t = 0; t < ntargets && !e && !stop_signal; t++) {
			pid_t pid = env.cmd ? child
				  : env.npids ? env.pids[t] : -1;

			e = capture_attach_many(rec.cap, n, cookies,
						plan_binary(plan, bi)->attach_path, offs,
						pid, on_refused, NULL, err, errlen);
		}
	}
out:
	free(offs);
	free(cookies);
	if (!e && nrefused) {
		int i;

		/* 524: the kernel's ENOTSUPP, for instructions uprobes
		 * cannot single-step or emulate. */
		fprintf(stderr, "gotrace-record: warning: the kernel refused %d "
			"uprobe site%s (%s), left out: ", nrefused,
			nrefused == 1 ? "" : "s", refused_err == 524
			? "an instruction uprobes cannot handle"
			: strerror(refused_err));
		for (i = 0; i < nrefused && i < 5; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", refused_names[i]);
		fprintf(stderr, "%s\n", nrefused > 5 ? " ..." : "");
		if (!capture_nlinks(rec.cap)) {
			snprintf(err, errlen, "no uprobe could be attached");
			e = -EINVAL;
		}
	}
	return e;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options, .parser = parse_opt,
		.args_doc = "PROBE... [-- CMD [ARGS...]]", .doc = doc,
	};
	char err[1024], hostname[256], exe_path[64];
	char *dflt_path = NULL, *dflt_attach = NULL;
	uint64_t start, last_flush, last_events = 0, written = 0;
	int i, e, rargc = argc, go_fd = -1, status = 0, ret = 1, status_on;
	unsigned file_no = 0;
	const char *why = NULL;
	int released = 0;        /* the command was let run */
	pid_t cmd_pid = 0;       /* the command, once it exited */
	struct gtr_host host;
	struct utsname uts;
	pid_t child = 0;

	/* Installed first: a signal at any point ends with a complete file. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* Everything after the first "--" is the command to run. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			rargc = i;
			env.cmd = i + 1 < argc ? &argv[i + 1] : NULL;
			if (!env.cmd) {
				fprintf(stderr, "gotrace-record: nothing after '--'; give the command to run\n");
				return 2;
			}
			break;
		}
	}
	argv[rargc] = NULL;
	argp_err_exit_status = 2;   /* usage errors: 2, as documented */
	env.specs = calloc(argc + 1, sizeof(*env.specs));
	if (!env.specs)
		return 1;
	if (argp_parse(&argp, rargc, argv, 0, NULL, NULL))
		return 2;
	if (env.list)
		return gotrace_list(env.specs[0], env.debuginfo,
				    env.nspecs > 1 ? env.specs[1] : NULL,
				    env.json, stdout);
	if (preflight())
		return 1;

	if (env.cmd) {
		dflt_path = which(env.cmd[0]);
		if (access(dflt_path, X_OK)) {
			fprintf(stderr, "gotrace-record: cannot run %s: %s\n",
				env.cmd[0], strerror(errno));
			return 1;
		}
		dflt_attach = strdup(dflt_path);
	} else if (env.npids) {
		char buf[PATH_MAX];

		for (i = 0; i < env.npids; i++) {
			ssize_t n;

			snprintf(exe_path, sizeof(exe_path), "/proc/%d/exe",
				 env.pids[i]);
			n = readlink(exe_path, buf, sizeof(buf) - 1);
			if (n < 0) {
				fprintf(stderr, "gotrace-record: cannot trace "
					"PID %d: %s\n", env.pids[i],
					errno == ENOENT ? "no such process"
							: strerror(errno));
				return 1;
			}
			buf[n] = '\0';
			if (i == 0) {
				dflt_path = strdup(buf);
				dflt_attach = strdup(exe_path);
			}
		}
	}

	{
		struct plan_opts po = {
			.str_max = env.str_max, .max_probes = env.max_probes,
			.quiet = env.quiet, .stack = env.stack,
			.nexcludes = env.nexcludes, .excludes = env.excludes,
			.root_pid = env.npids ? env.pids[0] : 0,
			.debuginfo = env.debuginfo,
			.rate = env.rate,
		};
		plan = plan_new(&po);
		if (!plan)
			return 1;
	}
	for (i = 0; i < env.nspecs; i++)
		if (plan_add(plan, env.specs[i], dflt_path, dflt_attach))
			return 1;
	plan_warnings(plan);
	if (targets_map_binaries())
		return 1;

	host_fill(&host, &uts, hostname, sizeof(hostname));
	rec.w = open_output(file_no, &host, err, sizeof(err));
	if (!rec.w) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return 1;
	}
	rec.drops_seen = calloc(plan_nprobes(plan), sizeof(uint64_t));
	rec.suppressed_seen = calloc(plan_nprobes(plan), sizeof(uint64_t));

	rec.cap = capture_open(plan_nprobes(plan), env.ringbuf, env.verbose, on_event, &rec,
			       err, sizeof(err));
	if (!rec.cap) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		goto out;
	}
	/* exact exit times and statuses; without the tracepoint, exits are
	 * polled for and their status is unknown */
	e = capture_on_exit(rec.cap, on_exit_seen);
	if (e)
		fprintf(stderr, "gotrace-record: cannot attach to the sched_process_exit tracepoint (tp_btf, raw_tp, tp: %s): process exits are polled for, noticed within a second and recorded without their status\n",
			strerror(-e));
	else if (env.verbose)
		fprintf(stderr, "gotrace-record: process exits from the sched_process_exit tracepoint, attached as %s\n",
			capture_exit_via(rec.cap));
	if (env.cmd) {
		child = spawn_stopped(env.cmd, &go_fd);
		if (child < 0) {
			fprintf(stderr, "gotrace-record: cannot start %s: %s\n",
				env.cmd[0], strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < plan_nprobes(plan); i++) {
		if (capture_set_plan(rec.cap, i, &plan_probe(plan, i)->plan)) {
			fprintf(stderr, "gotrace-record: cannot store the plan of "
				"probe '%s'\n", plan_probe(plan, i)->spec.text);
			goto out;
		}
	}
	if (attach_all(child, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		goto out;
	}
	if (stop_signal)
		goto drain;
	/* the targets known now are watched from the start, so that an exit
	 * before the recorder reads their first event is seen too */
	for (int t = 0; t < env.npids; t++)
		capture_watch_exit(rec.cap, (uint32_t)env.pids[t]);
	if (child > 0)
		capture_watch_exit(rec.cap, (uint32_t)child);

	status_on = status_enabled();
	if (!env.quiet)
		fprintf(stderr, "gotrace-record: %d probe%s attached (%u "
			"uprobe%s); %s\n", plan_nprobes(plan), plan_nprobes(plan) == 1 ? "" : "s",
			capture_nlinks(rec.cap),
			capture_nlinks(rec.cap) == 1 ? "" : "s",
			env.cmd ? "running the command" : "Ctrl-C to stop");
	if (env.cmd) {
		if (write(go_fd, "g", 1) != 1) {
			fprintf(stderr, "gotrace-record: cannot start %s\n",
				env.cmd[0]);
			goto out;
		}
		close(go_fd);
		go_fd = -1;
		released = 1;
	}

	start = last_flush = clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		int n = capture_poll(rec.cap, 100);
		uint64_t now, bytes;

		if (n < 0 || rec.werr) {
			if (n < 0)
				fprintf(stderr, "gotrace-record: reading events: %s\n",
					strerror(-n));
			break;
		}
		if (child) {
			pid_t w = waitpid(child, &status, WNOHANG);

			if (w == child) {
				cmd_pid = child;
				child = 0;
				break;
			}
		}
		if (stop_signal) {
			if (!child)
				break;
			/* Pass the signal on and wait for CMD to exit. */
			kill(child, stop_signal);
			stop_signal = 0;
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
		}
		if (env.npids && !targets_alive()) {
			why = "the traced processes exited";
			break;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		bytes = written + gtr_writer_bytes(rec.w);
		if (env.duration_ns && now - start >= env.duration_ns) {
			why = "--duration reached";
			break;
		}
		if (env.max_events && rec.events >= env.max_events) {
			why = "--max-events reached";
			break;
		}
		if (env.max_size && bytes >= env.max_size) {
			why = "--max-size reached";
			break;
		}
		if (env.rotate_size &&
		    gtr_writer_bytes(rec.w) >= env.rotate_size) {
			struct gtr_writer *next;

			record_drops(&rec);
			written += gtr_writer_bytes(rec.w);
			if (gtr_writer_close(rec.w, err, sizeof(err))) {
				rec.w = NULL;
				fprintf(stderr, "gotrace-record: %s\n", err);
				goto out;
			}
			host_fill(&host, &uts, hostname, sizeof(hostname));
			next = open_output(++file_no, &host, err, sizeof(err));
			rec.w = next;
			recorder_reset(&rec);
			if (!next) {
				fprintf(stderr, "gotrace-record: %s\n", err);
				goto out;
			}
		}
		if (now - last_flush >= 1000000000ull) {
			record_drops(&rec);
			processes_check(&rec, now, 0, 0);
			write_clock(rec.w);
			if (gtr_writer_flush(rec.w)) {
				fprintf(stderr, "gotrace-record: %s\n",
					gtr_writer_error(rec.w));
				break;
			}
			if (status_on)
				status_line(now - start,
					    (rec.events - last_events) * 1000000000ull /
						    (now - last_flush),
					    total_drops(), bytes);
			last_events = rec.events;
			last_flush = now;
		}
	}
	if (status_on)
		fprintf(stderr, "\r\033[K");
drain:
	/* Drain what is left in the ring buffer. */
	while (!rec.werr && capture_poll(rec.cap, 0) > 0)
		;
	record_drops(&rec);
	processes_check(&rec, clock_ns(CLOCK_MONOTONIC), cmd_pid,
			WIFEXITED(status) ? WEXITSTATUS(status)
			: WIFSIGNALED(status) ? -WTERMSIG(status) : GTR_EXIT_UNKNOWN);
	ret = 0;
out:
	capture_close(rec.cap);
	if (go_fd >= 0)
		close(go_fd);
	if (child > 0 && !released) {
		kill(child, SIGTERM);   /* never started: it is ours to stop */
		waitpid(child, &status, 0);
		child = 0;
	}
	if (rec.w) {
		written += gtr_writer_bytes(rec.w);
		if (gtr_writer_close(rec.w, err, sizeof(err))) {
			fprintf(stderr, "gotrace-record: %s\n", err);
			ret = 1;
		}
	}
	if (!env.quiet && ret == 0) {
		unsigned nfiles = file_no + 1;

		if (env.rotate_count && nfiles > env.rotate_count)
			nfiles = env.rotate_count;
		fprintf(stderr, "gotrace-record: %llu events, %llu dropped, "
			"%llu bytes written to %s", (unsigned long long)rec.events,
			(unsigned long long)total_drops(),
			(unsigned long long)written, env.output);
		if (nfiles > 1)
			fprintf(stderr, " and %s1..%s%u (%u files kept)", env.output,
				env.output, nfiles - 1, nfiles);
		fputc('\n', stderr);
		if (env.rate)
			fprintf(stderr, "gotrace-record: %llu events suppressed "
				"by --rate-limit\n",
				(unsigned long long)total_suppressed());
		if (why)
			fprintf(stderr, "gotrace-record: stopped: %s\n", why);
	}
	if (child > 0) {
		/* A limit ended the recording, not the command: it runs on,
		 * untraced; its exit status is still ours to return. */
		if (!env.quiet)
			fprintf(stderr, "gotrace-record: probes detached; waiting "
				"for %s to exit\n", env.cmd[0]);
		catch_signal(SIGINT);
		catch_signal(SIGTERM);
		stop_signal = 0;
		while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
			if (stop_signal) {
				kill(child, stop_signal);
				stop_signal = 0;
			}
		}
	}
	if (ret == 0 && env.cmd) {
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		if (WIFSIGNALED(status))
			return 128 + WTERMSIG(status);
	}
	return ret;
}
