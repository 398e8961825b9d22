"""Values of a FILE:LINE probe where DWARF places them at the line's
address (spec/PROBES.md): in a -N -l build the parameters live in the
spill area at the CFA (DW_OP_call_frame_cfa), SP + the frame size at that
pc + the return address; in an optimised build a slice whose pointer and
length are in registers and whose cap is nowhere is captured, its cap
unavailable. `--list BINARY PROBE` shows each of a line's sites (its
address in each function and inlined copy) with the places valid there,
those the recording reads. tests/fixtures/linevals prints what the
probes should see; gccgo writes no line table and is refused with why."""
import json
import re

from conftest import record, source_line
from test_inline import jsonl

LINEVALS = "tests/fixtures/linevals/main.go"


def fixture_line(marker):
    return source_line(LINEVALS, marker)


def refused_on_gccgo(toolchain, gobuild, tmp_path):
    """On gccgo: a line probe, recorded or listed, is refused naming the
    missing line table; returns True. False on gc."""
    if not getattr(toolchain, "gccgo", False):
        return False
    exe = gobuild(LINEVALS, "linevals")
    probe = "main.go:%d(xs)" % fixture_line("SUM BODY")
    for args in (["-o", str(tmp_path / "t.gtr"), probe, "--", exe],
                 ["--list", exe, probe]):
        p = record(args, check=False)
        assert p.returncode != 0 and "no Go 1.16+ line table" in p.stderr, p.stderr
    return True


XS = [1, 11, 21, 31]


def test_unoptimised_line_reads_parameters_at_the_cfa(gobuild, toolchain, tmp_path):
    """-N -l: the slice, string and struct parameters DWARF gives as
    DW_OP_call_frame_cfa are read whole from the stack at every
    iteration, beside the locals x and total (they were unavailable)."""
    if refused_on_gccgo(toolchain, gobuild, tmp_path):
        return
    exe = gobuild(LINEVALS, "linevals-N", "-gcflags=all=-N -l")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.go:%d(x, total, xs, name, p)"
                % fixture_line("SUM BODY"), "--", exe])
    assert "total 64" in p.stdout
    got = [e["args"] for e in jsonl(trace)]
    want = [{"x": x, "total": sum(XS[:i]), "xs": XS, "name": "gopher",
             "p": {"X": 3, "Y": 4}, "cap(xs)": 6} for i, x in enumerate(XS)]
    assert got == want


def test_optimised_line_keeps_the_known_pieces(gobuild, toolchain, tmp_path):
    """Optimised: xs's pointer and length are in registers at the loop's
    line and its cap nowhere: the slice is captured, cap(xs) unavailable,
    and --list says which piece is missing; total, which DWARF places
    nowhere there, stays unavailable."""
    if refused_on_gccgo(toolchain, gobuild, tmp_path):
        return
    exe = gobuild(LINEVALS, "linevals")
    probe = "main.go:%d(total, xs)" % fixture_line("SUM BODY")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, probe, "--", exe])
    got = [e["args"] for e in jsonl(trace)]
    assert got == [{"total": None, "xs": XS, "cap(xs)": None}] * 4
    text = record(["--list", exe, probe]).stdout
    assert re.search(r"^    xs +\[\]int +RAX,RBX,\? +captured \(cap nowhere here\)$",
                     text, re.M), text
    assert re.search(r"^    total +int +\? +not captured \(DWARF places it nowhere here\)$",
                     text, re.M), text


def list_sites(text):
    """(function, inlined into or None, address) of each site --list
    BINARY PROBE shows, in order."""
    return [(m.group(2), m.group(3), int(m.group(4), 16)) for m in re.finditer(
        r"^line (\S+) site in (\S+?)(?:, inlined into (\S+?))? at (0x[0-9a-f]+), "
        r"values from DWARF at that address$", text, re.M)]


def test_list_shows_the_lines_sites_and_their_places(gobuild, toolchain, tmp_path):
    """--list BINARY FILE:LINE(...) plans each address of the line, as
    FILE:* lists them (a line of a function inlined into main has several),
    never the function's entry; the places it shows are those the
    recording reads: the values it captures are the program's."""
    if refused_on_gccgo(toolchain, gobuild, tmp_path):
        return
    line = fixture_line("SCALE BODY")
    for name, flags in (("linevals", ()), ("linevals-N", ("-gcflags=all=-N -l",))):
        exe = gobuild(LINEVALS, name, *flags)
        listed = [(ln["func"], ln["inlined_into"], ln["address"]) for ln in json.loads(
            record(["--list", "--json", exe, "main.go:*"]).stdout)["lines"]
            if ln["line"] == line]
        assert listed, name
        text = record(["--list", exe, "main.go:%d(v, k)" % line]).stdout
        assert text.startswith("probe 'main.go:%d(v, k)': %d site%s of "
                               % (line, len(listed), "" if len(listed) == 1 else "s"))
        assert "entry site" not in text
        assert list_sites(text) == listed, text
        body = [f for f in listed if f[1] is None]
        assert len(body) == 1
        # the out-of-line body, reached through a function value, gets v, k
        block = text.split("at %#x," % body[0][2])[1].split("\n\n")[0]
        assert re.search(r"^    v +int +\S+ +captured$", block, re.M), block
        trace = str(tmp_path / (name + ".gtr"))
        p = record(["-q", "-o", trace, "--force", "main.go:%d(v, k)" % line, "--", exe])
        assert "scaled 5 7 6" in p.stdout
        evs = jsonl(trace)
        assert {e["args"]["v"] for e in evs} <= {None, 1, 2}
        assert [(e["args"]["v"], e["args"]["k"]) for e in evs
                if not e.get("inlined_into")][-1] == (2, 3)
