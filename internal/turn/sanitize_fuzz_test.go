package turn

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// whatwgScheme is the scheme a browser or a WHATWG URL parser (Node's
// fetch) reads from raw, written apart from Sanitize so the fuzz target
// checks one against the other: tabs and newlines anywhere are removed,
// leading and trailing C0 controls and spaces trimmed, and the scheme is
// what comes before the first ':' if it is ALPHA *(ALPHA / DIGIT / "+" /
// "-" / "."), lower-cased. "" when there is none.
func whatwgScheme(raw string) string {
	raw = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, raw)
	raw = strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	i := strings.IndexByte(raw, ':')
	if i <= 0 {
		return ""
	}
	for j, c := range raw[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(raw[:i])
}

// FuzzSanitizeURLs: whatever URL a client puts in any part that carries
// one, a part that survives Sanitize has an allowlisted scheme as a
// browser reads it (or is a urn: name), and under PublicHostsOnly no
// loopback, private or link-local address literal as its host.
func FuzzSanitizeURLs(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a.png", "http://169.254.169.254/latest", "javascript:alert(1)", " JaVaScRiPt:alert(1)",
		"java\tscript:alert(1)", "\x00https://x", "data:text/html,<script>", "s3://bucket/key", "file:///etc/passwd",
		"urn:isbn:123", "urn:", "//evil.example/x", "https:", "http://[::1]/", "http://127.1/", "HTTP://LOCALHOST./",
		"http://[::ffff:10.0.0.1]/", "\nhttps://ok.example", "https://user@10.0.0.1:80/", "vbscript:msgbox",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, raw string, kind uint8) {
		var p cmf.Part
		src := cmf.MediaSource{Type: cmf.SourceURL, Data: raw, MediaType: "image/png"}
		switch kind % 6 {
		case 0:
			p = cmf.Image{MediaSource: src}
		case 1:
			p = cmf.Document{MediaSource: src}
		case 2:
			p = cmf.Audio{MediaSource: src}
		case 3:
			p = cmf.Video{MediaSource: src}
		case 4:
			p = cmf.ResourceRef{ResourceRequestID: "r", URI: raw, ResourceType: cmf.ResourceURI}
		default:
			p = cmf.Resource{ResourceRequestID: "r", URI: raw, ResourceType: cmf.ResourceURI}
		}
		msgs := []cmf.Message{{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "x"}, p}}}
		for _, public := range []bool{false, true} {
			out, _ := Sanitize(msgs, nil, Policy{AllowedSchemes: []string{"http", "https"}, PublicHostsOnly: public})
			if len(out) != 1 || len(out[0].Content) == 0 {
				t.Fatalf("the text part was lost: %+v", out)
			}
			if len(out[0].Content) == 1 {
				continue // dropped
			}
			scheme := whatwgScheme(raw)
			if scheme == "urn" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(raw)), "urn:") {
				t.Fatalf("%q: a urn only after controls were removed survived", raw)
			}
			if scheme != "http" && scheme != "https" && scheme != "urn" {
				t.Fatalf("%q (scheme %q as a browser reads it) survived", raw, scheme)
			}
			if public && scheme != "urn" {
				u, err := url.Parse(strings.TrimSpace(raw))
				if err != nil {
					t.Fatalf("%q: survived but does not parse: %v", raw, err)
				}
				if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
					ip = ip.Unmap()
					if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
						t.Fatalf("%q: a private address survived PublicHostsOnly", raw)
					}
				}
			}
		}
	})
}
