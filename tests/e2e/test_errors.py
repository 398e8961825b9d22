"""Bad input gets a clear message naming the input and a non-zero exit."""
import os
import subprocess

from conftest import goid_note, record, report


def test_unknown_function_suggests_near_names(functions, tmp_path):
    p = record(["-o", str(tmp_path / "t.gtr"), "main.ad", "--", functions],
               check=False)
    assert p.returncode == 1
    # the nearest name first; the rest of the list depends on the runtime
    # (gccgo's runtime is libgo: main.add alone)
    assert p.stderr.startswith("gotrace-record: function 'main.ad' not found in %s; "
                               "did you mean: main.add" % functions), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert not os.path.exists(tmp_path / "t.gtr")
    # nothing unrelated: no name of the program or the runtime is a typo
    # of these (time.now, runtime.open, errors.Is were suggested)
    for name in ("main.nope", "main.sq", "main.zzzzzz"):
        p = record(["-o", str(tmp_path / "t.gtr"), name, "--", functions], check=False)
        assert p.stderr == "gotrace-record: function '%s' not found in %s\n" % (
            name, functions), p.stderr
    # a misspelt package keeps the function's name
    p = record(["-o", str(tmp_path / "t.gtr"), "mian.add", "--", functions], check=False)
    assert "did you mean: main.add" in p.stderr, p.stderr


def test_control_characters_in_a_probe_are_shown_escaped(functions, tmp_path):
    """A probe holding a control character (a stray byte, an escape
    sequence) is refused before anything else, and the message shows it
    escaped: no raw control byte reaches the terminal."""
    for probe, shown, col in (("main.add\x01", "main.add\\x01", 9),
                              ("main.a\x1b[2Jdd", "main.a\\x1b[2Jdd", 7)):
        p = record(["-o", str(tmp_path / "t.gtr"), probe, "--", functions], check=False)
        assert p.returncode == 1, p.stderr
        byte = ord(probe[col - 1])
        assert p.stderr == ("gotrace-record: bad probe '%s': a control character (byte "
                            "0x%02x): a probe is text (in a string constant write it "
                            "\\x%02x) at column %d\n" % (shown, byte, byte, col)), p.stderr
        assert not os.path.exists(tmp_path / "t.gtr")


def test_binary_that_is_not_go(tmp_path, needs_bpf):
    p = record(["-o", str(tmp_path / "t.gtr"), "main.main", "--", "/bin/true"],
               check=False)
    assert p.returncode == 1
    assert p.stderr == ("gotrace-record: /bin/true is not a Go program "
                        "(no .gopclntab and no Go build info); for a command "
                        "that runs a Go program (a shell, make), name the binary "
                        "of each probe (BINARY:FUNCTION, e.g. ./prog:main.main): "
                        "the processes it starts are followed\n")


def test_a_pid_that_is_gone(tmp_path, needs_bpf):
    """-p of a process that has ended (one this test started and reaped),
    to record or to list: 'no such process', exit 1."""
    gone = subprocess.Popen(["/bin/true"])
    gone.wait()
    p = record(["-o", str(tmp_path / "t.gtr"), "-p", str(gone.pid), "main.main"], check=False)
    assert (p.returncode, p.stderr) == \
        (1, "gotrace-record: cannot trace PID %d: no such process\n" % gone.pid)
    p = record(["--list", "-p", str(gone.pid), "main.*"], check=False)
    assert (p.returncode, p.stderr) == \
        (1, "gotrace-record: cannot list PID %d: no such process\n" % gone.pid)


def test_missing_command(tmp_path, needs_bpf):
    nope = str(tmp_path / "nope")
    p = record(["-o", str(tmp_path / "t.gtr"), "main.main", "--", nope], check=False)
    assert p.returncode == 1
    assert p.stderr == "gotrace-record: cannot run %s: No such file or directory\n" % nope


def test_bad_probe_expression(functions, tmp_path):
    p = record(["-o", str(tmp_path / "t.gtr"), 'main.add "%d" goarg7', "--",
                functions], check=False)
    assert p.returncode == 1
    assert p.stderr == (
        "gotrace-record: probe 'main.add \"%d\" goarg7': unknown expression 'goarg7'; use "
        "goarg1..goarg2, a parameter name, a field path (NAME.FIELD) or $ptr(EXPR, SIZE) "
        "(main.add has: x, y)\n")


def test_existing_output_needs_force(functions, toolchain, tmp_path):
    out = tmp_path / "t.gtr"
    out.write_text("precious")
    p = record(["-o", str(out), "main.add", "--", functions], check=False)
    assert p.returncode == 1
    # a gccgo program's note on goroutine ids comes with its probes, first
    assert p.stderr == goid_note(toolchain, functions) + \
        "gotrace-record: %s exists; use --force to overwrite\n" % out
    assert out.read_text() == "precious"
    record(["-o", str(out), "--force", "main.add", "--", functions])
    assert out.stat().st_mode & 0o777 == 0o600


def test_report_missing_file(tmp_path):
    missing = str(tmp_path / "missing.gtr")
    p = report([missing], check=False)
    assert p.returncode == 1
    assert p.stderr == "gotrace-report: cannot open %s: No such file or directory\n" % missing


def test_report_not_a_trace(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello, this is not a trace\n" * 10)
    p = report([str(f)], check=False)
    assert p.returncode == 1
    assert p.stderr == ("gotrace-report: %s: not a gotrace trace (bad magic); expected a "
                        ".gtr file from gotrace-record\n" % f)


def test_report_malformed_filter_points_at_column(functions, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", "--", functions])
    for expr, msg in [
            ("goarg1 == ", "expected a value after '==' at column 10"),
            ("goarg1 == 42 &&", "expected a field, a literal, '!' or '(' after '&&' at column 16"),
            ("(goarg1 == 42", "expected ')' to close the '(' of column 1 at column 14")]:
        p = report(["-f", expr, trace], check=False)
        assert p.returncode == 2
        column = int(msg.rsplit(" ", 1)[1])
        assert p.stderr.splitlines() == ["gotrace-report: bad filter: " + msg, "  " + expr,
                                         " " * (column + 1) + "^"], p.stderr


def test_a_filter_after_f_says_f_is_force(functions, tmp_path):
    """-f filters in gotrace-report but is --force here: the filter that
    follows it is read as a probe, and the message says so."""
    p = record(["-o", str(tmp_path / "t.gtr"), "-f", "goarg1 == 42", "main.add", "--",
                functions], check=False)
    assert p.returncode == 1
    assert p.stderr == (
        "gotrace-record: 'goarg1 == 42' is a filter, not a probe: gotrace-record's -f is "
        "--force (overwrite the output file); to keep only some events while recording, "
        "put a predicate in parentheses after the function, 'FUNCTION (goarg1 == 42)' "
        "(spec/PROBES.md), or filter the recording with gotrace-report -f 'goarg1 == 42'\n")
    assert not os.path.exists(tmp_path / "t.gtr")
