"""Capture engine: return probes at RET instructions, exact counts when
stacks grow, goroutine ids, and targets that behave as if untraced."""
import collections
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, attached, build_fails, record, report
from test_record_report import functions_output


def jsonl(path, *args):
    out = report(["--format", "jsonl", *args, path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_return_values_and_retval(functions, toolchain, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", 'r:main.add "%d" retval', "r:main.greet",
            "r:main.(*T).M", "r:main.T.Value", "--", functions, "3"])
    evs = jsonl(trace)
    rets = collections.defaultdict(list)
    for e in evs:
        if e["kind"] == "return":
            rets[e["func"]].append(e["goargs"])
    assert rets["main.add"] == [[55]] * 3
    assert rets["main.greet"] == [[5], [6], [7]]
    assert rets[toolchain.fname("main.(*T).M")] == [[4]] * 3
    assert rets["main.T.Value"] == [[7], [8], [9]]
    text = report(["-f", 'func == "main.add"', trace]).stdout.splitlines()[1:]
    assert [l.split()[-1] for l in text] == ["y=13", "55"] * 3


def test_recursion_with_stack_growth_counts_exactly(gobuild, toolchain, tmp_path):
    """Four goroutines recurse 1000 deep with big frames, growing their
    stacks many times: exactly one entry and one return per call (gccgo:
    split stacks, and no goroutine ids: goid 0)."""
    exe = gobuild("tests/fixtures/recurse/main.go", "recurse")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.rec", "r:main.rec", "--", exe])
    calls = int(p.stdout.split()[0])
    assert calls == 4004
    evs = jsonl(trace)
    kinds = collections.Counter(e["kind"] for e in evs)
    assert kinds == {"entry": 4004, "return": 4004}
    if toolchain.gccgo:
        assert {e["goid"] for e in evs} == {0}
        depths = collections.Counter(e["args"]["depth"] for e in evs if e["kind"] == "entry")
        assert depths == {d: 4 for d in range(1001)}
        return
    per_g = collections.Counter((e["goid"], e["kind"]) for e in evs)
    goids = {g for g, _ in per_g}
    assert len(goids) == 4 and 0 not in goids
    assert all(per_g[(g, k)] == 1001 for g in goids for k in ("entry", "return"))
    # Depth goes 1000 -> 0 on entry, per goroutine, in order.
    for g in goids:
        depths = [e["args"]["depth"] for e in evs
                  if e["goid"] == g and e["kind"] == "entry"]
        assert depths == list(range(1000, -1, -1))


def test_frames_over_4k_enter_once_per_call(gobuild, toolchain, tmp_path):
    """main.big's 16 KiB frame is over StackBig: its prologue checks the
    subtraction for wraparound (a first branch to morestack) before the
    stack bound. The entry probe goes after both, so a call whose stack
    grows, which starts over from the entry, enters once (it entered twice:
    25 extra entries of 244); each returns 0 + 1 + ... + depth."""
    exe = gobuild("tests/fixtures/bigframe/main.go", "bigframe")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.big", "r:main.big", "--", exe])
    assert p.stdout.split() == ["244"]
    evs = jsonl(trace)
    assert collections.Counter(e["kind"] for e in evs) == {"entry": 244, "return": 244}
    depths = collections.Counter(e["args"]["depth"] for e in evs if e["kind"] == "entry")
    assert depths == {d: 4 for d in range(61)}
    r = report(["--calls", "--format", "jsonl", trace]).stdout.splitlines()
    got = [json.loads(l) for l in r if l.strip()]
    assert {c["status"] for c in got} == {"returned"}
    for c in got:
        d = c["args"]["depth"]
        assert c["goret"][0] == d * (d + 1) // 2, c

@pytest.mark.parametrize("fixture,cgo", [("disturb", False), ("cgo", True)])
def test_target_is_not_disturbed(gobuild, toolchain, tmp_path, fixture, cgo):
    """Entry and return probes on every main.* function: same output and
    exit status as untraced, with panics, Goexit, 3000 goroutines, cgo."""
    exe = gobuild("tests/fixtures/%s/main.go" % fixture, fixture, cgo=cgo)
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    trace = str(tmp_path / "t.gtr")
    traced = record(["-q", "-o", trace, "main.*", "r:main.*", "--", exe],
                    check=False)
    assert traced.returncode == plain.returncode, traced.stderr
    assert traced.stdout == plain.stdout
    assert "unexpected return pc" not in traced.stderr
    evs = jsonl(trace)
    assert len(evs) > 100
    if fixture == "disturb":
        entries = collections.Counter(e["func"] for e in evs if e["kind"] == "entry")
        returns = collections.Counter(e["func"] for e in evs if e["kind"] == "return")
        assert entries["main.grow"] == returns["main.grow"] > 3000
        # mayPanic panics for i % 7 == 0 (3 of 20 calls): no RET reached.
        assert entries["main.mayPanic"] == 20 and returns["main.mayPanic"] == 17
        assert entries["main.quitter"] == 1 and returns["main.quitter"] == 0
        divs = [e for e in evs if e["func"] == "main.divide" and e["kind"] == "return"]
        # (int, error): gccgo returns its three words in memory, read
        # through RAX at the return
        assert [d["goargs"][0] for d in divs] == [0, 3]
    else:
        works = [e for e in evs if e["func"] == "main.work"]
        assert [e["args"]["i"] for e in works if e["kind"] == "entry"] == list(range(100))
        assert [e["goargs"][0] for e in works if e["kind"] == "return"] == \
            [2 * i + 1 for i in range(100)]


def lost_events(stderr):
    """Events the report says were lost (its warning on stderr), or 0."""
    import re
    m = re.search(r"(\d+) event\(s\) were lost", stderr)
    return int(m.group(1)) if m else 0


def test_loss_accounting_is_exact_with_a_tiny_ring_buffer(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-b", "4K", "-o", trace, "main.add", "--", exe, "100000"])
    calls = int(p.stdout.split()[0])
    r = report(["--format", "jsonl", trace])
    recorded = len(r.stdout.splitlines())
    dropped = lost_events(r.stderr)
    assert dropped > 0, "a 4 KiB ring buffer must overflow at this rate"
    assert recorded + dropped == calls == 100000
    ys = [json.loads(l)["goargs"][1] for l in r.stdout.splitlines()]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)


def test_default_buffer_loses_nothing_in_10s_of_hot_calls(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, 'main.add "%d" goarg2', "--", exe, "10s"])
    calls = int(p.stdout.split()[0])
    r = report([trace])
    lines = r.stdout.splitlines()[1:]
    assert lost_events(r.stderr) == 0
    assert len(lines) == calls > 10000
    assert lines[-1].split()[-1] == str(calls - 1)


def test_values_bytes_ptr_strings_and_spilled_arguments(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/values/main.go", "values")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-s", "100", "-o", trace, "main.takeBytes",
            'main.takePoint "%d" k, $ptr(p, 16)', "main.takeStrings",
            "main.many", "--", exe])
    evs = {e["func"]: e for e in jsonl(trace)}
    assert evs["main.takeBytes"]["args"] == {"b": "raw\u0000bytes", "n": 1, "cap(b)": 9}
    tp = evs["main.takePoint"]["args"]
    raw = tp["$ptr(p, 16)"]
    assert [ord(c) for c in raw] == [3] + [0] * 7 + [4] + [0] * 7  # X, Y
    assert tp["k"] == 5 and tp["p"] > 0
    ts = evs["main.takeStrings"]["args"]
    assert ts["empty"] == ""
    assert ts["long"] == {"str": "x" * 100, "len": 1000, "truncated": True}
    assert ts["bad"] == "\u00ff\u00febad"         # invalid bytes -> \u00XX
    # 11 ints: 9 in registers, j and k spill to the stack.
    assert evs["main.many"]["goargs"] == list(range(1, 12))


def test_structs_passed_by_value_in_registers_and_on_the_stack(gobuild, tmp_path):
    """Fields of a struct passed by value: in registers (one per scalar
    word, in order), through a pointer field, and on the stack (a struct
    too big for the registers)."""
    exe = gobuild("tests/fixtures/values/main.go", "values")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.byValue(s.X, s.Name, s.In.A, s.In.B, s.P.B, k)",
            "main.big(b.C, b.J, k)", "--", exe])
    evs = {e["func"]: e["args"] for e in jsonl(trace)}
    bv = evs["main.byValue"]
    assert (bv["s.X"], bv["s.Name"], bv["s.In.A"], bv["s.In.B"], bv["s.P.B"], bv["k"]) == \
        (7, "val", -2, 3, 12, 1)
    bg = evs["main.big"]
    assert (bg["b.C"], bg["b.J"], bg["k"]) == (5, 99, 2)
    text = report(["-f", 'func == "main.byValue"', trace]).stdout.splitlines()[1]
    assert text.endswith("7 val -2 3 12 1")


def test_slices_length_capacity_and_first_elements(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/values/main.go", "values")
    for size, xs_json, xs_text in ((64, [1, -2, 300], "xs=[1 -2 300](len=3)"),
                                   (16, {"elems": [1, -2], "len": 3, "truncated": True},
                                    "xs=[1 -2 ...](len=3)")):
        trace = str(tmp_path / "t.gtr")
        record(["-q", "-f", "-s", str(size), "-o", trace, "main.sum", "--", exe])
        a = jsonl(trace)[0]["args"]
        assert a["xs"] == xs_json and a["cap(xs)"] == 10
        assert a["names"] == {"elems": [], "len": 2, "truncated": True}  # elements not shown
        assert a["cap(names)"] == 2 and a["ps"] == [] and a["cap(ps)"] == 0
        assert xs_text in report([trace]).stdout


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_floats_where_a_uprobe_can_read_them(gobuild, toolchain, tmp_path, goarch):
    """A float is captured as its bits wherever a uprobe reads it: on the
    stack (every argument of a 386 build) and in memory (a field through a
    pointer: float64 and float32). In a float register (amd64: gc's X0,
    gccgo's XMM0) it is unavailable, as --list says: uprobe pt_regs holds
    no float state. gccgo: amd64 only (no 386 libgo in the matrix)."""
    if toolchain.gccgo and goarch == "386":
        build_fails(toolchain, "tests/fixtures/values/main.go", goarch="386")
        return
    exe = gobuild("tests/fixtures/values/main.go", "values-" + goarch, goarch=goarch)
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, 'main.price "%v %v %v %v", it.Price, it.Ratio, x, n',
            "--", exe])
    [e] = jsonl(trace)
    on_stack = goarch == "386"
    got = {k: v for k, v in e["args"].items() if k != "it"}
    assert got == {"it.Price": 2.25, "it.Ratio": 0.5, "x": 1.5 if on_stack else None,
                   "n": 3}, e
    text = report([trace]).stdout.splitlines()[1:]
    assert text[0].split(None, 4)[4] == ("2.25 0.5 1.5 3" if on_stack else
                                         "2.25 0.5 <unavailable> 3")
    assert report(["--count", "-f", "it.Price > 2.2 && it.Ratio == 0.5", trace]).stdout.strip() == "1"
    # slices through the pointer: elements of numbers, the length of others
    record(["-q", "-f", "-o", trace, 'main.price "%v %v %v", it.Sizes, it.Tags, it.Parts',
            "--", exe])
    [e] = jsonl(trace)
    assert [e["args"]["it." + f] for f in ("Sizes", "Tags", "Parts")] == \
        [[-1, 300], {"elems": [], "len": 3, "truncated": True},
         {"elems": [], "len": 4, "truncated": True}], e
    assert report(["--count", "-f", "len(it.Parts) == 4 && len(it.Tags) == 3", trace]).stdout \
        .strip() == "1"
    # a struct passed by value is captured whole, a float field too: read
    # on the stack (386; gccgo passes a struct of 56 bytes in memory),
    # unavailable in a float register (gc's X0), and said so
    in_memory = goarch == "386" or toolchain.gccgo
    record(["-q", "-f", "-o", trace, "main.weigh", "--", exe])
    [e] = jsonl(trace)
    assert e["args"]["t"] == {"Name": "t", "Weight": 0.75 if in_memory else None, "N": 4,
                              "Kids": [7, 8]}, e
    csv = report(["--format", "csv", trace]).stdout.splitlines()[1]
    assert ('"{Name:""t""(len=1) Weight:%s N:4 Kids:[7 8](len=2)}"'
            % ("0.75" if in_memory else "<unavailable>")) in csv, csv
    listed = record(["--list", exe, "p:main.weigh"]).stdout
    row = [l.split() for l in listed.splitlines() if l.split()[:1] == ["t.Weight"]]
    assert len(row) == 1 and " ".join(row[0][3:]) == \
        ("captured" if in_memory else "not captured (a float register: not in uprobe pt_regs)"), \
        listed
    listed = record(["--list", exe, "main.price"]).stdout
    row = [l.split() for l in listed.splitlines() if l.split()[1:3] == ["x", "float64"]]
    assert len(row) == 1, listed
    assert " ".join(row[0][4:]) == ("" if on_stack else
                                    "not captured: float register: not in uprobe pt_regs"), listed


def test_interfaces_show_their_dynamic_type(gobuild, toolchain, tmp_path):
    """any and error values are recorded as their dynamic type's name
    (from DWARF's runtime type table, or from the runtime type
    descriptors of a stripped binary), "<nil>" when nil, also in PIE.
    gccgo's DWARF has no runtime type table: its interfaces are their two
    words (type descriptor or method table, and the object)."""
    if toolchain.gccgo:
        exe = gobuild("tests/fixtures/values/main.go", "values")
        trace = str(tmp_path / "t.gtr")
        record(["-q", "-f", "-o", trace, "main.takeAny", "--", exe])
        got = [(e["args"]["v"], e["args"]["e"]) for e in jsonl(trace)]
        assert [(sorted(v), sorted(e)) for v, e in got] == \
            [(["__object", "__type_descriptor"], ["__methods", "__object"])] * 3
        # non-nil where the program passes a value: &Point{}, os.ErrNotExist, "s"
        assert [(v["__type_descriptor"] != 0, e["__methods"] != 0) for v, e in got] == \
            [(True, False), (False, True), (True, False)]
        return
    for flags in ([], ["-buildmode=pie"], ["-ldflags=-s -w"], ["-buildmode=pie", "-ldflags=-s -w"]):
        exe = gobuild("tests/fixtures/values/main.go",
                      "values" + "".join(flags).replace(" ", "_"), *flags)
        trace = str(tmp_path / "t.gtr")
        # stripped: no DWARF, so the signature is written
        probe = "main.takeAny(v any, e error)" if "-ldflags=-s -w" in flags else "main.takeAny"
        record(["-q", "-f", "-o", trace, probe, "--", exe])
        got = [(e["args"]["v"], e["args"]["e"]) for e in jsonl(trace)]
        assert got == [("*main.Point", "<nil>"), ("<nil>", "*errors.errorString"),
                       ("string", "<nil>")], flags
    disturb = gobuild("tests/fixtures/disturb/main.go", "disturb")
    trace = str(tmp_path / "d.gtr")
    record(["-q", "-f", "-o", trace, "r:main.divide", "--", disturb], check=False)
    assert [tuple(e["goargs"]) for e in jsonl(trace)] == \
        [(0, "*errors.errorString"), (3, "<nil>")]


def test_interface_parameters_and_error_results(gobuild, toolchain, tmp_path):
    """error results and parameters, nil and not, a Shape and an empty
    interface: gc shows each as its dynamic type's name. gccgo, whose
    DWARF gives an interface as a struct of two words, shows those words
    (the methods table or type descriptor, 0 when nil; the data pointer,
    the same in the error returned and then passed) and, as type(NAME),
    the dynamic type's name from its descriptor's reflection string; a
    type of libgo.so's (errors.New's) is read from the process, or is its
    descriptor's address once the process has exited, as --list says."""
    exe = gobuild("tests/fixtures/ifaces", "ifaces")
    listed = record(["--list", exe, "r:main.check"]).stdout
    rows = [l.split() for l in listed.splitlines() if l.startswith("    ")]
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "r:main.check", "main.handle", "main.area", "main.show",
            "--", exe])
    got = collections.defaultdict(list)
    for e in jsonl(trace):
        got[e["func"]].append(e["args"])
    if not toolchain.gccgo:
        assert [r[-1] for r in rows] == ["captured"] and rows[0][1] == "error"
        names = {f: [list(a.values())[0] for a in v] for f, v in got.items()}
        assert names == {"main.check": ["<nil>", "*main.badInput", "*errors.errorString"],
                         "main.handle": ["<nil>", "*main.badInput", "*errors.errorString"],
                         "main.area": ["main.Rect", "<nil>"], "main.show": ["int", "<nil>"]}
        return
    ret = rows[0][0]   # gccgo's DWARF names no result: $retN, N its number
    assert re.fullmatch(r"\$ret\d+", ret)
    assert [r[0] for r in rows] == [ret, ret + ".__methods", ret + ".__object", "type(%s)" % ret]
    assert " ".join(rows[0][-5:]) == "captured whole, by its fields"
    assert rows[1][-1] == rows[2][-1] == "captured"
    assert " ".join(rows[3][3:]) == ("captured (the dynamic type's name from its type "
                                     "descriptor; one of libgo.so's is read from the running "
                                     "process, its address once the process has exited)")
    rets = [(a[ret], a["type(%s)" % ret]) for a in got["main.check"]]
    params = [(a["err"], a["type(err)"]) for a in got["main.handle"]]
    assert rets == params
    assert [(sorted(v), bool(v["__methods"]), bool(v["__object"])) for v, _ in rets] == \
        [(["__methods", "__object"], False, False)] + [(["__methods", "__object"], True, True)] * 2
    assert [t for _, t in rets[:2]] == ["<nil>", "*main.badInput"]
    # errors.errorString's descriptor is libgo.so's: outside the program,
    # named while it runs (the program may have exited by then)
    assert rets[2][1] == "*errors.errorString" or (
        re.fullmatch(r"0x[0-9a-f]+", rets[2][1]) and
        int(rets[2][1], 16) != rets[2][0]["__methods"]), rets[2]
    assert [(a["type(s)"], bool(a["s"]["__object"])) for a in got["main.area"]] == \
        [("main.Rect", True), ("<nil>", False)]
    assert [(a["type(v)"], sorted(a["v"]), bool(a["v"]["__type_descriptor"]))
            for a in got["main.show"]] == \
        [("int", ["__object", "__type_descriptor"], True),
         ("<nil>", ["__object", "__type_descriptor"], False)]


def test_signatures_without_dwarf_place_every_value(gobuild, toolchain, tmp_path):
    """A build without DWARF (-ldflags=-w; gccgo's -g0, which keeps only
    functions' names and ranges) probed with signatures: gccgo passes a
    hidden result pointer first when the results take more than two
    words, so the signature's results (also on an entry probe) place the
    parameters after it, and the results are read through RAX; an error
    shows its dynamic type. Without a signature gccgo's values are not
    captured, as gotrace-record says."""
    exe = gobuild("tests/fixtures/ifaces", "ifaces-nodwarf", "-ldflags=-w")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.parse(s string) (int, error)",
            "r:main.parse(s string) (int, error)", "r:main.split(n int) (int, int, string)",
            "main.handle(err error)", "--", exe])
    got = collections.defaultdict(list)
    for e in jsonl(trace):
        got[(e["func"], e["kind"])].append(e["goargs"])
    assert got[("main.parse", "entry")] == [["abc"], [""]]
    assert got[("main.parse", "return")] == [[3, "<nil>"], [-1, "*main.badInput"]]
    assert got[("main.split", "return")] == [[4, 2, "split"]]
    assert [a[0] for a in got[("main.handle", "entry")]][:2] == ["<nil>", "*main.badInput"]
    if toolchain.gccgo:
        p = record(["-q", "-o", str(tmp_path / "n.gtr"), "main.parse", "r:main.split",
                    "--", exe])
        assert p.stderr.count("has no DWARF for") == 1, p.stderr
        assert ("probe 'main.parse': %s has no DWARF for main.parse (built without -g)"
                % exe) in p.stderr


def test_a_glob_with_a_pointer_receiver(functions, toolchain, tmp_path):
    """main.(*T).* names T's methods as gc spells them; gccgo spells both
    receivers main.T.M (its names do not tell them apart), so there the
    glob matches every method of T, in --list and in a recording."""
    want = ["main.T.M", "main.T.Value"] if toolchain.gccgo else ["main.(*T).M"]
    listed = record(["--list", functions, "main.(*T).*"]).stdout
    assert "%d of " % len(want) in listed and "match 'main.(*T).*'" in listed, listed
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.(*T).*", "--", functions, "2"])
    assert sorted({e["func"] for e in jsonl(trace)}) == want


def test_a_running_process_names_its_library_types(gobuild, toolchain, tmp_path, procs):
    """A running program passing errors.New's error: gc names its type
    from the binary; gccgo's descriptor of it is in libgo.so, read from the
    process while it runs (-p), so both say *errors.errorString."""
    exe = gobuild("tests/fixtures/ifaces", "ifaces")
    prog = procs([exe, "forever"])
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "-p", str(prog.pid), "-d", "1", "main.handle"])
    evs = jsonl(trace)
    assert len(evs) >= 5, evs
    name = "type(err)" if toolchain.gccgo else "err"
    assert {e["args"][name] for e in evs} == {"*errors.errorString"}, evs[:2]


def test_results_of_more_than_two_words(gobuild, toolchain, tmp_path):
    """(int, error) and (int, int, string) results. gc returns them in
    registers; gccgo returns them in memory through the caller's hidden
    pointer, which RAX holds at the return (System V psABI): --list says
    [RAX+N], and each is read there, the error as its two words and
    type(NAME)."""
    exe = gobuild("tests/fixtures/ifaces", "ifaces")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "r:main.parse", "r:main.split", "r:main.pack", "--", exe])
    got = collections.defaultdict(list)
    for e in jsonl(trace):
        got[e["func"]].append(e)
    assert [e["goargs"] for e in got["main.split"]] == [[4, 2, "split"]]
    # a field of a struct result: gc reads it in its register; gccgo's
    # result struct is in memory, where no field path is followed (refused)
    corner = record(["-q", "-o", str(tmp_path / "c.gtr"), 'r:main.corner "%d", r.W',
                     "--", exe], check=not toolchain.gccgo)
    if toolchain.gccgo:
        assert corner.returncode != 0 and "'r.W'" in corner.stderr, corner.stderr
    else:
        assert [e["args"]["r.W"] for e in jsonl(str(tmp_path / "c.gtr"))] == [5]
    # named results keep their names; a []byte is read in memory too
    assert [e["args"] for e in got["main.pack"]] == \
        [{"name": "pack", "data": "abC", "count": 134, "cap(data)": 3}]
    parse = got["main.parse"]
    assert [e["goargs"][0] for e in parse] == [3, -1]
    if not toolchain.gccgo:
        assert [e["goargs"][1] for e in parse] == ["<nil>", "*main.badInput"]
        return
    err = list(parse[0]["args"])[1]    # $retN: gccgo's DWARF names no result
    assert [e["args"]["type(%s)" % err] for e in parse] == ["<nil>", "*main.badInput"]
    assert [bool(e["args"][err]["__object"]) for e in parse] == [False, True]
    listed = record(["--list", exe, "r:main.split"]).stdout
    rows = [l.split() for l in listed.splitlines() if l.startswith("    ")]
    assert [(r[2], r[3]) for r in rows] == \
        [("[RAX+0]", "captured"), ("[RAX+8]", "captured"), ("[RAX+16]", "captured")], listed


@pytest.mark.parametrize("pie", [False, True], ids=["exe", "pie"])
def test_stripped_binary_with_a_signature(gobuild, toolchain, tmp_path, pie):
    """No DWARF, PIE or not: a signature in the probe gives names and
    types, and the values come out typed (string content, signed int8,
    bool). A stripped gccgo program has no function table but its dynamic
    symbols: gotrace says so."""
    exe = gobuild("examples/functions/main.go", "functions-sig" + ("-pie" if pie else ""),
                  "-ldflags=-s -w", *(["-buildmode=pie"] if pie else []))
    trace = str(tmp_path / "t.gtr")
    if toolchain.gccgo:
        p = record(["-q", "-o", trace, 'main.greet(s string, n int)', "--", exe, "2"],
                   check=False)
        assert p.returncode == 1
        assert p.stderr == ("gotrace-record: function 'main.greet' not found in %s; a "
                            "stripped gccgo program: only its dynamic symbols are "
                            "functions here (gccgo writes no .gopclntab); build it "
                            "without -s to probe the others\n" % exe)
        return
    record(["-q", "-o", trace, 'main.greet(s string, n int) "%s %d" s, n',
            "main.(*T).M(k int8, ok bool)", "--", exe, "2"])
    evs = jsonl(trace)
    greets = [e["args"] for e in evs if e["func"] == "main.greet"]
    assert greets == [{"s": "hello", "n": 0}, {"s": "hello", "n": 1}]
    ms = [e["args"] for e in evs if e["func"] == "main.(*T).M"]
    assert [(m["k"], m["ok"]) for m in ms] == [(-3, True)] * 2
    assert report(["-f", 'func == "main.greet"', trace]).stdout.splitlines()[1].endswith("hello 0")
    bad = record(["-o", str(tmp_path / "b.gtr"), "main.greet(s strin, n int)",
                  "--", exe], check=False)
    assert bad.returncode != 0 and "strin" in bad.stderr and "underlying type" in bad.stderr


def test_i386_stack_abi(gobuild, toolchain, tmp_path):
    """GOARCH=386: every argument on the stack (ABI0), read at SP+4...,
    and every result too, read at each RET (where SP is back at the
    entry's); the program runs unharmed (no probe on its gs-relative first
    instruction). gccgo: no 386 libgo in the matrix, its go tool cannot
    build one."""
    if toolchain.gccgo:
        assert "import file" in build_fails(toolchain, "examples/functions/main.go", "386")
        return
    exe = gobuild("examples/functions/main.go", "functions-386", goarch="386")
    plain = subprocess.run([exe, "2"], capture_output=True, text=True)
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.add", "main.greet", "main.(*T).M", "r:main.add",
                "r:main.greet", "r:main.(*T).M", "r:main.T.Value", "--", exe, "2"])
    assert p.stdout == plain.stdout
    evs = [e for e in jsonl(trace) if e["kind"] == "entry"]
    assert [e["args"] for e in evs if e["func"] == "main.add"] == [{"x": 42, "y": 13}] * 2
    assert [e["args"] for e in evs if e["func"] == "main.greet"] == \
        [{"s": "hello", "n": 0}, {"s": "hello", "n": 1}]
    ms = [e["args"] for e in evs if e["func"] == "main.(*T).M"]
    assert [(m["k"], m["ok"]) for m in ms] == [(-3, True)] * 2
    rets = collections.defaultdict(list)
    for c in json_calls(trace):
        rets[c["func"]].append((c["status"], c["goret"]))
    assert rets["main.add"] == [("returned", [55])] * 2
    assert rets["main.greet"] == [("returned", [5]), ("returned", [6])]
    assert rets["main.(*T).M"] == [("returned", [4])] * 2
    assert len(rets["main.T.Value"]) == 2 and \
        all(s == "no_entry" and len(r) == 1 for s, r in rets["main.T.Value"])
    # goroutine ids: g's goid offset from DWARF, and from the table of Go
    # versions in a stripped build, agree
    stripped = gobuild("examples/functions/main.go", "functions-386-s", "-ldflags=-s -w",
                       goarch="386")
    offs = [re.search(r"^goid +at runtime\.g\+(\d+) \(from (\w+)\)$",
                      record(["--list", x, "main.add"]).stdout, re.M).groups()
            for x in (exe, stripped)]
    assert offs[0][0] == offs[1][0] and [s for _, s in offs] == ["DWARF", "table"], offs
    assert {e["goid"] for e in evs} == {1}, "main's goroutine"


def json_calls(path):
    out = report(["--calls", "--format", "jsonl", path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_i386_return_probes_leave_the_program_unharmed(gobuild, toolchain, tmp_path):
    """Return probes on every main.* function of a 386 build (uprobes on
    each RET, never a return address rewritten): 3000 goroutines growing
    their stacks, panics and Goexit run as untraced, with the same output
    and exit status; the returns a panic skipped are not recorded. Each
    event has its goroutine's id (g at -4(GS)), so every return pairs with
    its entry. gccgo: no 386 libgo in the matrix."""
    if toolchain.gccgo:
        assert "import file" in build_fails(toolchain, "tests/fixtures/disturb/main.go", "386")
        return
    exe = gobuild("tests/fixtures/disturb/main.go", "disturb-386", goarch="386")
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    trace = str(tmp_path / "t.gtr")
    traced = record(["-q", "-o", trace, "main.*", "r:main.*", "--", exe], check=False)
    assert (traced.returncode, traced.stdout) == (plain.returncode, plain.stdout), traced.stderr
    evs = jsonl(trace)
    entries = collections.Counter(e["func"] for e in evs if e["kind"] == "entry")
    returns = collections.Counter(e["func"] for e in evs if e["kind"] == "return")
    assert entries["main.grow"] == returns["main.grow"] > 3000
    assert entries["main.mayPanic"] == 20 and returns["main.mayPanic"] == 17
    assert entries["main.quitter"] == 1 and returns["main.quitter"] == 0
    divs = [e["goargs"][0] for e in evs if e["func"] == "main.divide" and e["kind"] == "return"]
    assert divs == [0, 3]
    assert all(e["goid"] > 0 for e in evs), [e for e in evs if not e["goid"]][:3]
    assert {e["goid"] for e in evs if e["func"] == "main.safe"} == {1}   # the main goroutine
    assert len({e["goid"] for e in evs if e["func"] == "main.grow"}) == 3000
    out = report(["--calls", "--format", "jsonl", trace])
    assert "\n0 return(s) without entry" in out.stderr or " 0 return(s) without entry" in out.stderr, \
        out.stderr


def test_gccgo_c_abi(tmp_path, needs_bpf):
    """gccgo passes arguments as C does (RDI, RSI, RDX...): captured values
    equal what the program passes, results come back in RAX."""
    exe = str(tmp_path / "functions-gccgo")
    subprocess.run(["gccgo", "-g", "-O0", "-o", exe,
                    os.path.join(ROOT, "examples/functions/main.go")], check=True)
    plain = subprocess.run([exe, "2"], capture_output=True, text=True)
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.add", "r:main.add", "main.greet",
                "--", exe, "2"])
    assert p.stdout == plain.stdout == functions_output(2) + "\n"
    evs = jsonl(trace)
    adds = [e for e in evs if e["func"] == "main.add"]
    assert [e["args"] for e in adds if e["kind"] == "entry"] == [{"x": 42, "y": 13}] * 2
    assert [e["goargs"] for e in adds if e["kind"] == "return"] == [[55]] * 2
    assert [e["args"] for e in evs if e["func"] == "main.greet"] == \
        [{"s": "hello", "n": 0}, {"s": "hello", "n": 1}]


def test_assembly_function_is_abi0(gobuild, toolchain, tmp_path):
    """A Go assembly function is ABI0 in a register-ABI binary: its
    arguments are read from the stack (SP+8, SP+16), by raw words from
    the argument area's size or typed by a signature. gccgo does not
    assemble Go assembly (its textflag.h is gc's)."""
    if toolchain.gccgo:
        assert "textflag.h" in build_fails(toolchain, "tests/fixtures/asm")
        return
    exe = gobuild("tests/fixtures/asm", "asm")
    listing = subprocess.run([os.path.join(ROOT, "gotrace-record"), "--list",
                              exe, "main.addAsm"], capture_output=True, text=True)
    assert "ABI0" in listing.stdout
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.addAsm",
                'main.addAsm(x, y int64) "%d %d" x, y', "--", exe])
    assert p.stdout.strip() == "129"
    evs = jsonl(trace)
    raw = [e["goargs"][:2] for e in evs if e["probe"] == 0]
    typed = [e["args"] for e in evs if e["probe"] == 1]
    assert raw == [[42, 0], [42, 1], [42, 2]]
    assert typed == [{"x": 42, "y": 0}, {"x": 42, "y": 1}, {"x": 42, "y": 2}]


def test_field_paths_through_pointers_in_net_http(gobuild, toolchain, tmp_path, procs):
    """net/http.serverHandler.ServeHTTP(req.Method, req.URL.Path): fields
    of the request, through the *url.URL pointer, by DWARF types (Go 1.19
    names the parameter req). A gccgo program's net/http is libgo's: the
    probes name libgo.so as their binary, as gotrace-record says."""
    import urllib.error
    import urllib.request
    from conftest import RECORD
    exe = gobuild("tests/fixtures/httpserver/main.go", "httpserver")
    srv = procs([exe], stdout=subprocess.PIPE, text=True)
    port = int(srv.p.stdout.readline())
    trace = str(tmp_path / "t.gtr")
    lib = ""
    if toolchain.gccgo:
        p = record(["-o", trace, "-p", str(srv.pid), "net/http.serverHandler.ServeHTTP"],
                   check=False)
        assert p.returncode == 1
        lib = re.search(r"name it as the probe's binary, '([^']*):net/http.serverHandler"
                        r".ServeHTTP'\n", p.stderr).group(1) + ":"
        assert os.path.basename(lib).startswith("libgo.so.")
    rec = procs([RECORD, "-o", trace, "-p", str(srv.pid),
                 lib + "net/http.serverHandler.ServeHTTP(req.Method, req.URL.Path)",
                 lib + "net/http.(*response).WriteHeader"],
                stderr=subprocess.PIPE, text=True)
    assert "attached" in attached(rec.p.stderr)
    base = "http://127.0.0.1:%d" % port
    assert urllib.request.urlopen(base + "/hello", timeout=5).read() == b"GET /hello\n"
    req = urllib.request.Request(base + "/api/items", data=b"x", method="POST")
    assert urllib.request.urlopen(req, timeout=5).read() == b"POST /api/items\n"
    try:
        urllib.request.urlopen(base + "/missing", timeout=5)
    except urllib.error.HTTPError as e:
        assert e.code == 404
    import signal
    import time
    time.sleep(0.3)
    assert rec.stop(signal.SIGINT) == 0
    evs = jsonl(trace)
    serve = toolchain.fname("net/http.serverHandler.ServeHTTP")
    serves = [e["args"] for e in evs if e["func"] == serve]
    assert [(s["req.Method"], s["req.URL.Path"]) for s in serves] == \
        [("GET", "/hello"), ("POST", "/api/items"), ("GET", "/missing")]
    codes = [e["args"]["code"] for e in evs
             if e["func"] == toolchain.fname("net/http.(*response).WriteHeader")]
    assert 404 in codes
    text = report(["-f", 'func == "%s"' % serve, trace]).stdout
    assert text.splitlines()[1].endswith("GET /hello")
    bad = record(["-o", str(tmp_path / "b.gtr"), "-p", str(srv.pid),
                  lib + "net/http.serverHandler.ServeHTTP(r.Method)"], check=False)
    assert bad.returncode != 0 and "its parameters: %s, rw, req" % (
        "pointer" if toolchain.gccgo else "sh") in bad.stderr


def test_unreadable_string_shows_its_length_and_the_next_is_intact(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/badstr/main.go", "badstr")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.two", "--", exe])
    assert p.stdout.strip() == "6"
    # the bytes cannot be read, the length is the string's own
    assert [e["args"] for e in jsonl(trace)] == \
        [{"a": {"str": "", "len": 5, "truncated": True}, "b": "second"}]
    assert report([trace]).stdout.splitlines()[1].endswith('a=""...(len=5) b="second"(len=6)')


def test_strings_past_the_events_byte_budget_keep_their_length(gobuild, tmp_path):
    """Nine 600-byte strings at --keep-string 512 hold more bytes than an
    event's tail (4 KiB): those that fit are whole to the limit, the
    last that fits is cut, those past it keep their length, and no entry
    overwrites another (the tenth entry used to wrap over the first)."""
    exe = gobuild("tests/fixtures/manystr/main.go", "manystr")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-s", "512", "-o", trace, "main.f8", "main.f9", "--", exe])
    assert p.stdout.split() == ["600", "600"]
    events = {e["func"]: e["args"] for e in jsonl(trace)}
    assert sorted(events) == ["main.f8", "main.f9"]
    # each entry is 2 bytes of count and its bytes: 7 x 514, then 496
    # bytes fill 4096, and the ninth has no room left
    want = [512] * 7 + [496]
    for func, n in (("main.f8", want), ("main.f9", want + [0])):
        args = events[func]
        assert list(args) == ["s%d" % k for k in range(len(n))]
        for k, size in enumerate(n):
            v = args["s%d" % k]
            assert v == {"str": chr(ord("a") + k) * size, "len": 600, "truncated": True}


def test_a_function_of_one_ret_sends_its_entry_then_its_return(gobuild, toolchain, tmp_path):
    """A function whose body is one RET has its entry and its return
    probes at one address: one uprobe sends the entry, then the return,
    and each call pairs (a return first paired each entry with the next
    call's return, or none). gccgo leaves the empty functions out, calls
    and all: main.one alone is there to probe."""
    exe = gobuild("tests/fixtures/emptyfn/main.go", "emptyfn")
    trace = str(tmp_path / "t.gtr")
    funcs = ("main.one",) if toolchain.gccgo else ("main.empty", "main.empty2", "main.one")
    probes = [x for f in funcs for x in (f, "r:" + f)]
    p = record(["-q", "-o", trace, *probes, "--", exe])
    assert p.stdout.strip() == "6"
    order = [(e["func"], e["kind"]) for e in jsonl(trace)]
    assert order == [(f, k) for f in funcs for k in ("entry", "return")] * 3
    calls = jsonl(trace, "--calls")
    args = {"main.empty": lambda i: {}, "main.empty2": lambda i: {"x": i},
            "main.one": lambda i: {"x": i}}
    assert [(c["func"], c["status"], c["args"]) for c in calls] == \
        [(f, "returned", args[f](i)) for i in range(3) for f in funcs]
    # gccgo names an unnamed result $ret0, gc ~r0
    assert [list(c["rets"].values()) for c in calls if c["func"] == "main.one"] == \
        [[i + 1] for i in range(3)]


def test_every_instantiation_of_a_generic_function(gobuild, toolchain, tmp_path):
    """main.Map[string,int] and main.Map[int,string] share the name
    "main.Map[...]": each gets its own probe with its own types (after the
    hidden dictionary argument). gccgo 12 has no type parameters."""
    if toolchain.gccgo:
        assert "main.go:8:9: error: expected" in \
            build_fails(toolchain, "tests/fixtures/generic/main.go")
        return
    exe = gobuild("tests/fixtures/generic/main.go", "generic")
    for probe in ("main.Map[...]", "main.Map*"):
        trace = str(tmp_path / "t.gtr")
        record(["-q", "-f", "-o", trace, probe, "--", exe])
        got = [(e["args"]["k"], e["args"]["v"]) for e in jsonl(trace)]
        assert got == [("a", 1), (2, "b")], probe


def test_signature_that_contradicts_dwarf_is_refused(gobuild, toolchain, tmp_path):
    exe = gobuild("tests/fixtures/values/main.go", "values")
    p = record(["-o", str(tmp_path / "x.gtr"), "main.takePoint(k int)", "--", exe],
               check=False)
    assert p.returncode != 0
    # gccgo's DWARF names types without their package
    assert "disagrees with DWARF" in p.stderr and \
        ("p *Point, k int" if toolchain.gccgo else "p *main.Point, k int") in p.stderr
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.takePoint(p.X, $ptr(p, 16))", "--", exe])
    e = jsonl(trace)[0]["args"]
    assert e["p.X"] == 3 and len(e["$ptr(p, 16)"]) == 16


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_slice_elements_by_the_binarys_word_size(gobuild, toolchain, tmp_path, goarch):
    """[]int and []uintptr have elements of the binary's word (4 bytes on
    i386), []int64 of 8 whatever the word: each element is read whole.
    gccgo: amd64 only (no 386 libgo in the matrix)."""
    if toolchain.gccgo and goarch == "386":
        assert "import file" in build_fails(toolchain, "tests/fixtures/slices/main.go", "386")
        return
    exe = gobuild("tests/fixtures/slices/main.go", "slices-" + goarch, goarch=goarch)
    trace = str(tmp_path / "s.gtr")
    p = record(["-q", "-o", trace, "main.f", "--", exe])
    assert p.stdout == "8\n"
    ev = jsonl(trace)[0]
    assert ev["args"]["xs"] == [1, 2, 3]
    assert ev["args"]["bs"] == [-1, 1 << 40]
    assert ev["args"]["ps"] == [7]


PTRWORDS = "tests/fixtures/ptrwords"
PTRWORDS_PROBES = [
    'main.takePtr%s "%%d %%s %%s %%d %%s" p.N, p.Tag, p.Buf, p.M.In.K, p.M.In.Name, $ptr(p, 4)',
    "main.kind%s",
]


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_values_through_pointers_by_the_binarys_word_size(gobuild, toolchain, tmp_path,
                                                         goarch):
    """A string, a []byte and an int behind a pointer, a string and an int
    two pointers down (p.M.In.Name), $ptr(p, 4) and two interfaces (an
    empty one and an error, whose type is a word into its itab): each
    read by the binary's word, 4 bytes on i386, with DWARF and stripped
    (typed by a signature), equal to what the program prints. gccgo:
    amd64 with DWARF only (no 386 libgo in the matrix; its strip keeps
    no function table), whose interfaces are not named by type."""
    if toolchain.gccgo and goarch == "386":
        assert "import file" in build_fails(toolchain, PTRWORDS, "386")
        return
    builds = [(gobuild(PTRWORDS, "ptrwords-" + goarch, goarch=goarch), ("", ""))]
    if not toolchain.gccgo:
        builds.append((gobuild(PTRWORDS, "ptrwords-s-" + goarch, "-ldflags=-s -w",
                               goarch=goarch), ("(p *main.T)", "(v any, err error)")))
    for exe, sigs in builds:
        plain = subprocess.run([exe], capture_output=True, text=True, check=True)
        lines = plain.stdout.splitlines()
        n, tag, buf, k, name = lines[1].split()
        trace = str(tmp_path / "p.gtr")
        p = record(["-q", "--force", "-o", trace,
                    *[probe % sig for probe, sig in zip(PTRWORDS_PROBES, sigs)],
                    "--", exe])
        assert p.stdout == plain.stdout
        evs = {e["func"]: e["args"] for e in jsonl(trace)}
        got = evs["main.takePtr"]
        assert (got["p.N"], got["p.Tag"], got["p.Buf"], got["p.M.In.K"],
                got["p.M.In.Name"]) == (int(n), tag, buf, int(k), name), exe
        assert got["$ptr(p, 4)"].encode("latin-1").hex() == lines[2]
        if not toolchain.gccgo:   # gccgo's DWARF shows an interface as a struct
            assert "%s %s" % (evs["main.kind"]["v"], evs["main.kind"]["err"]) == lines[3]


def test_closures_and_method_values(gobuild, toolchain, tmp_path):
    """A closure (main.main.func1, its captured variable in the closure
    context) and a method called through a method value: their arguments
    and results as Go passed them, named as Go names them."""
    exe = gobuild("tests/fixtures/closures/main.go", "closures", "-gcflags=-l")
    trace = str(tmp_path / "c.gtr")
    p = record(["-q", "-o", trace, "main.main.func1", "r:main.main.func1",
                "main.(*counter).add", "r:main.(*counter).add", "--", exe])
    assert p.stdout == "%d\n" % (3 * 102 + 3 + 5 + 11)
    evs = jsonl(trace)
    f = [e for e in evs if e["func"] == toolchain.fname("main.main.func1")]
    assert [(e["args"]["x"], e["args"]["s"]) for e in f if e["kind"] == "entry"] == \
        [(0, "ab"), (1, "ab"), (2, "ab")]
    assert [e["goargs"][0] for e in f if e["kind"] == "return"] == [102, 103, 104]
    a = [e for e in evs if e["func"] == toolchain.fname("main.(*counter).add")]
    assert [e["args"]["k"] for e in a if e["kind"] == "entry"] == [5, 6]
    assert [e["goargs"][0] for e in a if e["kind"] == "return"] == [5, 11]
    assert len({e["goid"] for e in evs}) == 1 and (evs[0]["goid"] > 0) != toolchain.gccgo


def test_cgo_exported_function_by_its_go_name(gobuild, toolchain, tmp_path):
    """A Go function exported to C (//export goCallback) is probed by its
    Go name: itself, or the cgo wrapper _cgoexp_<hash>_goCallback that gc
    inlined it into (said on stderr); a typo suggests it, once."""
    exe = gobuild("tests/fixtures/cgoexport/main.go", "cgoexport", cgo=True)
    trace = str(tmp_path / "x.gtr")
    p = record(["-o", trace, "main.goCallback", "r:main.goCallback", "--", exe])
    assert p.stdout == "12\n"
    evs = jsonl(trace)
    names = {e["func"] for e in evs}
    assert len(names) == 1
    name = names.pop()
    if toolchain.gccgo:
        # the function itself, or cgo's Cgoexp_goCallback for gccgo that
        # it is inlined into: its arguments as Go passed them
        assert name in ("main.goCallback", "main.Cgoexp__goCallback")
        assert "exported to C" not in p.stderr
    else:
        assert name == "main.goCallback" or \
            re.fullmatch(r"_cgoexp_[0-9a-f]+_goCallback", name)
    if name != "main.goCallback" and not toolchain.gccgo:
        assert "main.goCallback is exported to C; probing its cgo wrapper %s" % name in p.stderr
    assert [e["kind"] for e in evs] == ["entry", "return"] * 3
    p = record(["-o", trace, "-f", "main.goCallbak", "--", exe], check=False)
    assert p.returncode == 1
    hint = p.stderr.split("did you mean: ", 1)[1].strip().split(", ")
    assert name in hint and len(hint) == len(set(hint))
