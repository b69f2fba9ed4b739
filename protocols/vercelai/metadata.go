package vercelai

import (
	"encoding/json"
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
// model and finish reason; nothing when the model reported neither usage
// nor its name.
func appendFinishMetadata(b []byte, ev *agent.RunFinished, before *Usage) []byte {
	md := Metadata{Model: ev.Model, FinishReason: finishReason(ev.StopReason)}
	if !ev.Usage.IsZero() || before != nil {
		var u Usage
		if before != nil {
			u = *before
		}
		u.add(ev.Usage.CMF())
		md.Usage = &u
	}
	if md.Usage == nil && md.Model == "" {
		return b
	}
	raw, _ := json.Marshal(md)
	return jsonw.RawField(b, "messageMetadata", raw)
}
