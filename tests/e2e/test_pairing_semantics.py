"""What pairing may claim when the recorder kept only part of a function's
events: a record-time predicate on its entry or return probe, a rate limit
(spec/PROBES.md, "Whole calls"), on every toolchain of the matrix."""
import collections
import glob
import json

import pytest

from conftest import build_fails, record, report

INLINE = "tests/fixtures/inline/main.go"


def jsonl(path):
    return [json.loads(l) for l in report(["--format", "jsonl", path]).stdout.splitlines()]


def calls(path, *args):
    r = report(["--calls", "--format", "jsonl", *args, path])
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()], r.stderr


@pytest.mark.parametrize("goarch", ["amd64", "386"])
def test_an_entry_predicate_with_a_return_probe_keeps_whole_calls(gobuild, toolchain, tmp_path,
                                                                    goarch):
    """rec(1000) recursing to 0 on four goroutines, whose stacks grow (and
    move) while the outer calls run; the predicate keeps the entries of
    depth 996..1000 and the return probe the returns of those calls only:
    each is paired with its own return, the result the same recording
    without the predicate gives it (a return of depth 0 would be 0). A
    call's key holds g.stack.hi - SP and the goid, read from runtime.g
    with the word size of the build: 386 too (gccgo: amd64 only, no 386
    libgo in the matrix)."""
    if toolchain.gccgo and goarch == "386":
        build_fails(toolchain, "tests/fixtures/recurse/main.go", goarch="386")
        return
    exe = gobuild("tests/fixtures/recurse/main.go", "recurse-" + goarch, goarch=goarch)
    trace = str(tmp_path / "p.gtr")
    p = record(["-o", trace, "main.rec (depth > 995)", "r:main.rec", "--", exe])
    assert "note: probe" not in p.stderr
    got, err = calls(trace)
    assert collections.Counter(c["status"] for c in got) == {"returned": 20}
    assert "not paired" not in err
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert [(p["kind"], p.get("predicate"), p.get("whole_calls")) for p in info["probes"]] == \
        [("entry", "depth > 995", None), ("return", None, True)]
    assert info["suppressed"] == 0

    # The same calls from both probes without the predicate, filtered at
    # report time: each depth returns what it returned above.
    whole = str(tmp_path / "all.gtr")
    record(["-q", "-o", whole, "main.rec", "r:main.rec", "--", exe])
    every, err = calls(whole, "-f", "depth > 995")
    assert collections.Counter(c["status"] for c in every) == {"returned": 20}
    assert "not paired" not in err
    results = [sorted((c["args"]["depth"], c["goret"][0]) for c in g) for g in (got, every)]
    assert results[0] == results[1]
    assert sorted(d for d, _ in results[0]) == sorted(list(range(996, 1001)) * 4)
    assert all(r != 0 for _, r in results[0])
    # gccgo: no goroutine ids, calls are marked and paired by thread
    for g in ({c["goid"] for c in got} if not toolchain.gccgo else ()):
        mine = sorted((c["args"]["depth"], c["latency_ns"]) for c in got if c["goid"] == g)
        assert [d for d, _ in mine] == list(range(996, 1001))
        lat = [l for _, l in mine]
        assert lat == sorted(lat), "an outer call lasts longer than the calls it makes"


def test_whole_calls_after_a_recovered_panic(gobuild, toolchain, tmp_path):
    """f(i) panics on even i and its caller recovers, so half the calls
    never return. The note such a call left is the next call's to
    overwrite: no return is kept for a call left out, nor paired with a
    panicked call's entry (f(1000) showed f(1001)'s result)."""
    exe = gobuild("tests/fixtures/recovered/main.go", "recovered")
    trace = str(tmp_path / "p.gtr")
    record(["-q", "-o", trace, "main.f (i < 1001)", "r:main.f", "--", exe, "3000"])
    got, _ = calls(trace)
    done = sorted(c["goargs"][0] for c in got if c["status"] == "returned")
    assert done == list(range(1, 1001, 2))
    assert all(c["goret"][0] == 10 * c["goargs"][0] for c in got if c["status"] == "returned")
    assert all(c["goargs"][0] % 2 == 0 for c in got if c["status"] != "returned")
    assert "no_entry" not in {c["status"] for c in got}
    # a rate limit of 49 a second: the 49th of a window may be even
    trace = str(tmp_path / "r.gtr")
    record(["-q", "-o", trace, "-r", "49", "main.f", "r:main.f", "--", exe, "2s"])
    got, _ = calls(trace)
    kept = [c for c in got if c["status"] == "returned"]
    assert len(kept) >= 40
    for c in got:
        if c["status"] == "returned":
            assert c["goargs"][0] % 2 == 1 and c["goret"][0] == 10 * c["goargs"][0], c
        else:
            assert c["goargs"] and c["goargs"][0] % 2 == 0, c
    info = json.loads(report(["info", "--json", trace]).stdout)
    per = {}
    for l in info["losses"]:
        per[l["probe"]] = per.get(l["probe"], 0) + l["count"]
    # each call left out by the limit counts once, at its entry
    assert per[0] > 1000 and 1 not in per, per


def test_whole_calls_in_flight_by_the_thousand(gobuild, toolchain, tmp_path):
    """40 goroutines each hold 1001 calls of rec in flight, 40,040 in all,
    and the predicate keeps 3 of each: only kept calls are noted, so the
    calls left out never push a kept one's note out (24 kept calls lost
    their returns when every call left a note). On gccgo calls are noted
    by thread, and a goroutine that waited may go on on another: what it
    pairs is right, and a call is never shown with another's result."""
    exe = gobuild("tests/fixtures/inflight/main.go", "inflight")
    trace = str(tmp_path / "f.gtr")
    p = record(["-q", "-o", trace, "main.rec (depth > 997)", "r:main.rec",
                "--", exe, "40", "1000"])
    assert p.stdout.split() == ["40040"]
    got, _ = calls(trace)
    for c in got:
        assert c["args"]["depth"] > 997, c
        if c["status"] == "returned":
            assert c["goret"][0] == c["args"]["depth"] + 1, c
    status = collections.Counter(c["status"] for c in got)
    if not toolchain.gccgo:
        assert status == {"returned": 120}, status


def test_whole_calls_need_one_return_probe_without_a_predicate(gobuild, toolchain, tmp_path):
    """Two return probes of one function (a glob matching it again, or a
    second one with a predicate) would race for each call's note: the
    function is not recorded as whole calls, and pairs as without."""
    exe = gobuild("tests/fixtures/recurse/main.go", "recurse")
    trace = str(tmp_path / "two.gtr")
    p = record(["-o", trace, "main.rec (depth > 995)", "r:main.rec", "r:main.rec (retval >= 0)",
                "--", exe])
    assert "note: probe 'main.rec (depth > 995)': its predicate keeps the entries" in p.stderr
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert not any(p.get("whole_calls") for p in info["probes"]), info["probes"]
    got, err = calls(trace)
    assert {c["status"] for c in got} == {"unpaired"}
    assert "calls of main.rec are not paired" in err
    # a limit on more calls than the program makes leaves nothing out
    trace = str(tmp_path / "lim.gtr")
    record(["-q", "-o", trace, "-r", "100000", "main.rec (depth > 995)", "r:main.rec", "--",
            exe])
    got, err = calls(trace)
    assert collections.Counter(c["status"] for c in got) == {"returned": 20}
    assert "suppressed" not in err
    assert json.loads(report(["info", "--json", trace]).stdout)["suppressed"] == 0


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


def test_rate_limited_calls_are_kept_whole(gobuild, toolchain, tmp_path):
    """add(42, i) as fast as it goes, 50 entries kept per second and the
    returns of those calls only: every call kept is paired (each returns
    42 + i: a wrong pair would show), none 'lost' at a window's edge;
    before, the entry and return probes' windows drifted apart and calls
    at each edge kept one half only."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "r.gtr")
    record(["-q", "-o", trace, "-r", "50", "main.add", "r:main.add", "--", exe, "2s"])
    got, err = calls(trace)
    status = collections.Counter(c["status"] for c in got)
    assert set(status) == {"returned"}, status
    assert 50 <= status["returned"] <= 150, status
    for c in got:
        assert c["goret"][0] == 42 + c["goargs"][1], c
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert [(p["kind"], p.get("rate_limit"), p.get("whole_calls")) for p in info["probes"]] == \
        [("entry", 50, None), ("return", None, True)]
    # the calls left out are counted once, at their entries
    per = {}
    for l in info["losses"]:
        assert l["reason"] == "rate-limit", l
        per[l["probe"]] = per.get(l["probe"], 0) + l["count"]
    assert per[0] > 1000 and 1 not in per, per
    # a selection no longer shows every kept event: no windows from it
    sel = str(tmp_path / "sel.gtr")
    report(["-w", sel, "-f", "goarg2 < 1000000", trace])
    assert '"rate_limit":' not in report(["info", "--json", sel]).stdout
    assert '"rate_limit":50' in report(["info", "--json", trace]).stdout
    for c in calls(sel)[0]:
        assert c["status"] != "returned" or c["goret"][0] == 42 + c["goargs"][1], c


def test_rate_limit_windows_carry_into_rotated_files(gobuild, toolchain, tmp_path):
    """The later files of a rotation do not hold the events their first
    windows began with: each carries the entry probe's window current when
    it began (rate_window_*), and says again that the return probe kept
    whole calls, so that its report, read alone, pairs every call kept and
    counts the rest as suppressed, not as lost from the ring buffer (the
    drop records' second-long spans made every call of a later file
    'lost'), nor lost at a window's edge (in CI, 52 of 176 calls were,
    when the return probe had windows of its own). Rotates at 1000 bytes,
    so that go1.19 and gccgo builds, whose hot loop writes less in a
    second, rotate too."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    rot = str(tmp_path / "rot.gtr")
    record(["-q", "-o", rot, "-C", "1000", "-r", "50", "main.add", "r:main.add", "--",
            exe, "3s"])
    first = json.loads(report(["info", "--json", rot]).stdout)
    assert [(p.get("rate_limit"), p.get("whole_calls")) for p in first["probes"]] == \
        [(50, None), (None, True)]
    assert all("rate_window_kept" not in p for p in first["probes"])
    info = json.loads(report(["info", "--json", rot + "1"]).stdout)
    entry, ret = info["probes"]
    assert entry["rate_limit"] == 50 and 1 <= entry["rate_window_kept"] <= 50, entry
    assert entry["rate_window_ns"] <= entry["rate_window_last_ns"], entry
    assert "rate_limit" not in ret and ret["whole_calls"], ret
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
        assert set(status) <= {"returned", "open", "no_entry"}, (path, status)
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
    assert total["returned"] >= 40, total
    err = errs[rot + "1"]
    assert "event(s) were suppressed by the recorder's --rate-limit in " in err, err


def test_a_glob_leaves_a_function_to_the_probe_that_names_it(gobuild, toolchain, tmp_path):
    """A glob matching a function another probe of its kind names
    ('main.*' with 'main.add "%d"', in either order) or took before it
    (a second glob) leaves it to that probe, and says so: each call is
    recorded once, by that probe, paired once, counted once. Two probes
    that name one function both record it, and the recorder warns that
    calls count once per probe."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "one.gtr")
    named = 'main.add "%d" goarg2'
    left = "probe '%s': main.add is left to the %s probe that names it or took it first, " \
        "so that each call is recorded once"
    for probes, notes, by in (
            ([named, "main.*", "r:main.*", "r:main.add"],
             [("main.*", "entry"), ("r:main.*", "return")], named),
            (["main.*", "main.a*", named, "r:main.add"],
             [("main.*", "entry"), ("main.a*", "entry")], named),
            (["main.*", "main.a*", "r:main.add"], [("main.a*", "entry")], "main.*")):
        p = record(["-f", "-o", trace, *probes, "--", exe, "5"])
        for note in notes:
            assert left % note in p.stderr, (probes, p.stderr)
        assert "more than one" not in p.stderr, p.stderr
        got, _ = calls(trace, "-f", 'func == "main.add"')
        assert collections.Counter(c["status"] for c in got) == {"returned": 5}
        assert sorted(c["goargs"][1] for c in got) == [0, 1, 2, 3, 4]
        spec = {p["id"]: p["spec"] for p in
                json.loads(report(["info", "--json", trace]).stdout)["probes"]}
        assert collections.Counter((spec[e["probe"]], e["kind"]) for e in jsonl(trace)
                                   if e["func"] == "main.add") == \
            {(by, "entry"): 5, ("r:main.add", "return"): 5}
        stats = report(["stats", "--no-hist", trace]).stdout
        assert [l.split()[1] for l in stats.splitlines() if l.startswith("main.add ")] == \
            ["5"], stats
    p = record(["-f", "-o", trace, named, "main.add (goarg2 < 3)", "r:main.add", "--", exe, "5"])
    assert "warning: main.add has more than one entry probe ('main.add \"%d\" goarg2', " \
        "'main.add (goarg2 < 3)'): a call is recorded once per probe, so " \
        "gotrace-report's calls and stats count it more than once; put its values in " \
        "one probe\n" in p.stderr, p.stderr


def test_overlapping_globs_take_methods_and_inlined_copies_once(gobuild, functions, toolchain,
                                                                tmp_path):
    """A pointer receiver's method named exactly ('main.(*T).M': a '*' in
    an exact name; gccgo's symbol spells it otherwise) is left to that
    probe by a glob before it; an inlined copy a glob took is not taken
    again by a second glob; overlapping return globs record as one does
    (a copy has no return probe)."""
    trace = str(tmp_path / "m.gtr")

    method = "main.T.M" if toolchain.gccgo else "main.(*T).M"
    record(["-q", "-f", "-o", trace, "main.(*T).M", "--", functions, "2"])
    once = len(jsonl(trace))
    assert once > 0
    p = record(["-f", "-o", trace, "main.*", "main.(*T).M", "--", functions, "2"])
    assert "probe 'main.*': %s is left to the entry probe" % method in p.stderr, p.stderr
    assert len([e for e in jsonl(trace) if e["func"] == method]) == once
    assert "more than one" not in p.stderr

    exe = gobuild(INLINE, "inline")
    record(["-q", "-f", "-o", trace, "main.*", "--", exe, "x"])
    alone = collections.Counter(e["func"] for e in jsonl(trace))
    p = record(["-f", "-o", trace, "main.*", "main.b*", "--", exe, "x"])
    assert collections.Counter(e["func"] for e in jsonl(trace)) == alone, p.stderr
    p = record(["-f", "-o", trace, "r:main.*", "r:main.b*", "--", exe, "x"])
    assert p.returncode == 0 and "probe 'r:main.b*': main.bump is left" in p.stderr, p.stderr
