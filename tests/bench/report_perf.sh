#!/bin/sh
# gotrace-report against perf script, both reading N events of the same
# workload (tests/fixtures/hot calling add(42, i) N times, x and y
# captured), recorded in this run by gotrace-record and by perf record.
# Prints events/s for filter+count and for text output, and the ratio to
# perf script's rate. Each figure is the median of RUNS runs (default 7 for
# gotrace-report, 3 for perf script, which is slower), taken the same way
# for both tools, so one slow run on a shared machine does not decide it;
# the load average before and after says how shared it was.
# Needs root (uprobes).
#   tests/bench/report_perf.sh [N] [RUNS]   (from the repository root, after make)
set -eu
N=${1:-1000000}
RUNS=${2:-7}
D=$(mktemp -d /tmp/gtr-rperf-XXXXXX)
trap 'perf probe -q -d "probe_hot:*" 2>/dev/null || true; rm -rf "$D"' EXIT
# the newest Go toolchain of tests/toolchains, named, not PATH's
export GOCACHE=$PWD/build/gocache GOPATH=$PWD/build/gopath CGO_ENABLED=0
go=$(tests/gocmd newest)
(cd tests/fixtures/hot && $go build -o "$D/hot" main.go)

# median_ns RUNS CMD...: median wall time of RUNS runs of CMD, in ns
median_ns() { /usr/bin/python3 tests/bench/walltime.py "$@"; }
load() { cut -d' ' -f1 /proc/loadavg; }
rate() { awk "BEGIN{printf \"%.2f\", $N / ($1 / 1e9) / 1e6}"; }

./gotrace-record -q -o "$D/t.gtr" "$D/hot:main.add" -- "$D/hot" "$N" >/dev/null
load0=$(load)
got=$(./gotrace-report --count -f 'goarg1 == 42 && goarg2 >= 0' "$D/t.gtr")
[ "$got" = "$N" ] || { echo "report_perf: filter+count gave $got events, want $N" >&2; exit 1; }
count=$(rate "$(median_ns "$RUNS" ./gotrace-report --count -f 'goarg1 == 42 && goarg2 >= 0' "$D/t.gtr")")
text=$(rate "$(median_ns "$RUNS" ./gotrace-report "$D/t.gtr")")
echo "gotrace-report on $N events (median of $RUNS runs): filter+count $count M events/s, text $text M events/s"
if command -v perf >/dev/null; then
	perf probe -q -d 'probe_hot:*' 2>/dev/null || true
	perf probe -q -x "$D/hot" -a 'add=main.add x=%ax:s64 y=%bx:s64'
	perf record -q -e probe_hot:add -o "$D/perf.data" -- "$D/hot" "$N" >/dev/null 2>&1
	lines=$(perf script -i "$D/perf.data" 2>/dev/null | wc -l)
	[ "$lines" -ge "$N" ] || echo "report_perf: note: perf script printed $lines events of $N (perf lost some)"
	ps=$(rate "$(median_ns 3 perf script -i "$D/perf.data")")
	echo "perf script on $N events (median of 3 runs): $ps M events/s"
	awk "BEGIN{printf \"ratio to perf script: filter+count %.1fx (target >= 50), text %.1fx (target >= 10)\n\", $count / $ps, $text / $ps}"
else
	echo "perf script: perf not installed (make deps installs linux-perf)"
fi
echo "load average (1 min): $load0 before, $(load) after, on $(nproc) CPUs"
