package limit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr tells which client address a request is counted under: the
// key of the bounds that hold per address (runs at once, runs and tokens
// per window, anonymous scopes issued). [PeerAddr] is the default;
// [ForwardedFor] reads a trusted reverse proxy's X-Forwarded-For.
type ClientAddr func(*http.Request) string

// PeerAddr is the address of the request's connection. An IPv6 address
// counts as its /64: one subscriber is routinely given a whole /64, so
// counting single IPv6 addresses would let one client count as billions.
func PeerAddr(r *http.Request) string { return addrKey(r.RemoteAddr) }

// addrKey reads host:port (or a bare host) and returns the address it is
// counted as; what does not parse is returned as it is.
func addrKey(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	return countedAs(ip)
}

func countedAs(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.WithZone("").Prefix(64)
		return p.String()
	}
	return ip.String()
}

// ForwardedFor returns a [ClientAddr] for a server behind reverse
// proxies: a request whose connection comes from a trusted proxy is
// counted under the address that proxy saw, read from X-Forwarded-For
// right to left, skipping the trusted hops; any other request under its
// connection's address. Only the proxies' own entries can be believed: a
// client writes whatever it likes into the left of the header.
func ForwardedFor(trusted ...netip.Prefix) ClientAddr {
	trusts := func(ip netip.Addr) bool {
		ip = ip.Unmap()
		for _, p := range trusted {
			if p.Contains(ip) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		peer, err := netip.ParseAddr(host)
		if err != nil || !trusts(peer) {
			return addrKey(r.RemoteAddr)
		}
		hops := r.Header.Values("X-Forwarded-For")
		for i := len(hops) - 1; i >= 0; i-- {
			list := strings.Split(hops[i], ",")
			for j := len(list) - 1; j >= 0; j-- {
				ip, err := netip.ParseAddr(strings.TrimSpace(list[j]))
				if err != nil {
					return addrKey(r.RemoteAddr) // a hop the proxies did not write
				}
				if !trusts(ip) {
					return countedAs(ip)
				}
			}
		}
		return countedAs(peer) // every hop is a proxy: the request is the proxy's own
	}
}

// ParsePrefixes reads a comma-separated list of addresses and CIDR
// prefixes ("10.0.0.0/8, 127.0.0.1, ::1"); an address alone is its own
// one-address prefix.
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a CIDR prefix (10.0.0.0/8, 127.0.0.1)", v)
		}
		out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
	}
	return out, nil
}
