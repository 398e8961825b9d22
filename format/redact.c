/* SPDX-License-Identifier: MIT */
/*
 * Redaction (spec/REDACT.md): rules that name captured values (by glob
 * over their names, or every string) and the names a trace holds (host,
 * paths, task names, probes as written), and what becomes of them: a keyed
 * BLAKE2b hash (libsodium's crypto_generichash), so that equal values stay
 * equal, or nothing. The writer calls this on everything it writes
 * (gtr_writer_create_redacted()), so a rule holds for the recorder and for
 * a copy alike. Per probe, the rules are matched once (a plan: the action
 * on each value); events then only look their plan up.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gtr_internal.h"

#define HASH_PREFIX "redacted:"
#define DROPPED "<redacted>"
#define HEX_DIGITS 16            /* of a hashed string */
/* "redacted:" + 16 hex digits, and a NUL */
#define HASHED_LEN (sizeof(HASH_PREFIX) - 1 + HEX_DIGITS)

/* What a rule's target is. */
enum target {
	T_NAME,      /* a glob over value names */
	T_STRINGS,   /* @strings */
	T_HOST,      /* @host */
	T_PATHS,     /* @paths */
	T_COMM,      /* @comm */
	T_SPEC,      /* @spec */
};

struct rule {
	char *func;              /* glob over the probe's function, NULL: any */
	char *name;              /* T_NAME: glob over the value's name */
	char *given;             /* the rule as written */
	enum target target;
	enum gtr_redact_action action;
	bool used;               /* covered a value or name of some probe */
};

/* The action on each value of one probe. */
struct plan {
	uint8_t act[GTR_MAX_ARGS];
	bool any;
};

struct gtr_redactor {
	uint8_t key[GTR_REDACT_KEY_LEN];
	crypto_generichash_state keyed; /* BLAKE2b after the key's block: a
					 * copy of it starts each hash */
	struct rule *rules;
	uint32_t nrules, cap;
	char *text;              /* the rules as given, space-separated */
	size_t text_len;
	struct u64map probes;    /* probe id -> index in plans */
	struct plan *plans;
	uint32_t nplans, cap_plans;
	enum gtr_redact_action meta[T_SPEC + 1]; /* strongest rule per class */
	struct gtr_event ev;     /* gtr_redact_event()'s copy */
	char vals[GTR_MAX_ARGS][HASHED_LEN + 1];
	char host[HASHED_LEN + 1], path[HASHED_LEN + 1], comm[GTR_COMM_LEN + 1],
	     spec[HASHED_LEN + 1];
	char *host_rules;        /* gtr_redact_host()'s `redacted` */
};

static const char *const action_names[] = { "", "hash", "drop" };

/* Room for element n of the array *v of `size`-byte elements and *cap of
 * them, doubling. 0 or -ENOMEM. */
static int grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
	if (n < *cap)
		return 0;
	const uint32_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*v, c * size);

	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

struct gtr_redactor *gtr_redactor_new(void)
{
	struct gtr_redactor *r;

	if (sodium_init() < 0 || !(r = calloc(1, sizeof(*r))))
		return NULL;
	randombytes_buf(r->key, sizeof(r->key));
	gtr_redactor_set_key(r, r->key);
	return r;
}

void gtr_redactor_free(struct gtr_redactor *r)
{
	if (!r)
		return;
	sodium_memzero(r->key, sizeof(r->key));
	sodium_memzero(&r->keyed, sizeof(r->keyed));
	for (uint32_t i = 0; i < r->nrules; i++) {
		free(r->rules[i].func);
		free(r->rules[i].name);
		free(r->rules[i].given);
	}
	free(r->rules);
	free(r->text);
	free(r->plans);
	free(r->host_rules);
	u64map_free(&r->probes);
	free(r);
}

void gtr_redactor_set_key(struct gtr_redactor *r, const uint8_t *key)
{
	if (key != r->key)
		memcpy(r->key, key, sizeof(r->key));
	crypto_generichash_init(&r->keyed, r->key, sizeof(r->key), crypto_generichash_BYTES_MIN);
}

uint32_t gtr_redactor_nrules(const struct gtr_redactor *r)
{
	return r->nrules;
}

const char *gtr_redactor_unused(const struct gtr_redactor *r, uint32_t *k)
{
	for (; *k < r->nrules; (*k)++)
		if (!r->rules[*k].used)
			return r->rules[(*k)++].given;
	return NULL;
}

const char *gtr_redactor_rules(const struct gtr_redactor *r)
{
	return r->text ? r->text : "";
}

/* ------------------------------------------------------------ rules */

static int rule_err(char *err, size_t errlen, const char *rule, size_t col, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "rule '%s', column %zu: %s; a rule is "
			 "[FUNCTION:]TARGET[=hash|drop], e.g. '*.Password=drop' "
			 "(spec/REDACT.md)", rule, col, msg);
	return -EINVAL;
}

static const struct {
	const char *name;
	enum target t;
} classes[] = {
	{ "@strings", T_STRINGS }, { "@host", T_HOST }, { "@paths", T_PATHS },
	{ "@comm", T_COMM }, { "@spec", T_SPEC },
};

/* The class named target[n] ("@strings"...), or -1. */
static int class_of(const char *target, size_t n)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strlen(classes[i].name) == n && !memcmp(classes[i].name, target, n))
			return (int)classes[i].t;
	return -1;
}

/* Appends rule text s to r->text. 0 or -ENOMEM. */
static int add_text(struct gtr_redactor *r, const char *s)
{
	const size_t n = strlen(s);
	char *t = realloc(r->text, r->text_len + n + 2);

	if (!t)
		return -ENOMEM;
	if (r->text_len)
		t[r->text_len++] = ' ';
	memcpy(t + r->text_len, s, n + 1);
	r->text = t;
	r->text_len += n;
	return 0;
}

/* Parses rule s into *out. 0, or -EINVAL with the message in err. */
static int parse_rule(const char *s, struct rule *out, char *err, size_t errlen)
{
	const char *eq = strrchr(s, '='), *end = eq ? eq : s + strlen(s);
	const char *colon = memrchr(s, ':', (size_t)(end - s));
	const char *t = colon ? colon + 1 : s;
	int cls;

	for (const char *p = s; *p; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return rule_err(err, errlen, s, (size_t)(p - s) + 1,
					"white space or a control character (a rule is one word)");
	if (!*s)
		return rule_err(err, errlen, s, 1, "empty rule");
	out->action = GTR_REDACT_HASH;
	if (eq) {
		if (!strcmp(eq + 1, "drop"))
			out->action = GTR_REDACT_DROP;
		else if (strcmp(eq + 1, "hash"))
			return rule_err(err, errlen, s, (size_t)(eq - s) + 2,
					"unknown action (expected hash or drop)");
	}
	if (colon == s)
		return rule_err(err, errlen, s, 1, "empty function glob before ':'");
	if (t == end)
		return rule_err(err, errlen, s, (size_t)(t - s) + 1,
				"no target (a value name glob, or @strings, @host, @paths, @comm, @spec)");
	out->target = T_NAME;
	if (*t == '@') {
		if ((cls = class_of(t, (size_t)(end - t))) < 0)
			return rule_err(err, errlen, s, (size_t)(t - s) + 1,
					"unknown class (expected @strings, @host, @paths, @comm or @spec)");
		out->target = (enum target)cls;
		if (colon && cls != T_STRINGS && cls != T_SPEC)
			return rule_err(err, errlen, s, 1,
					"@host, @paths and @comm are not per function; leave out 'FUNCTION:'");
	}
	out->func = colon ? strndup(s, (size_t)(colon - s)) : NULL;
	out->name = out->target == T_NAME ? strndup(t, (size_t)(end - t)) : NULL;
	if ((colon && !out->func) || (out->target == T_NAME && !out->name)) {
		free(out->func);
		free(out->name);
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int gtr_redactor_add_rule(struct gtr_redactor *r, const char *rule, char *err, size_t errlen)
{
	struct rule x = { 0 };
	int rc = parse_rule(rule ? rule : "", &x, err, errlen);

	if (rc)
		return rc;
	/* the host, paths and task names are in every file */
	x.used = x.target == T_HOST || x.target == T_PATHS || x.target == T_COMM;
	if (!(x.given = strdup(rule)) ||
	    grow((void **)&r->rules, &r->cap, r->nrules, sizeof(*r->rules)) || add_text(r, rule))
		goto oom;
	r->rules[r->nrules++] = x;
	if (x.target != T_NAME && x.action > r->meta[x.target])
		r->meta[x.target] = x.action;
	return 0;
oom:
	free(x.func);
	free(x.name);
	free(x.given);
	if (err && errlen)
		snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* ------------------------------------------------------------ the key */

/* The key from file bytes b[n]: 32 raw, or 64 hex digits in white space. */
static bool key_from(uint8_t *key, const uint8_t *b, size_t n)
{
	const char *end = NULL;
	size_t len = 0;

	if (n == GTR_REDACT_KEY_LEN) {
		memcpy(key, b, n);
		return true;
	}
	return !sodium_hex2bin(key, GTR_REDACT_KEY_LEN, (const char *)b, n, " \t\r\n", &len, &end) &&
	       len == GTR_REDACT_KEY_LEN && end == (const char *)b + n;
}

int gtr_redactor_key_file(struct gtr_redactor *r, const char *path, char *err, size_t errlen)
{
	uint8_t b[256], key[GTR_REDACT_KEY_LEN];
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, got;
	int rc = 0;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "redact key %s: %s", path, strerror(errno));
		return rc;
	}
	while (n < (ssize_t)sizeof(b) && (got = read(fd, b + n, sizeof(b) - (size_t)n)) > 0)
		n += got;
	if (n >= 0 && got < 0) {
		rc = -errno;
		snprintf(err, errlen, "redact key %s: %s", path, strerror(errno));
	} else if (!key_from(key, b, (size_t)n)) {
		rc = -EINVAL;
		snprintf(err, errlen, "redact key %s: expected 32 raw bytes or 64 hex digits "
			 "(make one with: head -c 32 /dev/urandom > %s)", path, path);
	} else {
		gtr_redactor_set_key(r, key);
	}
	sodium_memzero(key, sizeof(key));
	sodium_memzero(b, sizeof(b));
	close(fd);
	return rc;
}

/* ------------------------------------------------------------ hashing */

/* 64 bits of the keyed hash of tag, the 8 bytes of `len` and p[n]. */
static uint64_t keyed(const struct gtr_redactor *r, char tag, uint64_t len,
		      const void *p, size_t n)
{
	crypto_generichash_state st = r->keyed;   /* the key's block done once */
	uint8_t out[crypto_generichash_BYTES_MIN], l[8];
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		l[i] = (uint8_t)(len >> (8 * i));
	crypto_generichash_update(&st, (const uint8_t *)&tag, 1);
	crypto_generichash_update(&st, l, sizeof(l));
	crypto_generichash_update(&st, p, n);
	crypto_generichash_final(&st, out, sizeof(out));
	sodium_memzero(&st, sizeof(st));
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)out[i] << (8 * i);
	return v;
}

/* "redacted:" and the first `digits` hex digits of h, into out. */
static const char *hashed_text(char *out, uint64_t h, int digits)
{
	static const char hex[] = "0123456789abcdef";
	const size_t n = sizeof(HASH_PREFIX) - 1;

	memcpy(out, HASH_PREFIX, n);
	for (int i = 0; i < digits; i++)
		out[n + (size_t)i] = hex[(h >> (60 - 4 * i)) & 15];
	out[n + (size_t)digits] = 0;
	return out;
}

/* A metadata string under `act`: itself, "<redacted>" or its hash in
 * out (digits hex digits). */
static const char *meta_str(struct gtr_redactor *r, enum gtr_redact_action act,
			    const char *s, char *out, int digits)
{
	if (!s || act == GTR_REDACT_NONE)
		return s;
	if (act == GTR_REDACT_DROP)
		return DROPPED;
	const size_t n = strnlen(s, GTR_MAX_NAME);   /* what the writer keeps */
	return hashed_text(out, keyed(r, 'm', n, s, n), digits);
}

void gtr_redact_host(struct gtr_redactor *r, struct gtr_host *h)
{
	const char *was = h->redacted ? h->redacted : "";
	const size_t n = strlen(was) + 1 + r->text_len + 1;
	char *t;

	h->hostname = meta_str(r, r->meta[T_HOST], h->hostname, r->host, HEX_DIGITS);
	if (!r->nrules)
		return;
	if ((t = malloc(n))) {
		snprintf(t, n, "%s%s%s", was, *was ? " " : "", gtr_redactor_rules(r));
		free(r->host_rules);
		r->host_rules = t;
	}
	/* out of memory: the rules alone, so the file still says it */
	h->redacted = t ? t : gtr_redactor_rules(r);
}

const char *gtr_redact_path(struct gtr_redactor *r, const char *path)
{
	return meta_str(r, r->meta[T_PATHS], path, r->path, HEX_DIGITS);
}

const char *gtr_redact_comm(struct gtr_redactor *r, const char *comm)
{
	/* "redacted:" and 7 hex digits: the 16 bytes of a task name */
	return meta_str(r, r->meta[T_COMM], comm, r->comm,
			GTR_COMM_LEN - (int)sizeof(HASH_PREFIX) + 1);
}

/* ------------------------------------------------------------ probes */

/* Whether glob g matches `name`, or a struct value `name` is a field of
 * (a prefix of it up to a '.'). */
static bool name_matches(const char *g, const char *name)
{
	char buf[GTR_MAX_NAME + 1];
	size_t n = strnlen(name, GTR_MAX_NAME);

	if (!fnmatch(g, name, 0))
		return true;
	memcpy(buf, name, n);
	buf[n] = 0;
	for (char *dot; (dot = strrchr(buf, '.'));) {
		*dot = 0;
		if (buf[0] && !fnmatch(g, buf, 0))
			return true;
	}
	return false;
}

/* Whether rule x covers value i of p (named NAME or goargN/goretN). */
static bool covers(const struct rule *x, const struct gtr_probe *p, uint32_t i)
{
	const struct gtr_arg *a = &p->args[i];
	char pos[24];

	if (x->target == T_STRINGS)
		return a->type == GTR_TYPE_STRING || a->type == GTR_TYPE_BYTES ||
		       a->type == GTR_TYPE_SLICE;
	if (x->target != T_NAME)
		return false;
	snprintf(pos, sizeof(pos), "%s%u", p->kind == GTR_KIND_RETURN ? "goret" : "goarg", i + 1);
	if (!fnmatch(x->name, pos, 0))
		return true;
	if (!a->name || !a->name[0])
		return false;
	/* the capacity of a slice goes with it: "cap(NAME)" */
	const size_t n = strlen(a->name);
	if (n > 5 && !strncmp(a->name, "cap(", 4) && a->name[n - 1] == ')' && n - 5 <= GTR_MAX_NAME) {
		char inner[GTR_MAX_NAME + 1];
		memcpy(inner, a->name + 4, n - 5);
		inner[n - 5] = 0;
		if (name_matches(x->name, inner))
			return true;
	}
	return name_matches(x->name, a->name);
}

/* What `act` does to values of type t: bools, floats and values of no
 * captured type cannot keep a hash, so they go. */
static enum gtr_redact_action effective(enum gtr_redact_action act, enum gtr_type t)
{
	if (act == GTR_REDACT_HASH &&
	    (t == GTR_TYPE_BOOL || t == GTR_TYPE_FLOAT || t == GTR_TYPE_OTHER))
		return GTR_REDACT_DROP;
	return act;
}

static enum gtr_redact_action action_of(const char *s)
{
	return s && !strcmp(s, "drop") ? GTR_REDACT_DROP
	       : s && !strcmp(s, "hash") ? GTR_REDACT_HASH : GTR_REDACT_NONE;
}

/* The plan of probe `id`: found, or a new one. NULL out of memory. */
static struct plan *plan_for(struct gtr_redactor *r, uint32_t id)
{
	const uint32_t *ix = u64map_get(&r->probes, id);

	if (ix)
		return &r->plans[*ix];
	if (grow((void **)&r->plans, &r->cap_plans, r->nplans, sizeof(*r->plans)) ||
	    u64map_put(&r->probes, id, r->nplans, UINT32_MAX))
		return NULL;
	return &r->plans[r->nplans++];
}

int gtr_redact_probe(struct gtr_redactor *r, struct gtr_probe *p)
{
	struct plan *pl = plan_for(r, p->id);
	enum gtr_redact_action spec = GTR_REDACT_NONE;

	if (!pl)
		return -ENOMEM;
	memset(pl, 0, sizeof(*pl));
	for (uint32_t k = 0; k < r->nrules; k++) {
		struct rule *x = &r->rules[k];

		if (x->func && fnmatch(x->func, p->func ? p->func : "", 0))
			continue;
		if (x->target == T_SPEC) {
			x->used = true;
			if (x->action > spec)
				spec = x->action;
		}
		for (uint32_t i = 0; i < p->nargs && i < GTR_MAX_ARGS; i++) {
			if (!covers(x, p, i))
				continue;
			x->used = true;
			if (x->action > pl->act[i])
				pl->act[i] = (uint8_t)x->action;
		}
	}
	for (uint32_t i = 0; i < p->nargs && i < GTR_MAX_ARGS; i++) {
		struct gtr_arg *a = &p->args[i];
		enum gtr_redact_action act = effective(pl->act[i], a->type);

		/* redacted before (a copy of a redacted file): the stronger */
		if (act && action_of(a->redacted) > act)
			act = action_of(a->redacted);
		pl->act[i] = (uint8_t)act;
		pl->any |= act != GTR_REDACT_NONE;
		if (act == GTR_REDACT_HASH &&
		    (a->type == GTR_TYPE_BYTES || a->type == GTR_TYPE_SLICE || a->type == GTR_TYPE_IFACE))
			a->type = GTR_TYPE_STRING;   /* "redacted:...", shown as a string */
		if (act)
			a->redacted = action_names[act];
	}
	if (spec != GTR_REDACT_NONE) {
		p->spec = meta_str(r, spec, p->spec, r->spec, HEX_DIGITS);
		p->fmt = "";   /* written by the user too: it goes with the spec */
		/* so does a predicate; that there was one stays known */
		if (p->predicate && p->predicate[0])
			p->predicate = DROPPED;
	}
	return 0;
}

/* ------------------------------------------------------------ events */

/* Value v (of slot i) under `act`, in place. */
static void redact_value(struct gtr_redactor *r, struct gtr_value *v, uint32_t i,
			 enum gtr_redact_action act)
{
	uint64_t h;

	if (act == GTR_REDACT_DROP || v->kind == GTR_VAL_BOOL) {
		v->kind = GTR_VAL_NONE;
		return;
	}
	switch (v->kind) {
	case GTR_VAL_INT:
		h = keyed(r, 'i', 8, &v->v.i, sizeof(v->v.i));
		v->v.i = (int64_t)h;
		break;
	case GTR_VAL_UINT:
		h = keyed(r, 'i', 8, &v->v.u, sizeof(v->v.u));
		v->v.u = h;
		break;
	case GTR_VAL_STR:
		h = keyed(r, 's', v->v.s.full_len, v->v.s.data, v->v.s.len);
		hashed_text(r->vals[i], h, HEX_DIGITS);
		v->v.s.data = (const uint8_t *)r->vals[i];
		v->v.s.len = (uint32_t)(HASHED_LEN);
		v->v.s.full_len = HASHED_LEN;
		break;
	default:
		break;
	}
}

const struct gtr_event *gtr_redact_event(struct gtr_redactor *r, const struct gtr_event *ev)
{
	const uint32_t *ix = u64map_get(&r->probes, ev->probe_id);
	const struct plan *pl = ix ? &r->plans[*ix] : NULL;
	const uint32_t n = ev->nvals < GTR_MAX_ARGS ? ev->nvals : GTR_MAX_ARGS;

	if (!pl || !pl->any)
		return ev;
	r->ev = *ev;
	for (uint32_t i = 0; i < n; i++)
		if (pl->act[i])
			redact_value(r, &r->ev.vals[i], i, (enum gtr_redact_action)pl->act[i]);
	return &r->ev;
}
