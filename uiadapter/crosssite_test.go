package uiadapter_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// The routes that change state refuse a simple request from a page on
// another origin (Content-Type text/plain, which needs no preflight, with
// the user's credential): the reply keeps running, the chat keeps its
// title and stays. The same requests from the server's own page, from a
// client that is no browser, or from an origin CORS allows, go through.
func TestStateChangingRoutesRefuseCrossSite(t *testing.T) {
	f := newHistoryFixture(t, history.NewMemory())
	crossSite := []string{"Content-Type", "text/plain", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"}
	sameSite := []string{"Content-Type", "text/plain", "Origin", "http://other.localhost", "Sec-Fetch-Site", "same-site"}
	oldBrowser := []string{"Content-Type", "text/plain", "Origin", "http://evil.example"} // no Sec-Fetch-*

	f.chat("alice", testutil.UserMessage("c1", "m1", "hello"))
	running := bufio.NewReader(f.post("alice", testutil.UserMessage("c2", "m1", "think: wait 30000 ms")).Body)
	if _, err := running.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string][]string{"cross-site": crossSite, "same-site": sameSite, "old browser": oldBrowser} {
		for _, r := range []struct{ method, path, body string }{
			{http.MethodPost, "/api/chat/c2/stop", ""},
			{http.MethodPost, "/api/agui/c2/stop", ""},
			{http.MethodPatch, "/api/chat/c1", `{"title":"pwned"}`},
			{http.MethodDelete, "/api/chat/c1", ""},
		} {
			resp := f.send("alice", r.method, r.path, r.body, h...)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s %s: %d", name, r.method, r.path, resp.StatusCode)
			}
		}
	}
	if got := f.chats("alice", ""); len(got) != 2 || got[0].Title == "pwned" || got[1].Title == "pwned" {
		t.Fatalf("chats after the refused requests: %s", summary(got))
	}
	// Same origin (the browser says so), and a client that is no browser.
	if resp := f.send("alice", http.MethodPatch, "/api/chat/c1", `{"title":"Mine"}`, "Origin", f.url, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("same-origin rename: %d", resp.StatusCode)
	}
	if resp := f.send("alice", http.MethodPost, "/api/chat/c2/stop", "", "Content-Type", "text/plain"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("stop without Origin: %d", resp.StatusCode)
	}
	if rest := testutil.ParseChunks(t, running); rest[len(rest)-1]["type"] != "finish" {
		t.Fatalf("the stopped reply ended with %v", rest[len(rest)-1])
	}

	// An origin CORS allows may change state.
	h, err := edge.CORS(f.mux, "http://app.example")
	if err != nil {
		t.Fatal(err)
	}
	cors := httptest.NewServer(h)
	defer cors.Close()
	req, _ := http.NewRequest(http.MethodDelete, cors.URL+"/api/chat/c1", nil)
	req.Header.Set("X-Scope", "alice")
	req.Header.Set("Origin", "http://app.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete from an allowed origin: %d", resp.StatusCode)
	}
}

// RefuseCrossSite guards an app's own routes with the same rule.
func TestRefuseCrossSite(t *testing.T) {
	h := edge.RefuseCrossSite(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, c := range []struct {
		method string
		header []string
		status int
	}{
		{http.MethodPost, []string{"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"}, 403},
		{http.MethodPost, []string{"Origin", "http://evil.example"}, 403},
		{http.MethodPost, []string{"Sec-Fetch-Site", "same-origin"}, 204},
		{http.MethodPost, nil, 204},
		{http.MethodGet, []string{"Sec-Fetch-Site", "cross-site"}, 204},
	} {
		r := httptest.NewRequest(c.method, "http://api.example/api/token", nil)
		for i := 0; i < len(c.header); i += 2 {
			r.Header.Set(c.header[i], c.header[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.status {
			t.Errorf("%s %v: %d, want %d", c.method, c.header, w.Code, c.status)
		}
	}
}
