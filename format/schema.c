/* SPDX-License-Identifier: MIT */
/*
 * The field schemas of the metadata maps (spec/FORMAT.md, "Blocks": HOST,
 * BINARY, PROBE, MAPPING, PROCESS, Clocks): one table per map drives both
 * the writer and the reader, so a key, its kind and its default are
 * written down once.
 *
 * A field's `absent` value is what a map without the key means: the reader
 * starts from it, and for a field marked GTR_F_OPTIONAL the writer leaves
 * the key out when the field holds it. Table order is the order the writer
 * writes; the reader accepts any order.
 *
 * HOST (all but its constant "format"), CLOCK, BINARY, PROCESS and MAPPING
 * are tables whole. PROBE's
 * scalar fields are a table and each of its "args" a gtr_arg_schema map;
 * its two arrays are coded by hand on both sides. SUMMARY and SYMBOLS stay
 * hand-coded: they are arrays of positional arrays, and what the writer
 * writes there is its own running state, not a public struct.
 */
#include <stddef.h>

#include "gtr_internal.h"

static const struct gtr_field clock_fields[] = {
	GTR_FIELD("monotonic_ns", GTR_F_U64, struct gtr_host, start_mono_ns),
	GTR_FIELD("realtime_ns", GTR_F_U64, struct gtr_host, start_realtime_ns),
	GTR_FIELD("boottime_ns", GTR_F_U64, struct gtr_host, start_boottime_ns),
};
const struct gtr_schema gtr_clock_schema = GTR_SCHEMA(clock_fields);

static const struct gtr_field host_fields[] = {
	GTR_FIELD("hostname", GTR_F_STR, struct gtr_host, hostname),
	GTR_FIELD("kernel", GTR_F_STR, struct gtr_host, kernel),
	GTR_FIELD("machine", GTR_F_STR, struct gtr_host, machine),
	GTR_FIELD("recorder", GTR_F_STR, struct gtr_host, recorder),
	{ "clocks", GTR_F_MAP, 0, 0, 0, &gtr_clock_schema },
	/* a selection (gotrace-report -w): where relative times count from */
	GTR_FIELD_X("origin_ns", GTR_F_U64, struct gtr_host, origin_ns, GTR_F_OPTIONAL, 0),
	/* redacted (spec/REDACT.md): the rules applied, as given */
	GTR_FIELD_X("redacted", GTR_F_STR, struct gtr_host, redacted, GTR_F_OPTIONAL, 0),
};
const struct gtr_schema gtr_host_schema = GTR_SCHEMA(host_fields);

static const struct gtr_field peer_fields[] = {
	GTR_FIELD_X("index", GTR_F_U32, struct gtr_peer, index, GTR_F_REQUIRED, 0),
	{ "host", GTR_F_MAP, 0, offsetof(struct gtr_peer, h), 0, &gtr_host_schema },
};
const struct gtr_schema gtr_peer_schema = GTR_SCHEMA(peer_fields);

static const struct gtr_field binary_fields[] = {
	GTR_FIELD_X("id", GTR_F_U32, struct gtr_binary, id, GTR_F_REQUIRED, 0),
	GTR_FIELD("path", GTR_F_STR, struct gtr_binary, path),
	GTR_FIELD("build_id", GTR_F_STR, struct gtr_binary, build_id),
	GTR_FIELD("go_build_id", GTR_F_STR, struct gtr_binary, go_build_id),
	GTR_FIELD("go_version", GTR_F_STR, struct gtr_binary, go_version),
	GTR_FIELD("compiler", GTR_F_STR, struct gtr_binary, compiler),
	GTR_FIELD("arch", GTR_F_STR, struct gtr_binary, arch),
	GTR_FIELD("abi", GTR_F_STR, struct gtr_binary, abi),
	GTR_FIELD("pie", GTR_F_BOOL, struct gtr_binary, pie),
	GTR_FIELD("stripped", GTR_F_BOOL, struct gtr_binary, stripped),
	GTR_FIELD("dwarf", GTR_F_BOOL, struct gtr_binary, has_dwarf),
	GTR_FIELD("go_version_source", GTR_F_STR, struct gtr_binary,
		  go_version_source),
	/* absent in files of older recorders: not recorded */
	GTR_FIELD_X("goid_offset", GTR_F_I32, struct gtr_binary, goid_offset,
		    0, -1),
	GTR_FIELD("goid_source", GTR_F_STR, struct gtr_binary, goid_source),
	/* a merged file: its host (a PEER block's index) */
	GTR_FIELD_X("host", GTR_F_U32, struct gtr_binary, host, GTR_F_OPTIONAL, 0),
};
const struct gtr_schema gtr_binary_schema = GTR_SCHEMA(binary_fields);

static const struct gtr_field arg_fields[] = {
	GTR_FIELD("name", GTR_F_STR, struct gtr_arg, name),
	GTR_FIELD("type_name", GTR_F_STR, struct gtr_arg, type_name),
	GTR_FIELD_X("type", GTR_F_TYPE, struct gtr_arg, type, 0, GTR_TYPE_WORD),
	GTR_FIELD("size", GTR_F_U32, struct gtr_arg, size),
	/* redacted values (spec/REDACT.md): "hash" or "drop" */
	GTR_FIELD_X("redacted", GTR_F_STR, struct gtr_arg, redacted, GTR_F_OPTIONAL, 0),
	/* a slice's or array's element type, an array's length */
	GTR_FIELD_X("elem", GTR_F_STR, struct gtr_arg, elem, GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("count", GTR_F_U32, struct gtr_arg, count, GTR_F_OPTIONAL, 0),
};
const struct gtr_schema gtr_arg_schema = GTR_SCHEMA(arg_fields);

static const struct gtr_field probe_fields[] = {
	GTR_FIELD_X("id", GTR_F_U32, struct gtr_probe, id, GTR_F_REQUIRED, 0),
	GTR_FIELD("binary_id", GTR_F_U32, struct gtr_probe, binary_id),
	GTR_FIELD_X("kind", GTR_F_KIND, struct gtr_probe, kind,
		    GTR_F_REQUIRED, 0),
	GTR_FIELD("func", GTR_F_STR, struct gtr_probe, func),
	GTR_FIELD("address", GTR_F_U64, struct gtr_probe, address),
	GTR_FIELD("spec", GTR_F_STR, struct gtr_probe, spec),
	GTR_FIELD("fmt", GTR_F_STR, struct gtr_probe, fmt),
	GTR_FIELD("args_source", GTR_F_STR, struct gtr_probe, args_source),
	/* an inlined copy, a source line (spec/FORMAT.md, PROBE) */
	GTR_FIELD_X("inlined_into", GTR_F_STR, struct gtr_probe, inlined_into,
		    GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("call_site", GTR_F_STR, struct gtr_probe, call_site,
		    GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("line", GTR_F_STR, struct gtr_probe, line, GTR_F_OPTIONAL, 0),
	/* a record-time predicate (spec/PROBES.md) */
	GTR_FIELD_X("predicate", GTR_F_STR, struct gtr_probe, predicate,
		    GTR_F_OPTIONAL, 0),
	/* gotrace-record --rate-limit (spec/FORMAT.md, PROBE) */
	GTR_FIELD_X("rate_limit", GTR_F_U64, struct gtr_probe, rate_limit,
		    GTR_F_OPTIONAL, 0),
	/* a later file of a rotation: the limit, under a key older readers
	 * skip, and the window current when it began */
	GTR_FIELD_X("rate_window_limit", GTR_F_U64, struct gtr_probe,
		    rate_window_limit, GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("rate_window_ns", GTR_F_U64, struct gtr_probe, rate_window_ns,
		    GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("rate_window_kept", GTR_F_U64, struct gtr_probe, rate_window_kept,
		    GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("rate_window_last_ns", GTR_F_U64, struct gtr_probe,
		    rate_window_last_ns, GTR_F_OPTIONAL, 0),
	/* a return probe that followed its entry probe (whole calls) */
	GTR_FIELD_X("whole_calls", GTR_F_BOOL, struct gtr_probe, whole_calls,
		    GTR_F_OPTIONAL, 0),
};
const struct gtr_schema gtr_probe_schema = GTR_SCHEMA(probe_fields);

static const struct gtr_field mapping_fields[] = {
	GTR_FIELD("ts_ns", GTR_F_U64, struct gtr_mapping, ts_ns),
	GTR_FIELD("pid", GTR_F_U32, struct gtr_mapping, pid),
	GTR_FIELD("start", GTR_F_U64, struct gtr_mapping, start),
	GTR_FIELD("end", GTR_F_U64, struct gtr_mapping, end),
	GTR_FIELD("offset", GTR_F_U64, struct gtr_mapping, offset),
	GTR_FIELD("vaddr", GTR_F_U64, struct gtr_mapping, vaddr),
	GTR_FIELD("path", GTR_F_STR, struct gtr_mapping, path),
	GTR_FIELD_X("binary_id", GTR_F_U32, struct gtr_mapping, binary_id,
		    GTR_F_OPTIONAL, UINT32_MAX),
};
const struct gtr_schema gtr_mapping_schema = GTR_SCHEMA(mapping_fields);

/* The writer gives exit_code only with exited (gtr_writer_process()); the
 * reader reads the exit_code of a process not exited as 0. */
static const struct gtr_field process_fields[] = {
	GTR_FIELD("ts_ns", GTR_F_U64, struct gtr_process, ts_ns),
	GTR_FIELD("pid", GTR_F_U32, struct gtr_process, pid),
	GTR_FIELD("comm", GTR_F_STR, struct gtr_process, comm),
	GTR_FIELD_X("binary_id", GTR_F_U32, struct gtr_process, binary_id,
		    GTR_F_OPTIONAL, UINT32_MAX),
	GTR_FIELD_X("exited", GTR_F_BOOL, struct gtr_process, exited,
		    GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("exit_code", GTR_F_I32, struct gtr_process, exit_code,
		    GTR_F_OPTIONAL, GTR_EXIT_UNKNOWN),
	/* a merged file: its host, and its pid there when renumbered */
	GTR_FIELD_X("host", GTR_F_U32, struct gtr_process, host, GTR_F_OPTIONAL, 0),
	GTR_FIELD_X("host_pid", GTR_F_U32, struct gtr_process, host_pid, GTR_F_OPTIONAL, 0),
};
const struct gtr_schema gtr_process_schema = GTR_SCHEMA(process_fields);
