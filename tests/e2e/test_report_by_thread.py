"""Calls of a gccgo program are paired by thread (its goroutine ids are
not recorded): the views that pair calls say so once on stderr; those of
a gc program, paired by goroutine, do not. Each test runs once per Go
toolchain."""
import pytest

from conftest import record, report

NOTE = ("gotrace-report: note: %s is a gccgo program, whose goroutine ids are not "
        "recorded: its calls are paired by thread, so a goroutine that blocked or "
        "yielded mid-call and went on on another thread has its call paired with "
        "another's return, or not at all\n")


@pytest.fixture
def add_calls(functions, toolchain, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-o", trace, "main.add", "r:main.add", "--", functions, "2"])
    return trace


@pytest.mark.parametrize("view", [[], ["--calls"], ["--calls", "--count"], ["stats"],
                                  ["--format", "folded"], ["--format", "jsonl"]])
def test_pairing_by_thread_is_said(add_calls, functions, toolchain, view):
    """Every view that pairs: calls, their count, stats, folded stacks,
    and events (a return shows its latency)."""
    p = report([*view, add_calls])
    assert p.stderr.count("paired by thread") == (1 if toolchain.gccgo else 0)
    if toolchain.gccgo:
        assert NOTE % functions in p.stderr
    if view == ["--calls", "--count"]:
        assert p.stdout == "2\n"   # the calls are there all the same


def test_event_count_says_nothing_of_pairing(add_calls):
    """A count of events pairs nothing: no note."""
    p = report(["--count", add_calls])
    assert p.stdout == "4\n" and "paired by thread" not in p.stderr
