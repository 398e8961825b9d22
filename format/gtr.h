/* SPDX-License-Identifier: MIT */
/*
 * libgtr: the .gtr trace file of gotrace, its data model, writer and
 * streaming reader. This is the only header of format/ that other parts of
 * gotrace include; spec/FORMAT.md is the normative description of the bytes.
 *
 * Conventions: timestamps are CLOCK_MONOTONIC nanoseconds unless a name says
 * otherwise; sizes are bytes; functions returning int return 0 (or a count)
 * on success and a negative errno-style code on failure, with a message in
 * the object's error buffer (gtr_writer_error(), gtr_reader_error()).
 */
#ifndef GTR_H
#define GTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Release of gotrace (both programs and this library). */
#define GOTRACE_VERSION "0.2.0"

/* Format version written by this library (spec/FORMAT.md, "Versioning"). */
#define GTR_VERSION_MAJOR 1
#define GTR_VERSION_MINOR 0

/* Upper bounds the reader enforces on what a file may declare. */
#define GTR_MAX_ARGS 32          /* values per event / arguments per probe */
#define GTR_MAX_NAME 1024        /* bytes in a name, path or type string */
#define GTR_MAX_STRING 65536     /* captured bytes of one string value */
#define GTR_COMM_LEN 16          /* bytes of a task name, as the kernel's */
#define GTR_MAX_HOSTS 4096u      /* hosts (recordings) of a merged file */

/* What a probe or event captures: its entry or one of its returns. */
enum gtr_kind {
	GTR_KIND_ENTRY = 0,
	GTR_KIND_RETURN = 1,
};

/*
 * Type class of a captured argument; decides how values are encoded and
 * printed. GTR_TYPE_WORD is a raw machine word captured without type
 * information (no DWARF and no signature).
 */
enum gtr_type {
	GTR_TYPE_WORD = 0,   /* unsigned 64-bit register or stack word */
	GTR_TYPE_INT = 1,    /* signed integer of `size` bytes */
	GTR_TYPE_UINT = 2,   /* unsigned integer of `size` bytes (uintptr too) */
	GTR_TYPE_BOOL = 3,
	GTR_TYPE_PTR = 4,    /* pointer, map, chan, func, unsafe.Pointer */
	GTR_TYPE_STRING = 5, /* Go string: bounded content, true length kept */
	GTR_TYPE_FLOAT = 6,  /* float32/float64 */
	GTR_TYPE_OTHER = 7,  /* known type gotrace does not capture (yet) */
	GTR_TYPE_BYTES = 8,  /* []byte or raw memory: bounded bytes, true length */
	GTR_TYPE_IFACE = 9,  /* interface: the name of its dynamic type, "<nil>" */
	GTR_TYPE_SLICE = 10, /* slice "[]T": its first elements' bytes, in T's
				memory layout; gtr_arg.size is the size of one
				element (0: unknown, then nothing is captured
				and full_len is the length in elements, else
				full_len is length * size); its capacity is a
				separate value "cap(NAME)"; also an array
				[N]T (gtr_arg.count), without a capacity */
};

/* Kind of one decoded value. */
enum gtr_value_kind {
	GTR_VAL_NONE = 0,  /* unavailable (e.g. float in an XMM register) */
	GTR_VAL_INT = 1,   /* v.i */
	GTR_VAL_UINT = 2,  /* v.u */
	GTR_VAL_BOOL = 3,  /* v.b */
	GTR_VAL_STR = 4,   /* v.s: bytes (not NUL-terminated, maybe not UTF-8) */
};

/* One captured value. Strings point into reader- or caller-owned memory. */
struct gtr_value {
	enum gtr_value_kind kind;
	union {
		int64_t i;
		uint64_t u;
		bool b;
		struct {
			const uint8_t *data; /* captured bytes, `len` of them */
			uint32_t len;        /* bytes captured (<= GTR_MAX_STRING) */
			uint64_t full_len;   /* the string's true length in the target */
		} s;
	} v;
};

/*
 * Strings in the structs below are const char *: the writer only reads
 * them, so callers pass literals and borrowed strings as they are. In the
 * structs the reader returns, the same fields point to strings the reader
 * owns: valid until gtr_reader_close(), never to be changed or freed by
 * the caller; the reader frees them in one place (free_str() in
 * format/reader_meta.c, through a cast). One set of types serves both
 * directions, so a probe or binary read from a file can be written again
 * as it is; owned twins of every struct would cost more than that cast.
 */

/* Description of one argument of a probe. */
struct gtr_arg {
	const char *name;      /* parameter name, "" when unknown */
	const char *type_name; /* Go type as written ("int", "*main.T"), "" unknown */
	enum gtr_type type;
	uint32_t size;       /* bytes of the value in the target */
	const char *redacted; /* "hash" or "drop" when its values were redacted
				 (spec/REDACT.md), "" (or NULL) when not */
	const char *elem;    /* GTR_TYPE_SLICE: the predeclared type its
				elements' bytes are ("int64", "uint8",
				"float64", "bool", "unsafe.Pointer"),
				whatever the
				type's name; "" (or NULL): read it from a
				"[]T" type_name (files of older recorders) */
	uint32_t count;      /* GTR_TYPE_SLICE: an array's length (type
				[N]T), 0 for a slice */
};

/* An attached probe: a function of a binary and what each hit captures. */
struct gtr_probe {
	uint32_t id;          /* unique in the file; events refer to it */
	uint32_t binary_id;   /* gtr_binary.id of the binary it is in */
	enum gtr_kind kind;
	const char *func;     /* full Go symbol, e.g. "net/http.(*conn).serve" */
	uint64_t address;     /* function entry, link-time virtual address */
	const char *spec;     /* the probe as the user wrote it */
	const char *fmt;      /* trace.py-style format string, "" for none */
	uint32_t nargs;
	struct gtr_arg args[GTR_MAX_ARGS];
	uint32_t nexprs;      /* format expressions, as indexes into args */
	uint32_t exprs[GTR_MAX_ARGS];
	const char *args_source; /* where the arguments' names, types and places
				    came from: "DWARF", "signature", "raw" (words
				    of the calling convention), "" unknown */
	/* Optional (absent, "": not so): */
	const char *inlined_into; /* the probe is on an inlined copy of func
				     in the code of this function */
	const char *call_site;    /* where that copy was inlined, "FILE:LINE" */
	const char *line;         /* a source line probe: "PATH:LINE"; func is
				     the function the line is in */
	const char *predicate;    /* the record-time predicate, as written: the
				     kernel kept only the events it held for */
	uint64_t rate_limit;      /* gotrace-record --rate-limit: the kernel kept
				     at most this many events of the probe per
				     one-second window (spec/FORMAT.md), the
				     first window opened by the file's first
				     event; 0: none, not known (a selection),
				     or given as rate_window_limit */
	/* a later file of a rotation: the limit (in place of rate_limit, which
	 * a reader of an older release would reckon from the file's first
	 * event) and the window current when the file began, as the earlier
	 * files' events show it (format/gtr_rate.h); kept 0: none.
	 * gtr_probe_rate_limit() gives the limit whichever key holds it. */
	uint64_t rate_window_limit;   /* events per window; 0: none */
	uint64_t rate_window_ns;      /* its start, CLOCK_MONOTONIC ns */
	uint64_t rate_window_kept;    /* events it kept before this file */
	uint64_t rate_window_last_ns; /* the last of them */
	bool whole_calls;         /* a return probe that kept the returns of
				     the calls its function's entry probe kept
				     and no others (spec/FORMAT.md, PROBE):
				     the rate limit and the predicate of that
				     entry probe left out whole calls */
};

/* Identity of a traced executable. */
struct gtr_binary {
	uint32_t id;
	const char *path;        /* as opened by the recorder */
	const char *build_id;    /* hex of the GNU build id, "" when none */
	const char *go_build_id; /* Go's own build id, "" when none */
	const char *go_version;  /* "go1.19.8", "" when unknown */
	const char *compiler;    /* "gc" or "gccgo" */
	const char *arch;        /* "x86-64", "aarch64", "i386" */
	const char *abi;         /* "ABIInternal", "ABI0", "C" */
	bool pie, stripped, has_dwarf;
	const char *go_version_source; /* "buildinfo", "runtime.buildVersion", "" */
	int32_t goid_offset;     /* goid in runtime.g, bytes; -1: not recorded */
	const char *goid_source; /* "DWARF", "table", "derived", "" */
	uint32_t host;           /* a merged file: index of its host
				    (gtr_reader_host_at()), else 0 */
};

/* The recording host and the clock anchor taken at start. */
struct gtr_host {
	const char *hostname;
	const char *kernel;   /* uname release */
	const char *machine;  /* uname machine */
	const char *recorder; /* "gotrace-record <version>" */
	uint64_t start_mono_ns;     /* CLOCK_MONOTONIC at start */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME read with it */
	uint64_t start_boottime_ns; /* CLOCK_BOOTTIME read with it */
	/* A file selected from another (gotrace-report -w): the original's
	 * first event, CLOCK_MONOTONIC, from which reports count relative
	 * times; 0: this file's own first event. */
	uint64_t origin_ns;
	/* The redaction rules the file's values and names went through, as
	 * given, separated by spaces (never the key); "" (or NULL): none. */
	const char *redacted;
};

/* One event: a probe hit. Values point into memory owned by the producer. */
struct gtr_event {
	uint64_t ts_ns;      /* CLOCK_MONOTONIC */
	uint32_t probe_id;
	enum gtr_kind kind;
	uint32_t pid, tid;
	uint64_t goid;       /* goroutine id, 0 when unknown */
	uint32_t cpu;        /* CPU it ran on, GTR_CPU_UNKNOWN when not recorded */
	uint32_t nvals;
	struct gtr_value vals[GTR_MAX_ARGS];
	uint32_t nstack;     /* user stack, innermost first; 0 when none */
	const uint64_t *stack; /* runtime addresses, nstack of them */
};

#define GTR_CPU_UNKNOWN UINT32_MAX
#define GTR_MAX_STACK 127    /* frames per event */
#define GTR_MAX_INLINE_DEPTH 16 /* inlined frames at one address (reader) */

/* Events the kernel or recorder lost, reported as they happen. */
struct gtr_drop {
	uint64_t ts_ns;      /* when the loss was noticed, CLOCK_MONOTONIC */
	uint32_t probe_id;   /* UINT32_MAX when not known per probe */
	uint64_t count;
	uint32_t cpu;        /* GTR_CPU_UNKNOWN when counted over all CPUs */
	uint64_t since_ns;   /* start of the span the loss happened in
			        (the previous drop report), 0 unknown */
	uint32_t reason;     /* enum gtr_drop_reason */
};

/* Why events were not recorded. */
enum gtr_drop_reason {
	GTR_DROP_BUFFER = 0, /* the ring buffer was full (lost) */
	GTR_DROP_RATE = 1,   /* a --rate-limit suppressed them (by choice) */
};

/* A symbol: a function of a binary, to name recorded code addresses. */
struct gtr_symbol {
	uint64_t address;    /* link-time virtual address of the entry */
	uint64_t size;       /* bytes */
	const char *name;
	uint32_t ninlined;   /* ranges of inlined copies in the function */
	const struct gtr_inlined *inlined;
};

/*
 * Code of a function that is an inlined copy of another function: bytes
 * [off, off + size) from the function's address are a copy of `name`,
 * `depth` inlinings deep (1: inlined into the function itself, 2: into a
 * depth-1 copy...). The copies holding an address, deepest first, then
 * the function are its frames as Go's tracebacks show them.
 */
struct gtr_inlined {
	uint32_t off, size, depth;
	const char *name;
};

/* A file mapping of a traced process (from /proc/PID/maps). */
struct gtr_mapping {
	uint64_t ts_ns;      /* when it was seen, CLOCK_MONOTONIC */
	uint32_t pid;
	uint64_t start, end; /* runtime addresses, [start, end) */
	uint64_t offset;     /* file offset mapped at `start` */
	uint32_t binary_id;  /* UINT32_MAX when the file is not a known binary */
	const char *path;
	uint64_t vaddr;      /* link-time virtual address mapped at `start`
				(ELF p_vaddr + offset - p_offset), 0 unknown */
};

/* Paired readings of the three clocks, taken back to back. */
struct gtr_clock_sample {
	uint64_t monotonic_ns, realtime_ns, boottime_ns;
};

/* A process seen by the recorder (exec, exit and name). */
#define GTR_EXIT_UNKNOWN INT32_MIN  /* gtr_process.exit_code not known */

struct gtr_process {
	uint64_t ts_ns;      /* CLOCK_MONOTONIC */
	uint32_t pid;
	uint32_t binary_id;  /* its executable, UINT32_MAX when not traced */
	const char *comm;
	int32_t exit_code;   /* when `exited`: exit status 0..255, -signal when
				killed by one, GTR_EXIT_UNKNOWN when not known */
	bool exited;
	uint32_t host;       /* a merged file: index of its host, else 0 */
	uint32_t host_pid;   /* a merged file whose pid was renumbered (a process
				of another host had it): the pid on its host,
				else 0 */
};

/* ---------------------------------------------------------------- writer */

struct gtr_writer;

/* Flags of gtr_writer_create(). */
#define GTR_W_FORCE 1u   /* replace an existing regular file */

/*
 * gtr_writer_create() creates `path` (mode 0600, never through a symbolic
 * link, refusing an existing file unless GTR_W_FORCE) and writes the file
 * header and the host block. "-" is standard output (refused when it is a
 * terminal); an existing pipe, FIFO, socket or character device (also
 * through a link, e.g. /dev/stdout) is written as a stream: no seeking, so
 * a failed write cannot be cut back (gtr_writer_recover()). `host` NULL: the writer fills it in from
 * uname(2), gethostname(2) and the three clocks; NULL strings in a given
 * host are written as "". Text longer than GTR_MAX_NAME is cut and invalid
 * UTF-8 bytes are replaced by '?' in every metadata string. Returns NULL
 * with a message in err[errlen].
 */
struct gtr_writer *gtr_writer_create(const char *path, unsigned flags,
				     const struct gtr_host *host, char *err,
				     size_t errlen);

struct gtr_redactor;

/*
 * gtr_writer_create() with a redactor (NULL: none): every value and name
 * the writer is given goes through `red` before it is encoded (the host,
 * peers, binaries' paths, probes, events, task and process names,
 * mappings), so what the rules cover never reaches the file; see
 * "Redaction" below. `red` must outlive the writer.
 */
struct gtr_writer *gtr_writer_create_redacted(const char *path, unsigned flags,
					      const struct gtr_host *host,
					      struct gtr_redactor *red, char *err,
					      size_t errlen);

/* True when the writer streams (a pipe, FIFO or device; see above). */
bool gtr_writer_is_stream(const struct gtr_writer *w);

/* Appends a binary block; must precede probes that name it. 0 or -errno. */
int gtr_writer_binary(struct gtr_writer *w, const struct gtr_binary *b);

/* Appends a probe block; must precede its events. 0 or -errno. */
int gtr_writer_probe(struct gtr_writer *w, const struct gtr_probe *p);

/*
 * Records the name of a thread (`comm`, at most GTR_COMM_LEN bytes) in the
 * event stream; later events of (pid, tid) are shown with it. 0 or -errno.
 */
int gtr_writer_task(struct gtr_writer *w, uint32_t pid, uint32_t tid,
		    const char *comm);

/*
 * Appends one event to the current frame; the frame is written when it
 * reaches 128 KiB. String values keep at most GTR_MAX_STRING bytes (and
 * their full_len). 0, -ENOENT for a probe not written before, -EINVAL for
 * a malformed event, or -errno of a failed write (then every later call
 * fails with it).
 */
int gtr_writer_event(struct gtr_writer *w, const struct gtr_event *ev);

/*
 * Records lost events (count, probe or UINT32_MAX, cpu or GTR_CPU_UNKNOWN,
 * the span [since_ns, ts_ns] they were lost in) in the event stream.
 * 0 or -errno.
 */
int gtr_writer_drop(struct gtr_writer *w, const struct gtr_drop *d);

/*
 * Metadata blocks below (and binary, probe) are written in call order:
 * the writer first writes the pending events frame, so every event appended
 * before the call is in the file before the block and every later one after
 * it (spec/FORMAT.md, "Order").
 */

/*
 * Writes the symbol table of binary `binary_id`: syms[n] (link-time
 * addresses, any order; the writer sorts a copy) as one or more SYMBOLS
 * blocks of at most 8192 symbols each, each with its inlined ranges
 * (gtr_inlined, any order). Names longer than GTR_MAX_NAME are
 * cut, invalid UTF-8 replaced by '?'. Call it before the events whose
 * addresses it names. 0, -ENOENT when the binary was not written before,
 * -ENOMEM, or -errno of a failed write.
 */
int gtr_writer_symbols(struct gtr_writer *w, uint32_t binary_id,
		       const struct gtr_symbol *syms, size_t n);

/*
 * Records one file mapping of a traced process (from /proc/PID/maps), for
 * gtr_reader_symbolize(). Write every executable mapping of a process when
 * it is first traced, and new ones as they appear. 0, -EINVAL when
 * end <= start, or -errno.
 */
int gtr_writer_mapping(struct gtr_writer *w, const struct gtr_mapping *m);

/*
 * Records paired readings of CLOCK_MONOTONIC, CLOCK_REALTIME and
 * CLOCK_BOOTTIME (ns), taken back to back. The recorder calls it at start
 * and about every second, so wall-clock time stays exact when the clock is
 * stepped or slewed. 0 or -errno.
 */
int gtr_writer_clock(struct gtr_writer *w, const struct gtr_clock_sample *c);

/*
 * Records a process: when it was first traced or exec'ed (exited false),
 * and when it exited (exited true, exit_code). 0 or -errno.
 */
int gtr_writer_process(struct gtr_writer *w, const struct gtr_process *p);

/*
 * Compresses and writes the current frame, if it holds anything, so a crash
 * after this call loses nothing written before it. 0 or -errno.
 */
int gtr_writer_flush(struct gtr_writer *w);

/* Bytes written to the file so far (blocks and header). */
uint64_t gtr_writer_bytes(const struct gtr_writer *w);

/*
 * After a write error (a full disk): cuts the file back to the end of its
 * last complete block, drops the frame being built (*lost gets its
 * events), and accepts writes again; metadata written since may be lost
 * with the cut. 0 (also when nothing had failed), or -errno when the file
 * cannot be cut (the writer stays failed).
 */
int gtr_writer_recover(struct gtr_writer *w, uint64_t *lost);

/* Events appended so far. */
uint64_t gtr_writer_events(const struct gtr_writer *w);

/*
 * Flushes and writes the end-of-recording summary (the summary and index
 * blocks), leaving the file open: gtr_writer_bytes() is then the file's
 * final size. Append nothing after it; gtr_writer_close() still closes.
 * Returns 0 or -errno (message: gtr_writer_error()); called again, the
 * same.
 */
int gtr_writer_end(struct gtr_writer *w);

/*
 * Flushes, writes the end-of-recording summary (gtr_writer_end(), unless
 * it ran), closes the file and frees `w` (NULL is fine). Returns 0 or
 * -errno; the message, if any, is copied to err[errlen].
 */
int gtr_writer_close(struct gtr_writer *w, char *err, size_t errlen);

/* Message of the last failure of `w`. */
const char *gtr_writer_error(const struct gtr_writer *w);

/* For a selection from another file: the last event time (CLOCK_MONOTONIC
 * ns) of the original, recorded in the summary as `span_end_ns`. */
void gtr_writer_set_span_end(struct gtr_writer *w, uint64_t ns);

/* 0, or the negative errno that stopped the writer (-ENOSPC: disk full;
 * -EPIPE: the reader of a streamed trace went away). */
int gtr_writer_failed(const struct gtr_writer *w);

/*
 * Another host of a merged recording (a PEER block): `index` >= 1 is what
 * processes and binaries of that host name in their `host` field; the
 * HOST block is host 0. Write peers right after creating the writer.
 * 0 or -errno.
 */
int gtr_writer_peer(struct gtr_writer *w, uint32_t index, const struct gtr_host *h);

/* ---------------------------------------------------------------- copying */

/*
 * A copier writes events of a reader to a writer with the metadata they
 * need, written just before they need it: clock samples, the records and
 * mappings of their process (in a merge: of every process), task names, every probe the input describes
 * (with its binary), the symbols of every binary once an event with a
 * stack is copied, and, at gtr_copier_finish(), what came after the last
 * event (exits). It is how a selection (`gotrace-report -w`) and a merge
 * are written. Inputs of a merge share one id space: probe and binary ids
 * are renumbered densely, and a pid that a process of another pid space
 * already has in the output is renumbered above 2^22 (its process records
 * keep the pid on its host as `host_pid`). A merged input keeps its hosts:
 * its host k (PEER k) is host `host + k` of the output, and the pids it
 * renumbered go back to their pids on their hosts before the output's
 * renumbering (spec/FORMAT.md, "PEER").
 */
struct gtr_copier;
struct gtr_id_space;
struct gtr_reader;

struct gtr_copy_opts {
	int64_t ts_offset;          /* ns added to every timestamp: the input's
				       CLOCK_MONOTONIC onto the output's */
	uint32_t host;              /* host index in the output of the input's
				       host 0; its host k is host + k */
	struct gtr_id_space *ids;   /* shared renumbering; NULL: ids kept */
	bool skip_clocks;           /* leave the input's clock samples out (they
				       are not the output's clock) */
	bool partial;               /* a selection of the input's events: probes
				       lose their rate_limit, which the kept
				       events of a whole recording explain */
};

/* The shared id space of a merge, or NULL out of memory. */
struct gtr_id_space *gtr_id_space_new(void);
void gtr_id_space_free(struct gtr_id_space *s);

/*
 * Says that output host `host` shares the pid space of output host `with`
 * (< host): one machine in one boot under one host name, so that a
 * process both recordings hold keeps one pid, and a binary one
 * description. Hosts not shared have a space of their own. Call before
 * the copiers start. 0, -EINVAL (`with` >= `host`) or -ENOMEM.
 */
int gtr_id_space_share(struct gtr_id_space *s, uint32_t host, uint32_t with);

/* A copier from `r` to `w` (`o` NULL: ids and times kept); NULL out of
 * memory. It reads `r`'s metadata only; the caller reads its events. */
struct gtr_copier *gtr_copier_new(struct gtr_reader *r, struct gtr_writer *w,
				  const struct gtr_copy_opts *o);

/* The probes known before the first event (after gtr_reader_preload()),
 * so that the output describes them in the input's order; in a merge, the
 * pids of the processes known then are claimed (start the inputs in order:
 * of two hosts with one pid, the earlier keeps it) and their records
 * written. 0 or -errno. */
int gtr_copier_start(struct gtr_copier *c);

/* Writes event `ev` of the input (as gtr_reader_next() gave it, or a copy
 * of one) after what it needs. 0 or -errno (the writer's message). */
int gtr_copier_event(struct gtr_copier *c, const struct gtr_event *ev);

/* Writes a drop record of the input. 0 or -errno. */
int gtr_copier_drop(struct gtr_copier *c, const struct gtr_drop *d);

/* After the input's last event: its remaining process records (exits)
 * of copied processes, clock samples and probes. 0 or -errno. */
int gtr_copier_finish(struct gtr_copier *c);

/* Events copied so far. */
uint64_t gtr_copier_events(const struct gtr_copier *c);

/* Timestamp `ts` (ns) of the input as the output has it: moved by the
 * input's offset (0 stays 0: not known), never below 0. */
uint64_t gtr_copier_ts(const struct gtr_copier *c, uint64_t ts);

void gtr_copier_free(struct gtr_copier *c);

/* ---------------------------------------------------------------- redaction */

/*
 * A redactor rewrites values and names by rules (spec/REDACT.md):
 * RULE = [FUNC_GLOB ":"] TARGET ["=" ACTION], TARGET a glob over a value's
 * name (a parameter or result, NAME.FIELD of a struct, goargN/goretN) or a
 * class (@strings, @host, @paths, @comm, @spec), ACTION "hash" (default:
 * a keyed BLAKE2b hash, equal values stay equal) or "drop". A writer made
 * with gtr_writer_create_redacted() applies it to everything it writes;
 * the functions below are what it calls.
 */
enum gtr_redact_action {
	GTR_REDACT_NONE = 0,
	GTR_REDACT_HASH = 1,
	GTR_REDACT_DROP = 2,
};

#define GTR_REDACT_KEY_LEN 32  /* bytes of the hash key */

/* A redactor without rules, with a random key (never written anywhere);
 * NULL when out of memory or libsodium cannot start. */
struct gtr_redactor *gtr_redactor_new(void);

/* Frees `r` and wipes its key (NULL is fine). */
void gtr_redactor_free(struct gtr_redactor *r);

/*
 * Adds a rule. 0, or -EINVAL with a message in err[errlen] naming the
 * rule, the column (1-based) and what is expected there.
 */
int gtr_redactor_add_rule(struct gtr_redactor *r, const char *rule, char *err,
			  size_t errlen);

/*
 * Keys the hash with the file at `path`: 32 raw bytes, or 64 hex digits
 * (white space around them allowed). 0, or -errno with a message naming
 * the file and what to do in err[errlen].
 */
int gtr_redactor_key_file(struct gtr_redactor *r, const char *path, char *err,
			  size_t errlen);

/* Keys the hash with key[GTR_REDACT_KEY_LEN]. */
void gtr_redactor_set_key(struct gtr_redactor *r, const uint8_t *key);

/* Number of rules, and the rules as given, separated by spaces. */
uint32_t gtr_redactor_nrules(const struct gtr_redactor *r);
const char *gtr_redactor_rules(const struct gtr_redactor *r);
/*
 * The next rule, from index *k on, that has covered nothing of the probes
 * seen so far (gtr_redact_probe): a value name, @strings or FUNCTION:
 * that matched no value, or @spec no function. NULL when there is none;
 * *k moves past the rule returned (start at 0). @host, @paths and @comm
 * always apply.
 */
const char *gtr_redactor_unused(const struct gtr_redactor *r, uint32_t *k);

/*
 * Rewrites in place (strings then point into `r`, valid until the next
 * call of the same function): the host name (@host) and `redacted` (the
 * rules, after those the host had).
 */
void gtr_redact_host(struct gtr_redactor *r, struct gtr_host *h);

/*
 * The plan of probe p->id, computed here once per probe and kept in `r`:
 * which values each rule covers. Sets args[].redacted ("hash", "drop";
 * kept when p had it already), the type of a hashed []byte, slice or
 * interface to "string", and spec (@spec; its fmt then is ""). 0 or
 * -ENOMEM.
 */
int gtr_redact_probe(struct gtr_redactor *r, struct gtr_probe *p);

/*
 * Event `ev` with the values its probe's plan covers rewritten: `ev`
 * itself when it covers none, else a copy owned by `r` (valid until the
 * next call). Hashed strings become "redacted:" and 16 hex digits (true
 * length not kept), integers 64 bits of the hash, bools and floats
 * (hashed or dropped) and dropped values none (GTR_VAL_NONE). Events of a
 * probe gtr_redact_probe() has not seen are returned as they are.
 */
const struct gtr_event *gtr_redact_event(struct gtr_redactor *r,
					 const struct gtr_event *ev);

/* A path (@paths) and a task or process name (@comm, at most
 * GTR_COMM_LEN bytes), as written: the string itself when no rule covers
 * it, else one owned by `r`, valid until the next call of that function. */
const char *gtr_redact_path(struct gtr_redactor *r, const char *path);
const char *gtr_redact_comm(struct gtr_redactor *r, const char *comm);

/* ---------------------------------------------------------------- reader */

struct gtr_reader;

/* What one call of gtr_reader_next() produced. */
enum gtr_item {
	GTR_ITEM_END = 0,    /* clean end of file */
	GTR_ITEM_EVENT = 1,  /* *ev was filled */
	GTR_ITEM_DROP = 2,   /* *drop was filled */
};

/*
 * gtr_reader_open() opens `path` ("-" or NULL: standard input, read without
 * seeking) and reads its header.
 * Returns NULL with a message in err[errlen] that names the file and, where
 * it applies, the byte offset and what to do.
 */
struct gtr_reader *gtr_reader_open(const char *path, char *err,
				   size_t errlen);

/*
 * Reads forward to the next event or drop record. Metadata blocks met on the
 * way are absorbed and become visible through the accessors below. Returns
 * an enum gtr_item (>= 0) or a negative code for an error that ends
 * reading; damage that can be skipped is counted (gtr_reader_damage()) and
 * does not end reading. Values in *ev stay valid until the next call.
 */
int gtr_reader_next(struct gtr_reader *r, struct gtr_event *ev,
		    struct gtr_drop *drop);

/*
 * One condition of a pushed-down count (gtr_reader_count_run()) on value
 * `idx` of an event, as gtr_reader_next() would give it: an integer of a
 * GTR_TYPE_INT argument (GTR_VAL_INT) must lie in [slo, shi], any other
 * integer (GTR_VAL_UINT) in [ulo, uhi]; `negate` inverts that. An empty
 * range (lo > hi) holds for no value. An event with fewer values meets no
 * condition on the ones it lacks. `idx` may also name a field of the
 * event (GTR_COUNT_TS and the others below), compared as unsigned with
 * [ulo, uhi], or be GTR_COUNT_NONE, a condition no event meets.
 */
struct gtr_count_cond {
	uint32_t idx;
	bool negate;
	int64_t slo, shi;
	uint64_t ulo, uhi;
};

#define GTR_COUNT_NONE UINT32_MAX          /* met by no event */
#define GTR_COUNT_TS (UINT32_MAX - 1)      /* the event's time, ns (ts_ns) */
#define GTR_COUNT_PID (UINT32_MAX - 2)     /* its process id */
#define GTR_COUNT_TID (UINT32_MAX - 3)     /* its thread id */
#define GTR_COUNT_GOID (UINT32_MAX - 4)    /* its goroutine id */

#define GTR_COUNT_CONDS 32   /* conditions of one gtr_count_plan at most */
#define GTR_COUNT_TERMS 16   /* terms of one gtr_count_plan at most */

/*
 * What gtr_reader_count_run() counts: events of probe `probe_id` and kind
 * `kind` that meet one of its terms (an OR of ANDs). Term k is the
 * conditions conds[k ? term_end[k - 1] : 0, term_end[k]), all of which
 * must hold; nterms 0 makes all of conds[0, ncond) one term (none: every
 * event counts).
 */
struct gtr_count_plan {
	uint32_t probe_id;
	enum gtr_kind kind;
	uint32_t ncond;
	struct gtr_count_cond conds[GTR_COUNT_CONDS];
	uint32_t nterms;
	uint32_t term_end[GTR_COUNT_TERMS];
};

/*
 * A count that decodes only what it reads: consumes the event records
 * that follow in the current event frame while each is of plan->probe_id
 * and plan->kind, and one gtr_reader_next() would read through its delta
 * fast path (integer values; a byte string only where no condition
 * looks), keeping the reader's state exactly as gtr_reader_next() would.
 * It stops, consuming nothing more, at any other record, a frame's end,
 * or when a probe of that id is not described; gtr_reader_next() then
 * reads on. Returns how many events it consumed; adds those that meet
 * the plan to *matched and sets *last_ts to the last one's time (ns,
 * unchanged when none). Never fails: a malformed record is left to
 * gtr_reader_next().
 */
uint64_t gtr_reader_count_run(struct gtr_reader *r, const struct gtr_count_plan *plan,
			      uint64_t *matched, uint64_t *last_ts);

#define GTR_COUNT_PLANS 8   /* plans of one gtr_reader_count_plans() at most */

/*
 * gtr_reader_count_run() with several plans, of distinct probes (up to
 * GTR_COUNT_PLANS; a plan of a probe seen before is left out): consumes
 * the records that follow while each is of the probe and kind of one of
 * them, counting those that meet it, so that records of probes that
 * alternate (entries and their returns) count in one call.
 */
uint64_t gtr_reader_count_plans(struct gtr_reader *r, const struct gtr_count_plan *const *plans,
				uint32_t nplans, uint64_t *matched, uint64_t *last_ts);

/*
 * The probe id and kind of the record that follows in the current event
 * frame when gtr_reader_count_run() may take it (a delta event record of
 * a probe id below 24), so that a caller can pick the plan for it: true,
 * or false for any other record and at a frame's end.
 */
bool gtr_reader_count_peek(const struct gtr_reader *r, uint32_t *probe_id,
			   enum gtr_kind *kind);

/*
 * Called before the reader waits for input that has not arrived yet (a
 * pipe, or a followed file at its end), and again every 100 ms while it
 * waits: a chance to flush output and to give up. A nonzero return ends
 * reading there, as at the end of the file.
 */
typedef int (*gtr_wait_fn)(void *ctx);

/*
 * Live reading. `on_wait` (may be NULL) is called as gtr_wait_fn says.
 * `follow`: at the end of a regular file, wait for the recorder to write
 * more (polled every 100 ms), like `tail -f`, until the file's summary is
 * read, on_wait returns nonzero, or the writer is gone (the file did not
 * grow for 5 s and no process holds the flock(2) every writer of a file
 * takes: killed, crashed, or a copy); a block being written is waited
 * for, never taken for damage. Call before the first gtr_reader_next().
 */
void gtr_reader_follow(struct gtr_reader *r, bool follow, gtr_wait_fn on_wait,
		       void *ctx);

/*
 * Whether the input is not a regular file (a pipe, a terminal, a socket:
 * reads may block and nothing can be sought), as found when it was opened.
 */
bool gtr_reader_is_stream(const struct gtr_reader *r);

/* Probe `id`, or NULL when the file has not (yet) described it. */
const struct gtr_probe *gtr_reader_probe(const struct gtr_reader *r,
					 uint32_t id);

/* Number of probes and binaries met so far, and access by position. */
uint32_t gtr_reader_nprobes(const struct gtr_reader *r);
const struct gtr_probe *gtr_reader_probe_at(const struct gtr_reader *r,
					    uint32_t i);
uint32_t gtr_reader_nbinaries(const struct gtr_reader *r);
const struct gtr_binary *gtr_reader_binary_at(const struct gtr_reader *r,
					      uint32_t i);

/* Host block of the file (always present once the reader is open). */
const struct gtr_host *gtr_reader_host(const struct gtr_reader *r);

/*
 * Hosts of a merged file, one entry per recording (two may have one host
 * name; spec/FORMAT.md, "PEER"): 1 + its PEER blocks read so far; host 0 is
 * gtr_reader_host(). gtr_reader_host_at() is NULL past the end (or for an
 * index no PEER block gave). gtr_reader_pid_host() is the host of the
 * process `pid` (from its PROCESS records), 0 when not said.
 */
uint32_t gtr_reader_nhosts(const struct gtr_reader *r);
const struct gtr_host *gtr_reader_host_at(const struct gtr_reader *r, uint32_t i);
uint32_t gtr_reader_pid_host(const struct gtr_reader *r, uint32_t pid);

/*
 * Task name of (pid, tid) last recorded before the current event, or "".
 * Valid until the next gtr_reader_next() call.
 */
const char *gtr_reader_comm(const struct gtr_reader *r, uint32_t pid,
			    uint32_t tid);

/*
 * Task records read so far. While it stays the same, every name
 * gtr_reader_comm() gave stays valid and is still the name it gives, so a
 * caller may keep one instead of asking per event.
 */
uint64_t gtr_reader_task_gen(const struct gtr_reader *r);

/*
 * Reads metadata blocks up to the first event frame without consuming any
 * event, so probes known at start can be inspected (e.g. to type-check a
 * filter). 0 or negative on error.
 */
int gtr_reader_preload(struct gtr_reader *r);

/*
 * Whether the next event frame is decompressed on a second thread while the
 * current one is decoded (default: on). Off, the reader uses one thread.
 * Either way it returns the same items.
 */
void gtr_reader_set_prefetch(struct gtr_reader *r, bool on);

/* Version the file declares. */
void gtr_reader_version(const struct gtr_reader *r, unsigned *major,
			unsigned *minor);

/* Damaged blocks skipped so far, and whether the file ended mid-block. */
uint64_t gtr_reader_damage(const struct gtr_reader *r);
bool gtr_reader_truncated(const struct gtr_reader *r);

/* Whether the file's last block, which says it is the end-of-recording
 * summary, failed its checksum: the recording was closed, but the
 * summary's counts are lost (the events before it were read). */
bool gtr_reader_summary_damaged(const struct gtr_reader *r);

/*
 * Blocks of unknown type and event-frame records of unknown type skipped so
 * far (a newer minor version of the format may add them; not damage).
 */
uint64_t gtr_reader_skipped(const struct gtr_reader *r);

/* End-of-recording summary (SUMMARY block), written by gtr_writer_close(). */
struct gtr_summary {
	bool present;         /* false until read; absent if the recorder died */
	uint64_t events;      /* events the writer wrote */
	uint64_t drops;       /* lost events, sum of the drop records' counts
				 whose reason is GTR_DROP_BUFFER */
	uint64_t suppressed;  /* events a rate limit suppressed (reason
				 GTR_DROP_RATE) */
	uint64_t first_ts_ns; /* earliest and latest record timestamps */
	uint64_t last_ts_ns;
	uint64_t nframes;     /* event frames in the frame index */
	uint32_t nprobes;     /* entries of probe_ids/probe_events (kept, bounded) */
	const uint32_t *probe_ids;
	const uint64_t *probe_events; /* events per probe, as the writer counted */
	bool frames_truncated; /* the writer's frame index stopped at 2^20 */
	uint64_t span_end_ns; /* a selected file: the original's last event, over
				 which reports measure rates; 0: none */
};

/*
 * The summary, once gtr_reader_next() has read it (it is the last block,
 * so after GTR_ITEM_END). A file without one was not closed by its writer.
 */
const struct gtr_summary *gtr_reader_summary(const struct gtr_reader *r);

/* Message of the last error or damage report ("" when none). */
const char *gtr_reader_error(const struct gtr_reader *r);

/*
 * Name of the function containing runtime address `addr` of process `pid`:
 * the address goes through the pid's latest mapping that contains it to a
 * binary and a link-time address (a non-PIE binary also maps 1:1 when no
 * mapping is known), then to the symbol containing that address (size 0:
 * up to the next symbol). *offset (may be NULL) gets the link-time
 * address's distance from the symbol's start. Returns NULL when unknown.
 * Uses the metadata read so far; the string lives as long as `r`. Not
 * thread-safe (sorts lazily).
 */
const char *gtr_reader_symbolize(const struct gtr_reader *r, uint32_t pid,
				 uint64_t addr, uint64_t *offset);

/*
 * The inlined frames at runtime address `addr` of process `pid` (found as
 * gtr_reader_symbolize() finds its function): the names of the inlined
 * copies holding it, deepest first, into names[max]; the function
 * itself is not one. Returns how many there are (0: none, or unknown).
 */
uint32_t gtr_reader_inlined(const struct gtr_reader *r, uint32_t pid, uint64_t addr,
			    const char **names, uint32_t max);

/*
 * CLOCK_REALTIME (ns since 1970 UTC) of monotonic time `mono_ns`, from the
 * clock sample nearest before it (the host block's anchor when none is).
 * 0, or -ENOENT when the file holds no clock reading at all.
 */
int gtr_reader_realtime(const struct gtr_reader *r, uint64_t mono_ns,
			uint64_t *realtime_ns);

/* Clock samples kept (CLOCK blocks, in monotonic order), and access. */
uint32_t gtr_reader_nclocks(const struct gtr_reader *r);
const struct gtr_clock_sample *gtr_reader_clock_at(const struct gtr_reader *r,
						   uint32_t i);

/* Process records kept (PROCESS blocks, file order); strings owned by r. */
uint32_t gtr_reader_nprocesses(const struct gtr_reader *r);
const struct gtr_process *gtr_reader_process_at(const struct gtr_reader *r,
						uint32_t i);

/* Mappings kept (MAPPING blocks, file order); strings owned by r. */
uint32_t gtr_reader_nmappings(const struct gtr_reader *r);
const struct gtr_mapping *gtr_reader_mapping_at(const struct gtr_reader *r,
						uint32_t i);

/*
 * Symbols kept for binary `binary_id`, and access in address order (sorts
 * lazily; not thread-safe). 0 / NULL when the file has none for it.
 */
uint32_t gtr_reader_nsymbols(const struct gtr_reader *r, uint32_t binary_id);
const struct gtr_symbol *gtr_reader_symbol_at(const struct gtr_reader *r,
					      uint32_t binary_id, uint32_t i);

/*
 * Losses read so far, summed per (probe, cpu) from the drop records:
 * probe_id UINT32_MAX / cpu GTR_CPU_UNKNOWN when not known, and the time
 * span they happened in (first_ns: earliest since_ns, or ts_ns when it is
 * unknown; last_ns: latest ts_ns).
 */
struct gtr_loss {
	uint32_t probe_id, cpu;
	uint32_t reason;      /* enum gtr_drop_reason */
	uint64_t count;
	uint64_t first_ns, last_ns;
	uint64_t records;     /* drop records summed */
};
uint32_t gtr_reader_nlosses(const struct gtr_reader *r);
const struct gtr_loss *gtr_reader_loss_at(const struct gtr_reader *r,
					  uint32_t i);

/*
 * Items not kept because a reader limit was reached (spec/FORMAT.md,
 * "Limits"); they are counted, never silently lost.
 */
struct gtr_overflow {
	uint64_t symbols, mappings, processes, clocks, losses, summary_probes;
};
const struct gtr_overflow *gtr_reader_overflow(const struct gtr_reader *r);

/*
 * Moves to the first events frame that may hold records at or after
 * `mono_ns`, using the summary's frame index (read from the end of the
 * file). Metadata before that frame is read first, so probes and task
 * names stay known. 0, -ENOENT when the file has no usable index (not
 * closed cleanly), or -errno.
 */
int gtr_reader_seek_ts(struct gtr_reader *r, uint64_t mono_ns);

/* Closes the file and frees `r` (NULL is fine). */
void gtr_reader_close(struct gtr_reader *r);

/* ---------------------------------------------------------------- helpers */

/* Name of an enum gtr_type ("int", "string", ...). */
const char *gtr_type_name(enum gtr_type t);

/* Name of an enum gtr_kind ("entry", "return"). */
const char *gtr_kind_name(enum gtr_kind k);

/*
 * The rate limit of probe `p` (events per one-second window; 0: none or
 * not known): its rate_limit in a first file, its rate_window_limit in a
 * later file of a rotation (spec/FORMAT.md, PROBE).
 */
static inline uint64_t gtr_probe_rate_limit(const struct gtr_probe *p)
{
	return p->rate_window_limit ? p->rate_window_limit : p->rate_limit;
}

/*
 * a + b, or UINT64_MAX when that overflows: counters of losses and events
 * saturate instead of wrapping, and UINT64_MAX reads "at least that many".
 */
static inline uint64_t gtr_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#ifdef __cplusplus
}
#endif
#endif /* GTR_H */
