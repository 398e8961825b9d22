/* SPDX-License-Identifier: MIT */
/*
 * Whether a user's signature fits one instance of a generic function
 * (main.Sum[go.shape.int] or main.Sum[go.shape.string]): by DWARF's
 * types, else by the shapes the instance's name spells (Go 1.21+).
 */
#include <ctype.h>
#include <string.h>

#include "gobin_int.h"

/*
 * Whether the shape `sh` (s[0, n), "int", "*uint8") is written as a type
 * in `text`: not as part of a longer name ("int64", "main.int").
 */
static bool type_in(const char *text, const char *sh, size_t n)
{
	for (const char *q = text; *q; q++)
		if (!strncmp(q, sh, n) &&
		    (q == text || (!gobin_ident_char(q[-1]) && q[-1] != '.')) &&
		    !gobin_ident_char(q[n]) && q[n] != '.')
			return true;
	return false;
}

/*
 * Whether each shape the instance's name spells ("main.Map[go.shape.string,
 * go.shape.int_0]") is a type of the signature's text: 1 or 0; -1 when
 * the name spells none ("main.Sum[...]").
 */
static int shapes_written(const char *name, const char *params, const char *results)
{
	static const char shape[] = "go.shape.";
	const char *open, *end = gobin_type_args_end(name, &open);
	const char *a;

	if (!end || !open)
		return -1;
	a = open + 1;
	while (a < end - 1) {
		const char *z = a;
		int depth = 0;
		size_t n;

		for (; z < end - 1 && (depth || *z != ','); z++)
			depth += (*z == '[' || *z == '(' || *z == '{') -
				 (*z == ']' || *z == ')' || *z == '}');
		if (strncmp(a, shape, sizeof(shape) - 1))
			return -1;
		a += sizeof(shape) - 1;
		n = (size_t)(z - a);
		while (n && isdigit((unsigned char)a[n - 1]))
			n--;
		n = n && a[n - 1] == '_' && n < (size_t)(z - a) ? n - 1 : (size_t)(z - a);
		if (!n || !(type_in(params, a, n) || (results && type_in(results, a, n))))
			return 0;
		a = z + 1;
	}
	return 1;
}

int gobin_sig_fits(const struct gobin *b, const struct gobin_func *f,
		   const char *params, const char *results)
{
	struct gobin_arg dw[16], sg[16];
	int m = gobin_func_args(b, f, dw, 16), n, i;

	if (!gobin_func_generic(f))
		return -1;
	n = gobin_sig_args(b, f, params ? params : "", results, sg, 16, NULL, 0);
	if (n < 0)
		return -2;
	if (m <= 0)
		return shapes_written(f->name, params ? params : "", results);
	/* from the last parameter back to those gc adds (.dict, recv) */
	for (i = 1; i <= n && sg[n - i].name[0] != '.' && strcmp(sg[n - i].name, "recv"); i++)
		if (i > m || strcmp(sg[n - i].type_name, dw[m - i].type_name))
			return 0;
	return 1;
}
