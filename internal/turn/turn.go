package turn

import (
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

// Check refuses a turn that names a tool call twice: two calls with
// one id, or two answers of the same kind for one call. An answer must
// decide exactly one call, so that the call the server verifies is the
// call that runs, once.
func Check(t *wire.Turn) error {
	calls := map[string]bool{}
	for i := range t.Messages {
		for _, p := range t.Messages[i].Content {
			if tc, ok := p.(cmf.ToolCall); ok {
				if calls[tc.ToolCallID] {
					return wire.BadRequest("two tool calls share one id")
				}
				calls[tc.ToolCallID] = true
			}
		}
	}
	approvals, outputs := map[string]bool{}, map[string]bool{}
	for i := range t.Resolutions {
		seen := outputs
		if t.Resolutions[i].NeedsSignature() {
			seen = approvals
		}
		id := t.Resolutions[i].ToolCallID
		if seen[id] {
			return wire.BadRequest("two answers for one tool call")
		}
		seen[id] = true
	}
	return nil
}

// withoutResults drops the tool results for the given calls from the
// messages after the last assistant message (the answers this request
// brings). Messages left empty are dropped.
func withoutResults(msgs []cmf.Message, calls map[string]bool) []cmf.Message {
	last := len(msgs) - 1
	for last >= 0 && msgs[last].Role != cmf.RoleAssistant {
		last--
	}
	out := msgs[: last+1 : last+1]
	for _, m := range msgs[last+1:] {
		content := m.Content[:0:0]
		for _, p := range m.Content {
			if r, ok := p.(cmf.ToolResult); ok && calls[r.ToolCallID] {
				continue
			}
			content = append(content, p)
		}
		if len(content) == 0 {
			continue
		}
		m.Content = content
		out = append(out, m)
	}
	return out
}
