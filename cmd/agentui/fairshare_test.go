package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/testkit/testutil"
)

// Two replicas on one Redis count a client address's runs together under
// -rate-limit, whatever scopes it mints: the address's bucket is the
// users' rate unless -address-rate-limit says otherwise, so 15 fresh
// tokens from one address, used on A and B in turn, start 5 runs under 5
// an hour, not 15. A token revoked on A is refused on B.
func TestTwoReplicasShareTheAddressBounds(t *testing.T) {
	t.Parallel()
	testutil.Eventually(t, 2*time.Minute, "a fresh hour window", func() bool {
		return time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)) > time.Minute
	})
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	args := []string{"-addr", "127.0.0.1:0", "-history", testutil.RedisURL(t), "-history-prefix", prefix,
		"-secret", "address bound test secret, 32 bytes or more", "-rate-limit", "5/h", "-demo-delay", "0s"}
	bin := testutil.BuildProgram(t, ".")
	a, b := testutil.RunBuilt(t, bin, nil, args...), testutil.RunBuilt(t, bin, nil, args...)
	token := func(url string) string {
		t.Helper()
		resp, err := http.Post(url+"/api/token", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var tok struct{ Token string }
		if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&tok) != nil {
			t.Fatalf("POST /api/token: %d", resp.StatusCode)
		}
		return tok.Token
	}
	do := func(method, url, auth, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	accepted := 0
	for i := range 15 {
		url := []string{a.URL, b.URL}[i%2]
		resp := do(http.MethodPost, url+"/api/chat", token(url), testutil.UserMessage("c"+strconv.Itoa(i), "u1", "hello"))
		switch resp.StatusCode {
		case http.StatusOK:
			accepted++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("run %d: %d", i, resp.StatusCode)
		}
	}
	if accepted != 5 {
		t.Fatalf("%d of 15 runs accepted from one address under -rate-limit 5/h on two replicas", accepted)
	}
	tok := token(a.URL)
	if resp := do(http.MethodDelete, a.URL+"/api/token", tok, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE /api/token on A: %d", resp.StatusCode)
	}
	if resp := do(http.MethodGet, b.URL+"/api/chats", tok, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the token revoked on A, on B: %d", resp.StatusCode)
	}
}
