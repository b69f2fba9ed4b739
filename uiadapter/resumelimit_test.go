package uiadapter_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/uiadapter"
)

// A scope may have DefaultMaxResumes resumed streams open at once (per
// handler); one more gets 429 with Retry-After and a JSON error, in
// both protocols, and loses nothing: the run and the scope's other
// streams go on, another scope is not counted with it, and once one of
// the streams ends a retry gets the whole run.
func TestResumesPerScopeAreBounded(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	for _, c := range []struct {
		name, post, resume, method, body string
	}{
		{"vercel", "/api/chat", "/api/chat/r/stream", http.MethodGet, ""},
		{"ag-ui", "/api/agui", "/api/agui/connect", http.MethodPost, `{"threadId":"r","runId":"x","protocolVersion":"1.0","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := userBody("r", "think: wait 60000 ms")
			if c.name == "ag-ui" {
				body = testutil.AGUIInput("r", "u1", "think: wait 60000 ms")
			}
			bobs := f.send("bob", http.MethodPost, c.post, body) // bob's own run, in his chat r
			if bobs.StatusCode != http.StatusOK {
				t.Fatalf("bob's run: %d", bobs.StatusCode)
			}
			// Bob's stream ends once his run has released his chat: the
			// next subtest starts a run in it.
			defer func() { _, _ = io.Copy(io.Discard, bobs.Body) }()
			post := f.send("alice", http.MethodPost, c.post, body)
			original := frameReader{bufio.NewReader(post.Body)}
			upToPause := original.until(t, `"delta":"ms"`)
			resume := func(scope string) *http.Response { return f.send(scope, c.method, c.resume, c.body) }

			type stream struct {
				resp *http.Response
				r    frameReader
				read []frame
			}
			open := make([]stream, uiadapter.DefaultMaxResumes)
			for i := range open {
				resp := resume("alice")
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("resume %d of %d: %d", i+1, len(open), resp.StatusCode)
				}
				open[i] = stream{resp: resp, r: frameReader{bufio.NewReader(resp.Body)}}
				open[i].read = open[i].r.until(t, `"delta":"ms"`) // it holds its slot
			}
			over := resume("alice")
			var e struct{ Error string }
			if over.StatusCode != http.StatusTooManyRequests || over.Header.Get("Retry-After") != "1" || over.Header.Get("Content-Type") != "application/json" ||
				json.NewDecoder(over.Body).Decode(&e) != nil || e.Error == "" {
				t.Fatalf("resume %d: %d, Retry-After %q, error %q; want 429, 1 and a JSON error", len(open)+1, over.StatusCode, over.Header.Get("Retry-After"), e.Error)
			}
			if resp := resume("bob"); resp.StatusCode != http.StatusOK {
				t.Fatalf("another scope's resume: %d", resp.StatusCode)
			}

			// The first stream leaves; its slot frees once the server sees it.
			open[0].resp.Body.Close()
			open = open[1:]
			var retried *http.Response
			testutil.Eventually(t, 5*time.Second, "a slot to free", func() bool {
				resp := resume("alice")
				if resp.StatusCode != http.StatusOK {
					resp.Body.Close()
					return false
				}
				retried = resp
				return true
			})
			stop := "/api/chat/r/stop"
			if c.name == "ag-ui" {
				stop = "/api/agui/r/stop"
			}
			for _, scope := range []string{"alice", "bob"} {
				if code, _ := f.do(scope, http.MethodPost, stop, ""); code != http.StatusAccepted {
					t.Fatalf("%s's stop: %d", scope, code)
				}
			}
			// Every stream shows the whole run: the ones that stayed open,
			// and the retry.
			whole := append(upToPause, original.rest(t)...)
			if c.name == "vercel" && whole[len(whole)-1].data != "[DONE]" || c.name == "ag-ui" && !strings.Contains(whole[len(whole)-1].data, "RUN_FINISHED") {
				t.Fatalf("the run's stream: %v", whole)
			}
			var first []frame
			for i, s := range append(open, stream{r: frameReader{bufio.NewReader(retried.Body)}}) {
				got := append(s.read, s.r.rest(t)...)
				if c.name == "vercel" {
					sameFrames(t, "resume "+strconv.Itoa(i+2), got, whole)
				}
				if first == nil {
					first = got
				}
				sameFrames(t, "resume "+strconv.Itoa(i+2), got, first)
			}
		})
	}
}

// WithMaxResumes(0) removes the bound.
func TestResumesUnbounded(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithMaxResumes(0))
	post := f.send("alice", http.MethodPost, "/api/chat", userBody("r", "think: wait 60000 ms"))
	frameReader{bufio.NewReader(post.Body)}.until(t, `"delta":"ms"`)
	for i := range uiadapter.DefaultMaxResumes + 2 {
		if resp := f.send("alice", http.MethodGet, "/api/chat/r/stream", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("resume %d: %d", i+1, resp.StatusCode)
		}
	}
	if code, _ := f.do("alice", http.MethodPost, "/api/chat/r/stop", ""); code != http.StatusAccepted {
		t.Fatalf("stop: %d", code)
	}
}
