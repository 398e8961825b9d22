// hotstr: one goroutine calls name(s, i) N times ("hotstr N"), s a 64-byte
// string, and prints how many calls it made, their sum, and the
// nanoseconds per call of the loop (as tests/fixtures/hot does): the
// string case of tests/bench/capture_bench.py.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

//go:noinline
func name(s string, n int) int { return len(s) + n }

func main() {
	n := 1000000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	s := strings.Repeat("gotrace!", 8)
	sum, calls := 0, 0
	start := time.Now()
	for calls < n {
		sum += name(s, calls)
		calls++
	}
	elapsed := time.Since(start)
	fmt.Println(calls, sum, float64(elapsed.Nanoseconds())/float64(calls))
}
