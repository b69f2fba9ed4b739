package uiadapter

import (
	"fmt"
	"testing"
)

// RunLimits share the process's places fairly between client addresses:
// one address holds at most PerAddress; once only the last eighth of
// Total is left, an address that has a run going gets no more, so a new
// visitor's first reply runs however many addresses flood; without an
// address bound (PerAddress < 0) addresses are not told apart.
func TestRunLimitsShareByAddress(t *testing.T) {
	take := func(l *RunLimits, addr string, n int) (got int) {
		for i := range n {
			if l.take(fmt.Sprintf("scope-%s-%d", addr, i), addr) == nil {
				got++
			}
		}
		return got
	}
	t.Run("one address holds its share", func(t *testing.T) {
		l := &RunLimits{Total: 16, PerAddress: 4}
		if got := take(l, "a", 10); got != 4 {
			t.Fatalf("one address got %d, want 4", got)
		}
		if err := l.take("scope-a-x", "a"); err != errRunsPerAddress {
			t.Fatalf("over its share: %v", err)
		}
		if got := take(l, "b", 1); got != 1 {
			t.Fatal("another address was refused")
		}
	})
	t.Run("the last places go to addresses with none", func(t *testing.T) {
		l := &RunLimits{Total: 16, PerAddress: 10} // 2 places kept
		if a, b := take(l, "a", 10), take(l, "b", 10); a != 10 || b != 4 {
			t.Fatalf("the flooding addresses got %d and %d places, want 10 and 4", a, b)
		}
		if err := l.take("scope-b-more", "b"); err != errRunsFull {
			t.Fatalf("a flooding address took a kept place: %v", err)
		}
		if take(l, "c", 2) != 1 || take(l, "d", 1) != 1 {
			t.Fatal("a new address was refused one of the kept places, or got two")
		}
		if err := l.take("scope-e", "e"); err != errRunsFull {
			t.Fatalf("past Total: %v", err)
		}
		l.give("scope-c-0", "c")
		if take(l, "e", 1) != 1 {
			t.Fatal("a place given back was not taken")
		}
	})
	t.Run("addresses not told apart", func(t *testing.T) {
		l := &RunLimits{Total: 16, PerAddress: -1}
		if got := take(l, "proxy", 20); got != 16 {
			t.Fatalf("one address got %d of 16", got)
		}
	})
	t.Run("the scope's own bound", func(t *testing.T) {
		l := &RunLimits{Total: 16, PerScope: 2}
		for i, want := range []bool{true, true, false} {
			if err := l.take("one", fmt.Sprint("addr", i)); (err == nil) != want {
				t.Fatalf("run %d of one scope: %v", i, err)
			}
		}
	})
}
