/* SPDX-License-Identifier: MIT */
/*
 * session: one recording from the parsed command line to the closed
 * file: targets (a command started stopped, running PIDs, or every
 * process of a binary), the plan, the output files (with rotation),
 * capture (load, plans, attach), the capture loop with its limits, and
 * the summary.
 */
#ifndef GOTRACE_SESSION_H
#define GOTRACE_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "gtr.h"

/* Bytes captured per string at most (-s; GT_STR_MAX of the BPF side). */
#define RECORD_STR_MAX 512

#define SESSION_MAX_PIDS 64
#define SESSION_MAX_EXCLUDES 64

/* What the command line asked for (main.c fills it). */
struct record_opts {
	const char *output;      /* FILE of -o */
	pid_t pids[SESSION_MAX_PIDS];
	int npids;
	unsigned flags;          /* GTR_W_* for the writer (-f) */
	unsigned str_max;        /* bytes captured per string */
	int quiet, verbose, stack;
	int no_inherit;          /* --no-inherit: not the processes the
				  * command or the -p targets start */
	int nspecs;
	char **specs;            /* probes as written */
	char **cmd;              /* after "--", NULL-terminated; NULL: none */
	unsigned max_probes;
	unsigned ringbuf;        /* bytes, power of two */
	int nexcludes;
	char *excludes[SESSION_MAX_EXCLUDES];
	uint64_t duration_ns, max_events, max_size; /* 0: no limit */
	uint64_t rotate_size;    /* bytes per file, 0: no rotation */
	unsigned rotate_count;   /* files kept in the ring, 0: all */
	int list, json;
	const char *debuginfo;   /* separate debug file of the first binary */
	uint64_t rate;           /* events/s kept per probe, 0: no limit */
	uint64_t flush_ns;       /* events reach the output at least this
				  * often (ns; 0: the default, 1 s) */
	struct gtr_redactor *redact; /* --redact rules and --redact-key,
				  * applied by every writer; NULL: none */
	const char *redact_key;  /* FILE of --redact-key */
};

/*
 * Installs the handlers of SIGINT and SIGTERM (stop, and end with a
 * complete file) and ignores SIGPIPE. Call first thing.
 */
void session_signals(void);

/*
 * Records as `o` says. Returns the exit status of gotrace-record: the
 * command's (its exit status, or 128 + signal) when it ran one, else 0,
 * or 1 after a message "gotrace-record: ..." on stderr.
 */
int session_run(const struct record_opts *o);

#endif /* GOTRACE_SESSION_H */
