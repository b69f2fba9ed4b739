package uiadapter_test

// The chat lock: held for the whole run however quiet, a run that loses
// it stops, and a release that fails is tried again.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/uiadapter"
)

// The chat lock lasts as long as the run, however quiet: a run that
// writes nothing for three lock lifetimes still holds the chat, so no
// second turn starts beside it. In a synctest bubble, so the lock's
// 300 ms lifetime and the run's 1.5 s are the bubble's clock: a loaded
// machine can neither let the lock lapse nor end the run early.
func TestLockOutlivesAQuietRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory(), uiadapter.WithLockTTL(300*time.Millisecond))
		done := make(chan testutil.Chunks, 1)
		go func() { done <- f.chat("alice", userBody("c", "wait 1500 ms")) }()
		testutil.Eventually(t, 5*time.Second, "the run to start", func() bool { return len(f.stored("alice", "c")) == 1 })
		// Three lock lifetimes later, the run still holds the chat.
		deadline := time.Now().Add(900 * time.Millisecond)
		for time.Now().Before(deadline) {
			if status, _ := f.do("alice", http.MethodPost, "/api/chat", strings.Replace(userBody("c", "hi"), `"u1"`, `"u2"`, 1)); status != 409 {
				t.Fatalf("a second turn during a quiet run: %d, want 409", status)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := (<-done).Text(); got != "done" {
			t.Fatalf("the run: %q", got)
		}
		if got := roles(f.stored("alice", "c")); got != "user,assistant" {
			t.Fatalf("stored %s", got)
		}
	})
}

// lockThief loses every lock extension, as when another request has
// taken the chat.
type lockThief struct {
	lockingStore
	calls atomic.Int32
}

func (s *lockThief) Acquire(ctx context.Context, k history.Key, token string, ttl time.Duration) error {
	if s.calls.Add(1) > 1 { // the first takes the lock; extensions fail
		return history.ErrBusy
	}
	return s.lockingStore.Acquire(ctx, k, token, ttl)
}

// A run that loses its lock stops and says so (in a synctest bubble: the
// 150 ms lock lifetime passes on the bubble's clock).
func TestRunStopsWhenItsLockIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, &lockThief{lockingStore: history.NewMemory()}, uiadapter.WithLockTTL(150*time.Millisecond))
		chunks := f.chat("alice", userBody("c", "wait 5000 ms"))
		if e := chunks.Find("error"); e == nil || e["errorText"] != wire.LockLostMessage {
			t.Fatalf("chunks = %v", chunks)
		}
		if !strings.Contains(f.logs.String(), "lost the conversation lock; stopping the run") {
			t.Fatalf("log = %s", f.logs)
		}
	})
}

// releaseFails fails the first n releases, as a store that blips.
type releaseFails struct {
	lockingStore
	n atomic.Int32
}

func (s *releaseFails) Release(ctx context.Context, k history.Key, token string) error {
	if s.n.Add(-1) >= 0 {
		return errors.New("i/o timeout")
	}
	return s.lockingStore.Release(ctx, k, token)
}

// A lock release that fails is retried, so a store that blips does not
// keep the chat locked for the lock's whole TTL (2 minutes by default).
func TestLockReleaseIsRetried(t *testing.T) {
	store := &releaseFails{lockingStore: history.NewMemory()}
	store.n.Store(2)
	f := newHistoryFixture(t, store)
	if got := f.chat("alice", userBody("c", "hello")).Text(); got != "You said: hello" {
		t.Fatal(got)
	}
	testutil.Eventually(t, 5*time.Second, "the chat to take a new turn", func() bool {
		status, _ := f.do("alice", http.MethodPost, "/api/chat", strings.Replace(userBody("c", "again"), `"u1"`, `"u2"`, 1))
		return status == 200
	})
}
