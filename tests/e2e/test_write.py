"""gotrace-report -w OUT: a smaller trace for a bug report. Reading OUT with
the selection that wrote it gives, byte for byte, the report of the
original with that selection, in every output format; OUT holds only the
selected events (and the entries of selected returns), passes the
independent Python reader with no damage, and is smaller. Recorded once
per Go toolchain."""
import json
import re
import os
import subprocess
import sys

import pytest

from conftest import REPORT, record, report

sys.path.insert(0, os.path.dirname(__file__))
from gtr_reader import GtrReader  # noqa: E402

SELECTIONS = [
    ["-f", 'func == "main.add" && latency > 2us'],  # returns: entries come along
    ["-f", "goarg1 == 42"],
    ["-f", 'kind == "entry"'],                      # entries: returns come along
    ["-f", 's == "hello"'],
    ["--since", "+0.0005s", "--until", "+0.002s"],
    ["--pid", "1"],                                 # nothing at all
]

VIEWS = [
    ["--format", "text"], ["--format", "jsonl"], ["--format", "csv"],
    ["--format", "chrome"], ["--format", "folded"], ["--calls"], ["-t"],
    ["--calls", "--format", "jsonl"], ["stats"], ["--count"],
]


@pytest.fixture
def recorded(functions, tmp_path):
    """A recording with entries, returns and stacks of a program's calls."""
    trace = str(tmp_path / "full.gtr")
    record(["-o", trace, "-U", "main.add", "r:main.add", "main.greet", "r:main.greet",
            "--", functions, "40"])
    return trace


def rep(args, path):
    """stdout and stderr of gotrace-report ARGS PATH (the command first)."""
    cmd = list(args)
    if cmd and cmd[0] == "stats":
        cmd = ["stats", *cmd[1:]]
    p = report([*cmd, path])
    return p.stdout, p.stderr.replace(path, "FILE")


@pytest.mark.parametrize("sel", SELECTIONS, ids=lambda s: " ".join(s))
def test_round_trip_every_view(recorded, tmp_path, sel):
    """Every view of OUT with the selection that wrote it is the view of
    the original with it, byte for byte, warnings included."""
    small = str(tmp_path / "small.gtr")
    w = report(["-w", small, *sel, recorded])
    assert "events written to %s" % small in w.stderr
    for view in VIEWS:
        args = ["stats", *sel] if view == ["stats"] else [*view, *sel]
        assert rep(args, small) == rep(args, recorded), view
    py = GtrReader(small)
    list(py.items())
    assert py.damage == 0 and not py.truncated and py.summary is not None


def test_limit_round_trip(recorded, tmp_path):
    small = str(tmp_path / "small.gtr")
    report(["-w", small, "--limit", "25", recorded])
    for view in (["--format", "text"], ["--format", "jsonl"], ["--format", "csv"]):
        assert rep([*view, "--limit", "25"], small) == rep([*view, "--limit", "25"], recorded)


def jsonl(path, *args):
    return [json.loads(l) for l in report(["--format", "jsonl", *args, path]).stdout.splitlines()]


def test_selection_only_and_smaller(recorded, tmp_path):
    small = str(tmp_path / "small.gtr")
    report(["-w", small, "-f", 'func == "main.greet"', recorded])
    full, kept = jsonl(recorded), jsonl(small)
    assert kept == [e for e in full if e["func"] == "main.greet"]
    assert 0 < len(kept) < len(full)
    assert os.path.getsize(small) < os.path.getsize(recorded)
    # the stacks of the kept events are still symbolized
    assert all(e.get("stack") for e in kept)


def test_entries_of_kept_returns_are_written(recorded, tmp_path):
    """A selection of returns alone still pairs in OUT: latencies equal,
    and every return has its entry."""
    small = str(tmp_path / "small.gtr")
    sel = ["-f", 'kind == "return" && func == "main.add"']
    report(["-w", small, *sel, recorded])
    calls = rep(["--calls", "--format", "jsonl", *sel], recorded)
    assert calls[0] and calls == rep(["--calls", "--format", "jsonl", *sel], small)
    ents = jsonl(small)
    assert [e["kind"] for e in ents].count("entry") == [e["kind"] for e in ents].count("return")


def test_write_refusals(recorded, tmp_path):
    small = str(tmp_path / "small.gtr")
    p = report(["-w", small, "--format", "jsonl", recorded], check=False)
    assert p.returncode == 2 and "-w writes events to a trace" in p.stderr
    report(["-w", small, recorded])
    p = report(["-w", small, recorded], check=False)
    assert p.returncode == 1 and "exists; use --force" in p.stderr
    report(["-w", small, "--force", recorded])
    p = report(["--force", recorded], check=False)
    assert p.returncode == 2 and "--force goes with -w OUT" in p.stderr


def test_write_to_a_pipe(recorded):
    """-w - streams the selection into another report."""
    w = subprocess.Popen([REPORT, "-w", "-", "-f", "goarg1 == 42", recorded],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    r = subprocess.run([REPORT, "--format", "jsonl", "-"], stdin=w.stdout,
                       capture_output=True, text=True, timeout=60)
    w.stdout.close()
    assert w.wait(60) == 0 and r.returncode == 0
    assert r.stdout == rep(["--format", "jsonl", "-f", "goarg1 == 42"], recorded)[0]


@pytest.fixture
def panicky(gobuild, tmp_path):
    """A recording of recursion (main.rec) and of a panic that a caller
    recovers (main.boom unwound, main.safe returns), entries and returns."""
    exe = gobuild("tests/fixtures/panics/main.go", "panics")
    trace = str(tmp_path / "panics.gtr")
    record(["-q", "-o", trace, "main.rec", "r:main.rec", "main.safe", "r:main.safe",
            "main.boom", "r:main.boom", "--", exe])
    return trace


def order(path):
    """(ts, kind, func) of every event of PATH, in file order."""
    return [(e["ts_ns"], e["kind"], e["func"]) for e in jsonl(path)]


@pytest.mark.parametrize("sel", [["-f", 'kind == "return"'],
                                 ["-f", 'kind == "return" && func == "main.rec"']],
                         ids=["returns", "rec returns"])
def test_selection_in_time_order(panicky, tmp_path, sel):
    """The entries that selected returns bring are written at their own
    place: OUT's events are those of the original in its order, so outer
    calls still contain inner ones (folded stacks, calls, nesting)."""
    small = str(tmp_path / "small.gtr")
    report(["-w", small, *sel, panicky])
    full, kept = order(panicky), order(small)
    assert 0 < len(kept) < len(full)
    it = iter(full)
    assert all(k in it for k in kept), "OUT is not a subsequence of the original"
    folded = rep(["--format", "folded", *sel], small)[0]
    assert "main.rec;main.rec" in folded
    for view in VIEWS:
        args = ["stats", *sel] if view == ["stats"] else [*view, *sel]
        assert rep(args, small)[0] == rep(args, panicky)[0], view


def test_unwinding_return_comes_along(panicky, tmp_path):
    """A kept call that a recovered panic unwound stays unwound in OUT: the
    return that closed over it (main.safe's, not selected) is written
    with its entry, not left out so that the call stays open."""
    small = str(tmp_path / "small.gtr")
    sel = ["-f", 'func == "main.boom"']
    report(["-w", small, *sel, panicky])
    calls = rep(["--calls", *sel], small)[0]
    assert re.search(r"main\.boom\s+unwound\s+n=3", calls), calls
    assert calls == rep(["--calls", *sel], panicky)[0]
    assert [k[2] for k in order(small)].count("main.safe") == 2


def test_standard_input_is_read_once(panicky, tmp_path):
    """From standard input (read once) the entry of a selected return is
    written just before it, and a note says how many were."""
    small = str(tmp_path / "small.gtr")
    with open(panicky, "rb") as f:
        p = subprocess.run([REPORT, "-w", small, "-f", 'kind == "return"', "-"], stdin=f,
                           capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    n = len([k for k in order(panicky) if k[1] == "entry"])
    m = re.search(r"note: (\d+) entr(y|ies) written just before", p.stderr)
    assert m and 0 < int(m.group(1)) <= n, p.stderr
    assert "standard input is read once" in p.stderr
