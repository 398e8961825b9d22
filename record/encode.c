// SPDX-License-Identifier: MIT
/*
 * Encoding what capture hands over into the trace file: events (values
 * decoded per the probe's plan), the processes they came from with their
 * /proc mappings, exits, thread names, drops and rate-limit counts, and
 * the header a file needs before its first event; see encode.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "encode.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define IFACE_CACHE 256  /* names of interface values' dynamic types */

struct iface_name {
	uint64_t addr;        /* link-time address of the type descriptor */
	uint32_t binary;
	const char *name;     /* owned by the gobin; "" when DWARF has none */
};

/* A type name read from a traced process's memory (lib_type_name()). */
struct lib_name {
	uint32_t pid;
	uint64_t addr;        /* runtime address of the type descriptor */
	bool set;
	char name[128];       /* "" when it could not be read */
};

#define LIB_NAMES 64

struct task {
	uint32_t pid, tid;
	char comm[16];
};

#define TASK_SLOTS 4096   /* small cache; a miss only re-records a name */

struct encoder {
	const struct plan *plan;
	uint64_t max_events;  /* 0: no limit */
	int rate;             /* a rate limit is set: count suppressed */
	struct iface_name names[IFACE_CACHE];
	struct lib_name lib_names[LIB_NAMES];
	char hex[GTR_MAX_ARGS][24]; /* unnamed types of the current event */
	struct gtr_writer *w;
	struct capture *cap;
	struct task tasks[TASK_SLOTS];
	uint64_t events, errors;
	uint64_t *drops_seen;
	uint64_t *suppressed_seen; /* rate-limited events already recorded */
	struct gtr_rate_windows *windows; /* per probe, as the events written
				     show them (rate: NULL without a limit) */
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
	int werr;            /* the writer failed (a full disk): events are counted, not written */
	uint64_t unwritten;  /* events read but not written since then */
	uint64_t werr_ns;    /* when it failed, CLOCK_MONOTONIC */
	/* bytes the BPF program could not read, read here (late_bytes) */
	uint8_t late[GT_MAX_FETCH][GT_STR_MAX];
};


/* Binary id of the file at `path`, or UINT32_MAX when it is not traced. */
static uint32_t binary_of(const struct plan *pl, const char *path)
{
	struct stat a, b;
	int i;

	if (stat(path, &a))
		return UINT32_MAX;
	for (i = 0; i < plan_nbinaries(pl); i++)
		if (!stat(plan_binary(pl, i)->attach_path, &b) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return plan_binary(pl, i)->id;
	return UINT32_MAX;
}

/*
 * Records a process the first time one of its events arrives (or after an
 * exec): a process record and its executable mappings (from
 * /proc/PID/maps), so addresses of PIE code can be named from the file
 * alone. Returns its slot in r->procs.
 */
static int process_seen(struct encoder *r, uint32_t pid, uint64_t ts,
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
	/* a new process, or an exec: names read from its memory go */
	for (int k = 0; k < LIB_NAMES; k++)
		if (r->lib_names[k].pid == pid)
			r->lib_names[k].set = false;
	memcpy(r->procs[i].comm, comm, 16);
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	proc.binary_id = binary_of(r->plan, path);
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
		m.binary_id = binary_of(r->plan, path);
		if (m.binary_id != UINT32_MAX) {
			const struct binary *b = plan_binary(r->plan, m.binary_id);

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
static void process_bias(struct encoder *r, int slot, const struct probe *p,
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
void encoder_on_exit(uint32_t pid, uint64_t ts_ns, uint32_t code,
			 const char *comm, void *ctx)
{
	struct encoder *r = ctx;
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
void encoder_processes_check(struct encoder *r, uint64_t now, pid_t reaped,
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
static void encoder_reset(struct encoder *r)
{
	memset(r->tasks, 0, sizeof(r->tasks));
	r->nprocs = 0;
	r->last_pid = 0;
}

/* Writes the function table of every traced binary (for stacks), with
 * the inlined copies in each function (its inlined frames) when stacks
 * are recorded. */
struct symtab {
	const struct gobin *gb;  /* NULL: no inlined ranges */
	struct gtr_symbol *v;
	size_t n, cap;
};

/* The inlined ranges of f as the format has them; NULL when none (or
 * out of memory: stacks then show f alone). */
static struct gtr_inlined *inlined_of(const struct gobin *gb,
				      const struct gobin_func *f, uint32_t *n)
{
	struct gobin_inl_range *r;
	struct gtr_inlined *v;
	const int k = gobin_inline_ranges(gb, f, &r);

	*n = 0;
	v = k > 0 ? calloc((size_t)k, sizeof(*v)) : NULL;
	for (int i = 0; v && i < k; i++)
		v[i] = (struct gtr_inlined){ .off = r[i].off, .size = r[i].size,
					     .depth = r[i].depth, .name = r[i].name };
	if (v)
		*n = (uint32_t)k;
	free(r);
	return v;
}

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
	t->v[t->n].ninlined = 0;
	t->v[t->n].inlined = t->gb ? inlined_of(t->gb, f, &t->v[t->n].ninlined) : NULL;
	t->n++;
	return 0;
}

static int write_symbols(struct gtr_writer *w, const struct binary *b, bool inlined)
{
	struct symtab t = { .gb = inlined ? b->gb : NULL };
	int e = gobin_func_each(b->gb, NULL, add_symbol, &t);

	if (!e)
		e = gtr_writer_symbols(w, b->id, t.v, t.n);
	for (size_t i = 0; i < t.n; i++)
		free((void *)t.v[i].inlined);
	free(t.v);
	return e;
}

void encoder_write_clock(struct gtr_writer *w)
{
	struct gtr_clock_sample c;

	c.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	c.realtime_ns = clock_ns(CLOCK_REALTIME);
	c.boottime_ns = clock_ns(CLOCK_BOOTTIME);
	gtr_writer_clock(w, &c);
}

/*
 * The `want` bytes at `addr` of process `pid`, which the BPF program could
 * not read (a page of the file not faulted in yet): read from
 * /proc/PID/mem into out when they lie in one read-only mapping of a file
 * (.rodata, text), whose bytes cannot have changed since the probe fired.
 * Returns how many were read (0: none; writable memory is never read
 * late, it may hold other bytes by now).
 */
static size_t late_bytes(uint32_t pid, uint64_t addr, size_t want, uint8_t *out)
{
	char path[64], line[512], perm[8];
	unsigned long long lo, hi, ino;
	bool ok = false;
	ssize_t n = 0;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if (!want || !(f = fopen(path, "re")))
		return 0;
	while (!ok && fgets(line, sizeof(line), f))
		ok = sscanf(line, "%llx-%llx %7s %*s %*s %llu", &lo, &hi, perm, &ino) == 4 &&
		     addr >= lo && addr + want <= hi && perm[0] == 'r' &&
		     perm[1] != 'w' && ino != 0;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	if (!ok || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = pread(fd, out, want, (off_t)addr);
	close(fd);
	return n > 0 ? (size_t)n : 0;
}

/*
 * The name of the gccgo type whose descriptor, at runtime address taddr
 * of process pid, lies outside the program: in libgo.so (what errors.New
 * returns, *errors.errorString). Read from the process's read-only
 * mappings (late_bytes()): the descriptor's _string
 * (gobin_gccgo_type_string_off()) points to a Go string, its reflection
 * string. "" when the process is gone or the bytes are not in read-only
 * file memory.
 */
static const char *lib_type_name(struct encoder *r, const struct probe *p, uint32_t pid,
				 uint64_t taddr)
{
	struct lib_name *c = &r->lib_names[(taddr * 2654435761u ^ pid) % LIB_NAMES];
	const int ps = gobin_arch_info(p->bin->gb)->ptrsize;
	uint8_t w[16], raw[sizeof(c->name)];
	uint64_t str = 0, data = 0, len = 0;

	if (c->set && c->pid == pid && c->addr == taddr)
		return c->name;
	*c = (struct lib_name){ .pid = pid, .addr = taddr, .set = true };
	if (ps != 8 || late_bytes(pid, taddr + gobin_gccgo_type_string_off(ps), 8, w) != 8)
		return c->name;
	memcpy(&str, w, 8);
	if (late_bytes(pid, str, 16, w) != 16)
		return c->name;
	memcpy(&data, w, 8);
	memcpy(&len, w + 8, 8);
	if (!len || len >= sizeof(raw) || late_bytes(pid, data, len, raw) != len ||
	    !gobin_gccgo_reflect_name(raw, len, c->name, sizeof(c->name)))
		c->name[0] = '\0';
	return c->name;
}

/*
 * An interface's value: the name of its dynamic type, from the address of
 * its type descriptor (runtime, so less the process's load bias), "<nil>"
 * for a nil interface, the address in hex when neither DWARF nor the
 * descriptor names it.
 * Names come from a small cache by (binary, address): DWARF's index is
 * asked once per type, not once per event.
 */
static void iface_value(struct encoder *r, const struct probe *p,
			struct gtr_value *v, uint64_t taddr, uint32_t i)
{
	char (*hex)[24] = r->hex;
	const char *name;

	if (!taddr) {
		name = "<nil>";
	} else {
		const uint64_t link = taddr - r->procs[r->last_slot].bias;
		struct iface_name *c = &r->names[(link * 2654435761u ^ p->bin->id) %
						  IFACE_CACHE];

		if (!c->name || c->addr != link || c->binary != p->bin->id) {
			c->addr = link;
			c->binary = p->bin->id;
			c->name = gobin_type_name_at(p->bin->gb, link);
			if (!c->name)
				c->name = "";
		}
		name = c->name;
		if (!*name && gobin_compiler(p->bin->gb) == GOBIN_GCCGO)
			name = lib_type_name(r, p, r->last_pid, taddr);
		if (!*name) {
			snprintf(hex[i], sizeof(*hex), "0x%llx",
				 (unsigned long long)taddr);
			name = hex[i];
		}
	}
	v->kind = GTR_VAL_STR;
	v->v.s.data = (const uint8_t *)name;
	v->v.s.len = strlen(name);
	v->v.s.full_len = v->v.s.len;
}

/*
 * The process of an event of probe `p`: recorded (with its mappings) when
 * new, after an exec, or when its binary's place is only known from the
 * probed address. Sets r->last_slot.
 */
static void event_process(struct encoder *r, const struct probe *p,
			  const struct gt_event *ev)
{
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
}

/* Records the thread's name when this file has not seen it yet. */
static void event_task(struct encoder *r, const struct gt_event *ev)
{
	struct task *t = &r->tasks[(ev->tid * 2654435761u) % TASK_SLOTS];

	if (t->tid != ev->tid || t->pid != ev->pid ||
	    strncmp(t->comm, ev->comm, sizeof(t->comm))) {
		t->pid = ev->pid;
		t->tid = ev->tid;
		memcpy(t->comm, ev->comm, sizeof(t->comm));
		t->comm[15] = '\0';
		gtr_writer_task(r->w, ev->pid, ev->tid, t->comm);
	}
}

/*
 * The bytes of string, []byte or $ptr value i at ev->data[*doff] (n of
 * them there), or, when the BPF program left their address instead
 * (GT_DATA_ADDR), those late_bytes() reads: into v, the entry stepped
 * over.
 */
static void value_bytes(struct encoder *r, const struct probe *p,
			const struct gt_event *ev, uint32_t i, uint32_t *doff,
			uint32_t n, struct gtr_value *v)
{
	const enum gtr_type t = p->meta.args[i].type;
	uint64_t addr = 0, want;

	v->v.s.data = ev->data + *doff;
	v->v.s.len = n;
	if (!(n & GT_DATA_ADDR))
		return;
	n &= ~GT_DATA_ADDR;
	for (uint32_t k = 0; k < 8 && k < n; k++)
		addr |= (uint64_t)ev->data[*doff + k] << (8 * k);
	v->v.s.len = 0;
	v->v.s.data = r->late[i & (GT_MAX_FETCH - 1)];
	want = p->plan.fetch[i].op == GT_OP_MEM ? p->plan.fetch[i].mem_size :
	       ev->slots[i];
	if (want > p->plan.str_max)
		want = p->plan.str_max;
	if (t == GTR_TYPE_SLICE || n != 8 || want > GT_STR_MAX)
		return;
	{
		/* in the traced binary's file: read even after an exit */
		const uint8_t *ro = r->procs[r->last_slot].binary == p->bin->id ?
			gobin_rodata_at(p->bin->gb, addr - r->procs[r->last_slot].bias,
					want) : NULL;

		if (ro) {
			v->v.s.data = ro;
			v->v.s.len = (uint32_t)want;
			return;
		}
	}
	v->v.s.len = (uint32_t)late_bytes(ev->pid, addr, want,
					  r->late[i & (GT_MAX_FETCH - 1)]);
}

/*
 * Value i of an event of probe `p` from its slot and, for bytes, its entry
 * in the event's data at *doff (of dmax bytes), which it steps over.
 */
static void event_value(struct encoder *r, const struct probe *p,
			const struct gt_event *ev, uint32_t i, uint32_t *doff,
			size_t dmax, struct gtr_value *v)
{
	const uint8_t op = p->plan.fetch[i].op;
	const uint64_t s = ev->slots[i];

	if (op == GT_OP_NONE && gobin_arg_folded_recorded(&p->args[i])) {
		/* a constant a GCC clone has folded in: the same in every
		 * call, from its DWARF */
		switch (p->args[i].type) {
		case GTR_TYPE_INT:
			v->kind = GTR_VAL_INT;
			v->v.i = p->args[i].folded_value;
			return;
		case GTR_TYPE_UINT:
			v->kind = GTR_VAL_UINT;
			v->v.u = (uint64_t)p->args[i].folded_value;
			return;
		case GTR_TYPE_BOOL:
			v->kind = GTR_VAL_BOOL;
			v->v.b = p->args[i].folded_value != 0;
			return;
		default:
			break;
		}
	}
	if (op == GT_OP_NONE || (ev->unavail & (1u << i))) {
		/* Byte fetches leave their (empty) entry in the
		 * data even when unreadable: step over it. */
		if ((op == GT_OP_STRING || op == GT_OP_MEM) && *doff + 2 <= dmax)
			*doff += 2 + ((ev->data[*doff] | ev->data[*doff + 1] << 8) &
				      ~GT_DATA_ADDR);
		v->kind = GTR_VAL_NONE;
		return;
	}
	if (p->args[i].iface) {
		iface_value(r, p, v, s, i);
		return;
	}
	if (p->args[i].array && op == GT_OP_WORD) {
		/* an array in a register (gobin_arg_array()): its first
		 * size bytes, little-endian, are the array's, whole
		 * elements of them within the string limit; written in the
		 * value's scratch for bytes read late (value_bytes()) */
		uint8_t *out = r->late[i & (GT_MAX_FETCH - 1)];
		const uint32_t full = p->args[i].size < 8 ? p->args[i].size : 8;
		const uint32_t es = p->args[i].elem_size ? p->args[i].elem_size : 1;
		uint32_t n = full < p->plan.str_max ? full : p->plan.str_max;

		n -= n % es;
		for (uint32_t k = 0; k < n; k++)
			out[k] = (uint8_t)(s >> (8 * k));
		v->kind = GTR_VAL_STR;
		v->v.s.data = out;
		v->v.s.len = n;
		v->v.s.full_len = full;
		return;
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
		uint32_t n = 0, flag = 0;

		if (*doff + 2 <= dmax) {
			n = ev->data[*doff] | ev->data[*doff + 1] << 8;
			flag = n & GT_DATA_ADDR;
			n &= ~GT_DATA_ADDR;
			*doff += 2;
			if (*doff + n > dmax)
				n = dmax - *doff;
		}
		v->kind = GTR_VAL_STR;
		value_bytes(r, p, ev, i, doff, n | flag, v);
		v->v.s.full_len = s;
		/* a slice's length is in elements, the value's in bytes;
		 * an array's (read whole from memory) in bytes already */
		if (p->meta.args[i].type == GTR_TYPE_SLICE &&
		    p->meta.args[i].size && !p->args[i].array)
			v->v.s.full_len = s * p->meta.args[i].size;
		*doff += n;
		break;
	}
	default:
		v->kind = GTR_VAL_UINT;
		v->v.u = s;
		break;
	}
}

int encoder_on_event(const struct gt_event *ev, size_t size, void *ctx)
{
	struct encoder *r = ctx;
	struct gtr_event out;
	const struct probe *p;
	uint32_t i, doff = 0;
	size_t dmax;

	if (ev->type != GT_REC_EVENT ||
	    ev->probe_id >= (uint32_t)plan_nprobes(r->plan))
		return 0;
	if (r->max_events && r->events >= r->max_events)
		return 0;   /* --max-events: the file holds exactly that many */
	if (r->werr || !r->w) {
		r->unwritten = gtr_add_sat(r->unwritten, 1);
		return 0;
	}
	p = plan_probe(r->plan, ev->probe_id);
	dmax = size > GT_EVENT_HDR_SIZE + sizeof(ev->slots)
		       ? size - GT_EVENT_HDR_SIZE - sizeof(ev->slots) : 0;
	if (dmax > ev->data_len)
		dmax = ev->data_len;
	event_process(r, p, ev);
	out.nstack = 0;
	out.stack = NULL;
	if (ev->nstack && (size_t)ev->nstack * 8 <= dmax) {
		out.stack = (const uint64_t *)ev->data;
		doff = ev->nstack * 8;
		/* a frame walk that left the stack (code without frame
		 * pointers: gccgo's libgo) ends at a word no user address
		 * has (above 2^56, x86-64's 5-level paging): cut it there */
		while (out.nstack < ev->nstack && out.stack[out.nstack] < (1ull << 56))
			out.nstack++;
	}
	event_task(r, ev);
	out.ts_ns = ev->ts_ns;
	out.probe_id = ev->probe_id;
	out.kind = p->meta.kind;
	out.pid = ev->pid;
	out.tid = ev->tid;
	out.goid = ev->goid;
	out.cpu = ev->cpu;
	out.nvals = p->meta.nargs < ev->nslots ? p->meta.nargs : ev->nslots;
	for (i = 0; i < out.nvals; i++)
		event_value(r, p, ev, i, &doff, dmax, &out.vals[i]);
	const uint64_t before = gtr_writer_events(r->w);

	if (gtr_writer_event(r->w, &out)) {
		encoder_fail(r, ev->ts_ns);
		/* in the writer's frame when only the flush after it failed:
		 * then counted with the frame by encoder_recover() */
		if (gtr_writer_events(r->w) > before)
			r->events++;
		else
			r->unwritten = gtr_add_sat(r->unwritten, 1);
		return 0;
	}
	r->events++;
	if (r->windows)
		gtr_rate_windows_add(&r->windows[ev->probe_id], ev->ts_ns,
				     gtr_rate_key(ev->goid, ev->tid), ev->pid);
	return 0;
}

void encoder_fail(struct encoder *r, uint64_t ts_ns)
{
	if (r->werr)
		return;
	r->werr = 1;
	r->werr_ns = ts_ns;
	if (r->w && gtr_writer_failed(r->w) == -EPIPE)
		return;   /* a live reader went away: the session stops */
	fprintf(stderr, "gotrace-record: %s; from now on events are counted, "
		"not written\n", r->w ? gtr_writer_error(r->w) : "no output file");
}

uint64_t encoder_unwritten(const struct encoder *r)
{
	return r->unwritten;
}

int encoder_recover(struct encoder *r, uint64_t now_ns)
{
	uint64_t lost = 0;

	if (!r->werr)
		return 0;
	if (!r->w || gtr_writer_recover(r->w, &lost))
		return -1;
	r->events -= lost < r->events ? lost : r->events;
	r->unwritten = gtr_add_sat(r->unwritten, lost);
	{
		/* the events not written, as a loss of every probe */
		const struct gtr_drop d = {
			.ts_ns = now_ns, .since_ns = r->werr_ns,
			.probe_id = UINT32_MAX, .cpu = GTR_CPU_UNKNOWN,
			.count = r->unwritten, .reason = GTR_DROP_BUFFER,
		};

		if (gtr_writer_drop(r->w, &d) || gtr_writer_flush(r->w))
			return -1;
	}
	r->werr = 0;
	return 0;
}

/*
 * Records what the kernel counted since the last call: events lost to a
 * full ring buffer, per probe and CPU, and events a rate limit
 * suppressed, per probe; each with the span [last call, now].
 */
void encoder_drops(struct encoder *r)
{
	int ncpus = capture_ncpus(r->cap), i, cpu;
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (!r->drops_cpu)
		r->drops_cpu = calloc((size_t)plan_nprobes(r->plan) * ncpus, sizeof(uint64_t));
	for (i = 0; i < plan_nprobes(r->plan); i++) {
		/* suppressed first: the per-CPU counts share one buffer */
		uint64_t q = r->rate ? capture_suppressed(r->cap, i) : 0;
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


struct encoder *encoder_new(const struct plan *pl, uint64_t max_events,
			    bool rate)
{
	struct encoder *r = calloc(1, sizeof(*r));
	const size_t n = plan_nprobes(pl) ? plan_nprobes(pl) : 1;

	if (!r)
		return NULL;
	r->plan = pl;
	r->max_events = max_events;
	r->rate = rate;
	r->drops_seen = calloc(n, sizeof(uint64_t));
	r->suppressed_seen = calloc(n, sizeof(uint64_t));
	if (rate)
		r->windows = calloc(n, sizeof(*r->windows));
	if (!r->drops_seen || !r->suppressed_seen || (rate && !r->windows)) {
		encoder_free(r);
		return NULL;
	}
	for (int i = 0; r->windows && i < plan_nprobes(pl); i++)
		gtr_rate_windows_init(&r->windows[i], &plan_probe(pl, i)->meta);
	return r;
}

void encoder_free(struct encoder *r)
{
	if (!r)
		return;
	free(r->drops_seen);
	free(r->suppressed_seen);
	free(r->windows);
	free(r->drops_cpu);
	free(r);
}

void encoder_set_capture(struct encoder *r, struct capture *c)
{
	r->cap = c;
}

void encoder_set_writer(struct encoder *r, struct gtr_writer *w)
{
	if (r->w && w)
		encoder_reset(r);
	r->w = w;
}

struct gtr_writer *encoder_writer(const struct encoder *r)
{
	return r->w;
}

/* Whether a probe of pl records user stacks. */
static bool plan_stacks(const struct plan *pl)
{
	for (int i = 0; i < plan_nprobes(pl); i++)
		if (plan_probe(pl, i)->plan.flags & GT_P_STACK)
			return true;
	return false;
}

int encoder_write_header(struct gtr_writer *w, const struct plan *pl)
{
	const bool stacks = plan_stacks(pl);
	int i;

	for (i = 0; i < plan_nbinaries(pl); i++) {
		const struct binary *b = plan_binary(pl, i);
		struct gtr_binary gb;

		gobin_describe(b->gb, &gb);
		gb.id = b->id;
		gb.path = b->path;
		/* inlined frames are only ever named in stacks (a 20 MB
		 * Go binary's ranges: about 410 KB of the file) */
		if (gtr_writer_binary(w, &gb) || write_symbols(w, b, stacks))
			return -1;
	}
	encoder_write_clock(w);
	for (i = 0; i < plan_nprobes(pl); i++)
		if (gtr_writer_probe(w, &plan_probe(pl, i)->meta))
			return -1;
	return 0;
}

uint64_t encoder_events(const struct encoder *r)
{
	return r->events;
}

bool encoder_failed(const struct encoder *r)
{
	return r->werr;
}

uint64_t encoder_dropped(const struct encoder *r)
{
	uint64_t d = 0;

	for (int i = 0; i < plan_nprobes(r->plan); i++)
		d += r->drops_seen[i];
	return d;
}

const struct gtr_rate_windows *encoder_rate_windows(const struct encoder *r)
{
	return r->windows;
}

uint64_t encoder_suppressed(const struct encoder *r)
{
	uint64_t d = 0;

	for (int i = 0; i < plan_nprobes(r->plan); i++)
		d += r->suppressed_seen[i];
	return d;
}
