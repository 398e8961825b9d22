//go:build slow

package shop

func init() { slow = "yes" }
