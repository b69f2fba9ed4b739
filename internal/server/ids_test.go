package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// An id longer than any client needs is refused at the door, on every
// route and in every id field of both protocols: a short JSON 400,
// nothing run, nothing echoed, nothing stored in Redis. An ordinary chat
// afterwards is stored (the key count can see it).
func TestHugeIDsAreRefused(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ts := newTestServer(t, Config{History: testutil.RedisURL(t), HistoryPrefix: prefix, DemoDelay: 1})
	c := browser(t, ts.URL)

	long := strings.Repeat("x", 300)
	huge := strings.Repeat("h", 7<<20)
	userMsg := func(id string) map[string]any {
		return map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": "count to 3"}}}
	}
	toolPart := func(callID, approvalID string) map[string]any {
		return map[string]any{"id": "a1", "role": "assistant", "parts": []any{map[string]any{
			"type": "tool-delete_file", "toolCallId": callID, "state": "approval-responded", "input": map[string]any{"path": "/tmp/x"},
			"approval": map[string]any{"id": approvalID, "approved": true}}}}
	}
	aguiInput := func(thread, run string, edit func(map[string]any)) map[string]any {
		in := map[string]any{"threadId": thread, "runId": run, "state": map[string]any{}, "tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{},
			"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "count to 3"}}}
		if edit != nil {
			edit(in)
		}
		return in
	}
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"a 7 MB chat id", "POST", "/api/chat", map[string]any{"id": huge, "messages": []any{userMsg("m1")}}},
		{"a message id", "POST", "/api/chat", map[string]any{"id": "c1", "messages": []any{userMsg(long)}}},
		{"the id of the message before the last", "POST", "/api/chat", map[string]any{"id": "c1", "messages": []any{userMsg(long), userMsg("m2")}}},
		{"a tool call id", "POST", "/api/chat", map[string]any{"id": "c1", "messages": []any{userMsg("m1"), toolPart(long, "a1")}}},
		{"an approval id", "POST", "/api/chat", map[string]any{"id": "c1", "messages": []any{userMsg("m1"), toolPart("t1", long)}}},
		{"a regenerated message id", "POST", "/api/chat", map[string]any{"id": "c1", "trigger": "regenerate-message", "messageId": long, "messages": []any{userMsg("m1")}}},
		{"the new message alone", "POST", "/api/chat", map[string]any{"id": "c1", "message": userMsg(long)}},
		{"a 2 MB runId", "POST", "/api/agui", aguiInput("t1", huge[:2<<20], nil)},
		{"a threadId", "POST", "/api/agui", aguiInput(long, "r1", nil)},
		{"a parentRunId", "POST", "/api/agui", aguiInput("t1", "r1", func(in map[string]any) { in["parentRunId"] = long })},
		{"an AG-UI message id", "POST", "/api/agui", aguiInput("t1", "r1", func(in map[string]any) {
			in["messages"] = []any{map[string]any{"id": long, "role": "user", "content": "hi"}}
		})},
		{"an AG-UI tool call id", "POST", "/api/agui", aguiInput("t1", "r1", func(in map[string]any) {
			in["messages"] = []any{map[string]any{"id": "m1", "role": "user", "content": "hi"},
				map[string]any{"id": "a1", "role": "assistant", "toolCalls": []any{map[string]any{"id": long, "type": "function", "function": map[string]any{"name": "get_location", "arguments": "{}"}}}}}
		})},
		{"a tool message's toolCallId", "POST", "/api/agui", aguiInput("t1", "r1", func(in map[string]any) {
			in["messages"] = []any{map[string]any{"id": "m1", "role": "user", "content": "hi"}, map[string]any{"id": "r1", "role": "tool", "toolCallId": long, "content": "{}"}}
		})},
		{"an interrupt id", "POST", "/api/agui", aguiInput("t1", "r1", func(in map[string]any) {
			in["resume"] = []any{map[string]any{"interruptId": long + ".sig", "status": "resolved", "payload": map[string]any{"approved": true}}}
		})},
		{"a connect's threadId", "POST", "/api/agui/connect", aguiInput(long, "r1", nil)},
		{"reload", "GET", "/api/chat/" + long, nil},
		{"resume", "GET", "/api/chat/" + strings.Repeat("y", 100<<10) + "/stream", nil},
		{"stop", "POST", "/api/chat/" + long + "/stop", map[string]any{}},
		{"AG-UI stop", "POST", "/api/agui/" + long + "/stop", map[string]any{}},
		{"rename", "PATCH", "/api/chat/" + long, map[string]any{"title": "t"}},
		{"delete", "DELETE", "/api/chat/" + long, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != nil {
				b, err := json.Marshal(tc.body)
				if err != nil {
					t.Fatal(err)
				}
				body = strings.NewReader(string(b))
			}
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, body)
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			var e struct{ Error string }
			if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(got, &e) != nil || !strings.Contains(e.Error, "longer than 256 bytes") {
				t.Fatalf("%d %.200s", resp.StatusCode, got)
			}
			if len(got) > 100 {
				t.Errorf("a %d-byte error", len(got))
			}
			for k, v := range resp.Header {
				if n := len(strings.Join(v, "")); n > 256 {
					t.Errorf("header %s has %d bytes", k, n)
				}
			}
		})
	}
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("refused requests left %d keys in Redis (%v): %.300q", len(keys), err, keys)
	}
	// An id at the bound is an id.
	chat(t, c, ts.URL, strings.Repeat("c", 256), strings.Repeat("m", 256), "count to 3")
	if keys, err = rdb.Keys(ctx, prefix+"*").Result(); err != nil || len(keys) == 0 {
		t.Fatalf("a chat with 256-byte ids stored nothing: %v", err)
	}
}
