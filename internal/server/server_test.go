package server

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/testutil"
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

func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
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
	resp, err := http.Get(ts.URL + "/healthz")
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

	alice, bob := browser(t), browser(t)
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
	// A forged cookie is not a scope: the request gets a fresh one.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/chat/shared-id", nil)
	req.AddCookie(&http.Cookie{Name: ScopeCookie, Value: id + ".forged"})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || len(resp.Cookies()) == 0 {
		t.Fatalf("forged cookie: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	// The same id with a valid signature is the same browser.
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/api/chat/shared-id", nil)
	req.AddCookie(ck)
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatal("the healthz cookie's scope is not alice's; the chat must not be visible")
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
	s, err := New(Config{Model: "demo", History: "redis+cluster://127.0.0.1:7001,127.0.0.1:7002"})
	if err != nil || !strings.Contains(s.Description, "redis cluster 127.0.0.1:7001,127.0.0.1:7002") {
		t.Fatalf("cluster URL: %v %v", s, err)
	}
	_ = s.Close()
}

func TestStatelessServerHasNoReload(t *testing.T) {
	ts := newTestServer(t, Config{History: "none"})
	c := browser(t)
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
