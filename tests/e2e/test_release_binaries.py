"""gotrace on real stripped release programs built by many Go versions:
esbuild's Linux x86-64 binaries from the npm registry, Go 1.16 to 1.26
(fetched by tests/fetch_release_bins.sh into build/release-bins, once).

For each binary: the function table `gotrace-record --list` reads is the
one an independent parser (pclntab.py) reads, name, entry, end and file
offset of every function; and esbuild bundling a few modules under entry
and return probes of its parser, which runs one goroutine per file, gives
events whose goroutine ids are set and consistent (every call paired, calls
nested per goroutine), while its output and exit status stay those of an
untraced run."""
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, TOOLCHAINS, _need, record, report
from pclntab import MAGIC_GO116, MAGIC_GO118, MAGIC_GO120, Pclntab

CACHE = os.path.join(ROOT, "build", "release-bins")
FETCH = os.path.join(ROOT, "tests", "fetch_release_bins.sh")
# Reads .go.buildinfo (`go version FILE`): the machine's Go of the matrix.
GO = [t for t in TOOLCHAINS if t.name == "go1.26"][0]


class Release:
    def __init__(self, esbuild, go, buildinfo, magic, text_from, sha256):
        self.esbuild, self.go, self.buildinfo = esbuild, go, buildinfo
        self.magic, self.text_from, self.sha256 = magic, text_from, sha256


# esbuild version -> the Go that built it (from .go.buildinfo when the
# release has one, else from the runtime's version string), whether the
# release kept .go.buildinfo, its pclntab magic, where function entries
# count from (None: absolute entries, Go 1.16-1.17; "pcHeader": textStart;
# ".go.module": moduledata.text, Go 1.26), and the sha256 of the binary.
RELEASES = [
    Release("0.8.57", "go1.16", True, MAGIC_GO116, None,
            "c113262e26944f88d64ab35488983fc64d3215b8a7a4a39f4e5e55918250ed4c"),
    Release("0.13.15", "go1.17.2", True, MAGIC_GO116, None,
            "593df79f645e8c303491a3124a0d998c9c3e4dbef7eee5f9cc112cac46fe3d0a"),
    Release("0.14.54", "go1.19", True, MAGIC_GO118, "pcHeader",
            "d83565c6c08a43b1b20c1d1858aecdc2b16c6b24033d5961793de16fbf108f0f"),
    Release("0.18.20", "go1.20.7", True, MAGIC_GO120, "pcHeader",
            "82afa0d18098bef823ba5b5c89bb5cfbea1a25f0721416d29a9dd7ba73fd237d"),
    Release("0.25.0", "go1.23.5", True, MAGIC_GO120, "pcHeader",
            "98f635ee88526a7d9dd7a82c8a79f341c0247de8aa56d38158c0963892957829"),
    Release("0.27.7", "go1.25.7", False, MAGIC_GO120, "pcHeader",
            "c638273fcf95573ca74af586677800b4dd874c55f8f945adb54316d6902ba14b"),
    Release("0.28.2", "go1.26.5", False, MAGIC_GO120, ".go.module",
            "e1698a3d5c6c0798fee4fd3b5cc816651f460c63d390a7a26ea4beb0b1884100"),
]
IDS = ["esbuild-" + r.esbuild for r in RELEASES]

# Functions of esbuild's parser (same names in every release above): the
# bundler parses each file on a goroutine of its own (js_parser.Parse), and
# parsing calls parseStmt (recursively) and the lexer's Next many times.
PKG = "github.com/evanw/esbuild/internal/"
PARSE = PKG + "js_parser.Parse"
PARSE_STMT = PKG + "js_parser.(*parser).parseStmt"
NEXT = PKG + "js_lexer.(*Lexer).Next"
TRACED = [PARSE, PARSE_STMT, NEXT]


@pytest.fixture(scope="session")
def release_bins():
    """{esbuild version: path of its binary}, fetched from the npm registry
    on the first run and cached under build/release-bins."""
    _need(shutil.which("npm") is not None,
          "npm is needed to fetch esbuild's release binaries")
    p = subprocess.run([FETCH, CACHE, *[r.esbuild for r in RELEASES]],
                       capture_output=True, text=True, timeout=600)
    _need(p.returncode == 0, "fetching esbuild from the npm registry failed:\n"
          + p.stdout + p.stderr)
    return {r.esbuild: os.path.join(CACHE, r.esbuild, "esbuild")
            for r in RELEASES}


@pytest.fixture(params=RELEASES, ids=IDS)
def release(request, release_bins):
    r = request.param
    r.path = release_bins[r.esbuild]
    return r


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def runtime_version(path):
    """The runtime's version string (runtime.buildVersion) of a binary
    without .go.buildinfo: the one "go1.N[.M]" standing alone in it. (Older
    linkers pack short strings together, "globalgo1.16gopher", so this is
    for the newer releases of the table only.)"""
    with open(path, "rb") as f:
        found = set(re.findall(rb"(?<![\w.])go1\.\d+(?:\.\d+)?(?![\w.])", f.read()))
    assert len(found) == 1, "%s: Go version strings %s" % (path, found)
    return found.pop().decode()


def test_release_is_the_one_described(release):
    """The binary is the pinned release, built by the Go of the table."""
    assert sha256(release.path) == release.sha256
    _need(GO.check() is None, GO.check() or "")
    p = subprocess.run([GO.go, "version", release.path], capture_output=True,
                       text=True, env=GO.environ())
    if release.buildinfo:
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == "%s: %s" % (release.path, release.go)
        with open(release.path, "rb") as f:
            assert release.go.encode() in f.read()
    else:
        assert "could not read Go build info" in p.stdout + p.stderr
        assert runtime_version(release.path) == release.go
    tab = Pclntab(release.path)
    assert (tab.magic, tab.text_from) == (release.magic, release.text_from)


def listing(path, glob="*"):
    p = record(["--list", path, glob, "--json"])
    return json.loads(p.stdout)


def test_list_agrees_with_an_independent_pclntab_parse(release):
    """Every function: name, entry, end and file offset (where the uprobe
    goes) as gotrace-record --list reads them, against pclntab.py."""
    tab = Pclntab(release.path)
    mine = tab.functions()
    d = listing(release.path)
    assert d["binary"]["stripped"] is True and d["binary"]["dwarf"] is False
    assert d["matched"] == d["binary"]["functions"] == len(d["functions"]) == tab.nfunc
    theirs = {}
    for f in d["functions"]:
        assert f["entry"] not in theirs, f
        theirs[f["entry"]] = (f["name"], f["end"], f["file_offset"])
    assert len(mine) > 5000
    only_mine = sorted(set(mine.items()) - set(theirs.items()))
    only_theirs = sorted(set(theirs.items()) - set(mine.items()))
    assert not only_mine and not only_theirs, (only_mine[:5], only_theirs[:5])
    for name in TRACED:
        assert [f["name"] for f in listing(release.path, name)["functions"]] == [name]


def test_list_names_the_go_version(release):
    """gotrace-record knows which Go built the binary: from .go.buildinfo,
    or, where the release dropped it, from the runtime's version string.
    The goroutine id's offset in runtime.g depends on it."""
    b = listing(release.path, NEXT)["binary"]
    assert b["go_version"] == release.go
    assert b["go_version_source"] == ("buildinfo" if release.buildinfo
                                      else "runtime.buildVersion")


# goid's offset in runtime.g by Go version (src/runtime/runtime2.go; what
# record/gofacts.c holds), checked independently of it.
GOID_OFFSET = {16: 152, 17: 152, 19: 152, 20: 152, 23: 160, 25: 152, 26: 152}


def test_goid_offset_from_the_table_and_from_the_runtimes_code(release):
    """Stripped: the goid offset comes from the table of Go versions, and
    the one read off runtime.goroutineheader's code agrees, so that a Go
    release newer than the table still gets goroutine ids."""
    g = listing(release.path, NEXT)["binary"]["goid"]
    want = GOID_OFFSET[int(release.go.split(".")[1])]
    assert g == {"offset": want, "source": "table", "derived": want}


MODULES = 6


def write_sources(d):
    """entry.js and MODULES modules importing each other in a chain."""
    for i in range(1, MODULES + 1):
        nxt = i + 1 if i < MODULES else None
        src = ""
        if nxt:
            src += "import { f%d } from './m%d.js';\n" % (nxt, nxt)
        src += (
            "export function f%(i)d(x) {\n"
            "  const xs = [1, 2, 3].map((v) => v * %(i)d + x);\n"
            "  let s = 0;\n"
            "  for (const v of xs) { if (v %% 2) { s += v; } else { s -= v; } }\n"
            "  switch (s & 3) { case 0: s++; break; default: s--; }\n"
            "  return %(call)s + s + 'm%(i)d'.length;\n"
            "}\n"
            "export class C%(i)d { constructor(a) { this.a = a; } get b() { return this.a * %(i)d; } }\n"
            "export const k%(i)d = { a: %(i)d, b: `text ${%(i)d}`, c: [(x) => x + %(i)d] };\n"
            % {"i": i, "call": "f%d(x)" % nxt if nxt else "x"})
        (d / ("m%d.js" % i)).write_text(src)
    (d / "entry.js").write_text(
        "import { f1, k1 } from './m1.js';\n"
        "import { C2 } from './m2.js';\n"
        "import { k3 } from './m3.js';\n"
        "import { k5 } from './m5.js';\n"
        "console.log(f1(1), k1.b, k3.a, k5.c[0](2), new C2(4).b);\n")
    (d / "bad.js").write_text("import { f1 } from './m1.js';\nlet = = f1(;\n")


def run_esbuild(exe, src, outfile, entry="entry.js"):
    return subprocess.run([exe, entry, "--bundle", "--outfile=" + outfile],
                          cwd=src, capture_output=True, text=True, timeout=60)


def traced(exe, src, trace, outfile, entry="entry.js", env=None):
    probes = [k + f for f in TRACED for k in ("p:", "r:")]
    return record(["-q", "-o", trace, *probes, "--", exe, entry, "--bundle",
                   "--outfile=" + outfile], cwd=src, check=False, env=env)


def jsonl(trace, *args):
    p = report(["--format", "jsonl", *args, trace])
    return [json.loads(l) for l in p.stdout.splitlines()], p.stderr


@pytest.mark.parametrize("goid_from", ["offset", "g"])
def test_bundling_traced_by_goroutine(release, tmp_path, goid_from):
    """With goid's offset known (table), and as for a Go release where no
    source knows it (GOTRACE_NO_GOID_OFFSET): then each goroutine's g
    address stands for it, and calls still pair by goroutine."""
    env = {"GOTRACE_NO_GOID_OFFSET": "1"} if goid_from == "g" else None
    src = tmp_path / "src"
    src.mkdir()
    write_sources(src)

    # The program does what it does untraced: same bundle, same status.
    plain = run_esbuild(release.path, src, "plain.js")
    assert plain.returncode == 0, plain.stderr
    trace = str(tmp_path / "t.gtr")
    p = traced(release.path, src, trace, "traced.js", env=env)
    assert p.returncode == 0, p.stderr
    assert (src / "traced.js").read_bytes() == (src / "plain.js").read_bytes()
    bad_plain = run_esbuild(release.path, src, "bad-plain.js", "bad.js")
    bad = traced(release.path, src, str(tmp_path / "bad.gtr"), "bad-traced.js", "bad.js",
                 env=env)
    assert bad_plain.returncode == bad.returncode == 1
    assert "error" in bad_plain.stderr.lower() and bad_plain.stderr in bad.stderr
    assert not (src / "bad-plain.js").exists() and not (src / "bad-traced.js").exists()

    evs, _ = jsonl(trace)
    n_by_func = collections.Counter((e["func"], e["kind"]) for e in evs)
    assert set(n_by_func) == {(f, k) for f in TRACED for k in ("entry", "return")}
    assert n_by_func[(NEXT, "entry")] > 1000

    # Goroutine ids: set on every event, and each file is parsed on a
    # goroutine of its own.
    zero = [e for e in evs if e["goid"] == 0]
    assert not zero, "%d of %d events without goroutine id, first: %s" % (
        len(zero), len(evs), zero[0])
    parse_goids = [e["goid"] for e in evs if e["func"] == PARSE and e["kind"] == "entry"]
    assert len(parse_goids) >= MODULES + 1   # entry.js, the modules (and esbuild's runtime)
    if goid_from == "offset":
        assert len(set(parse_goids)) == len(parse_goids), parse_goids
    else:
        # a g is reused by a later goroutine once its own has ended
        assert len(set(parse_goids)) > 1, parse_goids
    goids = {e["goid"] for e in evs}
    for f in (PARSE_STMT, NEXT):
        assert len({e["goid"] for e in evs if e["func"] == f}) >= \
            (MODULES + 1 if goid_from == "offset" else 2)

    # Per goroutine, in time order, calls nest: each return closes the
    # innermost open call, which is of its function, and none stays open.
    by_goid = collections.defaultdict(list)
    for e in sorted(evs, key=lambda e: e["ts_ns"]):
        by_goid[e["goid"]].append(e)
    pairs = 0
    for goid, es in by_goid.items():
        stack = []
        for e in es:
            if e["kind"] == "entry":
                stack.append(e["func"])
            else:
                assert stack and stack[-1] == e["func"], (goid, stack[-3:], e)
                stack.pop()
                pairs += 1
        assert stack == [], (goid, stack)
    assert pairs * 2 == len(evs)

    # gotrace-report pairs every call by goroutine too.
    calls, err = jsonl(trace, "--calls")
    assert collections.Counter(c["status"] for c in calls) == {"returned": pairs}
    assert "unpaired" not in err and "without entry" not in err, err
    assert {c["goid"] for c in calls} == goids
    b = json.loads(report(["info", "--json", trace]).stdout)["binaries"][0]
    if goid_from == "g":
        assert (b["goid_offset"], b["goid_source"]) == (None, "g")
        assert min(goids) > 1 << 16          # addresses, not Go's small ids
    else:
        assert (b["goid_offset"], b["goid_source"]) == (
            GOID_OFFSET[int(release.go.split(".")[1])], "table")
