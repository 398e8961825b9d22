"""The whole path: gotrace-record attaches real uprobes to real Go programs,
writes a .gtr file; gotrace-report reads it without the binary."""
import json
import os
import shutil
import signal
import subprocess

import pytest

from conftest import RECORD, REPORT, Proc, attached, record, report, wait_for


def functions_output(n):
    """What examples/functions prints for argument n."""
    return str(sum(55 + (5 + i) + (7 - 3) + (7 + i) for i in range(n)))


def jsonl(path, *args):
    out = report(["--format", "jsonl", *args, path]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_bcc_example_add_42_13(functions, tmp_path):
    """The bcc discussion's example, as its README shows it."""
    d = os.path.dirname(functions)
    trace = str(tmp_path / "t.gtr")
    p = record(["-o", trace, './functions:main.add "%d %d" goarg1, goarg2',
                "--", "./functions", "3"], cwd=d)
    assert p.stdout.strip() == functions_output(3), p.stdout
    out = report([trace]).stdout.splitlines()
    assert out[0].split() == ["PID", "TID", "COMM", "FUNC", "-"]
    events = out[1:]
    assert len(events) == 3
    for line in events:
        cols = line.split()
        assert cols[2] == "functions"
        assert cols[3] == "main.add"
        assert line.endswith("42 13"), line
    assert len(report(["-f", "goarg1 == 42", trace]).stdout.splitlines()) == 4
    assert report(["-f", "goarg2 == 99", trace]).stdout.splitlines()[1:] == []


def test_jsonl_keys_and_exact_values(functions, toolchain, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", "main.greet", "main.(*T).M",
            "main.T.Value", "--", functions, "2"])
    evs = jsonl(trace)
    by = {}
    for e in evs:
        by.setdefault(e["func"], []).append(e)
        for k in ("ts_ns", "pid", "tid", "comm", "func", "kind", "goargs", "args"):
            assert k in e, (k, e)
        assert e["kind"] == "entry"
        assert e["comm"] == "functions"
    assert sorted(by) == sorted([toolchain.fname("main.(*T).M"), "main.T.Value",
                                 "main.add", "main.greet"])
    assert [e["args"] for e in by["main.add"]] == [{"x": 42, "y": 13}] * 2
    assert [e["goargs"] for e in by["main.add"]] == [[42, 13]] * 2
    m = by[toolchain.fname("main.(*T).M")][0]
    assert m["args"]["k"] == -3 and m["args"]["ok"] is True
    assert isinstance(m["goargs"][0], int) and m["goargs"][0] != 0  # receiver *T
    assert [e["args"]["u"] for e in by["main.T.Value"]] == [0, 1]
    ts = [e["ts_ns"] for e in evs]
    assert ts == sorted(ts)
    # goroutine id of the main goroutine is 1 (gccgo's are not read: 0)
    assert {e["goid"] for e in evs} == {0 if toolchain.gccgo else 1}


def test_string_argument_content_and_length(functions, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.greet", "--", functions, "2"])
    evs = jsonl(trace)
    assert [e["args"]["n"] for e in evs] == [0, 1]
    # a string captured whole is a JSON string (spec/OUTPUT.md)
    assert [e["args"]["s"] for e in evs] == ["hello", "hello"]
    rows = report([trace]).stdout.splitlines()[1:]
    assert [l.split(None, 4)[3:] for l in rows] == [["main.greet", 's="hello"(len=5) n=0'],
                                                    ["main.greet", 's="hello"(len=5) n=1']]
    # A string longer than --string-size keeps its true length.
    trace2 = str(tmp_path / "t2.gtr")
    record(["-o", trace2, "-s", "3", "main.greet", "--", functions, "1"])
    e = jsonl(trace2)[0]
    s = e["args"]["s"]
    assert isinstance(s, dict) and s["len"] == 5 and s["str"] == "hel", s
    assert report(["-f", 's == "hello"', trace]).stdout.count("main.greet") == 2


def test_exit_status_and_stdout_passed_through(functions, tmp_path):
    trace = str(tmp_path / "t.gtr")
    p = record(["-o", trace, "main.add", "--", functions, "1", "7"], check=False)
    assert p.returncode == 7, p.stderr
    assert p.stdout.strip() == functions_output(1)
    assert len(jsonl(trace)) == 1


def test_attach_to_running_pid_until_sigint(loop_bin, tmp_path, procs):
    target = procs([loop_bin], stdout=subprocess.PIPE, text=True)
    assert target.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "p.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(target.pid),
                 'main.add "%d %d" goarg1, goarg2', "main.greet"],
                stderr=subprocess.PIPE, text=True)
    assert "attached" in attached(rec.p.stderr)
    # Wait until events reach the file (frames are flushed every second):
    # the file is readable while it is being written.
    assert wait_for(lambda: report([trace], check=False).stdout.count("main.add") >= 5)
    assert rec.stop(signal.SIGINT) == 0
    evs = jsonl(trace)
    adds = [e for e in evs if e["func"] == "main.add"]
    greets = [e for e in evs if e["func"] == "main.greet"]
    assert adds and greets
    assert all(e["pid"] == target.pid for e in evs)
    assert all(e["goargs"][0] == 42 for e in adds)
    ys = [e["goargs"][1] for e in adds]
    assert ys == list(range(ys[0], ys[0] + len(ys)))  # no call lost, in order
    assert target.p.poll() is None  # the target keeps running
    text = report([trace]).stdout.splitlines()
    assert all(l.endswith("42 %d" % y) for l, y in
               zip([l for l in text if "main.add" in l], ys))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_before_the_command_started(loop_bin, toolchain, tmp_path, procs, sig):
    """SIGTERM or SIGINT while the probes attach (the output file exists,
    the command is held before its exec): exit 128+N, as the man page says,
    and a message that the command never ran, where it was 127."""
    trace = tmp_path / "e.gtr"
    rec = procs([RECORD, "-o", str(trace), toolchain.fname("main.add"), "--", loop_bin],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the file is created before the attach, which takes far longer
    assert wait_for(trace.exists, step=0.002)
    assert rec.stop(sig) == 128 + sig
    err = rec.p.stderr.read()
    assert "gotrace-record: %s arrived before %s started: the command never ran\n" \
        % (sig.name, loop_bin) in err, err
    assert rec.p.stdout.read() == ""   # the loop never printed "ready"


def test_sigterm_ends_with_complete_file(loop_bin, tmp_path, procs):
    target = procs([loop_bin], stdout=subprocess.PIPE, text=True)
    target.p.stdout.readline()
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-q", "-o", trace, "-p", str(target.pid), "main.add"])
    assert wait_for(lambda: os.path.exists(trace) and
                    report([trace], check=False).stdout.count("main.add") >= 3)
    assert rec.stop(signal.SIGTERM) == 0
    r = report([trace])
    assert "truncated" not in r.stderr and "damaged" not in r.stderr
    assert len(r.stdout.splitlines()) > 1


@pytest.mark.parametrize("flags", [["-ldflags=-s -w"], ["-buildmode=pie", "-ldflags=-s -w"]],
                         ids=["stripped", "stripped-pie"])
def test_stripped_binary_raw_registers(gobuild, toolchain, tmp_path, flags):
    """No DWARF: functions come from .gopclntab, arguments as raw words.
    A stripped gccgo program has no .gopclntab: gotrace-record says so."""
    name = "functions-" + ("pie" if "-buildmode=pie" in flags else "s")
    exe = gobuild("examples/functions/main.go", name, *flags)
    out = subprocess.run(["file", exe], capture_output=True, text=True).stdout
    assert "stripped" in out and "not stripped" not in out
    trace = str(tmp_path / "t.gtr")
    if toolchain.gccgo:
        p = record(["-o", trace, 'main.add "%d %d" goarg1, goarg2', "--", exe, "2"],
                   check=False)
        assert p.returncode == 1 and p.stderr.endswith(
            "; a stripped gccgo program: only its dynamic symbols are functions here "
            "(gccgo writes no .gopclntab); build it without -s to probe the others\n")
        return
    record(["-o", trace, 'main.add "%d %d" goarg1, goarg2', "main.(*T).M",
            "--", exe, "2"])
    lines = report(["-f", 'func == "main.add"', trace]).stdout.splitlines()[1:]
    assert len(lines) == 2 and all(l.endswith("42 13") for l in lines)
    m = [e for e in jsonl(trace) if e["func"] == "main.(*T).M"]
    assert len(m) == 2
    assert m[0]["goargs"][1] & 0xff == 0xfd      # int8 -3 in the low byte of RBX
    assert m[0]["goargs"][2] & 0xff == 1         # ok == true in RCX


def test_report_needs_no_binary(functions, tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    exe = str(d / "functions")
    shutil.copy(functions, exe)
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", "--", exe, "1"])
    os.unlink(exe)
    rows = report([trace]).stdout.splitlines()[1:]
    assert [l.split(None, 4)[3:] for l in rows] == [["main.add", "x=42 y=13"]]


def test_caddy_serving_a_request(tmp_path, procs, caddy):
    """A stripped Go program from Debian, traced as a user would: caddy
    serving HTTP on loopback, net/http.(*conn).serve probed."""
    srv = caddy
    trace = str(tmp_path / "caddy.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(srv.pid),
                 "net/http.(*conn).serve", "net/http.(*response).WriteHeader"],
                stderr=subprocess.PIPE, text=True)
    assert "attached" in attached(rec.p.stderr)
    import time
    for _ in range(5):
        # A new connection each time: (*conn).serve runs once per connection.
        assert srv.get(close=True) == b"hello from caddy"
    time.sleep(0.3)
    assert rec.stop(signal.SIGINT) == 0, rec.p.stderr.read()
    evs = jsonl(trace)
    serves = [e for e in evs if e["func"] == "net/http.(*conn).serve"]
    writes = [e for e in evs if e["func"] == "net/http.(*response).WriteHeader"]
    assert len(serves) == 5
    assert all(e["pid"] == srv.pid for e in evs)
    assert len(writes) >= 5
    # Without DWARF the register words are raw; WriteHeader's code (goarg2,
    # in RBX under the register ABI) is the HTTP status.
    assert all(e["goargs"][1] == 200 for e in writes)
    assert report(["-f", "goarg2 == 200", trace]).stdout.count("WriteHeader") == len(writes)


def test_count_with_filters_that_need_pairing(functions, tmp_path):
    """--count skips pairing unless a filter needs it: return events still
    see their entry's arguments, and latency is still known."""
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.add", "r:main.add", "--", functions, "3"])
    count = lambda f: int(report(["--count", "-f", f, trace]).stdout)
    assert count("y == 13") == 6          # 3 entries + 3 returns (entry's y)
    assert count("latency > 0") == 3
    assert count('kind == "return" && goret1 == 55') == 3
    assert count('comm == "functions"') == 6
    assert count("pid > 0") == 6


def test_regex_limit_is_an_error_not_a_silent_false(gobuild, tmp_path):
    """A regular expression that hits PCRE2's match limit has no answer:
    the event is left out of both `=~` and `!~`, the report says how many
    events had one and why, and --strict exits 2 (spec/FILTER.md)."""
    exe = gobuild("tests/fixtures/regex/main.go", "regex")
    trace = str(tmp_path / "r.gtr")
    record(["-q", "-s", "512", "-o", trace, "main.check", "--", exe])
    for op in ("=~", "!~"):
        p = report(["--count", "-f", 's %s "(a|a)+c|b"' % op, trace])
        # the short string has an answer; the long one has none
        assert p.stdout == ("0\n" if op == "=~" else "1\n")
        assert "1 event(s) had no answer for filter 's %s \"(a|a)+c|b\"'" % op in p.stderr
        assert "match limit" in p.stderr and "--strict" in p.stderr
    p = report(["--strict", "--count", "-f", 's =~ "(a|a)+c|b"', trace], check=False)
    assert p.returncode == 2 and p.stdout == "0\n"
    assert "gotrace-report: error: 1 event(s) had no answer" in p.stderr
    # an expression within the limits answers every event
    p = report(["--strict", "--count", "-f", 's =~ "a+b$"', trace])
    assert p.stdout == "1\n" and p.stderr == ""
