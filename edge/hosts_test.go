package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/edge"
)

// A request whose Host is not allowed (a page on a rebound name) is
// refused with a JSON 403 before it reaches anything; allowed names pass
// on any port, or on theirs only when the entry names one.
func TestAllowHosts(t *testing.T) {
	served := 0
	h, err := edge.AllowHosts(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }),
		append(edge.LoopbackHosts, "Chat.Example.com", "admin.example.com:8443", "*.apps.example.com", "[fe80::1]:9000")...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		host   string
		status int
	}{
		{"127.0.0.1:8080", 200}, {"localhost:8080", 200}, {"LOCALHOST.:1", 200}, {"[::1]:8080", 200}, {"localhost", 200},
		{"chat.example.com", 200}, {"chat.example.com:443", 200}, {"admin.example.com:8443", 200}, {"a.b.apps.example.com:1", 200}, {"[fe80::1]:9000", 200},
		{"evil.example:8080", 403}, {"admin.example.com:8080", 403}, {"apps.example.com", 403}, {"xapps.example.com", 403},
		{"127.0.0.2:8080", 403}, {"localhost.evil.example", 403}, {"[fe80::1]:9001", 403},
		// An entry with a port wants that port: a Host without one is
		// another (the scheme's default).
		{"admin.example.com", 403}, {"[fe80::1]", 403}, {"fe80::1", 403},
		{"a b", 400}, {"x:y", 400}, {"user@localhost", 400}, {"[::1", 400}, {"localhost:99999", 400},
	} {
		before := served
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/chat", strings.NewReader("{}"))
		req.Host = c.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.status && !(c.status == 200 && resp.StatusCode == 200) {
			t.Errorf("Host %q: %d, want %d", c.host, resp.StatusCode, c.status)
		}
		if (c.status == 200) != (served > before) {
			t.Errorf("Host %q: served %v", c.host, served > before)
		}
		if c.status != 200 && (resp.Header.Get("Content-Type") != "application/json" || body.Error == "") {
			t.Errorf("Host %q: no JSON error (%q)", c.host, body.Error)
		}
	}
}

// Entries that are not hosts fail at start-up; "*" checks nothing.
func TestAllowHostsConfiguration(t *testing.T) {
	next := http.NotFoundHandler()
	for _, hosts := range [][]string{nil, {""}, {"http://x"}, {"x/y"}, {"*.10.0.0.1"}, {"a..b"}, {"x:0"}} {
		if _, err := edge.AllowHosts(next, hosts...); err == nil || !strings.HasPrefix(err.Error(), "edge: ") {
			t.Errorf("%q: %v", hosts, err)
		}
	}
	h, err := edge.AllowHosts(next, "localhost", "*")
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://anything.example/", nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf(`"*": %d`, w.Code)
	}
}

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.": "example.com|", "example.com:80": "example.com|80", "[::1]:8080": "::1|8080", "::1": "::1|",
		"[0:0::1]": "::1|", "127.0.0.1:1": "127.0.0.1|1", "my_host": "my_host|",
	} {
		h, p, ok := edge.NormalizeHost(in)
		if got := h + "|" + p; !ok || got != want {
			t.Errorf("NormalizeHost(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ":80", "example.com:", "example.com:080", "example.com:65536", "[127.0.0.1]", "[::1]x", "[::1]:", "fe80::1%eth0", "é.example", "a..b", ".", "x:1:2"} {
		if h, p, ok := edge.NormalizeHost(in); ok {
			t.Errorf("NormalizeHost(%q) = %q %q, want not ok", in, h, p)
		}
	}
}

// Normalizing is idempotent, and what it accepts is a host an allowlist
// can hold and a URL can carry.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"localhost:8080", "[::1]:80", "Example.COM.", "127.0.0.1", "::ffff:1.2.3.4", "a_b.c", "x:y", "[::1", "%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, port, ok := edge.NormalizeHost(s)
		if !ok {
			return
		}
		again := host
		if strings.Contains(host, ":") {
			again = "[" + host + "]"
		}
		if port != "" {
			again += ":" + port
		}
		h2, p2, ok2 := edge.NormalizeHost(again)
		if !ok2 || h2 != host || p2 != port {
			t.Fatalf("%q → %q %q → %q %q %v", s, host, port, h2, p2, ok2)
		}
		if strings.ContainsAny(host, "/@?#% \t\r\n[]") || host != strings.ToLower(host) {
			t.Fatalf("%q → host %q", s, host)
		}
	})
}
