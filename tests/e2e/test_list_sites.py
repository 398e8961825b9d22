"""gotrace-record --list BINARY 'r:FUNC' names the sites a return probe
attaches to: the function's RET instructions, counted and listed by
address (the first eight, then how many more), as objdump disassembles
them; never the function's entry. Runs once per Go toolchain."""
import re
import subprocess

import pytest

from conftest import record


@pytest.fixture
def rets(gobuild):
    return gobuild("tests/fixtures/rets/main.go", "rets")


def objdump_rets(exe, func):
    """The addresses of the RET instructions of symbol `func` in exe."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--disassemble=" + func, exe],
                         capture_output=True, text=True, check=True).stdout
    return [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+(?:repz? )?ret", out,
                                                     re.M)]


def entry_of(exe, func):
    out = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
    return [int(l.split()[0], 16) for l in out.splitlines() if l.split()[-1] == func][0]


@pytest.mark.parametrize("func", ["main.pick", "main.sign", "main.one"])
def test_return_sites_are_the_rets(rets, toolchain, func):
    out = record(["--list", rets, "r:" + func]).stdout
    heads = [l for l in out.splitlines() if l.startswith("return site")]
    assert len(heads) == 1, out
    m = re.fullmatch(r"return sites of %s: (\d+), at ((?:0x[0-9a-f]+(?:, )?)+)"
                     r"(?: and (\d+) more)?; values from \w+" % re.escape(func), heads[0])
    assert m, heads[0]
    want = objdump_rets(rets, func)
    assert want, "objdump finds no RET in %s" % func
    shown = [int(a, 16) for a in m.group(2).split(", ")]
    assert int(m.group(1)) == len(want)
    assert shown == want[:8]
    assert int(m.group(3) or 0) == len(want) - len(shown)
    assert entry_of(rets, func) not in shown
    if func == "main.pick" and not toolchain.gccgo:
        # gc: a RET per return statement, more than the list shows
        assert len(want) == 12 and m.group(3) == "4", heads[0]
