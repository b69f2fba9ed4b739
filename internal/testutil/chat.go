package testutil

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Chunks are decoded stream events.
type Chunks []map[string]any

// PostStream POSTs JSON and decodes the SSE response's events. It fails
// the test on a status other than 200.
func PostStream(t testing.TB, url, body string, header ...string) Chunks {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	var out Chunks
	for _, data := range ReadSSE(t, resp.Body) {
		if data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		out = append(out, c)
	}
	return out
}

// Find returns the first event of a type ("text-delta", "RUN_FINISHED").
func (c Chunks) Find(typ string) map[string]any {
	for _, e := range c {
		if e["type"] == typ {
			return e
		}
	}
	return nil
}

// Text joins the text deltas of either protocol.
func (c Chunks) Text() string {
	var b strings.Builder
	for _, e := range c {
		if e["type"] == "text-delta" || e["type"] == "TEXT_MESSAGE_CONTENT" {
			b.WriteString(e["delta"].(string))
		}
	}
	return b.String()
}

// UserMessage is a one-message useChat request body.
func UserMessage(chat, id, text string) string {
	b, _ := json.Marshal(map[string]any{"id": chat, "messages": []any{
		map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}},
	}})
	return string(b)
}

// AGUIInput is a one-message RunAgentInput.
func AGUIInput(thread, id, text string) string {
	b, _ := json.Marshal(map[string]any{"threadId": thread, "runId": id, "protocolVersion": "1.0",
		"messages": []any{map[string]any{"id": id, "role": "user", "content": text}}})
	return string(b)
}
