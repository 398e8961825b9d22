"""Regenerates the corrupt golden files of tests/golden/ from ok.gtr (a
small file with every block and record type, written by libgtr). Their
expected reader outcomes are in tests/golden/EXPECTED, asserted by
tests/unit/test_format_golden.c. Run: /usr/bin/python3 tests/golden/make_golden.py"""
import os
import struct
import sys

import zstandard

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from gtr_reader import GtrReader, crc32c  # noqa: E402


def block(btype, payload):
    hdr = struct.pack("<II", btype, len(payload))
    return b"GTRB" + hdr + struct.pack("<I", crc32c(payload, crc32c(hdr))) + payload


def frame(cbor):
    return block(4, zstandard.ZstdCompressor(level=3).compress(cbor))


def main():
    ok = open(os.path.join(HERE, "ok.gtr"), "rb").read()
    blocks = list(GtrReader(os.path.join(HERE, "ok.gtr")).blocks())
    ev = [(o, p) for o, t, p in blocks if t == 4][0]
    ev_off, ev_end = ev[0], ev[0] + 16 + len(ev[1])
    summ = [o for o, t, p in blocks if t == 5][0]
    head = ok[:ev_off]            # header and every metadata block before the events
    files = {
        "truncated-in-frame": ok[:ev_off + 30],
        "truncated-in-header": ok[:ev_off + 7],
        "bad-crc-frame": ok[:ev_off + 12] + bytes([ok[ev_off + 12] ^ 1]) + ok[ev_off + 13:],
        "garbage-between-blocks": ok[:ev_off] + b"junkGTRBjunk" + ok[ev_off:],
        "no-summary": ok[:summ],
        "zero-filled-tail": ok[:ev_end] + bytes(4096),
        "newer-minor": ok[:10] + b"\x07\x00" + ok[12:],
        "major-2": ok[:8] + b"\x02\x00" + ok[10:],
        "not-a-trace": b"#!/bin/sh\necho hello\n",
        "header-only": ok[:16],
        # frame [base 5, 3 records]: unknown record 77, an event of unknown
        # probe 9, an unknown block type 42 after it
        "unknown-types": head + frame(bytes([0x82, 0x05, 0x03, 0x82, 0x18, 77, 0xf6,
                                             0x86, 0x00, 0x09, 0x00, 0x01, 0x02, 0x03,
                                             0x83, 0x04, 0x09, 0x01]))
        + block(42, b"future") + ok[ev_end:],
        # a stack record last in its frame
        "dangling-stack": head + frame(bytes([0x82, 0x05, 0x02, 0x86, 0x00, 0x01, 0x00, 0x01,
                                              0x02, 0x03, 0x82, 0x0a, 0x01])) + ok[ev_end:],
        # a delta record of a probe without an earlier event in the frame
        "delta-without-state": head + frame(bytes([0x82, 0x05, 0x02, 0x86, 0x00, 0x01, 0x00,
                                                   0x01, 0x02, 0x03, 0x84, 0x06, 0x02, 0x01,
                                                   0x01])) + ok[ev_end:],
        # symbols whose addresses overflow 2^64
        "symbols-overflow": head + block(6, zstandard.ZstdCompressor().compress(
            bytes([0xa2, 0x69]) + b"binary_id" + b"\x00" + bytes([0x67]) + b"symbols"
            + bytes([0x82, 0x83, 0x1b]) + b"\xff" * 8 + b"\x00\x61a"
            + bytes([0x83, 0x1b]) + b"\xff" * 8 + b"\x00\x61b")) + ok[ev_off:],
        # a block declaring 4 GiB, then the rest of the file
        "hostile-length": ok[:ev_off] + b"GTRB\x04\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00"
        + ok[ev_off:],
        # a mapping whose end is below its start
        "bad-mapping": head + block(7, bytes([0xa3, 0x63]) + b"pid" + b"\x05"
                                    + bytes([0x65]) + b"start" + b"\x19\x10\x00"
                                    + bytes([0x63]) + b"end" + b"\x19\x01\x00") + ok[ev_off:],
    }
    for name, data in files.items():
        with open(os.path.join(HERE, name + ".gtr"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
