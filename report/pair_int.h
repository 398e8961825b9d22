/* SPDX-License-Identifier: MIT */
/*
 * What pairing (report/pair.c) and its loss spans (report/pair_loss.c)
 * share: the pairer's state.
 */
#ifndef REPORT_PAIR_INT_H
#define REPORT_PAIR_INT_H

#include "gtr_rate.h"
#include "map.h"
#include "pair.h"

#define NO_FID UINT32_MAX
#define MAX_SPANS 32              /* loss intervals kept per function */
#define HOLD_MAX (60ull * 1000000000) /* what drop spans may stretch hold_ns to */
#define CHUNK (64u << 10)         /* bytes of a chunk of held records */
#define NPREV 3072                /* (probe, cpu) whose last drop is kept */

/* Disjoint closed intervals [lo, hi] of trace time, sorted. */
struct span {
	uint64_t lo, hi;
};

struct spanset {
	struct span *v;
	uint32_t n, cap;
};

enum held_kind {
	H_PASS,                   /* nothing to decide: an entry, an event of
				     a function pairing does not track */
	H_UNPAIRED,               /* a return with no open call of its function */
	H_PAIRED,                 /* a return that closed open calls */
};

/*
 * A held event. Followed by: struct gtr_value vals[nvals] (string data as
 * offsets from the record), their bytes, uint64_t stack[nstack], the
 * frames (H_PAIRED), uint32_t frame offsets[nframes] (from the first
 * frame) and uint32_t fids[nfids].
 */
struct held {
	uint32_t size;            /* bytes, header included, multiple of 8 */
	uint8_t kind;             /* enum held_kind */
	bool tracked;
	uint32_t fid;             /* the event's function; NO_FID unknown */
	uint32_t depth;
	uint64_t ts_ns, goid;
	uint32_t probe_id, pid, tid, cpu;
	enum gtr_kind ekind;
	uint32_t nvals, nstack, stack_off;
	uint32_t frames_off, nframes, offs_off, fids_off, nfids;
	uint64_t self_ns;
	const struct gtr_probe *probe;
	char comm[GTR_COMM_LEN + 1];
};

/*
 * A return being released, from its held record or, when it need not
 * wait, from its goroutine's memory (valid until the next event).
 */
struct release {
	uint8_t kind;             /* enum held_kind; H_PASS: none */
	bool lost;                /* shown alone as lost */
	bool paired;
	uint32_t pid, fid, probe_id;
	uint64_t goid, ts_ns, self_ns;
	uint32_t depth;           /* of the matched entry (H_PAIRED) */
	uint32_t nframes;         /* the matched entry, then those it closed over */
	const uint8_t *frames;    /* frame j at frames + offs[j] */
	const uint32_t *offs;
	const uint32_t *fids;     /* pair_last_stack() */
	uint32_t nfids;
};

struct chunk {
	struct chunk *next;
	uint32_t cap, head, tail;
	uint64_t data[];          /* cap bytes, 8-aligned */
};

struct frame {
	uint64_t ts_ns;
	uint64_t child_ns;        /* latency of paired callees */
	const struct gtr_probe *probe;
	uint32_t fid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t size;            /* bytes of the frame, header included */
	uint32_t nvals;
	uint32_t nstack;          /* frames of the entry's recorded stack */
	uint32_t stack_off;       /* offset of the stack in the frame */
	char comm[GTR_COMM_LEN + 1];
	/* struct gtr_value vals[nvals]; uint8_t bytes[]; uint64_t stack[nstack] */
};

struct gor {
	uint32_t pid;
	uint64_t key;             /* goid, or tid | 1 << 63 when goid is 0 */
	uint64_t goid;
	uint8_t *mem;             /* frames */
	uint32_t used, cap;
	uint32_t *offs;           /* offset of each open frame in mem */
	uint32_t depth, cap_offs;
	uint32_t over;            /* entries not tracked above the open calls
				     (--max-depth or max_bytes reached): the
				     next returns are theirs, unpaired */
};

#define RATE_WINDOW GTR_RATE_WINDOW /* the BPF program's rate limit window */
#define RATE_SLACK GTR_RATE_SLACK   /* events of two goroutines this close (1 ms)
				       may be counted out of time order */
#define RATE_FULL 4               /* full windows kept per probe */

struct probe_ent {
	uint32_t id;
	uint32_t fid;
	bool used;
	const struct gtr_probe *meta; /* as pair_probes() was told of it */
	bool aside;               /* its windows are set aside: whole calls */
	/* a rate-limited probe (gtr_probe_rate_limit()): its windows as its
	 * kept events show them (pair_loss.c, rate_kept()); rw.rate 0: none */
	struct gtr_rate_windows rw;
	struct span full[RATE_FULL]; /* the last spans where suppression was
				     possible (windows that kept `rate`) */
	uint32_t nfull;
	struct span pend;         /* suppressed in these, by drop records its
				     windows do not explain yet (pair_loss.c,
				     rate_settle()); valid when `pending` */
	bool pending;
};

struct pairer {
	struct pair_limits lim;
	struct pair_counts cnt;

	struct u64map pidx;       /* probe id -> index in pents */
	struct probe_ent *pents;  /* the probes seen, in file order */
	uint32_t npents;
	struct u64map fidx;       /* hash of "binary:symbol" -> fid */
	char **funcs;             /* fid -> "binary:symbol" */
	bool *fret;               /* fid -> the function has a return probe */
	bool *fentry;             /* fid -> the function has an entry probe */
	const struct gtr_probe **fpred; /* fid -> a probe of it with a
				     record-time predicate, NULL: none */
	bool *fnoted;             /* fid -> its note was printed */
	bool *fwhole;             /* fid -> each of its return probes kept
				     whole calls (gtr_probe.whole_calls) and
				     has no predicate: its entry probe's rate
				     limit and predicate left out no half of
				     a call */
	uint32_t nfuncs;

	struct gor *gors;
	uint32_t ngors, cap_gors;
	struct u64map gix;        /* hash of (pid, key) -> index in gors */
	uint32_t last_gor;        /* index of the goroutine met last */
	uint64_t bytes;

	struct gtr_event entry;   /* the last paired entry, rebuilt */
	struct gtr_event uentry;  /* an unwound or open entry, rebuilt */
	struct gtr_event rel;     /* the last released event, rebuilt */

	/* held events, oldest first */
	struct chunk *qhead, *qtail;
	struct chunk *spare;      /* free chunks of CHUNK bytes, at most
				     hold_bytes of them (the peak held) */
	uint64_t held_bytes;      /* chunks in the queue */
	bool popped;              /* the head record was released: drop it next */
	bool force, finished;

	/* the return released last (pair_last_stack, pair_foreach_unwound) */
	struct release cur;
	uint32_t *stack;          /* its fids, when released without a copy */
	uint32_t cap_stack;

	/* losses */
	struct spanset *spans;    /* per fid */
	uint32_t nspans;
	struct spanset all;       /* of every function */
	uint64_t *judged;         /* per fid (nspans): 1 + latest return
				     released as not lost, 0 none */
	uint64_t judged_any;
	/* the last drop record of a (probe, cpu), for spans without
	 * since_ns: its time, of NPREV at most */
	struct u64map prevx;      /* probe << 32 | cpu -> index in prev */
	uint64_t *prev;
	uint32_t nprev;
	bool any_rate;            /* some paired function has a rate limit */
	uint32_t npend;           /* probes with a pending span (probe_ent.pend) */
	uint64_t pend_due;        /* the earliest pend.hi of them */
	uint64_t max_seen;        /* latest ts_ns fed */
	uint64_t longest;         /* longest drop span with a known since_ns */
};

/* Probe `id` as pair_probes() was told of it, or NULL. */
static inline struct probe_ent *pmap_slot(const struct pairer *p, uint32_t id)
{
	const uint32_t *i = u64map_get(&p->pidx, id);

	return i ? &p->pents[*i] : NULL;
}

/* Whether function `fid` has entry and return probes, one of which had a
 * record-time predicate that left out one half of some calls (not whole
 * calls): its calls are not paired (pair.h). */
static inline bool fid_unpaired(const struct pairer *p, uint32_t fid)
{
	return fid < p->nfuncs && p->fret[fid] && p->fentry[fid] && p->fpred[fid] &&
	       !p->fwhole[fid];
}

/* Whether the calls of the function of probe `e` are paired: it has a
 * return probe, and no record-time predicate left some of its events out. */
static inline bool probe_has_ret(const struct pairer *p, const struct probe_ent *e)
{
	return p->fret[e->fid] && !fid_unpaired(p, e->fid);
}

/* pair_loss.c: makes room for the loss spans of function `fid`. */
void fid_room(struct pairer *p, uint32_t fid);

/* pair_loss.c: whether function `fid` lost events in [lo, hi]. */
bool lost_in(const struct pairer *p, uint32_t fid, uint64_t lo, uint64_t hi);

/* pair_loss.c: notes that a call of `fid` ending at `ts` was shown as
 * paired (or as a return without entry), for late drop records. */
void judge(struct pairer *p, uint32_t fid, uint64_t ts);

/* pair_loss.c: event `ev` of probe `e` (NULL: unknown) was kept; `key`
 * is its goroutine's (struct gor). Follows the windows of a paired
 * rate-limited probe. */
void rate_kept(struct pairer *p, struct probe_ent *e, const struct gtr_event *ev, uint64_t key);

/* pair_loss.c: starts the windows of probe `e` (its fid set) from `pr`:
 * in a later file of a rotation, from the window current when the file
 * began. */
void rate_begin(struct pairer *p, struct probe_ent *e, const struct gtr_probe *pr);

/* pair_loss.c: decides the drop records of suppressed events that waited
 * for the events before them (probe_ent.pend): those events read
 * RATE_SLACK past them, or every one when `all` (the end, or a release
 * forced by hold_bytes). A record no window explains becomes a loss span. */
void rate_settle(struct pairer *p, bool all);

#endif /* REPORT_PAIR_INT_H */
