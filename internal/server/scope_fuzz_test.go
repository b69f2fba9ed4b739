package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/uiadapter"
)

// FuzzScopeCookie sends arbitrary Cookie and Authorization headers, to the
// page and to the API. The middleware never panics; it accepts a scope
// only from a cookie or bearer token this key signed; a bearer token it
// did not sign is a 401; the page issues a fresh scope, never the one the
// client asked for; the API issues none (no credential: no history).
func FuzzScopeCookie(f *testing.F) {
	c := &cookieScope{key: []byte("fuzz key")}
	valid := c.token("AAAAAAAAAAAAAAAAAAAAAA")
	for _, s := range []string{ScopeCookie + "=" + valid, ScopeCookie + "=" + valid + "x", ScopeCookie + "=.", ScopeCookie + `="a.b"`,
		ScopeCookie + "=" + valid + "; " + ScopeCookie + "=x.y", "x=y", ""} {
		f.Add(s, "", false)
		f.Add(s, "", true)
	}
	f.Add("", "Bearer "+valid, true)
	f.Add("", "Bearer "+valid+"x", true)
	f.Add("", "Basic abc", false)
	f.Fuzz(func(t *testing.T, cookie, auth string, api bool) {
		var got string
		var gotErr error
		called := false
		h := c.middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			called = true
			got, gotErr = c.scope(r)
		}))
		path := "/"
		if api {
			path = "/api/chat"
		}
		r := httptest.NewRequest("POST", path, nil)
		r.Header.Set("Cookie", cookie)
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		issued := w.Result().Cookies()
		if !called {
			scheme, token, _ := strings.Cut(auth, " ")
			if w.Code != http.StatusUnauthorized || !strings.EqualFold(scheme, "Bearer") {
				t.Fatalf("refused %d without a bad bearer token (auth %q)", w.Code, auth)
			}
			if _, ok := c.verify(strings.TrimSpace(token)); ok {
				t.Fatalf("refused a valid token %q", auth)
			}
			return
		}
		if errors.Is(gotErr, uiadapter.ErrNoScope) {
			if !api || len(issued) != 0 {
				t.Fatalf("no scope for %s (cookies issued %v)", path, issued)
			}
			return
		}
		if len(got) != 22 {
			t.Fatalf("scope %q", got)
		}
		if len(issued) == 0 {
			// Accepted: the request carried this scope, signed with the key.
			if !strings.Contains(cookie+" "+auth, c.token(got)) {
				t.Fatalf("accepted scope %q from cookie %q, auth %q", got, cookie, auth)
			}
			return
		}
		if api || issued[0].Value != c.token(got) || strings.Contains(cookie+auth, got) {
			t.Fatalf("issued %q for scope %q (cookie %q, auth %q, api %v)", issued[0].Value, got, cookie, auth, api)
		}
	})
}
