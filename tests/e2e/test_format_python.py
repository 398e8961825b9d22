"""The trace file as a contract: an independent Python reader written from
spec/FORMAT.md (gtr_reader.py) agrees with the C reader on every event and
every metadata item of recorded files; recorded files cut at every byte or
with a byte flipped anywhere read as the spec says, under ASan and UBSan;
`gotrace-report info` shows what a file holds."""
import collections
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import REPORT, ROOT, record, report

sys.path.insert(0, os.path.dirname(__file__))
from gtr_reader import GtrReader  # noqa: E402

SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


@pytest.fixture(scope="session")
def tool(tmp_path_factory):
    """tests/e2e/format_tool.c built with libgtr and report/info.c (with
    the text escaping it shares) from source, under ASan and UBSan."""
    out = str(tmp_path_factory.mktemp("tool") / "format_tool")
    srcs = [os.path.join(ROOT, "format", f) for f in sorted(os.listdir(os.path.join(ROOT, "format")))
            if f.endswith(".c")]
    subprocess.run(["gcc", "-O1", "-g", *SAN, "-std=gnu11", "-D_GNU_SOURCE",
                    "-I" + os.path.join(ROOT, "format"), "-I" + os.path.join(ROOT, "report"),
                    "-I" + os.path.join(ROOT, "lib"),
                    "-o", out, os.path.join(ROOT, "tests/e2e/format_tool.c"), *srcs,
                    *[os.path.join(ROOT, "report", f) for f in
                      ("info.c", "value.c")],
                    *[os.path.join(ROOT, "lib", f) for f in sorted(os.listdir(os.path.join(ROOT, "lib")))
                      if f.endswith(".c")],
                    "-lcbor", "-lzstd", "-lsodium", "-lm", "-pthread"], check=True)

    def run(*args, check=True):
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        p = subprocess.run([out, *args], capture_output=True, text=True, env=env, timeout=600)
        if check and p.returncode != 0:
            raise AssertionError("format_tool %s failed (%d):\n%s\n%s"
                                 % (args, p.returncode, p.stdout, p.stderr[-3000:]))
        return p
    return run


def c_info(tool, path):
    info = json.loads(tool("info", "--json", path).stdout)
    return info


def c_events(tool, path):
    return [json.loads(line) for line in tool("events", path).stdout.splitlines()]


def assert_agree(tool, path):
    """C and Python readers agree on every event, drop and metadata item."""
    c = c_info(tool, path)
    assert c.pop("message") is not None
    overflow = c.pop("overflow")
    assert not any(overflow.values()), overflow
    py = GtrReader(path).info()
    for k in c:
        assert c[k] == py.get(k), "info key %r differs:\nC:  %s\nPy: %s" % (
            k, json.dumps(c[k])[:2000], json.dumps(py.get(k))[:2000])
    assert set(c) == set(py)
    ce = c_events(tool, path)
    pe = list(GtrReader(path).items())
    assert len(ce) == len(pe)
    for i, (a, b) in enumerate(zip(ce, pe)):
        assert a == b, "item %d differs:\nC:  %s\nPy: %s" % (i, a, b)
    return c, ce


def test_python_agrees_on_recorded_file(functions, toolchain, tool, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "-U", "main.add", "main.greet", "main.(*T).M", "main.T.Value",
            "--", functions, "40"])
    info, evs = assert_agree(tool, trace)
    assert info["events"] == 160 and len([e for e in evs if "drop" not in e]) == 160
    assert info["summary"]["events"] == 160
    # (a gccgo program records no Go version; its runtime is in libgo)
    assert info["binaries"][0]["go_version"].startswith("go") != toolchain.gccgo
    assert info["binaries"][0]["symbols"] > (50 if toolchain.gccgo else 100)
    assert info["damage"] == 0 and not info["truncated"]
    # stacks were recorded and named through mappings and symbols: each
    # function, called 40 times by main.main
    frames = collections.Counter(tuple(f[1] for f in e["stack"][:2]) for e in evs
                                 if "drop" not in e)
    assert frames == {(toolchain.fname(f), "main.main"): 40 for f in
                      ("main.add", "main.greet", "main.(*T).M", "main.T.Value")}, frames
    # every frame is a user address: a walk that left the stack (gccgo's
    # libgo keeps no frame pointers) is cut where it did
    assert all(f[0] < 1 << 56 for e in evs if "drop" not in e for f in e["stack"]), \
        [e["stack"] for e in evs if "drop" not in e][:2]
    # and with gotrace-report's own JSON Lines (spec/OUTPUT.md keys)
    out = report(["--format", "jsonl", trace]).stdout.splitlines()
    rep = [json.loads(line) for line in out if line.strip()]
    py = [e for e in GtrReader(trace).items() if "drop" not in e]
    assert len(rep) == len(py)
    for a, b in zip(rep, py):
        assert (a["ts_ns"], a["pid"], a["tid"], a["goid"], a["kind"]) == \
            (b["ts_ns"], b["pid"], b["tid"], b["goid"], b["kind"])
        assert a["goargs"] == [v[1] if v and v[0] in ("int", "uint", "bool") else a["goargs"][i]
                               for i, v in enumerate(b["vals"])]
        assert bytes.fromhex(b["comm"]).decode() == a["comm"]


def test_python_agrees_on_generated_file(tool, tmp_path):
    """A file with every block and record type: symbols out of order and in
    several blocks, PIE and non-PIE mappings, clock samples, processes,
    CPUs, stacks, delta records, drops per CPU with spans, strings cut."""
    trace = str(tmp_path / "gen.gtr")
    tool("gen", trace)
    info, evs = assert_agree(tool, trace)
    assert info["events"] == 3000
    assert len(info["symbols"]["1"]) == 20000
    assert len(info["clock_samples"]) == 3
    assert [p["exited"] for p in info["processes"]] == [False, False, True]
    assert info["processes"][2]["exit_code"] == -9
    assert {(l["probe"], l["cpu"]) for l in info["losses"]} == \
        {(0, None), (None, 1), (0, 1), (None, None)}
    # CPU i / 300 % 2 for 60 events of each 100, not known for the others
    want = collections.Counter((i // 300) % 2 if i % 100 < 60 else None for i in range(3000))
    assert collections.Counter(e.get("cpu") for e in evs if "drop" not in e) == want
    pie = [f for e in evs if e.get("probe") == 5000 for f in e["stack"]]
    assert pie[0][1:] == ["main.(*T).M", 0x10]
    assert pie[1][1:] == ["main.main", 0x10]
    # wall clock from the sample nearest before each event
    assert info["time_range"]["first_utc"].startswith("2023-11-14T22:13:20.0000")


def loop_trace(tmp_path, gobuild, procs, seconds="1.5"):
    loop = gobuild("tests/fixtures/loop/main.go", "loop")
    p = procs([loop], stdout=subprocess.PIPE, text=True)
    assert p.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "loop.gtr")
    record(["-q", "-o", trace, "-d", seconds, "-p", str(p.pid), "main.add", "main.greet"])
    return trace


def test_cut_at_every_byte_of_a_recording(tool, tmp_path, gobuild, procs):
    """Never a crash; every complete frame before the cut is read; the file
    says it is truncated exactly when the cut is inside a block."""
    trace = loop_trace(tmp_path, gobuild, procs)
    out = tool("cuts", trace).stdout
    assert out.startswith("ok "), out
    size = os.path.getsize(trace)
    assert int(out.split()[1]) == size + 1 - 16


def test_flipped_byte_anywhere_in_a_recording(tool, tmp_path, gobuild, procs):
    """Never a crash; damage is reported with its offset and skipped; every
    event of every other frame is still read."""
    trace = loop_trace(tmp_path, gobuild, procs)
    out = tool("flips", trace).stdout
    assert out.startswith("ok "), out
    assert int(out.split()[3]) >= 4, out  # several blocks


def test_python_reads_damage_like_c(tool, tmp_path, gobuild, procs):
    trace = loop_trace(tmp_path, gobuild, procs)
    data = bytearray(open(trace, "rb").read())
    r = GtrReader(trace)
    blocks = list(r.blocks())
    frames = [off for off, t, _ in blocks if t == 4]
    assert len(frames) >= 2
    bad = str(tmp_path / "bad.gtr")
    data[frames[0] + 30] ^= 0x40
    open(bad, "wb").write(data)
    c = c_info(tool, bad)
    py = GtrReader(bad).info()
    assert c["damage"] == py["damage"] == 1
    assert c["events"] == py["events"] < GtrReader(trace).info()["events"]
    assert "damaged block at byte %d" % frames[0] in c["message"]
    cut = str(tmp_path / "cut.gtr")
    open(cut, "wb").write(data[:frames[-1] + 20])
    c = c_info(tool, cut)
    assert c["truncated"] and GtrReader(cut).info()["truncated"]
    assert c["summary"] is None


def test_info_text(tool, tmp_path, functions, toolchain):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", "main.greet", "--", functions, "3"])
    out = tool("info", trace).stdout
    for want in ("format:      1.0", "host:", "binaries:    1", functions,
                 *(("Go (unknown)", "compiler gccgo", "ABI C") if toolchain.gccgo else
                   ("Go go1.", "compiler gc", "ABI ABIInternal")), "main.add entry", "3 events",
                 "time range:  20", "events:      6", "lost:        0 events",
                 "summary:     closed cleanly", "damage:      none"):
        assert want in out, (want, out)
    # damage is reported with its offset, and is not an error
    data = bytearray(open(trace, "rb").read())
    data[len(data) // 2] ^= 0xff
    bad = str(tmp_path / "bad.gtr")
    open(bad, "wb").write(data)
    p = tool("info", bad)
    # the block holding the flipped byte is skipped, past that byte
    m = re.search(r"^damage:      1 damaged part skipped; last: %s: damaged block at byte "
                  r"(\d+) \(bad checksum\); skipped to byte (\d+)$" % re.escape(bad),
                  p.stdout, re.M)
    assert m and int(m[1]) <= len(data) // 2 < int(m[2]), p.stdout
    p = tool("info", str(tmp_path / "missing.gtr"), check=False)
    assert p.returncode == 1 and "cannot open" in p.stderr


def test_gotrace_report_info(tmp_path, functions, tool):
    """`gotrace-report info [--json] FILE` is report_info() (wired by report/main.c)."""
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", "--", functions, "2"])
    p = subprocess.run([REPORT, "info", "--json", trace], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("{"), p.stderr
    assert json.loads(p.stdout) == c_info(tool, trace)
    text = subprocess.run([REPORT, "info", trace], capture_output=True, text=True, check=True)
    assert text.stdout == tool("info", trace).stdout


def test_python_agrees_on_golden_files(tool):
    """Both readers give the same outcome on every corrupt golden file."""
    golden = os.path.join(ROOT, "tests", "golden")
    names = sorted(f for f in os.listdir(golden) if f.endswith(".gtr"))
    assert len(names) >= 17
    for name in names:
        path = os.path.join(golden, name)
        p = tool("info", "--json", path, check=False)
        try:
            py = GtrReader(path).info()
        except ValueError:
            assert p.returncode == 1, name
            continue
        c = json.loads(p.stdout)
        c.pop("overflow"), c.pop("message")
        assert c == {k: py[k] for k in c}, name


REPORT_MODES = [[], ["--calls"], ["-U"], ["--format", "jsonl"], ["--format", "csv"],
                ["--format", "chrome"], ["--format", "folded"], ["--calls", "--format", "jsonl"],
                ["--calls", "--format", "csv"], ["stats"], ["stats", "--by", "a"],
                ["stats", "--by", "comm"], ["info"], ["info", "--json"],
                ["-f", 'a == "x"'], ["-f", "nosuchfield == 1"], ["--count"]]


@pytest.mark.parametrize("mode", REPORT_MODES, ids=[" ".join(m) or "text" for m in REPORT_MODES])
def test_no_escape_sequence_from_a_file_reaches_the_terminal(tool, tmp_path, mode):
    """A file whose every string holds terminal escape sequences (host,
    binary, probe, argument names and types, symbols, comm, values): no
    mode of gotrace-report writes a raw ESC byte, nor a C1 control outside
    JSON, to stdout or stderr."""
    from conftest import REPORT
    path = str(tmp_path / "hostile.gtr")
    tool("hostile", path)
    p = subprocess.run([REPORT, *mode, path], capture_output=True, timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode in (0, 1, 2), out
    assert len(out) > 20
    assert b"\x1b" not in out, (mode, out[:2000])
    if "json" not in " ".join(mode) and "chrome" not in mode:
        assert b"\xc2\x9b" not in out, (mode, out[:2000])


def test_drop_counts_saturate(tool, tmp_path):
    """Two drop records of 2^64-1 lost events: the total saturates at
    2^64-1 and says "at least", never wraps to a small number."""
    from conftest import REPORT
    path = str(tmp_path / "sat.gtr")
    tool("satdrops", path)
    p = subprocess.run([REPORT, path], capture_output=True, text=True)
    assert "warning: at least 18446744073709551615 event(s) were lost" in p.stderr
    assert "note: at least 18446744073709551615 event(s) were suppressed" in p.stderr
    info = subprocess.run([REPORT, "info", path], capture_output=True, text=True).stdout
    assert "lost:        at least 18446744073709551615 events in 3 drop records" in info
    assert "summary:     closed cleanly; 0 events, at least 18446744073709551615 lost" in info
    assert "all probes, all CPUs: at least 18446744073709551615 lost between" in info
    doc = json.loads(subprocess.run([REPORT, "info", "--json", path], capture_output=True,
                                    text=True).stdout)
    assert doc["drops"] == 2**64 - 1
    # JSON says which counts stand at 2^64-1 (text's "at least"), by JSON Pointer
    assert doc["saturated"] == ["/drops", "/suppressed", "/losses/0/count",
                                "/losses/1/count", "/summary/drops", "/summary/suppressed"]
    from gtr_reader import GtrReader
    assert GtrReader(path).info()["saturated"] == doc["saturated"]


def test_damaged_summary_says_damaged(tool, tmp_path):
    """A byte flipped in the summary (the last block) reads as a damaged
    summary of a closed recording, not as a recording that was never
    closed; every event before it is read."""
    from conftest import REPORT
    from gtr_reader import GtrReader
    path = str(tmp_path / "ok.gtr")
    tool("gen", path)
    data = bytearray(open(path, "rb").read())
    last = [(off, t, payload) for off, t, payload in GtrReader(path).blocks()][-1]
    assert last[1] == 5
    data[last[0] + 16 + len(last[2]) // 2] ^= 0x40
    bad = str(tmp_path / "bad.gtr")
    open(bad, "wb").write(bytes(data))
    p = subprocess.run([REPORT, "--count", bad], capture_output=True, text=True)
    q = subprocess.run([REPORT, "--count", path], capture_output=True, text=True)
    assert p.stdout == q.stdout
    assert "the summary at the end of %s is damaged" % bad in p.stderr
    assert "was not closed" not in p.stderr
    info = subprocess.run([REPORT, "info", bad], capture_output=True, text=True).stdout
    assert "summary:     damaged (the last block, the summary, fails its checksum" in info
