package uiadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
)

// An id with a character no id needs (a control byte, a C1 control, a
// bidi override, invalid UTF-8) is a 400 that names the id, on every route
// and in both protocols, over a real connection: no header echoes it (a
// control byte in X-Resumable-Stream-Id made Go's client refuse the whole
// response, and a proxy answer 502) and nothing is stored.
func TestIDsWithControlCharactersAreRefused(t *testing.T) {
	store := history.NewMemory()
	f := newHistoryFixture(t, store)
	vercel := func(chatID string) string {
		b, _ := json.Marshal(map[string]any{"id": chatID, "messages": []any{map[string]any{
			"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "count to 3"}}}}})
		return string(b)
	}
	agui := func(threadID string) string {
		b, _ := json.Marshal(map[string]any{"threadId": threadID, "runId": "r1", "state": map[string]any{}, "tools": []any{},
			"context": []any{}, "forwardedProps": map[string]any{}, "messages": []any{map[string]any{"id": "m1", "role": "user", "content": "count to 3"}}})
		return string(b)
	}
	type request struct{ method, path, body, lastEventID string }
	for name, bad := range map[string]string{
		"ESC": "c\x1b[31m", "BEL": "c\a", "NUL": "c\x00", "DEL": "c\x7f", "a C1 control": "c\u009b", "a bidi override": "c\u202egnp.exe",
		"a line separator": "c\u2028", "invalid UTF-8": "c\xff",
	} {
		path := url.PathEscape(bad)
		requests := map[string]request{
			"reload":     {"GET", "/api/chat/" + path, "", ""},
			"resume":     {"GET", "/api/chat/" + path + "/stream", "", ""},
			"stop":       {"POST", "/api/chat/" + path + "/stop", "{}", ""},
			"AG-UI stop": {"POST", "/api/agui/" + path + "/stop", "{}", ""},
			"rename":     {"PATCH", "/api/chat/" + path, `{"title":"t"}`, ""},
			"delete":     {"DELETE", "/api/chat/" + path, "", ""},
		}
		if utf8.ValidString(bad) { // a JSON body cannot carry invalid UTF-8
			requests["a chat"] = request{"POST", "/api/chat", vercel(bad), ""}
			requests["an AG-UI run"] = request{"POST", "/api/agui", agui(bad), ""}
			requests["an AG-UI connect"] = request{"POST", "/api/agui/connect", agui(bad), ""}
		}
		if !strings.ContainsFunc(bad, func(r rune) bool { return r < 0x20 || r == 0x7f }) { // what a client can put in a header
			requests["resume after a run"] = request{"GET", "/api/chat/c1/stream", "", bad + ":3"}
		}
		for route, rq := range requests {
			t.Run(name+"/"+route, func(t *testing.T) {
				req, _ := http.NewRequest(rq.method, f.url+rq.path, strings.NewReader(rq.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Scope", "alice")
				if rq.lastEventID != "" {
					req.Header.Set("Last-Event-ID", rq.lastEventID)
				}
				resp, err := f.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				var e struct{ Error string }
				if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(raw, &e) != nil ||
					!strings.HasSuffix(e.Error, " must be printable UTF-8, without control or bidirectional formatting characters") {
					t.Fatalf("%d %q", resp.StatusCode, raw)
				}
				if strings.Contains(e.Error, bad) {
					t.Errorf("the error repeats the id: %q", e.Error)
				}
				for k, vs := range resp.Header {
					for _, v := range vs {
						if strings.Contains(v, bad) {
							t.Errorf("header %s echoes the id: %q", k, v)
						}
					}
				}
			})
		}
	}
	if chats, err := store.List(context.Background(), "alice", 0); err != nil || len(chats) != 0 {
		t.Fatalf("refused requests stored %+v (%v)", chats, err)
	}
	// Printable Unicode is an id, and comes back as it was sent.
	resp := f.post("alice", vercel("chat ünïcødé 💬"))
	defer resp.Body.Close()
	if got := resp.Header.Get(edge.StreamIDHeader); got != "chat ünïcødé 💬" {
		t.Fatalf("%s = %q", edge.StreamIDHeader, got)
	}
}
