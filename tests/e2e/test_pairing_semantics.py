"""What pairing may claim when the recorder kept only part of a function's
events: a record-time predicate on its entry or return probe (spec/PROBES.md),
on every toolchain of the matrix."""
import collections
import glob
import json

from conftest import record, report


def calls(path, *args):
    r = report(["--calls", "--format", "jsonl", *args, path])
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()], r.stderr


def test_an_entry_predicate_with_a_return_probe_pairs_nothing(gobuild, toolchain, tmp_path):
    """rec(1000) recursing to 0 on four goroutines; the predicate keeps the
    entries of depth 996..1000 and the kernel keeps every return: pairing
    them would give depth 996 the result of depth 0. None is paired."""
    exe = gobuild("tests/fixtures/recurse/main.go", "recurse")
    trace = str(tmp_path / "p.gtr")
    p = record(["-o", trace, "main.rec (depth > 995)", "r:main.rec", "--", exe])
    assert ("gotrace-record: note: probe 'main.rec (depth > 995)': its predicate keeps the "
            "entries of the calls it holds for, not their returns, so gotrace-report shows "
            "the entries and returns of main.rec alone, not paired into calls; to time the "
            "calls it selects, leave the predicate out and filter the report: "
            "gotrace-report -f 'depth > 995'\n") in p.stderr
    got, err = calls(trace)
    assert collections.Counter(c["status"] for c in got) == {"unpaired": 4 * 5 + 4004}
    assert all(c["latency_ns"] is None for c in got)
    entries = [c["args"]["depth"] for c in got if c["args"]]
    assert sorted(entries) == sorted(list(range(996, 1001)) * 4)
    assert len([c for c in got if c["rets"]]) == 4004
    assert err.count("gotrace-report: note: calls of main.rec are not paired: probe "
                     "'main.rec (depth > 995)' had the record-time predicate 'depth > 995'") == 1
    text = report(["--calls", trace]).stdout.splitlines()[1:]
    assert len(text) == 4024 and all(l.split()[4] == "unpaired" for l in text)
    assert '"predicate":"depth > 995"' in report(["info", "--json", trace]).stdout

    # The way the notes point to: both probes without the predicate, the
    # filter at report time; each call is paired with its own return.
    trace = str(tmp_path / "all.gtr")
    record(["-q", "-o", trace, "main.rec", "r:main.rec", "--", exe])
    got, err = calls(trace, "-f", "depth > 995")
    assert collections.Counter(c["status"] for c in got) == {"returned": 20}
    assert sorted(c["args"]["depth"] for c in got) == sorted(list(range(996, 1001)) * 4)
    # gccgo: no goroutine ids, calls are paired by thread
    for g in ({c["goid"] for c in got} if not toolchain.gccgo else ()):
        mine = sorted((c["args"]["depth"], c["latency_ns"]) for c in got if c["goid"] == g)
        assert [d for d, _ in mine] == list(range(996, 1001))
        lat = [l for _, l in mine]
        assert lat == sorted(lat), "an outer call lasts longer than the calls it makes"
    assert "not paired" not in err


def test_a_return_predicate_with_an_entry_probe_pairs_nothing(gobuild, toolchain, tmp_path):
    """Every entry of add(42, i) is kept, the returns of results above 1037
    only: the other entries are not 'exited', and no return closes them."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "r.gtr")
    p = record(["-o", trace, "main.add", "r:main.add (retval > 1037)", "--", exe, "1000"])
    assert "gotrace-record: note: probe 'r:main.add (retval > 1037)': its predicate keeps " \
        "the returns of the calls it holds for, not their entries" in p.stderr
    got, err = calls(trace)
    assert collections.Counter(c["status"] for c in got) == {"unpaired": 1004}
    assert sorted(c["goret"][0] for c in got if c["goret"]) == [1038, 1039, 1040, 1041]
    assert "left out the returns of the calls it did not hold for but not their entries" in err
    assert "exited" not in err.split("not paired")[0]
    # a predicate on a probe without the other kind pairs as ever
    trace = str(tmp_path / "e.gtr")
    p = record(["-o", trace, "main.add (goarg2 > 995)", "--", exe, "1000"])
    assert "note: probe" not in p.stderr
    got, err = calls(trace)
    assert collections.Counter(c["status"] for c in got) == {"no_return_probe": 4}
    assert "not paired" not in err


def test_rate_limited_calls_pair_where_no_suppression_can_lie(gobuild, toolchain, tmp_path):
    """add(42, i) as fast as it goes, 50 entries and 50 returns kept per
    second: the calls kept whole before either probe's window filled are
    paired (each returns 42 + i: a wrong pair would show), the rest are
    'lost'; before, the second-long suppression spans made every one lost."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "r.gtr")
    record(["-q", "-o", trace, "-r", "50", "main.add", "r:main.add", "--", exe, "2s"])
    got, err = calls(trace)
    status = collections.Counter(c["status"] for c in got)
    assert status["returned"] >= 40, status
    assert set(status) <= {"returned", "lost"}, status
    for c in got:
        if c["status"] == "returned":
            assert c["goret"][0] == 42 + c["goargs"][1], c
    # a selection no longer shows every kept event: no windows from it
    sel = str(tmp_path / "sel.gtr")
    report(["-w", sel, "-f", "goarg2 < 1000000", trace])
    assert '"rate_limit":' not in report(["info", "--json", sel]).stdout
    assert '"rate_limit":50' in report(["info", "--json", trace]).stdout
    for c in calls(sel)[0]:
        assert c["status"] != "returned" or c["goret"][0] == 42 + c["goargs"][1], c


def test_rate_limit_windows_carry_into_rotated_files(gobuild, toolchain, tmp_path):
    """The later files of a rotation do not hold the events their first
    windows began with: each carries, per probe, the window current when it
    began (rate_window_*), so that its report, read alone, pairs the calls
    kept whole before a window filled, as the first file's does, and
    counts the rest as suppressed, not as lost from the ring buffer (the
    drop records' second-long spans made every call of a later file
    'lost'), nor every call after a drop record that the events before
    it followed in the file. Rotates at 1000 bytes, so that go1.19 and
    gccgo builds, whose hot loop writes less in a second, rotate too."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    rot = str(tmp_path / "rot.gtr")
    record(["-q", "-o", rot, "-C", "1000", "-r", "50", "main.add", "r:main.add", "--",
            exe, "3s"])
    first = json.loads(report(["info", "--json", rot]).stdout)
    assert [p["rate_limit"] for p in first["probes"]] == [50, 50]
    assert all("rate_window_kept" not in p for p in first["probes"])
    info = json.loads(report(["info", "--json", rot + "1"]).stdout)
    assert [p["rate_limit"] for p in info["probes"]] == [50, 50], info["probes"]
    for p in info["probes"]:
        assert 1 <= p["rate_window_kept"] <= 50, p
        assert p["rate_window_ns"] <= p["rate_window_last_ns"], p
    assert info["suppressed"] > 0, info
    assert {l["reason"] for l in info["losses"]} == {"rate-limit"}, info["losses"]
    # Each later file holds what one read of the ring buffer brought, so
    # a window's kept calls may lie across two files: the calls of every
    # later file are counted together.
    total, errs = collections.Counter(), {}
    for path in sorted(glob.glob(rot + "[0-9]*")):
        got, err = calls(path)
        errs[path] = err
        status = collections.Counter(c["status"] for c in got)
        total.update(status)
        assert set(status) <= {"returned", "lost", "open", "no_entry"}, (path, status)
        # A file may end between a call's entry and its return: that call,
        # its goroutine's last, is open, and the next file begins with its
        # return, shown without its entry.
        first, last = {}, {}
        for c in got:
            key = (c["pid"], c["goid"])
            first[key] = min(first.get(key, c["ts_ns"]), c["ts_ns"])
            last[key] = max(last.get(key, 0), c["ts_ns"])
        for c in got:
            if c["status"] == "open":
                assert c["ts_ns"] == last[(c["pid"], c["goid"])], (path, c)
            if c["status"] == "no_entry":
                assert c["ts_ns"] == first[(c["pid"], c["goid"])], (path, c)
            if c["status"] == "returned":
                assert c["goret"][0] == 42 + c["goargs"][1], c
        if len(got) >= 20:
            assert status["returned"] > status["lost"], (path, status, err)
    assert total["returned"] >= 40, total
    assert 3 * total["lost"] < total["returned"], total
    err = errs[rot + "1"]
    assert "event(s) were suppressed by the recorder's --rate-limit in " in err, err
