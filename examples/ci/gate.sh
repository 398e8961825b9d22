#!/bin/sh
# The CI recipe of gotrace-report diff (README, "CI regression gate").
#
#   gate.sh PKGDIR BASELINE [DIFF OPTION...]
#
# Builds the test binary of the Go package in PKGDIR (go test -c), records
# RUNS runs of its tests with gotrace-record (every function of the
# package, entry and return, with stacks for the call edges), one file a
# run: with several runs a side, diff tells a change from the runs' own
# spread (spec/DIFF.md); then:
#   - no directory BASELINE yet (the main branch's first run): keeps the
#     runs there as the baseline, for CI to store as an artifact; exit 0;
#   - else: compares the runs with the baseline's: the report on
#     standard output, Markdown for a pull-request comment in $MD, and the
#     exit status of diff: 0 pass, 1 a rule fails, 2 usage or unreadable
#     input, 3 not comparable (lost events; Go, arch, kernel or probes).
#
# Environment: GO (go command), GOTRACE_RECORD / GOTRACE_REPORT (the
# tools, default from PATH), PROBES (default: "PKG.* r:PKG.*"), RUNS
# (default 3), OUT (the directory of the candidate's runs, default
# candidate), MD (default diff.md), CPU (the CPU the tests run on, default
# 0: runs compare best pinned).
set -eu
if [ $# -lt 2 ]; then
	echo "usage: gate.sh PKGDIR BASELINE [DIFF OPTION...]" >&2
	exit 2
fi
pkgdir=$1
baseline=$2
shift 2
go=${GO:-go}
record=${GOTRACE_RECORD:-gotrace-record}
report=${GOTRACE_REPORT:-gotrace-report}
out=${OUT:-candidate}
runs=${RUNS:-3}
md=${MD:-diff.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$pkgdir" && "$go" test -c -o "$tmp/pkg.test" .)
pkg=$(cd "$pkgdir" && "$go" list -f '{{.ImportPath}}' .)
# gccgo names functions by the package path encoded (GCC's go_encode_id:
# "_" -> "__", "." -> "_0", "/" -> "_1"): example_0com_1shop.Total
case $(cd "$pkgdir" && "$go" list -f '{{context.Compiler}}' .) in
gccgo) pkg=$(printf '%s' "$pkg" | sed -e 's/_/__/g' -e 's/\./_0/g' -e 's|/|_1|g') ;;
esac
probes=${PROBES:-"$pkg.* r:$pkg.*"}
rm -rf "$out"
mkdir -p "$out"
i=1
while [ "$i" -le "$runs" ]; do
	# shellcheck disable=SC2086 # PROBES is a list
	taskset -c "${CPU:-0}" "$record" -q -U --force -o "$out/run$i.gtr" $probes -- \
		"$tmp/pkg.test" -test.run . -test.count 1
	i=$((i + 1))
done

if [ ! -d "$baseline" ]; then
	cp -r "$out" "$baseline"
	echo "gate: no baseline yet: $out kept as $baseline"
	exit 0
fi
status=0
"$report" diff --format markdown "$@" "$baseline"/*.gtr -- "$out"/*.gtr > "$md" || status=$?
"$report" diff "$@" "$baseline"/*.gtr -- "$out"/*.gtr || true
exit "$status"
