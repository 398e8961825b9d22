#!/usr/bin/python3
"""make bench, capture part, all measured in this one run on a Go loop
calling add(42, i) (tests/fixtures/hot), side by side:

- the capture program's cost per probe hit, from the kernel's bpf_stats
  (run_time_ns / run_cnt, sysctl kernel.bpf_stats_enabled=1 for the run):
  an empty BPF program (bpftrace), bpftrace's printf of two registers,
  gotrace-record capturing two ints (with goid and timestamp, as every
  event), and gotrace-record capturing a 64-byte string and an int
  (tests/bench/hotstr). gotrace-record prints its program's figures itself
  (GOTRACE_BPF_STATS); bpftrace's program is found among the programs
  loaded while it runs and read with bpftool;
- the cost per call end to end, as the Go program times its own loop, less
  the untraced loop: gotrace-record against the bare uprobe trap (the empty
  program), the ratio being the target (<= 1.05). perf record is shown for
  comparison.

Each configuration runs REPEAT times; the medians are shown."""
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
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
RECORD = os.path.join(ROOT, "gotrace-record")


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


def median(argv, cwd, **kw):
    """Medians of REPEAT runs: (ns/call, ns per program run or None)."""
    res = [run(argv, cwd, **kw) for _ in range(REPEAT)]
    per_run = [r[1] for r in res if r[1] is not None]
    return (statistics.median(r[0] for r in res),
            statistics.median(per_run) if per_run else None)


def perf_record(exe, n, tmp):
    probe = subprocess.run(["perf", "probe", "-q", "-x", exe, "--add", "gotrace_add=main.add"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return None, probe.stderr.strip()
    try:
        return median(["perf", "record", "-q", "-o", os.path.join(tmp, "perf.data"),
                       "-e", "probe_hot:gotrace_add", "--", exe, n], tmp)[0], None
    finally:
        subprocess.run(["perf", "probe", "-q", "--del", "probe_hot:*"], capture_output=True)


def measure(tmp):
    exe = build(tmp)
    hot, n = exe["hot"], str(CALLS)
    gt = lambda *probe: [RECORD, "-q", "-f", "-o", os.path.join(tmp, "b.gtr"), *probe]
    stats = {"GOTRACE_BPF_STATS": "1"}
    r = {}
    r["bare"] = median([hot, n], tmp)
    r["empty"] = median(["bpftrace", "-q", "-e", "uprobe:%s:main.add {}" % hot,
                         "-c", "%s %s" % (hot, n)], tmp, watch=True)
    r["printf"] = median(["bpftrace", "-q", "-e",
                          'uprobe:%s:main.add { printf("%%d %%d\\n", reg("ax"), reg("bx")); }'
                          % hot, "-c", "%s %s" % (hot, n)], tmp, watch=True)
    r["gotrace"] = median(gt('main.add "%d %d" goarg1, goarg2', "--", hot, n), tmp, env=stats)
    r["string"] = median(gt("main.name", "--", exe["hotstr"], n), tmp, env=stats)
    r["perf"] = perf_record(hot, n, tmp)
    return r


def report(r):
    fmt = lambda v: "%7.0f ns" % v if v is not None else "%10s" % "?"
    print("capture program per probe hit (bpf_stats run_time_ns / run_cnt), %d calls,"
          " median of %d runs" % (CALLS, REPEAT))
    rows = (("empty BPF program (bpftrace)", r["empty"][1], ""),
            ("bpftrace printf of 2 registers", r["printf"][1], ""),
            ("gotrace-record, 2 ints + goid + ts", r["gotrace"][1], "  (target <= 250 ns)"),
            ("gotrace-record, 64-byte string + int", r["string"][1], ""))
    for name, v, note in rows:
        print("  %-44s %s%s" % (name, fmt(v), note))
    bare = r["bare"][0]
    cost = lambda k: r[k][0] - bare
    print("cost per call end to end (the loop's own timing, less the untraced loop)")
    print("  %-44s %7.0f ns" % ("untraced loop", bare))
    print("  %-44s %7.0f ns  (floor)" % ("bare uprobe trap, empty program", cost("empty")))
    print("  %-44s %7.0f ns  ratio %.3f (target <= 1.05)"
          % ("gotrace-record, 2 ints + goid", cost("gotrace"), cost("gotrace") / cost("empty")))
    print("  %-44s %7.0f ns  ratio %.3f"
          % ("bpftrace printf of 2 registers", cost("printf"), cost("printf") / cost("empty")))
    perf, why = r["perf"]
    if perf is not None:
        print("  %-44s %7.0f ns  ratio %.3f"
              % ("perf record (uprobe event)", perf - bare, (perf - bare) / cost("empty")))
    else:
        print("  perf record: perf probe failed: %s" % why)


def main():
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        was = f.read().strip()
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        with tempfile.TemporaryDirectory() as tmp:
            r = measure(tmp)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(was)
    report(r)


if __name__ == "__main__":
    sys.exit(main())
