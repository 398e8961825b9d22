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

from conftest import REPORT, build_with_libgtr, on_terminal, report

T0 = 1000000000000        # monotonic ns of the first event
ITER = 30                 # iterations of the "calls" scenario


@pytest.fixture(scope="session")
def gen(tmp_path_factory):
    """Builds tests/bench/report_gen.c against the built libgtr objects."""
    return build_with_libgtr(tmp_path_factory.mktemp("gen") / "report_gen",
                             "tests/bench/report_gen.c", opt="-O2")


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


# ------------------------------------------------------------ Perfetto

PERFETTO_ON_TERMINAL = ("gotrace-report: --format perfetto writes binary data and standard "
                        "output is a terminal; redirect it to a file (> trace.pftrace) or "
                        "into a pipe\n")


def test_perfetto_is_refused_on_a_terminal_whatever_the_inputs(calls):
    """Protobuf never reaches a terminal: one file, options after it,
    print, several files (merged), --follow, a filter, --calls, standard
    input; exit 2 before anything is read, naming what to do."""
    for argv in (["--format", "perfetto", calls], [calls, "--format=perfetto"],
                 ["print", "--format", "perfetto", calls],
                 ["--format", "perfetto", calls, calls],
                 ["--format", "perfetto", "--follow", calls],
                 ["--format", "perfetto", "-f", "pid > 0", "--calls", calls]):
        p = on_terminal([REPORT, *argv])
        assert (p.returncode, p.stderr.split("Try")[0]) == (2, PERFETTO_ON_TERMINAL), argv
    with open(calls, "rb") as f:
        p = on_terminal([REPORT, "--format", "perfetto", "-"], stdin=f)
    assert (p.returncode, p.stderr.split("Try")[0]) == (2, PERFETTO_ON_TERMINAL)
    # --count prints a number; into a pipe or a file the trace is written
    p = on_terminal([REPORT, "--format", "perfetto", "--count", calls])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = subprocess.run([REPORT, "--format", "perfetto", calls], capture_output=True,
                         timeout=60)
    assert out.returncode == 0 and len(out.stdout) > 100 and out.stdout[0] == 0x0a, out.stderr


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
    assert max(len(r) for r in rows) < 80
    # main.add's latencies: 100, 200, ... 1000 us, three times each
    i = rows.index("main.add: 30 calls returned, latency min 100.000us avg 550.000us max 1.000ms")
    bar = lambda n: "|" + ("*" * n).ljust(40) + "|"
    assert rows[i + 1:i + 12] == [
        "     usecs               : count    distribution"] + [
        "%10d -> %-10d : %-8d %s" % (lo, 2 * lo - 1 if lo > 1 else 1, n, bar(w))
        for lo, n, w in [(0, 0, 0), (2, 0, 0), (4, 0, 0), (8, 0, 0), (16, 0, 0), (32, 0, 0),
                         (64, 3, 8), (128, 3, 8), (256, 9, 24), (512, 15, 40)]]


def test_stats_by(calls):
    out = report(["stats", "--by", "goid", "--no-hist", calls]).stdout.splitlines()
    assert out[0].split()[:3] == ["FUNC", "goid", "CALLS"]
    adds = {r.split()[1]: r.split()[2] for r in out if r.startswith("main.add ")}
    assert adds == {"1": "10", "2": "10", "3": "10", "7": "1", "8": "1"}
    out = report(["stats", "--by", "name", "--no-hist", "-f", "func == \"main.add\"", calls]).stdout
    rows = {r.split()[1]: r.split()[2:] for r in out.splitlines()[1:]}
    assert len(rows) == ITER + 2 and rows["-"] == rows['"open"'] == ["1", "33.3"] + ["-"] * 4
    assert rows['"name-4"'] == ["1", "33.3"] + ["500.000us"] * 4
    p = report(["stats", "--by", "goarg0", calls], check=False)
    assert p.returncode == 2
    assert p.stderr.splitlines()[-3:] == [
        "gotrace-report: bad --by field: no such field 'goarg0': goargN runs from goarg1 to "
        "goarg32 at column 1", "  goarg0", "  ^"]


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


def test_unquoted_function_name_is_pointed_out(calls):
    p = report(["--count", "-f", "func == main.add", calls])
    assert p.stdout.strip() == "0"
    assert "named 'main.add'; comparisons with it are false (a function's name is a " \
        "string: func == \"main.add\")" in p.stderr
    p = report(["--count", "-f", "nosuch == 1", calls])
    assert "named 'nosuch'" in p.stderr and "a function's name" not in p.stderr
    assert "nil is not a literal" not in p.stderr


def test_nil_is_pointed_at_what_a_nil_value_reads_as(calls):
    """nil reads as a value's name: the warning says what a nil
    interface or pointer reads as instead."""
    p = report(["--count", "-f", "goret2 != nil", calls])
    assert p.stdout.strip() == "0"
    assert "named 'nil'; comparisons with it are false (nil is not a literal: a nil " \
        "interface or error reads as the string \"<nil>\", e.g. goret2 != \"<nil>\", " \
        "and a nil pointer, map or chan as 0)" in p.stderr


def test_pid_not_in_file_is_named(calls):
    """--pid of a process the file has no event of is named once, not
    taken silently for a selection that matched nothing."""
    pid = json.loads(lines(["--format", "jsonl", "--limit", "1", calls])[0])["pid"]
    p = report(["--count", "--pid", str(pid), "--pid", "999999", calls])
    assert int(p.stdout) > 0
    assert p.stderr.count("warning: --pid") == 1, p.stderr
    assert "--pid 999999: no event of process 999999 in " in p.stderr
    p = report(["--count", "--pid", str(pid), calls])
    assert "warning" not in p.stderr


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
        "gotrace-report: bad filter: expected '&&', '||' or end of expression, found 'ms' at column 29",
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


# ------------------------------------------------------------ losses

S = 1000000000           # ns in a second
US_ = 1000


@pytest.fixture(scope="session")
def lossgen(tmp_path_factory):
    """Writes a .gtr file from a script (tests/fixtures/c/loss_gen.c)."""
    out = build_with_libgtr(tmp_path_factory.mktemp("lossgen") / "loss_gen",
                            "tests/fixtures/c/loss_gen.c", opt="-O2")

    def write(path, lines):
        subprocess.run([out, str(path)], input="".join(l + "\n" for l in lines), text=True,
                       check=True)
        return str(path)
    return write


class Recording:
    """A simulated recording of main.work(n) -> 2n on 4 goroutines, and
    main.other(n) -> 2n on a fifth, with ring-buffer losses: in the loss
    windows each event of main.work is dropped with probability 1/2. Drop
    records are written as gotrace-record does: at checks every second, per
    (probe, cpu) that lost events since the previous check, with that check
    as since_ns (0 at the first), after the events consumed before it (the
    last ones before the check come after it). `calls` is the ground truth:
    (func, n, goid, entry_ts, return_ts, entry kept, return kept)."""

    WORK_E, WORK_R, OTHER_E, OTHER_R = 1, 2, 3, 4

    def __init__(self, seconds, windows, seed=7, gap_ns=2000 * US_, late_check=None):
        import random
        rnd = random.Random(seed)
        t0 = T0
        self.calls = []
        evs = []                      # (ts, order, line)
        n = 0
        for g in range(1, 6):
            func = "main.work" if g <= 4 else "main.other"
            pe, pr = (self.WORK_E, self.WORK_R) if g <= 4 else (self.OTHER_E, self.OTHER_R)
            t = t0 + g * 37 * US_
            while t < t0 + seconds * S:
                lat = 4 * US_ + rnd.randrange(4 * US_)       # 4-8 us, like a 6 us function
                e_ts, r_ts = t, t + lat
                keep_e = keep_r = True
                if func == "main.work":
                    for lo, hi in windows:
                        if lo <= e_ts - t0 <= hi and rnd.random() < 0.5:
                            keep_e = False
                        if lo <= r_ts - t0 <= hi and rnd.random() < 0.5:
                            keep_r = False
                cpu = g % 2
                self.calls.append((func, n, g, e_ts, r_ts, keep_e, keep_r))
                for ts, p, keep in ((e_ts, pe, keep_e), (r_ts, pr, keep_r)):
                    evs.append((ts, p, keep, "E %d %d 4242 %d %d %d %d" % (ts, p, 4300 + g, g, cpu, n if p in (pe,) else 2 * n), cpu))
                n += 1
                t += gap_ns + rnd.randrange(gap_ns // 2)
        evs.sort()
        # checks every second; drop records per (probe, cpu) lost since the last
        checks = [t0 + k * S + 3 * US_ for k in range(1, seconds + 1)]
        if late_check is not None:
            checks = [c for c in checks if not (late_check[0] < c < late_check[1])]
        self.drops = []               # (ts, probe, cpu, count, since)
        lines = ["P 1 e main.work n", "P 2 r main.work r", "P 3 e main.other n",
                 "P 4 r main.other r"]
        prev = 0
        i = 0
        for c in checks:
            lost = {}
            # events consumed before the check: all up to 200 us before it
            while i < len(evs) and evs[i][0] <= c - 200 * US_:
                ts, p, keep, line, cpu = evs[i]
                if keep:
                    lines.append(line)
                else:
                    lost[(p, cpu)] = lost.get((p, cpu), 0) + 1
                i += 1
            # the loss counters also count what is still in flight before the check
            j = i
            while j < len(evs) and evs[j][0] <= c:
                ts, p, keep, line, cpu = evs[j]
                if not keep:
                    lost[(p, cpu)] = lost.get((p, cpu), 0) + 1
                    evs[j] = (ts, p, True, None, cpu)       # counted: not again
                j += 1
            for (p, cpu), cnt in sorted(lost.items()):
                lines.append("D %d %d %d %d %d" % (c, p, cpu, cnt, prev))
                self.drops.append((c, p, cpu, cnt, prev))
            prev = c
        for ts, p, keep, line, cpu in evs[i:]:
            if keep and line:
                lines.append(line)
        # events in flight at a check were consumed after it
        self.lines = [l for l in lines if l]
        self.t0 = t0

    def spans(self, probes):
        """The loss spans of a function as pairing takes them: [since, ts],
        since 0 reaching back to the previous record of the (probe, cpu)."""
        out, prev = [], {}
        for ts, p, cpu, cnt, since in self.drops:
            lo = since if since else prev.get((p, cpu), 0)
            prev[(p, cpu)] = ts
            if p in probes and cnt:
                out.append((lo, ts))
        return out

    def expected_returned(self):
        """Calls both of whose halves were recorded and whose interval meets
        no loss span of their function: pairing must show these, and only
        these, as returned."""
        sp = {"main.work": self.spans({1, 2}), "main.other": self.spans({3, 4})}
        return {c[1] for c in self.calls
                if c[5] and c[6] and not any(lo <= c[4] and hi >= c[3] for lo, hi in sp[c[0]])}


@pytest.fixture(scope="session")
def lossy(lossgen, tmp_path_factory):
    """10 s, losses in [0.2, 0.3] s (reported by a first record without
    since_ns), [2.3, 2.35] s and [5.1, 5.4] s of the recording."""
    rec = Recording(10, [(S // 5, 3 * S // 10), (23 * S // 10, 235 * S // 100),
                         (51 * S // 10, 54 * S // 10)])
    d = tmp_path_factory.mktemp("lossy")
    rec.path = lossgen(d / "lossy.gtr", rec.lines)
    # the same events without their drop records: what pairing did before
    rec.blind = lossgen(d / "blind.gtr", [l for l in rec.lines if not l.startswith("D ")])
    return rec


def jsonl_calls(path):
    return [json.loads(l) for l in lines(["--format", "jsonl", "--calls", path])]


def test_losses_really_break_naive_pairing(lossy):
    """Without the drop records, the scenario gives what the issue showed:
    one call's arguments paired with another's result, and latencies far
    beyond the real ones (a call ~2 ms later instead of 4-8 us)."""
    cs = jsonl_calls(lossy.blind)
    wrong = [c for c in cs if c["status"] == "returned" and c["rets"]["r"] != 2 * c["args"]["n"]]
    assert len(wrong) > 50
    assert max(c["latency_ns"] for c in cs if c["status"] == "returned") > 1000 * US_


def test_lossy_calls_are_never_mispaired(lossy):
    cs = jsonl_calls(lossy.path)
    truth = {c[1]: c for c in lossy.calls}
    ret = [c for c in cs if c["status"] == "returned"]
    # every pair shown is the call's own: its result, its latency
    for c in ret:
        n = c["args"]["n"]
        assert c["rets"]["r"] == 2 * n, c
        assert c["latency_ns"] == truth[n][4] - truth[n][3], c
        assert c["ts_ns"] == truth[n][3] and c["goid"] == truth[n][2]
    # and exactly the calls that no loss could concern
    want = lossy.expected_returned()
    assert {c["args"]["n"] for c in ret} == want
    lost = [c for c in cs if c["status"] == "lost"]
    lost_ret = [c for c in lost if c["rets"]]
    lost_ent = [c for c in lost if c["args"]]
    assert all((c["rets"] == {}) != (c["args"] == {}) for c in lost), "halves stand alone"
    assert all(c["latency_ns"] is None and c["func"] == "main.work" for c in lost)
    # every recorded half is shown once: paired, lost, or without entry / open
    rec_e = sum(1 for c in lossy.calls if c[5])
    rec_r = sum(1 for c in lossy.calls if c[6])
    no_entry = [c for c in cs if c["status"] == "no_entry"]
    unfinished = [c for c in cs if c["status"] in ("open", "exited", "unwound")]
    assert len(ret) + len(lost_ret) + len(no_entry) == rec_r
    assert len(ret) + len(lost_ent) + len(unfinished) == rec_e
    # the figures: drop records come once a second, so a loss makes the
    # calls of main.work of that whole second unsure (4 of its 10 s here)
    assert len(ret) > 15000 and 3000 < len(lost_ret) < 6000, (len(ret), len(lost_ret))
    # main.other lost nothing: all its calls stand
    assert all(c["status"] == "returned" for c in cs if c["func"] == "main.other")


def stats_row(out, func):
    head = out.splitlines()[0].split()
    for l in out.splitlines()[1:]:
        f = l.split()
        if f and f[0] == func:
            return dict(zip(head, f))
    raise AssertionError("no row for %s in\n%s" % (func, out))


def ns_of(d):
    for unit, k in (("ns", 1), ("us", 1000), ("ms", 1000000), ("s", S)):
        if d.endswith(unit) and d[:-len(unit)].replace(".", "").isdigit():
            return float(d[:-len(unit)]) * k
    raise AssertionError(d)


def test_lossy_stats_count_lost_calls_apart(lossy):
    p = report(["stats", "--no-hist", lossy.path])
    row = stats_row(p.stdout, "main.work")
    cs = jsonl_calls(lossy.path)
    work = [c for c in cs if c["func"] == "main.work"]
    lost_ret = sum(1 for c in work if c["status"] == "lost" and c["rets"])
    true_max = max(c[4] - c[3] for c in lossy.calls)
    shown_max = max(c["latency_ns"] for c in work if c["status"] == "returned")
    assert int(row["LOST"]) == lost_ret > 3000
    assert int(row["CALLS"]) == sum(1 for c in lossy.calls if c[0] == "main.work" and c[5])
    assert ns_of(row["MAX"]) == shown_max <= true_max <= 8 * US_
    assert ns_of(row["P99"]) <= true_max
    assert stats_row(p.stdout, "main.other")["LOST"] == "0"
    # the blind file: the MAX, and no LOST column
    blind = report(["stats", "--no-hist", lossy.blind]).stdout
    assert "LOST" not in blind.splitlines()[0]
    assert ns_of(stats_row(blind, "main.work")["MAX"]) > 1000 * US_
    # stderr says how many were shown alone
    lost_ent = sum(1 for c in work if c["status"] == "lost" and c["args"])
    assert ("gotrace-report: note: %d return(s) and %d entries shown alone as 'lost'"
            % (lost_ret, lost_ent)) in p.stderr
    assert "lost while recording" in p.stderr


def test_lossy_text_csv_folded_and_chrome(lossy):
    cs = jsonl_calls(lossy.path)
    ret = [c for c in cs if c["status"] == "returned"]
    lost = [c for c in cs if c["status"] == "lost"]
    # text call view: the status in the LATENCY column, halves alone
    tl = lines(["--calls", lossy.path])[1:]
    lost_lines = [l for l in tl if l.split()[3] == "lost"]     # PID TID (no COMM) FUNC LATENCY
    assert len(lost_lines) == len(lost)
    assert all(l.endswith("-> ?") or " ? -> r=" in l for l in lost_lines)
    assert sum(1 for l in lost_lines if l.endswith("-> ?")) == sum(1 for c in lost if c["args"])
    # text events: a lost return says so instead of a latency
    ev = lines([lossy.path])
    assert sum(1 for l in ev if "<- (lost)" in l) == sum(1 for c in lost if c["rets"])
    # CSV events: no latency for them, every latency a real one
    raw = subprocess.run([REPORT, "--format", "csv", lossy.path], capture_output=True,
                         check=True).stdout
    rows = list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
    lat = [int(r["latency_ns"]) for r in rows if r["kind"] == "return" and r["latency_ns"]]
    assert sorted(lat) == sorted(c["latency_ns"] for c in ret)
    # folded: only the pairs that stand count (no callees: self = latency;
    # an entry whose return was lost stays open below the later calls of
    # its goroutine, so they fold as main.work;main.work)
    fold = [l.rsplit(" ", 1) for l in lines(["--format", "folded", lossy.path])]
    assert sum(int(v) for k, v in fold if k.split(";")[-1] == "main.work") == \
        sum(c["latency_ns"] for c in ret if c["func"] == "main.work")
    # Chrome: slices only for the real calls; lost halves marked
    doc = json.loads(report(["--format", "chrome", lossy.path]).stdout)
    xs = check_chrome(doc)
    assert max(x["dur"] for x in xs) <= 8.0
    st = [e["args"].get("status") for e in doc["traceEvents"] if e.get("ph") in ("X", "i")]
    assert st.count("lost") == len(lost)


def test_losses_noticed_too_late_are_warned(lossgen, tmp_path):
    """The loss at 2.3 s is reported only at the check of 6 s, 4 s later
    (the recorder stalled): calls shown before it came may be wrong, and
    stderr says so; the later spans make pairing hold longer after that."""
    rec = Recording(10, [(23 * S // 10, 235 * S // 100)], late_check=(2 * S + T0, 6 * S + T0))
    path = lossgen(tmp_path / "late.gtr", rec.lines)
    p = report(["stats", "--no-hist", path])
    assert "drop record(s) of %s came after calls their losses may concern" % path in p.stderr
    cs = jsonl_calls(path)
    assert any(c["status"] == "lost" for c in cs)


def test_lossy_memory_stays_flat(lossgen, tmp_path):
    """Held calls are released as the trace goes on: 60 s of a lossy
    recording take no more memory than 6 s."""
    small = Recording(6, [(2 * S, 3 * S)], gap_ns=400 * US_)
    big = Recording(60, [(2 * S, 3 * S), (30 * S, 31 * S), (50 * S, 52 * S)], gap_ns=400 * US_)
    sp = lossgen(tmp_path / "s.gtr", small.lines)
    bp = lossgen(tmp_path / "b.gtr", big.lines)
    for args in (["--calls"], ["stats"], ["--format", "jsonl"]):
        s = maxrss_kib(args + [sp])
        b = maxrss_kib(args + [bp])
        assert b < s + 4096, (args, s, b)


def test_held_or_not_the_output_is_the_same(lossy, calls):
    """A closed file whose summary counts no loss is not held; read from a
    pipe (no summary up front) it is: the output is the same, byte for byte,
    in every view. A lossy file gives the same output from a pipe too."""
    for path in (calls, lossy.path):
        for args in ([], ["--calls"], ["--format", "jsonl", "--calls"], ["stats"],
                     ["--format", "folded"], ["--format", "chrome"]):
            direct = subprocess.run([REPORT, *args, path], capture_output=True, check=True)
            with open(path, "rb") as f:
                piped = subprocess.run([REPORT, *args, "-"], stdin=f, capture_output=True,
                                       check=True)
            assert piped.stdout == direct.stdout, (path, args)


# ------------------------------------------------------------ --max-depth

def recursion_lines(n):
    """main.depth(n) recursing n deep, each call returning its n: entries
    outermost first, then returns innermost first, 1 us apart."""
    out = ["P 1 e main.depth n", "P 2 r main.depth ~r0"]
    t = T0
    for i in range(n):
        out.append("E %d 1 4242 4243 1 0 %d" % (t, n - i))
        t += US_
    for i in range(n):
        out.append("E %d 2 4242 4243 1 0 %d" % (t, i + 1))
        t += US_
    return out


def test_recursion_past_max_depth_is_never_mispaired(lossgen, tmp_path):
    """1500 deep past the default --max-depth (1024): the 476 inner calls
    are not tracked and their returns stay unpaired; the 1024 outer ones
    pair with their own returns, with their true latency."""
    path = lossgen(tmp_path / "deep.gtr", recursion_lines(1500))
    p = report(["--format", "jsonl", "--calls", path])
    cs = [json.loads(l) for l in p.stdout.splitlines()]
    st = {}
    for c in cs:
        st[c["status"]] = st.get(c["status"], 0) + 1
    assert st == {"returned": 1024, "not_tracked": 476, "no_entry": 476}
    for c in cs:
        if c["status"] == "returned":
            n = c["args"]["n"]
            assert c["rets"] == {"~r0": n}
            # entry at 1500 - n us, return at 1500 + n - 1 us
            assert c["latency_ns"] == (2 * n - 1) * US_
    assert "1024 call(s) paired" in p.stderr
    assert "476 return(s) without entry" in p.stderr
    assert "476 entries not tracked (--max-depth" in p.stderr
    assert "warning: 476 call(s) past --max-depth (or the memory limit) on their goroutine " \
        "were not tracked; their 476 return(s) are shown unpaired" in p.stderr
    text = lines(["--calls", path])
    assert [l.split()[2:] for l in text if "n=1500 " in l] == \
        [["main.depth", "2.999ms", "n=1500", "->", "~r0=1500"]]
    assert [l.split()[2:] for l in text if l.endswith(" n=476")] == \
        [["main.depth", "untracked", "n=476"]]
    # with room for all, every call pairs
    cs = [json.loads(l) for l in lines(["--format", "jsonl", "--calls", "--max-depth", "2000",
                                        path])]
    assert {c["status"] for c in cs} == {"returned"} and len(cs) == 1500


@pytest.mark.parametrize("opt,rng", [("--max-depth", "1 to 1048576"),
                                     ("--max-goroutines", "1 to 16777216"),
                                     ("--keep-string", "1 to 65536")])
def test_pairing_limits_of_zero_are_refused(calls, opt, rng):
    p = report([opt, "0", calls], check=False)
    assert p.returncode == 2 and p.stdout == ""
    assert "invalid %s '0': expected an integer from %s" % (opt, rng) in p.stderr
    assert "default" in p.stderr
    assert report([opt, "1", "--count", calls]).stdout.strip() == str(ITER * 7 + 2)


def test_stats_help_does_not_offer_limit(calls):
    assert "--limit" not in report(["stats", "--help"]).stdout
    assert "--limit=N" in report(["--help"]).stdout
    p = report(["stats", "--limit", "3", calls], check=False)
    assert p.returncode == 2 and "stats summarises every event" in p.stderr


def test_folded_without_return_probes_says_why(lossgen, tmp_path):
    path = lossgen(tmp_path / "entries.gtr",
                   [l for l in recursion_lines(5)       # without probe 2 and its returns
                    if not l.startswith("P 2") and " 2 4242 " not in l])
    p = report(["--format", "folded", path])
    assert p.stdout == ""
    assert ("note: no folded stacks: a stack is a call, an entry paired with its return, and "
            "the 5 entries that matched have no return probe (record FUNC r:FUNC for calls)"
            in p.stderr)
    # with return probes: stacks, no note
    p = report(["--format", "folded", lossgen(tmp_path / "calls.gtr", recursion_lines(2))])
    assert p.stdout.splitlines() == ["main.depth 2000", "main.depth;main.depth 1000"]
    assert "no folded stacks" not in p.stderr
