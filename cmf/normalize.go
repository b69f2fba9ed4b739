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
	e.migrateUI()
	e.Custom = compactMap(e.Custom)
	if ui := e.UI; ui != nil {
		if len(ui.Calls) == 0 {
			ui.Calls = nil
		}
		for id, c := range ui.Calls {
			if c.Decision != nil {
				c.Decision.EditedArguments = compactJSON(c.Decision.EditedArguments)
			}
			ui.Calls[id] = c
		}
		ui.Data = nilIfEmpty(ui.Data)
		for i := range ui.Data {
			ui.Data[i].Value = compactJSON(ui.Data[i].Value)
		}
		ui.Metadata = compactMap(ui.Metadata)
		if st := ui.State; st != nil {
			st.Snapshot = compactJSON(st.Snapshot)
			st.Patches = nilIfEmpty(st.Patches)
			for i := range st.Patches {
				st.Patches[i] = compactJSON(st.Patches[i])
			}
		}
		if ui.Calls == nil && ui.Data == nil && ui.Metadata == nil && ui.State == nil {
			e.UI = nil
		}
	}
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

// Before the UI extension, agentui kept its records under two custom
// extensions. Messages stored that way are read into the UI extension;
// a record that does not parse stays where it was.
const (
	legacyCallsKey = "agentui.calls"
	legacyDataKey  = "agentui.data"
)

type legacyCallRecord struct {
	ApprovalID string `json:"approval_id"`
	Client     bool   `json:"client"`
	Approved   *bool  `json:"approved"`
	Reason     string `json:"reason"`
}

func (e *Extensions) migrateUI() {
	rawCalls, hasCalls := e.Custom[legacyCallsKey]
	rawData, hasData := e.Custom[legacyDataKey]
	if !hasCalls && !hasData {
		return
	}
	ui := UIExtension{}
	if e.UI != nil {
		ui = *e.UI
	}
	var calls map[string]legacyCallRecord
	if hasCalls && json.Unmarshal(rawCalls, &calls) == nil {
		delete(e.Custom, legacyCallsKey)
		for id, c := range calls {
			if _, ok := ui.Calls[id]; ok {
				continue
			}
			if ui.Calls == nil {
				ui.Calls = map[string]CallRecord{}
			}
			r := CallRecord{ApprovalID: c.ApprovalID, Client: c.Client}
			if c.Approved != nil {
				r.Decision = &Decision{Approved: *c.Approved, Reason: c.Reason}
			}
			ui.Calls[id] = r
		}
	}
	var data []DataRecord
	if hasData && json.Unmarshal(rawData, &data) == nil {
		delete(e.Custom, legacyDataKey)
		if len(ui.Data) == 0 {
			ui.Data = data
		}
	}
	e.UI = &ui
}
