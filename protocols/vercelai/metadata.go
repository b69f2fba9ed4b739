package vercelai

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
)

// Metadata is what agentui puts in an assistant message's metadata
// (useChat's message.metadata): sent with the start chunk (CreatedAt)
// and the finish chunk (the rest), and returned with the stored
// conversation, so a reloaded page shows what the live one did.
type Metadata struct {
	CreatedAt    int64  `json:"createdAt,omitempty"` // Unix ms: when the reply started
	Model        string `json:"model,omitempty"`     // as the model reported it
	FinishReason string `json:"finishReason,omitempty"`
	Usage        *Usage `json:"usage,omitempty"` // the whole message's, over all its steps
	// App is the application's own metadata (uiadapter.WithMetadata),
	// written next to agentui's fields; a key agentui uses is left out.
	App map[string]json.RawMessage `json:"-"`
}

// MarshalJSON writes agentui's fields, then the application's, sorted by
// key.
func (md Metadata) MarshalJSON() ([]byte, error) {
	type own Metadata // without this method
	b, err := json.Marshal(own(md))
	if err != nil || len(md.App) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // reopen the object
	for _, k := range slices.Sorted(maps.Keys(md.App)) {
		switch k {
		case "createdAt", "model", "finishReason", "usage":
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(jsonw.String(b, k), ':')
		b = append(b, md.App[k]...)
	}
	return append(b, '}'), nil
}

// Usage is token usage in the AI SDK's own shape (LanguageModelUsage).
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	TotalTokens       int64 `json:"totalTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens,omitempty"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
}

func (u *Usage) add(t *cmf.TokenUsage) {
	u.InputTokens += t.InputTokens
	u.OutputTokens += t.OutputTokens
	u.TotalTokens += t.TotalTokens
	u.ReasoningTokens += t.ReasoningTokens
	u.CachedInputTokens += t.CachedInputTokens
}

// fold adds a stored step's completion to the metadata of the message it
// belongs to.
func (md *Metadata) fold(c *cmf.CompletionExtension) {
	if c == nil {
		return
	}
	if md.CreatedAt == 0 {
		if t, err := time.Parse(time.RFC3339Nano, c.CreatedAt); err == nil {
			md.CreatedAt = t.UnixMilli()
		}
	}
	if c.Model != "" {
		md.Model = c.Model
	}
	md.FinishReason = finishReason(c.StopReason)
	if c.Tokens != nil {
		if md.Usage == nil {
			md.Usage = &Usage{}
		}
		md.Usage.add(c.Tokens)
	}
}

func completion(m *cmf.Message) *cmf.CompletionExtension {
	if m.Extensions == nil {
		return nil
	}
	return m.Extensions.Completion
}

// continuedUsage is the usage stored for the steps of the assistant
// message at the end of history (the one a continuation extends); nil
// when none was.
func continuedUsage(history []cmf.Message) *Usage {
	var u *Usage
	for i := len(history) - 1; i >= 0; i-- {
		m := &history[i]
		if m.Role != cmf.RoleAssistant && m.Role != cmf.RoleTool {
			break
		}
		if c := completion(m); c != nil && c.Tokens != nil {
			if u == nil {
				u = &Usage{}
			}
			u.add(c.Tokens)
		}
	}
	return u
}

// appendFinishMetadata appends the finish chunk's messageMetadata field:
// the run's usage (plus, on a continuation, the continued steps'), its
// model and finish reason, and the application's metadata; nothing when
// there is neither usage, a model name nor the application's.
func appendFinishMetadata(b []byte, ev *agent.RunFinished, before *Usage) []byte {
	md := Metadata{Model: ev.Model, FinishReason: finishReason(ev.StopReason), App: ev.Metadata}
	if !ev.Usage.IsZero() || before != nil {
		var u Usage
		if before != nil {
			u = *before
		}
		u.add(ev.Usage.CMF())
		md.Usage = &u
	}
	if md.Usage == nil && md.Model == "" && len(md.App) == 0 {
		return b
	}
	raw, err := json.Marshal(md)
	if err != nil {
		return b // an application value that is not JSON: nothing rather than a broken frame
	}
	return jsonw.RawField(b, "messageMetadata", raw)
}
