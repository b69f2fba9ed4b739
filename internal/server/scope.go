package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/uiadapter"
)

// ScopeCookie names the cookie that scopes a browser's conversations.
const ScopeCookie = "agentui_scope"

// DefaultBearerTTL is how long a bearer token from POST /api/token is
// valid.
const DefaultBearerTTL = 24 * time.Hour

// cookieScope gives every browser an anonymous scope: a cookie holding 128
// random bits and an HMAC of them, so a client cannot pick another
// browser's scope. It is HttpOnly (scripts cannot read it) and
// SameSite=Lax (other sites cannot post with it). A client that keeps no
// cookies (a server-side runtime, a script) sends "Authorization: Bearer
// <token>" instead: POST /api/token issues one for the request's scope,
// valid for bearerTTL, and DELETE /api/token revokes every token of the
// scope issued so far. A request with neither is served without history
// (uiadapter.ErrNoScope).
type cookieScope struct {
	key []byte
	// mint bounds the scopes issued per client address (nil: no bound).
	mint limit.Limiter
	// addr is the client address minting is counted under.
	addr      limit.ClientAddr
	bearerTTL time.Duration
	revoked   revocations
	now       func() time.Time
	log       *slog.Logger
	warnMu    sync.Mutex
	warned    map[string]time.Time // origins warned about (warnCrossSite), when
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
// A bearer token that does not verify, has expired or was revoked is a
// 401, not a request without a credential; a client address over the
// minting bound gets 429.
func (c *cookieScope) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok, err := c.credential(r)
		if err != nil {
			c.refuse(w, err)
			return
		}
		if !ok && issues(r) {
			if scope, ok = c.issue(w, r); !ok {
				return
			}
			if _, err := r.Cookie(ScopeCookie); err == nil {
				renewed(w, r)
			}
		}
		if !ok && crossSiteWithoutScope(r) {
			c.warnCrossSite(w, r)
		}
		if ok {
			r = r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope))
		}
		next.ServeHTTP(w, r)
	})
}

// RenewedCookie is set, for a minute and readable by the page's scripts,
// when a browser's scope cookie did not verify and it was given a new
// scope: the server no longer knows it (it restarted without a fixed
// -secret, or its secret changed), so the chats it had are not listed.
// The page says so instead of showing an empty list without a word. API
// responses say the same in edge.ScopeHeader ("renewed").
const RenewedCookie = "agentui_scope_renewed"

// renewed tells the browser its scope was renewed.
func renewed(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: RenewedCookie, Value: "1", Path: "/", MaxAge: 60, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	w.Header().Set(edge.ScopeHeader, "renewed")
}

// crossSiteWithoutScope reports whether r is a browser's API request from
// a page on another site, with no credential: its chats cannot be kept
// (a SameSite=Lax cookie does not travel across sites), and each of its
// turns is served without history.
func crossSiteWithoutScope(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") && r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.Header.Get("Origin") != ""
}

// crossSiteWarnEvery is how often the warning about an origin is logged.
const crossSiteWarnEvery = 10 * time.Minute

// warnCrossSite says, in a response header every time and in the log
// once in a while per origin, that a page on another site is using the
// API without a credential: the pairing the page's developer meant to
// keep history (the page on localhost:5173, the API on 127.0.0.1:8080)
// is two sites, and nothing is kept.
func (c *cookieScope) warnCrossSite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(edge.ScopeHeader, "none")
	origin := r.Header.Get("Origin")
	now := c.clock()
	c.warnMu.Lock()
	last, seen := c.warned[origin]
	if !seen || now.Sub(last) >= crossSiteWarnEvery {
		if c.warned == nil || len(c.warned) >= 1024 {
			c.warned = map[string]time.Time{}
		}
		c.warned[origin] = now
	}
	c.warnMu.Unlock()
	if !seen || now.Sub(last) >= crossSiteWarnEvery {
		c.log.Warn("a page on another site uses the API without a credential: its chats are not kept. The browser does not send the scope cookie across sites: serve the page and the API from one site (localhost and localhost, not localhost and 127.0.0.1), proxy /api through the page's server, or send a bearer token from POST /api/token", "origin", origin)
	}
}

// Why a bearer token is refused.
var (
	errBadToken     = errors.New("the bearer token is not one this server issued")
	errExpiredToken = errors.New("the bearer token has expired: get a new one from POST /api/token")
	errRevokedToken = errors.New("the bearer token was revoked")
)

// refuse answers a request whose credential is refused: 401 for a token
// that is bad, expired or revoked, 503 when revocations cannot be read.
func (c *cookieScope) refuse(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	msg, status := err.Error(), http.StatusUnauthorized
	switch {
	case errors.Is(err, errBadToken), errors.Is(err, errRevokedToken):
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	case errors.Is(err, errExpiredToken):
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="expired"`)
	default:
		c.log.Warn("bearer token revocations cannot be read", "error", err)
		msg, status = "credentials cannot be checked right now; try again", http.StatusServiceUnavailable
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"error":"` + msg + `"}` + "\n"))
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
		wait, err := c.mint.Allow(r.Context(), "mint:"+c.addr(r))
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
		Name: ScopeCookie, Value: c.cookie(scope), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: 400 * 24 * 3600,
	})
	return scope, true
}

// cookie is a scope's cookie value: <scope>.<HMAC>.
func (c *cookieScope) cookie(scope string) string {
	return scope + "." + c.sign("agentui scope cookie\x00"+scope)
}

// bearer is a bearer token for scope that expires at exp:
// <scope>.<exp, Unix milliseconds>.<HMAC>. A token is not a cookie value,
// nor the reverse: each verifies only where it is sent.
func (c *cookieScope) bearer(scope string, exp time.Time) string {
	e := strconv.FormatInt(exp.UnixMilli(), 10)
	return scope + "." + e + "." + c.sign("agentui bearer token\x00"+scope+"\x00"+e)
}

func (c *cookieScope) sign(what string) string {
	mac := hmac.New(sha256.New, c.key)
	mac.Write([]byte(what))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (c *cookieScope) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// tokenHandler serves POST /api/token: {"token": "…", "expiresAt": "…"},
// a bearer token for the request's scope (its cookie's or its token's:
// a client renews its token with it), or for a new one when it has none.
// A browser page can hand its own to a server-side runtime that forwards
// Authorization; a script can start with one.
func (c *cookieScope) tokenHandler(w http.ResponseWriter, r *http.Request) {
	scope, ok := r.Context().Value(scopeKey{}).(string)
	if !ok {
		if scope, ok = c.issue(w, r); !ok {
			return
		}
	}
	exp := c.clock().Add(c.bearerTTL).Truncate(time.Millisecond)
	if c.revoked != nil {
		// A token issued in the millisecond of a revocation would expire
		// at its cutoff, and count as revoked: it expires a little later.
		for range 3 {
			revoked, err := c.revoked.isRevoked(r.Context(), scope, exp)
			if err != nil {
				c.refuse(w, err)
				return
			}
			if !revoked {
				break
			}
			exp = exp.Add(time.Millisecond)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(`{"token":"` + c.bearer(scope, exp) + `","expiresAt":"` + exp.UTC().Format(time.RFC3339Nano) + `"}` + "\n"))
}

// revokeHandler serves DELETE /api/token: every bearer token issued for
// the scope of the one the request carries, until now, is refused from
// now on (204); tokens issued later are not. Without a bearer token it is
// a 400: a cookie is ended by clearing it, not here. Revoking by scope
// rather than by token keeps one entry per scope, however many tokens a
// client has had.
func (c *cookieScope) revokeHandler(w http.ResponseWriter, r *http.Request) {
	token, ok := bearerToken(r)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"DELETE /api/token revokes the bearer token in Authorization: send one"}` + "\n"))
		return
	}
	scope, _, _ := c.verifyBearer(token) // the middleware verified it
	// Every token issued until now expires by now+TTL.
	if err := c.revoked.revoke(r.Context(), scope, c.clock().Add(c.bearerTTL)); err != nil {
		c.refuse(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// bearerToken is the request's bearer token, if it sends one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// credential reads the request's scope from its bearer token or, without
// one, its cookie. err: it sent a bearer token that is refused.
func (c *cookieScope) credential(r *http.Request) (scope string, ok bool, err error) {
	if r.Header.Get("Authorization") != "" {
		token, isBearer := bearerToken(r)
		if !isBearer {
			return "", false, nil // another scheme is not ours to judge
		}
		scope, exp, err := c.verifyBearer(token)
		if err != nil {
			return "", false, err
		}
		if c.revoked != nil {
			revoked, err := c.revoked.isRevoked(r.Context(), scope, exp)
			if err != nil {
				return "", false, err
			}
			if revoked {
				return "", false, errRevokedToken
			}
		}
		return scope, true, nil
	}
	ck, err := r.Cookie(ScopeCookie)
	if err != nil {
		return "", false, nil
	}
	scope, ok = c.verifyCookie(ck.Value)
	return scope, ok, nil
}

// verifyCookie checks a cookie value: <scope>.<HMAC>.
func (c *cookieScope) verifyCookie(v string) (string, bool) {
	scope, sig, ok := strings.Cut(v, ".")
	if !ok || len(scope) != 22 || !hmac.Equal([]byte(sig), []byte(c.sign("agentui scope cookie\x00"+scope))) {
		return "", false
	}
	return scope, true
}

// verifyBearer checks a bearer token and its expiry; it returns the
// token's scope and expiry.
func (c *cookieScope) verifyBearer(token string) (scope string, exp time.Time, err error) {
	scope, rest, ok := strings.Cut(token, ".")
	e, sig, ok2 := strings.Cut(rest, ".")
	ms, perr := strconv.ParseInt(e, 10, 64)
	if !ok || !ok2 || perr != nil || len(scope) != 22 || !hmac.Equal([]byte(sig), []byte(c.sign("agentui bearer token\x00"+scope+"\x00"+e))) {
		return "", time.Time{}, errBadToken
	}
	exp = time.UnixMilli(ms)
	if !c.clock().Before(exp) {
		return "", exp, errExpiredToken
	}
	return scope, exp, nil
}

// scope is the uiadapter scope function: the middleware's scope, or
// uiadapter.ErrNoScope for a request without a credential.
func (c *cookieScope) scope(r *http.Request) (string, error) {
	if s, ok := r.Context().Value(scopeKey{}).(string); ok {
		return s, nil
	}
	return "", uiadapter.ErrNoScope
}
