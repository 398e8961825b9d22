/* SPDX-License-Identifier: MIT */
/*
 * Field paths ("r.URL.Path") through DWARF types: from a pointer parameter
 * through structs and pointers, or from a struct passed by value (its
 * fields in registers or on the stack), and the fields of such a struct
 * that gotrace captures whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "dwarf_int.h"

/* Strips typedefs (not Go's own kinds) to the type that has the layout. */
static bool die_resolve(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	Dwarf_Die sub;

	while ((tag == DW_TAG_typedef || tag == DW_TAG_const_type ||
		tag == DW_TAG_volatile_type) &&
	       !(tag == DW_TAG_typedef && gobin_die_udata(die, DW_AT_go_kind, 0))) {
		if (!gobin_die_type(die, &sub))
			return false;
		*die = sub;
		tag = dwarf_tag(die);
	}
	return true;
}

/* Finds member `name` of struct DIE `st`; its offset and type DIE. */
static bool die_member(Dwarf_Die *st, const char *name, size_t len,
		       uint32_t *off, Dwarf_Die *type)
{
	Dwarf_Die m;

	if (dwarf_child(st, &m) != 0)
		return false;
	do {
		const char *mn = dwarf_diename(&m);

		if (dwarf_tag(&m) == DW_TAG_member && mn &&
		    strlen(mn) == len && !memcmp(mn, name, len) &&
		    gobin_die_type(&m, type)) {
			*off = (uint32_t)gobin_die_udata(&m, DW_AT_data_member_location, 0);
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

/*
 * Walks ".F.G..." through a struct passed by value, from *pp, adding up
 * the byte offset and the integer register index of the field; stops at
 * the end (out->direct) or after a pointer field that more components
 * follow (the pointer becomes the root word). On return *t is the type
 * reached and *pp the rest of the path.
 */
static int value_walk(struct tbuild *tb, Dwarf_Die *t, const char **pp,
		      struct gobin_path *out, const char *path, char *err,
		      size_t errlen)
{
	const char *p = *pp;

	out->value_root = true;
	out->slot = 0;
	out->value_off = 0;
	while (*p == '.') {
		const char *name = p + 1;
		size_t len = strcspn(name, ".");
		Dwarf_Die m, mt;
		bool found = false;

		if (!die_resolve(t) || dwarf_tag(t) != DW_TAG_structure_type) {
			snprintf(err, errlen, "field path '%s': '%.*s' is not a "
				 "field of a struct", path, (int)len, name);
			return -EINVAL;
		}
		if (dwarf_child(t, &m) == 0) {
			do {
				const char *mn = dwarf_diename(&m);
				struct gobin_type *ft;
				int k;

				if (dwarf_tag(&m) != DW_TAG_member || !gobin_die_type(&m, &mt))
					continue;
				if (mn && strlen(mn) == len && !memcmp(mn, name, len)) {
					found = true;
					break;
				}
				/* a field before the one named: count its registers */
				ft = gobin_dwarf_type(tb, &mt, 0);
				k = ft ? gobin_abi_int_slots(ft) : -1;
				gobin_type_free(ft);
				out->slot = k < 0 || out->slot < 0 ? -1 : out->slot + k;
			} while (dwarf_siblingof(&m, &m) == 0);
		}
		if (!found) {
			snprintf(err, errlen, "field path '%s': %s has no field "
				 "'%.*s'", path, dwarf_diename(t) ? dwarf_diename(t)
				 : "the struct", (int)len, name);
			return -ENOENT;
		}
		out->value_off += (int32_t)gobin_die_udata(&m, DW_AT_data_member_location, 0);
		*t = mt;
		p = name + len;
		if (*p == '.' && die_resolve(t) && dwarf_tag(t) == DW_TAG_pointer_type) {
			*pp = p;      /* continue through memory from here */
			return 0;
		}
	}
	*pp = p;
	out->direct = true;
	return 0;
}

/* Says which parameters function DIE `fn` has, for a root not found. */
static int no_param(Dwarf_Die *fn, const struct gobin_func *f,
		    const struct gobin_path *out, const char *path, char *err,
		    size_t errlen)
{
	char names[256] = "";
	size_t n = 0;
	Dwarf_Die child;

	if (dwarf_child(fn, &child) == 0) {
		do {
			const char *pn = dwarf_diename(&child);
			Dwarf_Attribute attr;
			bool res = false;

			if (dwarf_tag(&child) != DW_TAG_formal_parameter || !pn)
				continue;
			if (dwarf_attr_integrate(&child, DW_AT_variable_parameter,
						 &attr))
				dwarf_formflag(&attr, &res);
			if (!res && n < sizeof(names))
				n += snprintf(names + n, sizeof(names) - n,
					      "%s%s", n ? ", " : "", pn);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	snprintf(err, errlen, "%s has no parameter '%s' (field path "
		 "'%s'; its parameters: %s)", f->name, out->root, path,
		 names[0] ? names : "none");
	return -ENOENT;
}

/*
 * The type DIE of the root parameter out->root of `f` into *t. 0, or a
 * negative errno with a message in err[errlen].
 */
static int path_root_type(struct gobin *b, const struct gobin_func *f,
			  const struct gobin_path *out, const char *path,
			  Dwarf_Die *t, char *err, size_t errlen)
{
	Dwarf_Die fn, child;

	if (!gobin_dwarf_open(b)) {
		snprintf(err, errlen, "field path '%s' needs DWARF, and %s has "
			 "none (use --debuginfo FILE, or $ptr(EXPR, SIZE))",
			 path, b->path);
		return -ENODATA;
	}
	if (!gobin_dwarf_subprogram(b, f->name, f->entry, &fn) ||
	    dwarf_child(&fn, &child) != 0) {
		snprintf(err, errlen, "DWARF does not describe %s", f->name);
		return -ENOENT;
	}
	do {
		const char *n = dwarf_diename(&child);

		if (dwarf_tag(&child) == DW_TAG_formal_parameter && n &&
		    !strcmp(n, out->root) && gobin_die_type(&child, t))
			return 0;
	} while (dwarf_siblingof(&child, &child) == 0);
	return no_param(&fn, f, out, path, err, errlen);
}

/*
 * Walks ".F.G..." from *p through pointers and structs from type *t,
 * recording each pointer followed (out->deref) and the final offset.
 * 0, 1 when DWARF's types are incomplete, or a negative errno with a
 * message in err[errlen].
 */
static int pointer_walk(Dwarf_Die *t, const char *p, struct gobin_path *out,
			const char *path, char *err, size_t errlen)
{
	bool in_struct = false;
	uint32_t pending = 0;

	for (; *p == '.';) {
		const char *name = p + 1;
		size_t len = strcspn(name, ".");
		Dwarf_Die mt;
		uint32_t off;

		if (!len) {
			snprintf(err, errlen, "field path '%s': empty field name",
				 path);
			return -EINVAL;
		}
		if (!die_resolve(t))
			return 1;
		if (dwarf_tag(t) == DW_TAG_pointer_type) {
			Dwarf_Die et;

			/* Entering the pointee: follow the pointer first
			 * unless it is the root (already the base). */
			if (in_struct) {
				if (out->nderef >= GOBIN_PATH_MAX_DEREF) {
					snprintf(err, errlen, "field path '%s' "
						 "follows more than %d pointers",
						 path, GOBIN_PATH_MAX_DEREF);
					return -E2BIG;
				}
				out->deref[out->nderef++] = (int32_t)pending;
				pending = 0;
			}
			if (!gobin_die_type(t, &et))
				return 1;
			*t = et;
			if (!die_resolve(t))
				return 1;
		}
		if (dwarf_tag(t) != DW_TAG_structure_type) {
			snprintf(err, errlen, "field path '%s': '%.*s' is not a "
				 "field of a struct", path, (int)len, name);
			return -EINVAL;
		}
		if (!die_member(t, name, len, &off, &mt)) {
			snprintf(err, errlen, "field path '%s': %s has no field "
				 "'%.*s'", path, dwarf_diename(t) ?
				 dwarf_diename(t) : "the struct", (int)len, name);
			return -ENOENT;
		}
		pending += off;
		in_struct = true;
		*t = mt;
		p = name + len;
	}
	out->offset = (int32_t)pending;
	return 0;
}

/* The type of the value a path reaches: name, size, gtr_type. */
/* The type a path reaches, gt (freed here): name, size, gtr_type. */
static int path_type_of(struct gobin_type *gt, struct gobin_path *out)
{
	if (!gt)
		return -ENOMEM;
	snprintf(out->type_name, sizeof(out->type_name), "%s", gt->name);
	out->size = gt->size;
	switch (gt->kind) {
	case TK_INT: out->type = GTR_TYPE_INT; break;
	case TK_UINT: out->type = GTR_TYPE_UINT; break;
	case TK_BOOL: out->type = GTR_TYPE_BOOL; break;
	case TK_PTR: out->type = GTR_TYPE_PTR; break;
	case TK_STRING: out->type = GTR_TYPE_STRING; break;
	case TK_FLOAT: out->type = GTR_TYPE_FLOAT; break;
	case TK_SLICE:
		if (!strcmp(gt->name, "[]uint8") || !strcmp(gt->name, "[]byte")) {
			out->type = GTR_TYPE_BYTES;
			break;
		}
		/* fall through */
	default:
		out->type = GTR_TYPE_OTHER;
		break;
	}
	gobin_type_free(gt);
	return 0;
}

/* The type of the value a path reaches, from DWARF type DIE t. */
static int path_type(struct tbuild *tb, Dwarf_Die *t, struct gobin_path *out)
{
	return path_type_of(gobin_dwarf_type(tb, t, 0), out);
}

int gobin_field_path(const struct gobin *cb, const struct gobin_func *f,
		     const char *path, struct gobin_path *out, char *err,
		     size_t errlen)
{
	struct gobin *b = (struct gobin *)cb;  /* DWARF is opened lazily */
	struct tbuild tb = { .budget = 256, .ptrsize = b->ptrsize };
	const char *dot = strchr(path, '.'), *p;
	Dwarf_Die t;
	int r;

	memset(out, 0, sizeof(*out));
	if (!dot || dot == path) {
		snprintf(err, errlen, "'%s' is not a field path (NAME.FIELD...)",
			 path);
		return -EINVAL;
	}
	snprintf(out->root, sizeof(out->root), "%.*s", (int)(dot - path), path);
	r = path_root_type(b, f, out, path, &t, err, errlen);
	if (r)
		return r;
	if (!die_resolve(&t))
		goto bad_type;
	p = dot;
	if (dwarf_tag(&t) == DW_TAG_structure_type) {
		/* A struct passed by value: its fields are in registers (one
		 * integer register per scalar word, in order) or on the stack
		 * (in memory layout). Walk to the field, or to the first
		 * pointer to follow. */
		r = value_walk(&tb, &t, &p, out, path, err, errlen);
		if (r)
			return r;
		if (out->direct)
			return path_type(&tb, &t, out);
	} else if (dwarf_tag(&t) != DW_TAG_pointer_type) {
		snprintf(err, errlen, "field path '%s': '%s' is neither a "
			 "pointer nor a struct", path, out->root);
		return -EINVAL;
	}
	r = pointer_walk(&t, p, out, path, err, errlen);
	if (r < 0)
		return r;
	if (r == 0)
		return path_type(&tb, &t, out);
bad_type:
	snprintf(err, errlen, "field path '%s': DWARF type information of %s "
		 "is incomplete", path, f->name);
	return -EINVAL;
}

/* Walk state of gobin_struct_fields. */
struct leaves {
	struct tbuild tb;
	char (*out)[GOBIN_PATH_LEN];
	int n, max;
};

/* Whether a value of type t is captured as one value of a field path. */
static bool leaf_kind(const struct gobin_type *t)
{
	switch (t->kind) {
	case TK_INT: case TK_UINT: case TK_BOOL: case TK_PTR: case TK_STRING:
		return true;
	case TK_SLICE:
		return !strcmp(t->name, "[]uint8") || !strcmp(t->name, "[]byte");
	default:
		return false;
	}
}

/* Adds the leaves of struct DIE `st` under path prefix `pre`. */
static void struct_leaves(struct leaves *l, Dwarf_Die *st, const char *pre,
			  int depth)
{
	Dwarf_Die m, mt;

	if (dwarf_child(st, &m) != 0)
		return;
	do {
		const char *mn = dwarf_diename(&m);
		struct gobin_type *t;
		char path[GOBIN_PATH_LEN];

		if (dwarf_tag(&m) != DW_TAG_member || !mn || !strcmp(mn, "_") ||
		    !gobin_die_type(&m, &mt))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s.%s", pre, mn) >= sizeof(path))
			continue;
		t = gobin_dwarf_type(&l->tb, &mt, 0);
		if (!t)
			return;
		if (t->kind == TK_STRUCT && depth + 1 < GOBIN_STRUCT_DEPTH &&
		    die_resolve(&mt)) {
			struct_leaves(l, &mt, path, depth + 1);
		} else if (leaf_kind(t)) {
			if (l->n < l->max)
				snprintf(l->out[l->n], GOBIN_PATH_LEN, "%s", path);
			l->n++;
		}
		gobin_type_free(t);
	} while (dwarf_siblingof(&m, &m) == 0);
}

int gobin_struct_fields(const struct gobin *cb, const struct gobin_func *f,
			const char *root, char (*out)[GOBIN_PATH_LEN], int max)
{
	struct gobin *b = (struct gobin *)cb;  /* DWARF is opened lazily */
	struct leaves l = { .tb = { .budget = 256, .ptrsize = b->ptrsize },
			    .out = out, .max = max };
	struct gobin_path gp;
	struct gobin_type *t;
	char err[256];
	Dwarf_Die d;
	bool is_struct;
	int r;

	memset(&gp, 0, sizeof(gp));
	snprintf(gp.root, sizeof(gp.root), "%s", root);
	r = path_root_type(b, f, &gp, root, &d, err, sizeof(err));
	if (r)
		return r;
	t = gobin_dwarf_type(&l.tb, &d, 0);
	if (!t)
		return -ENOMEM;
	is_struct = t->kind == TK_STRUCT;
	gobin_type_free(t);
	if (!is_struct || !die_resolve(&d))
		return -EINVAL;
	struct_leaves(&l, &d, root, 0);
	return l.n;
}

/* ------------------------------------------------- without DWARF */

/*
 * Field `name` (len bytes) of struct descriptor *d: its type's descriptor
 * into *ft, offset into *off, and into *slots the integer registers the
 * fields before it take (-1 when unknown). False when it has none.
 */
static bool td_member(struct gobin *b, const struct gobin_td *d,
		      const char *name, size_t len, uint64_t *ft, uint64_t *off,
		      int *slots)
{
	char fn[256];

	*slots = 0;
	for (size_t i = 0; i < d->len; i++) {
		struct gobin_type *t;
		int k;

		if (gobin_td_field(b, d, i, fn, sizeof(fn), ft, off))
			return false;
		if (strlen(fn) == len && !memcmp(fn, name, len))
			return true;
		t = gobin_td_type(b, *ft, 0);
		k = t ? gobin_abi_int_slots(t) : -1;
		gobin_type_free(t);
		*slots = k < 0 || *slots < 0 ? -1 : *slots + k;
	}
	return false;
}

/* A struct field `name` (len bytes) of the descriptor at *at: moves *at
 * to its type, adds its offset to *off and the registers of the fields
 * before it to *slot. 0, or -ENOENT with a message. */
static int td_step(struct gobin *b, uint64_t *at, const char *name, size_t len,
		   uint64_t *off, int *slot, const char *path, char *err,
		   size_t errlen)
{
	struct gobin_td d;
	uint64_t ft, o;
	int slots;

	if (gobin_td_read(b, *at, &d) || d.kind != 25 /* struct */ ||
	    !td_member(b, &d, name, len, &ft, &o, &slots)) {
		snprintf(err, errlen, "field path '%s': %s has no field '%.*s'",
			 path, d.name[0] ? d.name : "the value", (int)len, name);
		return -ENOENT;
	}
	*at = ft;
	*off += o;
	*slot = *slot < 0 || slots < 0 ? -1 : *slot + slots;
	return 0;
}

/* Whether the descriptor at `at` is a pointer's; its element in *elem. */
static bool td_pointer(struct gobin *b, uint64_t at, uint64_t *elem)
{
	struct gobin_td d;

	if (gobin_td_read(b, at, &d) || d.kind != 22 /* pointer */)
		return false;
	*elem = d.elem;
	return true;
}

int gobin_field_path_td(const struct gobin *cb, const char *root_type,
			const char *path, struct gobin_path *out, char *err,
			size_t errlen)
{
	struct gobin *b = (struct gobin *)cb;  /* descriptors are read lazily */
	const bool ptr = root_type[0] == '*';
	const char *p = strchr(path, '.');
	uint64_t at = gobin_td_find(b, root_type + ptr), off = 0, elem;
	bool in_struct = false;
	int slot = 0, r;

	memset(out, 0, sizeof(*out));
	if (!p || p == path) {
		snprintf(err, errlen, "'%s' is not a field path (NAME.FIELD...)", path);
		return -EINVAL;
	}
	snprintf(out->root, sizeof(out->root), "%.*s", (int)(p - path), path);
	if (!at) {
		snprintf(err, errlen, "field path '%s': %s has no DWARF, and its "
			 "runtime type descriptors have no type '%s' (write the "
			 "type with its package path, e.g. *net/http.Request)",
			 path, b->path, root_type + ptr);
		return -ENOENT;
	}
	if (!ptr) {
		/* a struct passed by value: its fields in registers or on the
		 * stack, up to the end or a pointer field to follow */
		out->value_root = true;
		while (*p == '.') {
			const size_t len = strcspn(p + 1, ".");

			if ((r = td_step(b, &at, p + 1, len, &off, &slot, path, err, errlen)))
				return r;
			p += 1 + len;
			if (*p == '.' && td_pointer(b, at, &elem))
				break;
		}
		out->slot = slot;
		out->value_off = (int32_t)off;
		out->direct = *p != '.';
		if (out->direct)
			return path_type_of(gobin_td_type(b, at, 0), out);
	}
	/* through memory from the pointer at `at` (the root word) */
	for (off = 0; *p == '.';) {
		const size_t len = strcspn(p + 1, ".");

		if (td_pointer(b, at, &elem)) {
			if (in_struct) {
				if (out->nderef >= GOBIN_PATH_MAX_DEREF) {
					snprintf(err, errlen, "field path '%s' follows "
						 "more than %d pointers", path,
						 GOBIN_PATH_MAX_DEREF);
					return -E2BIG;
				}
				out->deref[out->nderef++] = (int32_t)off;
				off = 0;
			}
			at = elem;
		}
		if ((r = td_step(b, &at, p + 1, len, &off, &slot, path, err, errlen)))
			return r;
		in_struct = true;
		p += 1 + len;
	}
	out->offset = (int32_t)off;
	return path_type_of(gobin_td_type(b, at, 0), out);
}

/* Walk state of gobin_struct_fields_td. */
struct td_leaves {
	struct gobin *b;
	char (*out)[GOBIN_PATH_LEN];
	int n, max;
};

/* Adds the leaves of struct descriptor `at` under path prefix `pre`. */
static void td_struct_leaves(struct td_leaves *l, uint64_t at, const char *pre,
			     int depth)
{
	struct gobin_td d;

	if (gobin_td_read(l->b, at, &d) || d.kind != 25 /* struct */)
		return;
	for (size_t i = 0; i < d.len; i++) {
		char fn[GOBIN_PATH_LEN], path[GOBIN_PATH_LEN];
		uint64_t ft, off;
		struct gobin_type *t;

		if (gobin_td_field(l->b, &d, i, fn, sizeof(fn), &ft, &off) ||
		    !strcmp(fn, "_") ||
		    (size_t)snprintf(path, sizeof(path), "%s.%s", pre, fn) >= sizeof(path) ||
		    !(t = gobin_td_type(l->b, ft, 0)))
			continue;
		if (t->kind == TK_STRUCT && depth + 1 < GOBIN_STRUCT_DEPTH) {
			td_struct_leaves(l, ft, path, depth + 1);
		} else if (leaf_kind(t)) {
			if (l->n < l->max)
				snprintf(l->out[l->n], GOBIN_PATH_LEN, "%s", path);
			l->n++;
		}
		gobin_type_free(t);
	}
}

int gobin_struct_fields_td(const struct gobin *cb, const char *type_name,
			   const char *root, char (*out)[GOBIN_PATH_LEN], int max)
{
	struct gobin *b = (struct gobin *)cb;  /* descriptors are read lazily */
	struct td_leaves l = { .b = b, .out = out, .max = max };
	const uint64_t at = gobin_td_find(b, type_name);

	if (!at)
		return -ENOENT;
	td_struct_leaves(&l, at, root, 0);
	return l.n;
}
