package uiadapter_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// Tests for how a run ends: what is stored, when the lock goes, what the
// client gets.

// guard bounds a wait that only a bug makes long (not a timing).
const guard = 10 * time.Second

// agentFunc adapts a function to agent.Agent.
type agentFunc func(ctx context.Context, yield func(agent.Event, error) bool)

func (f agentFunc) Run(ctx context.Context, _ *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) { f(ctx, yield) }
}

// startText yields the start of a reply: a run, a step, a text part and
// one delta.
func startText(yield func(agent.Event, error) bool, delta string) bool {
	return yield(&agent.RunStarted{MessageID: "a1"}, nil) && yield(&agent.StepStarted{Step: 1, MessageID: "a1"}, nil) &&
		yield(&agent.PartStarted{Kind: agent.PartText, ID: "t"}, nil) && yield(&agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: delta}, nil)
}

// finishText ends what startText began.
func finishText(yield func(agent.Event, error) bool, text string) {
	_ = yield(&agent.PartEnded{Kind: agent.PartText, ID: "t", Part: cmf.Text{Text: text}}, nil) &&
		yield(&agent.StepFinished{Step: 1, StopReason: cmf.StopEnd}, nil) &&
		yield(&agent.RunFinished{StopReason: cmf.StopEnd}, nil)
}

func serveChat(t *testing.T, h http.Handler, w http.ResponseWriter, chat string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(userBody(chat, "hello")))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, req)
}

// An agent that stops without its final event (nor an error) was cut
// off: what it said is stored, marked aborted, not error.
func TestRunWithoutItsFinalEventIsStoredAborted(t *testing.T) {
	store := history.NewMemory()
	quits := agentFunc(func(_ context.Context, yield func(agent.Event, error) bool) { startText(yield, "half a th") })
	h := testutil.Must(vercelai.Handler(quits, uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope)))
	serveChat(t, h, &testutil.DiscardWriter{}, "c")
	conv, _ := store.Load(context.Background(), history.Key{Scope: "single", Chat: "c"})
	if len(conv.Messages) != 2 {
		t.Fatalf("stored %d messages", len(conv.Messages))
	}
	a := conv.Messages[1]
	if a.Text() != "half a th" || a.Extensions.Completion == nil || a.Extensions.Completion.StopReason != cmf.StopAborted {
		t.Fatalf("stored %q, completion %+v", a.Text(), a.Extensions.Completion)
	}
}

// A reply whose save conflicts with a write that is not ours (someone
// changed the chat behind the lock) is not saved, and the client is told.
func TestSaveConflictWithAnotherWriteIsNotSaved(t *testing.T) {
	store := history.NewMemory()
	key := history.Key{Scope: "single", Chat: "c"}
	release := make(chan struct{})
	gated := agentFunc(func(ctx context.Context, yield func(agent.Event, error) bool) {
		if !startText(yield, "reply") {
			return
		}
		select {
		case <-release:
		case <-ctx.Done():
		case <-time.After(guard):
		}
		finishText(yield, "reply")
	})
	h := testutil.Must(vercelai.Handler(gated, uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	done := make(chan testutil.Chunks, 1)
	go func() { done <- testutil.PostStream(t, srv.URL, userBody("c", "hello")) }()
	// Once the user message is stored, another writer appends behind the
	// lock's back.
	var v history.Version
	testutil.Eventually(t, guard, "the user message to be stored", func() bool {
		conv, _ := store.Load(context.Background(), key)
		v = conv.Version
		return len(conv.Messages) == 1
	})
	intruder := cmf.Message{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "from elsewhere"}}}
	intruder.SetID("x1")
	if _, err := store.Write(context.Background(), key, v, history.KeepAll, intruder); err != nil {
		t.Fatal(err)
	}
	close(release)
	chunks := <-done
	if e := chunks.Find("error"); e == nil || e["errorText"] != wire.SaveFailedMessage {
		t.Fatalf("the stream ended without the save failure: %v", chunks)
	}
	conv, _ := store.Load(context.Background(), key)
	if len(conv.Messages) != 2 || conv.Messages[1].ID() != "x1" {
		t.Fatalf("stored %d messages; the last is %q", len(conv.Messages), conv.Messages[len(conv.Messages)-1].ID())
	}
}

// A quiet run keeps the stream alive with comments.
func TestKeepAlivesDuringSilence(t *testing.T) {
	seen := make(chan struct{})
	quiet := agentFunc(func(ctx context.Context, yield func(agent.Event, error) bool) {
		if !startText(yield, "thinking") {
			return
		}
		select {
		case <-seen:
		case <-ctx.Done():
		case <-time.After(guard):
		}
		finishText(yield, "thinking")
	})
	srv := httptest.NewServer(testutil.Must(vercelai.Handler(quiet, uiadapter.WithKeepAlive(10*time.Millisecond))))
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(userBody("c", "hello")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	got := false
	for sc.Scan() {
		if sc.Text() == ": keep-alive" && !got {
			got = true
			close(seen)
		}
	}
	if !got {
		t.Fatal("no keep-alive comment while the run was silent")
	}
}

// failingWriter accepts the response head, then fails every write, as a
// connection that broke does, while the request's context stays alive.
type failingWriter struct {
	testutil.DiscardWriter
	writes int
}

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.writes++; w.writes > 1 {
		return 0, errors.New("broken pipe")
	}
	return w.DiscardWriter.Write(b)
}

// A write that fails ends the stream and stops the run, even when the
// request's context says nothing.
func TestWriteErrorStopsTheRun(t *testing.T) {
	stopped := make(chan struct{})
	h := testutil.Must(vercelai.Handler(agentFunc(func(ctx context.Context, yield func(agent.Event, error) bool) {
		endless{}.Run(ctx, nil)(yield)
		close(stopped)
	})))
	done := make(chan struct{})
	go func() {
		serveChat(t, h, &failingWriter{}, "c")
		close(done)
	}()
	for _, ch := range []chan struct{}{done, stopped} {
		select {
		case <-ch:
		case <-time.After(guard):
			t.Fatal("the run went on after its connection failed")
		}
	}
}

// The lock is held while the reply is saved (another request finds the
// chat busy), and released before the client reads the final event (so
// the client's next request, which useChat may send the moment it reads
// it, finds the chat free).
func TestLockSpansTheSaveAndNotTheFinalEvent(t *testing.T) {
	store := &gatedStore{Memory: history.NewMemory(), gate: make(chan struct{}), inSave: make(chan struct{})}
	key := history.Key{Scope: "single", Chat: "c"}
	reply := agentFunc(func(_ context.Context, yield func(agent.Event, error) bool) {
		if startText(yield, "reply") {
			finishText(yield, "reply")
		}
	})
	h := testutil.Must(vercelai.Handler(reply, uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope)))
	w := &finishWatcher{check: func() error { return store.Memory.Acquire(context.Background(), key, "next", time.Minute) }}
	done := make(chan struct{})
	go func() {
		serveChat(t, h, w, "c")
		close(done)
	}()
	select {
	case <-store.inSave:
	case <-time.After(guard):
		t.Fatal("the reply was never saved")
	}
	if err := store.Memory.Acquire(context.Background(), key, "other", time.Minute); !errors.Is(err, history.ErrBusy) {
		t.Fatalf("while the reply is being saved, the lock is free (Acquire = %v)", err)
	}
	close(store.gate)
	<-done
	if !w.sawFinish {
		t.Fatal("no finish chunk")
	}
	if w.err != nil {
		t.Fatalf("when the client read the final event, the chat was still locked: %v", w.err)
	}
}

// gatedStore holds the second Append (the reply's) until gate closes.
type gatedStore struct {
	*history.Memory
	mu      sync.Mutex
	appends int
	gate    chan struct{}
	inSave  chan struct{}
}

func (s *gatedStore) Write(ctx context.Context, key history.Key, expect history.Version, keep int, msgs ...cmf.Message) (history.Version, error) {
	s.mu.Lock()
	s.appends++
	n := s.appends
	s.mu.Unlock()
	if n == 2 {
		close(s.inSave)
		<-s.gate
	}
	return s.Memory.Write(ctx, key, expect, keep, msgs...)
}

// finishWatcher runs check when the finish chunk is written.
type finishWatcher struct {
	testutil.DiscardWriter
	check     func() error
	sawFinish bool
	err       error
}

func (w *finishWatcher) Write(b []byte) (int, error) {
	if !w.sawFinish && strings.Contains(string(b), `"type":"finish"`) {
		w.sawFinish, w.err = true, w.check()
	}
	return w.DiscardWriter.Write(b)
}

// An approved tool that completes while its client leaves and the user
// stops the run is stored with the result it returned, not as
// interrupted: its side effect happened, and the chat must say so.
func TestToolThatRanIsStoredAsRun(t *testing.T) {
	entered := make(chan struct{})
	var once sync.Once
	del := agent.FuncTool("delete_file", "Deletes a file.", func(ctx context.Context, in struct {
		Path string `json:"path"`
	}) (map[string]string, error) {
		once.Do(func() { close(entered) })
		<-ctx.Done() // the client leaves while the side effect is under way; it completes
		return map[string]string{"deleted": in.Path}, nil
	})
	del.NeedsApproval = agent.Always
	store := history.NewMemory()
	f := newHistoryFixtureWith(t, store, testutil.DemoLoopWith(t, del))
	chunks := f.chat("alice", userBody("c", "delete /tmp/x.txt"))
	req, avail := chunks.Find("tool-approval-request"), chunks.Find("tool-input-available")
	m := msg(chunks.Find("start")["messageId"].(string), "assistant", part("step-start"),
		part("tool-delete_file", "toolCallId", avail["toolCallId"], "state", "approval-responded", "input", avail["input"],
			"approval", map[string]any{"id": req["approvalId"], "approved": true}))
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/api/chat", strings.NewReader(continuation("c", m)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Scope", "alice")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	// The user stops the run while the side effect is under way; it
	// completes, and is stored as run.
	if code, body := f.do("alice", http.MethodPost, "/api/chat/c/stop", ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	cancel()
	resp.Body.Close()
	testutil.Eventually(t, 5*time.Second, "the run's output to be stored", func() bool {
		return len(f.stored("alice", "c")) == 3
	})
	var result cmf.ToolResult
	for _, p := range f.stored("alice", "c")[2].Content {
		result, _ = p.(cmf.ToolResult)
	}
	if result.IsError || string(result.Content) != `{"deleted":"/tmp/x.txt"}` {
		t.Fatalf("stored result %+v %s", result, result.Content)
	}
}

// endless streams 1 KiB text deltas until its run is cancelled.
type endless struct{}

func (endless) Run(ctx context.Context, _ *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		if !yield(&agent.RunStarted{MessageID: "m"}, nil) || !yield(&agent.StepStarted{Step: 1, MessageID: "m"}, nil) ||
			!yield(&agent.PartStarted{Kind: agent.PartText, ID: "t", MessageID: "m"}, nil) {
			return
		}
		chunk := strings.Repeat("x", 1024)
		for ctx.Err() == nil {
			if !yield(&agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: chunk}, nil) {
				return
			}
		}
		_ = yield(&agent.PartEnded{Kind: agent.PartText, ID: "t", Part: cmf.Text{Text: "cut"}}, nil) &&
			yield(&agent.StepFinished{Step: 1, StopReason: cmf.StopAborted}, nil) &&
			yield(&agent.RunFinished{StopReason: cmf.StopAborted}, nil)
	}
}

// Clients that stop reading do not hold on to a stream: a write that
// cannot finish within the write timeout ends it as a disconnect, and
// goroutines and heap go back to where they were.
func TestClientsThatStopReadingAreCut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	logs := &testutil.LogBuffer{}
	srv := httptest.NewServer(testutil.Must(uiadapter.New(vercelai.New(), endless{}, uiadapter.WithWriteTimeout(timeout), uiadapter.WithLogger(testutil.Logger(logs)))))
	t.Cleanup(srv.Close)
	baseG, baseHeap := testutil.Settle(0, 0)
	const n = 50
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		body := userBody("c", "go on")
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		conns[i] = c // and never read
	}
	start := time.Now()
	testutil.Eventually(t, 30*time.Second, "every stalled stream to be cut", func() bool {
		return strings.Count(logs.String(), "client disconnected; run cancelled") == n
	})
	t.Logf("%d stalled streams cut within %v (write timeout %v)", n, time.Since(start), timeout)
	for _, c := range conns {
		c.Close()
	}
	g, heap := testutil.Settle(baseG+5, 10*time.Second)
	t.Logf("goroutines %d → %d, heap %d → %d KiB", baseG, g, baseHeap>>10, heap>>10)
	if g > baseG+5 || heap > baseHeap+16<<20 {
		t.Fatalf("left behind: goroutines %d → %d, heap %d → %d KiB", baseG, g, baseHeap>>10, heap>>10)
	}
}
