/* SPDX-License-Identifier: MIT */
/*
 * merge: several recordings (hosts, processes, recorders) into one trace,
 * in time order (spec/FORMAT.md, "PEER"). Each input is read once, its
 * next event held while the others catch up; the earliest goes out through
 * the input's copier (gtr.h, "Copying"), which renumbers probe and binary
 * ids and, between hosts, pids.
 *
 * Time: the first input's CLOCK_MONOTONIC is the output's. An input from
 * the same machine and boot keeps its timestamps (one clock: order is exact,
 * so a send recorded by one recorder comes before its receive recorded by
 * the other); any other input's move through its wall clock: its start
 * anchor's CLOCK_REALTIME - CLOCK_MONOTONIC against the first input's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "merge.h"
#include "run.h"
#include "xalloc.h"

#define PROG "gotrace-report"
/* Recordings whose boot epochs (CLOCK_REALTIME - CLOCK_BOOTTIME at start)
 * differ by less than this are of one boot: they share CLOCK_MONOTONIC. */
#define SAME_BOOT_NS 50000000ll

struct input {
	const char *path;
	struct gtr_reader *r;
	struct gtr_copier *copy;
	int64_t offset;          /* ns onto the output's clock */
	uint32_t host;           /* output index of its host 0 (a merged
				  * input's others follow it) */
	int item;                /* enum gtr_item of the record held, or < 0 */
	struct gtr_event ev;     /* the event held (valid until r's next read) */
	struct gtr_drop drop;
};

static int64_t wall_minus_mono(const struct gtr_host *h)
{
	return (int64_t)(h->start_realtime_ns - h->start_mono_ns);
}

static int64_t boot_epoch(const struct gtr_host *h)
{
	return (int64_t)(h->start_realtime_ns - h->start_boottime_ns);
}

/* Whether recordings a and b share CLOCK_MONOTONIC: one machine in one
 * boot (containers of one machine too, whatever their host names). */
static bool same_clock(const struct gtr_host *a, const struct gtr_host *b)
{
	const int64_t d = boot_epoch(a) - boot_epoch(b);

	return !strcmp(a->kernel, b->kernel) && !strcmp(a->machine, b->machine) &&
	       a->start_boottime_ns && b->start_boottime_ns &&
	       d < SAME_BOOT_NS && d > -SAME_BOOT_NS;
}

/*
 * The hosts of the output, one per recording: every host of every input
 * in input order (a merged input's HOST and PEER blocks, flattened), into
 * hosts[*nhosts] (NULL: an index its input has no PEER for); each input's
 * first index and clock offset (0 on the first input's clock, else
 * through the wall clocks); hosts of one name on one machine in one boot
 * share a pid space in `ids`. 0, or -1 after a message.
 */
static int place_inputs(struct input *in, size_t n, const struct gtr_host ***hosts,
			uint32_t *nhosts, struct gtr_id_space *ids)
{
	const struct gtr_host *base = gtr_reader_host(in[0].r);
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += gtr_reader_nhosts(in[i].r);
	if (total > GTR_MAX_HOSTS) {
		fprintf(stderr, PROG ": the inputs hold %" PRIu64 " recordings, more than the %u "
			"one file keeps apart; merge fewer at once\n", total, GTR_MAX_HOSTS);
		return -1;
	}
	*hosts = xcalloc(total, sizeof(**hosts), "merge");
	*nhosts = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gtr_host *h = gtr_reader_host(in[i].r);

		in[i].host = *nhosts;
		in[i].offset = same_clock(h, base) ? 0 : wall_minus_mono(h) - wall_minus_mono(base);
		for (uint32_t k = 0; k < gtr_reader_nhosts(in[i].r); k++)
			(*hosts)[(*nhosts)++] = gtr_reader_host_at(in[i].r, k);
	}
	for (uint32_t k = 1; k < *nhosts; k++) {
		const struct gtr_host *h = (*hosts)[k];

		for (uint32_t j = 0; h && j < k; j++) {
			const struct gtr_host *o = (*hosts)[j];
			if (!o || strcmp(o->hostname, h->hostname) || !same_clock(o, h))
				continue;
			if (gtr_id_space_share(ids, k, j)) {
				fprintf(stderr, PROG ": out of memory\n");
				return -1;
			}
			break;
		}
	}
	return 0;
}

static uint64_t head_ts(const struct input *in)
{
	/* on the output's clock, as the copier writes it */
	return gtr_copier_ts(in->copy, in->item == GTR_ITEM_DROP ? in->drop.ts_ns : in->ev.ts_ns);
}

/* Reads the next record of `in`. 0, or -1 after a message. */
static int advance(struct input *in)
{
	in->item = gtr_reader_next(in->r, &in->ev, &in->drop);
	if (in->item >= 0)
		return 0;
	fprintf(stderr, PROG ": %s: %s\n", in->path, gtr_reader_error(in->r));
	return -1;
}

/*
 * Whether two of the inputs are one file (a path given twice, a link to
 * it): merged, each of its events would be there twice. Says which.
 */
static bool same_file_twice(const struct merge_opts *o)
{
	struct stat *st = xcalloc(o->ninputs, sizeof(*st), "merge");
	bool twice = false;

	for (size_t i = 0; i < o->ninputs && !twice; i++) {
		if (!strcmp(o->inputs[i], "-") || stat(o->inputs[i], &st[i]) ||
		    !S_ISREG(st[i].st_mode))
			continue;
		for (size_t j = 0; j < i && !twice; j++) {
			if (st[j].st_ino != st[i].st_ino || st[j].st_dev != st[i].st_dev ||
			    !S_ISREG(st[j].st_mode))
				continue;
			fprintf(stderr, PROG ": %s and %s are the same file: its events would "
				"be there twice; give each recording once\n",
				o->inputs[j], o->inputs[i]);
			twice = true;
		}
	}
	free(st);
	return twice;
}

/* Whether hosts a and b started at one moment: one recording. */
static bool same_start(const struct gtr_host *a, const struct gtr_host *b)
{
	return a->start_mono_ns == b->start_mono_ns &&
	       a->start_realtime_ns == b->start_realtime_ns &&
	       a->start_boottime_ns == b->start_boottime_ns;
}

/*
 * (merge.h) A recording is known by the three clocks its HOST (or PEER)
 * block read when it started (a later file of a rotation reads them
 * again: it is not the same); the host name is not compared, as
 * redaction may hash it. Every host of a merged input is compared.
 */
bool report_same_recording(struct gtr_reader *const *r, const char *const *path, size_t n,
			   size_t side2)
{
	for (size_t i = 0; i < n; i++) {
		const uint32_t ni = r[i] ? gtr_reader_nhosts(r[i]) : 0;

		for (size_t j = 0; j < i; j++) {
			const uint32_t nj = r[j] ? gtr_reader_nhosts(r[j]) : 0;

			for (uint32_t hi = 0; hi < ni; hi++) {
				const struct gtr_host *a = gtr_reader_host_at(r[i], hi);

				for (uint32_t hj = 0; a && a->start_mono_ns && hj < nj; hj++) {
					const struct gtr_host *b = gtr_reader_host_at(r[j], hj);

					if (!b || !same_start(a, b))
						continue;
					if (a->origin_ns && b->origin_ns) {
						fprintf(stderr, PROG ": warning: %s and %s are selections "
							"of one recording: an event both hold is there twice\n",
							path[j], path[i]);
						continue;
					}
					if ((j < side2) != (i < side2))
						fprintf(stderr, PROG ": %s and %s are the same recording "
							"(host %s, started at the same instant): diff would "
							"compare it with itself; give a recording of each "
							"side (the base build's and the new one's)\n",
							path[j], path[i], a->hostname);
					else if (ni > 1 || nj > 1)
						fprintf(stderr, PROG ": %s and %s hold the same recording "
							"(host %s, merged into %s): its events would be there "
							"twice; give each recording once\n", path[j],
							path[i], a->hostname, ni > 1 && nj > 1 ? "both" :
							ni > 1 ? path[i] : path[j]);
					else
						fprintf(stderr, PROG ": %s and %s are the same recording "
							"(%s): its events would be there twice; give each "
							"recording once\n", path[j], path[i],
							a->origin_ns || b->origin_ns ?
							"one a selection of the other" : "a copy of one file");
					return true;
				}
			}
		}
	}
	return false;
}

/* Opens every input and the output. 0, or -1 after a message (-2: two
 * inputs are one recording, a usage error). */
static int open_all(struct input *in, size_t n, const struct merge_opts *o,
		    struct gtr_writer **w, struct gtr_id_space **ids)
{
	const struct gtr_host **hosts = NULL;
	uint32_t nhosts;
	char err[512];
	int rc = -1;

	for (size_t i = 0; i < n; i++) {
		in[i].path = o->inputs[i];
		in[i].r = gtr_reader_open(in[i].path, err, sizeof(err));
		if (!in[i].r) {
			fprintf(stderr, PROG ": %s\n", err);
			return -1;
		}
		if (gtr_reader_preload(in[i].r) < 0) {
			fprintf(stderr, PROG ": %s\n", gtr_reader_error(in[i].r));
			return -1;
		}
	}
	struct gtr_reader **rs = xcalloc(n, sizeof(*rs), "merge");
	const char **paths = xcalloc(n, sizeof(*paths), "merge");

	for (size_t i = 0; i < n; i++) {
		rs[i] = in[i].r;
		paths[i] = in[i].path;
	}
	const bool same = report_same_recording(rs, paths, n, n);

	free(rs);
	free(paths);
	if (same)
		return -2;                  /* a usage error */
	if (!(*ids = gtr_id_space_new())) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	if (place_inputs(in, n, &hosts, &nhosts, *ids))
		goto out;
	*w = gtr_writer_create_redacted(o->output, o->flags, hosts[0], o->redact, err, sizeof(err));
	if (!*w) {
		fprintf(stderr, PROG ": %s\n", err);
		goto out;
	}
	for (uint32_t k = 1; k < nhosts; k++)
		if (hosts[k] && gtr_writer_peer(*w, k, hosts[k]))
			goto werr;
	for (size_t i = 0; i < n; i++) {
		const struct gtr_copy_opts co = {
			.ts_offset = in[i].offset, .host = in[i].host, .ids = *ids,
			.skip_clocks = i > 0,  /* the first input's clock is the output's */
		};
		if (!(in[i].copy = gtr_copier_new(in[i].r, *w, &co)) ||
		    gtr_copier_start(in[i].copy))
			goto werr;
	}
	rc = 0;
	goto out;
werr:
	fprintf(stderr, PROG ": %s\n", gtr_writer_error(*w)[0] ? gtr_writer_error(*w) : "out of memory");
out:
	free(hosts);
	return rc;
}

/* Writes every record of every input, earliest first. 0, or -1 after a
 * message. */
static int merge_records(struct input *in, size_t n, struct gtr_writer *w)
{
	for (size_t i = 0; i < n; i++)
		if (advance(&in[i]))
			return -1;
	for (;;) {
		struct input *next = NULL;

		for (size_t i = 0; i < n; i++)
			if (in[i].item != GTR_ITEM_END && (!next || head_ts(&in[i]) < head_ts(next)))
				next = &in[i];
		if (!next)
			return 0;
		const int rc = next->item == GTR_ITEM_DROP ? gtr_copier_drop(next->copy, &next->drop)
			       : gtr_copier_event(next->copy, &next->ev);
		if (rc) {
			fprintf(stderr, PROG ": %s\n", gtr_writer_error(w));
			return -1;
		}
		if (advance(next))
			return -1;
	}
}

int report_merge(const struct merge_opts *o)
{
	struct input *in;
	struct gtr_writer *w = NULL;
	struct gtr_id_space *ids = NULL;
	uint64_t events = 0;
	char err[512];
	int rc;

	if (same_file_twice(o))
		return EXIT_USAGE;
	in = xcalloc(o->ninputs, sizeof(*in), "merge");
	rc = open_all(in, o->ninputs, o, &w, &ids);

	if (!rc)
		rc = merge_records(in, o->ninputs, w);
	for (size_t i = 0; !rc && i < o->ninputs; i++) {
		if (gtr_copier_finish(in[i].copy)) {
			fprintf(stderr, PROG ": %s\n", gtr_writer_error(w));
			rc = -1;
		}
		events += gtr_copier_events(in[i].copy);
	}
	if (w && gtr_writer_close(w, err, sizeof(err)) && !rc) {
		fprintf(stderr, PROG ": %s\n", err);
		rc = -1;
	}
	if (!rc)
		report_redact_unused(o->redact, o->output);
	if (!rc && !o->quiet && o->redact)
		fprintf(stderr, PROG ": %" PRIu64 " events written to %s, redacted by %" PRIu32
			" rules\n", events, o->output, gtr_redactor_nrules(o->redact));
	else if (!rc && !o->quiet)
		fprintf(stderr, PROG ": %" PRIu64 " events of %zu recordings merged into %s\n",
			events, o->ninputs, o->output);
	for (size_t i = 0; i < o->ninputs; i++) {
		gtr_copier_free(in[i].copy);
		if (in[i].r)
			gtr_reader_close(in[i].r);
	}
	gtr_id_space_free(ids);
	free(in);
	return rc == -2 ? EXIT_USAGE : rc ? EXIT_READ : 0;
}

void report_redact_unused(const struct gtr_redactor *red, const char *out)
{
	const char *rule;
	uint32_t k = 0;

	while (red && (rule = gtr_redactor_unused(red, &k)) != NULL)
		fprintf(stderr, PROG ": warning: --redact %s covered nothing written to %s: "
			"no probe there has a value it names (gotrace-report info lists "
			"the names)\n", rule, out);
}
