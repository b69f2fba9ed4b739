// Package agent runs conversations: it takes CMF messages and produces a
// stream of events that protocol encoders turn into wire frames. It knows
// nothing of HTTP or of any protocol.
//
// [Loop] is the tool-calling loop over a streaming [Model]: it calls the
// model, streams its parts, runs server tools (concurrently when the model
// asks for several), pauses for tools that need the user's approval and for
// tools the client executes, and resumes from the [Resolution]s the next
// run brings.
package agent

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/agentui/agentui/cmf"
)

// Agent runs one turn of a conversation.
//
// Run returns the turn's events in order. The stream is balanced (see
// [Event]). A non-nil error ends it: the run failed, and everything it
// started has ended. When ctx is cancelled the run ends promptly with
// [RunFinished] whose StopReason is [cmf.StopAborted]. A consumer may stop
// iterating at any time; the run then stops and leaves no goroutine behind.
type Agent interface {
	Run(ctx context.Context, in *Input) iter.Seq2[Event, error]
}

// Input is what a run gets.
type Input struct {
	// History and Messages are the conversation, oldest first, already
	// trusted and sanitized. It ends with the new user message, or with an
	// assistant turn whose pending tool calls Resume answers. History is
	// what a server that keeps conversations had stored before this turn:
	// shared and read-only, passed on to the model as it is, so a turn on
	// a long conversation costs what the turn adds. Messages is the rest
	// (everything, when there is no stored history).
	History  []cmf.Message
	Messages []cmf.Message

	// Instructions is the server's system prompt. Client-supplied system
	// and developer messages never get here; this does.
	Instructions string

	// Tools are server tools for this run only, next to the agent's own
	// (a run interceptor adds a user's tools here). A name the agent
	// already has fails the run. A tool that needs approval must be here
	// again on the run that resumes it.
	Tools []Tool

	// ClientTools are tools the frontend declared and executes itself
	// (AG-UI "tools"). A call to one pauses the run until the client sends
	// its output.
	ClientTools []ToolSpec

	// Settings tune the model calls of this run; nil leaves the model's
	// defaults.
	Settings *ModelSettings

	// Model names the model this run's calls go to, among those the
	// agent's model offers ([Models]); "" is its default. A model that
	// serves one model ignores it.
	Model string

	// Resume answers tool calls the conversation shows as pending.
	Resume []Resolution

	// State is the client's shared state (AG-UI), or nil.
	State json.RawMessage

	// Context is application context from the client (AG-UI "context"). The
	// model sees it as data, never as instructions.
	Context []ContextItem

	// MessageID is the id for the first assistant message the run
	// produces; one is generated when empty.
	MessageID string

	// Extensions are the run's context: the request, the agent's session
	// and the authenticated subject, as a handler fills them at
	// ingestion. A guard's checks carry them, and a handler stores the
	// run's messages with them. Nil for none.
	Extensions *cmf.Extensions

	// Guard decides what the run calls and puts out (see [Guard]); nil
	// for none, which costs nothing.
	Guard Guard

	// Ledger records the run's server tool calls (see [Ledger]); nil
	// runs them with no record.
	Ledger Ledger

	// Steering hands the run the user messages sent while it runs; nil
	// for none. The messages have passed what the turn's own message
	// passes (sanitizing, the input guard).
	Steering Steering

	// Redrive says the run continues one whose server died mid-run: the
	// server tool calls its last assistant message left without results
	// are run (each through the Ledger: a call recorded finished gives
	// its recorded result, one recorded started is run again only when
	// its tool is idempotent). Otherwise such calls are taken as
	// interrupted and the model is told so.
	Redrive bool
}

// Steering is where a running agent finds the user messages sent to it
// while it runs. A [Loop] takes them at each step boundary: before a step
// that follows tool calls, and when the model has answered (then the
// answer is not the end: another step answers the new message). A
// running tool is never interrupted, and a run that ends for another
// reason (paused for approvals, stopped, out of steps) takes none: the
// server runs them as a new turn. Each message taken is emitted as
// [Steered] before the step that answers it.
type Steering interface {
	// Take returns the messages sent since the last call, oldest first,
	// and marks them taken.
	Take() []cmf.Message
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema; nil means any object
}

// ContextItem is one piece of application context.
type ContextItem struct {
	Description string
	Value       string
}

// ResolutionKind says how a pending tool call was answered.
type ResolutionKind uint8

// The ways to answer a pending tool call.
const (
	Approve      ResolutionKind = iota + 1 // run the tool (with EditedArgs when set)
	Deny                                   // don't run it; the model learns why (Reason)
	ClientOutput                           // a client tool's output (Output)
	ClientError                            // a client tool failed (ErrorText)
)

func (k ResolutionKind) String() string {
	switch k {
	case Approve:
		return "approve"
	case Deny:
		return "deny"
	case ClientOutput:
		return "client output"
	case ClientError:
		return "client error"
	}
	return "unknown"
}

// Resolution answers a pending tool call.
type Resolution struct {
	ToolCallID string
	Kind       ResolutionKind
	Reason     string          // Deny: why, if the user said
	EditedArgs json.RawMessage // Approve: replaces the arguments (re-validated)
	Output     json.RawMessage // ClientOutput
	ErrorText  string          // ClientError
	MessageID  string          // the client's id for the tool message, if it has one
}

// ToolKind says where a tool call runs and whether it waits for the user.
type ToolKind uint8

// Tool kinds.
const (
	ToolUnknown  ToolKind = iota // not a tool the agent knows
	ToolServer                   // runs on the server at once
	ToolApproval                 // runs on the server once the user approves
	ToolClient                   // the client executes it and sends the output
)

func (k ToolKind) String() string {
	switch k {
	case ToolServer:
		return "server"
	case ToolApproval:
		return "approval"
	case ToolClient:
		return "client"
	}
	return "unknown"
}

// ToolKinds is implemented by agents that can say, before a run, how a
// call would be handled. A handler uses it to accept tool output from a
// client only for tools the client executes: output a client sends for a
// server tool, or for a call that waits for approval, is not an answer.
// [Loop] implements it; for agents that don't, the agent alone decides.
type ToolKinds interface {
	// ToolKind says how a call to name with args is handled, given the
	// tools the client declared.
	ToolKind(name string, args json.RawMessage, clientTools []ToolSpec) ToolKind
}
