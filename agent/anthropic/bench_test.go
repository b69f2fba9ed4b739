package anthropic_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// deltaStream is an answer of n text deltas as the API streams it.
func deltaStream(n int) string {
	events := []string{start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}
	for i := range n {
		events = append(events, fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word%d "}}`, i%10))
	}
	events = append(events, `{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":500}}`, `{"type":"message_stop"}`)
	return sse(events...)
}

// BenchmarkStreamDeltas streams n text deltas from a canned Messages API
// stream (no network, no server: what is measured is the SDK's decoding
// and this package's) through the model alone and through agent.Loop,
// and reports allocations per delta.
func BenchmarkStreamDeltas(b *testing.B) {
	const n = 500
	body := deltaStream(n)
	m := streamModel(b, body)
	req := userReq("hi")
	b.Run("model", func(b *testing.B) {
		b.ReportAllocs()
		before := memStats()
		for b.Loop() {
			deltas := 0
			for c, err := range m.Stream(context.Background(), req) {
				if err != nil {
					b.Fatal(err)
				}
				if c.Kind == agent.ChunkText {
					deltas++
				}
			}
			if deltas != n {
				b.Fatalf("%d deltas", deltas)
			}
		}
		reportPerDelta(b, n, before, memStats())
	})
	b.Run("loop", func(b *testing.B) {
		l, err := agent.New(m)
		if err != nil {
			b.Fatal(err)
		}
		in := &agent.Input{Messages: []cmf.Message{user("hi")}}
		b.ReportAllocs()
		before := memStats()
		for b.Loop() {
			deltas := 0
			for ev, err := range l.Run(context.Background(), in) {
				if err != nil {
					b.Fatal(err)
				}
				if d, ok := ev.(*agent.PartDelta); ok && strings.HasPrefix(d.Delta, "word") {
					deltas++
				}
			}
			if deltas != n {
				b.Fatalf("%d deltas", deltas)
			}
		}
		reportPerDelta(b, n, before, memStats())
	})
}

// reportPerDelta reports allocations, bytes and time per delta.
func reportPerDelta(b *testing.B, n int, before, after runtime.MemStats) {
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*n), "allocs/delta")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*n), "B/delta")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delta")
}

func memStats() runtime.MemStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}
