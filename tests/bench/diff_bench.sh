#!/bin/sh
# gotrace-report diff on two recordings of N events each (default 5,000,000;
# tests/bench/report_gen.c "calls": nested calls on three goroutines, about
# 2.1 M paired calls a file, so past diff's exact limit of 100,000
# latencies per function: its reservoirs are exercised). Prints the CPU
# time (user + system) and peak memory of the median run of RUNS (default
# 3), diff pinned to one CPU. Target: under 3 s of CPU, memory flat in N.
#   tests/bench/diff_bench.sh [N] [RUNS]   (from the repository root, after make)
set -eu
N=${1:-5000000}
RUNS=${2:-3}
D=$(mktemp -d /tmp/gtr-dbench-XXXXXX)
trap 'rm -rf "$D"' EXIT
gcc -O2 -std=gnu11 -D_GNU_SOURCE -Iformat -Ilib -o "$D/report_gen" tests/bench/report_gen.c \
	build/libgtr.a -lcbor -lzstd -pthread
iters=$((N / 7))          # 7 events an iteration of "calls"
"$D/report_gen" calls "$D/base.gtr" "$iters"
"$D/report_gen" calls "$D/new.gtr" "$iters"
for i in $(seq "$RUNS"); do
	/usr/bin/time -f "%U %S %M" -o "$D/time$i" taskset -c 0 ./gotrace-report diff \
		"$D/base.gtr" "$D/new.gtr" >/dev/null 2>"$D/err$i" || {
		echo "diff_bench: gotrace-report diff failed:" >&2
		cat "$D/err$i" >&2
		exit 1
	}
done
cat "$D"/time* | awk -v n="$N" -v runs="$RUNS" '
	{ cpu[NR] = $1 + $2; mem[NR] = $3 }
	END {
		# the median run by CPU time
		for (i = 1; i <= NR; i++) { r = 0; for (j = 1; j <= NR; j++) if (cpu[j] < cpu[i]) r++; if (r == int(NR / 2)) m = i }
		printf "gotrace-report diff of two recordings of %d events each (median of %d runs, one CPU): %.2f s CPU (target < 3 s), %.1f MiB peak\n", n, runs, cpu[m], mem[m] / 1024
	}'
