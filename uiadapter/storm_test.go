package uiadapter_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/uiadapter"
)

// A disconnect storm: many clients cut mid-stream. Every run goes on to
// its end and is stored whole; then no goroutine, lock or log is left
// (logs expire after the retention), and nothing was logged as lost.
func TestDisconnectStorm(t *testing.T) {
	for _, c := range []struct {
		name    string
		clients int
		log     func(t *testing.T) runlog.Log
	}{
		{"memory log", 1000, func(*testing.T) runlog.Log { return runlog.NewMemory() }},
		{"redis log", 200, func(t *testing.T) runlog.Log { return redisRunLog(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := c.log(t)
			baseG, _ := testutil.Settle(0, 0)
			store := history.NewMemory()
			logs := &testutil.LogBuffer{}
			// Long enough that a stream whose server has not yet seen its
			// client go (a loaded machine is slow to) still finds the log.
			const retention = 2 * time.Second
			h := testutil.Must(vercelai.Handler(testutil.DemoLoop(t, nil), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope),
				uiadapter.WithRunLog(runs), uiadapter.WithRunRetention(retention), uiadapter.WithLogger(testutil.Logger(logs)),
				// One scope runs them all: the storm is the point here.
				uiadapter.WithRunLimits(&uiadapter.RunLimits{PerScope: c.clients, PerAddress: -1, Total: c.clients})))
			srv := httptest.NewServer(h)
			var wg sync.WaitGroup
			errs := make(chan error, c.clients)
			for i := range c.clients {
				wg.Go(func() {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(userBody(fmt.Sprint("c", i), "think: wait 200 ms")))
					req.Header.Set("Content-Type", "application/json")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err
						return
					}
					if _, err := testutil.NewSSEReader(resp.Body).Next(); err != nil { // the start
						errs <- err
					}
					cancel() // cut mid-stream
					resp.Body.Close()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			ctx := context.Background()
			testutil.Eventually(t, 60*time.Second, "every run to be stored whole", func() bool {
				for i := range c.clients {
					conv, _ := store.Load(ctx, history.Key{Scope: "single", Chat: fmt.Sprint("c", i)})
					if len(conv.Messages) != 2 || conv.Messages[1].Text() != "done" {
						return false
					}
				}
				return true
			})
			testutil.Eventually(t, 10*time.Second, "every lock to be released", func() bool {
				for i := range c.clients {
					key := history.Key{Scope: "single", Chat: fmt.Sprint("c", i)}
					if store.Acquire(ctx, key, "probe", time.Second) != nil {
						return false
					}
					_ = store.Release(ctx, key, "probe")
				}
				return true
			})
			testutil.Eventually(t, 10*time.Second, "the logs to expire", func() bool {
				for i := range c.clients {
					if _, err := runs.Current(ctx, history.Key{Scope: "single", Chat: fmt.Sprint("c", i)}); !errors.Is(err, runlog.ErrNoRun) {
						return false
					}
				}
				return true
			})
			srv.Close()
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := h.Shutdown(sctx); err != nil {
				t.Fatalf("runs left at shutdown: %v", err)
			}
			if g, _ := testutil.Settle(baseG+2, 10*time.Second); g > baseG+2 {
				t.Fatalf("goroutines %d → %d", baseG, g)
			}
			for _, bad := range []string{"level=ERROR", "level=WARN"} {
				if strings.Contains(logs.String(), bad) {
					t.Fatalf("logged %s:\n%s", bad, logs)
				}
			}
		})
	}
}

// Many clients take turns in one chat (each retries on 409 until the
// chat is free): each gets its reply, stored, and none is told an error
// occurred. The next turn may begin the moment a run releases the chat,
// before the run has logged its end; its readers still get that end.
func TestTurnsTakenInOneChatEndTruthfully(t *testing.T) {
	store := history.NewMemory()
	logs := &testutil.LogBuffer{}
	h := testutil.Must(vercelai.Handler(testutil.DemoLoop(t, nil), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope),
		uiadapter.WithLogger(testutil.Logger(logs)), uiadapter.WithRunLimits(&uiadapter.RunLimits{PerScope: 200, PerAddress: -1})))
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer testutil.ShutdownNow(h)
	const clients = 200
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for i := range clients {
		wg.Go(func() {
			for {
				body := strings.Replace(userBody("one", fmt.Sprint("hello ", i)), `"u1"`, fmt.Sprintf(`"u%d"`, i), 1)
				req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				if resp.StatusCode == http.StatusConflict {
					resp.Body.Close()
					continue
				}
				chunks := testutil.ParseChunks(t, resp.Body)
				resp.Body.Close()
				if e := chunks.Find("error"); e != nil || chunks.Find("finish") == nil {
					errs <- fmt.Sprintf("client %d: %v", i, e)
				}
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	var failed []string
	for e := range errs {
		failed = append(failed, e)
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d turns ended badly: %v\n%s", len(failed), clients, failed, logs)
	}
	conv, _ := store.Load(context.Background(), history.Key{Scope: "single", Chat: "one"})
	if len(conv.Messages) != 2*clients {
		t.Fatalf("stored %d messages, want %d", len(conv.Messages), 2*clients)
	}
}
