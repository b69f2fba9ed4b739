package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

func newTestServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "demo"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); _ = s.Close() })
	return ts
}

// browser is a client with a cookie jar that has loaded the page at url,
// so it holds a scope cookie as a browser would: with, if given, the
// client c (which needs a jar).
func browser(t *testing.T, url string, with ...*http.Client) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if len(with) > 0 {
		c = with[0]
	}
	resp, err := c.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return c
}

func chat(t *testing.T, c *http.Client, url, chatID, msgID, text string) string {
	t.Helper()
	body := `{"id":"` + chatID + `","messages":[{"id":"` + msgID + `","role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
	resp, err := c.Post(url+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return strings.Join(testutil.ReadSSE(t, resp.Body), "\n")
}

func TestScopeCookie(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s"})
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == ScopeCookie {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" {
		t.Fatalf("cookie = %+v", ck)
	}
	id, _, _ := strings.Cut(ck.Value, ".")
	if len(id) != 22 { // 128 bits, base64url
		t.Fatalf("scope id %q", id)
	}

	alice, bob := browser(t, ts.URL), browser(t, ts.URL)
	chat(t, alice, ts.URL, "shared-id", "m1", "hello from alice")
	get := func(c *http.Client) int {
		resp, err := c.Get(ts.URL + "/api/chat/shared-id")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get(alice) != 200 || get(bob) != 404 {
		t.Fatalf("reload: alice %d, bob %d", get(alice), get(bob))
	}
	// A forged cookie is not a scope: the API sees no credential (and
	// issues none); the page issues a fresh one.
	for _, path := range []string{"/api/chat/shared-id", "/"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: ScopeCookie, Value: id + ".forged"})
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if api := path != "/"; api && (resp.StatusCode != 404 || len(resp.Cookies()) != 0) || !api && len(resp.Cookies()) == 0 {
			t.Fatalf("forged cookie, %s: %d, cookies %v", path, resp.StatusCode, resp.Cookies())
		}
	}
	// The same id with a valid signature is the same browser.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/chat/shared-id", nil)
	req.AddCookie(ck)
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatal("the healthz cookie's scope is not alice's; the chat must not be visible")
	}
}

// A client without cookies (a CopilotKit runtime, a script) either sends
// no credential, and is served without history from its own thread, or a
// bearer token from POST /api/token, and gets server-held history like
// the browser whose scope it names. A token the server did not sign is a
// 401.
func TestBearerTokenAndNoCredential(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s"})
	do := func(method, path, auth, body string) (*http.Response, string) {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	// No credential: the reply comes from the client's own thread, the
	// server keeps nothing and sets no cookie.
	thread := `{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"},
		{"id":"a1","role":"assistant","content":"You said: hi"},{"id":"u2","role":"user","content":"/context"}]}`
	resp, body := do(http.MethodPost, "/api/agui", "", thread)
	if resp.StatusCode != 200 || len(resp.Cookies()) != 0 || strings.Contains(body, "MESSAGES_SNAPSHOT") || !strings.Contains(body, `You said: hi`) {
		t.Fatalf("no credential: %d %v %s", resp.StatusCode, resp.Cookies(), body)
	}
	if resp, _ := do(http.MethodGet, "/api/chats", "", ""); resp.StatusCode != 404 {
		t.Fatalf("chats without a credential: %d", resp.StatusCode)
	}
	// A token: history across requests, as for a browser.
	resp, body = do(http.MethodPost, "/api/token", "", "")
	var tok struct{ Token string }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.Token == "" {
		t.Fatalf("POST /api/token: %d %s", resp.StatusCode, body)
	}
	bearer := "Bearer " + tok.Token
	if resp, body := do(http.MethodPost, "/api/agui", bearer, testutil.AGUIInput("t2", "r1", "hello")); resp.StatusCode != 200 || !strings.Contains(body, `"delta":"hello"`) || !strings.Contains(body, "RUN_FINISHED") {
		t.Fatalf("with a token: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(http.MethodGet, "/api/chats", bearer, ""); resp.StatusCode != 200 || !strings.Contains(body, `"id":"t2"`) {
		t.Fatalf("the token's chats: %d %s", resp.StatusCode, body)
	}
	// A browser hands its own scope to a runtime: the token names it.
	alice := browser(t, ts.URL)
	chat(t, alice, ts.URL, "from-the-page", "m1", "hello")
	r2, _ := alice.Post(ts.URL+"/api/token", "application/json", nil)
	_ = json.NewDecoder(r2.Body).Decode(&tok)
	r2.Body.Close()
	if resp, body := do(http.MethodGet, "/api/chats", "Bearer "+tok.Token, ""); !strings.Contains(body, `"id":"from-the-page"`) {
		t.Fatalf("the browser's token: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{"Bearer " + tok.Token + "x", "Bearer nonsense", "Bearer "} {
		if resp, body := do(http.MethodGet, "/api/chats", bad, ""); resp.StatusCode != 401 || !strings.Contains(body, "not one this server issued") {
			t.Fatalf("%q: %d %s", bad, resp.StatusCode, body)
		}
	}
}

func TestHistoryModes(t *testing.T) {
	for _, tc := range []struct {
		history, desc string
	}{
		{"", "memory"}, {"memory", "memory"}, {"none", "none"},
		{testutil.RedisURL(t), "redis "},
	} {
		s, err := New(Config{Model: "demo", History: tc.history})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.Description, "history "+tc.desc) {
			t.Errorf("%q: description %q", tc.history, s.Description)
		}
		_ = s.Close()
	}
	for _, bad := range []string{"mongodb://x", "redis://:bad port"} {
		if _, err := New(Config{Model: "demo", History: bad}); err == nil {
			t.Errorf("-history %q accepted", bad)
		}
	}
	// A cluster URL parses; with no cluster there, start-up fails saying
	// so (a Redis that does not answer is a configuration error).
	if _, err := New(Config{Model: "demo", History: "redis+cluster://127.0.0.1:7001,127.0.0.1:7002"}); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("cluster URL with no cluster: %v", err)
	}
}

// -history-ttl and -history-prefix reach the Redis store: a chat's keys
// carry the prefix and expire.
func TestRedisHistoryOptions(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ts := newTestServer(t, Config{History: testutil.RedisURL(t), HistoryTTL: time.Hour, HistoryPrefix: prefix})
	chat(t, browser(t, ts.URL), ts.URL, "ttl-chat", "m1", "hello")
	keys, err := rdb.Keys(context.Background(), prefix+"*ttl-chat*").Result()
	if err != nil || len(keys) < 3 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	for _, k := range keys {
		if strings.HasSuffix(k, ":lock") {
			continue // released
		}
		if ttl := rdb.PTTL(context.Background(), k).Val(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("%s: TTL %v", k, ttl)
		}
	}
	// TLS URLs parse too; with no server there, start-up says so.
	if _, err := New(Config{Model: "demo", History: "rediss://127.0.0.1:6390/0"}); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("rediss URL with no server: %v", err)
	}
}

func TestStatelessServerHasNoReload(t *testing.T) {
	ts := newTestServer(t, Config{History: "none"})
	c := browser(t, ts.URL)
	chat(t, c, ts.URL, "c", "m1", "hello")
	resp, err := c.Get(ts.URL + "/api/chat/c")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("reload without history: %d", resp.StatusCode)
	}
}

// go-redis's messages reach the server's log at WARN, not raw stderr.
func TestRedisLog(t *testing.T) {
	logs := &testutil.LogBuffer{}
	RedisLog{Logger: testutil.Logger(logs)}.Printf(context.Background(), "redis: failed to dial after %d attempts", 1)
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, `message="redis: failed to dial after 1 attempts"`) {
		t.Fatalf("logged %q", got)
	}
}

// With CORSOrigins the binary answers an allowed page's preflight and
// streams it a reply it may read; a foreign page gets 403. A bad origin
// fails at start-up.
func TestCORS(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s", CORSOrigins: []string{"http://localhost:5173"}})
	req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/api/chat", nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	for origin, want := range map[string]int{"http://localhost:5173": http.StatusOK, "http://localhost:6666": http.StatusForbidden} {
		req, _ = http.NewRequest(http.MethodPost, ts.URL+"/api/chat", strings.NewReader(`{"id":"c","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == http.StatusOK && (resp.Header.Get("Access-Control-Expose-Headers") != "Agentui-Run, X-Resumable-Stream-Id, Agentui-Scope" || !strings.Contains(string(body), "[DONE]")) {
			t.Fatalf("POST from %s: %d %v %s", origin, resp.StatusCode, resp.Header, body)
		}
	}
	if _, err := New(Config{Model: "demo", History: "none", CORSOrigins: []string{"*"}}); err == nil || !strings.Contains(err.Error(), `CORS origin "*"`) {
		t.Fatalf("a * origin: %v", err)
	}
}

// /readyz follows the store: 200 while Redis answers, 503 (logged once,
// not per probe) while it is down, 200 again once it is back; /healthz
// (liveness) stays 200 throughout.
func TestReadyz(t *testing.T) {
	rs := testutil.StartRedis(t)
	logs := &testutil.LogBuffer{}
	ts := newTestServer(t, Config{Secret: "s", History: "redis://" + rs.Addr, HistoryPrefix: testutil.KeyPrefix(), Logger: testutil.Logger(logs)})
	status := func(path string) int {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status("/readyz") != http.StatusOK {
		t.Fatal("not ready with Redis up")
	}
	rs.Stop()
	for range 3 {
		if got := status("/readyz"); got != http.StatusServiceUnavailable {
			t.Fatalf("readyz with Redis down: %d", got)
		}
	}
	if status("/healthz") != http.StatusOK {
		t.Fatal("healthz follows the store")
	}
	if n := strings.Count(logs.String(), "not ready"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs)
	}
	rs.Start()
	testutil.Eventually(t, 10*time.Second, "ready again", func() bool { return status("/readyz") == http.StatusOK })
}

// Serving a streaming request, decoding included, fits the 8 KiB stack a
// connection's goroutine starts with (see testdata/stackprobe).
func TestStreamFitsStartingStack(t *testing.T) {
	out, err := exec.Command("go", "run", "./testdata/stackprobe").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%v\n%.3000s", err, out)
	}
}
