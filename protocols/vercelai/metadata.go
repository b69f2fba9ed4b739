package vercelai

import (
	"bytes"
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

// Usage is a reply's token usage as agentui keeps it; useChat's metadata
// renders it in the AI SDK's shape (LanguageModelUsage), 6's or 7's.
type Usage = uiadapter.TokenUsage

// usageV6 is usage with AI SDK 6's names: the totals, and reasoning and
// cache-read tokens at the top level. AI SDK 6 names cache writes only in
// inputTokenDetails, which is there when there are some.
type usageV6 struct {
	InputTokens       int64         `json:"inputTokens"`
	OutputTokens      int64         `json:"outputTokens"`
	TotalTokens       int64         `json:"totalTokens"`
	ReasoningTokens   int64         `json:"reasoningTokens,omitempty"`
	CachedInputTokens int64         `json:"cachedInputTokens,omitempty"`
	InputTokenDetails *inputDetails `json:"inputTokenDetails,omitempty"`
}

// usageV7 is usage in AI SDK 7's shape: the details replace the top-level
// reasoning and cached-input counts.
type usageV7 struct {
	InputTokens        int64         `json:"inputTokens"`
	InputTokenDetails  inputDetails  `json:"inputTokenDetails"`
	OutputTokens       int64         `json:"outputTokens"`
	OutputTokenDetails outputDetails `json:"outputTokenDetails"`
	TotalTokens        int64         `json:"totalTokens"`
}

// inputDetails split the input tokens: read from the prompt cache,
// written to it, neither.
type inputDetails struct {
	NoCacheTokens    int64 `json:"noCacheTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
}

// outputDetails split the output tokens: reasoning, the rest.
type outputDetails struct {
	TextTokens      int64 `json:"textTokens"`
	ReasoningTokens int64 `json:"reasoningTokens"`
}

// aiSDKUsage is u in the shape of AI SDK 7 (v7) or 6. Cache reads and
// writes are part of the input, reasoning part of the output.
func aiSDKUsage(u *Usage, v7 bool) any {
	in := inputDetails{NoCacheTokens: max(0, u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens), CacheReadTokens: u.CachedInputTokens, CacheWriteTokens: u.CacheWriteTokens}
	if !v7 {
		v6 := usageV6{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, ReasoningTokens: u.ReasoningTokens, CachedInputTokens: u.CachedInputTokens}
		if u.CacheWriteTokens > 0 {
			v6.InputTokenDetails = &in
		}
		return v6
	}
	return usageV7{InputTokens: u.InputTokens, InputTokenDetails: in, OutputTokens: u.OutputTokens,
		OutputTokenDetails: outputDetails{TextTokens: max(0, u.OutputTokens-u.ReasoningTokens), ReasoningTokens: u.ReasoningTokens}, TotalTokens: u.TotalTokens}
}

// marshalMetadata is md as useChat gets it: its usage in the AI SDK's
// shape, in the place Metadata's own encoding gives it.
func marshalMetadata(md *Metadata, v7 bool) ([]byte, error) {
	b, err := json.Marshal(md)
	if err != nil || md.Usage == nil {
		return b, err
	}
	own, err := json.Marshal(md.Usage)
	if err != nil {
		return nil, err
	}
	sdk, err := json.Marshal(aiSDKUsage(md.Usage, v7))
	if err != nil {
		return nil, err
	}
	// agentui's fields come before the application's, which cannot hold
	// the key "usage": the first match is the usage.
	return bytes.Replace(b, append([]byte(`"usage":`), own...), append([]byte(`"usage":`), sdk...), 1), nil
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
	raw, err := marshalMetadata(&md, v7)
	if err != nil {
		return b // an application value that is not JSON: nothing rather than a broken frame
	}
	return jsonw.RawField(b, "messageMetadata", raw)
}
