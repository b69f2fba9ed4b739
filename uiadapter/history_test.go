package uiadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/uiadapter"
)

// headerScope scopes requests by a header, standing in for authentication.
func headerScope(r *http.Request) (string, error) {
	switch s := r.Header.Get("X-Scope"); s {
	case "":
		return "", errors.New("no credentials")
	case "banned":
		return "", &uiadapter.Error{Status: http.StatusForbidden, Message: "forbidden"}
	default:
		return s, nil
	}
}

// historyFixture serves both protocols over one store, with a counting
// delete_file.
type historyFixture struct {
	t       testing.TB
	store   history.Store
	mux     *http.ServeMux
	url     string
	client  *http.Client
	deleted atomic.Int32
	logs    *testutil.LogBuffer
}

func newHistoryFixture(t testing.TB, store history.Store, extra ...uiadapter.Option) *historyFixture {
	t.Helper()
	return newHistoryFixtureWith(t, store, nil, extra...)
}

// newHistoryFixtureWith serves loop (nil: the counting demo loop).
func newHistoryFixtureWith(t testing.TB, store history.Store, loop *agent.Loop, extra ...uiadapter.Option) *historyFixture {
	t.Helper()
	return serveHistoryFixture(t, store, loop, false, extra...)
}

// newBubbleFixture is newHistoryFixture served in memory, for a test in
// a testing/synctest bubble: time there moves only when everything
// waits, so a run's "wait 400 ms" outlasts whatever the test does
// meanwhile, however loaded the machine.
func newBubbleFixture(t *testing.T, store history.Store, extra ...uiadapter.Option) *historyFixture {
	t.Helper()
	return serveHistoryFixture(t, store, nil, true, extra...)
}

func serveHistoryFixture(t testing.TB, store history.Store, loop *agent.Loop, inMemory bool, extra ...uiadapter.Option) *historyFixture {
	t.Helper()
	f := &historyFixture{t: t, store: store, logs: &testutil.LogBuffer{}}
	if loop == nil {
		loop = testutil.DemoLoop(t, &f.deleted)
	}
	opts := append([]uiadapter.Option{
		uiadapter.WithStore(store), uiadapter.WithScope(headerScope), uiadapter.WithSecret([]byte(secret)),
		uiadapter.WithLogger(slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}, extra...)
	opts = append([]uiadapter.Option{uiadapter.WithRunLog(runlog.NewMemory())}, opts...)
	chat := testutil.Must(vercelai.Handler(loop, opts...))
	ag := testutil.Must(agui.Handler(loop, opts...))
	f.mux = http.NewServeMux()
	f.mux.Handle("POST /api/chat", chat)
	f.mux.Handle("GET /api/chat", chat.WebSocketHandler())
	f.mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil))
	f.mux.Handle("GET /api/chat/{id}/stream", chat.ResumeHandler(nil))
	f.mux.Handle("POST /api/chat/{id}/stop", chat.StopHandler(nil))
	f.mux.Handle("POST /api/agui", ag)
	f.mux.Handle("POST /api/agui/connect", ag.ConnectHandler())
	f.mux.Handle("POST /api/agui/{id}/stop", ag.StopHandler(nil))
	f.mux.Handle("GET /api/chats", ag.ChatsHandler()) // either protocol's handler serves both
	f.mux.Handle("PATCH /api/chat/{id}", chat.RenameHandler(nil))
	f.mux.Handle("DELETE /api/chat/{id}", chat.DeleteHandler(nil))
	f.mux.Handle("GET /api/chat/{id}/queue", chat.QueueHandler(nil))
	f.mux.Handle("DELETE /api/chat/{id}/queue/{message}", chat.QueueHandler(nil))
	f.mux.Handle("GET /api/chat/{id}/tree", vercelai.TreeHandler(chat, nil))
	f.mux.Handle("POST /api/chat/{id}/branch", chat.BranchHandler(nil))
	f.mux.Handle("GET /api/agui/{id}/tree", agui.TreeHandler(ag, nil))
	f.mux.Handle("POST /api/agui/{id}/branch", ag.BranchHandler(nil))
	if inMemory {
		srv := testutil.InMemoryServer(t, f.mux)
		f.url, f.client = srv.URL, srv.Client()
	} else {
		srv := httptest.NewServer(f.mux)
		t.Cleanup(srv.Close)
		f.url, f.client = srv.URL, http.DefaultClient
	}
	t.Cleanup(func() { testutil.ShutdownNow(chat, ag) }) // runs outlive requests
	return f
}

// agui posts an AG-UI run input as alice.
func (f *historyFixture) agui(body map[string]any) (int, string) {
	f.t.Helper()
	raw, _ := json.Marshal(body)
	return f.do("alice", http.MethodPost, "/api/agui", string(raw))
}

// firstInterruptID is the id of the first interrupt an AG-UI stream's
// RUN_FINISHED carries.
func firstInterruptID(raw string) string {
	const at = `"interrupts":[{"id":"`
	i := strings.Index(raw, at) + len(at)
	return raw[i : i+strings.Index(raw[i:], `"`)]
}

func (f *historyFixture) do(scope, method, path, body string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if scope != "" {
		req.Header.Set("X-Scope", scope)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a chat request and returns the streaming response.
func (f *historyFixture) post(scope, body string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/api/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Scope", scope)
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("POST: %d", resp.StatusCode)
	}
	return resp
}

func (f *historyFixture) chat(scope, body string) testutil.Chunks {
	f.t.Helper()
	return testutil.PostStreamWith(f.t, f.client, f.url+"/api/chat", body, "X-Scope", scope)
}

func (f *historyFixture) stored(scope, chat string) []cmf.Message {
	f.t.Helper()
	conv, err := f.store.Load(context.Background(), history.Key{Scope: scope, Chat: chat})
	if err != nil {
		f.t.Fatal(err)
	}
	return conv.Messages
}

func roles(msgs []cmf.Message) string {
	var r []string
	for _, m := range msgs {
		r = append(r, string(m.Role))
	}
	return strings.Join(r, ",")
}

func TestHistoryNeedsScope(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("WithStore without WithScope did not panic")
		}
	}()
	testutil.Must(uiadapter.New(vercelai.New(), newGated(), uiadapter.WithStore(history.NewMemory())))
}

func TestHistoryScopes(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	if status, body := f.do("", http.MethodPost, "/api/chat", userBody("c", "hi")); status != 401 || !strings.Contains(body, "not authorized") {
		t.Fatalf("no credentials: %d %s", status, body)
	}
	if status, _ := f.do("banned", http.MethodPost, "/api/chat", userBody("c", "hi")); status != 403 {
		t.Fatalf("a scope error with a status: %d", status)
	}
	f.chat("alice", userBody("c", "hello"))
	status, body := f.do("alice", http.MethodGet, "/api/chat/c", "")
	if status != 200 {
		t.Fatalf("reload: %d %s", status, body)
	}
	var ui []vercelai.UIMessage
	if err := json.Unmarshal([]byte(body), &ui); err != nil || len(ui) != 2 || ui[0].ID != "u1" {
		t.Fatalf("reload = %s", body)
	}
	// Bob cannot see Alice's chat: to him it does not exist.
	if status, _ := f.do("bob", http.MethodGet, "/api/chat/c", ""); status != 404 {
		t.Fatalf("another scope's chat: %d", status)
	}
	if status, _ := f.do("alice", http.MethodGet, "/api/chat/nope", ""); status != 404 {
		t.Fatalf("a missing chat: %d", status)
	}
	if status, _ := f.do("alice", http.MethodPost, "/api/chat/c", ""); status != 405 {
		t.Fatalf("POST to the reload route: %d", status)
	}
	// Bob's chat with the same id is his own.
	f.chat("bob", userBody("c", "bob here"))
	if got := f.stored("alice", "c"); len(got) != 2 || got[0].Text() != "hello" {
		t.Fatalf("alice's chat changed: %s", roles(got))
	}
}

func TestHistoryPersistsTurnsWithIDs(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	chunks := f.chat("alice", userBody("c", "weather in Rome"))
	msgs := f.stored("alice", "c")
	if roles(msgs) != "user,assistant,tool,assistant" {
		t.Fatalf("stored %s", roles(msgs))
	}
	// The assistant message keeps the id announced in the start chunk.
	if msgs[1].ID() != chunks.Find("start")["messageId"] || msgs[0].ID() != "u1" {
		t.Fatalf("ids: stored %s, announced %v", msgs[1].ID(), chunks.Find("start"))
	}
	// The next turn sends only its user message; the model sees it all.
	ctx := f.chat("alice", strings.Replace(userBody("c", "/context"), `"u1"`, `"u2"`, 1)).Text()
	var seen []struct{ Role, Text string }
	_ = json.Unmarshal([]byte(ctx), &seen)
	if len(seen) != 5 || seen[0].Text != "weather in Rome" || seen[3].Text != "The weather in Rome is sunny, 21°C." {
		t.Fatalf("the model saw %s", ctx)
	}
}

// With history, only the request's new turn is decoded (vercelai is a
// TailDecoder): the client's copy of the past, ignored anyway, is not
// read, so a malformed old message costs nothing and refuses nothing.
// The message before the new one still names its parent.
func TestHistoryDecodesOnlyTheNewTurn(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	f.chat("alice", userBody("c", "hello"))
	stored := f.stored("alice", "c")
	body := `{"id":"c","trigger":"submit-message","messages":[
		{"id":"old","role":"robot","parts":"not parts"},
		{"id":"` + stored[1].ID() + `","role":"assistant","parts":[]},
		{"id":"u2","role":"user","parts":[{"type":"text","text":"again"}]}]}`
	f.chat("alice", body)
	if got := f.stored("alice", "c"); roles(got) != "user,assistant,user,assistant" || got[2].Text() != "again" {
		t.Fatalf("stored %s", roles(got))
	}
	// Without history the whole conversation is the input, and checked.
	stateless := testutil.Must(vercelai.Handler(testutil.DemoLoop(t, nil)))
	t.Cleanup(func() { testutil.ShutdownNow(stateless) })
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	stateless.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("without history: %d %s", w.Code, w.Body)
	}
}

func TestHistoryStaleAndForgedResolutions(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	asst := func(chat string) map[string]any {
		chunks := f.chat("alice", userBody(chat, "delete /tmp/x.txt"))
		req, avail := chunks.Find("tool-approval-request"), chunks.Find("tool-input-available")
		return msg(chunks.Find("start")["messageId"].(string), "assistant", part("step-start"),
			part("tool-delete_file", "toolCallId", avail["toolCallId"], "state", "approval-responded", "input", avail["input"],
				"approval", map[string]any{"id": req["approvalId"], "approved": true}))
	}
	refused := func(name, scope, body string) {
		t.Helper()
		status, raw := f.do(scope, http.MethodPost, "/api/chat", body)
		if status != 409 {
			t.Fatalf("%s: %d %s, want 409", name, status, raw)
		}
	}
	a := asst("chat-a")
	// An approval for a call the server never made.
	invented := msg("x", "assistant", part("tool-delete_file", "toolCallId", "invented", "state", "approval-responded",
		"input", map[string]any{"path": "/"}, "approval", map[string]any{"id": "ap", "approved": true}))
	refused("invented call", "alice", continuation("chat-a", invented))
	// Chat A's call, approved on chat B.
	asst("chat-b")
	refused("another chat's call", "alice", continuation("chat-b", a))
	// Chat A's call approved from another scope.
	refused("another scope", "bob", continuation("chat-a", a))
	// Output for a call waiting for approval is not an approval.
	out := msg(a["id"].(string), "assistant", part("tool-delete_file", "toolCallId", a["parts"].([]any)[1].(map[string]any)["toolCallId"],
		"state", "output-available", "input", map[string]any{"path": "/tmp/x.txt"}, "output", map[string]any{"deleted": "/tmp/x.txt"}))
	refused("output instead of approval", "alice", continuation("chat-a", out))
	if f.deleted.Load() != 0 {
		t.Fatal("a refused resolution executed the tool")
	}
	// Genuine: approved once. The same approval again, while its
	// continuation is the chat's latest run, is that request retried: it
	// gets the continuation's stream and runs nothing. Once another turn
	// has run, it is stale.
	if got := f.chat("alice", continuation("chat-a", a)).Text(); got != "Deleted /tmp/x.txt." || f.deleted.Load() != 1 {
		t.Fatalf("genuine approval: %q, %d executions", got, f.deleted.Load())
	}
	if got := f.chat("alice", continuation("chat-a", a)).Text(); got != "Deleted /tmp/x.txt." || f.deleted.Load() != 1 {
		t.Fatalf("the approval sent again: %q, %d executions", got, f.deleted.Load())
	}
	f.chat("alice", strings.Replace(userBody("chat-a", "hello"), `"u1"`, `"u-later"`, 1))
	refused("stale approval", "alice", continuation("chat-a", a))
	if f.deleted.Load() != 1 {
		t.Fatal("a replayed approval executed the tool again")
	}
	// The client may send the past with the new turn: ignored.
	hist := continuation("chat-a", a)
	var body map[string]any
	_ = json.Unmarshal([]byte(hist), &body)
	body["messages"] = append(body["messages"].([]any), msg("u9", "user", part("text", "text", "thanks")))
	raw, _ := json.Marshal(body)
	if got := f.chat("alice", string(raw)).Text(); got != "You said: thanks" {
		t.Fatalf("a new turn after history: %q", got)
	}
}

func TestHistoryAGUIResumes(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	post := f.agui
	in := map[string]any{"threadId": "t1", "runId": "r1", "protocolVersion": "1.0",
		"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "delete /tmp/x.txt"}}}
	_, raw := post(in)
	interruptID := firstInterruptID(raw)
	// A new message while an interrupt waits: RUN_ERROR, nothing runs.
	in["runId"] = "r2"
	in["messages"] = []any{map[string]any{"id": "u2", "role": "user", "content": "delete /etc"}}
	status, raw := post(in)
	if status != 200 || !strings.Contains(raw, `"type":"RUN_ERROR"`) || !strings.Contains(raw, "pending interrupts") || strings.Contains(raw, "RUN_STARTED") {
		t.Fatalf("a run without resume: %d %s", status, raw)
	}
	// A resume for an interrupt the server never issued.
	in["runId"], in["messages"] = "r3", []any{}
	in["resume"] = []any{map[string]any{"interruptId": "int-tc-approve-1", "status": "resolved", "payload": map[string]any{"approved": true}}}
	if status, _ := post(in); status != 409 {
		t.Fatalf("an unknown interrupt: %d", status)
	}
	// The real one.
	in["runId"] = "r4"
	in["resume"] = []any{map[string]any{"interruptId": interruptID, "status": "resolved", "payload": map[string]any{"approved": true}}}
	if status, raw := post(in); status != 200 || !strings.Contains(raw, "TOOL_CALL_RESULT") || f.deleted.Load() != 1 {
		t.Fatalf("resume: %d %s", status, raw)
	}
	// Replaying it is stale.
	in["runId"] = "r5"
	if status, _ := post(in); status != 409 || f.deleted.Load() != 1 {
		t.Fatalf("a replayed resume: %d, %d executions", status, f.deleted.Load())
	}
}

// A call that waits for a client tool's output is no pending interrupt:
// over AG-UI a new message then runs (the call is answered "not
// answered"), where one waiting for approval is refused.
func TestHistoryAGUIMovesOnFromAClientTool(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	in := map[string]any{"threadId": "t1", "runId": "r1", "protocolVersion": "1.0",
		"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "where am I"}}}
	if status, raw := f.agui(in); status != 200 || !strings.Contains(raw, `"toolCallName":"get_location"`) || strings.Contains(raw, `"interrupts"`) {
		t.Fatalf("the client tool's call: %d %s", status, raw)
	}
	in["runId"] = "r2"
	in["messages"] = []any{map[string]any{"id": "u2", "role": "user", "content": "hello"}}
	status, raw := f.agui(in)
	if status != 200 || strings.Contains(raw, "RUN_ERROR") || !strings.Contains(raw, `"delta":"hello"`) || !strings.Contains(raw, "RUN_FINISHED") {
		t.Fatalf("a new message after the client tool's call: %d %s", status, raw)
	}
}

// One run per chat: while a reply streams, another turn in its chat is a
// 409 that says the chat is busy, other chats go on, and the chat takes
// the next turn once the reply is done. In a synctest bubble, so the
// first turn's 400 ms outlast the requests made meanwhile.
func TestHistoryOneRunPerChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		// The first turn is streaming (its first chunk has arrived, so it
		// holds the lock) when the second arrives.
		req, _ := http.NewRequest(http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody("busy", "wait 400 ms")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Scope", "alice")
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("first turn: status %d", resp.StatusCode)
		}
		first := testutil.NewSSEReader(resp.Body)
		if _, err := first.Next(); err != nil {
			t.Fatal(err)
		}
		// The refusal says, to a program, that the chat is busy: a client can
		// attach to the reply (resume) instead of failing.
		if status, body := f.do("alice", http.MethodPost, "/api/chat", userBody("busy", "hello")); status != http.StatusConflict ||
			strings.TrimSpace(body) != `{"error":"a reply is still being produced for this chat","code":"busy"}` {
			t.Fatalf("second turn while the first streams: %d %s", status, body)
		}
		// Other chats never wait.
		f.chat("alice", userBody("other", "hello"))
		for {
			data, err := first.Next()
			if err != nil {
				t.Fatalf("the first turn did not finish: %v", err)
			}
			if string(data) == "[DONE]" {
				break
			}
		}
		// The lock is released: the chat takes the next turn.
		f.chat("alice", userBody("busy", "hello"))
	})
}

func TestHistoryKeepsFailedAndCancelledRuns(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	chunks := f.chat("alice", userBody("fails", "fail"))
	if chunks.Find("error") == nil {
		t.Fatal("no error chunk")
	}
	msgs := f.stored("alice", "fails")
	if roles(msgs) != "user,assistant" || msgs[1].Text() != "Working on it" || msgs[1].Extensions.Completion.StopReason != cmf.StopError {
		t.Fatalf("stored %s %+v", roles(msgs), msgs[len(msgs)-1])
	}

	// A run the user stops: what streamed is kept, marked aborted, and
	// the stream ends with the protocol's terminal frames.
	resp := f.post("alice", userBody("gone", "think: wait 5000 ms"))
	defer resp.Body.Close()
	r := testutil.NewSSEReader(resp.Body)
	for {
		data, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `ms"}`) { // the delta with the last word of the thinking
			break
		}
	}
	if code, body := f.do("alice", http.MethodPost, "/api/chat/gone/stop", ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	rest := testutil.ReadSSE(t, resp.Body)
	if n := len(rest); n < 2 || rest[n-1] != "[DONE]" || !strings.Contains(rest[n-2], `"type":"finish"`) {
		t.Fatalf("stopped stream ended with %q", rest)
	}
	msgs = f.stored("alice", "gone")
	if roles(msgs) != "user,assistant" || msgs[1].Extensions.Completion.StopReason != cmf.StopAborted ||
		msgs[1].Content[0].(cmf.Thinking).Text != "Thinking about: think: wait 5000 ms" {
		t.Fatalf("stored %s %+v\n%s", roles(msgs), msgs, f.logs)
	}
	if code, _ := f.do("alice", http.MethodPost, "/api/chat/gone/stop", ""); code != http.StatusNotFound {
		t.Fatalf("stopping a finished run: %d, want 404", code)
	}
}

// With history, a run belongs to the server: a client that disconnects
// leaves it running, and the whole reply is stored. In a synctest bubble,
// so the client surely leaves before the run's 300 ms are over.
func TestRunOutlivesItsClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		resp := f.post("alice", userBody("left", "think: wait 300 ms"))
		r := testutil.NewSSEReader(resp.Body)
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		testutil.Eventually(t, 10*time.Second, "the whole reply to be stored", func() bool {
			msgs := f.stored("alice", "left")
			return len(msgs) == 2 && msgs[1].Extensions.Completion != nil && msgs[1].Extensions.Completion.StopReason == cmf.StopEnd
		})
	})
}

// flakyStore fails chosen calls: after writing (a timeout that landed),
// instead of writing (down: certainly not written), or with a timeout
// that did not land (lost: the caller cannot know).
type flakyStore struct {
	lockingStore
	mu          sync.Mutex
	failLoad    bool
	appendCalls int
	landThenErr map[int]bool // append call n writes, then reports an error
	downOn      map[int]bool // append call n fails without writing
	downFrom    int          // every append from call n on fails without writing
	lostUntil   int          // appends up to call n time out without writing
}

func (s *flakyStore) Load(ctx context.Context, k history.Key) (history.Conversation, error) {
	s.mu.Lock()
	fail := s.failLoad
	s.mu.Unlock()
	if fail {
		return history.Conversation{}, errors.New("dial tcp: connection refused (secret-host:6379)")
	}
	return s.lockingStore.Load(ctx, k)
}

func (s *flakyStore) Write(ctx context.Context, k history.Key, v history.Version, keep int, msgs ...cmf.Message) (history.Version, error) {
	s.mu.Lock()
	s.appendCalls++
	n := s.appendCalls
	s.mu.Unlock()
	if s.downOn[n] || s.downFrom > 0 && n >= s.downFrom {
		return 0, fmt.Errorf("%w: connection refused", history.ErrUnavailable)
	}
	if n <= s.lostUntil {
		return 0, errors.New("i/o timeout")
	}
	nv, err := s.lockingStore.Write(ctx, k, v, keep, msgs...)
	if err == nil && s.landThenErr[n] {
		return 0, errors.New("i/o timeout")
	}
	return nv, err
}

func TestHistorySaveIsNeitherLostNorDuplicated(t *testing.T) {
	// Call 1 stores the user message; call 2 (the reply) lands but times
	// out; the retry sees the conflict and finds the reply already there.
	store := &flakyStore{lockingStore: history.NewMemory(), landThenErr: map[int]bool{2: true}}
	f := newHistoryFixture(t, store)
	chunks := f.chat("alice", userBody("c", "hello"))
	if chunks.Find("error") != nil || chunks.Find("finish") == nil {
		t.Fatalf("chunks = %v", chunks)
	}
	if msgs := f.stored("alice", "c"); roles(msgs) != "user,assistant" {
		t.Fatalf("stored %s", roles(msgs))
	}
}

// A store that is down is a 503 saying history is unavailable (its cause
// logged once, never sent), and a reply that cannot be saved within the
// store timeout ends with the save failure. In a synctest bubble, so the
// 100 ms timeout is the bubble's clock, not the machine's load.
func TestHistoryUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &flakyStore{lockingStore: history.NewMemory(), failLoad: true}
		f := newBubbleFixture(t, store)
		status, body := f.do("alice", http.MethodPost, "/api/chat", userBody("c", "hi"))
		if status != 503 || !strings.Contains(body, "history is unavailable") || strings.Contains(body, "secret-host") {
			t.Fatalf("%d %s", status, body)
		}
		if status, _ := f.do("alice", http.MethodGet, "/api/chat/c", ""); status != 503 {
			t.Fatalf("reload while down: %d", status)
		}
		if !strings.Contains(f.logs.String(), "secret-host") {
			t.Fatal("the cause was not logged")
		}
		// Once per incident: the reload's 503 is the same outage.
		if n := strings.Count(f.logs.String(), `level=ERROR msg="request failed"`); n != 1 {
			t.Fatalf("the outage was logged at ERROR %d times:\n%s", n, f.logs)
		}
		// The reply cannot be saved: the store is down for every attempt.
		store = &flakyStore{lockingStore: history.NewMemory(), downFrom: 2}
		f = newBubbleFixture(t, store, uiadapter.WithStoreTimeout(100*time.Millisecond))
		chunks := f.chat("alice", userBody("c", "hello"))
		if e := chunks.Find("error"); e == nil || e["errorText"] != wire.SaveFailedMessage || chunks.Find("finish")["finishReason"] != "error" {
			t.Fatalf("chunks = %v", chunks)
		}
		if !strings.Contains(f.logs.String(), "the reply could not be saved") {
			t.Fatalf("log = %s", f.logs)
		}
	})
}

// When the store does not answer in time, the client is told the truth
// (the reply may not have been saved), the server goes on trying, and
// once the store answers the reply is stored and the chat unlocked. In a
// synctest bubble: the 50 ms store timeout runs on the bubble's clock.
func TestHistorySaveOutcomeUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &flakyStore{lockingStore: history.NewMemory(), lostUntil: 5}
		f := newBubbleFixture(t, store, uiadapter.WithStoreTimeout(50*time.Millisecond))
		chunks := f.chat("alice", userBody("c", "hello"))
		if e := chunks.Find("error"); e == nil || e["errorText"] != wire.SaveUncertainMessage {
			t.Fatalf("chunks = %v", chunks)
		}
		testutil.Eventually(t, 10*time.Second, "the reply to be stored after the store came back", func() bool {
			return roles(f.stored("alice", "c")) == "user,assistant"
		})
		testutil.Eventually(t, 10*time.Second, "the chat to take a new turn", func() bool {
			status, _ := f.do("alice", http.MethodPost, "/api/chat", strings.Replace(userBody("c", "again"), `"u1"`, `"u2"`, 1))
			return status == 200
		})
		if !strings.Contains(f.logs.String(), "the reply was saved after retrying") {
			t.Fatalf("log = %s", f.logs)
		}
	})
}

// The user's message is stored while the run starts. When that fails,
// the run goes on, and the message is stored with the reply: nothing the
// user sent or saw is lost.
func TestHistoryTurnStoredWithReply(t *testing.T) {
	store := &flakyStore{lockingStore: history.NewMemory(), downOn: map[int]bool{1: true}}
	f := newHistoryFixture(t, store)
	chunks := f.chat("alice", userBody("c", "count to 1000"))
	if chunks.Find("error") != nil || chunks.Find("finish") == nil {
		t.Fatalf("chunks end %v", chunks[len(chunks)-3:])
	}
	msgs := f.stored("alice", "c")
	if roles(msgs) != "user,assistant" || msgs[0].ID() != "u1" || !strings.HasSuffix(msgs[1].Text(), "1000 ") {
		t.Fatalf("stored %s", roles(msgs))
	}
	if !strings.Contains(f.logs.String(), "storing the turn failed; it is stored with the reply") {
		t.Fatalf("log = %s", f.logs)
	}
	// The chat is not left locked.
	if msgs := f.chat("alice", strings.Replace(userBody("c", "hello"), `"u1"`, `"u2"`, 1)).Text(); msgs != "You said: hello" {
		t.Fatalf("next turn: %q", msgs)
	}
}

// A reply stopped before its first word leaves no empty message behind.
func TestHistoryDropsEmptyAbortedReplies(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	resp := f.post("alice", userBody("c", "wait 5000 ms"))
	defer resp.Body.Close()
	if _, err := testutil.NewSSEReader(resp.Body).Next(); err != nil { // start
		t.Fatal(err)
	}
	if code, body := f.do("alice", http.MethodPost, "/api/chat/c/stop", ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	testutil.ReadSSE(t, resp.Body) // the stream ends once the reply is saved
	if msgs := f.stored("alice", "c"); roles(msgs) != "user" {
		t.Fatalf("stored %s", roles(msgs))
	}
}

// A call left waiting when the user moves on is stored as not answered,
// so a reload shows what the model was told.
func TestHistoryAbandonedCallsAreAnswered(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	f.chat("alice", userBody("c", "delete /tmp/x.txt"))
	f.chat("alice", strings.Replace(userBody("c", "where am i"), `"u1"`, `"u2"`, 1))
	f.chat("alice", strings.Replace(userBody("c", "hello"), `"u1"`, `"u3"`, 1))
	msgs := f.stored("alice", "c")
	if got := roles(msgs); got != "user,assistant,tool,user,assistant,tool,user,assistant" {
		t.Fatalf("stored %s", got)
	}
	if len(cmf.PendingToolCalls(msgs)) != 0 || f.deleted.Load() != 0 {
		t.Fatal("calls still pending, or the delete ran")
	}
	status, body := f.do("alice", http.MethodGet, "/api/chat/c", "")
	if status != 200 {
		t.Fatal(status)
	}
	var ui []vercelai.UIMessage
	_ = json.Unmarshal([]byte(body), &ui)
	del := ui[1].Parts[1]
	loc := ui[3].Parts[1]
	if del.State != vercelai.StateOutputDenied || del.Approval == nil || del.Approval.Reason != "not answered" ||
		loc.State != vercelai.StateOutputError || !strings.Contains(*loc.ErrorText, "Not answered") {
		t.Fatalf("reload shows %+v / %+v", del, loc)
	}
}

// Regenerating an older reply by id does what useChat's
// regenerate({messageId}) does on its side: that reply and everything
// after it go, and the new reply answers the user message before it (it
// used to regenerate the last reply and keep all four messages). A user
// message's id regenerates the reply to it; an unknown id is 409.
func TestHistoryRegenerateByID(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	regenerate := func(chat, messageID string, keep ...any) (int, string) {
		b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "regenerate-message", "messageId": messageID, "messages": keep})
		return f.do("alice", http.MethodPost, "/api/chat", string(b))
	}
	for _, c := range []struct{ name, target string }{{"assistant", "a1"}, {"user", "u1"}} {
		t.Run(c.name, func(t *testing.T) {
			chat := "regen-" + c.name
			a1 := f.chat("alice", testutil.UserMessage(chat, "u1", "first")).Find("start")["messageId"].(string)
			f.chat("alice", testutil.UserMessage(chat, "u2", "second"))
			target := map[string]string{"a1": a1, "u1": "u1"}[c.target]
			status, body := regenerate(chat, target, msg("u1", "user", part("text", "text", "first")))
			if status != 200 || testutil.ParseChunks(t, strings.NewReader(body)).Text() != "You said: first" {
				t.Fatalf("%d %s", status, body)
			}
			got := f.stored("alice", chat)
			if roles(got) != "user,assistant" || got[0].Text() != "first" || got[1].Text() != "You said: first" || got[1].ID() == a1 {
				t.Fatalf("stored %s: %+v", roles(got), got)
			}
		})
	}
	if status, body := regenerate("regen-user", "nope", msg("u1", "user", part("text", "text", "first"))); status != 409 || !strings.Contains(body, "no message with this id") {
		t.Fatalf("unknown id: %d %s", status, body)
	}
}

// lockingStore is a store that is its own locker, as the test doubles
// that wrap one need.
type lockingStore interface {
	history.Store
	history.Locker
}

// dataOnly is a store with no lock of its own, as one over a database
// might be.
type dataOnly struct{ history.Store }

// A store that is not a Locker gets the handler's in-process one: a run
// still holds its chat, and lets go of it when it ends.
func TestStoreWithoutALockGetsOne(t *testing.T) {
	store := dataOnly{history.NewMemory()}
	if _, ok := any(store).(history.Locker); ok {
		t.Fatal("the double is a Locker")
	}
	f := newHistoryFixture(t, store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody("c", "wait 60000 ms")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Scope", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	testutil.Eventually(t, 5*time.Second, "the run to start", func() bool { return len(f.stored("alice", "c")) == 1 })
	second := strings.Replace(userBody("c", "hi"), `"u1"`, `"u2"`, 1)
	if status, _ := f.do("alice", http.MethodPost, "/api/chat", second); status != http.StatusConflict {
		t.Fatalf("a second turn during a run: %d, want 409", status)
	}
	if status, _ := f.do("alice", http.MethodPost, "/api/chat", userBody("other", "hi")); status != http.StatusOK {
		t.Fatalf("a turn on another chat: %d, want 200", status)
	}
	// The user stops the run: it lets the chat go.
	if code, body := f.do("alice", http.MethodPost, "/api/chat/c/stop", ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	testutil.Eventually(t, 5*time.Second, "the chat to be free", func() bool {
		status, _ := f.do("alice", http.MethodPost, "/api/chat", second)
		return status == http.StatusOK
	})
}

// An edit under a new id (assistant-ui) cuts the stored chat at the
// client's branch point; a parent the server does not have, or one that
// only its own turn follows, cuts nothing.
func TestHistoryEditUnderANewID(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	send := func(chat string, msgs ...any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "messages": msgs})
		if status, body := f.do("alice", http.MethodPost, "/api/chat", string(b)); status != 200 {
			t.Fatalf("%d %s", status, body)
		}
	}
	user := func(id, text string) any { return msg(id, "user", part("text", "text", text)) }
	texts := func(chat string) string {
		var out []string
		for _, m := range f.stored("alice", chat) {
			out = append(out, string(m.Role)+":"+m.Text())
		}
		return strings.Join(out, " | ")
	}
	for _, c := range []struct {
		name   string
		parent func(a1, a2 string) any // the client's message before its new one
		want   string
	}{
		{"edit after the first reply", func(a1, _ string) any { return msg(a1, "assistant", part("text", "text", "You said: first")) },
			"user:first | assistant:You said: first | user:edited | assistant:You said: edited"},
		{"the last reply: a plain new turn", func(_, a2 string) any { return msg(a2, "assistant", part("text", "text", "You said: second")) },
			"user:first | assistant:You said: first | user:second | assistant:You said: second | user:edited | assistant:You said: edited"},
		{"a parent the server does not have", func(string, string) any { return msg("local-only", "assistant", part("text", "text", "hi")) },
			"user:first | assistant:You said: first | user:second | assistant:You said: second | user:edited | assistant:You said: edited"},
	} {
		t.Run(c.name, func(t *testing.T) {
			chat := "branch-" + strings.ReplaceAll(c.name, " ", "-")
			a1 := f.chat("alice", testutil.UserMessage(chat, "u1", "first")).Find("start")["messageId"].(string)
			a2 := f.chat("alice", testutil.UserMessage(chat, "u2", "second")).Find("start")["messageId"].(string)
			send(chat, user("u1", "first"), c.parent(a1, a2), user("u3", "edited"))
			if got := texts(chat); got != c.want {
				t.Fatalf("stored %s\nwant   %s", got, c.want)
			}
		})
	}

	// The first message edited: the request holds only the edit. With
	// wholeBranch (the client's messages are all it shows) the stored
	// turns go; without it, a lone message continues the stored chat (a
	// client that did not load it); the AI SDK's {message} form always
	// continues.
	for _, c := range []struct {
		name string
		body func(chat string) map[string]any
		want string
	}{
		{"first message, wholeBranch", func(chat string) map[string]any {
			return map[string]any{"id": chat, "messages": []any{user("u3", "edited")}, "wholeBranch": true}
		}, "user:edited | assistant:You said: edited"},
		{"first message, no wholeBranch", func(chat string) map[string]any {
			return map[string]any{"id": chat, "messages": []any{user("u3", "edited")}}
		}, "user:first | assistant:You said: first | user:edited | assistant:You said: edited"},
		{"the message form", func(chat string) map[string]any {
			return map[string]any{"id": chat, "message": user("u3", "edited"), "wholeBranch": true}
		}, "user:first | assistant:You said: first | user:edited | assistant:You said: edited"},
	} {
		t.Run(c.name, func(t *testing.T) {
			chat := "root-" + strings.ReplaceAll(c.name, " ", "-")
			f.chat("alice", testutil.UserMessage(chat, "u1", "first"))
			b, _ := json.Marshal(c.body(chat))
			if status, body := f.do("alice", http.MethodPost, "/api/chat", string(b)); status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			if got := texts(chat); got != c.want {
				t.Fatalf("stored %s\nwant   %s", got, c.want)
			}
		})
	}
}

// A request that builds on messages of a chat the server has nothing of
// (a server that kept history in memory restarted) is refused with
// CodeUnknownChat before anything is stored, over both protocols, so the
// chat is not forked under its id. A first message, alone or after the
// client's own system message, starts a chat as before.
func TestHistoryUnknownChat(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	vercel := func(chat string, msgs ...any) (int, string) {
		b, _ := json.Marshal(map[string]any{"id": chat, "messages": msgs})
		return f.do("alice", http.MethodPost, "/api/chat", string(b))
	}
	agui := func(thread string, msgs ...any) (int, string) {
		b, _ := json.Marshal(map[string]any{"threadId": thread, "runId": "r1", "protocolVersion": "1.0", "messages": msgs})
		return f.do("alice", http.MethodPost, "/api/agui", string(b))
	}
	regenerate := func(chat string) (int, string) {
		b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "regenerate-message", "messages": []any{msg("u1", "user", part("text", "text", "hi"))}})
		return f.do("alice", http.MethodPost, "/api/chat", string(b))
	}
	refused := func(name string, status int, body, chat string) {
		t.Helper()
		var e struct{ Error, Code string }
		_ = json.Unmarshal([]byte(body), &e)
		if status != http.StatusConflict || e.Code != uiadapter.CodeUnknownChat || e.Error != "This chat is no longer on the server." {
			t.Fatalf("%s: %d %s", name, status, body)
		}
		if got := f.stored("alice", chat); len(got) != 0 {
			t.Fatalf("%s: stored %s", name, roles(got))
		}
	}
	earlier := []any{msg("u1", "user", part("text", "text", "hi")), msg("a1", "assistant", part("text", "text", "You said: hi"))}
	status, body := vercel("lost-vercel", append(earlier, msg("u2", "user", part("text", "text", "and then?")))...)
	refused("useChat with earlier messages", status, body, "lost-vercel")
	status, body = regenerate("lost-regenerate")
	refused("useChat regenerate", status, body, "lost-regenerate")
	status, body = agui("lost-agui",
		map[string]any{"id": "u1", "role": "user", "content": "hi"},
		map[string]any{"id": "a1", "role": "assistant", "content": "You said: hi"},
		map[string]any{"id": "u2", "role": "user", "content": "and then?"})
	refused("AG-UI with earlier messages", status, body, "lost-agui")

	for name, send := range map[string]func() (int, string){
		"useChat first message": func() (int, string) { return vercel("new-vercel", msg("u1", "user", part("text", "text", "hi"))) },
		"useChat after a system message": func() (int, string) {
			return vercel("new-system", msg("s1", "system", part("text", "text", "Be brief.")), msg("u1", "user", part("text", "text", "hi")))
		},
		"AG-UI first message": func() (int, string) {
			return agui("new-agui", map[string]any{"id": "u1", "role": "user", "content": "hi"})
		},
	} {
		if status, body := send(); status != http.StatusOK || !strings.Contains(body, `"delta":"hi"`) {
			t.Fatalf("%s: %d %s", name, status, body)
		}
	}
	// The same request is served once the chat is known.
	f.chat("alice", testutil.UserMessage("known", "u1", "hi"))
	b, _ := json.Marshal(map[string]any{"id": "known", "messages": []any{
		msg("u1", "user", part("text", "text", "hi")), msg("x", "assistant", part("text", "text", "?")), msg("u2", "user", part("text", "text", "again")),
	}})
	if got := f.chat("alice", string(b)).Text(); got != "You said: again" {
		t.Fatalf("known chat: %q", got)
	}
}

// An AG-UI client that sends a new message while an approval waits,
// cancelling its interrupt in the same run, moves on as useChat does: the
// call is stored as "not answered" (denied), it never runs, and the new
// message is answered.
func TestHistoryAGUINewMessageCancelsTheInterrupt(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	post := f.agui
	first := map[string]any{"id": "u1", "role": "user", "content": "delete /tmp/x.txt"}
	_, raw := post(map[string]any{"threadId": "t1", "runId": "r1", "protocolVersion": "1.0", "messages": []any{first}})
	interruptID := firstInterruptID(raw)
	stored := f.stored("alice", "t1")
	call := stored[len(stored)-1]
	status, raw := post(map[string]any{"threadId": "t1", "runId": "r2", "protocolVersion": "1.0",
		"messages": []any{first, map[string]any{"id": call.ID(), "role": "assistant", "toolCalls": []any{}}, map[string]any{"id": "u2", "role": "user", "content": "never mind"}},
		"resume":   []any{map[string]any{"interruptId": interruptID, "status": "cancelled"}}})
	if status != 200 || strings.Contains(raw, "RUN_ERROR") || !strings.Contains(raw, `"delta":"mind"`) {
		t.Fatalf("a new message cancelling the interrupt: %d %s", status, raw)
	}
	got := f.stored("alice", "t1")
	if roles(got) != "user,assistant,tool,user,assistant" || got[4].Text() != "You said: never mind" || f.deleted.Load() != 0 {
		t.Fatalf("stored %s, %d deletions", roles(got), f.deleted.Load())
	}
	if rec := got[2].CallRecord(cmf.ToolCallStates(got)[0].Call.ToolCallID); rec.Decision == nil || rec.Decision.Approved || rec.Decision.Reason != "not answered" {
		t.Fatalf("the abandoned call's record: %+v", rec)
	}
}

// A chat past its limits (messages, or bytes) takes no new turn, with a
// clear 409, so no chat grows without bound.
func TestChatLimits(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithChatLimits(4, 1<<20))
	turn := func(id string) (int, string) {
		return f.do("alice", http.MethodPost, "/api/chat", strings.Replace(userBody("c", "hello"), `"u1"`, `"`+id+`"`, 1))
	}
	for _, id := range []string{"u1", "u2"} {
		if status, body := turn(id); status != 200 {
			t.Fatalf("%s: %d %s", id, status, body)
		}
	}
	if status, body := turn("u3"); status != 409 || !strings.Contains(body, "this chat is too long: start a new one") {
		t.Fatalf("a turn past the limit: %d %s", status, body)
	}
	g := newHistoryFixture(t, history.NewMemory(), uiadapter.WithChatLimits(1000, 2000))
	long := strings.Replace(userBody("c", strings.Repeat("x", 3000)), `"u1"`, `"u1"`, 1)
	if status, _ := g.do("alice", http.MethodPost, "/api/chat", long); status != 200 {
		t.Fatal(status)
	}
	if status, _ := g.do("alice", http.MethodPost, "/api/chat", strings.Replace(userBody("c", "x"), `"u1"`, `"u2"`, 1)); status != 409 {
		t.Fatalf("a turn past the byte limit: %d", status)
	}
}

// A user message cannot take the id of a stored assistant message (a
// 409), so no two stored messages share an id.
func TestUserMessageCannotReuseAnotherMessagesID(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	reply := f.chat("alice", userBody("c", "hello")).Find("start")["messageId"].(string)
	status, body := f.do("alice", http.MethodPost, "/api/chat", strings.Replace(userBody("c", "hi"), `"u1"`, `"`+reply+`"`, 1))
	if status != 409 || !strings.Contains(body, "a message with this id already exists") {
		t.Fatalf("%d %s", status, body)
	}
	if got := roles(f.stored("alice", "c")); got != "user,assistant" {
		t.Fatalf("stored %s", got)
	}
}

// blockingLoad never answers a load until its context ends.
type blockingLoad struct {
	lockingStore
	entered chan struct{}
}

func (s *blockingLoad) AcquireLoad(ctx context.Context, k history.Key, token string, ttl time.Duration) (history.Conversation, error) {
	close(s.entered)
	<-ctx.Done()
	return history.Conversation{}, ctx.Err()
}

// A client that leaves while its chat's history loads is logged as
// leaving, not at ERROR as "history unavailable": the store is fine.
func TestClientLeavingDuringLoadIsNotAnError(t *testing.T) {
	store := &blockingLoad{lockingStore: history.NewMemory(), entered: make(chan struct{})}
	f := newHistoryFixture(t, store)
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody("c", "hi")))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Scope", "alice")
	go func() {
		<-store.entered
		cancel()
	}()
	if _, err := http.DefaultClient.Do(r); err == nil {
		t.Fatal("the request did not fail")
	}
	testutil.Eventually(t, 5*time.Second, "the server to log the client leaving", func() bool {
		return strings.Contains(f.logs.String(), "the client left before the conversation was loaded")
	})
	if strings.Contains(f.logs.String(), "level=ERROR") {
		t.Fatalf("logged as an error:\n%s", f.logs)
	}
}

// A page that opens a new chat's thread with its own greeting (an
// assistant message of text, before the user's first message) starts the
// chat, in both protocols: the greeting is kept as its first message,
// marked as the client's, so a reload shows what the page showed. A
// greeting that is not text alone, or a user message before it, is a
// chat the server lost.
func TestHistoryOpeningGreeting(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	hello := "Hi! How can I help?"
	status, body := f.agui(map[string]any{"threadId": "greeted-agui", "runId": "r1", "messages": []any{
		map[string]any{"id": "g1", "role": "assistant", "content": hello},
		map[string]any{"id": "u1", "role": "user", "content": "hi"},
	}})
	if status != http.StatusOK || !strings.Contains(body, `"delta":"hi"`) {
		t.Fatalf("AG-UI with a greeting: %d %s", status, body)
	}
	b, _ := json.Marshal(map[string]any{"id": "greeted-vercel", "trigger": "submit-message", "messages": []any{
		msg("g1", "assistant", part("text", "text", hello)), msg("u1", "user", part("text", "text", "hi")),
	}})
	if got := f.chat("alice", string(b)).Text(); got != "You said: hi" {
		t.Fatalf("useChat with a greeting: %q", got)
	}
	for _, chat := range []string{"greeted-agui", "greeted-vercel"} {
		got := f.stored("alice", chat)
		if roles(got) != "assistant,user,assistant" || got[0].Text() != hello || got[0].ID() != "g1" ||
			got[0].Extensions == nil || got[0].Extensions.Provenance == nil || got[0].Extensions.Provenance.Source != "client" {
			j, _ := json.Marshal(got[0])
			t.Fatalf("%s stored %s, first %s", chat, roles(got), j)
		}
	}
	// Not a greeting: a tool call, or a user message before.
	status, body = f.agui(map[string]any{"threadId": "not-greeted", "runId": "r1", "messages": []any{
		map[string]any{"id": "g1", "role": "assistant", "content": "", "toolCalls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": "{}"}}}},
		map[string]any{"id": "u1", "role": "user", "content": "hi"},
	}})
	if status != http.StatusConflict || !strings.Contains(body, uiadapter.CodeUnknownChat) {
		t.Fatalf("a tool call before the first message: %d %s", status, body)
	}
}

// A chat at its size limit takes no new message, but an edit or a
// regenerate that leaves it under the limit shrinks it.
func TestHistoryFullChatCanShrink(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithChatLimits(4, 1<<20))
	f.chat("alice", testutil.UserMessage("full", "u1", "one"))
	b, _ := json.Marshal(map[string]any{"id": "full", "trigger": "submit-message", "messages": []any{
		msg("u1", "user", part("text", "text", "one")), msg(f.stored("alice", "full")[1].ID(), "assistant", part("text", "text", "You said: one")),
		msg("u2", "user", part("text", "text", "two")),
	}})
	f.chat("alice", string(b))
	if n := len(f.stored("alice", "full")); n != 4 {
		t.Fatalf("stored %d messages", n)
	}
	b, _ = json.Marshal(map[string]any{"id": "full", "trigger": "submit-message", "messages": []any{msg("u3", "user", part("text", "text", "three"))}})
	if status, body := f.do("alice", http.MethodPost, "/api/chat", string(b)); status != http.StatusConflict || !strings.Contains(body, "too long") {
		t.Fatalf("a new message in a full chat: %d %s", status, body)
	}
	// Editing the first message: the chat goes back to two messages.
	b, _ = json.Marshal(map[string]any{"id": "full", "trigger": "submit-message", "messages": []any{msg("u1", "user", part("text", "text", "one, edited"))}})
	if got := f.chat("alice", string(b)).Text(); got != "You said: one, edited" {
		t.Fatalf("an edit of a full chat: %q", got)
	}
	if got := f.stored("alice", "full"); roles(got) != "user,assistant" {
		t.Fatalf("after the edit: %s", roles(got))
	}
	// Regenerating a full chat's last reply.
	f.chat("alice", string(b))
	b, _ = json.Marshal(map[string]any{"id": "full", "trigger": "regenerate-message", "messages": []any{msg("u1", "user", part("text", "text", "one, edited"))}})
	if got := f.chat("alice", string(b)).Text(); got != "You said: one, edited" {
		t.Fatalf("a regenerate in a full chat: %q", got)
	}
}
