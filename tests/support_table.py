#!/usr/bin/python3
"""Writes spec/SUPPORT.md, the table of what gotrace does per Go version
and architecture, from the JUnit XML of an end-to-end run (make e2e writes
build/e2e.xml): each cell says how many of the tests of that capability
passed for that toolchain or release binary. Nothing in it is written by
hand.

usage: tests/support_table.py build/e2e.xml [MORE.xml...] > spec/SUPPORT.md
(several runs' results together, e.g. one per toolchain; a test in several
files counts as the last one ran it)
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

# Capability -> the tests that show it (test function names, without the
# parameters); a test may count for several.
CAPABILITIES = [
    ("list functions", ["test_list_", "test_names_bare_mistyped_and_listed", "test_list_debian_stripped_programs", "test_list_agrees_with_an_independent_pclntab_parse",
                        "test_release_is_the_one_described"]),
    ("Go version", ["test_list_names_the_go_version", "test_goid_offset_sources_agree",
                    "test_list_json_example"]),
    ("arguments", ["test_values_bytes_ptr_strings_and_spilled_arguments",
                   "test_bcc_example_add_42_13", "test_jsonl_keys_and_exact_values"]),
    ("strings", ["test_string_argument_content_and_length",
                 "test_unreadable_string_shows_its_length_and_the_next_is_intact",
                 "test_string_constant_never_touched_is_read"]),
    ("slices", ["test_slices_length_capacity_and_first_elements",
                "test_slice_elements_by_the_binarys_word_size"]),
    ("structs", ["test_structs_passed_by_value_in_registers_and_on_the_stack",
                 "test_struct_passed_by_value_is_captured_whole",
                 "test_struct_fields_in_a_format_and_a_predicate"]),
    ("results", ["test_return_values_and_retval", "test_calls_stats_chrome_on_real_returns",
                 "test_typed_results_from_a_signature_on_a_stripped_pie",
                 "test_results_of_more_than_two_words"]),
    ("goroutine ids", ["test_goid_offset_sources_agree",
                       "test_goid_offset_from_the_table_and_from_the_runtimes_code",
                       "test_bundling_traced_by_goroutine"]),
    ("stack growth", ["test_recursion_with_stack_growth_counts_exactly"]),
    ("panics", ["test_real_panic_is_unwound", "test_real_goexit_leaves_its_calls_open",
                "test_target_is_not_disturbed"]),
    ("stacks", ["test_real_stacks_and_interfaces", "test_folded_uses_recorded_stacks"]),
    ("generics", ["test_every_instantiation_of_a_generic_function",
                  "test_generic_function_by_its_source_name",
                  "test_generic_instance_by_its_symbol_name"]),
    ("closures, methods", ["test_closures_and_method_values", "test_return_values_and_retval"]),
    ("field paths", ["test_field_paths_through_pointers_in_net_http", "test_caddy_serving_a_request",
                     "test_stripped_caddy_fields_from_runtime_type_descriptors"]),
    ("calls paired (latency)", ["test_bundling_traced_by_goroutine", "test_calls_stats_chrome_on_real_returns",
                                "test_real_panic_is_unwound"]),
    ("program unchanged", ["test_target_is_not_disturbed", "test_bundling_traced_by_goroutine",
                           "test_exit_status_and_stdout_passed_through"]),
    ("stripped + signature", ["test_stripped_binary_with_a_signature",
                              "test_stripped_binary_raw_registers", "test_caddy_serving_a_request",
                              "test_many_probes_on_a_stripped_debian_binary",
                              "test_typed_results_from_a_signature_on_a_stripped_pie",
                              "test_struct_by_value_on_a_stripped_binary",
                              "test_stripped_caddy_fields_from_runtime_type_descriptors"]),
    ("i386 (ABI0)", ["test_i386_stack_abi", "test_i386_return_probes_leave_the_program_unharmed",
                     "test_slice_elements_by_the_binarys_word_size[go1",
                     "test_values_through_pointers_by_the_binarys_word_size[go1"]),
    ("arm64 (listed)", ["test_list_arm64_cross_build"]),
    ("assembly (ABI0)", ["test_assembly_function_is_abi0"]),
    ("cgo", ["test_target_is_not_disturbed"]),
    ("exits", ["test_exit_statuses_without_tracefs", "test_exit_time_and_status_of_a_traced_process"]),
]


# What gccgo 12 cannot give, and why: its tests assert what gotrace or the
# toolchain says instead, and the cell says "no" with the reason below
# the table. Capabilities it gives in part have a note beside their count.
GCCGO = "gccgo 12 (built here)"
GCCGO_NO = {
    "Go version": "a gccgo program records no Go version (no build info of gc's)",
    "goroutine ids": "libgo keeps g behind thread-local storage of libgo.so: events "
                     "get goid 0 and calls are paired by thread, as gotrace-record says",
    "generics": "gccgo 12 has no type parameters",
    "i386 (ABI0)": "ABI0 is gc's; no 386 libgo here, so gccgo cannot build for i386",
    "arm64 (listed)": "no arm64 gccgo here: its go tool builds x86-64 whatever GOARCH "
                      "says, and --list says x86-64",
    "assembly (ABI0)": "gccgo does not assemble Go assembly",
    "stripped + signature": "gccgo writes no .gopclntab: a stripped gccgo program has "
                            "only its dynamic symbols, as gotrace-record says",
}
GCCGO_PART = {
    "results": "results of more than two words (int, error) come back in memory, "
               "read through RAX at the return: numbers, bools, pointers, strings, "
               "slices and interfaces (as their words and type(NAME)); a struct "
               "there is shown unavailable, and no field path is followed into it",
    "field paths": "the standard library is libgo.so's: the probe names it as its "
                   "binary, as gotrace-record says",
    "stacks": "a stack is the function and its caller (gccgo's -O2 keeps no "
              "frame pointers to walk further), and an interface value its two "
              "words (type descriptor or method table, object) and type(NAME), its "
              "dynamic type's name; a type of libgo.so's (errors.New's) is named "
              "from the running process, its address once the process has exited",
}


# Tests run for amd64 and 386 builds: only the 386 runs show i386.
I386_BY_GOARCH = ("test_slice_elements_by_the_binarys_word_size",
                  "test_values_through_pointers_by_the_binarys_word_size")


# Tests of Debian's own stripped Go programs (caddy, age: Go 1.19).
DEBIAN = ("test_list_debian_stripped_programs", "test_caddy_serving_a_request",
          "test_many_probes_on_a_stripped_debian_binary")


def column(base, params):
    """The toolchain or release a test ran with, from its parameters."""
    if base in DEBIAN:
        return "go1.19 (Debian caddy, age, stripped)"
    if re.search(r"\bgccgo\b", params):
        return GCCGO
    m = re.search(r"(go1\.\d+)", params)
    if m:
        return "gc " + m.group(1) + " (built here)"
    m = re.search(r"esbuild-([\d.]+)", params)
    if m:
        return "%s (esbuild %s, stripped)" % (RELEASE_GO.get(m.group(1), "?"), m.group(1))
    return None


def _release_go():
    """esbuild version -> Go version, from the release test's table."""
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "e2e"))
    from test_release_binaries import RELEASES
    return {r.esbuild: r.go for r in RELEASES}


RELEASE_GO = _release_go()


def main():
    cases = list({(tc.get("classname"), tc.get("name")): tc for path in sys.argv[1:]
                  for tc in ET.parse(path).getroot().iter("testcase")}.values())
    cells = collections.defaultdict(lambda: [0, 0])   # (cap, col) -> [passed, run]
    cols = set()
    for tc in cases:
        name = tc.get("name", "")
        base, _, params = name.partition("[")
        col = column(base, params)
        if not col:
            continue
        failed = tc.find("failure") is not None or tc.find("error") is not None
        skipped = tc.find("skipped") is not None
        for cap, tests in CAPABILITIES:
            if not any(base == t or (t.endswith("_") and base.startswith(t))
                       or (("[" in t) and name.startswith(t)) for t in tests):
                continue
            if cap == "i386 (ABI0)" and base in I386_BY_GOARCH and "386" not in params:
                continue
            if skipped:
                continue
            cols.add(col)
            cells[(cap, col)][1] += 1
            if not failed:
                cells[(cap, col)][0] += 1
    order = sorted(cols, key=lambda c: (not c.startswith("gc "), c != GCCGO, "Debian" in c,
                                        [int(x) for x in re.findall(r"\d+", c)[:3]]))
    print("# What gotrace does, per Go version and architecture\n")
    print("Written by `tests/support_table.py` from the end-to-end tests of one")
    print("`make test` run on x86-64 (Linux 6.18): each cell is tests passed / run for")
    print("that capability with that toolchain (`tests/toolchains`) or release binary")
    print("(`tests/e2e/test_release_binaries.py`); `-` means no test covers it there.")
    print("x86-64 is traced; i386 programs are traced on x86-64 hosts; arm64")
    print("binaries are listed, not traced. gccgo 12 (Debian's, C calling")
    print("convention, linked against libgo.so) is a column of the matrix: \"no [N]\"")
    print("means the capability cannot hold there for reason N below, which its")
    print("tests check (what gotrace or the toolchain says); \"[N]\" beside a count")
    print("is a part that does not hold.\n")
    print("| capability | " + " | ".join(order) + " |")
    print("|---|" + "---|" * len(order))
    notes = []
    for cap, _ in CAPABILITIES:
        row = []
        for col in order:
            p, n = cells.get((cap, col), (0, 0))
            cell = "-" if n == 0 else ("%d/%d" % (p, n)) + ("" if p == n else " FAIL")
            why = (GCCGO_NO.get(cap) or GCCGO_PART.get(cap)) if col == GCCGO else None
            if why:
                notes.append(why)
                mark = "[%d]" % len(notes)
                cell = ("no %s (%s)" % (mark, cell)) if cap in GCCGO_NO else cell + " " + mark
            row.append(cell)
        print("| %s | %s |" % (cap, " | ".join(row)))
    if notes:
        print()
        for i, why in enumerate(notes, 1):
            print("%d. gccgo: %s." % (i, why))


if __name__ == "__main__":
    main()
