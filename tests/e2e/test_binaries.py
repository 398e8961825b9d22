"""`gotrace-record --list BINARY [GLOB] [--json] [--debuginfo FILE]` on Go
fixtures (register ABI, stripped, PIE, separate debug file) and on Debian's
own stripped Go programs (age: PIE with cgo; caddy), checked against what
Go's own tools say (`go version -m`, `go tool nm`)."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT, TOOLCHAINS, _need, build_fails, record

GOBIN_SRC = ("tests/fixtures/gobin/args.go",)
# Reads binaries of the Debian packages (built by Go 1.19) with Go's tools.
DEBIAN_GO = TOOLCHAINS[0]


def go_version_m(path, tc):
    """`go version -m` of toolchain tc: version, main path and build
    settings."""
    lines = tc.run("version", "-m", path)
    info = {"version": lines[0].split(": ", 1)[1].strip(), "path": "", "build": {}}
    for line in lines[1:]:
        f = line.strip("\n").split("\t")
        if len(f) >= 3 and f[1] == "path":
            info["path"] = f[2]
        elif len(f) >= 3 and f[1] == "build":
            k, _, v = f[2].partition("=")
            info["build"][k] = v.strip('"')
    return info


def nm_main(path, tc):
    """Text symbols of package main as `go tool nm` of toolchain tc lists
    them (binutils' nm for gccgo, whose go tool has no nm), by name."""
    out = {}
    lines = subprocess.run(["nm", path], capture_output=True, text=True,
                           check=True).stdout.splitlines() if tc.gccgo \
        else tc.run("tool", "nm", path)
    for line in lines:
        f = line.split()
        if len(f) == 3 and f[1] in "Tt" and f[2].startswith("main.") \
                and "[go.shape." not in f[2]:
            out[f[2]] = int(f[0], 16)
    return out


def listing(*args, check=True):
    return record(["--list", *args], check=check)


def listing_json(*args):
    p = listing(*args, "--json")
    doc = json.loads(p.stdout)
    return doc, {f["name"]: f for f in doc["functions"]}


# what --list prints of examples/functions: gc's register ABI, and gccgo's
# C calling convention (RDI, RSI, RDX...) with gccgo's names
LIST_TEXT = {
    False: ["compiler     gc go",
            "arch         x86-64, ABIInternal calling convention",
            "\nmain.greet(s string, n int) int\n    ABIInternal at 0x",
            "    goarg1   s            string               RAX,RBX\n",
            "    goarg2   n            int                  RCX\n",
            "\nmain.(*T).M(t *main.T, k int8, ok bool) int\n"],
    True: ["compiler     gccgo -",
           "arch         x86-64, C calling convention",
           "\nmain.greet(s string, n int) int\n    C at 0x",
           "    goarg1   s            string               RDI,RSI\n",
           "    goarg2   n            int                  RDX\n",
           "\nmain.T.M(t *T, k int8, ok bool) int\n"],
}


def test_list_text_example(functions, toolchain):
    out = listing(functions, "main.*").stdout
    for want in LIST_TEXT[toolchain.gccgo]:
        assert want in out
    assert "runtime.main" not in out


def test_list_json_example(functions, toolchain):
    doc, fn = listing_json(functions, "main.*")
    b = doc["binary"]
    if toolchain.gccgo:
        # a gccgo program records no Go version or build settings
        assert (b["compiler"], b["abi"], b["go_version"], b["build_settings"]) == \
            ("gccgo", "C", "", {})
        assert b["goid"] == {"offset": None, "source": "", "derived": None}
    else:
        assert b["compiler"] == "gc" and b["abi"] == "ABIInternal"
        assert b["go_version"] == go_version_m(functions, toolchain)["version"]
        assert b["build_settings"]["GOARCH"] == "amd64"
    assert b["arch"] == "x86-64" and b["dwarf"] is True
    assert doc["matched"] == len(doc["functions"]) > 4
    add = fn["main.add"]
    assert add["signature"] == "main.add(x int, y int) int"
    assert [p["locations"] for p in add["params"]] == \
        ([["RDI"], ["RSI"]] if toolchain.gccgo else [["RAX"], ["RBX"]])
    assert all(p["capture"] for p in add["params"])
    assert [r["locations"] for r in add["results"]] == [["RAX"]]
    # entries are those of the symbol table
    nm = nm_main(functions, toolchain)
    for name, f in fn.items():
        assert f["entry"] == nm[name], name


def test_list_stripped_pie_matches_nm(gobuild, toolchain):
    full = gobuild(GOBIN_SRC[0], "args_piefull", "-buildmode=pie")
    stripped = gobuild(GOBIN_SRC[0], "args_piestripped", "-buildmode=pie",
                       "-ldflags=-s -w")
    doc, fn = listing_json(stripped, "main.*")
    b = doc["binary"]
    assert b["pie"] is True and b["stripped"] is True and b["dwarf"] is False
    if toolchain.gccgo:
        # no .gopclntab: the dynamic symbols are all there is, and --list
        # says so
        assert set(fn) == {"main.main"}
        assert fn["main.main"]["entry"] == nm_main(full, toolchain)["main.main"]
        assert b["note"] == ("a stripped gccgo program: only its dynamic "
                             "symbols are functions here (gccgo writes no "
                             ".gopclntab); build it without -s to probe the others")
        assert "note         " + b["note"] in listing(stripped, "main.*").stdout
        return
    assert b["go_version"] == go_version_m(stripped, toolchain)["version"]
    nm = nm_main(full, toolchain)
    assert set(fn) == set(nm)
    for name, f in fn.items():
        assert f["signature"] is None and f["params"] is None
        assert f["abi"] == "ABIInternal"
        assert f["size"] > 0
    # -s -w moves nothing in the text: same entries as the full build
    assert {n: f["entry"] for n, f in fn.items()} == nm


def test_list_debuginfo(gobuild, toolchain, tmp_path):
    _need(shutil.which("objcopy") is not None, "objcopy missing (binutils)")
    full = gobuild(GOBIN_SRC[0], "args_fordebug")
    dbg, bare = str(tmp_path / "args.debug"), str(tmp_path / "args_bare")
    subprocess.run(["objcopy", "--only-keep-debug", full, dbg], check=True)
    subprocess.run(["objcopy", "--strip-debug", full, bare], check=True)
    doc, fn = listing_json(bare, "main.spillstr")
    assert doc["binary"]["dwarf"] is False
    assert fn["main.spillstr"]["signature"] is None
    doc, fn = listing_json(bare, "main.spillstr", "--debuginfo", dbg)
    assert doc["binary"]["debuginfo"] == dbg
    s = fn["main.spillstr"]
    assert s["signature"].startswith("main.spillstr(a int, b int,")
    assert s["params"][8]["name"] == "s"
    if toolchain.gccgo:
        # the C ABI: six registers, then the stack from SP+8
        assert s["params"][8]["locations"] == ["SP+24", "SP+32"]
        assert s["params"][9]["locations"] == ["SP+40"]
        return  # (no gccgo of another architecture to build a debug file)
    assert s["params"][8]["locations"] == ["SP+8", "SP+16"]
    assert s["params"][9]["locations"] == ["R11"]
    # a debug file of another architecture is refused with a reason
    other = gobuild(GOBIN_SRC[0], "args_386dbg", goarch="386")
    p = listing(bare, "--debuginfo", other, check=False)
    assert p.returncode == 1
    assert other in p.stderr and "another architecture" in p.stderr


def test_list_arm64_cross_build(gobuild, toolchain):
    arm = gobuild(GOBIN_SRC[0], "args_arm64", goarch="arm64")
    if toolchain.gccgo:
        # no arm64 gccgo in the matrix: its go tool builds for the host
        # whatever GOARCH says, and gotrace reads the architecture from the
        # ELF header, not from the build's request
        doc, fn = listing_json(arm, "main.wide")
        assert (doc["binary"]["arch"], doc["binary"]["abi"]) == ("x86-64", "C")
        assert fn["main.wide"]["params"][0]["locations"] == ["RDI"]
        return
    doc, fn = listing_json(arm, "main.wide")
    assert doc["binary"]["arch"] == "aarch64"
    assert doc["binary"]["abi"] == "ABIInternal"
    p = fn["main.wide"]["params"]
    assert [x["locations"] for x in p[:2]] == [["R0"], ["R1"]]
    assert p[15]["locations"] == ["SP+8", "SP+16"]      # s: out of registers
    assert p[16]["locations"] == ["R15"]                # x: still a register
    assert p[17]["locations"] == ["F0"] and not p[17]["capture"]


@pytest.mark.parametrize("path,func", [
    ("/usr/bin/age", "main.main"),
    ("/usr/bin/caddy", "net/http.(*conn).serve"),
])
def test_list_debian_stripped_programs(path, func, needs_bpf):
    _need(os.path.exists(path), path + " not installed (make deps installs it)")
    want = go_version_m(path, DEBIAN_GO)
    doc, fn = listing_json(path, func)
    b = doc["binary"]
    assert b["stripped"] is True and b["dwarf"] is False
    assert b["go_version"] == want["version"]
    assert b["main_path"] == want["path"]
    assert b["build_settings"] == want["build"]
    assert doc["matched"] == 1 and fn[func]["size"] > 0
    assert b["functions"] > 3000
    if path.endswith("age"):
        assert b["pie"] is True
    text = listing(path, "main.*").stdout
    assert "\nmain.main\n    ABIInternal at 0x" in text


def test_list_errors(functions):
    p = listing("/bin/true", check=False)
    assert p.returncode == 1
    assert p.stderr == ("gotrace-record: /bin/true is not a Go program "
                        "(no .gopclntab and no Go build info)\n")
    p = listing(functions, "main.ad", check=False)
    assert p.returncode == 1
    # the nearest name first; the rest of the list depends on the runtime
    # (gccgo's libgo is another file: main.add alone)
    assert p.stderr.startswith("gotrace-record: no function of %s matches 'main.ad'; "
                               "did you mean: main.add" % functions), p.stderr


def test_goid_offset_sources_agree(gobuild, toolchain, tmp_path):
    """Each toolchain's runtime.g: the goid offset from DWARF, from the
    table of Go versions (stripped) and from the runtime's own code agree,
    and --list says which one it took; -ldflags=-buildid= and a stripped
    build keep the Go version, from .go.buildinfo."""
    full = gobuild(GOBIN_SRC[0], "args_goid")
    stripped = gobuild(GOBIN_SRC[0], "args_goid_s", "-ldflags=-s -w")
    if toolchain.gccgo:
        # libgo's g sits behind libgo.so's thread-local storage: no offset,
        # no Go version; recording says so, once
        for exe in (full, stripped):
            b = listing_json(exe, "main.main")[0]["binary"]
            assert b["goid"] == {"offset": None, "source": "", "derived": None}
            assert (b["go_version"], b["go_version_source"]) == ("", "")
        assert ("\ngoid         not read: libgo keeps g behind thread-local storage of "
                "libgo.so; events get goid 0, calls pair by thread\n") in \
            listing(full, "main.main").stdout
        p = record(["-q", "-o", str(tmp_path / "t.gtr"), "main.ints",
                    "main.spillstr", "--", full])
        assert p.stderr.count("goroutine ids are not read") == 1, p.stderr
        assert ("gotrace-record: %s: a gccgo program: goroutine ids are not read "
                "(libgo keeps them behind thread-local storage of libgo.so); events "
                "get goid 0 and calls are paired by thread\n" % full) in p.stderr
        return
    g = listing_json(full, "main.main")[0]["binary"]["goid"]
    assert g["source"] == "DWARF" and g["offset"] == g["derived"]
    bs = listing_json(stripped, "main.main")[0]["binary"]
    assert bs["goid"] == {"offset": g["offset"], "source": "table",
                          "derived": g["offset"]}
    assert bs["go_version_source"] == "buildinfo"
    assert bs["go_version"].startswith(toolchain.version)
    text = listing(stripped, "main.main").stdout
    assert "goid         at runtime.g+%d (from table)\n" % g["offset"] in text


def test_info_says_where_goroutine_ids_came_from(gobuild, toolchain, tmp_path):
    """The trace carries where the Go version and the goid offset came
    from, so that `info` on another machine tells goid 0 from "unknown"."""
    from conftest import report
    if toolchain.gccgo:
        # no Go version, no goid offset: info says calls pair by thread
        full = gobuild("examples/functions/main.go", "functions")
        trace = str(tmp_path / "t.gtr")
        record(["-q", "-o", trace, "main.add", "--", full, "1"])
        info = json.loads(report(["info", "--json", trace]).stdout)
        b = info["binaries"][0]
        assert (b["compiler"], b["go_version"], b["go_version_source"], b["goid_source"],
                b["goid_offset"]) == ("gccgo", "", "", "", None)
        assert info["probes"][0]["args_source"] == "DWARF"
        text = report(["info", trace]).stdout
        assert "      goroutine ids not recorded (goid 0): calls are paired by thread\n" in text
        return
    exe = gobuild("examples/functions/main.go", "functions-s", "-ldflags=-s -w")
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.add", "--", exe, "1"])
    info = json.loads(report(["info", "--json", trace]).stdout)
    b = info["binaries"][0]
    assert b["go_version"].startswith(toolchain.version)
    assert (b["go_version_source"], b["goid_source"]) == ("buildinfo", "table")
    assert b["goid_offset"] == {True: 160}.get(toolchain.minor in (23, 24), 152)
    text = report(["info", trace]).stdout
    assert "goroutine ids from runtime.g+%d (offset from table)" % b["goid_offset"] in text
    # where each probe's arguments came from: DWARF, a signature, raw words
    full = gobuild("examples/functions/main.go", "functions")
    record(["-q", "-f", "-o", trace, "main.add", "--", full, "1"])
    assert json.loads(report(["info", "--json", trace]).stdout)["probes"][0]["args_source"] == "DWARF"
    record(["-q", "-f", "-o", trace, "main.add", "main.greet(s string, n int)", "--", exe, "1"])
    probes = json.loads(report(["info", "--json", trace]).stdout)["probes"]
    assert [p["args_source"] for p in probes] == ["raw", "signature"]
    assert "      arguments from signature\n" in report(["info", trace]).stdout
