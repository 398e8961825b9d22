#!/bin/sh
# The CI recipe of gotrace-report diff (README, "CI regression gate").
#
#   gate.sh PKGDIR BASELINE.gtr [DIFF OPTION...]
#
# Builds the test binary of the Go package in PKGDIR (go test -c), records
# one run of its tests with gotrace-record (every function of the package,
# entry and return, with stacks for the call edges), then:
#   - no BASELINE.gtr yet (the main branch's first run): keeps the
#     recording as the baseline, for CI to store as an artifact; exit 0;
#   - else: compares the recording with the baseline: the report on
#     standard output, Markdown for a pull-request comment in $MD, and the
#     exit status of diff: 0 pass, 1 a rule fails, 2 usage or unreadable
#     input, 3 not comparable (lost events; Go, arch, kernel or probes).
#
# Environment: GO (go command), GOTRACE_RECORD / GOTRACE_REPORT (the
# tools, default from PATH), PROBES (default: "PKG.* r:PKG.*"), OUT (the
# candidate's recording, default candidate.gtr), MD (default diff.md),
# CPU (the CPU the tests run on, default 0: runs compare best pinned).
set -eu
if [ $# -lt 2 ]; then
	echo "usage: gate.sh PKGDIR BASELINE.gtr [DIFF OPTION...]" >&2
	exit 2
fi
pkgdir=$1
baseline=$2
shift 2
go=${GO:-go}
record=${GOTRACE_RECORD:-gotrace-record}
report=${GOTRACE_REPORT:-gotrace-report}
out=${OUT:-candidate.gtr}
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
# shellcheck disable=SC2086 # PROBES is a list
taskset -c "${CPU:-0}" "$record" -q -U --force -o "$out" $probes -- \
	"$tmp/pkg.test" -test.run . -test.count 1

if [ ! -f "$baseline" ]; then
	cp "$out" "$baseline"
	echo "gate: no baseline yet: $out kept as $baseline"
	exit 0
fi
status=0
"$report" diff --format markdown "$@" "$baseline" "$out" > "$md" || status=$?
"$report" diff "$@" "$baseline" "$out" || true
exit "$status"
