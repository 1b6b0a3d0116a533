package lab

import "testing"

func TestFirstFewCountsTheRest(t *testing.T) {
	if got := firstFew([]string{"a", "b"}); got != "a, b" {
		t.Fatalf("two names: %q", got)
	}
	if got := firstFew([]string{"a", "b", "c", "d", "e", "f", "g"}); got != "a, b, c, d, e and 2 more" {
		t.Fatalf("seven names: %q", got)
	}
}
