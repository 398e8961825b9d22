"""A Go 1.17 PIE whose pointers the dynamic linker fills: esbuild 0.13.15
for Android arm64 (go1.17.2, -buildmode=pie, stripped; from the npm
registry, cached under build/release-bins), listed by gotrace-record.

Go's own linker writes each address into the file as well as into an
R_AARCH64_RELATIVE relocation; lld and GNU ld on arm64 write only the
relocation and leave the file's word 0. A copy of the binary with every
such word set to 0 stands for those: its functions, build info and
inlined copies (the pclntab's function table, .go.buildinfo's string
pointers and each function's inline tree are all such pointers) must
read as the original's. With the inline trees' relocations also gone,
--list says once that the copies are unknown."""
import hashlib
import json
import os
import shutil
import struct
import subprocess

import pytest

from conftest import ROOT, _need

ESBUILD = "0.13.15"
SHA256 = "039c1893ad1892468bf031ccf7490bb733e161cdc5faf32d72372dd3f93eb379"
CACHE = os.path.join(ROOT, "build", "release-bins", "android-arm64-" + ESBUILD)
RECORD = os.path.join(ROOT, "gotrace-record")
PARSE_EXPR = "github.com/evanw/esbuild/internal/js_parser.(*parser).parseExpr"
R_AARCH64_RELATIVE = 1027
R_X86_64_RELATIVE = 8
PT_LOAD, PT_DYNAMIC, DT_RELA, DT_RELASZ = 1, 2, 7, 8


@pytest.fixture(scope="module")
def pie():
    """Path of the esbuild binary, fetched with npm on the first run."""
    out = os.path.join(CACHE, "esbuild")
    if not os.path.exists(out):
        _need(shutil.which("npm") is not None,
              "npm is needed to fetch esbuild's release binaries")
        os.makedirs(CACHE, exist_ok=True)
        p = subprocess.run(
            ["npm", "pack", "--silent", "--cache", os.path.join(CACHE, ".npm"),
             "esbuild-android-arm64@" + ESBUILD],
            cwd=CACHE, capture_output=True, text=True, timeout=600)
        _need(p.returncode == 0, "npm pack esbuild-android-arm64 failed:\n"
              + p.stdout + p.stderr)
        tgz = os.path.join(CACHE, p.stdout.split()[-1])
        subprocess.run(["tar", "-xzf", tgz, "-C", CACHE, "package/bin/esbuild"],
                       check=True)
        os.replace(os.path.join(CACHE, "package", "bin", "esbuild"), out)
        os.remove(tgz)
        shutil.rmtree(os.path.join(CACHE, "package"))
    with open(out, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == SHA256
    return out


def relative_relocs(d, rtype=R_AARCH64_RELATIVE):
    """(file offset of the RELA entry, file offset of the word it fills,
    addend) of each RELATIVE relocation (rtype: the machine's) of ELF64
    little-endian image d."""
    phoff, = struct.unpack_from("<Q", d, 32)
    phentsize, phnum = struct.unpack_from("<HH", d, 54)
    loads, dyn = [], None
    for i in range(phnum):
        t, _, off, va, _, fsz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
        if t == PT_LOAD:
            loads.append((va, off, fsz))
        elif t == PT_DYNAMIC:
            dyn = off

    def offset(v):
        return [v - va + off for va, off, fsz in loads if va <= v < va + fsz][0]

    tags = {}
    for k in range(64):
        tag, val = struct.unpack_from("<qQ", d, dyn + 16 * k)
        if tag == 0:
            break
        tags[tag] = val
    rela = offset(tags[DT_RELA])
    for k in range(tags[DT_RELASZ] // 24):
        r_off, info, addend = struct.unpack_from("<QQq", d, rela + 24 * k)
        if info & 0xffffffff == rtype:
            yield rela + 24 * k, offset(r_off), addend


def unfilled(src, dst, drop_funcdata=False, rtype=R_AARCH64_RELATIVE):
    """Copies src to dst with each word a RELATIVE relocation (rtype)
    fills set to 0 (checking it held the addend); with drop_funcdata
    (esbuild's arm64 binary only), the relocations of funcdata (words of
    the pclntab pointing into read-only data: inline trees and GC maps)
    become R_AARCH64_NONE. Returns how many words."""
    with open(src, "rb") as f:
        d = bytearray(f.read())
    n = 0
    for entry, word, addend in list(relative_relocs(d, rtype)):
        assert struct.unpack_from("<q", d, word)[0] == addend
        struct.pack_into("<Q", d, word, 0)
        n += 1
        # esbuild 0.13.15: .data.rel.ro.gopclntab at file 0x660bc0, its
        # functab's words point into .text (< 0x3b0000), funcdata into
        # .rodata [0x3b0000, 0x5b0000)
        if drop_funcdata and 0x660bc0 <= word < 0x81cc00 and \
                0x3b0000 <= addend < 0x5b0000:
            struct.pack_into("<Q", d, entry + 8, 0)
    with open(dst, "wb") as f:
        f.write(d)
    return n


def listing(path, *args):
    p = subprocess.run([RECORD, "--list", path, *args], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.replace(path, "BINARY")


def test_pie_words_left_to_the_dynamic_linker(pie, tmp_path):
    zeroed = str(tmp_path / "esbuild")
    assert unfilled(pie, zeroed) == 62240
    want = json.loads(listing(pie, "--json"))
    got = json.loads(listing(zeroed, "--json"))
    assert got == want
    assert (got["binary"]["go_version"], got["binary"]["functions"],
            got["binary"]["inline_gap"]) == ("go1.17.2", 5716, None)
    want = json.loads(listing(pie, PARSE_EXPR, "--json"))
    got = json.loads(listing(zeroed, PARSE_EXPR, "--json"))
    assert got == want
    copies = got["functions"][0]["inlined"]
    assert len(copies) == 91
    assert copies[0]["call_site"] == "js_parser.go:2329"
    assert listing(zeroed, "github.com/evanw/esbuild/internal/*") == \
        listing(pie, "github.com/evanw/esbuild/internal/*")


def test_pie_inline_trees_gotrace_cannot_relocate(pie, tmp_path):
    broken = str(tmp_path / "esbuild")
    unfilled(pie, broken, drop_funcdata=True)
    got = json.loads(listing(broken, PARSE_EXPR, "--json"))
    gap = "this binary's inline tree needs relocations gotrace cannot apply"
    assert got["binary"]["inline_gap"].startswith(gap + " (")
    fn = got["functions"][0]
    assert (fn["name"], fn["entry"], fn["inlined"]) == (PARSE_EXPR, 0x268570, None)
    text = listing(broken, PARSE_EXPR)
    assert text.count("inlined copies unknown: " + gap) == 1
    assert "inlined " not in text.split("functions    5716")[1]
    # a recording says it too, once for the binary, before it refuses an
    # arm64 capture on this machine
    p = subprocess.run([RECORD, "-o", str(tmp_path / "t.gtr"), broken + ":" + PARSE_EXPR,
                        broken + ":" + PARSE_EXPR.replace("parseExpr", "parseStmt"),
                        "--", "/bin/true"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    assert p.stderr.count("%s: inlined copies unknown: %s (" % (broken, gap)) == 1, p.stderr
    assert "probes cover out-of-line bodies only" in p.stderr
    assert "is not an x86 binary" in p.stderr
