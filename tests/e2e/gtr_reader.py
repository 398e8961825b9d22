"""An independent reader of gotrace's .gtr trace files, written from
spec/FORMAT.md alone, with Debian's python3-cbor2 and python3-zstandard.

    r = GtrReader(path)
    for item in r.items():   # events and drops, as dicts
        ...
    r.info()                 # what `gotrace-report info --json` prints

Tests compare it with the C reader (tests/e2e/test_format_python.py). It
follows the spec's damage rules (resynchronisation on the next valid
block, truncation) but not its memory limits.
"""
import datetime
import io
import struct

import cbor2
import zstandard

MAGIC = b"\x89GTR\r\n\x1a\n"
MAX_BLOCK = 64 << 20
CPU_UNKNOWN = 0xFFFFFFFF
U64_MAX = (1 << 64) - 1   # counts add up saturating: they stop here
TYPES = ("word", "int", "uint", "bool", "ptr", "string", "float", "other", "bytes", "iface",
         "slice")

_T = [0] * 256
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _T[_i] = _c


def crc32c(data, c=0):
    c ^= 0xFFFFFFFF
    t = _T
    for b in data:
        c = (c >> 8) ^ t[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


class Malformed(Exception):
    pass


def _u32(v):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 0xFFFFFFFF:
        raise Malformed("not a uint32")
    return v


def _uint(v):
    if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v >= 1 << 64:
        raise Malformed("not a uint")
    return v


def _text(v):
    if not isinstance(v, str) or len(v.encode()) > 1024:
        raise Malformed("not a text of at most 1024 bytes")
    return v


def _host(h):
    """A HOST block's map, or a PEER block's "host": names and start clocks
    ("" and 0 when absent), and the redaction rules when there are any
    (spec/REDACT.md)."""
    host = {k: _text(h.get(k, "")) for k in ("hostname", "kernel", "machine", "recorder")}
    clocks = h.get("clocks", {})
    host["clocks"] = {k: _uint(clocks.get(k, 0))
                      for k in ("monotonic_ns", "realtime_ns", "boottime_ns")}
    if _text(h.get("redacted", "")):
        host["redacted"] = _text(h["redacted"])
    return host


def _one_item(payload):
    f = io.BytesIO(payload)
    item = cbor2.load(f)
    if f.tell() != len(payload):
        raise Malformed("bytes after the data item")
    return item


def _unzstd(payload):
    params = zstandard.get_frame_parameters(payload)
    if params.content_size in (0xFFFFFFFFFFFFFFFF, None) or params.content_size < 0:
        raise Malformed("zstd frame without content size")
    if params.content_size > MAX_BLOCK:
        raise Malformed("frame too large")
    d = zstandard.ZstdDecompressor()
    out = d.decompress(payload, max_output_size=params.content_size)
    if len(out) != params.content_size:
        raise Malformed("size mismatch")
    # exactly one frame: decompressing with a decompressobj leaves no unused data
    o = zstandard.ZstdDecompressor().decompressobj()
    o.decompress(payload)
    if o.unused_data:
        raise Malformed("not exactly one zstd frame")
    return out


def saturated(info):
    """The JSON Pointers of the counts of `info` that stand at 2^64-1, in
    document order (spec/FORMAT.md, gotrace-report info)."""
    out = ["/events"] if info["events"] == U64_MAX else []
    out += ["/events_per_probe/%d/1" % i for i, (_, n) in enumerate(info["events_per_probe"])
            if n == U64_MAX]
    out += ["/" + k for k in ("drops", "suppressed") if info[k] == U64_MAX]
    for i, l in enumerate(info["losses"]):
        out += ["/losses/%d/%s" % (i, k) for k in ("count", "records") if l[k] == U64_MAX]
    s = info["summary"]
    if s:
        out += ["/summary/" + k for k in ("events", "drops", "suppressed") if s[k] == U64_MAX]
        out += ["/summary/probes/%d/1" % i for i, (_, n) in enumerate(s["probes"])
                if n == U64_MAX]
    return out


def utc(ns):
    t = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % (ns % 10**9)


class GtrReader:
    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        d = self.data
        if len(d) == 0 or d[:min(8, len(d))] != MAGIC[:min(8, len(d))]:
            raise ValueError("not a gotrace trace")
        if len(d) < 16:
            raise ValueError("truncated header")
        self.major, self.minor, _flags = struct.unpack_from("<HHI", d, 8)
        if self.major != 1:
            raise ValueError("unsupported major version")
        self.host = {"hostname": "", "kernel": "", "machine": "", "recorder": "",
                     "clocks": {"monotonic_ns": 0, "realtime_ns": 0, "boottime_ns": 0}}
        self.host_seen = False
        self.binaries, self.probes = [], {}
        self.probe_order = []
        self.symbols = {}      # binary id -> list of [addr, size, name]
        self.inlined = {}      # (binary id, addr) -> [[off, size, name, depth]]
        self.mappings, self.processes, self.clocks = [], [], []
        self.losses = {}       # (probe, cpu) -> dict, insertion ordered
        self.summary = None
        self.damage = self.skipped = 0
        self.truncated = False
        self.message = ""
        self.comms = {}
        self.peers = {}        # host index -> host names (merged files)

    # ---------------------------------------------------------------- blocks

    def _block_at(self, off):
        """'ok' with (type, payload, end), 'short' or 'bad'."""
        d = self.data
        if off + 16 > len(d):
            return "short", None
        sync, btype, length, crc = struct.unpack_from("<4sIII", d, off)
        if sync != b"GTRB" or length > MAX_BLOCK:
            return "bad", None
        if off + 16 + length > len(d):
            return "short", None
        payload = d[off + 16:off + 16 + length]
        if crc32c(payload, crc32c(d[off + 4:off + 12])) != crc:
            return "bad", None
        return "ok", (btype, payload, off + 16 + length)

    def blocks(self):
        off, d = 16, self.data
        while off < len(d):
            st, b = self._block_at(off)
            if st == "ok":
                yield off, b[0], b[1]
                off = b[2]
                continue
            first, bad = st, off
            nxt = d.find(b"GTRB", off + 1)
            while nxt >= 0 and self._block_at(nxt)[0] != "ok":
                nxt = d.find(b"GTRB", nxt + 1)
            if nxt >= 0:
                self.damage += 1
                self.message = "damaged block at byte %d; skipped to byte %d" % (bad, nxt)
                off = nxt
                continue
            if first == "short":
                self.truncated = True
                self.message = "truncated at byte %d" % bad
            else:
                self.damage += 1
                self.message = "damaged block at byte %d" % bad
            return

    # ---------------------------------------------------------------- metadata

    def _absorb(self, off, btype, payload):
        if btype == 1:
            if self.host_seen:
                self.skipped += 1
                return
            self.host = _host(_one_item(payload))
            self.host_seen = True
        elif btype == 2:
            b = _one_item(payload)
            out = {"id": _u32(b["id"])}
            for k in ("path", "build_id", "go_build_id", "go_version", "compiler", "arch", "abi"):
                out[k] = _text(b.get(k, ""))
            for k in ("pie", "stripped", "dwarf"):
                out[k] = bool(b.get(k, False))
            out["go_version_source"] = _text(b.get("go_version_source", ""))
            off = b.get("goid_offset", -1)
            out["goid_offset"] = off if isinstance(off, int) and 0 <= off < 2**31 else None
            out["goid_source"] = _text(b.get("goid_source", ""))
            self.binaries.append(out)
        elif btype == 3:
            p = _one_item(payload)
            pid = _u32(p["id"])
            if pid in self.probes or p["kind"] not in ("entry", "return"):
                raise Malformed("probe")
            args = []
            for a in p.get("args", []):
                t = a.get("type", "word")
                args.append({"name": _text(a.get("name", "")),
                             "type_name": _text(a.get("type_name", "")),
                             "type": t if t in TYPES else "other",
                             "size": _u32(a.get("size", 0))})
                if _text(a.get("redacted", "")):  # "hash" or "drop"
                    args[-1]["redacted"] = _text(a["redacted"])
            exprs = [_u32(e) for e in p.get("exprs", [])]
            if len(args) > 32 or len(exprs) > 32 or any(e >= len(args) for e in exprs):
                raise Malformed("probe args")
            self.probes[pid] = {"id": pid, "binary_id": _u32(p.get("binary_id", 0)),
                                "kind": p["kind"], "func": _text(p.get("func", "")),
                                "address": _uint(p.get("address", 0)),
                                "spec": _text(p.get("spec", "")), "fmt": _text(p.get("fmt", "")),
                                "args_source": _text(p.get("args_source", "")),
                                "args": args, "exprs": exprs}
            for k in ("inlined_into", "call_site", "line", "predicate"):  # optional
                if _text(p.get(k, "")):
                    self.probes[pid][k] = _text(p[k])
            # optional: a first file's limit, or a later rotated file's
            limit = _uint(p.get("rate_window_limit", 0)) or _uint(p.get("rate_limit", 0))
            if limit:
                self.probes[pid]["rate_limit"] = limit
            self.probe_order.append(pid)
        elif btype == 5:
            s = _one_item(payload)
            self.summary = {"events": s.get("events", 0), "drops": s.get("drops", 0),
                            "suppressed": s.get("suppressed", 0),
                            "first_ts_ns": s.get("first_ts_ns", 0),
                            "last_ts_ns": s.get("last_ts_ns", 0),
                            "frames": len(s.get("frames", [])),
                            "frames_truncated": bool(s.get("frames_truncated", False)),
                            "probes": [[e[0], e[1]] for e in s.get("probes", [])]}
            self.frame_index = s.get("frames", [])
        elif btype == 6:
            s = _one_item(_unzstd(payload))
            bid = _u32(s["binary_id"])
            addr, tab = 0, self.symbols.setdefault(bid, [])
            for e in s.get("symbols", []):
                addr += _uint(e[0])
                if addr >= 1 << 64:
                    raise Malformed("symbol address")
                tab.append([addr, _uint(e[1]), _text(e[2])])
                if len(e) > 3 and isinstance(e[3], list):
                    # off, size, name, depth per inlined copy, flat
                    f = e[3]
                    if len(f) % 4 or any(_uint(f[i + 3]) == 0 for i in range(0, len(f), 4)):
                        raise Malformed("symbol inlined ranges")
                    self.inlined[(bid, addr)] = [
                        [_u32(f[i]), _u32(f[i + 1]), _text(f[i + 2]), _u32(f[i + 3])]
                        for i in range(0, len(f), 4)]
        elif btype == 7:
            m = _one_item(payload)
            out = {"ts_ns": _uint(m.get("ts_ns", 0)), "pid": _u32(m.get("pid", 0)),
                   "start": _uint(m.get("start", 0)), "end": _uint(m.get("end", 0)),
                   "offset": _uint(m.get("offset", 0)), "vaddr": _uint(m.get("vaddr", 0)),
                   "binary_id": _u32(m["binary_id"]) if "binary_id" in m else None,
                   "path": _text(m.get("path", ""))}
            if out["end"] <= out["start"]:
                raise Malformed("mapping")
            self.mappings.append(out)
        elif btype == 8:
            c = _one_item(payload)
            self.clocks.append({k: _uint(c.get(k, 0))
                                for k in ("monotonic_ns", "realtime_ns", "boottime_ns")})
            self.clocks.sort(key=lambda c: c["monotonic_ns"])  # stable
        elif btype == 9:
            p = _one_item(payload)
            exited = bool(p.get("exited", False))
            proc = {"ts_ns": _uint(p.get("ts_ns", 0)), "pid": _u32(p.get("pid", 0)),
                    "binary_id": _u32(p["binary_id"]) if "binary_id" in p else None,
                    "comm": _text(p.get("comm", "")), "exited": exited,
                    "exit_code": p.get("exit_code") if exited else 0}
            for k in ("host", "host_pid"):     # a merged file
                if p.get(k):
                    proc[k] = _u32(p[k])
            self.processes.append(proc)
        elif btype == 10:
            # PEER: another host of a merged file, by index (host 0: HOST)
            p = _one_item(payload)
            idx = _u32(p["index"])
            if not 1 <= idx < 4096:
                raise Malformed("peer")
            self.peers[idx] = _host(p.get("host", {}))
        else:
            self.skipped += 1

    # ---------------------------------------------------------------- events

    def _value(self, item, typ):
        if isinstance(item, bool):
            return ["bool", item]
        if item is None or item is cbor2.undefined:
            return None
        if isinstance(item, int):
            if item < 0:
                if item < -(1 << 63):
                    raise Malformed("negative int")
                return ["int", item]
            if item >= 1 << 64:
                raise Malformed("uint")
            return ["int", item] if typ == "int" and item < 1 << 63 else ["uint", item]
        if isinstance(item, bytes):
            return ["str", item.hex(), len(item)]
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], bytes):
            if item[0] < len(item[1]):
                raise Malformed("full_len")
            return ["str", item[1].hex(), item[0]]
        raise Malformed("value")

    def _frame(self, payload):
        raw = _unzstd(payload)
        f = io.BytesIO(raw)
        hdr = cbor2.load(f)
        ts, nrec = hdr[0], hdr[1]
        ctx = None
        state = {}      # probe -> list of integer bit patterns
        stack, stack_prev = None, 0
        for _ in range(nrec):
            rec = cbor2.load(f)
            t = rec[0]
            if stack is not None and not (t in (0, 1) or 4 <= t <= 9):
                raise Malformed("stack record not followed by an event")
            if t in (0, 1, 4, 5, 6, 7, 8, 9):
                probe = _u32(rec[1])
                ts += rec[2]
                if not 0 <= ts < 1 << 64:
                    raise Malformed("ts")
                if t in (0, 1):
                    ctx = (rec[3], rec[4], rec[5], None)
                    vals = rec[6:]
                elif t in (8, 9):
                    ctx = (rec[3], rec[4], rec[5], rec[6])
                    vals = rec[7:]
                else:
                    if ctx is None:
                        raise Malformed("no context")
                    vals = rec[3:]
                p = self.probes.get(probe)
                types = [a["type"] for a in p["args"]] if p else []
                st = state.get(probe)
                if t in (6, 7) and st is None:
                    raise Malformed("delta without state")
                out = []
                for i, v in enumerate(vals):
                    typ = types[i] if i < len(types) else "word"
                    if t in (6, 7) and isinstance(v, int) and not isinstance(v, bool):
                        bits = ((st[i] if i < len(st) else 0) + v) % (1 << 64)
                        if typ == "int":
                            out.append(["int", bits - (1 << 64) if bits >= 1 << 63 else bits])
                        else:
                            out.append(["uint", bits])
                    else:
                        out.append(self._value(v, typ))
                if st is not None or len(state) < 4096:
                    state[probe] = [(x[1] % (1 << 64)) if x and x[0] in ("int", "uint") else 0
                                    for x in out]
                pid, tid, goid, cpu = ctx
                yield {"ts_ns": ts, "probe": probe, "kind": "return" if t & 1 else "entry",
                       "pid": pid, "tid": tid, "goid": goid, "cpu": cpu,
                       "comm": self.comms.get((pid, tid), "").encode().hex(),
                       "vals": out, "stack_addrs": stack or []}
                stack = None
            elif t == 10:
                addrs, prev = [], stack_prev
                for dlt in rec[1:]:
                    prev = (prev + dlt) % (1 << 64)
                    addrs.append(prev)
                if not 1 <= len(addrs) <= 127:
                    raise Malformed("stack")
                stack, stack_prev = addrs, addrs[0]
            elif t == 2:
                self.comms[(rec[1], rec[2])] = rec[3] if isinstance(rec[3], str) else rec[3].decode()
            elif t == 3:
                ts += rec[2]
                cpu = rec[4] if len(rec) > 4 else None
                since = rec[5] if len(rec) > 5 else 0
                reason = rec[6] if len(rec) > 6 else 0
                d = {"drop": True, "ts_ns": ts, "probe": rec[1], "count": rec[3],
                     "cpu": cpu, "since_ns": since, "reason": reason}
                self._add_loss(d)
                yield d
            else:
                self.skipped += 1
        if stack is not None:
            raise Malformed("stack at the end of the frame")
        if f.tell() != len(raw):
            raise Malformed("bytes after the last record")

    def _add_loss(self, d):
        key = (d["probe"], d["cpu"], d["reason"] != 0)
        first = d["since_ns"] if d["since_ns"] and d["since_ns"] <= d["ts_ns"] else d["ts_ns"]
        l = self.losses.get(key)
        if l is None:
            l = self.losses[key] = {"probe": d["probe"], "cpu": d["cpu"], "count": 0,
                                    "reason": "rate-limit" if d["reason"] == 1 else "lost",
                                    "first_ns": first, "last_ns": d["ts_ns"], "records": 0}
        l["count"] = min(l["count"] + d["count"], U64_MAX)
        l["records"] = min(l["records"] + 1, U64_MAX)
        l["first_ns"] = min(l["first_ns"], first)
        l["last_ns"] = max(l["last_ns"], d["ts_ns"])

    def items(self):
        """Events and drops in file order; metadata absorbed on the way."""
        for off, btype, payload in self.blocks():
            if btype == 4:
                try:
                    for item in self._frame(payload):
                        if "drop" not in item:
                            item["stack"] = [self._sym(item["pid"], a) for a in item.pop("stack_addrs")]
                        yield item
                except (Malformed, Exception) as e:  # noqa: B014 - any decoding error
                    self.damage += 1
                    self.message = "damaged block at byte %d (%s)" % (off, e)
                continue
            try:
                self._absorb(off, btype, payload)
            except Exception as e:  # noqa: BLE001
                self.damage += 1
                self.message = "damaged block at byte %d (%s)" % (off, e)

    # ---------------------------------------------------------------- lookups

    def _binary(self, bid):
        for b in self.binaries:
            if b["id"] == bid:
                return b
        return None

    def _sym_in(self, bid, link):
        best = None
        for s in self.symbols.get(bid, []):
            if s[0] <= link and (best is None or s[0] >= best[0]):
                best = s
        if best and (best[1] == 0 or link - best[0] < best[1]):
            return best
        return None

    def _sym(self, pid, a):
        m, link = None, a
        for x in self.mappings:
            if x["pid"] == pid and x["start"] <= a < x["end"]:
                m = x
        s = None
        if m is not None:
            if m["binary_id"] is not None:
                if m["vaddr"]:
                    link = m["vaddr"] + (a - m["start"])
                else:
                    b = self._binary(m["binary_id"])
                    link = a if b and not b["pie"] else a - m["start"] + m["offset"]
                s = self._sym_in(m["binary_id"], link)
        else:
            for b in self.binaries:
                if not b["pie"] and s is None:
                    s = self._sym_in(b["id"], a)
        return [a, s[2], link - s[0]] if s else [a, None, None]

    def realtime(self, t):
        best = None
        for c in self.clocks:
            if c["monotonic_ns"] <= t:
                best = c
        if best is None:
            h = self.host["clocks"]
            if h["realtime_ns"]:
                best = h
            elif self.clocks:
                best = self.clocks[0]
            else:
                return None
        return (best["realtime_ns"] + t - best["monotonic_ns"]) % (1 << 64)

    # ---------------------------------------------------------------- info

    def info(self):
        """Reads the whole file; returns what `gotrace-report info --json` does."""
        events, drops, suppressed, per, ts = 0, 0, 0, {}, []
        for it in self.items():
            if "drop" in it and it["reason"] == 1:
                suppressed = min(suppressed + it["count"], U64_MAX)
            elif "drop" in it:
                drops = min(drops + it["count"], U64_MAX)
            else:
                events = min(events + 1, U64_MAX)
                per[it["probe"]] = min(per.get(it["probe"], 0) + 1, U64_MAX)
                ts.append(it["ts_ns"])
        tr = None
        if ts:
            a, b = min(ts), max(ts)
            tr = {"first_ts_ns": a, "last_ts_ns": b}
            ra, rb = self.realtime(a), self.realtime(b)
            if ra is not None:
                tr.update(first_realtime_ns=ra, last_realtime_ns=rb,
                          first_utc=utc(ra), last_utc=utc(rb))
        syms = {}
        for b in self.binaries:
            if self.symbols.get(b["id"]):
                syms[str(b["id"])] = sorted(self.symbols[b["id"]], key=lambda s: s[0])
        info = {
            "file": self.path,
            "format": [self.major, self.minor],
            "host": self.host,
            "clock_samples": self.clocks,
            "binaries": [dict(b, symbols=len(self.symbols.get(b["id"], []))) for b in self.binaries],
            "probes": [self.probes[p] for p in self.probe_order],
            "symbols": syms,
            "mappings": self.mappings,
            "processes": self.processes,
            "events": events,
            "events_per_probe": sorted([k, v] for k, v in per.items()),
            "time_range": tr,
            "drops": drops,
            "suppressed": suppressed,
            "losses": list(self.losses.values()),
            "summary": self.summary,
            "damage": self.damage,
            "truncated": self.truncated,
            "skipped": self.skipped,
        }
        if self.peers:   # a merged file: every host entry by index, null for a gap
            info["hosts"] = [self.host] + [self.peers.get(i)
                                           for i in range(1, max(self.peers) + 1)]
        info["saturated"] = saturated(info)
        return info


if __name__ == "__main__":
    import json
    import sys
    print(json.dumps(GtrReader(sys.argv[1]).info(), indent=1))
