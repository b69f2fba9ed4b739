package uiadapter_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/uiadapter"
)

// runLogs are the run logs the durable-run benchmarks compare: the
// default (each handler's own memory log) and a shared Redis log (every
// event also goes to Redis Streams, for other replicas).
var runLogs = []struct {
	name string
	open func(b *testing.B) runlog.Log // nil: the default
}{
	{"local", nil},
	{"redis", func(b *testing.B) runlog.Log { return redisRunLog(b) }},
}

// redisRunLog is a Redis run log under a key prefix of its own, removed
// when the test ends.
func redisRunLog(t testing.TB) runlog.Log {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	l, err := redisstore.NewRunLog(context.Background(), rdb, redisstore.WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// runLogServer serves a handler's chat at / and its resume endpoint.
func runLogServer(b *testing.B, store history.Store, l runlog.Log) *httptest.Server {
	h := runLogHandler(b, store, l)
	mux := http.NewServeMux()
	mux.Handle("POST /", h)
	mux.Handle("GET /api/chat/{id}/stream", h.ResumeHandler(nil))
	mux.Handle("GET /api/chat", h.WebSocketHandler())
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv
}

// runLogReplicas serves a run's replica and a reader's on one store:
// with the default local log (open nil) they are one server; with a
// shared log, another replica with its own handler on the same store and
// log.
func runLogReplicas(b *testing.B, open func(*testing.B) runlog.Log) (owner, other *httptest.Server) {
	store := history.NewMemory()
	if open == nil {
		owner = runLogServer(b, store, nil)
		return owner, owner
	}
	l := open(b)
	return runLogServer(b, store, l), runLogServer(b, store, l)
}

func runLogHandler(b *testing.B, store history.Store, l runlog.Log) *uiadapter.Handler {
	opts := []uiadapter.Option{uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope), uiadapter.WithLogger(testutil.Logger(io.Discard)),
		// One scope, 8 clients: a client that has read its reply may ask
		// again before that run has given its place back (it saves the
		// reply and ends the shared log first), which the default bound of
		// 8 a scope would refuse. The benchmark measures streaming, not
		// the bound.
		uiadapter.WithRunLimits(&uiadapter.RunLimits{PerScope: 16})}
	if l != nil {
		opts = append(opts, uiadapter.WithRunLog(l))
	}
	h := testutil.Must(vercelai.Handler(testutil.DemoLoop(b, nil), opts...))
	b.Cleanup(func() { testutil.ShutdownNow(h) })
	return h
}

// BenchmarkRunLogStream is S1 with history: 8 clients stream `count to
// 1000` replies (1,007 frames each) from one handler, each on its own
// chat, with the default run log and with the shared Redis one. events/s
// is frames per second over all clients; the target is at most 15 %
// fewer with Redis.
func BenchmarkRunLogStream(b *testing.B) {
	for _, rl := range runLogs {
		b.Run(rl.name, func(b *testing.B) {
			var l runlog.Log
			if rl.open != nil {
				l = rl.open(b)
			}
			srv := httptest.NewServer(runLogHandler(b, history.NewMemory(), l))
			b.Cleanup(srv.Close)
			testutil.StreamS1(b, srv.URL)
		})
	}
}

// BenchmarkResumeTTFB: a reloaded page resumes a run of 1,000 events
// (GET /api/chat/{id}/stream with Last-Event-ID 1, so the run is
// replayed whatever its state), on the replica that ran it (local) and
// on another one that reads the shared Redis log. p50-ms and p99-ms are
// the time to the first byte of the body; the target is at most 10 ms on
// loopback.
func BenchmarkResumeTTFB(b *testing.B) {
	for _, rl := range runLogs {
		b.Run(rl.name, func(b *testing.B) {
			owner, reader := runLogReplicas(b, rl.open)
			resp, err := http.Post(owner.URL, "application/json", strings.NewReader(userBody("r", "count to 996")))
			if err != nil {
				b.Fatal(err)
			}
			run := resp.Header.Get(edge.RunHeader)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			url := reader.URL + "/api/chat/r/stream"
			get := func() (time.Duration, int) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Last-Event-ID", run+":1")
				start := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				if _, err := br.ReadByte(); err != nil {
					b.Fatalf("status %d: %v", resp.StatusCode, err)
				}
				ttfb := time.Since(start)
				rest, _ := io.ReadAll(br)
				return ttfb, strings.Count(string(rest), "\n\n")
			}
			var ttfbs []time.Duration
			b.ResetTimer()
			for b.Loop() {
				d, frames := get()
				if frames < 990 {
					b.Fatalf("resumed %d frames", frames)
				}
				ttfbs = append(ttfbs, d)
			}
			slices.Sort(ttfbs)
			b.ReportMetric(float64(ttfbs[len(ttfbs)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ttfbs[len(ttfbs)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkIdleStreamsWithRunLog: what an open, quiet stream costs with
// history and the run log (a 30 s `wait`), against no history. KiB/stream
// is the Go heap in use per stream (the server's side; the clients are
// in-process too and excluded as far as the heap allows: they hold a
// response each in both cases).
func BenchmarkIdleStreamsWithRunLog(b *testing.B) {
	const streams = 1000
	for _, mode := range []string{"no-history", "history+log"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				var opts []uiadapter.Option
				if mode != "no-history" {
					// One scope and one address hold every stream: the
					// bounds on runs at once are lifted to let them.
					opts = append(opts, uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope),
						uiadapter.WithRunLimits(&uiadapter.RunLimits{PerScope: streams, PerAddress: -1, Total: streams}))
				}
				opts = append(opts, uiadapter.WithLogger(testutil.Logger(io.Discard)))
				h := testutil.Must(vercelai.Handler(testutil.DemoLoop(b, nil), opts...))
				srv := httptest.NewServer(h)
				tr := &http.Transport{MaxIdleConnsPerHost: streams}
				client := &http.Client{Transport: tr}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ctx, cancel := context.WithCancel(context.Background())
				bodies := make([]io.Closer, 0, streams)
				for i := range streams {
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(userBody(fmt.Sprint("i", i), "wait 30000 ms")))
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := testutil.NewSSEReader(resp.Body).Next(); err != nil {
						b.Fatal(err)
					}
					bodies = append(bodies, resp.Body)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/streams/1024, "KiB/stream")
				b.ReportMetric(float64(after.StackInuse-before.StackInuse)/streams/1024, "stack-KiB/stream")
				b.ReportMetric(float64(runtime.NumGoroutine())/streams, "goroutines/stream")
				cancel()
				for _, c := range bodies {
					c.Close()
				}
				testutil.ShutdownNow(h)
				srv.Close()
				tr.CloseIdleConnections()
			}
		})
	}
}
