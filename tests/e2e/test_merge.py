"""gotrace-report merge: recordings made at the same time by two recorders,
of two programs that exchange messages over loopback (one recorder in a
UTS namespace of its own, so that the hosts differ by name), merged in
causal order; hosts kept apart and shown; ids renumbered; the merged file
read by the independent Python reader. Once per Go toolchain."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import RECORD, REPORT, attached, report
from test_report_hosts import gen, recording  # noqa: F401 (fixtures)

sys.path.insert(0, os.path.dirname(__file__))
from gtr_reader import GtrReader  # noqa: E402

N = 40


@pytest.fixture
def pingpong(gobuild):
    return gobuild("tests/fixtures/pingpong/main.go", "pingpong")


def exchange(pingpong, procs, recorders):
    """Runs the exchange of N acknowledged messages (recv(i), send(i)),
    recorded by the recorders that recorders(rx, tx) starts, each attached
    before the first message; returns (rx, tx), the two programs."""
    rx = procs([pingpong, "recv"], stdout=subprocess.PIPE, text=True)
    port = rx.p.stdout.readline().split()[1]
    tx = procs([pingpong, "send", port, str(N)], stdin=subprocess.PIPE,
               stdout=subprocess.PIPE, text=True)
    assert tx.p.stdout.readline().strip() == "ready"
    recs = recorders(rx, tx)
    for r in recs:
        assert "attached" in attached(r.p.stderr)
    tx.p.stdin.write("go\n")
    tx.p.stdin.flush()
    assert tx.p.wait(60) == 0 and rx.p.wait(60) == 0
    assert all(r.p.wait(60) == 0 for r in recs)
    return rx, tx


@pytest.fixture
def recorded(pingpong, procs, tmp_path, needs_bpf):
    """(receiver's recording, sender's recording made under host name
    'peerhost'): recv(i) and send(i) of N acknowledged messages."""
    a, b, c = (str(tmp_path / n) for n in ("recv.gtr", "send.gtr", "recv2.gtr"))
    peer = ["unshare", "-u", "sh", "-c", 'hostname peerhost && exec "$@"', "sh"]
    exchange(pingpong, procs, lambda rx, tx: [
        procs([RECORD, "-o", a, "-p", str(rx.pid), "main.recv"],
              stderr=subprocess.PIPE, text=True),
        procs([*peer, RECORD, "-o", b, "-p", str(tx.pid), "main.send"],
              stderr=subprocess.PIPE, text=True),
        # the receiver again, by a recorder of the other host name
        procs([*peer, RECORD, "-o", c, "-p", str(rx.pid), "main.recv"],
              stderr=subprocess.PIPE, text=True)])
    return a, b, c


def jsonl(*paths):
    out = report(["--format", "jsonl", *paths]).stdout
    return [json.loads(l) for l in out.splitlines()]


def test_merged_in_causal_order_with_hosts(recorded, tmp_path):
    a, b, _ = recorded
    merged = str(tmp_path / "all.gtr")
    p = report(["merge", "-w", merged, a, b])
    assert "%d events of 2 recordings merged" % (2 * N) in p.stderr
    evs = jsonl(merged)
    seq = [(e["func"], e["goargs"][0]) for e in evs]
    want = []
    for i in range(N):
        want += [("main.send", i), ("main.recv", i)]
    assert seq == want
    assert {e["func"]: e["host"] for e in evs} == {"main.send": "peerhost",
                                                 "main.recv": os.uname().nodename}
    text = report([merged]).stdout.splitlines()
    assert text[0].startswith("HOST ") and text[1].split()[0] == "peerhost"
    csv = report(["--format", "csv", merged]).stdout.splitlines()
    assert csv[0].startswith("ts_ns,host,pid,")
    # the Python reader: no damage, the PEER block known or skipped cleanly
    py = GtrReader(merged)
    items = [e for e in py.items() if "drop" not in e]
    assert len(items) == 2 * N and py.damage == 0 and py.summary is not None
    assert py.peers == {1: {"hostname": "peerhost", "kernel": os.uname().release,
                            "machine": os.uname().machine,
                            "recorder": py.host["recorder"],
                            "clocks": json.loads(report(["info", "--json", b]).stdout)
                            ["host"]["clocks"]}}
    assert {p["pid"]: p.get("host", 0) for p in py.processes} == \
        {e["pid"]: 1 if e["host"] == "peerhost" else 0 for e in evs}
    info = json.loads(report(["info", "--json", merged]).stdout)
    assert [h["hostname"] for h in info["hosts"]] == [os.uname().nodename, "peerhost"]
    assert {p["pid"] for p in info["processes"]} >= {e["pid"] for e in evs}


def test_merge_on_the_fly_equals_merge(recorded, tmp_path):
    """gotrace-report A B reports what merge -w writes, and leaves no
    temporary file behind."""
    a, b, _ = recorded
    merged = str(tmp_path / "all.gtr")
    report(["merge", "-q", "-w", merged, a, b])
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    for view in (["--format", "text"], ["--format", "jsonl"], ["--calls"], ["stats"]):
        on_fly = subprocess.run([REPORT, *view, a, b], capture_output=True, text=True,
                                timeout=60, env=dict(os.environ, TMPDIR=str(tmp)))
        assert on_fly.returncode == 0, on_fly.stderr
        assert on_fly.stdout == report([*view, merged]).stdout, view
    assert list(tmp.iterdir()) == []


def test_pid_of_two_hosts_is_renumbered(recorded, tmp_path):
    """The receiver recorded under two host names: the second host's pid is
    renumbered above 2^22, info says which pid it is on which host, and
    every event is there once per recording."""
    a, _, c = recorded
    merged = str(tmp_path / "twice.gtr")
    report(["merge", "-q", "-w", merged, a, c])
    evs = jsonl(merged)
    assert len(evs) == 2 * N
    by_host = {}
    for e in evs:
        by_host.setdefault(e["host"], set()).add(e["pid"])
    real = by_host[os.uname().nodename]
    assert len(real) == 1 and len(by_host["peerhost"]) == 1
    (pid,), (renum,) = real, by_host["peerhost"]
    assert pid < 1 << 22 <= renum
    assert "pid %d is pid %d on host 1 (peerhost)" % (renum, pid) in \
        report(["info", merged]).stdout


def test_merge_refusals(recorded, tmp_path):
    a, b, _ = recorded
    p = report(["merge", a, b], check=False)
    assert p.returncode == 2 and "no output; give one with -w OUT" in p.stderr
    out = str(tmp_path / "o.gtr")
    report(["merge", "-q", "-w", out, a])
    p = report(["merge", "-w", out, a, b], check=False)
    assert p.returncode == 1 and "exists; use --force" in p.stderr
    p = report(["merge", "-w", str(tmp_path / "x.gtr"), a, str(tmp_path / "nope.gtr")],
               check=False)
    assert p.returncode == 1 and "nope.gtr" in p.stderr
    # one file twice (by another path too): its events would be doubled
    link = str(tmp_path / "link.gtr")
    os.symlink(a, link)
    for args in (["merge", "-w", str(tmp_path / "y.gtr"), a, b, link], [a, link]):
        p = report(args, check=False)
        assert p.returncode == 2, p.stderr
        assert "%s and %s are the same file: its events would be there twice; give each " \
            "recording once" % (a, link) in p.stderr
    assert not os.path.exists(str(tmp_path / "y.gtr"))
    # a copy of one recording, or a selection of it (-w keeps its HOST
    # block): the same recording, refused as the same file is
    copy, sel, sel2 = (str(tmp_path / n) for n in ("copy.gtr", "sel.gtr", "sel2.gtr"))
    shutil.copyfile(a, copy)
    report(["-w", sel, "-f", "goarg1 < %d" % (N // 2), a])
    report(["-w", sel2, "-f", "goarg1 >= %d" % (N // 2), a])
    for other, how in ((copy, "a copy of one file"), (sel, "one a selection of the other")):
        for args in (["merge", "-w", str(tmp_path / "z.gtr"), a, b, other], [a, other]):
            p = report(args, check=False)
            assert p.returncode == 2, p.stderr
            assert p.stderr == "gotrace-report: %s and %s are the same recording (%s): its " \
                "events would be there twice; give each recording once\n" % (a, other, how)
    assert not os.path.exists(str(tmp_path / "z.gtr"))
    # two selections may hold different events: merged, with a warning
    p = report(["merge", "-q", "-w", str(tmp_path / "halves.gtr"), sel, sel2])
    assert "warning: %s and %s are selections of one recording" % (sel, sel2) in p.stderr
    assert len(jsonl(str(tmp_path / "halves.gtr"))) == N


def test_merged_file_merged_again_with_one_of_its_recordings(recording, tmp_path):  # noqa: F811
    """A merged file holds each of its recordings as a host: merged again
    with one of them, whichever host it is, or with another merged file
    that holds one too, it is refused (its events would be doubled), while
    a recording it does not hold merges. Synthetic recordings, no BPF."""
    a, b, c = recording("alpha"), recording("beta"), recording("gamma")
    m, m2 = str(tmp_path / "m.gtr"), str(tmp_path / "m2.gtr")
    report(["merge", "-q", "-w", m, a, b])
    report(["merge", "-q", "-w", m2, b, c])
    out = str(tmp_path / "twice.gtr")
    for first, second, host, into in ((m, b, "beta", m), (b, m, "beta", m),
                                      (m, a, "alpha", m), (m, m2, "beta", "both")):
        for args in (["merge", "-w", out, first, second], [first, second]):
            p = report(args, check=False)
            assert p.returncode == 2, p.stderr
            assert p.stderr == "gotrace-report: %s and %s hold the same recording (host " \
                "%s, merged into %s): its events would be there twice; give each " \
                "recording once\n" % (first, second, host, into), args
    assert not os.path.exists(out)
    n = len(jsonl(c))
    report(["merge", "-q", "-w", out, m, c])
    assert len(jsonl(out)) == len(jsonl(m)) + n


def test_merge_to_a_pipe(recorded):
    a, b, _ = recorded
    w = subprocess.Popen([REPORT, "merge", "-q", "-w", "-", a, b], stdout=subprocess.PIPE)
    r = subprocess.run([REPORT, "--format", "jsonl", "-"], stdin=w.stdout,
                       capture_output=True, text=True, timeout=60)
    w.stdout.close()
    assert w.wait(60) == 0 and r.returncode == 0
    assert len(r.stdout.splitlines()) == 2 * N
