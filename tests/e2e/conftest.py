"""Shared set-up of gotrace's end-to-end tests: built tools, Go fixtures,
and helpers that run gotrace-record / gotrace-report and clean up after
themselves (processes are stopped by PID, never by name)."""
import os
import shutil
import signal
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECORD = os.path.join(ROOT, "gotrace-record")
REPORT = os.path.join(ROOT, "gotrace-report")
IN_CI = os.environ.get("CI") == "true"


def _need(cond, why):
    """Skips when a precondition is missing; in CI a missing precondition
    is a failure, never a skip."""
    if cond:
        return
    if IN_CI:
        pytest.fail("end-to-end precondition missing in CI: " + why)
    pytest.skip(why)


@pytest.fixture(scope="session", autouse=True)
def can_trace():
    _need(os.geteuid() == 0, "needs root to load BPF programs and attach uprobes")
    _need(os.path.exists("/sys/kernel/btf/vmlinux"), "kernel without BTF")
    _need(os.path.exists(RECORD) and os.path.exists(REPORT),
          "gotrace-record/gotrace-report not built (run make)")
    _need(shutil.which("go") is not None, "go toolchain missing (make deps)")


@pytest.fixture(scope="session")
def gobuild(tmp_path_factory):
    """Returns build(src, name, *flags) -> path of a Go binary built from a
    single-file program under the repository."""
    out = tmp_path_factory.mktemp("gobin")
    env = dict(os.environ, GOCACHE=os.path.join(ROOT, "build", "gocache"),
               GOPATH=os.path.join(ROOT, "build", "gopath"), GO111MODULE="off",
               CGO_ENABLED="0")
    cache = {}

    def build(src, name, *flags, goarch=None, cgo=False):
        key = (src, name, flags, goarch, cgo)
        if key in cache:
            return cache[key]
        path = str(out / name)
        e = dict(env)
        if goarch:
            e["GOARCH"] = goarch
        if cgo:
            e["CGO_ENABLED"] = "1"
        # A directory (a package with assembly) is built by relative path.
        target = "./" + src if os.path.isdir(os.path.join(ROOT, src)) \
            else os.path.join(ROOT, src)
        subprocess.run(["go", "build", "-o", path, *flags, target],
                       check=True, env=e, cwd=ROOT)
        cache[key] = path
        return path

    return build


@pytest.fixture
def functions(gobuild):
    return gobuild("examples/functions/main.go", "functions")


@pytest.fixture
def loop_bin(gobuild):
    return gobuild("tests/fixtures/loop/main.go", "loop")


def record(args, cwd=None, timeout=120, check=True):
    """Runs gotrace-record with args; returns the CompletedProcess."""
    p = subprocess.run([RECORD, *args], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("gotrace-record %s failed (%d):\n%s\n%s"
                             % (args, p.returncode, p.stdout, p.stderr))
    return p


def report(args, check=True):
    """Runs gotrace-report with args; returns the CompletedProcess."""
    p = subprocess.run([REPORT, *args], capture_output=True, text=True,
                       timeout=120, errors="replace")
    if check and p.returncode != 0:
        raise AssertionError("gotrace-report %s failed (%d):\n%s\n%s"
                             % (args, p.returncode, p.stdout, p.stderr))
    return p


class Proc:
    """A process this test started; stopped by PID on exit."""

    def __init__(self, argv, **kw):
        self.p = subprocess.Popen(argv, **kw)
        self.pid = self.p.pid

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode


@pytest.fixture
def procs():
    started = []

    def start(argv, **kw):
        pr = Proc(argv, **kw)
        started.append(pr)
        return pr

    yield start
    for pr in reversed(started):
        pr.stop(signal.SIGKILL)


def wait_for(cond, timeout=20.0, step=0.05):
    """Polls cond() until it is true; returns its last value."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() > end:
            return v
        time.sleep(step)


class Caddy:
    """Debian's caddy (stripped Go) serving `body` on a loopback port."""

    def __init__(self, proc, port):
        self.proc, self.pid, self.port = proc, proc.pid, port

    def get(self, path="/", close=False):
        """The body at `path`, or None while the server is not up."""
        import urllib.request
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path),
                                     headers={"Connection": "close"} if close else {})
        try:
            return urllib.request.urlopen(req, timeout=5).read()
        except OSError:
            return None


@pytest.fixture
def caddy(tmp_path, procs):
    """Starts caddy on 127.0.0.1 (admin API off) answering "hello from
    caddy"; stopped by PID at the end of the test."""
    import socket
    exe = shutil.which("caddy")
    assert exe, "caddy is installed by make deps"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = tmp_path / "Caddyfile"
    cfg.write_text("{\n\tadmin off\n\tauto_https off\n}\nhttp://127.0.0.1:%d {\n"
                   "\trespond \"hello from caddy\"\n}\n" % port)
    env = dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path))
    proc = procs([exe, "run", "--config", str(cfg), "--adapter", "caddyfile"],
                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = Caddy(proc, port)
    assert wait_for(c.get) == b"hello from caddy"
    return c
