package agent

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/agentui/agentui/cmf"
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

// Request is one model call.
type Request struct {
	// Messages is the conversation. It starts with a system message holding
	// the server's instructions (when there are any), and every tool call
	// in it has a result.
	Messages []cmf.Message
	// Tools are all tools the model may call, server and client.
	Tools []ToolSpec
	// State is the shared state the client sent (AG-UI), or nil.
	State json.RawMessage
}

// ChunkKind says what a chunk carries.
type ChunkKind uint8

// Chunk kinds.
const (
	ChunkText          ChunkKind = iota + 1 // Delta: text
	ChunkThinking                           // Delta: reasoning text; Signature: provider token
	ChunkToolCall                           // ToolCallID, ToolName (first chunk), Delta: argument JSON fragment
	ChunkStateSnapshot                      // Value: the whole state
	ChunkStateDelta                         // Value: an RFC 6902 patch
	ChunkData                               // Name, DataID, Value, Transient: application data for the UI
	ChunkFinish                             // StopReason, Usage
)

// Chunk is one piece of a model's streamed response. It is a value type:
// yielding one does not allocate.
//
// Consecutive text chunks form one text part, consecutive thinking chunks
// one thinking part. Tool call chunks are grouped by ToolCallID, so a model
// may interleave several calls.
type Chunk struct {
	Kind       ChunkKind
	Delta      string
	ToolCallID string
	ToolName   string
	Signature  string
	Name       string
	DataID     string
	Transient  bool
	Value      json.RawMessage
	StopReason cmf.StopReason
	Usage      Usage
}
