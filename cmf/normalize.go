package cmf

import (
	"bytes"
	"encoding/json"
)

// Decoding normalizes values so that decode → encode → decode is an
// identity: empty collections become nil (they are omitted when encoded) and
// raw JSON gets one spelling. These helpers do that for extensions; parts do
// it in decodePart.

func (e *Extensions) normalize() {
	if e == nil {
		return
	}
	e.Custom = compactMap(e.Custom)
	if e.HTTP != nil && len(e.HTTP.Headers) == 0 {
		e.HTTP.Headers = nil
	}
	if s := e.Security; s != nil {
		s.Labels = nilIfEmpty(s.Labels)
		if s.Subject != nil {
			s.Subject.Roles = nilIfEmpty(s.Subject.Roles)
			s.Subject.Permissions = nilIfEmpty(s.Subject.Permissions)
			s.Subject.Teams = nilIfEmpty(s.Subject.Teams)
			s.Subject.Claims = compactMap(s.Subject.Claims)
		}
		if len(s.Objects) == 0 {
			s.Objects = nil
		}
		for k, o := range s.Objects {
			o.Permissions = nilIfEmpty(o.Permissions)
			o.DataScope = nilIfEmpty(o.DataScope)
			s.Objects[k] = o
		}
		if len(s.Data) == 0 {
			s.Data = nil
		}
		for k, d := range s.Data {
			d.ApplyLabels = nilIfEmpty(d.ApplyLabels)
			d.AllowedActions = nilIfEmpty(d.AllowedActions)
			d.DeniedActions = nilIfEmpty(d.DeniedActions)
			s.Data[k] = d
		}
	}
	if a := e.Agent; a != nil && a.Conversation != nil {
		a.Conversation.History = nilIfEmpty(a.Conversation.History)
		a.Conversation.Topics = nilIfEmpty(a.Conversation.Topics)
	}
	if m := e.MCP; m != nil {
		if t := m.Metadata.Tool; t != nil {
			t.InputSchema = compactJSON(t.InputSchema)
			t.OutputSchema = compactJSON(t.OutputSchema)
			t.Annotations = compactMap(t.Annotations)
		}
		if r := m.Metadata.Resource; r != nil {
			r.Annotations = compactMap(r.Annotations)
		}
		if p := m.Metadata.Prompt; p != nil {
			p.Arguments = nilIfEmpty(p.Arguments)
			p.Annotations = compactMap(p.Annotations)
		}
	}
	if l := e.LLM; l != nil {
		l.Capabilities = nilIfEmpty(l.Capabilities)
	}
	if f := e.Framework; f != nil {
		f.Metadata = compactMap(f.Metadata)
	}
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// compactJSON gives raw JSON one spelling: no insignificant whitespace and
// HTML-sensitive characters escaped, exactly as encoding/json writes a
// json.RawMessage. Without it a decoded value would differ from the value
// decoded after re-encoding.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return raw // the decoder already checked it; keep it as it came
	}
	var out bytes.Buffer
	out.Grow(c.Len())
	json.HTMLEscape(&out, c.Bytes())
	if bytes.Equal(out.Bytes(), raw) {
		return raw
	}
	return out.Bytes()
}

func compactMap(m map[string]json.RawMessage) map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	for k, v := range m {
		m[k] = compactJSON(v)
	}
	return m
}
