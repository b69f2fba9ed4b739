package cmf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// ValidationError says which field of a message or part is invalid and why.
type ValidationError struct {
	Field  string // e.g. "content[2].tool_call_id"
	Reason string
}

func (e *ValidationError) Error() string { return "cmf: " + e.Field + ": " + e.Reason }

func invalid(field, reason string) error { return &ValidationError{Field: field, Reason: reason} }

// within prefixes the field of a validation error with path.
func within(path string, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Field: path + "." + ve.Field, Reason: ve.Reason}
	}
	return err
}

// Validate checks the message and all its parts. The error names the first
// invalid field.
func (m *Message) Validate() error {
	if v := m.SchemaVersion; v != "" && v != "2" && !strings.HasPrefix(v, "2.") {
		return invalid("schema_version", "unsupported version "+strconv.Quote(v)+" (want 2.x)")
	}
	if !m.Role.Valid() {
		return invalid("role", "unknown role "+strconv.Quote(string(m.Role)))
	}
	if !m.Channel.Valid() {
		return invalid("channel", "unknown channel "+strconv.Quote(string(m.Channel)))
	}
	for i, p := range m.Content {
		if p == nil {
			return invalid("content["+strconv.Itoa(i)+"]", "nil part")
		}
		if err := p.Validate(); err != nil {
			return within("content["+strconv.Itoa(i)+"]", err)
		}
	}
	if m.Extensions != nil {
		if err := m.Extensions.Validate(); err != nil {
			return within("extensions", err)
		}
	}
	return nil
}

// Validate checks the extensions' closed sets and ranges.
func (e *Extensions) Validate() error {
	if s := e.Security; s != nil && s.Subject != nil {
		if s.Subject.ID == "" {
			return invalid("security.subject.id", "required")
		}
		if !s.Subject.Type.Valid() {
			return invalid("security.subject.type", "unknown subject type "+strconv.Quote(string(s.Subject.Type)))
		}
	}
	if c := e.Completion; c != nil {
		if c.StopReason != "" && !c.StopReason.Valid() {
			return invalid("completion.stop_reason", "unknown stop reason "+strconv.Quote(string(c.StopReason)))
		}
		if t := c.Tokens; t != nil && (t.InputTokens < 0 || t.OutputTokens < 0 || t.TotalTokens < 0) {
			return invalid("completion.tokens", "negative token count")
		}
		if c.LatencyMs != nil && *c.LatencyMs < 0 {
			return invalid("completion.latency_ms", "negative")
		}
	}
	if a := e.Agent; a != nil {
		if a.Turn != nil && *a.Turn < 0 {
			return invalid("agent.turn", "negative")
		}
		if a.Conversation != nil {
			for i := range a.Conversation.History {
				if err := a.Conversation.History[i].Validate(); err != nil {
					return within("agent.conversation.history["+strconv.Itoa(i)+"]", err)
				}
			}
		}
	}
	if ui := e.UI; ui != nil {
		for id := range ui.Calls {
			if id == "" {
				return invalid("ui.calls", "empty tool call id")
			}
		}
		for i, d := range ui.Data {
			if len(d.Value) > 0 && !json.Valid(d.Value) {
				return invalid("ui.data["+strconv.Itoa(i)+"].value", "not JSON")
			}
		}
	}
	for k := range e.Custom {
		if k == "" {
			return invalid("custom", "empty key")
		}
	}
	return nil
}

// Validate checks the opaque value, if any: any text is valid.
func (p Text) Validate() error { return p.Opaque.validate("opaque") }

// Validate checks the opaque value, if any: any thinking text is valid.
func (p Thinking) Validate() error { return p.Opaque.validate("opaque") }

// Validate requires the redacted reasoning.
func (p RedactedThinking) Validate() error {
	if p.Opaque.Data == "" {
		return invalid("opaque.data", "required")
	}
	return p.Opaque.validate("opaque")
}

// validate requires a value (nothing to replay is no value at all) and a
// model for a value whose provider is known.
func (o *Opaque) validate(field string) error {
	switch {
	case o == nil:
		return nil
	case o.Data == "" && o.ID == "":
		return invalid(field+".data", "required")
	case o.Provider != "" && o.Model == "":
		return invalid(field+".model", "required with a provider")
	}
	return nil
}

// Validate requires an id, a name and arguments that are a JSON object.
func (p ToolCall) Validate() error {
	if p.ToolCallID == "" {
		return invalid("tool_call_id", "required")
	}
	if p.Name == "" {
		return invalid("name", "required")
	}
	if !isJSONObject(p.Arguments) {
		return invalid("arguments", "must be a JSON object")
	}
	return p.Opaque.validate("opaque")
}

// Validate requires the call id, the tool name and a JSON content value.
func (p ToolResult) Validate() error {
	if p.ToolCallID == "" {
		return invalid("tool_call_id", "required")
	}
	if p.ToolName == "" {
		return invalid("tool_name", "required")
	}
	if len(p.Content) == 0 || !json.Valid(p.Content) {
		return invalid("content", "must be a JSON value")
	}
	return nil
}

// Validate requires an id, a URI and a resource type, and rejects a
// resource that embeds both content and blob.
func (p Resource) Validate() error {
	if p.ResourceRequestID == "" {
		return invalid("resource_request_id", "required")
	}
	if p.URI == "" {
		return invalid("uri", "required")
	}
	if !p.ResourceType.Valid() {
		return invalid("resource_type", "unknown resource type "+strconv.Quote(string(p.ResourceType)))
	}
	if p.Content != nil && p.Blob != nil {
		return invalid("content", "a resource has content or blob, not both")
	}
	if p.SizeBytes != nil && *p.SizeBytes < 0 {
		return invalid("size_bytes", "negative")
	}
	for k, v := range p.Annotations {
		if !json.Valid(v) {
			return invalid("annotations."+k, "not JSON")
		}
	}
	return nil
}

// Validate requires an id, a URI and a resource type, and a range that is
// neither negative nor reversed.
func (p ResourceRef) Validate() error {
	if p.ResourceRequestID == "" {
		return invalid("resource_request_id", "required")
	}
	if p.URI == "" {
		return invalid("uri", "required")
	}
	if !p.ResourceType.Valid() {
		return invalid("resource_type", "unknown resource type "+strconv.Quote(string(p.ResourceType)))
	}
	if p.RangeStart != nil && *p.RangeStart < 0 {
		return invalid("range_start", "negative")
	}
	if p.RangeEnd != nil && *p.RangeEnd < 0 {
		return invalid("range_end", "negative")
	}
	if p.RangeStart != nil && p.RangeEnd != nil && *p.RangeStart > *p.RangeEnd {
		return invalid("range_end", "range is reversed (range_start > range_end)")
	}
	return nil
}

// Validate requires an id, a name and arguments that are a JSON object.
func (p PromptRequest) Validate() error {
	if p.PromptRequestID == "" {
		return invalid("prompt_request_id", "required")
	}
	if p.Name == "" {
		return invalid("name", "required")
	}
	if !isJSONObject(p.Arguments) {
		return invalid("arguments", "must be a JSON object")
	}
	return nil
}

// Validate requires the request id and prompt name and checks the rendered
// messages.
func (p PromptResult) Validate() error {
	if p.PromptRequestID == "" {
		return invalid("prompt_request_id", "required")
	}
	if p.PromptName == "" {
		return invalid("prompt_name", "required")
	}
	for i := range p.Messages {
		if err := p.Messages[i].Validate(); err != nil {
			return within("messages["+strconv.Itoa(i)+"]", err)
		}
	}
	return nil
}

// Validate checks the source.
func (p Image) Validate() error { return p.MediaSource.validate() }

// Validate checks the source and the duration.
func (p Video) Validate() error { return validateTimed(p.MediaSource, p.DurationMs) }

// Validate checks the source and the duration.
func (p Audio) Validate() error { return validateTimed(p.MediaSource, p.DurationMs) }

// Validate checks the source.
func (p Document) Validate() error { return p.MediaSource.validate() }

func validateTimed(s MediaSource, d *int64) error {
	if err := s.validate(); err != nil {
		return err
	}
	if d != nil && *d < 0 {
		return invalid("duration_ms", "negative")
	}
	return nil
}

// validate accepts a "url" source with a non-empty URL, a "file" source
// with a non-empty id, or a "base64" source whose data decodes as standard
// base64 (padded or not).
func (s MediaSource) validate() error {
	if !s.Type.Valid() {
		return invalid("type", "must be \"url\", \"base64\" or \"file\", got "+strconv.Quote(string(s.Type)))
	}
	if s.Data == "" {
		return invalid("data", "required")
	}
	if s.Type == SourceBase64 {
		enc := base64.StdEncoding
		if !strings.HasSuffix(s.Data, "=") && len(s.Data)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		if _, err := enc.DecodeString(s.Data); err != nil {
			return invalid("data", "not valid base64")
		}
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(raw)
}
