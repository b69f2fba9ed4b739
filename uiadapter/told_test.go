package uiadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// unreachable is a model that cannot be reached: it fails before it says
// anything.
type unreachable struct{}

func (unreachable) Stream(context.Context, *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		yield(agent.Chunk{}, fmt.Errorf("dial tcp: connection refused: %w", agent.ErrModelUnreachable))
	}
}

// A reply that failed is stored with what its client was told, so that a
// reloaded page shows the same failure as the live one: a failure before
// any output is kept as an empty reply that says so; one after output
// keeps its text. Both protocols' reloads carry it as the reply's
// metadata (finishReason "error", and the sentence).
func TestFailuresAreStoredAsTold(t *testing.T) {
	f := newHistoryFixtureWith(t, history.NewMemory(), testutil.Must(agent.New(unreachable{})))
	live := f.chat("alice", testutil.UserMessage("down", "u1", "hello"))
	told := live.Find("error")
	if told == nil {
		t.Fatalf("no error chunk: %v", live)
	}
	stored := f.stored("alice", "down")
	if roles(stored) != "user,assistant" || len(stored[1].Content) != 0 || stored[1].Extensions.Completion.Error != told["errorText"] {
		t.Fatalf("stored %s: %+v", roles(stored), stored)
	}
	status, body := f.do("alice", http.MethodGet, "/api/chat/down", "")
	var msgs []struct {
		Role     string
		Metadata struct{ FinishReason, Error string }
	}
	if status != 200 || json.Unmarshal([]byte(body), &msgs) != nil || len(msgs) != 2 {
		t.Fatalf("reload: %d %s", status, body)
	}
	if md := msgs[1].Metadata; md.FinishReason != "error" || md.Error != told["errorText"] {
		t.Fatalf("useChat reload's metadata: %+v, live said %q", md, told["errorText"])
	}
	status, body = f.do("alice", http.MethodPost, "/api/agui/connect", `{"threadId":"down","runId":"r2","protocolVersion":"1.0","messages":[]}`)
	if status != 200 || !strings.Contains(body, `"finishReason":"error","error":`+jsonString(told["errorText"].(string))) {
		t.Fatalf("AG-UI reload: %d %s", status, body)
	}

	// After output: the demo's "fail" says "Working on it" first.
	d := newHistoryFixture(t, history.NewMemory())
	live = d.chat("alice", testutil.UserMessage("half", "u1", "fail"))
	stored = d.stored("alice", "half")
	if roles(stored) != "user,assistant" || stored[1].Text() != "Working on it" || stored[1].Extensions.Completion.Error != live.Find("error")["errorText"] {
		t.Fatalf("stored %s: %+v", roles(stored), stored)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An AG-UI reload says how a call's approval was answered: a denied call
// reloads as denied, with the user's reason, not as a call that ran.
func TestAGUIReloadSaysACallWasDenied(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	first := map[string]any{"id": "u1", "role": "user", "content": "delete /tmp/x.txt"}
	_, raw := f.agui(map[string]any{"threadId": "t1", "runId": "r1", "messages": []any{first}})
	interrupt := firstInterruptID(raw)
	status, raw := f.agui(map[string]any{"threadId": "t1", "runId": "r2", "messages": []any{first},
		"resume": []any{map[string]any{"interruptId": interrupt, "status": "resolved", "payload": map[string]any{"approved": false, "reason": "not that file"}}}})
	if status != 200 || f.deleted.Load() != 0 {
		t.Fatalf("denial: %d %s", status, raw)
	}
	// The run's stream ends before its log does (the reply is saved, the
	// lock released, then the log ended): a connect in between replays
	// the run instead. A reload once it is over shows the snapshot.
	var status2 int
	var body string
	testutil.Eventually(t, 10*time.Second, "a reload showing the stored conversation", func() bool {
		status2, body = f.do("alice", http.MethodPost, "/api/agui/connect", `{"threadId":"t1","runId":"r3","protocolVersion":"1.0","messages":[]}`)
		return status2 != 200 || !strings.Contains(body, `"runId":"r2"`)
	})
	if status2 != 200 || !strings.Contains(body, `"decision":{"approved":false,"reason":"not that file"}`) {
		t.Fatalf("reload: %d %s", status2, body)
	}
}
