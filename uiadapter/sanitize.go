package uiadapter

import (
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/agentui/agentui/cmf"
)

// SanitizePolicy says what client-supplied messages may contain.
type SanitizePolicy struct {
	// AllowedSchemes are the URL schemes media and documents may use
	// (lower case). Inline base64 is always allowed.
	AllowedSchemes []string
	// TrustSystemMessages keeps client system and developer messages.
	TrustSystemMessages bool
}

// Findings counts what sanitization dropped.
type Findings struct {
	URLs           int      // media parts with a scheme outside the allowlist
	Schemes        []string // those schemes, sorted
	SystemMessages int      // system and developer messages
	DanglingCalls  int      // tool calls without a result that this request does not resolve
	OrphanResults  int      // tool results for calls that are not in the history
	Signatures     int      // thinking signatures / encrypted reasoning
	EmptyMessages  int      // messages left with no content
}

// Any reports whether anything was dropped.
func (f *Findings) Any() bool {
	return f.URLs+f.SystemMessages+f.DanglingCalls+f.OrphanResults+f.Signatures+f.EmptyMessages > 0
}

// Log writes one line per kind of drop.
func (f *Findings) Log(log *slog.Logger, attrs ...any) {
	if f.URLs > 0 {
		log.Warn("dropped client media with disallowed URL schemes", append(attrs, "count", f.URLs, "schemes", f.Schemes)...)
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
	if f.EmptyMessages > 0 {
		log.Info("dropped client messages left empty", append(attrs, "count", f.EmptyMessages)...)
	}
}

// Sanitize applies the trust rules to messages a client sent:
//
//  1. media and documents whose URL scheme is not allowlisted are dropped
//     (inline base64 is always fine);
//  2. system and developer messages are dropped, unless trusted: the
//     server's instructions reach the agent instead;
//  3. tool calls without a result, anywhere in the history, are dropped
//     unless resolved (by this request's resolutions), and so are tool
//     results whose call is not there;
//  4. thinking signatures (provider-encrypted reasoning) are dropped;
//
// and messages left empty are dropped. It returns new messages; the input
// is not changed.
func Sanitize(msgs []cmf.Message, resolved map[string]bool, p SanitizePolicy) ([]cmf.Message, Findings) {
	var f Findings
	calls, results := map[string]bool{}, map[string]bool{}
	for i := range msgs {
		for _, part := range msgs[i].Content {
			switch part := part.(type) {
			case cmf.ToolCall:
				calls[part.ToolCallID] = true
			case cmf.ToolResult:
				results[part.ToolCallID] = true
			}
		}
	}
	out := make([]cmf.Message, 0, len(msgs))
	for i := range msgs {
		m := msgs[i]
		if (m.Role == cmf.RoleSystem || m.Role == cmf.RoleDeveloper) && !p.TrustSystemMessages {
			f.SystemMessages++
			continue
		}
		changed := false
		content := make([]cmf.Part, 0, len(m.Content))
		for _, part := range m.Content {
			keep := part
			switch part := part.(type) {
			case cmf.ToolCall:
				if !results[part.ToolCallID] && !resolved[part.ToolCallID] {
					f.DanglingCalls++
					keep = nil
				}
			case cmf.ToolResult:
				if !calls[part.ToolCallID] {
					f.OrphanResults++
					keep = nil
				}
			case cmf.Thinking:
				if part.Signature != "" {
					f.Signatures++
					part.Signature = ""
					keep = part
					changed = true
				}
			default:
				if src, ok := cmf.Media(part); ok && src.Type == cmf.SourceURL {
					if scheme := schemeOf(src.Data); !slices.Contains(p.AllowedSchemes, scheme) {
						f.URLs++
						if !slices.Contains(f.Schemes, scheme) {
							f.Schemes = append(f.Schemes, scheme)
						}
						keep = nil
					}
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

// schemeOf returns a URL's scheme in lower case, "" when it has none or
// does not parse.
func schemeOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme)
}
