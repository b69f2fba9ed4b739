package uiadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/uiadapter"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// LimiterContract checks a Limiter with runs 2 and tokens 10 per minute,
// whose clock is clock: the windows, the counts, the keys kept apart.
func limiterContract(t *testing.T, l limit.Limiter, clock *fakeClock) {
	ctx := context.Background()
	allow := func(key string) time.Duration {
		t.Helper()
		wait, err := l.Allow(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return wait
	}
	spend := func(key string, n int64) bool {
		t.Helper()
		left, err := l.Spend(ctx, key, n)
		if err != nil {
			t.Fatal(err)
		}
		return left
	}
	// 20 s into a window: two runs pass, the third waits the 40 s left.
	for range 2 {
		if allow("a") != 0 {
			t.Fatal("a run under the limit was refused")
		}
	}
	if wait := allow("a"); wait != 40*time.Second {
		t.Fatalf("the third run waits %v, want 40s", wait)
	}
	if allow("b") != 0 {
		t.Fatal("one key's runs counted for another")
	}
	// The next window starts again.
	clock.add(40 * time.Second)
	if allow("a") != 0 {
		t.Fatal("a new window kept the old count")
	}
	// Tokens: 6 leave some, 5 more use them up, and then no run starts.
	if !spend("a", 6) || spend("a", 5) {
		t.Fatal("the token budget is not 10")
	}
	if wait := allow("a"); wait != time.Minute {
		t.Fatalf("a key without tokens waits %v, want the window's minute", wait)
	}
	clock.add(time.Minute)
	if allow("a") != 0 || !spend("a", 9) {
		t.Fatal("a new window kept the old tokens")
	}
}

// Both limiters keep the same contract; the Redis one is shared by every
// replica on that Redis.
func TestLimiters(t *testing.T) {
	limits := func(clock *fakeClock) limit.Limits {
		return limit.Limits{Runs: limit.Rate{N: 2, Per: time.Minute}, Tokens: limit.Rate{N: 10, Per: time.Minute}, Clock: clock.now}
	}
	start := time.Unix(1_800_000_000, 0).Truncate(time.Minute).Add(20 * time.Second)
	t.Run("memory", func(t *testing.T) {
		clock := &fakeClock{t: start}
		limiterContract(t, limit.NewMemoryLimiter(limits(clock)), clock)
	})
	t.Run("redis", func(t *testing.T) {
		rdb := testutil.Redis(t)
		prefix := testutil.KeyPrefix()
		testutil.DeleteKeysOnCleanup(t, rdb, prefix)
		clock := &fakeClock{t: start}
		l := testutil.Must(redisstore.NewLimiter(rdb, prefix, limits(clock)))
		limiterContract(t, l, clock)
		// Two replicas, one count: the contract left "a" one run; the
		// other replica takes it, and this one has none left.
		other := testutil.Must(redisstore.NewLimiter(rdb, prefix, limits(clock)))
		ctx := context.Background()
		if wait, err := other.Allow(ctx, "a"); err != nil || wait != 0 {
			t.Fatalf("the other replica refused the last run (%v, %v)", wait, err)
		}
		if wait, err := l.Allow(ctx, "a"); err != nil || wait == 0 {
			t.Fatalf("a run over the shared limit went (%v, %v)", wait, err)
		}
	})

	for _, bad := range []limit.Limits{{Runs: limit.Rate{N: 1}}, {}, {Runs: limit.Rate{N: -1, Per: time.Minute}}} {
		if bad.Check() == nil {
			t.Errorf("%+v passes its check", bad)
		}
	}
}

// Over the limit, a run is refused before anything happens: 429 with
// Retry-After and a JSON error, on both protocols (one limiter), per
// scope; a request without a scope is counted by its address.
func TestRateLimitRefusesWith429(t *testing.T) {
	l := limit.NewMemoryLimiter(limit.Limits{Runs: limit.Rate{N: 1, Per: time.Hour}})
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithLimiter(l))
	f.chat("alice", testutil.UserMessage("c1", "u1", "hello"))
	for path, body := range map[string]string{
		"/api/chat": testutil.UserMessage("c1", "u2", "again"),
		"/api/agui": `{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"again"}]}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, f.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Scope", "alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || secs < 1 || secs > 3600 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d, Retry-After %q", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	status, body := f.do("alice", http.MethodPost, "/api/chat", testutil.UserMessage("c1", "u3", "and again"))
	var e struct{ Error string }
	if status != 429 || json.Unmarshal([]byte(body), &e) != nil || !strings.HasPrefix(e.Error, "too many requests: try again in ") {
		t.Fatalf("%d %s", status, body)
	}
	if got := len(f.stored("alice", "c1")); got != 2 {
		t.Fatalf("a refused request changed the chat: %d messages", got)
	}
	f.chat("bob", testutil.UserMessage("c1", "u1", "hello")) // another scope has its own count
}

// A run whose scope's tokens run out is stopped after the step that used
// them, as a stop does: the stream ends with the protocol's terminal
// frames, the reply so far is stored (stop reason aborted), and the next
// run waits for the window.
func TestTokenBudgetStopsARunMidway(t *testing.T) {
	l := limit.NewMemoryLimiter(limit.Limits{Tokens: limit.Rate{N: 1, Per: time.Hour}})
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithLimiter(l))
	chunks := f.chat("alice", testutil.UserMessage("c1", "u1", "weather in Paris"))
	var types []string
	for _, c := range chunks {
		types = append(types, c["type"].(string))
	}
	// As a stopped run ends (docs/runs.md): finish, with reason other.
	if types[len(types)-1] != "finish" || chunks.Find("finish")["finishReason"] != "other" || chunks.Find("tool-output-available") == nil || strings.Contains(chunks.Text(), "The weather in Paris") {
		t.Fatalf("the stopped run streamed %v\n%s", types, f.logs.String())
	}
	stored := f.stored("alice", "c1")
	last := stored[len(stored)-1]
	asst := stored[1]
	if len(stored) != 3 || last.Role != cmf.RoleTool || asst.Extensions.Completion.StopReason != cmf.StopAborted {
		t.Fatalf("stored %d messages, the step stopped as %v", len(stored), asst.Extensions.Completion)
	}
	if status, _ := f.do("alice", http.MethodPost, "/api/chat", testutil.UserMessage("c1", "u2", "hello")); status != 429 {
		t.Fatalf("a scope without tokens got %d", status)
	}

	// AG-UI: the run finishes after the tool's step.
	agui := testutil.PostStream(t, f.url+"/api/agui", `{"threadId":"t1","runId":"r1","messages":[{"id":"u1","role":"user","content":"weather in Paris"}]}`, "X-Scope", "bob")
	if last := agui[len(agui)-1]; last["type"] != "RUN_FINISHED" || agui.Find("TOOL_CALL_RESULT") == nil || strings.Contains(agui.Text(), "The weather in Paris") {
		t.Fatalf("the stopped AG-UI run ended with %v", last)
	}
	if got := f.stored("bob", "t1"); len(got) != 3 || got[1].Extensions.Completion.StopReason != cmf.StopAborted {
		t.Fatalf("bob's stored run: %d messages", len(got))
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]limit.Rate{
		"20/m": {N: 20, Per: time.Minute}, "100000/h": {N: 100000, Per: time.Hour}, "5/10s": {N: 5, Per: 10 * time.Second}, "1/d": {N: 1, Per: 24 * time.Hour},
	} {
		if got, err := limit.ParseRate(in); err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "20", "0/m", "-1/m", "x/m", "20/", "20/fortnight", "20/-1s", "20/0s"} {
		if _, err := limit.ParseRate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
