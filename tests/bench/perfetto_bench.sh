#!/bin/sh
# A recording of N events (default 10 million: tests/fixtures/hot calling
# add(42, i) N/2 times, entry and return probes, x, y and the result
# captured), recorded in this run by gotrace-record, converted to
# Perfetto's protobuf trace and to Chrome trace JSON by gotrace-report.
# Prints for each the wall time, the output's size and the report's peak
# memory (maximum RSS), and the size ratio (target: Perfetto at least 5x
# smaller). Output goes through a pipe into wc, never to disk. Needs root
# (uprobes).
#   tests/bench/perfetto_bench.sh [N]   (from the repository root, after make)
set -eu
N=${1:-10000000}
D=$(mktemp -d /tmp/gtr-pfbench-XXXXXX)
trap 'rm -rf "$D"' EXIT
export GOCACHE=$PWD/build/gocache GOPATH=$PWD/build/gopath CGO_ENABLED=0
go=$(tests/gocmd newest)
(cd tests/fixtures/hot && $go build -o "$D/hot" main.go)

./gotrace-record -q -o "$D/t.gtr" "$D/hot:main.add" "r:$D/hot:main.add" -- "$D/hot" $((N / 2)) >/dev/null
got=$(./gotrace-report --count "$D/t.gtr")
[ "$got" -ge $((N * 99 / 100)) ] || { echo "perfetto_bench: the recording holds $got events, want $N" >&2; exit 1; }

# convert FORMAT: "SECONDS MAXRSS_KIB BYTES" of gotrace-report --format FORMAT
convert() {
	bytes=$( { /usr/bin/time -f '%e %M' -o "$D/time" ./gotrace-report --format "$1" "$D/t.gtr"; } | wc -c)
	echo "$(cat "$D/time") $bytes"
}
set -- $(convert perfetto) $(convert chrome)
printf 'gotrace-report on a recording of %s events (%s MB .gtr):\n' "$got" \
	"$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$D/t.gtr") / 1e6}")"
awk -v pt="$1" -v pm="$2" -v pb="$3" -v ct="$4" -v cm="$5" -v cb="$6" 'BEGIN {
	printf "  %-9s %8s %12s %12s\n", "format", "time", "output", "peak RSS"
	printf "  %-9s %7.2fs %10.1f MB %9.1f MB\n", "perfetto", pt, pb / 1e6, pm / 1024
	printf "  %-9s %7.2fs %10.1f MB %9.1f MB\n", "chrome", ct, cb / 1e6, cm / 1024
	printf "  Perfetto is %.1fx smaller than Chrome JSON (target >= 5x), %.2fx its time\n", cb / pb, pt / ct
}'
