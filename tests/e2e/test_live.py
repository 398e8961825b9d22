"""Live traces: gotrace-record streaming into a pipe, a FIFO or standard
output, gotrace-report reading them as they come (and following a file
that is still being written), and Ctrl-C on either side ending both
cleanly. Each test runs once per Go toolchain (loop_bin)."""
import json
import os
import re
import select
import signal
import subprocess
import time

from conftest import RECORD, REPORT, attached, on_terminal, report


def start_loop(procs, loop_bin):
    p = procs([loop_bin], stdout=subprocess.PIPE, text=True)
    assert p.p.stdout.readline().startswith("ready")
    return p


def read_line(f, timeout=20.0):
    """One line from pipe f, or None when none came within timeout s. Reads
    the file descriptor byte by byte, so that no line waits in a buffer
    of Python's while select() waits for more."""
    line = b""
    while not line.endswith(b"\n"):
        r, _, _ = select.select([f.fileno()], [], [], timeout)
        if not r:
            return None
        c = os.read(f.fileno(), 1)
        if not c:
            return line or None
        line += c
    return line


def recorded_events(stderr):
    m = re.search(r"gotrace-record: (\d+) events, (\d+) dropped", stderr)
    assert m, stderr
    return int(m.group(1)), int(m.group(2))


def live_pair(procs, record_args, report_args):
    """gotrace-record -o - ... | gotrace-report ... -: both processes."""
    rec = procs([RECORD, "-o", "-", *record_args], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
    rep = procs([REPORT, *report_args, "-"], stdin=rec.p.stdout,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rec.p.stdout.close()   # the report holds the only reading end
    return rec, rep


def test_pipe_shows_events_while_recording(loop_bin, procs):
    """Events reach the report while the recorder still runs (it flushes
    every --flush-interval), and Ctrl-C on the recorder ends both with
    every event written shown once."""
    target = start_loop(procs, loop_bin)
    rec, rep = live_pair(procs, ["--flush-interval", "0.2", "-p", str(target.pid),
                                 "main.add"], ["--format", "jsonl"])
    first = read_line(rep.p.stdout)
    assert first, rep.p.stderr.read()
    assert rec.p.poll() is None, "the first event came only after the recording ended"
    assert json.loads(first)["goargs"][0] == 42
    rec.p.send_signal(signal.SIGINT)
    rest = rep.p.stdout.read().decode().splitlines()
    assert rec.p.wait(30) == 0 and rep.p.wait(30) == 0
    rec_err, rep_err = rec.p.stderr.read().decode(), rep.p.stderr.read().decode()
    n, dropped = recorded_events(rec_err)
    lines = [first] + rest
    assert dropped == 0 and len(lines) == n, (len(lines), n, rec_err)
    assert all(json.loads(l)["goargs"][0] == 42 for l in lines)
    assert rep_err == "", rep_err
    assert "standard output" in rec_err


def test_live_latency(gobuild, procs):
    """A call every 100 ms reaches the live report within 1.5 s of the call
    with the default flush interval (1 s): a generous bound; `make bench`
    prints the median (tests/bench/live_bench.py)."""
    tick = gobuild("tests/fixtures/tick/main.go", "tick")
    target = procs([tick], stdout=subprocess.PIPE, text=True)
    assert target.p.stdout.readline().startswith("ready")
    rec, rep = live_pair(procs, ["-p", str(target.pid), "main.tick"], ["--format", "jsonl"])
    delays = []
    while len(delays) < 15:
        line = read_line(rep.p.stdout)
        assert line, "no event within 20 s"
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        delays.append((now - json.loads(line)["ts_ns"]) / 1e9)
    rec.p.send_signal(signal.SIGINT)
    assert rec.p.wait(30) == 0 and rep.p.wait(30) == 0
    assert max(delays) < 1.5, delays


def test_report_interrupted_stops_the_recorder(loop_bin, procs):
    """Ctrl-C on the report: it prints its summary of what it read and
    exits 0; the recorder sees its reader gone, detaches and exits 0."""
    target = start_loop(procs, loop_bin)
    rec, rep = live_pair(procs, ["--flush-interval", "0.2", "-p", str(target.pid),
                                 "main.add"], ["stats"])
    assert "attached" in attached(rec.p.stderr)
    # the loop calls main.add every 5 ms, flushed every 0.2 s
    time.sleep(1.5)
    rep.p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out = rep.p.stdout.read().decode()
    assert rep.p.wait(30) == 0
    # the recorder went on: the report read on for its 2 s of grace
    assert 1.5 < time.monotonic() - t0 < 10
    assert re.search(r"^main\.add\s+\d+", out, re.M), out
    err = rep.p.stderr.read().decode()
    assert re.fullmatch(r"gotrace-report: interrupted: \d+ event\(s\) read from standard "
                        r"input; reading stopped at a second signal or 2 s after the first, "
                        r"its writer still going: what it wrote later is not in this report\n",
                        err), err
    assert rec.p.wait(30) == 0
    err = rec.p.stderr.read().decode()
    assert "stopped: the reader of the trace went away" in err, err
    assert "Broken pipe" not in err and "no room" not in err, err


def test_fifo_and_dev_stdout_are_outputs(loop_bin, procs, tmp_path):
    """A FIFO is written as a stream (no --force needed, nothing is
    replaced), and so is /dev/stdout when it is a pipe, though it is a
    symbolic link; a symbolic link to a regular file is still refused."""
    target = start_loop(procs, loop_bin)
    fifo = str(tmp_path / "trace.fifo")
    os.mkfifo(fifo)
    rep = procs([REPORT, "--format", "jsonl", fifo], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
    rec = procs([RECORD, "-o", fifo, "-d", "1", "-p", str(target.pid), "main.add"],
                stderr=subprocess.PIPE)
    assert rec.p.wait(60) == 0 and rep.p.wait(60) == 0
    n, _ = recorded_events(rec.p.stderr.read().decode())
    lines = rep.p.stdout.read().decode().splitlines()
    assert n > 0 and len(lines) == n

    rec2 = procs([RECORD, "-o", "/dev/stdout", "-d", "1", "-p", str(target.pid), "main.add"],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rep2 = procs([REPORT, "--format", "jsonl", "-"], stdin=rec2.p.stdout,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rec2.p.stdout.close()
    assert rec2.p.wait(60) == 0 and rep2.p.wait(60) == 0
    n2, _ = recorded_events(rec2.p.stderr.read().decode())
    assert n2 > 0 and len(rep2.p.stdout.read().decode().splitlines()) == n2

    regular = tmp_path / "regular.gtr"
    regular.write_bytes(b"")
    link = tmp_path / "link.gtr"
    link.symlink_to(regular)
    p = subprocess.run([RECORD, "-o", str(link), "-f", "-d", "1", "-p", str(target.pid),
                        "main.add"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "is a symbolic link; refusing" in p.stderr, p.stderr


def test_standard_output_refusals(loop_bin, procs):
    """-o - onto a terminal is refused (a trace is binary), and so is -o -
    with rotation (-C writes a series of files)."""
    target = start_loop(procs, loop_bin)
    p = subprocess.run([RECORD, "-o", "-", "-C", "1M", "-p", str(target.pid), "main.add"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p
    assert "cannot go with -o -" in p.stderr, p.stderr
    p = on_terminal([RECORD, "-o", "-", "-d", "1", "-p", str(target.pid), "main.add"])
    assert p.returncode == 2
    assert p.stderr.startswith("gotrace-record: -o -: standard output is a terminal and a "
                               "trace is binary data; pipe it into 'gotrace-report -' or give "
                               "a file with -o FILE\n"), p.stderr


def short_trace(procs, loop_bin, tmp_path):
    """A trace of half a second of the loop's main.add calls: its path."""
    target = start_loop(procs, loop_bin)
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(target.pid), "main.add", "r:main.add"],
                stderr=subprocess.PIPE)
    assert "attached" in attached(rec.p.stderr)
    time.sleep(0.5)
    assert rec.stop(signal.SIGINT) == 0
    return trace


def test_report_names_its_own_option_for_a_terminal(loop_bin, procs, tmp_path):
    """-w - of the report, merge and redact onto a terminal is refused
    with the hint of the report's own option, -w FILE."""
    trace = short_trace(procs, loop_bin, tmp_path)
    for argv in (["-w", "-", trace], ["merge", "-w", "-", trace],
                 ["redact", "--redact", "@strings", "-w", "-", trace]):
        p = on_terminal([REPORT, *argv])
        assert p.returncode == 2, (argv, p.stderr)
        assert p.stderr.startswith("gotrace-report: -w -: standard output is a terminal and "
                                   "a trace is binary data; pipe it into 'gotrace-report -' "
                                   "or give a file with -w FILE\n"), p.stderr


def test_binary_format_is_refused_on_a_terminal(loop_bin, procs, tmp_path):
    """--format perfetto (protobuf) onto a terminal is refused as -w - is,
    before anything is read; into a pipe it is written."""
    trace = short_trace(procs, loop_bin, tmp_path)
    p = on_terminal([REPORT, "--format", "perfetto", trace])
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("gotrace-report: --format perfetto writes binary data and "
                               "standard output is a terminal; redirect it to a file "
                               "(> trace.pftrace) or into a pipe\n"), p.stderr
    out = subprocess.run([REPORT, "--format", "perfetto", trace], capture_output=True,
                         timeout=60)
    assert out.returncode == 0 and len(out.stdout) > 100 and out.stdout[0] == 0x0a, out


def test_command_output_stays_out_of_the_stream(functions, procs):
    """With -o - and a command, the command's standard output goes to
    standard error, never into the trace."""
    rec, rep = live_pair(procs, ["main.add", "--", functions, "3"], ["--format", "jsonl"])
    assert rec.p.wait(60) == 0 and rep.p.wait(60) == 0
    rec_err = rec.p.stderr.read().decode()
    n, _ = recorded_events(rec_err)
    lines = rep.p.stdout.read().decode().splitlines()
    assert n == 3 and len(lines) == 3, (lines, rec_err)
    assert rep.p.stderr.read().decode() == ""
    plain = subprocess.run([functions, "3"], capture_output=True, text=True, timeout=60)
    assert plain.stdout and plain.stdout in rec_err


def record_and_follow(procs, loop_bin, tmp_path):
    """A recorder writing a file, and gotrace-report --follow reading it."""
    target = start_loop(procs, loop_bin)
    trace = str(tmp_path / "f.gtr")
    rec = procs([RECORD, "-o", trace, "--flush-interval", "0.2", "-p", str(target.pid),
                 "main.add"], stderr=subprocess.PIPE)
    assert "attached" in attached(rec.p.stderr)
    rep = procs([REPORT, "--follow", "--format", "jsonl", trace], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
    return rec, rep, trace


def test_follow_reads_a_file_being_written(loop_bin, procs, tmp_path):
    """--follow: events show while the recorder writes the file; the
    report ends by itself once the recorder closes it, with every event."""
    rec, rep, trace = record_and_follow(procs, loop_bin, tmp_path)
    first = read_line(rep.p.stdout)
    assert first and rec.p.poll() is None
    rec.p.send_signal(signal.SIGINT)
    assert rec.p.wait(30) == 0
    rest = rep.p.stdout.read().decode().splitlines()
    assert rep.p.wait(30) == 0
    assert rep.p.stderr.read().decode() == ""
    whole = report(["--format", "jsonl", trace]).stdout.splitlines()
    assert len(whole) > 0 and [first.decode().rstrip("\n")] + rest == whole


def test_follow_goes_on_through_a_rotation(loop_bin, procs, tmp_path):
    """--follow of a recording rotated by -C: like tail -F, the report goes
    on to FILE1, FILE2... as the recorder closes each file and opens the
    next, and ends once the recorder ends, with the events of every file
    in order."""
    target = start_loop(procs, loop_bin)
    trace = str(tmp_path / "r.gtr")
    rec = procs([RECORD, "-o", trace, "-C", "1K", "--flush-interval", "0.2", "-d", "3",
                 "-p", str(target.pid), "main.add"], stderr=subprocess.PIPE)
    assert "-C: every file starts with" in attached(rec.p.stderr)
    assert "attached" in attached(rec.p.stderr)
    rep = procs([REPORT, "--follow", "--format", "jsonl", trace], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
    assert rec.p.wait(30) == 0
    out = rep.p.stdout.read().decode().splitlines()
    # it waits up to 10 s for a next file after the last
    assert rep.p.wait(30) == 0
    assert rep.p.stderr.read().decode() == ""
    files = [trace] + ["%s%d" % (trace, k) for k in range(1, 1000)
                       if os.path.exists("%s%d" % (trace, k))]
    assert len(files) >= 3 and os.path.exists(files[-1])
    whole = [line for f in files
             for line in report(["--format", "jsonl", f]).stdout.splitlines()]
    assert out == whole
    # from a later file of the rotation, once it is over: that file on
    later = report(["--follow", "--format", "jsonl", files[2]]).stdout.splitlines()
    assert later == [line for f in files[2:]
                     for line in report(["--format", "jsonl", f]).stdout.splitlines()]


def test_follow_ends_cleanly_on_ctrl_c(loop_bin, procs, tmp_path):
    """Ctrl-C on a following report: exit 0, the summary of what was read,
    no warning about an unclosed file."""
    rec, rep, _ = record_and_follow(procs, loop_bin, tmp_path)
    assert read_line(rep.p.stdout)
    rep.p.send_signal(signal.SIGINT)
    rep.p.stdout.read()
    assert rep.p.wait(30) == 0, rep.p.stderr.read()
    err = rep.p.stderr.read().decode()
    assert re.fullmatch(r"gotrace-report: interrupted: \d+ event\(s\) read from \S+f\.gtr; "
                        r"reading stopped .* not in this report\n", err), err
    assert rec.p.poll() is None    # the recorder goes on: it writes a file
    assert rec.stop(signal.SIGINT) == 0


def interrupt_group(procs, loop_bin, tmp_path, follow):
    """The recorder (-o -, or a file) and a report of its trace (its pipe,
    or --follow) in a process group of their own, sent SIGINT together as
    a terminal's Ctrl-C is once events flow: (recorder's stderr, report's
    stdout lines, report's stderr, the trace file or None)."""
    target = start_loop(procs, loop_bin)
    trace = str(tmp_path / "g.gtr") if follow else None
    rec = procs([RECORD, "-o", trace or "-", "--flush-interval", "0.2", "-p",
                 str(target.pid), "main.add", "r:main.add"],
                stdout=None if follow else subprocess.PIPE, stderr=subprocess.PIPE,
                process_group=0)
    assert "attached" in attached(rec.p.stderr)
    rep = procs([REPORT, "--calls", *(["--follow", trace] if follow else ["-"])],
                stdin=None if follow else rec.p.stdout, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, process_group=rec.pid)
    if not follow:
        rec.p.stdout.close()
    assert read_line(rep.p.stdout)
    time.sleep(0.5)
    os.killpg(rec.pid, signal.SIGINT)   # the group of the two processes above
    rest = rep.p.stdout.read().decode().splitlines()
    assert rec.p.wait(30) == 0 and rep.p.wait(30) == 0
    return rec.p.stderr.read().decode(), 1 + len(rest), rep.p.stderr.read().decode(), trace


def test_ctrl_c_to_both_ends_of_a_pipe_reads_all(loop_bin, procs, tmp_path):
    """Ctrl-C to the recorder and its reader at once: the report reads on
    to the end of the stream, what the recorder flushed after the signal
    and its summary included, shows every call, and says what it read."""
    rec_err, lines, err, _ = interrupt_group(procs, loop_bin, tmp_path, False)
    n, dropped = recorded_events(rec_err)
    assert dropped == 0 and n > 20, rec_err
    calls = lines - 1   # after the header
    assert calls in (n // 2, (n + 1) // 2), (calls, n)   # a call in flight shows once
    assert ("gotrace-report: interrupted: %d event(s) read from standard input, to its "
            "summary: the whole recording\n" % n) in err, err


def test_ctrl_c_to_recorder_and_follower_reads_all(loop_bin, procs, tmp_path):
    """Ctrl-C to a recorder and its --follow reader at once: the follower
    reads on to the recording's summary and shows what the whole file holds."""
    _, lines, err, trace = interrupt_group(procs, loop_bin, tmp_path, True)
    whole = report(["--calls", trace]).stdout.splitlines()
    assert len(whole) > 10 and lines == len(whole)
    assert re.search(r"interrupted: \d+ event\(s\) read from \S+g\.gtr, to its summary: the "
                     r"whole recording\n", err), err


def test_follow_ends_when_its_recorder_was_killed(loop_bin, procs, tmp_path):
    """SIGKILL leaves no summary to end on: --follow ends by itself once
    the file stops growing and no writer holds its lock (within about 5 s),
    with every event written and the warning that the file was not
    closed; a recorder that is alive but idle holds the lock, so its
    follower waits on."""
    rec, rep, trace = record_and_follow(procs, loop_bin, tmp_path)
    assert read_line(rep.p.stdout)
    rec.p.send_signal(signal.SIGKILL)
    assert rec.p.wait(30) == -signal.SIGKILL
    t0 = time.monotonic()
    rep.p.stdout.read()
    assert rep.p.wait(30) == 0
    took = time.monotonic() - t0
    assert 4.0 <= took < 15.0, took
    err = rep.p.stderr.read().decode()
    assert "f.gtr was not closed by gotrace-record (killed or crashed)" in err, err
    assert len(report(["--format", "jsonl", trace]).stdout.splitlines()) > 0


def test_follow_refuses_standard_input():
    p = subprocess.run([REPORT, "--follow", "-"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    assert p.returncode == 2 and "standard input is read live already" in p.stderr
