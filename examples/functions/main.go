// functions: the example program of bcc's Go tracing discussion, grown a
// little. gotrace's demo and end-to-end tests record it.
package main

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func add(x int, y int) int {
	return x + y
}

//go:noinline
func greet(s string, n int) int {
	return len(s) + n
}

// T has methods on a value and a pointer receiver.
type T struct{ v int }

//go:noinline
func (t *T) M(k int8, ok bool) int {
	if ok {
		return t.v + int(k)
	}
	return 0
}

//go:noinline
func (t T) Value(u uint16) uint16 {
	return uint16(t.v) + u
}

func main() {
	n := 1
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			n = v
		}
	}
	sum := 0
	t := &T{v: 7}
	for i := 0; i < n; i++ {
		sum += add(42, 13)
		sum += greet("hello", i)
		sum += t.M(-3, true)
		sum += int(t.Value(uint16(i)))
	}
	fmt.Println(sum)
	code := 0
	if len(os.Args) > 2 {
		code, _ = strconv.Atoi(os.Args[2])
	}
	os.Exit(code)
}
