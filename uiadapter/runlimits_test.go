package uiadapter_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// One client that starts long replies in new chats and leaves each at
// once gets at most its bound of runs going (a 429 with a short JSON
// error for the rest, before anything is stored or run); the places come
// back as the runs end, and another scope is not held up by it.
func TestDetachedRunsAreBoundedPerScope(t *testing.T) {
	limits := &uiadapter.RunLimits{PerScope: 3, Total: 5}
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithRunLimits(limits))
	flood := func(scope string, n int) (accepted int, refusals []string) {
		for i := range n {
			req, _ := http.NewRequest(http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody(fmt.Sprint(scope, "-c", i), "think: wait 60000 ms")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Scope", scope)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode == http.StatusOK {
				accepted++
				resp.Body.Close() // gone after the first bytes: the run goes on
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refusals = append(refusals, fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(b))))
		}
		return accepted, refusals
	}
	accepted, refusals := flood("mallory", 20)
	if accepted != 3 || len(refusals) != 17 || !strings.HasPrefix(refusals[0], `429 {"error":"too many replies are being produced for you at once (3)`) {
		t.Fatalf("accepted %d, refused %v", accepted, refusals)
	}
	if msgs := f.stored("mallory", "mallory-c10"); len(msgs) != 0 {
		t.Fatalf("a refused turn was stored: %d messages", len(msgs))
	}
	// Another user still gets replies, up to the total.
	accepted, refusals = flood("alice", 3)
	if accepted != 2 || len(refusals) != 1 || !strings.Contains(refusals[0], "as many replies as it can") {
		t.Fatalf("alice: accepted %d, refused %v", accepted, refusals)
	}
	// Stopping the runs gives their places back.
	for i := range 3 {
		f.do("mallory", http.MethodPost, fmt.Sprintf("/api/chat/mallory-c%d/stop", i), "")
	}
	testutil.Eventually(t, 10*time.Second, "the stopped runs to give their places back", func() bool { return limits.Running() == 2 })
	if got := f.chat("mallory", userBody("again", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("after the runs ended: %q", got)
	}
}

// A run that streams more than the output bound, or goes on past the
// time bound, is cut: its stream ends with the protocol's error event
// saying why, and what it produced is stored, marked aborted. In a
// synctest bubble, so the 200 ms bound passes on the bubble's clock.
func TestRunsAreCutAtTheirBounds(t *testing.T) {
	for _, c := range []struct {
		name, text, message string
		limits              *uiadapter.RunLimits
	}{
		{"output", "count to 100000", wire.RunTooLargeMessage, &uiadapter.RunLimits{MaxOutput: 4096}},
		{"duration", "think: wait 60000 ms", wire.RunTooLongMessage, &uiadapter.RunLimits{MaxDuration: 200 * time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newBubbleFixture(t, history.NewMemory(), uiadapter.WithRunLimits(c.limits))
				chunks := f.chat("alice", userBody("c", c.text))
				if e := chunks.Find("error"); e == nil || e["errorText"] != c.message {
					t.Fatalf("the stream ended with %v", chunks[max(0, len(chunks)-3):])
				}
				testutil.Eventually(t, 10*time.Second, "the cut reply to be stored", func() bool { return len(f.stored("alice", "c")) == 2 })
				reply := f.stored("alice", "c")[1]
				if reply.Extensions.Completion == nil || reply.Extensions.Completion.StopReason != cmf.StopAborted {
					t.Fatalf("stored %+v", reply.Extensions.Completion)
				}
				// Cut where it crossed the bound (the count's whole reply is
				// about 590 kB): what was in flight is kept too.
				if c.name == "output" && len(reply.Text()) > 64<<10 {
					t.Fatalf("stored %d bytes of text, bound 4096", len(reply.Text()))
				}
			})
		})
	}
}

// A run without history (on its request's goroutine) is cut at the time
// bound too: its stream ends with the protocol's error event saying why.
func TestALiveRunIsCutAtItsTimeBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := testutil.Must(vercelai.Handler(testutil.DemoLoop(t, nil), uiadapter.WithLogger(testutil.Logger(io.Discard)),
			uiadapter.WithRunLimits(&uiadapter.RunLimits{MaxDuration: 200 * time.Millisecond})))
		defer testutil.ShutdownNow(h)
		start := time.Now()
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(userBody("c", "think: wait 60000 ms")))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if e := testutil.ParseChunks(t, w.Body).Find("error"); e == nil || e["errorText"] != wire.RunTooLongMessage {
			t.Fatalf("the stream ended with %s", w.Body)
		}
		if d := time.Since(start); d != 200*time.Millisecond {
			t.Fatalf("cut after %v, bound 200ms", d)
		}
	})
}

// By default one scope keeps at most 8 replies going at once.
func TestDetachedRunsAreBoundedByDefault(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	accepted := 0
	for i := range 20 {
		req, _ := http.NewRequest(http.MethodPost, f.url+"/api/chat", strings.NewReader(userBody(fmt.Sprint("c", i), "count to 100000")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Scope", "mallory")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			accepted++
		} else if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("run %d: %d", i, resp.StatusCode)
		}
	}
	if accepted > 8 {
		t.Fatalf("%d of 20 detached runs accepted at once, bound 8", accepted)
	}
}

// A turn refused on its plan (AG-UI: a new message while an interrupt
// waits) runs nothing, so it gives its place back: refused more times than
// the bound, the user can still resume.
func TestPlanRefusalsGiveTheirPlaceBack(t *testing.T) {
	limits := &uiadapter.RunLimits{PerScope: 2, Total: 4}
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithRunLimits(limits))
	post := f.agui
	in := map[string]any{"threadId": "t1", "runId": "r1", "protocolVersion": "1.0",
		"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "delete /tmp/x.txt"}}}
	_, raw := post(in)
	interruptID := firstInterruptID(raw)
	for n := range 5 {
		in["runId"] = fmt.Sprint("new-", n)
		in["messages"] = []any{map[string]any{"id": fmt.Sprint("u-new-", n), "role": "user", "content": "delete /etc"}}
		if status, raw := post(in); status != 200 || !strings.Contains(raw, "pending interrupts") {
			t.Fatalf("new message %d while an interrupt waits: %d %s", n, status, raw)
		}
	}
	if n := limits.Running(); n != 0 {
		t.Fatalf("%d runs counted after refusals that ran nothing", n)
	}
	in["runId"], in["messages"] = "resume", []any{}
	in["resume"] = []any{map[string]any{"interruptId": interruptID, "status": "resolved", "payload": map[string]any{"approved": true}}}
	if status, raw := post(in); status != 200 || !strings.Contains(raw, "TOOL_CALL_RESULT") || f.deleted.Load() != 1 {
		t.Fatalf("resume after the refusals: %d %.300s", status, raw)
	}
}
