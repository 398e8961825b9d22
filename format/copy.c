/* SPDX-License-Identifier: MIT */
/*
 * Copying events from a reader to a writer with the metadata they need
 * (gtr.h, "Copying"): what `gotrace-report -w` (a selection) and `merge`
 * (several inputs into one output) write. A copier follows its reader:
 * before each event it writes what the reader has learnt since and the
 * event needs (clock samples, its process's records and mappings, its task
 * name, the probes), renumbering probe and binary ids and pids through the
 * id space it shares with the other inputs of a merge, and moving every
 * timestamp by the input's offset onto the output's clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gtr_internal.h"

#define MAP_MAX UINT32_MAX
/* Renumbered pids start above Linux's largest (PID_MAX_LIMIT, 2^22). */
#define PID_RENUMBERED (1u << 22)

/* A binary of the output, as a merge shares it between inputs. */
struct out_binary {
	uint32_t space;           /* the pid space of its host (below) */
	char *path, *build_id;
	bool symbols;             /* its symbols are written */
};

/*
 * Pid spaces: the hosts of the output (one per recording) whose pids are
 * one machine's in one boot under one name share the space of the first
 * of them (gtr_id_space_share()); a process is known by its pid space and
 * its pid on its host.
 */
struct gtr_id_space {
	uint32_t next_probe, next_binary, next_pid;
	struct u64map spaces;     /* output host -> output host whose space it shares */
	struct u64map used;       /* pids given in the output -> 1 */
	struct u64map procs;      /* space << 32 | pid on its host -> output pid */
	struct u64map bin_ix;     /* hash(space, path, build id) -> output id */
	struct out_binary *bins;  /* by output id */
	uint32_t cap_bins;
};

struct gtr_copier {
	struct gtr_reader *r;
	struct gtr_writer *w;
	struct gtr_copy_opts o;
	struct u64map probes;     /* input probe id -> output id */
	struct u64map binaries;   /* input binary id -> output id */
	struct u64map bin_syms;   /* input binary id -> 1: symbols written */
	struct u64map pids;       /* input pid -> output pid, for kept pids */
	struct u64map host_pids;  /* input pid -> its pid on its host, when
				   * the input renumbered it (a merged input) */
	struct u64map comms;      /* hash(pid, tid) -> hash of the name written */
	uint32_t clocks, procs, maps, nprobes; /* reader records looked at */
	uint32_t seen;            /* reader process records in host_pids */
	uint32_t *pend_procs, npp, cap_pp;     /* of pids not (yet) kept */
	uint32_t *pend_maps, npm, cap_pm;
	bool symbols;             /* an event with a stack was copied */
	uint64_t events;
};

struct gtr_id_space *gtr_id_space_new(void)
{
	struct gtr_id_space *s = calloc(1, sizeof(*s));

	if (s)
		s->next_pid = PID_RENUMBERED;
	return s;
}

void gtr_id_space_free(struct gtr_id_space *s)
{
	if (!s)
		return;
	u64map_free(&s->spaces);
	u64map_free(&s->used);
	u64map_free(&s->procs);
	u64map_free(&s->bin_ix);
	for (uint32_t i = 0; i < s->next_binary; i++) {
		free(s->bins[i].path);
		free(s->bins[i].build_id);
	}
	free(s->bins);
	free(s);
}

int gtr_id_space_share(struct gtr_id_space *s, uint32_t host, uint32_t with)
{
	if (with >= host)
		return -EINVAL;
	return u64map_put(&s->spaces, host, with, MAP_MAX) ? -ENOMEM : 0;
}

/* The pid space of output host `host`: the host whose pids it shares. */
static uint32_t pid_space(const struct gtr_id_space *s, uint32_t host)
{
	const uint32_t *v = u64map_get(&s->spaces, host);

	return v ? *v : host;
}

struct gtr_copier *gtr_copier_new(struct gtr_reader *r, struct gtr_writer *w,
				  const struct gtr_copy_opts *o)
{
	struct gtr_copier *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->r = r;
	c->w = w;
	if (o)
		c->o = *o;
	return c;
}

void gtr_copier_free(struct gtr_copier *c)
{
	if (!c)
		return;
	u64map_free(&c->probes);
	u64map_free(&c->binaries);
	u64map_free(&c->bin_syms);
	u64map_free(&c->pids);
	u64map_free(&c->host_pids);
	u64map_free(&c->comms);
	free(c->pend_procs);
	free(c->pend_maps);
	free(c);
}

uint64_t gtr_copier_events(const struct gtr_copier *c)
{
	return c->events;
}

uint64_t gtr_copier_ts(const struct gtr_copier *c, uint64_t ts)
{
	if (!ts)
		return 0;
	const int64_t d = c->o.ts_offset;
	return d < 0 && (uint64_t)-d > ts ? 0 : ts + (uint64_t)d;
}

/* Output id of input id `in` of a kind: kept without an id space, else
 * the next free one of *next. *out gets it. 0 or -ENOMEM. */
static int renumber(struct u64map *m, uint32_t in, uint32_t *next, uint32_t *out)
{
	const uint32_t *v = u64map_get(m, in);

	if (v) {
		*out = *v;
		return 0;
	}
	*out = next ? (*next)++ : in;
	return u64map_put(m, in, *out, MAP_MAX) ? -ENOMEM : 0;
}

/* The output host of the input's host `h` (a merged input's PEER index):
 * moved past the hosts of the inputs before it; one the input does not
 * have is its host 0. */
static uint32_t out_host(const struct gtr_copier *c, uint32_t h)
{
	return c->o.host + (h < gtr_reader_nhosts(c->r) ? h : 0);
}

/* The pid on its host of input pid `pid` into *hp: the input's `host_pid`
 * when the input renumbered it, else `pid`. 0 or -ENOMEM. */
static int input_host_pid(struct gtr_copier *c, uint32_t pid, uint32_t *hp)
{
	for (; c->seen < gtr_reader_nprocesses(c->r); c->seen++) {
		const struct gtr_process *p = gtr_reader_process_at(c->r, c->seen);
		if (p->host_pid && u64map_put(&c->host_pids, p->pid, p->host_pid, MAP_MAX))
			return -ENOMEM;
	}
	const uint32_t *v = u64map_get(&c->host_pids, pid);
	*hp = v ? *v : pid;
	return 0;
}

/* The output pid of a process of a merge, `hp` on its host in pid space
 * `space`: the one it was given already (a recording of the same space
 * had it), else `hp` when no other process has it, else the next free
 * pid above 2^22. 0 or -ENOMEM. */
static int merge_pid(struct gtr_id_space *s, uint32_t space, uint32_t hp, uint32_t *out)
{
	const uint64_t key = (uint64_t)space << 32 | hp;
	const uint32_t *v = u64map_get(&s->procs, key);

	if (v) {
		*out = *v;
		return 0;
	}
	*out = hp;
	if (u64map_get(&s->used, hp)) {
		while (u64map_get(&s->used, s->next_pid))
			s->next_pid++;
		*out = s->next_pid++;
	}
	return u64map_put(&s->used, *out, 1, MAP_MAX) ||
	       u64map_put(&s->procs, key, *out, MAP_MAX) ? -ENOMEM : 0;
}

/* The output pid of input pid `pid`: kept, unless the output gives it to
 * a process of another pid space; a merged input's renumbered pid goes
 * back to its pid on its host first. 0 or -ENOMEM; *host_pid gets the pid
 * on its host when the output pid differs from it, else 0. */
static int map_pid(struct gtr_copier *c, uint32_t pid, uint32_t *out, uint32_t *host_pid)
{
	const uint32_t *v = u64map_get(&c->pids, pid);
	struct gtr_id_space *s = c->o.ids;
	uint32_t hp;
	int rc;

	if ((rc = input_host_pid(c, pid, &hp)))
		return rc;
	if (v)
		*out = *v;
	else if (!s)
		*out = pid;
	else if ((rc = merge_pid(s, pid_space(s, out_host(c, gtr_reader_pid_host(c->r, pid))),
				  hp, out)))
		return rc;
	*host_pid = *out != hp ? hp : 0;
	if (!v && u64map_put(&c->pids, pid, *out, MAP_MAX))
		return -ENOMEM;
	return 0;
}

static uint64_t bin_key(uint32_t space, const struct gtr_binary *b)
{
	return u64map_hash_str(b->build_id, u64map_hash_str(b->path, space));
}

/* The output binary that another input of the merge wrote for the same
 * file in the same pid space (same path and build id), or NULL. */
static struct out_binary *shared_binary(const struct gtr_copier *c, const struct gtr_binary *b,
					uint32_t *out)
{
	const struct gtr_id_space *s = c->o.ids;
	uint32_t pos = 0, *v;

	if (!s || !b->build_id[0])
		return NULL;
	const uint32_t space = pid_space(s, out_host(c, b->host));
	while ((v = u64map_find(&s->bin_ix, bin_key(space, b), &pos)))
		if (s->bins[*v].space == space && !strcmp(s->bins[*v].path, b->path) &&
		    !strcmp(s->bins[*v].build_id, b->build_id)) {
			*out = *v;
			return &s->bins[*v];
		}
	return NULL;
}

/* Records output binary `out` (just given its id) in the id space. */
static int share_binary(struct gtr_copier *c, const struct gtr_binary *b, uint32_t out)
{
	struct gtr_id_space *s = c->o.ids;

	if (!s)
		return 0;
	if (out >= s->cap_bins) {
		const uint32_t cap = s->cap_bins ? s->cap_bins * 2 : 16;
		struct out_binary *v = realloc(s->bins, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + s->cap_bins, 0, (size_t)(cap - s->cap_bins) * sizeof(*v));
		s->bins = v;
		s->cap_bins = cap;
	}
	struct out_binary *o = &s->bins[out];
	o->space = pid_space(s, out_host(c, b->host));
	o->path = strdup(b->path);
	o->build_id = strdup(b->build_id);
	if (!o->path || !o->build_id || u64map_add(&s->bin_ix, bin_key(o->space, b), out, MAP_MAX))
		return -ENOMEM;
	return 0;
}

/* Binary `id` of the input, once (and its symbols once stacks are
 * copied); *out gets its output id. 0 or -errno. */
static int put_binary(struct gtr_copier *c, uint32_t id, uint32_t *out)
{
	const uint32_t *v = u64map_get(&c->binaries, id);
	struct out_binary *shared = NULL;
	const struct gtr_binary *in = NULL;
	int rc;

	*out = id;
	if (id == UINT32_MAX)
		return 0;
	for (uint32_t i = 0; i < gtr_reader_nbinaries(c->r) && !in; i++)
		if (gtr_reader_binary_at(c->r, i)->id == id)
			in = gtr_reader_binary_at(c->r, i);
	if (!in)
		return 0;     /* not described: the reader says so */
	if (v) {
		*out = *v;
		shared = c->o.ids ? &c->o.ids->bins[*out] : NULL;
	} else if ((shared = shared_binary(c, in, out))) {
		if (u64map_put(&c->binaries, id, *out, MAP_MAX))
			return -ENOMEM;
	} else {
		struct gtr_binary b = *in;
		b.host = out_host(c, in->host);
		if ((rc = renumber(&c->binaries, id, c->o.ids ? &c->o.ids->next_binary : NULL,
				   &b.id)) || (rc = share_binary(c, in, b.id)) ||
		    (rc = gtr_writer_binary(c->w, &b)))
			return rc;
		*out = b.id;
		shared = c->o.ids ? &c->o.ids->bins[*out] : NULL;
	}
	if (!c->symbols || u64map_get(&c->bin_syms, id) || (shared && shared->symbols))
		return 0;
	const uint32_t n = gtr_reader_nsymbols(c->r, id);
	struct gtr_symbol *syms = n ? malloc((size_t)n * sizeof(*syms)) : NULL;
	if (n && !syms)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		syms[i] = *gtr_reader_symbol_at(c->r, id, i);
	rc = n ? gtr_writer_symbols(c->w, *out, syms, n) : 0;
	free(syms);
	if (!rc && u64map_put(&c->bin_syms, id, 1, MAP_MAX))
		rc = -ENOMEM;
	if (!rc && shared)
		shared->symbols = true;
	return rc;
}

/* Probe `id` of the input and its binary, once; *out gets its output id
 * (the input's when the input has not described it). 0 or -errno. */
static int put_probe(struct gtr_copier *c, uint32_t id, uint32_t *out)
{
	const uint32_t *v = u64map_get(&c->probes, id);
	const struct gtr_probe *in;
	struct gtr_probe p;
	int rc;

	*out = id;
	if (v) {
		*out = *v;
		return 0;
	}
	if (id == UINT32_MAX || !(in = gtr_reader_probe(c->r, id)))
		return 0;
	p = *in;
	if (c->o.partial)
		p.rate_limit = p.rate_window_limit = 0;
	/* a window carried goes with rate_window_limit, which readers of
	 * older releases skip (spec/FORMAT.md, PROBE) */
	if (p.rate_limit && p.rate_window_kept) {
		p.rate_window_limit = p.rate_limit;
		p.rate_limit = 0;
	}
	/* a rotated file's current window, on the output's clock */
	p.rate_window_ns = gtr_copier_ts(c, p.rate_window_ns);
	p.rate_window_last_ns = gtr_copier_ts(c, p.rate_window_last_ns);
	if ((rc = put_binary(c, in->binary_id, &p.binary_id)) ||
	    (rc = renumber(&c->probes, id, c->o.ids ? &c->o.ids->next_probe : NULL, &p.id)))
		return rc;
	*out = p.id;
	return gtr_writer_probe(c->w, &p);
}

/* Every probe the input has described so far, in its order. 0 or -errno. */
static int put_probes(struct gtr_copier *c)
{
	uint32_t out;
	int rc = 0;

	for (; c->nprobes < gtr_reader_nprobes(c->r) && !rc; c->nprobes++)
		rc = put_probe(c, gtr_reader_probe_at(c->r, c->nprobes)->id, &out);
	return rc;
}

static int put_process(struct gtr_copier *c, const struct gtr_process *in)
{
	struct gtr_process p = *in;
	int rc;

	p.ts_ns = gtr_copier_ts(c, in->ts_ns);
	p.host = out_host(c, in->host);
	if ((rc = map_pid(c, in->pid, &p.pid, &p.host_pid)) ||
	    (rc = put_binary(c, in->binary_id, &p.binary_id)))
		return rc;
	return gtr_writer_process(c->w, &p);
}

static int put_mapping(struct gtr_copier *c, const struct gtr_mapping *in)
{
	struct gtr_mapping m = *in;
	uint32_t host_pid;
	int rc;

	m.ts_ns = gtr_copier_ts(c, in->ts_ns);
	if ((rc = map_pid(c, in->pid, &m.pid, &host_pid)) ||
	    (rc = put_binary(c, in->binary_id, &m.binary_id)))
		return rc;
	return gtr_writer_mapping(c->w, &m);
}

static int pend(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t i)
{
	if (*n == *cap) {
		const uint32_t nc = *cap ? *cap * 2 : 16;
		uint32_t *p = realloc(*v, (size_t)nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = i;
	return 0;
}

/* The waiting process records and mappings of input pid `pid`, which has
 * just become kept; the others keep waiting. 0 or -errno. */
static int put_pending(struct gtr_copier *c, uint32_t pid)
{
	uint32_t k = 0;
	int rc = 0;

	for (uint32_t i = 0; i < c->npp; i++) {
		const struct gtr_process *p = gtr_reader_process_at(c->r, c->pend_procs[i]);
		if (p->pid != pid || rc)
			c->pend_procs[k++] = c->pend_procs[i];
		else
			rc = put_process(c, p);
	}
	c->npp = k;
	k = 0;
	for (uint32_t i = 0; i < c->npm; i++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(c->r, c->pend_maps[i]);
		if (m->pid != pid || rc)
			c->pend_maps[k++] = c->pend_maps[i];
		else
			rc = put_mapping(c, m);
	}
	c->npm = k;
	return rc;
}

/* Process records and mappings the input met since the last call: in a
 * merge, all; in a selection, those of kept pids, while the others wait
 * (put_pending()). */
static int put_processes(struct gtr_copier *c)
{
	int rc = 0;

	for (; c->procs < gtr_reader_nprocesses(c->r) && !rc; c->procs++) {
		const struct gtr_process *p = gtr_reader_process_at(c->r, c->procs);
		rc = c->o.ids || u64map_get(&c->pids, p->pid) ? put_process(c, p)
			: pend(&c->pend_procs, &c->npp, &c->cap_pp, c->procs);
	}
	for (; c->maps < gtr_reader_nmappings(c->r) && !rc; c->maps++) {
		const struct gtr_mapping *m = gtr_reader_mapping_at(c->r, c->maps);
		rc = c->o.ids || u64map_get(&c->pids, m->pid) ? put_mapping(c, m)
			: pend(&c->pend_maps, &c->npm, &c->cap_pm, c->maps);
	}
	return rc;
}

/* Clock samples describe the output's own clock: copied unless the
 * options say they are not that clock's. */
static int put_clocks(struct gtr_copier *c)
{
	int rc = 0;

	for (; c->clocks < gtr_reader_nclocks(c->r) && !rc; c->clocks++)
		if (!c->o.skip_clocks)
			rc = gtr_writer_clock(c->w, gtr_reader_clock_at(c->r, c->clocks));
	return rc;
}

/* What event `ev` needs before it, its output pid in *pid. 0 or -errno. */
static int put_context(struct gtr_copier *c, const struct gtr_event *ev, uint32_t *pid)
{
	uint32_t host_pid;
	int rc;

	if ((rc = put_clocks(c)))
		return rc;
	if (!u64map_get(&c->pids, ev->pid) &&
	    ((rc = map_pid(c, ev->pid, pid, &host_pid)) || (rc = put_pending(c, ev->pid))))
		return rc;
	if ((rc = put_processes(c)) || (rc = map_pid(c, ev->pid, pid, &host_pid)))
		return rc;
	if (ev->nstack && !c->symbols) {
		uint32_t out;
		c->symbols = true;
		for (uint32_t i = 0; i < gtr_reader_nbinaries(c->r) && !rc; i++)
			rc = put_binary(c, gtr_reader_binary_at(c->r, i)->id, &out);
		if (rc)
			return rc;
	}
	const char *comm = gtr_reader_comm(c->r, ev->pid, ev->tid);
	const uint64_t key = u64map_hash2(*pid, ev->tid);
	const uint32_t h = (uint32_t)u64map_hash_str(comm, 0);
	const uint32_t *was = u64map_get(&c->comms, key);
	if (comm[0] && (!was || *was != h)) {
		if ((rc = gtr_writer_task(c->w, *pid, ev->tid, comm)))
			return rc;
		if (u64map_put(&c->comms, key, h, MAP_MAX))
			return -ENOMEM;
	}
	return put_probes(c);
}

int gtr_copier_event(struct gtr_copier *c, const struct gtr_event *ev)
{
	struct gtr_event e = *ev;
	int rc = put_context(c, ev, &e.pid);

	if (!rc)
		rc = put_probe(c, ev->probe_id, &e.probe_id);
	if (rc)
		return rc;
	e.ts_ns = gtr_copier_ts(c, ev->ts_ns);
	if (!(rc = gtr_writer_event(c->w, &e)))
		c->events++;
	return rc;
}

int gtr_copier_drop(struct gtr_copier *c, const struct gtr_drop *d)
{
	struct gtr_drop o = *d;
	int rc;

	if ((rc = put_clocks(c)) || (rc = put_probes(c)) ||
	    (rc = put_probe(c, d->probe_id, &o.probe_id)))
		return rc;
	o.ts_ns = gtr_copier_ts(c, d->ts_ns);
	o.since_ns = gtr_copier_ts(c, d->since_ns);
	return gtr_writer_drop(c->w, &o);
}

int gtr_copier_finish(struct gtr_copier *c)
{
	int rc = put_clocks(c);

	if (!rc)
		rc = put_processes(c);
	if (!rc)
		rc = put_probes(c);
	return rc;
}

int gtr_copier_start(struct gtr_copier *c)
{
	uint32_t out, host_pid;
	int rc = 0;

	/* a merge: the pids the input knows now are claimed now, so that of
	 * two hosts with one pid, the earlier input keeps it; its processes
	 * are written at once, so that a merge of this output claims them
	 * in its turn */
	for (uint32_t i = 0; c->o.ids && i < gtr_reader_nprocesses(c->r) && !rc; i++)
		rc = map_pid(c, gtr_reader_process_at(c->r, i)->pid, &out, &host_pid);
	if (!rc)
		rc = put_probes(c);
	return rc || !c->o.ids ? rc : put_processes(c);
}
