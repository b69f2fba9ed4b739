package uiadapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// retryCase is how one round sends its request: in which protocol, and
// whether it names itself with an Idempotency-Key.
type retryCase struct {
	name string
	path string
	body func(chat string) string
	key  bool
}

var retryCases = []retryCase{
	{"useChat", "/api/chat", func(chat string) string { return userBody(chat, "weather in Paris") }, false},
	{"useChat with an Idempotency-Key", "/api/chat", func(chat string) string { return userBody(chat, "weather in Paris") }, true},
	{"AG-UI", "/api/agui", func(chat string) string {
		return `{"threadId":"` + chat + `","runId":"run-` + chat + `","protocolVersion":"1.0","messages":[{"id":"u1","role":"user","content":"weather in Paris"}]}`
	}, false},
}

// retryMoments are when a round sends its request again.
var retryMoments = []string{
	"while its tool runs",
	"twice at once while its tool runs",
	"while its tool runs, the first reader gone",
	"after its run ended",
	"after its run ended, the first reader gone at once",
}

// A request sent again (a retry: its response lost on the way, a proxy's
// or the app's second try) gets the stream of the run it started and runs
// nothing again. Over memory history in one process, in both protocols,
// at-most-once and idempotent tools, at moments picked at random from a
// printed seed (AGENTUI_PROPERTY_SEED replays it): every tool call runs
// once, every stream read to its end shows the run whole (its one tool
// call, its result, its text, its end), and the chat stores one reply.
func TestRetriedRequestsRunNothingAgain(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTUI_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (AGENTUI_PROPERTY_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	var mu sync.Mutex
	runs := map[string]int{} // executions by idempotency key
	started, release := make(chan struct{}, 1), make(chan struct{})
	var gateMu sync.Mutex
	weather := agent.FuncTool("get_weather", "Weather.", func(ctx context.Context, in demo.WeatherInput) (string, error) {
		mu.Lock()
		runs[agent.IdempotencyKey(ctx)]++
		mu.Unlock()
		gateMu.Lock()
		gate := release
		gateMu.Unlock()
		select {
		case started <- struct{}{}:
		default: // it ran again: the round fails on it
		}
		select {
		case <-gate:
		case <-ctx.Done(): // a failed round's run, cut when the test ends
			return "", ctx.Err()
		}
		return "sunny in " + in.City, nil
	})
	for _, idempotent := range []bool{false, true} {
		weather.Idempotent = idempotent
		f := newHistoryFixtureWith(t, history.NewMemory(), testutil.DemoLoopWith(t, weather))
		for round := range 12 {
			c, moment := retryCases[rng.IntN(len(retryCases))], retryMoments[rng.IntN(len(retryMoments))]
			chat := "c" + strconv.Itoa(round)
			if idempotent {
				chat += "-idempotent"
			}
			t.Logf("%s: %s, sent again %s", chat, c.name, moment)
			gateMu.Lock()
			release = make(chan struct{})
			gateMu.Unlock()
			send := func() *http.Response {
				req, _ := http.NewRequest(http.MethodPost, f.url+c.path, strings.NewReader(c.body(chat)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Scope", "alice")
				if c.key {
					req.Header.Set(edge.IdempotencyKeyHeader, "key-"+chat)
				}
				resp, err := f.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Fatalf("%s: %d %s", chat, resp.StatusCode, b)
				}
				return resp
			}
			var streams sync.WaitGroup
			var whole []retryStream
			read := func(resp *http.Response) {
				streams.Go(func() {
					s := readRetryStream(resp)
					mu.Lock()
					whole = append(whole, s)
					mu.Unlock()
				})
			}
			first := send()
			<-started // the tool runs, held
			switch moment {
			case "while its tool runs":
				read(first)
				read(send())
				close(release)
			case "twice at once while its tool runs":
				read(first)
				a, b := send(), send()
				read(a)
				read(b)
				close(release)
			case "while its tool runs, the first reader gone":
				first.Body.Close()
				read(send())
				close(release)
			case "after its run ended":
				close(release)
				read(first)
				streams.Wait()
				read(send())
			case "after its run ended, the first reader gone at once":
				first.Body.Close()
				close(release)
				testutil.Eventually(t, 10*time.Second, "the run stored its reply", func() bool { return roles(f.stored("alice", chat)) == "user,assistant,tool,assistant" })
				read(send())
			}
			streams.Wait()
			if len(whole) == 0 {
				t.Fatalf("%s: no stream was read", chat)
			}
			for i, s := range whole {
				if s.calls != 1 || !strings.Contains(s.text, "Paris") || !s.result || !s.ended || s.run != whole[0].run || s.text != whole[0].text {
					t.Fatalf("%s: stream %d of %d is not the run's whole: %+v (the first: %+v)", chat, i+1, len(whole), s, whole[0])
				}
			}
			if got := roles(f.stored("alice", chat)); got != "user,assistant,tool,assistant" {
				t.Fatalf("%s: stored %s", chat, got)
			}
			select {
			case <-started:
				t.Fatalf("%s: the tool ran again", chat)
			default:
			}
		}
	}
	for key, n := range runs {
		if n != 1 {
			t.Errorf("the call %s ran %d times", key, n)
		}
	}
	if len(runs) != 24 {
		t.Fatalf("%d calls ran, want 24", len(runs))
	}
}

// Sent again with a new runId, an AG-UI request that resends its last
// message unchanged is a regeneration (AG-UI has no word of its own for
// one): its reply is made again, and its tool called again, under a new
// call id. So is a useChat request with another Idempotency-Key.
func TestANewRequestForTheSameMessageRegenerates(t *testing.T) {
	var mu sync.Mutex
	var runs int
	weather := agent.FuncTool("get_weather", "Weather.", func(_ context.Context, in demo.WeatherInput) (string, error) {
		mu.Lock()
		runs++
		mu.Unlock()
		return "sunny in " + in.City, nil
	})
	f := newHistoryFixtureWith(t, history.NewMemory(), testutil.DemoLoopWith(t, weather))
	body := func(run string) string {
		return `{"threadId":"c","runId":"` + run + `","protocolVersion":"1.0","messages":[{"id":"u1","role":"user","content":"weather in Paris"}]}`
	}
	for _, run := range []string{"r1", "r1", "r2"} {
		if status, raw := f.do("alice", http.MethodPost, "/api/agui", body(run)); status != http.StatusOK || !strings.Contains(raw, "RUN_FINISHED") {
			t.Fatalf("%s: %d %s", run, status, raw)
		}
	}
	if runs != 2 {
		t.Fatalf("the tool ran %d times: once for r1 (sent twice) and once for r2 are 2", runs)
	}
	for _, key := range []string{"k1", "k1", "k2"} {
		testutil.PostStreamWith(t, f.client, f.url+"/api/chat", userBody("v", "weather in Paris"), "X-Scope", "alice", edge.IdempotencyKeyHeader, key)
	}
	if runs != 4 {
		t.Fatalf("the tool ran %d times: once for k1 (sent twice) and once for k2 make 4", runs)
	}
	if got := roles(f.stored("alice", "v")); got != "user,assistant,tool,assistant" {
		t.Fatalf("stored %s", got)
	}
}

// retryStream is what a stream showed of its run.
type retryStream struct {
	run    string // the Agentui-Run header
	calls  int    // tool calls announced
	result bool   // a tool result shown
	text   string
	ended  bool // the protocol's end of the run
}

func readRetryStream(resp *http.Response) retryStream {
	defer resp.Body.Close()
	s := retryStream{run: resp.Header.Get(edge.RunHeader)}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev map[string]any
		if json.Unmarshal([]byte(data), &ev) != nil {
			continue
		}
		switch ev["type"] {
		case "tool-input-available", "TOOL_CALL_END":
			s.calls++
		case "tool-output-available", "TOOL_CALL_RESULT":
			s.result = true
		case "text-delta", "TEXT_MESSAGE_CONTENT":
			s.text += ev["delta"].(string)
		case "finish", "RUN_FINISHED":
			s.ended = true
		}
	}
	return s
}
