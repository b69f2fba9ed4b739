package uiadapter_test

// What the handler keeps of a client's messages: invalid parts and
// disallowed URLs are dropped before anything runs, and what is dropped is
// logged with the request.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
)

// Invalid parts (an empty inline image) are dropped when the request is
// read, and a message left empty is a 400 before anything runs: accepted,
// the run would go ahead and run tools, and then its turn could not be
// saved.
func TestInvalidPartsAreDroppedAtIngestion(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	body := func(parts ...any) string {
		b, _ := json.Marshal(map[string]any{"id": "c", "messages": []any{msg("u1", "user", parts...)}})
		return string(b)
	}
	empty := part("file", "mediaType", "image/png", "url", "data:image/png;base64,")
	if status, raw := f.do("alice", http.MethodPost, "/api/chat", body(empty)); status != 400 || !strings.Contains(raw, "no content left") {
		t.Fatalf("only an empty image: %d %s", status, raw)
	}
	chunks := f.chat("alice", body(part("text", "text", "What is the weather in Paris?"), empty))
	if chunks.Find("error") != nil || chunks.Text() != "The weather in Paris is sunny, 21°C." {
		t.Fatalf("chunks %v", chunks)
	}
	if got := roles(f.stored("alice", "c")); got != "user,assistant,tool,assistant" {
		t.Fatalf("stored %s", got)
	}
	// AG-UI: a source without a value.
	in, _ := json.Marshal(map[string]any{"threadId": "t", "runId": "r", "messages": []any{map[string]any{"id": "u", "role": "user",
		"content": []any{map[string]any{"type": "image", "source": map[string]any{"type": "data", "value": "", "mimeType": "image/png"}}}}}})
	if status, raw := f.do("alice", http.MethodPost, "/api/agui", string(in)); status != 400 {
		t.Fatalf("AG-UI empty image: %d %s", status, raw)
	}
}

// source-url parts pass the same scheme allowlist as files; URLs to the
// server's own network (loopback, private, link-local and internal
// names, however spelled) are dropped too by default, and counted in the
// log: a provider inside the network would fetch them for the client.
// WithPrivateURLs lets them through.
func TestSourceURLsAndPrivateHosts(t *testing.T) {
	f := newFixture(t, uiadapter.WithPrivateURLs())
	got := describe(t, f, []any{msg("u1", "user",
		part("text", "text", "sources"),
		part("source-url", "sourceId", "s1", "url", "s3://bucket/key"),
		part("source-url", "sourceId", "s2", "url", "file:///etc/passwd"),
		part("source-url", "sourceId", "s3", "url", "https://example.com/doc"),
		part("file", "mediaType", "image/png", "url", "http://169.254.169.254/latest/meta-data"),
	)})
	if parts := strings.Join(got[1].Parts, ","); parts != "text,resource_ref,image:http" {
		t.Fatalf("with WithPrivateURLs the model saw %s", parts)
	}
	strict := newFixture(t)
	var parts []any
	for _, u := range []string{"http://169.254.169.254/latest", "http://localhost:8080/x", "http://[::1]/x", "http://127.1/x",
		"http://2130706433/x", "http://0x7f.0.0.1/x", "http://10.0.0.5/x", "http://[::ffff:192.168.1.1]/x", "http://db.internal/x",
		"https://example.com/ok.png"} {
		parts = append(parts, part("file", "mediaType", "image/png", "url", u))
	}
	got = describe(t, strict, []any{msg("u1", "user", append([]any{part("text", "text", "look")}, parts...)...)})
	if p := strings.Join(got[1].Parts, ","); p != "text,image:https" {
		t.Fatalf("by default the model saw %s", p)
	}
	if !strings.Contains(strict.logs.String(), `"dropped client URLs to private hosts" protocol=vercel-ai chat=ctx intent=submit count=9`) {
		t.Fatalf("log:\n%s", strict.logs)
	}
}

// What a decoder skips reaches the handler's logger, with the request's
// attributes (protocol, chat, intent), so an operator can tell whose
// input was dropped.
func TestSkippedInputIsLoggedWithTheRequest(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	body := `{"id":"skips","messages":[{"id":"u1","role":"user","parts":[{"type":"hologram"},{"type":"text","text":"hi"}]}]}`
	f.chat("alice", body)
	if !strings.Contains(f.logs.String(), `msg="skipped client input" protocol=vercel-ai chat=skips intent=submit skipped="[an unknown UI message part \"hologram\"]"`) {
		t.Fatalf("log:\n%s", f.logs)
	}
}
