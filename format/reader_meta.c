/* SPDX-License-Identifier: MIT */
/*
 * Metadata blocks of the reader: HOST, BINARY, PROBE, SUMMARY, SYMBOLS,
 * MAPPING, PROCESS and CLOCK, decoded from CBOR maps by tables, and kept
 * within the limits of spec/FORMAT.md ("Limits"; what is not kept is
 * counted in struct gtr_overflow). The tables of all but SUMMARY and
 * SYMBOLS are the field schemas the writer writes by (schema.c, which says
 * why those two are not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

static char empty_str[1];

/*
 * Frees a metadata string of the reader. The public structs hold them as
 * const char * (gtr.h says why); this is the one place they are freed.
 */
static void free_str(const char *s)
{
	if (s != empty_str)
		free((char *)s);
}

/* Replaces *dst by a NUL-terminated copy of s[n]. 0, or -1 over the limits. */
static int set_str(struct gtr_reader *r, const char **dst, const uint8_t *s, size_t n)
{
	if (r->meta_bytes + n + 1 > GTR_MAX_META_BYTES)
		return -1;
	char *c = malloc(n + 1);
	if (!c)
		return -1;
	memcpy(c, s, n);
	c[n] = 0;
	r->meta_bytes += n + 1;
	if (*dst)
		free_str(*dst);
	*dst = c;
	return 0;
}

/* Reads a text value into *dst. */
static int get_str(struct gtr_reader *r, struct gcr *c, const char **dst)
{
	const uint8_t *s;
	size_t n;

	if (gcr_text(c, &s, &n, GTR_MAX_NAME))
		return -1;
	return set_str(r, dst, s, n);
}

/* Starts a map with text keys: number of entries to *n. */
static int get_map(struct gcr *c, uint64_t *n)
{
	if (gcr_expect(c, GCR_MAP, n))
		return -1;
	return *n > (uint64_t)(c->end - c->p) ? -1 : 0;
}

static int get_key(struct gcr *c, const uint8_t **k, size_t *kn)
{
	return gcr_text(c, k, kn, GTR_MAX_NAME);
}

/*
 * Table-driven decoding of the metadata maps. A schema (gtr_internal.h)
 * lists the keys of a map whose values go straight into a struct (`base`),
 * by kind and offset; keys with array values go to a callback; every other
 * key is skipped. The schemas of most blocks are shared with the writer
 * (schema.c); those of SUMMARY and SYMBOLS, below, are the reader's.
 */

/*
 * Decodes a key that is not in the table: 0 when done, -1 on malformed
 * input, 1 when the key is not one it knows (decode_map() skips its value).
 */
typedef int (*map_cb)(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		      size_t kn, void *base);

static int decode_map(struct gtr_reader *r, struct gcr *c,
		      const struct gtr_schema *s, void *base, map_cb cb,
		      uint32_t *seen);

static int decode_field(struct gtr_reader *r, struct gcr *c,
			const struct gtr_field *f, void *base)
{
	void *dst = (char *)base + f->off;
	const uint8_t *s;
	size_t sn;
	unsigned major, ai;
	uint64_t v;

	switch (f->kind) {
	case GTR_F_U64:
		return gcr_uint(c, dst);
	case GTR_F_U32:
		return gcr_u32(c, dst);
	case GTR_F_BOOL:
		return gcr_bool(c, dst);
	case GTR_F_STR:
		return get_str(r, c, dst);
	case GTR_F_I32:
		if (gcr_head(c, &major, &ai, &v) || v > INT32_MAX)
			return -1;
		if (major == GCR_UINT)
			*(int32_t *)dst = (int32_t)v;
		else if (major == GCR_NEGINT)
			*(int32_t *)dst = -(int32_t)v - 1;
		else
			return -1;
		return 0;
	case GTR_F_TYPE:
		if (gcr_text(c, &s, &sn, GTR_MAX_NAME))
			return -1;
		*(enum gtr_type *)dst = gtr_type_from_name((const char *)s, sn);
		return 0;
	case GTR_F_KIND:
		if (gcr_text(c, &s, &sn, GTR_MAX_NAME))
			return -1;
		if (gcr_key_is(s, sn, "entry"))
			*(enum gtr_kind *)dst = GTR_KIND_ENTRY;
		else if (gcr_key_is(s, sn, "return"))
			*(enum gtr_kind *)dst = GTR_KIND_RETURN;
		else
			return -1;
		return 0;
	case GTR_F_MAP:
		return decode_map(r, c, f->sub, dst, NULL, NULL);
	}
	return -1;
}

/*
 * Decodes a map with text keys into *base: the keys of schema s by the
 * table, others by cb when given, the rest skipped. When seen is given,
 * bit i of *seen is set if the map had field i. 0, or -1 when malformed.
 */
static int decode_map(struct gtr_reader *r, struct gcr *c,
		      const struct gtr_schema *s, void *base, map_cb cb,
		      uint32_t *seen)
{
	uint64_t n;
	const uint8_t *k;
	size_t kn;

	if (get_map(c, &n))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		if (get_key(c, &k, &kn))
			return -1;
		size_t f = 0;
		while (f < s->n && !gcr_key_is(k, kn, s->fields[f].key))
			f++;
		int rc;
		if (f < s->n) {
			rc = decode_field(r, c, &s->fields[f], base);
			if (seen && f < 32)
				*seen |= 1u << f;
		} else {
			rc = cb ? cb(r, c, k, kn, base) : 1;
			if (rc > 0)
				rc = gcr_skip(c, GTR_CBOR_DEPTH);
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* Whether `seen` (of decode_map()) has every GTR_F_REQUIRED field of s. */
static bool has_required(const struct gtr_schema *s, uint32_t seen)
{
	for (size_t i = 0; i < s->n; i++)
		if ((s->fields[i].flags & GTR_F_REQUIRED) && !(seen >> i & 1))
			return false;
	return true;
}

/* Sets the fields of s in *base to what a map without them means. */
static void init_fields(const struct gtr_schema *s, void *base)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct gtr_field *f = &s->fields[i];
		void *dst = (char *)base + f->off;

		switch (f->kind) {
		case GTR_F_U64:
			*(uint64_t *)dst = (uint64_t)f->absent;
			break;
		case GTR_F_U32:
			*(uint32_t *)dst = (uint32_t)f->absent;
			break;
		case GTR_F_I32:
			*(int32_t *)dst = (int32_t)f->absent;
			break;
		case GTR_F_BOOL:
			*(bool *)dst = f->absent != 0;
			break;
		case GTR_F_STR:
			*(const char **)dst = NULL;
			break;
		case GTR_F_TYPE:
			*(enum gtr_type *)dst = (enum gtr_type)f->absent;
			break;
		case GTR_F_KIND:
			*(enum gtr_kind *)dst = (enum gtr_kind)f->absent;
			break;
		case GTR_F_MAP:
			init_fields(f->sub, dst);
			break;
		}
	}
}

/* Points the strings of s in *base that no map gave at "". */
static void fill_fields(const struct gtr_schema *s, void *base)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct gtr_field *f = &s->fields[i];
		void *dst = (char *)base + f->off;

		if (f->kind == GTR_F_STR && !*(const char **)dst)
			*(const char **)dst = empty_str;
		else if (f->kind == GTR_F_MAP)
			fill_fields(f->sub, dst);
	}
}

/* Frees the strings of s in *base. */
static void free_fields(const struct gtr_schema *s, void *base)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct gtr_field *f = &s->fields[i];
		void *dst = (char *)base + f->off;

		if (f->kind == GTR_F_STR)
			free_str(*(const char **)dst);
		else if (f->kind == GTR_F_MAP)
			free_fields(f->sub, dst);
	}
}

static int parse_host(struct gtr_reader *r, struct gcr *c)
{
	return decode_map(r, c, &gtr_host_schema, &r->host, NULL, NULL);
}

static int parse_peer(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_peer p = { 0 };

	init_fields(&gtr_peer_schema, &p);
	if (decode_map(r, c, &gtr_peer_schema, &p, NULL, NULL) || c->p != c->end ||
	    !p.index || p.index >= GTR_MAX_HOSTS) {
		free_fields(&gtr_peer_schema, &p);
		return -1;
	}
	fill_fields(&gtr_peer_schema, &p);
	if (p.index >= r->npeers) {
		struct gtr_host **v = realloc(r->peers, p.index * sizeof(*v));
		if (!v) {
			free_fields(&gtr_peer_schema, &p);
			return -1;
		}
		memset(v + (r->npeers ? r->npeers - 1 : 0), 0,
		       (p.index - (r->npeers ? r->npeers - 1 : 0)) * sizeof(*v));
		r->peers = v;
		r->npeers = p.index + 1;
	}
	struct gtr_host *h = r->peers[p.index - 1];
	if (!h && !(h = r->peers[p.index - 1] = calloc(1, sizeof(*h)))) {
		free_fields(&gtr_peer_schema, &p);
		return -1;
	}
	free_fields(&gtr_host_schema, h);    /* a peer given again: the last */
	*h = p.h;
	return 0;
}

static void free_binary(struct gtr_binary *b)
{
	if (!b)
		return;
	free_fields(&gtr_binary_schema, b);
	free(b);
}

static int parse_binary(struct gtr_reader *r, struct gcr *c)
{
	uint32_t seen = 0;

	if (r->nbinaries >= GTR_MAX_BINARIES) {
		snprintf(r->why, sizeof(r->why), "more than %u binaries", GTR_MAX_BINARIES);
		return -1;
	}
	struct gtr_binary *b = calloc(1, sizeof(*b));
	if (b)
		init_fields(&gtr_binary_schema, b);
	if (!b || decode_map(r, c, &gtr_binary_schema, b, NULL, &seen))
		goto bad;
	if (!has_required(&gtr_binary_schema, seen) || c->p != c->end)
		goto bad;
	fill_fields(&gtr_binary_schema, b);
	if (r->nbinaries == r->binaries_cap) {
		const uint32_t cap = r->binaries_cap ? r->binaries_cap * 2 : 16;
		struct gtr_binary **v = realloc(r->binaries, cap * sizeof(*v));
		if (!v)
			goto bad;
		r->binaries = v;
		r->binaries_cap = cap;
	}
	r->binaries[r->nbinaries++] = b;
	return 0;
bad:
	free_binary(b);
	return -1;
}

static void free_probe(struct gtr_probe *p)
{
	if (!p)
		return;
	free_fields(&gtr_probe_schema, p);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++)
		free_fields(&gtr_arg_schema, &p->args[i]);
	free(p);
}

/* "args" and "exprs" of a PROBE. */
static int probe_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		     size_t kn, void *base)
{
	struct gtr_probe *p = base;
	uint64_t m;
	int rc;

	if (gcr_key_is(k, kn, "args")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > GTR_MAX_ARGS)
			rc = -1;
		for (uint64_t j = 0; !rc && j < m; j++)
			rc = decode_map(r, c, &gtr_arg_schema, &p->args[j], NULL, NULL);
		if (!rc)
			p->nargs = (uint32_t)m;
		return rc;
	}
	if (gcr_key_is(k, kn, "exprs")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > GTR_MAX_ARGS)
			rc = -1;
		for (uint64_t j = 0; !rc && j < m; j++)
			rc = gcr_u32(c, &p->exprs[j]);
		if (!rc)
			p->nexprs = (uint32_t)m;
		return rc;
	}
	return 1;
}

static int parse_probe(struct gtr_reader *r, struct gcr *c)
{
	uint32_t seen = 0;

	if (r->nprobes >= GTR_MAX_PROBES) {
		snprintf(r->why, sizeof(r->why), "more than %u probes", GTR_MAX_PROBES);
		return -1;
	}
	struct gtr_probe *p = calloc(1, sizeof(*p));
	if (!p)
		goto bad;
	init_fields(&gtr_probe_schema, p);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++)
		init_fields(&gtr_arg_schema, &p->args[i]);
	if (decode_map(r, c, &gtr_probe_schema, p, probe_key, &seen))
		goto bad;
	if (!has_required(&gtr_probe_schema, seen) || c->p != c->end)
		goto bad;
	for (uint32_t i = 0; i < p->nexprs; i++)
		if (p->exprs[i] >= p->nargs)
			goto bad;
	if (u64map_get(&r->probe_ix, p->id)) {
		snprintf(r->why, sizeof(r->why), "probe id %u defined twice", p->id);
		free_probe(p);
		return -1;
	}
	fill_fields(&gtr_probe_schema, p);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++)
		fill_fields(&gtr_arg_schema, &p->args[i]);
	if (r->nprobes == r->probes_cap) {
		const uint32_t cap = r->probes_cap ? r->probes_cap * 2 : 64;
		struct gtr_probe **v = realloc(r->probes, cap * sizeof(*v));
		if (!v)
			goto bad;
		r->probes = v;
		r->probes_cap = cap;
	}
	if (u64map_put(&r->probe_ix, p->id, r->nprobes, GTR_MAX_PROBES))
		goto bad;
	r->probes[r->nprobes++] = p;
	if (p->id < DIRECT_PROBES)
		r->direct[p->id] = p;
	return 0;
bad:
	free_probe(p);
	return -1;
}

/* A SUMMARY as it is decoded. */
struct summary_in {
	struct gtr_summary s;
	uint32_t *ids;
	uint64_t *evs;
	struct index_entry *ix;
	uint32_t nix;
	uint64_t dropped;
};

static const struct gtr_field summary_fields[] = {
	GTR_FIELD("events", GTR_F_U64, struct summary_in, s.events),
	GTR_FIELD("drops", GTR_F_U64, struct summary_in, s.drops),
	GTR_FIELD("suppressed", GTR_F_U64, struct summary_in, s.suppressed),
	GTR_FIELD("first_ts_ns", GTR_F_U64, struct summary_in, s.first_ts_ns),
	GTR_FIELD("last_ts_ns", GTR_F_U64, struct summary_in, s.last_ts_ns),
	GTR_FIELD("frames_truncated", GTR_F_BOOL, struct summary_in,
		  s.frames_truncated),
	GTR_FIELD("span_end_ns", GTR_F_U64, struct summary_in, s.span_end_ns),
};
static const struct gtr_schema summary_schema = GTR_SCHEMA(summary_fields);

/* "probes" and "frames" of a SUMMARY. */
static int summary_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		       size_t kn, void *base)
{
	struct summary_in *v = base;
	uint64_t m;
	int rc;

	if (gcr_key_is(k, kn, "probes")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > (uint64_t)(c->end - c->p))
			rc = -1;
		free(v->ids);
		free(v->evs);
		v->ids = NULL;
		v->evs = NULL;
		v->s.nprobes = 0;
		const uint64_t keep = m < GTR_MAX_PROBES ? m : GTR_MAX_PROBES;
		if (!rc && keep) {
			v->ids = malloc(keep * sizeof(*v->ids));
			v->evs = malloc(keep * sizeof(*v->evs));
			if (!v->ids || !v->evs)
				rc = -1;
		}
		for (uint64_t j = 0; !rc && j < m; j++) {
			uint64_t e2, cnt;
			uint32_t id;
			if (gcr_expect(c, GCR_ARRAY, &e2) || e2 < 2 || gcr_u32(c, &id) ||
			    gcr_uint(c, &cnt)) {
				rc = -1;
				break;
			}
			for (uint64_t q = 2; !rc && q < e2; q++)
				rc = gcr_skip(c, GTR_CBOR_DEPTH);
			if (j < keep) {
				v->ids[v->s.nprobes] = id;
				v->evs[v->s.nprobes++] = cnt;
			} else {
				v->dropped++;
			}
		}
		return rc;
	}
	if (gcr_key_is(k, kn, "frames")) {
		rc = gcr_expect(c, GCR_ARRAY, &m);
		if (!rc && m > (uint64_t)(c->end - c->p))
			rc = -1;
		free(v->ix);
		v->ix = NULL;
		v->nix = 0;
		const uint64_t keep = m < GTR_MAX_INDEX ? m : GTR_MAX_INDEX;
		if (!rc && keep && !(v->ix = malloc(keep * sizeof(*v->ix))))
			rc = -1;
		for (uint64_t j = 0; !rc && j < m; j++) {
			struct index_entry e = { 0 };
			uint64_t e2;
			if (gcr_expect(c, GCR_ARRAY, &e2) || e2 < 4 || gcr_uint(c, &e.off) ||
			    gcr_uint(c, &e.first_ts) || gcr_uint(c, &e.last_ts) ||
			    gcr_uint(c, &e.events)) {
				rc = -1;
				break;
			}
			for (uint64_t q = 4; !rc && q < e2; q++)
				rc = gcr_skip(c, GTR_CBOR_DEPTH);
			if (j < keep)
				v->ix[v->nix++] = e;
		}
		v->s.nframes = m;
		return rc;
	}
	return 1;
}

int rd_parse_summary(struct gtr_reader *r, struct gcr *c)
{
	struct summary_in v = { .s = { .present = true } };

	if (decode_map(r, c, &summary_schema, &v, summary_key, NULL) || c->p != c->end)
		goto bad;
	free(r->sum_ids);
	free(r->sum_events);
	free(r->index);
	r->sum_ids = v.ids;
	r->sum_events = v.evs;
	r->index = v.ix;
	r->nindex = v.nix;
	r->index_loaded = true;
	v.s.probe_ids = v.ids;
	v.s.probe_events = v.evs;
	r->overflow.summary_probes = v.dropped;
	r->summary = v.s;
	return 0;
bad:
	free(v.ids);
	free(v.evs);
	free(v.ix);
	return -1;
}


struct symtab *rd_symtab_of(const struct gtr_reader *r, uint32_t binary_id)
{
	for (uint32_t i = 0; i < r->nsymtabs; i++)
		if (r->symtabs[i].binary_id == binary_id)
			return &r->symtabs[i];
	return NULL;
}

/* A SYMBOLS block's map; its symbols are read once binary_id is known. */
struct symbols_in {
	uint32_t bin;
	struct gcr syms;
	uint64_t nsyms;
};

static const struct gtr_field symbols_fields[] = {
	GTR_FIELD_X("binary_id", GTR_F_U32, struct symbols_in, bin,
		    GTR_F_REQUIRED, 0),
};
static const struct gtr_schema symbols_schema = GTR_SCHEMA(symbols_fields);

/* "symbols": checks the array's shape and notes where it is. */
static int symbols_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		       size_t kn, void *base)
{
	struct symbols_in *v = base;
	uint64_t m;

	if (!gcr_key_is(k, kn, "symbols"))
		return 1;
	int rc = gcr_expect(c, GCR_ARRAY, &m);
	if (!rc && m > (uint64_t)(c->end - c->p))
		rc = -1;
	v->syms.p = c->p;
	v->nsyms = m;
	for (uint64_t j = 0; !rc && j < m; j++)
		rc = gcr_skip(c, 3);
	v->syms.end = c->p;
	return rc;
}

/* Frees inlined ranges v[n] and their names. */
static void inlined_free(struct gtr_inlined *v, uint32_t n)
{
	for (uint32_t i = 0; v && i < n; i++)
		free_str(v[i].name);
	free(v);
}

/*
 * A symbol's fourth element, its inlined ranges (off, size, name, depth
 * each, one after the other in one array: spec/FORMAT.md), into *out
 * (malloc'd) and *n; another kind of item is skipped (a later
 * version's). 0, or -1 when malformed.
 */
static int parse_inlined(struct gtr_reader *r, struct gcr *c,
			 struct gtr_inlined **out, uint32_t *n)
{
	uint64_t cnt, off, size, depth;
	struct gtr_inlined *v;
	const uint8_t *name;
	size_t nl;

	*out = NULL;
	*n = 0;
	if (c->p >= c->end || (*c->p >> 5) != 4)   /* not an array */
		return gcr_skip(c, GTR_CBOR_DEPTH) ? -1 : 0;
	if (gcr_expect(c, GCR_ARRAY, &cnt) || cnt % 4 ||
	    cnt > (uint64_t)(c->end - c->p) || cnt / 4 > UINT32_MAX)
		return -1;
	cnt /= 4;
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v)
		return -1;
	for (uint64_t i = 0; i < cnt; i++) {
		if (gcr_uint(c, &off) || gcr_uint(c, &size) ||
		    gcr_text(c, &name, &nl, GTR_MAX_NAME) || gcr_uint(c, &depth) ||
		    off > UINT32_MAX || size > UINT32_MAX || !depth || depth > UINT32_MAX ||
		    set_str(r, &v[i].name, name, nl)) {
			inlined_free(v, (uint32_t)i);
			return -1;
		}
		v[i].off = (uint32_t)off;
		v[i].size = (uint32_t)size;
		v[i].depth = (uint32_t)depth;
	}
	*out = v;
	*n = (uint32_t)cnt;
	return 0;
}

static int parse_symbols(struct gtr_reader *r, const struct block *b)
{
	size_t len;
	const uint8_t *d = rd_unzstd(r, b, &len, r->why, sizeof(r->why));
	struct symbols_in v = { 0 };
	uint32_t seen = 0;

	if (!d)
		return -1;
	struct gcr c = { d, d + len };
	/* First pass: find binary_id and the symbols array, wherever they are. */
	if (decode_map(r, &c, &symbols_schema, &v, symbols_key, &seen))
		return -1;
	const bool have_bin = has_required(&symbols_schema, seen);
	if (c.p != c.end || !have_bin) {
		snprintf(r->why, sizeof(r->why), "%s", have_bin ? "bytes after the map" : "no binary_id");
		return -1;
	}
	const uint32_t bin = v.bin;
	const uint64_t nsyms = v.nsyms;
	struct gcr syms = v.syms;
	struct symtab *t = rd_symtab_of(r, bin);
	if (!t) {
		if (r->nsymtabs >= GTR_MAX_BINARIES) {
			/* a declared count: it saturates (gtr.h) */
			r->overflow.symbols = gtr_add_sat(r->overflow.symbols, nsyms);
			return 0;
		}
		if (rd_grow((void **)&r->symtabs, &r->symtabs_cap, r->nsymtabs, sizeof(*t)))
			return -1;
		t = &r->symtabs[r->nsymtabs++];
		*t = (struct symtab){ .binary_id = bin, .sorted = true };
	}
	uint64_t addr = 0;
	for (uint64_t j = 0; j < nsyms; j++) {
		uint64_t e, delta, size;
		const uint8_t *name;
		size_t nl;
		if (gcr_expect(&syms, GCR_ARRAY, &e) || e < 3 || gcr_uint(&syms, &delta) ||
		    gcr_uint(&syms, &size) || gcr_text(&syms, &name, &nl, GTR_MAX_NAME)) {
			snprintf(r->why, sizeof(r->why), "symbol %llu malformed", (unsigned long long)j);
			return -1;
		}
		struct gtr_inlined *inl = NULL;
		uint32_t ninl = 0;
		if (e > 3 && parse_inlined(r, &syms, &inl, &ninl)) {
			snprintf(r->why, sizeof(r->why), "symbol %llu: inlined ranges malformed",
				 (unsigned long long)j);
			return -1;
		}
		for (uint64_t q = 4; q < e; q++)
			if (gcr_skip(&syms, GTR_CBOR_DEPTH)) {
				inlined_free(inl, ninl);
				return -1;
			}
		if (delta > UINT64_MAX - addr) {
			inlined_free(inl, ninl);
			snprintf(r->why, sizeof(r->why), "symbol %llu: address overflows",
				 (unsigned long long)j);
			return -1;
		}
		addr += delta;
		const char *str = NULL;
		if (r->nsyms >= GTR_MAX_SYMBOLS || set_str(r, &str, name, nl)) {
			r->overflow.symbols = gtr_add_sat(r->overflow.symbols, 1);
			inlined_free(inl, ninl);
			continue;
		}
		if (rd_grow((void **)&t->syms, &t->cap, t->n, sizeof(*t->syms))) {
			free_str(str);
			inlined_free(inl, ninl);
			return -1;
		}
		if (t->n && t->syms[t->n - 1].address > addr)
			t->sorted = false;
		t->syms[t->n++] = (struct gtr_symbol){ .address = addr, .size = size, .name = str,
						       .ninlined = ninl, .inlined = inl };
		r->nsyms++;
	}
	return 0;
}

static int parse_mapping(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_mapping m = { 0 };

	init_fields(&gtr_mapping_schema, &m);
	if (decode_map(r, c, &gtr_mapping_schema, &m, NULL, NULL))
		goto bad;
	if (c->p != c->end || m.end <= m.start) {
		snprintf(r->why, sizeof(r->why), "%s",
			 m.end <= m.start ? "mapping end not above its start" : "bytes after the map");
		goto bad;
	}
	if (r->nmaps >= GTR_MAX_MAPPINGS) {
		r->overflow.mappings = gtr_add_sat(r->overflow.mappings, 1);
		free_str(m.path);
		return 0;
	}
	if (rd_grow((void **)&r->maps, &r->maps_cap, r->nmaps, sizeof(m)))
		goto bad;
	fill_fields(&gtr_mapping_schema, &m);
	r->maps[r->nmaps++] = m;
	r->maps_sorted = false;
	return 0;
bad:
	free_str(m.path);
	return -1;
}

static int parse_process(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_process p = { 0 };

	init_fields(&gtr_process_schema, &p);
	if (decode_map(r, c, &gtr_process_schema, &p, NULL, NULL) || c->p != c->end)
		goto bad;
	if (!p.exited)
		p.exit_code = 0;
	if (r->nprocs >= GTR_MAX_PROCESSES) {
		r->overflow.processes = gtr_add_sat(r->overflow.processes, 1);
		free_str(p.comm);
		return 0;
	}
	if (rd_grow((void **)&r->procs, &r->procs_cap, r->nprocs, sizeof(p)))
		goto bad;
	fill_fields(&gtr_process_schema, &p);
	if (p.host && u64map_put(&r->pid_host, p.pid, p.host, GTR_MAX_PROCESSES))
		goto bad;
	r->procs[r->nprocs++] = p;
	return 0;
bad:
	free_str(p.comm);
	return -1;
}

static int parse_clock(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_host h = { 0 };

	if (decode_map(r, c, &gtr_clock_schema, &h, NULL, NULL) || c->p != c->end)
		return -1;
	const struct gtr_clock_sample cs = {
		.monotonic_ns = h.start_mono_ns,
		.realtime_ns = h.start_realtime_ns,
		.boottime_ns = h.start_boottime_ns,
	};
	if (r->nclocks >= GTR_MAX_CLOCKS) {
		/* Keep the span covered: drop every second sample. */
		uint32_t j = 0;
		for (uint32_t i = 0; i < r->nclocks; i += 2)
			r->clocks[j++] = r->clocks[i];
		r->overflow.clocks = gtr_add_sat(r->overflow.clocks, r->nclocks - j);
		r->nclocks = j;
	}
	if (rd_grow((void **)&r->clocks, &r->clocks_cap, r->nclocks, sizeof(cs)))
		return -1;
	/* Kept in monotonic order (the writer writes them in order). */
	uint32_t at = r->nclocks;
	while (at && r->clocks[at - 1].monotonic_ns > cs.monotonic_ns)
		at--;
	memmove(&r->clocks[at + 1], &r->clocks[at], (r->nclocks - at) * sizeof(cs));
	r->clocks[at] = cs;
	r->nclocks++;
	return 0;
}

int rd_absorb(struct gtr_reader *r, const struct block *b)
{
	struct gcr c = { b->payload, b->payload + b->len };
	const char *what;
	int rc;

	r->why[0] = 0;
	switch (b->type) {
	case GTR_BLOCK_EVENTS:
		rd_start_frame(r, b);
		return 0;
	case GTR_BLOCK_HOST:
		if (r->host_seen) {
			r->skipped++;
			return 0;
		}
		what = "host";
		rc = parse_host(r, &c);
		if (!rc && c.p != c.end)
			rc = -1;
		if (!rc)
			r->host_seen = true;
		break;
	case GTR_BLOCK_BINARY:
		what = "binary";
		rc = parse_binary(r, &c);
		break;
	case GTR_BLOCK_PROBE:
		what = "probe";
		rc = parse_probe(r, &c);
		break;
	case GTR_BLOCK_SUMMARY:
		what = "summary";
		rc = rd_parse_summary(r, &c);
		r->ended = true;
		break;
	case GTR_BLOCK_SYMBOLS:
		what = "symbols";
		rc = parse_symbols(r, b);
		break;
	case GTR_BLOCK_MAPPING:
		what = "mapping";
		rc = parse_mapping(r, &c);
		break;
	case GTR_BLOCK_CLOCK:
		what = "clock";
		rc = parse_clock(r, &c);
		break;
	case GTR_BLOCK_PROCESS:
		what = "process";
		rc = parse_process(r, &c);
		break;
	case GTR_BLOCK_PEER:
		what = "peer";
		rc = parse_peer(r, &c);
		break;
	default:
		r->skipped++;
		return 0;
	}
	if (rc) {
		char why[256];
		snprintf(why, sizeof(why), "undecodable %s block%s%s", what,
			 r->why[0] ? ": " : "", r->why);
		rd_damaged(r, b->off, why, "skipped");
	}
	return 0;
}

void rd_meta_init(struct gtr_reader *r)
{
	fill_fields(&gtr_host_schema, &r->host);
}

void rd_meta_free(struct gtr_reader *r)
{
	for (uint32_t i = 0; i < r->nprobes; i++)
		free_probe(r->probes[i]);
	free(r->probes);
	for (uint32_t i = 0; i < r->nbinaries; i++)
		free_binary(r->binaries[i]);
	free(r->binaries);
	free_fields(&gtr_host_schema, &r->host);
	for (uint32_t i = 0; i + 1 < r->npeers; i++) {
		if (r->peers[i])
			free_fields(&gtr_host_schema, r->peers[i]);
		free(r->peers[i]);
	}
	free(r->peers);
	u64map_free(&r->pid_host);
	u64map_free(&r->probe_ix);
	for (uint32_t i = 0; i < r->nsymtabs; i++) {
		for (uint32_t j = 0; j < r->symtabs[i].n; j++) {
			free_str(r->symtabs[i].syms[j].name);
			inlined_free((struct gtr_inlined *)r->symtabs[i].syms[j].inlined,
				     r->symtabs[i].syms[j].ninlined);
		}
		free(r->symtabs[i].syms);
	}
	free(r->symtabs);
	for (uint32_t i = 0; i < r->nmaps; i++)
		free_str(r->maps[i].path);
	free(r->maps);
	free(r->map_order);
	for (uint32_t i = 0; i < r->nprocs; i++)
		free_str(r->procs[i].comm);
	free(r->procs);
	free(r->clocks);
	free(r->sum_ids);
	free(r->sum_events);
	free(r->index);
}
