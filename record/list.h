/* SPDX-License-Identifier: MIT */
/*
 * `gotrace-record --list BINARY [GLOB]`: what gotrace knows about a Go
 * executable and its functions, as text for people or one JSON document
 * for tools.
 */
#ifndef GOTRACE_LIST_H
#define GOTRACE_LIST_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Prints the facts of `binary` (path, compiler, Go version, architecture,
 * ABI, PIE, stripped, DWARF and where it came from, build ids, main
 * package and module, build settings) and then every function whose name
 * matches the shell glob `glob` (fnmatch(3) without flags, or the exact
 * name, so "main.Map[...]" works; NULL: all): its signature where DWARF
 * gives one ("main.greet(s string, n int) int"), its calling convention
 * (ABIInternal, ABI0, C), entry address, size, pclntab argument size, and
 * for each parameter its goargN, name, type, location at entry ("RAX",
 * "SP+8", "X0") and whether gotrace-record captures it (with the reason
 * when not, e.g. "float register"). `debuginfo`, when not NULL, is a
 * separate debug file to load (as --debuginfo FILE). A function named
 * exactly also shows its inlined copies (where, in which function; one
 * only ever inlined is listed by them), and a glob naming a Go file
 * ("main.go:*", "main.go:42") lists the lines of it a FILE:LINE probe can
 * take, each with its function or inlined copy. With json, writes one
 * JSON document (spec: the keys written in list.c's header comment).
 * Returns the exit status: 0, or 1 after a message on stderr starting
 * "gotrace-record: " (binary unreadable, not Go, bad debug file, or no
 * function matches `glob`: then the facts are still printed).
 */
int gotrace_list(const char *binary, const char *debuginfo, const char *glob,
		 bool json, FILE *out);

/*
 * `gotrace-record --list BINARY PROBE` (listprobe.c): plans `probe` as a
 * recording would (signature, results, field paths, format; nothing is
 * attached) and prints, for each function it takes, each value it would
 * capture: name, type, where it is read ("RAX", "SP+8", "RBX then
 * memory") and whether it is captured. `debuginfo` as for gotrace_list.
 * Returns 0, or 1 after the probe's error on stderr.
 */
int gotrace_list_probe(const char *binary, const char *debuginfo,
		       const char *probe, FILE *out);

#endif /* GOTRACE_LIST_H */
