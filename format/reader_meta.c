/* SPDX-License-Identifier: MIT */
/*
 * Metadata blocks of the reader: HOST, BINARY, PROBE, SUMMARY, SYMBOLS,
 * MAPPING, PROCESS and CLOCK, decoded from CBOR maps by tables, and kept
 * within the limits of spec/FORMAT.md ("Limits"; what is not kept is
 * counted in struct gtr_overflow).
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
 * Table-driven decoding of the metadata maps. A table lists the keys of a
 * map whose values go straight into a struct (`base`), by kind and offset;
 * keys with nested values go to a callback; every other key is skipped.
 */
enum mf_kind {
	MF_U64,  /* uint64_t: unsigned integer */
	MF_U32,  /* uint32_t: unsigned integer that fits 32 bits */
	MF_I32,  /* int32_t: unsigned or negative integer in [-2^31, 2^31) */
	MF_BOOL, /* bool */
	MF_STR,  /* const char *: text of at most GTR_MAX_NAME bytes, copied */
	MF_TYPE, /* enum gtr_type: type name, unknown ones GTR_TYPE_OTHER */
	MF_KIND, /* enum gtr_kind: "entry" or "return", nothing else */
};

struct map_field {
	const char *key;
	enum mf_kind kind;
	size_t off;      /* of the destination in *base */
};

#define MF(key, kind, type, member) { key, kind, offsetof(type, member) }

/*
 * Decodes a key that is not in the table: 0 when done, -1 on malformed
 * input, 1 when the key is not one it knows (decode_map() skips its value).
 */
typedef int (*map_cb)(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		      size_t kn, void *base);

static int decode_field(struct gtr_reader *r, struct gcr *c,
			const struct map_field *f, void *base)
{
	void *dst = (char *)base + f->off;
	const uint8_t *s;
	size_t sn;
	unsigned major, ai;
	uint64_t v;

	switch (f->kind) {
	case MF_U64:
		return gcr_uint(c, dst);
	case MF_U32:
		return gcr_u32(c, dst);
	case MF_BOOL:
		return gcr_bool(c, dst);
	case MF_STR:
		return get_str(r, c, dst);
	case MF_I32:
		if (gcr_head(c, &major, &ai, &v) || v > INT32_MAX)
			return -1;
		if (major == GCR_UINT)
			*(int32_t *)dst = (int32_t)v;
		else if (major == GCR_NEGINT)
			*(int32_t *)dst = -(int32_t)v - 1;
		else
			return -1;
		return 0;
	case MF_TYPE:
		if (gcr_text(c, &s, &sn, GTR_MAX_NAME))
			return -1;
		*(enum gtr_type *)dst = gtr_type_from_name((const char *)s, sn);
		return 0;
	case MF_KIND:
		if (gcr_text(c, &s, &sn, GTR_MAX_NAME))
			return -1;
		if (gcr_key_is(s, sn, "entry"))
			*(enum gtr_kind *)dst = GTR_KIND_ENTRY;
		else if (gcr_key_is(s, sn, "return"))
			*(enum gtr_kind *)dst = GTR_KIND_RETURN;
		else
			return -1;
		return 0;
	}
	return -1;
}

/*
 * Decodes a map with text keys into *base: the keys of fields[] by the
 * table, others by cb when given, the rest skipped. When seen is given,
 * bit i of *seen is set if the map had fields[i]. 0, or -1 when malformed.
 */
static int decode_map(struct gtr_reader *r, struct gcr *c,
		      const struct map_field *fields, size_t nfields, void *base,
		      map_cb cb, uint32_t *seen)
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
		while (f < nfields && !gcr_key_is(k, kn, fields[f].key))
			f++;
		int rc;
		if (f < nfields) {
			rc = decode_field(r, c, &fields[f], base);
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

#define DECODE_MAP(r, c, fields, base, cb, seen) \
	decode_map(r, c, fields, sizeof(fields) / sizeof((fields)[0]), base, cb, seen)

/* The "clocks" map of HOST, and a CLOCK block. */
static const struct map_field clock_fields[] = {
	MF("monotonic_ns", MF_U64, struct gtr_host, start_mono_ns),
	MF("realtime_ns", MF_U64, struct gtr_host, start_realtime_ns),
	MF("boottime_ns", MF_U64, struct gtr_host, start_boottime_ns),
};

static const struct map_field host_fields[] = {
	MF("hostname", MF_STR, struct gtr_host, hostname),
	MF("kernel", MF_STR, struct gtr_host, kernel),
	MF("machine", MF_STR, struct gtr_host, machine),
	MF("recorder", MF_STR, struct gtr_host, recorder),
};

static int host_key(struct gtr_reader *r, struct gcr *c, const uint8_t *k,
		    size_t kn, void *base)
{
	if (!gcr_key_is(k, kn, "clocks"))
		return 1;
	return DECODE_MAP(r, c, clock_fields, base, NULL, NULL);
}

static int parse_host(struct gtr_reader *r, struct gcr *c)
{
	return DECODE_MAP(r, c, host_fields, &r->host, host_key, NULL);
}

static void free_binary(struct gtr_binary *b)
{
	if (!b)
		return;
	free_str(b->path);
	free_str(b->build_id);
	free_str(b->go_build_id);
	free_str(b->go_version);
	free_str(b->compiler);
	free_str(b->arch);
	free_str(b->abi);
	free_str(b->go_version_source);
	free_str(b->goid_source);
	free(b);
}

static void fill_empty(const char **s)
{
	if (!*s)
		*s = empty_str;
}

static const struct map_field binary_fields[] = {
	MF("id", MF_U32, struct gtr_binary, id), /* required: bit 0 of seen */
	MF("path", MF_STR, struct gtr_binary, path),
	MF("build_id", MF_STR, struct gtr_binary, build_id),
	MF("go_build_id", MF_STR, struct gtr_binary, go_build_id),
	MF("go_version", MF_STR, struct gtr_binary, go_version),
	MF("compiler", MF_STR, struct gtr_binary, compiler),
	MF("arch", MF_STR, struct gtr_binary, arch),
	MF("abi", MF_STR, struct gtr_binary, abi),
	MF("pie", MF_BOOL, struct gtr_binary, pie),
	MF("stripped", MF_BOOL, struct gtr_binary, stripped),
	MF("dwarf", MF_BOOL, struct gtr_binary, has_dwarf),
	MF("go_version_source", MF_STR, struct gtr_binary, go_version_source),
	MF("goid_offset", MF_I32, struct gtr_binary, goid_offset),
	MF("goid_source", MF_STR, struct gtr_binary, goid_source),
};

static int parse_binary(struct gtr_reader *r, struct gcr *c)
{
	uint32_t seen = 0;

	if (r->nbinaries >= GTR_MAX_BINARIES) {
		snprintf(r->why, sizeof(r->why), "more than %u binaries", GTR_MAX_BINARIES);
		return -1;
	}
	struct gtr_binary *b = calloc(1, sizeof(*b));
	if (b)
		b->goid_offset = -1;   /* absent: files of older recorders */
	if (!b || DECODE_MAP(r, c, binary_fields, b, NULL, &seen))
		goto bad;
	if (!(seen & 1) || c->p != c->end)
		goto bad;
	fill_empty(&b->path);
	fill_empty(&b->build_id);
	fill_empty(&b->go_build_id);
	fill_empty(&b->go_version);
	fill_empty(&b->compiler);
	fill_empty(&b->arch);
	fill_empty(&b->abi);
	fill_empty(&b->go_version_source);
	fill_empty(&b->goid_source);
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
	free_str(p->func);
	free_str(p->spec);
	free_str(p->fmt);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++) {
		free_str(p->args[i].name);
		free_str(p->args[i].type_name);
	}
	free(p);
}

static const struct map_field arg_fields[] = {
	MF("name", MF_STR, struct gtr_arg, name),
	MF("type_name", MF_STR, struct gtr_arg, type_name),
	MF("type", MF_TYPE, struct gtr_arg, type),
	MF("size", MF_U32, struct gtr_arg, size),
};

static const struct map_field probe_fields[] = {
	MF("id", MF_U32, struct gtr_probe, id),     /* required: bit 0 of seen */
	MF("kind", MF_KIND, struct gtr_probe, kind), /* required: bit 1 */
	MF("binary_id", MF_U32, struct gtr_probe, binary_id),
	MF("func", MF_STR, struct gtr_probe, func),
	MF("address", MF_U64, struct gtr_probe, address),
	MF("spec", MF_STR, struct gtr_probe, spec),
	MF("fmt", MF_STR, struct gtr_probe, fmt),
};

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
			rc = DECODE_MAP(r, c, arg_fields, &p->args[j], NULL, NULL);
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
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++)
		p->args[i].type = GTR_TYPE_WORD;
	if (DECODE_MAP(r, c, probe_fields, p, probe_key, &seen))
		goto bad;
	if ((seen & 3) != 3 || c->p != c->end)
		goto bad;
	for (uint32_t i = 0; i < p->nexprs; i++)
		if (p->exprs[i] >= p->nargs)
			goto bad;
	if (gtr_map_get(&r->probe_ix, p->id)) {
		snprintf(r->why, sizeof(r->why), "probe id %u defined twice", p->id);
		free_probe(p);
		return -1;
	}
	fill_empty(&p->func);
	fill_empty(&p->spec);
	fill_empty(&p->fmt);
	for (uint32_t i = 0; i < GTR_MAX_ARGS; i++) {
		fill_empty(&p->args[i].name);
		fill_empty(&p->args[i].type_name);
	}
	if (r->nprobes == r->probes_cap) {
		const uint32_t cap = r->probes_cap ? r->probes_cap * 2 : 64;
		struct gtr_probe **v = realloc(r->probes, cap * sizeof(*v));
		if (!v)
			goto bad;
		r->probes = v;
		r->probes_cap = cap;
	}
	if (gtr_map_put(&r->probe_ix, p->id, r->nprobes, GTR_MAX_PROBES))
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

static const struct map_field summary_fields[] = {
	MF("events", MF_U64, struct summary_in, s.events),
	MF("drops", MF_U64, struct summary_in, s.drops),
	MF("suppressed", MF_U64, struct summary_in, s.suppressed),
	MF("first_ts_ns", MF_U64, struct summary_in, s.first_ts_ns),
	MF("last_ts_ns", MF_U64, struct summary_in, s.last_ts_ns),
	MF("frames_truncated", MF_BOOL, struct summary_in, s.frames_truncated),
};

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

	if (DECODE_MAP(r, c, summary_fields, &v, summary_key, NULL) || c->p != c->end)
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

static const struct map_field symbols_fields[] = {
	MF("binary_id", MF_U32, struct symbols_in, bin), /* required: bit 0 */
};

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
	if (DECODE_MAP(r, &c, symbols_fields, &v, symbols_key, &seen))
		return -1;
	const bool have_bin = seen & 1;
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
			r->overflow.symbols += nsyms;
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
		for (uint64_t q = 3; q < e; q++)
			if (gcr_skip(&syms, GTR_CBOR_DEPTH))
				return -1;
		if (delta > UINT64_MAX - addr) {
			snprintf(r->why, sizeof(r->why), "symbol %llu: address overflows",
				 (unsigned long long)j);
			return -1;
		}
		addr += delta;
		if (r->nsyms >= GTR_MAX_SYMBOLS) {
			r->overflow.symbols++;
			continue;
		}
		if (rd_grow((void **)&t->syms, &t->cap, t->n, sizeof(*t->syms)))
			return -1;
		const char *str = NULL;
		if (set_str(r, &str, name, nl)) {
			r->overflow.symbols++;
			continue;
		}
		if (t->n && t->syms[t->n - 1].address > addr)
			t->sorted = false;
		t->syms[t->n++] = (struct gtr_symbol){ .address = addr, .size = size, .name = str };
		r->nsyms++;
	}
	return 0;
}

static const struct map_field mapping_fields[] = {
	MF("ts_ns", MF_U64, struct gtr_mapping, ts_ns),
	MF("pid", MF_U32, struct gtr_mapping, pid),
	MF("start", MF_U64, struct gtr_mapping, start),
	MF("end", MF_U64, struct gtr_mapping, end),
	MF("offset", MF_U64, struct gtr_mapping, offset),
	MF("vaddr", MF_U64, struct gtr_mapping, vaddr),
	MF("binary_id", MF_U32, struct gtr_mapping, binary_id),
	MF("path", MF_STR, struct gtr_mapping, path),
};

static int parse_mapping(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_mapping m = { .binary_id = UINT32_MAX };

	if (DECODE_MAP(r, c, mapping_fields, &m, NULL, NULL))
		goto bad;
	if (c->p != c->end || m.end <= m.start) {
		snprintf(r->why, sizeof(r->why), "%s",
			 m.end <= m.start ? "mapping end not above its start" : "bytes after the map");
		goto bad;
	}
	if (r->nmaps >= GTR_MAX_MAPPINGS) {
		r->overflow.mappings++;
		free_str(m.path);
		return 0;
	}
	if (rd_grow((void **)&r->maps, &r->maps_cap, r->nmaps, sizeof(m)))
		goto bad;
	fill_empty(&m.path);
	r->maps[r->nmaps++] = m;
	r->maps_sorted = false;
	return 0;
bad:
	free_str(m.path);
	return -1;
}

static const struct map_field process_fields[] = {
	MF("ts_ns", MF_U64, struct gtr_process, ts_ns),
	MF("pid", MF_U32, struct gtr_process, pid),
	MF("binary_id", MF_U32, struct gtr_process, binary_id),
	MF("comm", MF_STR, struct gtr_process, comm),
	MF("exited", MF_BOOL, struct gtr_process, exited),
	MF("exit_code", MF_I32, struct gtr_process, exit_code),
};

static int parse_process(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_process p = { .binary_id = UINT32_MAX,
				 .exit_code = GTR_EXIT_UNKNOWN };

	if (DECODE_MAP(r, c, process_fields, &p, NULL, NULL) || c->p != c->end)
		goto bad;
	if (!p.exited)
		p.exit_code = 0;
	if (r->nprocs >= GTR_MAX_PROCESSES) {
		r->overflow.processes++;
		free_str(p.comm);
		return 0;
	}
	if (rd_grow((void **)&r->procs, &r->procs_cap, r->nprocs, sizeof(p)))
		goto bad;
	fill_empty(&p.comm);
	r->procs[r->nprocs++] = p;
	return 0;
bad:
	free_str(p.comm);
	return -1;
}

static int parse_clock(struct gtr_reader *r, struct gcr *c)
{
	struct gtr_host h = { 0 };

	if (DECODE_MAP(r, c, clock_fields, &h, NULL, NULL) || c->p != c->end)
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
		r->overflow.clocks += r->nclocks - j;
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
	r->host.hostname = r->host.kernel = r->host.machine = r->host.recorder = empty_str;
}

void rd_meta_free(struct gtr_reader *r)
{
	for (uint32_t i = 0; i < r->nprobes; i++)
		free_probe(r->probes[i]);
	free(r->probes);
	for (uint32_t i = 0; i < r->nbinaries; i++)
		free_binary(r->binaries[i]);
	free(r->binaries);
	free_str(r->host.hostname);
	free_str(r->host.kernel);
	free_str(r->host.machine);
	free_str(r->host.recorder);
	gtr_map_free(&r->probe_ix);
	for (uint32_t i = 0; i < r->nsymtabs; i++) {
		for (uint32_t j = 0; j < r->symtabs[i].n; j++)
			free_str(r->symtabs[i].syms[j].name);
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
