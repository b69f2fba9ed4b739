// Package content writes the parts of a CMF message that a provider's API
// has no shape of its own for, the same way in every model package
// (agent/anthropic, agent/gemini, agent/openai, agent/openai/responses):
// a tool result as the text the model reads, inline media as a data URL
// or by name, a text resource as text.
package content

import (
	"encoding/json"

	"github.com/agentui/agentui/cmf"
)

// ResultText is a tool result as the model reads it: a JSON string
// unquoted, anything else as its JSON. For an API whose tool results carry
// an error flag of their own (Anthropic's is_error).
func ResultText(r cmf.ToolResult) string {
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		return s
	}
	return string(r.Content)
}

// ResultTextSayingError is [ResultText] with "Error: " before the result
// of a call that failed: for an API whose tool results have no error flag
// (Chat Completions, Responses), so the model still reads that it failed.
func ResultTextSayingError(r cmf.ToolResult) string {
	if r.IsError {
		return "Error: " + ResultText(r)
	}
	return ResultText(r)
}

// DataURL is where the API finds media: its URL, or for inline media a
// data: URL of its bytes (application/octet-stream when it names no type).
func DataURL(s cmf.MediaSource) string {
	if s.Type == cmf.SourceURL {
		return s.Data
	}
	mt := s.MediaType
	if mt == "" {
		mt = "application/octet-stream"
	}
	return "data:" + mt + ";base64," + s.Data
}

// MediaName names media the model cannot take, in the text that stands in
// for it: its URL, or its type when it came inline (never its bytes).
func MediaName(s cmf.MediaSource) string {
	if s.Type == cmf.SourceURL {
		return s.Data
	}
	return s.MediaType
}

// ResourceText is a resource with text content as the model reads it: its
// URI on a line of its own, then the text. False for a resource without
// text (a blob, or a reference only).
func ResourceText(r cmf.Resource) (string, bool) {
	if r.Content == nil {
		return "", false
	}
	return "[resource " + r.URI + "]\n" + *r.Content, true
}
