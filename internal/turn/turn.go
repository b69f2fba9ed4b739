package turn

import (
	"slices"

	"github.com/agentui/agentui/agent"
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

// ShowsReply reports whether t shows a reply that is still being
// produced: reply is its first message's id, asked the id of the last
// message of the turn that asked for it. A client that showed the reply
// names it (a regenerate, the parent of a new message), holds it, or
// holds an assistant message right after asked (an agent may name its
// messages itself, and AG-UI gives reasoning messages ids of their own).
// Such a client stopped reading the reply and sends again; another tab
// that never showed it does not.
func ShowsReply(t *wire.Turn, reply, asked string) bool {
	if reply != "" && (t.MessageID == reply || t.ParentID == reply) {
		return true
	}
	for i := range t.Messages {
		id := t.Messages[i].ID()
		if id == "" {
			continue
		}
		if id == reply || id == asked && i+1 < len(t.Messages) && t.Messages[i+1].Role == cmf.RoleAssistant {
			return true
		}
	}
	return false
}

// RunAsked is what a chat's latest run was asked, as its log's header
// keeps it: what a request sent again is compared with (Retries).
type RunAsked struct {
	Key       string        // its request's key (wire.Turn.Key)
	Continued string        // the assistant message it continued, "" for a new reply
	Asked     []cmf.Message // what its request added, its new user message last
}

// Retries reports whether t is the request that started run, sent again:
// a retry (a response lost on the way, a proxy's or the app's second
// try), to be answered with that run's stream, not run again. A request
// that names itself is the run's when the names match. One that names
// nothing (useChat without an Idempotency-Key) is when it sends the
// run's new message again, unchanged, as a new message (useChat
// regenerates with a word of its own), or continues the message the run
// continued with answers stored already (stored: the chat's
// conversation; nil knows of none).
func Retries(t *wire.Turn, run RunAsked, stored []cmf.Message, policy *Policy) bool {
	if t.Key != "" || run.Key != "" {
		return t.Key == run.Key
	}
	if t.Intent == wire.Continue {
		return run.Continued != "" && t.MessageID == run.Continued && answered(stored, t.Resolutions)
	}
	asked := run.Asked
	if t.Intent != wire.Submit || len(asked) == 0 || len(t.Messages) == 0 {
		return false
	}
	was, m := asked[len(asked)-1], t.Messages[len(t.Messages)-1]
	if was.Role != cmf.RoleUser || m.Role != cmf.RoleUser || m.ID() == "" || m.ID() != was.ID() {
		return false
	}
	m.Content = slices.Clone(m.Content) // the turn is the client's
	clean, _ := Sanitize([]cmf.Message{m}, nil, *policy)
	return len(clean) == 1 && sameContent(clean[0], was)
}

// answered reports whether every answer is one the stored
// conversation's last turn holds already: its call has its result, and
// an approval was approved and a denial denied (a denial sent again as an
// approval is no retry).
func answered(stored []cmf.Message, answers []wire.Resolution) bool {
	if len(stored) == 0 || len(answers) == 0 {
		return false
	}
	status := map[string]cmf.ToolCallStatus{}
	for _, c := range cmf.ToolCallStates(stored[lastUser(stored)+1:]) {
		status[c.Call.ToolCallID] = c.Status()
	}
	for _, a := range answers {
		want := cmf.CallAnswered
		if a.Kind == agent.Deny {
			want = cmf.CallDenied
		}
		if status[a.ToolCallID] != want {
			return false
		}
	}
	return true
}
