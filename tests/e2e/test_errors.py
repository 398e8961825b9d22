"""Bad input gets a clear message naming the input and a non-zero exit."""
import os

from conftest import record, report


def test_unknown_function_suggests_near_names(functions, tmp_path):
    p = record(["-o", str(tmp_path / "t.gtr"), "main.ad", "--", functions],
               check=False)
    assert p.returncode != 0
    assert "main.ad" in p.stderr and "not found" in p.stderr
    assert "main.add" in p.stderr  # did you mean
    assert not os.path.exists(tmp_path / "t.gtr")


def test_binary_that_is_not_go(tmp_path, needs_bpf):
    p = record(["-o", str(tmp_path / "t.gtr"), "main.main", "--", "/bin/true"],
               check=False)
    assert p.returncode != 0
    assert "/bin/true" in p.stderr and "not a Go" in p.stderr


def test_missing_command(tmp_path, needs_bpf):
    p = record(["-o", str(tmp_path / "t.gtr"), "main.main", "--",
                str(tmp_path / "nope")], check=False)
    assert p.returncode != 0 and "nope" in p.stderr


def test_bad_probe_expression(functions, tmp_path):
    p = record(["-o", str(tmp_path / "t.gtr"), 'main.add "%d" goarg7', "--",
                functions], check=False)
    assert p.returncode != 0
    assert "goarg7" in p.stderr and "x, y" in p.stderr
    assert "use goarg1..goarg2, a parameter name" in p.stderr


def test_existing_output_needs_force(functions, tmp_path):
    out = tmp_path / "t.gtr"
    out.write_text("precious")
    p = record(["-o", str(out), "main.add", "--", functions], check=False)
    assert p.returncode != 0 and "--force" in p.stderr
    assert out.read_text() == "precious"
    record(["-o", str(out), "--force", "main.add", "--", functions])
    assert out.stat().st_mode & 0o777 == 0o600


def test_report_missing_file(tmp_path):
    p = report([str(tmp_path / "missing.gtr")], check=False)
    assert p.returncode != 0 and "missing.gtr" in p.stderr


def test_report_not_a_trace(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello, this is not a trace\n" * 10)
    p = report([str(f)], check=False)
    assert p.returncode != 0
    assert "notes.txt" in p.stderr and "not a gotrace trace" in p.stderr


def test_report_malformed_filter_points_at_column(functions, tmp_path):
    trace = str(tmp_path / "t.gtr")
    record(["-o", trace, "main.add", "--", functions])
    p = report(["-f", "goarg1 == ", trace], check=False)
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert any("column" in l for l in lines)
    caret = [l for l in lines if l.strip() == "^"]
    assert caret, p.stderr
    p = report(["-f", "goarg1 == 42 &&", trace], check=False)
    assert p.returncode == 2 and "column 16" in p.stderr, p.stderr
    p = report(["-f", "(goarg1 == 42", trace], check=False)
    assert p.returncode == 2 and ")" in p.stderr
