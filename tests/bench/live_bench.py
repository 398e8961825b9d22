#!/usr/bin/python3
"""make bench, live part: how soon `gotrace-record -o - | gotrace-report -`
shows a call, for a Go program calling tick() every 100 ms, with the
default flush interval (1 s) and with --flush-interval 0.1: the median and
the largest delay from the call (its CLOCK_MONOTONIC timestamp) to the line
on the report's standard output. Figures are printed; nothing is asserted."""
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECORD = os.path.join(ROOT, "gotrace-record")
REPORT = os.path.join(ROOT, "gotrace-report")
CALLS = 30


def build_tick(tmp):
    go = subprocess.run([os.path.join(ROOT, "tests", "gocmd"), "newest"], capture_output=True,
                        text=True, check=True).stdout.split()
    out = os.path.join(tmp, "tick")
    env = dict(os.environ, GOCACHE=os.path.join(ROOT, "build", "gocache"),
               GOPATH=os.path.join(ROOT, "build", "gopath"))
    subprocess.run([*go, "build", "-o", out, "main.go"], check=True, env=env,
                   cwd=os.path.join(ROOT, "tests", "fixtures", "tick"))
    return out


def delays(tick, flush):
    target = subprocess.Popen([tick], stdout=subprocess.PIPE, text=True)
    target.stdout.readline()
    rec = subprocess.Popen([RECORD, "-q", "-o", "-", *flush, "-p", str(target.pid), "main.tick"],
                           stdout=subprocess.PIPE)
    rep = subprocess.Popen([REPORT, "--format", "jsonl", "-"], stdin=rec.stdout,
                           stdout=subprocess.PIPE)
    rec.stdout.close()
    out, buf = [], b""
    try:
        while len(out) < CALLS:
            if not select.select([rep.stdout.fileno()], [], [], 30)[0]:
                raise SystemExit("bench: no event from the live report within 30 s")
            buf += os.read(rep.stdout.fileno(), 65536)
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                out.append((now - json.loads(line)["ts_ns"]) / 1e9)
    finally:
        rec.send_signal(signal.SIGINT)
        rec.wait(30)
        rep.wait(30)
        target.kill()
        target.wait()
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tick = build_tick(tmp)
        print("live: delay from a call to its line in gotrace-record -o - | gotrace-report - "
              "(%d calls, one every 100 ms)" % CALLS)
        for label, flush in (("default flush (1 s)", []),
                             ("--flush-interval 0.1", ["--flush-interval", "0.1"])):
            d = delays(tick, flush)
            print("  %-22s median %6.3f s   max %6.3f s" % (label, statistics.median(d), max(d)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
