#!/bin/sh
# make demo: build the bundled Go program, record it, print the report.
set -e
B=build/demo
mkdir -p "$B"
export GOCACHE="$PWD/build/gocache" GOPATH="$PWD/build/gopath" GO111MODULE=off
go build -o "$B/functions" examples/functions/main.go
echo "\$ gotrace-record -o $B/t.gtr --force './functions:main.add \"%d %d\" goarg1, goarg2' 'main.greet' -- $B/functions 3"
./gotrace-record -o "$B/t.gtr" --force "$B/functions:main.add \"%d %d\" goarg1, goarg2" 'main.greet' -- "$B/functions" 3
echo
echo "\$ gotrace-report $B/t.gtr"
./gotrace-report "$B/t.gtr"
echo
echo "\$ gotrace-report -f 'goarg2 >= 1' --format jsonl $B/t.gtr"
./gotrace-report -f 'goarg2 >= 1' --format jsonl "$B/t.gtr"
