package run

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/history"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// failingRelease is a store whose lock releases always fail; tried is
// closed at the first attempt.
type failingRelease struct {
	lockingStore
	calls atomic.Int32
	tried chan struct{}
}

func (s *failingRelease) Release(context.Context, history.Key, string) error {
	if s.calls.Add(1) == 1 {
		close(s.tried)
	}
	return errors.New("store down")
}

// Background lock releases are bounded: past the bound, a lock is left to
// expire on its own rather than adding a goroutine per failed request
// while the store is down. In a synctest bubble: the first release gives
// up when its 1 s lock expires on the bubble's clock, at once.
func TestBackgroundReleasesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &failingRelease{lockingStore: history.NewMemory(), tried: make(chan struct{})}
		logs := &syncBuffer{}
		log := slog.New(slog.NewTextHandler(logs, nil))
		e := &env{cfg: Config{Store: store, Locker: store, LockTTL: time.Second, StoreTimeout: time.Second, Log: log}, log: log, releasing: make(chan struct{}, 1)}
		first := &Session{e: e, Key: history.Key{Scope: "s", Chat: "a"}, token: "t1", log: log}
		done := make(chan struct{})
		go func() { first.releaseEventually(time.Now()); close(done) }()
		<-store.tried // the first release holds the only slot, retrying
		second := &Session{e: e, Key: history.Key{Scope: "s", Chat: "b"}, token: "t2", log: log}
		second.releaseEventually(time.Now()) // returns at once: the bound is reached
		if !strings.Contains(logs.String(), "too many lock releases pending") {
			t.Fatalf("not logged:\n%s", logs)
		}
		<-done // the first gives up when its lock has expired
		if !strings.Contains(logs.String(), "it expires on its own") {
			t.Fatalf("the first release did not give up:\n%s", logs)
		}
		if len(e.releasing) != 0 {
			t.Fatal("the first release did not free its slot")
		}
	})
}

// lockingStore is a store that is its own locker.
type lockingStore interface {
	history.Store
	history.Locker
}
