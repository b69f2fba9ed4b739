package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestChatFrames pins the frames to the ones agentui sends for "count to 3",
// so the bare contender keeps doing the same work as agentui.
func TestChatFrames(t *testing.T) {
	body := `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"count to 3"}]}],"trigger":"submit-message"}`
	rec := httptest.NewRecorder()
	chat(rec, httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	for k, v := range map[string]string{
		"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
		"X-Accel-Buffering": "no", "X-Vercel-Ai-Ui-Message-Stream": "v1",
	} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	frames := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n")
	var types, deltas []string
	for _, f := range frames {
		payload, ok := strings.CutPrefix(f, "data: ")
		if !ok {
			t.Fatalf("frame %q has no data: prefix", f)
		}
		if payload == "[DONE]" {
			types = append(types, payload)
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			t.Fatal(err)
		}
		types = append(types, c.Type)
		if c.Type == "text-delta" {
			deltas = append(deltas, c.Delta)
		}
	}
	want := "start start-step text-start text-delta text-delta text-delta text-end finish-step finish [DONE]"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("frames %q\nwant %q", got, want)
	}
	if got := strings.Join(deltas, ""); got != "1 2 3 " {
		t.Errorf("deltas %q", got)
	}
	if !strings.Contains(frames[len(frames)-2], `{"type":"finish","finishReason":"stop"}`) {
		t.Errorf("finish frame %q", frames[len(frames)-2])
	}
}

func TestChatRejectsOtherText(t *testing.T) {
	body := `{"messages":[{"role":"user","parts":[{"type":"text","text":"hello"}]}]}`
	rec := httptest.NewRecorder()
	chat(rec, httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body)))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d", rec.Code)
	}
}

func TestNewID(t *testing.T) {
	id := newID()
	if len(id) != 36 || id[14] != '7' || strings.Count(id, "-") != 4 {
		t.Fatalf("newID() = %q, want a UUIDv7", id)
	}
}
