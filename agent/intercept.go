package agent

import (
	"context"
	"encoding/json"
	"iter"
)

// RunFunc runs one turn, as [Agent.Run] does.
type RunFunc func(ctx context.Context, in *Input) iter.Seq2[Event, error]

// ModelFunc makes one model call, as [Model.Stream] does.
type ModelFunc func(ctx context.Context, req *Request) iter.Seq2[Chunk, error]

// ToolFunc runs one server tool call whose arguments were validated.
type ToolFunc func(ctx context.Context, call ToolCall) (json.RawMessage, error)

// ToolCall is a server tool call about to run.
type ToolCall struct {
	ID   string // the call's id, as the model and the client see it
	Name string
	Args json.RawMessage
}

// Interceptor wraps a [Loop]'s runs, model calls and server tool calls,
// as middleware wraps a handler: each method gets the function that does
// the work (or the next interceptor's) and returns the one the loop calls
// instead. A run interceptor may change the input (instructions, tools,
// model settings for this request), watch every event (usage accounting,
// mirroring) and see the outcome: the [RunFinished] (whose StopReason
// says cancelled, paused, finished) or the error of a failed run. A model
// interceptor sees each request and the chunks that come back; a tool
// interceptor each call and its result.
//
// Embed [NoIntercept] to wrap only some of the three; the adapters
// [RunInterceptor], [ModelInterceptor] and [ToolInterceptor] make one from
// a function. [WithInterceptors] installs them; the first is outermost.
type Interceptor interface {
	WrapRun(next RunFunc) RunFunc
	WrapModel(next ModelFunc) ModelFunc
	WrapTool(next ToolFunc) ToolFunc
}

// NoIntercept passes everything through: embed it in an interceptor that
// wraps only some calls.
type NoIntercept struct{}

func (NoIntercept) WrapRun(next RunFunc) RunFunc       { return next }
func (NoIntercept) WrapModel(next ModelFunc) ModelFunc { return next }
func (NoIntercept) WrapTool(next ToolFunc) ToolFunc    { return next }

// RunInterceptor is an [Interceptor] that wraps runs only.
type RunInterceptor func(next RunFunc) RunFunc

func (f RunInterceptor) WrapRun(next RunFunc) RunFunc     { return f(next) }
func (RunInterceptor) WrapModel(next ModelFunc) ModelFunc { return next }
func (RunInterceptor) WrapTool(next ToolFunc) ToolFunc    { return next }

// ModelInterceptor is an [Interceptor] that wraps model calls only.
type ModelInterceptor func(next ModelFunc) ModelFunc

func (ModelInterceptor) WrapRun(next RunFunc) RunFunc         { return next }
func (f ModelInterceptor) WrapModel(next ModelFunc) ModelFunc { return f(next) }
func (ModelInterceptor) WrapTool(next ToolFunc) ToolFunc      { return next }

// ToolInterceptor is an [Interceptor] that wraps server tool calls only.
type ToolInterceptor func(next ToolFunc) ToolFunc

func (ToolInterceptor) WrapRun(next RunFunc) RunFunc       { return next }
func (ToolInterceptor) WrapModel(next ModelFunc) ModelFunc { return next }
func (f ToolInterceptor) WrapTool(next ToolFunc) ToolFunc  { return f(next) }

// WithInterceptors installs interceptors around the loop's runs, model
// calls and server tool calls; the first is the outermost. Without any
// the loop calls its model and tools directly.
func WithInterceptors(ics ...Interceptor) Option {
	return func(c *loopConfig) { c.interceptors = append(c.interceptors, ics...) }
}

func wrapRun(ics []Interceptor, f RunFunc) RunFunc {
	for i := len(ics) - 1; i >= 0; i-- {
		f = ics[i].WrapRun(f)
	}
	return f
}

func wrapModel(ics []Interceptor, f ModelFunc) ModelFunc {
	for i := len(ics) - 1; i >= 0; i-- {
		f = ics[i].WrapModel(f)
	}
	return f
}

func wrapTool(ics []Interceptor, f ToolFunc) ToolFunc {
	for i := len(ics) - 1; i >= 0; i-- {
		f = ics[i].WrapTool(f)
	}
	return f
}
