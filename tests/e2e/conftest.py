"""Shared set-up of gotrace's end-to-end tests: built tools, Go fixtures,
and helpers that run gotrace-record / gotrace-report and clean up after
themselves (processes are stopped by PID, never by name).

Only tests that record need root, BPF and BTF: they ask for the
`needs_bpf` fixture (the Go toolchain, caddy and every fixture built on
them do), and record() checks again. The others (reports of files written
by libgtr's writer, readers, usage errors) run anywhere, as any user.

Environment:
  GOTRACE_BIN_DIR   where gotrace-record and gotrace-report are (default:
                    the repository's root; `make asan` points it at the
                    ASan build)
  GOTRACE_OBJ_DIR   the build directory whose libgtr.a the C helpers of
                    the tests link (default: build/)
  GOTRACE_CFLAGS    extra flags for building those helpers (`make asan`
                    gives the sanitizers its objects were built with)
"""
import os
import pty
import shutil
import signal
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN_DIR = os.path.abspath(os.environ.get("GOTRACE_BIN_DIR") or ROOT)
RECORD = os.path.join(BIN_DIR, "gotrace-record")
REPORT = os.path.join(BIN_DIR, "gotrace-report")
OBJ_DIR = os.path.abspath(os.environ.get("GOTRACE_OBJ_DIR") or os.path.join(ROOT, "build"))
HELPER_CFLAGS = os.environ.get("GOTRACE_CFLAGS", "").split()
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
def tools_built():
    _need(os.path.exists(RECORD) and os.path.exists(REPORT),
          "gotrace-record/gotrace-report not built in %s (run make)" % BIN_DIR)


def require_bpf():
    """Skips (fails in CI) unless BPF programs can be loaded and uprobes
    attached here: root and a kernel with BTF."""
    _need(os.geteuid() == 0, "needs root to load BPF programs and attach uprobes")
    _need(os.path.exists("/sys/kernel/btf/vmlinux"), "kernel without BTF")


@pytest.fixture(scope="session")
def needs_bpf():
    """For tests that record: root, BTF (see require_bpf)."""
    require_bpf()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "bpf: needs root and BPF (set on every test that uses needs_bpf)")


def pytest_collection_modifyitems(config, items):
    """Marks the tests that need BPF, so that `-m "not bpf"` selects the
    ones that run anywhere."""
    for item in items:
        if "needs_bpf" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.bpf)


def build_with_libgtr(out, *srcs, opt="-O1"):
    """Builds the C program `out` from srcs (paths under the repository or
    absolute) against libgtr (build/libgtr.a: format/ and the lib/ it
    stands on), with GOTRACE_CFLAGS; returns its path."""
    lib = os.path.join(OBJ_DIR, "libgtr.a")
    _need(os.path.exists(lib), "%s is not built (run make)" % lib)
    subprocess.run(["gcc", opt, *HELPER_CFLAGS, "-std=gnu11", "-D_GNU_SOURCE",
                    "-I" + os.path.join(ROOT, "format"), "-I" + os.path.join(ROOT, "lib"),
                    "-o", str(out), *[os.path.join(ROOT, s) for s in srcs], lib,
                    "-lcbor", "-lzstd", "-lsodium", "-pthread"], check=True)
    return str(out)


class Toolchain:
    """One Go toolchain of the test matrix (tests/toolchains), named by the
    version it must report: its go command is an absolute path and its
    environment pins the version (GOTOOLCHAIN), so PATH never decides which
    Go builds. gccgo's version is "gccgoN" (GCC's major release N): then
    `gccgo` is true and `minor` is the Go release its libgo implements."""

    # GCC major release -> minor of the Go release of its libgo
    # (libgo/VERSION of the GCC tree: GCC 12 "go1.18")
    GCCGO_GO_MINOR = {12: 18}
    # gccgo's go tool builds with -O2 -g; GCC then clones a //go:noinline
    # function with its constant arguments folded in (main.add.constprop.0,
    # main.greet.isra.0: other parameters), drops a call whose result is
    # unused or known (pure-const, modref, reference), or inlines it into
    # a hot loop all the same, which gc never does: the fixtures' calls
    # are kept as written (GCC's noipa, and no inlining), the rest of -O2
    # stays
    GCCGO_FLAGS = ("-gccgoflags=-fno-ipa-cp -fno-ipa-sra -fno-ipa-pure-const"
                   " -fno-ipa-icf -fno-ipa-modref -fno-ipa-reference -fno-inline")

    def __init__(self, name, version, argv):
        self.name, self.version = name, version
        self.gccgo = version.startswith("gccgo")
        if self.gccgo:
            self.minor = self.GCCGO_GO_MINOR.get(int(version[len("gccgo"):]), 0)
        else:
            self.minor = int(version.split(".")[1])
        self.env = {}
        while argv and argv[0] in ("env",) or argv and "=" in argv[0]:
            if argv[0] != "env":
                k, _, v = argv[0].partition("=")
                self.env[k] = v
            argv = argv[1:]
        self.go = argv[0]

    def gccgo_flags(self, flags):
        """gc's build flags as gccgo's go tool takes them: GCCGO_FLAGS,
        -ldflags=-s -w as gccgo's -s (strip), -ldflags=-w (no DWARF) as
        -g0, -gcflags=-l as -fno-inline; -buildmode=pie as it is (gccgo
        links PIE anyway)."""
        extra, out = [], []
        for f in flags:
            if f == "-ldflags=-s -w":
                extra.append("-s")
            elif f == "-ldflags=-w":
                extra.append("-g0")
            elif f == "-gcflags=-l":
                extra.append("-fno-inline")
            elif f.startswith(("-gcflags", "-ldflags")):
                raise ValueError("%s: no gccgo equivalent of %s" % (self.name, f))
            else:
                out.append(f)
        return (" ".join([self.GCCGO_FLAGS, *extra]), *out)

    def fname(self, name):
        """The name this toolchain gives Go function `name`, as gotrace's
        reports show it: gccgo's mangling (GCC 12 names.cc) writes '/' and
        '.' of the package path as _1 and _0, '_' as __, a method's
        receiver without its pointer ("main.(*T).M" is main.T.M) and a
        closure after two dots ("main.main.func1": main.main..func1)."""
        if not self.gccgo:
            return name
        import re
        pkg, _, rest = name.rpartition("/")
        rest_pkg, _, ident = rest.partition(".")
        pkg = (pkg + "/" if pkg else "") + rest_pkg
        pkg = pkg.replace("_", "__").replace("/", "_1").replace(".", "_0")
        ident = re.sub(r"[(*)]", "", ident).replace("_", "__")
        return pkg + "." + re.sub(r"(?<=[^.])\.func(?=\d)", "..func", ident)

    def environ(self, **extra):
        e = dict(os.environ, GOCACHE=os.path.join(ROOT, "build", "gocache"),
                 GOPATH=os.path.join(ROOT, "build", "gopath"),
                 CGO_ENABLED="0", **self.env)
        e.pop("GOROOT", None)
        e.update(extra)
        return e

    def run(self, *args, **kw):
        """Runs `go ARGS` of this toolchain; returns its stdout lines."""
        p = subprocess.run([self.go, *args], capture_output=True, text=True,
                           check=True, env=self.environ(**kw), cwd=ROOT)
        return p.stdout.splitlines()

    def check(self):
        """Why this toolchain cannot be used here, or None."""
        if not os.path.exists(self.go):
            return "%s: %s is missing (make deps)" % (self.name, self.go)
        try:
            got = self.run("env", "GOVERSION")[0].strip()
            if self.gccgo:  # its go tool says "unknown": ask the compiler
                cc = self.run("env", "GCCGO")[0].strip()
                got = "gccgo" + subprocess.run(
                    [cc, "-dumpversion"], capture_output=True, text=True,
                    check=True).stdout.strip()
        except (subprocess.CalledProcessError, IndexError, OSError) as e:
            return "%s: `go env GOVERSION` (or GCCGO's -dumpversion) failed: %s" % (
                self.name, getattr(e, "stderr", e))
        if got != self.version and not got.startswith(self.version + "."):
            return "%s: %s reports %s" % (self.name, self.go, got)
        return None


def _toolchains():
    out = []
    with open(os.path.join(ROOT, "tests", "toolchains")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, version, cmd = line.rstrip("\n").split("\t")
                out.append(Toolchain(name, version, cmd.split()))
    return out


# GOTRACE_TOOLCHAINS=go1.26,go1.19 narrows the matrix for a quick local
# run; with CI=true all of them must be there.
TOOLCHAINS = _toolchains()
_WANTED = [t for t in TOOLCHAINS
           if not os.environ.get("GOTRACE_TOOLCHAINS") or IN_CI
           or t.name in os.environ["GOTRACE_TOOLCHAINS"].split(",")]


@pytest.fixture(scope="session", params=_WANTED, ids=[t.name for t in _WANTED])
def toolchain(request, needs_bpf):
    """The Go toolchain a test builds with; every test that builds a Go
    program runs once per toolchain of the matrix (to trace it: so it
    needs BPF)."""
    t = request.param
    why = t.check()
    _need(why is None, why or "")
    return t


def goid_note(toolchain, exe):
    """What gotrace-record says first of a gccgo program it plans probes
    in ("" for gc): its goroutine ids are not read."""
    return ("gotrace-record: %s: a gccgo program: goroutine ids are not read "
            "(libgo keeps them behind thread-local storage of libgo.so); events "
            "get goid 0 and calls are paired by thread\n" % exe) if toolchain.gccgo else ""


def attached(stream):
    """Reads the lines gotrace-record writes on `stream` (text or bytes)
    until the one saying it attached its probes, and returns it: a gccgo
    program's note about goroutine ids comes first."""
    for _ in range(4):
        line = stream.readline()
        line = line.decode() if isinstance(line, bytes) else line
        if "attached" in line or "goroutine ids are not read" not in line:
            return line
    return line


def build_fails(toolchain, src, goarch=None):
    """Builds the Go program src (a file or package directory under the
    repository) with `toolchain`, which must fail: for what gccgo's go tool
    cannot build (Go assembly, type parameters, another architecture
    without its cross compiler). Returns the build's stderr."""
    full = os.path.join(ROOT, src)
    cwd, target = (full, ".") if os.path.isdir(full) else \
        (os.path.dirname(full), os.path.basename(full))
    extra = {"GOARCH": goarch} if goarch else {}
    p = subprocess.run([toolchain.go, "build", "-o", os.devnull, target],
                       capture_output=True, text=True, cwd=cwd,
                       env=toolchain.environ(**extra))
    assert p.returncode != 0, "%s built %s" % (toolchain.name, src)
    return p.stderr


# Fixtures that are packages (a directory with assembly) build inside this
# module; single files build on their own.
FIXTURE_MODULE = os.path.join(ROOT, "tests", "fixtures")


@pytest.fixture(scope="session")
def gobuild(toolchain, tmp_path_factory):
    """Returns build(src, name, *flags) -> path of a Go binary built by
    `toolchain` from a single-file program (or a package directory) under
    the repository."""
    out = tmp_path_factory.mktemp("gobin-" + toolchain.name)
    cache = {}

    def build(src, name, *flags, goarch=None, cgo=False):
        key = (src, name, flags, goarch, cgo)
        if key in cache:
            return cache[key]
        path = str(out / name)
        extra = {}
        if goarch:
            extra["GOARCH"] = goarch
        if cgo:
            extra["CGO_ENABLED"] = "1"
        full = os.path.join(ROOT, src)
        if os.path.isdir(full):
            cwd, target = full, "."
        else:
            cwd, target = os.path.dirname(full), os.path.basename(full)
        if toolchain.gccgo:
            flags = toolchain.gccgo_flags(flags)
        subprocess.run([toolchain.go, "build", "-o", path, *flags, target],
                       check=True, env=toolchain.environ(**extra), cwd=cwd)
        cache[key] = path
        return path

    return build


@pytest.fixture
def functions(gobuild):
    return gobuild("examples/functions/main.go", "functions")


@pytest.fixture
def loop_bin(gobuild):
    return gobuild("tests/fixtures/loop/main.go", "loop")


def record(args, cwd=None, timeout=120, check=True, env=None):
    """Runs gotrace-record with args (and `env` added to the
    environment); returns the CompletedProcess."""
    require_bpf()
    p = subprocess.run([RECORD, *args], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout,
                       env=dict(os.environ, **env) if env else None)
    if check and p.returncode != 0:
        raise AssertionError("gotrace-record %s failed (%d):\n%s\n%s"
                             % (args, p.returncode, p.stdout, p.stderr))
    return p


def source_line(src, marker):
    """The number of the first line of `src` (a path under the
    repository) that holds `marker`."""
    with open(os.path.join(ROOT, src)) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    raise AssertionError("%s: no line holds %r" % (src, marker))


def report(args, check=True):
    """Runs gotrace-report with args; returns the CompletedProcess."""
    p = subprocess.run([REPORT, *args], capture_output=True, text=True,
                       timeout=120, errors="replace")
    if check and p.returncode != 0:
        raise AssertionError("gotrace-report %s failed (%d):\n%s\n%s"
                             % (args, p.returncode, p.stdout, p.stderr))
    return p


def on_terminal(argv, stdin=None):
    """Runs argv with its standard output on a pseudo-terminal (stderr
    captured as text, stdin as given); returns the CompletedProcess."""
    master, slave = pty.openpty()
    try:
        return subprocess.run(argv, stdin=stdin, stdout=slave, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(slave)
        os.close(master)


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
def caddy(tmp_path, procs, needs_bpf):
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
