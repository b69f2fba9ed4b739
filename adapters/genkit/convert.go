package genkitagent

import (
	"encoding/json"

	"github.com/firebase/genkit/go/ai"

	"github.com/agentui/agentui/cmf"
)

// appendMessage adds a stored message as Genkit's: user text, the
// model's reasoning, text and tool requests (each call's id its ref),
// and tool responses. System messages and media are left out.
func appendMessage(msgs []*ai.Message, m *cmf.Message) []*ai.Message {
	switch m.Role {
	case cmf.RoleUser:
		return append(msgs, ai.NewUserTextMessage(m.Text()))
	case cmf.RoleAssistant:
		if mm := modelMessage(m); len(mm.Content) > 0 {
			return append(msgs, mm)
		}
	case cmf.RoleTool:
		var parts []*ai.Part
		for _, p := range m.Content {
			if r, ok := p.(cmf.ToolResult); ok {
				parts = append(parts, ai.NewToolResponsePart(&ai.ToolResponse{Name: r.ToolName, Ref: r.ToolCallID, Output: value(r.Content)}))
			}
		}
		if len(parts) > 0 {
			return append(msgs, ai.NewMessage(ai.RoleTool, nil, parts...))
		}
	}
	return msgs
}

// modelMessage is an assistant message as a Genkit model message.
func modelMessage(m *cmf.Message) *ai.Message {
	var parts []*ai.Part
	for _, p := range m.Content {
		switch p := p.(type) {
		case cmf.Thinking:
			parts = append(parts, ai.NewReasoningPart(p.Text, nil))
		case cmf.Text:
			parts = append(parts, ai.NewTextPart(p.Text))
		case cmf.ToolCall:
			parts = append(parts, ai.NewToolRequestPart(&ai.ToolRequest{Name: p.Name, Ref: p.ToolCallID, Input: value(p.Arguments)}))
		}
	}
	return ai.NewModelMessage(parts...)
}

// value is JSON as a Go value (nil when it is not JSON).
func value(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}
