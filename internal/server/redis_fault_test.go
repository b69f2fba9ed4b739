package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/uiadapter"
)

// Redis faults against the binary's own Redis client and defaults, with a
// redis-server the test owns: a killed or frozen Redis must be reported
// within a few seconds, truthfully (a reply that was stored is not
// reported lost), and must not keep the chat refused once it is back.
//
// Each case checks that the outcome the client is told is true (read
// back from the store), that nothing produced while Redis was reachable
// is lost, and that the chat takes a new turn within 5 s of Redis coming
// back. The server's store timeout is uiadapter.DefaultStoreTimeout (3 s);
// "a few seconds" below is measured against it with a margin for a
// loaded machine.

// faultServer runs the binary on its own redis-server, persisted with an
// fsync per write so that a restart keeps what was stored.
func faultServer(t *testing.T) (*testutil.RedisServer, *faultClient, *testutil.LogBuffer) {
	t.Helper()
	rs := testutil.StartRedis(t, "--appendonly", "yes", "--appendfsync", "always")
	logs := &testutil.LogBuffer{}
	ts := newTestServer(t, Config{History: "redis://" + rs.Addr, Logger: testutil.Logger(logs)})
	return rs, &faultClient{url: ts.URL, c: browser(t, ts.URL)}, logs
}

// faultClient is one browser's view of a server.
type faultClient struct {
	url string
	c   *http.Client
}

func (s *faultClient) post(t *testing.T, chatID, msgID, text string) *http.Response {
	t.Helper()
	body := `{"id":"` + chatID + `","messages":[{"id":"` + msgID + `","role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
	resp, err := s.c.Post(s.url+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// turn posts a message and returns the stream's events, or "" and the
// status when the request was refused.
func (s *faultClient) turn(t *testing.T, chatID, msgID, text string) (int, string) {
	t.Helper()
	resp := s.post(t, chatID, msgID, text)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	return 200, strings.Join(testutil.ReadSSE(t, resp.Body), "\n")
}

// stored is the chat as the server reloads it: "role: text" per message.
func (s *faultClient) stored(t *testing.T, chatID string) []string {
	t.Helper()
	resp, err := s.c.Get(s.url + "/api/chat/" + chatID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 404 {
		return nil
	}
	var msgs []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type, Text string
		} `json:"parts"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&msgs) != nil {
		t.Fatalf("reload: %d", resp.StatusCode)
	}
	var out []string
	for _, m := range msgs {
		var text []string
		for _, p := range m.Parts {
			if p.Type == "text" {
				text = append(text, p.Text)
			}
		}
		out = append(out, m.Role+": "+strings.Join(text, ""))
	}
	return out
}

// usableWithin waits until the chat takes a new turn and returns how long
// that took.
func (s *faultClient) usableWithin(t *testing.T, chatID, msgID string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	testutil.Eventually(t, limit, "the chat to take a new turn", func() bool {
		status, events := s.turn(t, chatID, msgID, "after")
		return status == 200 && strings.Contains(events, `"finish"`) && !strings.Contains(events, `"type":"error"`)
	})
	return time.Since(start)
}

const (
	storeTimeout = uiadapter.DefaultStoreTimeout
	faultMargin  = 3 * time.Second
	backWithin   = 5 * time.Second
)

func TestRedisFaultsBetweenTurns(t *testing.T) {
	t.Parallel()
	rs, s, _ := faultServer(t)
	if status, events := s.turn(t, "c", "u1", "hello"); status != 200 || !strings.Contains(events, `"type":"finish"`) {
		t.Fatalf("first turn: %d %s", status, events)
	}

	// Killed: refused at once with 503; the restarted Redis has the chat.
	rs.Stop()
	start := time.Now()
	if status, body := s.turn(t, "c", "u2", "while down"); status != 503 || !strings.Contains(body, "history is unavailable") {
		t.Fatalf("Redis killed: %d %s", status, body)
	}
	t.Logf("killed: 503 after %v", time.Since(start).Round(time.Millisecond))
	rs.Start()
	t.Logf("restarted: usable after %v", s.usableWithin(t, "c", "u3", backWithin).Round(time.Millisecond))

	// Frozen: 503 within the store timeout, not after go-redis's own.
	rs.Freeze()
	start = time.Now()
	status, body := s.turn(t, "c", "u4", "while frozen")
	took := time.Since(start)
	if status != 503 || took > storeTimeout+faultMargin {
		t.Fatalf("Redis frozen: %d %s after %v", status, body, took)
	}
	t.Logf("frozen: 503 after %v", took.Round(time.Millisecond))
	// Thawed, Redis runs the lock the refused request asked for; the
	// server gives it back, so the chat is not held for the lock's TTL.
	rs.Thaw()
	t.Logf("thawed: usable after %v", s.usableWithin(t, "c", "u5", backWithin).Round(time.Millisecond))

	want := []string{"user: hello", "assistant: You said: hello", "user: after", "assistant: You said: after", "user: after", "assistant: You said: after"}
	if got := s.stored(t, "c"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("stored:\n%q\nwant\n%q", got, want)
	}
}

// midRun starts a turn whose reply takes a while and returns once the
// stream has begun.
func midRun(t *testing.T, s *faultClient, chatID, text string) *testutil.SSEReader {
	t.Helper()
	resp := s.post(t, chatID, "u1", text)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := testutil.NewSSEReader(resp.Body)
	if first, err := r.Next(); err != nil || !strings.Contains(string(first), `"type":"start"`) {
		t.Fatalf("first event %s %v", first, err)
	}
	return r
}

// rest reads the stream to its end and returns its events and when the
// demo model's reply had been sent in full.
func rest(t *testing.T, r *testutil.SSEReader) (string, time.Time) {
	t.Helper()
	var events []string
	var replied time.Time
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(ev), `"type":"text-end"`) {
			replied = time.Now()
		}
		events = append(events, string(ev))
	}
	return strings.Join(events, "\n"), replied
}

func TestRedisKilledMidRun(t *testing.T) {
	t.Parallel()
	rs, s, logs := faultServer(t)
	r := midRun(t, s, "c", "wait 300 ms")
	rs.Stop()
	events, replied := rest(t, r)
	ended := time.Now()
	// Redis stayed down: the reply could not be saved, and the stream says
	// so within a few seconds of the reply.
	if !strings.Contains(events, `{"type":"error","errorText":"`+wire.SaveFailedMessage+`"}`) || replied.IsZero() {
		t.Fatalf("the lost reply was not reported:\n%s", events)
	}
	if d := ended.Sub(replied); d > storeTimeout+faultMargin {
		t.Fatalf("reported %v after the reply", d)
	}
	t.Logf("killed mid-run: reported not saved %v after the reply", ended.Sub(replied).Round(time.Millisecond))
	if !strings.Contains(logs.String(), "the reply could not be saved") {
		t.Fatalf("not logged:\n%s", logs)
	}
	rs.Start()
	t.Logf("restarted: usable after %v", s.usableWithin(t, "c", "u2", backWithin).Round(time.Millisecond))
	// True: the reply is not there. The user's message went in when the
	// turn began, before the kill; the next turn follows it.
	got := strings.Join(s.stored(t, "c"), "|")
	if strings.Contains(got, "assistant: done") || !strings.HasSuffix(got, "user: after|assistant: You said: after") {
		t.Fatalf("stored: %s", got)
	}
}

func TestRedisRestartedMidRun(t *testing.T) {
	t.Parallel()
	rs, s, _ := faultServer(t)
	r := midRun(t, s, "c", "wait 800 ms")
	rs.Stop()
	rs.Start()
	events, _ := rest(t, r)
	// Back before the reply ended: saved, and said so.
	if strings.Contains(events, `"type":"error"`) || !strings.Contains(events, `"type":"finish"`) {
		t.Fatalf("restart mid-run:\n%s", events)
	}
	if got := strings.Join(s.stored(t, "c"), "|"); got != "user: wait 800 ms|assistant: done" {
		t.Fatalf("stored: %s", got)
	}
	s.usableWithin(t, "c", "u2", backWithin)
}

func TestRedisFrozenMidRun(t *testing.T) {
	t.Parallel()
	rs, s, logs := faultServer(t)
	r := midRun(t, s, "c", "wait 300 ms")
	rs.Freeze()
	events, replied := rest(t, r)
	ended := time.Now()
	// Frozen, the write may have reached Redis and will run when it
	// resumes: the stream says the outcome is unknown, within a few
	// seconds, not that the reply was lost.
	if !strings.Contains(events, `{"type":"error","errorText":"`+wire.SaveUncertainMessage+`"}`) {
		t.Fatalf("frozen mid-run:\n%s", events)
	}
	// Two store timeouts: the turn's own append may be caught too.
	if d := ended.Sub(replied); d > 2*storeTimeout+faultMargin {
		t.Fatalf("reported %v after the reply", d)
	}
	t.Logf("frozen mid-run: reported unknown %v after the reply", ended.Sub(replied).Round(time.Millisecond))
	rs.Thaw()
	// The server goes on saving in the background: the reply is stored
	// exactly once, and the log says so.
	testutil.Eventually(t, backWithin, "the reply to be saved after Redis returned", func() bool {
		return strings.Contains(logs.String(), "the reply was saved after retrying")
	})
	if got := strings.Join(s.stored(t, "c"), "|"); got != "user: wait 300 ms|assistant: done" {
		t.Fatalf("stored: %s", got)
	}
	t.Logf("thawed: usable after %v", s.usableWithin(t, "c", "u2", backWithin).Round(time.Millisecond))
}
