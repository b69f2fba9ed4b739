package uiadapter_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// A client that stopped reading a reply and sends again, as useChat's
// stop() and then sendMessage do (stop only aborts the fetch), stops the
// reply, which is kept as stopped, and gets its new reply at once: its
// request holds the reply it showed. Whether the first stream's client
// left or still reads, the outcome is the same; a reader still there
// sees the reply end as stopped. In a synctest bubble, so the first
// reply's 30 s wait outlasts everything the test does.
func TestSendingAgainStopsTheReplyItShowed(t *testing.T) {
	for _, stillReading := range []bool{false, true} {
		name := map[bool]string{false: "the client left", true: "the client still reads"}[stillReading]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newBubbleFixture(t, history.NewMemory())
				first := f.post("alice", userBody("c", "think: wait 30000 ms"))
				defer first.Body.Close()
				events := testutil.NewSSEReader(first.Body)
				// Read until the reply has shown something: its id, then its thinking.
				var replyID string
				for shown := false; !shown; {
					data, err := events.Next()
					if err != nil {
						t.Fatalf("the first reply ended early: %v", err)
					}
					var c map[string]any
					_ = json.Unmarshal(data, &c)
					switch c["type"] {
					case "start":
						replyID, _ = c["messageId"].(string)
					case "reasoning-delta":
						shown = replyID != ""
					}
				}
				if !stillReading {
					first.Body.Close()
				}

				body, _ := json.Marshal(map[string]any{"id": "c", "trigger": "submit-message", "messages": []any{
					map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "think: wait 30000 ms"}}},
					map[string]any{"id": replyID, "role": "assistant", "parts": []any{map[string]any{"type": "reasoning", "text": "Thinking", "state": "done"}}},
					map[string]any{"id": "u2", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello"}}},
				}})
				second := f.chat("alice", string(body))
				if got := second.Text(); !strings.Contains(got, "hello") || second.Find("error") != nil {
					t.Fatalf("the new reply: %q %v", got, second)
				}
				if stillReading {
					rest := testutil.ParseChunks(t, first.Body)
					if fin := rest.Find("finish"); fin == nil || rest.Find("error") != nil || rest.Find("text-delta") != nil {
						t.Fatalf("the first stream after the stop: %v", rest)
					}
				}
				msgs := f.stored("alice", "c")
				if roles(msgs) != "user,assistant,user,assistant" {
					t.Fatalf("stored %s", roles(msgs))
				}
				stopped := msgs[1]
				if stopped.ID() != replyID || stopped.Extensions.Completion == nil || stopped.Extensions.Completion.StopReason != cmf.StopAborted {
					t.Fatalf("the stopped reply is stored as %s %+v", stopped.ID(), stopped.Extensions.Completion)
				}
				if !strings.Contains(msgs[3].Text(), "hello") {
					t.Fatalf("the new reply is stored as %q", msgs[3].Text())
				}
			})
		})
	}
}

// A request that does not show the running reply (another tab, which
// loaded the chat before the turn) is refused busy, and the reply goes on.
func TestSendingFromATabThatDidNotShowTheReplyIsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		f.chat("alice", userBody("c", "hello"))
		first := f.post("alice", testutil.UserMessage("c", "u2", "think: wait 400 ms"))
		defer first.Body.Close()
		if _, err := testutil.NewSSEReader(first.Body).Next(); err != nil {
			t.Fatal(err)
		}
		// The other tab holds the first turn and its reply, not the running one.
		stored := f.stored("alice", "c")
		body, _ := json.Marshal(map[string]any{"id": "c", "trigger": "submit-message", "messages": []any{
			map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello"}}},
			map[string]any{"id": stored[1].ID(), "role": "assistant", "parts": []any{map[string]any{"type": "text", "text": stored[1].Text()}}},
			map[string]any{"id": "u3", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "from the other tab"}}},
		}})
		if status, raw := f.do("alice", http.MethodPost, "/api/chat", string(body)); status != http.StatusConflict || !strings.Contains(raw, `"code":"busy"`) {
			t.Fatalf("the other tab's message: %d %s", status, raw)
		}
		rest := testutil.ParseChunks(t, first.Body)
		if rest.Text() != "done" {
			t.Fatalf("the running reply: %q", rest.Text())
		}
	})
}

// The same over AG-UI, as @ag-ui/client's abortRun and a new runAgent
// make it: the client holds the reply's reasoning message, whose id is
// its own, after the turn that asked for it.
func TestSendingAgainStopsTheReplyItShowedAGUI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		asked := map[string]any{"id": "u1", "role": "user", "content": "think: wait 30000 ms"}
		in, _ := json.Marshal(map[string]any{"threadId": "t", "runId": "r1", "protocolVersion": "1.0", "messages": []any{asked}})
		first := f.send("alice", http.MethodPost, "/api/agui", string(in))
		events := testutil.NewSSEReader(first.Body)
		var reasoning string
		for reasoning == "" {
			data, err := events.Next()
			if err != nil {
				t.Fatalf("the first run ended early: %v", err)
			}
			var e map[string]any
			_ = json.Unmarshal(data, &e)
			if e["type"] == "REASONING_MESSAGE_CONTENT" {
				reasoning, _ = e["messageId"].(string)
			}
		}
		first.Body.Close()
		in, _ = json.Marshal(map[string]any{"threadId": "t", "runId": "r2", "protocolVersion": "1.0", "messages": []any{
			asked,
			map[string]any{"id": reasoning, "role": "reasoning", "content": "Thinking"},
			map[string]any{"id": "u2", "role": "user", "content": "hello"},
		}})
		status, raw := f.do("alice", http.MethodPost, "/api/agui", string(in))
		if status != http.StatusOK || !strings.Contains(raw, `"delta":"hello"`) || strings.Contains(raw, "RUN_ERROR") {
			t.Fatalf("the new run: %d %s", status, raw)
		}
		msgs := f.stored("alice", "t")
		if roles(msgs) != "user,assistant,user,assistant" || msgs[1].Extensions.Completion == nil || msgs[1].Extensions.Completion.StopReason != cmf.StopAborted {
			t.Fatalf("stored %s", roles(msgs))
		}
	})
}
