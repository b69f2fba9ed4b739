package agent

import (
	"context"
	"encoding/json"

	"github.com/agentui/agentui/internal/ids"
)

// ToolEmitter lets a running server tool stream to the user: preliminary
// output ([ToolProgress]: "searching…", partial results), sources, UI data
// parts and shared state. What the tool's Execute returns stays its result: the
// model sees that alone, and that alone is stored with the call (data
// parts are stored with the step, as a model's are).
//
//	func(ctx context.Context, in Query) (Answer, error) {
//		agent.Emitter(ctx).Progress(map[string]any{"status": "searching"})
//		…
//	}
type ToolEmitter struct {
	ctx  context.Context
	call ToolCall
	out  chan<- Event
}

type emitterKey struct{}

// Emitter returns the emitter of the server tool call that ctx runs, or
// nil outside one; a nil emitter's methods do nothing, so a tool can call
// them whoever runs it.
func Emitter(ctx context.Context) *ToolEmitter {
	e, _ := ctx.Value(emitterKey{}).(*ToolEmitter)
	return e
}

// Progress sends a preliminary output, replacing the one before. It
// returns an error when output does not marshal or the run was stopped.
func (e *ToolEmitter) Progress(output any) error {
	if e == nil {
		return nil
	}
	b, err := json.Marshal(output)
	if err != nil {
		return err
	}
	return e.send(&ToolProgress{ToolCallID: e.call.ID, ToolName: e.call.Name, Output: b})
}

// Data sends a UI data part (see [Data]).
func (e *ToolEmitter) Data(name, id string, value any, transient bool) error {
	if e == nil {
		return nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return e.send(&Data{Name: name, ID: id, Value: b, Transient: transient})
}

// State replaces the shared state with snapshot (see [StateSnapshot]).
func (e *ToolEmitter) State(snapshot any) error {
	if e == nil {
		return nil
	}
	b, err := json.Marshal(snapshot)
	if err != nil {
		return err
	}
	return e.send(&StateSnapshot{State: b})
}

// Source cites a source by URL (see [Source]).
func (e *ToolEmitter) Source(url, title string) error {
	if e == nil {
		return nil
	}
	return e.send(&Source{ID: ids.New(), URL: url, Title: title})
}

// StateDelta changes the shared state by an RFC 6902 patch (see
// [StateDelta]).
func (e *ToolEmitter) StateDelta(patch json.RawMessage) error {
	if e == nil {
		return nil
	}
	return e.send(&StateDelta{Patch: patch})
}

// send hands ev to the run, which emits it from its own goroutine.
func (e *ToolEmitter) send(ev Event) error {
	select {
	case e.out <- ev:
		return nil
	case <-e.ctx.Done():
		return e.ctx.Err()
	}
}
