#!/bin/sh
# make demo: build the bundled Go program, record it, print the report.
# Each command is shown as it is run.
set -e
top=$(pwd)
B=build/demo
mkdir -p "$B"
export GOCACHE="$top/build/gocache" GOPATH="$top/build/gopath"
# The newest Go toolchain of tests/toolchains that works here.
go=$(tests/gocmd newest)
echo "building examples/functions with $($go env GOVERSION)"
(cd examples/functions && $go build -o "$top/$B/functions" main.go)
PATH="$top:$PATH"
cd "$B"
run() {
	printf '\n$'; printf " '%s'" "$@" | sed "s/ '\([A-Za-z0-9_./=-]*\)'/ \1/g"; echo
	"$@"
}
run gotrace-record -o t.gtr --force './functions:main.add "%d %d" goarg1, goarg2' \
	'r:main.add "%d" retval' 'main.greet' -- ./functions 3
run gotrace-report t.gtr
run gotrace-report -f 'goarg1 == 42' t.gtr
run gotrace-report -f 'n >= 1' --format jsonl t.gtr
run gotrace-report stats t.gtr
