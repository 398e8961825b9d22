#!/usr/bin/python3
"""make bench, recorder part:
- attach time for 1,000 and 10,000 probes on Debian's caddy (41,000
  functions, stripped), beside bpftrace attaching the same functions by
  address (it cannot read their names);
- the recorder's own CPU per event (user+sys of gotrace-record divided by
  the events it wrote) as a share of the bare uprobe cost measured in the
  same run (an empty bpftrace program on the same function).
Figures are printed; nothing is asserted."""
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECORD = os.path.join(ROOT, "gotrace-record")
CADDY = "/usr/bin/caddy"


def caddy_functions(n):
    """(name, entry address) of n functions of caddy; names that a shell
    glob or bpftrace would read specially are left out."""
    import json
    out = subprocess.run([RECORD, "--list", "--json", CADDY],
                         capture_output=True, text=True, check=True).stdout
    # runtime.* is left out: some of it cannot be probed (runtime.abort
    # is a trap instruction), and a named probe that cannot be placed is
    # refused rather than skipped.
    funcs = [(f["name"], f["entry"]) for f in json.loads(out)["functions"]
             if not any(c in f["name"] for c in "[]*?(){}, ")
             and not f["name"].startswith("runtime.")]
    return funcs[:n]


def time_gotrace_attach(tmp, names):
    """Seconds from start to 'attached' for gotrace-record on every
    process of caddy (none runs: the uprobes are registered all the same)."""
    if True:
        args = [RECORD, "-o", os.path.join(tmp, "a.gtr"), "-f", "-m", "100000",
                "-d", "0.01"]
        args += ["%s:%s" % (CADDY, n) for n, _ in names]
        t0 = time.monotonic()
        p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        line = p.stderr.readline()
        t1 = time.monotonic()
        p.communicate(timeout=600)
        if "attached" not in line:
            raise SystemExit("bench: gotrace-record did not attach: " + line)
        return t1 - t0


def time_bpftrace_attach(names):
    """bpftrace cannot name functions of a stripped binary: it is given
    their addresses (with --unsafe, which address probes need)."""
    prog = ",".join("uprobe:%s:0x%x" % (CADDY, a) for _, a in names) + " { }"
    t0 = time.monotonic()
    p = subprocess.run(["bpftrace", "--unsafe", "-e", prog, "-c", "/bin/true"],
                       capture_output=True, text=True, timeout=3600,
                       env=dict(os.environ, BPFTRACE_MAX_PROBES="100000"))
    elapsed = time.monotonic() - t0
    if p.returncode != 0 or "Attaching" not in p.stdout + p.stderr:
        print("  (bpftrace: %s)" % (p.stdout + p.stderr).strip().splitlines()[-1])
        return None
    return elapsed


def recorder_cpu(tmp, calls):
    env = dict(os.environ, GOCACHE=os.path.join(ROOT, "build", "gocache"),
               GOPATH=os.path.join(ROOT, "build", "gopath"), CGO_ENABLED="0")
    exe = os.path.join(tmp, "hot")
    # the newest Go toolchain of tests/toolchains, named, not PATH's
    go = subprocess.run([os.path.join(ROOT, "tests", "gocmd"), "newest"], env=env,
                        capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([*go, "build", "-o", exe, "main.go"], check=True, env=env,
                   cwd=os.path.join(ROOT, "tests/fixtures/hot"))
    floor = subprocess.run(["bpftrace", "-q", "-e", "uprobe:%s:main.add {}" % exe,
                            "-c", "%s %d" % (exe, calls)],
                           capture_output=True, text=True).stdout
    bare = subprocess.run([exe, str(calls)], capture_output=True, text=True).stdout
    per_call = lambda out: float(re.search(r"^\d+ \d+ ([0-9.e+]+)$", out, re.M).group(1))
    uprobe_ns = per_call(floor) - per_call(bare)
    target = subprocess.Popen([exe, "8s"], stdout=subprocess.PIPE, text=True)
    rec = subprocess.Popen([RECORD, "-o", os.path.join(tmp, "c.gtr"), "-f",
                            'main.add "%d %d" goarg1, goarg2', "-p", str(target.pid)],
                           stderr=subprocess.PIPE, text=True)
    target.communicate()
    # wait4 gives the recorder's own rusage: the target is not its child.
    _, _, ru = os.wait4(rec.pid, 0)
    rec.returncode = 0
    err = rec.stderr.read()
    events = int(re.search(r"(\d+) events", err).group(1))
    return uprobe_ns, ru.ru_utime + ru.ru_stime, events


def main():
    if not os.path.exists(CADDY):
        raise SystemExit("bench: %s is missing (make deps installs caddy)" % CADDY)
    with tempfile.TemporaryDirectory() as tmp:
        names = caddy_functions(10000)
        print("attach time, probes on functions of %s" % CADDY)
        for n in (1000, len(names)):
            print("  gotrace-record, %5d probes: %6.2f s" % (n, time_gotrace_attach(tmp, names[:n])))
        for n in (1000, len(names)):
            bt = time_bpftrace_attach(names[:n])
            print("  bpftrace,       %5d probes: %s" % (n, "%6.2f s (attach and detach)" % bt
                                                      if bt is not None else "failed"))
            if bt is None or bt > 60:
                if bt is not None:
                    print("  bpftrace,       %5d probes: not run (about %.0f s at that rate)"
                          % (len(names), bt * len(names) / n))
                break
        uprobe_ns, cpu, events = recorder_cpu(tmp, 200000)
        per_event = cpu * 1e9 / max(events, 1)
        print("recorder CPU per event: %.0f ns (%d events, %.2f s user+sys), "
              "%.1f%% of the bare uprobe cost (%.0f ns) in this run; target <= 5%%"
              % (per_event, events, cpu, 100 * per_event / uprobe_ns, uprobe_ns))


if __name__ == "__main__":
    sys.exit(main())
