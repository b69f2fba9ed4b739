package uiadapter

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMemoryReplayGuard(t *testing.T) {
	ctx := context.Background()
	g := NewMemoryReplayGuard(4).(*memoryReplayGuard)
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Minute), "a"); !ok {
		t.Fatal("first use refused")
	}
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Minute), "a"); ok {
		t.Fatal("second use accepted")
	}
	// Full: expired entries go, and only they; an answer that has not
	// expired is never forgotten, so a guard full of them refuses to
	// record another rather than let one be answered twice.
	for i, n := range []string{"b", "c", "d"} {
		_, _ = g.Use(ctx, "chat", now.Add(time.Duration(i+2)*time.Minute), n)
	}
	now = now.Add(90 * time.Second) // "a" expired
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "e"); !ok {
		t.Fatal("a new request refused when an expired one could go")
	}
	if ok, err := g.Use(ctx, "chat", now.Add(time.Hour), "f"); ok || !errors.Is(err, errReplayGuardFull) {
		t.Fatalf("full of unexpired answers: Use = %v, %v", ok, err)
	}
	for _, n := range []string{"b", "c", "d", "e"} {
		if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), n); ok {
			t.Fatalf("%s: a remembered request accepted again", n)
		}
	}
	now = now.Add(3 * time.Minute) // b, c and d expired
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "f"); !ok {
		t.Fatal("refused after answers expired")
	}
	if len(g.used) > 4 {
		t.Fatalf("%d remembered, bound 4", len(g.used))
	}
	// Several at once: all or none.
	g = NewMemoryReplayGuard(10).(*memoryReplayGuard)
	g.now = func() time.Time { return now }
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "x"); !ok {
		t.Fatal("first use refused")
	}
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "y", "x"); ok {
		t.Fatal("a batch holding a used nonce accepted")
	}
	if ok, _ := g.Use(ctx, "chat", now.Add(time.Hour), "y"); !ok {
		t.Fatal("a refused batch spent its other nonce")
	}
}
