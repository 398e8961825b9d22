/* SPDX-License-Identifier: MIT */
/*
 * Go signatures written by the user ('main.greet(s string, n int)') for
 * binaries without DWARF: the parameter list is parsed into the same type
 * shapes dwarf.c builds (struct gobin_type), and abi.c places them.
 *
 * Syntax is Go's (The Go Programming Language Specification, "Function
 * types" and "Types"): grouped names ("a, b int"), unnamed lists
 * ("int, string"), variadic "...T", and the type forms *T, []T, [N]T,
 * map[K]V, chan T, func(...) R, interface{...}, struct{...}. Sizes and
 * alignments follow Go's (src/go/types/sizes.go, gc sizes).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gobin_int.h"

#define SIG_MAX_PARAMS 64

struct sp {
	const char *s;   /* the whole parameter text */
	size_t i;        /* read position */
	int ps;          /* pointer size of the binary */
	int depth;
	char *err;
	size_t errlen;
	const char *func; /* for messages */
	bool failed;
	const char *recv; /* a value receiver read first unwritten, its type */
	int user0;        /* v[] index of the first parameter written, after
			     an implicit pointer receiver; 0: none */
	struct gobin *b;  /* named types from its runtime type descriptors */
};

static void sp_fail(struct sp *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sp_fail(struct sp *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "signature '%.200s(%.300s)': %s", p->func,
		 p->s, msg);
}

static void skip_ws(struct sp *p)
{
	while (p->s[p->i] && isspace((unsigned char)p->s[p->i]))
		p->i++;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' ||
	       c == '-' || c == '%' || (unsigned char)c >= 0x80;
}

bool gobin_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* Reads a (possibly package-qualified) type name into out. */
static size_t read_name(struct sp *p, char *out, size_t outlen)
{
	size_t n = 0;

	skip_ws(p);
	while (name_char(p->s[p->i]) && !(p->s[p->i] == '.' && p->s[p->i + 1] == '.')) {
		if (n + 1 < outlen)
			out[n++] = p->s[p->i];
		p->i++;
	}
	out[n] = '\0';
	return n;
}

static bool accept(struct sp *p, const char *tok)
{
	const size_t n = strlen(tok);

	skip_ws(p);
	if (strncmp(p->s + p->i, tok, n) != 0)
		return false;
	/* keywords must end there: "chan" but not "channel" */
	if (gobin_ident_char(tok[n - 1]) && gobin_ident_char(p->s[p->i + n]))
		return false;
	p->i += n;
	return true;
}

static bool expect(struct sp *p, const char *tok)
{
	if (accept(p, tok))
		return true;
	sp_fail(p, "expected '%s' at column %zu", tok, p->i + 1);
	return false;
}

/* Skips a balanced (...), [...] or {...} starting at the open bracket. */
static void skip_balanced(struct sp *p)
{
	int depth = 0;

	skip_ws(p);
	do {
		const char c = p->s[p->i];

		if (!c) {
			sp_fail(p, "unbalanced brackets");
			return;
		}
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		p->i++;
	} while (depth > 0);
}

/* ------------------------------------------------------------ types */

struct known {
	const char *name;
	enum gobin_tk kind;
	int size; /* bytes; 0: pointer size; -1: 2 words; -2: 3 words */
};

/* Predeclared types, and named types of the standard library whose
 * underlying type is certain (they are part of Go's compatibility
 * promise), so users can write them without DWARF. */
static const struct known known_types[] = {
	{ "bool", TK_BOOL, 1 },
	{ "int", TK_INT, 0 }, { "int8", TK_INT, 1 }, { "int16", TK_INT, 2 },
	{ "int32", TK_INT, 4 }, { "int64", TK_INT, 8 }, { "rune", TK_INT, 4 },
	{ "uint", TK_UINT, 0 }, { "uint8", TK_UINT, 1 }, { "uint16", TK_UINT, 2 },
	{ "uint32", TK_UINT, 4 }, { "uint64", TK_UINT, 8 }, { "byte", TK_UINT, 1 },
	{ "uintptr", TK_UINT, 0 },
	{ "float32", TK_FLOAT, 4 }, { "float64", TK_FLOAT, 8 },
	{ "complex64", TK_COMPLEX, 8 }, { "complex128", TK_COMPLEX, 16 },
	{ "string", TK_STRING, -1 },
	{ "error", TK_IFACE, -1 }, { "any", TK_IFACE, -1 },
	{ "unsafe.Pointer", TK_PTR, 0 },
	{ "time.Duration", TK_INT, 8 }, { "time.Month", TK_INT, 0 },
	{ "time.Weekday", TK_INT, 0 },
	{ "os.FileMode", TK_UINT, 4 }, { "fs.FileMode", TK_UINT, 4 },
	{ "io/fs.FileMode", TK_UINT, 4 }, { "syscall.Signal", TK_INT, 0 },
	{ "context.Context", TK_IFACE, -1 }, { "fmt.Stringer", TK_IFACE, -1 },
	{ "io.Reader", TK_IFACE, -1 }, { "io.Writer", TK_IFACE, -1 },
	{ "io.Closer", TK_IFACE, -1 }, { "io.ReadCloser", TK_IFACE, -1 },
	{ "io.WriteCloser", TK_IFACE, -1 }, { "io.ReadWriter", TK_IFACE, -1 },
	{ "io.ReadWriteCloser", TK_IFACE, -1 },
	{ "net.Conn", TK_IFACE, -1 }, { "net.Listener", TK_IFACE, -1 },
	{ "net.Addr", TK_IFACE, -1 }, { "net.Error", TK_IFACE, -1 },
	{ "http.ResponseWriter", TK_IFACE, -1 },
	{ "net/http.ResponseWriter", TK_IFACE, -1 },
	{ "http.Handler", TK_IFACE, -1 }, { "net/http.Handler", TK_IFACE, -1 },
	{ "reflect.Type", TK_IFACE, -1 }, { "sort.Interface", TK_IFACE, -1 },
	{ "hash.Hash", TK_IFACE, -1 },
};

static struct gobin_type *mk(struct sp *p, enum gobin_tk kind, uint32_t size,
			     const char *name)
{
	struct gobin_type *t = gobin_type_new(kind, size, name);

	if (!t)
		sp_fail(p, "out of memory");
	return t;
}

static struct gobin_type *parse_type(struct sp *p, bool lenient);

/*
 * The type `name` a signature writes: predeclared or well known, else
 * the binary's runtime type descriptors' named type of that name; behind
 * a pointer (`lenient`) any name will do. NULL after sp_fail().
 */
static struct gobin_type *named_type(struct sp *p, const char *name, bool lenient)
{
	const uint32_t ps = (uint32_t)p->ps;
	uint64_t at;
	struct gobin_type *t;

	for (size_t k = 0; k < sizeof(known_types) / sizeof(known_types[0]); k++) {
		const struct known *kt = &known_types[k];

		if (strcmp(kt->name, name) != 0)
			continue;
		return mk(p, kt->kind,
			  kt->size > 0 ? (uint32_t)kt->size :
			  ps * (kt->size == 0 ? 1 : (uint32_t)(-kt->size + 1)), "");
	}
	if (lenient)
		return mk(p, TK_OTHER, 0, "");
	at = p->b ? gobin_td_find(p->b, name) : 0;
	if (at && (t = gobin_td_type(p->b, at, 0)))
		return t;
	sp_fail(p, "the size of type '%s' is not known without DWARF, nor "
		"from the binary's runtime type descriptors, which hold no type "
		"of that name (a named type is written with its package path, "
		"as net/http.Request); write its underlying type instead (e.g. "
		"int, string, *%s, struct{ a int; b string })", name, name);
	return NULL;
}

/* A slice of `elem` (parsed; freed here, NULL after a failure) with the
 * element's kind and size. */
static struct gobin_type *slice_of(struct sp *p, struct gobin_type *elem)
{
	struct gobin_type *t = p->failed ? NULL :
			       mk(p, TK_SLICE, 3 * (uint32_t)p->ps, "");

	if (t && elem) {
		t->elem_kind = elem->kind;
		t->elem_size = elem->size;
	}
	gobin_type_free(elem);
	return t;
}

/*
 * A type that is one pointer word whatever it refers to (*T, map, chan,
 * func): frees the parsed referent `what` and returns the pointer type.
 */
static struct gobin_type *ref_type(struct sp *p, struct gobin_type *what)
{
	gobin_type_free(what);
	return p->failed ? NULL : mk(p, TK_PTR, (uint32_t)p->ps, "");
}

/* *T: a pointer that keeps its parsed pointee `what` (t->elem), so that
 * a field path can go through it. */
static struct gobin_type *ptr_to(struct sp *p, struct gobin_type *what)
{
	struct gobin_type *t = ref_type(p, NULL);

	if (t)
		t->elem = what;
	else
		gobin_type_free(what);
	return t;
}

/* Skips the bracketed group that must follow keyword `kw` ("map[...]"). */
static bool skip_group(struct sp *p, char open, const char *kw)
{
	skip_ws(p);
	if (p->s[p->i] != open) {
		sp_fail(p, "expected '%c' after %s at column %zu", open, kw, p->i + 1);
		return false;
	}
	skip_balanced(p);
	return !p->failed;
}

/*
 * Name of the text p->s[from, p->i) into t->name, with a space kept only
 * where Go needs one: "chan int", "func(int) error", "struct{a int}".
 */
static void set_name(struct sp *p, struct gobin_type *t, size_t from)
{
	size_t o = 0;
	bool space = false;

	for (size_t i = from; i < p->i && o + 2 < sizeof(t->name); i++) {
		const char c = p->s[i];
		char prev;

		if (isspace((unsigned char)c)) {
			space = true;
			continue;
		}
		prev = o ? t->name[o - 1] : '\0';
		if (space && o && (((gobin_ident_char(c) || strchr("*[<.", c)) &&
				    (gobin_ident_char(prev) || strchr(");,", prev))) ||
				   (c == '(' && prev == ')')))
			t->name[o++] = ' ';
		space = false;
		t->name[o++] = c;
	}
	t->name[o] = '\0';
}

/* The name of a field: its own, or an embedded type's ("*pkg.T[int]":
 * "T"), allocated; NULL when out of memory. */
static char *field_name(const char *name)
{
	const char *dot;

	name += strspn(name, "*");
	dot = strrchr(name, '.');
	if (dot && !strchr(dot, '['))
		name = dot + 1;
	return strndup(name, strcspn(name, "["));
}

/* A struct's fields: "a, b int; c string; *Embedded" (after the '{'). */
static struct gobin_type *parse_struct(struct sp *p)
{
	struct gobin_type *t = mk(p, TK_STRUCT, 0, "");
	uint32_t off = 0;

	if (!t)
		return NULL;
	for (;;) {
		char names[16][64];
		int nnames = 0;
		size_t save, tpos;
		struct gobin_type *ft;

		skip_ws(p);
		if (accept(p, "}"))
			break;
		if (accept(p, ";"))
			continue;
		/* names, or an embedded type */
		save = p->i;
		for (;;) {
			char nm[64];
			size_t q;

			if (!gobin_ident_char(p->s[p->i]) || nnames >= 16)
				break;
			q = p->i;
			while (gobin_ident_char(p->s[q]))
				q++;
			snprintf(nm, sizeof(nm), "%.*s", (int)(q - p->i), p->s + p->i);
			p->i = q;
			snprintf(names[nnames++], sizeof(names[0]), "%s", nm);
			skip_ws(p);
			if (!accept(p, ","))
				break;
			skip_ws(p);
		}
		skip_ws(p);
		if (nnames == 1 && (p->s[p->i] == ';' || p->s[p->i] == '}' ||
				    p->s[p->i] == '.')) {
			p->i = save; /* embedded type T or pkg.T */
			nnames = 0;
		}
		if (nnames == 0)
			p->i = save;
		tpos = p->i;
		for (int k = 0; k < (nnames ? nnames : 1); k++) {
			struct gobin_field *nf;

			p->i = tpos; /* each name gets its own copy of the type */
			ft = parse_type(p, false);
			if (!ft)
				break;
			off = (off + ft->align - 1) / ft->align * ft->align;
			nf = realloc(t->fields, (t->nfields + 1) * sizeof(*nf));
			if (!nf) {
				gobin_type_free(ft);
				sp_fail(p, "out of memory");
				break;
			}
			t->fields = nf;
			nf[t->nfields++] = (struct gobin_field){ off, ft,
				field_name(nnames ? names[k] : ft->name) };
			off += ft->size;
		}
		if (p->failed)
			break;
		/* a struct tag */
		skip_ws(p);
		if (p->s[p->i] == '"' || p->s[p->i] == '`') {
			const char q = p->s[p->i++];

			while (p->s[p->i] && p->s[p->i] != q)
				p->i++;
			if (p->s[p->i])
				p->i++;
		}
	}
	if (p->failed) {
		gobin_type_free(t);
		return NULL;
	}
	gobin_type_set_align(t, p->ps);
	/* a final zero-size field gets a byte, so &x.f stays inside x */
	if (t->nfields && t->fields[t->nfields - 1].type->size == 0 && off)
		off++;
	t->size = (off + t->align - 1) / t->align * t->align;
	return t;
}

static struct gobin_type *parse_type_inner(struct sp *p, bool lenient)
{
	const int ps = p->ps;
	char name[256];
	struct gobin_type *t, *e;

	skip_ws(p);
	if (accept(p, "*"))
		return ptr_to(p, parse_type(p, true)); /* any pointee will do */
	if (accept(p, "(")) {
		t = parse_type(p, lenient);
		if (t && !expect(p, ")")) {
			gobin_type_free(t);
			return NULL;
		}
		return t;
	}
	if (accept(p, "[")) {
		unsigned long long n;
		char *end;

		if (accept(p, "]"))
			return slice_of(p, parse_type(p, true));
		skip_ws(p);
		n = strtoull(p->s + p->i, &end, 0);
		if (end == p->s + p->i || n > (1u << 20)) {
			sp_fail(p, "array length at column %zu must be a number "
				"(at most %u)", p->i + 1, 1u << 20);
			return NULL;
		}
		p->i = (size_t)(end - p->s);
		if (!expect(p, "]"))
			return NULL;
		e = parse_type(p, lenient);
		if (!e)
			return NULL;
		if (e->kind == TK_OTHER && !lenient) {
			gobin_type_free(e);
			return NULL;
		}
		t = mk(p, TK_ARRAY, (uint32_t)(e->size * n), "");
		if (!t || (t->fields = calloc(1, sizeof(*t->fields))) == NULL) {
			gobin_type_free(t);
			gobin_type_free(e);
			sp_fail(p, "out of memory");
			return NULL;
		}
		t->fields[0] = (struct gobin_field){ 0, e, NULL };
		t->nfields = 1;
		t->count = n;
		gobin_type_set_align(t, ps);
		return t;
	}
	if (accept(p, "<-")) {
		if (!expect(p, "chan"))
			return NULL;
		return ref_type(p, parse_type(p, true));
	}
	if (accept(p, "chan")) {
		accept(p, "<-");
		return ref_type(p, parse_type(p, true));
	}
	if (accept(p, "map")) {
		if (!skip_group(p, '[', "map"))
			return NULL;
		return ref_type(p, parse_type(p, true));
	}
	if (accept(p, "func")) {
		if (!skip_group(p, '(', "func"))
			return NULL;
		skip_ws(p);
		/* results: a list or one type, unless the parameter ends here */
		if (p->s[p->i] == '(')
			skip_balanced(p);
		else if (p->s[p->i] && !strchr(",);}]", p->s[p->i]))
			return ref_type(p, parse_type(p, true));
		return ref_type(p, NULL);
	}
	if (accept(p, "interface")) {
		if (!skip_group(p, '{', "interface"))
			return NULL;
		return mk(p, TK_IFACE, 2 * (uint32_t)ps, "");
	}
	if (accept(p, "struct")) {
		if (!expect(p, "{"))
			return NULL;
		return parse_struct(p);
	}
	if (!read_name(p, name, sizeof(name))) {
		if (p->s[p->i])
			sp_fail(p, "unexpected '%c' at column %zu", p->s[p->i], p->i + 1);
		else
			sp_fail(p, "a type is missing at the end");
		return NULL;
	}
	skip_ws(p);
	if (p->s[p->i] == '[') /* type arguments of a generic type */
		skip_balanced(p);
	return named_type(p, name, lenient);
}

/*
 * The one spelling of type names that differ in blanks alone and that
 * other code compares: the empty interface, "interface{}" or
 * "interface { }", is "interface {}" as DWARF names it (args.c tells
 * an empty interface, two words of type and data, from one with methods
 * by it).
 */
static void canon_name(struct gobin_type *t)
{
	if (t->kind == TK_IFACE && !strcmp(t->name, "interface{}"))
		snprintf(t->name, sizeof(t->name), "interface {}");
}

static struct gobin_type *parse_type(struct sp *p, bool lenient)
{
	struct gobin_type *t;
	size_t from;

	if (++p->depth > 32) {
		sp_fail(p, "types nest too deeply");
		return NULL;
	}
	skip_ws(p);
	from = p->i;
	t = parse_type_inner(p, lenient);
	if (t) {
		set_name(p, t, from);
		canon_name(t);
		gobin_type_set_align(t, p->ps);
	}
	p->depth--;
	return t;
}

/* ------------------------------------------------------------ lists */

/* One comma-separated entry of the parameter list. */
struct entry {
	size_t start, end;     /* text of the entry */
	size_t name_end;       /* > start: "name Type" form */
	bool lone;             /* a single identifier */
};

static bool is_keyword(const char *s, size_t n)
{
	static const char *const kw[] = { "chan", "func", "map", "struct",
					   "interface" };

	for (size_t k = 0; k < sizeof(kw) / sizeof(kw[0]); k++)
		if (strlen(kw[k]) == n && !strncmp(kw[k], s, n))
			return true;
	return false;
}

/* Splits p->s at top-level commas into e[max]; returns the count or -1. */
static int split_entries(struct sp *p, struct entry *e, int max)
{
	const char *s = p->s;
	int n = 0, depth = 0;
	size_t start = 0, i;

	for (i = 0;; i++) {
		const char c = s[i];

		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		if (depth < 0) {
			sp_fail(p, "unbalanced '%c' at column %zu", c, i + 1);
			return -1;
		}
		if ((c == ',' && depth == 0) || c == '\0') {
			size_t a = start, b = i, q;

			while (a < b && isspace((unsigned char)s[a]))
				a++;
			while (b > a && isspace((unsigned char)s[b - 1]))
				b--;
			if (a == b) {
				if (c == '\0' && n == 0)
					return 0; /* "()" */
				sp_fail(p, "empty parameter at column %zu", a + 1);
				return -1;
			}
			if (n >= max) {
				sp_fail(p, "more than %d parameters", max);
				return -1;
			}
			e[n] = (struct entry){ .start = a, .end = b };
			for (q = a; q < b && gobin_ident_char(s[q]); q++)
				;
			if (q > a && !is_keyword(s + a, q - a)) {
				if (q == b)
					e[n].lone = true;
				else if (isspace((unsigned char)s[q]))
					e[n].name_end = q;
			}
			n++;
			start = i + 1;
		}
		if (c == '\0')
			break;
	}
	if (depth != 0) {
		sp_fail(p, "unbalanced brackets");
		return -1;
	}
	return n;
}

/* Parses the type text s[a, b) (with "...T" for variadic). */
static struct gobin_type *entry_type(struct sp *p, size_t a, size_t b)
{
	struct gobin_type *t;
	bool variadic = false;

	while (a < b && isspace((unsigned char)p->s[a]))
		a++;
	if (b - a > 3 && !strncmp(p->s + a, "...", 3)) {
		variadic = true;
		a += 3;
	}
	p->i = a;
	t = parse_type(p, false);
	skip_ws(p);
	if (t && p->i != b) {
		sp_fail(p, "unexpected '%.*s' after type %s at column %zu",
			(int)(b > p->i ? b - p->i : 1), p->s + p->i, t->name, p->i + 1);
		gobin_type_free(t);
		return NULL;
	}
	if (t && variadic) {
		char name[256];

		snprintf(name, sizeof(name), "[]%.200s", t->name);
		t = slice_of(p, t);
		if (t) {
			snprintf(t->name, sizeof(t->name), "%s", name);
			gobin_type_set_align(t, p->ps);
		}
	}
	return t;
}

/*
 * The receiver of a method named by its symbol: "pkg.(*T).M" gives a
 * pointer; "pkg.T.M" a value of type T (value=true, its name in recv).
 * Closures ("pkg.F.func1", "pkg.(*T).M.func2") and functions have none.
 */
static bool symbol_receiver(const char *sym, bool *value, char *recv,
			    size_t recvlen)
{
	const char *slash = strrchr(sym, '/');
	const char *rest = strchr(slash ? slash : sym, '.');
	const char *parts[4];
	int n = 0, depth = 0;
	const char *last;
	size_t ln;

	*value = false;
	if (!rest)
		return false;
	rest++;
	parts[n++] = rest;
	for (const char *c = rest; *c; c++) {
		if (*c == '[' || *c == '(')
			depth++;
		else if (*c == ']' || *c == ')')
			depth--;
		else if (*c == '.' && depth == 0) {
			if (n == 4)
				return false;
			parts[n++] = c + 1;
		}
	}
	if (n != 2)
		return false;
	last = parts[1];
	ln = strlen(last);
	/* closures, go/defer wrappers and init.N are not methods */
	for (const char *pre = "func\0gowrap\0deferwrap\0"; *pre; pre += strlen(pre) + 1) {
		const size_t pl = strlen(pre);

		if (ln > pl && !strncmp(last, pre, pl) &&
		    strspn(last + pl, "0123456789") == ln - pl)
			return false;
	}
	if (strspn(last, "0123456789") == ln ||
	    (ln > 3 && !strcmp(last + ln - 3, "-fm")))
		return false; /* init.0; method values take no receiver */
	if (!strncmp(parts[0], "(*", 2))
		return true;
	*value = true;
	snprintf(recv, recvlen, "%.*s", (int)(parts[1] - 1 - parts[0]), parts[0]);
	return true;
}

/* Names a pointer receiver's type from the symbol: "(*T)" gives "*T". */
static void recv_type_name(const struct gobin_func *f, struct gobin_type *t)
{
	const char *slash = strrchr(f->name, '/');
	const char *o = strstr(slash ? slash : f->name, "(*");
	const char *c = o ? strchr(o, ')') : NULL;

	if (o && c)
		snprintf(t->name, sizeof(t->name), "*%.*s", (int)(c - o - 2), o + 2);
}

/*
 * Says, after the pclntab size check failed by `need` bytes against
 * `argsz`, that the pointer receiver is implicit when dropping the first
 * parameter written (of `params`, the signature's text) would fit:
 * "the receiver is implicit: write ReadFile(path string)". Else "".
 */
static void implicit_recv_hint(const struct sp *p, const struct gobin_func *f,
			       const struct gobin_param *v, int np,
			       const char *params, uint64_t need, int argsz,
			       char *out, size_t outlen)
{
	const char *m = strrchr(f->name, '.');
	const char *c = params;
	int depth = 0;

	out[0] = '\0';
	if (!p->user0 || np <= p->user0 || !m ||
	    need - v[p->user0].type->size > (uint64_t)argsz)
		return;
	for (; *c && (depth || *c != ','); c++)
		depth += (*c == '(' || *c == '[' || *c == '{') -
			 (*c == ')' || *c == ']' || *c == '}');
	c += *c == ',';
	c += strspn(c, " \t");
	snprintf(out, outlen, "; the receiver is implicit (gotrace passes it "
		 "first, as recv): write %s(%s)", m + 1, c);
}

/*
 * Whether the np parameters v[] (written as `params`) need more bytes
 * than the argument area pclntab records for f (_func.args covers
 * arguments and results, and the spill space of register arguments:
 * never less than the parameters); says so through p.
 */
static bool too_big(struct sp *p, const struct gobin *b,
		    const struct gobin_func *f, const struct gobin_param *v,
		    int np, const char *params)
{
	const int argsz = gobin_func_args_size(b, f);
	uint64_t need = 0;
	char hint[192];

	for (int i = 0; i < np; i++)
		need += v[i].type->size;
	if (argsz >= 0 && need > (uint64_t)argsz) {
		implicit_recv_hint(p, f, v, np, params, need, argsz, hint,
				   sizeof(hint));
		if (hint[0]) {
			sp_fail(p, "these parameters take %llu bytes but %s has "
				"only %d bytes of arguments and results (pclntab)%s",
				(unsigned long long)need, f->name, argsz, hint);
			return true;
		}
		sp_fail(p, "these parameters take %llu bytes but %s has "
			"only %d bytes of arguments and results (pclntab); "
			"check the types%s%s%s", (unsigned long long)need, f->name,
			argsz, p->recv ? " (its value receiver, " : "",
			p->recv ? p->recv : "", p->recv ? ", is read first without "
			"being written: write the parameters after it alone, or "
			"the receiver first named recv)" : "");
		return true;
	}
	return false;
}

/*
 * Parses the entries of list `text` (parameters, or results when
 * `result`) into v[np...], names unnamed results "~rN" as DWARF does.
 * Returns the new count, or -1 after sp_fail().
 */
static int parse_list(struct sp *p, const char *text, struct gobin_param *v,
		      int np, bool result)
{
	struct entry e[SIG_MAX_PARAMS];
	bool named = false;
	int ne, first = np;

	p->s = text;
	ne = split_entries(p, e, SIG_MAX_PARAMS);
	if (ne < 0)
		return -1;
	for (int i = 0; i < ne; i++)
		named |= e[i].name_end > 0;
	for (int i = 0; i < ne; i++) {
		struct gobin_param *pp = &v[np];

		pp->result = result;
		if (named && e[i].lone) {
			/* "a, b int": a takes the type of the next named entry */
			int j = i + 1;

			while (j < ne && e[j].lone)
				j++;
			if (j == ne) {
				sp_fail(p, "parameter '%.*s' has no type",
					(int)(e[i].end - e[i].start), text + e[i].start);
				return -1;
			}
			snprintf(pp->name, sizeof(pp->name), "%.*s",
				 (int)(e[i].end - e[i].start), text + e[i].start);
			pp->type = entry_type(p, e[j].name_end, e[j].end);
		} else if (named && !e[i].name_end) {
			sp_fail(p, "mixed named and unnamed parameters ('%.*s'); "
				"name all or none", (int)(e[i].end - e[i].start),
				text + e[i].start);
			return -1;
		} else if (named) {
			snprintf(pp->name, sizeof(pp->name), "%.*s",
				 (int)(e[i].name_end - e[i].start), text + e[i].start);
			pp->type = entry_type(p, e[i].name_end, e[i].end);
		} else {
			if (result)
				snprintf(pp->name, sizeof(pp->name), "~r%d", np - first);
			pp->type = entry_type(p, e[i].start, e[i].end);
		}
		if (!pp->type)
			return -1;
		np++;
	}
	return np;
}

/* A value receiver of type `recv` ("serverHandler") of method f, from
 * the runtime type descriptors; NULL when they have no such type. */
static struct gobin_type *recv_by_value(struct sp *p, const struct gobin_func *f,
					const char *recv)
{
	const char *slash = strrchr(f->name, '/');
	const char *dot = strchr(slash ? slash : f->name, '.');
	char full[512];
	struct gobin_type *t;
	uint64_t at;

	if (!p->b || !dot ||
	    (size_t)snprintf(full, sizeof(full), "%.*s.%s", (int)(dot - f->name),
			     f->name, recv) >= sizeof(full) ||
	    !(at = gobin_td_find(p->b, full)) || !(t = gobin_td_type(p->b, at, 0)))
		return NULL;
	snprintf(t->name, sizeof(t->name), "%.250s", full);
	return t;
}

/*
 * The hidden parameters gc passes before those a signature lists: the
 * dictionary of a generic instance, and a pointer receiver the user did
 * not write (its first entry named "recv" is the receiver). Into v[];
 * returns the count, or -1 after sp_fail().
 */
static int hidden_params(struct sp *p, const struct gobin *b,
			 const struct gobin_func *f, const char *params,
			 struct gobin_param *v)
{
	char recv[256] = "";
	bool value = false, has_recv;
	int np = 0;
	size_t k = strspn(params, " \t");

	if (gobin_func_generic(f) && b->compiler == GOBIN_GC) {
		/* gc passes the dictionary of a generic instance first */
		snprintf(v[np].name, sizeof(v[np].name), ".dict");
		v[np].type = mk(p, TK_PTR, (uint32_t)b->ptrsize, "unsafe.Pointer");
		if (!v[np++].type)
			return -1;
		gobin_type_set_align(v[np - 1].type, b->ptrsize);
	}
	has_recv = symbol_receiver(f->name, &value, recv, sizeof(recv));
	if (has_recv && !strncmp(params + k, "recv", 4) &&
	    isspace((unsigned char)params[k + 4])) {
		/* the user wrote the receiver ('recv T'): it is read
		 * as the first of the parameters */
	} else if (has_recv && value && (v[np].type = recv_by_value(p, f, recv))) {
		snprintf(v[np].name, sizeof(v[np].name), "recv");
		p->recv = v[np].type->name;
		np++;
	} else if (has_recv && value) {
		sp_fail(p, "%s has a value receiver of type %s, whose size is not "
			"known without DWARF; write it first and name it recv "
			"(the name marks it as the receiver), e.g. "
			"'%s(recv struct{ a int; b string }, ...)' or "
			"'%s(recv int, ...)'", f->name, recv, f->name, f->name);
		return -1;
	} else if (has_recv) {
		snprintf(v[np].name, sizeof(v[np].name), "recv");
		v[np].type = mk(p, TK_PTR, (uint32_t)b->ptrsize, "");
		if (!v[np].type)
			return -1;
		recv_type_name(f, v[np].type);
		gobin_type_set_align(v[np].type, b->ptrsize);
		np++;
		p->user0 = np;
	}
	return np;
}

/* gobin_sig_args and gobin_sig_results: the values of a signature. */
static int sig_values(const struct gobin *b, const struct gobin_func *f,
		      const char *params, const char *results, bool want_results,
		      struct gobin_arg *args, int max, char *err, size_t errlen)
{
	struct sp p = { .s = params ? params : "", .ps = b->ptrsize,
			.err = err, .errlen = errlen, .func = f->name,
			.b = (struct gobin *)b /* descriptors are read lazily */ };
	const int cap = 2 * SIG_MAX_PARAMS + 2;
	struct gobin_param *v;
	int np, n = -EINVAL;
	char tmp[1];

	if (!err || !errlen) {
		p.err = tmp;
		p.errlen = sizeof(tmp);
	}
	p.err[0] = '\0';
	if (!want_results && gobin_func_gcc_clone(b, f)) {
		snprintf(p.err, p.errlen, "%s is a copy GCC made with other "
			 "parameters than its declaration's (constants folded "
			 "in, pieces passed apart): a signature cannot describe "
			 "it; drop the signature (the copy's DWARF places its "
			 "values), or build with -gccgoflags=-fno-ipa-cp "
			 "-fno-ipa-sra to keep calls as declared", f->name);
		return -EINVAL;
	}
	v = calloc((size_t)cap, sizeof(*v));
	if (!v) {
		snprintf(p.err, p.errlen, "out of memory");
		return -ENOMEM;
	}
	np = hidden_params(&p, b, f, params ? params : "", v);
	if (np >= 0)
		np = parse_list(&p, params ? params : "", v, np, false);
	if (np < 0 || too_big(&p, b, f, v, np, params ? params : ""))
		goto out;
	if (results)
		np = parse_list(&p, results, v, np, true);
	if (np >= 0) {
		/* gccgo returns more than two words through a hidden
		 * pointer, its first argument: the results place the
		 * parameters too */
		struct gobin_field fields[SIG_MAX_PARAMS];
		struct gobin_type shell;
		const struct gobin_type *cret = gobin_abi_c_results(v, np, &shell, fields,
								    SIG_MAX_PARAMS);

		n = gobin_params_to_args(b, f, v, np, cret, want_results, args, max);
	}
out:
	for (int i = 0; i < cap; i++)
		gobin_type_free(v[i].type);
	free(v);
	return p.failed ? -EINVAL : n;
}

int gobin_sig_args(const struct gobin *b, const struct gobin_func *f,
		   const char *params, const char *results, struct gobin_arg *args,
		   int max, char *err, size_t errlen)
{
	return sig_values(b, f, params, results, false, args, max, err, errlen);
}

int gobin_sig_results(const struct gobin *b, const struct gobin_func *f,
		      const char *params, const char *results,
		      struct gobin_arg *args, int max, char *err, size_t errlen)
{
	return sig_values(b, f, params, results, true, args, max, err, errlen);
}

struct gobin_type *gobin_sig_type(const struct gobin *b, const char *text,
				  char *err, size_t errlen)
{
	struct sp p = { .s = text, .ps = b->ptrsize, .err = err,
			.errlen = errlen, .func = "type",
			.b = (struct gobin *)b /* descriptors are read lazily */ };

	return entry_type(&p, 0, strlen(text));
}
