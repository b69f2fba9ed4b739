package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/edge"
)

func corsServer(t *testing.T, origins ...string) (*httptest.Server, *int) {
	t.Helper()
	served := new(int)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*served++
		w.Header().Set(edge.RunHeader, "r1")
		_, _ = w.Write([]byte("ok"))
	})
	h, err := edge.CORS(next, origins...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, served
}

func corsRequest(t *testing.T, method, url string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// A preflight from an allowed origin is answered (with credentials
// allowed and the headers the browser asked for); one from any other
// origin is refused and reaches nothing.
func TestCORSPreflight(t *testing.T) {
	srv, served := corsServer(t, "https://app.example.com", "http://localhost:5173")
	resp := corsRequest(t, http.MethodOptions, srv.URL+"/api/chat", "Origin", "https://app.example.com",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type,authorization")
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		h.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		h.Get("Access-Control-Allow-Headers") != "content-type,authorization" || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
		t.Fatalf("allowed preflight: %d %v", resp.StatusCode, h)
	}
	for _, origin := range []string{"https://evil.example", "https://app.example.com.evil.example", "null"} {
		resp = corsRequest(t, http.MethodOptions, srv.URL+"/api/chat", "Origin", origin, "Access-Control-Request-Method", "POST")
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("preflight from %s: %d %v", origin, resp.StatusCode, resp.Header)
		}
		var body struct{ Error string }
		if json.NewDecoder(resp.Body).Decode(&body) != nil || body.Error == "" {
			t.Fatalf("preflight from %s: no JSON error", origin)
		}
	}
	if *served != 0 {
		t.Fatalf("preflights reached the handler %d times", *served)
	}
}

// Requests: an allowed origin's are served with credentials allowed and
// the run header exposed; same-origin requests and requests without an
// Origin (curl, servers) pass untouched; another origin's are refused
// before they run anything.
func TestCORSRequests(t *testing.T) {
	srv, served := corsServer(t, "https://app.example.com")
	resp := corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", "https://app.example.com")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		resp.Header.Get("Access-Control-Allow-Credentials") != "true" || resp.Header.Get("Access-Control-Expose-Headers") != edge.RunHeader+", "+edge.StreamIDHeader+", "+edge.ScopeHeader {
		t.Fatalf("allowed: %d %v", resp.StatusCode, resp.Header)
	}
	for _, origin := range []string{"", srv.URL} {
		resp = corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", origin)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("origin %q: %d %v", origin, resp.StatusCode, resp.Header)
		}
	}
	before := *served
	resp = corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden || *served != before {
		t.Fatalf("foreign origin: %d, served %d", resp.StatusCode, *served-before)
	}
}

// Bad origins fail at start-up with one clear error.
func TestCORSConfiguration(t *testing.T) {
	next := http.NotFoundHandler()
	for _, origins := range [][]string{{"*"}, {"app.example.com"}, {"https://app.example.com/path"}, {"ftp://x"}, {"https://u@x"}, nil} {
		if _, err := edge.CORS(next, origins...); err == nil || !strings.HasPrefix(err.Error(), "edge: CORS") {
			t.Errorf("%q: %v", origins, err)
		}
	}
	if _, err := edge.CORS(next, "https://app.example.com/", "http://127.0.0.1:3000"); err != nil {
		t.Error(err)
	}
}

// The same-origin test compares the scheme: a page on http://host is
// another origin than the server on https://host (here: a TLS-terminating
// proxy in front says so), and is refused.
func TestCORSSameOriginComparesScheme(t *testing.T) {
	srv, served := corsServer(t, "https://app.example.com")
	host := strings.TrimPrefix(srv.URL, "http://")
	if resp := corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", "https://"+host); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("https page, http server: %d", resp.StatusCode)
	}
	if resp := corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", "https://"+host, "X-Forwarded-Proto", "https"); resp.StatusCode != http.StatusOK {
		t.Fatalf("https page, https behind a proxy: %d", resp.StatusCode)
	}
	if resp := corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", "http://"+host, "X-Forwarded-Proto", "https"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("http page, https behind a proxy: %d", resp.StatusCode)
	}
	// The browser's own word wins where it gives it.
	if resp := corsRequest(t, http.MethodPost, srv.URL+"/api/chat", "Origin", "https://"+host, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != http.StatusOK {
		t.Fatalf("Sec-Fetch-Site same-origin: %d", resp.StatusCode)
	}
	if *served != 2 {
		t.Fatalf("served %d", *served)
	}
}
