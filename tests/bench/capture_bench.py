#!/usr/bin/python3
"""make bench, capture part, all measured in this one run on a Go loop
calling add(42, i) (tests/fixtures/hot), side by side:

- the capture program's cost per probe hit, from the kernel's bpf_stats
  (run_time_ns / run_cnt, sysctl kernel.bpf_stats_enabled=1 for the run):
  an empty BPF program (bpftrace), the minimum program
  (tests/bench/minimum.bpf.c: only the three things every gotrace event
  needs, a bpf_ktime_get_ns(), the 8-byte user read of the goid and a
  ring-buffer record of the same size, loaded by build/bench_minimum;
  and each of the three alone, and the first two without a record, to
  show what part of a hit's cost is the kernel's), bpftrace's printf of two registers,
  gotrace-record capturing two ints (with goid and timestamp, as every
  event), gotrace-record capturing a 64-byte string and an int
  (tests/bench/hotstr), and entry and return probes on main.add, without
  and with whole calls (spec/PROBES.md: a rate limit above the loop's
  rate, so that every call is kept and noted). gotrace-record prints its program's figures itself
  (GOTRACE_BPF_STATS); bpftrace's program is found among the programs
  loaded while it runs and read with bpftool;
- the cost per call end to end, as the Go program times its own loop, less
  the untraced loop: gotrace-record against the bare uprobe trap (the empty
  program), the ratio being the target (<= 1.05). perf record is shown for
  comparison.

Each of REPEAT rounds runs every configuration once (interleaved, so that
the load of a shared machine moves all alike); the medians are shown, with
the spread of the per-hit figures, and the end-to-end ratio is the median
of each round's own ratio."""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CALLS = int(os.environ.get("BENCH_CALLS", "50000"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "7"))
# the gotrace-record measured: the repository's, or GOTRACE_BIN_DIR's (as
# tests/e2e/conftest.py), e.g. an older build to compare with
RECORD = os.path.join(os.environ.get("GOTRACE_BIN_DIR") or ROOT, "gotrace-record")
# the minimum program's loader and object, built by make bench
MINIMUM = (os.path.join(ROOT, "build", "bench_minimum"),
           os.path.join(ROOT, "build", "minimum.bpf.o"))
# runtime.g.goid's offset of the newest toolchains (Go 1.26-1.27 on amd64,
# record/gofacts.c): where the minimum program reads, as gotrace-record does
GOID_OFF = "152"
# the minimum program's parts measured alone (its cfg.parts bits)
MINIMUM_PARTS = {1: "bpf_ktime_get_ns() alone", 2: "goid read alone",
                 4: "88-byte record alone", 3: "ktime + goid read, no record"}


def build(tmp):
    env = dict(os.environ, GOCACHE=os.path.join(ROOT, "build", "gocache"),
               GOPATH=os.path.join(ROOT, "build", "gopath"), CGO_ENABLED="0")
    # the newest Go toolchain of tests/toolchains, named, not PATH's
    go = subprocess.run([os.path.join(ROOT, "tests", "gocmd"), "newest"], env=env,
                        capture_output=True, text=True, check=True).stdout.split()
    out = {}
    for name, src in (("hot", "tests/fixtures/hot/main.go"),
                      ("hotstr", "tests/bench/hotstr/main.go")):
        out[name] = os.path.join(tmp, name)
        subprocess.run([*go, "build", "-o", out[name], os.path.join(ROOT, src)],
                       check=True, env=env, cwd=tmp)
    return out


def kprobe_progs():
    """{id: (name, run_time_ns, run_cnt)} of the kprobe-type (uprobe)
    programs loaded now."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                         text=True, check=True).stdout
    return {p["id"]: (p.get("name", ""), p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in json.loads(out) if p.get("type") == "kprobe"}


class Watch:
    """Reads the bpf_stats of the uprobe programs loaded after it started
    (not gotrace's, not the ones before), every 0.1 s until stopped: the
    figures of the one with most runs, read last while it was loaded."""

    def __init__(self):
        self.before = set(kprobe_progs())
        self.best = (0, 0)
        self.done = threading.Event()
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        while not self.done.wait(0.1):
            for pid, (name, ns, cnt) in kprobe_progs().items():
                if pid not in self.before and not name.startswith("gotrace") \
                        and cnt >= self.best[1]:
                    self.best = (ns, cnt)

    def stop(self):
        self.done.set()
        self.t.join()
        ns, cnt = self.best
        return ns / cnt if cnt else None


def run(argv, cwd, watch=False, env=None):
    """Runs argv (which runs the hot loop); returns (the loop's ns/call, the
    capture program's ns per run or None)."""
    w = Watch() if watch else None
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=600,
                         env=dict(os.environ, **env) if env else None)
    per_run = w.stop() if w else None
    m = re.search(r"^(\d+) (\d+) ([0-9.e+]+)$", out.stdout, re.M)
    if not m or int(m.group(1)) != CALLS:
        raise SystemExit("bench: %s did not run the loop:\n%s\n%s"
                         % (argv[0], out.stdout, out.stderr))
    s = re.search(r"bpf_stats: (\d+) runs, (\d+) ns", out.stderr)
    if s:
        if int(s.group(1)) < CALLS:
            raise SystemExit("bench: bpf_stats counted %s runs of %d (is "
                             "kernel.bpf_stats_enabled 1?)" % (s.group(1), CALLS))
        per_run = int(s.group(2)) / int(s.group(1))
    return float(m.group(3)), per_run


def perf_probe(exe):
    """Adds the perf uprobe event on main.add of exe: None, or why not."""
    probe = subprocess.run(["perf", "probe", "-q", "-x", exe, "--add", "gotrace_add=main.add"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else probe.stderr.strip() or "perf probe failed"


def configs(exe, tmp, perf):
    """{name: (argv, run() keywords)} of every configuration measured."""
    hot, n = exe["hot"], str(CALLS)
    gt = lambda *probe: [RECORD, "-q", "-f", "-o", os.path.join(tmp, "b.gtr"), *probe]
    stats = {"env": {"GOTRACE_BPF_STATS": "1"}}
    c = {
        "bare": ([hot, n], {}),
        "empty": (["bpftrace", "-q", "-e", "uprobe:%s:main.add {}" % hot,
                   "-c", "%s %s" % (hot, n)], {"watch": True}),
        "printf": (["bpftrace", "-q", "-e",
                    'uprobe:%s:main.add { printf("%%d %%d\\n", reg("ax"), reg("bx")); }'
                    % hot, "-c", "%s %s" % (hot, n)], {"watch": True}),
        "minimum": ([MINIMUM[0], MINIMUM[1], hot, "main.add", GOID_OFF, "--", hot, n], {}),
        # minimum.bpf.c's parts alone: 1 ktime, 2 goid read, 4 record
        **{"minimum%d" % p: ([MINIMUM[0], MINIMUM[1], hot, "main.add", GOID_OFF, str(p),
                              "--", hot, n], {}) for p in MINIMUM_PARTS},
        "gotrace": (gt('main.add "%d %d" goarg1, goarg2', "--", hot, n), stats),
        "string": (gt("main.name", "--", exe["hotstr"], n), stats),
        # entry and return probes, then the same as whole calls (a rate
        # limit far above the loop's rate: every call kept, each noted)
        "calls": (gt("main.add", "r:main.add", "--", hot, n), stats),
        "whole": (gt("-r", "100000000", "main.add", "r:main.add", "--", hot, n), stats),
    }
    if perf:
        c["perf"] = (["perf", "record", "-q", "-o", os.path.join(tmp, "perf.data"),
                      "-e", "probe_hot:gotrace_add", "--", hot, n], {})
    return c


def measure(tmp):
    """REPEAT rounds, each running every configuration once, so that a
    change in the machine's load in between touches all of them alike:
    {name: [(ns/call, ns per program run or None) per round]}, and why
    perf record was left out (None: it was not)."""
    exe = build(tmp)
    why = perf_probe(exe["hot"])
    try:
        c = configs(exe, tmp, why is None)
        r = {k: [] for k in c}
        for _ in range(REPEAT):
            for k, (argv, kw) in c.items():
                r[k].append(run(argv, tmp, **kw))
    finally:
        if why is None:
            subprocess.run(["perf", "probe", "-q", "--del", "probe_hot:*"], capture_output=True)
    return r, why


def report(r, why):
    med = statistics.median
    fmt = lambda v: "%7.0f ns" % med(v) if v else "%10s" % "?"
    spread = lambda v: "  [%.0f-%.0f]" % (min(v), max(v)) if v else ""
    per_run = {k: [x[1] for x in v if x[1] is not None] for k, v in r.items()}
    print("capture program per probe hit (bpf_stats run_time_ns / run_cnt), %d calls,"
          " median of %d interleaved runs [min-max]" % (CALLS, REPEAT))
    rows = (("empty BPF program (bpftrace)", "empty", ""),
            *(("  minimum's " + what, "minimum%d" % p, "") for p, what in MINIMUM_PARTS.items()),
            ("minimum: ktime + goid read + 88-byte record", "minimum", ""),
            ("bpftrace printf of 2 registers", "printf", ""),
            ("gotrace-record, 2 ints + goid + ts", "gotrace", "  (target <= 250 ns)"),
            ("gotrace-record, 64-byte string + int", "string", ""),
            ("gotrace-record, entry + return probes", "calls", ""),
            ("  the same, whole calls (-r, every call kept)", "whole", ""))
    for name, k, note in rows:
        print("  %-44s %s%s%s" % (name, fmt(per_run[k]), spread(per_run[k]), note))
    # each run's cost against the untraced loop of its own round
    cost = {k: [x[0] - b[0] for x, b in zip(v, r["bare"])] for k, v in r.items()}
    ratio = lambda k: med(c / e for c, e in zip(cost[k], cost["empty"]))
    print("cost per call end to end (the loop's own timing, less the untraced loop of"
          " the same round; ratios per round, their median)")
    print("  %-44s %7.0f ns" % ("untraced loop", med(x[0] for x in r["bare"])))
    print("  %-44s %7.0f ns  (floor)  [%.0f-%.0f]"
          % ("bare uprobe trap, empty program", med(cost["empty"]),
             min(cost["empty"]), max(cost["empty"])))
    print("  %-44s %7.0f ns  ratio %.3f (target <= 1.05)"
          % ("gotrace-record, 2 ints + goid", med(cost["gotrace"]), ratio("gotrace")))
    print("  %-44s %7.0f ns  ratio %.3f"
          % ("bpftrace printf of 2 registers", med(cost["printf"]), ratio("printf")))
    if why is None:
        print("  %-44s %7.0f ns  ratio %.3f"
              % ("perf record (uprobe event)", med(cost["perf"]), ratio("perf")))
    else:
        print("  perf record: perf probe failed: %s" % why)
    if per_run["gotrace"] and per_run["minimum"]:
        print("  gotrace's program is %.0f ns over the minimum: the ktime, goid read and"
              " ring-buffer record every event needs cost %.0f ns a hit on this machine alone"
              % (med(per_run["gotrace"]) - med(per_run["minimum"]), med(per_run["minimum"])))
    if per_run["minimum3"] and per_run["empty"]:
        print("  the clock and the goid read alone, before any record is written, cost %.0f ns"
              " a hit (the empty program %.0f ns): the floor under every event's cost here"
              % (med(per_run["minimum3"]), med(per_run["empty"])))
    if per_run["calls"] and per_run["whole"]:
        print("  a rate limit with whole calls costs %.0f ns a hit over the same probes without"
              " a limit: the rate window (entry), the read of g.stack.hi and a hash update"
              " (entry) or delete (return) of the calls map"
              % (med(per_run["whole"]) - med(per_run["calls"])))
    if per_run["gotrace"] and per_run["empty"]:
        prog = med(per_run["gotrace"]) - med(per_run["empty"])
        print("  gotrace's program is %.1f%% of its cost per call, the rest is the trap: its"
              " ns over the empty program's alone would make the ratio %.3f"
              % (100 * med(per_run["gotrace"]) / med(cost["gotrace"]),
                 (med(cost["empty"]) + prog) / med(cost["empty"])))


def main():
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        was = f.read().strip()
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        with tempfile.TemporaryDirectory() as tmp:
            r, why = measure(tmp)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(was)
    report(r, why)


if __name__ == "__main__":
    sys.exit(main())
