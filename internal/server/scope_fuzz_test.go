package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzScopeCookie sends arbitrary Cookie headers. The middleware never
// panics; it accepts a scope only from a cookie this key signed, and
// otherwise issues a fresh scope, never the one the client asked for.
func FuzzScopeCookie(f *testing.F) {
	c := &cookieScope{key: []byte("fuzz key")}
	valid := "AAAAAAAAAAAAAAAAAAAAAA." + c.sign("AAAAAAAAAAAAAAAAAAAAAA")
	for _, s := range []string{ScopeCookie + "=" + valid, ScopeCookie + "=" + valid + "x", ScopeCookie + "=.", ScopeCookie + `="a.b"`,
		ScopeCookie + "=" + valid + "; " + ScopeCookie + "=x.y", "x=y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		var got string
		h := c.middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			got, _ = c.scope(r)
		}))
		r := httptest.NewRequest("POST", "/api/chat", nil)
		r.Header.Set("Cookie", header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if len(got) != 22 {
			t.Fatalf("scope %q", got)
		}
		issued := w.Result().Cookies()
		if len(issued) == 0 {
			// Accepted: the request carried this scope, signed with the key.
			ck, err := r.Cookie(ScopeCookie)
			if err != nil || ck.Value != got+"."+c.sign(got) {
				t.Fatalf("accepted scope %q from %q", got, header)
			}
			return
		}
		if issued[0].Value != got+"."+c.sign(got) || strings.Contains(header, got) {
			t.Fatalf("issued %q for scope %q (header %q)", issued[0].Value, got, header)
		}
	})
}
