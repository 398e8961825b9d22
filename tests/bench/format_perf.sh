#!/bin/sh
# Bytes per event of gotrace-record vs `perf record -z` on the same workload:
# tests/fixtures/hot calling add(42, i) N times, both capturing x and y.
# Then runs format_bench on the gotrace recording. Needs root (uprobes).
#   tests/bench/format_perf.sh [N]      (from the repository root, after make)
set -eu
N=${1:-300000}
D=$(mktemp -d /tmp/gtr-perf-XXXXXX)
trap 'perf probe -q -d "probe_hot:*" 2>/dev/null || true; rm -rf "$D"' EXIT
# the newest Go toolchain of tests/toolchains, named, not PATH's
export GOCACHE=$PWD/build/gocache GOPATH=$PWD/build/gopath CGO_ENABLED=0
go=$(tests/gocmd newest)
(cd tests/fixtures/hot && $go build -o "$D/hot" main.go)
./gotrace-record -q -o "$D/t.gtr" "$D/hot:main.add" -- "$D/hot" "$N" >/dev/null
g=$(stat -c %s "$D/t.gtr")
echo "gotrace-record:   $(awk "BEGIN{printf \"%.2f\", $g/$N}") bytes/event ($g bytes, $N calls of add(42, i))"
if command -v perf >/dev/null; then
	perf probe -q -d 'probe_hot:*' 2>/dev/null || true
	# amd64 register ABI: x in RAX, y in RBX
	perf probe -q -x "$D/hot" -a 'add=main.add x=%ax:s64 y=%bx:s64'
	perf record -q -z -e probe_hot:add -o "$D/perf.data" -- "$D/hot" "$N" >/dev/null 2>&1
	p=$(stat -c %s "$D/perf.data")
	echo "perf record -z:   $(awk "BEGIN{printf \"%.2f\", $p/$N}") bytes/event ($p bytes, same workload and arguments)"
else
	echo "perf record -z:   perf not installed (make deps installs linux-perf)"
fi
./build/format_bench 2000000 "$D/t.gtr"
