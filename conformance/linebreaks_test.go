package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/server"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// Line breaks a real model may put in what it streams: tool arguments
// holding a newline, copied into a frame as they came, would split it over
// two SSE lines, and the AI SDK's parser fails with AI_JSONParseError.
const (
	odd     = "Ber\nlin\r\n\u2028x"
	oddText = "Line one\nline two\r\nthree\u2028four"
)

// oddArguments is the tool input as the fake model streams it: JSON laid
// out over lines with LF and CRLF, and strings that hold escaped line
// breaks and a raw U+2028.
func oddArguments(field string) []string {
	s := "{\n  \"" + field + "\":\r\n  " + string(mustJSON(odd)) + "\n}"
	return []string{s[:5], s[5:17], s[17:]}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// fakeModel is an OpenAI-compatible chat completions endpoint: it answers
// "weather" with a get_weather call, "delete" with a delete_file call and
// a tool result with text, all streamed in pieces.
func fakeModel(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var last struct {
			Role string `json:"role"`
		}
		_ = json.Unmarshal(req.Messages[len(req.Messages)-1], &last)
		lastText := string(req.Messages[len(req.Messages)-1])
		var deltas []any
		finish := "stop"
		switch {
		case last.Role == "tool":
			for _, piece := range []string{oddText[:6], oddText[6:20], oddText[20:]} {
				deltas = append(deltas, map[string]any{"content": piece})
			}
		case strings.Contains(lastText, "weather"), strings.Contains(lastText, "delete"):
			name, field := "get_weather", "city"
			if strings.Contains(lastText, "delete") {
				name, field = "delete_file", "path"
			}
			for i, piece := range oddArguments(field) {
				call := map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}
				if i == 0 {
					call["id"], call["type"] = "call_"+fmt.Sprint(len(req.Messages)), "function"
					call["function"].(map[string]any)["name"] = name
				}
				deltas = append(deltas, map[string]any{"tool_calls": []any{call}})
			}
			finish = "tool_calls"
		default:
			deltas = append(deltas, map[string]any{"content": "ok"})
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i, d := range deltas {
			choice := map[string]any{"index": 0, "delta": d, "finish_reason": nil}
			if i == len(deltas)-1 {
				choice["finish_reason"] = finish
			}
			fmt.Fprintf(w, "data: %s\n\n", mustJSON(map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": []any{choice},
			}))
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestModelLineBreaks streams what fakeModel sends through the real AI SDK
// and @ag-ui/client, with and without history: tool input and output,
// text, and an approval whose signed input holds the line breaks. The
// scripts check that every event is one data line and that the clients
// rebuild each value exactly.
func TestModelLineBreaks(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	t.Setenv("OPENAI_BASE_URL", fakeModel(t))
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ts, logs := startServer(t, server.Config{Model: "openai:fake", History: mode.history})
			t.Log(runNode(t, node, mode.env, "vercel.mjs", ts.URL, "lineBreaks"))
			t.Log(runNode(t, node, mode.env, "agui.mjs", ts.URL+"/api/agui", "lineBreaks"))
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Fatalf("server errors:\n%s", logs)
			}
		})
	}
}
