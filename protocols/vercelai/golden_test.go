package vercelai_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

var update = flag.Bool("update", false, "rewrite the golden .sse files")

func server(t *testing.T) string {
	t.Helper()
	loop, err := agent.New(demo.New(), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(testutil.Must(vercelai.Handler(loop, uiadapter.WithSecret([]byte("golden")))))
	t.Cleanup(srv.Close)
	return srv.URL
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return string(b)
}

var (
	uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	sigRe  = regexp.MustCompile(`"signature":"[A-Za-z0-9_-]+"`)
	timeRe = regexp.MustCompile(`"createdAt":[0-9]{13}`)
)

// normalize replaces generated ids with id-1, id-2, … in order of first
// appearance, signatures (which depend on the ids) and creation times
// (checked in TestMetadata) with markers.
func normalize(s string) string {
	seen := map[string]string{}
	s = uuidRe.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := seen[id]; !ok {
			seen[id] = fmt.Sprintf("id-%d", len(seen)+1)
		}
		return seen[id]
	})
	s = timeRe.ReplaceAllString(s, `"createdAt":"<ms>"`)
	return sigRe.ReplaceAllString(s, `"signature":"<signature>"`)
}

func userBody(text string) string { return userBodyIn("chat-golden", "u1", text) }

func userBodyIn(chat, id, text string) string {
	b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "messages": []any{
		map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
	}})
	return string(b)
}

// approveBody is the continuation useChat sends to approve the call the
// stream chunks asked about, after the user message u1 with text.
func approveBody(chat, text string, chunks testutil.Chunks) string {
	req, avail := chunks.Find("tool-approval-request"), chunks.Find("tool-input-available")
	b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "messages": []any{
		map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
		map[string]any{"id": chunks.Find("start")["messageId"], "role": "assistant", "parts": []any{
			map[string]any{"type": "step-start"},
			map[string]any{"type": "tool-delete_file", "toolCallId": avail["toolCallId"], "state": "approval-responded", "input": avail["input"],
				"approval": map[string]any{"id": req["approvalId"], "approved": true, "signature": req["signature"]}},
		}},
	}})
	return string(b)
}

func TestGoldenStreams(t *testing.T) {
	url := server(t)
	streams := map[string]string{
		"chat":             post(t, url, userBody("Hello there")),
		"reasoning":        post(t, url, userBody("think about it")),
		"tool":             post(t, url, userBody("weather in Paris")),
		"approval-request": post(t, url, userBody("delete /tmp/x.txt")),
	}
	// The continuation approves the request the server just made.
	chunks := testutil.ParseChunks(t, strings.NewReader(streams["approval-request"]))
	streams["continuation"] = post(t, url, approveBody("chat-golden", "delete /tmp/x.txt", chunks))

	for name, stream := range streams {
		t.Run(name, func(t *testing.T) {
			testutil.Golden(t, filepath.Join("testdata", name+".sse"), normalize(stream), *update)
		})
	}
}

// The five headers of the AI SDK's own servers, over a real HTTP/1.1
// connection.
func TestResponseHeaders(t *testing.T) {
	resp, err := http.Post(server(t), "application/json", strings.NewReader(userBody("Hello there")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	for name, want := range map[string]string{
		"Content-Type":                  "text/event-stream",
		"Cache-Control":                 "no-cache",
		"Connection":                    "keep-alive",
		"X-Accel-Buffering":             "no",
		"X-Vercel-Ai-Ui-Message-Stream": "v1",
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
