"""Inlined functions and source lines (spec/PROBES.md): a probe on a
function, or a glob, covers each inlined copy (from DWARF, else from the
pclntab inline tree of a stripped binary) as well as its out-of-line body;
a FILE:LINE probe fires where the line's statement begins in each function
and copy (DWARF), else where control comes into the line's code; stacks
show inlined frames in every output. tests/fixtures/inline prints its own
counts to compare with; esbuild's releases built by Go 1.16 and 1.17 check
the older pclntab layout against an independent reader."""
import collections
import json
import os
import re
import subprocess

import pytest

from conftest import RECORD, ROOT, TOOLCHAINS, record, report, source_line
from test_pie_relocs import R_X86_64_RELATIVE, unfilled

INLINE = "tests/fixtures/inline/main.go"


def fixture_line(marker):
    return source_line(INLINE, marker)


def gccgo_instead(toolchain, gobuild, tmp_path):
    """On gccgo, asserts what these capabilities are there and returns
    True. gccgo writes no pclntab (no inline tree, no line table), and the
    fixtures' gccgo builds keep no inlined copy (GCC's inlining is off, as
    the gobuild fixture builds for gccgo): a probe on main.bump counts
    every call in its out-of-line body, as the program counts them, and a
    line probe is refused with why. Inlined copies from GCC's DWARF are
    test_gccgo_inlined_copies_from_dwarf_no_lines."""
    if not getattr(toolchain, "gccgo", False):
        return False
    exe = gobuild(INLINE, "inline")
    trace = str(tmp_path / "gccgo.gtr")
    p = record(["-q", "-o", trace, "--force", "main.bump", "--", exe, "x"])
    evs = [e for e in jsonl(trace) if e["func"] == "main.bump"]
    assert len(evs) == int(printed(p.stdout, "count")) == 8
    assert not [e for e in evs if e.get("inlined_into")]
    p = record(["-o", trace, "--force", "main.go:%d" % fixture_line("LOOP BODY"),
                "--", exe], check=False)
    assert p.returncode != 0 and "no Go 1.16+ line table" in p.stderr
    return True


@pytest.fixture(params=["dwarf", "stripped"])
def inline_bin(request, gobuild, toolchain, tmp_path):
    """The fixture with DWARF, and stripped of DWARF and symbols; on gccgo
    ("gccgo", None) once gccgo_instead() has asserted what holds there."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return "gccgo", None
    if request.param == "dwarf":
        return request.param, gobuild(INLINE, "inline")
    return request.param, gobuild(INLINE, "inline-s", "-ldflags=-s -w")


def jsonl(path):
    out = report(["--format", "jsonl", path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def printed(stdout, key):
    m = re.search(r"^%s (\S*)$" % key, stdout, re.M)
    assert m, stdout
    return m.group(1)


def test_inlined_function_counted_exactly(inline_bin, tmp_path):
    """main.bump is inlined at three call sites of main.main and called
    once through a function value: the probe counts each call, as the
    program counts them itself; inlined events say where they fired and
    carry no guessed argument."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.bump", "--", exe, "x"])
    evs = [e for e in jsonl(trace) if e["func"] == "main.bump"]
    assert len(evs) == int(printed(p.stdout, "count")) == 8
    inl = [e for e in evs if e.get("inlined_into")]
    assert len(inl) == 7
    assert {e["inlined_into"] for e in inl} == {"main.main"}
    sites = sorted({e["call_site"] for e in inl})
    assert len(sites) == 3 and all(s.startswith("main.go:") for s in sites)
    assert [e["kind"] for e in evs] == ["entry"] * 8
    # the loop's five calls, then bump(100), then bump(-2): a value is
    # the argument it had, or none where the copy kept it nowhere
    want = [{0, 1, 2, 3, 4}] * 5 + [{100}, {-2}]
    for e, ok in zip(inl, want):
        n = e["args"].get("n")
        assert n is None or n in ok, e
    body = [e for e in evs if not e.get("inlined_into")]
    assert len(body) == 1
    if kind == "dwarf":
        assert body[0]["args"]["n"] == 7
    info = report(["info", trace]).stdout
    assert info.count("an inlined copy in main.main at main.go:") == 3


def test_glob_covers_inlined_copies(inline_bin, tmp_path):
    """A glob covers the inlined copies of the functions it matches, as
    their names do: main.* counts every call of main.bump (7 in copies, 1
    in its body) and main.mark's one call, which has no body at all;
    --exclude leaves copies out as it does functions; a return probe says
    the copies have no latency; and copies that would pass --max-probes
    are left out with a message, the functions still probed."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.*", "--", exe, "x"])
    evs = jsonl(trace)
    bump = [e for e in evs if e["func"] == "main.bump"]
    assert len(bump) == int(printed(p.stdout, "count")) == 8
    assert len([e for e in bump if e.get("inlined_into") == "main.main"]) == 7
    mark = [e for e in evs if e["func"] == "main.mark"]
    assert len(mark) == int(printed(p.stdout, "marks")) == 1
    assert mark[0]["inlined_into"] == "main.main"
    assert len([e for e in evs if e["func"] == "main.main"]) == 1
    # --list shows what the glob probes: main.mark too, with no body
    d = listing(exe, "main.*")
    f = {fn["name"]: fn for fn in d["functions"]}
    assert "main.mark" not in f and len(f["main.bump"]["inlined"]) == 3
    assert d["matched"] == len(d["functions"])
    assert [(o["name"], o["entry"], len(o["inlined"])) for o in d["only_inlined"]] == \
        [("main.mark", None, 1)]
    record(["-q", "-o", trace, "--force", "--exclude", "main.bump", "main.*",
            "--", exe, "x"])
    funcs = {e["func"] for e in jsonl(trace)}
    assert "main.bump" not in funcs and "main.mark" in funcs
    p = record(["-o", trace, "--force", "r:main.*", "--", exe])
    assert "4 inlined copies of functions it matches" in p.stderr
    assert "no latency" in p.stderr
    assert not [e for e in jsonl(trace) if e.get("inlined_into")]
    p = record(["-o", trace, "--force", "--max-probes", "5", "main.[bm]*",
                "--", exe, "x"])
    assert "inlined copies are not probed" in p.stderr
    assert "--max-probes 5" in p.stderr
    evs = jsonl(trace)
    assert evs and not [e for e in evs if e.get("inlined_into")]
    assert {e["func"] for e in evs} == {"main.bump", "main.main"}


def test_inlined_copies_have_no_return(inline_bin, tmp_path):
    """A return probe times the out-of-line body and says plainly that
    the inlined copies have no return to probe."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    p = record(["-o", trace, "r:main.bump", "--", exe])
    assert "main.bump has 3 inlined copies" in p.stderr
    assert "no latency" in p.stderr
    evs = jsonl(trace)
    assert [e["kind"] for e in evs] == ["return"]
    assert evs[0]["latency_ns"] is None or evs[0]["latency_ns"] >= 0


def test_line_probe_fires_once_per_iteration(inline_bin, tmp_path):
    """main.go:LINE of the loop body of main.loop fires once per
    iteration (9), with DWARF and stripped."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    line = fixture_line("LOOP BODY")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.go:%d" % line, "--", exe])
    evs = jsonl(trace)
    assert len(evs) == 9
    assert {e["func"] for e in evs} == {"main.loop"}
    assert all(e["line"].endswith("/tests/fixtures/inline/main.go:%d" % line)
               for e in evs)
    text = report([trace]).stdout.splitlines()
    assert text[1].endswith("[line main.go:%d]" % line)


def test_line_probe_in_inlined_copies(inline_bin, tmp_path):
    """The line of bump's counter fires in its out-of-line body and in
    each inlined copy: once per call, 8 in all."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    line = fixture_line("count++")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "inline/main.go:%d" % line, "--", exe, "x"])
    evs = jsonl(trace)
    assert len(evs) == int(printed(p.stdout, "count")) == 8
    assert {e["func"] for e in evs} == {"main.bump"}
    assert len([e for e in evs if e.get("inlined_into") == "main.main"]) == 7


def test_line_probe_errors(inline_bin, tmp_path):
    """A line without code, and a return probe of a line, are refused
    with what to do."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    p = record(["-o", str(tmp_path / "t.gtr"), "main.go:1", "--", exe],
               check=False)
    assert p.returncode != 0
    assert "no code of" in p.stderr, p.stderr
    # the command it suggests, BINARY and all, lists the file's lines
    m = re.search(r"; gotrace-record (--list \S+ 'main\.go:\*') shows the lines", p.stderr)
    assert m, p.stderr
    assert m.group(1) == "--list %s 'main.go:*'" % exe
    lst = subprocess.run([RECORD, "--list", exe, "main.go:*"], capture_output=True,
                         text=True, timeout=60)
    assert lst.returncode == 0 and "that can be probed (FILE:LINE)" in lst.stdout, lst
    p = record(["-o", str(tmp_path / "t.gtr"), "r:main.go:20", "--", exe],
               check=False)
    assert p.returncode != 0 and "has no return" in p.stderr


def test_function_only_ever_inlined(inline_bin, tmp_path):
    """main.mark has no out-of-line body (the linker dropped it): its
    one inlined copy is what the probe means."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.mark", "--", exe])
    evs = jsonl(trace)
    assert len(evs) == int(printed(p.stdout, "marks")) == 1
    assert evs[0]["inlined_into"] == "main.main"


def listing(exe, what):
    return json.loads(record(["--list", "--json", exe, what]).stdout)


def test_list_shows_inlined_sites_and_lines(inline_bin):
    """--list shows a function's inlined copies (a function only ever
    inlined too), and FILE:* the lines a probe can take with the
    function or inlined copy each is in."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    f = listing(exe, "main.bump")["functions"]
    assert len(f) == 1
    assert [i["into"] for i in f[0]["inlined"]] == ["main.main"] * 3
    assert all(i["call_site"].startswith("main.go:") for i in f[0]["inlined"])
    f = listing(exe, "main.mark")["functions"]
    assert f[0]["name"] == "main.mark" and f[0]["entry"] is None
    assert len(f[0]["inlined"]) == 1
    d = listing(exe, "inline/main.go:*")
    assert d["file"].endswith("tests/fixtures/inline/main.go")
    lines = {}
    for ln in d["lines"]:
        lines.setdefault(ln["line"], []).append((ln["func"], ln["inlined_into"]))
    assert lines[fixture_line("LOOP BODY")] == [("main.loop", None)]
    assert sorted(lines[fixture_line("count++")], key=str) == sorted(
        [("main.bump", None)] + [("main.bump", "main.main")] * 3, key=str)
    text = record(["--list", exe, "main.go:%d" % fixture_line("LOOP BODY")]).stdout
    assert "lines of " in text and "main.loop" in text


def test_line_probe_captures_locals_by_name(gobuild, toolchain, tmp_path):
    """Variables in scope at a line are captured by name where DWARF
    places them (here a build without optimisation keeps them on the
    stack: i and sum per iteration); where the location lists of an
    optimised build place one nowhere it is unavailable, never guessed;
    an unknown name is refused."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return
    line = fixture_line("LOOP BODY")
    probe = 'main.go:%d "i=%%d sum=%%d n=%%d" i, sum, n' % line
    exe = gobuild(INLINE, "inline-N", "-gcflags=-N -l")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, probe, "--", exe])
    got = [(e["args"]["i"], e["args"]["sum"], e["args"]["n"]) for e in jsonl(trace)]
    assert got == [(i, sum(k * 3 for k in range(i)), 9) for i in range(9)]
    exe = gobuild(INLINE, "inline")
    record(["-q", "-o", trace, "--force", probe, "--", exe])
    for i, e in enumerate(jsonl(trace)):
        assert e["args"]["i"] in (None, i) and e["args"]["n"] in (None, 9)
    p = record(["-o", trace, "--force", "main.go:%d(nosuch)" % line, "--", exe],
               check=False)
    assert p.returncode != 0 and "no variable or parameter 'nosuch'" in p.stderr
    exe = gobuild(INLINE, "inline-s", "-ldflags=-s -w")
    p = record(["-o", trace, "--force", "main.go:%d(i)" % line, "--", exe],
               check=False)
    assert p.returncode != 0 and "no DWARF" in p.stderr


def test_line_probe_captures_the_functions_own_scope(gobuild, toolchain,
                                                    tmp_path):
    """At a line outside any nested block of an optimised build the
    function's parameters and top-level variables are in scope (loop's
    `return sum`: sum and n); a line in inlined copies is probed in each
    copy and its out-of-line body, a parameter the copy keeps nowhere
    unavailable there, never a refusal of the recording."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return
    exe = gobuild(INLINE, "inline")
    trace = str(tmp_path / "t.gtr")
    end = fixture_line("LOOP END")
    count = fixture_line("count++")
    p = record(["-q", "-o", trace, 'main.go:%d "sum=%%d n=%%d" sum, n' % end,
                "main.go:%d(n)" % count, "--", exe, "x"])
    evs = jsonl(trace)
    assert [e["args"] for e in evs if e["func"] == "main.loop"] == [
        {"sum": sum(k * 3 for k in range(9)), "n": 9}]
    bumps = [e for e in evs if e["func"] == "main.bump"]
    assert len(bumps) == int(printed(p.stdout, "count")) == 8
    assert len([e for e in bumps if e.get("inlined_into") == "main.main"]) == 7
    assert {e["args"]["n"] for e in bumps} <= {None, 0, 1, 2, 3, 4, 100, -2, 7}
    assert [e["args"]["n"] for e in bumps if not e.get("inlined_into")] == [7]


def test_pclntab_inline_tree_agrees_with_dwarf(gobuild, toolchain, tmp_path):
    """The inlined copies the pclntab inline tree gives a stripped
    binary are the ones DWARF gives the same binary before stripping:
    same addresses, same callers, same call sites, for every function
    of the program (runtime and fmt included)."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return
    exe = gobuild(INLINE, "inline")
    stripped = str(tmp_path / "inline-stripped")
    subprocess.run(["strip", "-o", stripped, exe], check=True)

    def sites(path):
        out = {}
        for f in ("main.bump", "main.mark", "runtime.add", "fmt.(*pp).free",
                  "unicode/utf8.RuneLen", "runtime.(*mspan).base"):
            for fn in listing(path, f)["functions"]:
                for s in fn.get("inlined") or []:
                    out.setdefault(f, []).append((s["address"], s["into"],
                                                  s["call_site"]))
        return out
    want = sites(exe)
    assert len(want["main.bump"]) == 3 and len(want) >= 4
    assert sites(stripped) == want


@pytest.mark.parametrize("link", ["internal", "external", "unfilled"])
def test_inline_tree_of_a_stripped_pie(gobuild, toolchain, tmp_path, link):
    """A stripped PIE, linked by Go's linker or by the system's (cgo):
    the inline tree is found through the moduledata and the pointers the
    linkers write into the file, and a probe on main.bump counts every
    call, 7 of 8 in its inlined copies. "unfilled": Go's PIE with every
    word its R_X86_64_RELATIVE relocations fill set to 0 in the file, as
    lld (and GNU ld on arm64) leave them: pcHeader's textStart, the
    moduledata and the inline trees' addresses come from the
    relocations; the dynamic loader fills them, so the copy runs."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return
    exe = gobuild(INLINE, "inline-pie-" + link, "-buildmode=pie",
                  "-ldflags=-s -w -linkmode=" + ("external" if link == "external"
                                                 else "internal"),
                  cgo=link == "external")
    if link == "unfilled":
        zeroed = str(tmp_path / "inline-pie-unfilled")
        assert unfilled(exe, zeroed, rtype=R_X86_64_RELATIVE) > 1000
        os.chmod(zeroed, 0o755)
        assert listing(zeroed, "*")["binary"]["functions"] == \
            listing(exe, "*")["binary"]["functions"]
        exe = zeroed
    f = listing(exe, "main.bump")["functions"]
    assert [(c["into"], c["call_site"][:8]) for c in f[0]["inlined"]] == \
        [("main.main", "main.go:")] * 3
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.bump", "--", exe, "x"])
    evs = jsonl(trace)
    assert len(evs) == int(printed(p.stdout, "count")) == 8
    assert len([e for e in evs if e.get("inlined_into") == "main.main"]) == 7


def test_stack_through_inlined_frame_matches_go(inline_bin, tmp_path):
    """bump(-2), inlined into main.main, calls main.callers, which
    prints the frames of runtime.Callers + CallersFrames above it. The
    recorded stack of main.callers, named through the trace alone (the
    SYMBOLS block's inlined ranges, from the pclntab inline tree, DWARF
    or stripped), shows the same frames in text, JSON and folded output."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-U", "-o", trace, "main.callers", "r:main.callers",
                "--", exe, "x"])
    go = printed(p.stdout, "stack").split(";")
    assert go == ["main.bump", "main.main"]
    ev = [e for e in jsonl(trace) if e["kind"] == "entry"]
    assert len(ev) == 1
    names = [f.split("+0x")[0].replace(" (inlined)", "") for f in ev[0]["stack"]]
    assert names[0] == "main.callers"
    assert names[1:1 + len(go)] == go
    assert ev[0]["stack"][1] == "main.bump (inlined)"
    text = report([trace]).stdout.splitlines()
    at = text.index("        main.bump (inlined)")
    assert text[at - 1].startswith("        main.callers+0x")
    assert text[at + 1].startswith("        main.main+0x")
    folded = report(["--format", "folded", trace]).stdout.split()[0]
    assert folded.endswith(";".join(reversed(go)) + ";main.callers")
    # a selection written with -w keeps the inlined frames
    small = str(tmp_path / "small.gtr")
    report(["-w", small, trace])
    assert report([small]).stdout.splitlines()[2:] == text[2:len(text)]


def test_stack_at_line_and_inlined_copy_matches_go(inline_bin, tmp_path):
    """Stacks at probes inside a function's body: the line of bump that
    calls main.callers, in its copy inlined into main.main, shows the
    frames Go's runtime.Callers sees there (main.bump, main.main) and then
    runtime.main, no word of the frame taken for a return address; so do
    bump's inlined copies, and the loop line of main.loop, a function with
    no frame of its own."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-U", "-o", trace,
                "main.go:%d" % fixture_line("stackOut = callers()"),
                "main.go:%d" % fixture_line("LOOP BODY"), "main.bump",
                "--", exe, "x"])
    go = printed(p.stdout, "stack").split(";")
    assert go == ["main.bump", "main.main"]

    def names(e):
        return [f.split("+0x")[0].replace(" (inlined)", "") for f in e["stack"]]
    evs = jsonl(trace)
    at = [e for e in evs if e.get("line") and e["func"] == "main.bump"]
    assert len(at) == 1 and at[0]["inlined_into"] == "main.main"
    assert names(at[0])[:3] == go + ["runtime.main"]
    loop = [e for e in evs if e["func"] == "main.loop"]
    assert len(loop) == 9
    copies = [e for e in evs if e["func"] == "main.bump" and not e.get("line")]
    assert len([e for e in copies if e.get("inlined_into")]) == 7
    for e in loop + copies:
        assert names(e)[1:3] == ["main.main", "runtime.main"], e["stack"]
    for e in evs:
        assert all("+0x" in f or f.endswith(" (inlined)") for f in e["stack"]), e


def test_stack_of_i386_is_the_function_and_its_caller(gobuild, toolchain,
                                                     tmp_path):
    """GOARCH=386: Go keeps no frame pointers there, so a stack is the
    probed instruction (with the inlined frames there) and its caller,
    whose return address the pclntab's frame size at the instruction
    places: at an entry, at a line in an inlined copy, at a line of a
    function's body. gccgo: no 386 libgo in the matrix."""
    if toolchain.gccgo:
        return
    exe = gobuild(INLINE, "inline-386", goarch="386")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-U", "-o", trace, "main.callers",
                "main.go:%d" % fixture_line("stackOut = callers()"),
                "main.go:%d" % fixture_line("LOOP BODY"), "--", exe, "x"])
    assert printed(p.stdout, "stack") == "main.bump;main.main"
    got = collections.Counter(
        (e["func"], tuple(f.split("+0x")[0] for f in e["stack"]))
        for e in jsonl(trace))
    assert got == {
        ("main.callers", ("main.callers", "main.bump (inlined)", "main.main")): 1,
        ("main.bump", ("main.bump (inlined)", "main.main", "runtime.main")): 1,
        ("main.loop", ("main.loop", "main.main")): 9}


from test_perfetto import pb, import_trace, perfetto  # noqa: E402,F401


def test_chrome_and_perfetto_show_inlined_frames(inline_bin, pb, tmp_path):
    """Chrome trace JSON and Perfetto show what text and JSON Lines show:
    a stack's inlined frames ("main.bump (inlined)" between main.callers
    and main.main), and where an inlined copy's or a line's event fired
    (inlined_into, call_site, line), as arguments / debug annotations."""
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    trace = str(tmp_path / "t.gtr")
    line = fixture_line("LOOP BODY")
    record(["-q", "-U", "-o", trace, "main.callers", "main.bump",
            "main.go:%d" % line, "--", exe, "x"])
    doc = json.loads(report(["--format", "chrome", trace]).stdout)
    evs = [e for e in doc["traceEvents"] if e["ph"] in ("X", "i")]
    _, _, pevs = import_trace(pb, perfetto([trace]))
    for fmt, got in (("chrome", [(e["name"], e["args"]) for e in evs]),
                     ("perfetto", [(e["name"], e["args"]) for e in pevs])):
        def of(func):
            return [a for n, a in got if n == func]
        stack = [a["stack"] for a in of("main.callers")]
        assert len(stack) == 1, fmt
        assert stack[0][0].startswith("main.callers+0x")
        assert stack[0][1] == "main.bump (inlined)", fmt
        assert stack[0][2].startswith("main.main+0x")
        bump = of("main.bump")
        assert len(bump) == 8
        inl = [a for a in bump if a.get("inlined_into")]
        assert len(inl) == 7 and {a["inlined_into"] for a in inl} == {"main.main"}
        assert all(a["call_site"].startswith("main.go:") for a in inl), fmt
        loop = of("main.loop")
        assert len(loop) == 9
        assert all(a["line"].endswith("inline/main.go:%d" % line) for a in loop)


@pytest.fixture
def gccgo(needs_bpf):
    """The gccgo toolchain of the matrix, by name: the next test is
    gccgo's own (a capability gc toolchains get from the tests above)."""
    t = next(t for t in TOOLCHAINS if getattr(t, "gccgo", False))
    assert t.check() is None, t.check()
    return t


def test_gccgo_inlined_copies_from_dwarf_no_lines(gccgo, tmp_path):
    """gccgo: the inlined copies come from GCC's DWARF (its inlined
    subroutines), each probed and counted; a line probe is refused with
    why (no pclntab line table), as a stripped gccgo program's function
    probe is."""
    toolchain = gccgo
    # built as gccgo's go tool builds by default (-O2 -g), with inlining,
    # which the gobuild fixture turns off for gccgo
    exe = str(tmp_path / "inline")
    subprocess.run([toolchain.go, "build", "-o", exe, os.path.basename(INLINE)],
                   check=True, env=toolchain.environ(),
                   cwd=os.path.join(ROOT, os.path.dirname(INLINE)))
    f = listing(exe, "main.bump")["functions"]
    copies = f[0]["inlined"]
    assert copies and {c["into"] for c in copies} == {"main.main"}
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-U", "-o", trace, "main.bump", "--", exe, "x"])
    evs = jsonl(trace)
    inl = [e for e in evs if e.get("inlined_into")]
    # each copy GCC left code of fires once per call through it
    assert len(inl) == len(copies) and len(evs) - len(inl) == 2
    # -O2 keeps no frame pointer: a copy's stack is its instruction alone
    for e in inl:
        assert len(e["stack"]) == 1 and e["stack"][0].startswith("main.main+0x")
    # with frame pointers, main.main's callers as at bump's entry
    fp = str(tmp_path / "inline-fp")
    subprocess.run([toolchain.go, "build", "-gccgoflags=-fno-omit-frame-pointer",
                    "-o", fp, os.path.basename(INLINE)],
                   check=True, env=toolchain.environ(),
                   cwd=os.path.join(ROOT, os.path.dirname(INLINE)))
    record(["-q", "-U", "-o", trace, "--force", "main.bump", "--", fp, "x"])
    evs = jsonl(trace)
    body = [e["stack"] for e in evs if not e.get("inlined_into")]
    inl = [e["stack"] for e in evs if e.get("inlined_into")]
    assert inl and len(body) == 2 and len(body[0]) > 2
    for st in inl:
        assert st[0].startswith("main.main+0x") and st[1:] == body[0][2:]
    p = record(["-o", trace, "--force", "main.go:%d" % fixture_line("LOOP BODY"),
                "--", exe], check=False)
    assert p.returncode != 0 and "no Go 1.16+ line table" in p.stderr


def test_line_probe_at_statement_start(gobuild, toolchain, tmp_path):
    """With DWARF, a line's site is where its line table says a statement
    begins (is_stmt): the out-of-line body of bump first reloads n for
    'return n + 1' on the branch that called callers(), and the statement
    begins where both branches join, so its one call (viaValue(7), n >= 0)
    fires it; the copies inlined into main keep no instruction of that
    line (main computes n + 1 on its own lines)."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return
    exe = gobuild(INLINE, "inline")
    line = fixture_line("return n + 1")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.go:%d" % line, "--", exe, "x"])
    evs = jsonl(trace)
    assert len(evs) == 1 and evs[0]["func"] == "main.bump"
    assert "inlined_into" not in evs[0]
    sites = listing(exe, "main.go:%d" % line)["lines"]
    assert [(s["func"], s["inlined_into"]) for s in sites] == [("main.bump", None)]


def test_line_probes_without_dwarf_fire_as_with_dwarf(gobuild, toolchain, tmp_path):
    """Without DWARF's statement starts a line's site is where control
    comes into its code from elsewhere (where the branches of an if join,
    the test its scattered register moves lead to; a jump table's cases
    are the line's own): every line of the fixture, probed at once,
    fires as often stripped as with DWARF, in each function and inlined
    copy; bump's 'return n + 1', whose lowest address is on the branch
    that calls callers(), fires for viaValue(7). A loop's for line fires
    once per loop stripped (its init), where DWARF's choice varies by
    version."""
    if gccgo_instead(toolchain, gobuild, tmp_path):
        return
    full = gobuild(INLINE, "inline")
    stripped = gobuild(INLINE, "inline-s", "-ldflags=-s -w")
    lines = sorted({ln["line"] for ln in listing(full, "inline/main.go:*")["lines"]})
    assert len(lines) > 20

    def counts(exe):
        trace = str(tmp_path / "lines.gtr")
        record(["-q", "-o", trace, "--force", *["inline/main.go:%d" % n for n in lines],
                "--", exe, "x"])
        out = {}
        for e in jsonl(trace):
            k = (int(e["line"].rsplit(":", 1)[1]), e["func"], e.get("inlined_into"))
            out[k] = out.get(k, 0) + 1
        return out
    want, got = counts(full), counts(stripped)
    loops = {fixture_line("for i := 0; i < n; i++"), fixture_line("for i := 0; i < 5; i++")}
    for k in sorted(set(want) | set(got), key=str):
        if k[0] in loops:
            assert got.get(k) == 1, (k, want.get(k), got.get(k))
        else:
            assert got.get(k) == want.get(k), (k, want.get(k), got.get(k))
    ret = fixture_line("return n + 1")
    assert got[(ret, "main.bump", None)] == 1
    assert sum(got.values()) > 40


def test_inlined_ranges_written_with_stacks_only(inline_bin, tmp_path):
    """The SYMBOLS block carries each function's inlined ranges
    (spec/FORMAT.md) when stacks are recorded, and not otherwise; the
    Python reader of the spec reads them: main.main holds main.bump."""
    from gtr_reader import GtrReader
    kind, exe = inline_bin
    if kind == "gccgo":
        return
    plain, stacks = str(tmp_path / "p.gtr"), str(tmp_path / "s.gtr")
    record(["-q", "-o", plain, "main.loop", "--", exe])
    record(["-q", "-U", "-o", stacks, "main.loop", "--", exe])
    r = GtrReader(plain)
    r.info()
    assert r.inlined == {}
    r = GtrReader(stacks)
    r.info()
    main = [(b, a) for (b, a) in r.inlined
            if any(s[2] == "main.main" and s[0] == a for s in r.symbols[b])]
    assert len(main) == 1
    assert {x[2] for x in r.inlined[main[0]]} >= {"main.bump", "main.mark"}


# ---------------------------------------- Go 1.16-1.17: esbuild releases

def go116_inline_trees(path):
    """An independent read of the inline trees of a Go 1.16-1.17 binary
    (pclntab magic 0xfffffffa, 8-byte pointers; src/runtime/symtab.go and
    runtime2.go of go1.16): {inlined function: {(function it is inlined
    into, lowest address of the copy, call site "FILE:LINE")}}. Unlike
    record/inltree.c it walks nodes by their `parent` field and takes the
    call site from the node's own file and line fields."""
    import struct
    from pclntab import MAGIC_GO116, Pclntab, sections
    tab = Pclntab(path)
    assert tab.magic == MAGIC_GO116 and tab.ptrsize == 8
    with open(path, "rb") as f:
        data = f.read()
    addr, off, size = sections(data)[".gopclntab"]
    t = data[off:off + size]
    w = [struct.unpack_from("<Q", t, 8 + 8 * i)[0] for i in range(7)]
    nfunc, nametab, cutab, filetab, pctab, pcln = w[0], w[2], w[3], w[4], w[5], w[6]

    def cstr(o):
        return t[o:t.index(b"\0", o)].decode()

    def rodata(va, n):
        for a, o, s in sections(data).values():
            if a and a <= va and va + n <= a + s:
                return data[o + va - a:o + va - a + n]
        raise AssertionError("%#x is in no section" % va)

    def uvarint(i):
        v = shift = 0
        while True:
            c = t[pctab + i]
            i += 1
            v |= (c & 0x7f) << shift
            shift += 7
            if not c & 0x80:
                return v, i

    def runs(tabno, entry, end):
        """pcvalue's runs: (lo, hi, value), value from -1."""
        out, i, pc, val = [], tabno, entry, -1
        while pc < end:
            dv, i = uvarint(i)
            if dv == 0 and out:
                break
            dpc, i = uvarint(i)
            val += -(dv >> 1) - 1 if dv & 1 else dv >> 1
            out.append((pc, pc + dpc * tab.quantum, val))
            pc += dpc * tab.quantum
        return out

    copies = {}
    for i in range(nfunc):
        entry, funcoff, end = struct.unpack_from("<QQQ", t, pcln + 16 * i)
        f = pcln + funcoff
        (_, nameoff, _, _, _, _, _, npcdata, cuoff, _, nfuncdata) = \
            struct.unpack_from("<QiiIIIIIIB2xB", t, f)
        if npcdata <= 2 or nfuncdata <= 3:
            continue
        pcdata = struct.unpack_from("<%dI" % npcdata, t, f + 44)
        fd = f + 44 + 4 * npcdata
        fd += (addr + fd) % 8
        tree, = struct.unpack_from("<Q", t, fd + 3 * 8)
        if not tree or not pcdata[2]:
            continue
        lows = {}
        for lo, _hi, node in runs(pcdata[2], entry, end):
            while node >= 0:
                lows[node] = min(lows.get(node, lo), lo)
                node, = struct.unpack_from("<h", rodata(tree + 20 * node, 2))
        for node, lo in lows.items():
            _p, _fid, fileno, line, func_, _ppc = struct.unpack_from(
                "<hBxiiii", rodata(tree + 20 * node, 20))
            fo, = struct.unpack_from("<I", t, cutab + 4 * (cuoff + fileno))
            site = "%s:%d" % (cstr(filetab + fo).rsplit("/", 1)[-1], line)
            copies.setdefault(cstr(nametab + func_), set()).add(
                (cstr(nametab + nameoff), lo, site))
    return copies


GO116 = ["0.8.57", "0.13.15"]      # esbuild releases built by go1.16, go1.17.2
ESB = "github.com/evanw/esbuild/internal/"


@pytest.fixture(params=GO116, ids=["esbuild-%s" % v for v in GO116])
def go116_bin(request):
    """An esbuild release built by Go 1.16 or 1.17 (stripped), fetched
    from the npm registry by test_release_binaries.py's fixture."""
    from test_release_binaries import CACHE, FETCH
    from conftest import _need
    import shutil
    _need(shutil.which("npm") is not None, "npm fetches esbuild's releases")
    p = subprocess.run([FETCH, CACHE, request.param], capture_output=True,
                       text=True, timeout=600)
    _need(p.returncode == 0, "fetching esbuild failed:\n" + p.stdout + p.stderr)
    return os.path.join(CACHE, request.param, "esbuild")


def test_go116_inline_tree_read_as_independently(go116_bin):
    """Go 1.16-1.17 pclntabs (funcdata are pointers, _func begins with a
    pointer-sized entry): the inlined copies --list gives, from the
    pclntab alone, are those an independent reader of the inline tree
    gives, address, caller and call site (the node's own file and line
    against gotrace's line table at parentPc), for a sample of 1 in 25
    inlined functions (runtime, standard library and esbuild's own)."""
    want = go116_inline_trees(go116_bin)
    assert sum(len(v) for v in want.values()) > 10000
    names = sorted(want)[::25]
    names += ["runtime.add", ESB + "js_lexer.(*Lexer).Raw"]
    for name in names:
        d = listing(go116_bin, name)
        got = {(s["into"], s["address"], s["call_site"])
               for f in d["functions"] for s in f.get("inlined") or []}
        assert got == want[name], name
        inl = [f for f in d["functions"] if f.get("inlined")]
        assert inl and re.search(r"go1\.1[67]", d["binary"]["go_version"])
    # the line table too: FILE:* lists the lines a probe can take, those
    # of a function only ever inlined included
    d = listing(go116_bin, "js_lexer/js_lexer.go:*")
    assert d["file"].endswith("internal/js_lexer/js_lexer.go")
    assert len({ln["line"] for ln in d["lines"]}) > 1000
    raw = [ln for ln in d["lines"] if ln["func"] == ESB + "js_lexer.(*Lexer).Raw"]
    assert raw and all(ln["inlined_into"] for ln in raw)
    assert {ln["inlined_into"] for ln in raw} <= {
        into for into, _, _ in want[ESB + "js_lexer.(*Lexer).Raw"]}


def test_go116_stacks_and_copies_in_a_real_run(go116_bin, needs_bpf, tmp_path):
    """esbuild (Go 1.16, 1.17) bundling two modules: the stacks of
    parseExprCommon, named from the trace alone, show the inlined frames
    Go's traceback would (parseExpr, inlined into its callers), each an
    inlined copy the independent reader finds in the function below it;
    and a glob naming (*Lexer).Raw, which has no out-of-line body, probes
    its inlined copies, whose events say where they fired."""
    trees = go116_inline_trees(go116_bin)
    src = tmp_path / "src"
    src.mkdir()
    (src / "entry.js").write_text('import {f} from "./m.js";\nconsole.log(f(1) + f(2));\n')
    (src / "m.js").write_text("export function f(x) { const a = [1, 2, 3].map((v) => v * x);"
                              " let s = 0; for (const v of a) { s += v; } return s; }\n")
    trace = str(tmp_path / "t.gtr")
    common = ESB + "js_parser.(*parser).parseExprCommon"
    raw_line = {ln["line"] for ln in listing(go116_bin, "js_lexer/js_lexer.go:*")["lines"]
                if ln["func"] == ESB + "js_lexer.(*Lexer).Raw"}
    assert len(raw_line) == 1
    record(["-q", "-U", "-o", trace, common, ESB + "js_lexer.(*Lexer).Raw",
            "js_lexer/js_lexer.go:%d" % raw_line.pop(),
            "--", go116_bin, "entry.js", "--bundle", "--outfile=out.js"], cwd=str(src))
    evs = jsonl(trace)
    stacks = [e["stack"] for e in evs if e["func"] == common]
    assert len(stacks) > 50
    through = 0
    for st in stacks:
        names = [f.split("+0x")[0] for f in st]
        run = []
        for n in names[1:]:
            if n.endswith(" (inlined)"):
                run.append(n[:-len(" (inlined)")])
                continue
            for inl in run:
                assert n in {into for into, _, _ in trees[inl]}, (inl, n, st)
            through += bool(run)
            run = []
    assert through > len(stacks) // 2
    raw = [e for e in evs if e["func"] == ESB + "js_lexer.(*Lexer).Raw"
           and not e.get("line")]
    assert raw and all(e.get("inlined_into") for e in raw)
    assert {(e["inlined_into"], e["call_site"]) for e in raw} <= {
        (into, site) for into, _, site in trees[ESB + "js_lexer.(*Lexer).Raw"]}
    # Raw's one line fires once per pass through each copy, as the copy
    lines = [e for e in evs if e.get("line")]
    assert {e["func"] for e in lines} == {ESB + "js_lexer.(*Lexer).Raw"}
    per = collections.Counter(e["inlined_into"] for e in raw)
    assert collections.Counter(e["inlined_into"] for e in lines) == per


WRAPPER = "tests/fixtures/wrapper/main.go"


def printed_calls(stdout, what):
    """The values the wrapper fixture prints for each call of `what`."""
    return [tuple(int(x) for x in line.split()[1:])
            for line in stdout.splitlines() if line.startswith(what + " ")]


def test_values_of_inlined_copies_as_the_program_prints(gobuild, toolchain,
                                                        tmp_path):
    """A probe names values of the function, not of each copy: Rect.Area's
    copy in the pointer wrapper (*Rect).Area (called through an interface)
    keeps its receiver nowhere, so r and r.W are unavailable there, not a
    refusal of the probe; its out-of-line body is never called. scale's
    copy in a loop captures v and k as the program prints them, typed as
    the inlined function declares them; perimeter's struct is its
    printed value or unavailable, never a guess. A name the function
    does not have is refused, naming its parameters; the wrapper's own
    receiver is the pointer, whose fields it reads."""
    exe = gobuild(WRAPPER, "wrapper")
    trace = str(tmp_path / "t.gtr")
    gccgo = getattr(toolchain, "gccgo", False)
    # gccgo passes a value receiver by pointer, a parameter "pointer"
    p = record(["-q", "-o", trace, "main.Rect.Area" if gccgo else
                'main.Rect.Area "%v w=%d" r, r.W', "main.scale",
                "main.perimeter", "--", exe])
    areas = printed_calls(p.stdout, "area")
    assert len(areas) == 4
    evs = jsonl(trace)
    area = [e for e in evs if e["func"] == "main.Rect.Area"]
    scale = [e for e in evs if e["func"] == "main.scale"]
    perim = [e for e in evs if e["func"] == "main.perimeter"]
    assert len(area) == len(scale) == len(perim) == 4
    if gccgo:
        # no copies (GCC's inlining off): every call in its own body
        assert not [e for e in evs if e.get("inlined_into")]
        assert [(e["args"]["v"], e["args"]["k"]) for e in scale] == \
            printed_calls(p.stdout, "scale")
        assert [(e["args"]["r"]["W"], e["args"]["r"]["H"]) for e in perim] == \
            printed_calls(p.stdout, "perimeter")
        return
    assert {e.get("inlined_into") for e in area} == {"main.(*Rect).Area"}
    for e in area:   # r shown by its one field asked for, unavailable
        assert e["args"]["r.W"] is None, e
        assert e["args"]["r"] in (None, {"W": None}), e
    assert [(e["args"]["v"], e["args"]["k"]) for e in scale] == \
        printed_calls(p.stdout, "scale")
    for e, want in zip(perim, printed_calls(p.stdout, "perimeter")):
        r = e["args"]["r"]
        assert r is None or (r["W"], r["H"]) == want, e
    # --list says why, with the types the inlined functions declare
    d = listing(exe, "main.Rect.Area")["functions"][0]["inlined"]
    assert [c["into"] for c in d] == ["main.(*Rect).Area"]
    text = record(["--list", exe, 'main.Rect.Area "%d" r.W']).stdout
    assert re.search(r"\n    r +main\.Rect +\S+ +not captured \(DWARF places "
                     r"it nowhere here\)", text), text
    assert re.search(r"\n    r\.W +int +\S+ +not captured \(DWARF places r "
                     r"nowhere here\)", text), text
    line = source_line(WRAPPER, "func scale")
    text = record(["--list", exe, "main.go:%d(v, k)" % line]).stdout
    assert "other" not in text and re.search(r"\n    v +int ", text), text
    p = record(["-o", trace, "--force", 'main.Rect.Area "%v" q', "--", exe],
               check=False)
    assert p.returncode != 0
    assert "unknown expression 'q'" in p.stderr
    assert "(main.Rect.Area has: r)" in p.stderr
    # the wrapper's receiver is *Rect, where its DWARF names it (not Go 1.19)
    fn = listing(exe, "main.(*Rect).Area")["functions"][0]
    if not fn.get("params"):
        assert toolchain.name == "go1.19", fn
        return
    record(["-q", "-o", trace, "--force",
            'main.(*Rect).Area "w=%d h=%d" r.W, r.H', "--", exe])
    got = [(e["args"]["r.W"], e["args"]["r.H"]) for e in jsonl(trace)]
    assert got == areas
