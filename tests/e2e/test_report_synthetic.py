"""gotrace-report on synthetic traces written with libgtr's writer
(tests/bench/report_gen.c): every output format read back by a real
consumer (json, csv, a Chrome trace checker), pairing, stats, time windows,
filter errors, progress and flat memory. No BPF needed."""
import csv
import io
import json
import os
import subprocess

import pytest

from conftest import REPORT, ROOT, report

T0 = 1000000000000        # monotonic ns of the first event
ITER = 30                 # iterations of the "calls" scenario


@pytest.fixture(scope="session")
def gen(tmp_path_factory):
    """Builds tests/bench/report_gen.c against the built libgtr objects."""
    out = str(tmp_path_factory.mktemp("gen") / "report_gen")
    objs = [os.path.join(ROOT, "build", "format", f)
            for f in sorted(os.listdir(os.path.join(ROOT, "build", "format")))
            if f.endswith(".o")]
    subprocess.run(["gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "format"),
                    "-o", out, os.path.join(ROOT, "tests/bench/report_gen.c"), *objs,
                    "-lcbor", "-lzstd", "-pthread"], check=True)
    return out


@pytest.fixture(scope="session")
def calls(gen, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("calls") / "calls.gtr")
    subprocess.run([gen, "calls", path, str(ITER)], check=True)
    return path


def lines(args):
    return report(args).stdout.splitlines()


def add_latency_us(i):
    return 100 + 100 * (i % 10)


# ------------------------------------------------------------ text

def test_text_entries_returns_and_latency(calls):
    out = lines([calls])
    assert out[0].split() == ["PID", "TID", "COMM", "FUNC", "-"]
    body = out[1:]
    assert len(body) == ITER * 7 + 2
    assert body[0].split()[3:] == ["main.add", "a=0", "b=0", 'name="name-0"(len=6)']
    assert body[3].endswith("main.fib         <- (10.000us) ~r0=1")
    assert body[5].endswith("<- (100.000us) ~r0=0")
    assert body[6].endswith("log: done 0")                # the probe's format string
    assert body[-2].endswith("<- (no entry) ~r0=-1")


def test_time_columns(calls):
    out = lines(["-t", "--limit", "2", calls])
    assert out[0].startswith("TIME       PID")
    assert out[1].split()[0] == "0.000000" and out[2].split()[0] == "0.000010"
    env = dict(os.environ, TZ="UTC")
    p = subprocess.run([REPORT, "-T", "-t", "--limit", "2", calls], capture_output=True,
                       text=True, env=env, check=True)
    rows = p.stdout.splitlines()
    assert rows[0].startswith("TIME            TIME       PID")
    assert rows[2].split()[:2] == ["12:00:00.000010", "0.000010"]


def test_calls_view(calls):
    out = lines(["--calls", calls])
    assert out[0].split() == ["PID", "TID", "COMM", "FUNC", "LATENCY", "-"]
    adds = [l for l in out if "main.add" in l]
    assert len(adds) == ITER + 2
    assert adds[1].split()[4:] == ["200.000us", "a=1", "b=2", 'name="name-1"(len=6)', "->", "~r0=3"]
    assert adds[-2].split()[4:] == ["?", "?", "->", "~r0=-1"]
    assert adds[-1].split()[4:] == ["open", "a=-5", "b=-6", 'name="open"(len=4)', "->", "?"]
    logs = [l for l in out if "main.log" in l]
    assert logs[0].split()[4:] == ["-", "log:", "done", "0"]


def test_unpaired_counted_on_stderr(calls):
    p = report([calls])
    assert "1 return(s) without entry" in p.stderr
    assert "1 still open at the end" in p.stderr


# ------------------------------------------------------------ JSON Lines

def test_jsonl_read_back(calls):
    evs = [json.loads(l) for l in lines(["--format", "jsonl", calls])]
    assert len(evs) == ITER * 7 + 2
    rets = [e for e in evs if e["kind"] == "return" and e["func"] == "main.add"]
    assert [e["latency_ns"] for e in rets[:ITER]] == [add_latency_us(i) * 1000 for i in range(ITER)]
    assert rets[-1]["latency_ns"] is None and rets[-1]["goargs"] == [-1]
    assert rets[0]["args"] == {"~r0": 0}      # a return's values are its results
    ent = evs[0]
    assert ent["args"] == {"a": 0, "b": 0, "name": "name-0"} and "latency_ns" not in ent
    assert {e["goid"] for e in evs} == {1, 2, 3, 7, 8}


def test_jsonl_calls(calls):
    cs = [json.loads(l) for l in lines(["--format", "jsonl", "--calls", calls])]
    st = {}
    for c in cs:
        assert c["kind"] == "call"
        st[c["status"]] = st.get(c["status"], 0) + 1
    assert st == {"returned": ITER * 3, "no_return_probe": ITER, "no_entry": 1, "open": 1}
    add = [c for c in cs if c["func"] == "main.add" and c["status"] == "returned"][4]
    assert add["args"] == {"a": 4, "b": 8, "name": "name-4"} and add["rets"] == {"~r0": 12}
    assert add["latency_ns"] == 500000 and add["ts_ns"] == T0 + 4 * 1000000


# ------------------------------------------------------------ CSV

def test_csv_read_back(calls):
    raw = subprocess.run([REPORT, "--format", "csv", calls], capture_output=True, check=True).stdout
    assert raw.count(b"\r\n") == ITER * 7 + 3 and raw.count(b"\n") == ITER * 7 + 3
    rows = list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
    assert list(rows[0].keys()) == ["ts_ns", "pid", "tid", "goid", "comm", "func", "kind",
                                    "latency_ns", "v1", "v2", "v3"]
    assert len(rows) == ITER * 7 + 2
    assert rows[0]["v3"] == "name-0" and rows[0]["latency_ns"] == ""
    assert rows[5]["kind"] == "return" and rows[5]["latency_ns"] == "100000"
    assert rows[1]["comm"] == "app" and rows[7]["comm"] == "app-worker"


# ------------------------------------------------------------ Chrome

def check_chrome(doc):
    """Validates a Chrome trace: complete events nest properly per track
    (pid, tid), instants and metadata are well-formed. Returns the X events."""
    assert isinstance(doc["traceEvents"], list)
    tracks = {}
    names = set()
    process_names = {}
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid"} <= set(e), e
        if e["ph"] == "M":
            names.add((e["pid"], e["tid"], e["name"]))
            if e["name"] == "process_name":
                assert e["pid"] not in process_names, "two names for process %d" % e["pid"]
                process_names[e["pid"]] = e["args"]["name"]
            continue
        assert isinstance(e["ts"], (int, float))
        if e["ph"] == "X":
            assert e["dur"] >= 0
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
        else:
            assert e["ph"] == "i"
    for key, evs in tracks.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 1e-9:
                stack.pop()
            if stack:
                top = stack[-1]
                assert e["ts"] + e["dur"] <= top["ts"] + top["dur"] + 1e-9, \
                    "overlapping slices on track %s: %s and %s" % (key, top, e)
            stack.append(e)
        assert (key[0], key[1], "thread_name") in names
        assert key[0] in process_names
    return [e for t in tracks.values() for e in t]


def test_chrome_nesting_per_goroutine(calls):
    doc = json.loads(report(["--format", "chrome", calls]).stdout)
    xs = check_chrome(doc)
    assert len(xs) == ITER * 3 + 1          # paired calls and the open one
    assert {e["tid"] for e in xs} == {1, 2, 3, 8}
    add = [e for e in xs if e["name"] == "main.add" and e["args"]["goargs"][0] == 4][0]
    assert add["ts"] == 4000.0 and add["dur"] == 500.0
    inner = [e for e in xs if e["name"] == "main.fib" and e["tid"] == add["tid"]
             and add["ts"] <= e["ts"] < add["ts"] + add["dur"]]
    assert len(inner) == 2
    openc = [e for e in xs if e["args"].get("status") == "open"]
    assert len(openc) == 1 and openc[0]["tid"] == 8
    assert [e for e in xs if "status" in e["args"]] == openc   # paired calls have none


# ------------------------------------------------------------ folded

def test_folded_stacks(calls):
    out = lines(["--format", "folded", calls])
    got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in out}
    add_total = sum(add_latency_us(i) for i in range(ITER)) * 1000
    assert got == {"main.add": add_total - ITER * 30000,
                   "main.add;main.fib": ITER * 20000,
                   "main.add;main.fib;main.fib": ITER * 10000}


# ------------------------------------------------------------ stats

def test_stats_table_and_histograms(calls):
    out = report(["stats", calls]).stdout
    rows = out.splitlines()
    assert rows[0].split() == ["FUNC", "CALLS", "RATE/s", "P50", "P90", "P99", "MAX"]
    add = [r for r in rows if r.startswith("main.add ")][0].split()
    assert add[1] == str(ITER + 1)
    assert add[3:] == ["500.000us", "900.000us", "1.000ms", "1.000ms"]
    fib = [r for r in rows if r.startswith("main.fib ")][0].split()
    assert fib[1] == str(2 * ITER) and fib[3] == "10.000us" and fib[6] == "30.000us"
    assert "     usecs               : count    distribution" in rows
    assert max(len(r) for r in rows) < 80
    assert any(r.strip().startswith("512 -> 1023") for r in rows)


def test_stats_by(calls):
    out = report(["stats", "--by", "goid", "--no-hist", calls]).stdout.splitlines()
    assert out[0].split()[:3] == ["FUNC", "goid", "CALLS"]
    adds = {r.split()[1]: r.split()[2] for r in out if r.startswith("main.add ")}
    assert adds == {"1": "10", "2": "10", "3": "10", "7": "1", "8": "1"}
    out = report(["stats", "--by", "name", "--no-hist", "-f", "func == \"main.add\"", calls]).stdout
    assert '"name-4"' in out
    p = report(["stats", "--by", "goarg0", calls], check=False)
    assert p.returncode == 2 and "goarg1 to goarg32" in p.stderr


# ------------------------------------------------------------ selection

def test_filters_on_real_file(calls):
    def count(*f):
        args = ["--count"]
        for x in f:
            args += ["-f", x]
        return int(report(args + [calls]).stdout)
    assert count("latency > 500us") == 5 * ITER // 10      # add: 600..1000us
    assert count("func == \"main.add\" && kind == \"return\" && goarg1 in (1, 2, 3)") == 3
    assert count("glob(func, \"main.f*\")") == 4 * ITER
    # entries and their returns (which see the entry's arguments)
    assert count("name =~ \"^name-1[0-9]$\"") == 20
    assert count("goid == 2", "kind == \"entry\"") == 4 * 10
    assert count("cpu == 0") == 7 * 10               # tid 100 -> cpu 0
    assert count("binary == \"/srv/app\"") == 7 * ITER + 2
    assert count("ts >= 5ms && ts < 6ms") == 7
    assert count("ts >= 2024-05-01T12:00:00.005Z && ts < 12:00:00.006") == 7
    assert count("retval == 12") == 1
    assert count("a == 4 && kind == \"return\" && latency == 500us") == 1


def test_since_until_limit(calls):
    assert int(report(["--count", "--since", "+5ms", "--until", "+5.95ms", calls]).stdout) == 7
    assert int(report(["--count", "--since", "12:00:00.010", calls]).stdout) == 7 * (ITER - 10) + 2 + 1  # add(9) returns at 10ms
    assert int(report(["--count", "--until", "2024-05-01T12:00:00.001Z", calls]).stdout) == 8  # inclusive
    assert len(lines(["--limit", "5", calls])) == 6
    assert len(lines(["--calls", "--limit", "3", calls])) == 4
    p = report(["--since", "5s", calls], check=False)
    assert p.returncode == 2 and "--since" in p.stderr and "+DURATION" in p.stderr


def test_filter_error_has_caret(calls):
    p = report(["-f", "goarg1 == 1 && latency > 10 ms", calls], check=False)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "gotrace-report: bad filter: expected '&&', '||' or end of filter, found 'ms' at column 29",
        "  goarg1 == 1 && latency > 10 ms",
        "                              ^"]
    p = report(["-f", "name == 5", calls], check=False)
    assert p.returncode == 2 and "cannot compare 'name' (a string in main.add) with an integer" in p.stderr


def test_usage_errors(calls):
    p = report(["--format", "csv", "--calls", calls], check=False)
    assert p.returncode == 2 and "--calls" in p.stderr
    p = report(["--format", "xml", calls], check=False)
    assert p.returncode == 2 and "chrome" in p.stderr
    p = report(["--limit", "x", calls], check=False)
    assert p.returncode == 2 and "'x'" in p.stderr


def test_progress_bar(calls):
    p = subprocess.run([REPORT, "--progress", "--count", calls], capture_output=True, check=True)
    assert b"\r" + b"gotrace-report: [" + b"#" * 40 + b"] 100%" in p.stderr
    assert "100%" not in report(["--count", calls]).stderr   # not a terminal


def maxrss_kib(args):
    pr = subprocess.Popen([REPORT, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(pr.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return ru.ru_maxrss


def test_memory_is_flat(gen, tmp_path):
    small, big = str(tmp_path / "s.gtr"), str(tmp_path / "b.gtr")
    subprocess.run([gen, "calls", small, "2000"], check=True)
    subprocess.run([gen, "calls", big, "60000"], check=True)
    for args in (["--calls"], ["--format", "chrome"], ["stats"], ["--format", "jsonl"]):
        a = args if args[0] != "stats" else ["stats"]
        s = maxrss_kib(a + [small])
        b = maxrss_kib(a + [big])
        assert b < s + 4096, (args, s, b)   # 30x the events, < 4 MiB more


# ------------------------------------------------------------ calls, limits, damage

def test_calls_count_counts_rows(calls):
    for extra in ([], ["-f", "func == \"main.add\""], ["--since", "+5ms"]):
        rows = len(lines(["--calls", *extra, calls])) - 1
        got = int(report(["--calls", "--count", *extra, calls]).stdout)
        assert got == rows, extra
    assert int(report(["--calls", "--count", calls]).stdout) < \
        int(report(["--count", calls]).stdout)


def test_calls_window_is_by_entry(calls):
    out = lines(["--calls", "-t", "--since", "+5ms", "--until", "+6ms", calls])
    times = [float(l.split()[0]) for l in out[1:]]
    assert times, out
    assert all(0.005 <= t <= 0.006 for t in times), times


def test_limit_is_refused_where_it_cannot_apply(calls):
    for args in (["stats", "--limit", "2"], ["--format", "folded", "--limit", "2"]):
        p = report([*args, calls], check=False)
        assert p.returncode == 2, args
        assert "--limit counts printed events and calls" in p.stderr, p.stderr
    for bad in ("-1", "abc", "0", "+3", " -1", " 5"):
        p = report(["--limit", bad, calls], check=False)
        assert p.returncode == 2
        assert "invalid --limit '%s': expected an integer from 1" % bad in p.stderr


def test_zero_offset_needs_no_unit(calls):
    assert report(["--count", "--until", "+0", calls]).stdout == \
        report(["--count", "--until", "+0s", calls]).stdout == "1\n"


def test_cut_file_says_cut_and_damage_says_what_is_missing(calls, tmp_path):
    data = open(calls, "rb").read()
    cut = tmp_path / "cut.gtr"
    cut.write_bytes(data[:-1])
    p = report(["--count", str(cut)])
    assert "ends in the middle of a block" in p.stderr
    assert "was not closed" not in p.stderr
    # damage inside the first events block: its events are counted as missing
    off = 16
    while data[off + 4:off + 8] != b"\x04\x00\x00\x00":   # block type 4: events
        off += 16 + int.from_bytes(data[off + 8:off + 12], "little")
    bad = bytearray(data)
    bad[off + 20] ^= 0xff
    dmg = tmp_path / "dmg.gtr"
    dmg.write_bytes(bytes(bad))
    p = report(["--count", str(dmg)])
    total = int(report(["--count", calls]).stdout)
    got = int(p.stdout)
    assert got < total
    assert ("%d of the %d events gotrace-record wrote were in damaged blocks" % (total - got, total)) \
        in p.stderr


def test_by_unknown_field_warns_in_its_own_words(calls):
    p = report(["stats", "--by", "nosuch", calls])
    assert "named 'nosuch'; every event falls in its \"-\" group" in p.stderr
    assert "comparisons" not in p.stderr


def test_standard_input(calls):
    data = open(calls, "rb").read()
    for args in ([], ["stats"], ["--format", "jsonl", "--calls"], ["--count", "-f", "a == 4"]):
        sub, rest = (args[:1], args[1:]) if args[:1] == ["stats"] else ([], args)
        piped = subprocess.run([REPORT, *sub, *rest, "-"], input=data, capture_output=True,
                               check=True)
        direct = subprocess.run([REPORT, *sub, *rest, calls], capture_output=True, check=True)
        assert piped.stdout == direct.stdout, args
    info = subprocess.run([REPORT, "info", "-"], input=data, capture_output=True, check=True)
    assert info.stdout.startswith(b"file:        standard input\n")
    cut = subprocess.run([REPORT, "--count", "-"], input=data[:-1], capture_output=True,
                         check=True)
    assert b"standard input ends in the middle of a block" in cut.stderr
    bad = subprocess.run([REPORT, "-"], input=b"hello", capture_output=True)
    assert bad.returncode == 1 and b"standard input: not a gotrace trace" in bad.stderr


def test_by_errors_point_at_the_problem(calls):
    p = report(["stats", "--by", "len(", calls], check=False)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "gotrace-report: bad --by field: expected a field in len() after '(' at column 5",
        "  len(",
        "      ^"]
