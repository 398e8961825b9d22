// Package shop is the package examples/ci/gate.sh gates: its tests are the
// workload that gotrace records. Built with -tags slow (slow.go), Total
// takes twice as long (how tests/e2e/test_diff.py shows the gate failing).
package shop

import "errors"

var slow = "no"

// wasted keeps the slow build's extra work from being optimised away.
var wasted int

// ErrEmpty is returned for a basket without items.
var ErrEmpty = errors.New("empty basket")

//go:noinline
func price(sku int) int {
	p := 0
	for i := 0; i < 20000; i++ {
		p += (sku*i ^ p>>3) & 0xff
	}
	return p%900 + 100
}

// Total is the price of a basket of SKUs.
//
//go:noinline
func Total(basket []int) (int, error) {
	if len(basket) == 0 {
		return 0, ErrEmpty
	}
	t := 0
	for _, sku := range basket {
		t += price(sku)
	}
	if slow == "yes" {
		for _, sku := range basket {
			wasted += price(sku)
		}
	}
	return t, nil
}
