package cmf

import (
	"encoding/json"
	"slices"
)

// UIExtension is what a message records beyond its parts so that a chat
// can be carried on and shown again exactly as it streamed: how each of
// its tool calls went (waited for approval, was for the client, how the
// approval was answered) and the UI data parts a step produced. agentui
// writes it when it records a message. It is immutable: set it with
// [Message.SetCallRecord] and [Message.AddData], which replace it rather
// than change a copy another message shares.
type UIExtension struct {
	// Calls are keyed by tool call id. On the message holding the
	// [ToolCall]: ApprovalID or Client. On the message holding the
	// [ToolResult]: Client (the client sent it) or Decision.
	Calls map[string]CallRecord `json:"calls,omitempty"`
	// Data are the step's UI data parts, in the order they streamed.
	Data []DataRecord `json:"data,omitempty"`
	// Metadata is the application's own metadata for the reply this
	// message ends (uiadapter.WithMetadata): JSON values by key.
	Metadata map[string]json.RawMessage `json:"metadata,omitempty"`
	// State is the shared state (AG-UI's) as the agent left it in this
	// message's run, when the run changed it.
	State *StateRecord `json:"state,omitempty"`
}

// StateRecord is a shared state: Snapshot with Patches (RFC 6902, in
// order) applied to it. A run that replaces the state records its last
// snapshot and the patches after it; one that only patches records the
// state it started from and its patches. Kept as the agent sent them, so
// a client that reconnects gets the same snapshot and patches.
type StateRecord struct {
	Snapshot json.RawMessage   `json:"snapshot"`
	Patches  []json.RawMessage `json:"patches,omitempty"`
}

// SetState records the shared state on m.
func (m *Message) SetState(s StateRecord) { m.ui().State = &s }

// LastState returns the shared state the latest of msgs that recorded one
// holds; nil when none did.
func LastState(msgs []Message) *StateRecord {
	for i := len(msgs) - 1; i >= 0; i-- {
		if e := msgs[i].Extensions; e != nil && e.UI != nil && e.UI.State != nil {
			return e.UI.State
		}
	}
	return nil
}

// CallRecord is what agentui knows about a tool call beyond CMF's parts.
type CallRecord struct {
	ApprovalID string    `json:"approval_id,omitempty"` // the call waited for approval under this id
	Client     bool      `json:"client,omitempty"`      // the call was for the client / its result came from it
	Decision   *Decision `json:"decision,omitempty"`    // how the approval was answered
}

// Decision is a user's answer to an approval request.
type Decision struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"` // why it was denied, when given
	// EditedArguments replaced the call's arguments when the user approved
	// an edited call; the call part keeps what the model asked for.
	EditedArguments json.RawMessage `json:"edited_arguments,omitempty"`
}

// DataRecord is a UI data part (Vercel data-*, AG-UI CUSTOM) kept with the
// message it streamed in. Index is the number of content parts the message
// had when it arrived, so a UI shows it where it streamed.
type DataRecord struct {
	Name  string          `json:"name"`
	ID    string          `json:"id,omitempty"`
	Value json.RawMessage `json:"value"`
	Index int             `json:"index"`
}

// CallRecord returns what m records about a tool call.
func (m *Message) CallRecord(toolCallID string) CallRecord {
	if m.Extensions == nil || m.Extensions.UI == nil {
		return CallRecord{}
	}
	return m.Extensions.UI.Calls[toolCallID]
}

// SetCallRecord records r for a tool call of m.
func (m *Message) SetCallRecord(toolCallID string, r CallRecord) {
	ui := m.ui()
	calls := make(map[string]CallRecord, len(ui.Calls)+1)
	for k, v := range ui.Calls {
		calls[k] = v
	}
	calls[toolCallID] = r
	ui.Calls = calls
}

// Data returns the UI data parts recorded on m. The slice is shared: read
// it, don't change it.
func (m *Message) Data() []DataRecord {
	if m.Extensions == nil || m.Extensions.UI == nil {
		return nil
	}
	return m.Extensions.UI.Data
}

// AddData records a UI data part on m. A record with an ID replaces the
// one with the same name and ID, keeping its place.
func (m *Message) AddData(r DataRecord) {
	if len(r.Value) == 0 {
		r.Value = json.RawMessage("null")
	}
	ui := m.ui()
	data := slices.Clone(ui.Data)
	replaced := false
	for i := range data {
		if r.ID != "" && data[i].Name == r.Name && data[i].ID == r.ID {
			data[i].Value, replaced = r.Value, true
		}
	}
	if !replaced {
		data = append(data, r)
	}
	ui.Data = data
}

// Metadata returns the application's metadata recorded on m. The map is
// shared: read it, don't change it.
func (m *Message) Metadata() map[string]json.RawMessage {
	if m.Extensions == nil || m.Extensions.UI == nil {
		return nil
	}
	return m.Extensions.UI.Metadata
}

// SetMetadata records the application's metadata on m, replacing what it
// had (the map is m's from then on).
func (m *Message) SetMetadata(md map[string]json.RawMessage) {
	m.ui().Metadata = md
}

// ui gives m a UI extension of its own (a copy of the one it had, in
// extensions of its own), to change before anyone else sees it. Its maps
// and slices are still shared: a setter replaces them, never changes them.
func (m *Message) ui() *UIExtension {
	e := m.ownExtensions()
	var ui UIExtension
	if e.UI != nil {
		ui = *e.UI
	}
	e.UI = &ui
	return &ui
}

// ToolCallStatus is where a tool call stands in its lifecycle.
type ToolCallStatus uint8

// The lifecycle of a tool call. A call the server runs goes from
// requested to answered; one that needs approval waits for it first, and
// is then answered (approved: the tool ran) or denied; one for the client
// waits for the client's output.
const (
	// CallRequested: the model asked for it and nothing answered it yet
	// (in a stored conversation: the run was cut off before the tool
	// finished).
	CallRequested        ToolCallStatus = iota + 1
	CallAwaitingApproval                // waits for the user's decision (ApprovalID)
	CallAwaitingClient                  // waits for the client's output
	CallDenied                          // the user denied it, or moved on without answering
	CallAnswered                        // it has a result: from the tool, or from the client
)

func (s ToolCallStatus) String() string {
	switch s {
	case CallRequested:
		return "requested"
	case CallAwaitingApproval:
		return "awaiting approval"
	case CallAwaitingClient:
		return "awaiting client"
	case CallDenied:
		return "denied"
	case CallAnswered:
		return "answered"
	}
	return "unknown"
}

// ToolCallState is a tool call and what became of it, folded from the
// messages that hold the call and its result.
type ToolCallState struct {
	Call       ToolCall
	MessageID  string      // the assistant message holding the call
	ApprovalID string      // set when the call waited for approval
	Client     bool        // the call was for the client
	Result     *ToolResult // nil while unanswered
	Decision   *Decision   // the approval's answer, when it was answered
}

// Status says where the call stands.
func (s *ToolCallState) Status() ToolCallStatus {
	switch {
	case s.Decision != nil && !s.Decision.Approved:
		return CallDenied
	case s.Result != nil:
		return CallAnswered
	case s.ApprovalID != "":
		return CallAwaitingApproval
	case s.Client:
		return CallAwaitingClient
	}
	return CallRequested
}

// Pending reports whether the call waits for the user or the client.
func (s *ToolCallState) Pending() bool {
	st := s.Status()
	return st == CallAwaitingApproval || st == CallAwaitingClient
}

// ToolCallStates lists every tool call of msgs in order, with its result
// and records. A result for a call msgs does not hold is left out, and so
// is a second call with an id already seen.
func ToolCallStates(msgs []Message) []ToolCallState {
	var calls []ToolCallState
	var index map[string]int
	for i := range msgs {
		m := &msgs[i]
		for _, p := range m.Content {
			switch p := p.(type) {
			case ToolCall:
				if index == nil {
					index = map[string]int{}
				}
				if _, dup := index[p.ToolCallID]; dup {
					continue
				}
				rec := m.CallRecord(p.ToolCallID)
				index[p.ToolCallID] = len(calls)
				calls = append(calls, ToolCallState{Call: p, MessageID: m.ID(), ApprovalID: rec.ApprovalID, Client: rec.Client})
			case ToolResult:
				j, ok := index[p.ToolCallID]
				if !ok || calls[j].Result != nil {
					continue
				}
				r := p
				calls[j].Result = &r
				calls[j].Decision = m.CallRecord(p.ToolCallID).Decision
			}
		}
	}
	return calls
}

// PendingToolCalls lists the calls of msgs' last turn (what follows the
// last user message) that wait for an approval or the client's output. It
// reads only that turn: a conversation that moves on with a new user
// message answers the calls left waiting (agentui stores a "not answered"
// result for each), so earlier turns have none.
func PendingToolCalls(msgs []Message) []ToolCallState {
	start := len(msgs)
	for start > 0 && msgs[start-1].Role != RoleUser {
		start--
	}
	var pending []ToolCallState
	for _, s := range ToolCallStates(msgs[start:]) {
		if s.Pending() {
			pending = append(pending, s)
		}
	}
	return pending
}
