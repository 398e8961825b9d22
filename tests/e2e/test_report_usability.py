"""Usage that confused a new user of gotrace-report, on synthetic traces
(tests/bench/report_gen.c): each mistake gets a message that says what to
do. No BPF needed."""
import subprocess

from conftest import REPORT
from test_report_synthetic import calls, gen  # noqa: F401 (fixtures)


def run(*args):
    return subprocess.run([REPORT, *args], capture_output=True, text=True)


def test_a_command_after_options_says_it_comes_first(calls, tmp_path):  # noqa: F811
    for cmd in ("stats", "info", "diff", "merge"):
        p = run("--max-depth", "6000", cmd, calls)
        assert p.returncode == 2
        assert p.stderr.startswith(
            "gotrace-report: '%s' is a command: it comes first, before options and files "
            "(gotrace-report %s [OPTION...] FILE)\n" % (cmd, cmd)), p.stderr
    # a file of that name is a file
    (tmp_path / "stats").write_bytes(open(calls, "rb").read())
    p = subprocess.run([REPORT, "--limit", "1", "stats"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert p.returncode == 0 and "main.add" in p.stdout, p.stderr
    assert run("stats", "--max-depth", "6000", calls).returncode == 0
