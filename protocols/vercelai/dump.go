package vercelai

import (
	"encoding/json"
	"strings"

	"github.com/agentui/agentui/cmf"
)

// Dump turns a stored conversation back into UI messages, as useChat built
// them while streaming: one assistant UI message per assistant turn
// (consecutive assistant steps, a step-start before each), tool calls as
// tool-<name> parts in the state their result, approval and denial put
// them in, the ids the messages were stored with, and an assistant
// message's [Metadata] from its steps' stored completions, its usage with
// AI SDK 6's names (a [Protocol] made [WithAISDK7] serves AI SDK 7's
// through [ConversationHandler]).
func Dump(msgs []cmf.Message) []UIMessage { return dump(msgs, false) }

func dump(msgs []cmf.Message, v7 bool) []UIMessage {
	states := map[string]cmf.ToolCallState{}
	for _, s := range cmf.ToolCallStates(msgs) {
		states[s.Call.ToolCallID] = s
	}
	out := make([]UIMessage, 0, len(msgs))
	var cur *UIMessage // the assistant UI message being built
	var md Metadata    // and its metadata
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case cmf.RoleTool:
			// Results are shown on their calls; their labels go with
			// the reply's.
			if cur != nil && md.AddLabels(m) {
				cur.Metadata = appendMetadata(nil, &md, v7)
			}
			continue
		case cmf.RoleAssistant:
			if cur == nil {
				out = append(out, UIMessage{ID: m.ID(), Role: "assistant"})
				cur, md = &out[len(out)-1], Metadata{}
			}
			cur.Parts = append(cur.Parts, Part{Type: "step-start"})
			cur.Parts = appendParts(cur.Parts, m, states)
			if md.Add(m) {
				cur.Metadata = appendMetadata(nil, &md, v7)
			}
		default:
			cur = nil
			role := "user"
			if m.Role == cmf.RoleSystem || m.Role == cmf.RoleDeveloper {
				role = "system"
			}
			u := UIMessage{ID: m.ID(), Role: role, Parts: appendParts(nil, m, states)}
			var labels Metadata
			if labels.AddLabels(m) {
				u.Metadata = appendMetadata(nil, &labels, v7)
			}
			out = append(out, u)
		}
	}
	return out
}

// appendParts adds one message's content, with its UI data records where
// they streamed.
func appendParts(parts []Part, m *cmf.Message, states map[string]cmf.ToolCallState) []Part {
	recs := m.Data()
	next := 0
	for i, p := range m.Content {
		for next < len(recs) && recs[next].Index <= i {
			parts = append(parts, dataPart(recs[next]))
			next++
		}
		if part, ok := toPart(p, states); ok {
			parts = append(parts, part)
		}
	}
	for ; next < len(recs); next++ {
		parts = append(parts, dataPart(recs[next]))
	}
	return parts
}

func dataPart(r cmf.DataRecord) Part {
	return Part{Type: "data-" + r.Name, ID: r.ID, Data: r.Value}
}

func toPart(p cmf.Part, states map[string]cmf.ToolCallState) (Part, bool) {
	switch p := p.(type) {
	case cmf.Text:
		t := p.Text
		return Part{Type: "text", Text: &t, State: "done"}, true
	case cmf.Thinking:
		t := p.Text
		return Part{Type: "reasoning", Text: &t, State: "done"}, true
	case cmf.ToolCall:
		return toolPart(p, states[p.ToolCallID]), true
	case cmf.ResourceRef:
		if p.ResourceType == cmf.ResourceURI {
			return Part{Type: "source-url", SourceID: p.ResourceRequestID, URL: p.URI, Title: p.Name}, true
		}
	case cmf.Resource:
		if id, ok := strings.CutPrefix(p.URI, sourceDocumentURI); ok {
			part := Part{Type: "source-document", SourceID: id, MediaType: p.MimeType, Title: p.Name}
			if fn, ok := p.Annotations["filename"]; ok {
				part.Filename = strings.Trim(string(fn), `"`)
			}
			return part, true
		}
	}
	if src, ok := cmf.Media(p); ok {
		mt := src.MediaType
		if mt == "" {
			mt = "application/octet-stream"
		}
		url := src.Data
		if src.Type == cmf.SourceBase64 {
			url = "data:" + mt + ";base64," + src.Data
		}
		part := Part{Type: "file", MediaType: mt, URL: url}
		if d, ok := p.(cmf.Document); ok {
			part.Filename = d.Title
		}
		return part, true
	}
	return Part{}, false
}

func toolPart(tc cmf.ToolCall, s cmf.ToolCallState) Part {
	part := Part{Type: "tool-" + tc.Name, ToolCallID: tc.ToolCallID, Input: tc.Arguments}
	var approval *Approval
	if s.ApprovalID != "" {
		approval = &Approval{ID: s.ApprovalID}
		if d := s.Decision; d != nil {
			approval.Approved, approval.Reason = &d.Approved, d.Reason
		}
	}
	r := s.Result
	switch s.Status() {
	case cmf.CallAwaitingApproval:
		part.State, part.Approval = StateApprovalRequested, approval
	case cmf.CallAwaitingClient, cmf.CallRequested:
		part.State = StateInputAvailable
	case cmf.CallDenied:
		part.State, part.Approval = StateOutputDenied, approval
		if part.Approval == nil {
			no := false
			part.Approval = &Approval{ID: tc.ToolCallID, Approved: &no, Reason: s.Decision.Reason}
		}
	case cmf.CallAnswered:
		if !r.IsError {
			part.State, part.Output, part.Approval = StateOutputAvailable, r.Content, approval
			break
		}
		text := errorText(r.Content)
		part.State, part.ErrorText, part.Approval = StateOutputError, &text, approval
	}
	return part
}

func errorText(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}
