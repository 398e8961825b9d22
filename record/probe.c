// SPDX-License-Identifier: MIT
/* Parser of probe specifications; grammar in spec/PROBES.md. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "probe.h"

struct parser {
	const char *text;      /* the probe as written */
	char *err;
	size_t errlen;
};

/* A probe longer than this is echoed cut in messages, with its length,
 * so that the reason after it is never cut off. */
#define ECHO_MAX 300

/* Sets the message "bad probe 'TEXT': WHAT at column N" (N of `at`). */
static int fail(const struct parser *p, const char *at, const char *fmt, ...)
{
	const size_t len = strlen(p->text);
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	struct buf t = BUF_INIT;
	const char *shown = buf_shown(&t, p->text);   /* controls escaped */

	if (len > ECHO_MAX)
		snprintf(p->err, p->errlen, "bad probe '%.*s...' (%zu bytes): %s at column %zu",
			 ECHO_MAX - 40, shown, len, what, (size_t)(at - p->text) + 1);
	else
		snprintf(p->err, p->errlen, "bad probe '%s': %s at column %zu",
			 shown, what, (size_t)(at - p->text) + 1);
	buf_free(&t);
	return -EINVAL;
}

static int nomem(const struct parser *p)
{
	snprintf(p->err, p->errlen, "bad probe '%s': out of memory", p->text);
	return -ENOMEM;
}

static const char *skip_ws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

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

/*
 * Length of the item that starts at s and ends before `end`: up to the
 * first ',' outside parentheses and double quotes ("$ptr(p, 16)" is one).
 */
static size_t item_len(const char *s, const char *end)
{
	const char *q = s;
	int depth = 0, quoted = 0;

	for (; q < end && *q; q++) {
		if (*q == '"' && (q == s || q[-1] != '\\'))
			quoted = !quoted;
		else if (!quoted && *q == '(')
			depth++;
		else if (!quoted && *q == ')')
			depth--;
		else if (!quoted && !depth && *q == ',')
			break;
	}
	return (size_t)(q - s);
}

/* Adds the expression at[0..n), trimmed, to out->exprs. */
static int add_expr(const struct parser *p, struct probe_spec *out,
		    const char *at, size_t n)
{
	const char *a = at, *b = at + n;

	while (a < b && isspace((unsigned char)*a))
		a++;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	if (out->nexprs >= GTR_MAX_ARGS)
		return fail(p, a, "too many expressions (at most %d)",
			    GTR_MAX_ARGS);
	if (a == b)
		return fail(p, a, "empty expression");
	out->exprs[out->nexprs] = dup_range(a, (size_t)(b - a));
	if (!out->exprs[out->nexprs])
		return nomem(p);
	out->nexprs++;
	return 0;
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
 * Whether the text in a function's parentheses, s[0..end), lists values
 * to capture ("r.Method, r.URL.Path", "goarg1", "$ptr(p, 16)") rather
 * than a signature ("s string, n int"): no item has a blank inside (a
 * signature item is NAME TYPE), except a $ptr(...) item.
 */
static int is_capture_list(const char *s, const char *end)
{
	if (s == end)
		return 0;      /* "()": a signature without parameters */
	while (s < end) {
		const size_t n = item_len(s, end);
		const char *a = s, *b = s + n, *q;

		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		if (a == b)
			return 0;
		for (q = a; *a != '$' && q < b; q++)
			if (isspace((unsigned char)*q))
				return 0;
		s += n + (s + n < end);
	}
	return 1;
}

/*
 * Splits a signature or a capture list off the function name, which
 * starts at `fn` in the probe's text: "main.greet(s string, n int)" gives
 * "main.greet" and the signature "s string, n int"; "f(r.Method, n)" the
 * expressions r.Method and n. A group that follows a '.' names a receiver
 * ("net/http.(*conn).serve") and stays in the name.
 */
static int split_call(const struct parser *p, const char *fn,
		      struct probe_spec *out)
{
	const size_t n = strlen(out->func);
	const char *open, *close, *q;
	size_t i;
	int depth = 0, rc;

	if (!n || out->func[n - 1] != ')')
		return 0;
	for (i = n; i-- > 0;) {
		if (out->func[i] == ')')
			depth++;
		else if (out->func[i] == '(' && --depth == 0)
			break;
	}
	if (depth || i == 0 || out->func[i - 1] == '.')
		return 0;
	open = fn + i;
	close = fn + n - 1;
	if (is_capture_list(open + 1, close)) {
		for (q = open + 1; q < close;) {
			const size_t len = item_len(q, close);

			if ((rc = add_expr(p, out, q, len)))
				return rc;
			q += len + (q + len < close);
		}
		out->captures = 1;
	} else {
		out->sig = dup_trimmed(open + 1, (size_t)(close - open - 1));
		if (!out->sig)
			return nomem(p);
	}
	out->func[i] = '\0';
	return 0;
}

/*
 * [BINARY:]FUNCTION[(SIGNATURE | EXPR, ...)] at *sp, up to the first
 * blank or '"' outside (), [] and {}; BINARY ends at the last ':' there.
 */
/*
 * A source line, FILE:LINE ("main.go:42", "cmd/srv/main.go:42",
 * "BINARY:main.go:42"): the target split as BINARY:FUNCTION with a
 * FUNCTION of digits and a BINARY ending in ".go" is one. Moves that
 * part of out->binary to out->file and the number to out->line.
 */
static int line_target(const struct parser *p, const char *tok,
		       struct probe_spec *out)
{
	const char *b = out->binary, *f;
	size_t n = b ? strlen(b) : 0;
	char *end;
	long line;

	if (!b || n < 4 || strcmp(b + n - 3, ".go") || !isdigit((unsigned char)out->func[0]))
		return 0;
	line = strtol(out->func, &end, 10);
	if (*end || line <= 0 || line > INT32_MAX)
		return fail(p, tok + n + 1, "a line number from 1 is expected after '%s:'", b);
	if (out->kind == GTR_KIND_RETURN)
		return fail(p, tok, "a source line has no return; write it without 'r:'");
	if (out->sig)
		return fail(p, tok + n + 1, "a source line takes no signature");
	f = strrchr(b, ':');
	out->file = strdup(f ? f + 1 : b);
	if (!out->file)
		return nomem(p);
	if (f) {
		out->binary[f - b] = '\0';
	} else {
		free(out->binary);
		out->binary = NULL;
	}
	out->line = (int)line;
	return 0;
}

static int parse_target(const struct parser *p, const char **sp,
			struct probe_spec *out)
{
	const char *s = *sp, *tok = s, *colon = NULL, *fn;
	int depth = 0, rc;

	for (; *s; s++) {
		if (*s == '(' || *s == '[' || *s == '{') {
			depth++;
		} else if (*s == ')' || *s == ']' || *s == '}') {
			if (--depth < 0)
				return fail(p, s, "unbalanced '%c'", *s);
		} else if (!depth && (isspace((unsigned char)*s) || *s == '"')) {
			break;
		} else if (!depth && *s == ':') {
			colon = s;
		}
	}
	if (depth)
		return fail(p, s, "unclosed '(' or '[' in the function name");
	if (s == tok)
		return fail(p, tok, "expected a function name");
	if (colon == tok)
		return fail(p, tok, "empty binary before ':'");
	fn = colon ? colon + 1 : tok;
	if (fn == s)
		return fail(p, s, "expected a function name after ':'");
	if (colon && !(out->binary = dup_range(tok, (size_t)(colon - tok))))
		return nomem(p);
	if (!(out->func = dup_range(fn, (size_t)(s - fn))))
		return nomem(p);
	*sp = s;
	rc = split_call(p, fn, out);
	return rc ? rc : line_target(p, tok, out);
}

/* "(PREDICATE)" at *sp: its text, trimmed, without the parentheses. */
static int parse_predicate(const struct parser *p, const char **sp,
			   struct probe_spec *out)
{
	const char *open = *sp, *s = open + 1;
	int depth = 1;

	for (; *s && depth; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')')
			depth--;
	}
	if (depth)
		return fail(p, open, "unclosed '(' of the predicate");
	out->predicate = dup_trimmed(open + 1, (size_t)(s - 1 - open - 1));
	if (!out->predicate)
		return nomem(p);
	*sp = s;
	return 0;
}

/* The conversions a format string may hold (spec/PROBES.md, and
 * spec/OUTPUT.md for what each prints), as a message lists them. */
#define VERBS "diuxXocpsvfFeEgGaA"
#define VERBS_SAID "%d %i %u %x %X %o %c %p %s %v %f %F %e %E %g %G %a %A, " \
	"and %% for a percent sign"

/*
 * Checks the conversions of the format string whose opening quote is at
 * `q` in the probe's text, as the report applies them:
 * %[flags -+ #0][width][.precision][length hlqjztL]verb, width and
 * precision at most 4096. Writes the text position of each into at[]
 * (at most GTR_MAX_ARGS + 1) and their count to *n. 0, or -EINVAL naming
 * the column of a conversion gotrace does not know.
 */
static int check_format(const struct parser *p, const char *q, const char **at,
			int *n)
{
	*n = 0;
	for (const char *s = q + 1; *s && *s != '"'; s++) {
		const char *c = s;
		long w = 0, pr = 0;

		if (*s == '\\' && s[1] == '0')
			break;   /* the format ends there (a C string) */
		if (*s == '\\' && s[1]) {
			s++;
			continue;
		}
		if (*s != '%')
			continue;
		if (*++s == '%')
			continue;
		s += strspn(s, "-+ #0");
		for (; isdigit((unsigned char)*s); s++)
			w = w > 4096 ? w : w * 10 + (*s - '0');
		if (*s == '.')
			for (s++; isdigit((unsigned char)*s); s++)
				pr = pr > 4096 ? pr : pr * 10 + (*s - '0');
		s += strspn(s, "hlqjztL");
		if (w > 4096 || pr > 4096)
			return fail(p, c, "a width or precision over 4096 in the "
				    "format string");
		if (!*s || *s == '"' || *s == '\\' || !strchr(VERBS, *s))
			return fail(p, c, "'%.*s' is no conversion gotrace knows "
				    "(the verbs are %s) in the format string",
				    (int)(s - c) + (*s && *s != '"' && !isspace((unsigned char)*s)),
				    c, VERBS_SAID);
		if (*n <= GTR_MAX_ARGS)
			at[*n] = c;
		++*n;
	}
	return 0;
}

/* "FORMAT" at *sp, then an optional ','. */
static int parse_format(const struct parser *p, const char **sp,
			struct probe_spec *out)
{
	const char *s = *sp;
	size_t used;
	int rc = parse_string(s + 1, &used, &out->fmt);

	if (rc == -ENOMEM)
		return nomem(p);
	if (rc)
		return fail(p, s, "unterminated format string");
	if (strlen(out->fmt) > GTR_MAX_NAME)
		return fail(p, s, "format string of %zu bytes, longer than the %d "
			    "a trace file keeps", strlen(out->fmt), GTR_MAX_NAME);
	s = skip_ws(s + 1 + used);
	if (*s == ',')
		s++;
	*sp = s;
	return 0;
}

/*
 * The results of a signature at *sp, as Go writes them after the
 * parameters: "(n int, err error)", "(int, error)" or one type, "error".
 * A parenthesised group holding an operator or a quote is the predicate,
 * not results; so is one after a capture list.
 */
static int parse_results(const struct parser *p, const char **sp,
			 struct probe_spec *out)
{
	const char *s = *sp, *e;
	int depth = 0;

	if (!out->sig || !*s || *s == '"')
		return 0;
	for (e = s; *e; e++) {
		if (*e == '(' || *e == '[' || *e == '{')
			depth++;
		else if ((*e == ')' || *e == ']' || *e == '}') && --depth <= 0 &&
			 *s == '(')
			break;
		else if (!depth && (isspace((unsigned char)*e) || *e == '"'))
			break;
	}
	if (*s == '(') {
		if (!*e)
			return fail(p, s, "unclosed '(' after the signature");
		if (strcspn(s, "=<>!&|\"") < (size_t)(e - s))
			return 0;       /* the predicate */
		out->results = dup_trimmed(s + 1, (size_t)(e - s - 1));
		e++;
	} else {
		out->results = dup_trimmed(s, (size_t)(e - s));
	}
	if (!out->results)
		return nomem(p);
	*sp = e;
	return 0;
}

/*
 * Whether each of the nconv conversions of the format string (at conv[])
 * has an expression to print: 0, or -EINVAL at the first without one.
 * Expressions past the conversions are recorded all the same (JSON Lines
 * shows them), as a format string of fewer verbs chooses.
 */
static int check_pairs(const struct parser *p, const struct probe_spec *out,
		       const char *const *conv, int nconv)
{
	if (nconv > out->nexprs)
		return fail(p, conv[out->nexprs], "the format string has %d "
			    "conversion%s but %d expression%s follow%s it: this "
			    "one has no value; give one expression per conversion",
			    nconv, nconv == 1 ? "" : "s", out->nexprs,
			    out->nexprs == 1 ? "" : "s", out->nexprs == 1 ? "s" : "");
	return 0;
}

static int parse(const struct parser *p, struct probe_spec *out)
{
	const char *s = skip_ws(p->text), *fmt_at = NULL, *first = NULL;
	const char *conv[GTR_MAX_ARGS + 1], *comma = NULL;
	int rc, nconv = 0;

	if ((s[0] == 'p' || s[0] == 'r') && s[1] == ':') {
		out->kind = s[0] == 'r' ? GTR_KIND_RETURN : GTR_KIND_ENTRY;
		s += 2;
	}
	if ((rc = parse_target(p, &s, out)))
		return rc;
	s = skip_ws(s);
	if ((rc = parse_results(p, &s, out)))
		return rc;
	s = skip_ws(s);
	if (*s == '(' && (rc = parse_predicate(p, &s, out)))
		return rc;
	s = skip_ws(s);
	if (*s == '"') {
		fmt_at = s;
		if ((rc = parse_format(p, &s, out)) ||
		    (rc = check_format(p, fmt_at, conv, &nconv)))
			return rc;
		if (s[-1] == ',')
			comma = s - 1;
	}
	/* Expressions after the format: split at commas outside () and "". */
	for (s = skip_ws(s); *s; s = skip_ws(s)) {
		const size_t n = item_len(s, s + strlen(s));

		if (!first)
			first = s;
		if ((rc = add_expr(p, out, s, n)))
			return rc;
		comma = s[n] == ',' ? s + n : NULL;
		s += n + (s[n] == ',');
	}
	if (out->captures && fmt_at)
		return fail(p, fmt_at, "give either FUNCTION(EXPR, ...) or a "
			    "format string with expressions, not both");
	if (first && !fmt_at)
		return fail(p, first, "expressions need a format string before them");
	if (comma)
		return fail(p, comma, "no expression follows this ','; drop it");
	return fmt_at ? check_pairs(p, out, conv, nconv) : 0;
}

/* Whether `text` reads as a filter of gotrace-report -f, not a probe: a
 * word, blanks, then a comparison or logic operator ("goarg1 == 42"). */
static bool filter_like(const char *text)
{
	const char *s = skip_ws(text);

	if (!*s)
		return false;
	s += strcspn(s, " \t");
	if (!*s)
		return false;
	s = skip_ws(s);
	if (!*s || !strchr("=!<>&|~", *s))
		return false;
	s += strspn(s, "=!<>&|~");
	return *skip_ws(s) != '\0';   /* and something to compare with */
}

/* The first control character of `text` other than white space, or NULL. */
static const char *control_at(const char *text)
{
	for (const char *c = text; *c; c++)
		if (((unsigned char)*c < 0x20 && !isspace((unsigned char)*c)) || *c == 0x7f)
			return c;
	return NULL;
}

int probe_spec_parse(const char *text, struct probe_spec *out, char *err,
		     size_t errlen)
{
	const struct parser p = { text, err, errlen };
	int rc;

	memset(out, 0, sizeof(*out));
	out->text = strdup(text);
	const char *ctl = control_at(text);   /* every later message echoes it */
	if (ctl) {
		probe_spec_free(out);
		return fail(&p, ctl, "a control character (byte 0x%02x): a probe is text "
			    "(in a string constant write it \\x%02x)", (unsigned char)*ctl,
			    (unsigned char)*ctl);
	}
	rc = out->text ? parse(&p, out) : nomem(&p);
	if (rc == -EINVAL && filter_like(text) && strlen(text) < ECHO_MAX)
		snprintf(err, errlen, "'%s' is a filter, not a probe: gotrace-record's -f is "
			 "--force (overwrite the output file); to keep only some events while "
			 "recording, put a predicate in parentheses after the function, "
			 "'FUNCTION (%s)' (spec/PROBES.md), or filter the recording with "
			 "gotrace-report -f '%s'", text, text, text);
	if (rc)
		probe_spec_free(out);
	return rc;
}

void probe_spec_free(struct probe_spec *p)
{
	int i;

	if (!p)
		return;
	free(p->text);
	free(p->binary);
	free(p->func);
	free(p->file);
	free(p->sig);
	free(p->results);
	free(p->predicate);
	free(p->fmt);
	for (i = 0; i < p->nexprs; i++)
		free(p->exprs[i]);
	memset(p, 0, sizeof(*p));
}
