package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
)

// Producer is what a run produces: the agent's run of one turn, and what
// the server does with each of its events on the way.
type Producer struct {
	Agent agent.Agent
	Input *agent.Input
	// MaxOutput bounds the bytes of text, reasoning and tool-call
	// arguments the run streams: past it the run is cut.
	MaxOutput int64
	// Each sees every event before it is recorded and written (to sign an
	// approval request, charge a step's tokens, add the finish's
	// metadata), and may stop the run.
	Each func(ctx context.Context, ev agent.Event, stop context.CancelCauseFunc)
}

// run runs the agent, keeps its stream balanced (agent.Balancer),
// records every event when record is set (the reply will be stored), and
// hands each to emit, except RunFinished, which it returns: it is written
// once the reply is saved, so that a reply that could not be saved ends
// with the protocol's error event instead of a normal finish.
func (p *Producer) run(ctx context.Context, record bool, emit func(agent.Event), stop context.CancelCauseFunc) (res result) {
	in := p.Input
	if record {
		res.rec = agent.NewRecorder()
		res.rec.Stamp(in.Extensions, wire.LastID(in.History, in.Messages))
		res.rec.BaseState(in.State, stateChanged(in.State, in.History))
	}
	ender, _ := p.Agent.(agent.PartsEnder)
	bal := agent.Balancer{NoText: !record || ender != nil && ender.EndsParts()}
	output := int64(0)
	sink := func(ev agent.Event) {
		if d, ok := ev.(*agent.PartDelta); ok {
			if output += int64(len(d.Delta)); output > p.MaxOutput {
				stop(errTooLarge)
				return
			}
		}
		if p.Each != nil {
			p.Each(ctx, ev, stop)
		}
		if record {
			res.rec.Add(ev)
		}
		if f, ok := ev.(*agent.RunFinished); ok {
			res.finished = f
			return
		}
		emit(ev)
	}
	defer func() {
		if r := recover(); r != nil {
			res.err = fmt.Errorf("agent panicked: %v", r)
		}
		bal.End(sink) // a run that stopped early: close what it left open
	}()
	for ev, err := range p.Agent.Run(ctx, in) {
		if err != nil {
			res.err = err
			continue
		}
		bal.Add(ev, sink)
	}
	return res
}

// Live runs a turn without history, which nothing can resume: on the
// request's goroutine, its events written to enc as they come
// (wire.Live), cut when its client leaves (cancel is the request's) or
// ctx ends.
func (e *env) Live(ctx context.Context, p *Producer, maxDuration time.Duration, sse *wire.SSEWriter, enc wire.Encoder, cancel context.CancelCauseFunc, log *slog.Logger) {
	// The run's time is up when the request's is: a timer that cancels
	// the request, not a context of its own under it, which an idle
	// stream would hold for as long as it is open (about 0.5 KiB).
	tooLong := time.AfterFunc(maxDuration, func() { cancel(ErrTooLong) })
	defer tooLong.Stop()
	l := wire.NewLive(sse, enc, e.cfg.KeepAlive, func() { cancel(errReaderGot) })
	res := p.run(ctx, false, l.Emit, cancel)
	out := outcomeOf(ctx, res, false)
	out.log(log, false)
	l.End()
	defer l.Finish()
	out.encode(enc)
	_ = sse.Flush()
}

// stateChanged reports whether the client changed the shared state: it
// sent one other than the snapshot history last recorded (compared
// compacted). An empty one is no news: a client that has not reconnected
// sends {}.
func stateChanged(state json.RawMessage, history []cmf.Message) bool {
	got := compactState(state)
	if string(got) == "{}" {
		return false
	}
	st := cmf.LastState(history)
	return st == nil || len(st.Patches) > 0 || !bytes.Equal(got, compactState(st.Snapshot))
}

// compactState is state compacted, {} for none (invalid JSON stays as it
// is: it differs from any valid state).
func compactState(state json.RawMessage) []byte {
	var b bytes.Buffer
	switch {
	case len(bytes.TrimSpace(state)) == 0:
		return []byte(`{}`)
	case json.Compact(&b, state) != nil:
		return state
	case b.String() == "null":
		return []byte(`{}`)
	}
	return b.Bytes()
}
