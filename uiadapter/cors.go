package uiadapter

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// CORS lets pages on other origins use next: a frontend served from
// https://app.example.com talking to agentui on https://api.example.com.
// Without it (the default) only same-origin pages can read the replies.
//
// Preflights (OPTIONS with Access-Control-Request-Method) from an allowed
// origin get 204 with the methods agentui's routes use, the headers the
// browser asked for, and credentials allowed, so fetch(…, {credentials:
// "include"}) sends the app's cookies or Authorization header. Responses
// to an allowed origin name it, allow credentials and expose RunHeader. A
// request from an origin that is neither allowed nor this server's own
// gets 403: the browser would hide the reply anyway, and a refused
// request runs nothing (no cross-site turn on a user's cookies).
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
			return nil, fmt.Errorf("uiadapter: CORS origin %q: want scheme://host[:port], like https://app.example.com", o)
		}
		allowed[u.Scheme+"://"+u.Host] = true
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("uiadapter: CORS needs at least one origin")
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
			writeError(w, slog.New(slog.DiscardHandler), &Error{Status: http.StatusForbidden, Message: "this origin may not use this server"})
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
		h.Set("Access-Control-Expose-Headers", RunHeader)
		next.ServeHTTP(w, r)
	}), nil
}

// sameOrigin reports whether origin is the server's own (the host the
// request was sent to): browsers send Origin on same-origin POSTs too.
func sameOrigin(r *http.Request, origin string) bool {
	_, host, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(host, r.Host)
}
