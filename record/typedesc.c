/* SPDX-License-Identifier: MIT */
/*
 * Types from the runtime type descriptors every gc binary keeps, stripped
 * or not (reflect and the garbage collector need them): between
 * runtime.moduledata's types and etypes, each descriptor a header
 * (size, tflag, kind, name) and its kind's part (element, struct fields
 * with their offsets), named types with their package path. Layouts per
 * Go version are gofacts.c's (gofact_typedesc, gofact_moduledata).
 *
 * The descriptors are not indexed by name in the binary, so the span is
 * scanned once for those of named types, each checked for consistency
 * (kind, name within the span, struct fields pointing into it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"
#include "gofacts.h"
#include "map.h"

#define TFLAG_UNCOMMON 1   /* an uncommonType follows the kind's part */
#define TFLAG_EXTRA_STAR 2 /* the name has a '*' to drop */
#define TFLAG_NAMED 4
#define KIND_MASK 0x1f

enum { GK_ARRAY = 17, GK_INTERFACE = 20, GK_PTR = 22, GK_SLICE = 23,
       GK_STRUCT = 25 };

struct td_named {
	char *name;       /* "net/http.Request" */
	uint64_t addr;
};

struct gobin_typedesc {
	const struct gofact_typedesc *L;
	int ps;
	uint64_t types, etypes;
	struct td_named *named;   /* sorted by name */
	size_t nnamed;
	struct u64map name_at;    /* descriptor address -> index in names */
	char **names;             /* gobin_td_name_at()'s, owned */
	uint32_t nnames, cap_names;
};

/* A word (or less) of the file at link-time address `va`; false when the
 * file does not hold it. */
static bool rd(const struct gobin *b, uint64_t va, int size, uint64_t *out)
{
	const uint8_t *p = gobin_at_vaddr(b, va, (size_t)size);

	if (!p)
		return false;
	*out = gobin_rd(b, p, size);
	return true;
}

static bool in_span(const struct gobin_typedesc *t, uint64_t va)
{
	return va >= t->types && va < t->etypes;
}

/*
 * The name at `va` (flags byte, varint length, bytes: Go 1.17+) into
 * out[len]; false when it is not a plausible name in the span.
 */
static bool name_at(const struct gobin *b, const struct gobin_typedesc *t,
		    uint64_t va, char *out, size_t len)
{
	uint64_t flags, n = 0, c;
	int shift = 0, k = 1;
	const uint8_t *s;

	if (!in_span(t, va) || !rd(b, va, 1, &flags) || flags > 0x0f)
		return false;
	do {
		if (!rd(b, va + (uint64_t)k++, 1, &c) || shift > 14)
			return false;
		n |= (c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	if (!n || n >= len || !(s = gobin_at_vaddr(b, va + (uint64_t)k, n)))
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] == 0x7f)
			return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* The name of nameOff `off` (from types) into out[len]. */
static bool name_off(const struct gobin *b, const struct gobin_typedesc *t,
		     uint64_t off, char *out, size_t len)
{
	const int64_t o = (int32_t)(uint32_t)off;

	return o > 0 && name_at(b, t, t->types + (uint64_t)o, out, len);
}

/* Bytes of the kind's part after the header, before an uncommonType. */
static int kind_part(const struct gobin_typedesc *t, unsigned kind)
{
	switch (kind) {
	case GK_PTR: case GK_SLICE: return t->ps;
	case GK_ARRAY: return 3 * t->ps;
	case GK_STRUCT: case GK_INTERFACE: return 4 * t->ps;
	default: return -1;   /* chan, func, map: their parts are not read */
	}
}

/* The fields slice of struct descriptor `a` in *fields, *n; false when it
 * is not a consistent one. */
static bool struct_slice(const struct gobin *b, const struct gobin_typedesc *t,
			 uint64_t a, uint64_t *fields, uint64_t *n)
{
	const uint64_t at = a + (uint64_t)t->L->hdr + (uint64_t)t->ps;
	uint64_t cap;

	if (!rd(b, at, t->ps, fields) || !rd(b, at + (uint64_t)t->ps, t->ps, n) ||
	    !rd(b, at + 2 * (uint64_t)t->ps, t->ps, &cap) || *n != cap || *n > 4096)
		return false;
	return !*n || (in_span(t, *fields) &&
		       in_span(t, *fields + *n * 3 * (uint64_t)t->ps - 1));
}

/*
 * Whether `a` is the descriptor of a named type; its Go name with its
 * package path ("net/http.Request") into full[len].
 */
static bool named_at(const struct gobin *b, const struct gobin_typedesc *t,
		     uint64_t a, char *full, size_t len)
{
	uint64_t tflag, kind, str, pkg, fields, n;
	char name[256], path[256];
	const char *dot;
	int part;

	if (!rd(b, a + (uint64_t)t->L->tflag, 1, &tflag) ||
	    (tflag & (TFLAG_NAMED | TFLAG_UNCOMMON)) != (TFLAG_NAMED | TFLAG_UNCOMMON) ||
	    !rd(b, a + (uint64_t)t->L->kind, 1, &kind) || !(kind & KIND_MASK) ||
	    (kind & KIND_MASK) > 26 || !rd(b, a + (uint64_t)t->L->str, 4, &str) ||
	    !name_off(b, t, str, name, sizeof(name)))
		return false;
	part = kind_part(t, kind & KIND_MASK);
	if ((kind & KIND_MASK) == GK_STRUCT && !struct_slice(b, t, a, &fields, &n))
		return false;
	if (part < 0 && (kind & KIND_MASK) > 16)
		return false;   /* named chan, func or map: not needed */
	if (part < 0)
		part = 0;
	if (!rd(b, a + (uint64_t)t->L->hdr + (uint64_t)part, 4, &pkg) ||
	    !name_off(b, t, pkg, path, sizeof(path)))
		return false;
	dot = strchr(name + ((tflag & TFLAG_EXTRA_STAR) && name[0] == '*'), '.');
	if (!dot)
		return false;
	return (size_t)snprintf(full, len, "%s%s", path, dot) < len;
}

static int named_cmp(const void *x, const void *y)
{
	return strcmp(((const struct td_named *)x)->name,
		      ((const struct td_named *)y)->name);
}

/* Scans the span for the descriptors of named types. */
static void scan(const struct gobin *b, struct gobin_typedesc *t)
{
	size_t cap = 0;
	char full[512];

	for (uint64_t a = t->types; a + (uint64_t)t->L->hdr <= t->etypes;
	     a += (uint64_t)t->ps) {
		struct td_named *v;

		if (!named_at(b, t, a, full, sizeof(full)))
			continue;
		if (t->nnamed == cap) {
			cap = cap ? 2 * cap : 1024;
			v = realloc(t->named, cap * sizeof(*v));
			if (!v)
				return;
			t->named = v;
		}
		t->named[t->nnamed].addr = a;
		if (!(t->named[t->nnamed].name = strdup(full)))
			return;
		t->nnamed++;
	}
	if (t->nnamed)
		qsort(t->named, t->nnamed, sizeof(*t->named), named_cmp);
}

/* The descriptors of `b`, read on first use; NULL when it has none
 * gotrace can read. */
static struct gobin_typedesc *td_of(struct gobin *b)
{
	const int minor = b->go_minor ? b->go_minor : b->pcln_minor;
	const struct gofact_moddata *md = gofact_moduledata(minor);
	struct gobin_typedesc *t;

	if (b->td)
		return b->td->L ? b->td : NULL;   /* no L: gccgo's (td_gccgo) */
	if (!b->moddata || !md || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->ps = b->ptrsize;
	t->L = gofact_typedesc(minor, t->ps);
	if (!t->L || !rd(b, b->moddata + (uint64_t)md->types * (uint64_t)t->ps, t->ps, &t->types) ||
	    !rd(b, b->moddata + (uint64_t)md->etypes * (uint64_t)t->ps, t->ps, &t->etypes) ||
	    t->types >= t->etypes || !gobin_at_vaddr(b, t->types, t->etypes - t->types)) {
		free(t);
		return NULL;
	}
	scan(b, t);
	b->td = t;
	return t;
}

void gobin_typedesc_free(struct gobin *b)
{
	struct gobin_typedesc *t = b->td;

	for (size_t i = 0; t && i < t->nnamed; i++)
		free(t->named[i].name);
	for (uint32_t i = 0; t && i < t->nnames; i++)
		free(t->names[i]);
	if (t) {
		free(t->named);
		free(t->names);
		u64map_free(&t->name_at);
	}
	free(t);
	b->td = NULL;
}

uint64_t gobin_td_find(struct gobin *b, const char *name)
{
	struct gobin_typedesc *t = td_of(b);
	struct td_named key = { .name = (char *)name }, *hit;

	if (!t || !t->nnamed)
		return 0;
	hit = bsearch(&key, t->named, t->nnamed, sizeof(*t->named), named_cmp);
	return hit ? hit->addr : 0;
}

size_t gobin_td_count(struct gobin *b)
{
	struct gobin_typedesc *t = td_of(b);

	return t ? t->nnamed : 0;
}

const char *gobin_td_named(struct gobin *b, size_t i, uint64_t *addr)
{
	struct gobin_typedesc *t = td_of(b);

	if (!t || i >= t->nnamed)
		return NULL;
	if (addr)
		*addr = t->named[i].addr;
	return t->named[i].name;
}

int gobin_td_read(struct gobin *b, uint64_t a, struct gobin_td *out)
{
	struct gobin_typedesc *t = td_of(b);
	const uint64_t part = a + (t ? (uint64_t)t->L->hdr : 0);
	uint64_t kind, str, tflag;

	memset(out, 0, sizeof(*out));
	if (!t || !in_span(t, a) || !rd(b, a + (uint64_t)t->L->kind, 1, &kind) ||
	    !rd(b, a + (uint64_t)t->L->size, t->ps, &out->size) ||
	    !rd(b, a + (uint64_t)t->L->tflag, 1, &tflag) ||
	    !rd(b, a + (uint64_t)t->L->str, 4, &str))
		return -ENOENT;
	out->kind = (unsigned)(kind & KIND_MASK);
	if (name_off(b, t, str, out->name, sizeof(out->name)) &&
	    (tflag & TFLAG_EXTRA_STAR) && out->name[0] == '*')
		memmove(out->name, out->name + 1, strlen(out->name));
	switch (out->kind) {
	case GK_PTR: case GK_SLICE:
		rd(b, part, t->ps, &out->elem);
		break;
	case GK_ARRAY:
		rd(b, part, t->ps, &out->elem);
		rd(b, part + 2 * (uint64_t)t->ps, t->ps, &out->len);
		break;
	case GK_STRUCT:
		if (!struct_slice(b, t, a, &out->fields, &out->len))
			return -EINVAL;
		break;
	default:
		break;
	}
	return 0;
}

int gobin_td_field(struct gobin *b, const struct gobin_td *st, size_t i,
		   char *name, size_t len, uint64_t *type, uint64_t *off)
{
	struct gobin_typedesc *t = td_of(b);
	const uint64_t f = st->fields + i * 3 * (uint64_t)(t ? t->ps : 0);
	uint64_t np;

	if (!t || st->kind != GK_STRUCT || i >= st->len ||
	    !rd(b, f, t->ps, &np) || !rd(b, f + (uint64_t)t->ps, t->ps, type) ||
	    !rd(b, f + 2 * (uint64_t)t->ps, t->ps, off) ||
	    !name_at(b, t, np, name, len))
		return -EINVAL;
	return 0;
}

struct gobin_type *gobin_td_type(struct gobin *b, uint64_t a, int depth)
{
	struct gobin_td d, e;
	struct gobin_type *t;

	if (gobin_td_read(b, a, &d))
		return NULL;
	t = gobin_type_new(gobin_tk_of_kind(d.kind), (uint32_t)d.size, d.name);
	if (!t)
		return NULL;
	if (t->kind == TK_SLICE && !gobin_td_read(b, d.elem, &e)) {
		t->elem_kind = gobin_tk_of_kind(e.kind);
		t->elem_size = (uint32_t)e.size;
	} else if (t->kind == TK_ARRAY && depth < 8) {
		struct gobin_type *et = gobin_td_type(b, d.elem, depth + 1);

		t->count = d.len;
		if (!et || gobin_type_add_field(t, 0, et))
			t->kind = TK_OTHER;
	} else if (t->kind == TK_STRUCT) {
		for (size_t i = 0; i < d.len; i++) {
			char fname[256];
			uint64_t ft, off;
			struct gobin_type *f;

			if (depth >= 8 || gobin_td_field(b, &d, i, fname, sizeof(fname), &ft, &off) ||
			    !(f = gobin_td_type(b, ft, depth + 1)) ||
			    gobin_type_add_field(t, (uint32_t)off, f)) {
				t->kind = TK_OTHER;
				break;
			}
		}
	}
	gobin_type_set_align(t, b->ptrsize);
	return t;
}

/*
 * gccgo's descriptors, which gotrace reads only to name a type: no
 * layout (L) or span; the names found are kept as gc's are. NULL for
 * another compiler's binary, or without memory.
 */
static struct gobin_typedesc *td_gccgo(struct gobin *b)
{
	if (b->compiler != GOBIN_GCCGO)
		return NULL;
	if (!b->td && (b->td = calloc(1, sizeof(*b->td))) != NULL)
		b->td->ps = b->ptrsize;
	return b->td;
}

/*
 * The name of gccgo's type descriptor at `a` into full[len]: its
 * reflection string. GCC 12's libgo/go/runtime/type.go, _type: size,
 * ptrdata (words), hash (4 bytes), tflag, align, fieldAlign, kind (a
 * byte each), equal, gcdata (words), then _string *string: 4 words and
 * 8 bytes in (+40 on x86-64). The package paths gccgo quotes between
 * tabs ("\tmain\tmain.Rect") are dropped, as libgo's
 * reflect.rtype.String drops them. False when `a` is not in the file
 * (a descriptor of libgo.so's) or holds no plausible descriptor.
 */
static bool gccgo_type_name(struct gobin *b, uint64_t a, char *full, size_t len)
{
	const uint64_t ps = (uint64_t)b->ptrsize;
	const uint64_t str = gobin_dyn_word(b, a + gobin_gccgo_type_string_off(b->ptrsize),
					    b->ptrsize);
	uint64_t kind, data, n;
	const uint8_t *c;

	if (!rd(b, a + 2 * ps + 7, 1, &kind) || !(kind & KIND_MASK) ||
	    (kind & KIND_MASK) > 26 || !str || !rd(b, str + ps, b->ptrsize, &n) ||
	    !n || n >= len || !(data = gobin_dyn_word(b, str, b->ptrsize)) ||
	    !(c = gobin_at_vaddr(b, data, n)))
		return false;
	return gobin_gccgo_reflect_name(c, n, full, len);
}

uint32_t gobin_gccgo_type_string_off(int ptrsize)
{
	return 4u * (uint32_t)ptrsize + 8;
}

bool gobin_gccgo_reflect_name(const uint8_t *c, size_t n, char *full, size_t len)
{
	size_t o = 0;
	bool quoted = false;

	if (!n || n >= len)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (c[i] == '\t')
			quoted = !quoted;
		else if (c[i] < 0x20 || c[i] == 0x7f)
			return false;
		else if (!quoted)
			full[o++] = (char)c[i];
	}
	full[o] = '\0';
	return o > 0 && !quoted;
}

/* The Go name of the type at `a` (a pointer's "*" and its element's),
 * with package paths as DWARF writes them, into full[len]. */
static bool type_name(struct gobin *b, const struct gobin_typedesc *t, uint64_t a,
		      char *full, size_t len)
{
	struct gobin_td td;

	if (named_at(b, t, a, full, len))
		return true;
	if (gobin_td_read(b, a, &td) || !td.name[0])
		return false;
	if (td.kind == GK_PTR && td.elem && named_at(b, t, td.elem, full + 1, len - 1)) {
		full[0] = '*';
		return true;
	}
	return (size_t)snprintf(full, len, "%s", td.name) < len;
}

const char *gobin_td_name_at(struct gobin *b, uint64_t a)
{
	struct gobin_typedesc *t = b->compiler == GOBIN_GCCGO ? td_gccgo(b) : td_of(b);
	const uint32_t *i;
	char full[512], *dup;

	if (!t || (t->L && !in_span(t, a)))
		return NULL;
	if ((i = u64map_get(&t->name_at, a)) != NULL)
		return *i < t->nnames ? t->names[*i] : NULL;
	/* an address that names nothing is remembered too (index past all) */
	if (!(t->L ? type_name(b, t, a, full, sizeof(full)) :
	      gccgo_type_name(b, a, full, sizeof(full))) || !(dup = strdup(full))) {
		(void)u64map_put(&t->name_at, a, UINT32_MAX, UINT32_MAX);
		return NULL;
	}
	if (t->nnames == t->cap_names) {
		const uint32_t cap = t->cap_names ? 2 * t->cap_names : 64;
		char **v = realloc(t->names, cap * sizeof(*v));

		if (!v) {
			free(dup);
			return NULL;
		}
		t->names = v;
		t->cap_names = cap;
	}
	if (u64map_put(&t->name_at, a, t->nnames, UINT32_MAX)) {
		free(dup);
		return NULL;
	}
	t->names[t->nnames] = dup;
	return t->names[t->nnames++];
}
