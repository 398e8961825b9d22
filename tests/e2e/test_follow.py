"""gotrace-record follows the processes a command or a -p target starts
(spec/PROBES.md): a process of the tree that execs a probed binary is
stopped before its first instruction, gets that binary's uprobes for its
pid and goes on; --no-inherit traces the targets alone; a probe whose
binary no traced process ran gets a note at the end."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import RECORD, record, report, wait_for
from gtr_reader import GtrReader


def calls(trace):
    """{pid: [(x, y), ...]} of the main.add events of a recording."""
    out = report(["--format", "jsonl", trace], check=False).stdout
    got = {}
    for line in out.splitlines():
        e = json.loads(line)
        got.setdefault(e["pid"], []).append((e["args"]["x"], e["args"]["y"]))
    return got


def printed(out):
    """{pid: n} of the "pid P n N" lines the spawn fixture prints."""
    return {int(p): int(n) for p, n in re.findall(r"^pid (\d+) n (\d+)$", out, re.M)}


def spawn_pair(gobuild, tmp_path):
    """The spawn fixture, and a copy of it at another path (another
    inode: another probed binary)."""
    exe = gobuild("tests/fixtures/spawn/main.go", "spawn")
    other = str(tmp_path / "spawn2")
    shutil.copy(exe, other)
    return exe, other


def waiting_spawn(procs, exe, out_path, n):
    """Starts `exe n` (the spawn fixture) waiting for a line on its input
    (SPAWN_WAIT), its output to `out_path`; returns it once ready."""
    with open(out_path, "w") as out:
        p = procs([exe, str(n)], stdin=subprocess.PIPE, stdout=out, text=True,
                  env=dict(os.environ, SPAWN_WAIT="1"))
    assert wait_for(lambda: "ready" in out_path.read_text())
    return p


def test_shell_command_runs_a_probed_program_twice(gobuild, tmp_path, procs):
    """sh -c 'P 2; P 1': each run of P is its own process, recorded under
    its own pid; a process of P that the test starts at the same time
    (not in the command's tree) is not traced."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    done = tmp_path / "unrelated.out"
    unrelated = waiting_spawn(procs, exe, done, 3)
    trace = str(tmp_path / "x.gtr")
    # the command lets the unrelated process run while it is recorded,
    # and ends once that one has called main.add
    script = ("%s 2; echo go > /proc/%d/fd/0; %s 1; "
              "until grep -q '^pid' %s; do sleep 0.05; done" % (exe, unrelated.pid, exe, done))
    p = record(["-v", "-o", trace, exe + ":main.add", "--", "sh", "-c", script])
    assert unrelated.p.wait(20) == 0 and printed(done.read_text()) == {unrelated.pid: 3}
    runs = printed(p.stdout)
    assert sorted(runs.values()) == [1, 2], p.stdout
    got = calls(trace)
    assert set(got) == set(runs), (got, p.stderr)
    for pid, n in runs.items():
        assert got[pid] == [(n, i) for i in range(1, n + 1)]
    stops = [float(ms) for ms in re.findall(
        r"process \d+ of the traced tree exec'd a probed binary: its uprobes "
        r"attached; stopped for ([\d.]+) ms", p.stderr)]
    assert len(stops) == 2, p.stderr
    assert "warning" not in p.stderr and "note" not in p.stderr


def test_go_program_starts_go_programs(gobuild, tmp_path):
    """A Go program that runs another through os/exec, which runs a third
    (a copy at another path): the calls of all three, each under its pid;
    with --no-inherit only the command's, and a note that the copy never
    ran in a traced process."""
    exe, other = spawn_pair(gobuild, tmp_path)
    argv = [exe, "1", exe, "2", other, "3"]
    trace = str(tmp_path / "x.gtr")
    p = record(["-v", "-o", trace, "main.add", other + ":main.add", "--", *argv])
    runs = printed(p.stdout)
    assert sorted(runs.values()) == [1, 2, 3], p.stdout
    got = calls(trace)
    assert {pid: got.get(pid) for pid in runs} == \
        {pid: [(n, i) for i in range(1, n + 1)] for pid, n in runs.items()}, p.stderr
    assert len(re.findall(r"of the traced tree exec'd a probed binary", p.stderr)) == 2
    assert "note" not in p.stderr

    trace = str(tmp_path / "n.gtr")
    p = record(["-o", trace, "--no-inherit", "main.add", other + ":main.add", "--", *argv])
    runs = printed(p.stdout)
    first = [pid for pid, n in runs.items() if n == 1]
    assert calls(trace) == {first[0]: [(1, 1)]}
    assert "note: probe '%s:main.add': %s was not run by any traced process" \
        % (other, other) in p.stderr


def test_wrapper_command_needs_the_binary_named(gobuild, tmp_path):
    """sh -c P with a probe that names no binary: refused (sh is not a Go
    program) with the probe's text as the example of what to write; named
    with P's path, the calls of P are recorded."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    trace = str(tmp_path / "x.gtr")
    p = record(["-o", trace, "main.add", "--", "sh", "-c", exe + " 1"], check=False)
    assert p.returncode == 1
    assert p.stderr.endswith(" is not a Go program (no .gopclntab and no Go build "
                             "info); for a command that runs a Go program (a shell, "
                             "make), name the binary of each probe (BINARY:FUNCTION, "
                             "e.g. ./prog:main.add): the processes it starts are "
                             "followed\n"), p.stderr
    assert not os.path.exists(trace)
    p = record(["-o", trace, exe + ":main.add", "--", "sh", "-c", exe + " 1"])
    runs = printed(p.stdout)
    assert calls(trace) == {pid: [(1, 1)] for pid in runs} and len(runs) == 1


def test_probe_of_a_binary_no_traced_process_runs(gobuild, tmp_path, procs):
    """The binary of a probe that ran only outside the command's tree: no
    event, and a note that names the probe and the binary."""
    exe, other = spawn_pair(gobuild, tmp_path)
    unrelated = procs([other, "2"], stdout=subprocess.PIPE, text=True)
    trace = str(tmp_path / "x.gtr")
    p = record(["-o", trace, other + ":main.add", "--", "sh", "-c", exe + " 1"])
    assert unrelated.p.wait(20) == 0
    assert calls(trace) == {}
    assert "gotrace-record: note: probe '%s:main.add': %s was not run by any " \
        "traced process" % (other, other) in p.stderr


def test_pid_target_that_starts_a_probed_program(gobuild, tmp_path, procs):
    """A -p target that runs a program through os/exec: the child's calls
    are recorded; the recording ends with the target."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    target = procs([exe, "1", exe, "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                   text=True, env=dict(os.environ, SPAWN_WAIT="1"))
    assert target.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(target.pid), "main.add"],
                stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: " attached (" in rec.p.stderr.readline(), timeout=30)
    target.p.stdin.write("go\n")
    target.p.stdin.flush()
    assert target.p.wait(20) == 0
    runs = printed(target.p.stdout.read())
    assert rec.p.wait(20) == 0
    assert calls(trace) == {pid: [(n, i) for i in range(1, n + 1)]
                            for pid, n in runs.items()}
    assert sorted(runs.values()) == [1, 2]


def state(pid):
    """The state letter of process `pid` (R, S, T, Z, ...), None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def children_of(ppid):
    """The pids whose parent is `ppid`."""
    out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == ppid:
                    out.append(int(d))
        except (ValueError, OSError):
            pass
    return out


def test_second_signal_lets_held_children_go(gobuild, tmp_path, procs):
    """A command that ignores SIGTERM and starts a probed program again
    and again: the first SIGTERM is passed on to it, a second ends the
    recorder (by that signal) after it let go the child it held, with a
    whole file. No child the command started is left stopped."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    pids, storm_pid = tmp_path / "pids", tmp_path / "storm.pid"
    storm = tmp_path / "storm.sh"
    storm.write_text("trap '' TERM\necho $$ > %s\nwhile :; do %s 1 >/dev/null & "
                     "echo $! >> %s; wait $!; done\n" % (storm_pid, exe, pids))
    trace, log = str(tmp_path / "s.gtr"), tmp_path / "rec.err"
    # a file, not a pipe: the command keeps the recorder's stderr open
    with open(log, "w") as f:
        rec = procs([RECORD, "-o", trace, exe + ":main.add", "--", "sh", str(storm)],
                    stdout=subprocess.DEVNULL, stderr=f)
    assert wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 20)
    sh = int(storm_pid.read_text())
    try:
        rec.p.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        rec.p.send_signal(signal.SIGTERM)
        code = rec.p.wait(20)
        started = set(children_of(sh))
    finally:
        os.kill(sh, signal.SIGKILL)   # the command, which ignores SIGTERM
    err = log.read_text()
    assert code == -signal.SIGTERM, err
    started |= {int(p) for p in pids.read_text().split()}
    held = [p for p in started if state(p) == "T"]
    for p in held:
        os.kill(p, signal.SIGKILL)
    assert not held, err
    assert len(started) >= 20
    assert calls(trace), err    # whole: the report reads its events
    assert "cannot let process" not in err


def test_child_killed_while_held_is_reported_as_exited(gobuild, tmp_path, procs):
    """A child killed (SIGKILL) while it is stopped for its uprobes (held
    for certain: the recorder itself is stopped meanwhile; the child is
    not reaped before the recorder has read of it): the recorder says it
    exited, no warning, and its exit is recorded with its signal."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    # the child's parent is a subshell that becomes a sleep, which never
    # reaps it (a shell may reap a background job at any time); the stop
    # is watched with shell builtins only: no fork between looks
    pidfile = tmp_path / "child.pid"
    script = ("read go; (%s 1 & echo $! > %s; exec sleep 60) & sub=$!; "
              "until [ -s %s ]; do :; done; read -r p < %s; "
              "while read -r l < /proc/$p/stat; do "
              "case \"$l\" in *') T '*|*') Z '*) break;; esac; done; "
              "s=${l##*) }; s=${s%%%% *}; kill -9 $p; "
              "echo \"pid $p state $s\"; read done; kill $sub" % (exe, pidfile, pidfile, pidfile))
    trace, out, log = str(tmp_path / "k.gtr"), tmp_path / "cmd.out", tmp_path / "rec.err"
    with open(out, "w") as o, open(log, "w") as e:
        rec = procs([RECORD, "-o", trace, exe + ":main.add", "--", "sh", "-c", script],
                    stdin=subprocess.PIPE, stdout=o, stderr=e, text=True)
    # the command waits to read once the probes are attached
    sh = wait_for(lambda: [k for k in children_of(rec.pid)
                           if os.readlink("/proc/%d/exe" % k) != os.path.realpath(RECORD)
                           and state(k) == "S"])
    assert sh, "the recorder's command never waited to read"
    os.kill(rec.pid, signal.SIGSTOP)
    rec.p.stdin.write("go\n")
    rec.p.stdin.flush()
    m = wait_for(lambda: re.search(r"^pid (\d+) state (\w)$", out.read_text(), re.M))
    os.kill(rec.pid, signal.SIGCONT)
    assert m and m.group(2) == "T", out.read_text()
    pid = int(m.group(1))
    said = "gotrace-record: process %d of the traced tree exited before its uprobes " \
        "were attached" % pid
    assert wait_for(lambda: said in log.read_text()), log.read_text()
    rec.p.stdin.write("done\n")
    rec.p.stdin.close()
    assert rec.p.wait(60) == 0
    err = log.read_text()
    assert [ln for ln in err.splitlines() if str(pid) in ln] == [said], err
    assert "warning" not in err and "No such" not in err, err
    r = GtrReader(trace)
    list(r.items())
    assert [(q["exited"], q["exit_code"]) for q in r.processes if q["pid"] == pid] \
        == [(True, -9)], r.processes


def test_memory_stays_flat_over_many_children(gobuild, toolchain, tmp_path):
    """300 children of the command run a binary of 400-odd probes (gc;
    gccgo's has its own functions only, its standard library being
    libgo's), one after the other: each is followed (its call recorded
    under its pid), and the recorder frees what it kept for each when it
    exits, so its resident memory after the 300th is within 1 MiB of
    what it was after the 50th (it grew by about 7 KiB a child)."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    script = ("i=0; while [ $i -lt 300 ]; do %s 1 >/dev/null; i=$((i+1)); "
              "case $i in 50|300) grep VmRSS /proc/$PPID/status;; esac; done" % exe)
    probes = [exe + ":main.*"] if toolchain.gccgo else \
        [exe + ":main.add", exe + ":time.*", exe + ":reflect.*"]
    trace = str(tmp_path / "m.gtr")
    p = record(["-o", trace, *probes, "--", "sh", "-c", script])
    kb = [int(v) for v in re.findall(r"^VmRSS:\s+(\d+) kB$", p.stdout, re.M)]
    assert len(kb) == 2, p.stdout
    assert kb[1] - kb[0] < 1024, (kb, p.stderr)
    adds = report(["--format", "jsonl", "-f", 'func == "main.add"', trace]).stdout
    assert len({json.loads(ln)["pid"] for ln in adds.splitlines()}) == 300, p.stderr
