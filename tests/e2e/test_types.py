"""Values shown whole: generic functions by their source name with their
shaped parameters typed, structs passed by value, results of every count,
and types taken from the binary itself when it has no DWARF."""
import json
import subprocess

import pytest

from conftest import build_fails, record, report

TYPES = "tests/fixtures/types"


def gccgo_has_no_generics(toolchain):
    """gccgo 12 has no type parameters (the fixture's generic.go is left
    out of its builds): whether toolchain is gccgo, after checking that it
    cannot build a generic function."""
    if toolchain.gccgo:
        assert "error: expected" in build_fails(toolchain, TYPES + "/generic.go")
    return toolchain.gccgo


def jsonl(path, *args):
    out = report(["--format", "jsonl", *args, path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def listing(exe, *probes):
    out = record(["--list", "--json", exe, *probes]).stdout
    return json.loads(out)["functions"]


def test_generic_function_by_its_source_name(gobuild, toolchain, tmp_path):
    """main.Sum (the name in the source) is every instance of Sum; the
    shaped parameter xs is typed []int / []float64 and captured; a method
    of a generic type by its source name too."""
    if gccgo_has_no_generics(toolchain):
        return
    exe = gobuild(TYPES, "types")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.Sum", "main.(*List).Push", "--", exe])
    evs = jsonl(trace)
    assert [e["args"].get("xs", e["args"].get("v")) for e in evs] == \
        ["a", [1, 2, 3], [1.5, 2]]
    params = sorted([(p["name"], p["type"], p["capture"]) for p in f["params"]]
                    for f in listing(exe, "main.Sum"))
    assert [p[0][0] for p in params] == [".dict", ".dict"]
    assert [p[1:] for p in params] == [[("xs", "[]float64", True)],
                                       [("xs", "[]int", True)]]
    text = report([trace]).stdout.splitlines()
    assert text[2].endswith("xs=[1 2 3](len=3) cap(xs)=3")


def test_generic_instance_by_its_symbol_name(gobuild, toolchain, tmp_path):
    """The name nm prints for an instance (main.Sum[go.shape.int_0] of Go
    1.19, main.Sum[go.shape.int] of later Go) probes that instance alone."""
    if gccgo_has_no_generics(toolchain):
        return
    exe = gobuild(TYPES, "types")
    syms = subprocess.run(["nm", exe], capture_output=True, text=True,
                          check=True).stdout.split("\n")
    name = next(s.split(" ", 2)[2] for s in syms
                if " main.Sum[go.shape.int" in s)
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, name, "--", exe])
    assert [e["args"]["xs"] for e in jsonl(trace)] == [[1, 2, 3]]


STRUCT_PROBES = ["main.withStruct", "main.area", "main.big"]
STRUCT_TEXT = [
    "p={X:3 Y:4} n=5",
    'r={Min:{X:1 Y:2} Max:{X:4 Y:6} Name:"box"(len=3)} scale=2',
    'b={A:1 B:0 C:0 D:0 E:0 F:0 G:0 H:0 I:9 Tag:"big"(len=3)} k=7',
]


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_struct_passed_by_value_is_captured_whole(gobuild, toolchain, tmp_path, goarch):
    """Point in two registers, Rect (nested structs and a string) in six,
    Big on the stack (too big for registers; on 386 every argument is):
    each shown whole in text and JSON, and its fields filter. gccgo:
    amd64 only (no 386 libgo in the matrix)."""
    if toolchain.gccgo and goarch == "386":
        build_fails(toolchain, TYPES, goarch="386")
        return
    exe = gobuild(TYPES, "types-" + goarch, goarch=goarch)
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, *STRUCT_PROBES, "--", exe])
    text = report([trace]).stdout.splitlines()[1:]
    assert [l.split(None, 4)[4] for l in text] == STRUCT_TEXT
    evs = jsonl(trace)
    assert evs[0]["args"] == {"p": {"X": 3, "Y": 4}, "n": 5}
    assert evs[1]["args"] == {"r": {"Min": {"X": 1, "Y": 2}, "Max": {"X": 4, "Y": 6},
                                    "Name": "box"}, "scale": 2}
    assert evs[2]["args"]["b"] == {"A": 1, "B": 0, "C": 0, "D": 0, "E": 0, "F": 0,
                                   "G": 0, "H": 0, "I": 9, "Tag": "big"}
    assert evs[0]["goargs"][0] == {"X": 3, "Y": 4}
    only = report(["-f", "p.Y == 4 || r.Max.X == 4", trace]).stdout.splitlines()[1:]
    assert [l.split(None, 4)[4] for l in only] == STRUCT_TEXT[:2]
    listed = {f["name"]: f["params"] for f in listing(exe, "main.area")}
    assert [(p["name"], p["capture"]) for p in listed["main.area"]] == \
        [("r", True), ("scale", True)]


def test_struct_fields_in_a_format_and_a_predicate(gobuild, toolchain, tmp_path):
    """%v of a struct shows it whole; a record-time predicate reads one
    of its fields."""
    exe = gobuild(TYPES, "types")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, 'main.withStruct (p.X == 3) "%v %d" p, p.Y',
            'main.area (r.Min.Y == 99)', "--", exe])
    text = report([trace]).stdout.splitlines()[1:]
    assert [l.split(None, 4)[4] for l in text] == ["{X:3 Y:4} 4"]


def test_typed_results_from_a_signature_on_a_stripped_pie(gobuild, toolchain, tmp_path):
    """No DWARF: the results a signature writes are captured typed; given
    parameters alone, the register ABI's results are not counted by
    pclntab, so none are shown (and gotrace says how to get them); raw
    argument words print in hex."""
    exe = gobuild(TYPES, "types-spie", "-buildmode=pie", "-ldflags=-s -w")
    if toolchain.gccgo:
        # gccgo writes no .gopclntab: stripped, only dynamic symbols remain
        p = record(["-q", "-o", str(tmp_path / "t.gtr"), "r:main.pair(a int) (n int)",
                    "--", exe], check=False)
        assert p.returncode == 1 and "a stripped gccgo program" in p.stderr
        return
    out = subprocess.run(["file", exe], capture_output=True, text=True).stdout
    assert "stripped" in out and "not stripped" not in out
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "r:main.pair(a int) (n int, err error)",
                "r:main.three(a int) (int, string, bool)", "r:main.nothing(a int)",
                "r:main.pair(a int)", "main.nothing", "--", exe])
    assert "pclntab does not say which results main.pair returns" in p.stderr
    rows = {}
    for e in jsonl(trace):
        rows.setdefault((e["func"], e["probe"]), e)
    got = sorted(((f, e["kind"], e["args"]) for (f, _), e in rows.items()),
                 key=lambda r: (r[0], r[1], len(r[2])))
    assert got == [
        ("main.nothing", "entry", {}),
        ("main.nothing", "return", {}),
        ("main.pair", "return", {}),
        ("main.pair", "return", {"n": 42, "err": "<nil>"}),
        ("main.three", "return", {"~r0": 42, "~r1": "three", "~r2": True}),
    ]
    text = report(["-f", 'func == "main.nothing" && kind == "entry"', trace]).stdout
    words = text.splitlines()[1].split(None, 4)[4].split()
    assert words[0] == "0x7" and all(w.startswith("0x") for w in words)
    three = report(["-f", 'func == "main.three"', trace]).stdout.splitlines()[1]
    assert three.endswith('<- (no entry) ~r0=42 ~r1="three"(len=5) ~r2=true')


def test_stripped_caddy_fields_from_runtime_type_descriptors(tmp_path, procs, caddy):
    """Debian's caddy has no DWARF: the signature names the types, the
    runtime type descriptors give their layout (the value receiver
    serverHandler too), and req.Method, req.URL.Path read exactly the
    requests sent."""
    import signal
    import time
    from conftest import RECORD, wait_for
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(caddy.pid),
                 "net/http.serverHandler.ServeHTTP(rw net/http.ResponseWriter, "
                 "req *net/http.Request) \"%s %s\" req.Method, req.URL.Path"],
                stderr=subprocess.PIPE, text=True)
    assert "attached" in rec.p.stderr.readline()
    sent = [("GET", "/"), ("GET", "/a/b?q=1"), ("HEAD", "/head"), ("POST", "/form")]
    import urllib.request
    for method, path in sent:
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (caddy.port, path),
                                     data=b"x" if method == "POST" else None,
                                     method=method)
        urllib.request.urlopen(req, timeout=5).read()
    time.sleep(0.3)
    assert rec.stop(signal.SIGINT) == 0
    got = [(e["args"]["req.Method"], e["args"]["req.URL.Path"]) for e in jsonl(trace)]
    assert got == [(m, p.split("?")[0]) for m, p in sent]


@pytest.mark.parametrize("flags", [(), ("-buildmode=pie",)])
def test_string_constant_never_touched_is_read(gobuild, tmp_path, flags):
    """lookup's key is a constant between 128 KiB of padding that nothing
    read before the call: its page is not in the process's page tables
    when the probe fires, so the BPF program cannot read it; the bytes
    come from the binary's read-only data instead, and the length is the
    string's."""
    exe = gobuild(TYPES, "types" + "".join(flags), *flags)
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.lookup", "--", exe])
    assert [e["args"] for e in jsonl(trace)] == [{"key": "UNTOUCHED_KEY_never_read_before"}]
    text = report([trace]).stdout.splitlines()[1]
    assert text.endswith('key="UNTOUCHED_KEY_never_read_before"(len=31)')


def test_names_bare_mistyped_and_listed(gobuild, toolchain, tmp_path, procs):
    """A bare method name lists every function that has it; a mistyped
    name is offered those of its own package first; --list -p PID reads
    the running executable, and --list with a probe shows what it would
    capture."""
    from conftest import wait_for
    exe = gobuild("tests/fixtures/httpserver", "httpserver")
    out = str(tmp_path / "x.gtr")
    if toolchain.gccgo:
        # net/http is in libgo.so: a function of the program itself
        p = record(["-o", out, gobuild(TYPES, "types") + ":withStruct"], check=False)
        assert p.returncode == 1
        assert "has 1 function named withStruct: main.withStruct; write" in p.stderr
    else:
        p = record(["-o", out, exe + ":WriteHeader"], check=False)
        assert p.returncode == 1
        listed = p.stderr.split("named WriteHeader: ")[1].split("; write")[0].split(", ")
        assert "net/http.(*response).WriteHeader" in listed and len(listed) >= 2
        assert all(n.endswith(".WriteHeader") or n == "..." for n in listed)
        p = record(["-o", out, exe + ":net/http.(*response).WriteHeadr"], check=False)
        near = p.stderr.split("did you mean: ")[1].strip().split(", ")
        assert near[0] == "net/http.(*response).WriteHeader"
        assert all(n.startswith("net/http.") for n in near)
    srv = procs([exe], stdout=subprocess.PIPE, text=True)
    assert int(srv.p.stdout.readline()) > 0
    lst = record(["--list", "-p", str(srv.pid), "main.main"]).stdout
    assert lst.startswith("binary       /proc/%d/exe\n" % srv.pid)
    assert "\n1 of " in lst and "functions match 'main.main'" in lst


def test_list_shows_what_a_probe_captures(gobuild, toolchain, tmp_path):
    """--list BINARY PROBE plans the probe as a recording would: typed
    results from a signature, a struct captured by its fields."""
    if toolchain.gccgo:
        return list_probe_gccgo(gobuild, toolchain)
    exe = gobuild(TYPES, "types")
    out = record(["--list", exe, "r:main.pair(a int) (n int, err error)"]).stdout
    assert out.splitlines()[0] == \
        "probe 'r:main.pair(a int) (n int, err error)': 1 function of " + exe
    rows = [l.split() for l in out.splitlines()[3:]]
    assert rows == [["n", "int", "RAX", "captured"],
                    ["err", "error", "RBX,RCX", "captured"]]
    out = record(["--list", exe, "p:main.withStruct"]).stdout
    rows = [l.split(None, 3) for l in out.splitlines()[3:]]
    assert rows == [["p", "main.Point", "RAX,RBX", "captured whole, by its fields"],
                    ["n", "int", "RCX", "captured"],
                    ["p.X", "int", "RAX", "captured"],
                    ["p.Y", "int", "RBX", "captured"]]


def list_probe_gccgo(gobuild, toolchain):
    """gccgo: the C ABI's registers (RDI, RSI...)."""
    exe = gobuild(TYPES, "types")
    out = record(["--list", exe, "p:main.nothing"]).stdout
    assert [l.split() for l in out.splitlines()[3:]] == [["a", "int", "RDI", "captured"]]


def test_struct_by_value_on_a_stripped_binary(gobuild, toolchain, tmp_path):
    """No DWARF: a signature naming the struct type with its package path
    gets its layout from the runtime type descriptors, and the struct is
    captured whole."""
    exe = gobuild(TYPES, "types-s", "-ldflags=-s -w")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.withStruct(p main.Point, n int)", "--", exe],
               check=not toolchain.gccgo)
    if toolchain.gccgo:
        # gccgo writes no .gopclntab: stripped, only dynamic symbols remain
        assert p.returncode == 1 and "a stripped gccgo program" in p.stderr
        return
    assert report([trace]).stdout.splitlines()[1].endswith("main.withStruct  p={X:3 Y:4} n=5")
    assert jsonl(trace)[0]["args"] == {"p": {"X": 3, "Y": 4}, "n": 5}


SIGS = "tests/fixtures/sigs"


def stripped_sigs(gobuild, toolchain):
    """The sigs fixture without DWARF or symbols, where signatures are
    what gives types; gccgo's strip keeps no function table (its
    signature probes read the unstripped build)."""
    if toolchain.gccgo:
        return gobuild(SIGS, "sigs")
    return gobuild(SIGS, "sigs-s", "-ldflags=-s -w")


@pytest.mark.parametrize("spelling", ["interface{}", "interface { }", "interface {}", "any"])
def test_signature_empty_interface_in_every_spelling(gobuild, toolchain, tmp_path, spelling):
    """v interface{} (any blanks) is an empty interface, as any is: its
    two words are the type and the data, so anyf(12345) and anyf("str")
    show their dynamic types (names from DWARF, or from the runtime type
    descriptors when stripped; gccgo's: their reflection strings),
    never <nil> or the data word."""
    exe = gobuild(SIGS, "sigs")
    probe = "main.anyf(v %s)" % spelling
    trace = str(tmp_path / "t.gtr")
    rows = [l.split(None, 2)[:2] for l in record(["--list", exe, probe]).stdout.splitlines()
            if l.startswith("    ")]
    assert rows == [["v", "any" if spelling == "any" else "interface"]]
    for build in [exe, stripped_sigs(gobuild, toolchain)]:
        record(["-q", "-o", trace, "-f", probe, "--", build])
        got = [e["args"]["v"] for e in jsonl(trace)]
        assert got == ["int", "string"], got


def test_signature_on_a_function_with_inlined_copies(gobuild, toolchain, tmp_path):
    """A signature describes the out-of-line body of main.Rect.Area,
    whose value receiver it reads; the copy inlined into the wrapper
    (*Rect).Area is probed without it, said in one line; a function with
    no out-of-line body (main.small) is refused, saying so."""
    exe = stripped_sigs(gobuild, toolchain)
    trace = str(tmp_path / "t.gtr")
    if toolchain.gccgo:
        # built with -fno-inline: no copies, main.small has its body
        p = record(["-o", trace, "main.small(x int, s string)", "--", exe])
        assert "inlined" not in p.stderr
        assert [e["args"]["x"] for e in jsonl(trace)] == [7, 207]
        return
    p = record(["-o", trace, "main.Rect.Area(recv main.Rect)", "--", exe])
    evs = jsonl(trace)
    assert ("the signature describes the out-of-line body of main.Rect.Area; "
            "its 1 inlined copy is probed without it") in p.stderr
    assert sorted((e.get("inlined_into", ""), json.dumps(e["args"])) for e in evs) == [
        ("", '{"recv": {"W": 6, "H": 7}}'),
        ("main.(*Rect).Area", "{}"), ("main.(*Rect).Area", "{}")]
    p = record(["-o", trace, "-f", 'main.Rect.Area(recv main.Rect) "%d" recv.W',
                "--", exe])
    assert "its 1 inlined copy is not probed" in p.stderr
    assert [e["args"]["recv"]["W"] for e in jsonl(trace)] == [6]
    # the value receiver written again, as a parameter: too many bytes
    p = record(["-o", trace, "-f", "main.Rect.Area(r main.Rect)", "--", exe],
               check=False)
    assert p.returncode == 1 and ("(its value receiver, main.Rect, is read first "
                                  "without being written") in p.stderr
    p = record(["-o", trace, "-f", "main.small(x int, s string)", "--", exe],
               check=False)
    assert p.returncode == 1
    assert ("main.small has no out-of-line body for a signature to describe: "
            "the compiler inlined every call of it (2 copies, into "
            "main.useSmall); drop the signature") in p.stderr


def test_signature_of_a_generic_function_fits_its_instances(gobuild, toolchain, tmp_path):
    """main.Sum(xs []int) probes main.Sum's int instance alone (DWARF's
    types, else the shapes of Go 1.21+ names), main.Sum(xs []string) the
    string one, main.Max(a, b string) Max's string one (too big for the
    int one's frame); a signature that fits none, or whose instances cannot be
    told apart (Go 1.19 stripped: names alike, no DWARF), is refused
    naming the instances; the instance named exactly takes it."""
    if gccgo_has_no_generics(toolchain):
        return
    trace = str(tmp_path / "t.gtr")
    for build in [gobuild(SIGS, "sigs"), stripped_sigs(gobuild, toolchain)]:
        untold = toolchain.minor < 21 and build.endswith("-s")
        for sig, n in [("xs []int", 3), ("xs []string", 2)]:
            p = record(["-o", trace, "-f", "main.Sum(%s)" % sig, "--", build],
                       check=not untold)
            if untold:
                assert p.returncode == 1
                assert ("main.Sum has 2 instances (main.Sum[...], main.Sum[...]) "
                        "and the signature cannot be told to fit one") in p.stderr
                continue
            assert "the signature fits main.Sum[" in p.stderr
            assert "alone of the 2 instances of main.Sum" in p.stderr
            assert [e["args"]["cap(xs)"] for e in jsonl(trace)] == [n]
        # a signature too big for one instance's frame does not fit it
        p = record(["-o", trace, "-f", "main.Max(a, b string)", "--", build],
                   check=not untold)
        if not untold:
            assert "the signature fits main.Max[" in p.stderr, p.stderr
            assert [(e["args"]["a"], e["args"]["b"]) for e in jsonl(trace)] == [("x", "yy")]
        p = record(["-o", trace, "-f", "main.Sum(xs []float64)", "--", build],
                   check=False)
        assert p.returncode == 1 and "main.Sum has 2 instances (" in p.stderr
        assert ("cannot be told to fit one" if untold else "the signature fits none") \
            in p.stderr
    if toolchain.minor >= 21:
        record(["-q", "-o", trace, "-f", "main.Sum[go.shape.int](xs []int)",
                "--", build])
        assert [e["args"]["xs"] for e in jsonl(trace)] == [[1, 2, 3]]


LITERALS = "tests/fixtures/structlit"
LITERAL_PROBES = [
    "main.takePoint(p struct{X, Y int; Name string}, n int)",
    "main.takeBox(b struct{Min, Max struct{X, Y int}; Tag string}, k int)",
    'main.takeBox(b struct{Min, Max struct{X, Y int}; Tag string}, k int) "%d %s" b.Max.Y, b.Tag',
    'main.takePtr(p *struct{Min, Max struct{X, Y int}; Tag string}) "%d %d" p.Min.X, p.Max.Y',
    "main.takeWide(w struct{A, B, C, D, E, F, G, H, I int64; Tag string}, k int)",
    "main.takePair(q struct{A, B int32; C int64})",
]
LITERAL_TEXT = [
    'p={X:3 Y:4 Name:"pt"(len=2)} n=5',
    'b={Min:{X:1 Y:2} Max:{X:4 Y:6} Tag:"box"(len=3)} k=7',
    "6 box",
    "1 6",
    'w={A:1 B:0 C:0 D:0 E:0 F:0 G:0 H:0 I:9 Tag:"wide"(len=4)} k=8',
    "q={A:-1 B:2 C:300}",
]


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_struct_literal_signature_without_dwarf(gobuild, toolchain, tmp_path, goarch):
    """A signature writing a struct as a literal, on a build without
    DWARF: the struct is captured whole and its field paths (nested
    literals, through a pointer to one) are read where the ABI puts them:
    split over registers (ABIInternal), on the stack (386, and too big
    for registers), or by C's ABI (gccgo, whose debug sections are
    stripped: its strip keeps no function table). gccgo's C ABI packs
    Pair32's two int32 into one register, which gotrace cannot split: q
    is not captured, and --list says so."""
    if toolchain.gccgo and goarch == "386":
        build_fails(toolchain, LITERALS, goarch="386")
        return
    if toolchain.gccgo:
        exe = str(tmp_path / "structlit-nodwarf")
        subprocess.run(["objcopy", "--strip-debug", gobuild(LITERALS, "structlit"), exe],
                       check=True)
    else:
        exe = gobuild(LITERALS, "structlit-s-" + goarch, "-ldflags=-s -w", goarch=goarch)
    assert "values from signature" in record(["--list", exe, LITERAL_PROBES[0]]).stdout
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, *LITERAL_PROBES, "--", exe])
    text = [l.split(None, 4)[4] for l in report([trace]).stdout.splitlines()[1:]]
    want = list(LITERAL_TEXT)
    if toolchain.gccgo:
        want[-1] = "q=<unavailable>"
    assert sorted(text) == sorted(want)   # two probes on takeBox: either first
    evs = jsonl(trace)
    assert evs[0]["args"] == {"p": {"X": 3, "Y": 4, "Name": "pt"}, "n": 5}
    assert {"Min": {"X": 1, "Y": 2}, "Max": {"X": 4, "Y": 6}, "Tag": "box"} in \
        [e["args"].get("b") for e in evs]
    pair = [l for l in record(["--list", exe, LITERAL_PROBES[-1]]).stdout.splitlines()
            if l.startswith("    q ")]
    assert len(pair) == 1
    assert pair[0].endswith("not captured" if toolchain.gccgo else "captured whole, by its fields")


ARRAYS = "tests/fixtures/arrays/main.go"


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_arrays_by_value_returned_and_through_a_pointer(gobuild, toolchain, tmp_path, goarch):
    """An array of numbers, bools or floats is recorded as its elements,
    read whole from where it lies: the stack (gc passes every array of more
    than one element there, ABI0 and 386 every argument; gccgo one over 16
    bytes), one integer register (gc's [1]T; gccgo's of up to 8 bytes) or
    memory (a field path); in a struct passed by value, as its field, and
    by its field path (Small's [1]T fields each in a register of their
    own). Text shows it as Go's %v does, JSON as an array;
    a cut one says its length. gccgo passes [2]float64 in float registers,
    which --list says are not captured. gccgo: amd64 only (no 386 libgo in
    the matrix)."""
    if toolchain.gccgo and goarch == "386":
        assert "import file" in build_fails(toolchain, ARRAYS, "386")
        return
    exe = gobuild(ARRAYS, "arrays-" + goarch, goarch=goarch)
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.ip4", "main.sum3", "main.digest", "main.pair",
                "r:main.pair", "main.flags", "main.one", "main.serve(c.Addr, c.Peer, c.Port)",
                "main.byValue", "main.tag", "main.ptrs", "main.small", "main.small(s.A, s.C)",
                "--", exe])
    assert p.stdout.split() == ["25786" if goarch == "386" else "3298534909114"]  # int's bits
    evs = jsonl(trace)
    sse = toolchain.gccgo   # gccgo: [2]float64 in XMM0, XMM1
    h = [i * 7 for i in range(32)]
    by = {}
    for e in evs:
        by.setdefault((e["func"], e["kind"]), []).append(e["goargs"])
    assert by[("main.ip4", "entry")] == [[[127, 0, 0, i + 1], 8000 + i] for i in range(3)]
    assert by[("main.sum3", "entry")] == [[i, [-1, i, 1 << 40], "ab"] for i in range(3)]
    assert by[("main.digest", "entry")] == [[h]] * 3
    assert by[("main.pair", "entry")] == [[[i, -5]] for i in range(3)]
    assert [r[0] for r in by[("main.pair", "return")]] == [[-5, i] for i in range(3)]
    assert by[("main.flags", "entry")] == \
        [[[True, i == 1, False], None if sse else [1.5, -2]] for i in range(3)]
    assert by[("main.one", "entry")] == [[[-7]]]
    assert [{k: v for k, v in e["args"].items() if k != "c"}
            for e in evs if e["func"] == "main.serve"] == \
        [{"c.Addr": [10, 0, 0, 2], "c.Peer": [0] * 15 + [9], "c.Port": 443}]
    assert [e["args"] for e in evs if e["func"] == "main.byValue"] == \
        [{"c": {"Port": 443, "Addr": [10, 0, 0, 2], "Peer": [0] * 15 + [9]}, "k": 1}]
    # [1]T fields of a struct in registers (gc), on the stack (386) or in
    # memory (gccgo: 24 bytes), whole and by their field paths
    assert sorted((e["args"] for e in evs if e["func"] == "main.small"), key=len) == \
        [{"s": {"A": [-3], "B": 4, "C": [200]}},
         {"s": {"A": [-3], "B": 4, "C": [200]}, "s.A": [-3], "s.C": [200]}]
    # a named array, named elements: shown by their predeclared type; an
    # array of arrays is not captured (gccgo's DWARF: one array of two
    # subranges)
    assert [e["args"] for e in evs if e["func"] == "main.tag"] == \
        [{"id": None if sse else [0] * 15 + [9],   # gccgo: 16 bytes in two registers
          "t": None if sse else [21.5, -3], "g": None}]
    # pointers in hex, in an array and in a slice
    # (gccgo passes [2]*int in two registers)
    [ptrs] = [e["args"] for e in evs if e["func"] == "main.ptrs"]
    assert len(ptrs["qs"]) == 1 and ptrs["qs"][0] > 4096
    text = report([trace]).stdout
    if sse:
        assert ptrs["ps"] is None and "qs=[%#x](len=1)" % ptrs["qs"][0] in text, text
    else:
        assert len(ptrs["ps"]) == 2 and ptrs["ps"][1] == ptrs["qs"][0]
        assert "ps=[%#x %#x] qs=[%#x](len=1)" % (*ptrs["ps"], ptrs["qs"][0]) in text, text
    assert "c={Port:443 Addr:[10 0 0 2] Peer:[" + "0 " * 15 + "9]} k=1" in text
    assert "h=[" + " ".join(map(str, h)) + "]" in text
    assert "xs=[-1 2 1099511627776]" in text and "a=[127 0 0 3] port=8002" in text, text
    assert report(["--count", "-f", "len(h) == 32 || len(xs) == 3", trace]).stdout.strip() == "6"
    bad = report(["-f", "h == 3", trace], check=False)
    assert bad.returncode != 0 and "h is an array ([32]uint8): only len(h) applies" in bad.stderr
    # cut to its first bytes (-s 8): the elements kept and the length
    record(["-q", "-f", "-s", "8", "-o", trace, "main.digest", "--", exe])
    assert [e["goargs"] for e in jsonl(trace)] == \
        [[{"elems": h[:8], "len": 32, "truncated": True}]] * 3
    assert "h=[0 7 14 21 28 35 42 49 ...](len=32)" in report([trace]).stdout
    # said by --list; refused by a record-time predicate (a constant length)
    rows = {(f["name"], a["name"]): a for f in listing(exe, "main.*") for a in f["params"]}
    assert rows[("main.digest", "h")]["capture"] and rows[("main.ip4", "a")]["capture"]
    assert rows[("main.flags", "f")]["capture"] == (not sse)
    # (gccgo's DWARF names them without their package)
    assert [rows[("main.tag", n)]["type"].replace("main.", "") for n in ("id", "t", "g")] == \
        ["ID", "[2]Celsius", "[2][2]int"]
    assert rows[("main.tag", "g")]["why"] == "an array of structs, arrays or interfaces: not captured"
    if sse:
        assert rows[("main.tag", "id")]["why"] == "an array in two registers: not captured yet"
    if sse:
        assert rows[("main.flags", "f")]["why"] == \
            "float register: not in uprobe pt_regs"
    p = record(["-o", trace, "-f", "main.sum3 (len(xs) > 1)", "--", exe], check=False)
    assert p.returncode != 0 and "an array's length is in its type" in p.stderr


def test_arrays_on_a_stripped_binary_from_a_signature(gobuild, toolchain, tmp_path):
    """Without DWARF, an array type a signature writes ([32]byte) is read
    the same way (gccgo: its debug sections stripped, as its strip keeps
    no function table)."""
    if toolchain.gccgo:
        exe = str(tmp_path / "arrays-nodwarf")
        subprocess.run(["objcopy", "--strip-debug", gobuild(ARRAYS, "arrays"), exe],
                       check=True)
    else:
        exe = gobuild(ARRAYS, "arrays-s", "-ldflags=-s -w")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.digest(h [32]byte)",
            "main.sum3(n int, xs [3]int64, tail string)", "--", exe])
    evs = jsonl(trace)
    assert [e["args"]["h"] for e in evs if e["func"] == "main.digest"] == \
        [[i * 7 for i in range(32)]] * 3
    assert [e["args"]["xs"] for e in evs if e["func"] == "main.sum3"] == \
        [[-1, i, 1 << 40] for i in range(3)]
