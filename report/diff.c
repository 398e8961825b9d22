/* SPDX-License-Identifier: MIT */
/*
 * `gotrace-report diff` (report/diff.h): each recording is read once by
 * report_run() with the diff's sink, which collects per function (by
 * name) its calls, latencies, error results, calls a panic or an exit cut
 * short, and the call edges; then what each side is (Go version, arch,
 * kernel, probes, losses) decides whether the two compare, and the
 * statistics (report/diff_stats.h), the rules (report/diff_rules.c) and
 * the output (report/diff_out.c) follow.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_int.h"
#include "merge.h"
#include "run_int.h"
#include "stats.h"
#include "xalloc.h"

#define MAX_NAMES (1u << 22)
#define DIFF_SEED 0x676f7472616365ull   /* of the reservoirs' random numbers */
#define MAX_EDGES (1u << 22)

static uint32_t nbuckets(void)
{
	return stats_bucket(UINT64_MAX) + 1;
}

/* ------------------------------------------------------------ names */

/* The index of function `name` (name[0, len)), added when new; UINT32_MAX
 * past MAX_NAMES. */
static uint32_t func_of(struct diff *d, const char *name, size_t len)
{
	const uint64_t h = u64map_hash_mem(name, len, 0);
	uint32_t pos = 0;

	/* names filed under their hash, checked */
	for (const uint32_t *v; (v = u64map_find(&d->fmap, h, &pos));) {
		const char *n = d->funcs[*v].name;
		if (!strncmp(n, name, len) && !n[len])
			return *v;
	}
	if (d->nfuncs == d->capfuncs) {
		d->capfuncs = d->capfuncs ? d->capfuncs * 2 : 64;
		d->funcs = xrealloc(d->funcs, d->capfuncs * sizeof(*d->funcs), "diff functions");
	}
	if (u64map_add(&d->fmap, h, d->nfuncs, MAX_NAMES))
		return UINT32_MAX;
	struct diff_func *f = &d->funcs[d->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = xcalloc(1, len + 1, "diff functions");
	memcpy(f->name, name, len);
	return d->nfuncs++;
}

static uint32_t func_of_str(struct diff *d, const char *name)
{
	return func_of(d, name, strlen(name));
}

/* Counts one call of caller -> callee on the side being read. */
static void edge_add(struct diff *d, uint32_t caller, uint32_t callee)
{
	if (caller == UINT32_MAX || callee == UINT32_MAX)
		return;
	const uint64_t key = (uint64_t)caller << 32 | callee;
	const uint32_t *v = u64map_get(&d->emap, key);
	if (v) {
		d->edges[*v].count[d->side]++;
		return;
	}
	if (d->nedges == d->capedges) {
		d->capedges = d->capedges ? d->capedges * 2 : 64;
		d->edges = xrealloc(d->edges, d->capedges * sizeof(*d->edges), "diff edges");
	}
	if (u64map_put(&d->emap, key, d->nedges, MAX_EDGES))
		return;
	d->edges[d->nedges] = (struct diff_edge){ caller, callee, { 0, 0 } };
	d->edges[d->nedges++].count[d->side] = 1;
}

/* ------------------------------------------------------------ the sink */

/* splitmix64: the reservoir's random numbers, the same on every run. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Keeps latency `ns`: every one up to DIFF_SAMPLES, then a uniform
 * reservoir (J. S. Vitter, "Random sampling with a reservoir", ACM TOMS
 * 11 (1985), algorithm R). */
static void add_latency(struct diff *d, struct diff_fside *s, uint64_t ns)
{
	s->nlat++;
	if (!s->lat)
		s->lat = xcalloc(16, sizeof(*s->lat), "diff latencies");
	if (s->nkept < DIFF_SAMPLES) {
		if (!(s->nkept & (s->nkept - 1)) && s->nkept >= 16)
			s->lat = xrealloc(s->lat, 2 * s->nkept * sizeof(*s->lat), "diff latencies");
		s->lat[s->nkept++] = ns;
	} else {
		const uint64_t j = next_rand(&d->rng) % s->nlat;
		if (j < DIFF_SAMPLES)
			s->lat[j] = ns;
	}
	if (d->opts->nfiles[d->side] < 2)
		return;   /* no run-to-run spread of one recording */
	if (!s->hist)
		s->hist = xcalloc(nbuckets(), sizeof(*s->hist), "diff latencies");
	s->hist[stats_bucket(ns)]++;
	s->run_n++;
}

/* The result of type `error` of return event `e`: 1 not nil, 0 nil, -1
 * none (spec/PROBES.md: an interface is its dynamic type, "<nil>"). */
static int error_result(const struct report_event *e)
{
	const struct gtr_probe *p = e->probe;

	if (!p || p->kind != GTR_KIND_RETURN)
		return -1;
	for (uint32_t k = p->nargs; k-- > 0;) {
		if (!p->args[k].type_name || strcmp(p->args[k].type_name, "error"))
			continue;
		if (k >= e->ev->nvals || e->ev->vals[k].kind != GTR_VAL_STR)
			return -1;
		const struct gtr_value *v = &e->ev->vals[k];
		return !(v->v.s.len == 5 && !memcmp(v->v.s.data, "<nil>", 5));
	}
	return -1;
}

static const char *func_name(const struct report_event *e, char tmp[32])
{
	const struct gtr_probe *p = e->entry_probe ? e->entry_probe : e->probe;

	if (p && p->func && p->func[0])
		return p->func;
	snprintf(tmp, 32, "probe#%u", e->ev->probe_id);
	return tmp;
}

/* The caller of the call whose entry is `ev`, from its recorded stack
 * (frame 1 is a return address into the caller), or UINT32_MAX. */
static uint32_t stack_caller(struct diff *d, struct run *run, const struct gtr_event *ev)
{
	if (!ev || ev->nstack < 2)
		return UINT32_MAX;
	const char *n = gtr_reader_symbolize(run->r, ev->pid, ev->stack[1], NULL);
	return n ? func_of_str(d, n) : UINT32_MAX;
}

static void diff_event(struct run *run, struct report_event *e, bool kept)
{
	struct diff *d = run->state;
	char tmp[32];

	if (!kept)
		return;
	const uint32_t f = func_of_str(d, func_name(e, tmp));
	if (f == UINT32_MAX)
		return;
	struct diff_fside *s = &d->funcs[f].side[d->side];
	if (e->ev->kind == GTR_KIND_ENTRY) {
		s->entries++;
		edge_add(d, stack_caller(d, run, e->ev), f);
		return;
	}
	s->returns++;
	const int err = error_result(e);
	if (err >= 0) {
		s->err_returns++;
		s->err_nonnil += (uint64_t)err;
	}
	if (!e->entry || e->lost)
		return;
	add_latency(d, s, e->latency_ns);
	/* an entry with a stack counted its edge; else the nesting */
	if (e->entry->nstack >= 2)
		return;
	uint32_t n;
	uint64_t self;
	const uint32_t *fids = pair_last_stack(run->pair, &n, &self);
	if (fids && n >= 2)
		edge_add(d, func_of_str(d, pair_func_name(run->pair, fids[n - 2])), f);
}

static void diff_unfinished(struct run *run, const struct report_event *e, uint64_t end_ns,
			    const char *status)
{
	struct diff *d = run->state;
	char tmp[32];
	const uint32_t f = func_of_str(d, func_name(e, tmp));

	if (f == UINT32_MAX)
		return;
	if (!strcmp(status, "unwound"))
		d->funcs[f].side[d->side].unwound++;
	else if (!strcmp(status, "exited"))
		d->funcs[f].side[d->side].exited++;
}

static void diff_begin(struct run *run)
{
	run->state = run->opts->sink_arg;
}

/* Appends `s` to the comma-separated set *set when not in it. */
static void set_add(char **set, const char *s)
{
	if (!s || !s[0])
		s = "unknown";
	const size_t n = strlen(s);
	if (*set) {
		for (const char *p = *set; (p = strstr(p, s)); p += n)
			if ((p == *set || p[-1] == ',') && (p[n] == ',' || !p[n]))
				return;
	}
	size_t old = *set ? strlen(*set) : 0;
	*set = xrealloc(*set, old + n + 2, "diff");
	if (old)
		(*set)[old++] = ',';
	memcpy(*set + old, s, n + 1);
}

/* Merges one file's value of a property into its side's, noting a file of
 * the same side that differs. */
static void meta_merge(struct diff_meta *m, char **side, char *file, const char *what)
{
	if (m->nfiles > 1 && *side && strcmp(*side, file) && !m->mixed) {
		const size_t n = strlen(what) + strlen(*side) + strlen(file) + 32;
		m->mixed = xcalloc(1, n, "diff");
		snprintf(m->mixed, n, "%s %s in one file, %s in another", what, *side, file);
	}
	if (!*side) {
		*side = file;
		return;
	}
	char *p = file;
	while (p && *p) {
		char *c = strchr(p, ',');
		if (c)
			*c = '\0';
		set_add(side, p);
		p = c ? c + 1 : NULL;
	}
	free(file);
}

static void record_exits(struct diff_meta *m, struct gtr_reader *r)
{
	for (uint32_t i = 0; i < gtr_reader_nprocesses(r); i++) {
		const struct gtr_process *p = gtr_reader_process_at(r, i);
		if (!p->exited)
			continue;
		uint32_t k = 0;
		while (k < m->nexit && m->exit_code[k] != p->exit_code)
			k++;
		if (k == m->nexit) {
			if (m->nexit == 16)
				continue;
			m->exit_code[m->nexit++] = p->exit_code;
		}
		m->exit_count[k]++;
	}
}

/* A probe as the user wrote it, without the binary's path (which differs
 * between builds) and format: "return main.*" for 'r:./app:main.* "%d" x'. */
static char *probe_key(const struct gtr_probe *p)
{
	const char *s = p->spec && p->spec[0] ? p->spec : p->func ? p->func : "";
	size_t n = strcspn(s, " \t\"");
	const char *c;

	while ((c = memchr(s, ':', n))) {
		n -= (size_t)(c + 1 - s);
		s = c + 1;
	}
	char *k = xcalloc(1, n + 8, "diff probes");
	snprintf(k, n + 8, "%s %.*s", gtr_kind_name(p->kind), (int)n, s);
	return k;
}

/* Whether probe key `k` (probe_key()) is among the probes of `side`. */
static bool probe_in(const struct diff *d, int side, const char *k)
{
	uint32_t pos = 0;

	for (const uint32_t *v; (v = u64map_find(&d->pmap[side], u64map_hash_str(k, 0), &pos));)
		if (!strcmp(d->probes[side][*v], k))
			return true;
	return false;
}

static void record_probes(struct diff *d, struct run *run)
{
	const int s = d->side;

	for (uint32_t i = 0; i < run->np; i++) {
		char *k = probe_key(run->probes[i]);
		const uint64_t h = u64map_hash_str(k, 0);

		if (probe_in(d, s, k) || u64map_add(&d->pmap[s], h, d->nprobes[s], MAX_NAMES)) {
			free(k);
			continue;
		}
		d->probes[s] = xrealloc(d->probes[s], (d->nprobes[s] + 1) * sizeof(char *),
					"diff probes");
		d->probes[s][d->nprobes[s]++] = k;
	}
}

/* This recording's p50 of each function, for the run-to-run spread. */
static void close_runs(struct diff *d)
{
	const uint32_t nb = nbuckets();

	for (uint32_t i = 0; i < d->nfuncs; i++) {
		struct diff_fside *s = &d->funcs[i].side[d->side];
		if (!s->run_n)
			continue;
		const uint64_t rank = (s->run_n + 1) / 2;
		uint64_t cum = 0;
		uint32_t b = 0;
		while (b < nb && (cum += s->hist[b]) < rank)
			b++;
		s->run_p50 = xrealloc(s->run_p50, (s->nruns + 1) * sizeof(double), "diff runs");
		s->run_p50[s->nruns++] = (double)stats_bucket_mid(b);
		memset(s->hist, 0, nb * sizeof(*s->hist));
		s->run_n = 0;
	}
}

/* After the last event of one recording: what it was and how it went. */
static void diff_end(struct run *run)
{
	struct diff *d = run->state;
	struct diff_meta *m = &d->meta[d->side];
	const struct gtr_host *h;
	char *go = NULL, *arch = NULL, *kernel = NULL;

	close_runs(d);
	m->lost = gtr_add_sat(m->lost, run->lost);
	m->suppressed = gtr_add_sat(m->suppressed, run->suppressed);
	m->damaged += gtr_reader_damage(run->r) + gtr_reader_truncated(run->r);
	m->events += run->nevents;
	for (uint32_t i = 0; i < gtr_reader_nbinaries(run->r); i++) {
		const struct gtr_binary *b = gtr_reader_binary_at(run->r, i);
		set_add(&go, b->go_version);
		set_add(&arch, b->arch);
	}
	for (uint32_t i = 0; i < gtr_reader_nhosts(run->r); i++)   /* a merged file: each */
		if ((h = gtr_reader_host_at(run->r, i)))
			set_add(&kernel, h->kernel);
	/* none known (no binary, no host): "unknown" */
	if (!go)
		set_add(&go, NULL);
	if (!arch)
		set_add(&arch, NULL);
	if (!kernel)
		set_add(&kernel, NULL);
	meta_merge(m, &m->go_version, go, "Go version");
	meta_merge(m, &m->arch, arch, "arch");
	meta_merge(m, &m->kernel, kernel, "kernel");
	record_exits(m, run->r);
	record_probes(d, run);
}

static const struct sink diff_sink = {
	.name = "diff",
	.flags = SINK_UNORDERED,
	.begin = diff_begin,
	.event = diff_event,
	.unfinished = diff_unfinished,
	.end = diff_end,
};

/* Reads every file of side `side`. 0, or DIFF_EXIT_USAGE (reported). */
static int read_side(struct diff *d, int side)
{
	const struct diff_opts *o = d->opts;

	d->side = side;
	d->rng = DIFF_SEED;   /* each side alike: the same input, the same sample */
	d->meta[side].paths = o->files[side];
	for (int i = 0; i < o->nfiles[side]; i++) {
		struct report_opts ro = {
			.path = o->files[side][i], .format = &out_text, .progress = -1,
			.sink = &diff_sink, .sink_arg = d, .nfilters = o->nfilters,
		};
		ro.name = strcmp(ro.path, "-") ? ro.path : "standard input";
		memcpy(ro.filters, o->filters, sizeof(ro.filters));
		d->meta[side].nfiles = i + 1;
		if (report_run(&ro))
			return DIFF_EXIT_USAGE;
	}
	return 0;
}

/* ------------------------------------------------------------ comparable */

/* Appends "; " and a formatted reason to *why. */
static void why_add(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void why_add(char **why, const char *fmt, ...)
{
	va_list ap;
	struct buf b = BUF_INIT;

	if (*why) {
		buf_puts(&b, *why);
		buf_puts(&b, "; ");
		free(*why);
	}
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		xalloc_die("diff");
	va_end(ap);
	buf_puts(&b, s);
	free(s);
	*why = strdup(buf_cstr(&b));
	buf_free(&b);
}


/* The probes of one side the other has not, as "entry F, return G". */
static char *probes_only(const struct diff *d, int side, uint32_t *n)
{
	struct buf b = BUF_INIT;

	*n = 0;
	for (uint32_t i = 0; i < d->nprobes[side]; i++) {
		if (probe_in(d, !side, d->probes[side][i]))
			continue;
		if (*n < 5)
			buf_printf(&b, "%s%s", *n ? ", " : "", d->probes[side][i]);
		++*n;
	}
	if (*n > 5)
		buf_printf(&b, " and %" PRIu32 " more", *n - 5);
	char *s = strdup(b.len ? buf_cstr(&b) : "");
	buf_free(&b);
	return s;
}

static void check_losses(struct diff *d, unsigned *kinds)
{
	static const char *const side_name[2] = { "base", "new" };

	for (int s = 0; s < 2; s++) {
		const struct diff_meta *m = &d->meta[s];
		if (m->lost)
			why_add(&d->incomparable, "%s lost %" PRIu64 " event(s) while recording "
				"(the recorder could not keep up)", side_name[s], m->lost);
		if (m->suppressed)
			why_add(&d->incomparable, "%s had %" PRIu64 " event(s) suppressed by "
				"--rate-limit", side_name[s], m->suppressed);
		if (m->damaged)
			why_add(&d->incomparable, "%s has %" PRIu64 " damaged or cut block(s)",
				side_name[s], m->damaged);
		if (m->lost || m->suppressed || m->damaged)
			*kinds |= DIFF_ACCEPT_LOSS;
		if (m->mixed) {
			why_add(&d->incomparable, "%s's own recordings differ: %s", side_name[s],
				m->mixed);
			*kinds |= DIFF_ACCEPT_GO | DIFF_ACCEPT_ARCH | DIFF_ACCEPT_KERNEL;
		}
	}
}

/* Whether the sides compare; d->incomparable says why not. */
static void check_comparable(struct diff *d)
{
	const struct diff_meta *b = &d->meta[DIFF_BASE], *n = &d->meta[DIFF_NEW];
	unsigned kinds = 0;
	uint32_t nb, nn;

	for (int s = 0; s < 2; s++) {   /* a side whose files held no metadata */
		struct diff_meta *m = &d->meta[s];
		char **f[] = { &m->go_version, &m->arch, &m->kernel };
		for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
			if (!*f[i])
				set_add(f[i], "unknown");
	}
	check_losses(d, &kinds);
	if (strcmp(b->go_version, n->go_version)) {
		why_add(&d->incomparable, "Go version: base %s, new %s", b->go_version,
			n->go_version);
		kinds |= DIFF_ACCEPT_GO;
	}
	if (strcmp(b->arch, n->arch)) {
		why_add(&d->incomparable, "arch: base %s, new %s", b->arch, n->arch);
		kinds |= DIFF_ACCEPT_ARCH;
	}
	if (strcmp(b->kernel, n->kernel)) {
		why_add(&d->incomparable, "kernel: base %s, new %s", b->kernel, n->kernel);
		kinds |= DIFF_ACCEPT_KERNEL;
	}
	char *ob = probes_only(d, DIFF_BASE, &nb), *on = probes_only(d, DIFF_NEW, &nn);
	if (nb || nn) {
		why_add(&d->incomparable, "probes: %" PRIu32 " only in base%s%s%s, %" PRIu32
			" only in new%s%s%s", nb, nb ? " (" : "", ob, nb ? ")" : "", nn,
			nn ? " (" : "", on, nn ? ")" : "");
		kinds |= DIFF_ACCEPT_PROBES;
	}
	free(ob);
	free(on);
	d->differs = kinds;
	d->accepted = d->incomparable && !(kinds & ~d->opts->accept);
}

static const char *const accept_names[] = { "loss", "go", "arch", "kernel", "probes" };

const char *diff_accept_names(unsigned kinds, char *out, size_t n)
{
	size_t len = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < sizeof(accept_names) / sizeof(*accept_names); i++)
		if (kinds & (1u << i))
			len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s",
						len ? "," : "", accept_names[i]);
	return out;
}

int diff_accept_parse(const char *s, unsigned *kinds)
{
	char *copy = strdup(s), *save = NULL;
	int ret = 0;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned i = 0;
		if (!strcmp(t, "all")) {
			*kinds |= (1u << (sizeof(accept_names) / sizeof(*accept_names))) - 1;
			continue;
		}
		while (i < sizeof(accept_names) / sizeof(*accept_names) && strcmp(t, accept_names[i]))
			i++;
		if (i == sizeof(accept_names) / sizeof(*accept_names))
			ret = -1;
		else
			*kinds |= 1u << i;
	}
	free(copy);
	return ret;
}

/* ------------------------------------------------------------ results */

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void quantiles(struct diff_fres *r, int s, const struct diff_fside *fs)
{
	static const double ps[DIFF_NQ] = { 0.5, 0.9, 0.99 };

	for (int k = 0; k < DIFF_NQ; k++) {
		struct diff_q *q = &r->q[s][k];
		size_t lo, hi;
		if (!fs->nkept)
			continue;
		q->have = true;
		q->v = fs->lat[diff_quantile_rank(fs->nkept, ps[k]) - 1];
		if (diff_quantile_ci(fs->nkept, ps[k], DIFF_ALPHA, &lo, &hi)) {
			q->have_ci = true;
			q->lo = fs->lat[lo - 1];
			q->hi = fs->lat[hi - 1];
		}
	}
}

static double spread(const struct diff_fside *fs, uint64_t p50)
{
	double m = 0;

	if (fs->nruns < 2 || !p50)
		return -1;
	for (uint32_t i = 0; i < fs->nruns; i++) {
		const double dv = fs->run_p50[i] > (double)p50 ? fs->run_p50[i] - (double)p50
							       : (double)p50 - fs->run_p50[i];
		if (dv / (double)p50 > m)
			m = dv / (double)p50;
	}
	return m;
}

/* The comparison of function `f`; false when neither side called it. */
static bool compute_func(struct diff *d, uint32_t f, struct diff_fres *r)
{
	struct diff_func *fn = &d->funcs[f];

	memset(r, 0, sizeof(*r));
	r->runs_ns = -1;
	r->func = f;
	r->name = fn->name;
	for (int s = 0; s < 2; s++) {
		struct diff_fside *fs = &fn->side[s];
		r->total[s] = fs->entries ? fs->entries : fs->returns;
		r->calls[s] = (r->total[s] + (uint64_t)d->opts->nfiles[s] / 2) /
			      (uint64_t)d->opts->nfiles[s];
		r->in[s] = r->total[s] > 0;
		r->nlat[s] = fs->nlat;
		r->nkept[s] = fs->nkept;
		r->sampled |= fs->nlat > fs->nkept;
		r->panics[s] = fs->unwound + fs->exited;
		if (fs->nkept)
			qsort(fs->lat, fs->nkept, sizeof(*fs->lat), u64_cmp);
		quantiles(r, s, fs);
		r->spread[s] = spread(fs, r->q[s][0].v);
		if (r->spread[s] >= 0 && r->spread[s] * (double)r->q[s][0].v > r->runs_ns)
			r->runs_ns = r->spread[s] * (double)r->q[s][0].v;
		if (fs->err_returns) {
			r->has_err = true;
			r->err_share[s] = (double)fs->err_nonnil / (double)fs->err_returns;
		}
	}
	if (!r->in[0] && !r->in[1])
		return false;
	const struct diff_fside *b = &fn->side[0], *n = &fn->side[1];
	if (b->nkept >= DIFF_MIN_SAMPLES && n->nkept >= DIFF_MIN_SAMPLES) {
		r->have_test = true;
		diff_mwu(b->lat, b->nkept, n->lat, n->nkept, &r->mwu);
		diff_hodges_lehmann(b->lat, b->nkept, n->lat, n->nkept, &r->hl);
	}
	if (b->err_returns >= DIFF_MIN_SAMPLES && n->err_returns >= DIFF_MIN_SAMPLES) {
		r->have_err_test = true;
		r->err_p = diff_fisher(b->err_nonnil, b->err_returns - b->err_nonnil,
				       n->err_nonnil, n->err_returns - n->err_nonnil);
	}
	return true;
}

static int fres_cmp(const void *a, const void *b)
{
	return strcmp(((const struct diff_fres *)a)->name, ((const struct diff_fres *)b)->name);
}

static void compute(struct diff *d)
{
	double *geo[2];

	d->res = xcalloc(d->nfuncs + 1, sizeof(*d->res), "diff results");
	geo[0] = xcalloc(d->nfuncs + 1, sizeof(double), "diff results");
	geo[1] = xcalloc(d->nfuncs + 1, sizeof(double), "diff results");
	for (uint32_t f = 0; f < d->nfuncs; f++) {
		struct diff_fres *r = &d->res[d->nres];
		if (!compute_func(d, f, r))
			continue;
		d->nres++;
		if (r->q[0][0].have && r->q[1][0].have && r->q[0][0].v && r->q[1][0].v) {
			geo[0][d->ngeo] = (double)r->q[0][0].v;
			geo[1][d->ngeo++] = (double)r->q[1][0].v;
		}
	}
	qsort(d->res, d->nres, sizeof(*d->res), fres_cmp);
	d->geomean[0] = diff_geomean(geo[0], d->ngeo);
	d->geomean[1] = diff_geomean(geo[1], d->ngeo);
	free(geo[0]);
	free(geo[1]);
}

/* ------------------------------------------------------------ the run */

static const char *const default_rules[] = { "p50 > +10%", "errors > +5%", "crashes > 0" };

/* Parses the rules (the defaults when none). 0, or DIFF_EXIT_USAGE. */
static int parse_rules(struct diff *d)
{
	const struct diff_opts *o = d->opts;
	const char *const *texts = o->nrules ? o->rules : default_rules;
	const uint32_t n = o->nrules ? (uint32_t)o->nrules
				     : (uint32_t)(sizeof(default_rules) / sizeof(*default_rules));
	char err[512];

	d->rules = xcalloc(n, sizeof(*d->rules), "diff rules");
	for (uint32_t i = 0; i < n; i++) {
		if (diff_rule_parse(texts[i], &d->rules[i], err, sizeof(err))) {
			fprintf(stderr, PROG ": --fail-on '%s': %s\n", texts[i], err);
			return DIFF_EXIT_USAGE;
		}
		d->nrules++;
	}
	return 0;
}

static void diff_free(struct diff *d)
{
	for (uint32_t i = 0; i < d->nfuncs; i++) {
		free(d->funcs[i].name);
		for (int s = 0; s < 2; s++) {
			free(d->funcs[i].side[s].lat);
			free(d->funcs[i].side[s].hist);
			free(d->funcs[i].side[s].run_p50);
		}
	}
	for (int s = 0; s < 2; s++) {
		for (uint32_t i = 0; i < d->nprobes[s]; i++)
			free(d->probes[s][i]);
		free(d->probes[s]);
		u64map_free(&d->pmap[s]);
		free(d->meta[s].go_version);
		free(d->meta[s].arch);
		free(d->meta[s].kernel);
		free(d->meta[s].mixed);
	}
	for (uint32_t i = 0; i < d->nrules; i++)
		diff_rule_free(&d->rules[i]);
	for (uint32_t i = 0; i < d->nfinds; i++)
		free(d->finds[i].why);
	free(d->finds);
	free(d->rules);
	free(d->res);
	free(d->funcs);
	free(d->edges);
	free(d->incomparable);
	u64map_free(&d->fmap);
	u64map_free(&d->emap);
}

/* Everything after the rules parsed: read, compare, write. */
static int diff_pass(struct diff *d)
{
	struct buf b = BUF_INIT;
	int ret;

	if ((ret = read_side(d, DIFF_BASE)) || (ret = read_side(d, DIFF_NEW)))
		return ret;
	check_comparable(d);
	compute(d);
	if (diff_rules_check(d, &b)) {   /* a rule that can never fail */
		fprintf(stderr, PROG ": %s\n", buf_cstr(&b));
		buf_free(&b);
		return DIFF_EXIT_USAGE;
	}
	diff_rules_eval(d);
	diff_write(d, &b);
	if (b.len && fwrite(b.data, 1, b.len, stdout) != b.len)
		ret = DIFF_EXIT_USAGE;
	buf_free(&b);
	if (fflush(stdout) || ret) {
		fprintf(stderr, PROG ": cannot write output\n");
		return DIFF_EXIT_USAGE;
	}
	if (d->incomparable && !d->accepted) {
		char acc[64];
		fprintf(stderr, PROG ": not comparable: %s (--accept=%s compares them anyway)\n",
			d->incomparable, diff_accept_names(d->differs, acc, sizeof(acc)));
		return DIFF_EXIT_INCOMPARABLE;
	}
	for (uint32_t i = 0; i < d->nfinds; i++)
		if (d->finds[i].verdict == DV_FAIL)
			return DIFF_EXIT_FAIL;
	return DIFF_EXIT_OK;
}

/*
 * Whether two of the files, of one side or of both, hold one recording
 * (report_same_recording(): a copy, a file given twice): on one side its
 * calls would be counted twice, making changes look significant; on both,
 * the diff would compare it with itself and pass (a gate given the base
 * twice by mistake). Says which.
 * Standard input and a file that cannot be opened are left to the read.
 */
static bool same_recording(const struct diff_opts *o)
{
	struct gtr_reader *r[2 * DIFF_MAX_FILES] = { 0 };
	const char *path[2 * DIFF_MAX_FILES];
	char err[256];
	size_t n = 0;
	bool same;

	for (int side = 0; side < 2; side++)
		for (int i = 0; i < o->nfiles[side]; i++, n++) {
			path[n] = o->files[side][i];
			if (strcmp(path[n], "-") &&
			    (r[n] = gtr_reader_open(path[n], err, sizeof(err))) &&
			    gtr_reader_preload(r[n]) < 0) {
				gtr_reader_close(r[n]);
				r[n] = NULL;
			}
		}
	same = report_same_recording(r, path, n, (size_t)o->nfiles[0]);
	for (size_t i = 0; i < n; i++)
		gtr_reader_close(r[i]);
	return same;
}

int report_diff(const struct diff_opts *o)
{
	struct diff d = { .opts = o };
	int ret = parse_rules(&d);

	if (!ret && same_recording(o))
		ret = DIFF_EXIT_USAGE;

	if (!ret)
		ret = diff_pass(&d);
	diff_free(&d);
	return ret;
}
