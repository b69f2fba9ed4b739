package testutil

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// Chunks are decoded stream events.
type Chunks []map[string]any

// PostStream POSTs JSON and decodes the SSE response's events. It fails
// the test on a status other than 200.
func PostStream(t testing.TB, url, body string, header ...string) Chunks {
	t.Helper()
	return PostStreamWith(t, http.DefaultClient, url, body, header...)
}

// PostStreamWith is PostStream through client (an InMemoryServer's).
func PostStreamWith(t testing.TB, client *http.Client, url, body string, header ...string) Chunks {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return ParseChunks(t, resp.Body)
}

// ParseChunks decodes the events of an SSE body, leaving out [DONE].
func ParseChunks(t testing.TB, body io.Reader) Chunks {
	t.Helper()
	var out Chunks
	for _, data := range ReadSSE(t, body) {
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

// Golden compares got with the golden file at path; with update set
// (each package's -update flag) it first rewrites the file.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the package's tests with -update)", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s:\n%s", path, got)
	}
}

// UserMessages is n short CMF user messages with ids "0", "1", …: a stored
// conversation for store tests and benchmarks.
func UserMessages(n int) []cmf.Message {
	out := make([]cmf.Message, n)
	for i := range out {
		out[i] = cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "What is the weather in Paris today? Please be brief."}}}
		out[i].SetID(strconv.Itoa(i))
	}
	return out
}
