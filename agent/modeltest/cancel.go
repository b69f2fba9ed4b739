package modeltest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
)

// promptly bounds how long a stream may take to end once its context is
// cancelled; a model that honours the context ends in milliseconds, so
// the bound only tells a hang from a slow machine.
const promptly = 10 * time.Second

// cancellation: a stream whose context is cancelled, before the call or
// while the reply streams, ends promptly with the context's error and
// without a finish chunk.
func (s *suite) cancellation(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		b := s.start(t)
		m := s.model(t, b, Config{})
		if !s.lacks(Scripted) {
			b.Script(Answer{Text: "Hello!"})
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.endsCancelled(t, ctx, m, nil)
	})
	t.Run("while the reply streams", func(t *testing.T) {
		s.needs(t, Scripted)
		b := s.start(t)
		m := s.model(t, b, Config{})
		b.Script(Answer{Text: "Let me count: one, two, three", Stall: true})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.endsCancelled(t, ctx, m, cancel)
	})
}

// endsCancelled streams from m; with cancel set, it cancels on the first
// chunk.
func (s *suite) endsCancelled(t *testing.T, ctx context.Context, m agent.Model, cancel context.CancelFunc) {
	t.Helper()
	done := make(chan result, 1)
	cancelled := make(chan struct{})
	go func() {
		var r result
		for c, err := range m.Stream(ctx, ask("Count to three")) {
			if err != nil {
				r.err = err
				break
			}
			if cancel != nil && len(r.chunks) == 0 {
				cancel()
				close(cancelled)
			}
			if c.Kind == agent.ChunkFinish {
				fin := c
				r.finish = &fin
			}
			r.chunks = append(r.chunks, c)
		}
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(promptly):
		t.Fatalf("the stream did not end within %v of its context's cancellation", promptly)
	}
	if cancel != nil {
		select {
		case <-cancelled:
		default:
			t.Fatalf("the stream ended before its first chunk: %v", r.err)
		}
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("the stream ended with %v; want the context's error", r.err)
	}
	if r.finish != nil {
		t.Error("a cancelled stream ended with a finish chunk, as if the reply were whole")
	}
}
