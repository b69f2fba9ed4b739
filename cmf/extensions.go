package cmf

import (
	"encoding/json"
	"maps"
	"slices"
)

// Extensions carry all contextual data of a message. Each field has a
// mutability tier (see [Tier]); [Extensions.Clone] copies according to it and
// [CheckExtensionChange] enforces it.
type Extensions struct {
	Request    *RequestExtension          `json:"request,omitempty"`    // immutable
	Agent      *AgentExtension            `json:"agent,omitempty"`      // immutable
	HTTP       *HTTPExtension             `json:"http,omitempty"`       // guarded
	Security   *SecurityExtension         `json:"security,omitempty"`   // monotonic (nested parts immutable)
	MCP        *MCPExtension              `json:"mcp,omitempty"`        // immutable
	Completion *CompletionExtension       `json:"completion,omitempty"` // immutable
	Provenance *ProvenanceExtension       `json:"provenance,omitempty"` // immutable
	LLM        *LLMExtension              `json:"llm,omitempty"`        // immutable
	Framework  *FrameworkExtension        `json:"framework,omitempty"`  // immutable
	UI         *UIExtension               `json:"ui,omitempty"`         // immutable
	Custom     map[string]json.RawMessage `json:"custom,omitempty"`     // mutable
}

// RequestExtension is the execution environment and request-level tracing.
type RequestExtension struct {
	Environment string `json:"environment,omitempty"`
	RequestID   string `json:"request_id,omitempty"`
	Timestamp   string `json:"timestamp,omitempty"`
	TraceID     string `json:"trace_id,omitempty"`
	SpanID      string `json:"span_id,omitempty"`
}

// AgentExtension is agent execution context: session, lineage and the
// original user intent.
type AgentExtension struct {
	Input          string               `json:"input,omitempty"`
	SessionID      string               `json:"session_id,omitempty"`
	ConversationID string               `json:"conversation_id,omitempty"`
	Turn           *int                 `json:"turn,omitempty"`
	AgentID        string               `json:"agent_id,omitempty"`
	ParentAgentID  string               `json:"parent_agent_id,omitempty"`
	Conversation   *ConversationContext `json:"conversation,omitempty"`
}

// ConversationContext is a window onto the conversation.
type ConversationContext struct {
	History []Message `json:"history,omitempty"`
	Summary string    `json:"summary,omitempty"`
	Topics  []string  `json:"topics,omitempty"`
}

// HTTPExtension is HTTP request context. Reading needs [CapReadHeaders],
// changing needs [CapWriteHeaders].
type HTTPExtension struct {
	Headers map[string]string `json:"headers,omitempty"`
}

// SecurityExtension holds labels and classification (add-only) and the
// immutable subject, object profiles and data policies.
type SecurityExtension struct {
	Labels         []string                         `json:"labels,omitempty"`
	Classification string                           `json:"classification,omitempty"`
	Subject        *SubjectExtension                `json:"subject,omitempty"`
	Objects        map[string]ObjectSecurityProfile `json:"objects,omitempty"`
	Data           map[string]DataPolicy            `json:"data,omitempty"`
}

// SubjectExtension is the authenticated identity making the request.
type SubjectExtension struct {
	ID          string                     `json:"id"`
	Type        SubjectType                `json:"type"`
	Roles       []string                   `json:"roles,omitempty"`
	Permissions []string                   `json:"permissions,omitempty"`
	Teams       []string                   `json:"teams,omitempty"`
	Claims      map[string]json.RawMessage `json:"claims,omitempty"`
}

// ObjectSecurityProfile declares an entity's access requirements.
type ObjectSecurityProfile struct {
	ManagedBy   string   `json:"managed_by"`
	Permissions []string `json:"permissions,omitempty"`
	TrustDomain string   `json:"trust_domain,omitempty"`
	DataScope   []string `json:"data_scope,omitempty"`
}

// DataPolicy declares labeling, action restrictions and retention for an
// entity's output. AllowedActions nil means unrestricted.
type DataPolicy struct {
	ApplyLabels    []string         `json:"apply_labels,omitempty"`
	AllowedActions []string         `json:"allowed_actions,omitempty"`
	DeniedActions  []string         `json:"denied_actions,omitempty"`
	Retention      *RetentionPolicy `json:"retention,omitempty"`
}

// RetentionPolicy says how long data may be kept.
type RetentionPolicy struct {
	MaxAgeSeconds *int64 `json:"max_age_seconds,omitempty"`
	Policy        string `json:"policy"`
	DeleteAfter   string `json:"delete_after,omitempty"`
}

// MCPExtension is metadata about the MCP entity being processed, gathered
// under "metadata" as the spec lays it out (ext.mcp.metadata.tool).
type MCPExtension struct {
	Metadata MCPMetadata `json:"metadata"`
}

// MCPMetadata holds the schema and annotations of the tool, resource or
// prompt being evaluated.
type MCPMetadata struct {
	Tool     *ToolMetadata     `json:"tool,omitempty"`
	Resource *ResourceMetadata `json:"resource,omitempty"`
	Prompt   *PromptMetadata   `json:"prompt,omitempty"`
}

// ToolMetadata describes an MCP tool.
type ToolMetadata struct {
	Name         string                     `json:"name"`
	Title        string                     `json:"title,omitempty"`
	Description  string                     `json:"description,omitempty"`
	InputSchema  json.RawMessage            `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage            `json:"output_schema,omitempty"`
	ServerID     string                     `json:"server_id,omitempty"`
	Namespace    string                     `json:"namespace,omitempty"`
	Annotations  map[string]json.RawMessage `json:"annotations,omitempty"`
}

// ResourceMetadata describes an MCP resource.
type ResourceMetadata struct {
	URI         string                     `json:"uri"`
	Name        string                     `json:"name,omitempty"`
	Description string                     `json:"description,omitempty"`
	MimeType    string                     `json:"mime_type,omitempty"`
	ServerID    string                     `json:"server_id,omitempty"`
	Annotations map[string]json.RawMessage `json:"annotations,omitempty"`
}

// PromptMetadata describes an MCP prompt template.
type PromptMetadata struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description,omitempty"`
	Arguments   []PromptArgument           `json:"arguments,omitempty"`
	ServerID    string                     `json:"server_id,omitempty"`
	Annotations map[string]json.RawMessage `json:"annotations,omitempty"`
}

// PromptArgument is one argument of an MCP prompt template.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// CompletionExtension is what the model (or the agent run) reported when it
// produced the message.
type CompletionExtension struct {
	StopReason StopReason `json:"stop_reason,omitempty"`
	// Error is what the person was told when the reply failed or was cut
	// short (a sentence for people, never internal error text), so that a
	// reloaded page says what the live one did.
	Error     string      `json:"error,omitempty"`
	Tokens    *TokenUsage `json:"tokens,omitempty"`
	Model     string      `json:"model,omitempty"`
	RawFormat string      `json:"raw_format,omitempty"`
	CreatedAt string      `json:"created_at,omitempty"`
	LatencyMs *int64      `json:"latency_ms,omitempty"`
}

// TokenUsage counts tokens.
type TokenUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	TotalTokens       int64 `json:"total_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens,omitempty"`    // part of OutputTokens
	CachedInputTokens int64 `json:"cached_input_tokens,omitempty"` // part of InputTokens: read from a prompt cache
	CacheWriteTokens  int64 `json:"cache_write_tokens,omitempty"`  // part of InputTokens: written to a prompt cache
}

// ProvenanceExtension is the origin and threading of a message. MessageID is
// the message's stable id (see [Message.ID]).
type ProvenanceExtension struct {
	Source    string `json:"source,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	ParentID  string `json:"parent_id,omitempty"`
}

// LLMExtension is the producing model's identity and capabilities.
type LLMExtension struct {
	ModelID      string   `json:"model_id,omitempty"`
	Provider     string   `json:"provider,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
}

// FrameworkExtension is the agentic framework's execution context.
type FrameworkExtension struct {
	Framework        string                     `json:"framework,omitempty"`
	FrameworkVersion string                     `json:"framework_version,omitempty"`
	NodeID           string                     `json:"node_id,omitempty"`
	GraphID          string                     `json:"graph_id,omitempty"`
	Metadata         map[string]json.RawMessage `json:"metadata,omitempty"`
}

// Clone copies e on write, as the tiers prescribe: immutable extensions are
// shared, not copied; the security extension's labels (monotonic) and the
// HTTP headers (guarded) are copied; custom (mutable) is copied deeply.
// A nil receiver returns nil.
func (e *Extensions) Clone() *Extensions {
	if e == nil {
		return nil
	}
	c := *e // shares every immutable pointer
	if e.Security != nil {
		s := *e.Security // subject, objects and data stay shared (immutable)
		s.Labels = slices.Clone(e.Security.Labels)
		c.Security = &s
	}
	if e.HTTP != nil {
		c.HTTP = &HTTPExtension{Headers: maps.Clone(e.HTTP.Headers)}
	}
	if e.Custom != nil {
		c.Custom = make(map[string]json.RawMessage, len(e.Custom))
		for k, v := range e.Custom {
			c.Custom[k] = slices.Clone(v)
		}
	}
	return &c
}

// clone returns a deep copy of the subject, so callers never share its
// slices or claims map.
func (s *SubjectExtension) clone() *SubjectExtension {
	if s == nil {
		return nil
	}
	c := *s
	c.Roles = slices.Clone(s.Roles)
	c.Permissions = slices.Clone(s.Permissions)
	c.Teams = slices.Clone(s.Teams)
	if s.Claims != nil {
		c.Claims = make(map[string]json.RawMessage, len(s.Claims))
		for k, v := range s.Claims {
			c.Claims[k] = slices.Clone(v)
		}
	}
	return &c
}

func (p ObjectSecurityProfile) clone() ObjectSecurityProfile {
	p.Permissions = slices.Clone(p.Permissions)
	p.DataScope = slices.Clone(p.DataScope)
	return p
}

func (d DataPolicy) clone() DataPolicy {
	d.ApplyLabels = slices.Clone(d.ApplyLabels)
	d.AllowedActions = slices.Clone(d.AllowedActions)
	d.DeniedActions = slices.Clone(d.DeniedActions)
	if d.Retention != nil {
		r := *d.Retention
		d.Retention = &r
	}
	return d
}

// AddLabels appends to dst the labels it does not hold yet (empty ones
// are skipped) and returns it: security labels only grow.
func AddLabels(dst []string, labels ...string) []string {
	for _, l := range labels {
		if l != "" && !slices.Contains(dst, l) {
			dst = append(dst, l)
		}
	}
	return dst
}

// AddLabels adds security labels to m, copying on write: m's extensions
// and their security extension are replaced by copies (another message
// may share them), the labels of which get the new ones.
func (m *Message) AddLabels(labels ...string) {
	if len(labels) == 0 {
		return
	}
	e := m.ownExtensions()
	var sec SecurityExtension
	if e.Security != nil {
		sec = *e.Security
	}
	sec.Labels = AddLabels(slices.Clip(sec.Labels), labels...)
	e.Security = &sec
}
