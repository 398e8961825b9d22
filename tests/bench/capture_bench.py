#!/usr/bin/python3
"""make bench, capture part: cost per call of a Go loop calling add(42, i)
under gotrace-record (both arguments and the goroutine id), as a ratio to
the bare uprobe floor (an empty BPF program on the same function, attached
by bpftrace), all measured in this one run. bpftrace's printf of two
arguments and perf record are shown for comparison.

The Go program times its own loop, so tool start-up is not counted. Each
configuration runs REPEAT times; the median is used."""
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CALLS = int(os.environ.get("BENCH_CALLS", "200000"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))


def build(tmp):
    exe = os.path.join(tmp, "hot")
    env = dict(os.environ, GOCACHE=os.path.join(ROOT, "build", "gocache"),
               GOPATH=os.path.join(ROOT, "build", "gopath"), CGO_ENABLED="0")
    # the newest Go toolchain of tests/toolchains, named, not PATH's
    go = subprocess.run([os.path.join(ROOT, "tests", "gocmd"), "newest"], env=env,
                        capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([*go, "build", "-o", exe, "main.go"], check=True, env=env,
                   cwd=os.path.join(ROOT, "tests/fixtures/hot"))
    return exe


def ns_per_call(argv, cwd):
    """Runs argv (which runs the hot loop) and returns the loop's ns/call."""
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd,
                         timeout=600)
    m = re.search(r"^(\d+) (\d+) ([0-9.e+]+)$", out.stdout, re.M)
    if not m or int(m.group(1)) != CALLS:
        raise SystemExit("bench: %s did not run the loop:\n%s\n%s"
                         % (argv[0], out.stdout, out.stderr))
    return float(m.group(3))


def median(argv, cwd):
    return statistics.median(ns_per_call(argv, cwd) for _ in range(REPEAT))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        n = str(CALLS)
        rows = []
        bare = median([exe, n], tmp)
        floor = median(["bpftrace", "-q", "-e", "uprobe:%s:main.add {}" % exe,
                        "-c", "%s %s" % (exe, n)], tmp)
        gotrace = median([os.path.join(ROOT, "gotrace-record"), "-q", "-f",
                          "-o", os.path.join(tmp, "b.gtr"),
                          'main.add "%d %d" goarg1, goarg2', "--", exe, n], tmp)
        printf = median(["bpftrace", "-q", "-e",
                         'uprobe:%s:main.add { printf("%%d %%d\\n", reg("ax"), reg("bx")); }' % exe,
                         "-c", "%s %s" % (exe, n)], tmp)
        perf = None
        probe = subprocess.run(["perf", "probe", "-q", "-x", exe, "--add", "gotrace_add=main.add"],
                               capture_output=True, text=True)
        if probe.returncode == 0:
            try:
                ev = "probe_hot:gotrace_add"
                perf = median(["perf", "record", "-q", "-o", os.path.join(tmp, "perf.data"),
                               "-e", ev, "--", exe, n], tmp)
            finally:
                subprocess.run(["perf", "probe", "-q", "--del", "probe_hot:*"],
                               capture_output=True)
        cost = lambda t: t - bare
        print("capture cost per call of add(42, i), %d calls, median of %d runs"
              % (CALLS, REPEAT))
        print("  %-44s %9.0f ns" % ("untraced loop", bare))
        print("  %-44s %9.0f ns  (floor)" % ("bare uprobe, empty BPF program (bpftrace)",
                                             cost(floor)))
        print("  %-44s %9.0f ns  ratio %.2f (target <= 1.05)"
              % ("gotrace-record, 2 args + goid", cost(gotrace), cost(gotrace) / cost(floor)))
        print("  %-44s %9.0f ns  ratio %.2f"
              % ("bpftrace printf of 2 args", cost(printf), cost(printf) / cost(floor)))
        if perf is not None:
            print("  %-44s %9.0f ns  ratio %.2f"
                  % ("perf record (uprobe event)", cost(perf), cost(perf) / cost(floor)))
        else:
            print("  perf record: perf probe failed: %s" % probe.stderr.strip())


if __name__ == "__main__":
    sys.exit(main())
