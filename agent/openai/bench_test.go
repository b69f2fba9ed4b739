package openai_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/openai"
)

// deltas is how many text deltas each benchmarked reply streams.
const deltas = 1000

// BenchmarkStreamDeltas streams a reply of 1,000 text deltas, in the Chat
// Completions chunk format, through the model alone and through the agent
// loop, and reports allocations per delta. The stream is served from
// memory, so that only the client side is measured; agent/openai/responses
// has the same benchmark for the Responses API.
func BenchmarkStreamDeltas(b *testing.B) {
	var body strings.Builder
	body.WriteString("data: " + chunk(`{"role":"assistant","content":""}`, "") + "\n\n")
	for range deltas {
		body.WriteString("data: " + chunk(`{"content":" tok"}`, "") + "\n\n")
	}
	body.WriteString("data: " + chunk(`{}`, "stop") + "\n\n")
	body.WriteString("data: " + usageChunk(12, deltas) + "\n\n")
	body.WriteString("data: [DONE]\n\n")
	m, err := openai.New("gpt-test", openai.WithHTTPClient(&http.Client{Transport: sseTransport{body.String()}}),
		openai.WithAPIKey("k"), openai.WithBaseURL("http://model.invalid/v1"), openai.WithMaxRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	in := userReq("hi")
	n := 0
	for c, err := range m.Stream(context.Background(), in) {
		if err != nil {
			b.Fatal(err)
		}
		if c.Kind == agent.ChunkText {
			n++
		}
	}
	if n != deltas {
		b.Fatalf("%d text chunks, want %d", n, deltas)
	}
	perDelta := func(b *testing.B, run func()) {
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			run()
		}
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*deltas), "allocs/delta")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*deltas), "B/delta")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
	}
	b.Run("model", func(b *testing.B) {
		perDelta(b, func() {
			for _, err := range m.Stream(context.Background(), in) {
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("loop", func(b *testing.B) {
		l, err := agent.New(m)
		if err != nil {
			b.Fatal(err)
		}
		perDelta(b, func() {
			for _, err := range l.Run(context.Background(), &agent.Input{Messages: in.Messages}) {
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
