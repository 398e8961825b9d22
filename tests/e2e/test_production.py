"""gotrace-record on production hosts: target modes, limits, rotation,
refusals, and files that stay readable whatever happens to the recorder."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

import conftest
from conftest import RECORD, record, report, wait_for


def events(path, *args):
    out = report(["--format", "jsonl", *args, path], check=False).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def start_loop(procs, loop_bin):
    p = procs([loop_bin], stdout=subprocess.PIPE, text=True)
    assert p.p.stdout.readline().startswith("ready")
    return p


def attached(rec):
    line = conftest.attached(rec.p.stderr)
    assert "attached" in line, line
    return line


def test_several_pids(loop_bin, tmp_path, procs):
    a, b = start_loop(procs, loop_bin), start_loop(procs, loop_bin)
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(a.pid), "-p", str(b.pid),
                 "main.add"], stderr=subprocess.PIPE, text=True)
    attached(rec)
    assert wait_for(lambda: {e["pid"] for e in events(trace)} == {a.pid, b.pid})
    assert rec.stop(signal.SIGINT) == 0


def test_every_process_of_a_binary_including_later_ones(loop_bin, tmp_path, procs):
    """No -p and no command: BINARY:FUNCTION traces every process of the
    binary, among them one started after the recorder."""
    before = start_loop(procs, loop_bin)
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "%s:main.add" % loop_bin],
                stderr=subprocess.PIPE, text=True)
    attached(rec)
    after = start_loop(procs, loop_bin)
    assert wait_for(lambda: {before.pid, after.pid} <= {e["pid"] for e in events(trace)})
    assert rec.stop(signal.SIGINT) == 0
    evs = events(trace)
    assert all(e["goargs"][0] == 42 for e in evs)


def test_probe_without_binary_and_without_target_is_refused(tmp_path, needs_bpf):
    p = record(["-o", str(tmp_path / "t.gtr"), "main.add"], check=False)
    assert p.returncode == 1 and p.stderr == (
        "gotrace-record: probe 'main.add' names no binary; write BINARY:FUNCTION to trace "
        "every process of BINARY, or give -p PID or -- CMD\n")


def test_duration_and_max_events(loop_bin, tmp_path, procs):
    target = start_loop(procs, loop_bin)
    t0 = time.monotonic()
    trace = str(tmp_path / "d.gtr")
    p = record(["-o", trace, "-d", "1.5", "-p", str(target.pid), "main.add"])
    assert 1.0 < time.monotonic() - t0 < 30
    assert "--duration reached" in p.stderr
    assert len(events(trace)) > 10
    trace2 = str(tmp_path / "m.gtr")
    p = record(["-o", trace2, "--max-events", "20", "-p", str(target.pid),
                "main.add"])
    assert "--max-events reached" in p.stderr
    assert len(events(trace2)) >= 20


def test_rotation_files_are_complete(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    out = str(tmp_path / "r.gtr")
    record(["-q", "-C", "40K", "-W", "3", "-o", out, "main.add", "--", exe, "100000"])
    names = sorted(f for f in os.listdir(tmp_path) if f.startswith("r.gtr"))
    assert names == ["r.gtr", "r.gtr1", "r.gtr2"]
    total, empty = 0, []
    newest = max(names, key=lambda n: os.stat(tmp_path / n).st_mtime_ns)
    for n in names:
        r = report(["--format", "jsonl", str(tmp_path / n)])
        assert "truncated" not in r.stderr and "damaged" not in r.stderr
        evs = [json.loads(l) for l in r.stdout.splitlines()]
        assert all(e["func"] == "main.add" for e in evs)
        if not evs:
            empty.append(n)
        # each file names its probes and binary on its own
        info = report(["info", str(tmp_path / n)]).stdout
        assert "main.add" in info
        total += len(evs)
    # only the file begun last may hold no event: the command can end
    # right after a rotation
    assert empty in ([], [newest])
    assert 0 < total <= 100000


@pytest.mark.parametrize("rotate", ["none", "all", "two"])
def test_bytes_written_is_the_size_on_disk(gobuild, tmp_path, rotate):
    """The recorder's "N bytes written" counts every byte of its files,
    their summary and index blocks included: the file's size, or with a
    rotation that keeps every file the sum of theirs; the files it names
    are those kept ("s.gtr and s.gtr1 (2 files kept)" for two)."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    out = str(tmp_path / "s.gtr")
    rot = {"none": [], "all": ["-C", "40K", "-W", "100"], "two": ["-C", "40K", "-W", "2"]}
    p = record([*rot[rotate], "-o", out, "main.add", "r:main.add", "--", exe, "20000"])
    m = re.search(r"gotrace-record: \d+ events, 0 dropped, (\d+) bytes written to (.*)\n",
                  p.stderr)
    assert m, p.stderr
    names = sorted(f for f in os.listdir(tmp_path) if f.startswith("s.gtr"))
    n = len(names)
    if rotate == "none":
        assert names == ["s.gtr"] and m.group(2) == out
    elif n == 2:
        assert m.group(2) == "%s and %s1 (2 files kept)" % (out, out), p.stderr
    else:
        assert m.group(2) == "%s and %s1..%s%d (%d files kept)" % (out, out, out, n - 1, n)
    if rotate == "two":
        assert n == 2, names
    else:
        assert n > 1 if rotate == "all" else n == 1, names
        assert int(m.group(1)) == sum(os.path.getsize(tmp_path / f) for f in names), p.stderr


def test_kill_9_of_the_recorder_leaves_a_readable_file(loop_bin, tmp_path, procs):
    target = start_loop(procs, loop_bin)
    trace = str(tmp_path / "k.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(target.pid), "main.add"],
                stderr=subprocess.PIPE, text=True)
    attached(rec)
    assert wait_for(lambda: len(events(trace)) >= 50)
    time.sleep(1.2)  # frames are flushed at least once a second
    before = len(events(trace))
    rec.p.kill()
    rec.p.wait()
    r = report(["--format", "jsonl", trace], check=False)
    assert r.returncode == 0
    evs = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(evs) >= before
    ys = [e["goargs"][1] for e in evs]
    assert ys == list(range(ys[0], ys[0] + len(ys)))
    assert target.p.poll() is None  # the target survives its tracer


def test_refusals_name_the_problem(functions, tmp_path, toolchain):
    # Without privileges.
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", "--inh-caps=-all", RECORD, "-o",
                        str(tmp_path / "x.gtr"), "main.add", "--", functions],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr == ("gotrace-record: not allowed to load BPF programs and attach uprobes; "
                        "run as root, or with CAP_BPF and CAP_PERFMON (e.g. sudo "
                        "gotrace-record ...)\n")
    # Bad option values.
    p = record(["-o", str(tmp_path / "x.gtr"), "-b", "3000", "main.add", "--",
                functions], check=False)
    assert p.returncode == 2 and p.stderr == (
        "gotrace-record: invalid buffer size '3000' (expected a power of two from 4K to 1024M)\n")
    p = record(["-o", str(tmp_path / "x.gtr"), "-d", "soon", "main.add", "--",
                functions], check=False)
    assert p.returncode == 2 and p.stderr == (
        "gotrace-record: invalid duration 'soon' (expected seconds, e.g. 30 or 0.5)\n")
    # Too many probes for the guard
    # (a gccgo program's runtime is libgo's: its own main.* are enough);
    # the message gives the count, with the probes before it
    glob = "main.*" if toolchain.gccgo else "runtime.*"
    p = record(["-o", str(tmp_path / "x.gtr"), "--max-probes", "3",
                glob, "--", functions], check=False)
    m = re.fullmatch((
        "gotrace-record: probe '%s' matches ([0-9]+) functions of %s, more than "
        "--max-probes 3; narrow the glob \\(--exclude GLOB\\) or raise "
        "--max-probes\n") % (re.escape(glob), re.escape(functions)), p.stderr)
    assert p.returncode == 1 and m and int(m.group(1)) > 3, p.stderr
    n = int(m.group(1))
    # a return probe before it (main.* leaves an entry probe's function
    # to it: a call is recorded once per kind)
    p = record(["-o", str(tmp_path / "x.gtr"), "--max-probes", str(n), "r:main.add",
                glob, "--", functions], check=False)
    assert p.returncode == 1 and p.stderr.endswith(
        "gotrace-record: probe '%s' matches %d functions of %s (%d with the probes "
        "before it), more than --max-probes %d; narrow the glob (--exclude GLOB) or "
        "raise --max-probes\n" % (glob, n, functions, n + 1, n)), p.stderr
    assert not os.path.exists(tmp_path / "x.gtr")


def test_no_status_line_when_not_a_terminal(functions, tmp_path):
    p = record(["-o", str(tmp_path / "s.gtr"), "main.add", "--", functions])
    assert "\r" not in p.stderr and "\033[" not in p.stderr
    assert re.search(r"\d+ events, 0 dropped", p.stderr)


def test_record_time_predicate_runs_in_bpf(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "p.gtr")
    record(["-q", "-o", trace, "main.add (goarg2 >= 99990 && goarg1 == 42)",
            "--", exe, "100000"])
    assert [e["goargs"][1] for e in events(trace)] == list(range(99990, 100000))
    # len() of a string, and a constant on the left.
    trace = str(tmp_path / "l.gtr")
    record(["-q", "-o", trace, "main.greet (len(s) == 5 && 1 <= n)", "--",
            gobuild("examples/functions/main.go", "functions"), "3"])
    assert [e["args"]["n"] for e in events(trace)] == [1, 2]
    # A return probe's results, by retval and goretN, with parentheses: the
    # same text gotrace-report -f reads (add(42, i) returns 42 + i).
    trace = str(tmp_path / "r.gtr")
    pred = "99990 < retval && (goret1 <= 100000 && retval != 99995)"
    record(["-q", "-o", trace, "r:main.add (%s)" % pred, "--", exe, "100000"])
    rets = [e["goargs"][0] for e in events(trace)]
    assert rets == [r for r in range(99991, 100001) if r != 99995]
    assert [e["goargs"][0] for e in events(trace, "-f", pred)] == rets


def test_predicates_bpf_cannot_run_are_refused_with_a_hint(functions, tmp_path):
    # filters the kernel cannot run point to report-time filtering
    for pred, why in [('s == "x"', "strings are compared at report time at column 6"),
                      ("len(n) > 1", "len() takes a string, []byte or slice (an array's length is in its type) at column 1"),
                      ("n == 1 || n == 2", "'||' is evaluated at report time at column 8"),
                      ("pid == 1", "'pid' is not a captured value but the event's, "
                       "known at report time (a parameter of that name is goargN) at "
                       "column 1"),
                      ("goret1 > 0", "unknown value 'goret1' (results are captured by "
                       "return probes, r:FUNCTION) at column 1")]:
        p = record(["-o", str(tmp_path / "x.gtr"), "main.greet (%s)" % pred,
                    "--", functions], check=False)
        assert p.returncode == 1, pred
        assert p.stderr == (
            "gotrace-record: probe 'main.greet (%s)': record-time predicate '%s': %s; in BPF "
            "gotrace compares captured integers (or len() of strings) with constants, joined "
            "by &&; record without it and filter with gotrace-report -f '%s'\n"
            % (pred, pred, why, pred)), p.stderr
    # what is not a filter at all gets the filter's own message and column
    for pred, why in [("n * 2 > 1", "unexpected character '*' at column 3"),
                      ("n == 010", "integer literal with a leading zero (write decimal "
                       "without it, or hex as 0x...) at column 6")]:
        p = record(["-o", str(tmp_path / "x.gtr"), "main.greet (%s)" % pred,
                    "--", functions], check=False)
        assert p.returncode == 1, pred
        assert p.stderr == (
            "gotrace-record: probe 'main.greet (%s)': record-time predicate '%s': %s "
            "(predicates are written as filters of gotrace-report -f, spec/FILTER.md)\n"
            % (pred, pred, why)), p.stderr
        f = report(["print", "-f", pred, str(tmp_path / "none.gtr")], check=False)
        assert why in f.stderr, f.stderr


def test_rate_limit_counts_what_it_suppresses(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "r.gtr")
    p = record(["-o", trace, "-r", "500", "main.add", "--", exe, "3s"])
    calls = int(p.stdout.split()[0])
    kept = len(events(trace))
    m = re.search(r"(\d+) events suppressed", p.stderr)
    assert m, p.stderr
    suppressed = int(m.group(1))
    assert kept + suppressed == calls
    assert 500 <= kept <= 500 * 6  # at most 500 per started second, and slack
    info = report(["info", trace]).stdout
    assert str(suppressed) in info and "lost:        0 events" in info
    r = report([trace])
    assert "were lost" not in r.stderr and "suppressed" in r.stderr


def test_make_install_puts_programs_and_man_pages(tmp_path):
    from conftest import ROOT
    subprocess.run(["make", "-s", "install", "PREFIX=/usr", "DESTDIR=%s" % tmp_path],
                   cwd=ROOT, check=True, capture_output=True)
    for prog in ("gotrace-record", "gotrace-report"):
        assert os.access(tmp_path / "usr/bin" / prog, os.X_OK)
        page = tmp_path / "usr/share/man/man1" / (prog + ".1")
        out = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                             env=dict(os.environ, MANPAGER="cat", MANWIDTH="80"))
        assert out.returncode == 0 and "EXAMPLES" in out.stdout
    v = subprocess.run([str(tmp_path / "usr/bin/gotrace-record"), "--version"],
                       capture_output=True, text=True)
    assert v.stdout.startswith("gotrace-record ")


def test_fallback_without_multi_uprobe_links(functions, toolchain, tmp_path):
    """Kernels before 6.6 have no uprobe-multi link: one perf-event uprobe
    per site must give the same events."""
    out = {}
    for mode, env in (("multi", {}), ("single", {"GOTRACE_NO_MULTI": "1"})):
        trace = str(tmp_path / ("%s.gtr" % mode))
        p = subprocess.run([RECORD, "-o", trace, "main.add", "r:main.add",
                            "main.greet", "--", functions, "3"],
                           capture_output=True, text=True,
                           env=dict(os.environ, **env))
        assert p.returncode == 0, p.stderr
        # 2 entries + 1 RET (gccgo's add has 2: after its split-stack
        # call too), counted alike
        assert "(%d uprobes)" % (4 if toolchain.gccgo else 3) in p.stderr
        out[mode] = [(e["func"], e["kind"], e["goargs"]) for e in events(trace)]
    assert out["multi"] == out["single"] and len(out["multi"]) == 9


def test_many_probes_on_a_stripped_debian_binary(tmp_path, procs, caddy):
    """Thousands of probes on caddy's functions attach at once (one
    uprobe-multi link) and detach cleanly; caddy keeps serving."""
    srv, get = caddy, caddy.get
    trace = str(tmp_path / "many.gtr")
    rec = procs([RECORD, "-o", trace, "-m", "20000", "-p", str(srv.pid),
                 "github.com/caddyserver/caddy/v2/modules/caddyhttp*"],
                stderr=subprocess.PIPE, text=True)
    line = rec.p.stderr.readline()
    n = int(re.search(r"(\d+) probes attached", line).group(1))
    assert n > 1000, line
    for _ in range(3):
        assert get() == b"hello from caddy"
    time.sleep(0.3)
    assert rec.stop(signal.SIGINT) == 0
    evs = events(trace)
    assert len(evs) > 10
    assert all(e["func"].startswith("github.com/caddyserver/caddy/v2/modules/caddyhttp")
               for e in evs)
    assert get() == b"hello from caddy"


def test_binary_inside_a_container_root(loop_bin, tmp_path, procs):
    """A process whose root is elsewhere (a chroot, as in a container):
    BINARY is named as the process sees it, found under /proc/PID/root
    (a gccgo program with its shared libraries: libgo, libc, the loader)."""
    import shutil
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    shutil.copy(loop_bin, root / "app" / "svc")
    libs = subprocess.run(["ldd", loop_bin], capture_output=True, text=True).stdout
    for lib in re.findall(r"(/\S+) \(0x", libs):
        (root / lib[1:]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lib, root / lib[1:])
    assert not os.path.exists("/app/svc")
    target = procs(["chroot", str(root), "/app/svc"], stdout=subprocess.PIPE, text=True)
    assert target.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "c.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(target.pid), "/app/svc:main.add"],
                stderr=subprocess.PIPE, text=True)
    attached(rec)
    assert wait_for(lambda: len(events(trace)) >= 3)
    assert rec.stop(signal.SIGINT) == 0
    assert all(e["goargs"][0] == 42 and e["comm"] == "svc" for e in events(trace))
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert info["binaries"][0]["path"] == "/app/svc"


def test_processes_that_come_and_go_are_recorded(functions, tmp_path, procs):
    """Every process of a binary: short-lived ones one after another, each
    with its process record, exit and mappings; events keep their pid."""
    trace = str(tmp_path / "p.gtr")
    rec = procs([RECORD, "-o", trace, "%s:main.add" % functions],
                stderr=subprocess.PIPE, text=True)
    attached(rec)
    pids = []
    for _ in range(3):
        p = subprocess.run([functions, "2"], capture_output=True, text=True)
        assert p.returncode == 0
    time.sleep(2.5)  # exits are noticed once a second
    assert rec.stop(signal.SIGINT) == 0
    evs = events(trace)
    pids = sorted({e["pid"] for e in evs})
    assert len(pids) == 3 and len(evs) == 6
    info = json.loads(report(["info", "--json", trace]).stdout)
    seen = {p["pid"] for p in info["processes"] if not p["exited"]}
    gone = {p["pid"] for p in info["processes"] if p["exited"]}
    assert set(pids) == seen == gone
    # each exit seen by the kernel, with its status (they exit 0)
    assert [p["exit_code"] for p in info["processes"] if p["exited"]] == [0, 0, 0]
    assert {m["pid"] for m in info["mappings"]} == set(pids)


def test_status_line_on_a_terminal(functions, tmp_path):
    """On a terminal the recorder shows a live status line on stderr."""
    trace = str(tmp_path / "s.gtr")
    env = dict(os.environ)
    env.pop("CI", None)
    # script(1) gives the recorder a terminal; -d 1.5 lasts one update
    tty = subprocess.run(["script", "-qec",
                          "%s -o %s -d 1.5 %s:main.add" % (RECORD, trace, functions),
                          "/dev/null"], capture_output=True, text=True, env=env, timeout=60)
    assert "1 probe, 0 events (0/s), 0 dropped" in tty.stdout, tty.stdout
    assert "\033[K" in tty.stdout


def test_limits_stop_recording_but_let_the_command_finish(gobuild, tmp_path):
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "d.gtr")
    p = record(["-o", trace, "-d", "0.5", "main.add", "--", exe, "2s"])
    assert p.returncode == 0
    calls = int(p.stdout.split()[0])   # the command ran its full 2 s
    assert "waiting for" in p.stderr and "--duration reached" in p.stderr
    n = len(events(trace))
    assert 0 < n < calls
    trace = str(tmp_path / "m.gtr")
    p = record(["-o", trace, "--max-events", "100", "main.add", "--", exe, "200000"])
    assert len(events(trace)) == 100
    assert p.stdout.split()[0] == "200000"


def test_pid_checks(loop_bin, tmp_path, procs):
    target = start_loop(procs, loop_bin)
    p = record(["-o", str(tmp_path / "x.gtr"), "--no-inherit", "-p", str(target.pid),
                "/usr/bin/caddy:net/http.(*conn).serve"], check=False)
    assert p.returncode != 0 and "not mapped by the traced process" in p.stderr
    # Without --no-inherit a process the target starts may run it: a note.
    p = record(["-o", str(tmp_path / "x.gtr"), "-d", "0.3", "-p", str(target.pid),
                "/usr/bin/caddy:net/http.(*conn).serve"])
    assert "note: /usr/bin/caddy is not mapped by the traced process" in p.stderr
    # The same PID twice is traced once.
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(target.pid), "-p", str(target.pid),
                 "main.add"], stderr=subprocess.PIPE, text=True)
    assert "(1 uprobe)" in attached(rec)
    assert wait_for(lambda: len(events(trace)) >= 5)
    assert rec.stop(signal.SIGINT) == 0
    ys = [e["goargs"][1] for e in events(trace)]
    assert len(ys) == len(set(ys))


def test_process_that_execs_itself(gobuild, toolchain, tmp_path):
    """Same PID and name, a new image at a new address (PIE): the recorder
    notices from the probed address, records the new mapping, and stacks
    of both images are named from the file alone."""
    exe = gobuild("tests/fixtures/reexec/main.go", "reexec", "-buildmode=pie")
    trace = str(tmp_path / "x.gtr")
    p = record(["-q", "-U", "-o", trace, "main.add", "--", exe])
    assert p.stdout.splitlines() == ["before exec 43", "after exec 44"]
    evs = events(trace)
    assert [e["args"]["y"] for e in evs] == [1, 2]
    assert evs[0]["pid"] == evs[1]["pid"]
    if toolchain.gccgo:
        # left to do: libgo's start-up is slow enough that /proc/PID/maps
        # is read after the exec, so the first image's mapping is missed
        # and its frames stay addresses; the new image's are named
        assert evs[1]["stack"][0].startswith("main.add") and \
            evs[1]["stack"][1].startswith("main.main")
        return
    assert all(e["stack"][0].startswith("main.add") and
               e["stack"][1].startswith("main.main") for e in evs)
    info = json.loads(report(["info", "--json", trace]).stdout)
    starts = {m["start"] for m in info["mappings"] if m["binary_id"] == 0}
    assert len(starts) == 2


def _reexec_calls(trace):
    """(func, y) of each event of a reexecthread recording, and its pids."""
    evs = events(trace)
    return [(e["func"], e["args"].get("y")) for e in evs], {e["pid"] for e in evs}


def _traced_until_exit(procs, argv, trace, probe, *opts, env=None):
    """Starts argv (a program that prints "ready" and waits for a line),
    records `probe` in it with -p and opts, and lets it go on; returns
    (the target, its exit code, the recorder)."""
    target = procs(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert target.p.stdout.readline().startswith("ready")
    rec = procs([RECORD, *opts, "-o", trace, "-p", str(target.pid), probe],
                stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: " attached (" in rec.p.stderr.readline(), timeout=30)
    target.p.stdin.write("go\n")
    target.p.stdin.flush()
    return target, target.p.wait(20), rec


def test_process_that_execs_itself_from_another_thread(gobuild, toolchain, tmp_path):
    """An exec from a thread other than the first ends the thread the
    kernel's pid filter of the uprobes followed: the recorder attaches
    them again while the new image is stopped before its first
    instruction, so that each image's entry point and calls are recorded,
    under the one pid, once each; with uprobe-multi links and with one
    perf-event uprobe a site (the fallback)."""
    exe = gobuild("tests/fixtures/reexecthread/main.go", "reexecthread")
    entry = "_start" if toolchain.gccgo else "_rt0_amd64_linux"
    want = [(entry, None), ("main.add", 1), (entry, None), ("main.add", 2),
            (entry, None), ("main.add", 3)]
    for env in ({}, {"GOTRACE_NO_MULTI": "1"}):
        trace = str(tmp_path / ("x%d.gtr" % len(env)))
        p = record(["-v", "-q", "-o", trace, entry, "main.add", "--", exe], env=env)
        assert p.stdout.splitlines() == ["image 1 43", "image 2 44", "image 3 45"]
        calls, pids = _reexec_calls(trace)
        assert calls == want, (env, p.stderr)
        said = re.findall(r"process (\d+) exec'd from thread (\d+), not its first: "
                          r"(\d+) uprobe links? attached again, 0 of another file "
                          r"closed; stopped for", p.stderr)
        assert len(said) == 2, p.stderr
        assert pids == {int(said[0][0])} and all(t != pid for pid, t, _ in said)
        assert all(int(n) >= 1 for _, _, n in said) and "warning" not in p.stderr


def test_traced_pid_that_execs_itself_from_another_thread(gobuild, tmp_path, procs):
    """The same for a -p target, whose probes are attached through
    /proc/PID/exe: it names the new image's file, the same one."""
    exe = gobuild("tests/fixtures/reexecthread/main.go", "reexecthread")
    trace = str(tmp_path / "t.gtr")
    target, code, rec = _traced_until_exit(procs, [exe], trace, "main.add",
                                           env=dict(os.environ, REEXEC_WAIT="1"))
    assert code == 0
    assert target.p.stdout.read().splitlines() == ["image 1 43", "image 2 44", "image 3 45"]
    assert rec.p.wait(20) == 0       # "the traced processes exited"
    calls, pids = _reexec_calls(trace)
    assert calls == [("main.add", 1), ("main.add", 2), ("main.add", 3)]
    assert pids == {target.pid}


def test_traced_process_that_execs_another_program_from_another_thread(
        gobuild, tmp_path, procs):
    """An exec of another program from a thread other than the first goes
    on: a command's probes are attached again (their file may be mapped
    again, as after an exec from the first thread), a -p target's, made
    through /proc/PID/exe, which names the other program now, are closed."""
    exe = gobuild("tests/fixtures/reexecthread/main.go", "reexecthread")
    trace = str(tmp_path / "x.gtr")
    p = record(["-v", "-q", "-o", trace, "main.add", "--", exe, "to", "/bin/echo", "hi"])
    assert p.stdout.splitlines() == ["image 1 43", "hi"]
    assert _reexec_calls(trace)[0] == [("main.add", 1)]
    assert re.search(r"exec'd from thread \d+, not its first: 1 uprobe link "
                     r"attached again, 0 of another file closed; stopped for", p.stderr)
    assert "warning" not in p.stderr

    trace = str(tmp_path / "t.gtr")
    target, code, rec = _traced_until_exit(procs, [exe, "to", "/bin/echo", "hi"], trace,
                                           "main.add", "-v",
                                           env=dict(os.environ, REEXEC_WAIT="1"))
    assert code == 0
    assert target.p.stdout.read().splitlines() == ["image 1 43", "hi"]
    assert rec.p.wait(20) == 0
    said = rec.p.stderr.read()
    assert re.search(r"process %d exec'd from thread \d+, not its first: 0 uprobe links "
                     r"attached again, 1 of another file closed; stopped for" % target.pid,
                     said), said
    assert "warning" not in said
    assert _reexec_calls(trace)[0] == [("main.add", 1)]


def test_exit_time_and_status_of_a_traced_process(gobuild, tmp_path, procs, loop_bin):
    """A -p target's end is recorded when its last thread exits (the
    sched_process_exit tracepoint), with its status; one killed by a
    signal gets -signal (spec/FORMAT.md, process)."""
    exe = gobuild("tests/fixtures/exits/main.go", "exits")
    trace = str(tmp_path / "t.gtr")
    target, code, rec = _traced_until_exit(procs, [exe, "3"], trace, "main.work")
    assert code == 3
    assert rec.p.wait(20) == 0       # "the traced processes exited"
    evs = events(trace)
    assert [e["goargs"][0] for e in evs] == [0, 1, 2, 3, 4]
    info = json.loads(report(["info", "--json", trace]).stdout)
    ends = [p for p in info["processes"] if p["exited"]]
    assert len(ends) == 1 and ends[0]["pid"] == target.pid
    assert ends[0]["exit_code"] == 3
    # after its last call it slept 10 + 50 ms before exiting
    assert ends[0]["ts_ns"] - evs[-1]["ts_ns"] >= 60_000_000

    loop = start_loop(procs, loop_bin)
    trace = str(tmp_path / "k.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(loop.pid), "main.add"],
                stderr=subprocess.PIPE, text=True)
    attached(rec)
    assert wait_for(lambda: len(events(trace)) > 0)
    loop.p.kill()
    loop.p.wait()
    assert rec.p.wait(20) == 0
    info = json.loads(report(["info", "--json", trace]).stdout)
    ends = [p for p in info["processes"] if p["exited"]]
    assert [(p["pid"], p["exit_code"]) for p in ends] == [(loop.pid, -9)]

    # a target that never hit a probe (so not in the file's processes, as
    # after a rotation) still has its end recorded
    idle = procs([exe, "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert idle.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "i.gtr")
    rec = procs([RECORD, "-o", trace, "-p", str(idle.pid), "main.work"],
                stderr=subprocess.PIPE, text=True)
    attached(rec)
    idle.p.send_signal(signal.SIGTERM)
    idle.p.wait()
    assert rec.p.wait(20) == 0
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert [(p["pid"], p["comm"], p["exit_code"]) for p in info["processes"]] == \
        [(idle.pid, "exits", -15)]


# Shell run by unshare -m: a private mount namespace in which tracefs is
# unmounted (and, for "tp", mounted again), so that the host's mounts
# neither help nor change.
NO_TRACEFS = ("for m in $(awk '$3 == \"tracefs\" {print $2}' /proc/self/mounts | sort -r); "
              "do umount -l \"$m\"; done; "
              "if grep -q ' tracefs ' /proc/self/mounts; then echo 'tracefs still mounted' >&2; exit 99; fi; ")


@pytest.mark.parametrize("via", ["tp_btf", "raw_tp", "tp", "poll"])
def test_exit_statuses_without_tracefs(gobuild, tmp_path, procs, via):
    """Exit statuses 0, 3, -9 and -15 of every process of a binary are
    recorded with tracefs unmounted: the exit tracepoint attaches as a
    BTF-typed or a raw tracepoint, which need no tracefs; a classic
    tracepoint needs it mounted; when none attaches, exits are polled for,
    said so on stderr, and recorded without a status."""
    exe = gobuild("tests/fixtures/exits/main.go", "exits")
    trace = str(tmp_path / "x.gtr")
    shell = NO_TRACEFS
    if via == "tp":
        shell += "mount -t tracefs nodev /sys/kernel/tracing || exit 98; "
    shell += 'exec "$@"'
    env = dict(os.environ, GOTRACE_EXIT_VIA="none" if via == "poll" else via)
    targets = {}
    for code in (0, 3, 9, 15):
        t = procs([exe, str(code if code < 9 else 0)], stdin=subprocess.PIPE,
                  stdout=subprocess.PIPE, text=True)
        assert t.p.stdout.readline().startswith("ready")
        targets[code] = t
    pids = [a for t in targets.values() for a in ("-p", str(t.pid))]
    rec = procs(["unshare", "-m", "sh", "-c", shell, "sh", RECORD, "-v", "-o", trace,
                 *pids, "main.work"], stderr=subprocess.PIPE, text=True, env=env)
    said = []
    while not said or not re.search(r"\d+ probes? attached", said[-1]):
        line = rec.p.stderr.readline()
        assert line, "recorder ended early: %s" % "".join(said)
        said.append(line)
    said = "".join(said)
    if via == "poll":
        assert "process exits are polled for" in said and "without their status" in said
    else:
        assert "sched_process_exit tracepoint, attached as %s\n" % via in said
    for code, t in targets.items():
        if code in (9, 15):
            t.p.send_signal(code)
        else:
            t.p.stdin.write("go\n")
            t.p.stdin.flush()
    want = {t.pid: (code if code < 9 else -code) for code, t in targets.items()}
    for code, t in targets.items():
        assert t.p.wait(20) == want[t.pid]
    # the recorder ends once its targets have ended
    assert rec.p.wait(20) == 0
    info = json.loads(report(["info", "--json", trace]).stdout)
    ends = {p["pid"]: p.get("exit_code") for p in info["processes"] if p["exited"]}
    if via == "poll":
        # polled for: the end of each process that hit a probe, without
        # its status (the two killed ones never did)
        assert ends == {targets[0].pid: None, targets[3].pid: None}
    else:
        assert ends == want
    evs = events(trace)
    assert sorted(e["goargs"][0] for e in evs) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]


@pytest.mark.parametrize("rotate", [False, True])
def test_full_disk_counts_what_it_could_not_write(gobuild, tmp_path, rotate):
    """On a 300 KiB tmpfs (in a private mount namespace) the disk fills:
    one correct message, the target runs to its end, and the events not
    written are counted and recorded in the file as lost once the cut
    frees room, so that written + lost = calls; with rotation too. The
    recorder exits 1; every file reads to its end (a summary that did not
    fit is cut off whole)."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    calls = 1000000
    out = tmp_path / "full"
    out.mkdir()
    args = ["-o", str(out / "t.gtr"), "main.add"]
    if rotate:
        args = ["-C", "100K", "-W", "100"] + args
    shell = 'mount -t tmpfs -o size=300k tmpfs "$1" && shift && "$@"; rc=$?; ' \
            'cp -a "$0"/. "$0.saved"/; exit $rc'
    saved = tmp_path / "full.saved"
    saved.mkdir()
    p = subprocess.run(["unshare", "-m", "sh", "-c", shell, str(out), str(out), RECORD,
                        *args, "--", exe, str(calls)],
                       capture_output=True, text=True, timeout=300)
    # events not written make it an error, whatever the command's status
    assert p.returncode == 1, p.stderr
    assert p.stdout.startswith("%d " % calls)
    err = p.stderr
    assert err.count("No space left on device") == 1, err
    assert "No space left on device; from now on events are counted, not written" in err
    assert re.search(r"; \d+ events not written \(no room\)\n", err), err
    assert "reading events" not in err and "Operation not permitted" not in err
    m = re.search(r"(\d+) events could not be written to \S+; the file records them as lost", err)
    assert m, err
    unwritten = int(m.group(1))
    written = lost = 0
    for f in sorted(os.listdir(saved)):
        info = json.loads(report(["info", "--json", str(saved / f)]).stdout)
        assert info["truncated"] is False and info["damage"] == 0
        written += info["events"]
        lost += info["drops"]
    assert lost == unwritten > 0
    assert written + lost == calls
