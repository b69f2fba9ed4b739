package vercelai_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// metadataOf decodes a chunk's or a message's metadata.
func metadataOf(t *testing.T, v any) vercelai.Metadata {
	t.Helper()
	b, _ := json.Marshal(v)
	var md vercelai.Metadata
	if err := json.Unmarshal(b, &md); err != nil {
		t.Fatalf("metadata %s: %v", b, err)
	}
	return md
}

// A reply's metadata (creation time on start; usage, model and finish
// reason on finish) is what the stored conversation returns after a
// reload; a continuation's usage covers the whole message.
func TestMetadata(t *testing.T) {
	srv := storedChats(t)
	before := time.Now().UnixMilli()
	chunks := testutil.PostStream(t, srv.URL+"/api/chat", userBodyIn("m", "u1", "Hello there"))
	after := time.Now().UnixMilli()
	start, fin := metadataOf(t, chunks.Find("start")["messageMetadata"]), metadataOf(t, chunks.Find("finish")["messageMetadata"])
	if start.CreatedAt < before || start.CreatedAt > after {
		t.Fatalf("createdAt %d not in [%d, %d]", start.CreatedAt, before, after)
	}
	want := vercelai.Usage{InputTokens: 2, OutputTokens: 4, TotalTokens: 6}
	if fin.Usage == nil || *fin.Usage != want || fin.Model != demo.ModelName || fin.FinishReason != "stop" {
		t.Fatalf("finish metadata %+v", fin)
	}
	stored := conversation(t, srv.URL+"/api/chat/m")
	got := metadataOf(t, stored[1].Metadata)
	if got.CreatedAt != start.CreatedAt || *got.Usage != want || got.Model != fin.Model || got.FinishReason != "stop" {
		t.Fatalf("reloaded metadata %+v, live %+v %+v", got, start, fin)
	}

	// An approval pauses the reply; its continuation's finish counts the
	// whole message, as the reload does.
	chunks = testutil.PostStream(t, srv.URL+"/api/chat", userBodyIn("m2", "u1", "delete /tmp/x.txt"))
	paused := metadataOf(t, chunks.Find("finish")["messageMetadata"])
	chunks = testutil.PostStream(t, srv.URL+"/api/chat", approveBody("m2", "delete /tmp/x.txt", chunks))
	if _, ok := chunks.Find("start")["messageMetadata"]; ok {
		t.Fatal("a continuation resets the message's creation time")
	}
	whole := metadataOf(t, chunks.Find("finish")["messageMetadata"])
	stored = conversation(t, srv.URL+"/api/chat/m2")
	got = metadataOf(t, stored[1].Metadata)
	if paused.Usage == nil || whole.Usage == nil || whole.Usage.OutputTokens <= paused.Usage.OutputTokens || *got.Usage != *whole.Usage {
		t.Fatalf("paused %+v, continued %+v, reloaded %+v", paused.Usage, whole.Usage, got.Usage)
	}
}

// storedChats serves POST /api/chat and GET /api/chat/{id} over the demo
// loop, with history in memory.
func storedChats(t *testing.T, opts ...uiadapter.Option) *httptest.Server {
	loop := testutil.Must(agent.New(demo.New(), agent.WithTools(demo.Tools()...)))
	h := testutil.Must(vercelai.Handler(loop, append([]uiadapter.Option{uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope)}, opts...)...))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", h)
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(h, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { testutil.ShutdownNow(h) })
	return srv
}

func conversation(t *testing.T, url string) []vercelai.UIMessage {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msgs []vercelai.UIMessage
	if err := json.NewDecoder(resp.Body).Decode(&msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("conversation %v: %v", msgs, err)
	}
	return msgs
}

// The application's metadata (uiadapter.WithMetadata) goes out with the
// finish chunk next to agentui's fields, which keep their keys; a value
// that does not marshal is left out; the reload returns the same.
func TestAppMetadata(t *testing.T) {
	srv := storedChats(t, uiadapter.WithMetadata(func(r *http.Request, fin *agent.RunFinished) map[string]any {
		return map[string]any{
			"plan":  r.Header.Get("X-Plan"),
			"cost":  map[string]any{"tokens": fin.Usage.OutputTokens},
			"usage": "not the app's",
			"bad":   func() {},
		}
	}))

	chunks := testutil.PostStream(t, srv.URL+"/api/chat", userBodyIn("m", "u1", "Hello there"), "X-Plan", "pro")
	live := chunks.Find("finish")["messageMetadata"]
	stored := conversation(t, srv.URL+"/api/chat/m")[1].Metadata
	for name, raw := range map[string]any{"live": live, "reloaded": stored} {
		b, _ := json.Marshal(raw)
		var md map[string]json.RawMessage
		if err := json.Unmarshal(b, &md); err != nil {
			t.Fatal(err)
		}
		if string(md["plan"]) != `"pro"` || string(md["cost"]) != `{"tokens":4}` || string(md["model"]) != `"`+demo.ModelName+`"` {
			t.Errorf("%s metadata %s", name, b)
		}
		if _, ok := md["bad"]; ok || string(md["usage"]) == `"not the app's"` {
			t.Errorf("%s metadata %s: a bad value or a clobbered key", name, b)
		}
	}
}
