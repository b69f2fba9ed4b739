package responses_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	fake "github.com/agentui/agentui/internal/testkit/fakes/responses"
)

// deltas is how many text deltas each benchmarked reply streams.
const deltas = 1000

// BenchmarkStreamDeltas streams a reply of 1,000 text deltas, as the fake
// streams it, through the model alone and through the agent loop, and
// reports allocations per delta. The stream is recorded from the fake once
// and served from memory, so that only the client side is measured (as
// agent/openai's benchmark of the same name does).
func BenchmarkStreamDeltas(b *testing.B) {
	f := fake.New(b)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text(strings.Repeat(" tok", deltas))}})
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/responses", strings.NewReader(`{"model":"gpt-5","stream":true,"store":false,"include":["reasoning.encrypted_content"],"input":"hi"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := memoryModel(b, "gpt-5", body)
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
