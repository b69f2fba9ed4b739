package edge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentui/agentui/internal/wire"
)

// CORS lets pages on other origins use next: a frontend served from
// https://app.example.com talking to agentui on https://api.example.com.
// Without it (the default) only same-origin pages can read the replies.
//
// Preflights (OPTIONS with Access-Control-Request-Method) from an allowed
// origin get 204 with the methods agentui's routes use, the headers the
// browser asked for, and credentials allowed, so fetch(…, {credentials:
// "include"}) sends the app's cookies or Authorization header. Responses
// to an allowed origin name it, allow credentials and expose RunHeader
// and StreamIDHeader. A request from an origin that is neither allowed
// nor this server's own gets 403: the browser would hide the reply
// anyway, and a refused request runs nothing (no cross-site turn on a
// user's cookies).
//
// Origins are exact ("https://app.example.com", scheme, host and port as
// the browser sends them); "*" is refused, since a reply holds a user's
// conversation. Cookies cross sites only when the app sets them
// SameSite=None; Secure (so over HTTPS).
func CORS(next http.Handler, origins ...string) (http.Handler, error) {
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("edge: CORS origin %q: want scheme://host[:port], like https://app.example.com", o)
		}
		allowed[u.Scheme+"://"+u.Host] = true
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("edge: CORS needs at least one origin")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		h := w.Header()
		h.Add("Vary", "Origin")
		switch {
		case origin == "" || sameOrigin(r, origin):
			next.ServeHTTP(w, r)
			return
		case !allowed[origin]:
			wire.CloseUnread(w, r)
			wire.WriteError(w, slog.New(slog.DiscardHandler), &wire.Error{Status: http.StatusForbidden, Message: "this origin may not use this server"})
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", RunHeader+", "+StreamIDHeader+", "+ScopeHeader)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), corsAllowedKey{}, true)))
	}), nil
}

// corsAllowedKey marks a request from an origin CORS allows, which the
// cross-site rule then lets change state.
type corsAllowedKey struct{}

// sameOrigin reports whether origin is the server's own: browsers send
// Origin on same-origin POSTs too. The browser's Sec-Fetch-Site says so
// when it sends one; else origin's scheme and host must be the request's
// (https when it came over TLS or through a proxy that says
// X-Forwarded-Proto: https).
func sameOrigin(r *http.Request, origin string) bool {
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return true
	}
	scheme, host, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(scheme, requestScheme(r)) && strings.EqualFold(host, r.Host)
}

// requestScheme is the scheme the client used: https over TLS, or when a
// TLS-terminating proxy in front says so in X-Forwarded-Proto; else http.
func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if p, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ","); strings.EqualFold(strings.TrimSpace(p), "https") {
		return "https"
	}
	return "http"
}

// Response headers of the chat handlers that CORS exposes.

// RunHeader names the run a stream shows (its id is AG-UI's runId), so a
// client can resume it with Last-Event-ID "<run>:<sequence>".
const RunHeader = "Agentui-Run"

// StreamIDHeader names, on a stream that can be resumed, the id to resume
// it by: GET {api}/{id}/stream. It is the header assistant-ui's resumable
// transport reads (AssistantChatTransport's resumable option, with
// resumeApi: (id) => `/api/chat/${id}/stream`), which then resumes a
// reply that a reload interrupted.
const StreamIDHeader = "X-Resumable-Stream-Id"

// ScopeHeader is a response header through which a server tells a page
// about its scope credential: the agentui binary says "renewed" when the
// browser's scope cookie no longer verified and a new scope was issued
// (its earlier chats are not listed), and "none" when a page on another
// site uses the API without a credential (nothing is kept). CORS exposes
// it to the pages it allows.
const ScopeHeader = "Agentui-Scope"

// IdempotencyKeyHeader is the request header by which a client names a
// chat request, so that the same request sent again (a retry after a
// lost response) is answered with the stream of the run the first one
// started, and runs nothing again, while the run's log is kept. AG-UI's
// runId names a request without it; useChat's retried new message is
// known by its id.
const IdempotencyKeyHeader = "Idempotency-Key"

// crossOrigin is net/http's cross-origin protection: it refuses a request
// that changes state (any method but GET, HEAD and OPTIONS) when a browser
// sent it from another origin (Sec-Fetch-Site, or Origin where older
// browsers send no Sec-Fetch-Site). Clients that are not browsers send
// neither and pass.
var crossOrigin = http.NewCrossOriginProtection()

// errCrossSite is the refusal of a request the cross-site rule stops.
var errCrossSite = &wire.Error{Status: http.StatusForbidden, Message: "a page on another origin may not change this server's state"}

// CheckCrossSite applies the cross-site rule to r: a state-changing
// request from a page on another origin is refused unless CORS allows
// that origin. A simple request (a form post, or fetch with
// Content-Type text/plain) needs no preflight, so without this rule any
// page could send one with the user's cookie: stop their reply, mint a
// token.
func CheckCrossSite(r *http.Request) error {
	if allowed, _ := r.Context().Value(corsAllowedKey{}).(bool); allowed {
		return nil
	}
	if crossOrigin.Check(r) != nil {
		return errCrossSite
	}
	return nil
}

// CORSAllowed reports whether r comes from an origin CORS allows (it
// passed through [CORS]): such a page may open a WebSocket to the server,
// which browsers open from any origin without a preflight.
func CORSAllowed(r *http.Request) bool {
	allowed, _ := r.Context().Value(corsAllowedKey{}).(bool)
	return allowed
}

// RefuseCrossSite serves next only requests that pass the cross-site rule
// every state-changing route of this package applies (stop, rename,
// delete, connect; the chat endpoints require a JSON body, which a page on
// another origin cannot send without a preflight): a POST, PUT, PATCH or
// DELETE that a browser sent from a page on another origin gets 403 with
// {"error": …}, unless [CORS] allows that origin. Wrap an app's own
// state-changing routes next to agentui's in it, such as a route that
// issues credentials.
func RefuseCrossSite(next http.Handler) http.Handler {
	quiet := slog.New(slog.DiscardHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := CheckCrossSite(r); err != nil {
			wire.CloseUnread(w, r)
			wire.WriteError(w, quiet, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
