// SPDX-License-Identifier: MIT
/* Parser of probe specifications; grammar in spec/PROBES.md. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static char *dup_trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return dup_range(s, n);
}

static int fail(const char *text, size_t col, char *err, size_t errlen,
		const char *what)
{
	snprintf(err, errlen, "bad probe '%s': %s at column %zu", text, what,
		 col + 1);
	return -EINVAL;
}

/* Unescapes a C-style string literal starting after the opening quote. */
static int parse_string(const char *s, size_t *used, char **out)
{
	size_t i = 0, n = 0, cap = strlen(s) + 1;
	char *d = malloc(cap);

	if (!d)
		return -ENOMEM;
	for (;;) {
		char c = s[i];

		if (c == '\0') {
			free(d);
			return -EINVAL;
		}
		i++;
		if (c == '"')
			break;
		if (c == '\\' && s[i]) {
			c = s[i++];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '0': c = '\0'; break;
			default: break; /* \" \\ and anything else: itself */
			}
		}
		d[n++] = c;
	}
	d[n] = '\0';
	*used = i;
	*out = d;
	return 0;
}

/*
 * Splits a signature off the function name: "main.greet(s string, n int)"
 * gives "main.greet" and "s string, n int". A group that follows a '.'
 * names a receiver ("net/http.(*conn).serve") and stays in the name.
 */
static void split_signature(struct probe_spec *p)
{
	size_t n = strlen(p->func), i;
	int depth = 0;

	if (!n || p->func[n - 1] != ')')
		return;
	for (i = n; i-- > 0;) {
		if (p->func[i] == ')')
			depth++;
		else if (p->func[i] == '(' && --depth == 0)
			break;
	}
	if (depth || i == 0 || p->func[i - 1] == '.')
		return;
	p->sig = dup_trimmed(p->func + i + 1, n - i - 2);
	p->func[i] = '\0';
}

/*
 * Whether the text in a function's parentheses lists values to capture
 * ("r.Method, r.URL.Path", "goarg1") rather than a signature ("s string,
 * n int"): no item has a blank inside (a signature item is NAME TYPE).
 */
static int is_capture_list(const char *s)
{
	const char *p = s;

	if (!*s)
		return 0;      /* "()": a signature without parameters */
	while (*p) {
		size_t n = 0, a = 0, b;
		int d = 0;

		for (; p[n] && (d || p[n] != ','); n++)
			d += p[n] == '(' ? 1 : p[n] == ')' ? -1 : 0;
		b = n;

		while (a < b && isspace((unsigned char)p[a]))
			a++;
		while (b > a && isspace((unsigned char)p[b - 1]))
			b--;
		if (a == b)
			return 0;
		for (size_t i = a; i < b; i++)
			if (isspace((unsigned char)p[i]) && p[a] != '$')
				return 0;
		p += n + (p[n] == ',');
	}
	return 1;
}

int probe_spec_parse(const char *text, struct probe_spec *out, char *err,
		     size_t errlen)
{
	const char *s = text, *tok, *colon = NULL;
	int depth = 0;

	memset(out, 0, sizeof(*out));
	out->text = strdup(text);
	if (!out->text)
		return -ENOMEM;
	while (isspace((unsigned char)*s))
		s++;
	if ((s[0] == 'p' || s[0] == 'r') && s[1] == ':') {
		out->kind = s[0] == 'r' ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		s += 2;
	}
	/* The target runs to the first blank outside (), [] and {}. */
	tok = s;
	for (; *s; s++) {
		if (*s == '(' || *s == '[' || *s == '{')
			depth++;
		else if (*s == ')' || *s == ']' || *s == '}')
			depth--;
		else if (depth == 0 && isspace((unsigned char)*s))
			break;
		else if (depth == 0 && *s == '"')
			break;
		else if (depth == 0 && *s == ':')
			colon = s;
		if (depth < 0)
			return fail(text, s - text, err, errlen, "unbalanced ')'");
	}
	if (depth != 0)
		return fail(text, s - text, err, errlen,
			    "unclosed '(' or '[' in the function name");
	if (s == tok)
		return fail(text, tok - text, err, errlen,
			    "expected a function name");
	if (colon) {
		out->binary = dup_range(tok, colon - tok);
		out->func = dup_range(colon + 1, s - colon - 1);
		if (!*out->binary)
			return fail(text, tok - text, err, errlen,
				    "empty binary before ':'");
	} else {
		out->func = dup_range(tok, s - tok);
	}
	if (!out->func || !*out->func)
		return fail(text, s - text, err, errlen,
			    "expected a function name after ':'");
	split_signature(out);
	if (out->sig && is_capture_list(out->sig)) {
		/* FUNCTION(r.Method, r.URL.Path): values to capture. */
		char *list = out->sig, *q = list;

		out->sig = NULL;
		while (*q) {
			/* split at commas outside parentheses: $ptr(p, 16) */
			char *item = q;
			int d = 0;

			for (; *q && (d || *q != ','); q++)
				d += *q == '(' ? 1 : *q == ')' ? -1 : 0;
			if (out->nexprs >= GTR_MAX_ARGS) {
				free(list);
				return fail(text, 0, err, errlen,
					    "too many expressions (at most 32)");
			}
			out->exprs[out->nexprs++] = dup_trimmed(item, q - item);
			if (*q)
				q++;
		}
		free(list);
		out->captures = 1;
	}

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '(') {
		const char *p0 = ++s;

		for (depth = 1; *s && depth; s++) {
			if (*s == '(')
				depth++;
			else if (*s == ')')
				depth--;
		}
		if (depth)
			return fail(text, p0 - 1 - text, err, errlen,
				    "unclosed '(' of the predicate");
		out->predicate = dup_trimmed(p0, s - 1 - p0);
		while (isspace((unsigned char)*s))
			s++;
	}
	if (*s == '"') {
		size_t used;

		if (parse_string(s + 1, &used, &out->fmt))
			return fail(text, s - text, err, errlen,
				    "unterminated format string");
		s += 1 + used;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == ',')
			s++;
	}
	/* Expressions: split at commas outside parentheses and quotes. */
	while (*s) {
		const char *e0;
		int q = 0;

		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		e0 = s;
		for (depth = 0; *s; s++) {
			if (*s == '"' && (s == e0 || s[-1] != '\\'))
				q = !q;
			else if (!q && *s == '(')
				depth++;
			else if (!q && *s == ')')
				depth--;
			else if (!q && depth == 0 && *s == ',')
				break;
		}
		if (out->nexprs >= GTR_MAX_ARGS)
			return fail(text, e0 - text, err, errlen,
				    "too many expressions (at most 32)");
		out->exprs[out->nexprs] = dup_trimmed(e0, s - e0);
		if (!*out->exprs[out->nexprs])
			return fail(text, e0 - text, err, errlen,
				    "empty expression");
		out->nexprs++;
		if (*s == ',')
			s++;
	}
	if (out->captures && out->fmt)
		return fail(text, 0, err, errlen, "give either FUNCTION(EXPR, ...) "
			    "or a format string with expressions, not both");
	if (out->nexprs && !out->fmt && !out->captures)
		return fail(text, 0, err, errlen,
			    "expressions need a format string before them");
	return 0;
}

void probe_spec_free(struct probe_spec *p)
{
	int i;

	if (!p)
		return;
	free(p->text);
	free(p->binary);
	free(p->func);
	free(p->sig);
	free(p->predicate);
	free(p->fmt);
	for (i = 0; i < p->nexprs; i++)
		free(p->exprs[i]);
	memset(p, 0, sizeof(*p));
}
