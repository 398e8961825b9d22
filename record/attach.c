// SPDX-License-Identifier: MIT
/*
 * Attaching a plan's uprobes per binary and process, at the start and
 * for the processes a recording follows; see attach.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "xalloc.h"

/* The sites of one binary: offsets[i] runs cookie[i] (slot | site << 32). */
struct bin_sites {
	uint64_t *offs, *cookies;
	uint32_t n;
};

/* A target attached at the start: the binaries (bit i) it has. */
struct root {
	pid_t pid;
	uint64_t mask;
};

struct attach {
	const struct plan *pl;
	const struct targets *tg;
	struct capture *c;
	int nbins;
	struct bin_sites *bins;
	struct root *roots;
	int nroots, caproots;
	pid_t cmd;              /* the command, 0: none */
	bool following;         /* attach_follow() succeeded */
};

struct attach *attach_new(const struct plan *pl, const struct targets *tg,
			  struct capture *c)
{
	struct attach *a = xcalloc(1, sizeof(*a), "uprobes");

	a->pl = pl;
	a->tg = tg;
	a->c = c;
	a->nbins = plan_nbinaries(pl);
	a->bins = xcalloc((size_t)a->nbins + 1, sizeof(*a->bins), "uprobes");
	for (int bi = 0; bi < a->nbins; bi++) {
		struct bin_sites *s = &a->bins[bi];
		size_t cap = 1;

		for (int i = 0; i < plan_nprobes(pl); i++)
			if (plan_probe(pl, i)->bin == plan_binary(pl, bi))
				cap += plan_probe(pl, i)->nsites;
		s->offs = xcalloc(cap, sizeof(*s->offs), "uprobes");
		s->cookies = xcalloc(cap, sizeof(*s->cookies), "uprobes");
		for (int i = 0; i < plan_nprobes(pl); i++) {
			const struct probe *p = plan_probe(pl, i);

			if (p->bin != plan_binary(pl, bi))
				continue;
			for (int k = 0; k < p->nsites; k++) {
				if (k == p->chained_site)
					continue;   /* its entry probe's uprobe */
				s->offs[s->n] = p->sites[k];
				s->cookies[s->n++] = (uint64_t)i | (uint64_t)k << 32;
			}
		}
	}
	return a;
}

void attach_free(struct attach *a)
{
	if (!a)
		return;
	for (int bi = 0; bi < a->nbins; bi++) {
		free(a->bins[bi].offs);
		free(a->bins[bi].cookies);
	}
	free(a->bins);
	free(a->roots);
	free(a);
}

/* Notes that binary `bi` is attached for target `pid`. */
static void root_add(struct attach *a, pid_t pid, int bi)
{
	int i;

	for (i = 0; i < a->nroots && a->roots[i].pid != pid; i++)
		;
	if (i == a->nroots) {
		if (a->nroots == a->caproots) {
			a->caproots = a->caproots ? 2 * a->caproots : 8;
			a->roots = xrealloc(a->roots, a->caproots * sizeof(*a->roots),
					    "uprobes");
		}
		a->roots[a->nroots++] = (struct root){ .pid = pid };
	}
	if (bi >= 0 && bi < GT_MAX_BINS)
		a->roots[i].mask |= 1ull << bi;
}

/* Sites the kernel refused, for one warning after attaching. */
struct refused {
	const struct plan *plan;
	int n, err;
	int whole;     /* entry probes of whole calls among them */
	const char *names[5];
};

static void on_refused(uint64_t cookie, int err, void *ctx)
{
	struct refused *rf = ctx;
	uint32_t slot = (uint32_t)cookie;

	if (rf->n < 5 && slot < (uint32_t)plan_nprobes(rf->plan))
		/* an inlined copy by its own function's name */
		rf->names[rf->n] = plan_probe(rf->plan, slot)->meta.func;
	rf->err = err;
	rf->n++;
	/* its return probe keeps the returns of the calls it notes: none */
	if (slot < (uint32_t)plan_nprobes(rf->plan) &&
	    (plan_probe(rf->plan, slot)->plan.flags & GT_P_CALL_MARK))
		rf->whole++;
	/* an entry's uprobe that also sends a return (GT_P_THEN): that
	 * return site is left out with it */
	if (slot < (uint32_t)plan_nprobes(rf->plan) &&
	    (plan_probe(rf->plan, slot)->plan.flags & GT_P_THEN))
		on_refused(plan_probe(rf->plan, slot)->plan.then_cookie, err, ctx);
}

/* The warning of the sites refused at the start; -EINVAL when nothing
 * could be attached. */
static int say_refused(const struct attach *a, const struct refused *rf,
		       char *err, size_t errlen)
{
	/* 524: the kernel's ENOTSUPP, for instructions uprobes cannot
	 * single-step or emulate. */
	fprintf(stderr, "gotrace-record: warning: the kernel refused %d "
		"uprobe site%s (%s), left out: ", rf->n,
		rf->n == 1 ? "" : "s", rf->err == 524
		? "an instruction uprobes cannot handle"
		: strerror(rf->err));
	for (int i = 0; i < rf->n && i < 5; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", rf->names[i]);
	fprintf(stderr, "%s\n", rf->n > 5 ? " ..." : "");
	if (rf->whole)
		fprintf(stderr, "gotrace-record: warning: %d of them %s the entry "
			"probe%s of whole calls (spec/PROBES.md), whose return "
			"probe%s keep%s the returns of the calls %s entry probe "
			"kept: none\n", rf->whole, rf->whole == 1 ? "is" : "are",
			rf->whole == 1 ? "" : "s", rf->whole == 1 ? "" : "s",
			rf->whole == 1 ? "s" : "", rf->whole == 1 ? "its" : "their");
	if (!capture_nlinks(a->c)) {
		snprintf(err, errlen, "no uprobe could be attached");
		return -EINVAL;
	}
	return 0;
}

int attach_start(struct attach *a, pid_t cmd, const volatile sig_atomic_t *stop,
		 char *err, size_t errlen)
{
	struct refused rf = { .plan = a->pl };
	int e = 0;

	a->cmd = cmd > 0 ? cmd : 0;
	for (int bi = 0; bi < a->nbins && !e; bi++) {
		const struct bin_sites *s = &a->bins[bi];
		const char *at;
		pid_t pid;

		for (int t = 0; !e && !*stop && targets_attach_at(a->tg,
				plan_binary(a->pl, bi), t, &at, &pid); t++) {
			pid = a->cmd ? a->cmd : pid;
			e = capture_attach_many(a->c, s->n, s->cookies, at, s->offs,
						pid, on_refused, &rf, err, errlen);
			if (!e && pid > 0)
				root_add(a, pid, bi);
		}
	}
	if (!e && rf.n)
		e = say_refused(a, &rf, err, errlen);
	return e;
}

static void spawn_refused(uint64_t cookie, int err, void *ctx)
{
	/* the same sites were refused (and said) at the start */
}

/* capture_spawn_fn: attaches binary `bin` for the new process `pid`,
 * through the file it runs (capture checked it is that binary's). */
static int on_spawn(uint32_t pid, uint32_t bin, char *err, size_t errlen,
		    void *ctx)
{
	struct attach *a = ctx;
	const struct bin_sites *s;
	char path[40], why[512];

	if (bin >= (uint32_t)a->nbins)
		return -1;
	s = &a->bins[bin];
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	if (capture_attach_many(a->c, s->n, s->cookies, path, s->offs,
				(pid_t)pid, spawn_refused, NULL, why, sizeof(why))) {
		snprintf(err, errlen, "%s, whose probes could not be attached "
			 "for it: %s", plan_binary(a->pl, (int)bin)->path, why);
		return -1;
	}
	return 0;
}

int attach_follow(struct attach *a, bool inherit, const pid_t *pids, int npids)
{
	int e;

	for (int bi = 0; bi < a->nbins && bi < GT_MAX_BINS; bi++) {
		const struct binary *b = plan_binary(a->pl, bi);
		const char *at;
		pid_t pid;

		capture_follow_binary(a->c, (uint32_t)bi, b->attach_path);
		/* each file a -p target runs it from */
		for (int t = 0; targets_attach_at(a->tg, b, t, &at, &pid); t++)
			capture_follow_binary(a->c, (uint32_t)bi, at);
	}
	if (a->cmd)
		root_add(a, a->cmd, -1);
	for (int i = 0; i < npids; i++)
		root_add(a, pids[i], -1);
	e = capture_follow(a->c, inherit, on_spawn, a);
	for (int i = 0; i < a->nroots && !e; i++)
		e = capture_follow_root(a->c, a->roots[i].pid, a->roots[i].mask);
	a->following = !e;
	return e ? -1 : 0;
}

/* Whether `path` names a shared library (lib.so, lib.so.1): mapped, not
 * run, so never exec'd. */
static bool shared_library(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *so = strstr(base ? base : path, ".so");

	return so && (so[3] == '\0' || so[3] == '.');
}

void attach_note_unrun(const struct attach *a)
{
	const struct probe *said = NULL;
	uint64_t run;

	if (!a || !a->cmd || !a->following)
		return;
	run = capture_binaries_run(a->c);
	for (int i = 0; i < plan_nprobes(a->pl); i++) {
		const struct probe *p = plan_probe(a->pl, i);
		int bi;

		for (bi = 0; bi < a->nbins && plan_binary(a->pl, bi) != p->bin; bi++)
			;
		if (bi >= GT_MAX_BINS || (run & (1ull << bi)) ||
		    shared_library(p->bin->path))
			continue;
		/* a glob's functions, a function's sites: one probe as written */
		if (said && said->bin == p->bin && !strcmp(said->spec.text, p->spec.text))
			continue;
		said = p;
		fprintf(stderr, "gotrace-record: note: probe '%s': %s was not "
			"run by any traced process\n", p->spec.text, p->bin->path);
	}
}
