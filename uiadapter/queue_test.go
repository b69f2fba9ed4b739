package uiadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// queuedBody is a useChat request that queues message id (text) behind
// the running reply to u1.
func queuedBody(replyID, id, text string) string {
	return strings.Replace(sentWhileRunning(replyID, "queue", text), `"u2"`, `"`+id+`"`, 1)
}

// queue lists the chat's queue as alice.
func (f *historyFixture) queue(chat string) []uiadapter.QueuedMessage {
	f.t.Helper()
	status, raw := f.do("alice", http.MethodGet, "/api/chat/"+chat+"/queue", "")
	var out struct{ Queued []uiadapter.QueuedMessage }
	if status != http.StatusOK || json.Unmarshal([]byte(raw), &out) != nil {
		f.t.Fatalf("GET queue: %d %s", status, raw)
	}
	return out.Queued
}

func queuedIDs(qs []uiadapter.QueuedMessage) string {
	var ids []string
	for _, q := range qs {
		ids = append(ids, q.ID)
	}
	return strings.Join(ids, ",")
}

// A message sent with busy "queue" while the reply runs waits: its
// request is answered "queued" (a transient data-queue chunk) at once,
// the reply goes on undisturbed, and once it has ended the message runs
// as a turn of its own, whose reply the same request then streams. The
// chat stores both turns in order.
func TestQueuedMessageRunsAfterTheReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		first, _, replyID := startReply(t, f, "wait 400 ms")
		defer first.Body.Close()

		queued := f.post("alice", queuedBody(replyID, "u2", "hello"))
		defer queued.Body.Close()
		events := testutil.NewSSEReader(queued.Body)
		data, err := events.Next()
		if err != nil {
			t.Fatal(err)
		}
		var outcome map[string]any
		_ = json.Unmarshal(data, &outcome)
		if d, _ := outcome["data"].(map[string]any); outcome["type"] != "data-queue" || outcome["transient"] != true || d["outcome"] != "queued" || d["messageId"] != "u2" || d["position"] != 1.0 {
			t.Fatalf("the queued request's first chunk: %s", data)
		}
		if got := queuedIDs(f.queue("c")); got != "u2" {
			t.Fatalf("the queue while the reply runs: %q", got)
		}

		rest := testutil.ParseChunks(t, first.Body)
		if rest.Find("finish") == nil || rest.Find("abort") != nil || rest.Find("error") != nil || strings.Contains(rest.Text(), "hello") {
			t.Fatalf("the running reply's stream: %v", rest)
		}
		reply := testutil.ParseChunks(t, queued.Body)
		if start := reply.Find("start"); start == nil || start["messageId"] == nil || !strings.Contains(reply.Text(), "hello") || reply.Find("finish") == nil || reply.Find("error") != nil {
			t.Fatalf("the queued message's reply: %v", reply)
		}
		msgs := f.stored("alice", "c")
		if roles(msgs) != "user,assistant,user,assistant" || msgs[1].ID() != replyID || msgs[2].ID() != "u2" || !strings.Contains(msgs[3].Text(), "hello") {
			t.Fatalf("stored %s", roles(msgs))
		}
		if c := msgs[1].Extensions.Completion; c == nil || c.StopReason != cmf.StopEnd {
			t.Fatalf("the first reply was not left to finish: %+v", c)
		}
		if got := queuedIDs(f.queue("c")); got != "" {
			t.Fatalf("the queue once it ran: %q", got)
		}
	})
}

// Queued messages run in the order they came, one turn each, even when
// the requests that queued them have gone: the run that ends runs the
// next. One removed from the queue (DELETE) never runs.
func TestQueueRunsInOrderWithoutItsClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		first, _, replyID := startReply(t, f, "wait 400 ms")
		for i, id := range []string{"u2", "u3", "u4"} {
			resp := f.post("alice", queuedBody(replyID, id, "say "+id))
			data, err := testutil.NewSSEReader(resp.Body).Next()
			if err != nil || !strings.Contains(string(data), `"position":`+string(rune('1'+i))) {
				t.Fatalf("queueing %s: %s, %v", id, data, err)
			}
			resp.Body.Close() // the client leaves; its message stays queued
		}
		if got := queuedIDs(f.queue("c")); got != "u2,u3,u4" {
			t.Fatalf("the queue: %q", got)
		}
		if status, raw := f.do("alice", http.MethodDelete, "/api/chat/c/queue/u3", ""); status != http.StatusNoContent {
			t.Fatalf("DELETE u3: %d %s", status, raw)
		}
		if status, _ := f.do("alice", http.MethodDelete, "/api/chat/c/queue/u3", ""); status != http.StatusNotFound {
			t.Fatalf("DELETE u3 again: %d, want 404", status)
		}
		if status, _ := f.do("bob", http.MethodDelete, "/api/chat/c/queue/u4", ""); status != http.StatusNotFound {
			t.Fatalf("another scope's DELETE: %d, want 404", status)
		}
		testutil.ParseChunks(t, first.Body)
		first.Body.Close()
		synctest.Wait() // the queue drains: each run's end starts the next
		msgs := f.stored("alice", "c")
		var users []string
		for _, m := range msgs {
			if m.Role == cmf.RoleUser {
				users = append(users, m.ID())
			}
		}
		if roles(msgs) != "user,assistant,user,assistant,user,assistant" || strings.Join(users, ",") != "u1,u2,u4" {
			t.Fatalf("stored %s, users %v", roles(msgs), users)
		}
		if got := queuedIDs(f.queue("c")); got != "" {
			t.Fatalf("the queue once drained: %q", got)
		}
	})
}

// A queued message passes what a turn's message passes: one the input
// policy denies is refused (403) and never queued; a full queue refuses
// one more (409).
func TestQueuedMessagePassesTheInputPolicyAndTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory(), uiadapter.WithGuard(testutil.DemoEngine(t)))
		first, _, replyID := startReply(t, f, "wait 400 ms")
		defer first.Body.Close()
		if status, raw := f.do("alice", http.MethodPost, "/api/chat", queuedBody(replyID, "u2", "password: hunter2")); status != http.StatusForbidden {
			t.Fatalf("a denied message: %d %s", status, raw)
		}
		for i := range uiadapter.MaxQueued {
			resp := f.post("alice", queuedBody(replyID, "q"+string(rune('a'+i)), "later"))
			if _, err := testutil.NewSSEReader(resp.Body).Next(); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		status, raw := f.do("alice", http.MethodPost, "/api/chat", queuedBody(replyID, "u9", "one more"))
		if status != http.StatusConflict || !strings.Contains(raw, "queue is full") {
			t.Fatalf("one past the bound: %d %s", status, raw)
		}
		if got := f.queue("c"); len(got) != uiadapter.MaxQueued || strings.Contains(queuedIDs(got), "u2") {
			t.Fatalf("the queue: %q", queuedIDs(got))
		}
	})
}

// Over AG-UI a queued message's run (forwardedProps busy "queue") starts
// at once with an ACTIVITY_SNAPSHOT saying "queued", then, once the
// running run has ended, goes on with the message's own turn: one
// RUN_STARTED, one RUN_FINISHED.
func TestQueueOverAGUI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		asked, first := startAGUIRun(t, f)
		defer first.Body.Close()
		status, raw := f.agui(map[string]any{"threadId": "t", "runId": "r2", "protocolVersion": "1.0", "forwardedProps": map[string]any{"busy": "queue"},
			"messages": []any{asked, map[string]any{"id": "u2", "role": "user", "content": "hello"}}})
		if status != http.StatusOK || strings.Count(raw, `"RUN_STARTED"`) != 1 || strings.Count(raw, `"RUN_FINISHED"`) != 1 ||
			!strings.Contains(raw, `"activityType":"queue"`) || !strings.Contains(raw, `"outcome":"queued"`) || !strings.Contains(raw, `"runId":"r2"`) {
			t.Fatalf("the queued run: %d %s", status, raw)
		}
		if i, j := strings.Index(raw, `"activityType":"queue"`), strings.Index(raw, `"TEXT_MESSAGE_START"`); i < 0 || j < i {
			t.Fatalf("the outcome does not come before the turn: %s", raw)
		}
		// The client's thread lacks the reply it waited for: the turn
		// brings it in line.
		if !strings.Contains(raw, `"MESSAGES_SNAPSHOT"`) || !strings.Contains(raw, `"content":"done"`) {
			t.Fatalf("the queued run does not bring the client's thread in line: %s", raw)
		}
		testutil.ParseChunks(t, first.Body)
		if msgs := f.stored("alice", "t"); roles(msgs) != "user,assistant,user,assistant" || msgs[2].ID() != "u2" {
			t.Fatalf("stored %s", roles(msgs))
		}
	})
}

// The queue's routes answer bad input with a short JSON error, and
// another scope's chat has an empty queue.
func TestQueueRoutesBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		first, _, replyID := startReply(t, f, "wait 400 ms")
		defer first.Body.Close()
		resp := f.post("alice", queuedBody(replyID, "u2", "hello"))
		if _, err := testutil.NewSSEReader(resp.Body).Next(); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for name, c := range map[string]struct {
			scope, method, path string
			status              int
		}{
			"a bad message id":     {"alice", http.MethodDelete, "/api/chat/c/queue/%1B%5B31m", http.StatusBadRequest},
			"a bad chat id":        {"alice", http.MethodGet, "/api/chat/%1B%5B31m/queue", http.StatusBadRequest},
			"no scope":             {"", http.MethodGet, "/api/chat/c/queue", http.StatusUnauthorized},
			"another scope's list": {"bob", http.MethodGet, "/api/chat/c/queue", http.StatusOK},
		} {
			status, raw := f.do(c.scope, c.method, c.path, "")
			if status != c.status || !strings.HasPrefix(raw, "{") {
				t.Errorf("%s: %d %s, want %d and JSON", name, status, raw, c.status)
			}
			if name == "another scope's list" && strings.Contains(raw, "u2") {
				t.Errorf("another scope sees the queue: %s", raw)
			}
		}
		if got := queuedIDs(f.queue("c")); got != "u2" {
			t.Fatalf("the queue after bad requests: %q", got)
		}
	})
}

// queueingFlakyStore is flakyStore with the memory store's queue.
type queueingFlakyStore struct {
	*flakyStore
	history.Queue
}

// A run whose save outlasts its stream (the store did not answer in
// time: the chat stays locked while the server goes on saving) runs the
// queue once it lets the chat go, so a message queued behind it runs
// even when its own client has left and nobody lists the queue.
func TestQueueRunsAfterALateSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := history.NewMemory()
		store := &queueingFlakyStore{flakyStore: &flakyStore{lockingStore: mem, lostUntil: 5}, Queue: mem}
		f := newBubbleFixture(t, store, uiadapter.WithStoreTimeout(50*time.Millisecond))
		first, _, replyID := startReply(t, f, "wait 400 ms")
		queued := f.post("alice", queuedBody(replyID, "u2", "hello"))
		if _, err := testutil.NewSSEReader(queued.Body).Next(); err != nil { // queued
			t.Fatal(err)
		}
		queued.Body.Close() // its client leaves: the message stays queued
		if e := testutil.ParseChunks(t, first.Body).Find("error"); e == nil || e["errorText"] != wire.SaveUncertainMessage {
			t.Fatalf("the first reply's save was not late")
		}
		first.Body.Close()
		testutil.Eventually(t, 10*time.Second, "the queued message to run once the late save let the chat go", func() bool {
			conv, err := mem.Load(context.Background(), history.Key{Scope: "alice", Chat: "c"})
			return err == nil && roles(conv.Messages) == "user,assistant,user,assistant"
		})
	})
}

// A replica that shuts down starts no queued message: the request
// waiting for one is told it is still queued, and it stays in the queue
// for another replica or the next start. In a synctest bubble, so the
// running reply's 400 ms end within the grace period.
func TestShutdownLeavesTheQueueQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := history.NewMemory()
		h := testutil.Must(vercelai.Handler(testutil.DemoLoopWith(t), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope)))
		srv := testutil.InMemoryServer(t, h)
		post := func(body string) *http.Response {
			resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}
		first := post(userBody("c", "wait 400 ms"))
		start, err := testutil.NewSSEReader(first.Body).Next()
		if err != nil {
			t.Fatal(err)
		}
		var s struct{ MessageID string }
		_ = json.Unmarshal(start, &s)
		queued := post(queuedBody(s.MessageID, "u2", "hello"))
		if _, err := testutil.NewSSEReader(queued.Body).Next(); err != nil { // queued
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown = %v", err)
		}
		rest := testutil.ParseChunks(t, queued.Body)
		if e := rest.Find("error"); e == nil || e["errorText"] != wire.QueuedAtShutdownMessage || strings.Contains(rest.Text(), "hello") {
			t.Fatalf("the waiting request's stream: %v", rest)
		}
		key := history.Key{Scope: "single", Chat: "c"}
		if qs, err := store.Queued(context.Background(), key); err != nil || len(qs) != 1 || qs[0].ID() != "u2" {
			t.Fatalf("the queue after the shutdown: %v %v", qs, err)
		}
		if conv, _ := store.Load(context.Background(), key); roles(conv.Messages) != "user,assistant" {
			t.Fatalf("stored %s: a queued message ran during the shutdown", roles(conv.Messages))
		}
	})
}
