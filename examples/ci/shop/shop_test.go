package shop

import "testing"

func TestTotal(t *testing.T) {
	for i := 0; i < 300; i++ {
		basket := []int{i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7, i + 8, i + 9}
		if got, err := Total(basket); err != nil || got <= 0 {
			t.Fatalf("Total(%v) = %d, %v", basket, got, err)
		}
	}
	if _, err := Total(nil); err != ErrEmpty {
		t.Fatalf("Total(nil): %v, want ErrEmpty", err)
	}
}
