"""gotrace-report on a real recording with return probes: calls paired per
goroutine, latency filter, stats and Chrome output of examples/functions."""
import json
import re

from conftest import record, report


def test_calls_stats_chrome_on_real_returns(functions, toolchain, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.add", "r:main.add", "main.greet", "r:main.greet",
            "--", functions, "3"])
    calls = report(["--calls", trace]).stdout.splitlines()[1:]
    adds = [l.split() for l in calls if " main.add " in l]
    assert len(adds) == 3
    # the result's name in DWARF: ~r0, gccgo's $retN (N its own count)
    r0 = (lambda v: re.sub(r"^\$ret\d+=", "~r0=", v)) if toolchain.gccgo else str
    for a in adds:
        assert a[-3:-1] == ["y=13", "->"] and r0(a[-1]) == "~r0=55"
        assert a[4].endswith(("ns", "us", "ms"))
    greets = [l for l in calls if " main.greet " in l]
    assert [r0(g.split()[-1]) for g in greets] == ["~r0=5", "~r0=6", "~r0=7"]
    # a return sees its entry's arguments
    assert report(["--count", "-f", "kind == \"return\" && n == 1 && retval == 6",
                   trace]).stdout.strip() == "1"
    assert report(["--count", "-f", "latency > 0ns", trace]).stdout.strip() == "6"
    st = report(["stats", "--no-hist", trace]).stdout.splitlines()
    assert [r.split()[:2] for r in st[1:]] == [["main.add", "3"], ["main.greet", "3"]]
    doc = json.loads(report(["--format", "chrome", trace]).stdout)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    # one track: goroutine 1, or gccgo's thread (no goroutine ids)
    assert len(xs) == 6 and len({e["tid"] for e in xs}) == 1
    assert xs[0]["tid"] != 1 if toolchain.gccgo else xs[0]["tid"] == 1
    assert "unpaired" not in report([trace]).stderr
