"""gccgo programs built as gccgo's go tool builds them by default (-O2 -g,
no -fno-ipa-*): GCC clones //go:noinline functions whose calls pass
constants (.constprop.N) or whose parameters it can pass in pieces or drop
(.isra.N). A clone's parameter list is not its declaration's: gotrace
places its values from the clone's own DWARF, in declared order, and a
parameter the clone does not receive reads unavailable, never a register
the declaration's signature would name. Only gccgo makes such clones."""
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, record
from test_capture import jsonl
from test_inline import gccgo  # noqa: F401 (a fixture)

CLONES = "tests/fixtures/gccclone"


def build(toolchain, exe, *flags):
    """Builds the fixture with gccgo's go tool as it builds by default,
    plus `flags`; returns exe and asserts GCC cloned what the tests look at."""
    subprocess.run([toolchain.go, "build", "-o", exe, *flags, "main.go"],
                   check=True, env=toolchain.environ(), cwd=os.path.join(ROOT, CLONES))
    syms = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
    for clone in ("main.greet.constprop.0", "main.mix.constprop.0",
                  "main.utf.isra.0", "main.slc.constprop.0.isra.0"):
        assert " " + clone + "\n" in syms, clone
    return exe


@pytest.fixture
def clones(gccgo, tmp_path):  # noqa: F811 (the fixture imported above)
    return build(gccgo, str(tmp_path / "gccclone"))


def entries(trace):
    return {e["func"]: e for e in jsonl(trace) if e["kind"] == "entry"}


def test_clone_values_from_its_dwarf(clones, tmp_path):
    """Each clone's parameters come in declared order; those the clone
    receives hold what the program passed, an integer or bool constant
    folded in is the constant its DWARF gives, the others (floats folded
    in, pieces passed apart, dropped) are unavailable."""
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.*", "--", clones, "x", "y"])
    assert "add 45\ngreet ababab\n" in p.stdout
    evs = entries(trace)
    # the declared order, not the clone DIE's (mix's lists them backwards)
    assert list(evs["main.mix.constprop.0"]["args"]) == ["a", "b", "c", "d", "e", "f"]
    # all six are constants in this clone: none is read from a register;
    # the integers and the bool are the constants mix(-5, 65535, 3.25,
    # true, 1.5, -1<<40) passes (f's DWARF gives no value)
    assert evs["main.mix.constprop.0"]["args"] == \
        {"a": -5, "b": 65535, "c": None, "d": True, "e": None, "f": None}
    assert evs["main.greet.constprop.0"]["args"] == {"s": "ab", "n": 3}
    assert evs["main.add.constprop.0"]["args"] == {"a": 42, "b": 3}
    assert evs["main.pt.constprop.0"]["args"] == {"p": None}
    slc = evs["main.slc.constprop.0.isra.0"]["args"]
    assert list(slc) == ["xs", "m", "b"] and slc["xs"] is None and slc["b"] is None
    assert isinstance(slc["m"], int) and slc["m"] > 0x1000   # the map's address
    assert evs["main.utf.isra.0"]["args"] == {"s": None}


def test_clone_list_says_what_is_not_captured(clones):
    """--list gives a clone its declared parameters: one folded to an
    integer or bool constant is recorded as that constant (of the
    parameter's type: GCC writes uint16 65535 as -1), one DWARF places
    nowhere at its entry is not captured, with why."""
    out = json.loads(record(["--list", "--json", clones, "main.greet.constprop.0"]).stdout)
    params = out["functions"][0]["params"]
    assert [(a["name"], a["capture"]) for a in params] == [("s", True), ("n", True)]
    assert params[0]["locations"] == ["RDI", "RSI"]
    assert params[1]["constant"] == 3 and "constant" not in params[0]
    assert params[1]["why"] is None
    out = json.loads(record(["--list", "--json", clones, "main.mix.constprop.0"]).stdout)
    consts = {a["name"]: (a.get("constant"), a["capture"]) for a in out["functions"][0]["params"]}
    # c, e (floats) and f (an expression, not one constant) are nowhere
    assert consts == {"a": (-5, True), "b": (65535, True), "c": (None, False),
                      "d": (1, True), "e": (None, False), "f": (None, False)}
    text = record(["--list", clones, "main.mix.constprop.0"]).stdout
    assert "the constant 65535 in this GCC clone (folded in, not passed): recorded as it" in text
    assert "the constant true in this GCC clone (folded in, not passed): recorded as it" in text
    assert "DWARF places it nowhere at entry" in text
    out = json.loads(record(["--list", "--json", clones, "main.utf.isra.0"]).stdout)
    [s] = out["functions"][0]["params"]
    assert not s["capture"] and "constant" not in s and "nowhere" in s["why"]


def test_clone_without_dwarf_captures_nothing(gccgo, tmp_path):  # noqa: F811
    """Without DWARF for the clones (-g0), their arguments are not
    captured, said once for the binary, and a signature, which would
    describe the declaration, is refused."""
    exe = build(gccgo, str(tmp_path / "gccclone-g0"), "-gccgoflags=-g0")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.*", "--", exe])
    assert p.stderr.count("is a copy GCC made with other parameters") == 1
    assert "build with -g to capture them" in p.stderr
    evs = entries(trace)
    for f in ("main.greet.constprop.0", "main.mix.constprop.0", "main.utf.isra.0"):
        assert evs[f]["args"] == {} and evs[f]["goargs"] == []
    bad = record(["-o", str(tmp_path / "s.gtr"), "main.greet.constprop.0(s string, n int)",
                  "--", exe], check=False)
    assert bad.returncode != 0
    assert "a signature cannot describe it" in bad.stderr
    assert not os.path.exists(str(tmp_path / "s.gtr"))


def test_declared_name_points_at_its_clone(clones, tmp_path):
    """A probe on the declared name of a function GCC kept only a clone
    of says which clone to probe instead."""
    out = tmp_path / "t.gtr"
    p = record(["-o", str(out), "main.mix", "--", clones], check=False)
    assert p.returncode != 0 and not out.exists()
    assert ("function 'main.mix' not found in %s; GCC kept only a copy of it with "
            "other parameters (constants folded in, pieces passed apart): "
            "main.mix.constprop.0; probe it by name" % clones) in p.stderr


def test_return_probe_of_an_isra_clone_warns_of_its_results(clones, tmp_path):
    """GCC's IPA-SRA may drop a clone's result when every caller ignores
    it, while the clone's DWARF still describes it: a return probe on an
    .isra clone says its results may read whatever the register holds;
    one on a .constprop clone does not."""
    out = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", out, "r:main.utf.isra.0", "r:main.greet.constprop.0",
                "--", clones])
    warn = [l for l in p.stderr.splitlines() if "IPA-SRA" in l]
    assert warn == ["gotrace-record: warning: probe 'r:main.utf.isra.0': main.utf.isra.0 "
                    "is a GCC IPA-SRA clone, which may not return the results its "
                    "function declares (when every caller ignores them): its results "
                    "may read what the register holds"]


def test_predicate_on_a_folded_constant_is_decided_when_planned(clones, tmp_path):
    """A record-time predicate on a parameter GCC folded to a constant is
    decided once, at plan time, for the constant the events record: one
    that holds keeps every call (the BPF program would read the slot as
    unavailable and fail it), one that cannot hold is refused."""
    out = str(tmp_path / "t.gtr")
    record(["-q", "-o", out, "main.greet.constprop.0 (n == 3)",
            "main.add.constprop.0 (a == 42 && b > 0)", "--", clones, "x", "y"])
    assert sorted((e["func"], tuple(e["args"].values())) for e in jsonl(out)) == \
        [("main.add.constprop.0", (42, 3)), ("main.greet.constprop.0", ("ab", 3))]
    bad = str(tmp_path / "bad.gtr")
    p = record(["-q", "-o", bad, "main.greet.constprop.0 (n == 4)", "--", clones],
               check=False)
    assert p.returncode != 0 and not os.path.exists(bad)
    assert ("probe 'main.greet.constprop.0 (n == 4)': the predicate cannot hold: n is "
            "the constant 3 in main.greet.constprop.0, a GCC clone") in p.stderr


def test_glob_whose_prefix_names_a_function(clones, tmp_path):
    """A glob whose part before the '*' is itself a function's name
    (main.big*, beside main.big2) matches every function fnmatch matches,
    in --list and in a recording, as on gc builds: gccgo's spelling of a
    Go name drops the '*' of a pointer receiver "(*T)" only, never a
    glob's, so main.big* is no exact name of main.big."""
    for probe in ("p:main.big*", "r:main.big*"):
        text = record(["--list", clones, probe]).stdout
        assert "probe '%s': 2 functions of %s" % (probe, clones) in text
        sites = [re.match(r"\w+ sites? of (main\.\w+)", l).group(1) for l in text.splitlines()
                 if re.match(r"\w+ sites? of main\.", l)]
        assert sorted(sites) == ["main.big", "main.big2"]
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.big*", "r:main.big*", "--", clones, "x"])
    assert "big ss bb 3 t b2 4\n" in p.stdout
    evs = jsonl(trace)
    assert sorted((e["func"], e["kind"]) for e in evs) == [
        ("main.big", "entry"), ("main.big", "return"),
        ("main.big2", "entry"), ("main.big2", "return")]
    rets = {e["func"]: e["goargs"][:3] for e in evs if e["kind"] == "return"}
    assert rets == {"main.big": ["ss", "bb", 3], "main.big2": ["t", "b2", 4]}
    # main.big's results by their names, as its own probe would read them
    [big] = [e["args"] for e in evs if e["func"] == "main.big" and e["kind"] == "return"]
    assert (big["s"], big["b"], big["n"]) == ("ss", "bb", 3)
