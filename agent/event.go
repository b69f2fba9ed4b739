package agent

import (
	"encoding/json"
	"time"

	"github.com/agentui/agentui/cmf"
)

// Event is one thing that happened during a run. The set is closed: the
// event types of this package.
//
// A run's stream is balanced: it starts with [RunStarted]; every
// [StepStarted] is followed by its [StepFinished]; every [PartStarted] by
// its [PartEnded]; and it ends with [RunFinished], or, when the run fails,
// with the iterator's non-nil error (after which nothing follows). Parts and
// steps are ended before either end, also when the run fails or is
// cancelled.
type Event interface{ isEvent() }

// RunStarted opens a run. MessageID is the id of the first assistant
// message the run produces.
type RunStarted struct {
	MessageID string
	// Time is when the run started: the reply's creation time, which a
	// replay shows as it was.
	Time time.Time `json:",omitzero"`
}

// StepStarted opens a step: one model call and the tool calls it makes.
// MessageID is the id of the assistant message the step produces.
type StepStarted struct {
	Step      int // 1-based
	MessageID string
}

// StepFinished closes a step.
type StepFinished struct {
	Step       int
	StopReason cmf.StopReason `json:",omitempty"`
	Usage      Usage
	Model      string `json:",omitempty"` // as the model's finish chunk named it
	Provider   string `json:",omitempty"` // as the model's finish chunk named it
	// Latency is how long the model call took, from the request to its
	// last chunk (0 when the step made no call).
	Latency time.Duration `json:",omitzero"`
}

// PartKind is the kind of a streamed part.
type PartKind uint8

// The streamed part kinds.
const (
	PartText PartKind = iota + 1
	PartThinking
	PartToolCall
	// PartRedactedThinking is reasoning the provider sent encrypted
	// ([cmf.RedactedThinking]): it starts and ends at once, with no
	// deltas, and protocols show nothing of it.
	PartRedactedThinking
)

func (k PartKind) String() string {
	switch k {
	case PartText:
		return "text"
	case PartThinking:
		return "thinking"
	case PartToolCall:
		return "tool_call"
	case PartRedactedThinking:
		return "redacted_thinking"
	}
	return "unknown"
}

// PartStarted opens a text, thinking or tool-call part. For a tool call, ID
// is the tool call id and ToolName is set.
type PartStarted struct {
	Kind      PartKind
	ID        string
	ToolName  string
	MessageID string // the assistant message the part belongs to
}

// PartDelta is a fragment of an open part: text, thinking, or a fragment of
// the tool call's argument JSON.
type PartDelta struct {
	Kind  PartKind
	ID    string
	Delta string
}

// PartEnded closes a part. Part is the complete part as it is stored: a
// [cmf.Text], a [cmf.Thinking], a [cmf.RedactedThinking] or a
// [cmf.ToolCall], with the provider's opaque value when it sent one. For a tool call whose arguments are not valid JSON or do
// not match the tool's schema, InputError says why; the call is then not
// executed and its result is an error the model sees.
type PartEnded struct {
	Kind       PartKind
	ID         string
	Part       cmf.Part
	InputError string
	// Labels are security labels a [Guard] put on the part: the message
	// that holds it is stored with them.
	Labels []string
}

// ToolResult is the result of a tool call: executed by the server, denied
// by the user, or supplied by the client for a client tool (FromClient,
// which protocols need not send back). For errors and denials, Output is a
// JSON string with the error text.
type ToolResult struct {
	ToolCallID string
	ToolName   string
	Output     json.RawMessage `json:",omitempty"`
	IsError    bool
	Approved   bool // the call ran (or failed validation) after the user approved it
	Denied     bool
	Reason     string // the denial reason, when given
	ApprovalID string // for approved and denied calls: the approval answered, when known
	// EditedInput is the arguments the tool ran with when the user
	// approved an edited call.
	EditedInput json.RawMessage `json:",omitempty"`
	FromClient  bool
	MessageID   string // the tool message that holds the result
	// Labels are security labels for the tool message: the tool's data
	// policy's and a [Guard]'s.
	Labels []string `json:",omitempty"`
}

// ToolProgress is a running server tool's preliminary output ([ToolEmitter]):
// what the user sees of the call until its [ToolResult]. Each replaces the
// one before; the model never sees it, and it is not stored.
type ToolProgress struct {
	ToolCallID string
	ToolName   string
	Output     json.RawMessage
}

// Source is a source the reply cites, by URL ([ToolEmitter.Source]). It
// is stored with its step (a CMF resource reference) and shown with the
// reply.
type Source struct {
	ID    string
	URL   string
	Title string `json:",omitempty"`
}

// ErrorText returns the error text of an error result (Output unquoted).
func (r *ToolResult) ErrorText() string {
	var s string
	if json.Unmarshal(r.Output, &s) == nil {
		return s
	}
	return string(r.Output)
}

// ApprovalRequested says a tool call needs the user's approval before it
// runs. The run then finishes paused. Signature is empty when the agent
// emits the event; the handler that serves the run fills it in (an HMAC
// that lets it verify the approval when it comes back).
type ApprovalRequested struct {
	ToolCallID string
	ToolName   string
	ApprovalID string
	Input      json.RawMessage `json:",omitempty"`
	Signature  string
}

// ClientToolCall says a tool call is for the client to execute. The run
// then finishes paused; the client's output resumes it.
type ClientToolCall struct {
	ToolCallID string
	ToolName   string
	Input      json.RawMessage `json:",omitempty"`
}

// StateSnapshot replaces the shared state.
type StateSnapshot struct {
	State json.RawMessage `json:",omitempty"`
}

// StateDelta changes the shared state with an RFC 6902 JSON Patch.
type StateDelta struct {
	Patch json.RawMessage `json:",omitempty"`
}

// Data is application data for the UI: Vercel data-* parts, AG-UI custom
// events. A Transient value is shown, not stored. A non-transient value
// with an ID replaces an earlier one with the same name and ID.
type Data struct {
	Name      string
	ID        string
	Value     json.RawMessage `json:",omitempty"`
	Transient bool
}

// Steered is a user message that came while the run was running and that
// the run took at a step boundary ([Steering]): the next step's model
// call sees it after what the run produced so far. It comes between
// steps, before the [StepStarted] of the step that answers it.
type Steered struct {
	Message cmf.Message
}

// StepReset voids the step the stream last finished: the server that
// produced it died (or handed the run over) before the step was done,
// and another runs it again from the run's last durable step. It comes
// right after that step's (forced) StepFinished. A client that can
// replace a step's parts does (AI SDK 7's reset-step); Thread, the
// conversation as it stands without the voided step, lets one that can
// replace its whole thread do that instead (AG-UI's MESSAGES_SNAPSHOT).
// Servers write it; agents never produce it.
type StepReset struct {
	Thread []cmf.Message `json:",omitempty"`
}

// SendOutcome is what the request that sent a message while its chat's
// reply ran is told of that message: written by a server to that
// request's own response, never produced by an agent or kept in a run's
// log.
type SendOutcome struct {
	// Outcome is [OutcomeDelivered] or [OutcomeQueued].
	Outcome   string
	MessageID string
	// RunID is the run that took it (delivered; "" when it is no longer
	// known: a retry once the run ended), or the run it will start
	// (queued).
	RunID string
	// Position is its place in the chat's queue, 1 the next to run
	// (queued).
	Position int
}

// The outcomes of a message sent while a reply ran.
const (
	// OutcomeDelivered: the running reply took it at a step boundary
	// ([Steered] in that run).
	OutcomeDelivered = "delivered"
	// OutcomeQueued: it waits in the chat's queue, and runs as a turn of
	// its own once the chat is free.
	OutcomeQueued = "queued"
)

// RunFinished closes a run. A run that paused for approvals or client
// tools has StopReason [cmf.StopPaused] and lists what it waits for.
type RunFinished struct {
	StopReason cmf.StopReason `json:",omitempty"`
	Usage      Usage          // all steps'
	Model      string         `json:",omitempty"` // the last step's
	Pending    []PendingCall
	// Metadata is the application's own metadata for the reply (JSON
	// values by key), which uiadapter.WithMetadata adds; an agent leaves
	// it nil.
	Metadata map[string]json.RawMessage `json:",omitempty"`
}

// PendingKind says what a paused tool call waits for.
type PendingKind uint8

// What a pending call waits for.
const (
	PendingApproval PendingKind = iota + 1 // the user's approval
	PendingClient                          // the client's output
)

// PendingCall is a tool call a paused run waits for.
type PendingCall struct {
	Kind       PendingKind
	ToolCallID string
	ToolName   string
	ApprovalID string          // for PendingApproval
	Input      json.RawMessage `json:",omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens       int64
	OutputTokens      int64
	ReasoningTokens   int64 // part of OutputTokens
	CachedInputTokens int64 // part of InputTokens: read from the provider's prompt cache
	CacheWriteTokens  int64 // part of InputTokens: written to the provider's prompt cache
	TotalTokens       int64
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.TotalTokens += o.TotalTokens
}

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

// CMF converts the usage to CMF token usage.
func (u Usage) CMF() *cmf.TokenUsage {
	total := u.TotalTokens
	if total == 0 {
		total = u.InputTokens + u.OutputTokens
	}
	return &cmf.TokenUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: total,
		ReasoningTokens: u.ReasoningTokens, CachedInputTokens: u.CachedInputTokens, CacheWriteTokens: u.CacheWriteTokens}
}

func (*RunStarted) isEvent()        {}
func (*StepStarted) isEvent()       {}
func (*StepFinished) isEvent()      {}
func (*PartStarted) isEvent()       {}
func (*PartDelta) isEvent()         {}
func (*PartEnded) isEvent()         {}
func (*ToolResult) isEvent()        {}
func (*ToolProgress) isEvent()      {}
func (*Source) isEvent()            {}
func (*StepReset) isEvent()         {}
func (*ApprovalRequested) isEvent() {}
func (*ClientToolCall) isEvent()    {}
func (*StateSnapshot) isEvent()     {}
func (*StateDelta) isEvent()        {}
func (*Data) isEvent()              {}
func (*Steered) isEvent()           {}
func (*SendOutcome) isEvent()       {}
func (*RunFinished) isEvent()       {}
