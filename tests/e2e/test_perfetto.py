"""gotrace-report --format perfetto, decoded back with protobuf (Debian's
python3-protobuf) against the subset of Perfetto's .proto files in
tests/e2e/perfetto/, compiled here with protoc: the packet sequence and its
interning as Perfetto's importer reads them, tracks per process and
goroutine, slices that nest and match the Chrome trace of the same file,
values as debug annotations; one test records a Go program."""
import importlib
import json
import os
import shutil
import subprocess
import sys
import zlib

import pytest

from conftest import REPORT, ROOT, build_with_libgtr, record, report

ITER = 30   # iterations of report_gen's "calls" scenario
PROTOS = os.path.join(ROOT, "tests", "e2e", "perfetto")
TYPES = "tests/fixtures/types"


@pytest.fixture(scope="module")
def pb(tmp_path_factory):
    """The compiled protos: the module of trace.proto (its Trace, and the
    TrackEvent type enum through track_event_pb2)."""
    protoc = shutil.which("protoc")
    assert protoc, "protoc missing: make deps installs protobuf-compiler"
    out = tmp_path_factory.mktemp("perfetto_pb")
    srcs = sorted(f for f in os.listdir(PROTOS) if f.endswith(".proto"))
    subprocess.run([protoc, "-I" + PROTOS, "--python_out=" + str(out), *srcs], check=True)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module("trace_pb2"), importlib.import_module("track_event_pb2")
    finally:
        sys.path.remove(str(out))


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    d = tmp_path_factory.mktemp("calls")
    gen = build_with_libgtr(d / "report_gen", "tests/bench/report_gen.c", opt="-O2")
    path = str(d / "calls.gtr")
    subprocess.run([gen, "calls", path, str(ITER)], check=True)
    return path


def perfetto(args):
    p = subprocess.run([REPORT, "--format", "perfetto", *args], capture_output=True,
                       timeout=120, check=True)
    return p.stdout


def unpack(pb, data):
    """The packets of a trace, each packet of compressed_packets inflated
    (zlib) into the packets it holds, as Perfetto's importer reads them;
    and the bytes of all packets uncompressed."""
    trace = pb[0].Trace()
    trace.ParseFromString(data)
    out, raw = [], b""
    for p in trace.packet:
        assert p.WhichOneof("data") == "compressed_packets", p   # all in batches
        assert p.ListFields()[0][0].name == "compressed_packets" and len(p.ListFields()) == 1
        inner = zlib.decompress(p.compressed_packets)
        raw += inner
        batch = pb[0].Trace()
        batch.ParseFromString(inner)    # packets: Trace.packet fields, concatenated
        out.extend(batch.packet)
    return out, raw


def import_trace(pb, data):
    """Reads a trace as Perfetto's importer does: one sequence whose first
    packet clears its state, names looked up in what earlier packets (or
    this one) interned, tracks described before their first event. Returns
    (tracks by uuid, processes by uuid, events) with names resolved."""
    trace_pb2, te_pb2 = pb
    packets, _ = unpack(pb, data)
    assert len(packets) > 0
    names, keys = {}, {}
    tracks, procs, events = {}, {}, []
    for i, p in enumerate(packets):
        assert p.trusted_packet_sequence_id == 1
        assert p.sequence_flags == (1 if i == 0 else 2), (i, p.sequence_flags)
        assert p.incremental_state_cleared == (i == 0)
        for n in p.interned_data.event_names:
            assert n.iid not in names, "event name %d interned twice" % n.iid
            names[n.iid] = n.name
        for n in p.interned_data.debug_annotation_names:
            assert n.iid not in keys, "annotation name %d interned twice" % n.iid
            keys[n.iid] = n.name
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            assert td.uuid not in tracks and td.uuid not in procs
            if td.HasField("process"):
                procs[td.uuid] = (td.process.pid, td.process.process_name)
            else:
                assert td.parent_uuid in procs, "track %d before its process" % td.uuid
                tracks[td.uuid] = (procs[td.parent_uuid][0], td.name)
            continue
        assert p.HasField("track_event")
        te = p.track_event
        assert te.track_uuid in tracks, "event on a track not described yet"
        ev = {"ts": p.timestamp, "type": te_pb2.TrackEvent.Type.Name(te.type),
              "track": te.track_uuid, "args": {}}
        if te.type != te_pb2.TrackEvent.TYPE_SLICE_END:
            ev["name"] = names[te.name_iid]
        for a in te.debug_annotations:
            key = keys[a.name_iid]
            assert key not in ev["args"], "annotation %s twice" % key
            kind = a.WhichOneof("value")
            ev["args"][key] = [x.string_value for x in a.array_values] if kind is None \
                else getattr(a, kind)
        events.append(ev)
    return tracks, procs, events


def slices(tracks, events):
    """Slices per track as Perfetto builds them: events in time order (file
    order among equal times), an END closing the innermost open BEGIN; they
    must nest. Returns (slices, instants)."""
    out, inst, stacks = [], [], {}
    for e in sorted(events, key=lambda e: e["ts"]):
        st = stacks.setdefault(e["track"], [])
        if e["type"] == "TYPE_SLICE_BEGIN":
            st.append(dict(e))
        elif e["type"] == "TYPE_SLICE_END":
            assert st, "END without BEGIN on %s" % (tracks[e["track"]],)
            s = st.pop()
            s["dur"] = e["ts"] - s["ts"]
            s["args"].update(e["args"])
            out.append(s)
        else:
            assert e["type"] == "TYPE_INSTANT"
            inst.append(e)
    assert all(not s for s in stacks.values()), "slices left open"
    return out, inst


def test_tracks_slices_and_interning(pb, calls):
    tracks, procs, events = import_trace(pb, perfetto([calls]))
    got, inst = slices(tracks, events)
    # per goroutine, under its process named "COMM PID"
    assert {n for _, n in tracks.values()} == {"goroutine %d" % g for g in (1, 2, 3, 7, 8)}
    assert len(procs) == 1
    pid, pname = list(procs.values())[0]
    assert pname.endswith(" %d" % pid) and all(t[0] == pid for t in tracks.values())
    assert len(got) == ITER * 3 + 1           # paired calls and the open one
    add = [s for s in got if s["name"] == "main.add" and s["args"].get("a") == 4][0]
    assert add["dur"] == 500000
    assert add["args"]["b"] == 8 and add["args"]["name"] == "name-4"
    assert add["args"]["~r0"] == 12 and add["args"]["goid"] > 0
    inner = [s for s in got if s["name"] == "main.fib" and s["track"] == add["track"]
             and add["ts"] <= s["ts"] < add["ts"] + add["dur"]]
    assert len(inner) == 2
    openc = [s for s in got if s["args"].get("status") == "open"]
    assert len(openc) == 1 and tracks[openc[0]["track"]][1] == "goroutine 8"
    assert openc[0]["args"]["name"] == "open" and openc[0]["args"]["a"] == -5
    # each name once in the whole file, however many events use it
    _, raw = unpack(pb, perfetto([calls]))
    assert raw.count(b"main.add") == 1 and raw.count(b"\x12\x0bgoroutine 1") == 1


def test_same_calls_as_chrome(pb, calls):
    """Every Chrome "X" event is a Perfetto slice with the same name, track,
    start and duration, and every "i" event an instant."""
    tracks, _, events = import_trace(pb, perfetto([calls]))
    got, inst = slices(tracks, events)
    doc = json.loads(report(["--format", "chrome", calls]).stdout)
    t0 = min(e["ts"] for e in events)
    first = min(e["ts"] for e in doc["traceEvents"] if e["ph"] in ("X", "i"))
    want = sorted((e["name"], e["tid"], round((e["ts"] - first) * 1000), round(e["dur"] * 1000))
                  for e in doc["traceEvents"] if e["ph"] == "X")
    have = sorted((s["name"], int(tracks[s["track"]][1].split()[1]), s["ts"] - t0, s["dur"])
                  for s in got)
    assert have == want
    assert len(inst) == sum(1 for e in doc["traceEvents"] if e["ph"] == "i") > 0
    alone = [i for i in inst if i["args"].get("note") == "return without entry"]
    assert alone and alone[0]["args"]["~r0"] == -1


def test_filters_and_empty_output(pb, calls):
    tracks, _, events = import_trace(pb, perfetto(["-f", 'func == "main.fib"', calls]))
    got, _ = slices(tracks, events)
    assert len(got) == 2 * ITER and {s["name"] for s in got} == {"main.fib"}
    assert perfetto(["-f", 'func == "nothing"', calls]) == b""   # an empty Trace


def test_recorded_values_and_stacks(pb, gobuild, toolchain, functions, tmp_path):
    """A real recording: ints, strings, bools, the pointer receiver, float
    slices of a generic function, results and user stacks, as typed
    annotations. gccgo: a track per thread (no goroutine ids), no
    generics."""
    trace = str(tmp_path / "t.gtr")
    record(["-q", "-U", "-o", trace, "main.add", "main.greet", "main.(*T).M",
            "--", functions, "3"])
    tracks, procs, events = import_trace(pb, perfetto([trace]))
    got, inst = slices(tracks, events)
    assert not got and len(inst) == 9           # entry probes only: instants
    track = "thread " if toolchain.gccgo else "goroutine "
    assert all(tracks[e["track"]][1].startswith(track) for e in inst)
    add = [e for e in inst if e["name"] == "main.add"]
    assert [(e["args"]["x"], e["args"]["y"]) for e in add] == [(42, 13)] * 3
    greet = [e for e in inst if e["name"] == "main.greet"]
    assert [(e["args"]["s"], e["args"]["n"]) for e in greet] == [("hello", i) for i in range(3)]
    m = [e for e in inst if e["name"] == toolchain.fname("main.(*T).M")][0]
    assert m["args"]["k"] == -3 and m["args"]["ok"] is True
    assert isinstance(m["args"]["t"], int) and m["args"]["t"] != 0   # pointer_value
    assert m["args"]["stack"][0].startswith(toolchain.fname("main.(*T).M") + "+0x")
    assert any(f.startswith("main.main+0x") for f in m["args"]["stack"])
    assert len(procs) == 1 and list(procs.values())[0][1].startswith("functions ")
    if toolchain.gccgo:
        return   # no generics (test_capture.py checks that gccgo 12 has none)
    # with return probes: slices carrying both halves' values
    trace2 = str(tmp_path / "t2.gtr")
    record(["-q", "-o", trace2, "main.Sum", "r:main.Sum", "--",
            gobuild(TYPES, "types")])
    tracks, _, events = import_trace(pb, perfetto([trace2]))
    got, inst = slices(tracks, events)
    assert [s["args"]["xs"] for s in sorted(got, key=lambda s: s["ts"])] == \
        ["[1 2 3](len=3)", "[1.5 2](len=2)"]
    assert sorted(got, key=lambda s: s["ts"])[0]["args"]["~r0"] == 6


def test_smaller_than_chrome(calls, tmp_path):
    gen = build_with_libgtr(tmp_path / "report_gen", "tests/bench/report_gen.c", opt="-O1")
    path = str(tmp_path / "c.gtr")
    subprocess.run([gen, "calls", path, "3000"], check=True)
    pf = len(perfetto([path]))
    js = len(report(["--format", "chrome", path]).stdout)
    assert pf * 5 <= js, (pf, js)
