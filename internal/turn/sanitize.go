package turn

import (
	"log/slog"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agentui/agentui/cmf"
)

// Policy says what client-supplied messages may contain.
type Policy struct {
	// AllowedSchemes are the URL schemes media and documents may use
	// (lower case). Inline base64 is always allowed.
	AllowedSchemes []string
	// TrustSystemMessages keeps client system and developer messages.
	TrustSystemMessages bool
	// PublicHostsOnly drops URLs whose host is loopback, private,
	// link-local or unspecified (an IP literal in those ranges, or a name
	// such as localhost), so a model provider that fetches media URLs
	// cannot be pointed at the server's own network. Names are not
	// resolved: a public name that resolves to a private address (DNS
	// rebinding) passes; guard the fetcher itself for that.
	PublicHostsOnly bool
}

// Findings counts what sanitization dropped.
type Findings struct {
	URLs             int      // URLs (media, sources) with a scheme outside the allowlist
	Schemes          []string // those schemes, sorted
	PrivateHosts     int      // URLs to private hosts (with PublicHostsOnly)
	InvalidParts     int      // parts that are not valid CMF (an empty image, a source without a URL)
	SystemMessages   int      // system and developer messages
	DanglingCalls    int      // tool calls without a result that this request does not resolve
	OrphanResults    int      // tool results for calls that are not in the history
	DuplicateResults int      // a second result for one call
	Signatures       int      // provider values (signatures, encrypted or redacted reasoning)
	Sealed           int      // sealed provider values that did not open: altered, moved, replayed elsewhere, or after a gap
	EmptyMessages    int      // messages left with no content
}

// Any reports whether anything was dropped.
func (f *Findings) Any() bool {
	return f.URLs+f.PrivateHosts+f.InvalidParts+f.SystemMessages+f.DanglingCalls+f.OrphanResults+
		f.DuplicateResults+f.Signatures+f.Sealed+f.EmptyMessages > 0
}

// Log writes one line per kind of drop.
func (f *Findings) Log(log *slog.Logger, attrs ...any) {
	if f.URLs > 0 {
		log.Warn("dropped client media with disallowed URL schemes", append(attrs, "count", f.URLs, "schemes", f.Schemes)...)
	}
	if f.PrivateHosts > 0 {
		log.Warn("dropped client URLs to private hosts", append(attrs, "count", f.PrivateHosts)...)
	}
	if f.InvalidParts > 0 {
		log.Warn("dropped invalid client message parts", append(attrs, "count", f.InvalidParts)...)
	}
	if f.DuplicateResults > 0 {
		log.Warn("dropped second client tool results for one call", append(attrs, "count", f.DuplicateResults)...)
	}
	if f.SystemMessages > 0 {
		log.Warn("dropped client system/developer messages", append(attrs, "count", f.SystemMessages)...)
	}
	if f.DanglingCalls > 0 {
		log.Warn("dropped client tool calls without results", append(attrs, "count", f.DanglingCalls)...)
	}
	if f.OrphanResults > 0 {
		log.Warn("dropped client tool results without calls", append(attrs, "count", f.OrphanResults)...)
	}
	if f.Signatures > 0 {
		log.Warn("dropped client reasoning signatures", append(attrs, "count", f.Signatures)...)
	}
	if f.Sealed > 0 {
		log.Warn("dropped sealed provider values that did not open", append(attrs, "count", f.Sealed)...)
	}
	if f.EmptyMessages > 0 {
		log.Info("dropped client messages left empty", append(attrs, "count", f.EmptyMessages)...)
	}
}

// Sanitize applies the trust rules to messages a client sent:
//
//  0. parts that are not valid CMF are dropped (an empty inline image, a
//     source without a URL): what the store would refuse never gets in;
//  1. media, documents and sources whose URL scheme is not allowlisted are
//     dropped (inline base64 is always fine; urn: names are not URLs), and
//     with PublicHostsOnly so are URLs to private hosts;
//  2. system and developer messages are dropped, unless trusted: the
//     server's instructions reach the agent instead;
//  3. tool calls without a result, anywhere in the history, are dropped
//     unless resolved (by this request's resolutions), and so are tool
//     results whose call is not there, and a second result for one call;
//  4. providers' opaque values (thinking signatures, encrypted and
//     redacted reasoning, thought signatures) are dropped: only the
//     server's own history may hold them;
//
// and messages left empty are dropped. It returns new messages; the input
// is not changed.
func Sanitize(msgs []cmf.Message, resolved map[string]bool, p Policy) ([]cmf.Message, Findings) {
	return sanitize(msgs, resolved, p, nil)
}

// sanitize is Sanitize, but keeps the provider values at sealed: the
// positions (message, part) of the values the server sealed and opened
// (see openAll).
func sanitize(msgs []cmf.Message, resolved map[string]bool, p Policy, sealed map[[2]int]bool) ([]cmf.Message, Findings) {
	var f Findings
	// A call counts as answered only by a result that is kept: a valid
	// one, for a valid call. A call whose only result is dropped is
	// dangling too.
	calls, results := map[string]bool{}, map[string]bool{}
	for i := range msgs {
		for _, part := range msgs[i].Content {
			if tc, ok := part.(cmf.ToolCall); ok && tc.Validate() == nil {
				calls[tc.ToolCallID] = true
			}
		}
	}
	for i := range msgs {
		for _, part := range msgs[i].Content {
			if tr, ok := part.(cmf.ToolResult); ok && calls[tr.ToolCallID] && tr.Validate() == nil {
				results[tr.ToolCallID] = true
			}
		}
	}
	out := make([]cmf.Message, 0, len(msgs))
	answered := map[string]bool{}
	for i := range msgs {
		m := msgs[i]
		if (m.Role == cmf.RoleSystem || m.Role == cmf.RoleDeveloper) && !p.TrustSystemMessages {
			f.SystemMessages++
			continue
		}
		changed := false
		content := make([]cmf.Part, 0, len(m.Content))
		for j, part := range m.Content {
			keep := part
			if part.Validate() != nil {
				f.InvalidParts++
				changed = true
				continue
			}
			switch part := part.(type) {
			case cmf.ToolCall:
				if !results[part.ToolCallID] && !resolved[part.ToolCallID] {
					f.DanglingCalls++
					keep = nil
				} else if part.Opaque != nil && !sealed[[2]int{i, j}] {
					f.Signatures++
					part.Opaque = nil
					keep = part
					changed = true
				}
			case cmf.ToolResult:
				switch {
				case !calls[part.ToolCallID]:
					f.OrphanResults++
					keep = nil
				case answered[part.ToolCallID]:
					f.DuplicateResults++
					keep = nil
				}
				answered[part.ToolCallID] = true
			case cmf.Thinking:
				if part.Opaque != nil && !sealed[[2]int{i, j}] {
					f.Signatures++
					part.Opaque = nil
					keep = part
					changed = true
				}
			case cmf.Text:
				if part.Opaque != nil && !sealed[[2]int{i, j}] {
					f.Signatures++
					part.Opaque = nil
					keep = part
					changed = true
				}
			case cmf.RedactedThinking:
				// A provider's value only the server may hold.
				if !sealed[[2]int{i, j}] {
					f.Signatures++
					keep = nil
				}
			default:
				if u, ok := urlOf(part); ok && !p.allows(u, &f) {
					keep = nil
				}
			}
			if keep == nil {
				changed = true
				continue
			}
			content = append(content, keep)
		}
		if len(content) == 0 && (changed || len(m.Content) == 0) {
			f.EmptyMessages++
			continue
		}
		if changed {
			m.Content = content
		}
		out = append(out, m)
	}
	slices.Sort(f.Schemes)
	return out, f
}

// urlOf returns the URL a part points to: a media source's URL, a
// source's or resource's URI.
func urlOf(p cmf.Part) (string, bool) {
	switch p := p.(type) {
	case cmf.ResourceRef:
		return p.URI, true
	case cmf.Resource:
		return p.URI, true
	}
	if src, ok := cmf.Media(p); ok && src.Type == cmf.SourceURL {
		return src.Data, true
	}
	return "", false
}

// allows reports whether the policy lets a client URL through, counting
// what it drops.
func (p *Policy) allows(raw string, f *Findings) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	scheme := ""
	if err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if scheme == "urn" && err == nil && u.Opaque != "" {
		return true // a name, not a location: nothing fetches it
	}
	if !slices.Contains(p.AllowedSchemes, scheme) {
		f.URLs++
		if !slices.Contains(f.Schemes, scheme) {
			f.Schemes = append(f.Schemes, scheme)
		}
		return false
	}
	if p.PublicHostsOnly && privateHost(u.Hostname()) {
		f.PrivateHosts++
		return false
	}
	return true
}

// privateHost reports whether host names the local machine or a private
// network: loopback, private, link-local, unspecified or CGNAT addresses,
// localhost and its subdomains, the .local, .internal and .localhost
// names, and numeric forms some fetchers read as addresses ("2130706433",
// "0x7f.1", "127.1").
func privateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() || cgnat.Contains(ip)
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".internal") {
		return true
	}
	// A host that is all digits, dots and hex forms is an address in some
	// notation (inet_aton accepts "127.1", "2130706433", "0x7f.0.0.1").
	numeric := true
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			continue
		}
		digits := strings.TrimPrefix(label, "0x")
		if _, err := strconv.ParseUint(digits, 16, 64); err != nil {
			numeric = false
			break
		}
		if digits == label { // no 0x: must be decimal or octal digits
			if _, err := strconv.ParseUint(label, 10, 64); err != nil {
				numeric = false
				break
			}
		}
	}
	return numeric
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")
