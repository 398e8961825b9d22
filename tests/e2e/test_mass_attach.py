"""Many probes at once on Debian's caddy (stripped, 41,000 functions; a
glob probes the inlined copies of what it matches too):
sites the kernel refuses are found before attaching (no batch is tried and
undone for them) and agree with the kernel's own answer, links of a few
thousand sites each attach and detach cleanly, and the counters of every
probe are read back."""
import json
import re
import signal
import subprocess
import time

import conftest
from conftest import RECORD, record, report

CADDY = "/usr/bin/caddy"


def functions(glob):
    out = record(["--list", "--json", CADDY, glob]).stdout
    return json.loads(out)["functions"]


def sites(glob):
    """(name, file offset) of every uprobe site of an entry probe on
    glob: each function it matches (at its first instruction: where the
    probe goes in assembly, which has no stack check to step over) and
    each inlined copy of one, with a body of its own or not."""
    d = json.loads(record(["--list", "--json", CADDY, glob]).stdout)
    fns = d["functions"]
    bias = fns[0]["entry"] - fns[0]["file_offset"]   # one text segment
    out = [(f["name"], f["file_offset"]) for f in fns]
    for f in fns + d["only_inlined"]:
        out += [(f["name"], c["address"] - bias) for c in f["inlined"] or []]
    return out


def test_sites_the_kernel_refuses_are_left_out_up_front(tmp_path, procs, caddy):
    """Go's assembly atomics start with a LOCK prefix, which x86 uprobes
    refuse (the kernel finds out only where a process maps the binary, so
    a running caddy): they are named in the warning, found without a
    failed batch, and every other site attaches."""
    all_sites = sites("sync/atomic.*") + sites("runtime/internal/atomic.*")
    with open(CADDY, "rb") as f:
        img = f.read()
    refused = [name for name, off in all_sites if img[off] == 0xF0]
    locked = set(refused)
    assert "runtime/internal/atomic.(*Uint8).And" in locked
    trace = str(tmp_path / "a.gtr")
    p = record(["-o", trace, "-d", "0.2", "-m", "1000", "-p", str(caddy.pid),
                "sync/atomic.*", "runtime/internal/atomic.*"])
    m = re.search(r"the kernel refused (\d+) uprobe sites? \(an instruction uprobes "
                  r"cannot handle\), left out: ([^\n]*)", p.stderr)
    assert m, p.stderr
    named = [n.strip() for n in m.group(2).replace(" ...", "").split(",")]
    assert int(m.group(1)) == len(refused) and set(named) <= locked
    a = re.search(r"(\d+) probes attached \((\d+) uprobes\)", p.stderr)
    assert a and int(a.group(2)) == len(all_sites) - len(refused), p.stderr
    assert caddy.get() == b"hello from caddy"


def test_many_links_attach_serve_and_detach(tmp_path, procs, caddy):
    """Over 4,096 sites (several uprobe-multi links) on a running caddy:
    every site is attached, requests are served and traced, the recorder
    stops cleanly, and the per-probe counters (losses) are read for all."""
    glob = "github.com/caddyserver/caddy/v2/*"
    want = len(sites(glob))   # functions and their inlined copies
    assert want > 4096
    trace = str(tmp_path / "many.gtr")
    rec = procs([RECORD, "-o", trace, "-m", "100000", "-p", str(caddy.pid), glob],
                stderr=subprocess.PIPE, text=True)
    line = conftest.attached(rec.p.stderr)
    m = re.search(r"(\d+) probes attached \((\d+) uprobes\)", line)
    assert m, line
    assert int(m.group(2)) == want   # none of them starts with a LOCK prefix
    for _ in range(3):
        assert caddy.get() == b"hello from caddy"
    time.sleep(0.3)
    assert rec.stop(signal.SIGINT) == 0
    out = report(["--format", "jsonl", trace]).stdout
    evs = [json.loads(l) for l in out.splitlines() if l.strip()]
    assert len(evs) > 10
    assert all(e["func"].startswith("github.com/caddyserver/caddy/v2") for e in evs)
    assert caddy.get() == b"hello from caddy"
    # the summary reads the loss counters of every probe (one batch)
    assert re.search(r"\d+ events, 0 dropped", rec.p.stderr.read())


def test_startup_progress_on_a_terminal(tmp_path, caddy):
    """On a terminal, a start that takes over a second shows where it is
    (preparing probes, loading, attaching) on one line rewritten in place,
    cleared before the line saying what is attached; a quicker start
    shows nothing. Without a terminal nothing of it is written (the other
    tests read stderr line by line)."""
    import os
    import pty
    import select
    m, s = pty.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([RECORD, "-o", str(tmp_path / "p.gtr"), "-d", "0.2", "-m", "50000",
                          "-p", str(caddy.pid), "*", "-x", "runtime.*"],
                         stdout=subprocess.DEVNULL, stderr=s)
    os.close(s)
    out, took = b"", None
    while True:
        if not select.select([m], [], [], 30)[0]:
            break
        try:
            d = os.read(m, 65536)
        except OSError:   # the recorder closed the terminal
            break
        out += d
        if took is None and b"probes attached" in out:
            took = time.monotonic() - t0
        if not d:
            break
    os.close(m)
    assert p.wait(timeout=30) == 0, out
    assert took is not None, out
    head = out[:out.index(b"probes attached")]
    shown = list(re.finditer(rb"\r\x1b\[Kgotrace-record: (preparing probes: \d+|loading the "
                             rb"capture program for \d+ probes)\r|\rgotrace-record: attaching "
                             rb"\d+ uprobes to [^:]+: \d+/\d+\x1b\[K", head))
    # `took` also counts what comes before the recorder's clock starts
    # and the steps after the last progress point (in CI: 1.5 s and more
    # with nothing to show past its first second)
    if took > 3:
        assert shown, head
    elif took < 0.9:
        assert not shown, head
    # cleared before what follows
    assert not shown or b"\r\x1b[K" in head[shown[-1].end():], head[-300:]
