package vercelai

import (
	"encoding/json"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
	"github.com/agentui/agentui/uiadapter"
)

// Metadata is what agentui puts in an assistant message's metadata
// (useChat's message.metadata): sent with the start chunk (CreatedAt)
// and the finish chunk (the rest), and returned with the stored
// conversation for the whole message.
type Metadata = uiadapter.ReplyMetadata

// Usage is token usage in the AI SDK's own shape (LanguageModelUsage).
type Usage = uiadapter.TokenUsage

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
			u.Add(c.Tokens)
		}
	}
	return u
}

// appendFinishMetadata appends the finish chunk's messageMetadata field:
// the run's usage (plus, on a continuation, the continued steps'), its
// model and finish reason, and the application's metadata; nothing when
// there is neither usage, a model name nor the application's.
func appendFinishMetadata(b []byte, ev *agent.RunFinished, before *Usage) []byte {
	md := Metadata{Model: ev.Model, FinishReason: agent.FinishReason(ev.StopReason), App: ev.Metadata}
	if !ev.Usage.IsZero() || before != nil {
		var u Usage
		if before != nil {
			u = *before
		}
		u.Add(ev.Usage.CMF())
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
