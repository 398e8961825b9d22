/* SPDX-License-Identifier: MIT */
/*
 * Field paths ("r.URL.Path"): from a pointer parameter through structs
 * and pointers, or from a struct passed by value (its fields in
 * registers or on the stack), and the fields of such a struct that
 * gotrace captures whole. One walk serves three sources of types: DWARF,
 * the runtime type descriptors of a stripped gc binary, and the struct
 * types a signature writes ("p struct{X int; Name string}").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "dwarf_int.h"

struct tsrc;
struct tops;

/* A type a walk is at, and the source that reads it. */
struct tnode {
	const struct tops *ops;
	Dwarf_Die die;                 /* DWARF */
	uint64_t at;                   /* runtime type descriptor */
	const struct gobin_type *t;    /* written in a signature */
};

/* What a walk asks of a source of types. */
struct tops {
	/* n's kind (TK_PTR, TK_STRUCT, ...), typedefs stripped in place */
	enum gobin_tk (*kind)(struct tsrc *s, struct tnode *n);
	/* pointer n to its pointee; false when that is not known */
	bool (*elem)(struct tsrc *s, struct tnode *n);
	/* field i of struct n: its name into name[len] ("" unnamed), byte
	 * offset, type; false past the last */
	bool (*field)(struct tsrc *s, const struct tnode *n, size_t i,
		      char *name, size_t len, uint32_t *off, struct tnode *ft);
	/* n as a gobin_type (NULL: unreadable), given back with put() */
	struct gobin_type *(*type)(struct tsrc *s, const struct tnode *n);
	void (*put)(struct gobin_type *t);
	/* n's name for messages ("" unnamed) */
	void (*name)(struct tsrc *s, const struct tnode *n, char *buf, size_t len);
};

/* The binary a walk reads, and how DWARF types are built. */
struct tsrc {
	struct gobin *b;
	struct tbuild tb;
};

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

/* ------------------------------------------------------- DWARF */

static enum gobin_tk dw_kind(struct tsrc *s, struct tnode *n)
{
	(void)s;
	if (!die_resolve(&n->die))
		return TK_OTHER;
	switch (dwarf_tag(&n->die)) {
	case DW_TAG_pointer_type: return TK_PTR;
	case DW_TAG_structure_type: return TK_STRUCT;
	default: return TK_OTHER;
	}
}

static bool dw_elem(struct tsrc *s, struct tnode *n)
{
	Dwarf_Die et;

	(void)s;
	if (!gobin_die_type(&n->die, &et))
		return false;
	n->die = et;
	return true;
}

static bool dw_field(struct tsrc *s, const struct tnode *n, size_t i,
		     char *name, size_t len, uint32_t *off, struct tnode *ft)
{
	Dwarf_Die st = n->die, m;
	size_t k = 0;

	(void)s;
	if (dwarf_child(&st, &m) != 0)
		return false;
	do {
		if (dwarf_tag(&m) != DW_TAG_member || !gobin_die_type(&m, &ft->die) ||
		    k++ != i)
			continue;
		snprintf(name, len, "%s", dwarf_diename(&m) ? dwarf_diename(&m) : "");
		*off = (uint32_t)gobin_die_udata(&m, DW_AT_data_member_location, 0);
		ft->ops = n->ops;
		return true;
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

static struct gobin_type *dw_type(struct tsrc *s, const struct tnode *n)
{
	Dwarf_Die d = n->die;

	return gobin_dwarf_type(&s->tb, &d, 0);
}

static void dw_name(struct tsrc *s, const struct tnode *n, char *buf, size_t len)
{
	Dwarf_Die d = n->die;

	(void)s;
	snprintf(buf, len, "%s", dwarf_diename(&d) ? dwarf_diename(&d) : "");
}

static const struct tops dw_ops = {
	dw_kind, dw_elem, dw_field, dw_type, gobin_type_free, dw_name,
};

/* ------------------------------------- runtime type descriptors */

static enum gobin_tk td_kind(struct tsrc *s, struct tnode *n)
{
	struct gobin_td d;

	if (gobin_td_read(s->b, n->at, &d))
		return TK_OTHER;
	return d.kind == 25 ? TK_STRUCT : d.kind == 22 ? TK_PTR : TK_OTHER;
}

static bool td_elem(struct tsrc *s, struct tnode *n)
{
	struct gobin_td d;

	if (gobin_td_read(s->b, n->at, &d) || !d.elem)
		return false;
	n->at = d.elem;
	return true;
}

static bool td_field(struct tsrc *s, const struct tnode *n, size_t i,
		     char *name, size_t len, uint32_t *off, struct tnode *ft)
{
	struct gobin_td d;
	uint64_t o;

	if (gobin_td_read(s->b, n->at, &d) || d.kind != 25 || i >= d.len ||
	    gobin_td_field(s->b, &d, i, name, len, &ft->at, &o))
		return false;
	*off = (uint32_t)o;
	ft->ops = n->ops;
	return true;
}

static struct gobin_type *td_type(struct tsrc *s, const struct tnode *n)
{
	return gobin_td_type(s->b, n->at, 0);
}

static void td_name(struct tsrc *s, const struct tnode *n, char *buf, size_t len)
{
	struct gobin_td d;

	snprintf(buf, len, "%s", gobin_td_read(s->b, n->at, &d) ? "" : d.name);
}

static const struct tops td_ops = {
	td_kind, td_elem, td_field, td_type, gobin_type_free, td_name,
};

/* -------------------------------------- types a signature writes */

/*
 * Node of type t a signature wrote; a named type whose fields it does
 * not name ("main.Point", the pointee of "*main.Point") is read from the
 * runtime type descriptors when they hold it.
 */
static void sig_node(struct tsrc *s, const struct gobin_type *t, struct tnode *n);

static enum gobin_tk sig_kind(struct tsrc *s, struct tnode *n)
{
	(void)s;
	return n->t->kind;
}

static bool sig_elem(struct tsrc *s, struct tnode *n)
{
	if (!n->t->elem)
		return false;
	sig_node(s, n->t->elem, n);
	return n->ops != &td_ops || n->at;
}

static bool sig_field(struct tsrc *s, const struct tnode *n, size_t i,
		      char *name, size_t len, uint32_t *off, struct tnode *ft)
{
	const struct gobin_type *t = n->t;

	if (t->kind != TK_STRUCT || i >= t->nfields)
		return false;
	snprintf(name, len, "%s", t->fields[i].name ? t->fields[i].name : "");
	*off = t->fields[i].offset;
	sig_node(s, t->fields[i].type, ft);
	return true;
}

static struct gobin_type *sig_type(struct tsrc *s, const struct tnode *n)
{
	(void)s;
	return (struct gobin_type *)n->t;   /* borrowed: sig_put keeps it */
}

static void sig_put(struct gobin_type *t)
{
	(void)t;
}

static void sig_name(struct tsrc *s, const struct tnode *n, char *buf, size_t len)
{
	(void)s;
	snprintf(buf, len, "%s", n->t->name);
}

static const struct tops sig_ops = {
	sig_kind, sig_elem, sig_field, sig_type, sig_put, sig_name,
};

static void sig_node(struct tsrc *s, const struct gobin_type *t, struct tnode *n)
{
	memset(n, 0, sizeof(*n));
	n->ops = &sig_ops;
	n->t = t;
	if ((t->kind == TK_STRUCT || t->kind == TK_OTHER) &&
	    (!t->nfields || !t->fields[0].name) && strncmp(t->name, "struct", 6)) {
		n->ops = &td_ops;
		n->at = gobin_td_find(s->b, t->name);
	}
}

/* ----------------------------------------------------------- walk */

/*
 * Field `name` (len bytes) of struct n: its type into *ft, its offset
 * into *off; with `slot`, adds the integer registers of the fields
 * before it to *slot (-1: unknown). False when n has no such field.
 */
static bool member(struct tsrc *s, const struct tnode *n, const char *name,
		   size_t len, struct tnode *ft, uint32_t *off, int *slot)
{
	char fn[GOBIN_PATH_LEN];
	int slots = 0;

	for (size_t i = 0; n->ops->field(s, n, i, fn, sizeof(fn), off, ft); i++) {
		struct gobin_type *t;
		int k;

		if (strlen(fn) == len && !memcmp(fn, name, len)) {
			if (slot)
				*slot = *slot < 0 || slots < 0 ? -1 : *slot + slots;
			return true;
		}
		if (!slot)
			continue;
		t = ft->ops->type(s, ft);
		k = t ? gobin_abi_int_slots(t) : -1;
		ft->ops->put(t);
		slots = k < 0 || slots < 0 ? -1 : slots + k;
	}
	return false;
}

/* The type a path reaches, node n: its name, size and gtr_type. */
static int path_type(struct tsrc *s, const struct tnode *n, struct gobin_path *out)
{
	struct gobin_type *gt = n->ops->type(s, n);

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
		/* (ptr, len, cap): []byte's bytes, another's elements */
		out->type = !strcmp(gt->name, "[]uint8") || !strcmp(gt->name, "[]byte")
			    ? GTR_TYPE_BYTES : GTR_TYPE_SLICE;
		out->elem_size = gobin_elem_of(gt, &out->elem);
		break;
	case TK_ARRAY:
		/* its bytes, when its elements are single values */
		out->elem_size = gobin_elem_of(gt, &out->elem);
		out->array = out->elem_size && gt->size;
		out->type = out->array ? GTR_TYPE_SLICE : GTR_TYPE_OTHER;
		break;
	default:
		out->type = GTR_TYPE_OTHER;
		break;
	}
	n->ops->put(gt);
	return 0;
}

/* Enters pointer *n on a walk through memory: reads it first (a deref
 * of the offset so far, *off) unless it is the root word. 0, or a
 * negative errno with a message. */
static int enter_pointer(struct tsrc *s, struct tnode *n, bool root,
			 uint32_t *off, struct gobin_path *out,
			 const char *path, char *err, size_t errlen)
{
	if (!root) {
		if (out->nderef >= GOBIN_PATH_MAX_DEREF) {
			snprintf(err, errlen, "field path '%s' follows more than "
				 "%d pointers", path, GOBIN_PATH_MAX_DEREF);
			return -E2BIG;
		}
		out->deref[out->nderef++] = (int32_t)*off;
		*off = 0;
	}
	if (!n->ops->elem(s, n)) {
		snprintf(err, errlen, "field path '%s': the type a pointer on "
			 "it points to is not known", path);
		return -EINVAL;
	}
	return 0;
}

/*
 * Walks ".F.G..." (p, the rest of `path`) from root node *n: a struct
 * passed by value (`by_value`: its fields add up the byte offset and the
 * integer register of the root word, up to the end or a pointer field
 * to follow) or a pointer, through structs and pointers (out->deref).
 * Fills out; 0, or a negative errno with a message in err[errlen].
 */
static int walk(struct tsrc *s, struct tnode *n, bool by_value, const char *p,
		struct gobin_path *out, const char *path, char *err, size_t errlen)
{
	bool root = true;   /* through memory: the pointer is the root word */
	uint32_t off = 0, o;
	int slot = 0, r;

	out->value_root = by_value;
	while (*p == '.') {
		const char *name = p + 1;
		const size_t len = strcspn(name, ".");
		struct tnode ft;
		char tn[256];

		if (!len) {
			snprintf(err, errlen, "field path '%s': empty field name", path);
			return -EINVAL;
		}
		if (n->ops->kind(s, n) == TK_PTR) {
			if (by_value) {
				/* a pointer field of the struct: the root word */
				out->slot = slot;
				out->value_off = (int32_t)off;
				by_value = false;
				off = 0;
			}
			if ((r = enter_pointer(s, n, root, &off, out, path, err, errlen)))
				return r;
		}
		if (n->ops->kind(s, n) != TK_STRUCT) {
			snprintf(err, errlen, "field path '%s': '%.*s' is not a "
				 "field of a struct", path, (int)len, name);
			return -EINVAL;
		}
		if (!member(s, n, name, len, &ft, &o, by_value ? &slot : NULL)) {
			n->ops->name(s, n, tn, sizeof(tn));
			snprintf(err, errlen, "field path '%s': %s has no field "
				 "'%.*s'", path, tn[0] ? tn : "the struct",
				 (int)len, name);
			return -ENOENT;
		}
		off += o;
		root = by_value;
		*n = ft;
		p = name + len;
	}
	if (by_value) {
		out->slot = slot;
		out->value_off = (int32_t)off;
		out->direct = true;
	} else {
		out->offset = (int32_t)off;
	}
	return path_type(s, n, out);
}

/* Walk state of gobin_struct_fields. */
struct leaves {
	char (*out)[GOBIN_PATH_LEN];
	int n, max;
};

/* Whether a value of type t is captured as one value of a field path. */
static bool leaf_kind(const struct gobin_type *t)
{
	switch (t->kind) {
	case TK_INT: case TK_UINT: case TK_BOOL: case TK_PTR: case TK_STRING:
	case TK_FLOAT: case TK_SLICE:
		return true;
	case TK_ARRAY:   /* of single values: its elements (path_type()) */
		return gobin_elem_of(t, &(const char *){ NULL }) > 0;
	default:
		return false;
	}
}

/* Adds the leaves of struct node st under path prefix `pre`. */
static void struct_leaves(struct tsrc *s, struct leaves *l,
			  const struct tnode *st, const char *pre, int depth)
{
	char fn[GOBIN_PATH_LEN], path[GOBIN_PATH_LEN];
	struct tnode ft;
	uint32_t off;

	for (size_t i = 0; st->ops->field(s, st, i, fn, sizeof(fn), &off, &ft); i++) {
		struct gobin_type *t;

		if (!fn[0] || !strcmp(fn, "_") ||
		    (size_t)snprintf(path, sizeof(path), "%s.%s", pre, fn) >= sizeof(path) ||
		    !(t = ft.ops->type(s, &ft)))
			continue;
		if (t->kind == TK_STRUCT && depth + 1 < GOBIN_STRUCT_DEPTH) {
			if (ft.ops->kind(s, &ft) == TK_STRUCT)
				struct_leaves(s, l, &ft, path, depth + 1);
		} else if (leaf_kind(t)) {
			if (l->n < l->max)
				snprintf(l->out[l->n], GOBIN_PATH_LEN, "%s", path);
			l->n++;
		}
		ft.ops->put(t);
	}
}

/* ------------------------------------------------------ from DWARF */

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
 * The root node of field path `path` of `f` from DWARF: its parameter
 * out->root (named from the path). 0, or a negative errno with a message.
 */
static int dwarf_root(struct gobin *b, const struct gobin_func *f,
		      const char *path, struct gobin_path *out, struct tnode *n,
		      char *err, size_t errlen)
{
	const char *dot = strchr(path, '.');

	memset(out, 0, sizeof(*out));
	memset(n, 0, sizeof(*n));
	n->ops = &dw_ops;
	snprintf(out->root, sizeof(out->root), "%.*s",
		 (int)(dot ? dot - path : (ptrdiff_t)strlen(path)), path);
	return path_root_type(b, f, out, path, &n->die, err, errlen);
}

int gobin_field_path(const struct gobin *cb, const struct gobin_func *f,
		     const char *path, struct gobin_path *out, char *err,
		     size_t errlen)
{
	struct tsrc s = { .b = (struct gobin *)cb,  /* DWARF is opened lazily */
			  .tb = { .budget = 256, .ptrsize = cb->ptrsize } };
	const char *dot = strchr(path, '.');
	struct tnode n;
	enum gobin_tk k;
	int r;

	if (!dot || dot == path) {
		memset(out, 0, sizeof(*out));
		snprintf(err, errlen, "'%s' is not a field path (NAME.FIELD...)",
			 path);
		return -EINVAL;
	}
	if ((r = dwarf_root(s.b, f, path, out, &n, err, errlen)))
		return r;
	k = n.ops->kind(&s, &n);
	if (k != TK_STRUCT && k != TK_PTR) {
		snprintf(err, errlen, "field path '%s': '%s' is neither a "
			 "pointer nor a struct", path, out->root);
		return -EINVAL;
	}
	return walk(&s, &n, k == TK_STRUCT, dot, out, path, err, errlen);
}

int gobin_struct_fields(const struct gobin *cb, const struct gobin_func *f,
			const char *root, char (*out)[GOBIN_PATH_LEN], int max)
{
	struct tsrc s = { .b = (struct gobin *)cb,  /* DWARF is opened lazily */
			  .tb = { .budget = 256, .ptrsize = cb->ptrsize } };
	struct leaves l = { .out = out, .max = max };
	struct gobin_path gp;
	struct tnode n;
	char err[256];
	int r;

	if ((r = dwarf_root(s.b, f, root, &gp, &n, err, sizeof(err))))
		return r;
	if (n.ops->kind(&s, &n) != TK_STRUCT)
		return -EINVAL;
	struct_leaves(&s, &l, &n, root, 0);
	return l.n;
}

/* ------------------------------------------------- without DWARF */

/*
 * The root node of type `root_type` as a signature writes it: a struct
 * literal ("struct{X int}", "*struct{...}") from its own text, a named
 * type from the runtime type descriptors. *owned is the parsed type to
 * free. 0, or -ENOENT with a message naming `path`.
 */
static int typed_root(struct tsrc *s, const char *root_type, const char *path,
		      struct tnode *n, struct gobin_type **owned, char *err,
		      size_t errlen)
{
	const char *bare = root_type + strspn(root_type, "*");
	char why[512];

	*owned = NULL;
	if (strncmp(bare, "struct", 6) && !gobin_td_find(s->b, bare)) {
		snprintf(err, errlen, "field path '%s': %s has no DWARF, and its "
			 "runtime type descriptors have no type '%s' (write the "
			 "type with its package path, e.g. *net/http.Request, or "
			 "its underlying type, struct{ a int; b string })",
			 path, s->b->path, bare);
		return -ENOENT;
	}
	*owned = gobin_sig_type(s->b, root_type, why, sizeof(why));
	if (!*owned) {
		snprintf(err, errlen, "field path '%s': %s", path, why);
		return -ENOENT;
	}
	sig_node(s, *owned, n);
	return 0;
}

int gobin_field_path_td(const struct gobin *cb, const char *root_type,
			const char *path, struct gobin_path *out, char *err,
			size_t errlen)
{
	struct tsrc s = { .b = (struct gobin *)cb };  /* read lazily */
	const char *p = strchr(path, '.');
	struct gobin_type *owned;
	struct tnode n;
	enum gobin_tk k;
	int r;

	memset(out, 0, sizeof(*out));
	if (!p || p == path) {
		snprintf(err, errlen, "'%s' is not a field path (NAME.FIELD...)", path);
		return -EINVAL;
	}
	snprintf(out->root, sizeof(out->root), "%.*s", (int)(p - path), path);
	if ((r = typed_root(&s, root_type, path, &n, &owned, err, errlen)))
		return r;
	k = n.ops->kind(&s, &n);
	if (k != TK_STRUCT && k != TK_PTR) {
		snprintf(err, errlen, "field path '%s': '%s' is neither a "
			 "pointer nor a struct", path, out->root);
		r = -EINVAL;
	} else {
		r = walk(&s, &n, k == TK_STRUCT, p, out, path, err, errlen);
	}
	gobin_type_free(owned);
	return r;
}

int gobin_struct_fields_td(const struct gobin *cb, const char *type_name,
			   const char *root, char (*out)[GOBIN_PATH_LEN], int max)
{
	struct tsrc s = { .b = (struct gobin *)cb };  /* read lazily */
	struct leaves l = { .out = out, .max = max };
	struct gobin_type *owned;
	struct tnode n;
	char err[512];

	if (type_name[0] == '*' ||
	    typed_root(&s, type_name, root, &n, &owned, err, sizeof(err)))
		return -ENOENT;
	if (n.ops->kind(&s, &n) == TK_STRUCT)
		struct_leaves(&s, &l, &n, root, 0);
	gobin_type_free(owned);
	return l.n;
}
