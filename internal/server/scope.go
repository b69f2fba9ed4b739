package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
)

// ScopeCookie names the cookie that scopes a browser's conversations.
const ScopeCookie = "agentui_scope"

// cookieScope gives every browser an anonymous scope: a cookie holding 128
// random bits and an HMAC of them, so a client cannot pick another
// browser's scope. It is HttpOnly (scripts cannot read it) and
// SameSite=Lax (other sites cannot post with it).
type cookieScope struct {
	key []byte
}

type scopeKey struct{}

// middleware issues the cookie on the first request of any route and puts
// the scope in the request context.
func (c *cookieScope) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := c.verify(r)
		if !ok {
			id := make([]byte, 16)
			_, _ = rand.Read(id)
			scope = base64.RawURLEncoding.EncodeToString(id)
			http.SetCookie(w, &http.Cookie{
				Name: ScopeCookie, Value: scope + "." + c.sign(scope), Path: "/",
				HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: 400 * 24 * 3600,
			})
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope)))
	})
}

func (c *cookieScope) sign(scope string) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte("agentui scope cookie\x00" + scope))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (c *cookieScope) verify(r *http.Request) (string, bool) {
	ck, err := r.Cookie(ScopeCookie)
	if err != nil {
		return "", false
	}
	scope, sig, ok := strings.Cut(ck.Value, ".")
	if !ok || len(scope) != 22 || !hmac.Equal([]byte(sig), []byte(c.sign(scope))) {
		return "", false
	}
	return scope, true
}

// scope is the uiadapter scope function: the middleware's scope.
func (c *cookieScope) scope(r *http.Request) (string, error) {
	if s, ok := r.Context().Value(scopeKey{}).(string); ok {
		return s, nil
	}
	return "", errors.New("no scope cookie")
}
