package history_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, ttl time.Duration) (history.Store, storetest.Elapse) {
		var mu sync.Mutex
		now := time.Unix(1_000_000, 0)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		elapse := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
		return history.NewMemory(history.WithMemoryTTL(ttl), history.WithClock(clock)), elapse
	})
}

// Expired conversations are forgotten even if nobody asks for them again.
func TestMemorySweepsExpired(t *testing.T) {
	now := time.Unix(1000, 0)
	m := history.NewMemory(history.WithMemoryTTL(time.Minute), history.WithClock(func() time.Time { return now }))
	ctx := t.Context()
	for _, chat := range []string{"a", "b"} {
		if _, err := m.Write(ctx, history.Key{Chat: chat}, 0, history.KeepAll); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Minute)
	if _, err := m.Write(ctx, history.Key{Chat: "c"}, 0, history.KeepAll); err != nil {
		t.Fatal(err)
	}
	if n := m.Len(); n != 1 {
		t.Fatalf("%d conversations kept, want 1", n)
	}
}

// The store holds a bounded number of bytes: past the bound, the
// conversations used least recently go, never a locked one.
func TestMemoryMaxBytes(t *testing.T) {
	ctx := t.Context()
	big := func(id string) cmf.Message {
		m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: strings.Repeat("x", 1000)}}}
		m.SetID(id)
		return m
	}
	m := history.NewMemory(history.WithMemoryMaxBytes(3500))
	key := func(c string) history.Key { return history.Key{Scope: "s", Chat: c} }
	for _, c := range []string{"a", "b", "c"} {
		if _, err := m.Write(ctx, key(c), 0, history.KeepAll, big(c)); err != nil {
			t.Fatal(err)
		}
	}
	conv, _ := m.Load(ctx, key("a")) // a is now the most recent
	if conv.Bytes < 1000 || conv.Bytes > 1200 {
		t.Fatalf("Bytes = %d, want the JSON size of one message", conv.Bytes)
	}
	if err := m.Acquire(ctx, key("b"), "run", time.Minute); err != nil { // b is locked: spared
		t.Fatal(err)
	}
	if _, err := m.Write(ctx, key("d"), 0, history.KeepAll, big("d")); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[string]bool{"a": true, "b": true, "c": false, "d": true} {
		conv, _ := m.Load(ctx, key(c))
		if got := conv.Version > 0; got != want {
			t.Errorf("conversation %s kept = %v, want %v", c, got, want)
		}
	}
	// Truncation gives bytes back.
	if _, err := m.Write(ctx, key("d"), 1, history.KeepAll, big("d2")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(ctx, key("d"), 2, 1); err != nil {
		t.Fatal(err)
	}
	if conv, _ := m.Load(ctx, key("d")); conv.Bytes < 1000 || conv.Bytes > 1200 {
		t.Fatalf("after truncating: Bytes = %d", conv.Bytes)
	}
}
