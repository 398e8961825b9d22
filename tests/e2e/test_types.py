"""Values shown whole: generic functions by their source name with their
shaped parameters typed, structs passed by value, results of every count,
and types taken from the binary itself when it has no DWARF."""
import json
import subprocess

from conftest import record, report

TYPES = "tests/fixtures/types"


def jsonl(path, *args):
    out = report(["--format", "jsonl", *args, path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def listing(exe, *probes):
    out = record(["--list", "--json", exe, *probes]).stdout
    return json.loads(out)["functions"]


def test_generic_function_by_its_source_name(gobuild, tmp_path):
    """main.Sum (the name in the source) is every instance of Sum; the
    shaped parameter xs is typed []int / []float64 and captured; a method
    of a generic type by its source name too."""
    exe = gobuild(TYPES, "types")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.Sum", "main.(*List).Push", "--", exe])
    evs = jsonl(trace)
    assert [e["args"]["xs"] for e in evs[:2]] == [[1, 2, 3], [1.5, 2]]
    assert evs[2]["args"]["v"] == "a"
    assert len(evs) == 3
    params = sorted([(p["name"], p["type"], p["capture"]) for p in f["params"]]
                    for f in listing(exe, "main.Sum"))
    assert [p[0][0] for p in params] == [".dict", ".dict"]
    assert [p[1:] for p in params] == [[("xs", "[]float64", True)],
                                       [("xs", "[]int", True)]]
    text = report([trace]).stdout.splitlines()
    assert text[1].endswith("xs=[1 2 3](len=3) cap(xs)=3")


def test_generic_instance_by_its_symbol_name(gobuild, tmp_path):
    """The name nm prints for an instance (main.Sum[go.shape.int_0] of Go
    1.19, main.Sum[go.shape.int] of later Go) probes that instance alone."""
    exe = gobuild(TYPES, "types")
    syms = subprocess.run(["nm", exe], capture_output=True, text=True,
                          check=True).stdout.split("\n")
    name = next(s.split(" ", 2)[2] for s in syms
                if " main.Sum[go.shape.int" in s)
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, name, "--", exe])
    assert [e["args"]["xs"] for e in jsonl(trace)] == [[1, 2, 3]]
