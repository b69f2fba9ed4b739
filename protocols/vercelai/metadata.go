package vercelai

import (
	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
	"github.com/agentui/agentui/internal/wire"
)

// Metadata is what agentui puts in an assistant message's metadata
// (useChat's message.metadata): sent with the start chunk (CreatedAt)
// and the finish chunk (the rest), and returned with the stored
// conversation for the whole message.
type Metadata = wire.ReplyMetadata

// Usage is a reply's token usage as agentui keeps it; useChat's metadata
// renders it in the AI SDK's shape (LanguageModelUsage), 6's or 7's.
type Usage = wire.TokenUsage

// appendUsageV6 appends u in AI SDK 6's shape: the totals, and reasoning
// and cache-read tokens at the top level. AI SDK 6 names cache writes only
// in inputTokenDetails, which is there when there are some.
func appendUsageV6(b []byte, u *Usage) []byte {
	b = jsonw.IntField(append(b, '{'), "inputTokens", u.InputTokens)
	b = jsonw.IntField(b, "outputTokens", u.OutputTokens)
	b = jsonw.IntField(b, "totalTokens", u.TotalTokens)
	if u.ReasoningTokens != 0 {
		b = jsonw.IntField(b, "reasoningTokens", u.ReasoningTokens)
	}
	if u.CachedInputTokens != 0 {
		b = jsonw.IntField(b, "cachedInputTokens", u.CachedInputTokens)
	}
	if u.CacheWriteTokens > 0 {
		b = appendInputDetails(jsonw.Field(b, "inputTokenDetails"), u)
	}
	return append(b, '}')
}

// appendUsageV7 appends u in AI SDK 7's shape: the details replace the
// top-level reasoning and cached-input counts.
func appendUsageV7(b []byte, u *Usage) []byte {
	b = jsonw.IntField(append(b, '{'), "inputTokens", u.InputTokens)
	b = appendInputDetails(jsonw.Field(b, "inputTokenDetails"), u)
	b = jsonw.IntField(b, "outputTokens", u.OutputTokens)
	b = jsonw.IntField(append(jsonw.Field(b, "outputTokenDetails"), '{'), "textTokens", max(0, u.OutputTokens-u.ReasoningTokens))
	b = append(jsonw.IntField(b, "reasoningTokens", u.ReasoningTokens), '}')
	b = jsonw.IntField(b, "totalTokens", u.TotalTokens)
	return append(b, '}')
}

// appendInputDetails appends the split of the input tokens: read from the
// prompt cache, written to it, neither.
func appendInputDetails(b []byte, u *Usage) []byte {
	b = jsonw.IntField(append(b, '{'), "noCacheTokens", max(0, u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens))
	b = jsonw.IntField(b, "cacheReadTokens", u.CachedInputTokens)
	b = jsonw.IntField(b, "cacheWriteTokens", u.CacheWriteTokens)
	return append(b, '}')
}

// appendMetadata appends md as useChat gets it: its usage in the AI SDK's
// shape, 7's or 6's.
func appendMetadata(b []byte, md *Metadata, v7 bool) []byte {
	if v7 {
		return md.AppendJSON(b, appendUsageV7)
	}
	return md.AppendJSON(b, appendUsageV6)
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
			u.Add(c.Tokens)
		}
	}
	return u
}

// appendFinishMetadata appends the finish chunk's messageMetadata field:
// the run's usage (plus, on a continuation, the continued steps'), its
// model and finish reason, and the application's metadata; nothing when
// there is neither usage, a model name nor the application's.
func appendFinishMetadata(b []byte, ev *agent.RunFinished, before *Usage, v7 bool) []byte {
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
	return appendMetadata(jsonw.Field(b, "messageMetadata"), &md, v7)
}
