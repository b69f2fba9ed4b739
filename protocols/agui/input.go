// Package agui speaks AG-UI 1.0: it decodes RunAgentInput into CMF and
// encodes agent events as AG-UI events over SSE, including frontend tools,
// shared state and approval interrupts. Pre-1.0 clients (that send no
// protocolVersion) get only what they understand. Exact rules:
// docs/protocols.md.
package agui

import "encoding/json"

// RunAgentInput is the body an AG-UI client (HttpAgent) POSTs.
type RunAgentInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	State           json.RawMessage `json:"state,omitempty"`
	Messages        []Message       `json:"messages"`
	Tools           []Tool          `json:"tools,omitempty"`
	Context         []Context       `json:"context,omitempty"`
	ForwardedProps  json.RawMessage `json:"forwardedProps,omitempty"`
	Resume          []ResumeEntry   `json:"resume,omitempty"`
}

// Message is an AG-UI message; Role says which fields matter: developer,
// system, assistant, user, tool, activity or reasoning.
type Message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"` // a string, or content parts (user, tool)
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`  // assistant
	ToolCallID string          `json:"toolCallId,omitempty"` // tool
	Error      string          `json:"error,omitempty"`      // tool: the tool failed
	// EncryptedValue is read, on reasoning and assistant messages, for the
	// provider value the server sealed for the message's part (server
	// without history); never written.
	EncryptedValue string `json:"encryptedValue,omitempty"`
	// Metadata is what the server sends with an assistant message to 1.0
	// clients (wire.ReplyMetadata); a client's is not read.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ToolCall is an assistant message's tool call.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
	// EncryptedValue is read for the provider value the server sealed
	// for the call (server without history); never written.
	EncryptedValue string `json:"encryptedValue,omitempty"`
}

// FunctionCall names the tool and carries its arguments as a JSON string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ContentPart is a part of user or tool content: text, or image, audio,
// video and document with a source.
type ContentPart struct {
	Type   string  `json:"type"`
	Text   string  `json:"text,omitempty"`
	Source *Source `json:"source,omitempty"`
	// The legacy binary part's (0.0.x clients): one of Data (base64),
	// URL and ID, with its MimeType.
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	URL      string `json:"url,omitempty"`
	ID       string `json:"id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// Source locates media: inline data (base64), a URL, or a provider's file
// handle.
type Source struct {
	Type     string `json:"type"` // data, url, file
	Value    string `json:"value"`
	MimeType string `json:"mimeType,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// Tool is a tool the frontend declares and executes.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Context is a piece of application context.
type Context struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// ResumeEntry answers an interrupt of the previous run.
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"` // resolved, cancelled
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// ApprovalPayload is what a resolved tool_call interrupt carries.
type ApprovalPayload struct {
	Approved   *bool           `json:"approved"`
	Reason     string          `json:"reason,omitempty"`
	EditedArgs json.RawMessage `json:"editedArgs,omitempty"`
}
