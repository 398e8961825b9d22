"""gotrace-report on a real recording with return probes: calls paired per
goroutine, latency filter, stats and Chrome output of examples/functions."""
import json

from conftest import record, report


def test_calls_stats_chrome_on_real_returns(functions, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.add", "r:main.add", "main.greet", "r:main.greet",
            "--", functions, "3"])
    calls = report(["--calls", trace]).stdout.splitlines()[1:]
    adds = [l.split() for l in calls if " main.add " in l]
    assert len(adds) == 3
    for a in adds:
        assert a[-4:] == ["x=42", "y=13", "->", "~r0=55"]
        assert a[4].endswith(("ns", "us", "ms"))
    greets = [l for l in calls if " main.greet " in l]
    assert [g.split()[-1] for g in greets] == ["~r0=5", "~r0=6", "~r0=7"]
    # a return sees its entry's arguments
    assert report(["--count", "-f", "kind == \"return\" && n == 1 && retval == 6",
                   trace]).stdout.strip() == "1"
    assert report(["--count", "-f", "latency > 0ns", trace]).stdout.strip() == "6"
    st = report(["stats", "--no-hist", trace]).stdout.splitlines()
    assert [r.split()[:2] for r in st[1:]] == [["main.add", "3"], ["main.greet", "3"]]
    doc = json.loads(report(["--format", "chrome", trace]).stdout)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 6 and all(e["tid"] == 1 for e in xs)
    assert "unpaired" not in report([trace]).stderr
