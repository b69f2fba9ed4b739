package uiadapter_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
)

// stuckWriter is a client that stops reading: its first write blocks
// until release is closed.
type stuckWriter struct {
	testutil.DiscardWriter
	entered chan struct{}
	release chan struct{}
	writes  int
}

func (w *stuckWriter) Write(b []byte) (int, error) {
	if w.writes++; w.writes == 1 && w.Status == 200 {
		close(w.entered)
		<-w.release
	}
	return w.DiscardWriter.Write(b)
}

// Without history, a client that reads slowly slows a fast agent: the run
// stops producing once a budget of frames waits to be written, instead of
// piling its whole output up in memory, and goes on when the client
// reads.
func TestLiveStreamHoldsAFastAgentForASlowClient(t *testing.T) {
	const n = 100_000
	var produced atomic.Int64
	fast := agentFunc(func(ctx context.Context, yield func(agent.Event, error) bool) {
		if !startText(yield, "0") {
			return
		}
		for range n {
			produced.Add(1)
			if !yield(&agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "x"}, nil) {
				return
			}
		}
		finishText(yield, "x")
	})
	h := testutil.Must(vercelai.Handler(fast))
	w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := httptest.NewRequest("POST", "/api/chat", strings.NewReader(userBody("c", "go")))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(w, r)
	}()
	<-w.entered
	// Wait until the agent is held (its goroutine waits in emit), or has
	// produced everything (it was not held).
	for !heldInEmit() && produced.Load() < n {
		runtime.Gosched()
	}
	// A 32 KiB budget is about 700 of these frames (48 bytes each).
	if got := produced.Load(); got > 2000 {
		t.Fatalf("the agent produced %d deltas while the client read none", got)
	}
	close(w.release)
	<-done
	if w.Status != 200 || produced.Load() != n || w.Written < n*48 {
		t.Fatalf("after the client read on: status %d, %d deltas produced, %d bytes written", w.Status, produced.Load(), w.Written)
	}
}

// heldInEmit reports whether a goroutine waits in the live stream's emit.
func heldInEmit() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "sync.(*Cond).Wait") && strings.Contains(g, "wire.(*Live).Emit") {
			return true
		}
	}
	return false
}
