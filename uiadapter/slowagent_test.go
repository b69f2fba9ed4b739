package uiadapter_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// stepped is a slow agent: it sends one text delta each time next gets a
// value, and ends when next is closed.
type stepped struct{ next chan struct{} }

func (s stepped) Run(ctx context.Context, _ *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		for _, ev := range []agent.Event{&agent.RunStarted{MessageID: "m"}, &agent.StepStarted{Step: 1, MessageID: "m"},
			&agent.PartStarted{Kind: agent.PartText, ID: "t"}} {
			if !yield(ev, nil) {
				return
			}
		}
		for {
			select {
			case _, ok := <-s.next:
				if !ok {
					for _, ev := range []agent.Event{&agent.PartEnded{Kind: agent.PartText, ID: "t", Part: cmf.Text{Text: "x"}},
						&agent.StepFinished{Step: 1, StopReason: cmf.StopEnd}, &agent.RunFinished{StopReason: cmf.StopEnd}} {
						if !yield(ev, nil) {
							return
						}
					}
					return
				}
				if !yield(&agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "x"}, nil) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

// slowStream starts a reply of a stepped agent and returns its frames as
// they come, skipping the three that open it.
func slowStream(t testing.TB, keep bool) (chan<- struct{}, *testutil.SSEReader, func()) {
	t.Helper()
	s := stepped{next: make(chan struct{})}
	var opts []uiadapter.Option
	if keep {
		opts = []uiadapter.Option{uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope)}
	}
	srv := httptest.NewServer(testutil.Must(vercelai.Handler(s, opts...)))
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(userBody("c", "hi")))
	if err != nil {
		t.Fatal(err)
	}
	r := testutil.NewSSEReader(resp.Body)
	for range 3 { // start, start-step, text-start
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	return s.next, r, func() { close(s.next); resp.Body.Close(); srv.Close() }
}

// Each event of a slow agent is written and flushed as it is produced:
// the client reads it while the agent waits to produce the next, with or
// without the run log of a kept history. (How long that takes is
// BenchmarkSlowAgentLatency's.)
func TestSlowAgentEventsAreFlushedAtOnce(t *testing.T) {
	for _, keep := range []bool{false, true} {
		next, r, done := slowStream(t, keep)
		for range 5 {
			next <- struct{}{}
			got, err := r.Next() // the agent is blocked until the next send
			if err != nil || !slices.Equal(got, []byte(`{"type":"text-delta","id":"t","delta":"x"}`)) {
				t.Fatalf("history %v: got %s, %v", keep, got, err)
			}
		}
		done()
	}
}

// BenchmarkSlowAgentLatency is the time from a slow agent producing an
// event to the client reading its frame (loopback TCP included), one
// event at a time: batching must never hold a lone event back. Reports
// the p50 and p99 of the ops.
func BenchmarkSlowAgentLatency(b *testing.B) {
	for _, keep := range []bool{false, true} {
		b.Run(map[bool]string{false: "stateless", true: "history"}[keep], func(b *testing.B) {
			next, r, done := slowStream(b, keep)
			defer done()
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				next <- struct{}{}
				if _, err := r.Next(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// burst is an agent whose reply waits until start is closed, then comes
// all at once: n text deltas, many more than a run may get ahead of the
// stream that started it.
type burst struct {
	start chan struct{}
	n     int
}

func (b burst) Run(ctx context.Context, _ *agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		for _, ev := range []agent.Event{&agent.RunStarted{MessageID: "m"}, &agent.StepStarted{Step: 1, MessageID: "m"},
			&agent.PartStarted{Kind: agent.PartText, ID: "t"}} {
			if !yield(ev, nil) {
				return
			}
		}
		select {
		case <-b.start:
		case <-ctx.Done():
			return
		}
		for range b.n {
			if !yield(&agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "x"}, nil) {
				return
			}
		}
		for _, ev := range []agent.Event{&agent.PartEnded{Kind: agent.PartText, ID: "t", Part: cmf.Text{Text: strings.Repeat("x", b.n)}},
			&agent.StepFinished{Step: 1, StopReason: cmf.StopEnd}, &agent.RunFinished{StopReason: cmf.StopEnd}} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// The stream that started a run paces it while it lasts; once its client
// has left, nothing does: a reply far longer than the run may get ahead of
// that stream still runs to its end and is stored whole. With the default
// run log and with a shared Redis one.
func TestLongReplyAfterItsClientLeft(t *testing.T) {
	for _, c := range []struct {
		name string
		opts func(t *testing.T) []uiadapter.Option
	}{
		{"memory log", func(*testing.T) []uiadapter.Option { return nil }},
		{"redis log", func(t *testing.T) []uiadapter.Option { return []uiadapter.Option{uiadapter.WithRunLog(redisRunLog(t))} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 5000
			a := burst{start: make(chan struct{}), n: n}
			store := history.NewMemory()
			h := testutil.Must(vercelai.Handler(a, append(c.opts(t), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope))...))
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer testutil.ShutdownNow(h)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(userBody("long", "hi")))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := testutil.NewSSEReader(resp.Body).Next(); err != nil {
				t.Fatal(err)
			}
			cancel()
			resp.Body.Close()
			close(a.start) // the client has left: now the reply comes
			testutil.Eventually(t, 30*time.Second, "the whole reply to be stored", func() bool {
				conv, _ := store.Load(context.Background(), history.Key{Scope: "single", Chat: "long"})
				msgs := conv.Messages
				return len(msgs) == 2 && msgs[1].Text() == strings.Repeat("x", n) &&
					msgs[1].Extensions.Completion != nil && msgs[1].Extensions.Completion.StopReason == cmf.StopEnd
			})
		})
	}
}
