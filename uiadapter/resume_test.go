package uiadapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/uiadapter"
)

// frame is one SSE frame as sent: its id and data.
type frame struct{ id, data string }

// frameReader reads SSE frames one by one, skipping comments.
type frameReader struct{ br *bufio.Reader }

func (r frameReader) next() (frame, error) {
	var f frame
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			if f.data != "" {
				return f, nil
			}
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if f.data != "" {
				return f, nil
			}
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
}

// until reads frames up to and including the first whose data contains s.
func (r frameReader) until(t *testing.T, s string) []frame {
	t.Helper()
	var out []frame
	for {
		f, err := r.next()
		if err != nil {
			t.Fatalf("stream ended before %q: %v (read %v)", s, err, out)
		}
		out = append(out, f)
		if strings.Contains(f.data, s) {
			return out
		}
	}
}

func (r frameReader) rest(t *testing.T) []frame {
	t.Helper()
	var out []frame
	for {
		f, err := r.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
}

func (f *historyFixture) send(scope, method, path, body string, header ...string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Scope", scope)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

var timestamps = regexp.MustCompile(`"timestamp":\d+,?`)

// sameFrames compares frames, ids and data, AG-UI timestamps aside.
func sameFrames(t *testing.T, what string, got, want []frame) {
	t.Helper()
	norm := func(fs []frame) string {
		var b strings.Builder
		for _, f := range fs {
			b.WriteString(f.id + " " + timestamps.ReplaceAllString(f.data, "") + "\n")
		}
		return b.String()
	}
	if g, w := norm(got), norm(want); g != w {
		t.Fatalf("%s:\ngot\n%s\nwant\n%s", what, g, w)
	}
}

// A reloaded useChat asks GET {api}/{id}/stream: it gets the whole run
// from its start, then live; once the run is over, 204. The stream names
// the id to resume it by (StreamIDHeader, what assistant-ui's resumable
// transport keeps). Another scope sees no run, and cannot stop it. In a
// synctest bubble, so the run's 400 ms last until the resume has
// attached.
func TestResumeReplaysTheRunThenFollowsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		post := f.post("alice", userBody("r", "think: wait 400 ms"))
		run := post.Header.Get(edge.RunHeader)
		if id := post.Header.Get(edge.StreamIDHeader); id != "r" {
			t.Fatalf("%s: %q, want the chat's id", edge.StreamIDHeader, id)
		}
		pr := frameReader{bufio.NewReader(post.Body)}
		first := pr.until(t, `ms"}`)

		if resp := f.send("bob", http.MethodGet, "/api/chat/r/stream", ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("another scope's resume: %d, want 204", resp.StatusCode)
		}
		if code, _ := f.do("bob", http.MethodPost, "/api/chat/r/stop", ""); code != http.StatusNotFound {
			t.Fatalf("another scope's stop: %d, want 404", code)
		}
		resp := f.send("alice", http.MethodGet, "/api/chat/r/stream", "")
		if resp.StatusCode != http.StatusOK || resp.Header.Get(edge.RunHeader) != run || run == "" {
			t.Fatalf("resume: %d run %q, want 200 and run %q", resp.StatusCode, resp.Header.Get(edge.RunHeader), run)
		}
		resumed := frameReader{bufio.NewReader(resp.Body)}.rest(t)
		whole := append(first, pr.rest(t)...)
		if whole[len(whole)-1].data != "[DONE]" || !strings.Contains(whole[len(whole)-2].data, `"finish"`) {
			t.Fatalf("the run did not finish: %v", whole)
		}
		sameFrames(t, "resumed stream vs the original", resumed, whole)
		if whole[0].id != "1" {
			t.Fatalf("first frame id %q, want 1", whole[0].id)
		}
		synctest.Wait() // the run is over on the server too, not only in the stream read to its end
		if resp := f.send("alice", http.MethodGet, "/api/chat/r/stream", ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("resume after the run: %d, want 204", resp.StatusCode)
		}
		if resp := f.send("alice", http.MethodGet, "/api/chat/never/stream", ""); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("resume of a chat with no run: %d, want 204", resp.StatusCode)
		}
	})
}

// Last-Event-ID resumes right after that event: no gap, no duplicate,
// in both protocols, also once the run has ended (its log is kept).
func TestLastEventIDResumesRightAfterIt(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	cases := []struct {
		name, start, resume, body string
		resumeBody                string
	}{
		{"vercel", "/api/chat", "/api/chat/v/stream", userBody("v", "think: wait 50 ms"), ""},
		{"ag-ui", "/api/agui", "/api/agui/connect", testutil.AGUIInput("a", "u1", "think: wait 50 ms"), `{"threadId":"a","runId":"x","protocolVersion":"1.0","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := f.send("alice", http.MethodPost, c.start, c.body)
			run := resp.Header.Get(edge.RunHeader)
			whole := frameReader{bufio.NewReader(resp.Body)}.rest(t)
			last, _ := strconv.Atoi(whole[len(whole)-1].id)
			if last < 5 {
				t.Fatalf("only %d events: %v", last, whole)
			}
			method := http.MethodGet
			if c.resumeBody != "" {
				method = http.MethodPost
			}
			for _, after := range []int{0, 1, 2, last / 2, last - 1, last} {
				for _, id := range []string{strconv.Itoa(after), run + ":" + strconv.Itoa(after)} {
					if after == 0 {
						continue // no Last-Event-ID resumes from the start
					}
					resp := f.send("alice", method, c.resume, c.resumeBody, "Last-Event-ID", id)
					got := frameReader{bufio.NewReader(resp.Body)}.rest(t)
					var want []frame
					for _, fr := range whole {
						if n, _ := strconv.Atoi(fr.id); n > after {
							want = append(want, fr)
						}
					}
					sameFrames(t, "after "+id, got, want)
				}
			}
			resp = f.send("alice", method, c.resume, c.resumeBody, "Last-Event-ID", "another-run:3")
			if c.name == "vercel" && resp.StatusCode != http.StatusNoContent {
				t.Fatalf("Last-Event-ID of another run: %d, want 204", resp.StatusCode)
			}
			if resp := f.send("alice", method, c.resume, c.resumeBody, "Last-Event-ID", "x:y"); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("a malformed Last-Event-ID: %d, want 400", resp.StatusCode)
			}
		})
	}
}

// agui events of a stream, by type.
func aguiEvents(t *testing.T, fs []frame) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, fr := range fs {
		var ev map[string]any
		if err := json.Unmarshal([]byte(fr.data), &ev); err != nil {
			t.Fatalf("%s: %v", fr.data, err)
		}
		out = append(out, ev)
	}
	return out
}

func types(evs []map[string]any) string {
	var ts []string
	for _, ev := range evs {
		ts = append(ts, ev["type"].(string))
	}
	return strings.Join(ts, ",")
}

// A reloaded AG-UI client connects: it gets the thread and its open
// interrupts without the agent running; during a run, the run from its
// start after the thread as it was before the run. In a synctest bubble,
// so the run's 400 ms last until the client has connected.
func TestConnectRestoresTheThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		connect := `{"threadId":"t","runId":"c1","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
		if evs := aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t)); types(evs) != "RUN_STARTED,RUN_FINISHED" {
			t.Fatalf("connect to a new thread: %s", types(evs))
		}
		paused := aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui", testutil.AGUIInput("t", "u1", "delete /tmp/x.txt")).Body)}.rest(t))
		fin := paused[len(paused)-1]
		outcome := func(ev map[string]any) map[string]any { o, _ := ev["outcome"].(map[string]any); return o }
		if fin["type"] != "RUN_FINISHED" || outcome(fin)["type"] != "interrupt" {
			t.Fatalf("the run did not pause: %v", fin)
		}
		synctest.Wait() // the run is over on the server too, not only in the stream read to its end
		evs := aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t))
		if types(evs) != "RUN_STARTED,MESSAGES_SNAPSHOT,RUN_FINISHED" {
			t.Fatalf("connect: %s", types(evs))
		}
		msgs := evs[1]["messages"].([]any)
		if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "user" || msgs[1].(map[string]any)["toolCalls"] == nil {
			t.Fatalf("snapshot %v", msgs)
		}
		got, want := outcome(evs[2])["interrupts"].([]any), outcome(fin)["interrupts"].([]any)
		if outcome(evs[2])["type"] != "interrupt" || len(got) != 1 || got[0].(map[string]any)["toolCallId"] != want[0].(map[string]any)["toolCallId"] {
			t.Fatalf("interrupts after connect %v, want %v", evs[2], want)
		}
		if aguiEvents(t, frameReader{bufio.NewReader(f.send("bob", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t))[1]["type"] != "RUN_FINISHED" {
			t.Fatal("another scope sees the thread")
		}

		// During a run: the thread before it, then the run from its start.
		post := f.send("alice", http.MethodPost, "/api/agui", testutil.AGUIInput("t2", "u1", "think: wait 400 ms"))
		pr := frameReader{bufio.NewReader(post.Body)}
		head := pr.until(t, `ms"}`)
		evs = aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", strings.Replace(connect, `"t"`, `"t2"`, 1)).Body)}.rest(t))
		original := aguiEvents(t, append(head, pr.rest(t)...))
		if evs[0]["type"] != "RUN_STARTED" || evs[0]["runId"] != post.Header.Get(edge.RunHeader) || evs[1]["type"] != "MESSAGES_SNAPSHOT" ||
			len(evs[1]["messages"].([]any)) != 1 || evs[len(evs)-1]["type"] != "RUN_FINISHED" || outcome(evs[len(evs)-1]) != nil {
			t.Fatalf("reattach: %s\n%v", types(evs), evs)
		}
		// The replay is the run: the original stream's events after its own
		// RUN_STARTED.
		if got, want := types(evs[2:]), types(original[1:]); got != want || !strings.HasPrefix(types(original), "RUN_STARTED,STEP_STARTED") {
			t.Fatalf("replayed %s\noriginal %s", got, types(original))
		}
	})
}

// heldAppends is a store whose appends wait until released: a run whose
// turn is still being stored.
type heldAppends struct {
	lockingStore
	release chan struct{}
}

func (s heldAppends) Write(ctx context.Context, k history.Key, v history.Version, keep int, msgs ...cmf.Message) (history.Version, error) {
	select {
	case <-s.release:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return s.lockingStore.Write(ctx, k, v, keep, msgs...)
}

// A client that connects while the run's own turn is still being stored
// gets that turn in its snapshot all the same (it comes from the run's
// header, not from the store).
func TestConnectBeforeTheTurnIsStored(t *testing.T) {
	store := heldAppends{history.NewMemory(), make(chan struct{})}
	f := newHistoryFixture(t, store)
	post := f.send("alice", http.MethodPost, "/api/agui", testutil.AGUIInput("t", "u1", "hello"))
	defer post.Body.Close()
	resp := f.send("alice", http.MethodPost, "/api/agui/connect", `{"threadId":"t","runId":"c1","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`)
	r := frameReader{bufio.NewReader(resp.Body)}
	var head []frame
	for range 2 {
		fr, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		head = append(head, fr)
	}
	close(store.release)
	evs := aguiEvents(t, head)
	if types(evs) != "RUN_STARTED,MESSAGES_SNAPSHOT" {
		t.Fatalf("connect: %s", types(evs))
	}
	if msgs := evs[1]["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Fatalf("snapshot %v", msgs)
	}
	if evs := aguiEvents(t, r.rest(t)); evs[len(evs)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("the run did not finish: %s", types(evs))
	}
}

// A reloaded AG-UI client gets the shared state the thread's runs left,
// after the thread: with no run going, and before a running run's replay
// (whose own state events follow). In a synctest bubble, so the run's
// 400 ms last until the client has connected.
func TestConnectRestoresTheSharedState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newBubbleFixture(t, history.NewMemory())
		_ = aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui", testutil.AGUIInput("t", "u1", "set color to blue")).Body)}.rest(t))
		synctest.Wait() // the run is over on the server too, not only in the stream read to its end
		connect := `{"threadId":"t","runId":"c1","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`
		evs := aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t))
		if types(evs) != "RUN_STARTED,MESSAGES_SNAPSHOT,STATE_SNAPSHOT,RUN_FINISHED" {
			t.Fatalf("connect: %s", types(evs))
		}
		if got, _ := json.Marshal(evs[2]["snapshot"]); string(got) != `{"color":"blue"}` {
			t.Fatalf("snapshot %s", got)
		}

		post := f.send("alice", http.MethodPost, "/api/agui", testutil.AGUIInput("t", "u2", "think: wait 400 ms"))
		pr := frameReader{bufio.NewReader(post.Body)}
		pr.until(t, `ms"}`)
		evs = aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t))
		pr.rest(t)
		if !strings.HasPrefix(types(evs), "RUN_STARTED,MESSAGES_SNAPSHOT,STATE_SNAPSHOT,STEP_STARTED") || evs[0]["runId"] != post.Header.Get(edge.RunHeader) {
			t.Fatalf("reattach: %s", types(evs))
		}
		if got, _ := json.Marshal(evs[2]["snapshot"]); string(got) != `{"color":"blue"}` {
			t.Fatalf("snapshot %s", got)
		}

		// A run whose client sent no state leaves it as it was.
		evs = aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t))
		if got, _ := json.Marshal(evs[2]["snapshot"]); string(got) != `{"color":"blue"}` {
			t.Fatalf("after a run without state: %s, snapshot %s", types(evs), got)
		}

		// A state the client changed on its own comes back once a run took it
		// along, though the run left it alone.
		withState := `{"threadId":"t","runId":"u3","protocolVersion":"1.0","state":{"color":"green"},"messages":[{"id":"u3","role":"user","content":"hello"}]}`
		_ = aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui", withState).Body)}.rest(t))
		synctest.Wait() // the run is over on the server too, not only in the stream read to its end
		evs = aguiEvents(t, frameReader{bufio.NewReader(f.send("alice", http.MethodPost, "/api/agui/connect", connect).Body)}.rest(t))
		if got, _ := json.Marshal(evs[2]["snapshot"]); types(evs) != "RUN_STARTED,MESSAGES_SNAPSHOT,STATE_SNAPSHOT,RUN_FINISHED" || string(got) != `{"color":"green"}` {
			t.Fatalf("connect: %s, snapshot %s", types(evs), got)
		}
	})
}

// gatedLog is a shared run log whose first copy waits until open is
// closed: a mirror that fell behind its run.
type gatedLog struct {
	*runlog.Memory
	open chan struct{}
}

func (g *gatedLog) Begin(ctx context.Context, key history.Key, h runlog.Header, first ...runlog.Entry) error {
	select {
	case <-g.open:
		return g.Memory.Begin(ctx, key, h, first...)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A reply the local log has compacted (its client read every delta as it
// came, and the log merged them since) while the copy to the shared log
// was behind is copied as it was sent: a client resuming on another
// replica right after any event it was given gets exactly the rest.
func TestRemoteResumeAfterTheLocalLogCompacted(t *testing.T) {
	store := history.NewMemory()
	shared := &gatedLog{Memory: runlog.NewMemory(), open: make(chan struct{})}
	a := newHistoryFixture(t, store, uiadapter.WithRunLog(shared))
	b := newHistoryFixture(t, store, uiadapter.WithRunLog(shared))
	resp := a.send("alice", http.MethodPost, "/api/chat", userBody("v", "count to 3000"))
	r := frameReader{bufio.NewReader(resp.Body)}
	whole := r.until(t, `"2900`) // five of the log's full chunks read, and compacted
	close(shared.open)
	whole = append(whole, r.rest(t)...)
	last, _ := strconv.Atoi(whole[len(whole)-1].id)
	if last < 3000 {
		t.Fatalf("only %d events", last)
	}
	for _, after := range []int{600, 1000, 1501, 2222, last - 1} {
		resp := b.send("alice", http.MethodGet, "/api/chat/v/stream", "", "Last-Event-ID", strconv.Itoa(after))
		got := frameReader{bufio.NewReader(resp.Body)}.rest(t)
		var want []frame
		for _, fr := range whole {
			if n, _ := strconv.Atoi(fr.id); n > after {
				want = append(want, fr)
			}
		}
		sameFrames(t, "on the other replica after "+strconv.Itoa(after), got, want)
	}
}
