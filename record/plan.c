// SPDX-License-Identifier: MIT
/* Building probes, fetch plans and uprobe sites; see plan.h. */
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "insn.h"
#include "plan.h"
#include "pred.h"


struct binary binaries[PLAN_MAX_BINARIES];
int nbinaries;
struct probe **probes;  /* each allocated once: metas point into them */
int nprobes;

static struct plan_opts env;

/* Functions whose return probes have no site (no RET), for one warning. */
static const char *noret[8];
static int nnoret;

void plan_init(const struct plan_opts *o)
{
	env = *o;
}

/* Resolves CMD's executable through PATH, as execvp would. */
char *which(const char *cmd)
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

/*
 * Link-time span [lo, hi) of the PT_LOAD segments of the ELF file `path`,
 * and where its executable segment is (p_vaddr, p_offset).
 */
static void load_span(const char *path, struct binary *b)
{
	uint64_t *lo = &b->load_lo, *hi = &b->load_hi;
	size_t i, n;
	Elf *e;
	int fd;

	*lo = UINT64_MAX;
	*hi = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && !elf_getphdrnum(e, &n)) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (ph.p_flags & PF_X) {
				b->text_vaddr = ph.p_vaddr;
				b->text_offset = ph.p_offset;
			}
			if (ph.p_vaddr < *lo)
				*lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > *hi)
				*hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	elf_end(e);
	close(fd);
	if (*lo > *hi)
		*lo = *hi = 0;
}

struct binary *binary_get(const char *path, const char *attach_path)
{
	char err[512];
	int i;

	for (i = 0; i < nbinaries; i++)
		if (!strcmp(binaries[i].path, path))
			return &binaries[i];
	if (nbinaries >= PLAN_MAX_BINARIES) {
		fprintf(stderr, "gotrace-record: too many binaries (at most %d)\n",
			PLAN_MAX_BINARIES);
		return NULL;
	}
	binaries[nbinaries].gb = gobin_open(attach_path, err, sizeof(err));
	if (!binaries[nbinaries].gb) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return NULL;
	}
	if (nbinaries == 0 && env.debuginfo &&
	    gobin_open_debuginfo(binaries[0].gb, env.debuginfo, err,
				 sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		gobin_close(binaries[0].gb);
		return NULL;
	}
	load_span(attach_path, &binaries[nbinaries]);
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

static int resolve_cb(void *ctx, const char *name)
{
	return resolve_expr(ctx, name);
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

/*
 * Bytes of one element of a slice type "[]T" for Go's predeclared element
 * types, in a binary whose words (the slice's pointer) are `word` bytes:
 * int, uint, uintptr, pointers, maps, chans and funcs are a word, a string
 * two (Go spec, "Size and alignment guarantees"; cmd/compile/internal/
 * types/size.go); 0 when unknown (then only length and capacity).
 */
static uint32_t slice_elem_size(const char *type_name, uint32_t word)
{
	/* word-sized types take the binary's pointer size (4 on i386) */
	static const struct { const char *t; uint32_t n; } sizes[] = {
		{ "int", 0 }, { "uint", 0 }, { "uintptr", 0 },
		{ "int64", 8 }, { "uint64", 8 },
		{ "float64", 8 }, { "complex64", 8 },
		{ "int32", 4 }, { "uint32", 4 }, { "float32", 4 }, { "rune", 4 },
		{ "int16", 2 }, { "uint16", 2 }, { "int8", 1 }, { "uint8", 1 },
		{ "bool", 1 }, { "string", 1 }, { "complex128", 16 },
	};
	const char *t = type_name + 2;
	size_t i;

	if (word != 4 && word != 8)
		return 0;
	if (*t == '*' || !strncmp(t, "map[", 4) || !strncmp(t, "chan ", 5) ||
	    !strncmp(t, "func(", 5) || !strcmp(t, "unsafe.Pointer"))
		return word;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(t, sizes[i].t))
			return !strcmp(t, "string") ? 2 * word :
			       sizes[i].n ? sizes[i].n : word;
	return 0;
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
	if (a->iface) {
		/* The dynamic type's descriptor: word 0 of an empty interface,
		 * itab->_type (itab + 8) otherwise (Go src/runtime/runtime2.go);
		 * the recorder names it. */
		if (a->pieces[0].size != 8)
			return;
		f->op = GT_OP_WORD;
		f->flags = GT_F_NIL_ZERO;
		if (a->iface == 1) {
			f->flags |= GT_F_INDIRECT;
			f->mem_off = 8;
			f->size = 8;
		}
		return;
	}
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
	case GTR_TYPE_SLICE:
	case GTR_TYPE_STRING:
		if (a->npieces < 2 || a->pieces[1].kind == GT_LOC_NONE)
			return;
		f->op = GT_OP_STRING;
		if (a->type == GTR_TYPE_SLICE) {
			f->mem_size = slice_elem_size(a->type_name, a->pieces[0].size);
			if (!f->mem_size)
				f->mem_size = UINT32_MAX;   /* length only */
		}
		f->src2.loc = a->pieces[1].kind;
		f->src2.reg = a->pieces[1].reg;
		f->src2.off = a->pieces[1].offset;
		f->src2.size = a->pieces[1].size;
		break;
	default:
		break;   /* floats in XMM, other aggregates: unavailable */
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
 * Adds, after the parameters, the capacity of each slice parameter as a
 * value named "cap(NAME)" (its length is the slice value's own length).
 */
static void add_cap_values(struct probe *p)
{
	uint32_t i, n = p->meta.nargs;

	for (i = 0; i < n && p->meta.nargs < GT_MAX_FETCH; i++) {
		const struct gobin_arg *s = &p->args[i];
		struct gobin_arg *a;
		uint32_t k;

		if ((s->type != GTR_TYPE_SLICE && s->type != GTR_TYPE_BYTES) ||
		    s->npieces != 3 || s->pieces[2].kind == GT_LOC_NONE)
			continue;
		k = p->meta.nargs++;
		a = &p->args[k];
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "cap(%s)",
			 s->name[0] ? s->name : "?");
		snprintf(a->type_name, sizeof(a->type_name), "int");
		a->type = GTR_TYPE_INT;
		a->size = 8;
		a->npieces = 1;
		a->pieces[0] = s->pieces[2];
		p->meta.args[k].name = a->name;
		p->meta.args[k].type_name = a->type_name;
		p->meta.args[k].type = a->type;
		p->meta.args[k].size = a->size;
	}
}

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

/*
 * Where the root word of a field path is: the parameter's first word, or,
 * for a struct passed by value, its field at gp->slot (registers) or
 * gp->value_off (stack). For a direct string field, *w1 is its length
 * word. Returns 0, or -1 when the registers cannot be placed.
 */
static int path_root(const struct probe *p, const struct gobin_arg *arg,
		     const struct gobin_path *gp, struct gobin_piece *w0,
		     struct gobin_piece *w1)
{
	uint8_t size = gp->direct && gp->size < 8 ? gp->size : 8;

	(void)p;
	*w0 = arg->pieces[0];
	memset(w1, 0, sizeof(*w1));
	if (!gp->value_root)
		return 0;
	if (arg->pieces[0].kind == GT_LOC_STACK) {
		w0->offset = arg->pieces[0].offset + gp->value_off;
		w0->size = size;
		*w1 = *w0;
		w1->offset += 8;
		w1->size = 8;
		return 0;
	}
	if (gp->slot < 0 || (uint32_t)gp->slot >= arg->npieces ||
	    arg->pieces[gp->slot].kind != GT_LOC_REG)
		return -1;
	*w0 = arg->pieces[gp->slot];
	w0->size = size;
	if ((uint32_t)gp->slot + 1 < arg->npieces)
		*w1 = arg->pieces[gp->slot + 1];
	return 0;
}

/*
 * Adds the value of a field path such as "r.URL.Path" (DWARF types; the
 * root is a pointer parameter or a struct passed by value). Returns its index, or -EINVAL after
 * printing why.
 */
static int add_path_value(struct probe *p, const char *x)
{
	struct gobin_path gp;
	struct gt_fetch *f;
	struct gobin_arg *a;
	char err[512];
	int root, k;

	if (gobin_field_path(p->bin->gb, &p->fn, x, &gp, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: probe '%s': %s\n",
			p->spec.text, err);
		return -EINVAL;
	}
	root = resolve_expr(p, gp.root);
	if (root < 0 || !p->args[root].npieces ||
	    p->args[root].pieces[0].kind == GT_LOC_NONE) {
		fprintf(stderr, "gotrace-record: probe '%s': '%s' is not "
			"readable, so '%s' cannot follow it\n", p->spec.text,
			gp.root, x);
		return -EINVAL;
	}
	if (gp.type == GTR_TYPE_OTHER || gp.type == GTR_TYPE_FLOAT) {
		fprintf(stderr, "gotrace-record: probe '%s': '%s' is a %s, "
			"which gotrace does not capture; name one of its "
			"fields, or use $ptr(EXPR, SIZE)\n", p->spec.text, x,
			gp.type_name[0] ? gp.type_name : "value of unknown type");
		return -EINVAL;
	}
	if (p->meta.nargs >= GT_MAX_FETCH) {
		fprintf(stderr, "gotrace-record: probe '%s': too many values "
			"(at most %d)\n", p->spec.text, GT_MAX_FETCH);
		return -EINVAL;
	}
	{
		struct gobin_piece w0, w1;

		if (path_root(p, &p->args[root], &gp, &w0, &w1)) {
			fprintf(stderr, "gotrace-record: probe '%s': the fields of "
				"'%s' are spread over registers gotrace cannot "
				"place; use a pointer parameter or $ptr()\n",
				p->spec.text, gp.root);
			return -EINVAL;
		}
		k = p->meta.nargs++;
		a = &p->args[k];
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "%s", x);
		snprintf(a->type_name, sizeof(a->type_name), "%s", gp.type_name);
		a->type = gp.type;
		a->size = gp.size;
		a->npieces = 1;
		a->pieces[0] = w0;

		f = &p->path_fetch[k];
		memset(f, 0, sizeof(*f));
		f->src.loc = w0.kind;
		f->src.reg = w0.reg;
		f->src.off = w0.offset;
		f->src.size = w0.size;
		f->op = gp.type == GTR_TYPE_STRING || gp.type == GTR_TYPE_BYTES
				? GT_OP_STRING : GT_OP_WORD;
		f->flags = gp.type == GTR_TYPE_INT ? GT_F_SIGNED : 0;
		if (gp.direct) {
			/* The field itself is in a register or stack slot. */
			f->src2.loc = w1.kind;
			f->src2.reg = w1.reg;
			f->src2.off = w1.offset;
			f->src2.size = w1.size;
		} else {
			f->nderef = gp.nderef;
			memcpy(f->deref, gp.deref, sizeof(f->deref));
			f->flags |= GT_F_INDIRECT;
			f->mem_off = gp.offset;
			f->size = gp.size <= 8 ? gp.size : 8;
		}
		p->path[k] = 1;
	}

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
		int bits = gobin_arch(b->gb) == GOBIN_386 ? 32 : 64;
		uint32_t skip = 0;

		p->sites = malloc(sizeof(*p->sites));
		if (!p->sites)
			return -ENOMEM;
		code = read_code(b, &p->fn, 64, &len);
		if (code && gobin_compiler(b->gb) == GOBIN_GC && (gc_amd64 ||
		    gobin_arch(b->gb) == GOBIN_386))
			skip = go_prologue_skip_mode(code, len,
				gobin_func_abi(b->gb, &p->fn) == GOBIN_ABI_INTERNAL,
				bits);
		/* i386 programs were seen to crash with a uprobe on their
		 * gs-relative first instruction; x86-64 fs-relative ones
		 * (gccgo's split-stack check, ABI0 TLS loads) are fine. */
		if (code && skip < len &&
		    !go_insn_uprobe_ok(code + skip, len - skip, bits)) {
			/* runtime.abort (INT 3) and friends: the kernel
			 * refuses such an instruction. */
			free(code);
			fprintf(stderr, "gotrace-record: probe '%s': %s starts "
				"with an instruction uprobes cannot replace (a "
				"trap or system call); not probed\n",
				p->spec.text, p->fn.name);
			return -EPERM;
		}
		if (code && bits == 32 &&
		    go_insn_segment_prefixed(code + skip, len - skip, bits)) {
			free(code);
			fprintf(stderr, "gotrace-record: probe '%s': the first "
				"instruction of %s reads thread-local storage; a "
				"uprobe there is not safe, so it is not "
				"probed\n", p->spec.text, p->fn.name);
			return -EPERM;
		}
		/* The kernel's user stack walk itself adds the caller at a
		 * uprobe on these (Linux 6.10, arch/x86/events/core.c
		 * is_uprobe_at_func_entry()): the BPF side must know. */
		if (code && bits == 64 && skip < len && (code[skip] == 0x55 ||
		    (len - skip >= 4 &&
		     !memcmp(code + skip, "\xf3\x0f\x1e\xfa", 4))))
			p->plan.flags |= GT_P_AT_PUSH_BP;
		free(code);
		p->sites[0] = p->fn.file_offset + skip;
		p->nsites = 1;
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
	if (n == 0) {
		/* Said once for all probes by plan_warnings(). */
		if (nnoret < (int)(sizeof(noret) / sizeof(noret[0])))
			noret[nnoret] = p->fn.name;
		nnoret++;
	}
	return 0;
}

void plan_warnings(void)
{
	int i, shown = nnoret < 5 ? nnoret : 5;

	if (!nnoret || env.quiet)
		return;
	fprintf(stderr, "gotrace-record: warning: %d function%s no RET "
		"instruction (never return, or end in a tail call), so %s "
		"return probe%s will not fire: ", nnoret,
		nnoret == 1 ? " has" : "s have", nnoret == 1 ? "its" : "their",
		nnoret == 1 ? "" : "s");
	for (i = 0; i < shown; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", noret[i]);
	if (nnoret > shown)
		fprintf(stderr, " and %d more", nnoret - shown);
	fputc('\n', stderr);
}

/* Goroutine id lookup for the plan of `p` (g in R14 or in TLS). */
static void plan_goid(struct probe *p)
{
	const struct gobin *gb = p->bin->gb;

	p->plan.goid_off = gobin_goid_offset(gb);
	p->plan.goid_mode = GT_GOID_NONE;
	if (gobin_compiler(gb) == GOBIN_GC && !p->bin->goid_said &&
	    (p->plan.goid_off < 0 || gobin_arch(gb) != GOBIN_AMD64)) {
		/* said once per binary */
		p->bin->goid_said = true;
		if (gobin_arch(gb) != GOBIN_AMD64)
			fprintf(stderr, "gotrace-record: %s: goroutine ids are "
				"read on x86-64 only; events get goid 0 and "
				"calls are paired by thread\n", p->bin->path);
		else
			fprintf(stderr, "gotrace-record: %s: the offset of goid "
				"in runtime.g is unknown (no DWARF, a Go version "
				"the table does not know, not found in the "
				"runtime's code): events carry the goroutine's g "
				"address as goid, which pairs calls by goroutine "
				"but is not Go's goroutine id\n", p->bin->path);
	}
	if (gobin_compiler(gb) != GOBIN_GC || gobin_arch(gb) != GOBIN_AMD64)
		return;
	/* R14 holds g only in ABIInternal code; ABI0 (assembly, old Go)
	 * finds it at fs:-8. */
	p->plan.goid_mode = gobin_func_abi(gb, &p->fn) == GOBIN_ABI_INTERNAL
				    ? GT_GOID_R14 : GT_GOID_TLS;
}

/*
 * When DWARF describes the function too, a signature must agree with it
 * (same number of words in the same places): a wrong signature would read
 * the wrong registers. Prints why and returns 1 when they disagree.
 */
static int sig_disagrees(const struct probe *p, int n)
{
	struct gobin_arg dw[GTR_MAX_ARGS];
	int m = gobin_func_args(p->bin->gb, &p->fn, dw, GTR_MAX_ARGS), i;
	uint32_t k;

	if (m <= 0)
		return 0;   /* no DWARF, or none for this function (Go
			       assembly): the signature is all there is */
	for (i = 0; i < n && i < m; i++) {
		if (dw[i].npieces != p->args[i].npieces)
			break;
		for (k = 0; k < dw[i].npieces; k++)
			if (dw[i].pieces[k].kind != p->args[i].pieces[k].kind ||
			    dw[i].pieces[k].reg != p->args[i].pieces[k].reg ||
			    dw[i].pieces[k].offset != p->args[i].pieces[k].offset)
				break;
		if (k < dw[i].npieces)
			break;
	}
	if (i == n && n == m)
		return 0;
	fprintf(stderr, "gotrace-record: probe '%s': the signature disagrees "
		"with DWARF, which gives %s(", p->spec.text, p->fn.name);
	for (i = 0; i < m; i++)
		fprintf(stderr, "%s%s %s", i ? ", " : "", dw[i].name,
			dw[i].type_name);
	fprintf(stderr, "); drop the signature (DWARF gives the types) or "
		"correct it\n");
	return 1;
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
	/* uprobes see a 386 process's registers in the same pt_regs. */
	if (gobin_arch(b->gb) != GOBIN_AMD64 && gobin_arch(b->gb) != GOBIN_386) {
		fprintf(stderr, "gotrace-record: probe '%s': %s is not an "
			"x86 binary; capture runs on x86-64 and i386 here "
			"(gotrace-record --list reads other architectures)\n",
			p->spec.text, b->path);
		return -1;
	}
	if (p->spec.sig && ret) {
		fprintf(stderr, "gotrace-record: probe '%s': a signature gives "
			"parameters; results of return probes need DWARF\n",
			p->spec.text);
		return -1;
	}
	if (p->spec.sig) {
		char err[512];

		n = gobin_sig_args(b->gb, &p->fn, p->spec.sig, p->args,
				   GTR_MAX_ARGS, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "gotrace-record: %s\n", err);
			return -1;
		}
		if (sig_disagrees(p, n))
			return -1;
	} else {
		n = ret ? gobin_func_results(b->gb, &p->fn, p->args, GTR_MAX_ARGS)
			: gobin_func_args(b->gb, &p->fn, p->args, GTR_MAX_ARGS);
	}
	if (n == 0 && !p->spec.sig && !ret &&
	    gobin_func_abi(b->gb, &p->fn) == GOBIN_ABI0 &&
	    gobin_func_args_size(b->gb, &p->fn) > 0) {
		/* Go assembly: DWARF names no parameters, but the runtime
		 * knows the size of the argument area: capture its words. */
		int words = gobin_func_args_size(b->gb, &p->fn) /
			    (gobin_arch(b->gb) == GOBIN_386 ? 4 : 8);

		n = gobin_func_raw_args(b->gb, &p->fn, p->args,
					words < GT_MAX_FETCH ? words : GT_MAX_FETCH);
	}
	if (n < 0) {
		/* No DWARF: raw words in the function's convention. Results of
		 * the register ABI come back in the argument registers. */
		if (ret && gobin_func_abi(b->gb, &p->fn) != GOBIN_ABI_INTERNAL) {
			/* ABI0: results follow the arguments on the stack,
			 * and without DWARF it is unknown where one ends:
			 * the return probe gives latency without values. */
			if (p->spec.nexprs > 0) {
				fprintf(stderr, "gotrace-record: probe '%s': "
					"results of %s are on the stack after "
					"its arguments, and without DWARF their "
					"place is unknown; drop the values to "
					"record its returns (latency only), or "
					"use a binary with DWARF\n",
					p->spec.text, p->fn.name);
				return -1;
			}
			/* said for a function named alone; a glob would
			 * say it for each of thousands */
			if (gobin_func_args_size(b->gb, &p->fn) != 0 &&
			    !strpbrk(p->spec.func, "*?"))
				fprintf(stderr, "gotrace-record: probe '%s': "
					"results of %s are on the stack after "
					"its arguments, and without DWARF their "
					"place is unknown: its returns are "
					"recorded without values (latency only)\n",
					p->spec.text, p->fn.name);
			n = 0;
			goto located;
		}
		n = gobin_func_raw_args(b->gb, &p->fn, p->args,
					p->spec.nexprs > 6 ? p->spec.nexprs : 6);
		if (n < 0)
			n = 0;
	}
located:
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

		/* An interface is recorded as its dynamic type's name. */
		if (ga->iface && ga->npieces >= 1)
			ga->type = GTR_TYPE_IFACE;
		/* DWARF names []byte "[]uint8": captured as bytes. */
		if (ga->type == GTR_TYPE_OTHER && ga->npieces >= 2 &&
		    (!strcmp(ga->type_name, "[]uint8") ||
		     !strcmp(ga->type_name, "[]byte")))
			ga->type = GTR_TYPE_BYTES;
		else if (ga->type == GTR_TYPE_OTHER && ga->npieces == 3 &&
			 !strncmp(ga->type_name, "[]", 2))
			ga->type = GTR_TYPE_SLICE;
		p->meta.args[i].name = p->args[i].name;
		p->meta.args[i].type_name = p->args[i].type_name;
		p->meta.args[i].type = p->args[i].type;
		p->meta.args[i].size = p->args[i].type == GTR_TYPE_SLICE
			? slice_elem_size(p->args[i].type_name,
					  p->args[i].pieces[0].size) : p->args[i].size;
	}
	add_cap_values(p);
	for (i = 0; i < p->spec.nexprs; i++) {
		const char *x = p->spec.exprs[i];
		int a = resolve_expr(p, x);

		if (a == -ENOENT && !strncmp(x, "$ptr(", 5))
			a = add_ptr_value(p, x);
		else if (a == -ENOENT && strchr(x, '.') && !ret)
			a = add_path_value(p, x);
		if (a == -EINVAL)
			return -1;    /* add_ptr_value said why */
		if (a < 0 || a >= (int)p->meta.nargs) {
			const char *pre = ret ? "goret" : "goarg";
			char range[48];

			if (p->nargs > 1)
				snprintf(range, sizeof(range), "%s1..%s%d, ", pre, pre, p->nargs);
			else if (p->nargs == 1)
				snprintf(range, sizeof(range), "%s1, ", pre);
			else
				range[0] = 0;
			fprintf(stderr, "gotrace-record: probe '%s': unknown "
				"expression '%s'; use %s%sa %s name, a field path "
				"(NAME.FIELD) or $ptr(EXPR, SIZE) (%s has: ", p->spec.text, x,
				range, ret ? "retval, " : "", ret ? "result" : "parameter",
				p->fn.name);
			print_arg_names(p);
			fprintf(stderr, ")\n");
			return -1;
		}
		p->meta.exprs[p->meta.nexprs++] = a;
	}

	if (p->spec.captures) {
		/* FUNCTION(EXPR, ...): print just those values, as %v. */
		size_t k, n = 0;

		p->capfmt[0] = '\0';
		for (k = 0; k < p->meta.nexprs && n + 4 < sizeof(p->capfmt); k++)
			n += snprintf(p->capfmt + n, sizeof(p->capfmt) - n,
				      "%s%%v", k ? " " : "");
		p->meta.fmt = p->capfmt;
	}

	memset(&p->plan, 0, sizeof(p->plan));
	p->plan.probe_id = id;
	p->plan.kind = p->spec.kind;
	p->plan.nfetch = p->meta.nargs;
	p->plan.str_max = env.str_max;
	for (i = 0; i < (int)p->plan.nfetch; i++) {
		if (p->path[i])
			p->plan.fetch[i] = p->path_fetch[i];
		else
			plan_fetch(&p->plan.fetch[i], &p->args[i]);
	}
	if (p->spec.predicate) {
		enum gtr_type types[GTR_MAX_ARGS];
		char err[1024];
		int n;

		for (i = 0; i < (int)p->meta.nargs; i++)
			types[i] = p->args[i].type;
		n = pred_compile(p->spec.predicate, resolve_cb, p, types,
				 p->meta.nargs, p->plan.pred, GT_MAX_PRED, err,
				 sizeof(err));
		if (n < 0) {
			fprintf(stderr, "gotrace-record: probe '%s': %s\n",
				p->spec.text, err);
			return -1;
		}
		p->plan.npred = n;
	}
	p->plan.rate = env.rate;
	plan_goid(p);
	if (env.stack)
		p->plan.flags |= GT_P_STACK;
	return probe_sites(p) ? -1 : 0;
}

static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

struct expand {
	const struct gobin *b;
	struct gobin_func *funcs;
	int n, cap;
	int excluded;         /* matched, then left out by --exclude */
};

/* Whether f is one of the functions a probe on its exact name means. */
static int is_listed(const struct gobin *b, const struct gobin_func *f)
{
	struct gobin_func same[16];
	int n = gobin_func_find_all(b, f->name, same, 16), i;

	for (i = 0; i < n && i < 16; i++)
		if (same[i].entry == f->entry)
			return 1;
	return n > 16;   /* too many to tell: keep it */
}

static int collect(const struct gobin_func *f, void *ctx)
{
	struct expand *e = ctx;
	int i;

	/* An ABI wrapper beside a real function of its name: the real one
	 * is probed, a second probe would count each call twice. */
	if (gobin_func_find_all(e->b, f->name, NULL, 0) < 2 ? 0 :
	    !is_listed(e->b, f))
		return 0;
	for (i = 0; i < env.nexcludes; i++)
		if (!fnmatch(env.excludes[i], f->name, 0)) {
			e->excluded++;
			return 0;
		}
	if (e->n == e->cap) {
		int cap = e->cap ? e->cap * 2 : 64;
		struct gobin_func *v = realloc(e->funcs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->funcs = v;
		e->cap = cap;
	}
	e->funcs[e->n++] = *f;
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
int expand_spec(const char *text, const char *dflt_path,
		const char *dflt_attach)
{
	struct probe_spec spec;
	struct expand e = { .b = NULL };
	struct binary *b;
	char err[512];
	int i, n, first = nprobes;

	if (probe_spec_parse(text, &spec, err, sizeof(err))) {
		fprintf(stderr, "gotrace-record: %s\n", err);
		return -1;
	}
	if (spec.binary) {
		char inroot[PATH_MAX];
		const char *at = spec.binary;

		/* A path inside the target's container, seen from here. */
		if (env.root_pid && access(at, F_OK) && spec.binary[0] == '/') {
			snprintf(inroot, sizeof(inroot), "/proc/%d/root%s",
				 env.root_pid, spec.binary);
			if (!access(inroot, F_OK))
				at = inroot;
		}
		b = binary_get(spec.binary, at);
	} else if (dflt_path) {
		b = binary_get(dflt_path, dflt_attach);
	} else {
		fprintf(stderr, "gotrace-record: probe '%s' names no binary; "
			"write BINARY:FUNCTION to trace every process of "
			"BINARY, or give -p PID or -- CMD\n", spec.text);
		return -1;
	}
	if (!b)
		return -1;
	n = gobin_func_find_all(b->gb, spec.func, NULL, 0);
	if (n > 0) {
		/* An exact name; generic functions have one function of that
		 * name per instantiation ("main.Map[...]"): probe each. */
		struct gobin_func *all = calloc(n, sizeof(*all));

		if (!all)
			return -1;
		gobin_func_find_all(b->gb, spec.func, all, n);
		for (i = 0; i < n; i++)
			if (add_probe(&spec, b, &all[i])) {
				free(all);
				return -1;
			}
		free(all);
		return 0;
	}
	if (has_glob(spec.func)) {
		e.b = b->gb;
		if (gobin_func_each(b->gb, spec.func, collect, &e) < 0)
			return -1;
		for (i = 0; i < e.n; i++) {
			/* A glob skips functions it cannot probe (reason
			 * printed); a limit or memory failure stops all. */
			if (add_probe(&spec, b, &e.funcs[i]) == -1) {
				free(e.funcs);
				return -1;
			}
		}
		free(e.funcs);
		if (nprobes > first)
			return 0;
		if (e.excluded)
			fprintf(stderr, "gotrace-record: all %d functions of %s "
				"matching '%s' are left out by --exclude\n",
				e.excluded, b->path, spec.func);
		else if (e.n)
			fprintf(stderr, "gotrace-record: none of the %d functions "
				"of %s matching '%s' can be probed (reasons above)\n",
				e.n, b->path, spec.func);
		else
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

