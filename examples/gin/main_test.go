package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

func TestExample(t *testing.T) {
	p := testutil.RunProgram(t, ".", nil, "-addr", "127.0.0.1:0")
	alice := []string{"Authorization", "Bearer alice-token"}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The README's commands: Alice's reply, her chat, and Bob's 404.
	out := p.RunREADME(t, testutil.ShellBlocks(string(readme))[0], "127.0.0.1:8082")
	for _, want := range []string{`"delta":"hello"`, `[{"id":"m1","role":"user"`, `{"error":"no such chat"}`} {
		if !strings.Contains(out, want) {
			t.Fatalf("the README's commands printed no %s:\n%s", want, out)
		}
	}
	do := func(method, path, token string, body ...string) int {
		req, _ := http.NewRequest(method, p.URL+path, strings.NewReader(strings.Join(body, "")))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(token string) int { return do(http.MethodGet, "/api/chat/c1", token) }
	if a, b, n := get("alice-token"), get("bob-token"), get("nobody"); a != 200 || b != 404 || n != 401 {
		t.Fatalf("reload: alice %d, bob %d, unknown %d", a, b, n)
	}
	if got := testutil.PostStream(t, p.URL+"/api/agui", testutil.AGUIInput("t1", "r1", "hello"), alice...).Text(); got != "You said: hello" {
		t.Fatalf("AG-UI reply %q", got)
	}
	// The per-chat routes get the id from gin's :id: a running reply is
	// resumed and stopped through them, and Bob can do neither.
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/api/chat", strings.NewReader(testutil.UserMessage("c2", "m1", "think: wait 30000 ms")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(alice[0], alice[1])
	running, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Body.Close()
	if b := do(http.MethodPost, "/api/chat/c2/stop", "bob-token"); b != http.StatusNotFound {
		t.Fatalf("Bob stopping Alice's reply: %d", b)
	}
	if got := do(http.MethodPost, "/api/chat/c2/stop", "alice-token"); got != http.StatusAccepted {
		t.Fatalf("stop: %d", got)
	}
	if rest := testutil.ParseChunks(t, running.Body); rest[len(rest)-1]["type"] != "finish" {
		t.Fatalf("the stopped reply ended with %v", rest[len(rest)-1])
	}
	if got := do(http.MethodGet, "/api/chat/c2/stream", "alice-token"); got != http.StatusNoContent {
		t.Fatalf("resume after the stop: %d", got)
	}
	// The thread API, with the id from gin's :id too.
	if got := do(http.MethodPatch, "/api/chat/c1", "bob-token", `{"title":"x"}`); got != http.StatusNotFound {
		t.Fatalf("Bob renaming Alice's chat: %d", got)
	}
	if got := do(http.MethodPatch, "/api/chat/c1", "alice-token", `{"title":"Greetings"}`); got != http.StatusNoContent {
		t.Fatalf("rename: %d", got)
	}
	list := func(token string) string {
		req, _ := http.NewRequest(http.MethodGet, p.URL+"/api/chats", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Chats []struct{ ID, Title string } }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(out.Chats)
	}
	if got := list("alice-token"); got != "[{c2 think: wait 30000 ms} {t1 hello} {c1 Greetings}]" {
		t.Fatalf("Alice's chats: %s", got)
	}
	if got := do(http.MethodDelete, "/api/chat/c1", "bob-token"); got != http.StatusNotFound {
		t.Fatalf("Bob deleting Alice's chat: %d", got)
	}
	if got := do(http.MethodDelete, "/api/chat/c1", "alice-token"); got != http.StatusNoContent {
		t.Fatalf("delete: %d", got)
	}
	if got, bob := list("alice-token"), list("bob-token"); got != "[{c2 think: wait 30000 ms} {t1 hello}]" || bob != "[]" {
		t.Fatalf("after the delete: Alice %s, Bob %s", got, bob)
	}
	if !strings.Contains(p.Stdout.String(), "/api/chat") { // gin logs to stdout
		t.Fatalf("gin's logger did not log: %s", p.Stdout)
	}
	// The WebSocket transport through gin's writer (which holds the 101
	// until told to write it): a chat over a socket.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(p.URL, "http")+"/api/chat", &websocket.DialOptions{HTTPHeader: http.Header{alice[0]: {alice[1]}}})
	if err != nil {
		t.Fatalf("WebSocket through gin: %v", err)
	}
	defer ws.CloseNow()
	send := `{"type":"send","requestId":"r1","trigger":"submit-message",` + strings.TrimPrefix(testutil.UserMessage("c3", "m1", "hello"), "{")
	if err := ws.Write(ctx, websocket.MessageText, []byte(send)); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Type  string
			Chunk struct{ Type, Delta string }
		}
		_ = json.Unmarshal(b, &f)
		if f.Type == "chunk" && f.Chunk.Type == "text-delta" {
			text.WriteString(f.Chunk.Delta)
		}
		if f.Type != "chunk" {
			if f.Type != "end" || text.String() != "You said: hello" {
				t.Fatalf("over a socket: %s after %q", b, text.String())
			}
			break
		}
	}
}
