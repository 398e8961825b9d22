"""Redaction (spec/REDACT.md): a Go program passes a secret from its command
line in string arguments, a field of a struct passed by value and a
[]byte; its binary and process are named after the secret too. Recorded
with --redact rules (to a file and to a pipe), and the same program's plain
recording redacted afterwards with `gotrace-report redact`, the file holds no byte sequence
of the secret anywhere: every block is searched, EVENTS and SYMBOLS frames
decompressed. Hashed values still group equal values in `stats --by`,
dropped ones show <redacted>, `info` shows the rules and what each probe
argument went through, and the files pass the independent Python reader
with no damage. Recorded once per Go toolchain."""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest
import zstandard

from conftest import RECORD, REPORT, record, report

sys.path.insert(0, os.path.dirname(__file__))
from test_format_python import assert_agree, tool  # noqa: E402,F401 (a fixture)

SECRET = b"S3cr3tK3y-9f2c41d7"
OTHER = b"other-value-42"
PROBES = ["main.login", "main.connect", "main.send"]
# password and the struct field hashed (they still group), the []byte
# dropped, and every name the file holds of the host and the program
RULES = ["password", "*.Token", "main.send:data=drop", "@comm", "@paths", "@host"]


def redact_args(rules):
    return [a for r in rules for a in ("--redact", r)]


def blocks(data):
    """(type, payload) of every block of a .gtr file, EVENTS (4) and
    SYMBOLS (6) payloads decompressed (spec/FORMAT.md, "Blocks")."""
    out, off = [], 16
    assert data[:8] == b"\x89GTR\r\n\x1a\n"
    while off < len(data):
        sync, btype, length = struct.unpack_from("<4sII", data, off)
        assert sync == b"GTRB", "no block at byte %d" % off
        payload = data[off + 16:off + 16 + length]
        if btype in (4, 6):
            payload = zstandard.ZstdDecompressor().decompress(payload)
        out.append((btype, payload))
        off += 16 + length
    assert off == len(data)
    return out


def secret_found(path):
    """Where the secret (or the first 12 bytes of it: a task name keeps 15)
    is in the file: the raw bytes, then every block's decompressed bytes."""
    data = open(path, "rb").read()
    needles = (SECRET, SECRET[:12])
    where = [("file", n) for n in needles if n in data]
    for i, (btype, payload) in enumerate(blocks(data)):
        where += [("block %d type %d" % (i, btype), n) for n in needles if n in payload]
    return where


def info(path):
    return json.loads(report(["info", "--json", path]).stdout)


def assert_python_agrees(tool, path):
    """The independent reader reads the file with no damage and agrees with
    the C reader on every event and item of `info --json`."""
    c, _ = assert_agree(tool, path)
    assert c["damage"] == 0 and not c["truncated"]
    return c


def stats_groups(path, by):
    """{(func, value): calls} of `stats --by`."""
    out = report(["stats", "--no-hist", "--by", by, path]).stdout.splitlines()
    groups = {}
    for line in out[1:]:
        f = line.split()
        if len(f) >= 3:
            groups[(f[0], f[1])] = int(f[2])
    return groups


@pytest.fixture
def secrets(gobuild, tmp_path):
    """The fixture's binary, in a directory and under a name that hold the
    secret (so paths and task names do)."""
    built = gobuild("tests/fixtures/secrets/main.go", "secrets")
    d = tmp_path / SECRET.decode()
    d.mkdir()
    exe = str(d / SECRET.decode())
    shutil.copy(built, exe)
    return exe


def run_args(exe):
    return ["--", exe, SECRET.decode(), OTHER.decode()]


@pytest.fixture
def plain(secrets, tmp_path):
    """A recording without redaction: the secret is in it."""
    path = str(tmp_path / "plain.gtr")
    record(["-o", path, *PROBES, *run_args(secrets)])
    return path


def check_redacted(tool, path, rules):
    """What a file redacted by RULES shows."""
    assert secret_found(path) == []
    c = assert_python_agrees(tool, path)
    assert c["host"]["redacted"] == " ".join(rules)
    assert c["host"]["hostname"].startswith("redacted:")
    assert all(b["path"].startswith("redacted:") for b in c["binaries"])
    assert all(m["path"].startswith("redacted:") for m in c["mappings"])
    assert all(p["comm"].startswith("redacted:") for p in c["processes"])
    args = {(p["func"], a["name"]): a.get("redacted") for p in c["probes"] for a in p["args"]}
    assert args[("main.login", "password")] == "hash"
    assert args[("main.login", "user")] is None
    assert args[("main.connect", "c.Token")] == "hash"
    assert args[("main.connect", "c.User")] is None
    assert args[("main.send", "data")] == "drop"
    assert args[("main.send", "cap(data)")] == "drop"   # the slice's capacity goes with it
    assert c["events"] == 15
    text = report(["info", path]).stdout
    assert "redacted:    " + " ".join(rules) in text
    assert "password string (string, 16 bytes), redacted: hash" in text or \
        "password string (string, 8 bytes), redacted: hash" in text
    # hashed values group as the originals did: the secret 3 times, the other twice
    for by, func in (("password", "main.login"), ("c.Token", "main.connect")):
        groups = {k: v for k, v in stats_groups(path, by).items() if k[0] == func}
        assert sorted(groups.values()) == [2, 3], groups
        assert all(k[1].startswith('"redacted:') for k in groups), groups
    # dropped values show as such, in text and JSON
    sends = [l for l in report([path]).stdout.splitlines() if "main.send" in l]
    assert len(sends) == 5 and all("data=<redacted>" in l for l in sends), sends
    js = [json.loads(l) for l in report(["--format", "jsonl", path]).stdout.splitlines()]
    assert all(e["args"]["data"] == "<redacted>" for e in js if e["func"] == "main.send")
    assert all(e["args"]["user"] == "alice" for e in js if e["func"] == "main.login")


def test_plain_recording_holds_the_secret(plain):
    """The search finds the secret where nothing redacts it: in values
    (EVENTS frames), the binary's path and the task names."""
    found = secret_found(plain)
    assert any(w.startswith("block") for w, _ in found), found
    types = {int(w.split()[-1]) for w, _ in found if w.startswith("block")}
    assert {2, 4, 7, 9} <= types, found   # BINARY and MAPPING paths, values, PROCESS names
    assert "redacted" not in info(plain)["host"]


def test_redacted_at_record_time(secrets, tool, tmp_path):
    path = str(tmp_path / "red.gtr")
    record(["-o", path, *redact_args(RULES), *PROBES, *run_args(secrets)])
    check_redacted(tool, path, RULES)


def test_redacted_stream(secrets, tool, tmp_path):
    """A trace streamed to a pipe (-o -) goes through the same writer."""
    p = subprocess.run([RECORD, "-o", "-", *redact_args(RULES), *PROBES, *run_args(secrets)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    path = tmp_path / "stream.gtr"
    path.write_bytes(p.stdout)
    check_redacted(tool, str(path), RULES)


def test_redacted_afterwards(plain, tool, tmp_path):
    out = str(tmp_path / "red.gtr")
    p = report(["redact", "-w", out, *redact_args(RULES), plain])
    assert "15 events written to %s, redacted by 6 rules" % out in p.stderr
    assert "warning" not in p.stderr, p.stderr
    check_redacted(tool, out, RULES)
    # the copy of a copy keeps what was done, and adds the new rules
    again = str(tmp_path / "again.gtr")
    report(["redact", "-w", again, "--redact", "@strings", out])
    c = assert_python_agrees(tool, again)
    assert c["host"]["redacted"] == " ".join(RULES) + " @strings"
    args = {(p["func"], a["name"]): a.get("redacted") for p in c["probes"] for a in p["args"]}
    assert args[("main.send", "data")] == "drop" and args[("main.login", "user")] == "hash"
    assert secret_found(again) == []


def test_rule_that_covers_nothing_is_named(plain, tmp_path):
    """A misspelt rule does not pass for a redaction: each rule that
    covered no value is named, in redact, merge and -w alike."""
    out = str(tmp_path / "o.gtr")
    for cmd in (["redact", "-w", out], ["merge", "-w", out], ["-w", out]):
        p = report([*cmd, "--force", "--redact", "Password", "--redact", "password",
                    "--redact", "main.nosuch:*", "--redact", "@host", plain])
        warned = [l for l in p.stderr.splitlines() if "covered nothing" in l]
        assert warned == [
            "gotrace-report: warning: --redact %s covered nothing written to %s: no probe "
            "there has a value it names (gotrace-report info lists the names)" % (r, out)
            for r in ("Password", "main.nosuch:*")], p.stderr


def test_merge_redacted(plain, secrets, tool, tmp_path):
    """merge --redact: two recordings merged into one redacted trace."""
    second = str(tmp_path / "second.gtr")
    record(["-o", second, *PROBES, *run_args(secrets)])
    out = str(tmp_path / "merged.gtr")
    p = report(["merge", "-w", out, *redact_args(["@strings", "@comm", "@paths", "@host"]),
                plain, second])
    assert "30 events written to %s, redacted by 4 rules" % out in p.stderr
    assert secret_found(out) == []
    c = assert_python_agrees(tool, out)
    assert c["events"] == 30 and c["host"]["redacted"] == "@strings @comm @paths @host"
    logins = [json.loads(l) for l in report(["--format", "jsonl", out]).stdout.splitlines()
              if '"main.login"' in l]
    # one key for both inputs: equal passwords hash alike across them
    assert len(logins) == 10 and len({e["args"]["password"] for e in logins}) == 2
    # --redact-key without a rule is a usage error
    p = report(["merge", "-w", str(tmp_path / "x.gtr"), "--redact-key", "k", plain], check=False)
    assert p.returncode == 2 and "--redact-key goes with --redact RULE" in p.stderr


def test_redacted_with_rotation(secrets, tool, tmp_path):
    """With -C, every file of the rotation is written by a redacting
    writer: none holds the secret, each reads whole and records the rules,
    and together they hold every call."""
    repeat = 2000
    path = str(tmp_path / "rot.gtr")
    record(["-o", path, "-C", "16K", "--flush-interval", "0.05", *redact_args(RULES),
            *PROBES, *run_args(secrets), str(repeat)])
    files = sorted(glob.glob(path + "*"), key=lambda f: int(f[len(path):] or 0))
    assert len(files) >= 3, files
    events = lost = 0
    for i, f in enumerate(files):
        assert secret_found(f) == [], f
        c = assert_python_agrees(tool, f)
        assert c["host"]["redacted"] == " ".join(RULES)
        assert all(b["path"].startswith("redacted:") for b in c["binaries"])
        # a file is rotated once it holds events; the last may hold none
        # (the rotation came after the last call)
        assert c["events"] > 0 or i == len(files) - 1, f
        events += c["events"]
        lost += c["drops"]
    assert events + lost == 15 * repeat and events > 0


def test_selection_redacted(plain, tool, tmp_path):
    """-w with --redact: the selection is made on the values as recorded
    (a filter may name the secret), and what is written is redacted."""
    out = str(tmp_path / "sel.gtr")
    report(["-w", out, *redact_args(["@strings", "@comm", "@paths"]),
            "-f", 'func == "main.login" && password == "%s"' % SECRET.decode(), plain])
    assert secret_found(out) == []
    c = assert_python_agrees(tool, out)
    assert c["events"] == 3 and c["host"]["redacted"] == "@strings @comm @paths"
    logins = [json.loads(l) for l in report(["--format", "jsonl", out]).stdout.splitlines()]
    assert len({e["args"]["password"] for e in logins}) == 1


def test_strings_class_and_key_file(plain, tool, tmp_path):
    """@strings hashes every string and []byte; with one key file, two
    redactions hash alike, and without one each run has its own key."""
    key = tmp_path / "key"
    key.write_text("00112233445566778899aabbccddeeff" * 2 + "\n")
    outs = []
    for n, extra in enumerate((["--redact-key", str(key)], ["--redact-key", str(key)], [])):
        out = str(tmp_path / ("s%d.gtr" % n))
        report(["redact", "-w", out, "--redact", "@strings", "--redact", "@comm",
                "--redact", "@paths", *extra, plain])
        assert secret_found(out) == []
        assert_python_agrees(tool, out)
        outs.append(report(["--format", "jsonl", out]).stdout)
    assert outs[0] == outs[1]
    assert outs[0] != outs[2]
    first = json.loads(outs[0].splitlines()[0])
    assert first["args"]["user"].startswith("redacted:")


@pytest.mark.parametrize("rule,col,what", [
    ("x=foo", 3, "unknown action"),
    ("@secret", 1, "unknown class"),
    ("main.*:@host", 1, "@host, @paths and @comm are not per function"),
    (":password", 1, "empty function glob"),
    ("main.f:", 8, "no target"),
    ("a b", 2, "white space"),
])
def test_rule_errors(plain, tmp_path, rule, col, what):
    """A bad rule is a usage error naming the rule, the column and what is
    expected; nothing is written."""
    out = str(tmp_path / "bad.gtr")
    p = subprocess.run([REPORT, "redact", "-w", out, "--redact", rule, plain],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert "rule '%s', column %d: %s" % (rule, col, what) in p.stderr
    assert not os.path.exists(out)


def test_bad_key_file(plain, tmp_path):
    key = tmp_path / "key"
    key.write_text("not a key\n")
    out = str(tmp_path / "bad.gtr")
    p = subprocess.run([REPORT, "redact", "-w", out, "--redact", "@strings",
                        "--redact-key", str(key), plain], capture_output=True, text=True)
    assert p.returncode == 2
    assert "expected 32 raw bytes or 64 hex digits" in p.stderr and str(key) in p.stderr
    assert not os.path.exists(out)
