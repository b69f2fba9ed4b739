package uiadapter_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// threadStores are the stores the thread API is tested on.
func threadStores(t *testing.T) map[string]history.Store {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	return map[string]history.Store{"memory": history.NewMemory(), "redis": redisstore.New(rdb, redisstore.WithPrefix(prefix))}
}

func (f *historyFixture) chats(scope, query string) []uiadapter.ChatSummary {
	f.t.Helper()
	status, body := f.do(scope, http.MethodGet, "/api/chats"+query, "")
	if status != http.StatusOK {
		f.t.Fatalf("GET /api/chats%s as %s: %d %s", query, scope, status, body)
	}
	var out struct{ Chats []uiadapter.ChatSummary }
	if err := json.Unmarshal([]byte(body), &out); err != nil || out.Chats == nil {
		f.t.Fatalf("GET /api/chats: %s (%v)", body, err)
	}
	return out.Chats
}

// nextMillisecond waits for the clock's next millisecond, so that the
// next write lists as later (stores keep times in milliseconds).
func nextMillisecond() {
	for now := time.Now().UnixMilli(); time.Now().UnixMilli() == now; {
	}
}

func summary(chats []uiadapter.ChatSummary) string {
	var b strings.Builder
	for _, c := range chats {
		b.WriteString(c.ID + "=" + c.Title + ";")
	}
	return b.String()
}

// The thread API lists, renames and deletes a scope's chats, whichever
// protocol wrote them, and another scope sees none of it.
func TestThreadAPI(t *testing.T) {
	for name, store := range threadStores(t) {
		t.Run(name, func(t *testing.T) {
			f := newHistoryFixture(t, store)
			before := time.Now().Add(-time.Second)
			f.chat("alice", userBody("c1", "What is\nthe weather?"))
			nextMillisecond()
			f.chat("alice", userBody("c2", "hello"))
			nextMillisecond()
			testutil.PostStream(t, f.url+"/api/agui", testutil.AGUIInput("t1", "r1", "from AG-UI"), "X-Scope", "alice")
			nextMillisecond()
			f.chat("bob", userBody("b1", "bob's"))

			got := f.chats("alice", "")
			if summary(got) != "t1=from AG-UI;c2=hello;c1=What is the weather?;" {
				t.Fatalf("alice's chats: %+v", got)
			}
			for _, c := range got {
				if c.Messages != 2 || c.CreatedAt.Before(before) || c.UpdatedAt.Before(c.CreatedAt) {
					t.Fatalf("chat %+v", c)
				}
			}
			if got := f.chats("alice", "?limit=1"); summary(got) != "t1=from AG-UI;" {
				t.Fatalf("limit 1: %+v", got)
			}
			if got := f.chats("carol", ""); len(got) != 0 {
				t.Fatalf("carol's chats: %+v", got)
			}
			if got := f.chats("bob", ""); summary(got) != "b1=bob's;" {
				t.Fatalf("bob's chats: %+v", got)
			}

			// Rename.
			if status, body := f.do("bob", http.MethodPatch, "/api/chat/c1", `{"title":"mine now"}`); status != http.StatusNotFound {
				t.Fatalf("bob renaming alice's chat: %d %s", status, body)
			}
			if status, body := f.do("alice", http.MethodPatch, "/api/chat/c1", `{"title":"  Weather\tplans "}`); status != http.StatusNoContent {
				t.Fatalf("rename: %d %s", status, body)
			}
			if got := f.chats("alice", ""); summary(got) != "t1=from AG-UI;c2=hello;c1=Weather plans;" {
				t.Fatalf("after the rename (which does not reorder): %+v", got)
			}
			nextMillisecond()
			f.chat("alice", `{"id":"c1","trigger":"submit-message","messages":[{"id":"u2","role":"user","parts":[{"type":"text","text":"and tomorrow?"}]}]}`)
			if got := f.chats("alice", ""); summary(got) != "c1=Weather plans;t1=from AG-UI;c2=hello;" || got[0].Messages != 4 {
				t.Fatalf("after another turn in c1: %+v", got)
			}
			if status, _ := f.do("alice", http.MethodPatch, "/api/chat/c1", `{"title":""}`); status != http.StatusNoContent {
				t.Fatalf("rename to empty: %d", status)
			}
			if got := f.chats("alice", "?limit=1"); summary(got) != "c1=What is the weather?;" {
				t.Fatalf("an empty title goes back to the derived one: %+v", got)
			}

			// Delete.
			if status, _ := f.do("bob", http.MethodDelete, "/api/chat/c2", ""); status != http.StatusNotFound {
				t.Fatalf("bob deleting alice's chat: %d", status)
			}
			if status, body := f.do("alice", http.MethodDelete, "/api/chat/c2", ""); status != http.StatusNoContent || body != "" {
				t.Fatalf("delete: %d %q", status, body)
			}
			if status, _ := f.do("alice", http.MethodGet, "/api/chat/c2", ""); status != http.StatusNotFound {
				t.Fatalf("reload of a deleted chat: %d", status)
			}
			if status, _ := f.do("alice", http.MethodDelete, "/api/chat/c2", ""); status != http.StatusNotFound {
				t.Fatalf("deleting twice: %d", status)
			}
			if got := f.chats("alice", ""); summary(got) != "c1=What is the weather?;t1=from AG-UI;" {
				t.Fatalf("after the delete: %+v", got)
			}
			if got := f.chats("bob", ""); summary(got) != "b1=bob's;" {
				t.Fatalf("bob's chats after alice's changes: %+v", got)
			}
		})
	}
}

// A chat with a reply still being produced is not deleted from under it;
// stopped, it is.
func TestThreadAPIDeleteWhileRunning(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	resp := f.post("alice", userBody("busy", "think: wait 30000 ms"))
	defer resp.Body.Close()
	testutil.Eventually(t, 10*time.Second, "the run to hold the chat", func() bool {
		status, _ := f.do("alice", http.MethodDelete, "/api/chat/busy", "")
		return status == http.StatusConflict
	})
	if status, body := f.do("alice", http.MethodPost, "/api/chat/busy/stop", ""); status != http.StatusAccepted {
		t.Fatalf("stop: %d %s", status, body)
	}
	testutil.ParseChunks(t, resp.Body) // the stopped run ends and stores what it made
	testutil.Eventually(t, 10*time.Second, "the delete after the stop", func() bool {
		status, _ := f.do("alice", http.MethodDelete, "/api/chat/busy", "")
		return status == http.StatusNoContent
	})
	if got := f.chats("alice", ""); len(got) != 0 {
		t.Fatalf("after the delete: %+v", got)
	}
}

// Bad requests to the thread API are 4xx with a JSON error.
func TestThreadAPIRefusals(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	f.chat("alice", userBody("c1", "hello"))
	for _, c := range []struct {
		scope, method, path, body string
		status                    int
		error                     string
	}{
		{"", http.MethodGet, "/api/chats", "", 401, ""},
		{"banned", http.MethodGet, "/api/chats", "", 403, "forbidden"},
		{"alice", http.MethodGet, "/api/chats?limit=0", "", 400, "limit must be a number from 1 to 1000"},
		{"alice", http.MethodGet, "/api/chats?limit=x", "", 400, "limit must be a number from 1 to 1000"},
		{"alice", http.MethodGet, "/api/chats?limit=1001", "", 400, "limit must be a number from 1 to 1000"},
		{"alice", http.MethodPatch, "/api/chat/c1", `{"name":"x"}`, 400, `the body must be {"title": "…"}`},
		{"alice", http.MethodPatch, "/api/chat/c1", `{"title":5}`, 400, `the body must be {"title": "…"}`},
		{"alice", http.MethodPatch, "/api/chat/c1", `not json`, 400, `the body must be {"title": "…"}`},
		{"alice", http.MethodPatch, "/api/chat/c1", `{"title":"` + strings.Repeat("x", 101) + `"}`, 400, "the title is longer than 100 characters"},
		{"alice", http.MethodPatch, "/api/chat/c1", `{"title":"` + strings.Repeat("x", 5000) + `"}`, 413, "the request body is too large"},
		{"alice", http.MethodPatch, "/api/chat/nope", `{"title":"x"}`, 404, "no such chat"},
		{"alice", http.MethodDelete, "/api/chat/nope", "", 404, "no such chat"},
	} {
		status, body := f.do(c.scope, c.method, c.path, c.body)
		var e struct{ Error string }
		if status != c.status || json.Unmarshal([]byte(body), &e) != nil || c.error != "" && e.Error != c.error {
			t.Errorf("%s %s %.40s as %q: %d %s, want %d %q", c.method, c.path, c.body, c.scope, status, body, c.status, c.error)
		}
	}
	if got := f.chats("alice", ""); summary(got) != "c1=hello;" {
		t.Fatalf("after the refusals: %+v", got)
	}
}

// A request without a credential, when the scope function says so with
// ErrNoScope, is served without history: its own thread is the
// conversation, nothing is stored, no snapshot replaces its thread, and
// the conversation routes have nothing for it.
func TestNoScopeIsServedStatelessly(t *testing.T) {
	store := history.NewMemory()
	scope := func(r *http.Request) (string, error) {
		if s := r.Header.Get("X-Scope"); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("no header: %w", uiadapter.ErrNoScope)
	}
	loop := testutil.DemoLoop(t, nil)
	opts := []uiadapter.Option{uiadapter.WithStore(store), uiadapter.WithScope(scope), uiadapter.WithSecret([]byte(secret))}
	chat := testutil.Must(vercelai.Handler(loop, opts...))
	ag := testutil.Must(agui.Handler(loop, opts...))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("POST /api/agui", ag)
	mux.Handle("GET /api/chats", chat.ChatsHandler())
	mux.Handle("GET /api/chat/{id}", vercelai.ConversationHandler(chat, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { testutil.ShutdownNow(chat, ag) })

	// useChat: the earlier turn the client holds reaches the model.
	body := `{"id":"c","trigger":"submit-message","messages":[
		{"id":"u1","role":"user","parts":[{"type":"text","text":"my name is Ada"}]},
		{"id":"a1","role":"assistant","parts":[{"type":"text","text":"Hello Ada"}]},
		{"id":"u2","role":"user","parts":[{"type":"text","text":"/context"}]}]}`
	if got := testutil.PostStream(t, srv.URL+"/api/chat", body).Text(); !strings.Contains(got, "my name is Ada") || !strings.Contains(got, "Hello Ada") {
		t.Fatalf("the model did not see the client's thread: %s", got)
	}
	// AG-UI: a thread the server never saw is answered, not replaced.
	thread := `{"threadId":"t","runId":"r2","protocolVersion":"1.0","messages":[
		{"id":"u1","role":"user","content":"hi"},{"id":"a1","role":"assistant","content":"You said: hi"},
		{"id":"u2","role":"user","content":"hello"}]}`
	chunks := testutil.PostStream(t, srv.URL+"/api/agui", thread)
	if chunks.Find("MESSAGES_SNAPSHOT") != nil || chunks.Text() != "You said: hello" {
		t.Fatalf("AG-UI without a credential: %v", chunks)
	}
	if store.Len() != 0 {
		t.Fatalf("%d conversations were stored for requests without a credential", store.Len())
	}
	for _, path := range []string{"/api/chats", "/api/chat/c"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "no conversations are kept for a request without a credential") {
			t.Fatalf("GET %s without a credential: %d %s", path, resp.StatusCode, b)
		}
	}
	// With a credential the same handler keeps history.
	testutil.PostStream(t, srv.URL+"/api/chat", userBody("kept", "hello"), "X-Scope", "alice")
	if store.Len() != 1 {
		t.Fatalf("with a credential: %d conversations stored", store.Len())
	}
}
