package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/uiadapter"
)

// fromAddr is a client whose connections come from a loopback address of
// its own (127.0.0.n): a client address the server tells apart from the
// others, as it would other hosts.
func fromAddr(n int) *http.Client {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(n))}}
	return &http.Client{Jar: jar, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
}

// startServer runs the server behind a real listener, and on cleanup
// shuts its runs down.
func startServer(t *testing.T, cfg Config) string {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "demo"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer()
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = hs.Close()
		_ = s.Close()
	})
	return "http://" + ln.Addr().String()
}

// token mints a bearer token from c.
func token(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, body := send(t, c, http.MethodPost, url+"/api/token", "")
	var tok struct{ Token string }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.Token == "" {
		t.Fatalf("POST /api/token: %d %s", resp.StatusCode, body)
	}
	return tok.Token
}

// startRun posts a turn and reads its first event, leaving the reply
// running (with history it outlives the request); it returns the status.
func startRun(t *testing.T, c *http.Client, url, chat, text, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/api/chat", strings.NewReader(testutil.UserMessage(chat, "u1", text)))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	return resp.StatusCode, line
}

// One address that mints as many anonymous scopes as it may and starts
// every reply it is allowed cannot lock out anybody else: it holds its
// share of the process's runs (RunLimits.PerAddress), and visitors from
// 20 other addresses each get their reply while its replies go on. Before
// the per-address share, 32 tokens of 8 runs each filled the process's
// 256 places and every other visitor got 429.
func TestOneAddressCannotLockOthersOut(t *testing.T) {
	for _, mode := range []string{"memory", "redis"} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{Secret: "fair share test secret, 32 bytes or more", ScopeLimit: limit.Rate{N: 60, Per: time.Hour}}
			if mode == "redis" {
				rdb := testutil.Redis(t)
				cfg.History, cfg.HistoryPrefix = testutil.RedisURL(t), testutil.KeyPrefix()
				testutil.DeleteKeysOnCleanup(t, rdb, cfg.HistoryPrefix)
			}
			url := startServer(t, cfg)
			flood := fromAddr(1)
			flood.Jar = nil // it keeps no cookie: each token is a new scope
			var tokens []string
			for range 40 {
				tokens = append(tokens, token(t, flood, url))
			}
			var mu sync.Mutex
			accepted, refused := 0, map[string]int{}
			var wg sync.WaitGroup
			for i, tok := range tokens {
				for j := range uiadapter.DefaultRunsPerScope {
					wg.Go(func() {
						status, first := startRun(t, flood, url, fmt.Sprintf("flood-%d-%d", i, j), "wait 60000 ms", tok)
						mu.Lock()
						defer mu.Unlock()
						if status == http.StatusOK {
							accepted++
						} else {
							refused[fmt.Sprintf("%d %s", status, strings.TrimSpace(first))]++
						}
					})
				}
			}
			wg.Wait()
			t.Logf("the flooding address: %d runs accepted, refused %v", accepted, refused)
			if accepted != uiadapter.DefaultRunsPerAddress {
				t.Fatalf("the flooding address got %d runs going, want its share, %d", accepted, uiadapter.DefaultRunsPerAddress)
			}
			for why := range refused {
				if !strings.Contains(why, "429") || !strings.Contains(why, "your network address") {
					t.Fatalf("refused as %q, want a 429 naming the address's share", why)
				}
			}
			for v := range 20 {
				wg.Go(func() {
					c := fromAddr(2 + v)
					got := chat(t, browser(t, url, c), url, "visit", "u1", "hello")
					if !strings.Contains(got, `"delta":"hello"`) {
						t.Errorf("visitor %d: %s", v, got)
					}
				})
			}
			wg.Wait()
		})
	}
}

// Bearer tokens expire: a token used past its BearerTTL is a 401 that
// says so (and cannot renew itself); before that, POST /api/token with it
// renews it for the same scope.
func TestBearerTokensExpire(t *testing.T) {
	url := startServer(t, Config{Secret: "bearer test secret, 32 bytes or more", BearerTTL: 400 * time.Millisecond})
	alice := browser(t, url)
	chat(t, alice, url, "c1", "u1", "hello")
	resp, body := send(t, alice, http.MethodPost, url+"/api/token", "")
	var tok struct {
		Token     string
		ExpiresAt time.Time
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.ExpiresAt.IsZero() {
		t.Fatalf("POST /api/token: %d %s", resp.StatusCode, body)
	}
	if ttl := time.Until(tok.ExpiresAt); ttl <= 0 || ttl > 400*time.Millisecond {
		t.Fatalf("expiresAt %v is %v away", tok.ExpiresAt, ttl)
	}
	script := http.DefaultClient
	auth := []string{"Authorization", "Bearer " + tok.Token}
	// Renewed while valid, a moment later: a later expiry, the same chats.
	issued := time.Now()
	testutil.Eventually(t, time.Second, "a moment to pass", func() bool { return time.Since(issued) > 5*time.Millisecond })
	resp, body = send(t, script, http.MethodPost, url+"/api/token", "", auth...)
	var renewed struct {
		Token     string
		ExpiresAt time.Time
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &renewed) != nil || !renewed.ExpiresAt.After(tok.ExpiresAt) {
		t.Fatalf("renewing: %d %s", resp.StatusCode, body)
	}
	if resp, body := send(t, script, http.MethodGet, url+"/api/chats", "", "Authorization", "Bearer "+renewed.Token); resp.StatusCode != 200 || !strings.Contains(body, `"id":"c1"`) {
		t.Fatalf("the renewed token's chats: %d %s", resp.StatusCode, body)
	}
	testutil.Eventually(t, 10*time.Second, "the first token to expire", func() bool {
		resp, _ := send(t, script, http.MethodGet, url+"/api/chats", "", auth...)
		return resp.StatusCode == http.StatusUnauthorized
	})
	for _, r := range []struct{ method, path string }{{"GET", "/api/chats"}, {"POST", "/api/token"}, {"POST", "/api/chat"}} {
		resp, body := send(t, script, r.method, url+r.path, "", auth...)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "expired") || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "expired") {
			t.Fatalf("%s %s with an expired token: %d %q %s", r.method, r.path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	// The browser's cookie does not expire with the tokens it was given.
	if got := chat(t, alice, url, "c2", "u1", "still here"); !strings.Contains(got, `"delta":"here"`) {
		t.Fatalf("the browser after its token expired: %s", got)
	}
}

// DELETE /api/token revokes every bearer token of its scope issued until
// then; tokens issued afterwards, and the browser's cookie, still work.
// A cookie value is not a bearer token, nor a token a cookie.
func TestBearerTokensCanBeRevoked(t *testing.T) {
	for _, mode := range []string{"memory", "redis"} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{Secret: "revocation test secret, 32 bytes or more"}
			if mode == "redis" {
				rdb := testutil.Redis(t)
				cfg.History, cfg.HistoryPrefix = testutil.RedisURL(t), testutil.KeyPrefix()
				testutil.DeleteKeysOnCleanup(t, rdb, cfg.HistoryPrefix)
			}
			url := startServer(t, cfg)
			alice := browser(t, url)
			first, second := token(t, alice, url), token(t, alice, url)
			status := func(tok string) int {
				resp, _ := send(t, http.DefaultClient, http.MethodGet, url+"/api/chats", "", "Authorization", "Bearer "+tok)
				return resp.StatusCode
			}
			if status(first) != 200 || status(second) != 200 {
				t.Fatal("fresh tokens refused")
			}
			if resp, body := send(t, http.DefaultClient, http.MethodDelete, url+"/api/token", "", "Authorization", "Bearer "+first); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE /api/token: %d %s", resp.StatusCode, body)
			}
			for _, tok := range []string{first, second} {
				resp, body := send(t, http.DefaultClient, http.MethodGet, url+"/api/chats", "", "Authorization", "Bearer "+tok)
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
					t.Fatalf("a revoked token: %d %s", resp.StatusCode, body)
				}
			}
			third := token(t, alice, url)
			if status(third) != 200 {
				t.Fatal("a token issued after the revocation is refused")
			}
			if resp, _ := send(t, alice, http.MethodGet, url+"/api/chats", ""); resp.StatusCode != 200 {
				t.Fatalf("the cookie after a revocation: %d", resp.StatusCode)
			}
			if resp, body := send(t, alice, http.MethodDelete, url+"/api/token", ""); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("DELETE /api/token without a bearer token: %d %s", resp.StatusCode, body)
			}
			// A cookie's value sent as a bearer token is not one.
			u, _ := neturl.Parse(url)
			var cookie string
			for _, c := range alice.Jar.Cookies(u) {
				if c.Name == ScopeCookie {
					cookie = c.Value
				}
			}
			if cookie == "" || status(cookie) != http.StatusUnauthorized {
				t.Fatalf("the cookie's value as a bearer token: %d", status(cookie))
			}
			resp, _ := send(t, http.DefaultClient, http.MethodGet, url+"/api/chats", "", "Cookie", ScopeCookie+"="+third)
			if resp.StatusCode == 200 {
				t.Fatal("a bearer token taken as a cookie")
			}
		})
	}
}

// Anonymous scopes do not multiply the rate limit: with the address's
// bucket at the users' rate, one address that mints 15 scopes starts 5
// runs under 5 a window, not 15.
func TestMintingDoesNotMultiplyTheRateLimit(t *testing.T) {
	testutil.Eventually(t, 2*time.Minute, "a fresh hour window", func() bool {
		return time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)) > time.Minute
	})
	rate := limit.Rate{N: 5, Per: time.Hour}
	url := startServer(t, Config{Secret: "rate test secret, 32 bytes or more", Limits: limit.Limits{Runs: rate}, AddressLimits: limit.Limits{Runs: rate}})
	mallory := fromAddr(1)
	mallory.Jar = nil
	accepted := 0
	for i := range 15 {
		if status, _ := startRun(t, mallory, url, fmt.Sprint("c", i), "hello", token(t, mallory, url)); status == 200 {
			accepted++
		}
	}
	if accepted != 5 {
		t.Fatalf("%d of 15 runs accepted from one address under 5 an hour", accepted)
	}
	// Another address has its own bucket.
	if status, _ := startRun(t, fromAddr(2), url, "other", "hello", token(t, fromAddr(2), url)); status != 200 {
		t.Fatalf("another address: %d", status)
	}
}
