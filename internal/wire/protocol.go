package wire

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// Protocol is a chat wire protocol.
type Protocol interface {
	// Name identifies the protocol in logs ("vercel-ai", "ag-ui").
	Name() string
	// Decode turns a request body into a Turn. It returns an [*Error]
	// (status 400) for malformed input.
	Decode(r *http.Request, body []byte) (*Turn, error)
	// SetHeaders adds the protocol's response headers; the handler has
	// already set Content-Type: text/event-stream, Cache-Control: no-cache
	// and X-Accel-Buffering: no.
	SetHeaders(h http.Header)
	// NewEncoder returns an encoder that writes one run's events to w:
	// the run of t, with what the server knows beside it.
	NewEncoder(w *SSEWriter, t *Turn, tr Trusted) Encoder
}

// TailDecoder is a [Protocol] that can decode a request's new turn
// without the client's copy of the conversation before it. A handler
// that keeps the history decodes with it: it ignores that copy, and
// decoding it (hundreds of messages, resent each turn by useChat) was a
// third of a turn's CPU on a long chat.
type TailDecoder interface {
	Protocol
	// DecodeTail is Decode, but Turn.Messages holds the request's last
	// message only (one CMF message, or more for an assistant message
	// with steps and tool results); ParentID and Root are as Decode
	// would set them. Messages before the last are not checked.
	DecodeTail(r *http.Request, body []byte) (*Turn, error)
}

// Encoder writes one run's events as protocol frames. The events it gets
// are balanced ([agent.Balancer]: parts open and close in order inside
// steps, and a run cut off has had its open parts ended), so an encoder
// maps events and keeps only its protocol's own rules. Its methods
// return nothing: frames go to the [SSEWriter], which keeps the first
// write error (SSEWriter.Err) for the handler to act on.
type Encoder interface {
	// Encode writes the frames for one event (zero or more). A text
	// delta's event (*agent.PartDelta) is valid only during the call: a
	// run replayed from a shared log reuses its memory for the next
	// (runlog.Cursor). Keep what its fields hold, never the event.
	Encode(ev agent.Event)
	// Fail writes the protocol's error frames with a message for the
	// client (never internal error text), ending the step and run.
	Fail(message string)
	// Close writes the terminal frames. If the run neither finished nor
	// failed, it finishes the stream.
	Close()
}

// Intent is what a request asks for.
type Intent uint8

// Request intents.
const (
	// Submit adds a new user message (the last message of the turn).
	Submit Intent = iota + 1
	// Continue resumes a paused assistant turn with resolutions for its
	// pending tool calls (approvals, client tool outputs).
	Continue
	// Regenerate replaces the last assistant turn.
	Regenerate
)

func (i Intent) String() string {
	switch i {
	case Submit:
		return "submit"
	case Continue:
		return "continue"
	case Regenerate:
		return "regenerate"
	}
	return "unknown"
}

// Busy is what a request sent while its chat is producing a reply asks
// for. By default its client is answered busy (409), unless it shows the
// reply: it stopped reading it and sends again, so the reply is stopped.
type Busy uint8

// What a request sent while a reply runs asks for.
const (
	// BusyRefuse: the default.
	BusyRefuse Busy = iota
	// BusySteer: the new user message goes to the running reply, at its
	// next step boundary; when the reply ends first, it is a turn of its
	// own.
	BusySteer
	// BusyInterrupt: the running reply is stopped, as Stop does, and the
	// new turn runs.
	BusyInterrupt
	// BusyQueue: the new user message waits in the chat's queue, kept
	// with the chat, and runs as a turn of its own once the chat is free.
	BusyQueue
)

// ParseBusy reads a request's "busy" value ("" is the default).
func ParseBusy(s string) (Busy, error) {
	switch s {
	case "":
		return BusyRefuse, nil
	case "steer":
		return BusySteer, nil
	case "interrupt":
		return BusyInterrupt, nil
	case "queue":
		return BusyQueue, nil
	}
	return 0, BadRequest(`unknown "busy": ` + strconv.Quote(s) + ` (want "steer", "queue" or "interrupt")`)
}

func (b Busy) String() string {
	switch b {
	case BusySteer:
		return "steer"
	case BusyInterrupt:
		return "interrupt"
	case BusyQueue:
		return "queue"
	}
	return "refuse"
}

// Turn is a decoded request: the client's view of the conversation,
// converted to CMF and not yet trusted, and what it asks for.
type Turn struct {
	// ChatID names the conversation (Vercel "id", AG-UI "threadId").
	ChatID string
	// RunID names this run (AG-UI "runId"; generated for Vercel).
	RunID string
	// Key names the request, so that the same request sent again (a
	// retry) is known as one: the client's Idempotency-Key header, else
	// AG-UI's runId; "" when the client names neither (useChat without
	// the header).
	Key string
	// Skipped says what the decoder left out of the client's input (an
	// unknown part type, an incomplete tool part), for the handler's debug
	// log.
	Skipped []string
	// Intent is what the request asks for.
	Intent Intent
	// Messages is the client's conversation, oldest first, as CMF. It is
	// untrusted: the handler sanitizes it, or ignores all but the new turn
	// when it keeps the history itself (and then decodes only that turn,
	// when the protocol is a [TailDecoder]).
	Messages []cmf.Message
	// Resolutions answer pending tool calls (Continue).
	Resolutions []Resolution
	// MessageID is the protocol's target message id: on Continue, the
	// assistant message being continued; on Regenerate, the assistant
	// message being replaced (when the client says).
	MessageID string
	// ParentID is, on Submit, the id of the message the client shows
	// right before its new one (where its branch of the chat continues),
	// when the protocol's messages carry it; "" otherwise. With history,
	// a parent the server has that is followed by another turn means the
	// client edited under a new id (assistant-ui): the server drops the
	// other branch, so the model sees one.
	ParentID string
	// Root says, on Submit, that the client shows nothing before its new
	// message (its messages are its whole branch, and that is one
	// message): with history, the stored turns are not the client's
	// branch and go, as when it edits its first message under a new id
	// (assistant-ui).
	Root bool
	// ClientTools are tools the client declared and executes.
	ClientTools []agent.ToolSpec
	// State is the client's shared state, or nil.
	State json.RawMessage
	// Context is the client's application context.
	Context []agent.ContextItem
	// Model is the model the user picked ("" the server's default); the
	// handler refuses one the agent does not offer.
	Model string
	// ProtocolVersion is the version the client declared, "" if none.
	ProtocolVersion string
	// ResumeRequired says the protocol requires a run on a conversation
	// with pending approvals to answer them (AG-UI's interrupt rule); a run
	// without an answer ends with the protocol's error event.
	ResumeRequired bool
	// Busy is what the request asks for when its chat is producing a
	// reply: its new user message steers that reply, or interrupts it.
	Busy Busy
	// ParentRunID is the run the client builds on (AG-UI's
	// "parentRunId"): a new message whose parent is the running reply
	// steers it.
	ParentRunID string
	// Sealed are the sealed provider values the client sent back with
	// parts of Messages, as the decoder found them: untrusted, opened
	// only by a handler without history.
	Sealed []SealedValue
}

// Trusted is what the server gives an encoder beside the request's
// [Turn], which holds only what the client said and which no layer
// changes once it is decoded.
type Trusted struct {
	// History and Added are the trusted conversation the run starts from
	// when the handler keeps history (nil otherwise): what was stored
	// before this request (shared, read-only), then what the request
	// added to it (the new user message). Encoders use them to bring a
	// client whose copy differs back in line.
	History, Added []cmf.Message
	// Begun says the stream's opening frames were written already, by an
	// encoder before this one on the same stream (a queued message's
	// stream, which said "queued" long before its turn ran).
	Begun bool
	// Sealer, given by a handler without history, seals the provider
	// values of the run's parts for the client to carry back; nil with
	// history, where the server keeps them.
	Sealer *Sealer
}

// Resolution is a client's answer to a pending tool call, with the
// signature the server attached to its approval request (echoed back by
// the client) when there is one.
type Resolution struct {
	agent.Resolution
	Signature  string // HMAC from the approval request; "" when the client sent none
	ApprovalID string // the approval being answered, when the protocol names it
}

// NeedsSignature reports whether the resolution answers an approval
// request: approvals, denials and edited arguments must carry the server's
// signature.
func (r *Resolution) NeedsSignature() bool {
	return r.Kind == agent.Approve || r.Kind == agent.Deny
}
