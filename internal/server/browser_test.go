package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/limit"
)

// browserHeaders are what Chromium sends with a page's fetch to its own
// origin (through a dev server's proxy, the origin is the dev server's).
var browserHeaders = []string{"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"}

// send makes a request with c and header pairs, and returns the response
// with its body read.
func send(t *testing.T, c *http.Client, method, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// A page served by another server (a dev server proxying /api) never
// loads agentui's page: its browser gets its scope with its first API
// request, and from then on its chats are kept (a reload, the list). A
// server-side client (Node's fetch sends Sec-Fetch-Mode alone) stays on
// the no-credential path, and so does a request from another site.
func TestBrowserGetsAScopeOnItsFirstAPIRequest(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s"})
	jar, _ := cookiejar.New(nil)
	page := &http.Client{Jar: jar}
	resp, body := send(t, page, http.MethodPost, ts.URL+"/api/chat", testutil.UserMessage("c1", "m1", "hello"), browserHeaders...)
	if resp.StatusCode != 200 || !strings.Contains(body, `"delta":"hello"`) || len(resp.Cookies()) != 1 || resp.Cookies()[0].Name != ScopeCookie {
		t.Fatalf("first API request: %d %v", resp.StatusCode, resp.Cookies())
	}
	if resp, body := send(t, page, http.MethodGet, ts.URL+"/api/chat/c1", "", browserHeaders...); resp.StatusCode != 200 || !strings.Contains(body, "You said: hello") || len(resp.Cookies()) != 0 {
		t.Fatalf("reload: %d %s (cookies %v)", resp.StatusCode, body, resp.Cookies())
	}
	if _, body := send(t, page, http.MethodGet, ts.URL+"/api/chats", "", browserHeaders...); !strings.Contains(body, `"id":"c1"`) {
		t.Fatalf("chats: %s", body)
	}
	for name, h := range map[string][]string{
		"server-side": {"Sec-Fetch-Mode", "cors"},
		"cross-site":  {"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"},
		"nothing":     nil,
	} {
		resp, body := send(t, http.DefaultClient, http.MethodPost, ts.URL+"/api/chat", testutil.UserMessage("c1", "m1", "hello"), h...)
		if resp.StatusCode != 200 || len(resp.Cookies()) != 0 || !strings.Contains(body, `"delta":"hello"`) {
			t.Fatalf("%s: %d %v", name, resp.StatusCode, resp.Cookies())
		}
		if resp, _ := send(t, http.DefaultClient, http.MethodGet, ts.URL+"/api/chats", "", h...); resp.StatusCode != 404 {
			t.Fatalf("%s: chats %d, want 404 (no history without a credential)", name, resp.StatusCode)
		}
	}
	// Probes are no visitors.
	if resp, _ := send(t, http.DefaultClient, http.MethodGet, ts.URL+"/healthz", ""); len(resp.Cookies()) != 0 {
		t.Fatalf("/healthz issued %v", resp.Cookies())
	}
}

// Issuing anonymous scopes is bounded per client address: page loads,
// browsers' API requests and POST /api/token count alike; over the bound
// a clear 429 with Retry-After, and nothing is issued. A client with a
// scope is not affected.
func TestScopeMintingIsBounded(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s", ScopeLimit: limit.Rate{N: 3, Per: time.Hour}})
	kept := browser(t, ts.URL)                                                                                    // 1
	if resp, _ := send(t, http.DefaultClient, http.MethodPost, ts.URL+"/api/token", ""); resp.StatusCode != 200 { // 2
		t.Fatalf("token: %d", resp.StatusCode)
	}
	if resp, _ := send(t, http.DefaultClient, http.MethodGet, ts.URL+"/api/chats", "", browserHeaders...); resp.StatusCode != 200 { // 3
		t.Fatalf("a browser's first API request: %d", resp.StatusCode)
	}
	for _, r := range []struct{ method, path string }{{"POST", "/api/token"}, {"GET", "/"}, {"GET", "/api/chats"}} {
		resp, body := send(t, http.DefaultClient, r.method, ts.URL+r.path, "", browserHeaders...)
		var e struct{ Error string }
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, "too many new visitors") || secs < 1 || len(resp.Cookies()) != 0 {
			t.Fatalf("%s %s over the bound: %d %q %s", r.method, r.path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if got := chat(t, kept, ts.URL, "c1", "m1", "hello"); !strings.Contains(got, `"delta":"hello"`) {
		t.Fatalf("a browser with its scope: %s", got)
	}
	// A server-side client without a credential mints nothing.
	if resp, _ := send(t, http.DefaultClient, http.MethodPost, ts.URL+"/api/chat", testutil.UserMessage("c2", "m1", "hi")); resp.StatusCode != 200 {
		t.Fatalf("no credential over the bound: %d", resp.StatusCode)
	}
}

// The state-changing routes refuse a simple cross-site request that
// carries the user's cookie (Content-Type text/plain, a foreign Origin):
// the reply goes on, no token is issued, the chat keeps its title and
// stays.
func TestCrossSiteRequestsChangeNothing(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s"})
	alice := browser(t, ts.URL)
	chat(t, alice, ts.URL, "c1", "m1", "hello")
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/chat", strings.NewReader(testutil.UserMessage("c2", "m1", "think: wait 30000 ms")))
	req.Header.Set("Content-Type", "application/json")
	running, err := alice.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Body.Close()
	br := bufio.NewReader(running.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	evil := []string{"Content-Type", "text/plain", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "empty"}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/chat/c2/stop", ""},
		{http.MethodPost, "/api/agui/c2/stop", ""},
		{http.MethodPost, "/api/token", ""},
		{http.MethodPatch, "/api/chat/c1", `{"title":"pwned"}`},
		{http.MethodDelete, "/api/chat/c1", ""},
	} {
		resp, body := send(t, alice, r.method, ts.URL+r.path, r.body, evil...)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"error"`) || strings.Contains(body, "token") {
			t.Errorf("%s %s cross-site: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
	if _, body := send(t, alice, http.MethodGet, ts.URL+"/api/chats", ""); !strings.Contains(body, `"id":"c1"`) || strings.Contains(body, "pwned") {
		t.Fatalf("chats after the cross-site requests: %s", body)
	}
	// The reply was not stopped: the page's own stop (same origin) stops it.
	if resp, _ := send(t, alice, http.MethodPost, ts.URL+"/api/chat/c2/stop", "", "Origin", ts.URL, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the page's own stop: %d", resp.StatusCode)
	}
	if rest := testutil.ParseChunks(t, br); rest[len(rest)-1]["type"] != "finish" {
		t.Fatalf("the stopped reply ended with %v", rest[len(rest)-1])
	}
}

// With AllowedHosts, a request for another Host (a rebound name) is
// refused with a JSON 403, whatever its Origin says; the probes answer
// any Host.
func TestAllowedHosts(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s", AllowedHosts: []string{"localhost", "127.0.0.1"}})
	port := ts.URL[strings.LastIndexByte(ts.URL, ':'):]
	for _, path := range []string{"/", "/api/chat"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(testutil.UserMessage("c1", "m1", "hello")))
		req.Host = "evil.example" + port
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://evil.example"+port)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), `"error":"this server does not answer to the host \"evil.example\"`) {
			t.Fatalf("%s for evil.example: %d %s", path, resp.StatusCode, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/healthz", nil)
	req.Host = "10.0.0.7" + port
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz by address: %v", err)
	}
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/api/chats", nil)
	req.Host = "localhost" + port
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Sec-Fetch-Dest", "empty")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("localhost: %v %v", err, resp.StatusCode)
	}
}

// A browser whose scope cookie no longer verifies (the server restarted
// without a fixed -secret) is given a new scope and told so: a cookie its
// page reads (agentui_scope_renewed) on the page load, and the
// Agentui-Scope header on an API request, so the page can say why the
// chats it had are gone rather than show an empty list without a word.
func TestARenewedScopeIsSaid(t *testing.T) {
	before := newTestServer(t, Config{})
	alice := browser(t, before.URL)
	chat(t, alice, before.URL, "c1", "m1", "hello")
	after := newTestServer(t, Config{}) // another random secret
	u, _ := url.Parse(before.URL)
	old := alice.Jar.Cookies(u)
	req, _ := http.NewRequest(http.MethodGet, after.URL+"/", nil)
	for _, c := range old {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var renewedCookie, scopeCookie bool
	for _, c := range resp.Cookies() {
		switch c.Name {
		case RenewedCookie:
			renewedCookie = c.Value == "1" && !c.HttpOnly && c.MaxAge > 0
		case ScopeCookie:
			scopeCookie = true
		}
	}
	if !renewedCookie || !scopeCookie {
		t.Fatalf("a page load with a stale cookie: %v", resp.Cookies())
	}
	// An API request a browser sends with the stale cookie: the header.
	hdr := append([]string{"Cookie", ScopeCookie + "=" + old[0].Value}, browserHeaders...)
	resp, _ = send(t, http.DefaultClient, http.MethodGet, after.URL+"/api/chats", "", hdr...)
	if resp.StatusCode != 200 || resp.Header.Get("Agentui-Scope") != "renewed" {
		t.Fatalf("an API request with a stale cookie: %d %q", resp.StatusCode, resp.Header.Get("Agentui-Scope"))
	}
	// A browser whose cookie verifies, or that had none, is not told.
	for _, h := range [][]string{browserHeaders, nil} {
		resp, _ = send(t, alice, http.MethodGet, before.URL+"/api/chats", "", h...)
		if resp.Header.Get("Agentui-Scope") != "" {
			t.Fatalf("told %q", resp.Header.Get("Agentui-Scope"))
		}
	}
	if resp, _ := send(t, http.DefaultClient, http.MethodGet, after.URL+"/", ""); len(resp.Cookies()) != 1 {
		t.Fatalf("a first visit: %v", resp.Cookies())
	}
}

// A page on another site that the server allows (-cors-origins) but whose
// browser does not send the scope cookie (two sites: localhost:5173 and
// 127.0.0.1:8080) is told in every response (Agentui-Scope: none, exposed
// to it), and the server logs why and what to do, once in a while per
// origin, not per request.
func TestCrossSitePagesWithoutAScopeAreWarned(t *testing.T) {
	logs := &testutil.LogBuffer{}
	ts := newTestServer(t, Config{Secret: "s", CORSOrigins: []string{"http://localhost:5173"}, Logger: testutil.Logger(logs)})
	hdr := []string{"Origin", "http://localhost:5173", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"}
	for i := range 3 {
		resp, body := send(t, http.DefaultClient, http.MethodPost, ts.URL+"/api/chat", testutil.UserMessage("c", "m"+strconv.Itoa(i), "hello"), hdr...)
		if resp.StatusCode != 200 || resp.Header.Get("Agentui-Scope") != "none" || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Agentui-Scope") {
			t.Fatalf("turn %d: %d %v %s", i, resp.StatusCode, resp.Header, body)
		}
	}
	if n := strings.Count(logs.String(), "a page on another site uses the API without a credential"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "origin=http://localhost:5173") {
		t.Fatalf("the log names no origin:\n%s", logs)
	}
	// Same site, or with a credential: no warning.
	tok := token(t, http.DefaultClient, ts.URL)
	resp, _ := send(t, http.DefaultClient, http.MethodGet, ts.URL+"/api/chats", "", append(hdr, "Authorization", "Bearer "+tok)...)
	if resp.Header.Get("Agentui-Scope") != "" {
		t.Fatalf("with a token: %q", resp.Header.Get("Agentui-Scope"))
	}
}
