package gemini_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
)

// BenchmarkStreamDeltas streams a reply of 1000 text deltas, as the fake
// renders it, through the model alone and through agent.Loop, and reports
// the cost per delta. The body is served from memory (no server's
// allocations counted): what is measured is the SDK's decoding and this
// package's.
func BenchmarkStreamDeltas(b *testing.B) {
	const n = 1000
	parts := make([]fake.ReplyPart, n)
	for i := range parts {
		parts[i] = fake.Text("word ")
	}
	f := fake.New(b)
	body := string(f.Render(testModel, fake.Reply{Parts: parts}))
	perDelta := func(b *testing.B, run func()) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		for b.Loop() {
			run()
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		deltas := float64(b.N) * n
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/deltas, "allocs/delta")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/deltas, "B/delta")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deltas, "ns/delta")
	}
	b.Run("model", func(b *testing.B) {
		m, _ := fuzzModel(b, body)
		perDelta(b, func() {
			got := 0
			for c, err := range m.Stream(context.Background(), userReq("hi")) {
				if err != nil {
					b.Fatal(err)
				}
				if c.Kind == agent.ChunkText {
					got++
				}
			}
			if got != n+1 { // and the signed empty part at the end
				b.Fatalf("%d text chunks", got)
			}
		})
	})
	b.Run("loop", func(b *testing.B) {
		m, _ := fuzzModel(b, body)
		loop, err := agent.New(m)
		if err != nil {
			b.Fatal(err)
		}
		in := &agent.Input{Messages: []cmf.Message{user("hi")}}
		perDelta(b, func() {
			for _, err := range loop.Run(context.Background(), in) {
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
