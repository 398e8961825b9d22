"""gotrace-record -p with processes of different binaries: a probe without
BINARY: is planned in the executable of every -p process (each distinct
binary once), where it is found; and the messages of probes and targets
gotrace-record cannot use."""
import json
import signal
import subprocess

from conftest import RECORD, record, report, wait_for


def start(procs, exe):
    p = procs([exe], stdout=subprocess.PIPE, text=True)
    assert p.p.stdout.readline().startswith("ready")
    return p


def events(path):
    out = report(["--format", "jsonl", path], check=False).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def until_attached(rec):
    """The lines gotrace-record writes before the one saying it attached
    (a gccgo program's notes about goroutine ids left out), and that one."""
    lines = []
    while True:
        line = rec.p.stderr.readline()
        assert line, "gotrace-record ended: %s" % "".join(lines)
        if "attached" in line:
            return lines, line
        if "goroutine ids are not read" not in line:
            lines.append(line)


def test_probes_are_planned_in_each_binary_of_the_pids(gobuild, toolchain, tmp_path, procs):
    loop_bin = gobuild("tests/fixtures/loop/main.go", "loop")
    tick_bin = gobuild("tests/fixtures/tick/main.go", "tick")
    loop, loop2, tick = start(procs, loop_bin), start(procs, loop_bin), start(procs, tick_bin)
    add, tk = toolchain.fname("main.add"), toolchain.fname("main.tick")
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(loop.pid), "-p", str(tick.pid),
                 "-p", str(loop2.pid), add, tk], stderr=subprocess.PIPE, text=True)
    notes, line = until_attached(rec)
    # each function where it is, one note naming the binary without it;
    # loop's two processes share one plan and are each attached
    assert notes == [
        "gotrace-record: probe '%s': not in %s (PID %d); probed only where "
        "it is\n" % (add, tick_bin, tick.pid),
        "gotrace-record: probe '%s': not in %s (PID %d, %d); probed only "
        "where it is\n" % (tk, loop_bin, loop.pid, loop2.pid)]
    assert "2 probes attached (3 uprobes)" in line
    want = {(loop.pid, add), (loop2.pid, add), (tick.pid, tk)}
    assert wait_for(lambda: want <= {(e["pid"], e["func"]) for e in events(trace)})
    assert rec.stop(signal.SIGINT) == 0
    assert {(e["pid"], e["func"]) for e in events(trace)} == want
    # A glob found in both: probed in each.
    trace2 = str(tmp_path / "t2.gtr")
    rec = procs([RECORD, "-o", trace2, "-p", str(loop.pid), "-p", str(tick.pid),
                 "main.*"], stderr=subprocess.PIPE, text=True)
    notes, line = until_attached(rec)
    assert notes == []
    assert wait_for(lambda: {loop.pid, tick.pid} <= {e["pid"] for e in events(trace2)})
    assert rec.stop(signal.SIGINT) == 0
    # Found nowhere: the binaries searched.
    p = record(["-o", str(tmp_path / "x.gtr"), "-p", str(loop.pid), "-p", str(tick.pid),
                "main.nosuch"], check=False)
    assert p.returncode == 1 and p.stderr.endswith(
        "gotrace-record: probe 'main.nosuch': found in none of the traced processes' "
        "binaries: %s (PID %d), %s (PID %d); gotrace-record --list -p PID 'GLOB' "
        "lists a process's functions\n" % (loop_bin, loop.pid, tick_bin, tick.pid))


def test_messages_name_the_probe_and_the_process(loop_bin, tmp_path, procs):
    loop = start(procs, loop_bin)
    out = str(tmp_path / "x.gtr")
    p = record(["-o", out, "-p", str(loop.pid), "p:r:main.add"], check=False)
    assert p.returncode == 1 and p.stderr == (
        "gotrace-record: probe 'p:r:main.add': no binary 'r' (No such file or directory); "
        "BINARY: is the path of a Go executable (write p: or r: once, first), or leave "
        "it out to probe the traced process\n")
    p = record(["-o", out, "-p", str(loop.pid), "x:main.add"], check=False)
    assert p.returncode == 1 and p.stderr == (
        "gotrace-record: probe 'x:main.add': no binary 'x' (No such file or directory); "
        "BINARY: is the path of a Go executable, or leave it out to probe the traced "
        "process\n")
    sleeper = procs(["sleep", "60"])
    p = record(["-o", out, "-p", str(loop.pid), "-p", str(sleeper.pid), "main.add"],
               check=False)
    assert p.returncode == 1 and p.stderr.endswith(
        "gotrace-record: process %d (sleep) is not a Go program (no .gopclntab and no Go "
        "build info); give the PID of a Go program, or name the binary of each probe "
        "(BINARY:FUNCTION)\n" % sleeper.pid)
