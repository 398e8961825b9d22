/* SPDX-License-Identifier: MIT */
/*
 * output: renders events as text (bcc trace.py's layout), JSON Lines, CSV or
 * Chrome trace JSON, and calls (entry and return on one line), as
 * spec/OUTPUT.md describes, by appending to a struct buf. Works on
 * struct report_event alone (no libgtr calls), so it is unit-tested on
 * synthetic events. Format strings are compiled once per probe.
 *
 * Layers: output.c (the output table, the output object, stacks) calls
 * one printer per format (out_text.c, out_jsonl.c, out_csv.c,
 * out_chrome.c, out_perfetto.c), all of which format values through value.c (strings,
 * numbers, slices) and printf.c (trace.py format strings); output_int.h
 * is what they share.
 */
#ifndef REPORT_OUTPUT_H
#define REPORT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "event.h"

struct output;

/*
 * An output format (--format NAME): a row of the output table. Each
 * printer lives in a file of its own (report/out_*.c) and fills one; a
 * NULL function does nothing (put, put_open: writes no record).
 */
struct output_format {
	const char *name;      /* as --format takes it */
	const char *suffix;    /* OUTPUT_F_BINARY: the usual file name suffix
				* ("pftrace"), for the hint of a refusal */
	unsigned flags;        /* OUTPUT_F_* */
	size_t state_size;     /* bytes of the printer's state (output_state()), zeroed */
	void (*begin)(struct output *o, struct buf *b);
	int (*put)(struct output *o, struct buf *b, const struct report_event *e);
	int (*put_open)(struct output *o, struct buf *b, const struct report_event *e,
			uint64_t end_ns, const char *status);
	void (*end)(struct output *o, struct buf *b);
	/* messages for stderr at the end of the run (what was left out) */
	void (*warnings)(const struct output *o, FILE *err);
	void (*free)(struct output *o);  /* frees what the state points to */
};

enum {
	OUTPUT_F_CALLS = 1u << 0,     /* has a call view (--calls) */
	OUTPUT_F_TIME = 1u << 1,      /* takes the time columns of -t and -T */
	OUTPUT_F_UNORDERED = 1u << 2, /* shows no entry of a paired function alone:
				       * pairing need not hold those */
	OUTPUT_F_SUMMARY = 1u << 3,   /* summarises every matching event (refuses
				       * --limit), written by a sink of its own */
	OUTPUT_F_BINARY = 1u << 4,    /* binary data: refused onto a terminal (has a suffix) */
};

/* The rows of the output table (report/out_*.c, report/folded.c). */
extern const struct output_format out_text, out_jsonl, out_csv, out_chrome, out_perfetto,
	out_folded;

/* Finds the format named `name` ("text", "jsonl", "csv", "chrome", "perfetto",
 * "folded") into *fmt. Returns 0, or -1 for an unknown name. */
int output_format_parse(const char *name, const struct output_format **fmt);

/* The names of every format, for messages: "text, jsonl, ...". */
const char *output_format_names(void);

struct output_opts {
	const struct output_format *format; /* NULL: text */
	bool calls;            /* --calls: one line per call (text, jsonl) */
	bool time_rel;         /* -t: seconds since the first event (text) */
	bool time_wall;        /* -T: wall-clock time of day (text; from e->real_ns) */
	uint32_t csv_values;   /* value columns of CSV (v1..vN), at least 1 */
	bool hosts;            /* several hosts (a merged file): a HOST column
				* (text, CSV), a "host" key (JSONL, Chrome) */
	/*
	 * Names recorded stack addresses (gtr_reader_symbolize()): the
	 * function containing runtime address `addr` of process `pid`, its
	 * distance from the function's start in *off; NULL when unknown.
	 * NULL: addresses are shown in hex.
	 */
	const char *(*symbolize)(void *ctx, uint32_t pid, uint64_t addr, uint64_t *off);
	/*
	 * The inlined frames at `addr` (gtr_reader_inlined()): names of the
	 * inlined copies holding it, deepest first, into names[max];
	 * returns how many. NULL: none are shown.
	 */
	uint32_t (*inlined)(void *ctx, uint32_t pid, uint64_t addr, const char **names,
			    uint32_t max);
	void *sym_ctx;
};


/* Creates an output with options `o` (copied). */
struct output *output_new(const struct output_opts *o);

/* Frees `o` (NULL is fine). */
void output_free(struct output *o);

/*
 * Tells `o` a host name of the file (o.hosts: a merged file), before
 * output_begin(): text's HOST column is as wide as the widest name given
 * (escaped, in display columns; at least 15), so that the columns after
 * it line up whatever the names (redacted ones are 25 columns,
 * "redacted:" and 16 hex digits). A name not given is padded to the
 * column or, when wider, overflows it.
 */
void output_text_host(struct output *o, const char *name);

/* Appends what precedes the first event (header line, JSON opening). */
void output_begin(struct output *o, struct buf *b);

/*
 * Appends the rendering of `e` (after pairing). Returns the number of
 * records written: 0 when the view shows nothing for it (an entry in the
 * call view, an entry that Chrome shows as part of its call).
 */
int output_put(struct output *o, struct buf *b, const struct report_event *e);

/*
 * Appends a call that did not return: `status` "unwound" (closed over by
 * an outer return, pair_foreach_unwound(), `end_ns` that return's time),
 * "exited" (its process exited while it was open, `end_ns` the exit) or
 * "open" (still open at the end of the file, `end_ns` the time of the
 * file's last event). Shown in the call views and in Chrome. Returns the
 * number of records written.
 */
int output_put_open(struct output *o, struct buf *b, const struct report_event *e,
		    uint64_t end_ns, const char *status);

/* Appends what follows the last event (Chrome metadata and closing). */
void output_end(struct output *o, struct buf *b);

/* Writes the format's messages about what it left out to `err`. */
void output_warnings(const struct output *o, FILE *err);

/* Values CSV had to leave out (events with more values than columns). */
uint64_t output_csv_cut(const struct output *o);

/*
 * Single-event renderers, stateless (format strings compiled per call):
 * used by tests and by callers without an output object.
 */

/* Appends the text header line "PID     TID     COMM ...\n". */
void output_text_header(struct buf *b);

/* Appends one text line (with '\n') for `e`. */
void output_text_event(struct buf *b, const struct report_event *e);

/* Appends one JSON object and '\n' for `e`. */
void output_jsonl_event(struct buf *b, const struct report_event *e);


/*
 * Building blocks, exposed for tests and for other report commands.
 */

/*
 * Appends bytes p[0, n) escaped for a terminal (spec/OUTPUT.md, "Strings
 * in text"): printable ASCII and valid UTF-8 as is, except '\\' -> "\\\\",
 * '"' -> "\\\"" when `quoted`, \n \t \r as such, other bytes \xNN.
 */
void output_text_bytes(struct buf *b, const uint8_t *p, size_t n, bool quoted);

/* Appends p[0, n) as the contents of a JSON string (no quotes). */
void output_json_bytes(struct buf *b, const uint8_t *p, size_t n);

/* Appends p[0, n) as one CSV field (RFC 4180: quoted when it holds a
 * comma, a quote, CR or LF; quotes doubled). */
void output_csv_field(struct buf *b, const char *p, size_t n);

/*
 * Whether the integer values of argument `a` show as addresses, in hex
 * ("0xc000012345"): pointers and raw words (no type: likely an address),
 * GTR_TYPE_PTR and GTR_TYPE_WORD. False for NULL (unknown).
 */
bool output_arg_is_address(const struct gtr_arg *a);

/*
 * Whether argument `a` is an interface, whose value is the name of its
 * dynamic type: type GTR_TYPE_IFACE, or a string whose Go type is an
 * interface (files written before GTR_TYPE_IFACE): "error", "any",
 * "interface {...}".
 */
bool output_arg_is_iface(const struct gtr_arg *a);

/*
 * Appends one frame of a recorded stack, `addr` being frame number `k`
 * (0: the probed instruction; above: return addresses, looked up one byte
 * earlier so a call at the end of a function names that function): as
 * "name+0xOFF" when `o` names it, else "0xADDR"; `json` escapes for JSON
 * (no quotes), else for text. With `name_only`, just the name (no offset).
 */
void output_frame(const struct output *o, struct buf *b, uint32_t pid, uint64_t addr,
		  uint32_t k, bool json, bool name_only);

/*
 * The inlined frames of frame `k` at `addr` (looked up as output_frame()
 * looks it up): the functions inlined where the code is, deepest first,
 * into names[max] (owned by the reader); they come before the frame
 * itself, as in Go's tracebacks. Returns how many (0 when `o` names
 * none).
 */
uint32_t output_inlined(const struct output *o, uint32_t pid, uint64_t addr, uint32_t k,
			const char **names, uint32_t max);

/*
 * Appends value `v` as text; `arg` (NULL when unknown) tells pointers
 * (0x hex), floats (bits), interfaces (type names, unquoted) and slices
 * ("[1 2 3](len=3)", from their element bytes) apart from plain words and
 * strings. CSV cells and %s use the same forms (strings unquoted).
 */
void output_text_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg);

/* Appends value `v` as a JSON value. */
void output_json_value(struct buf *b, const struct gtr_value *v,
		       const struct gtr_arg *arg);

/*
 * Appends `fmt` (a trace.py-style format string) with the event's values:
 * the k-th conversion takes value e->probe->exprs[k]. Needs e->probe.
 * Compiles `fmt` on each call; output_put() uses a per-probe cache.
 */
void output_text_format(struct buf *b, const char *fmt,
			const struct report_event *e);

/*
 * Writes the shortest decimal form of `d` that reads back to the same
 * double into out[32] ("NaN", "+Inf", "-Inf" for non-finite values).
 * Returns out.
 */
char *output_double(char out[32], double d);

/*
 * "at least " for a count at UINT64_MAX, else "": counts add with
 * gtr_add_sat() and stop there, so printed before such a number it says
 * the true count was higher (the total saturated).
 */
static inline const char *output_at_least(uint64_t n)
{
	return n == UINT64_MAX ? "at least " : "";
}

#endif /* REPORT_OUTPUT_H */
