"""A function with more parameters than the 16 values a probe captures
(GT_MAX_FETCH): the recording says once which are left out, --list marks
them not captured, and a format string naming one is refused with why.
Each test runs once per Go toolchain."""
import json

from conftest import record
from test_capture import jsonl

MANY = "tests/fixtures/manyargs/main.go"


def test_values_beyond_16_are_said(gobuild, toolchain, tmp_path):
    exe = gobuild(MANY, "manyargs")
    many = toolchain.fname("main.many")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, many, "--", exe])
    assert p.stdout == "50\n"
    said = [line for line in p.stderr.splitlines() if "not captured" in line]
    assert said == ["gotrace-record: probe '%s': %s has 20 parameters; a probe "
                    "captures 16 values, so s16, s17, s18, s19 (goarg17..goarg20) "
                    "are not captured" % (many, many)]
    [ev] = [e for e in jsonl(trace) if e["func"] == many]
    assert ev["args"] == {"s%d" % i: "a%d" % i for i in range(16)}


def test_values_beyond_32_are_counted(gobuild, toolchain, tmp_path):
    """Forty parameters, more than a plan holds (32): the warning counts and
    names them all."""
    exe = gobuild(MANY, "manyargs")
    big = toolchain.fname("main.big")
    p = record(["-q", "-o", str(tmp_path / "t.gtr"), big, "--", exe])
    assert p.stdout == "50\n"
    said = [line for line in p.stderr.splitlines() if "not captured" in line]
    assert said == ["gotrace-record: probe '%s': %s has 40 parameters; a probe "
                    "captures 16 values, so %s (goarg17..goarg40) are not captured"
                    % (big, big, ", ".join("a%d" % i for i in range(16, 40)))]


def test_list_marks_values_beyond_16(gobuild, toolchain):
    exe = gobuild(MANY, "manyargs")
    out = json.loads(record(["--list", "--json", exe, toolchain.fname("main.many")]).stdout)
    params = out["functions"][0]["params"]
    assert [a["name"] for a in params] == ["s%d" % i for i in range(20)]
    assert all(a["capture"] for a in params[:16])
    for a in params[16:]:
        assert not a["capture"] and a["why"] == "a probe captures 16 values at most"
    text = record(["--list", exe, toolchain.fname("main.many")]).stdout
    assert text.count("not captured: a probe captures 16 values at most") == 4


def test_format_naming_value_beyond_16_is_refused(gobuild, toolchain, tmp_path):
    exe = gobuild(MANY, "manyargs")
    many = toolchain.fname("main.many")
    out = tmp_path / "t.gtr"
    p = record(["-o", str(out), '%s "%%s %%s", s0, s19' % many, "--", exe], check=False)
    assert p.returncode != 0
    assert "'s19' is value 20 of %s, and a probe captures the first 16 only" % many \
        in p.stderr
    assert not out.exists()
