package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
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
	(&server{}).chat(rec, httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body)))
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
	(&server{}).chat(rec, httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body)))
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

// flushes counts Flush calls.
type flushes struct {
	*httptest.ResponseRecorder
	n int
}

func (f *flushes) Flush() { f.n++; f.ResponseRecorder.Flush() }

// With -batch the frames are the same (the deltas' written by hand), in
// fewer flushes; AG-UI gets the events agentui sends.
func TestBatchedFrames(t *testing.T) {
	s := &server{batch: 32 << 10}
	body := `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"count to 1000"}]}]}`
	rec := &flushes{ResponseRecorder: httptest.NewRecorder()}
	s.chat(rec, httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body)))
	frames := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n")
	if want := (rec.Body.Len() + s.batch - 1) / s.batch; len(frames) != 1007 || rec.n != want { // a flush per full batch, one for the rest
		t.Fatalf("%d frames in %d flushes", len(frames), rec.n)
	}
	var c chunk
	if err := json.Unmarshal([]byte(strings.TrimPrefix(frames[1002], "data: ")), &c); err != nil || c != (chunk{Type: "text-delta", ID: c.ID, Delta: "1000 "}) || len(c.ID) != 36 {
		t.Fatalf("frame %q: %+v %v", frames[1002], c, err)
	}
	agui := `{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"count to 3"}]}`
	rec = &flushes{ResponseRecorder: httptest.NewRecorder()}
	s.agui(rec, httptest.NewRequest(http.MethodPost, "/api/agui", strings.NewReader(agui)))
	var types, deltas []string
	for _, f := range strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n") {
		var e aguiEvent
		if err := json.Unmarshal([]byte(strings.TrimPrefix(f, "data: ")), &e); err != nil || e.Timestamp == 0 {
			t.Fatalf("frame %q: %v", f, err)
		}
		types = append(types, e.Type)
		if e.Delta != "" {
			deltas = append(deltas, e.Delta)
		}
	}
	want := "RUN_STARTED STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED"
	if strings.Join(types, " ") != want || strings.Join(deltas, "") != "1 2 3 " || rec.n != 1 {
		t.Fatalf("types %v, deltas %v, %d flushes", types, deltas, rec.n)
	}
}

// "wait N ms" sends its first frames at once and holds the stream open
// until N ms pass or the client leaves, the idle stream S3 measures.
func TestWait(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc((&server{}).chat))
	defer srv.Close()
	post := func(ctx context.Context, text string) *http.Response {
		body := `{"messages":[{"role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(ctx, "wait 600000 ms")
	br := bufio.NewReader(resp.Body)
	for _, want := range []string{`"start"`, `"start-step"`} {
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("read %q, %v; want the %s frame while the server waits", line, err, want)
		}
		_, _ = br.ReadString('\n')
	}
	cancel()
	resp.Body.Close()

	resp = post(context.Background(), "wait 1 ms")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var types []string
	for _, f := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		var c chunk
		payload := strings.TrimPrefix(f, "data: ")
		if payload != "[DONE]" {
			if err := json.Unmarshal([]byte(payload), &c); err != nil {
				t.Fatal(err)
			}
			payload = c.Type
		}
		types = append(types, payload)
	}
	if want := "start start-step text-start text-delta text-end finish-step finish [DONE]"; strings.Join(types, " ") != want {
		t.Fatalf("frames %v", types)
	}
}
