#!/usr/bin/python3
"""make bench, recorder part:
- mass attach: a running caddy (Debian's, 41,000 functions, stripped)
  probed at every function but the runtime's and at every return of
  caddy's own (about 50,000 uprobes; -m 50000 leaves out the 56,000
  inlined copies the glob also matches, with a message) with -p: the time
  to attach, to the first event shown by gotrace-report reading the live
  trace, and from Ctrl-C to the recorder's exit (detach and close), with
  its CPU time and peak RSS; beside them, the anchor: the kernel alone
  attaching as many uprobes to caddy in uprobe-multi links of an empty
  BPF program, and closing them, in the same run;
- attach time for 1,000 and 10,000 probes on caddy (no process running),
  beside bpftrace attaching the same functions by address (it cannot read
  their names);
- the recorder's own CPU per event (user+sys of gotrace-record divided by
  the events it wrote) as a share of the bare uprobe cost measured in the
  same run (an empty bpftrace program on the same function).
Figures are printed; nothing is asserted."""
import ctypes
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECORD = os.path.join(ROOT, "gotrace-record")
REPORT = os.path.join(ROOT, "gotrace-report")
CADDY = "/usr/bin/caddy"


def caddy_functions(n):
    """(name, entry address) of n functions of caddy; names that a shell
    glob or bpftrace would read specially are left out."""
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
        while line.startswith("gotrace-record: attaching "):   # progress
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


def caddy_sites(n):
    """File offsets of n instructions of caddy a uprobe may replace: the
    first of each function but the runtime's, then of each inlined copy
    (none with a LOCK prefix, which the kernel refuses)."""
    d = json.loads(subprocess.run([RECORD, "--list", "--json", CADDY, "*"], capture_output=True,
                                  text=True, check=True).stdout)
    with open(CADDY, "rb") as f:
        img = f.read()
    fns = d["functions"]
    bias = fns[0]["entry"] - fns[0]["file_offset"]
    offs = [f["file_offset"] for f in fns if not f["name"].startswith("runtime.")]
    for f in fns + d["only_inlined"]:
        offs += [c["address"] - bias for c in f["inlined"] or []]
    offs = sorted(set(o for o in offs if img[o] != 0xF0))
    return offs[:n]


def kernel_attach(offsets, pid):
    """The anchor: the kernel alone attaching a uprobe at each of offsets
    of caddy in uprobe-multi links of 4,096 (as gotrace-record's) running
    an empty BPF program, for process pid, then closing them (bpf(2)
    through ctypes: Linux 6.6 ABI). (attach s, detach s), or None."""
    libc = ctypes.CDLL(None, use_errno=True)
    bpf = lambda cmd, attr: libc.syscall(321, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    insns = (ctypes.c_uint64 * 2)(0x00000000000000b7, 0x0000000000000095)  # r0 = 0; exit
    lic = ctypes.create_string_buffer(b"GPL")
    load = (ctypes.c_uint8 * 128)()
    # prog_type KPROBE, insn_cnt, insns, license; expected_attach_type
    # BPF_TRACE_UPROBE_MULTI (48) at byte 68
    ctypes.memmove(ctypes.addressof(load), ctypes.byref(ctypes.c_uint32(2)), 4)
    ctypes.memmove(ctypes.addressof(load) + 4, ctypes.byref(ctypes.c_uint32(2)), 4)
    ctypes.memmove(ctypes.addressof(load) + 8, ctypes.byref(ctypes.c_uint64(ctypes.addressof(insns))), 8)
    ctypes.memmove(ctypes.addressof(load) + 16, ctypes.byref(ctypes.c_uint64(ctypes.addressof(lic))), 8)
    ctypes.memmove(ctypes.addressof(load) + 68, ctypes.byref(ctypes.c_uint32(48)), 4)
    prog = bpf(5, load)
    if prog < 0:
        print("  (anchor: BPF_PROG_LOAD: %s)" % os.strerror(ctypes.get_errno()))
        return None
    path = ctypes.create_string_buffer(CADDY.encode())

    class Link(ctypes.Structure):
        _fields_ = [("prog_fd", ctypes.c_uint32), ("target_fd", ctypes.c_uint32),
                    ("attach_type", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                    ("path", ctypes.c_uint64), ("offsets", ctypes.c_uint64),
                    ("ref_ctr_offsets", ctypes.c_uint64), ("cookies", ctypes.c_uint64),
                    ("cnt", ctypes.c_uint32), ("um_flags", ctypes.c_uint32),
                    ("pid", ctypes.c_uint32), ("pad", ctypes.c_uint32 * 5)]
    links = []
    t0 = time.monotonic()
    for i in range(0, len(offsets), 4096):
        chunk = (ctypes.c_uint64 * len(offsets[i:i + 4096]))(*offsets[i:i + 4096])
        attr = Link(prog_fd=prog, attach_type=48, path=ctypes.addressof(path),
                    offsets=ctypes.addressof(chunk), cnt=len(chunk), pid=pid)
        fd = bpf(28, attr)
        if fd < 0:
            print("  (anchor: BPF_LINK_CREATE: %s)" % os.strerror(ctypes.get_errno()))
            break
        links.append(fd)
    attached = time.monotonic() - t0
    t0 = time.monotonic()
    for fd in links:
        os.close(fd)
    detached = time.monotonic() - t0
    os.close(prog)
    return (attached, detached) if len(links) * 4096 >= len(offsets) else None


def start_caddy(tmp):
    """caddy on 127.0.0.1 answering "hello"; (Popen, port)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = os.path.join(tmp, "Caddyfile")
    with open(cfg, "w") as f:
        f.write("{\n\tadmin off\n\tauto_https off\n}\nhttp://127.0.0.1:%d {\n"
                "\trespond \"hello\"\n}\n" % port)
    env = dict(os.environ, HOME=tmp, XDG_DATA_HOME=tmp, XDG_CONFIG_HOME=tmp)
    p = subprocess.Popen([CADDY, "run", "--config", cfg, "--adapter", "caddyfile"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=1).read()
            return p, port
        except OSError:
            time.sleep(0.1)
    p.kill()
    raise SystemExit("bench: caddy did not start")


def mass_attach(tmp):
    """Probes a running caddy at every function but the runtime's and every
    return of caddy's own, through -o - into gotrace-report - while a
    client sends requests, then the anchor (kernel_attach()) on the same
    caddy with as many uprobes. Returns (uprobes, seconds to attached, to
    the first event shown, from SIGINT to exit, recorder CPU seconds, its
    peak RSS in MB, the anchor's (attach s, detach s) or None)."""
    caddy, port = start_caddy(tmp)
    stop = threading.Event()

    def client():
        while not stop.is_set():
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=2).read()
            except OSError:
                pass
            time.sleep(0.01)
    th = threading.Thread(target=client)
    th.start()
    try:
        t0 = time.monotonic()
        rec = subprocess.Popen([RECORD, "-o", "-", "-m", "50000", "-p", str(caddy.pid), "*",
                                "r:github.com/caddyserver/*", "-x", "runtime.*"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rep = subprocess.Popen([REPORT, "-"], stdin=rec.stdout, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        rec.stdout.close()
        attached = uprobes = None
        for line in rec.stderr:
            m = re.search(r"probes attached \((\d+) uprobes\)", line)
            if m:
                attached, uprobes = time.monotonic() - t0, int(m.group(1))
                break
        if attached is None:
            raise SystemExit("bench: gotrace-record did not attach to caddy")
        rep.stdout.readline()                 # the header
        rep.stdout.readline()                 # the first event
        first = time.monotonic() - t0
        # the rest is read away, so that neither tool waits on a full pipe
        drains = [threading.Thread(target=f.read) for f in (rep.stdout, rec.stderr)]
        for d in drains:
            d.start()
        t1 = time.monotonic()
        rec.send_signal(signal.SIGINT)
        _, _, ru = os.wait4(rec.pid, 0)
        rec.returncode = 0
        done = time.monotonic() - t1
        rep.wait()
        for d in drains:
            d.join()
        stop.set()
        anchor = kernel_attach(caddy_sites(uprobes), caddy.pid)
        return (uprobes, attached, first, done, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024,
                anchor)
    finally:
        stop.set()
        th.join()
        caddy.terminate()
        caddy.wait()


def main():
    if not os.path.exists(CADDY):
        raise SystemExit("bench: %s is missing (make deps installs caddy)" % CADDY)
    with tempfile.TemporaryDirectory() as tmp:
        # three rounds, medians shown: a shared machine's load moves single runs
        runs = [mass_attach(tmp) for _ in range(3)]
        med = lambda k: statistics.median(r[k] for r in runs)
        span = lambda k: "%.2f-%.2f" % (min(r[k] for r in runs), max(r[k] for r in runs))
        print("mass attach: %d uprobes on a running caddy (-p), median of %d rounds; target: "
              "attach <= 2 s, detach <= 2 s" % (runs[0][0], len(runs)))
        print("  %-52s %6s %8s" % ("", "attach", "detach"))
        print("  %-52s %6.2f s %6.2f s  (rounds %s s, %s s; first event shown at %.2f s; "
              "CPU %.2f s, peak RSS %.0f MB)" % (
                  "gotrace-record (start to attached, Ctrl-C to exit)", med(1), med(3),
                  span(1), span(3), med(2), med(4), med(5)))
        anchors = [r[6] for r in runs if r[6]]
        if anchors:
            print("  %-52s %6.2f s %6.2f s  (anchor)" % (
                "the kernel alone: uprobe-multi links, empty program",
                statistics.median(a[0] for a in anchors), statistics.median(a[1] for a in anchors)))
        else:
            print("  the kernel alone: not measured (reason above)")
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
