"""gotrace-report's pairing past --max-depth on a real recursion: the
entries past the limit are not tracked and their returns stay unpaired,
so the outer calls pair with their own returns (spec/OUTPUT.md,
"Pairing")."""
import collections
import json

from conftest import record, report


def test_recursion_past_max_depth_pairs_outer_calls(gobuild, toolchain, tmp_path):
    """Four goroutines recurse 1000 deep (main.rec(depth), 1001 calls
    each); with --max-depth 501 the calls of depth 1000..500 pair, each
    after every return of the 500 inner calls of its goroutine, and the
    inner ones show as not_tracked and no_entry."""
    exe = gobuild("tests/fixtures/recurse/main.go", "recurse")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.rec", "r:main.rec", "--", exe])
    p = report(["--format", "jsonl", "--calls", "--max-depth", "501", trace])
    cs = [json.loads(l) for l in p.stdout.splitlines()]
    st = collections.Counter(c["status"] for c in cs)
    assert st == {"returned": 4 * 501, "not_tracked": 4 * 500, "no_entry": 4 * 500}, p.stderr
    assert sorted(c["args"]["depth"] for c in cs if c["status"] == "returned") == \
        sorted(list(range(500, 1001)) * 4)
    assert sorted(c["args"]["depth"] for c in cs if c["status"] == "not_tracked") == \
        sorted(list(range(0, 500)) * 4)
    # per goroutine (per thread for gccgo, whose goroutines have no id here:
    # one thread may run the four in turn), the returns in time order: the
    # 500 inner ones unpaired, then the outer ones, innermost first
    key = (lambda c: c["tid"]) if toolchain.gccgo else (lambda c: c["goid"])
    rets = collections.defaultdict(list)
    for c in cs:
        if c["status"] == "returned":
            rets[key(c)].append((c["ts_ns"] + c["latency_ns"], c["args"]["depth"]))
        elif c["status"] == "no_entry":
            rets[key(c)].append((c["ts_ns"], None))
    for seq in rets.values():
        seq.sort()
        assert len(seq) % 1001 == 0
        assert [d for _, d in seq] == ([None] * 500 + list(range(500, 1001))) * (len(seq) // 1001)
    assert "2004 call(s) paired" in p.stderr
    assert "2000 return(s) without entry" in p.stderr
    assert "2000 entries not tracked (--max-depth" in p.stderr
