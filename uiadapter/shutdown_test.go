package uiadapter_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
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

// Shutdown waits for the requests being served; those that outlive its
// deadline are cut: the stream ends with ShutdownMessage, what the run
// produced is stored as aborted, and the lock is released. After it, a
// request is 503. In a synctest bubble, so the short run's 300 ms end
// within the 1.5 s grace period whatever the machine's load.
func TestShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var deleted atomic.Int32
		store := history.NewMemory()
		logs := &testutil.LogBuffer{}
		h := testutil.Must(vercelai.Handler(testutil.DemoLoop(t, &deleted), uiadapter.WithStore(store), uiadapter.WithScope(uiadapter.SingleScope),
			uiadapter.WithLogger(testutil.Logger(logs))))
		srv := testutil.InMemoryServer(t, h)
		post := func(chat, text string) *http.Response {
			resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(testutil.UserMessage(chat, "u-"+chat, text)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}
		started := func(resp *http.Response) *testutil.SSEReader {
			r := testutil.NewSSEReader(resp.Body)
			if first, err := r.Next(); err != nil || !strings.Contains(string(first), `"type":"start"`) {
				t.Fatalf("first event %s %v", first, err)
			}
			return r
		}
		long := started(post("long", "think: wait 30000 ms"))
		short := started(post("short", "wait 300 ms"))

		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		if err := h.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v", err)
		}
		// The short run finished within the grace period, normally.
		rest := func(r *testutil.SSEReader) string {
			var out []string
			for {
				ev, err := r.Next()
				if err != nil {
					return strings.Join(out, "\n")
				}
				out = append(out, string(ev))
			}
		}
		if got := rest(short); !strings.Contains(got, `"type":"finish","finishReason":"stop"`) || strings.Contains(got, `"type":"error"`) {
			t.Fatalf("the short run:\n%s", got)
		}
		// The long one was cut, and said so.
		if got := rest(long); !strings.Contains(got, `{"type":"error","errorText":"`+wire.ShutdownMessage+`"}`) || !strings.HasSuffix(got, "[DONE]") {
			t.Fatalf("the long run:\n%s", got)
		}
		conv, err := store.Load(context.Background(), history.Key{Scope: "single", Chat: "long"})
		if err != nil || len(conv.Messages) != 2 || conv.Messages[1].Extensions.Completion.StopReason != cmf.StopAborted {
			t.Fatalf("stored %+v %v", conv.Messages, err)
		}
		if err := store.Acquire(context.Background(), history.Key{Scope: "single", Chat: "long"}, "next", time.Minute); err != nil {
			t.Fatalf("the lock was left behind: %v", err)
		}
		if !strings.Contains(logs.String(), "the run was cut by shutdown") {
			t.Fatalf("not logged:\n%s", logs)
		}
		if resp := post("after", "hello"); resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("a request after Shutdown: %d", resp.StatusCode)
		}
	})
}
