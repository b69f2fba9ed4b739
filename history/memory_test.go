package history_test

import (
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, ttl time.Duration) history.Store {
		return history.NewMemory(history.WithMemoryTTL(ttl))
	})
}

// Expired conversations are forgotten even if nobody asks for them again.
func TestMemorySweepsExpired(t *testing.T) {
	now := time.Unix(1000, 0)
	m := history.NewMemory(history.WithMemoryTTL(time.Minute), history.WithClock(func() time.Time { return now }))
	ctx := t.Context()
	for _, chat := range []string{"a", "b"} {
		if _, err := m.Append(ctx, history.Key{Chat: chat}, 0); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Minute)
	if _, err := m.Append(ctx, history.Key{Chat: "c"}, 0); err != nil {
		t.Fatal(err)
	}
	if n := m.Len(); n != 1 {
		t.Fatalf("%d conversations kept, want 1", n)
	}
}
