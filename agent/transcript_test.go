package agent

import (
	"context"
	"encoding/json"
	"iter"
	"runtime"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
)

func record(events []Event) *Recorder {
	rec := NewRecorder()
	for _, ev := range events {
		rec.Add(ev)
	}
	return rec
}

func TestRecorderApprovalRecords(t *testing.T) {
	m := &scripted{replies: []reply{
		{chunks: concat(
			[]Chunk{{Kind: ChunkThinking, Delta: "plan", Opaque: &cmf.Opaque{Provider: "p", Model: "m", Data: "sig"}}, {Kind: ChunkText, Delta: "Working."}},
			toolCall("w", "get_weather", `{"city":"Oslo"}`),
			toolCall("d1", "delete_file", `{"path":"/a"}`),
			toolCall("d2", "delete_file", `{"path":"/b"}`),
			toolCall("loc", "get_location", `{}`),
			[]Chunk{finish(cmf.StopCall)})},
		{chunks: text("Done.")},
	}}
	l := newLoop(t, m, nil)
	in := &Input{Messages: []cmf.Message{userMsg("go")}, MessageID: "a1"}
	events, err := collect(t, l, context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(events)
	msgs := rec.Messages()
	// One assistant message (the step) and one tool message (the weather).
	if len(msgs) != 2 || msgs[0].ID() != "a1" || msgs[0].Role != cmf.RoleAssistant || msgs[1].Role != cmf.RoleTool {
		t.Fatalf("recorded %d messages: %+v", len(msgs), msgs)
	}
	if th := msgs[0].Content[0].(cmf.Thinking); th.Opaque == nil || th.Opaque.Data != "sig" || th.Text != "plan" {
		t.Fatalf("thinking = %+v", th)
	}
	if c := msgs[0].Extensions.Completion; c.StopReason != cmf.StopPaused {
		t.Fatalf("paused step recorded as %s", c.StopReason)
	}
	for i := range msgs {
		if err := msgs[i].Validate(); err != nil {
			t.Fatalf("recorded message %d is invalid: %v", i, err)
		}
	}
	pending := cmf.PendingToolCalls(msgs)
	if len(pending) != 3 || pending[0].Status() != cmf.CallAwaitingApproval || pending[2].Status() != cmf.CallAwaitingClient || pending[0].ApprovalID == "" {
		t.Fatalf("pending = %+v", pending)
	}
	fin := last[*RunFinished](t, events)
	for i := range pending {
		if pending[i].ApprovalID != fin.Pending[i].ApprovalID || pending[i].Call.ToolCallID != fin.Pending[i].ToolCallID {
			t.Fatalf("recorded pending calls %+v differ from RunFinished %+v", pending, fin.Pending)
		}
	}

	// Approve one, deny one, answer the client: the records say how.
	next := continueFrom(in, events,
		Resolution{ToolCallID: "d1", Kind: Approve},
		Resolution{ToolCallID: "d2", Kind: Deny, Reason: "no"},
		Resolution{ToolCallID: "loc", Kind: ClientOutput, Output: json.RawMessage(`{"city":"Oslo"}`)})
	events2, err := collect(t, l, context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]cmf.Message(nil), next.Messages...), record(events2).Messages()...)
	states := cmf.ToolCallStates(all)
	byID := map[string]cmf.ToolCallState{}
	for _, s := range states {
		byID[s.Call.ToolCallID] = s
	}
	if s := byID["w"]; s.Result == nil || s.ApprovalID != "" || s.Decision != nil || s.Status() != cmf.CallAnswered {
		t.Errorf("weather = %+v", s)
	}
	if s := byID["d1"]; s.Result == nil || s.ApprovalID == "" || s.Decision == nil || !s.Decision.Approved || s.Status() != cmf.CallAnswered {
		t.Errorf("approved delete = %+v", s)
	}
	if s := byID["d2"]; s.Result == nil || !s.Result.IsError || s.Decision == nil || s.Decision.Approved || s.Decision.Reason != "no" || s.Status() != cmf.CallDenied {
		t.Errorf("denied delete = %+v", s)
	}
	if s := byID["loc"]; s.Result == nil || !s.Client || s.MessageID != "a1" {
		t.Errorf("client call = %+v", s)
	}
	if len(cmf.PendingToolCalls(all)) != 0 {
		t.Error("calls still pending after every one was answered")
	}
}

// A run cut off mid-part: the Balancer closes what is open (text as it
// stood, the half-streamed tool call without a part) and the recorder
// keeps it, marked with the reason.
func TestRecorderInterrupt(t *testing.T) {
	rec := NewRecorder()
	for _, ev := range Balance([]Event{
		&RunStarted{MessageID: "m"},
		&StepStarted{Step: 1, MessageID: "m"},
		&PartStarted{Kind: PartThinking, ID: "t"},
		&PartDelta{Kind: PartThinking, ID: "t", Delta: "mulling"},
		&PartEnded{Kind: PartThinking, ID: "t", Part: cmf.Thinking{Text: "mulling"}},
		&PartStarted{Kind: PartText, ID: "x"},
		&PartDelta{Kind: PartText, ID: "x", Delta: "Half an ans"},
		&PartStarted{Kind: PartToolCall, ID: "c", ToolName: "get_weather"},
		&PartDelta{Kind: PartToolCall, ID: "c", Delta: `{"ci`},
	}, true) {
		rec.Add(ev)
	}
	rec.Interrupt(cmf.StopAborted)
	msgs := rec.Messages()
	if len(msgs) != 1 || len(msgs[0].Content) != 2 {
		t.Fatalf("messages = %+v", msgs)
	}
	if msgs[0].Content[1].(cmf.Text).Text != "Half an ans" {
		t.Fatalf("partial text = %+v", msgs[0].Content[1])
	}
	if msgs[0].Extensions.Completion.StopReason != cmf.StopAborted {
		t.Fatal("stop reason not recorded")
	}
	if err := msgs[0].Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRecorderPartsOutsideAStep(t *testing.T) {
	// An Agent other than Loop may skip steps; the recorder still keeps
	// its parts.
	rec := record([]Event{
		&RunStarted{},
		&PartStarted{Kind: PartText, ID: "x"},
		&PartEnded{Kind: PartText, ID: "x", Part: cmf.Text{Text: "hi"}},
		&Data{Name: "n", Value: json.RawMessage(`1`)},
		&RunFinished{StopReason: cmf.StopEnd},
	})
	if msgs := rec.Messages(); len(msgs) != 1 || msgs[0].Text() != "hi" || msgs[0].ID() == "" || len(msgs[0].Data()) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
}

func TestEventHelpers(t *testing.T) {
	r := &ToolResult{Output: json.RawMessage(`{"not":"a string"}`)}
	if r.ErrorText() != `{"not":"a string"}` {
		t.Fatal("ErrorText of a non-string")
	}
	if PartToolCall.String() != "tool_call" || PartKind(9).String() != "unknown" || Approve.String() != "approve" ||
		ClientError.String() != "client error" || ResolutionKind(0).String() != "unknown" {
		t.Fatal("String methods")
	}
	u := Usage{InputTokens: 2, OutputTokens: 3}
	if c := u.CMF(); c.TotalTokens != 5 {
		t.Fatalf("CMF usage = %+v", c)
	}
	for _, ev := range []Event{&RunStarted{}, &StepStarted{}, &StepFinished{}, &PartStarted{}, &PartDelta{}, &PartEnded{},
		&ToolResult{}, &ApprovalRequested{}, &ClientToolCall{}, &StateSnapshot{}, &StateDelta{}, &Data{}, &RunFinished{}} {
		ev.isEvent() // the seal
	}
}

// slowModel answers "ok" once at least wait has passed since its call, and
// names its model and provider.
type slowModel struct{ wait time.Duration }

func (m slowModel) Stream(ctx context.Context, _ *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		start := time.Now()
		for time.Since(start) < m.wait { // a condition, not a fixed sleep: the bound below is a lower one
			runtime.Gosched()
		}
		if yield(Chunk{Kind: ChunkText, Delta: "ok"}, nil) {
			yield(Chunk{Kind: ChunkFinish, StopReason: cmf.StopEnd, Model: "m-2026", Provider: "acme"}, nil)
		}
	}
}

// The stored step says who served it (CMF's llm extension) and how long
// the model call took (completion.latency_ms); the application's metadata
// on RunFinished goes to the reply's last step; all of it survives the
// event codec a run log replays through.
func TestRecorderModelIdentityAndLatency(t *testing.T) {
	l := newLoop(t, slowModel{wait: 5 * time.Millisecond}, nil)
	events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	last[*RunFinished](t, events).Metadata = map[string]json.RawMessage{"plan": json.RawMessage(`"pro"`)}
	// Through the codec, as a replay sees them.
	for i, ev := range events {
		typ, b, err := MarshalEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if events[i], err = UnmarshalEvent(typ, b); err != nil {
			t.Fatal(err)
		}
	}
	msgs := record(events).Messages()
	if len(msgs) != 1 {
		t.Fatalf("recorded %d messages", len(msgs))
	}
	ext := msgs[0].Extensions
	if ext.LLM == nil || ext.LLM.ModelID != "m-2026" || ext.LLM.Provider != "acme" {
		t.Fatalf("llm extension = %+v", ext.LLM)
	}
	if c := ext.Completion; c.Model != "m-2026" || c.LatencyMs == nil || *c.LatencyMs < 5 {
		t.Fatalf("completion = %+v (latency %v)", c, c.LatencyMs)
	}
	if md := msgs[0].Metadata(); string(md["plan"]) != `"pro"` {
		t.Fatalf("metadata = %s", md)
	}
	if err := msgs[0].Validate(); err != nil {
		t.Fatal(err)
	}
}

// The shared state a run leaves is recorded on the step that set it: a
// snapshot replaces what was recorded; patches add to the last snapshot,
// or to the state the run started from. A run that leaves the client's
// state alone records it when asked to (keep).
func TestRecorderSharedState(t *testing.T) {
	state := func(m cmf.Message) string {
		if m.Extensions == nil || m.Extensions.UI == nil || m.Extensions.UI.State == nil {
			return "none"
		}
		b, _ := json.Marshal(m.Extensions.UI.State)
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		base   string
		keep   bool
		events []Event
		want   string
	}{
		{"none", `{"a":1}`, false, nil, "none"},
		{"the client's, kept", `{"a":1}`, true, nil, `{"snapshot":{"a":1}}`},
		{"patches on the run's start", `{"a":1}`, true, []Event{
			&StateDelta{Patch: json.RawMessage(`[{"op":"add","path":"/b","value":2}]`)},
			&StateDelta{Patch: json.RawMessage(`[{"op":"remove","path":"/a"}]`)},
		}, `{"snapshot":{"a":1},"patches":[[{"op":"add","path":"/b","value":2}],[{"op":"remove","path":"/a"}]]}`},
		{"patches on nothing", "", false, []Event{
			&StateDelta{Patch: json.RawMessage(`[{"op":"add","path":"/b","value":2}]`)},
		}, `{"snapshot":{},"patches":[[{"op":"add","path":"/b","value":2}]]}`},
		{"a snapshot replaces, patches follow it", `{"a":1}`, false, []Event{
			&StateDelta{Patch: json.RawMessage(`[{"op":"remove","path":"/a"}]`)},
			&StateSnapshot{State: json.RawMessage(`{"c":3}`)},
			&StateDelta{Patch: json.RawMessage(`[{"op":"add","path":"/d","value":4}]`)},
		}, `{"snapshot":{"c":3},"patches":[[{"op":"add","path":"/d","value":4}]]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecorder()
			r.BaseState([]byte(tc.base), tc.keep)
			r.Add(&StepStarted{Step: 1})
			for _, ev := range tc.events {
				r.Add(ev)
			}
			r.Add(&PartEnded{Kind: PartText, ID: "x", Part: cmf.Text{Text: "ok"}})
			r.Add(&StepFinished{Step: 1})
			r.Add(&RunFinished{StopReason: cmf.StopEnd})
			msgs := r.Messages()
			if got := state(msgs[len(msgs)-1]); got != tc.want {
				t.Fatalf("recorded %s\nwant     %s", got, tc.want)
			}
			if got := cmf.LastState(msgs); (got == nil) != (tc.want == "none") {
				t.Fatalf("LastState = %v", got)
			}
		})
	}
}
