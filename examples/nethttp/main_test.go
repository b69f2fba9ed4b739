package main

import (
	"net/http"
	"testing"

	"github.com/agentui/agentui/internal/testutil"
)

func TestExample(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	chunks := testutil.PostStream(t, p.URL+"/api/chat", testutil.UserMessage("c1", "m1", "weather in Paris"))
	if got := chunks.Text(); got != "The weather in Paris is sunny, 21°C." {
		t.Fatalf("reply %q", got)
	}
	resp, err := http.Get(p.URL + "/api/chat/c1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reload: %d", resp.StatusCode)
	}
	page, err := http.Get(p.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != 200 || page.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("the page: %d %v", page.StatusCode, page.Header)
	}
	if got := testutil.PostStream(t, p.URL+"/api/agui", testutil.AGUIInput("t1", "r1", "hello")).Text(); got != "You said: hello" {
		t.Fatalf("AG-UI reply %q", got)
	}
}
