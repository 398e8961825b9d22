/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks (report/folded.h): a hash of paths of interned names to
 * summed values; lines are built and sorted only when written.
 */
#include "folded.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fent {
	uint64_t hash;
	uint64_t value;
	uint32_t off, n;          /* path: f->path[off, off + n) */
	bool used;
};

struct folded {
	struct fent *tab;
	uint32_t cap, count, max;
	uint32_t *path;
	size_t npath, cap_path;
	uint64_t dropped;
	char **names;             /* interned frame names, by id */
	uint32_t nnames, cap_names;
	uint32_t *nix;            /* hash of names: id + 1, 0 empty */
	uint32_t nix_cap;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "gotrace-report: out of memory (folded stacks, %zu bytes)\n", n);
		exit(1);
	}
	return q;
}

struct folded *folded_new(uint32_t max_stacks)
{
	struct folded *f = xrealloc(NULL, sizeof(*f));

	memset(f, 0, sizeof(*f));
	f->max = max_stacks ? max_stacks : 1u << 20;
	return f;
}

void folded_free(struct folded *f)
{
	if (!f)
		return;
	free(f->tab);
	free(f->path);
	for (uint32_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	free(f->names);
	free(f->nix);
	free(f);
}

static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static void nix_rebuild(struct folded *f, uint32_t cap)
{
	free(f->nix);
	f->nix = xrealloc(NULL, cap * sizeof(*f->nix));
	memset(f->nix, 0, cap * sizeof(*f->nix));
	f->nix_cap = cap;
	for (uint32_t i = 0; i < f->nnames; i++) {
		uint32_t h = (uint32_t)name_hash(f->names[i], strlen(f->names[i])) & (cap - 1);
		while (f->nix[h])
			h = (h + 1) & (cap - 1);
		f->nix[h] = i + 1;
	}
}

uint32_t folded_intern(struct folded *f, const char *name, size_t len)
{
	if ((f->nnames + 1) * 2 > f->nix_cap)
		nix_rebuild(f, f->nix_cap ? f->nix_cap * 2 : 256);
	uint32_t h = (uint32_t)name_hash(name, len) & (f->nix_cap - 1);
	while (f->nix[h]) {
		const char *s = f->names[f->nix[h] - 1];
		if (!strncmp(s, name, len) && !s[len])
			return f->nix[h] - 1;
		h = (h + 1) & (f->nix_cap - 1);
	}
	if (f->nnames == f->cap_names) {
		f->cap_names = f->cap_names ? f->cap_names * 2 : 256;
		f->names = xrealloc(f->names, f->cap_names * sizeof(*f->names));
	}
	char *s = xrealloc(NULL, len + 1);
	memcpy(s, name, len);
	s[len] = '\0';
	f->names[f->nnames] = s;
	f->nix[h] = ++f->nnames;
	return f->nnames - 1;
}

static uint64_t path_hash(const uint32_t *fids, uint32_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ fids[i]) * 1099511628211ull;
	return h ? h : 1;
}

static void rehash(struct folded *f, uint32_t cap)
{
	struct fent *t = xrealloc(NULL, cap * sizeof(*t));

	memset(t, 0, cap * sizeof(*t));
	for (uint32_t i = 0; i < f->cap; i++) {
		if (!f->tab[i].used)
			continue;
		uint32_t h = (uint32_t)f->tab[i].hash & (cap - 1);
		while (t[h].used)
			h = (h + 1) & (cap - 1);
		t[h] = f->tab[i];
	}
	free(f->tab);
	f->tab = t;
	f->cap = cap;
}

void folded_add(struct folded *f, const uint32_t *fids, uint32_t n, uint64_t value)
{
	const uint64_t hash = path_hash(fids, n);

	if ((f->count + 1) * 2 > f->cap)
		rehash(f, f->cap ? f->cap * 2 : 256);
	uint32_t h = (uint32_t)hash & (f->cap - 1);
	while (f->tab[h].used) {
		struct fent *e = &f->tab[h];
		if (e->hash == hash && e->n == n &&
		    !memcmp(f->path + e->off, fids, n * sizeof(*fids))) {
			e->value += value;
			return;
		}
		h = (h + 1) & (f->cap - 1);
	}
	if (f->count >= f->max) {
		f->dropped++;
		return;
	}
	if (f->npath + n > f->cap_path) {
		f->cap_path = (f->npath + n) * 2;
		f->path = xrealloc(f->path, f->cap_path * sizeof(*f->path));
	}
	memcpy(f->path + f->npath, fids, n * sizeof(*fids));
	f->tab[h] = (struct fent){ .hash = hash, .value = value, .off = (uint32_t)f->npath,
				   .n = n, .used = true };
	f->npath += n;
	f->count++;
}

uint64_t folded_dropped(const struct folded *f)
{
	return f->dropped;
}

struct line {
	char *s;
	uint64_t value;
};

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->s, ((const struct line *)b)->s);
}

/* Appends a function name with ';' (the frame separator) replaced. */
static void put_name(struct buf *b, const char *s)
{
	for (; *s; s++)
		buf_putc(b, *s == ';' ? ',' : *s == '\n' ? ' ' : *s);
}

void folded_write(const struct folded *f, struct buf *b)
{
	struct line *lines = xrealloc(NULL, (f->count + 1) * sizeof(*lines));
	struct buf tmp = BUF_INIT;
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->cap; i++) {
		const struct fent *e = &f->tab[i];
		if (!e->used)
			continue;
		buf_reset(&tmp);
		for (uint32_t k = 0; k < e->n; k++) {
			if (k)
				buf_putc(&tmp, ';');
			put_name(&tmp, f->names[f->path[e->off + k]]);
		}
		lines[n].s = strdup(buf_cstr(&tmp));
		if (!lines[n].s) {
			fprintf(stderr, "gotrace-report: out of memory (folded stacks)\n");
			exit(1);
		}
		lines[n].value = e->value;
		n++;
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (uint32_t i = 0; i < n; i++) {
		buf_puts(b, lines[i].s);
		buf_putc(b, ' ');
		buf_u64(b, lines[i].value);
		buf_putc(b, '\n');
		free(lines[i].s);
	}
	free(lines);
	buf_free(&tmp);
}
