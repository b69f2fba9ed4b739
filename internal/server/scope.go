package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentui/agentui/limit"
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
	// mint bounds the scopes issued per client address (nil: no bound):
	// each new scope is a fresh budget under the per-scope rate limits.
	mint limit.Limiter
	log  *slog.Logger
}

type scopeKey struct{}

// middleware reads the request's credential, cookie or bearer token, and
// puts its scope in the request context. A request without one is issued
// a cookie when it is for the page (any route outside /api/ but the
// probes) or is a browser's API request (issues): a page served by
// another server (a Vite or Next.js dev server proxying /api) never loads
// agentui's page, and gets its scope on its first API call. Any other API
// request without a credential gets none, so a server-side client stays
// without history rather than start a new anonymous user on every call.
// A bearer token that does not verify is a 401, not a request without a
// credential; a client address over the minting bound gets 429.
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
		if !ok && issues(r) {
			if scope, ok = c.issue(w, r); !ok {
				return
			}
		}
		if ok {
			r = r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope))
		}
		next.ServeHTTP(w, r)
	})
}

// issues reports whether a request without a credential is issued a
// scope: a page route, or an API request a browser sent from this site.
// Browsers send Sec-Fetch-Site and Sec-Fetch-Dest with every request
// (Chromium, Firefox, Safari 16.4+); server-side runtimes do not (Node's
// fetch sends Sec-Fetch-Mode alone). A cross-site request is not issued
// one: its browser would not send a SameSite=Lax cookie back, so each of
// its requests would make a new scope.
func issues(r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz", "/readyz": // probes are not visitors
		return false
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return true
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "same-site", "none":
		return r.Header.Get("Sec-Fetch-Dest") != ""
	}
	return false
}

// issue makes a new anonymous scope and sets its cookie. Over the
// client address's minting bound it answers 429 itself and returns false.
func (c *cookieScope) issue(w http.ResponseWriter, r *http.Request) (string, bool) {
	if c.mint != nil {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		wait, err := c.mint.Allow(r.Context(), "mint:"+host)
		if err != nil {
			c.log.Warn("the scope minting limiter failed: the scope is issued unbounded", "error", err)
		} else if wait > 0 {
			secs := strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10)
			w.Header().Set("Retry-After", secs)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":"too many new visitors from this address: try again in ` + secs + ` s"}` + "\n"))
			return "", false
		}
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	scope := base64.RawURLEncoding.EncodeToString(id)
	http.SetCookie(w, &http.Cookie{
		Name: ScopeCookie, Value: c.token(scope), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: 400 * 24 * 3600,
	})
	return scope, true
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
		if scope, ok = c.issue(w, r); !ok {
			return
		}
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
