/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libgtr's redactor (format/redact.c, spec/REDACT.md): the
 * rule grammar and its errors (rule, column, what is expected), which
 * values a rule covers (names, struct fields, goargN, @strings, the
 * function glob), the keyed hash (equal values equal, a key changes it,
 * key files), and a file written through a redacting writer read back.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gtr.h"

static struct gtr_redactor *with_rules(const char *const *rules, size_t n)
{
	struct gtr_redactor *r = gtr_redactor_new();
	char err[512];

	cr_assert(r);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(gtr_redactor_add_rule(r, rules[i], err, sizeof(err)), 0,
			     "%s: %s", rules[i], err);
	return r;
}

/* The message of adding `rule` to a fresh redactor (must fail). */
static void expect_error(const char *rule, const char *want)
{
	struct gtr_redactor *r = gtr_redactor_new();
	char err[512] = "";

	cr_assert_eq(gtr_redactor_add_rule(r, rule, err, sizeof(err)), -EINVAL, "%s", rule);
	cr_assert(strstr(err, want), "rule '%s': got '%s', want '%s'", rule, err, want);
	cr_assert_eq(gtr_redactor_nrules(r), 0);
	gtr_redactor_free(r);
}

Test(redact, rule_errors_name_rule_and_column)
{
	expect_error("", "rule '', column 1: empty rule");
	expect_error("x=foo", "rule 'x=foo', column 3: unknown action (expected hash or drop)");
	expect_error("x=", "column 3: unknown action");
	expect_error("@secrets", "rule '@secrets', column 1: unknown class (expected @strings, @host, "
		     "@paths, @comm or @spec)");
	expect_error("main.f:@nope=drop", "column 8: unknown class");
	expect_error("main.*:@host", "column 1: @host, @paths and @comm are not per function");
	expect_error("f:@paths", "not per function");
	expect_error("f:@comm", "not per function");
	expect_error(":password", "column 1: empty function glob before ':'");
	expect_error("main.f:", "rule 'main.f:', column 8: no target");
	expect_error("=drop", "column 1: no target");
	expect_error("pass word", "column 5: white space or a control character");
	expect_error("a\tb", "column 2: white space");
	/* every message says what a rule is */
	expect_error("x=y", "a rule is [FUNCTION:]TARGET[=hash|drop]");
}

Test(redact, good_rules_are_kept_as_given)
{
	static const char *const rules[] = {
		"password", "*.Token=drop", "main.(*S).login:goarg2=hash", "@strings",
		"main.*:@spec", "@host", "@paths=drop", "@comm",
	};
	struct gtr_redactor *r = with_rules(rules, 8);

	cr_assert_eq(gtr_redactor_nrules(r), 8);
	cr_assert_str_eq(gtr_redactor_rules(r), "password *.Token=drop main.(*S).login:goarg2=hash "
			 "@strings main.*:@spec @host @paths=drop @comm");
	gtr_redactor_free(r);
}

/* A probe of func with args named names[], of types types[]. */
static struct gtr_probe probe(uint32_t id, const char *func, enum gtr_kind kind,
			      const char *const *names, const enum gtr_type *types, uint32_t n)
{
	struct gtr_probe p = { .id = id, .func = func, .kind = kind, .spec = func, .fmt = "",
			       .nargs = n };

	for (uint32_t i = 0; i < n; i++)
		p.args[i] = (struct gtr_arg){ .name = names[i], .type_name = "", .type = types[i],
					      .size = 8, .redacted = "" };
	return p;
}

static const char *const names[] = { "user", "password", "n", "c", "c.Token", "c.In.Key",
				     "data", "cap(data)", "ok", "f" };
static const enum gtr_type types[] = {
	GTR_TYPE_STRING, GTR_TYPE_STRING, GTR_TYPE_INT, GTR_TYPE_OTHER, GTR_TYPE_STRING,
	GTR_TYPE_UINT, GTR_TYPE_BYTES, GTR_TYPE_INT, GTR_TYPE_BOOL, GTR_TYPE_FLOAT,
};

/* args[].redacted of probe `func` under rules[n], as one string "a,b,..." */
static void redacted_of(const char *func, enum gtr_kind kind, const char *const *rules, size_t n,
			char *out, size_t len)
{
	struct gtr_redactor *r = with_rules(rules, n);
	struct gtr_probe p = probe(1, func, kind, names, types, 10);

	cr_assert_eq(gtr_redact_probe(r, &p), 0);
	out[0] = 0;
	for (uint32_t i = 0; i < p.nargs; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? "," : "",
			 p.args[i].redacted[0] ? p.args[i].redacted : "-");
	gtr_redactor_free(r);
}

Test(redact, what_rules_cover)
{
	static const struct {
		const char *rules[3];
		enum gtr_kind kind;
		const char *want;   /* args[].redacted of names[], "-" for "" */
	} cases[] = {
		{ { "password" }, GTR_KIND_ENTRY, "-,hash,-,-,-,-,-,-,-,-" },
		{ { "*.Token=drop" }, GTR_KIND_ENTRY, "-,-,-,-,drop,-,-,-,-,-" },
		/* a struct covers its fields (and has no value of its own to hash) */
		{ { "c" }, GTR_KIND_ENTRY, "-,-,-,drop,hash,hash,-,-,-,-" },
		/* goargN on entries, goretN on returns */
		{ { "goarg2", "goret1=drop" }, GTR_KIND_ENTRY, "-,hash,-,-,-,-,-,-,-,-" },
		{ { "goarg2", "goret1=drop" }, GTR_KIND_RETURN, "drop,-,-,-,-,-,-,-,-,-" },
		{ { "@strings" }, GTR_KIND_ENTRY, "hash,hash,-,-,hash,-,hash,-,-,-" },
		/* a slice's capacity goes with it */
		{ { "data" }, GTR_KIND_ENTRY, "-,-,-,-,-,-,hash,hash,-,-" },
		/* bools and floats cannot keep a hash: dropped */
		{ { "ok", "f", "n" }, GTR_KIND_ENTRY, "-,-,hash,-,-,-,-,-,drop,drop" },
		{ { "main.other:password", "main.log*:n=drop" }, GTR_KIND_ENTRY,
		  "-,-,drop,-,-,-,-,-,-,-" },
	};
	char got[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = 0;

		while (n < 3 && cases[i].rules[n])
			n++;
		redacted_of("main.login", cases[i].kind, cases[i].rules, n, got, sizeof(got));
		cr_assert_str_eq(got, cases[i].want, "case %zu (%s)", i, cases[i].rules[0]);
	}
}

Test(redact, rules_that_cover_nothing)
{
	static const char *const rules[] = { "Password", "password", "main.other:user", "@host",
					     "@strings", "main.nosuch:@spec", "main.log*:@spec" };
	struct gtr_redactor *r = with_rules(rules, 7);
	struct gtr_probe p = probe(1, "main.login", GTR_KIND_ENTRY, names, types, 10);
	const char *unused[8];
	uint32_t k = 0, n = 0;

	/* before any probe, every rule but the metadata classes is unused */
	while (n < 8 && (unused[n] = gtr_redactor_unused(r, &k)) != NULL)
		n++;
	cr_assert_eq(n, 6);
	cr_assert_eq(gtr_redact_probe(r, &p), 0);
	k = n = 0;
	while (n < 8 && (unused[n] = gtr_redactor_unused(r, &k)) != NULL)
		n++;
	cr_assert_eq(n, 3);
	cr_assert_str_eq(unused[0], "Password");
	cr_assert_str_eq(unused[1], "main.other:user");
	cr_assert_str_eq(unused[2], "main.nosuch:@spec");
	gtr_redactor_free(r);
}

Test(redact, a_predicate_goes_with_the_spec_and_stays_known)
{
	static const char *const rules[] = { "main.*:@spec" };
	struct gtr_redactor *r = with_rules(rules, 1);
	struct gtr_probe p = probe(1, "main.f", GTR_KIND_ENTRY, names, types, 3);
	struct gtr_probe q = probe(2, "main.f", GTR_KIND_RETURN, names, types, 3);

	p.spec = "main.f (n == 1234)";
	p.predicate = "n == 1234";
	cr_assert_eq(gtr_redact_probe(r, &p), 0);
	cr_assert_eq(gtr_redact_probe(r, &q), 0);
	cr_expect(!strstr(p.spec, "1234"));
	/* the report needs to know there was one (report/pair.h) */
	cr_expect_str_eq(p.predicate, "<redacted>");
	cr_expect(!q.predicate, "none stays none");
	gtr_redactor_free(r);
}

Test(redact, strongest_rule_wins_and_earlier_redaction_stays)
{
	static const char *const rules[] = { "password", "pass*=drop", "user" };
	struct gtr_redactor *r = with_rules(rules, 3);
	struct gtr_probe p = probe(7, "main.login", GTR_KIND_ENTRY, names, types, 3);

	p.args[2].redacted = "drop";   /* a file redacted before */
	cr_assert_eq(gtr_redact_probe(r, &p), 0);
	cr_assert_str_eq(p.args[0].redacted, "hash");
	cr_assert_str_eq(p.args[1].redacted, "drop");
	cr_assert_str_eq(p.args[2].redacted, "drop");
	gtr_redactor_free(r);
}

static struct gtr_value str(const char *s)
{
	return (struct gtr_value){ .kind = GTR_VAL_STR,
		.v.s = { .data = (const uint8_t *)s, .len = (uint32_t)strlen(s), .full_len = strlen(s) } };
}

Test(redact, values_hash_to_equal_values_and_drop)
{
	static const char *const rules[] = { "user", "password", "n", "data=drop", "ok" };
	struct gtr_redactor *r = with_rules(rules, 5);
	struct gtr_probe p = probe(3, "main.login", GTR_KIND_ENTRY, names, types, 10);
	struct gtr_event ev = { .probe_id = 3, .nvals = 10 };
	char a[64], b[64], c[64];
	int64_t n1;

	cr_assert_eq(gtr_redact_probe(r, &p), 0);
	ev.vals[0] = str("alice");
	ev.vals[1] = str("hunter2");
	ev.vals[2] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = 42 };
	ev.vals[6] = str("token=hunter2");
	ev.vals[8] = (struct gtr_value){ .kind = GTR_VAL_BOOL, .v.b = true };
	const struct gtr_event *o = gtr_redact_event(r, &ev);
	cr_assert_neq(o, &ev);
	cr_assert_eq(o->vals[0].kind, GTR_VAL_STR);
	cr_assert_eq(o->vals[0].v.s.len, 25);
	cr_assert_eq(o->vals[0].v.s.full_len, 25);   /* the true length is not kept */
	snprintf(a, sizeof(a), "%.*s", 25, (const char *)o->vals[0].v.s.data);
	snprintf(b, sizeof(b), "%.*s", 25, (const char *)o->vals[1].v.s.data);
	cr_assert_eq(strncmp(a, "redacted:", 9), 0, "%s", a);
	cr_assert_eq(strspn(a + 9, "0123456789abcdef"), 16, "%s", a);
	cr_assert_str_neq(a, b);
	n1 = o->vals[2].v.i;
	cr_assert_eq(o->vals[2].kind, GTR_VAL_INT);
	cr_assert_neq(n1, 42);
	cr_assert_eq(o->vals[6].kind, GTR_VAL_NONE);
	cr_assert_eq(o->vals[8].kind, GTR_VAL_NONE);
	cr_assert_eq(ev.vals[1].v.s.len, 7, "the input is left alone");

	/* the same value hashes alike, in another event too */
	ev.vals[1] = str("alice");
	ev.vals[2].v.i = 42;
	o = gtr_redact_event(r, &ev);
	snprintf(c, sizeof(c), "%.*s", 25, (const char *)o->vals[1].v.s.data);
	cr_assert_str_eq(a, c);
	cr_assert_eq(o->vals[2].v.i, n1);

	/* events of a probe no rule covers pass as they are */
	struct gtr_probe q = probe(4, "main.other", GTR_KIND_ENTRY, names + 9, types + 9, 1);
	cr_assert_eq(gtr_redact_probe(r, &q), 0);
	struct gtr_event e2 = { .probe_id = 4, .nvals = 1 };
	cr_assert_eq(gtr_redact_event(r, &e2), &e2);
	gtr_redactor_free(r);
}

Test(redact, key_decides_the_hash)
{
	static const char *const rules[] = { "@comm", "@paths=drop", "@host" };
	struct gtr_redactor *r1 = with_rules(rules, 3), *r2 = with_rules(rules, 3);
	uint8_t key[GTR_REDACT_KEY_LEN] = { 1, 2, 3 };
	char a[32], b[32];

	/* random keys: two redactors disagree */
	snprintf(a, sizeof(a), "%s", gtr_redact_comm(r1, "myprog"));
	snprintf(b, sizeof(b), "%s", gtr_redact_comm(r2, "myprog"));
	cr_assert_str_neq(a, b);
	cr_assert_eq(strlen(a), GTR_COMM_LEN, "%s", a);
	gtr_redactor_set_key(r1, key);
	gtr_redactor_set_key(r2, key);
	snprintf(a, sizeof(a), "%s", gtr_redact_comm(r1, "myprog"));
	snprintf(b, sizeof(b), "%s", gtr_redact_comm(r2, "myprog"));
	cr_assert_str_eq(a, b);
	cr_assert_str_eq(gtr_redact_path(r1, "/usr/bin/x"), "<redacted>");

	struct gtr_host h = { .hostname = "db7.internal", .kernel = "6.1" };
	gtr_redact_host(r1, &h);
	cr_assert_eq(strncmp(h.hostname, "redacted:", 9), 0);
	cr_assert_str_eq(h.kernel, "6.1");
	cr_assert_str_eq(h.redacted, "@comm @paths=drop @host");
	/* a host redacted before keeps its rules first */
	struct gtr_host h2 = { .hostname = "x", .redacted = "password" };
	gtr_redact_host(r2, &h2);
	cr_assert_str_eq(h2.redacted, "password @comm @paths=drop @host");
	gtr_redactor_free(r1);
	gtr_redactor_free(r2);
}

/* A key file with `content`; the error of loading it, "" when loaded. */
static int load_key(const char *content, size_t n, char *err, size_t len)
{
	char path[64];
	struct gtr_redactor *r = gtr_redactor_new();

	snprintf(path, sizeof(path), "/tmp/gtr-key-%d", getpid());
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fwrite(content, 1, n, f);
	fclose(f);
	err[0] = 0;
	const int rc = gtr_redactor_key_file(r, path, err, len);
	unlink(path);
	gtr_redactor_free(r);
	return rc;
}

Test(redact, key_files)
{
	char err[512];
	const char hex[] = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF\n";

	cr_assert_eq(load_key(hex, strlen(hex), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(load_key("0123456789abcdef0123456789abcdef", 32, err, sizeof(err)), 0);
	cr_assert_eq(load_key("abc\n", 4, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "expected 32 raw bytes or 64 hex digits"), "%s", err);
	cr_assert(strstr(err, "head -c 32 /dev/urandom"), "%s", err);
	cr_assert_eq(load_key(hex, 63, err, sizeof(err)), -EINVAL);

	struct gtr_redactor *r = gtr_redactor_new();
	cr_assert_eq(gtr_redactor_key_file(r, "/nonexistent/key", err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "redact key /nonexistent/key: No such file"), "%s", err);
	gtr_redactor_free(r);
}

Test(redact, redacting_writer_reads_back)
{
	static const char *const rules[] = { "password", "@host", "@comm", "@paths", "main.*:@spec" };
	struct gtr_redactor *red = with_rules(rules, 5);
	char path[64], err[256];
	const struct gtr_host host = { .hostname = "secret-host", .recorder = "r" };
	struct gtr_binary bin = { .id = 0, .path = "/home/secret/app", .build_id = "", .compiler = "gc" };
	struct gtr_probe p = probe(0, "main.login", GTR_KIND_ENTRY, names, types, 3);
	struct gtr_event ev = { .ts_ns = 10, .probe_id = 0, .pid = 5, .tid = 5, .nvals = 3,
				.cpu = GTR_CPU_UNKNOWN };
	struct gtr_process proc = { .ts_ns = 1, .pid = 5, .comm = "secretd", .binary_id = 0 };

	p.spec = "main.login \"secret %s\" user";
	p.fmt = "secret %s";
	p.nexprs = 1;
	snprintf(path, sizeof(path), "/tmp/gtr-redact-%d.gtr", getpid());
	unlink(path);
	struct gtr_writer *w = gtr_writer_create_redacted(path, 0, &host, red, err, sizeof(err));
	cr_assert(w, "%s", err);
	ev.vals[0] = str("alice");
	ev.vals[1] = str("secret-pw");
	ev.vals[2] = (struct gtr_value){ .kind = GTR_VAL_INT, .v.i = 1 };
	cr_assert_eq(gtr_writer_binary(w, &bin), 0);
	cr_assert_eq(gtr_writer_probe(w, &p), 0);
	cr_assert_eq(gtr_writer_process(w, &proc), 0);
	cr_assert_eq(gtr_writer_task(w, 5, 5, "secretd"), 0);
	cr_assert_eq(gtr_writer_event(w, &ev), 0);
	cr_assert_eq(gtr_writer_close(w, err, sizeof(err)), 0, "%s", err);
	gtr_redactor_free(red);

	/* nothing of the secret in the bytes (metadata is not compressed) */
	FILE *f = fopen(path, "rb");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	cr_assert(!memmem(buf, n, "secret", 6), "\"secret\" is in the file");

	struct gtr_reader *r = gtr_reader_open(path, err, sizeof(err));
	struct gtr_event got;
	struct gtr_drop d;
	cr_assert(r, "%s", err);
	cr_assert_eq(gtr_reader_next(r, &got, &d), GTR_ITEM_EVENT);
	cr_assert_eq(strncmp(gtr_reader_host(r)->hostname, "redacted:", 9), 0);
	cr_assert_str_eq(gtr_reader_host(r)->redacted, "password @host @comm @paths main.*:@spec");
	const struct gtr_probe *rp = gtr_reader_probe(r, 0);
	cr_assert_str_eq(rp->args[0].redacted, "");
	cr_assert_str_eq(rp->args[1].redacted, "hash");
	cr_assert_str_eq(rp->fmt, "");
	cr_assert_eq(strncmp(rp->spec, "redacted:", 9), 0);
	cr_assert_eq(strncmp(gtr_reader_binary_at(r, 0)->path, "redacted:", 9), 0);
	cr_assert_eq(strncmp(gtr_reader_process_at(r, 0)->comm, "redacted:", 9), 0);
	cr_assert_eq(strncmp(gtr_reader_comm(r, 5, 5), "redacted:", 9), 0);
	cr_assert_eq(got.vals[0].v.s.len, 5);
	cr_assert_eq(memcmp(got.vals[1].v.s.data, "redacted:", 9), 0);
	cr_assert_eq(got.vals[2].v.i, 1);
	gtr_reader_close(r);
	unlink(path);
}
