package uiadapter

import (
	"log/slog"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// checkTurn refuses a turn that names a tool call twice: two calls with
// one id, or two answers of the same kind for one call. An answer must
// decide exactly one call, so that the call the server verifies is the
// call that runs, once.
func checkTurn(t *Turn) error {
	calls := map[string]bool{}
	for i := range t.Messages {
		for _, p := range t.Messages[i].Content {
			if tc, ok := p.(cmf.ToolCall); ok {
				if calls[tc.ToolCallID] {
					return BadRequest("two tool calls share one id")
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
			return BadRequest("two answers for one tool call")
		}
		seen[id] = true
	}
	return nil
}

// screenClientOutputs keeps the client's tool outputs only where they can
// answer: for calls to tools the client executes. Output for a call whose
// approval this request answers (CopilotKit sends both for one interrupt)
// is dropped, and the approval decides; so is output for a server tool or
// a call that needs approval. Used without history, where the client's
// messages are all there is: the dropped outputs' result parts are taken
// out of the messages too, so the model never sees them. With history,
// checkResolutions applies the same rule to the stored calls.
func (h *Handler) screenClientOutputs(t *Turn, log *slog.Logger) {
	decided := map[string]bool{}
	for i := range t.Resolutions {
		if t.Resolutions[i].NeedsSignature() {
			decided[t.Resolutions[i].ToolCallID] = true
		}
	}
	kinds, _ := h.agent.(agent.ToolKinds)
	dropped := map[string]bool{}
	kept := t.Resolutions[:0:0]
	for _, res := range t.Resolutions {
		if res.NeedsSignature() {
			kept = append(kept, res)
			continue
		}
		id := res.ToolCallID
		if decided[id] {
			// CopilotKit sends the interrupt's answer as a tool message
			// too: expected, so not a warning.
			log.Debug("ignored client tool output for a call whose approval this request answers", "call", id)
			dropped[id] = true
			continue
		}
		if kinds != nil {
			if call, ok := findCall(t.Messages, id); ok {
				switch kinds.ToolKind(call.Name, call.Arguments, t.ClientTools) {
				case agent.ToolApproval:
					log.Warn("ignored client tool output for a call that needs approval", "call", id, "tool", call.Name)
					dropped[id] = true
					continue
				case agent.ToolServer, agent.ToolUnknown:
					// Kept as history (the client's copy is all there is
					// without a store) but never an answer.
					log.Warn("ignored client tool output for a server tool", "call", id, "tool", call.Name)
					continue
				}
			}
		}
		kept = append(kept, res)
	}
	t.Resolutions = kept
	if len(dropped) > 0 {
		t.Messages = withoutResults(t.Messages, dropped)
	}
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
