package uiadapter_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/uiadapter"
	goredis "github.com/redis/go-redis/v9"
)

// replicas are servers of one app over one Redis, each with its own
// clients of the store and of the shared run log, as separate processes
// have.
type replicas struct {
	t      *testing.T
	rdb    *goredis.Client
	prefix string
}

func newReplicas(t *testing.T) *replicas {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	return &replicas{t: t, rdb: rdb, prefix: prefix}
}

// replica is one of replicas: the demo loop in a chat handler with its
// resume route.
type replica struct {
	t     *testing.T
	url   string
	store lockingStore
	log   runlog.Log
	logs  *testutil.LogBuffer
	h     *uiadapter.Handler
}

// start starts a replica of the demo loop over useChat; wrap, when set,
// stands between it and the store.
func (rs *replicas) start(wrap func(lockingStore) lockingStore) *replica {
	return rs.startWith(vercelai.New(), testutil.DemoLoop(rs.t, nil), wrap)
}

// startWith starts a replica of a that speaks proto, with its resume and
// connect routes; wrap, when set, stands between it and the store.
func (rs *replicas) startWith(proto wire.Protocol, a agent.Agent, wrap func(lockingStore) lockingStore) *replica {
	t := rs.t
	r := &replica{t: t, store: redisstore.New(rs.rdb, redisstore.WithPrefix(rs.prefix+"chats:")), logs: &testutil.LogBuffer{}}
	if wrap != nil {
		r.store = wrap(r.store)
	}
	l, err := redisstore.NewRunLog(context.Background(), rs.rdb, redisstore.WithRunLogPrefix(rs.prefix+"runs:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	r.log = l
	// Keep-alives every few milliseconds: a reader checks a quiet run's
	// lock as often.
	h := testutil.Must(uiadapter.New(proto, a, uiadapter.WithStore(r.store), uiadapter.WithScope(uiadapter.SingleScope),
		uiadapter.WithRunLog(l), uiadapter.WithKeepAlive(10*time.Millisecond), uiadapter.WithLogger(testutil.Logger(r.logs))))
	r.h = h
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", h)
	mux.Handle("GET /api/chat/{id}/stream", h.ResumeHandler(nil))
	mux.Handle("POST /api/agui/connect", h.ConnectHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { testutil.ShutdownNow(h) })
	r.url = srv.URL
	return r
}

// send sends a new turn to the chat and returns the response.
func (r *replica) send(chat, id, text string) *http.Response {
	r.t.Helper()
	resp, err := http.Post(r.url+"/api/chat", "application/json", strings.NewReader(testutil.UserMessage(chat, id, text)))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// follow resumes the chat's run.
func (r *replica) follow(chat string) *bufio.Reader {
	r.t.Helper()
	resp, err := http.Get(r.url + "/api/chat/" + chat + "/stream")
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("resume: %d", resp.StatusCode)
	}
	return bufio.NewReader(resp.Body)
}

// dieMidReply leaves in the shared log what a run leaves when its process
// dies mid-reply: its header, holding the token of a lock nobody holds any
// more, and the start of a reply ("Once upon", message a1) that never
// ends. Its turn (u1) is in the store when stored is set, as a run stores
// it while it starts; stored may also hold the reply, whole, as a run
// that stored it but could not end its log left it.
func dieMidReply(t *testing.T, r *replica, chat string, stored ...cmf.Message) {
	t.Helper()
	hdr := runlog.Header{Run: "dead", Protocol: "vercel-ai", Base: 1, Turn: []cmf.Message{storyTurn()}, Lock: "the dead process's", Started: time.Now()}
	leaveDeadLog(t, r, chat, hdr, []agent.Event{&agent.RunStarted{MessageID: "a1"}, &agent.StepStarted{Step: 1, MessageID: "a1"},
		&agent.PartStarted{Kind: agent.PartText, ID: "t"}, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "Once upon"}}, stored...)
}

// leaveDeadLog leaves in the shared log the log of a run whose process
// died (hdr, and its events, numbered from 1), with stored in the store.
func leaveDeadLog(t *testing.T, r *replica, chat string, hdr runlog.Header, events []agent.Event, stored ...cmf.Message) {
	t.Helper()
	ctx := context.Background()
	key := history.Key{Scope: "single", Chat: chat}
	if len(stored) > 0 {
		if _, err := r.store.Write(ctx, key, 0, history.KeepAll, stored...); err != nil {
			t.Fatal(err)
		}
	}
	var es []runlog.Entry
	for i, ev := range events {
		es = append(es, runlog.EventEntry(int64(i+1), ev))
	}
	if err := r.log.Begin(ctx, key, hdr, es...); err != nil {
		t.Fatal(err)
	}
}

// storyTurn is the turn of the run dieMidReply leaves.
func storyTurn() cmf.Message {
	u := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "tell me a story"}}}
	u.SetID("u1")
	return u
}

// storedIn is the chat as a replica's store has it: each message's id,
// role and text.
func (r *replica) storedIn(chat string) []string {
	r.t.Helper()
	conv, err := r.store.Load(context.Background(), history.Key{Scope: "single", Chat: chat})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, m := range conv.Messages {
		s := m.ID() + " " + string(m.Role) + ": " + m.Text()
		if c := m.Extensions.Completion; c != nil && c.StopReason != cmf.StopEnd {
			s += " (" + string(c.StopReason) + ")"
			if c.Error != "" {
				s += " told: " + c.Error
			}
		}
		out = append(out, s)
	}
	return out
}

// untilKeepAlives reads a stream up to its nth keep-alive comment, and
// returns the data of the frames before it.
func untilKeepAlives(t *testing.T, r *bufio.Reader, n int) string {
	t.Helper()
	var data strings.Builder
	for n > 0 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended (%v) after %s", err, data.String())
		}
		switch {
		case strings.HasPrefix(line, ":"):
			n--
		case strings.HasPrefix(line, "data: "):
			data.WriteString(line[6:])
		}
	}
	return data.String()
}

// restOf is the rest of a stream, as sent.
func restOf(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run whose process died mid-reply is finished by the readers that
// follow it on other replicas, once its lock lapses (while it is held the
// run may be alive, only quiet): each reader's stream ends with
// DiedMessage after what the run had said, and its partial reply is
// stored once, after its turn, however many readers found it dead. The
// chat's next turn comes after it.
func TestReadersFinishTheRunOfADeadProcessOnce(t *testing.T) {
	rs := newReplicas(t)
	a, b := rs.start(nil), rs.start(nil)
	dieMidReply(t, a, "c", storyTurn())
	ctx := context.Background()
	key := history.Key{Scope: "single", Chat: "c"}
	if err := a.store.Acquire(ctx, key, "alive", time.Minute); err != nil {
		t.Fatal(err)
	}
	readers := []*bufio.Reader{a.follow("c"), b.follow("c")}
	for i, r := range readers {
		// A remote reader looks at the lock before each keep-alive.
		if got := untilKeepAlives(t, r, 3); !strings.Contains(got, `"delta":"Once upon"`) || strings.Contains(got, wire.DiedMessage) {
			t.Fatalf("reader %d while the lock was held: %s", i, got)
		}
	}
	if got := a.storedIn("c"); len(got) != 1 {
		t.Fatalf("stored while the run's lock was held: %q", got)
	}
	if err := a.store.Release(ctx, key, "alive"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	rest := make([]string, len(readers))
	errs := make([]error, len(readers))
	for i, r := range readers {
		wg.Go(func() {
			b, err := io.ReadAll(r)
			rest[i], errs[i] = string(b), err
		})
	}
	wg.Wait()
	for i, s := range rest {
		if errs[i] != nil || !strings.Contains(s, wire.DiedMessage) || strings.Contains(s, wire.EndNotShownMessage) {
			t.Errorf("reader %d's stream ended (%v) with %q", i, errs[i], s)
		}
	}
	want := []string{"u1 user: tell me a story", "a1 assistant: Once upon (aborted) told: " + wire.DiedMessage}
	if got := b.storedIn("c"); !slices.Equal(got, want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	resp, err := http.Get(b.url + "/api/chat/c/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("resuming the finished run: %d, want 204", resp.StatusCode)
	}
	testutil.ReadSSE(t, a.send("c", "u2", "hello").Body)
	if got := b.storedIn("c"); len(got) != 4 || !slices.Equal(got[:3], append(want, "u2 user: hello")) {
		t.Fatalf("stored after the next turn: %q", got)
	}
}

// gatedLoads is a store whose first load waits until released: a reader
// caught while it finishes a dead run.
type gatedLoads struct {
	lockingStore
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *gatedLoads) Load(ctx context.Context, k history.Key) (history.Conversation, error) {
	if s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		select {
		case <-s.release:
		case <-ctx.Done():
			return history.Conversation{}, ctx.Err()
		}
	}
	return s.lockingStore.Load(ctx, k)
}

// A reader that finishes a dead run holds the chat meanwhile: a new turn
// that comes then is refused as busy (its client tries again) instead of
// finishing the run a second time beside it; the turn then goes after the
// partial reply.
func TestReaderFinishingADeadRunHoldsTheChat(t *testing.T) {
	rs := newReplicas(t)
	gate := &gatedLoads{entered: make(chan struct{}), release: make(chan struct{})}
	gate.armed.Store(true)
	a := rs.start(nil)
	b := rs.start(func(s lockingStore) lockingStore { gate.lockingStore = s; return gate })
	dieMidReply(t, a, "c", storyTurn())
	reader := b.follow("c")
	select {
	case <-gate.entered: // the reader found the run dead and is finishing it
	case <-time.After(30 * time.Second):
		t.Fatal("the reader did not finish the dead run")
	}
	resp := a.send("c", "u2", "hello")
	close(gate.release)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("a new turn while a reader finished the dead run: %d, want 409", resp.StatusCode)
	}
	if rest := restOf(t, reader); !strings.Contains(rest, wire.DiedMessage) || strings.Contains(rest, wire.EndNotShownMessage) {
		t.Fatalf("the reader's stream ended with %q", rest)
	}
	want := []string{"u1 user: tell me a story", "a1 assistant: Once upon (aborted) told: " + wire.DiedMessage}
	if got := a.storedIn("c"); !slices.Equal(got, want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	testutil.ReadSSE(t, a.send("c", "u2", "hello").Body)
	if got := a.storedIn("c"); len(got) != 4 || !slices.Equal(got[:3], append(want, "u2 user: hello")) {
		t.Fatalf("stored after the next turn: %q", got)
	}
}

// What a reader stores of a dead run: its partial reply (stop reason
// aborted, with what its readers were told, so that a reload shows it cut
// short) after its turn, and the turn too when the run died before
// storing it. A reply its run did store, whole, before it failed to end
// its log, is not stored again: the reader's stream ends saying the rest
// is in the chat.
func TestReaderStoresWhatADeadRunLeft(t *testing.T) {
	whole := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Text{Text: "Once upon a time. The end."}}}
	whole.SetID("a1")
	for _, c := range []struct {
		name   string
		stored []cmf.Message
		end    string // the reader's stream ends with it
		want   []string
	}{
		{"its turn stored", []cmf.Message{storyTurn()}, wire.DiedMessage,
			[]string{"u1 user: tell me a story", "a1 assistant: Once upon (aborted) told: " + wire.DiedMessage}},
		{"its turn not stored", nil, wire.DiedMessage,
			[]string{"u1 user: tell me a story", "a1 assistant: Once upon (aborted) told: " + wire.DiedMessage}},
		{"its reply stored", []cmf.Message{storyTurn(), whole}, wire.EndNotShownMessage,
			[]string{"u1 user: tell me a story", "a1 assistant: Once upon a time. The end."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newReplicas(t).start(nil)
			dieMidReply(t, b, "c", c.stored...)
			rest := restOf(t, b.follow("c"))
			if !strings.Contains(rest, `"delta":"Once upon"`) || !strings.Contains(rest, c.end) {
				t.Fatalf("the reader's stream: %q, want it to end with %q", rest, c.end)
			}
			if got := b.storedIn("c"); !slices.Equal(got, c.want) {
				t.Fatalf("stored %q, want %q", got, c.want)
			}
		})
	}
}
