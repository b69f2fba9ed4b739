package agent

import (
	"slices"
	"strings"

	"github.com/agentui/agentui/cmf"
)

// Balancer is the one place that keeps a run's event stream balanced,
// whatever its agent does, so that what consumes it (the recorder that
// stores a reply, each protocol's encoder) maps events without checking
// them:
//
//   - RunStarted comes first, once; nothing follows RunFinished.
//   - Parts and step events come inside a step: a part outside one starts
//     a step, a StepStarted while one is open finishes it first, and a
//     StepFinished with no step open is dropped.
//   - A part is started once, gets deltas and its end only while open, and
//     is ended before its step or the run finishes. The one end without a
//     start is a whole tool call (PartEnded holding its [cmf.ToolCall],
//     from an agent that does not stream calls), which encoders send at
//     once.
//   - [Balancer.End] closes what is open when a run stops without
//     RunFinished: text and reasoning end as they stood, a tool call cut
//     off mid-arguments ends without a part.
//
// A Balancer is for one run and one goroutine.
type Balancer struct {
	// NoText ends the parts End closes without their Part, for consumers
	// that only encode the stream, or whose agent ends its parts itself
	// ([PartsEnder]): it saves copying every delta. A recorder of another
	// agent needs them.
	NoText bool

	started  bool
	finished bool
	step     int // the open step's number, 0 when none is open
	lastStep int
	open     []*balancedPart
}

type balancedPart struct {
	id   string
	kind PartKind
	text strings.Builder // what streamed, for text and reasoning
}

// Add passes ev on to emit in a balanced stream, with what must come
// before it and without what must not come at all.
func (b *Balancer) Add(ev Event, emit func(Event)) {
	if b.finished {
		return
	}
	if _, ok := ev.(*RunStarted); !ok && !b.started {
		b.started = true
		emit(&RunStarted{})
	}
	switch e := ev.(type) {
	case *RunStarted:
		if b.started {
			return
		}
		b.started = true
	case *StepStarted:
		b.finishStep(emit)
		b.step, b.lastStep = max(e.Step, 1), max(e.Step, 1)
		if e.Step != b.step {
			s := *e
			s.Step = b.step
			ev = &s
		}
	case *StepFinished:
		if b.step == 0 {
			return
		}
		b.endParts(emit)
		if e.Step != b.step {
			f := *e
			f.Step = b.step
			ev = &f
		}
		b.step = 0
	case *PartStarted:
		b.inStep(emit)
		if b.find(e.ID) >= 0 {
			return
		}
		b.open = append(b.open, &balancedPart{id: e.ID, kind: e.Kind})
	case *PartDelta:
		i := b.find(e.ID)
		if i < 0 || b.open[i].kind != e.Kind {
			return
		}
		if k := b.open[i].kind; !b.NoText && (k == PartText || k == PartThinking) {
			b.open[i].text.WriteString(e.Delta)
		}
	case *PartEnded:
		i := b.find(e.ID)
		if i >= 0 && b.open[i].kind != e.Kind {
			return
		}
		if i < 0 {
			if _, whole := e.Part.(cmf.ToolCall); e.Kind != PartToolCall || !whole {
				return
			}
			b.inStep(emit) // a whole call: encoders send it at once
		} else {
			b.open = slices.Delete(b.open, i, i+1)
		}
	case *StepReset:
		b.finishStep(emit)
	case *ToolResult, *ToolProgress, *Source, *ApprovalRequested, *ClientToolCall, *Data, *StateSnapshot, *StateDelta, *Steered, *SendOutcome:
		// Outside a part: they may come between steps.
	case *RunFinished:
		b.finishStep(emit)
		b.finished = true
	}
	emit(ev)
}

// End closes what is open for a run that stopped without RunFinished
// (it failed or was cut off): open parts end as they stood. The step and
// the run are left for the consumer to end in its own way (a protocol's
// error event, a recorder's stop reason).
func (b *Balancer) End(emit func(Event)) {
	if b.finished {
		return
	}
	b.endParts(emit)
}

// Finished reports whether the run sent RunFinished.
func (b *Balancer) Finished() bool { return b.finished }

func (b *Balancer) find(id string) int {
	for i := range b.open {
		if b.open[i].id == id {
			return i
		}
	}
	return -1
}

// inStep starts a step when none is open.
func (b *Balancer) inStep(emit func(Event)) {
	if b.step == 0 {
		b.lastStep++
		b.step = b.lastStep
		emit(&StepStarted{Step: b.step})
	}
}

// finishStep ends the open step, if any, with what is open in it.
func (b *Balancer) finishStep(emit func(Event)) {
	if b.step == 0 {
		b.endParts(emit)
		return
	}
	b.endParts(emit)
	emit(&StepFinished{Step: b.step})
	b.step = 0
}

// endParts ends the open parts in the order they started.
func (b *Balancer) endParts(emit func(Event)) {
	for _, p := range b.open {
		ev := &PartEnded{Kind: p.kind, ID: p.id}
		switch {
		case b.NoText:
		case p.kind == PartText:
			ev.Part = cmf.Text{Text: p.text.String()}
		case p.kind == PartThinking:
			ev.Part = cmf.Thinking{Text: p.text.String()}
		}
		emit(ev)
	}
	b.open = b.open[:0]
}

// Balance returns events as a Balancer passes them on: for tests and for
// consumers that hold a whole run.
func Balance(events []Event, ended bool) []Event {
	var b Balancer
	var out []Event
	emit := func(ev Event) { out = append(out, ev) }
	for _, ev := range events {
		b.Add(ev, emit)
	}
	if ended {
		b.End(emit)
	}
	return out
}

// PartsEnder is implemented by an agent whose runs end every part they
// start with the part whole, whether they finish, fail or are cancelled,
// as [Loop]'s do: a consumer's [Balancer] then need not keep a copy of
// every part's text (NoText), which for a long reply is as large as the
// reply. Only a run that panics leaves its open part to the Balancer,
// which then ends it without its text.
type PartsEnder interface {
	EndsParts() bool
}
