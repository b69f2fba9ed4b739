package vercelai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentui/agentui/internal/jsonw"
)

// UIMessage is the AI SDK's UIMessage: what useChat holds and sends.
type UIMessage struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"` // system, user or assistant
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Parts    []Part          `json:"parts"`
}

// Part is one UIMessage part. Type says which fields matter: "text",
// "reasoning", "file", "source-url", "source-document", "step-start",
// "data-<name>", "tool-<name>" and "dynamic-tool". Encoding writes only the
// fields of the part's type and state, as the SDK's validation expects.
type Part struct {
	Type       string          `json:"type"`
	ID         string          `json:"id,omitempty"`         // reasoning, data-*
	Text       *string         `json:"text,omitempty"`       // text, reasoning
	State      string          `json:"state,omitempty"`      // text/reasoning: streaming|done; tools: the tool state
	MediaType  string          `json:"mediaType,omitempty"`  // file, source-document
	Filename   string          `json:"filename,omitempty"`   // file, source-document
	URL        string          `json:"url,omitempty"`        // file, source-url
	SourceID   string          `json:"sourceId,omitempty"`   // source-*
	Title      string          `json:"title,omitempty"`      // source-*, tools
	ToolCallID string          `json:"toolCallId,omitempty"` // tools
	ToolName   string          `json:"toolName,omitempty"`   // dynamic-tool
	Input      json.RawMessage `json:"input,omitempty"`      // tools
	Output     json.RawMessage `json:"output,omitempty"`     // tools, output-available
	ErrorText  *string         `json:"errorText,omitempty"`  // tools, output-error
	Approval   *Approval       `json:"approval,omitempty"`   // tools
	Data       json.RawMessage `json:"data,omitempty"`       // data-*
	// ProviderExecuted marks a tool the model provider ran itself.
	ProviderExecuted *bool `json:"providerExecuted,omitempty"`
	// ProviderMetadata (text, reasoning) and CallProviderMetadata (tools)
	// are read for the provider values the server sealed for the part
	// (server without history); never written.
	ProviderMetadata     json.RawMessage `json:"providerMetadata,omitempty"`
	CallProviderMetadata json.RawMessage `json:"callProviderMetadata,omitempty"`
}

// Approval is a tool part's approval record.
type Approval struct {
	ID        string `json:"id"`
	Approved  *bool  `json:"approved,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// Tool part states.
const (
	StateInputStreaming    = "input-streaming"
	StateInputAvailable    = "input-available"
	StateApprovalRequested = "approval-requested"
	StateApprovalResponded = "approval-responded"
	StateOutputAvailable   = "output-available"
	StateOutputError       = "output-error"
	StateOutputDenied      = "output-denied"
)

// errApprovedNotBool is returned when "approved" is not a JSON boolean:
// 1 or "true" must never count as an approval.
var errApprovedNotBool = errors.New(`"approved" must be true or false`)

// UnmarshalJSON decodes an approval, insisting that "approved" is a JSON
// boolean when present.
func (a *Approval) UnmarshalJSON(b []byte) error {
	var w struct {
		ID        string          `json:"id"`
		Approved  json.RawMessage `json:"approved"`
		Reason    string          `json:"reason"`
		Signature string          `json:"signature"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*a = Approval{ID: w.ID, Reason: w.Reason, Signature: w.Signature}
	switch v := string(bytes.TrimSpace(w.Approved)); v {
	case "":
	case "true", "false":
		ok := v == "true"
		a.Approved = &ok
	default:
		return errApprovedNotBool
	}
	return nil
}

// IsTool reports whether the part is a tool part.
func (p *Part) IsTool() bool { return p.Type == "dynamic-tool" || strings.HasPrefix(p.Type, "tool-") }

// Tool returns the tool's name of a tool part.
func (p *Part) Tool() string {
	if p.Type == "dynamic-tool" {
		return p.ToolName
	}
	return strings.TrimPrefix(p.Type, "tool-")
}

// MarshalJSON writes the fields of the part's type (and, for tools, of its
// state) and no others: optional fields are left out, never null, and the
// fields a type requires are always there.
func (p Part) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 128)
	b = append(b, '{')
	b = jsonw.StringField(b, "type", p.Type)
	str := func(name, v string) {
		if v != "" {
			b = jsonw.StringField(b, name, v)
		}
	}
	text := func() {
		t := ""
		if p.Text != nil {
			t = *p.Text
		}
		b = jsonw.StringField(b, "text", t)
		str("state", p.State)
	}
	switch {
	case p.Type == "text":
		text()
	case p.Type == "reasoning":
		str("id", p.ID)
		text()
	case p.Type == "file":
		b = jsonw.StringField(b, "mediaType", p.MediaType)
		str("filename", p.Filename)
		b = jsonw.StringField(b, "url", p.URL)
	case p.Type == "source-url":
		b = jsonw.StringField(b, "sourceId", p.SourceID)
		b = jsonw.StringField(b, "url", p.URL)
		str("title", p.Title)
	case p.Type == "source-document":
		b = jsonw.StringField(b, "sourceId", p.SourceID)
		b = jsonw.StringField(b, "mediaType", p.MediaType)
		b = jsonw.StringField(b, "title", p.Title)
		str("filename", p.Filename)
	case p.Type == "step-start":
	case strings.HasPrefix(p.Type, "data-"):
		str("id", p.ID)
		b = jsonw.RawField(b, "data", p.Data)
	case p.IsTool():
		b = p.appendTool(b)
	}
	return append(b, '}'), nil
}

func (p *Part) appendTool(b []byte) []byte {
	if p.Type == "dynamic-tool" {
		b = jsonw.StringField(b, "toolName", p.ToolName)
	}
	b = jsonw.StringField(b, "toolCallId", p.ToolCallID)
	b = jsonw.StringField(b, "state", p.State)
	if p.Title != "" {
		b = jsonw.StringField(b, "title", p.Title)
	}
	if p.ProviderExecuted != nil {
		b = jsonw.BoolField(b, "providerExecuted", *p.ProviderExecuted)
	}
	switch p.State {
	case StateInputStreaming:
		if len(p.Input) > 0 {
			b = jsonw.RawField(b, "input", p.Input)
		}
	case StateOutputError:
		if len(p.Input) > 0 {
			b = jsonw.RawField(b, "input", p.Input)
		}
		t := ""
		if p.ErrorText != nil {
			t = *p.ErrorText
		}
		b = jsonw.StringField(b, "errorText", t)
	default:
		b = jsonw.RawField(b, "input", p.Input)
	}
	if p.State == StateOutputAvailable {
		b = jsonw.RawField(b, "output", p.Output)
	}
	if a := p.Approval; a != nil {
		b = jsonw.Field(b, "approval")
		b = append(b, '{')
		b = jsonw.StringField(b, "id", a.ID)
		if a.Approved != nil {
			b = jsonw.BoolField(b, "approved", *a.Approved)
		}
		if a.Reason != "" {
			b = jsonw.StringField(b, "reason", a.Reason)
		}
		if a.Signature != "" {
			b = jsonw.StringField(b, "signature", a.Signature)
		}
		b = append(b, '}')
	}
	return b
}
