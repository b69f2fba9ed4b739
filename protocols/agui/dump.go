package agui

import (
	"encoding/json"
	"strings"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

// Dump turns stored CMF messages into AG-UI messages, with the ids they
// were stored with: what MESSAGES_SNAPSHOT sends a client whose copy of
// the thread differs from the server's. Thinking is left out: clients keep
// their own reasoning messages across a snapshot. An assistant message
// carries its step's [wire.ReplyMetadata] (usage, model, finish
// reason, creation time, the application's), as 1.0 clients receive it.
func Dump(msgs []cmf.Message) []Message { return dump(msgs, true) }

// dump is Dump, with metadata and typed media parts, or (for clients
// before 1.0, metadata false) without metadata and with media as the
// binary parts those clients know.
func dump(msgs []cmf.Message, metadata bool) []Message {
	out := make([]Message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case cmf.RoleSystem, cmf.RoleDeveloper:
			out = append(out, Message{ID: m.ID(), Role: string(m.Role), Content: jsonText(m.Text())})
		case cmf.RoleUser:
			u := Message{ID: m.ID(), Role: "user", Content: userContent(m, !metadata)}
			var md wire.ReplyMetadata
			if metadata && md.AddLabels(m) {
				u.Metadata, _ = json.Marshal(md)
			}
			out = append(out, u)
		case cmf.RoleAssistant:
			a := Message{ID: m.ID(), Role: "assistant"}
			if text := m.Text(); text != "" {
				a.Content = jsonText(text)
			}
			for _, p := range m.Content {
				if tc, ok := p.(cmf.ToolCall); ok {
					a.ToolCalls = append(a.ToolCalls, ToolCall{ID: tc.ToolCallID, Type: "function", Function: FunctionCall{Name: tc.Name, Arguments: string(tc.Arguments)}})
				}
			}
			var md wire.ReplyMetadata
			has := md.Add(m)
			if a.Content == nil && len(a.ToolCalls) == 0 && md.Error == "" {
				continue // thinking only; a reply that failed before it said anything is kept
			}
			if metadata && has {
				a.Metadata, _ = json.Marshal(md)
			}
			out = append(out, a)
		case cmf.RoleTool:
			for _, p := range m.Content {
				r, ok := p.(cmf.ToolResult)
				if !ok {
					continue
				}
				text := contentText(r.Content)
				t := Message{ID: m.ID(), Role: "tool", ToolCallID: r.ToolCallID, Content: jsonText(text)}
				// Only a client's own tool messages carry "error":
				// TOOL_CALL_RESULT cannot, and a snapshot must show what
				// the live stream showed.
				if r.IsError && m.CallRecord(r.ToolCallID).Client {
					t.Error = text
				}
				if metadata {
					t.Metadata = toolMetadata(m, r.ToolCallID)
				}
				out = append(out, t)
			}
		}
	}
	return out
}

// toolMetadata is a tool message's metadata: the labels policies put on
// it, and how the user answered the call's approval request, so that a
// reloaded page shows a denied call as denied (the tool message itself
// says only what the model was told).
func toolMetadata(m *cmf.Message, callID string) json.RawMessage {
	var md wire.ReplyMetadata
	labelled := md.AddLabels(m)
	d := m.CallRecord(callID).Decision
	if !labelled && d == nil {
		return nil
	}
	type decision struct {
		Approved bool   `json:"approved"`
		Reason   string `json:"reason,omitempty"`
	}
	v := struct {
		Labels   []string  `json:"labels,omitempty"`
		Decision *decision `json:"decision,omitempty"`
	}{Labels: md.Labels}
	if d != nil {
		v.Decision = &decision{Approved: d.Approved, Reason: d.Reason}
	}
	b, _ := json.Marshal(v)
	return b
}

func jsonText(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// contentText is a result as a tool message holds it: a JSON string
// unquoted, other JSON as text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// userContent is a user message's content: its text alone, or parts;
// legacy asks for media as binary parts (clients before 1.0 know no
// other).
func userContent(m *cmf.Message, legacy bool) json.RawMessage {
	onlyText := true
	for _, p := range m.Content {
		if _, ok := p.(cmf.Text); !ok {
			onlyText = false
		}
	}
	if onlyText {
		return jsonText(m.Text())
	}
	var parts []ContentPart
	for _, p := range m.Content {
		if t, ok := p.(cmf.Text); ok {
			parts = append(parts, ContentPart{Type: "text", Text: t.Text})
			continue
		}
		src, ok := cmf.Media(p)
		if !ok {
			continue
		}
		kind := string(p.ContentType())
		s := &Source{Type: "url", Value: src.Data, MimeType: src.MediaType}
		if src.Type == cmf.SourceBase64 {
			s.Type = "data"
		} else if rest, ok := strings.CutPrefix(src.Data, wire.SchemeProviderFile+"://"); ok {
			provider, id, _ := strings.Cut(rest, "/")
			s = &Source{Type: "file", Value: id, Provider: provider, MimeType: src.MediaType}
		}
		if legacy {
			b := ContentPart{Type: "binary", MimeType: s.MimeType}
			switch s.Type {
			case "data":
				b.Data = s.Value
			case "file":
				b.ID = s.Value
			default:
				b.URL = s.Value
			}
			if d, ok := p.(cmf.Document); ok {
				b.Filename = d.Title
			}
			parts = append(parts, b)
			continue
		}
		parts = append(parts, ContentPart{Type: kind, Source: s})
	}
	b, _ := json.Marshal(parts)
	return b
}

// differs reports whether the client's copy of the thread (as decoded)
// disagrees with the server's: other messages, ids or text. Reasoning
// messages, which only the client keeps, and the tool results this request
// brings (the new turn) are not compared.
func differs(client, stored []cmf.Message) bool {
	end := len(client)
	for end > 0 && client[end-1].Role == cmf.RoleTool {
		end--
	}
	a, b := signature(client[:end]), signature(stored)
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return true
		}
	}
	return false
}

func signature(msgs []cmf.Message) []string {
	var sig []string
	for i := range msgs {
		m := &msgs[i]
		if m.Role == cmf.RoleSystem || m.Role == cmf.RoleDeveloper {
			continue
		}
		visible := false
		for _, p := range m.Content {
			if _, thinking := p.(cmf.Thinking); !thinking {
				visible = true
			}
		}
		if !visible {
			continue
		}
		sig = append(sig, string(m.Role)+"\x00"+m.ID()+"\x00"+m.Text())
	}
	return sig
}

// knownPrefix reports whether the stored messages the client holds come
// first in the stored thread, in the client's order: then one snapshot
// puts the client's copy in the server's order.
func knownPrefix(client, stored []cmf.Message) bool {
	position := map[string]int{}
	for i, sig := range signature(stored) {
		position[strings.SplitN(sig, "\x00", 3)[1]] = i
	}
	next := 0
	for _, sig := range signature(client) {
		id := strings.SplitN(sig, "\x00", 3)[1]
		if i, ok := position[id]; ok {
			if i != next {
				return false
			}
			next++
		}
	}
	return true
}
