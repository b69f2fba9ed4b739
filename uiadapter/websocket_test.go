package uiadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/uiadapter"
)

// wsClient is one WebSocket to the fixture's useChat handler, as scope.
type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

func (f *historyFixture) dial(t *testing.T, scope string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.url, "http")+"/api/chat", &websocket.DialOptions{HTTPHeader: http.Header{"X-Scope": {scope}}})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (%d)", err, status)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: t, c: c}
}

func (w *wsClient) write(frame any) {
	w.t.Helper()
	b, ok := frame.([]byte)
	if !ok {
		b, _ = json.Marshal(frame)
	}
	if err := w.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

// wsReply is a server frame.
type wsReply struct {
	Type      string          `json:"type"`
	RequestID string          `json:"requestId"`
	Sequence  int             `json:"sequence"`
	Chunk     json.RawMessage `json:"chunk"`
	ErrorText string          `json:"errorText"`
}

func (w *wsClient) read() wsReply {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	var r wsReply
	if err := json.Unmarshal(b, &r); err != nil {
		w.t.Fatalf("a frame that is not JSON: %s", b)
	}
	return r
}

// until reads frames until request id's last one (end, no-active or
// error), and returns that request's frames.
func (w *wsClient) until(id string) []wsReply {
	w.t.Helper()
	var got []wsReply
	for {
		r := w.read()
		if r.RequestID != id {
			continue
		}
		got = append(got, r)
		if r.Type == "end" || r.Type == "no-active" || r.Type == "error" {
			return got
		}
	}
}

func wsSend(id, chat, text string) map[string]any {
	return map[string]any{"type": "send", "requestId": id, "id": chat, "trigger": "submit-message",
		"messages": []any{map[string]any{"id": "u-" + id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}}}
}

// chunks checks that frames are chunks numbered from 0 then end, and
// returns the chunks.
func chunks(t *testing.T, frames []wsReply) []string {
	t.Helper()
	var out []string
	for i, f := range frames[:len(frames)-1] {
		if f.Type != "chunk" || f.Sequence != i {
			t.Fatalf("frame %d: %s %d, want chunk %d", i, f.Type, f.Sequence, i)
		}
		out = append(out, string(f.Chunk))
	}
	if last := frames[len(frames)-1]; last.Type != "end" {
		t.Fatalf("the last frame: %+v", last)
	}
	return out
}

// Bad frames are an error for their request alone (or, with no request
// to answer, dropped): the socket goes on serving the next request.
func TestWebSocketBadFramesBreakNothingElse(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithMaxBodyBytes(64<<10))
	w := f.dial(t, "alice")
	w.write([]byte("not json"))
	w.write([]byte(`{"type":"send"}`)) // no requestId: nothing to answer
	for id, frame := range map[string]any{
		"unknown type": map[string]any{"type": "nope", "requestId": "r1"},
		"bad chat id":  map[string]any{"type": "send", "requestId": "r2", "id": "c\x1b[31m", "trigger": "submit-message", "messages": []any{}},
		"bad body":     map[string]any{"type": "send", "requestId": "r3", "id": "c", "trigger": "submit-message", "messages": []any{}, "body": []any{1}},
		"bad trigger":  map[string]any{"type": "send", "requestId": "r4", "id": "c", "trigger": "resume", "messages": []any{}},
		"bad sequence": map[string]any{"type": "resume", "requestId": "r5", "id": "c", "lastSequence": -1},
		"oversized":    wsSend("r6", "c", strings.Repeat("x", 100<<10)),
		"bad message":  map[string]any{"type": "send", "requestId": "r7", "id": "c", "trigger": "submit-message", "messages": []any{map[string]any{"role": "user"}}},
	} {
		w.write(frame)
		req := frame.(map[string]any)["requestId"].(string)
		got := w.until(req)
		var refusal struct {
			Error string `json:"error"`
		}
		if len(got) != 1 || got[0].Type != "error" || json.Unmarshal([]byte(got[0].ErrorText), &refusal) != nil || refusal.Error == "" || strings.Contains(got[0].ErrorText, "\n") {
			t.Errorf("%s: %+v, want one error frame whose text is a short JSON refusal", id, got)
		}
	}
	w.write(wsSend("ok", "c", "hello"))
	got := chunks(t, w.until("ok"))
	if !strings.Contains(strings.Join(got, ""), `"delta":"hello"`) {
		t.Fatalf("the good request after the bad ones: %v", got)
	}
	if msgs := f.stored("alice", "c"); roles(msgs) != "user,assistant" {
		t.Fatalf("stored %s", roles(msgs))
	}
}

// A socket touches only its own scope's chats: another scope's chat id
// has nothing to resume, and a send to it starts that scope's own chat.
func TestWebSocketAnotherScopesChat(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	alice := f.dial(t, "alice")
	alice.write(wsSend("a1", "c", "hello"))
	chunks(t, alice.until("a1"))
	bob := f.dial(t, "bob")
	bob.write(map[string]any{"type": "resume", "requestId": "b1", "id": "c"})
	if got := bob.until("b1"); len(got) != 1 || got[0].Type != "no-active" {
		t.Fatalf("bob's resume of alice's chat id: %+v", got)
	}
	bob.write(wsSend("b2", "c", "mine"))
	chunks(t, bob.until("b2"))
	if a, b := f.stored("alice", "c"), f.stored("bob", "c"); len(a) != 2 || len(b) != 2 || b[0].Text() != "mine" {
		t.Fatalf("alice %s, bob %s", roles(a), roles(b))
	}
}

// A resume numbers the turn's chunks as the stream that started it did,
// so lastSequence skips exactly what the client has: live, while the
// reply runs (after start, its fifth chunk on), and once it has ended
// (the rest, from the run's log); without lastSequence a finished turn
// is no-active, and a running one is replayed from its first chunk.
func TestWebSocketResumeNumbersAsTheOriginal(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	w := f.dial(t, "alice")
	w.write(wsSend("s", "c", "think: wait 1000 ms"))
	var head []wsReply
	for len(head) < 6 {
		if r := w.read(); r.RequestID == "s" {
			head = append(head, r)
		}
	}
	// start asks for a resume; its frames are read later.
	start := func(last int) *wsClient {
		frame := map[string]any{"type": "resume", "requestId": "r", "id": "c"}
		if last >= 0 {
			frame["lastSequence"] = last
		}
		r := f.dial(t, "alice")
		r.write(frame)
		return r
	}
	resume := func(last int) []wsReply { return start(last).until("r") }
	liveAfter, liveWhole := start(4), start(-1)
	live, whole := liveAfter.until("r"), liveWhole.until("r")
	original := chunks(t, append(head, w.until("s")...))
	check := func(name string, got []wsReply, last int) {
		t.Helper()
		if got[0].Type != "start" {
			t.Fatalf("%s: the resume does not start with start: %+v", name, got[0])
		}
		rest := got[1:]
		for i, fr := range rest[:len(rest)-1] {
			if fr.Type != "chunk" || fr.Sequence != last+1+i || string(fr.Chunk) != original[last+1+i] {
				t.Fatalf("%s: chunk %d: %s %d %s, want %d %s", name, i, fr.Type, fr.Sequence, fr.Chunk, last+1+i, original[last+1+i])
			}
		}
		if len(rest)-1 != len(original)-last-1 || rest[len(rest)-1].Type != "end" {
			t.Fatalf("%s: %d chunks after %d then %s, want %d then end", name, len(rest)-1, last, rest[len(rest)-1].Type, len(original)-last-1)
		}
	}
	check("live, after 4", live, 4)
	check("live, whole", whole, -1)
	check("ended, after 4", resume(4), 4)
	if got := resume(-1); len(got) != 1 || got[0].Type != "no-active" {
		t.Fatalf("a resume of a finished turn without lastSequence: %+v", got)
	}
	// A long reply, whose log in this process has merged the deltas its
	// stream was given: the resume still counts them one by one.
	w.write(wsSend("long", "c", "count to 3000"))
	original = chunks(t, w.until("long"))
	if len(original) < 3000 {
		t.Fatalf("the long reply: %d chunks", len(original))
	}
	check("a long reply, after 2500", resume(2500), 2500)
}

// A GET of the route that is not a WebSocket handshake is a 426 with a
// short JSON error, not the library's plain text.
func TestWebSocketRouteWithoutUpgrade(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	status, raw := f.do("alice", http.MethodGet, "/api/chat", "")
	if status != http.StatusUpgradeRequired || !strings.HasPrefix(raw, `{"error":`) {
		t.Fatalf("%d %s", status, raw)
	}
}

// One scope holds at most DefaultMaxSockets sockets: one more is refused
// 429 before the upgrade.
func TestWebSocketsPerScopeAreBounded(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	for range uiadapter.DefaultMaxSockets {
		f.dial(t, "alice")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.url, "http")+"/api/chat", &websocket.DialOptions{HTTPHeader: http.Header{"X-Scope": {"alice"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("one socket more: %v %v", err, resp)
	}
	f.dial(t, "bob") // another scope's are its own
}

// A flood of frames on one socket: past the requests a socket may have
// in flight, each one more is an error for itself; every request ends
// with one terminal frame, and the socket serves the next one.
func TestWebSocketFloodIsBounded(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	w := f.dial(t, "alice")
	const n = 24
	for i := range n {
		w.write(wsSend("f"+strconv.Itoa(i), "chat"+strconv.Itoa(i), "wait 300 ms"))
	}
	ends := map[string]string{}
	refused := 0
	for len(ends) < n {
		r := w.read()
		switch r.Type {
		case "end", "error":
			if _, twice := ends[r.RequestID]; twice {
				t.Fatalf("request %s ended twice", r.RequestID)
			}
			ends[r.RequestID] = r.Type
			if r.Type == "error" {
				if r.ErrorText == "" {
					t.Fatalf("an error frame without its text: %+v", r)
				}
				refused++ // the socket's bound, or the scope's runs (RunLimits)
			}
		}
	}
	if refused < n-16 {
		t.Fatalf("%d of %d refused, want at least %d: %v", refused, n, n-16, ends)
	}
	w.write(wsSend("after", "c", "hello"))
	chunks(t, w.until("after"))
}

// abort stops only what its request asked for: a queued send whose turn
// has not begun leaves the queue, and the reply it waited for goes on to
// its end; the queued outcome is not a chunk of the turn (its numbering
// is a resume's), so the socket sends none for it.
func TestWebSocketAbortOfAQueuedSend(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	w := f.dial(t, "alice")
	w.write(wsSend("s1", "c", "wait 400 ms"))
	for r := w.read(); r.RequestID != "s1" || r.Type != "chunk"; r = w.read() {
	}
	queued := wsSend("s2", "c", "later")
	queued["body"] = map[string]any{"busy": "queue"}
	w.write(queued)
	testutil.Eventually(t, 5*time.Second, "the message to be queued", func() bool { return queuedIDs(f.queue("c")) == "u-s2" })
	w.write(map[string]any{"type": "abort", "requestId": "s2"})
	var first []wsReply
	for {
		r := w.read()
		if r.RequestID == "s2" && r.Type == "chunk" {
			t.Fatalf("the aborted queued send got a chunk: %s", r.Chunk)
		}
		if r.RequestID == "s1" {
			first = append(first, r)
			if r.Type == "end" || r.Type == "error" {
				break
			}
		}
	}
	if last := first[len(first)-2]; !strings.Contains(string(last.Chunk), `"type":"finish"`) {
		t.Fatalf("the reply the queued message waited for ended with %s", last.Chunk)
	}
	if got := queuedIDs(f.queue("c")); got != "" {
		t.Fatalf("the queue after the abort: %q", got)
	}
	if msgs := f.stored("alice", "c"); roles(msgs) != "user,assistant" {
		t.Fatalf("stored %s: the aborted message ran", roles(msgs))
	}
}

// A refusal's errorText is the body the HTTP route answers with, so a
// client reads it one way over both transports: here the 409 of a chat
// whose reply is running, with its code.
func TestWebSocketRefusalIsTheHTTPBody(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	w := f.dial(t, "alice")
	w.write(wsSend("s1", "c", "wait 400 ms"))
	for r := w.read(); r.RequestID != "s1" || r.Type != "chunk"; r = w.read() {
	}
	w.write(wsSend("s2", "c", "and now?"))
	got := w.until("s2")
	if len(got) != 1 || got[0].Type != "error" {
		t.Fatalf("a send to a busy chat: %+v", got)
	}
	frame, _ := json.Marshal(wsSend("http", "c", "and now, over HTTP?"))
	status, body := f.do("alice", http.MethodPost, "/api/chat", string(frame))
	if status != http.StatusConflict || got[0].ErrorText != strings.TrimSpace(body) {
		t.Fatalf("errorText %q, the HTTP route's %d %q", got[0].ErrorText, status, body)
	}
	if !strings.Contains(body, `"code":"busy"`) {
		t.Fatalf("the refusal has no code: %s", body)
	}
	if rest := w.until("s1"); rest[len(rest)-1].Type != "end" {
		t.Fatalf("the running reply ended with %+v", rest[len(rest)-1])
	}
}
