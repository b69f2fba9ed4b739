package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/agentui/agentui/uiadapter"
)

// ScopeCookie names the cookie that scopes a browser's conversations.
const ScopeCookie = "agentui_scope"

// cookieScope gives every browser an anonymous scope: a cookie holding 128
// random bits and an HMAC of them, so a client cannot pick another
// browser's scope. It is HttpOnly (scripts cannot read it) and
// SameSite=Lax (other sites cannot post with it). A client that keeps no
// cookies (a server-side runtime, a script) may send the same value as
// "Authorization: Bearer <token>" (POST /api/token issues one); a request
// with neither is served without history (uiadapter.ErrNoScope).
type cookieScope struct {
	key []byte
}

type scopeKey struct{}

// middleware reads the request's credential, cookie or bearer token, and
// puts its scope in the request context. A request for the page (any
// route outside /api/) without one is issued a cookie; an API request
// without one gets none, so it stays without history rather than start a
// new anonymous user on every call. A bearer token that does not verify
// is a 401, not a request without a credential.
func (c *cookieScope) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok, bad := c.credential(r)
		if bad {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"the bearer token is not one this server issued"}` + "\n"))
			return
		}
		if !ok && !strings.HasPrefix(r.URL.Path, "/api/") {
			scope, ok = c.issue(w, r), true
		}
		if ok {
			r = r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope))
		}
		next.ServeHTTP(w, r)
	})
}

// issue makes a new anonymous scope and sets its cookie.
func (c *cookieScope) issue(w http.ResponseWriter, r *http.Request) string {
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	scope := base64.RawURLEncoding.EncodeToString(id)
	http.SetCookie(w, &http.Cookie{
		Name: ScopeCookie, Value: c.token(scope), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: 400 * 24 * 3600,
	})
	return scope
}

// token is a scope's credential, as cookie value or bearer token.
func (c *cookieScope) token(scope string) string { return scope + "." + c.sign(scope) }

// tokenHandler serves POST /api/token: {"token": "…"}, a bearer token for
// the request's scope (its cookie's or its token's), or for a new one
// when it has none. A browser page can hand its own to a server-side
// runtime that forwards Authorization; a script can start with one.
func (c *cookieScope) tokenHandler(w http.ResponseWriter, r *http.Request) {
	scope, ok := r.Context().Value(scopeKey{}).(string)
	if !ok {
		scope = c.issue(w, r)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(`{"token":"` + c.token(scope) + `"}` + "\n"))
}

func (c *cookieScope) sign(scope string) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte("agentui scope cookie\x00" + scope))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// credential reads the request's scope from its bearer token or, without
// one, its cookie. bad: it sent a bearer token that does not verify.
func (c *cookieScope) credential(r *http.Request) (scope string, ok, bad bool) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, token, _ := strings.Cut(auth, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return "", false, false // another scheme is not ours to judge
		}
		scope, ok = c.verify(strings.TrimSpace(token))
		return scope, ok, !ok
	}
	ck, err := r.Cookie(ScopeCookie)
	if err != nil {
		return "", false, false
	}
	scope, ok = c.verify(ck.Value)
	return scope, ok, false
}

// verify checks a token (cookie value or bearer token): <scope>.<HMAC>.
func (c *cookieScope) verify(token string) (string, bool) {
	scope, sig, ok := strings.Cut(token, ".")
	if !ok || len(scope) != 22 || !hmac.Equal([]byte(sig), []byte(c.sign(scope))) {
		return "", false
	}
	return scope, true
}

// scope is the uiadapter scope function: the middleware's scope, or
// uiadapter.ErrNoScope for a request without a credential.
func (c *cookieScope) scope(r *http.Request) (string, error) {
	if s, ok := r.Context().Value(scopeKey{}).(string); ok {
		return s, nil
	}
	return "", uiadapter.ErrNoScope
}
