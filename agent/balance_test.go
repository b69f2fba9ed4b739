package agent

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
)

// eventsFrom turns bytes into an arbitrary, usually unbalanced, run: each
// byte picks an event, a part id among three and a part kind.
func eventsFrom(data []byte) []Event {
	var out []Event
	for _, c := range data {
		id := "p" + strconv.Itoa(int(c>>4)%3)
		kind := PartKind(c>>6%3 + 1)
		switch c % 12 {
		case 0:
			out = append(out, &RunStarted{})
		case 1:
			out = append(out, &StepStarted{Step: int(c >> 5)})
		case 2:
			out = append(out, &StepFinished{Step: int(c >> 5)})
		case 3, 4:
			out = append(out, &PartStarted{Kind: kind, ID: id, ToolName: "t"})
		case 5, 6:
			out = append(out, &PartDelta{Kind: kind, ID: id, Delta: "d"})
		case 7:
			var part cmf.Part
			switch kind {
			case PartText:
				part = cmf.Text{Text: "x"}
			case PartThinking:
				part = cmf.Thinking{Text: "x"}
			case PartToolCall:
				part = cmf.ToolCall{ToolCallID: id, Name: "t", Arguments: json.RawMessage(`{}`)}
			}
			out = append(out, &PartEnded{Kind: kind, ID: id, Part: part})
		case 8:
			out = append(out, &ToolResult{ToolCallID: id, Output: json.RawMessage(`1`)})
		case 9:
			out = append(out, &Data{Name: "n", Value: json.RawMessage(`1`)})
		case 10:
			out = append(out, &RunFinished{StopReason: cmf.StopEnd})
		case 11:
			out = append(out, &PartEnded{Kind: PartToolCall, ID: id}) // cut off
		}
	}
	return out
}

// checkBalanced is the Balancer's promise: RunStarted first and once,
// nothing after RunFinished, parts only inside a step, started once,
// deltas and ends only while open and of their kind, every part ended
// before its step or the run finishes; the one end without a start is a
// whole tool call. After End, no part is open.
func checkBalanced(t *testing.T, events []Event, ended bool) {
	t.Helper()
	if len(events) == 0 {
		return
	}
	if _, ok := events[0].(*RunStarted); !ok {
		t.Fatalf("first event %T", events[0])
	}
	step, finished := 0, false
	open := map[string]PartKind{}
	for i, ev := range events {
		if finished {
			t.Fatalf("event %d (%T) after RunFinished", i, ev)
		}
		switch e := ev.(type) {
		case *RunStarted:
			if i != 0 {
				t.Fatalf("RunStarted at %d", i)
			}
		case *StepStarted:
			if step != 0 {
				t.Fatalf("step started inside step %d", step)
			}
			step = e.Step
		case *StepFinished:
			if step == 0 || e.Step != step || len(open) > 0 {
				t.Fatalf("StepFinished %d: open step %d, parts %v", e.Step, step, open)
			}
			step = 0
		case *PartStarted:
			if _, dup := open[e.ID]; dup || step == 0 {
				t.Fatalf("PartStarted %s: twice, or outside a step (%d)", e.ID, step)
			}
			open[e.ID] = e.Kind
		case *PartDelta:
			if k, ok := open[e.ID]; !ok || k != e.Kind {
				t.Fatalf("delta for %s, not open as %v", e.ID, e.Kind)
			}
		case *PartEnded:
			k, ok := open[e.ID]
			_, whole := e.Part.(cmf.ToolCall)
			switch {
			case ok && k == e.Kind:
				delete(open, e.ID)
			case !ok && whole && e.Kind == PartToolCall && step != 0:
			default:
				t.Fatalf("end of %s (%v), not open", e.ID, e.Kind)
			}
		case *RunFinished:
			if step != 0 || len(open) > 0 {
				t.Fatal("run finished with a step or part open")
			}
			finished = true
		}
	}
	if ended && !finished && len(open) > 0 {
		t.Fatalf("parts still open after End: %v", open)
	}
}

func FuzzBalancer(f *testing.F) {
	f.Add([]byte{3, 5, 7, 2, 10})
	f.Add([]byte{5, 7, 2, 3, 3, 1, 19, 11, 10, 3})
	f.Add([]byte{0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		events := eventsFrom(data)
		checkBalanced(t, Balance(events, true), true)
		checkBalanced(t, Balance(events, false), false)
	})
}

// What streamed stays what ends: text and reasoning cut off end as they
// stood, and the recorder keeps that; a tool call cut off ends with no
// part and is not recorded.
func TestBalancerEndsWhatIsOpen(t *testing.T) {
	events := Balance([]Event{
		&PartStarted{Kind: PartText, ID: "t"}, // no RunStarted, no step
		&PartDelta{Kind: PartText, ID: "t", Delta: "Hel"},
		&PartDelta{Kind: PartText, ID: "t", Delta: "lo"},
		&PartDelta{Kind: PartText, ID: "ghost", Delta: "dropped"},
		&PartStarted{Kind: PartToolCall, ID: "c", ToolName: "t"},
		&PartDelta{Kind: PartToolCall, ID: "c", Delta: `{"a`},
	}, true)
	checkBalanced(t, events, true)
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, eventName(ev))
	}
	want := "RunStarted StepStarted PartStarted PartDelta PartDelta PartStarted PartDelta PartEnded PartEnded"
	if got := joinNames(kinds); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	if p := events[7].(*PartEnded); p.Part.(cmf.Text).Text != "Hello" {
		t.Fatalf("text ended as %+v", p.Part)
	}
	if p := events[8].(*PartEnded); p.Part != nil {
		t.Fatalf("a cut tool call ended with %+v", p.Part)
	}
	rec := NewRecorder()
	for _, ev := range events {
		rec.Add(ev)
	}
	rec.Interrupt(cmf.StopAborted)
	if m := rec.Messages(); len(m) != 1 || m[0].Text() != "Hello" || len(m[0].Content) != 1 {
		t.Fatalf("recorded %+v", m)
	}

	// NoText ends the same parts, in the same order, without their text.
	b := Balancer{NoText: true}
	var lean []Event
	for _, ev := range []Event{
		&PartStarted{Kind: PartText, ID: "t"},
		&PartDelta{Kind: PartText, ID: "t", Delta: "Hel"},
		&PartStarted{Kind: PartThinking, ID: "r"},
	} {
		b.Add(ev, func(ev Event) { lean = append(lean, ev) })
	}
	b.End(func(ev Event) { lean = append(lean, ev) })
	if len(lean) != 7 {
		t.Fatalf("%d events", len(lean))
	}
	for i, id := range []string{"t", "r"} {
		if p := lean[5+i].(*PartEnded); p.ID != id || p.Part != nil {
			t.Fatalf("NoText ended %+v", p)
		}
	}
}

func eventName(ev Event) string {
	switch ev.(type) {
	case *RunStarted:
		return "RunStarted"
	case *StepStarted:
		return "StepStarted"
	case *PartStarted:
		return "PartStarted"
	case *PartDelta:
		return "PartDelta"
	case *PartEnded:
		return "PartEnded"
	}
	return "other"
}

func joinNames(names []string) string { return strings.Join(names, " ") }

// A delta or an end of another kind than its open part's is not that
// part's: dropped, so no encoder writes reasoning into a text part or
// arguments into reasoning.
func TestBalancerDropsDeltasOfAnotherKind(t *testing.T) {
	out := Balance([]Event{
		&RunStarted{}, &StepStarted{Step: 1},
		&PartStarted{Kind: PartText, ID: "p"},
		&PartDelta{Kind: PartThinking, ID: "p", Delta: "not text"},
		&PartDelta{Kind: PartToolCall, ID: "p", Delta: `{"a":1}`},
		&PartDelta{Kind: PartText, ID: "p", Delta: "text"},
		&PartEnded{Kind: PartThinking, ID: "p", Part: cmf.Thinking{Text: "x"}},
	}, true)
	var deltas []string
	var ended []PartKind
	for _, ev := range out {
		switch e := ev.(type) {
		case *PartDelta:
			deltas = append(deltas, e.Delta)
		case *PartEnded:
			ended = append(ended, e.Kind)
			if e.Kind == PartText && e.Part.(cmf.Text).Text != "text" {
				t.Errorf("the text part ended as %+v", e.Part)
			}
		}
	}
	if len(deltas) != 1 || deltas[0] != "text" || len(ended) != 1 || ended[0] != PartText {
		t.Fatalf("deltas %q, ended %v", deltas, ended)
	}
}
