// SPDX-License-Identifier: MIT
/*
 * The executables of the traced processes and the probes planned in
 * them; see targets.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "targets.h"
#include "xalloc.h"

struct exe {
	char *key;          /* its path, the plan's name for it */
	char *attach;       /* /proc/PID/exe of its first process, or key */
	pid_t pid;          /* its first process, -1: the command */
	dev_t dev;
	ino_t ino;
	int primary;        /* the exe planned for it (same path and build) */
	struct gobin *gb;   /* while planning, to see what it holds */
};

struct targets {
	int npids, nexes;
	pid_t *pids;
	int *exe_of;        /* pids[i] runs exes[exe_of[i]] */
	struct exe *exes;
	bool opened;        /* every exe's gb is open, primaries known */
};

static int exe_add(struct targets *t, const char *path, const char *attach,
		   pid_t pid, const struct stat *st)
{
	struct exe *e = &t->exes[t->nexes];

	e->key = strcpy(xcalloc(strlen(path) + 1, 1, "targets"), path);
	e->attach = strcpy(xcalloc(strlen(attach) + 1, 1, "targets"), attach);
	e->pid = pid;
	e->dev = st ? st->st_dev : 0;
	e->ino = st ? st->st_ino : 0;
	e->primary = t->nexes;
	return t->nexes++;
}

/*
 * The process (thread group) that thread `tid` belongs to, from the
 * Tgid line of /proc/TID/status; 0 when that cannot be read.
 */
static pid_t tgid_of(pid_t tid)
{
	char path[40], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

struct targets *targets_new(const pid_t *pids, int npids, const char *path)
{
	struct targets *t = xcalloc(1, sizeof(*t), "targets");

	t->exes = xcalloc((size_t)npids + 1, sizeof(*t->exes), "targets");
	t->pids = xcalloc((size_t)npids + 1, sizeof(*t->pids), "targets");
	t->exe_of = xcalloc((size_t)npids + 1, sizeof(*t->exe_of), "targets");
	if (!npids && path)
		exe_add(t, path, path, -1, NULL);
	for (int i = 0; i < npids; i++) {
		char buf[PATH_MAX], exe[40];
		struct stat st;
		ssize_t n;
		int j;

		const pid_t tgid = tgid_of(pids[i]);

		if (tgid > 0 && tgid != pids[i]) {
			/* /proc/TID exists, unlisted, for every thread; uprobes
			 * filter by process */
			fprintf(stderr, "gotrace-record: -p %d: %d is a thread of "
				"process %d, not a process; use -p %d (its "
				"probes see every thread)\n", pids[i], pids[i],
				tgid, tgid);
			targets_free(t);
			return NULL;
		}
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pids[i]);
		n = readlink(exe, buf, sizeof(buf) - 1);
		if (n < 0 || stat(exe, &st)) {
			fprintf(stderr, "gotrace-record: cannot trace PID %d: %s\n",
				pids[i], errno == ENOENT ? "no such process"
							 : strerror(errno));
			targets_free(t);
			return NULL;
		}
		buf[n] = '\0';
		for (j = 0; j < t->nexes; j++)
			if (t->exes[j].dev == st.st_dev && t->exes[j].ino == st.st_ino)
				break;
		t->pids[t->npids] = pids[i];
		t->exe_of[t->npids++] = j < t->nexes ? j : exe_add(t, buf, exe, pids[i], &st);
	}
	return t;
}

void targets_free(struct targets *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nexes; i++) {
		gobin_close(t->exes[i].gb);
		free(t->exes[i].key);
		free(t->exes[i].attach);
	}
	free(t->exes);
	free(t->pids);
	free(t->exe_of);
	free(t);
}

/* Prints "PATH (PID N, M)": exe e and the targets that run it. */
static void say_exe(const struct targets *t, int e)
{
	int n = 0;

	fprintf(stderr, "%s (PID", t->exes[e].key);
	for (int i = 0; i < t->npids; i++)
		if (t->exes[t->exe_of[i]].primary == e)
			fprintf(stderr, "%s %d", n++ ? "," : "", t->pids[i]);
	fprintf(stderr, ")");
}

/*
 * Says that exe e cannot be opened: `err` from gobin_open() with its
 * /proc/PID/exe written as "process PID (COMM)".
 */
static void say_unopened(const struct exe *e, const char *err)
{
	char comm[64] = "", path[64], who[128];
	const char *at = strstr(err, e->attach);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", e->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(who, sizeof(who), "process %d (%s)", e->pid, comm);
	if (at)
		fprintf(stderr, "gotrace-record: %.*s%s%s", (int)(at - err), err,
			who, at + strlen(e->attach));
	else
		fprintf(stderr, "gotrace-record: %s: %s", who, err);
	fprintf(stderr, "; give the PID of a Go program, or name the binary "
		"of each probe (BINARY:FUNCTION)\n");
}

/*
 * Opens every exe of the -p targets and finds which are one build at
 * two inodes (same path and build id: planned once). 0, or -1 after
 * printing why.
 */
static int targets_open(struct targets *t)
{
	char err[512];

	if (t->opened)
		return 0;
	for (int i = 0; i < t->nexes; i++) {
		struct exe *e = &t->exes[i];
		const char *id;

		e->gb = gobin_open(e->attach, err, sizeof(err));
		if (!e->gb) {
			say_unopened(e, err);
			return -1;
		}
		id = gobin_build_id(e->gb)[0] ? gobin_build_id(e->gb)
					       : gobin_go_build_id(e->gb);
		for (int j = 0; j < i && e->primary == i; j++) {
			const struct exe *o = &t->exes[j];

			if (o->primary != j || strcmp(o->key, e->key))
				continue;
			if (id[0] && (!strcmp(id, gobin_build_id(o->gb)) ||
				      !strcmp(id, gobin_go_build_id(o->gb))))
				e->primary = j;
			else {   /* another build at the same path */
				char *k = xcalloc(strlen(e->key) + 32, 1, "targets");

				sprintf(k, "%s (PID %d)", e->key, e->pid);
				free(e->key);
				e->key = k;
			}
		}
	}
	t->opened = true;
	return 0;
}

static int any_func(const struct gobin_func *f, void *ctx)
{
	return 1;
}

/* Whether binary `gb` holds what probe `sp` names (a function, its
 * inlined copies, a glob's matches, a line's code), as plan_add() finds
 * them. */
static bool holds(const struct gobin *gb, const struct probe_spec *sp)
{
	struct gobin_func f;
	const char *path;

	if (sp->line) {
		int n = gobin_line_sites(gb, sp->file, sp->line, NULL, 0, &path);

		return n > 0 || n == -EEXIST;   /* -EEXIST: plan_add says why */
	}
	if (gobin_func_find_all(gb, sp->func, NULL, 0) > 0 ||
	    !gobin_func_find_cgo_export(gb, sp->func, &f) ||
	    gobin_inline_sites(gb, sp->func, NULL, 0, NULL) > 0)
		return true;
	return strpbrk(sp->func, "*?[") &&
	       (gobin_func_each(gb, sp->func, any_func, NULL) ||
		gobin_inline_glob(gb, sp->func, NULL, 0, NULL) > 0);
}

/*
 * A BINARY: part that names no file, here or inside the container of
 * root_pid (a misspelt kind, 'p:r:main.add', reads as a BINARY 'r').
 * Returns 1 after saying so.
 */
static int binary_missing(const struct probe_spec *sp, int root_pid)
{
	char inroot[PATH_MAX];
	int e;

	if (!access(sp->binary, F_OK))
		return 0;
	e = errno;
	snprintf(inroot, sizeof(inroot), "/proc/%d/root%s", root_pid, sp->binary);
	if (root_pid && sp->binary[0] == '/' && !access(inroot, F_OK))
		return 0;
	fprintf(stderr, "gotrace-record: probe '%s': no binary '%s' (%s); "
		"BINARY: is the path of a Go executable%s, or leave it out "
		"to probe the traced process\n", sp->text, sp->binary,
		strerror(e), !strcmp(sp->binary, "p") || !strcmp(sp->binary, "r")
		? " (write p: or r: once, first)" : "");
	return 1;
}

/* Plans `sp` in each exe that holds it; none: says where it looked. */
static int plan_each(struct targets *t, struct plan *pl,
		     const struct probe_spec *sp, int quiet)
{
	int i, nin = 0, nout = 0;
	bool *in = xcalloc((size_t)t->nexes, sizeof(*in), "targets");

	for (i = 1; i < t->nexes && t->exes[i].primary != i; i++)
		;
	if (i == t->nexes) {   /* one binary: plan_add says what it lacks */
		free(in);
		return plan_add(pl, sp->text, t->exes[0].key, t->exes[0].attach);
	}
	for (i = 0; i < t->nexes; i++)
		if (t->exes[i].primary == i) {
			in[i] = holds(t->exes[i].gb, sp);
			nin += in[i];
			nout += !in[i];
		}
	for (i = 0; i < t->nexes && nin; i++)
		if (in[i] && plan_add(pl, sp->text, t->exes[i].key, t->exes[i].attach)) {
			free(in);
			return -1;
		}
	if (nout && (!nin || !quiet)) {
		fprintf(stderr, nin ? "gotrace-record: probe '%s': not in "
			: "gotrace-record: probe '%s': found in none of the "
			  "traced processes' binaries: ", sp->text);
		for (i = 0, nout = 0; i < t->nexes; i++)
			if (t->exes[i].primary == i && !in[i]) {
				fprintf(stderr, "%s", nout++ ? ", " : "");
				say_exe(t, i);
			}
		fprintf(stderr, nin ? "; probed only where it is\n"
			: "; gotrace-record --list -p PID 'GLOB' lists a "
			  "process's functions\n");
	}
	free(in);
	return nin ? 0 : -1;
}

int targets_plan(struct targets *t, struct plan *pl, const char *text,
		 int quiet, int root_pid)
{
	struct probe_spec sp;
	char err[1024];
	int rc;

	if (probe_spec_parse(text, &sp, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	if (sp.binary && binary_missing(&sp, root_pid))
		rc = -1;
	else if (sp.binary || !t->npids)   /* the command's: plan_add says */
		rc = plan_add(pl, text, t->nexes ? t->exes[0].key : NULL,
			      t->nexes ? t->exes[0].attach : NULL);
	else if (targets_open(t))
		rc = -1;
	else
		rc = plan_each(t, pl, &sp, quiet);
	probe_spec_free(&sp);
	return rc;
}

int targets_attach_at(const struct targets *t, const struct binary *b, int k,
		      const char **attach, pid_t *pid)
{
	for (int e = 0; e < t->nexes && t->npids; e++) {
		if (t->exes[e].primary != e || strcmp(t->exes[e].key, b->path))
			continue;
		for (int i = 0; i < t->npids; i++)
			if (t->exes[t->exe_of[i]].primary == e && k-- == 0) {
				*attach = t->exes[t->exe_of[i]].attach;
				*pid = t->pids[i];
				return 1;
			}
		return 0;
	}
	*attach = b->attach_path;
	*pid = t->npids ? (k < t->npids ? t->pids[k] : 0) : -1;
	return t->npids ? k < t->npids : k == 0;
}
