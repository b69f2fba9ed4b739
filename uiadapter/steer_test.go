package uiadapter_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/uiadapter"
)

// sentWhileRunning is a useChat request body whose new message u2 is
// sent while the reply to u1 runs, as busy says ("" for none): the thread
// as the client shows it, with the reply so far.
func sentWhileRunning(replyID, busy, text string) string {
	body := map[string]any{"id": "c", "trigger": "submit-message", "messages": []any{
		map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "wait 400 ms"}}},
		map[string]any{"id": replyID, "role": "assistant", "parts": []any{}},
		map[string]any{"id": "u2", "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
	}}
	if busy != "" {
		body["busy"] = busy
	}
	b, _ := json.Marshal(body)
	return string(b)
}

// startReply posts a reply that waits, and reads until its start: the
// reply's id.
func startReply(t *testing.T, f *historyFixture, text string) (*http.Response, *testutil.SSEReader, string) {
	t.Helper()
	first := f.post("alice", userBody("c", text))
	events := testutil.NewSSEReader(first.Body)
	data, err := events.Next()
	if err != nil {
		t.Fatal(err)
	}
	var start map[string]any
	_ = json.Unmarshal(data, &start)
	id, _ := start["messageId"].(string)
	if start["type"] != "start" || id == "" {
		t.Fatalf("the reply starts with %s", data)
	}
	return first, events, id
}

// A message sent with busy "steer" while the reply runs goes to that
// reply: it takes the message when the model has answered (the answer is
// not the end), every stream of the reply shows it (AI SDK 6: a
// data-steering-message part) and then the reply's answer to it, the
// request that sent it is answered with the outcome alone, and the chat
// stores it where the model saw it.
func TestSteeringReachesTheRunningReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		first, _, replyID := startReply(t, f, "wait 400 ms")
		defer first.Body.Close()

		outcome := f.chat("alice", sentWhileRunning(replyID, "steer", "hello"))
		got := outcome.Find("data-steering")
		if got == nil || outcome.Find("error") != nil || outcome.Find("text-delta") != nil {
			t.Fatalf("the steering request's answer: %v", outcome)
		}
		if data := got["data"].(map[string]any); data["outcome"] != "delivered" || data["messageId"] != "u2" || got["transient"] != true {
			t.Fatalf("the outcome: %v", got)
		}

		rest := testutil.ParseChunks(t, first.Body)
		steered := rest.Find("data-steering-message")
		if steered == nil || steered["id"] != "u2" || !strings.Contains(mustJSON(steered["data"]), `"text":"hello"`) {
			t.Fatalf("the reply's stream shows no steering message: %v", rest)
		}
		if text := rest.Text(); !strings.HasPrefix(text, "done") || !strings.Contains(text, "hello") || rest.Find("error") != nil {
			t.Fatalf("the reply's stream: %q %v", text, rest)
		}
		msgs := f.stored("alice", "c")
		if roles(msgs) != "user,assistant,user,assistant" || msgs[2].ID() != "u2" || msgs[1].ID() != replyID {
			t.Fatalf("stored %s", roles(msgs))
		}
		if c := msgs[3].Extensions.Completion; c == nil || c.StopReason != cmf.StopEnd || !strings.Contains(msgs[3].Text(), "hello") {
			t.Fatalf("the answer to the steering message is stored as %q %+v", msgs[3].Text(), c)
		}
		// Stored as the turn's message is: with the request's record.
		if msgs[2].Extensions == nil || msgs[2].Extensions.Request == nil {
			t.Fatal("the steering message is stored without its request's record")
		}
	})
}

// A steering message that no running reply takes (the reply has ended)
// is a turn of its own: nothing is lost.
func TestSteeringAfterTheReplyEndedIsATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		f.chat("alice", userBody("c", "hello"))
		replyID := f.stored("alice", "c")[1].ID()
		reply := f.chat("alice", sentWhileRunning(replyID, "steer", "hello again"))
		if !strings.Contains(reply.Text(), "hello again") || reply.Find("data-steering") != nil {
			t.Fatalf("the message's own reply: %v", reply)
		}
		if msgs := f.stored("alice", "c"); roles(msgs) != "user,assistant,user,assistant" {
			t.Fatalf("stored %s", roles(msgs))
		}
	})
}

// A message sent with busy "interrupt" stops the running reply, as Stop
// does, and runs at once, even from a client that does not show the
// reply (where no "busy" is refused).
func TestInterruptStopsTheReplyAndRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		first, events, _ := startReply(t, f, "think: wait 30000 ms")
		defer first.Body.Close()
		for {
			data, err := events.Next()
			if err != nil {
				t.Fatalf("the reply ended early: %v", err)
			}
			if strings.Contains(string(data), "reasoning-delta") {
				break // it has shown something
			}
		}
		// A tab that loaded the chat before the turn holds none of it.
		other := func(busy string) string {
			b, _ := json.Marshal(map[string]any{"id": "c", "busy": busy, "messages": []any{
				map[string]any{"id": "u2", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello"}}},
			}})
			return string(b)
		}
		if status, raw := f.do("alice", http.MethodPost, "/api/chat", other("")); status != http.StatusConflict {
			t.Fatalf("without busy: %d %s", status, raw)
		}
		reply := f.chat("alice", other("interrupt"))
		if !strings.Contains(reply.Text(), "hello") || reply.Find("error") != nil {
			t.Fatalf("the interrupting reply: %v", reply)
		}
		if rest := testutil.ParseChunks(t, first.Body); rest.Find("abort") == nil && rest.Find("finish") == nil {
			t.Fatalf("the interrupted stream: %v", rest)
		}
		msgs := f.stored("alice", "c")
		if roles(msgs) != "user,assistant,user,assistant" || msgs[1].Extensions.Completion == nil || msgs[1].Extensions.Completion.StopReason != cmf.StopAborted {
			t.Fatalf("stored %s", roles(msgs))
		}
	})
}

// A bad "busy" is a 400 that names the values.
func TestUnknownBusyIsRefused(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	status, raw := f.do("alice", http.MethodPost, "/api/chat", sentWhileRunning("r", "later", "hello"))
	if status != http.StatusBadRequest || !strings.Contains(raw, `steer`) || !strings.Contains(raw, `interrupt`) {
		t.Fatalf("%d %s", status, raw)
	}
	in, _ := json.Marshal(map[string]any{"threadId": "t", "runId": "r1", "messages": []any{map[string]any{"id": "u1", "role": "user", "content": "hi"}}, "forwardedProps": map[string]any{"busy": 1}})
	if status, raw := f.do("alice", http.MethodPost, "/api/agui", string(in)); status != http.StatusBadRequest || !strings.Contains(raw, "forwardedProps.busy") {
		t.Fatalf("%d %s", status, raw)
	}
}

// Over AG-UI a steering message is a run input whose forwardedProps say
// busy "steer", or whose parentRunId names the running run (ag-ui#2148,
// which a server that cannot steer serves as a new run). Its run is
// answered with an ACTIVITY_SNAPSHOT of the delivery; the running run's
// stream shows the message as a user text message, then the answer.
func TestSteeringOverAGUI(t *testing.T) {
	for name, extra := range map[string]map[string]any{
		"forwardedProps": {"forwardedProps": map[string]any{"busy": "steer"}},
		"parentRunId":    {"parentRunId": "r1"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newBubbleFixture(t, history.NewMemory())
				asked, first := startAGUIRun(t, f)
				defer first.Body.Close()
				steer := map[string]any{"threadId": "t", "runId": "r2", "protocolVersion": "1.0", "messages": []any{
					asked, map[string]any{"id": "u2", "role": "user", "content": "hello"},
				}}
				for k, v := range extra {
					steer[k] = v
				}
				status, raw := f.agui(steer)
				if status != http.StatusOK || !strings.Contains(raw, `"activityType":"steering"`) || !strings.Contains(raw, `"outcome":"delivered"`) || strings.Contains(raw, "TEXT_MESSAGE") {
					t.Fatalf("the steering run: %d %s", status, raw)
				}
				rest := testutil.ParseChunks(t, first.Body)
				var user map[string]any
				for _, e := range rest {
					if e["type"] == "TEXT_MESSAGE_START" && e["role"] == "user" {
						user = e
					}
				}
				if user == nil || user["messageId"] != "u2" || !strings.Contains(rest.Text(), "hello") || rest.Find("RUN_ERROR") != nil {
					t.Fatalf("the running run's stream: %v", rest)
				}
				if msgs := f.stored("alice", "t"); roles(msgs) != "user,assistant,user,assistant" || msgs[2].ID() != "u2" {
					t.Fatalf("stored %s", roles(msgs))
				}
			})
		})
	}
}

// A parentRunId that names another run than the running one is not a
// steer: the request is refused busy, as any other.
func TestParentRunIDOfAnotherRunIsBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		asked, first := startAGUIRun(t, f)
		defer first.Body.Close()
		status, raw := f.agui(map[string]any{"threadId": "t", "runId": "r2", "protocolVersion": "1.0", "parentRunId": "r0", "messages": []any{
			asked, map[string]any{"id": "u2", "role": "user", "content": "hello"},
		}})
		if status != http.StatusConflict || !strings.Contains(raw, `"code":"busy"`) {
			t.Fatalf("%d %s", status, raw)
		}
	})
}

// startAGUIRun starts an AG-UI run r1 on thread t whose reply waits
// (u1: "wait 400 ms"), read up to its first event: the message it asked,
// and its stream.
func startAGUIRun(t *testing.T, f *historyFixture) (map[string]any, *http.Response) {
	t.Helper()
	asked := map[string]any{"id": "u1", "role": "user", "content": "wait 400 ms"}
	in, _ := json.Marshal(map[string]any{"threadId": "t", "runId": "r1", "protocolVersion": "1.0", "messages": []any{asked}})
	first := f.send("alice", http.MethodPost, "/api/agui", string(in))
	if _, err := testutil.NewSSEReader(first.Body).Next(); err != nil {
		t.Fatal(err)
	}
	return asked, first
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// A steering message passes what a turn's message passes: one the input
// policy denies is refused (403) and never reaches the running reply.
func TestSteeringMessagePassesTheInputPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory(), uiadapter.WithGuard(testutil.DemoEngine(t)))
		first, _, replyID := startReply(t, f, "wait 400 ms")
		defer first.Body.Close()
		status, raw := f.do("alice", http.MethodPost, "/api/chat", sentWhileRunning(replyID, "steer", "password: hunter2"))
		if status != http.StatusForbidden || !strings.Contains(raw, "do not paste passwords") {
			t.Fatalf("%d %s", status, raw)
		}
		rest := testutil.ParseChunks(t, first.Body)
		if rest.Find("data-steering-message") != nil || strings.Contains(rest.Text(), "hunter2") {
			t.Fatalf("the reply took the denied message: %v", rest)
		}
		if msgs := f.stored("alice", "c"); roles(msgs) != "user,assistant" {
			t.Fatalf("stored %s", roles(msgs))
		}
	})
}

// Steering messages sent at once all reach the reply, each once: a
// message sent twice (a retried request) is taken once and both requests
// learn it was delivered; another message sent meanwhile is taken too, in
// its place. A retry after the reply ended finds the message stored and
// runs nothing again.
func TestSteeringMessagesArriveOnceEach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		first, _, replyID := startReply(t, f, "wait 400 ms")
		defer first.Body.Close()
		bodies := []string{
			sentWhileRunning(replyID, "steer", "hello"),
			sentWhileRunning(replyID, "steer", "hello"),
			strings.Replace(sentWhileRunning(replyID, "steer", "and more"), `"u2"`, `"u3"`, 1),
		}
		answers := make([]string, len(bodies))
		var wg sync.WaitGroup
		for i, body := range bodies {
			wg.Go(func() {
				_, answers[i] = f.do("alice", http.MethodPost, "/api/chat", body)
			})
		}
		wg.Wait()
		for i, a := range answers {
			if !strings.Contains(a, `"outcome":"delivered"`) {
				t.Fatalf("request %d: %s", i, a)
			}
		}
		rest := testutil.ParseChunks(t, first.Body)
		var steered []string
		for _, c := range rest {
			if c["type"] == "data-steering-message" {
				steered = append(steered, c["id"].(string))
			}
		}
		if len(steered) != 2 || steered[0] == steered[1] {
			t.Fatalf("the reply took %v, want u2 and u3 once each", steered)
		}
		msgs := f.stored("alice", "c")
		if roles(msgs) != "user,assistant,user,user,assistant" {
			t.Fatalf("stored %s", roles(msgs))
		}
		// The same message once more, the reply over.
		status, raw := f.do("alice", http.MethodPost, "/api/chat", bodies[0])
		if after := f.stored("alice", "c"); roles(after) != roles(msgs) || status != http.StatusOK || !strings.Contains(raw, `"outcome":"delivered"`) {
			t.Fatalf("a retry after the end: %d %s, stored %s", status, raw, roles(after))
		}
	})
}
