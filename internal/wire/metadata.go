package wire

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
)

// ReplyMetadata is the metadata agentui gives an assistant reply, the
// same for both protocols: useChat's message.metadata (the whole
// message's) and AG-UI 1.0's message metadata (one step's). It is built
// from what was stored with the reply (Add), so a reloaded page shows
// what the live one did.
type ReplyMetadata struct {
	CreatedAt    int64  `json:"createdAt,omitempty"` // Unix ms: when the reply started
	Model        string `json:"model,omitempty"`     // as the model reported it
	FinishReason string `json:"finishReason,omitempty"`
	// Error is what the client was told when the reply failed or was cut
	// short (its finish reason is then "error"): a reloaded page shows the
	// same failure as the live one.
	Error string      `json:"error,omitempty"`
	Usage *TokenUsage `json:"usage,omitempty"`
	// Labels are the security labels policies put on the reply's
	// messages (its steps and tool results), or on a user's message:
	// "this chat touched PII" shows on reload.
	Labels []string `json:"labels,omitempty"`
	// App is the application's own metadata ([WithMetadata]), written
	// next to agentui's fields; a key agentui uses is left out.
	App map[string]json.RawMessage `json:"-"`
}

// TokenUsage is token usage in AG-UI's shape (TokenUsage), whose names AI
// SDK 6 shares but for cache writes; useChat's metadata renders it in the
// AI SDK's own shape, 6's or 7's (package vercelai).
type TokenUsage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	TotalTokens       int64 `json:"totalTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens,omitempty"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	CacheWriteTokens  int64 `json:"cacheWriteInputTokens,omitempty"`
}

// Add counts t in.
func (u *TokenUsage) Add(t *cmf.TokenUsage) {
	u.InputTokens += t.InputTokens
	u.OutputTokens += t.OutputTokens
	u.TotalTokens += t.TotalTokens
	u.ReasoningTokens += t.ReasoningTokens
	u.CachedInputTokens += t.CachedInputTokens
	u.CacheWriteTokens += t.CacheWriteTokens
}

// Add folds in what a stored step of the reply records: its completion
// (the first step's creation time, the last model and finish reason, the
// sum of the usage) and the application's metadata. It reports whether m
// had any.
func (md *ReplyMetadata) Add(m *cmf.Message) bool {
	var c *cmf.CompletionExtension
	labelled := md.AddLabels(m)
	if m.Extensions != nil {
		c = m.Extensions.Completion
	}
	app := m.Metadata()
	if app != nil {
		md.App = app
	}
	if c == nil {
		return app != nil || labelled
	}
	if md.CreatedAt == 0 {
		if t, err := time.Parse(time.RFC3339Nano, c.CreatedAt); err == nil {
			md.CreatedAt = t.UnixMilli()
		}
	}
	if c.Model != "" {
		md.Model = c.Model
	}
	md.FinishReason = agent.FinishReason(c.StopReason)
	if c.Error != "" {
		md.FinishReason, md.Error = "error", c.Error
	}
	if c.Tokens != nil {
		if md.Usage == nil {
			md.Usage = &TokenUsage{}
		}
		md.Usage.Add(c.Tokens)
	}
	return true
}

// AddLabels folds in m's security labels and reports whether it had any.
func (md *ReplyMetadata) AddLabels(m *cmf.Message) bool {
	if m.Extensions == nil || m.Extensions.Security == nil || len(m.Extensions.Security.Labels) == 0 {
		return false
	}
	for _, l := range m.Extensions.Security.Labels {
		if !slices.Contains(md.Labels, l) {
			md.Labels = append(md.Labels, l)
		}
	}
	return true
}

// MarshalJSON writes agentui's fields, then the application's, sorted by
// key; the usage in AG-UI's shape.
func (md ReplyMetadata) MarshalJSON() ([]byte, error) {
	return md.AppendJSON(nil, nil), nil
}

// AppendJSON appends md as JSON to b: agentui's fields, the usage as
// usage appends it (a protocol's own shape; nil: AG-UI's), then the
// application's fields sorted by key, but for one agentui uses or whose
// value is not JSON.
func (md *ReplyMetadata) AppendJSON(b []byte, usage func([]byte, *TokenUsage) []byte) []byte {
	if usage == nil {
		usage = appendTokenUsage
	}
	b = append(b, '{')
	if md.CreatedAt != 0 {
		b = jsonw.IntField(b, "createdAt", md.CreatedAt)
	}
	if md.Model != "" {
		b = jsonw.StringField(b, "model", md.Model)
	}
	if md.FinishReason != "" {
		b = jsonw.StringField(b, "finishReason", md.FinishReason)
	}
	if md.Error != "" {
		b = jsonw.StringField(b, "error", md.Error)
	}
	if md.Usage != nil {
		b = usage(jsonw.Field(b, "usage"), md.Usage)
	}
	if len(md.Labels) > 0 {
		b = append(jsonw.Field(b, "labels"), '[')
		for i, l := range md.Labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.String(b, l)
		}
		b = append(b, ']')
	}
	if len(md.App) > 0 {
		for _, k := range slices.Sorted(maps.Keys(md.App)) {
			switch k {
			case "createdAt", "model", "finishReason", "error", "usage", "labels":
				continue
			}
			v := md.App[k]
			if !json.Valid(v) {
				continue
			}
			if b[len(b)-1] != '{' {
				b = append(b, ',')
			}
			b = jsonw.Raw(append(jsonw.String(b, k), ':'), v)
		}
	}
	return append(b, '}')
}

// appendTokenUsage appends u in AG-UI's shape (TokenUsage's field tags).
func appendTokenUsage(b []byte, u *TokenUsage) []byte {
	b = jsonw.IntField(append(b, '{'), "inputTokens", u.InputTokens)
	b = jsonw.IntField(b, "outputTokens", u.OutputTokens)
	b = jsonw.IntField(b, "totalTokens", u.TotalTokens)
	if u.ReasoningTokens != 0 {
		b = jsonw.IntField(b, "reasoningTokens", u.ReasoningTokens)
	}
	if u.CachedInputTokens != 0 {
		b = jsonw.IntField(b, "cachedInputTokens", u.CachedInputTokens)
	}
	if u.CacheWriteTokens != 0 {
		b = jsonw.IntField(b, "cacheWriteInputTokens", u.CacheWriteTokens)
	}
	return append(b, '}')
}
