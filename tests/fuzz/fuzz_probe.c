/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for probe specifications as gotrace-record reads them
 * (record/probe.c, spec/PROBES.md) and record-time predicates (parsed by
 * lang/, lowered by record/pred.c): the input is parsed as a probe; its
 * predicate, or else the whole input, is compiled with a resolver of one
 * named value of each type, also reachable as goargN (see
 * tests/unit/test_pred.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pred.h"
#include "probe.h"

/* value i is goarg(i + 1), or the i-th name below; one of every type */
static const struct { const char *name; enum gtr_type type; } vals[] = {
	{ "n", GTR_TYPE_INT }, { "u", GTR_TYPE_UINT }, { "s", GTR_TYPE_STRING },
	{ "b", GTR_TYPE_BYTES }, { "ok", GTR_TYPE_BOOL }, { "p", GTR_TYPE_PTR },
	{ "f", GTR_TYPE_FLOAT }, { "x", GTR_TYPE_OTHER }, { "w", GTR_TYPE_WORD },
	{ "i", GTR_TYPE_IFACE }, { "sl", GTR_TYPE_SLICE },
};
#define NTYPES ((int)(sizeof(vals) / sizeof(vals[0])))
static enum gtr_type types[NTYPES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (int i = 0; i < NTYPES; i++)
		types[i] = vals[i].type;
	return 0;
}

/* Index of the value `name` names, -ENOENT when none. */
static int resolve(void *ctx, const char *name)
{
	++*(int *)ctx;
	if (!strncmp(name, "goarg", 5) && name[5] >= '1' && name[5] <= '9' &&
	    (!name[6] || (name[6] >= '0' && name[6] <= '9' && !name[7]))) {
		const int k = atoi(name + 5);
		return k <= NTYPES ? k - 1 : -ENOENT;
	}
	for (int i = 0; i < NTYPES; i++)
		if (!strcmp(vals[i].name, name))
			return i;
	return -ENOENT;
}

static void compile(const char *text)
{
	struct gt_pred preds[GT_MAX_PRED + 1];
	char err[1024];
	int calls = 0;

	memset(preds, 0xa5, sizeof(preds));
	const int n = pred_compile(text, resolve, &calls, types, NTYPES, preds,
				   GT_MAX_PRED, err, sizeof(err));
	if (n > GT_MAX_PRED || (n < 0 && n != -EINVAL) || (n < 0 && !memchr(err, 0, sizeof(err))))
		abort();
	for (int i = 0; i < n; i++)
		if (preds[i].slot >= NTYPES)  /* resolve() gives no more */
			abort();
	if (preds[GT_MAX_PRED].slot != 0xa5)
		abort();  /* wrote past `max` */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct probe_spec sp;
	char err[1024];
	const int rc = probe_spec_parse(text, &sp, err, sizeof(err));
	if (rc == 0) {
		if (!sp.func || sp.nexprs < 0 || sp.nexprs > GTR_MAX_ARGS)
			abort();
		for (int i = 0; i < sp.nexprs; i++)
			if (!sp.exprs[i])
				abort();
		if (sp.predicate)
			compile(sp.predicate);
	} else if (rc != -EINVAL && rc != -ENOMEM) {
		abort();
	}
	probe_spec_free(&sp);
	compile(text);
	free(text);
	return 0;
}
