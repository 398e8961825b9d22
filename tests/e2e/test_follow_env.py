"""Following the processes a command starts (spec/PROBES.md) where the
kernel's view and the recorder's differ: a recorder in a pid namespace of
its own (a container without the host's pids), a probed binary on btrfs
(whose stat() device is not the kernel's superblock device), and an event
ring buffer that is full when a child execs a probed binary; and a
recorder killed (SIGKILL) while a process is held."""
import json
import os
import re
import shutil
import signal
import subprocess

import pytest

from conftest import RECORD, report, require_bpf, wait_for
from test_follow import calls, printed, spawn_pair, state, waiting_spawn


def run(argv, timeout=120):
    """Runs argv (the recorder, maybe inside unshare); the
    CompletedProcess, which must have succeeded."""
    require_bpf()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, (argv, p.stdout, p.stderr)
    return p


def test_nested_pid_namespace(gobuild, tmp_path, procs):
    """gotrace-record in a new pid namespace follows the command's
    children: their calls, under the pids they have there (what the
    programs print), with no warning; a process of the same binary
    outside the namespace runs on, neither stopped nor recorded."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed")
    exe = gobuild("tests/fixtures/spawn/main.go", "spawn")
    done = tmp_path / "outside.out"
    outside = waiting_spawn(procs, exe, done, 3)
    trace = str(tmp_path / "ns.gtr")
    # the namespace's /proc cannot name the outside process: its input
    # is opened here and written through the descriptor the command gets
    fd = os.open("/proc/%d/fd/0" % outside.pid, os.O_WRONLY)
    script = "%s 1; echo go > /dev/fd/%d; %s 2" % (exe, fd, exe)
    try:
        p = subprocess.run(["unshare", "-pf", "--mount-proc", RECORD, "-v", "-o", trace,
                            exe + ":main.add", "--", "sh", "-c", script],
                           capture_output=True, text=True, timeout=120,
                           pass_fds=(fd,), stdin=subprocess.DEVNULL)
    finally:
        os.close(fd)
    assert p.returncode == 0, p.stderr
    assert outside.p.wait(20) == 0 and printed(done.read_text()) == {outside.pid: 3}
    runs = printed(p.stdout)
    assert sorted(runs.values()) == [1, 2], p.stdout
    # pids of the namespace: small, none the outside process's
    assert outside.pid not in runs
    assert calls(trace) == {pid: [(n, i) for i in range(1, n + 1)]
                            for pid, n in runs.items()}, p.stderr
    assert "warning" not in p.stderr and "note" not in p.stderr


def test_nested_pid_namespace_exec_from_another_thread(gobuild, tmp_path):
    """In a pid namespace of its own too, an exec from a thread other than
    the first holds the process until its probes are attached again: the
    calls of the three images, under the one pid the program has there."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) is not installed")
    exe = gobuild("tests/fixtures/reexecthread/main.go", "reexecthread")
    trace = str(tmp_path / "r.gtr")
    p = run(["unshare", "-pf", "--mount-proc", RECORD, "-v", "-q", "-o", trace,
             "main.add", "--", exe])
    assert p.stdout.splitlines() == ["image 1 43", "image 2 44", "image 3 45"]
    said = re.findall(r"process (\d+) exec'd from thread \d+, not its first: "
                      r"1 uprobe links? attached again", p.stderr)
    assert len(said) == 2 and said[0] == said[1], p.stderr
    got = calls(trace)
    assert list(got) == [int(said[0])], (got, p.stderr)
    assert [y for _, y in got[int(said[0])]] == [1, 2, 3]
    assert "warning" not in p.stderr


def btrfs_mount(tmp_path):
    """A btrfs file system on a loop device, mounted at tmp_path/mnt,
    with a subvolume `sub` (its files' stat() device is an anonymous one,
    not the superblock's); the mount point, or a reason to skip."""
    if not shutil.which("mkfs.btrfs"):
        return None, "mkfs.btrfs (btrfs-progs) is not installed"
    with open("/proc/filesystems") as f:
        if "btrfs" not in f.read().split():
            return None, "the kernel has no btrfs (not in /proc/filesystems)"
    img, mnt = tmp_path / "btrfs.img", tmp_path / "mnt"
    with open(img, "wb") as f:
        f.truncate(128 << 20)
    subprocess.run(["mkfs.btrfs", "-q", str(img)], check=True, capture_output=True)
    mnt.mkdir()
    m = subprocess.run(["mount", "-o", "loop", str(img), str(mnt)],
                       capture_output=True, text=True)
    if m.returncode != 0:
        return None, "cannot mount a loop device: " + m.stderr.strip()
    subprocess.run(["btrfs", "subvolume", "create", str(mnt / "sub")],
                   check=True, capture_output=True)
    return mnt, None


def test_probed_binary_on_btrfs(gobuild, tmp_path):
    """A probed binary in a btrfs subvolume, run by the command's shell:
    its calls are recorded (the exec program matches the binary by its
    inode, not by a device stat() and the kernel number apart)."""
    mnt, why = btrfs_mount(tmp_path)
    if mnt is None:
        pytest.skip(why)
    try:
        exe = str(mnt / "sub" / "spawn")
        shutil.copy(gobuild("tests/fixtures/spawn/main.go", "spawn"), exe)
        # what the test is about: stat()'s device of the file is not
        # the file system's
        assert os.stat(exe).st_dev != os.stat(str(mnt)).st_dev
        trace = str(tmp_path / "b.gtr")
        p = run([RECORD, "-o", trace, exe + ":main.add", "--",
                 "sh", "-c", "%s 2; %s 1" % (exe, exe)])
        runs = printed(p.stdout)
        assert sorted(runs.values()) == [1, 2], p.stdout
        assert calls(trace) == {pid: [(n, i) for i in range(1, n + 1)]
                                for pid, n in runs.items()}, p.stderr
        assert "note" not in p.stderr
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def stopped_child(pid):
    """The pid of a stopped child of process `pid` (state T in
    /proc/PID/stat), else None."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "T" and int(fields[1]) == pid:
            return int(d)
    return None


def test_child_held_while_the_event_buffer_is_full(gobuild, tmp_path, procs):
    """The recorder is stopped while a -p target fills its 8 KiB event
    buffer (calls lost); the child it then starts, of the probed binary,
    is still held until the recorder, let go on, attached its probes: all
    the child's calls are recorded (the exec records have a ring buffer
    of their own)."""
    exe = gobuild("tests/fixtures/spawn/main.go", "spawn")
    target = procs([exe, "20000", exe, "3"], stdin=subprocess.PIPE,
                   stdout=subprocess.PIPE, text=True, env=dict(os.environ, SPAWN_WAIT="1"))
    assert target.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "f.gtr")
    # 8 KiB: once full of this fixture's records, less room is left than
    # an exec record needs (where the two shared a buffer, the child ran
    # on unprobed)
    rec = procs([RECORD, "-b", "8K", "-o", trace, "-p", str(target.pid), "main.add"],
                stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: " attached (" in rec.p.stderr.readline(), timeout=30)
    os.kill(rec.pid, signal.SIGSTOP)
    try:
        target.p.stdin.write("go\n")
        target.p.stdin.flush()
        assert wait_for(lambda: stopped_child(target.pid), timeout=20)
    finally:
        os.kill(rec.pid, signal.SIGCONT)
    assert target.p.wait(20) == 0
    runs = printed(target.p.stdout.read())
    assert rec.p.wait(20) == 0
    assert sorted(runs.values()) == [3, 20000]
    got = calls(trace)
    held = [pid for pid, n in runs.items() if n == 3][0]
    assert got.get(held) == [(3, 1), (3, 2), (3, 3)]
    assert len(got.get(target.pid, [])) < 20000
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert info["drops"] > 0, info


def tree_keys():
    """The keys (process ids) of each BPF map named `tree` loaded now, as
    bpftool dumps them: a list of sets."""
    shown = subprocess.run(["bpftool", "-j", "map", "show", "name", "tree"],
                           capture_output=True, text=True, check=True)
    maps = json.loads(shown.stdout or "[]")
    out = []
    for m in maps if isinstance(maps, list) else [maps]:   # one: an object
        dump = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(m["id"])],
                              capture_output=True, text=True)
        entries = json.loads(dump.stdout or "null") if dump.returncode == 0 else None
        if isinstance(entries, list):   # not {"error": ...}: a map gone meanwhile
            out.append({int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")
                        for e in entries})
    return out


def child_of(pid):
    """The pid of a child of process `pid` other than a recorder's
    guardian (named gotrace-guard), else None."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
    except OSError:
        return None
    for kid in kids:
        try:
            with open("/proc/%s/comm" % kid) as f:
                if f.read().strip() != "gotrace-guard":
                    return int(kid)
        except OSError:
            pass
    return None


def test_classic_fork_tracepoint_follows_processes_not_threads(gobuild, tmp_path, procs):
    """With the fork program attached as a classic tracepoint (whose
    record cannot say thread from process), the followed tree holds the
    command's processes, not the threads of the Go program among them."""
    if not shutil.which("bpftool"):
        pytest.skip("bpftool is not installed")
    exe = gobuild("tests/fixtures/spawn/main.go", "spawn")
    trace = str(tmp_path / "t.gtr")
    rec = procs([RECORD, "-o", trace, exe + ":main.add", "--", exe, "1", "sleep", "3"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env=dict(os.environ, GOTRACE_EXIT_VIA="tp"))
    assert wait_for(lambda: child_of(rec.pid) and child_of(child_of(rec.pid)), timeout=30)
    cmd = child_of(rec.pid)
    sleeper = child_of(cmd)
    threads = {int(t) for t in os.listdir("/proc/%d/task" % cmd)} - {cmd}
    assert threads, "the Go program has threads"
    mine = [k for k in tree_keys() if cmd in k]
    assert len(mine) == 1, mine
    assert sleeper in mine[0] and not mine[0] & threads, (mine[0], threads)
    assert rec.p.wait(20) == 0


def test_recorder_killed_while_a_process_is_held(gobuild, tmp_path, procs):
    """gotrace-record killed (SIGKILL) while the BPF program holds a
    process of the tree that exec'd a probed binary: its guardian lets
    the process go (SIGCONT), which runs to its end, unprobed, where it
    stayed stopped for good, its parent waiting. The recorder is stopped
    first, so that the hold is certain to outlast it."""
    exe, _ = spawn_pair(gobuild, tmp_path)
    out = tmp_path / "cmd.out"
    with open(out, "w") as o:
        rec = procs([RECORD, "-o", str(tmp_path / "x.gtr"), exe + ":main.add", "--",
                     "sh", "-c", "read line; %s 2" % exe],
                    stdin=subprocess.PIPE, stdout=o, stderr=subprocess.PIPE, text=True)
    # the command runs once the probes are attached; then it reads
    sh = wait_for(lambda: child_of(rec.pid))
    assert sh, "the recorder started no command"
    child = None
    try:
        assert wait_for(lambda: os.path.basename(os.readlink("/proc/%d/exe" % sh)) != "gotrace-record"
                        and state(sh) == "S")
        os.kill(rec.pid, signal.SIGSTOP)
        rec.p.stdin.write("go\n")
        rec.p.stdin.flush()
        # the shell's child execs the probed binary: held before its first
        # instruction, by the BPF program alone
        child = wait_for(lambda: child_of(sh))
        assert child and wait_for(lambda: state(child) == "T"
                                  and os.readlink("/proc/%d/exe" % child) == exe), \
            state(child or 0)
        os.kill(rec.pid, signal.SIGKILL)
        rec.p.wait(20)
        assert wait_for(lambda: printed(out.read_text()) == {child: 2}), \
            (state(child), out.read_text())
        assert "was let go (SIGCONT), unprobed" in rec.p.stderr.read()
    finally:
        for pid in (child, sh):
            if pid and state(pid):
                os.kill(pid, signal.SIGKILL)
