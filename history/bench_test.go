package history_test

import (
	"context"
	"testing"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// BenchmarkMemoryLoad200 loads a 200-message conversation (copying every
// message out).
func BenchmarkMemoryLoad200(b *testing.B) {
	m := history.NewMemory()
	key := history.Key{Scope: "s", Chat: "c"}
	if _, err := m.Write(context.Background(), key, 0, history.KeepAll, testutil.UserMessages(200)...); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if c, _ := m.Load(context.Background(), key); len(c.Messages) != 200 {
			b.Fatal("lost messages")
		}
	}
}
