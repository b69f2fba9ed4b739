package edge

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentui/agentui/internal/wire"
)

// LoopbackHosts are the names a server listening on a loopback address
// answers to: what a browser on the same machine puts in Host.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// AllowHosts serves next only the requests whose Host header names one of
// hosts; any other gets 403 with {"error": …}. It is the defence against
// DNS rebinding: a page on evil.example whose name is made to resolve to
// this server's address sends Host: evil.example, and its requests count
// as same-origin to the browser, so neither CORS nor the cross-site rule
// can tell them apart. A server that a browser can reach (a developer's
// 127.0.0.1:8080 above all) should check Host.
//
// An entry is a host name or an IP address, optionally with a port:
// "chat.example.com" matches it on any port, "chat.example.com:8443" on
// that port only, "*.example.com" any name under example.com (not
// example.com itself), and "*" any host (no check). Names compare without
// case and without a trailing dot; IPv6 addresses are written with or
// without brackets ("::1", "[::1]:8080"). A request without Host (HTTP/1.0)
// is refused.
func AllowHosts(next http.Handler, hosts ...string) (http.Handler, error) {
	var allowed []hostEntry
	for _, h := range hosts {
		if h == "*" {
			return next, nil
		}
		name, port, ok := NormalizeHost(h)
		wild := strings.HasPrefix(h, "*.")
		if wild {
			name, port, ok = NormalizeHost(h[2:])
			name = "." + name
		}
		if !ok || (wild && net.ParseIP(strings.TrimPrefix(name, ".")) != nil) {
			return nil, fmt.Errorf("edge: allowed host %q: want a host name or IP address with an optional port (chat.example.com, *.example.com, 10.0.0.5:8080)", h)
		}
		allowed = append(allowed, hostEntry{name, port})
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("edge: AllowHosts needs at least one host")
	}
	return &hostCheck{next: next, allowed: allowed}, nil
}

// hostCheck is AllowHosts' handler. It is a type of its own, not a
// closure in an http.HandlerFunc, and its check runs out of line, gone
// before the request is served: every frame between the connection and
// the chat handler is on the stack of every stream, and a stream that
// outgrows its starting 8 KiB holds 16 for its life.
type hostCheck struct {
	next    http.Handler
	allowed []hostEntry
}

// hostEntry is an allowed host: a name (".example.com" for any name
// under it) and a port ("" for any).
type hostEntry struct{ host, port string }

func (h *hostCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.allows(w, r) {
		h.next.ServeHTTP(w, r)
	}
}

// allows reports whether host is allowed; if not, it has answered w.
//
//go:noinline
func (h *hostCheck) allows(w http.ResponseWriter, r *http.Request) bool {
	name, port, ok := NormalizeHost(r.Host)
	if !ok {
		wire.CloseUnread(w, r)
		wire.WriteError(w, quietLog, wire.BadRequest("the Host header is missing or malformed"))
		return false
	}
	for _, e := range h.allowed {
		if (e.port == "" || e.port == port) && (e.host == name || e.host[0] == '.' && strings.HasSuffix(name, e.host)) {
			return true
		}
	}
	wire.CloseUnread(w, r)
	wire.WriteError(w, quietLog, &wire.Error{Status: http.StatusForbidden,
		Message: `this server does not answer to the host "` + name + `": add it to the server's allowed hosts`})
	return false
}

// quietLog drops what it is given: a refused Host is not worth a log line.
var quietLog = slog.New(slog.DiscardHandler)

// NormalizeHost splits a Host header value (or an allowed-host entry)
// into its host, lower-cased without a trailing dot and IPv6 without
// brackets, and its port ("" when it has none). ok is false for anything
// that is not a host name or IP address with an optional decimal port:
// empty, with a path, user info, spaces or other characters no host
// name has.
func NormalizeHost(s string) (host, port string, ok bool) {
	host = s
	if strings.HasPrefix(s, "[") { // [v6] or [v6]:port
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			if port[0] != ':' {
				return "", "", false
			}
			port = port[1:]
			if port == "" {
				return "", "", false
			}
		}
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil && !strings.Contains(host, ":") {
			return "", "", false
		}
	} else if strings.Count(s, ":") == 1 {
		host, port, _ = strings.Cut(s, ":")
		if port == "" {
			return "", "", false
		}
	} else if strings.Contains(s, ":") { // a bare IPv6 address
		if net.ParseIP(s) == nil {
			return "", "", false
		}
	}
	if port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 || strconv.FormatUint(n, 10) != port {
			return "", "", false
		}
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), port, true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" || len(host) > 253 {
		return "", "", false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 {
			return "", "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", "", false
			}
		}
	}
	return host, port, true
}
