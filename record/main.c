// SPDX-License-Identifier: MIT
/*
 * gotrace-record: attach uprobes to functions of Go programs, capture their
 * arguments with the calling convention the binary uses, and write a .gtr
 * trace file (spec/FORMAT.md).
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "gobin.h"
#include "gtr.h"
#include "probe.h"
#include "insn.h"

#define GOTRACE_VERSION "0.1.0"
#define MAX_PROBES 1000

const char *argp_program_version = "gotrace-record " GOTRACE_VERSION;
static const char doc[] =
	"Record calls of Go functions, with their arguments, to a trace file.\n"
	"\n"
	"USAGE: gotrace-record -o FILE [OPTIONS] PROBE... -- CMD [ARGS...]\n"
	"       gotrace-record -o FILE -p PID [OPTIONS] PROBE...\n"
	"\n"
	"PROBE is [BINARY:]FUNCTION [\"FORMAT\" EXPR, ...] as in bcc's trace.py;\n"
	"FUNCTION is the full Go symbol; EXPR is goargN or a parameter name.\n"
	"\n"
	"EXAMPLES:\n"
	"  gotrace-record -o t.gtr 'main.add \"%d %d\" goarg1, goarg2' -- ./app\n"
	"                          # run ./app, record main.add with 2 arguments\n"
	"  gotrace-record -o t.gtr -p 1234 'net/http.(*conn).serve'\n"
	"                          # attach to PID 1234 until Ctrl-C\n"
	"  gotrace-report t.gtr    # print what was recorded\n";

static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "Write the trace to FILE (required)", 0 },
	{ "pid", 'p', "PID", 0, "Trace the running process PID", 0 },
	{ "force", 'f', NULL, 0, "Overwrite FILE if it exists", 0 },
	{ "string-size", 's', "BYTES", 0,
	  "Capture at most BYTES of each string (default 64, max 512)", 0 },
	{ "exclude", 'x', "GLOB", 0, "Skip functions matching GLOB (repeatable)", 0 },
	{ "max-probes", 'm', "N", 0, "Refuse to attach more than N probes (default 1000)", 0 },
	{ "buffer-size", 'b', "BYTES", 0,
	  "Ring buffer size (power of two, default 16M; K and M suffixes)", 0 },
	{ "quiet", 'q', NULL, 0, "Print nothing but errors", 0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's log (twice: debug)", 0 },
	{},
};

struct env {
	const char *output;
	pid_t pid;
	unsigned flags;
	unsigned str_max;
	int quiet, verbose;
	int nspecs;
	char *specs[MAX_PROBES];
	char **cmd;     /* after "--", NULL-terminated */
	unsigned max_probes;
	unsigned ringbuf;    /* bytes, power of two */
	int nexcludes;
	char *excludes[64];
};

static struct env env = { .str_max = 64, .max_probes = 1000, .ringbuf = 16u << 20 };

static long parse_num(const char *arg, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max) {
		fprintf(stderr, "gotrace-record: invalid %s '%s' (expected a "
			"number from %ld to %ld)\n", what, arg, min, max);
		exit(2);
	}
	return v;
}

/* Parses a power-of-two byte count with an optional K or M suffix. */
static unsigned parse_size(const char *arg, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (errno || end == arg || *end || v < 4096 || v > (1ul << 30) ||
	    (v & (v - 1))) {
		fprintf(stderr, "gotrace-record: invalid %s '%s' (expected a "
			"power of two from 4K to 1024M)\n", what, arg);
		exit(2);
	}
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'o': env.output = arg; break;
	case 'p': env.pid = parse_num(arg, "PID", 1, INT_MAX); break;
	case 'f': env.flags |= GTR_W_FORCE; break;
	case 's': env.str_max = parse_num(arg, "string size", 0, GT_STR_MAX); break;
	case 'q': env.quiet = 1; break;
	case 'b': env.ringbuf = parse_size(arg, "buffer size"); break;
	case 'x':
		if (env.nexcludes >= 64)
			argp_error(state, "too many --exclude (at most 64)");
		env.excludes[env.nexcludes++] = arg;
		break;
	case 'm': env.max_probes = parse_num(arg, "probe count", 1, 1000000); break;
	case 'v': env.verbose++; break;
	case ARGP_KEY_ARG:
		if (env.nspecs >= MAX_PROBES)
			argp_error(state, "too many probes (at most %d)", MAX_PROBES);
		env.specs[env.nspecs++] = arg;
		break;
	case ARGP_KEY_END:
		if (!env.output)
			argp_error(state, "no output file; give one with -o FILE");
		if (!env.nspecs)
			argp_error(state, "no probe given; name a function, e.g. 'main.add'");
		if (env.pid && env.cmd)
			argp_error(state, "give either -p PID or -- CMD, not both");
		if (!env.pid && !env.cmd)
			argp_error(state, "nothing to trace; give -p PID or -- CMD [ARGS...]");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ------------------------------------------------------------ probes */

struct binary {
	char *path;          /* as the user named it, or the resolved default */
	char *attach_path;   /* path given to the kernel (/proc/PID/exe, ...) */
	struct gobin *gb;
	uint32_t id;
};

struct probe {
	struct probe_spec spec;
	struct binary *bin;
	struct gobin_func fn;
	uint64_t *sites;        /* file offsets of its uprobes */
	int nsites;
	struct gtr_probe meta;
	struct gt_plan plan;
	int nargs;
	struct gobin_arg args[GTR_MAX_ARGS];
};

static struct binary binaries[MAX_PROBES];
static int nbinaries;
static struct probe **probes;  /* each allocated once: metas point into them */
static int nprobes;

/* Resolves CMD's executable through PATH, as execvp would. */
static char *which(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return strdup(cmd);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n,
			 n ? path : ".", cmd);
		if (access(buf, X_OK) == 0)
			return strdup(buf);
		path += n + (colon ? 1 : 0);
	}
	return strdup(cmd);
}

static struct binary *binary_get(const char *path, const char *attach_path)
{
	char err[512];
	int i;

	for (i = 0; i < nbinaries; i++)
		if (!strcmp(binaries[i].path, path))
			return &binaries[i];
	binaries[nbinaries].gb = gobin_open(attach_path, err, sizeof(err));
	if (!binaries[nbinaries].gb) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return NULL;
	}
	binaries[nbinaries].path = strdup(path);
	binaries[nbinaries].attach_path = strdup(attach_path);
	binaries[nbinaries].id = nbinaries;
	return &binaries[nbinaries++];
}

/*
 * Finds the value an expression names: goargN (entry probes), goretN or
 * retval (return probes; retval = goret1), or a parameter/result name.
 */
static int resolve_expr(const struct probe *p, const char *expr)
{
	const char *pfx = p->spec.kind == GTR_KIND_RETURN ? "goret" : "goarg";
	char *end;
	int i;

	if (p->spec.kind == GTR_KIND_RETURN && !strcmp(expr, "retval"))
		return p->nargs ? 0 : -ERANGE;
	if (!strncmp(expr, pfx, 5) && expr[5]) {
		long n = strtol(expr + 5, &end, 10);

		if (!*end && n >= 1 && n <= p->nargs)
			return n - 1;
		if (!*end)
			return -ERANGE;
	}
	for (i = 0; i < p->nargs; i++)
		if (p->args[i].name[0] && !strcmp(p->args[i].name, expr))
			return i;
	return -ENOENT;
}

static void print_arg_names(const struct probe *p)
{
	int i;

	for (i = 0; i < p->nargs; i++)
		fprintf(stderr, "%s%s", i ? ", " : "",
			p->args[i].name[0] ? p->args[i].name : "?");
	if (!p->nargs)
		fprintf(stderr, "no parameters");
}

/* Turns one argument's location into a fetch of the plan. */
static void plan_fetch(struct gt_fetch *f, const struct gobin_arg *a)
{
	memset(f, 0, sizeof(*f));
	if (!a->npieces || a->pieces[0].kind == GT_LOC_NONE)
		return;
	f->src.loc = a->pieces[0].kind;
	f->src.reg = a->pieces[0].reg;
	f->src.off = a->pieces[0].offset;
	f->src.size = a->pieces[0].size;
	switch (a->type) {
	case GTR_TYPE_INT:
		f->flags = GT_F_SIGNED;
		/* fall through */
	case GTR_TYPE_UINT:
	case GTR_TYPE_BOOL:
	case GTR_TYPE_PTR:
	case GTR_TYPE_WORD:
		f->op = GT_OP_WORD;
		break;
	case GTR_TYPE_BYTES:
		if (a->npieces == 1) {
			/* $ptr(E, SIZE): a->size bytes where E points. */
			f->op = GT_OP_MEM;
			f->mem_size = a->size;
			break;
		}
		/* []byte is (ptr, len, cap), read like a string */
		__attribute__((fallthrough));
	case GTR_TYPE_STRING:
		if (a->npieces < 2 || a->pieces[1].kind == GT_LOC_NONE)
			return;
		f->op = GT_OP_STRING;
		f->src2.loc = a->pieces[1].kind;
		f->src2.reg = a->pieces[1].reg;
		f->src2.off = a->pieces[1].offset;
		f->src2.size = a->pieces[1].size;
		break;
	default:
		break;   /* floats in XMM, aggregates: unavailable */
	}
}

/*
 * Reads up to `max` bytes of the code of `fn` into a new buffer; returns
 * its length in *len, or NULL.
 */
static uint8_t *read_code(const struct binary *b, const struct gobin_func *fn,
			  size_t max, size_t *len)
{
	size_t n = fn->end > fn->entry ? fn->end - fn->entry : 0;
	uint8_t *code;
	ssize_t got;
	int fd;

	if (n > max)
		n = max;
	code = malloc(n ? n : 1);
	fd = open(b->attach_path, O_RDONLY | O_CLOEXEC);
	if (!code || fd < 0) {
		free(code);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	got = pread(fd, code, n, fn->file_offset);
	close(fd);
	if (got <= 0) {
		free(code);
		return NULL;
	}
	*len = got;
	return code;
}

/*
 * Where the uprobes of `p` go, as file offsets: after the stack check for
 * an entry probe, every RET for a return probe (never uretprobes: the Go
 * runtime copies stacks and would find the kernel's trampoline address).
 */
/*
 * Adds the value of "$ptr(E, SIZE)": SIZE bytes of memory at the address
 * that value E (goargN or a name) holds. Returns its index, -ENOENT when
 * E is unknown, or -EINVAL after printing why.
 */
static int add_ptr_value(struct probe *p, const char *x)
{
	char inner[128];
	const char *comma = strrchr(x, ',');
	size_t len = strlen(x), n;
	struct gobin_arg *a;
	unsigned long size;
	char *end;
	int root, k;

	if (!comma || x[len - 1] != ')' || (n = comma - (x + 5)) >= sizeof(inner)) {
		fprintf(stderr, "gotrace-record: probe '%s': bad '%s'; write "
			"$ptr(EXPR, SIZE), e.g. $ptr(goarg1, 16)\n",
			p->spec.text, x);
		return -EINVAL;
	}
	memcpy(inner, x + 5, n);
	inner[n] = '\0';
	while (n && inner[n - 1] == ' ')
		inner[--n] = '\0';
	errno = 0;
	size = strtoul(comma + 1, &end, 0);
	while (*end == ' ')
		end++;
	if (errno || *end != ')' || !size || size > GT_STR_MAX) {
		fprintf(stderr, "gotrace-record: probe '%s': bad size in '%s'; "
			"give 1 to %d bytes\n", p->spec.text, x, GT_STR_MAX);
		return -EINVAL;
	}
	root = resolve_expr(p, inner + strspn(inner, " "));
	if (root < 0)
		return -ENOENT;
	if (p->meta.nargs >= GT_MAX_FETCH) {
		fprintf(stderr, "gotrace-record: probe '%s': too many values "
			"(at most %d)\n", p->spec.text, GT_MAX_FETCH);
		return -EINVAL;
	}
	if (!p->args[root].npieces ||
	    p->args[root].pieces[0].kind == GT_LOC_NONE) {
		fprintf(stderr, "gotrace-record: probe '%s': '%s' is not "
			"readable, so '%s' cannot follow it\n", p->spec.text,
			inner, x);
		return -EINVAL;
	}
	k = p->meta.nargs++;
	a = &p->args[k];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", x);
	snprintf(a->type_name, sizeof(a->type_name), "[%lu]byte", size);
	a->type = GTR_TYPE_BYTES;
	a->size = size;
	a->npieces = 1;
	a->pieces[0] = p->args[root].pieces[0];
	p->meta.args[k].name = a->name;
	p->meta.args[k].type_name = a->type_name;
	p->meta.args[k].type = a->type;
	p->meta.args[k].size = a->size;
	return k;
}

static int probe_sites(struct probe *p)
{
	const struct binary *b = p->bin;
	int gc_amd64 = gobin_compiler(b->gb) == GOBIN_GC &&
		       gobin_arch(b->gb) == GOBIN_AMD64;
	size_t len = 0;
	uint8_t *code;
	int i, n;

	if (p->spec.kind == GTR_KIND_ENTRY) {
		p->sites = malloc(sizeof(*p->sites));
		if (!p->sites)
			return -ENOMEM;
		p->sites[0] = p->fn.file_offset;
		p->nsites = 1;
		if (gc_amd64 && (code = read_code(b, &p->fn, 64, &len))) {
			p->sites[0] += go_prologue_skip(code, len,
				gobin_func_abi(b->gb, &p->fn) == GOBIN_ABI_INTERNAL);
			free(code);
		}
		return 0;
	}
	if (gobin_arch(b->gb) != GOBIN_AMD64) {
		fprintf(stderr, "gotrace-record: probe '%s': return probes need "
			"an x86-64 binary for now\n", p->spec.text);
		return -ENOTSUP;
	}
	code = read_code(b, &p->fn, 1 << 20, &len);
	if (!code) {
		fprintf(stderr, "gotrace-record: probe '%s': cannot read the "
			"code of %s in %s\n", p->spec.text, p->fn.name, b->path);
		return -EIO;
	}
	n = go_ret_offsets(code, len, NULL, 0);
	if (n > 0) {
		uint32_t *offs = calloc(n, sizeof(*offs));

		p->sites = calloc(n, sizeof(*p->sites));
		if (!offs || !p->sites) {
			free(offs);
			free(code);
			return -ENOMEM;
		}
		go_ret_offsets(code, len, offs, n);
		for (i = 0; i < n; i++)
			p->sites[i] = p->fn.file_offset + offs[i];
		p->nsites = n;
		free(offs);
	}
	free(code);
	if (n < 0) {
		fprintf(stderr, "gotrace-record: probe '%s': cannot decode the "
			"code of %s to find its returns\n", p->spec.text,
			p->fn.name);
		return -EINVAL;
	}
	if (n == 0 && !env.quiet)
		fprintf(stderr, "gotrace-record: warning: %s has no RET "
			"instruction (it never returns, or ends in a tail "
			"call); probe '%s' will not fire\n", p->fn.name,
			p->spec.text);
	return 0;
}

/* Goroutine id lookup for the plan of `p` (g in R14 or in TLS). */
static void plan_goid(struct probe *p)
{
	const struct gobin *gb = p->bin->gb;

	p->plan.goid_off = gobin_goid_offset(gb);
	p->plan.goid_mode = GT_GOID_NONE;
	if (p->plan.goid_off < 0 || gobin_compiler(gb) != GOBIN_GC ||
	    gobin_arch(gb) != GOBIN_AMD64)
		return;
	/* R14 holds g only in ABIInternal code; ABI0 (assembly, old Go)
	 * finds it at fs:-8. */
	p->plan.goid_mode = gobin_func_abi(gb, &p->fn) == GOBIN_ABI_INTERNAL
				    ? GT_GOID_R14 : GT_GOID_TLS;
}

/*
 * Fills probe `p` (id `id`) for function `fn` of binary `b` as `spec`
 * says: values to capture, format expressions, fetch plan and uprobe
 * sites. `glob` is set when the function came from a glob, to word errors
 * as "skipped". Returns 0 or -1 after printing why.
 */
static int probe_prepare(struct probe *p, uint32_t id,
			 const struct probe_spec *spec, struct binary *b,
			 const struct gobin_func *fn)
{
	int ret = spec->kind == GTR_KIND_RETURN;
	int i, n;

	p->spec = *spec;   /* shares the strings of the parsed spec */
	p->bin = b;
	p->fn = *fn;
	n = ret ? gobin_func_results(b->gb, &p->fn, p->args, GTR_MAX_ARGS)
		: gobin_func_args(b->gb, &p->fn, p->args, GTR_MAX_ARGS);
	if (n < 0) {
		/* No DWARF: raw words in the function's convention. Results of
		 * the register ABI come back in the argument registers. */
		if (ret && gobin_func_abi(b->gb, &p->fn) != GOBIN_ABI_INTERNAL) {
			fprintf(stderr, "gotrace-record: probe '%s': results of "
				"%s are on the stack after its arguments, and "
				"without DWARF their place is unknown; use a "
				"binary with DWARF\n", p->spec.text, p->fn.name);
			return -1;
		}
		n = gobin_func_raw_args(b->gb, &p->fn, p->args,
					p->spec.nexprs > 6 ? p->spec.nexprs : 6);
		if (n < 0)
			n = 0;
	}
	p->nargs = n;

	memset(&p->meta, 0, sizeof(p->meta));
	p->meta.id = id;
	p->meta.binary_id = b->id;
	p->meta.kind = p->spec.kind;
	p->meta.func = (char *)p->fn.name;
	p->meta.address = p->fn.entry;
	p->meta.spec = p->spec.text;
	p->meta.fmt = p->spec.fmt ? p->spec.fmt : "";
	p->meta.nargs = n > GT_MAX_FETCH ? GT_MAX_FETCH : n;
	for (i = 0; i < (int)p->meta.nargs; i++) {
		struct gobin_arg *ga = &p->args[i];

		/* DWARF names []byte "[]uint8": captured as bytes. */
		if (ga->type == GTR_TYPE_OTHER && ga->npieces >= 2 &&
		    (!strcmp(ga->type_name, "[]uint8") ||
		     !strcmp(ga->type_name, "[]byte")))
			ga->type = GTR_TYPE_BYTES;
		p->meta.args[i].name = p->args[i].name;
		p->meta.args[i].type_name = p->args[i].type_name;
		p->meta.args[i].type = p->args[i].type;
		p->meta.args[i].size = p->args[i].size;
	}
	for (i = 0; i < p->spec.nexprs; i++) {
		const char *x = p->spec.exprs[i];
		int a = resolve_expr(p, x);

		if (a == -ENOENT && !strncmp(x, "$ptr(", 5))
			a = add_ptr_value(p, x);
		if (a == -EINVAL)
			return -1;    /* add_ptr_value said why */
		if (a < 0 || a >= (int)p->meta.nargs) {
			fprintf(stderr, "gotrace-record: probe '%s': unknown "
				"expression '%s'; use %s1..%s%d%s, a %s name or "
				"$ptr(EXPR, SIZE) (%s has: ", p->spec.text, x,
				ret ? "goret" : "goarg", ret ? "goret" : "goarg",
				p->nargs, ret ? ", retval" : "",
				ret ? "result" : "parameter", p->fn.name);
			print_arg_names(p);
			fprintf(stderr, ")\n");
			return -1;
		}
		p->meta.exprs[p->meta.nexprs++] = a;
	}

	memset(&p->plan, 0, sizeof(p->plan));
	p->plan.probe_id = id;
	p->plan.kind = p->spec.kind;
	p->plan.nfetch = p->meta.nargs;
	p->plan.str_max = env.str_max;
	for (i = 0; i < (int)p->plan.nfetch; i++)
		plan_fetch(&p->plan.fetch[i], &p->args[i]);
	plan_goid(p);
	return probe_sites(p) ? -1 : 0;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

struct expand {
	const char **names;
	int n, cap;
};

static int collect(const struct gobin_func *f, void *ctx)
{
	struct expand *e = ctx;
	int i;

	for (i = 0; i < env.nexcludes; i++)
		if (!fnmatch(env.excludes[i], f->name, 0))
			return 0;
	if (e->n == e->cap) {
		int cap = e->cap ? e->cap * 2 : 64;
		const char **names = realloc(e->names, cap * sizeof(*names));

		if (!names)
			return -ENOMEM;
		e->names = names;
		e->cap = cap;
	}
	e->names[e->n++] = f->name;
	return 0;
}

static int add_probe(const struct probe_spec *spec, struct binary *b,
		     const struct gobin_func *fn)
{
	static int cap;
	struct probe *p;

	if (nprobes >= (int)env.max_probes) {
		fprintf(stderr, "gotrace-record: more than %u probes; narrow "
			"the globs (--exclude GLOB) or raise --max-probes\n",
			env.max_probes);
		return -1;
	}
	if (nprobes == cap) {
		int ncap = cap ? cap * 2 : 16;
		struct probe **np = realloc(probes, ncap * sizeof(*np));

		if (!np)
			return -1;
		probes = np;
		cap = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	if (probe_prepare(p, nprobes, spec, b, fn)) {
		free(p);
		return -2;
	}
	probes[nprobes++] = p;
	return 0;
}

/*
 * Parses one probe as written and adds a probe for its function, or for
 * every function its glob matches (exact names win: "main.(*T).M" holds a
 * '*' but names one method). Returns 0 or -1 after printing why.
 */
static int expand_spec(const char *text, const char *dflt_path,
		       const char *dflt_attach)
{
	struct probe_spec spec;
	struct gobin_func fn;
	struct expand e = {};
	struct binary *b;
	char err[512];
	int i, n, first = nprobes;

	if (probe_spec_parse(text, &spec, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	if (spec.predicate) {
		fprintf(stderr, "gotrace-record: probe '%s': record-time "
			"predicates are not supported yet; record without it "
			"and filter with gotrace-report -f '%s'\n",
			spec.text, spec.predicate);
		return -1;
	}
	b = spec.binary ? binary_get(spec.binary, spec.binary)
			: binary_get(dflt_path, dflt_attach);
	if (!b)
		return -1;
	if (!gobin_func_find(b->gb, spec.func, &fn))
		return add_probe(&spec, b, &fn) ? -1 : 0;
	if (has_glob(spec.func)) {
		if (gobin_func_each(b->gb, spec.func, collect, &e) < 0)
			return -1;
		for (i = 0; i < e.n; i++) {
			if (gobin_func_find(b->gb, e.names[i], &fn))
				continue;
			/* A glob skips functions it cannot probe (reason
			 * printed); a limit or memory failure stops all. */
			if (add_probe(&spec, b, &fn) == -1) {
				free(e.names);
				return -1;
			}
		}
		free(e.names);
		if (nprobes > first)
			return 0;
		fprintf(stderr, "gotrace-record: no function of %s matches "
			"'%s'\n", b->path, spec.func);
		return -1;
	}
	{
		const char *near[5];

		n = gobin_func_suggest(b->gb, spec.func, near, 5);
		fprintf(stderr, "gotrace-record: function '%s' not found in %s",
			spec.func, b->path);
		for (i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? ", " : "; did you mean: ",
				near[i]);
		fprintf(stderr, "\n");
	}
	return -1;
}

/* ------------------------------------------------------------ events */

struct task {
	uint32_t pid, tid;
	char comm[16];
};

#define TASK_SLOTS 4096   /* small cache; a miss only re-records a name */

struct recorder {
	struct gtr_writer *w;
	struct capture *cap;
	struct task tasks[TASK_SLOTS];
	uint64_t events, errors;
	uint64_t *drops_seen;
	uint64_t drops_ts;   /* when drops were last read, CLOCK_MONOTONIC */
	int werr;
};

static struct recorder rec;

static int on_event(const struct gt_event *ev, size_t size, void *ctx)
{
	struct recorder *r = ctx;
	struct gtr_event out;
	const struct probe *p;
	struct task *t;
	uint32_t i, doff = 0;
	size_t dmax;

	if (r->werr || ev->type != GT_REC_EVENT || ev->probe_id >= (uint32_t)nprobes)
		return 0;
	p = probes[ev->probe_id];
	dmax = size > GT_EVENT_HDR_SIZE + sizeof(ev->slots)
		       ? size - GT_EVENT_HDR_SIZE - sizeof(ev->slots) : 0;
	if (dmax > ev->data_len)
		dmax = ev->data_len;

	t = &r->tasks[(ev->tid * 2654435761u) % TASK_SLOTS];
	if (t->tid != ev->tid || t->pid != ev->pid ||
	    strncmp(t->comm, ev->comm, sizeof(t->comm))) {
		t->pid = ev->pid;
		t->tid = ev->tid;
		memcpy(t->comm, ev->comm, sizeof(t->comm));
		t->comm[15] = '\0';
		gtr_writer_task(r->w, ev->pid, ev->tid, t->comm);
	}

	out.ts_ns = ev->ts_ns;
	out.probe_id = ev->probe_id;
	out.kind = p->meta.kind;
	out.pid = ev->pid;
	out.tid = ev->tid;
	out.goid = ev->goid;
	out.cpu = GTR_CPU_UNKNOWN;
	out.nstack = 0;
	out.stack = NULL;
	out.nvals = p->meta.nargs < ev->nslots ? p->meta.nargs : ev->nslots;
	for (i = 0; i < out.nvals; i++) {
		struct gtr_value *v = &out.vals[i];
		uint64_t s = ev->slots[i];

		if (p->plan.fetch[i].op == GT_OP_NONE ||
		    (ev->unavail & (1u << i))) {
			v->kind = GTR_VAL_NONE;
			continue;
		}
		switch (p->meta.args[i].type) {
		case GTR_TYPE_INT:
			v->kind = GTR_VAL_INT;
			v->v.i = (int64_t)s;
			break;
		case GTR_TYPE_BOOL:
			v->kind = GTR_VAL_BOOL;
			v->v.b = s != 0;
			break;
		case GTR_TYPE_STRING:
		case GTR_TYPE_BYTES: {
			uint32_t n = 0;

			if (doff + 2 <= dmax) {
				n = ev->data[doff] | ev->data[doff + 1] << 8;
				doff += 2;
				if (doff + n > dmax)
					n = dmax - doff;
			}
			v->kind = GTR_VAL_STR;
			v->v.s.data = ev->data + doff;
			v->v.s.len = n;
			v->v.s.full_len = s;
			doff += n;
			break;
		}
		default:
			v->kind = GTR_VAL_UINT;
			v->v.u = s;
			break;
		}
	}
	if (gtr_writer_event(r->w, &out)) {
		fprintf(stderr, "gotrace-record: %s\n", gtr_writer_error(r->w));
		r->werr = 1;
		return -1;
	}
	r->events++;
	return 0;
}

static void record_drops(struct recorder *r)
{
	struct timespec ts;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (i = 0; i < nprobes; i++) {
		uint64_t d = capture_drops(r->cap, i);

		if (d > r->drops_seen[i]) {
			struct gtr_drop drop = {
				.ts_ns = ts.tv_sec * 1000000000ull + ts.tv_nsec,
				.probe_id = i,
				.count = d - r->drops_seen[i],
				.cpu = GTR_CPU_UNKNOWN,
				.since_ns = r->drops_ts,
			};
			gtr_writer_drop(r->w, &drop);
			r->drops_seen[i] = d;
		}
	}
	r->drops_ts = ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ------------------------------------------------------------ main */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void host_fill(struct gtr_host *h, struct utsname *u, char *hn,
		      size_t hnlen)
{
	memset(h, 0, sizeof(*h));
	uname(u);
	if (gethostname(hn, hnlen))
		snprintf(hn, hnlen, "%s", u->nodename);
	h->hostname = hn;
	h->kernel = u->release;
	h->machine = u->machine;
	h->recorder = "gotrace-record " GOTRACE_VERSION;
	h->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
	h->start_realtime_ns = clock_ns(CLOCK_REALTIME);
	h->start_boottime_ns = clock_ns(CLOCK_BOOTTIME);
}

/* Forks CMD stopped before exec; it runs when a byte arrives on *go_fd. */
static pid_t spawn_stopped(char **cmd, int *go_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);   /* recorder gave up before exec */
		execvp(cmd[0], cmd);
		fprintf(stderr, "gotrace-record: cannot run %s: %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go_fd = fds[1];
	return pid;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options, .parser = parse_opt,
		.args_doc = "PROBE... [-- CMD [ARGS...]]", .doc = doc,
	};
	char err[1024], hostname[256], exe_path[64];
	char *dflt_path = NULL, *dflt_attach = NULL;
	struct gtr_host host;
	struct utsname uts;
	int i, rargc = argc, go_fd = -1, status = 0, ret = 1;
	pid_t child = 0;
	uint64_t last_flush;

	/* Installed first: a signal at any point ends with a complete file. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* Everything after the first "--" is the command to run. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			rargc = i;
			env.cmd = i + 1 < argc ? &argv[i + 1] : NULL;
			if (!env.cmd) {
				fprintf(stderr, "gotrace-record: nothing after '--'; give the command to run\n");
				return 2;
			}
			break;
		}
	}
	argv[rargc] = NULL;
	if (argp_parse(&argp, rargc, argv, 0, NULL, NULL))
		return 2;

	if (env.cmd) {
		dflt_path = which(env.cmd[0]);
		if (access(dflt_path, X_OK)) {
			fprintf(stderr, "gotrace-record: cannot run %s: %s\n",
				env.cmd[0], strerror(errno));
			return 1;
		}
		dflt_attach = strdup(dflt_path);
	} else {
		char buf[PATH_MAX];
		ssize_t n;

		snprintf(exe_path, sizeof(exe_path), "/proc/%d/exe", env.pid);
		n = readlink(exe_path, buf, sizeof(buf) - 1);
		if (n < 0) {
			fprintf(stderr, "gotrace-record: cannot trace PID %d: "
				"%s\n", env.pid, errno == ENOENT ?
				"no such process" : strerror(errno));
			return 1;
		}
		buf[n] = '\0';
		dflt_path = strdup(buf);
		dflt_attach = strdup(exe_path);
	}

	for (i = 0; i < env.nspecs; i++)
		if (expand_spec(env.specs[i], dflt_path, dflt_attach))
			return 1;

	host_fill(&host, &uts, hostname, sizeof(hostname));
	rec.w = gtr_writer_create(env.output, env.flags, &host, err,
				  sizeof(err));
	if (!rec.w) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return 1;
	}
	for (i = 0; i < nbinaries; i++) {
		struct gtr_binary gb;

		gobin_describe(binaries[i].gb, &gb);
		gb.id = binaries[i].id;
		gb.path = binaries[i].path;
		if (gtr_writer_binary(rec.w, &gb))
			goto writer_failed;
	}
	for (i = 0; i < nprobes; i++)
		if (gtr_writer_probe(rec.w, &probes[i]->meta))
			goto writer_failed;
	rec.drops_seen = calloc(nprobes, sizeof(uint64_t));

	rec.cap = capture_open(nprobes, env.ringbuf, env.verbose, on_event, &rec,
			       err, sizeof(err));
	if (!rec.cap) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		goto out;
	}
	if (env.cmd) {
		child = spawn_stopped(env.cmd, &go_fd);
		if (child < 0) {
			fprintf(stderr, "gotrace-record: cannot start %s: %s\n",
				env.cmd[0], strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < nprobes && !stop_signal; i++) {
		int k;

		if (capture_set_plan(rec.cap, i, &probes[i]->plan)) {
			fprintf(stderr, "gotrace-record: cannot store the plan of "
				"probe '%s'\n", probes[i]->spec.text);
			goto out;
		}
		for (k = 0; k < probes[i]->nsites; k++) {
			if (!capture_attach(rec.cap, i, probes[i]->bin->attach_path,
					    probes[i]->sites[k],
					    env.cmd ? child : env.pid, err,
					    sizeof(err)))
				continue;
			fprintf(stderr, "gotrace-record: probe '%s': %s\n",
				probes[i]->spec.text, err);
			goto out;
		}
	}

	if (!env.quiet)
		fprintf(stderr, "gotrace-record: %d probe%s attached; %s\n",
			nprobes, nprobes == 1 ? "" : "s",
			env.cmd ? "running the command" : "Ctrl-C to stop");
	if (env.cmd) {
		if (write(go_fd, "g", 1) != 1) {
			fprintf(stderr, "gotrace-record: cannot start %s\n",
				env.cmd[0]);
			goto out;
		}
		close(go_fd);
		go_fd = -1;
	}

	last_flush = clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		int n = capture_poll(rec.cap, 100);
		uint64_t now;

		if (n < 0 || rec.werr) {
			if (n < 0)
				fprintf(stderr, "gotrace-record: reading events: %s\n",
					strerror(-n));
			break;
		}
		if (child) {
			pid_t w = waitpid(child, &status, WNOHANG);

			if (w == child) {
				child = 0;
				break;
			}
		}
		if (stop_signal) {
			if (!child)
				break;
			/* Pass the signal on and wait for CMD to exit. */
			kill(child, stop_signal);
			stop_signal = 0;
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
		}
		if (!env.cmd && kill(env.pid, 0) && errno == ESRCH)
			break;   /* the traced process is gone */
		now = clock_ns(CLOCK_MONOTONIC);
		if (now - last_flush >= 1000000000ull) {
			record_drops(&rec);
			if (gtr_writer_flush(rec.w)) {
				fprintf(stderr, "gotrace-record: %s\n",
					gtr_writer_error(rec.w));
				break;
			}
			last_flush = now;
		}
	}
	/* Drain what is left in the ring buffer. */
	while (!rec.werr && capture_poll(rec.cap, 0) > 0)
		;
	record_drops(&rec);
	ret = 0;
out:
	capture_close(rec.cap);
	if (go_fd >= 0)
		close(go_fd);
	if (child > 0)
		waitpid(child, &status, 0);
	if (gtr_writer_close(rec.w, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		ret = 1;
	} else if (!env.quiet && ret == 0) {
		uint64_t dropped = 0;

		for (i = 0; i < nprobes; i++)
			dropped += rec.drops_seen[i];
		fprintf(stderr, "gotrace-record: %llu events, %llu dropped, "
			"written to %s\n", (unsigned long long)rec.events,
			(unsigned long long)dropped, env.output);
	}
	if (ret == 0 && env.cmd) {
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		if (WIFSIGNALED(status))
			return 128 + WTERMSIG(status);
	}
	return ret;

writer_failed:
	fprintf(stderr, "gotrace-record: %s\n", gtr_writer_error(rec.w));
	gtr_writer_close(rec.w, err, sizeof(err));
	return 1;
}
