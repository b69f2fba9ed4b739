package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The README's commands, and the routes the page calls after a reload:
// the chat list, a reply resumed and stopped, AG-UI's connect.
func TestExample(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := p.RunREADME(t, testutil.ShellBlocks(string(readme))[0], "127.0.0.1:8081")
	for _, want := range []string{`"delta":"sunny, "`, `"type":"tool-output-available"`, `"role":"assistant"`, `{"chats":[{"id":"c1","title":"weather in Paris"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("the README's commands printed no %s:\n%s", want, out)
		}
	}
	chunks := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c9", "m1", "weather in Paris"))
	if got := chunks.Text(); got != "The weather in Paris is sunny, 21°C." {
		t.Fatalf("reply %q", got)
	}
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := http.Get(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	var msgs []map[string]any
	if err := json.NewDecoder(get("/api/chat/c1").Body).Decode(&msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("reload: %v %v", msgs, err)
	}
	var list struct{ Chats []struct{ ID string } }
	if err := json.NewDecoder(get("/api/chats").Body).Decode(&list); err != nil || len(list.Chats) != 2 || list.Chats[0].ID != "c9" {
		t.Fatalf("chats: %+v %v", list, err)
	}
	if page := get("/"); page.StatusCode != 200 || page.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("the page: %d %v", page.StatusCode, page.Header)
	}
	if got := testutil.PostStream(t, p.URL+"/api/agui", testutil.AGUIInput("t1", "r1", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("AG-UI reply %q", got)
	}
	// A reply in progress: the page resumes it after a reload and stops it.
	running, err := http.Post(p.URL+"/api/chat", "application/json", strings.NewReader(testutil.UserMessage("c2", "m1", "think: wait 30000 ms")))
	if err != nil {
		t.Fatal(err)
	}
	defer running.Body.Close()
	br := bufio.NewReader(running.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if got := get("/api/chat/c2/stream").StatusCode; got != http.StatusOK {
		t.Fatalf("resume: %d", got)
	}
	stop, err := http.Post(p.URL+"/api/chat/c2/stop", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	stop.Body.Close()
	if stop.StatusCode != http.StatusAccepted {
		t.Fatalf("stop: %d", stop.StatusCode)
	}
	if rest := testutil.ParseChunks(t, br); rest[len(rest)-1]["type"] != "finish" {
		t.Fatalf("the stopped reply ended with %v", rest[len(rest)-1])
	}
	connect, err := http.Post(p.URL+"/api/agui/connect", "application/json", strings.NewReader(`{"threadId":"t1","runId":"c","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	events := testutil.ParseChunks(t, connect.Body)
	connect.Body.Close()
	if events.Find("MESSAGES_SNAPSHOT") == nil {
		t.Fatalf("connect: %v", events)
	}
}
