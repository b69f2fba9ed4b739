package uiadapter_test

import (
	"bufio"
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// Tests for how a run ends: what is stored, when the lock goes, what the
// client gets. Each kills a mutant that survived the suite before
// (issue 12).

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
	if e := chunks.Find("error"); e == nil || e["errorText"] != uiadapter.SaveFailedMessage {
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
