package history_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
)

func messages(n int) []cmf.Message {
	out := make([]cmf.Message, n)
	for i := range out {
		out[i] = cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "What is the weather in Paris today? Please be brief."}}}
		out[i].SetID(fmt.Sprint(i))
	}
	return out
}

// BenchmarkMemoryLoad200 loads a 200-message conversation (copying every
// message out).
func BenchmarkMemoryLoad200(b *testing.B) {
	m := history.NewMemory()
	key := history.Key{Scope: "s", Chat: "c"}
	if _, err := m.Append(context.Background(), key, 0, messages(200)...); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if c, _ := m.Load(context.Background(), key); len(c.Messages) != 200 {
			b.Fatal("lost messages")
		}
	}
}
