package main

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
)

// SIGTERM during a reply (a rolling deploy), with a real process and a
// real Redis: after the grace period the stream ends with the protocol's
// error event, the partial reply is stored, no lock is left, the process
// exits within grace + 5 s, and the next process takes a new turn of the
// same chat at once (it got 409 for about 2 minutes before).
func TestSIGTERMDuringAReply(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "shutdown test secret, 32 bytes or more", "-shutdown-grace", "500ms"}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	post := func(url, msgID, text string) *http.Response {
		if page, err := client.Get(url + "/"); err == nil { // the scope cookie, as a browser gets it
			page.Body.Close()
		}
		resp, err := client.Post(url+"/api/chat", "application/json", strings.NewReader(testutil.UserMessage("c", msgID, text)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	first := testutil.RunProgram(t, ".", nil, args...)
	resp := post(first.URL, "u1", "think: wait 30000 ms")
	r := testutil.NewSSEReader(resp.Body)
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("the stream ended before the reasoning: %v", err)
		}
		if strings.Contains(string(ev), `"type":"reasoning-delta"`) {
			break
		}
	}
	start := time.Now()
	first.Signal(t, syscall.SIGTERM)
	var rest []string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		rest = append(rest, string(ev))
	}
	got := strings.Join(rest, "\n")
	if !strings.Contains(got, `{"type":"error","errorText":"`+wire.ShutdownMessage+`"}`) || !strings.HasSuffix(got, "[DONE]") {
		t.Fatalf("the cut stream:\n%s", got)
	}
	if err := first.Exited(t, 500*time.Millisecond+5*time.Second+3*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, first.Stderr)
	}
	t.Logf("SIGTERM to exit: %v (grace 500ms)", time.Since(start).Round(time.Millisecond))
	if logs := first.Stderr.String(); !strings.Contains(logs, "the run was cut by shutdown") || !strings.Contains(logs, "shut down") {
		t.Fatalf("not logged:\n%s", logs)
	}
	if keys, _ := rdb.Keys(t.Context(), prefix+"*:lock").Result(); len(keys) != 0 {
		t.Fatalf("locks left: %v", keys)
	}

	second := testutil.RunProgram(t, ".", nil, args...)
	reload, err := client.Get(second.URL + "/api/chat/c")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []struct {
		Role  string
		Parts []struct{ Type, Text string }
	}
	if err := json.NewDecoder(reload.Body).Decode(&msgs); err != nil || len(msgs) != 2 || msgs[1].Role != "assistant" ||
		len(msgs[1].Parts) < 2 || msgs[1].Parts[1].Type != "reasoning" || !strings.HasPrefix(msgs[1].Parts[1].Text, "Thinking about") {
		t.Fatalf("stored partial turn: %+v %v", msgs, err)
	}
	reload.Body.Close()
	next := post(second.URL, "u2", "hello again")
	if next.StatusCode != http.StatusOK {
		t.Fatalf("a new turn after the restart: %d", next.StatusCode)
	}
	if events := strings.Join(testutil.ReadSSE(t, next.Body), "\n"); !strings.Contains(events, `"finishReason":"stop"`) {
		t.Fatalf("the new turn:\n%s", events)
	}
}
