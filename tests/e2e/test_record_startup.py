"""gotrace-record's start-up failures: each says what was wrong with the
input and what to do, and a recording that fails before its first event
leaves no file behind (one of metadata alone would read as a recording of
nothing). Each test runs once per Go toolchain (loop_bin)."""
import os
import re
import resource
import signal
import subprocess

from conftest import RECORD, record, wait_for
from test_live import start_loop


def test_thread_id_names_its_process(loop_bin, procs, tmp_path):
    """-p with the id of a thread (not the process's own): refused with
    the process it belongs to, and no file is written."""
    p = start_loop(procs, loop_bin)
    task = "/proc/%d/task" % p.pid
    tids = wait_for(lambda: [int(t) for t in os.listdir(task) if int(t) != p.pid])
    assert tids, "the Go program runs more than one thread"
    out = tmp_path / "tid.gtr"
    r = subprocess.run([RECORD, "-o", str(out), "-p", str(tids[0]), "main.*"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert ("-p %d: %d is a thread of process %d, not a process; use -p %d"
            % (tids[0], tids[0], p.pid, p.pid)) in r.stderr
    assert not out.exists()
    assert p.p.poll() is None   # left running, untouched


def test_failure_before_first_event_leaves_no_file(loop_bin, tmp_path):
    """A recording whose file cannot take its metadata (a file size
    limit of 1 KiB; the metadata is larger) fails with why and removes
    the file it created."""
    out = tmp_path / "small.gtr"

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    r = subprocess.run([RECORD, "-o", str(out), "main.add", "--", loop_bin],
                       capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert r.returncode == 1
    assert "cannot write %s: File too large" % out in r.stderr
    assert not out.exists()


def test_rotation_size_below_metadata_warns(gobuild, toolchain, tmp_path):
    """-C smaller than the metadata every file starts with: said, with
    the metadata's size and a size to give instead; a size well above it
    is not."""
    exe = gobuild("tests/fixtures/manyargs/main.go", "manyargs")
    out = tmp_path / "rot.gtr"
    p = record(["-q", "-o", str(out), "-C", "1K", "-W", "2",
                toolchain.fname("main.main"), "--", exe])
    m = re.search(r"gotrace-record: -C: every file starts with this recording's "
                  r"metadata \(binaries, their symbols, the probes: (\d+) KiB\), "
                  r"more than the 1 KiB given, so each file would hold its "
                  r"metadata and a few events; give -C (\d+)M or more\n", p.stderr)
    assert m, p.stderr
    meta = int(m.group(1))
    # the first file holds the metadata and what came after it
    assert meta > 1 and (meta - 1) * 1024 < os.path.getsize(out)
    assert int(m.group(2)) * 1024 >= 10 * meta
    p = record(["-q", "-o", str(tmp_path / "big.gtr"), "-C", "64M",
                toolchain.fname("main.main"), "--", exe])
    assert "-C:" not in p.stderr
