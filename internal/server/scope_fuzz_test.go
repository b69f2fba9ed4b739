package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/uiadapter"
)

// FuzzScopeCookie sends arbitrary Cookie and Authorization headers, to the
// page and to the API. The middleware never panics; it accepts a scope
// only from a cookie or an unexpired bearer token this key signed, each
// where it belongs; a bearer token it did not sign, or that has expired,
// is a 401; the page issues a fresh scope, never the one the client asked
// for; the API issues none (no credential: no history).
func FuzzScopeCookie(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	c := &cookieScope{key: []byte("fuzz key"), now: func() time.Time { return now }}
	valid := c.cookie("AAAAAAAAAAAAAAAAAAAAAA")
	token := c.bearer("AAAAAAAAAAAAAAAAAAAAAA", now.Add(time.Hour))
	expired := c.bearer("AAAAAAAAAAAAAAAAAAAAAA", now)
	for _, s := range []string{ScopeCookie + "=" + valid, ScopeCookie + "=" + valid + "x", ScopeCookie + "=.", ScopeCookie + `="a.b"`,
		ScopeCookie + "=" + valid + "; " + ScopeCookie + "=x.y", ScopeCookie + "=" + token, "x=y", ""} {
		f.Add(s, "", false)
		f.Add(s, "", true)
	}
	for _, auth := range []string{"Bearer " + token, "Bearer " + token + "x", "Bearer " + valid, "Bearer " + expired, "Basic abc"} {
		f.Add("", auth, true)
	}
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
			if _, _, err := c.verifyBearer(strings.TrimSpace(token)); err == nil {
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
			// Accepted: the request carried this scope, signed with the
			// key: a cookie without Authorization, or an unexpired token.
			scheme, tok, _ := strings.Cut(auth, " ")
			switch {
			case auth == "" && strings.Contains(cookie, c.cookie(got)):
			case strings.EqualFold(scheme, "Bearer"):
				if s, _, err := c.verifyBearer(strings.TrimSpace(tok)); err != nil || s != got {
					t.Fatalf("accepted scope %q from token %q", got, auth)
				}
			case auth != "" && !strings.EqualFold(scheme, "Bearer") && strings.Contains(cookie, c.cookie(got)):
			default:
				t.Fatalf("accepted scope %q from cookie %q, auth %q", got, cookie, auth)
			}
			return
		}
		if api || issued[0].Value != c.cookie(got) || strings.Contains(cookie+auth, got) {
			t.Fatalf("issued %q for scope %q (cookie %q, auth %q, api %v)", issued[0].Value, got, cookie, auth, api)
		}
	})
}
