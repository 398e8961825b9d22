"""Capture engine: return probes at RET instructions, exact counts when
stacks grow, goroutine ids, and targets that behave as if untraced."""
import collections
import json
import subprocess

import pytest

from conftest import record, report


def jsonl(path, *args):
    out = report(["--format", "jsonl", *args, path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_return_values_and_retval(functions, tmp_path):
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
    assert rets["main.(*T).M"] == [[4]] * 3
    assert rets["main.T.Value"] == [[7], [8], [9]]
    text = report(["-f", 'func == "main.add"', trace]).stdout.splitlines()[1:]
    assert [l.split()[-1] for l in text] == ["y=13", "55"] * 3


def test_recursion_with_stack_growth_counts_exactly(gobuild, tmp_path):
    """Four goroutines recurse 1000 deep with big frames, growing their
    stacks many times: exactly one entry and one return per call."""
    exe = gobuild("tests/fixtures/recurse/main.go", "recurse")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "main.rec", "r:main.rec", "--", exe])
    calls = int(p.stdout.split()[0])
    assert calls == 4004
    evs = jsonl(trace)
    kinds = collections.Counter(e["kind"] for e in evs)
    assert kinds == {"entry": 4004, "return": 4004}
    per_g = collections.Counter((e["goid"], e["kind"]) for e in evs)
    goids = {g for g, _ in per_g}
    assert len(goids) == 4 and 0 not in goids
    assert all(per_g[(g, k)] == 1001 for g in goids for k in ("entry", "return"))
    # Depth goes 1000 -> 0 on entry, per goroutine, in order.
    for g in goids:
        depths = [e["args"]["depth"] for e in evs
                  if e["goid"] == g and e["kind"] == "entry"]
        assert depths == list(range(1000, -1, -1))


@pytest.mark.parametrize("fixture,cgo", [("disturb", False), ("cgo", True)])
def test_target_is_not_disturbed(gobuild, tmp_path, fixture, cgo):
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
        divs = [e["args"] for e in evs if e["func"] == "main.divide" and e["kind"] == "return"]
        assert [d["~r0"] for d in divs] == [0, 3]
    else:
        works = [e for e in evs if e["func"] == "main.work"]
        assert [e["args"]["i"] for e in works if e["kind"] == "entry"] == list(range(100))
        assert [e["goargs"][0] for e in works if e["kind"] == "return"] == \
            [2 * i + 1 for i in range(100)]
