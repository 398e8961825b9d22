"""gotrace-record says once per binary that a gccgo program's goroutine
ids are not read, however many probes (entries, returns, a glob) it
plans there, and never says it of a gc program, whose ids it reads.
Runs once per Go toolchain."""
import os

from conftest import goid_note, record


def test_goid_note_once_per_binary(gobuild, toolchain, tmp_path):
    exe = gobuild("tests/fixtures/rets/main.go", "rets")
    for probes in (["main.pick", "main.sign", "r:main.one"],
                   ["main.pick", "r:main.pick", "r:main.sign", "main.one"],
                   ["main.*", "r:main.one"]):
        p = record(["-q", "-o", str(tmp_path / "t.gtr"), "--force", *probes, "--", exe])
        assert p.stderr.count("goroutine ids are not read") == (1 if toolchain.gccgo else 0), \
            (probes, p.stderr)
        assert p.stderr.count("goroutine ids are read on") == 0, p.stderr
        assert "the offset of goid" not in p.stderr, p.stderr
        assert goid_note(toolchain, exe) in p.stderr


def test_one_binary_named_three_ways_is_one_binary(gobuild, toolchain, tmp_path):
    """BINARY:FUNCTION probes naming one file as ./rets, rets and its
    absolute path plan one binary: its notes are said once, and none says
    that it was not run, though each probe's events are recorded."""
    exe = gobuild("tests/fixtures/rets/main.go", "rets")
    d, name = os.path.split(exe)
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-o", trace, "./%s:main.pick" % name, "%s:main.sign" % name,
                "r:%s:main.one" % exe, "--", exe], cwd=d)
    assert p.stderr.count("goroutine ids are not read") == (1 if toolchain.gccgo else 0), \
        p.stderr
    assert "was not run by any traced process" not in p.stderr, p.stderr
    from test_capture import jsonl
    assert {e["func"] for e in jsonl(trace)} == {"main.pick", "main.sign", "main.one"}
