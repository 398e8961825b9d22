"""gotrace-report merge keeps one host entry per recording (spec/FORMAT.md,
"PEER"): a merged file merged again keeps each of its recordings at its
own index, with its own clocks and its processes, also when recordings
share a host name; the same-recording refusal holds at any depth. Real
recordings of one exchange over loopback by four recorders, each in a UTS
namespace of its own host name. Once per Go toolchain."""
import collections
import json
import os
import subprocess
import sys

import pytest

from conftest import RECORD, report
from test_merge import N, exchange, jsonl, pingpong  # noqa: F401 (fixture)

sys.path.insert(0, os.path.dirname(__file__))
from gtr_reader import GtrReader, utc  # noqa: E402


def named(host, *argv):
    """argv run under host name `host` (a UTS namespace of its own)."""
    return ["unshare", "-u", "sh", "-c", 'hostname %s && exec "$@"' % host, "sh", *argv]


@pytest.fixture
def four(pingpong, procs, tmp_path, needs_bpf):  # noqa: F811
    """Recordings of N acknowledged messages, by name: A the receiver on
    'hosta', B the sender on 'hostb', C the receiver on 'hostc', D the
    sender again on 'hostb' (a second recording of one host name)."""
    plan = (("A", "hosta", "rx", "main.recv"), ("B", "hostb", "tx", "main.send"),
            ("C", "hostc", "rx", "main.recv"), ("D", "hostb", "tx", "main.send"))
    paths = {name: str(tmp_path / ("%s.gtr" % name)) for name, _, _, _ in plan}

    def recorders(rx, tx):
        pids = {"rx": rx.pid, "tx": tx.pid}
        return [procs(named(host, RECORD, "-o", paths[name], "-p", str(pids[who]), probe),
                      stderr=subprocess.PIPE, text=True) for name, host, who, probe in plan]
    rx, tx = exchange(pingpong, procs, recorders)
    paths["rx"], paths["tx"] = rx.pid, tx.pid
    return paths


def merge(out, *inputs):
    report(["merge", "-q", "-w", out, *inputs])
    return out


def info(path):
    return json.loads(report(["info", "--json", path]).stdout)


def host_of(path):
    """The host entry of a recording, as info shows it."""
    return info(path)["host"]


def per_host(path):
    """Events of a file by (host, function)."""
    return collections.Counter((e.get("host"), e["func"]) for e in jsonl(path))


def test_merged_file_merged_again_keeps_every_host(four, tmp_path):
    a, b, c = four["A"], four["B"], four["C"]
    ab = merge(str(tmp_path / "ab.gtr"), a, b)
    abc = merge(str(tmp_path / "abc.gtr"), ab, c)
    meta = info(abc)
    assert [h["hostname"] for h in meta["hosts"]] == ["hosta", "hostb", "hostc"]
    # each recording's own start anchor, not the first of its file's
    assert [h["clocks"] for h in meta["hosts"]] == \
        [host_of(p)["clocks"] for p in (a, b, c)]
    assert per_host(abc) == {("hosta", "main.recv"): N, ("hostb", "main.send"): N,
                             ("hostc", "main.recv"): N}
    # the receiver's pid, recorded on two hosts: hostc's is renumbered
    procs = {p["pid"]: p for p in meta["processes"] if not p.get("exited")}
    rx, tx = four["rx"], four["tx"]
    assert procs[rx].get("host", 0) == 0 and procs[tx]["host"] == 1
    (renum,) = [pid for pid, p in procs.items() if p.get("host") == 2]
    assert renum >= 1 << 22 and procs[renum]["host_pid"] == rx
    assert "pid %d is pid %d on host 2 (hostc)" % (renum, rx) in report(["info", abc]).stdout
    # as if the three had been merged at once
    assert jsonl(abc) == jsonl(merge(str(tmp_path / "direct.gtr"), a, b, c))
    text = report([abc]).stdout.splitlines()
    assert text[0].startswith("HOST ")
    assert collections.Counter(l.split()[0] for l in text[1:]) == \
        {"hosta": N, "hostb": N, "hostc": N}
    py = GtrReader(abc)
    assert len([e for e in py.items() if "drop" not in e]) == 3 * N
    assert py.damage == 0 and sorted(py.peers) == [1, 2]
    assert [py.peers[i]["hostname"] for i in (1, 2)] == ["hostb", "hostc"]
    # a selection of the merged file keeps its hosts too
    sel = str(tmp_path / "sel.gtr")
    report(["-w", sel, "-f", "goarg1 < %d" % (N // 2), abc])
    assert [h["hostname"] for h in info(sel)["hosts"]] == ["hosta", "hostb", "hostc"]
    assert per_host(sel) == {("hosta", "main.recv"): N // 2, ("hostb", "main.send"): N // 2,
                             ("hostc", "main.recv"): N // 2}


def refused(first, second, host, into):
    """merge (to a file and on the fly) refuses first + second, naming
    both inputs, the host of the recording both hold, and the merged one."""
    for args in (["merge", "-w", first + ".out.gtr", first, second], [first, second]):
        p = report(args, check=False)
        assert p.returncode == 2, p.stderr
        assert p.stderr == "gotrace-report: %s and %s hold the same recording (host %s, " \
            "merged into %s): its events would be there twice; give each recording " \
            "once\n" % (first, second, host, into), args
    assert not os.path.exists(first + ".out.gtr")


def test_same_recording_refused_at_any_depth(four, tmp_path):
    a, b, c = four["A"], four["B"], four["C"]
    ab = merge(str(tmp_path / "ab.gtr"), a, b)
    bc = merge(str(tmp_path / "bc.gtr"), b, c)
    abc = merge(str(tmp_path / "abc.gtr"), ab, c)
    refused(ab, a, "hosta", ab)
    refused(ab, bc, "hostb", "both")
    refused(abc, b, "hostb", abc)        # B, merged in two levels down
    refused(c, abc, "hostc", abc)
    refused(abc, bc, "hostb", "both")


def test_one_host_name_two_recordings(four, tmp_path):
    """B and D: two recordings of one process under one host name stay two
    entries with their own clocks; the process keeps one pid; reports show
    no host while there is one name, and show hosts by name after A joins."""
    a, b, d = four["A"], four["B"], four["D"]
    bd = merge(str(tmp_path / "bd.gtr"), b, d)
    meta = info(bd)
    assert [h["hostname"] for h in meta["hosts"]] == ["hostb", "hostb"]
    assert [h["clocks"] for h in meta["hosts"]] == [host_of(b)["clocks"], host_of(d)["clocks"]]
    assert meta["hosts"][0]["clocks"] != meta["hosts"][1]["clocks"]
    evs = jsonl(bd)
    assert len(evs) == 2 * N and {e["pid"] for e in evs} == {four["tx"]}
    assert all("host" not in e for e in evs)
    assert report([bd]).stdout.splitlines()[0].split()[0] == "PID"
    # info tells the two apart by their starts
    assert "host 1      hostb (%s %s), recorded by %s, started %s\n" % (
        os.uname().release, os.uname().machine, meta["hosts"][1]["recorder"],
        utc(meta["hosts"][1]["clocks"]["realtime_ns"])) in report(["info", bd]).stdout
    bda = merge(str(tmp_path / "bda.gtr"), bd, a)
    assert [h["hostname"] for h in info(bda)["hosts"]] == ["hostb", "hostb", "hosta"]
    assert per_host(bda) == {("hostb", "main.send"): 2 * N, ("hosta", "main.recv"): N}
    assert report([bda]).stdout.splitlines()[0].startswith("HOST ")
    # D is one of the file's recordings, though B holds its host name first
    refused(bda, d, "hostb", bda)
