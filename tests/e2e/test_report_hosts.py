"""gotrace-report's HOST column of a merged file (spec/OUTPUT.md): as wide
as the widest host name of the file, so that the columns after it line up
on every line and under the header, with host names redacted
("redacted:" and 16 hex digits), longer than 15 columns, or holding wide
characters and escapes. Synthetic traces written with libgtr's writer
(tests/bench/report_gen.c); no BPF needed."""
import os
import re
import subprocess
import unicodedata

import pytest

from conftest import build_with_libgtr, report

SHORT = "alpha"
LONG = "ip-10-0-0-1.ec2.internal"                # 24 columns
WIDE = "\u4e3b\u673a\tbuild-host"                # 2 wide, a tab shown as \t


@pytest.fixture(scope="session")
def gen(tmp_path_factory):
    """Builds tests/bench/report_gen.c against the built libgtr objects."""
    return build_with_libgtr(tmp_path_factory.mktemp("gen") / "report_gen",
                             "tests/bench/report_gen.c")


@pytest.fixture
def recording(gen, tmp_path):
    """A recording of one host: its path."""
    def make(host):
        path = str(tmp_path / ("%d.gtr" % len(os.listdir(tmp_path))))
        subprocess.run([gen, "calls", path, "2"], check=True,
                       env=dict(os.environ, REPORT_GEN_HOST=host))
        return path
    return make


def cols(s):
    """Display columns of text as gotrace-report pads it: East Asian wide
    and fullwidth characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def host_and_pid(line, before):
    """The host of a row (blank when it has none) and the display column
    where its PID column starts, after `before` columns: the time columns
    and the host."""
    m = re.match(r"(?:\S+ +){%d}(\S*) +" % (before - 1), line)
    assert m, line
    return m.group(1), cols(m.group(0))


def pid_columns(text, before):
    """The display column where the PID column starts on each line of
    `text`: the header's "PID", then each row's."""
    lines = text.splitlines()
    assert lines, text
    return [cols(lines[0][:lines[0].index("PID")])] + \
        [host_and_pid(line, before)[1] for line in lines[1:]]


def check_aligned(path, hosts_shown):
    """Every view of `path` lines its PID column up under the header, past
    a HOST column as wide as the widest of `hosts_shown` (at least 15),
    the hosts its rows name."""
    for args, before in (([], 1), (["--calls"], 1), (["-t", "-T"], 3)):
        out = report([*args, path]).stdout
        at = pid_columns(out, before)
        assert len(set(at)) == 1, "%s: PID at columns %s:\n%s" % (args, sorted(set(at)), out)
        host_col = at[0] - (27 if before == 3 else 0)    # -T and -t: 16 + 11
        assert host_col == max(max(cols(h) for h in hosts_shown), 15) + 1, out
        named = {host_and_pid(line, before)[0] for line in out.splitlines()[1:]}
        assert set(hosts_shown) <= named, out


def test_long_host_name_widens_the_column(recording, tmp_path):
    merged = str(tmp_path / "m.gtr")
    report(["merge", "-w", merged, recording(SHORT), recording(LONG)])
    check_aligned(merged, [SHORT, LONG])


def test_redacted_host_names_line_up(recording, tmp_path):
    merged = str(tmp_path / "r.gtr")
    report(["merge", "--redact", "@host", "-w", merged, recording(SHORT), recording(LONG)])
    out = report([merged]).stdout
    hosts = sorted({l.split()[0] for l in out.splitlines()[1:]})
    assert len(hosts) == 2 and all(re.fullmatch("redacted:[0-9a-f]{16}", h) for h in hosts)
    check_aligned(merged, hosts)


def test_several_files_merged_on_the_fly(recording):
    a, b = recording(SHORT), recording(LONG)
    at = pid_columns(report([a, b]).stdout, 1)
    assert set(at) == {len(LONG) + 1}


def test_wide_characters_and_escapes_count_as_shown(recording, tmp_path):
    merged = str(tmp_path / "w.gtr")
    report(["merge", "-w", merged, recording(SHORT), recording(WIDE)])
    shown = WIDE.replace("\t", "\\t")
    check_aligned(merged, [SHORT, shown])


def test_short_names_keep_the_15_column_host(recording, tmp_path):
    merged = str(tmp_path / "s.gtr")
    report(["merge", "-w", merged, recording(SHORT), recording("beta")])
    out = report([merged]).stdout.splitlines()
    assert out[0].startswith("HOST            PID ")
    assert out[1].startswith("alpha           100 ")
