package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"

	"github.com/agentui/agentui/cmf"
)

// Errors a [Model] returns (wrapped) for failures the user can act on; a
// server tells its client one short sentence for each (uiadapter), the
// same whichever provider failed, and only generic words for others. The
// provider's own detail (status, body, address) stays in the error's
// text, for the log.
var (
	// ErrContextOverflow: the conversation does not fit the model's
	// context window.
	ErrContextOverflow = errors.New("agent: the conversation is longer than the model's context window")
	// ErrModelBusy: the provider refused the call as rate-limited,
	// overloaded or failing (408, 409, 429, 5xx), and retries did not
	// help. Trying again later may.
	ErrModelBusy = errors.New("agent: the model is rate-limited or overloaded")
	// ErrModelUnreachable: the provider could not be reached (the
	// connection was refused or reset, its name did not resolve, or it
	// timed out), and retries did not help.
	ErrModelUnreachable = errors.New("agent: the model could not be reached")
	// ErrModelRejected: the provider refused the request as one it will
	// not serve as it is (a 4xx other than those above: invalid, too
	// large, an unknown model); sending it again will not help.
	ErrModelRejected = errors.New("agent: the model's provider rejected the request")
	// ErrModelAccessDenied: the provider refused the server's credentials
	// or account (401, 403, an invalid key, a quota used up): the server
	// is misconfigured, which its operator must fix.
	ErrModelAccessDenied = errors.New("agent: the model's provider refused the server's credentials")
)

// Model is a streaming language model.
//
// Stream makes one model call. It yields chunks as they arrive and ends
// with one [ChunkFinish]; a non-nil error ends the stream early. When ctx
// is cancelled Stream returns promptly; when the consumer stops iterating,
// Stream releases what it holds (connections, goroutines).
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Request is one model call. The model sees System, then History, then
// Messages ([Request.All] yields them in that order).
type Request struct {
	// System is what comes before the conversation: a system message with
	// the server's instructions, when there are any, and the application's
	// context, as a user message that labels it as data.
	System []cmf.Message
	// History and Messages are the conversation, oldest first; every tool
	// call in it has a result. History is what the server had stored
	// before this turn: shared and read-only, and kept apart so that a
	// call on a long conversation does not copy it. Messages is the rest.
	History  []cmf.Message
	Messages []cmf.Message
	// Tools are all tools the model may call, server and client.
	Tools []ToolSpec
	// State is the shared state the client sent (AG-UI), or nil.
	State json.RawMessage
	// Settings tune this call ([Input.Settings]); nil: the model's
	// defaults. A model applies what it supports.
	Settings *ModelSettings
	// Model names the model the call is for ([Input.Model]); "" is the
	// default. [Models] routes on it.
	Model string
}

// ModelSettings tune model calls. A nil field leaves the model's default.
type ModelSettings struct {
	Temperature     *float64
	TopP            *float64
	MaxOutputTokens *int64 // the most tokens one call may produce
	Seed            *int64
}

// All yields every message the model sees, in order.
func (r *Request) All() iter.Seq[*cmf.Message] {
	return func(yield func(*cmf.Message) bool) {
		for _, part := range [...][]cmf.Message{r.System, r.History, r.Messages} {
			for i := range part {
				if !yield(&part[i]) {
					return
				}
			}
		}
	}
}

// Len is the number of messages the model sees.
func (r *Request) Len() int { return len(r.System) + len(r.History) + len(r.Messages) }

// LastTurn returns the conversation's last user message and what followed
// it (all of it when there is no user message). It copies only when the
// turn starts in History and goes on in Messages.
func (r *Request) LastTurn() []cmf.Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == cmf.RoleUser {
			return r.Messages[i:]
		}
	}
	start := len(r.History)
	for start > 0 && r.History[start-1].Role != cmf.RoleUser {
		start--
	}
	if start > 0 {
		start-- // the user message
	}
	if len(r.Messages) == 0 {
		return r.History[start:]
	}
	return append(r.History[start:len(r.History):len(r.History)], r.Messages...)
}

// ChunkKind says what a chunk carries.
type ChunkKind uint8

// Chunk kinds.
const (
	ChunkText          ChunkKind = iota + 1 // Delta: text; Opaque: a provider value for the text part
	ChunkThinking                           // Delta: reasoning text; Opaque: the provider's value for it, which ends the part
	ChunkToolCall                           // ToolCallID, ToolName (first chunk), Delta: argument JSON fragment; Opaque: a provider value for the call
	ChunkStateSnapshot                      // Value: the whole state
	ChunkStateDelta                         // Value: an RFC 6902 patch
	ChunkData                               // Name, DataID, Value, Transient: application data for the UI
	ChunkFinish                             // StopReason, Usage
	// ChunkRedactedThinking is reasoning the provider sent encrypted, whole:
	// Opaque holds it. It is stored in its place and never shown.
	ChunkRedactedThinking
	// ChunkSource is a source the reply cites (a provider's web search
	// result): URL, Name (its title), DataID (its id; one is made up when
	// empty).
	ChunkSource
)

// Chunk is one piece of a model's streamed response. It is a value type:
// yielding one does not allocate.
//
// Consecutive text chunks form one text part, consecutive thinking chunks
// one thinking part, until a thinking chunk carries an Opaque: a
// provider's value for the reasoning (a signature, an encrypted reasoning
// item) comes once, at its end, so it ends the part. Tool call chunks are
// grouped by ToolCallID, so a model may interleave several calls.
//
// Opaque values are stored with their part and reach only the server's own
// history; a model sends one back only to the provider and model it names
// ([cmf.Opaque.From]).
type Chunk struct {
	Kind       ChunkKind
	Delta      string
	ToolCallID string
	ToolName   string
	Opaque     *cmf.Opaque
	URL        string // ChunkSource
	Name       string
	DataID     string
	Transient  bool
	Value      json.RawMessage
	StopReason cmf.StopReason
	Usage      Usage
	// Model names the model that answered, for ChunkFinish (optional:
	// what the provider reports, e.g. a dated snapshot of the one asked
	// for). It reaches the client's message metadata and the stored
	// completion.
	Model string
	// Provider names who served the call, for ChunkFinish (optional:
	// OpenTelemetry's gen_ai.provider.name, e.g. "openai"). It is stored
	// with the message (CMF's llm extension).
	Provider string
}
