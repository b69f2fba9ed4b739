package agent

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// inbox is a Steering whose messages a test sends when it likes.
type inbox struct {
	mu   sync.Mutex
	msgs []cmf.Message
}

func (b *inbox) send(m cmf.Message) { b.mu.Lock(); b.msgs = append(b.msgs, m); b.mu.Unlock() }

func (b *inbox) Take() []cmf.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.msgs
	b.msgs = nil
	return out
}

func steerMsg(id, text string) cmf.Message {
	m := userMsg(text)
	m.SetID(id)
	return m
}

// A message sent while a tool runs reaches the next step: after the
// tool's result, before that step starts, and the model sees it there.
func TestSteeringReachesTheStepAfterTheTools(t *testing.T) {
	box := &inbox{}
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("c1", "get_weather", `{"city":"Paris"}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("Paris, Texas: hot.")},
	}}
	weather := FuncTool("get_weather", "Weather.", func(_ context.Context, in weatherIn) (string, error) {
		box.send(steerMsg("s1", "I meant Paris, Texas."))
		return "sunny", nil
	})
	l, err := New(m, WithTools(weather))
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder()
	events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("Weather in Paris?")}, Steering: box})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		rec.Add(ev)
	}
	at := slices.IndexFunc(events, func(ev Event) bool { _, ok := ev.(*Steered); return ok })
	if at < 0 {
		t.Fatal("no Steered event")
	}
	if _, ok := events[at-1].(*StepFinished); !ok {
		t.Fatalf("Steered follows %T, want the first step's StepFinished", events[at-1])
	}
	if s, ok := events[at+1].(*StepStarted); !ok || s.Step != 2 {
		t.Fatalf("Steered is followed by %T, want step 2's StepStarted", events[at+1])
	}
	if fin := last[*RunFinished](t, events); fin.StopReason != cmf.StopEnd {
		t.Fatalf("run finished %q", fin.StopReason)
	}
	// The model's second call ends with the steering message.
	sent := slices.Collect(m.requests[1].All())
	if got := sent[len(sent)-1]; got.Role != cmf.RoleUser || got.ID() != "s1" {
		t.Fatalf("the second call ends with %s %q, want the steering message", got.Role, got.Text())
	}
	// The transcript has it where the model saw it: after the tool's
	// result, before the answer.
	var roles []cmf.Role
	for _, msg := range rec.Messages() {
		roles = append(roles, msg.Role)
	}
	if want := []cmf.Role{cmf.RoleAssistant, cmf.RoleTool, cmf.RoleUser, cmf.RoleAssistant}; !slices.Equal(roles, want) {
		t.Fatalf("recorded roles %v, want %v", roles, want)
	}
}

// A message sent while the model answers is not left behind: the answer
// is not the end, another step answers it.
func TestSteeringDuringTheAnswerAddsAStep(t *testing.T) {
	box := &inbox{}
	m := &scripted{replies: []reply{
		{chunks: text("Looking it up.")},
		{chunks: text("Texas it is.")},
	}}
	l := newLoop(t, m, nil)
	var events []Event
	for ev, err := range l.Run(context.Background(), &Input{Messages: []cmf.Message{userMsg("Weather in Paris?")}, Steering: box}) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := ev.(*PartDelta); ok && d.Delta == "Looking it up." {
			box.send(steerMsg("s1", "Texas, please."))
		}
		events = append(events, ev)
	}
	checkBalance(t, events, nil)
	if n := len(all[*StepStarted](events)); n != 2 {
		t.Fatalf("%d steps, want 2", n)
	}
	if s := all[*Steered](events); len(s) != 1 || s[0].Message.ID() != "s1" {
		t.Fatalf("steered %v", s)
	}
	if len(m.requests) != 2 {
		t.Fatalf("%d model calls, want 2", len(m.requests))
	}
}

// A run that pauses for an approval or runs out of steps takes nothing:
// what was sent stays for the server to run as a turn of its own.
func TestSteeringIsNotTakenByARunThatStops(t *testing.T) {
	t.Run("paused for an approval", func(t *testing.T) {
		box := &inbox{}
		m := &scripted{replies: []reply{{chunks: concat(toolCall("c1", "delete_file", `{"path":"a"}`), []Chunk{finish(cmf.StopCall)})}}}
		box.send(steerMsg("s1", "never mind"))
		// Sent before the run starts: the first step's input already
		// holds the turn's message, and nothing is taken then.
		events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("delete a")}, Steering: box})
		if err != nil {
			t.Fatal(err)
		}
		if fin := last[*RunFinished](t, events); fin.StopReason != cmf.StopPaused {
			t.Fatalf("run finished %q, want paused", fin.StopReason)
		}
		if len(all[*Steered](events)) != 0 || len(box.Take()) != 1 {
			t.Fatal("a paused run took the message")
		}
	})
	t.Run("out of steps", func(t *testing.T) {
		box := &inbox{}
		m := &scripted{replies: []reply{{chunks: text("Done.")}}}
		box.send(steerMsg("s1", "more"))
		events, err := collect(t, newLoop(t, m, nil, WithMaxSteps(1)), context.Background(), &Input{Messages: []cmf.Message{userMsg("hi")}, Steering: box})
		if err != nil {
			t.Fatal(err)
		}
		if len(all[*Steered](events)) != 0 || len(box.Take()) != 1 {
			t.Fatal("a run on its last step took the message")
		}
	})
}

func TestSteeredRoundTrips(t *testing.T) {
	in := &Steered{Message: steerMsg("s1", "I meant Texas.")}
	typ, b, err := MarshalEvent(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := UnmarshalEvent(typ, b)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*Steered).Message
	if got.ID() != "s1" || got.Role != cmf.RoleUser || got.Text() != "I meant Texas." {
		t.Fatalf("round trip: %+v", got)
	}
}
