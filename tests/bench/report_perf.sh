#!/bin/sh
# gotrace-report against perf script, both reading N events of the same
# workload (tests/fixtures/hot calling add(42, i) N times, x and y
# captured), recorded in this run by gotrace-record and by perf record.
# Prints events/s for filter+count and for text output, and the ratio to
# perf script's rate. Needs root (uprobes).
#   tests/bench/report_perf.sh [N]      (from the repository root, after make)
set -eu
N=${1:-1000000}
D=$(mktemp -d /tmp/gtr-rperf-XXXXXX)
trap 'perf probe -q -d "probe_hot:*" 2>/dev/null || true; rm -rf "$D"' EXIT
GOCACHE=$PWD/build/gocache GO111MODULE=off CGO_ENABLED=0 \
	go build -o "$D/hot" tests/fixtures/hot/main.go
now() { date +%s%N; }
rate() { awk "BEGIN{printf \"%.2f\", $N / (($2 - $1) / 1e9) / 1e6}"; }

./gotrace-record -q -o "$D/t.gtr" "$D/hot:main.add" -- "$D/hot" "$N" >/dev/null
t0=$(now); ./gotrace-report --count -f 'goarg1 == 42 && goarg2 >= 0' "$D/t.gtr" >/dev/null; t1=$(now)
./gotrace-report "$D/t.gtr" >/dev/null; t2=$(now)
count=$(rate "$t0" "$t1"); text=$(rate "$t1" "$t2")
echo "gotrace-report on $N events: filter+count $count M events/s, text $text M events/s"
if command -v perf >/dev/null; then
	perf probe -q -d 'probe_hot:*' 2>/dev/null || true
	perf probe -q -x "$D/hot" -a 'add=main.add x=%ax:s64 y=%bx:s64'
	perf record -q -e probe_hot:add -o "$D/perf.data" -- "$D/hot" "$N" >/dev/null 2>&1
	t3=$(now); perf script -i "$D/perf.data" >/dev/null 2>&1; t4=$(now)
	ps=$(rate "$t3" "$t4")
	echo "perf script on $N events: $ps M events/s"
	awk "BEGIN{printf \"ratio to perf script: filter+count %.1fx (target >= 30), text %.1fx (target >= 5)\n\", $count / $ps, $text / $ps}"
else
	echo "perf script: perf not installed (make deps installs linux-perf)"
fi
