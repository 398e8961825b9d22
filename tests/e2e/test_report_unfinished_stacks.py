"""gotrace-report: calls that leave by a recovered panic (unwound),
calls of processes that exited, recorded stacks (-U), interface arguments,
files the recorder did not close, and option errors. On synthetic files
written with libgtr's writer (a generator embedded below) and on real
recordings of a Go program that panics, recovers and calls runtime.Goexit."""
import csv
import io
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import RECORD, REPORT, ROOT, record, report, wait_for

T0 = 1000000000000        # monotonic ns of the first event
US = 1000

GEN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gtr.h"

#define T0 1000000000000ull
#define US 1000ull
static struct gtr_writer *w;
static struct gtr_event ev;

static void ck(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "gen: %s: %d %s\n", what, rc, gtr_writer_error(w));
		exit(1);
	}
}

static void probe(uint32_t id, enum gtr_kind kind, const char *func, int nargs,
		  const char *const *names, const char *const *tnames, const enum gtr_type *types)
{
	struct gtr_probe p;
	memset(&p, 0, sizeof(p));
	p.id = id;
	p.binary_id = 1;
	p.kind = kind;
	p.func = p.spec = (char *)func;
	p.fmt = (char *)"";
	p.nargs = (uint32_t)nargs;
	for (int i = 0; i < nargs; i++) {
		p.args[i].name = (char *)names[i];
		p.args[i].type_name = (char *)tnames[i];
		p.args[i].type = types[i];
		p.args[i].size = types[i] == GTR_TYPE_INT ? 8 : 16;
	}
	ck(gtr_writer_probe(w, &p), "probe");
}

static void begin(uint64_t ts, uint32_t probe_id, enum gtr_kind kind, uint32_t pid,
		  uint32_t tid, uint64_t goid)
{
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.probe_id = probe_id;
	ev.kind = kind;
	ev.pid = pid;
	ev.tid = tid;
	ev.goid = goid;
	ev.cpu = 0;
}

static void vint(int64_t v)
{
	ev.vals[ev.nvals].kind = GTR_VAL_INT;
	ev.vals[ev.nvals++].v.i = v;
}

static void vstr(const char *s)
{
	ev.vals[ev.nvals].kind = GTR_VAL_STR;
	ev.vals[ev.nvals].v.s.data = (const uint8_t *)s;
	ev.vals[ev.nvals].v.s.len = (uint32_t)strlen(s);
	ev.vals[ev.nvals++].v.s.full_len = strlen(s);
}

static void emit(const uint64_t *stack, uint32_t n)
{
	ev.stack = stack;
	ev.nstack = n;
	ck(gtr_writer_event(w, &ev), "event");
}

int main(int argc, char **argv)
{
	static const char *const n1[] = { "n" }, *const r1[] = { "r" }, *const rr[] = { "~r0" };
	static const char *const tint[] = { "int" };
	static const enum gtr_type ti[] = { GTR_TYPE_INT };
	static const char *const cn[] = { "e", "v", "s" };
	static const char *const ctn[] = { "error", "interface {}", "string" };
	static const enum gtr_type ct[] = { GTR_TYPE_IFACE, GTR_TYPE_IFACE, GTR_TYPE_STRING };
	static const enum gtr_type ot[] = { GTR_TYPE_STRING };   /* before GTR_TYPE_IFACE */
	static const uint64_t st_safe1[] = { 0x401100, 0x401050, 0x401201 };
	static const uint64_t st_boom1[] = { 0x401180, 0x401140, 0x401050, 0x401201 };
	static const uint64_t st_safe3[] = { 0x401100, 0x401060, 0x401201 };
	static const uint64_t st_boom3[] = { 0x401180, 0x401140, 0x401060, 0x401201 };
	static const uint64_t st_boom4[] = { 0x401180, 0x7f0000001234 };
	struct gtr_host host = { 0 };
	struct gtr_binary bin = { 0 };
	char err[256];

	if (argc != 3)
		return 2;
	host.hostname = (char *)"gen";
	host.kernel = (char *)"6.1.0";
	host.machine = (char *)"x86_64";
	host.recorder = (char *)"gen";
	host.start_mono_ns = T0;
	host.start_realtime_ns = 1714564800000000000ull;
	host.start_boottime_ns = T0;
	w = gtr_writer_create(argv[2], GTR_W_FORCE, &host, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "gen: %s\n", err);
		return 1;
	}
	bin.id = 1;
	bin.path = (char *)"/srv/app";
	bin.build_id = bin.go_build_id = (char *)"";
	bin.go_version = (char *)"go1.21.0";
	bin.compiler = (char *)"gc";
	bin.arch = (char *)"x86-64";
	bin.abi = (char *)"ABIInternal";
	ck(gtr_writer_binary(w, &bin), "binary");
	const struct gtr_symbol syms[] = {
		{ 0x401000, 0x100, "main.main" }, { 0x401100, 0x80, "main.safe" },
		{ 0x401180, 0x80, "main.boom" }, { 0x401200, 0x10, "runtime.goexit" },
	};
	ck(gtr_writer_symbols(w, 1, syms, 4), "symbols");
	const struct gtr_mapping m = { .ts_ns = T0, .pid = 100, .start = 0x401000, .end = 0x402000,
				       .binary_id = 1, .path = "/srv/app", .vaddr = 0x401000 };
	ck(gtr_writer_mapping(w, &m), "mapping");
	probe(1, GTR_KIND_ENTRY, "main.safe", 1, n1, tint, ti);
	probe(2, GTR_KIND_RETURN, "main.safe", 1, r1, tint, ti);
	probe(3, GTR_KIND_ENTRY, "main.boom", 1, n1, tint, ti);
	probe(4, GTR_KIND_RETURN, "main.boom", 1, rr, tint, ti);
	probe(5, GTR_KIND_ENTRY, "main.check", 3, cn, ctn, ct);
	probe(6, GTR_KIND_ENTRY, "main.oldcheck", 1, cn, ctn, ot);
	ck(gtr_writer_task(w, 100, 100, "app"), "task");
	ck(gtr_writer_task(w, 100, 101, "app"), "task");
	ck(gtr_writer_task(w, 200, 200, "worker"), "task");

	if (!strcmp(argv[1], "edge")) {
		/* values a consumer must get exactly: CSV and JSON specials,
		 * a non-UTF-8 byte, 64-bit extremes */
		static const char *const en[] = { "s", "u", "i" };
		static const char *const etn[] = { "string", "uint64", "int64" };
		static const enum gtr_type et[] = { GTR_TYPE_STRING, GTR_TYPE_UINT, GTR_TYPE_INT };
		probe(8, GTR_KIND_ENTRY, "main.edge", 3, en, etn, et);
		begin(T0, 8, GTR_KIND_ENTRY, 100, 100, 1);
		vstr("a,b\"c\nd\xff\\e");
		ev.vals[ev.nvals].kind = GTR_VAL_UINT;
		ev.vals[ev.nvals++].v.u = UINT64_MAX;
		vint(INT64_MIN);
		emit(NULL, 0);
		begin(T0 + US, 8, GTR_KIND_ENTRY, 100, 100, 1);
		vstr("plain");
		ev.vals[ev.nvals].kind = GTR_VAL_UINT;
		ev.vals[ev.nvals++].v.u = (1ull << 53) + 1;
		vint(INT64_MAX);
		emit(NULL, 0);
		ck(gtr_writer_close(w, err, sizeof(err)), "close");
		return 0;
	}
	if (!strcmp(argv[1], "maxid")) {
		/* probe id 2^32-1 is as valid as any: events of it around a
		 * probe described mid-file */
		probe(UINT32_MAX, GTR_KIND_ENTRY, "main.max", 1, n1, tint, ti);
		begin(T0, UINT32_MAX, GTR_KIND_ENTRY, 100, 100, 1); vint(42); emit(NULL, 0);
		begin(T0 + US, 1, GTR_KIND_ENTRY, 100, 100, 1); vint(1); emit(NULL, 0);
		probe(7, GTR_KIND_ENTRY, "main.seven", 1, n1, tint, ti);
		begin(T0 + 2 * US, UINT32_MAX, GTR_KIND_ENTRY, 100, 100, 1); vint(42); emit(NULL, 0);
		begin(T0 + 3 * US, 1, GTR_KIND_ENTRY, 100, 100, 1); vint(1); emit(NULL, 0);
		ck(gtr_writer_close(w, err, sizeof(err)), "close");
		return 0;
	}
	if (!strcmp(argv[1], "header")) {
		gtr_writer_flush(w);
		if (truncate(argv[2], 16))
			return 1;
		_exit(0);
	}
	begin(T0, 1, GTR_KIND_ENTRY, 100, 100, 1); vint(1); emit(st_safe1, 3);
	begin(T0 + 10 * US, 3, GTR_KIND_ENTRY, 100, 100, 1); vint(1); emit(st_boom1, 4);
	begin(T0 + 20 * US, 4, GTR_KIND_RETURN, 100, 100, 1); vint(2); emit(NULL, 0);
	begin(T0 + 30 * US, 2, GTR_KIND_RETURN, 100, 100, 1); vint(2); emit(NULL, 0);
	/* safe(3) calls boom(3), which panics; safe recovers and returns -1 */
	begin(T0 + 100 * US, 1, GTR_KIND_ENTRY, 100, 100, 1); vint(3); emit(st_safe3, 3);
	begin(T0 + 110 * US, 3, GTR_KIND_ENTRY, 100, 100, 1); vint(3); emit(st_boom3, 4);
	begin(T0 + 150 * US, 2, GTR_KIND_RETURN, 100, 100, 1); vint(-1); emit(NULL, 0);
	begin(T0 + 200 * US, 5, GTR_KIND_ENTRY, 100, 100, 1);
	vstr("*errors.errorString"); vstr("<nil>"); vstr("<nil>"); emit(NULL, 0);
	begin(T0 + 210 * US, 6, GTR_KIND_ENTRY, 100, 100, 1); vstr("<nil>"); emit(NULL, 0);
	/* boom(9) on goroutine 2 never returns: still open at the end */
	begin(T0 + 300 * US, 3, GTR_KIND_ENTRY, 100, 101, 2); vint(9); emit(NULL, 0);
	/* boom(5) of process 200, which exits while it is open */
	begin(T0 + 400 * US, 3, GTR_KIND_ENTRY, 200, 200, 1); vint(5); emit(NULL, 0);
	const struct gtr_process pr = { .ts_ns = T0 + 450 * US, .pid = 200, .binary_id = 1,
					.comm = "worker", .exited = true, .exit_code = 2 };
	ck(gtr_writer_process(w, &pr), "process");
	begin(T0 + 500 * US, 3, GTR_KIND_ENTRY, 100, 100, 1); vint(4); emit(st_boom4, 2);
	begin(T0 + 510 * US, 4, GTR_KIND_RETURN, 100, 100, 1); vint(8); emit(NULL, 0);
	if (!strcmp(argv[1], "killed")) {
		ck(gtr_writer_flush(w), "flush");
		_exit(0);    /* as kill -9 would: no summary */
	}
	ck(gtr_writer_close(w, err, sizeof(err)), "close");
	return 0;
}
"""


@pytest.fixture(scope="session")
def gen(tmp_path_factory):
    d = tmp_path_factory.mktemp("gen2")
    src = d / "gen.c"
    src.write_text(GEN_C)
    out = str(d / "gen")
    fdir = os.path.join(ROOT, "build", "format")
    objs = [os.path.join(fdir, f) for f in sorted(os.listdir(fdir)) if f.endswith(".o")]
    subprocess.run(["gcc", "-O1", "-std=gnu11", "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "format"),
                    "-o", out, str(src), *objs, "-lcbor", "-lzstd", "-pthread"], check=True)

    def make(mode):
        path = str(d / (mode + ".gtr"))
        subprocess.run([out, mode, path], check=True)
        return path
    return make


@pytest.fixture(scope="session")
def mix(gen):
    return gen("full")


def body(args):
    return report(args).stdout.splitlines()[1:]


# ------------------------------------------------------------ synthetic

def test_calls_view_statuses(mix):
    p = report(["--calls", mix])
    rows = [l for l in p.stdout.splitlines()[1:] if not l.startswith("        ")]
    cols = [r.split(None, 4) for r in rows]
    assert [(c[3], c[4]) for c in cols] == [
        ("main.boom", "10.000us     n=1 -> ~r0=2"),
        ("main.safe", "30.000us     n=1 -> r=2"),
        ("main.boom", "unwound      n=3 -> ?"),         # shown where it ended: at safe's return
        ("main.safe", "50.000us     n=3 -> r=-1"),
        ("main.check", "-            e=*errors.errorString v=<nil> s=\"<nil>\"(len=5)"),
        ("main.oldcheck", "-            e=<nil>"),
        ("main.boom", "10.000us     n=4 -> ~r0=8"),
        ("main.boom", "open         n=9 -> ?"),         # still running at the end
        ("main.boom", "exited       n=5 -> ?"),         # its process exited first
    ]
    assert cols[8][0] == "200" and cols[7][1] == "101"
    assert p.stderr.splitlines() == [
        "gotrace-report: note: 4 call(s) paired; unpaired: 0 return(s) without entry, "
        "3 entries without return (1 unwound by a panic: closed over by an "
        "outer return, 1 in a process that exited, 1 still open at the end), "
        "0 entries not tracked (--max-depth/--max-goroutines)"]
    # a filter on the entry's arguments selects them too
    out = body(["--calls", "-f", "n == 3", mix])
    assert [l.split()[4] for l in out if not l.startswith("        ")] == ["unwound", "50.000us"]
    out = [l for l in body(["--calls", "--limit", "3", mix]) if not l.startswith("        ")]
    assert [l.split()[4] for l in out] == ["10.000us", "30.000us", "unwound"]


def test_calls_view_prints_the_entrys_stack(mix):
    out = report(["--calls", mix]).stdout.splitlines()
    i = out.index([l for l in out if "unwound" in l][0])
    assert out[i + 1:i + 5] == ["        main.boom+0x0", "        main.safe+0x40",
                                "        main.main+0x60", "        runtime.goexit+0x1"]
    assert "main.safe" in out[i + 5]


def test_jsonl_calls_status(mix):
    cs = [json.loads(l) for l in report(["--format", "jsonl", "--calls", mix]).stdout.splitlines()]
    st = [(c["func"], c["status"], c["goargs"]) for c in cs]
    assert st == [("main.boom", "returned", [1]), ("main.safe", "returned", [1]),
                  ("main.boom", "unwound", [3]), ("main.safe", "returned", [3]),
                  ("main.check", "no_return_probe", ["*errors.errorString", "<nil>", "<nil>"]),
                  ("main.oldcheck", "no_return_probe", ["<nil>"]),
                  ("main.boom", "returned", [4]), ("main.boom", "open", [9]),
                  ("main.boom", "exited", [5])]
    unw = cs[2]
    assert unw["latency_ns"] is None and unw["ts_ns"] == T0 + 110 * US and unw["rets"] == {}
    assert unw["stack"] == ["main.boom+0x0", "main.safe+0x40", "main.main+0x60",
                            "runtime.goexit+0x1"]
    assert cs[0]["stack"][0] == "main.boom+0x0"       # the entry's, not the return's
    assert "stack" not in cs[1] or cs[1]["stack"][0] == "main.safe+0x0"
    assert "stack" not in cs[7]


def test_chrome_slices_of_unfinished_calls(mix):
    doc = json.loads(report(["--format", "chrome", mix]).stdout)
    xs = {(e["name"], e["args"]["goargs"][0]): e for e in doc["traceEvents"]
          if e["ph"] == "X"}
    unw = xs[("main.boom", 3)]
    safe3 = xs[("main.safe", 3)]
    assert unw["args"]["status"] == "unwound"
    assert (unw["ts"], unw["dur"]) == (110.0, 40.0)      # until safe's return
    assert unw["ts"] + unw["dur"] == safe3["ts"] + safe3["dur"]
    assert unw["args"]["stack"][1] == "main.safe+0x40"
    ex = xs[("main.boom", 5)]
    assert ex["args"]["status"] == "exited" and (ex["ts"], ex["dur"]) == (400.0, 50.0)
    op = xs[("main.boom", 9)]
    assert op["args"]["status"] == "open" and (op["ts"], op["dur"]) == (300.0, 210.0)
    assert "status" not in safe3["args"] and "status" not in xs[("main.boom", 1)]["args"]


def test_text_stacks_like_trace_py_U(mix):
    out = report([mix]).stdout.splitlines()
    assert out[1].split()[3:] == ["main.safe", "n=1"]
    assert out[2:5] == ["        main.safe+0x0", "        main.main+0x50", "        runtime.goexit+0x1"]
    assert out[5].split()[3:] == ["main.boom", "n=1"]
    assert out[6:10] == ["        main.boom+0x0", "        main.safe+0x40",
                         "        main.main+0x50", "        runtime.goexit+0x1"]
    assert out[10].split()[3:] == ["main.boom", "<-", "(10.000us)", "~r0=2"]   # no stack
    b4 = out.index([l for l in out if l.endswith("main.boom        n=4")][0])
    assert out[b4 + 1:b4 + 4] == ["        main.boom+0x0", "        0x7f0000001234",
                                  out[b4 + 3]]
    assert not out[b4 + 3].startswith("        ")
    evs = [json.loads(l) for l in report(["--format", "jsonl", mix]).stdout.splitlines()]
    assert evs[0]["stack"] == ["main.safe+0x0", "main.main+0x50", "runtime.goexit+0x1"]
    assert "stack" not in evs[2]


def test_folded_uses_recorded_stacks(mix):
    out = report(["--format", "folded", mix]).stdout.splitlines()
    got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in out}
    assert got == {
        "runtime.goexit;main.main;main.safe;main.boom": 10 * US,
        # safe(1): 30us less boom's 10us; safe(3): 50us (boom(3) did not return)
        "runtime.goexit;main.main;main.safe": 20 * US + 50 * US,
        "0x7f0000001234;main.boom": 10 * US,
    }


def test_interfaces(mix):
    rows = body(["-f", "glob(func, \"main.*check\")", mix])
    assert rows[0].split(None, 4)[4] == "e=*errors.errorString v=<nil> s=\"<nil>\"(len=5)"
    assert rows[1].split(None, 4)[4] == "e=<nil>"
    ev = json.loads(report(["--format", "jsonl", "-f", "func == \"main.check\"", mix]).stdout)
    assert ev["args"] == {"e": "*errors.errorString", "v": "<nil>", "s": "<nil>"}

    def count(f):
        return int(report(["--count", "-f", f, mix]).stdout)
    assert count("e == \"<nil>\"") == 1
    assert count("e =~ \"errors\"") == 1
    assert count("v == \"<nil>\" && s == \"<nil>\"") == 1
    p = report(["-f", "e == 1", mix], check=False)
    assert p.returncode == 2 and "cannot compare 'e' (a string in main.check" in p.stderr


def test_file_not_closed_warns(gen):
    path = gen("killed")
    p = report([path])
    assert p.returncode == 0
    assert len(p.stdout.splitlines()) > 10
    assert ("gotrace-report: warning: %s was not closed by gotrace-record (killed or crashed); "
            "read up to its last complete frame" % path) in p.stderr.splitlines()
    for args in (["--count"], ["stats"], ["--format", "chrome"]):
        p = report(args + [path])
        assert "was not closed" in p.stderr, args
    # a closed file says nothing of the kind, nor does a run stopped by --limit
    assert "warning" not in report([gen("full")]).stderr
    assert "warning" not in report(["--limit", "2", path]).stderr


def test_header_only_file_holds_nothing(gen):
    path = gen("header")
    assert os.path.getsize(path) == 16
    p = report([path])
    assert p.returncode == 0
    assert p.stdout.splitlines() == ["PID     TID     COMM            FUNC             -"]
    assert p.stderr.splitlines() == [
        "gotrace-report: warning: %s holds nothing but the file header: gotrace-record was "
        "stopped (killed or crashed) before it wrote anything" % path]
    assert report(["--count", path]).stdout == "0\n"


def test_note_only_when_something_is_unpaired(mix):
    assert "note:" in report(["--format", "jsonl", mix]).stderr
    assert "note:" in report(["stats", mix]).stderr
    assert "note:" not in report(["--count", mix]).stderr
    assert "note:" not in report(["--count", "-f", "n == 3", mix]).stderr
    assert "note:" not in report(["--limit", "1", mix]).stderr


# ------------------------------------------------------------ options

def test_option_errors(mix):
    p = report(["--by", "pid", mix], check=False)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == \
        "gotrace-report: --by belongs to 'gotrace-report stats' (gotrace-report stats --by FIELD FILE)"
    p = report(["--no-hist", mix], check=False)
    assert p.returncode == 2 and p.stderr.startswith("gotrace-report: --no-hist belongs to 'gotrace-report stats'")
    p = report(["stats", "--format", "jsonl", mix], check=False)
    assert p.returncode == 2 and p.stderr.startswith("gotrace-report: --format belongs to 'gotrace-report print'")
    p = report(["--frobnicate", mix], check=False)         # argv[0] is a full path here
    assert p.returncode == 2 and p.stderr.startswith("gotrace-report: unrecognized option '--frobnicate'")
    p = report(["--limit", "0", mix], check=False)
    assert p.returncode == 2 and "invalid --limit '0'" in p.stderr
    for since, until in (("+6s", "+5s"), ("2024-05-01T12:00:01Z", "2024-05-01T12:00:00Z"),
                         ("+1s", "12:00:00.5")):
        p = report(["--since", since, "--until", until, mix], check=False)
        assert p.returncode == 2, (since, until)
        assert p.stderr == "gotrace-report: --since %s is later than --until %s: no event can match\n" \
            % (since, until)
        assert p.stdout == ""
    assert int(report(["--count", "--since", "+100us", "--until", "+100us", mix]).stdout) == 1


def test_help_names_the_subcommands():
    out = report(["--help"]).stdout
    assert "gotrace-report stats [OPTION...] FILE" in out
    assert "gotrace-report info [--json] FILE" in out
    out = report(["stats", "--help"]).stdout
    assert "--by=FIELD" in out and "--format" not in out
    man = open(os.path.join(ROOT, "man", "gotrace-report.1")).read()
    assert ".B gotrace-report info" in man and "unwound" in man


def test_stats_by_integer_sorts_numerically(tmp_path):
    gen_c = os.path.join(ROOT, "tests/bench/report_gen.c")
    out = str(tmp_path / "rg")
    fdir = os.path.join(ROOT, "build", "format")
    objs = [os.path.join(fdir, f) for f in sorted(os.listdir(fdir)) if f.endswith(".o")]
    subprocess.run(["gcc", "-O1", "-std=gnu11", "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "format"),
                    "-o", out, gen_c, *objs, "-lcbor", "-lzstd"], check=True)
    path = str(tmp_path / "c.gtr")
    subprocess.run([out, "calls", path, "20"], check=True)
    rows = report(["stats", "--no-hist", "--by", "a", "-f", "func == \"main.add\"", path]).stdout
    vals = [r.split()[1] for r in rows.splitlines()[1:]]
    assert vals == ["-5"] + [str(i) for i in range(20)] + ["-"]


# ------------------------------------------------------------ real programs

PANICS_GO = r"""
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

//go:noinline
func boom(n int) int {
	if n == 3 {
		panic("boom")
	}
	return n * 2
}

//go:noinline
func safe(n int) (r int) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return boom(n)
}

//go:noinline
func quit(n int) int {
	runtime.Goexit()
	return n
}

//go:noinline
func spawn(n int) int {
	done := make(chan bool)
	go func() {
		defer close(done)
		quit(n)
	}()
	<-done
	return n
}

//go:noinline
func check(e error, v any) int {
	if e == nil {
		return 0
	}
	return 1
}

//go:noinline
func rec(n int) int {
	if n == 0 {
		return 0
	}
	return rec(n-1) + 1
}

func main() {
	s := 0
	for i := 1; i <= 4; i++ {
		s += safe(i)
	}
	s += spawn(7)
	s += check(errors.New("x"), 5)
	s += check(nil, nil)
	s += rec(2)
	fmt.Println(s)
	os.Exit(0)
}
"""


@pytest.fixture(scope="module")
def panics(gobuild, tmp_path_factory):
    src = tmp_path_factory.mktemp("panics") / "panics.go"
    src.write_text(PANICS_GO)
    return gobuild(str(src), "panics")


def test_real_panic_is_unwound(panics, tmp_path):
    trace = str(tmp_path / "p.gtr")
    p = record(["-q", "-o", trace, "main.safe", "r:main.safe", "main.boom", "r:main.boom",
                "--", panics])
    assert p.stdout.strip() == "23"
    rows = [l.split() for l in report(["--calls", trace]).stdout.splitlines()[1:]]
    assert [(r[3], r[5], r[4] if r[4] in ("unwound", "open") else "t") for r in rows] == [
        ("main.boom", "n=1", "t"), ("main.safe", "n=1", "t"),
        ("main.boom", "n=2", "t"), ("main.safe", "n=2", "t"),
        ("main.boom", "n=3", "unwound"), ("main.safe", "n=3", "t"),
        ("main.boom", "n=4", "t"), ("main.safe", "n=4", "t")]
    assert rows[5][-1] == "r=-1"
    doc = json.loads(report(["--format", "chrome", trace]).stdout)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 8
    unw = [e for e in xs if e["args"].get("status") == "unwound"]
    assert len(unw) == 1 and unw[0]["args"]["args"] == {"n": 3}
    safe3 = [e for e in xs if e["name"] == "main.safe" and e["args"]["args"] == {"n": 3}][0]
    assert abs(unw[0]["ts"] + unw[0]["dur"] - (safe3["ts"] + safe3["dur"])) < 0.002
    assert "(1 unwound by a panic: closed over by an outer return, 0 in a process that exited, " \
        "0 still open at the end)" in report([trace]).stderr
    cs = [json.loads(l) for l in report(["--format", "jsonl", "--calls", trace]).stdout.splitlines()]
    assert [c["status"] for c in cs].count("unwound") == 1
    assert [c["status"] for c in cs].count("returned") == 7


def test_real_goexit_leaves_its_calls_open(panics, tmp_path):
    trace = str(tmp_path / "g.gtr")
    record(["-q", "-o", trace, "main.quit", "r:main.quit", "main.spawn", "r:main.spawn",
            "--", panics])
    rows = [l.split() for l in report(["--calls", trace]).stdout.splitlines()[1:]]
    # runtime.Goexit ends quit's goroutine: nothing there returns again to close it over;
    # "exited" once the recorder records the process's exit
    quit = [r for r in rows if r[3] == "main.quit"]
    assert len(quit) == 1 and quit[0][4] in ("open", "exited") and quit[0][5] == "n=7"
    assert [r[4].endswith("s") for r in rows if r[3] == "main.spawn"] == [True]


def test_real_stacks_and_interfaces(panics, tmp_path):
    trace = str(tmp_path / "s.gtr")
    record(["-q", "-U", "-o", trace, "main.rec", "r:main.rec", "main.check", "--", panics])
    out = report([trace]).stdout.splitlines()
    checks = [i for i, l in enumerate(out) if " main.check " in l]
    assert out[checks[0]].split(None, 4)[4] == "e=*errors.errorString v=int"
    assert out[checks[1]].split(None, 4)[4] == "e=<nil> v=<nil>"
    frames = out[checks[0] + 1:checks[1]]
    assert frames[0].startswith("        main.check+0x")
    assert frames[1].startswith("        main.main+0x")
    assert "        runtime.goexit+0x1" in frames
    evs = [json.loads(l) for l in report(["--format", "jsonl", trace]).stdout.splitlines()]
    assert all(e["stack"][0].startswith(e["func"] + "+0x") for e in evs)
    assert evs[0]["args"] == {"e": "*errors.errorString", "v": "int"}
    assert report(["--count", "-f", "e == \"<nil>\"", trace]).stdout == "1\n"
    folded = report(["--format", "folded", trace]).stdout.splitlines()
    paths = sorted(l.rsplit(" ", 1)[0] for l in folded)
    assert "note:" not in report([trace]).stderr          # every call paired
    assert paths == ["runtime.goexit;runtime.main;main.main;main.rec",
                     "runtime.goexit;runtime.main;main.main;main.rec;main.rec",
                     "runtime.goexit;runtime.main;main.main;main.rec;main.rec;main.rec"]


def test_real_kill_9_warns(tmp_path, procs, gobuild):
    loop_bin = gobuild("tests/fixtures/loop/main.go", "loop")
    target = procs([loop_bin], stdout=subprocess.PIPE, text=True)
    assert target.p.stdout.readline().startswith("ready")
    trace = str(tmp_path / "k.gtr")
    rec = procs([RECORD, "-q", "-o", trace, "-p", str(target.pid), "main.add"],
                stderr=subprocess.DEVNULL)

    def n():
        r = subprocess.run([REPORT, "--count", trace], capture_output=True, text=True)
        return r.returncode == 0 and int(r.stdout or 0) >= 20
    assert wait_for(n, timeout=30)
    rec.p.send_signal(signal.SIGKILL)
    rec.p.wait()
    p = report([trace])
    assert p.returncode == 0 and len(p.stdout.splitlines()) > 20
    assert "%s was not closed by gotrace-record (killed or crashed)" % trace in p.stderr


def test_largest_probe_id(gen):
    path = gen("maxid")
    assert [l.split()[3:] for l in body([path])] == [
        ["main.max", "n=42"], ["main.safe", "n=1"], ["main.max", "n=42"], ["main.safe", "n=1"]]
    assert report(["--count", "-f", "n == 42", path]).stdout == "2\n"


def test_consumers_read_exact_values(gen):
    """CSV through Python's csv module and JSON Lines through its json
    module: quotes, commas, newlines, a non-UTF-8 byte and 64-bit extremes
    come back exactly as spec/OUTPUT.md describes them."""
    path = gen("edge")
    raw = subprocess.run([REPORT, "--format", "csv", "-f", "func == \"main.edge\"", path],
                         capture_output=True, check=True).stdout
    raw.decode("utf-8")                            # valid UTF-8 throughout
    rows = list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
    assert len(rows) == 2
    # text escaping (newline, backslash, the invalid byte), then RFC 4180 quoting
    assert rows[0]["v1"] == 'a,b"c\\nd\\xff\\\\e'
    assert rows[0]["v2"] == "18446744073709551615" and rows[0]["v3"] == "-9223372036854775808"
    assert rows[1]["v1"] == "plain" and rows[1]["v2"] == str((1 << 53) + 1)
    assert b'"a,b""c' in raw                         # the field was quoted, its quote doubled

    out = report(["--format", "jsonl", "-f", "func == \"main.edge\"", path]).stdout
    evs = [json.loads(l) for l in out.splitlines()]
    assert evs[0]["args"]["s"] == 'a,b"c\nd\u00ff\\e'   # invalid byte -> \u00ff
    assert evs[0]["args"]["u"] == 18446744073709551615     # exact, not a float
    assert evs[0]["args"]["i"] == -9223372036854775808
    assert evs[1]["args"]["u"] == (1 << 53) + 1
    assert '"u":9007199254740993' in out


def test_real_tiny_ring_buffer_never_pairs_one_calls_half_with_another(gobuild, tmp_path):
    """The issue's recording: entry and return probes of a hot function
    with a 4 KiB ring buffer. Many events are lost; no call is shown with
    another call's result (add(42, y) returns 42 + y) or with a latency it
    did not have, and the calls left unpaired are counted apart."""
    exe = gobuild("tests/fixtures/hot/main.go", "hot")
    trace = str(tmp_path / "t.gtr")
    p = record(["-q", "-b", "4K", "-o", trace, "main.add", "r:main.add", "--", exe, "100000"])
    assert int(p.stdout.split()[0]) == 100000
    info = json.loads(report(["info", "--json", trace]).stdout)
    assert info["drops"] > 0, "a 4 KiB ring buffer must overflow at this rate"
    r = report(["--format", "jsonl", "--calls", trace])
    cs = [json.loads(l) for l in r.stdout.splitlines()]
    st = {}
    for c in cs:
        st[c["status"]] = st.get(c["status"], 0) + 1
        if c["status"] == "returned":
            assert c["goret"][0] == 42 + c["goargs"][1], c
            assert c["latency_ns"] < 100000000, c      # 2.381 s in the issue
    returns = info["events_per_probe"][1][1]
    lost_ret = sum(1 for c in cs if c["status"] == "lost" and c["goret"])
    assert st.get("returned", 0) + lost_ret + st.get("no_entry", 0) == returns
    assert lost_ret > 0
    out = report(["stats", "--no-hist", trace]).stdout.splitlines()
    row = dict(zip(out[0].split(), out[1].split()))
    assert row["FUNC"] == "main.add" and int(row["LOST"]) == lost_ret
    # no latency, or one below 100 ms (a wrong pair spans other calls: seconds)
    assert row["MAX"] == "-" or row["MAX"].endswith(("ns", "us")) or \
        (row["MAX"].endswith("ms") and float(row["MAX"][:-2]) < 100), row
