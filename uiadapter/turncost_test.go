package uiadapter_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// TurnCostSizes are the stored conversation lengths BenchmarkTurnCost
// measures a turn at.
var turnCostSizes = []int{10, 100, 1000, 2000, 5000}

// BenchmarkTurnCost: what one turn costs the server as the stored
// conversation grows. Each op is a whole request on a chat of n stored
// messages (the client sends only its new message, as useChat does with
// server history): lock, load, merge, store the user message, run the
// demo model, stream the reply, save it, unlock. The chat is cut back to
// n messages between ops, off the clock (without loading it, so the store
// may truncate in place: no load holds the messages it drops). cpu-ns/op is the process's CPU
// time (user and system, all goroutines, GC included) per op: the
// server's cost, where ns/op also counts waiting for Redis. The target:
// a turn costs what it adds, not what the chat holds, so at 2,000
// messages at most 1.5× the cost at 10, and flat allocations. `make bench` runs it and reports it in docs/benchmarks.md.
func BenchmarkTurnCost(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) history.Store
	}{
		{"memory", func(*testing.B) history.Store { return history.NewMemory() }},
		{"redis", func(b *testing.B) history.Store {
			rdb := testutil.Redis(b)
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(b, rdb, prefix)
			return redisstore.New(rdb, redisstore.WithPrefix(prefix))
		}},
	}
	for _, st := range stores {
		for _, n := range turnCostSizes {
			b.Run(st.name+"/"+strconv.Itoa(n), func(b *testing.B) { benchTurn(b, st.open(b), n, 0) })
		}
	}
}

// BenchmarkTurnCostBranched: BenchmarkTurnCost's turn on a chat of 2,000
// messages, linear and with history.MaxBranchMessages more off its active
// branch (edits and regenerations kept: what the tree adds to a turn),
// side by side, on memory and Redis. Branches are read only when asked
// for, so a turn should cost what it does on the linear chat.
func BenchmarkTurnCostBranched(b *testing.B) {
	for name, open := range map[string]func(b *testing.B) history.Store{
		"memory": func(*testing.B) history.Store { return history.NewMemory() },
		"redis": func(b *testing.B) history.Store {
			rdb := testutil.Redis(b)
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(b, rdb, prefix)
			return redisstore.New(rdb, redisstore.WithPrefix(prefix))
		},
	} {
		for _, shape := range []struct {
			name     string
			branches int
		}{{"linear", 0}, {"branched", history.MaxBranchMessages}} {
			b.Run(name+"/"+shape.name, func(b *testing.B) { benchTurn(b, open(b), 2000, shape.branches) })
		}
	}
}

// benchTurn measures a turn on a chat of n messages, with branches more
// off its active branch (its last two messages replaced again and again,
// as regenerations do).
func benchTurn(b *testing.B, store history.Store, n, branches int) {
	benchTurnSaying(b, store, n, branches, "hello there")
}

// benchTurnSaying is benchTurn with the user saying text.
func benchTurnSaying(b *testing.B, store history.Store, n, branches int, text string) {
	ctx := context.Background()
	key := history.Key{Scope: "single", Chat: "c"} // uiadapter.SingleScope's scope
	msgs := conversation(n)
	v, err := store.Write(ctx, key, 0, history.KeepAll, msgs...)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < branches; i += 2 {
		again := []cmf.Message{msgs[n-2].Clone(), msgs[n-1].Clone()}
		again[0].SetID(fmt.Sprintf("v%d-0", i))
		again[1].SetID(fmt.Sprintf("v%d-1", i))
		if v, err = store.(history.Brancher).Branch(ctx, key, v, n-2, again...); err != nil {
			b.Fatal(err)
		}
	}
	h := testutil.Must(vercelai.Handler(testutil.DemoLoopWith(b), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope),
		uiadapter.WithInstructions(server.Instructions)))
	body := `{"id":"c","messages":[{"id":"new","role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
	turn := func() {
		req := httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := &testutil.DiscardWriter{}
		h.ServeHTTP(w, req)
		if w.Status != http.StatusOK {
			b.Fatalf("status %d", w.Status)
		}
	}
	// A turn writes twice (the user message, then the reply).
	version, err := store.Write(ctx, key, v, n)
	if err != nil {
		b.Fatal(err)
	}
	cutBack := func() {
		v, err := store.Write(ctx, key, version+2, n)
		if err != nil {
			conv, _ := store.Load(ctx, key)
			b.Fatalf("cutting back: %v (the chat holds %d messages at version %d, want %d)", err, len(conv.Messages), conv.Version, version+2)
		}
		version = v
	}
	turn() // warm the store's cache, as a chat in use has it
	cutBack()
	var cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		before := processCPU()
		turn()
		cpu += processCPU() - before
		b.StopTimer()
		cutBack()
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkToolTurnLedger: a turn whose reply calls a server tool
// ("weather in Paris": the call, its result, the answer) on a chat of 10
// and of 2,000 messages (TC's ends), with the store's tool ledger (the
// call recorded as started before the tool runs and as finished after)
// and without it (the same store, its ledger hidden), side by side, on
// memory and Redis: what the ledger adds to a tool call, and whether a
// tool turn stays flat as the chat grows.
func BenchmarkToolTurnLedger(b *testing.B) {
	stores := map[string]func(b *testing.B) (with, without history.Store){
		"memory": func(*testing.B) (history.Store, history.Store) {
			m := history.NewMemory()
			return m, memoryWithoutLedger{Memory: history.NewMemory()}
		},
		"redis": func(b *testing.B) (history.Store, history.Store) {
			rdb := testutil.Redis(b)
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(b, rdb, prefix)
			return redisstore.New(rdb, redisstore.WithPrefix(prefix+"a:")), redisWithoutLedger{Store: redisstore.New(rdb, redisstore.WithPrefix(prefix+"b:"))}
		},
	}
	for _, name := range []string{"memory", "redis"} {
		for _, n := range []int{10, 2000} {
			for _, ledger := range []bool{true, false} {
				b.Run(name+"/"+strconv.Itoa(n)+"/"+map[bool]string{true: "ledger", false: "no-ledger"}[ledger], func(b *testing.B) {
					with, without := stores[name](b)
					if _, ok := without.(history.Ledger); ok {
						b.Fatal("the store without a ledger has one")
					}
					if _, ok := without.(history.Locker); !ok {
						b.Fatal("hiding the ledger hid more")
					}
					store := without
					if ledger {
						store = with
					}
					benchTurnSaying(b, store, n, 0, "weather in Paris")
				})
			}
		}
	}
}

// memoryWithoutLedger and redisWithoutLedger are stores with their
// ledger hidden: hiddenLedger's methods of the same names make theirs
// ambiguous, so the wrapper is no history.Ledger, and is every other
// interface the store is.
type memoryWithoutLedger struct {
	*history.Memory
	//lint:ignore U1000 embedded for its method names alone, which hide the store's
	hiddenLedger
}

type redisWithoutLedger struct {
	*redisstore.Store
	//lint:ignore U1000 embedded for its method names alone, which hide the store's
	hiddenLedger
}

//lint:ignore U1000 its methods are never called: their names hide the store's
type hiddenLedger struct{}

//lint:ignore U1000 a name that hides the store's
func (hiddenLedger) BeginCall() {}

//lint:ignore U1000 a name that hides the store's
func (hiddenLedger) FinishCall() {}

//lint:ignore U1000 a name that hides the store's
func (hiddenLedger) Calls() {}
