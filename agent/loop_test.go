package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/cmf"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is one scripted model response.
type reply struct {
	chunks []Chunk
	err    error // returned after the chunks
	block  bool  // after the chunks, wait for cancellation
}

// scripted is a Model that plays replies in order and records requests.
type scripted struct {
	mu       sync.Mutex
	replies  []reply
	requests []*Request
}

func (s *scripted) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		if n >= len(s.replies) {
			yield(Chunk{}, fmt.Errorf("scripted model: no reply %d", n))
			return
		}
		r := s.replies[n]
		for _, c := range r.chunks {
			if !yield(c, nil) {
				return
			}
		}
		if r.block {
			<-ctx.Done()
			yield(Chunk{}, ctx.Err())
			return
		}
		if r.err != nil {
			yield(Chunk{}, r.err)
		}
	}
}

func text(parts ...string) []Chunk {
	var cs []Chunk
	for _, p := range parts {
		cs = append(cs, Chunk{Kind: ChunkText, Delta: p})
	}
	return append(cs, Chunk{Kind: ChunkFinish, StopReason: cmf.StopEnd, Usage: Usage{InputTokens: 3, OutputTokens: int64(len(parts))}})
}

func toolCall(id, name string, argChunks ...string) []Chunk {
	cs := []Chunk{{Kind: ChunkToolCall, ToolCallID: id, ToolName: name}}
	for _, a := range argChunks {
		cs = append(cs, Chunk{Kind: ChunkToolCall, ToolCallID: id, Delta: a})
	}
	return cs
}

func finish(reason cmf.StopReason) Chunk { return Chunk{Kind: ChunkFinish, StopReason: reason} }

func concat(parts ...[]Chunk) []Chunk {
	var out []Chunk
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func userMsg(text string) cmf.Message {
	return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type weatherOut struct {
	City     string `json:"city"`
	Forecast string `json:"forecast"`
}

// testTools: a weather tool, a slow tool, a delete tool that needs
// approval (counting executions), and a client tool.
func testTools(deleted *atomic.Int32) []Tool {
	weather := FuncTool("get_weather", "Weather for a city.", func(_ context.Context, in weatherIn) (weatherOut, error) {
		return weatherOut{City: in.City, Forecast: "sunny"}, nil
	})
	slow := FuncTool("slow", "Sleeps.", func(ctx context.Context, in struct {
		Ms int `json:"ms"`
	}) (string, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return "slept", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	del := FuncTool("delete_file", "Deletes a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (map[string]string, error) {
		deleted.Add(1)
		return map[string]string{"deleted": in.Path}, nil
	})
	del.NeedsApproval = Always
	boom := Tool{Name: "boom", Execute: func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("kaboom") }}
	fails := Tool{Name: "fails", Execute: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("disk full")
	}}
	location := Tool{Name: "get_location", Description: "The user's location, from the browser."}
	return []Tool{weather, slow, del, boom, fails, location}
}

func newLoop(t *testing.T, m Model, deleted *atomic.Int32, opts ...Option) *Loop {
	t.Helper()
	if deleted == nil {
		deleted = new(atomic.Int32)
	}
	l, err := New(m, append([]Option{WithTools(testTools(deleted)...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func collect(t *testing.T, a Agent, ctx context.Context, in *Input) ([]Event, error) {
	t.Helper()
	var events []Event
	var runErr error
	for ev, err := range a.Run(ctx, in) {
		if err != nil {
			runErr = err
			continue
		}
		if runErr != nil {
			t.Fatalf("event %T after the run error", ev)
		}
		events = append(events, ev)
	}
	checkBalance(t, events, runErr)
	return events, runErr
}

// checkBalance asserts the stream grammar: RunStarted first; steps and
// parts opened and closed in order; RunFinished last, or an error with
// everything closed.
func checkBalance(t *testing.T, events []Event, runErr error) {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("no events")
	}
	if _, ok := events[0].(*RunStarted); !ok {
		t.Fatalf("first event is %T, want RunStarted", events[0])
	}
	step := 0
	open := map[string]PartKind{}
	for i, ev := range events {
		if i > 0 {
			if _, ok := events[i-1].(*RunFinished); ok {
				t.Fatalf("event %T after RunFinished", ev)
			}
		}
		switch e := ev.(type) {
		case *RunStarted:
			if i != 0 {
				t.Fatal("second RunStarted")
			}
		case *StepStarted:
			if step != 0 {
				t.Fatalf("step %d started inside step %d", e.Step, step)
			}
			step = e.Step
		case *StepFinished:
			if step != e.Step {
				t.Fatalf("step %d finished, open step is %d", e.Step, step)
			}
			if len(open) > 0 {
				t.Fatalf("step %d finished with parts open: %v", e.Step, open)
			}
			step = 0
		case *PartStarted:
			if step == 0 {
				t.Fatal("part started outside a step")
			}
			if _, dup := open[e.ID]; dup {
				t.Fatalf("part %s started twice", e.ID)
			}
			open[e.ID] = e.Kind
		case *PartDelta:
			if k, ok := open[e.ID]; !ok || k != e.Kind {
				t.Fatalf("delta for part %s (%v) that is not open", e.ID, e.Kind)
			}
		case *PartEnded:
			if k, ok := open[e.ID]; !ok || k != e.Kind {
				t.Fatalf("end of part %s that is not open", e.ID)
			}
			delete(open, e.ID)
		case *RunFinished:
			if step != 0 || len(open) > 0 {
				t.Fatal("run finished with a step or part open")
			}
		}
	}
	_, finished := events[len(events)-1].(*RunFinished)
	switch {
	case runErr == nil && !finished:
		t.Fatalf("stream ended with %T, no RunFinished and no error", events[len(events)-1])
	case runErr != nil && finished:
		t.Fatal("both RunFinished and an error")
	case runErr != nil && (step != 0 || len(open) > 0):
		t.Fatal("error with a step or part still open")
	}
}

func last[T Event](t *testing.T, events []Event) T {
	t.Helper()
	for i := len(events) - 1; i >= 0; i-- {
		if e, ok := events[i].(T); ok {
			return e
		}
	}
	var zero T
	t.Fatalf("no %T event", zero)
	return zero
}

func all[T Event](events []Event) []T {
	var out []T
	for _, ev := range events {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

// continueFrom builds the next run's input: the conversation so far plus
// the recorded output of the previous run.
func continueFrom(in *Input, events []Event, resume ...Resolution) *Input {
	rec := NewRecorder()
	for _, ev := range events {
		rec.Add(ev)
	}
	msgs := append(append([]cmf.Message(nil), in.Messages...), rec.Messages()...)
	return &Input{Messages: msgs, Instructions: in.Instructions, Resume: resume}
}

func TestLoopPlainText(t *testing.T) {
	m := &scripted{replies: []reply{{chunks: text("Hello", ", ", "world")}}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{
		Messages: []cmf.Message{userMsg("hi")}, Instructions: "Be brief.", MessageID: "m1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs := events[0].(*RunStarted); rs.MessageID != "m1" {
		t.Fatalf("RunStarted.MessageID = %q", rs.MessageID)
	}
	ended := last[*PartEnded](t, events)
	if ended.Part.(cmf.Text).Text != "Hello, world" {
		t.Fatalf("text = %q", ended.Part)
	}
	if len(all[*PartDelta](events)) != 3 {
		t.Fatal("want 3 deltas")
	}
	fin := last[*RunFinished](t, events)
	if fin.StopReason != cmf.StopEnd || fin.Usage.OutputTokens != 3 || len(fin.Pending) != 0 {
		t.Fatalf("RunFinished = %+v", fin)
	}
	// The model got the instructions as a system message first.
	req := m.requests[0]
	all := slices.Collect(req.All())
	if len(req.System) != 1 || all[0].Role != cmf.RoleSystem || all[0].Text() != "Be brief." || all[1].Text() != "hi" {
		t.Fatalf("request messages = %+v", req)
	}
	if len(req.Tools) != 6 { // the six test tools
		t.Fatalf("%d tools offered", len(req.Tools))
	}
}

func TestLoopParallelServerTools(t *testing.T) {
	// Two "rendezvous" calls each wait until both have started: run one
	// after the other, they would never finish.
	var arrived sync.WaitGroup
	arrived.Add(2)
	rendezvous := Tool{Name: "rendezvous", Execute: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		arrived.Done()
		waited := make(chan struct{})
		go func() { arrived.Wait(); close(waited) }()
		select {
		case <-waited:
			return json.RawMessage(`"met"`), nil
		case <-time.After(10 * time.Second):
			return nil, errors.New("the other call never started: tools ran one after the other")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	m := &scripted{replies: []reply{
		{chunks: concat(
			toolCall("c1", "rendezvous", `{}`),
			toolCall("c2", "get_weather", `{"city":`, `"Paris"}`),
			toolCall("c3", "rendezvous", `{}`),
			[]Chunk{finish(cmf.StopCall)})},
		{chunks: text("All done.")},
	}}
	events, err := collect(t, newLoop(t, m, nil, WithTools(rendezvous)), context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}})
	if err != nil {
		t.Fatal(err)
	}
	results := all[*ToolResult](events)
	if len(results) != 3 || results[0].ToolCallID != "c1" || results[1].ToolCallID != "c2" || results[2].ToolCallID != "c3" {
		t.Fatalf("results out of call order: %+v", results)
	}
	if results[0].IsError || results[2].IsError || string(results[0].Output) != `"met"` {
		t.Fatalf("concurrent calls failed: %s / %s", results[0].Output, results[2].Output)
	}
	if string(results[1].Output) != `{"city":"Paris","forecast":"sunny"}` {
		t.Fatalf("weather result = %s", results[1].Output)
	}
	steps := all[*StepFinished](events)
	if len(steps) != 2 || steps[0].StopReason != cmf.StopCall || steps[1].StopReason != cmf.StopEnd {
		t.Fatalf("steps = %+v", steps)
	}
	// The second model call saw the calls and their results.
	var sawResults int
	for _, msg := range m.requests[1].Messages {
		for _, p := range msg.Content {
			if _, ok := p.(cmf.ToolResult); ok {
				sawResults++
			}
		}
	}
	if sawResults != 3 {
		t.Fatalf("second request has %d results", sawResults)
	}
}

// Results of a batch stream as each one (and those before it) is done,
// not when the whole batch is: a slow tool does not hold back a fast
// one's result. The slow tool finishes only once the consumer has seen
// the fast one's result, so results held until the batch ends would hang
// (up to the guard) and fail.
func TestToolResultsStreamAsTheyFinish(t *testing.T) {
	seenFast := make(chan struct{})
	fast := FuncTool("fast", "Answers at once.", func(context.Context, struct{}) (string, error) { return "fast", nil })
	slow := FuncTool("slow_until_seen", "Waits for the fast result to be seen.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-seenFast:
			return "slow", nil
		case <-time.After(10 * time.Second): // a guard against a hang, not a timing
			return "", context.DeadlineExceeded
		}
	})
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("f", "fast", `{}`), toolCall("s", "slow_until_seen", `{}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("done")},
	}}
	l, err := New(m, WithTools(fast, slow))
	if err != nil {
		t.Fatal(err)
	}
	var results []*ToolResult
	for ev, err := range l.Run(context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := ev.(*ToolResult); ok {
			results = append(results, r)
			if r.ToolCallID == "f" {
				close(seenFast)
			}
		}
	}
	if len(results) != 2 || results[0].ToolCallID != "f" || results[1].ToolCallID != "s" || results[1].IsError {
		t.Fatalf("results = %+v %+v", results[0], results[len(results)-1])
	}
}

func TestLoopToolErrors(t *testing.T) {
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("c1", "boom", `{}`), toolCall("c2", "fails", ""), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("ok")},
	}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}})
	if err != nil {
		t.Fatal(err)
	}
	results := all[*ToolResult](events)
	if !results[0].IsError || !strings.Contains(results[0].ErrorText(), "kaboom") {
		t.Errorf("panic result = %+v", results[0])
	}
	if !results[1].IsError || results[1].ErrorText() != "disk full" {
		t.Errorf("error result = %s", results[1].Output)
	}
}

func TestLoopInvalidToolArguments(t *testing.T) {
	var deleted atomic.Int32
	m := &scripted{replies: []reply{
		{chunks: concat(
			toolCall("c1", "get_weather", `{"town":"Paris"}`), // schema: city required, no extra props
			toolCall("c2", "get_weather", `{"city":`),         // not JSON
			toolCall("c3", "launch_missiles", `{}`),           // unknown tool
			toolCall("c4", "delete_file", `{"path":7}`),       // needs approval, but invalid: no approval asked
			[]Chunk{finish(cmf.StopCall)})},
		{chunks: text("sorry")},
	}}
	events, err := collect(t, newLoop(t, m, &deleted), context.Background(), &Input{Messages: []cmf.Message{userMsg("go")}})
	if err != nil {
		t.Fatal(err)
	}
	ends := all[*PartEnded](events)
	for _, e := range ends[:4] {
		if e.InputError == "" {
			t.Errorf("call %s: no input error", e.ID)
		}
		tc := e.Part.(cmf.ToolCall)
		if err := tc.Validate(); err != nil {
			t.Errorf("stored call %s is invalid CMF: %v", e.ID, err)
		}
	}
	if len(all[*ApprovalRequested](events)) != 0 || deleted.Load() != 0 {
		t.Fatal("an invalid call was sent for approval or executed")
	}
	results := all[*ToolResult](events)
	if len(results) != 4 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if !r.IsError || !strings.HasPrefix(r.ErrorText(), "Invalid tool call:") {
			t.Errorf("result %s = %s", r.ToolCallID, r.Output)
		}
	}
	if last[*RunFinished](t, events).StopReason != cmf.StopEnd {
		t.Fatal("the model should have seen the errors and answered")
	}
}

func TestLoopApproval(t *testing.T) {
	call := concat(toolCall("c1", "get_weather", `{"city":"Berlin"}`), toolCall("c2", "delete_file", `{"path":"/tmp/x.txt"}`), []Chunk{finish(cmf.StopCall)})
	for _, tc := range []struct {
		name       string
		resolution Resolution
		wantExec   int32
		check      func(t *testing.T, r *ToolResult)
	}{
		{"approved", Resolution{ToolCallID: "c2", Kind: Approve}, 1, func(t *testing.T, r *ToolResult) {
			if r.IsError || string(r.Output) != `{"deleted":"/tmp/x.txt"}` {
				t.Errorf("result = %+v", r)
			}
		}},
		{"denied", Resolution{ToolCallID: "c2", Kind: Deny, Reason: "not today"}, 0, func(t *testing.T, r *ToolResult) {
			if !r.IsError || !r.Denied || r.ErrorText() != "The user denied this tool call. Reason: not today" {
				t.Errorf("result = %+v %s", r, r.Output)
			}
		}},
		{"edited arguments", Resolution{ToolCallID: "c2", Kind: Approve, EditedArgs: json.RawMessage(`{"path":"/tmp/y.txt"}`)}, 1, func(t *testing.T, r *ToolResult) {
			if string(r.Output) != `{"deleted":"/tmp/y.txt"}` {
				t.Errorf("result = %s", r.Output)
			}
		}},
		{"edited arguments re-validated", Resolution{ToolCallID: "c2", Kind: Approve, EditedArgs: json.RawMessage(`{"path":["/"]}`)}, 0, func(t *testing.T, r *ToolResult) {
			if !r.IsError || !strings.Contains(r.ErrorText(), "schema") {
				t.Errorf("result = %s", r.Output)
			}
		}},
		{"wrong kind of answer", Resolution{ToolCallID: "c2", Kind: ClientOutput, Output: json.RawMessage(`{"deleted":"/"}`)}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var deleted atomic.Int32
			m := &scripted{replies: []reply{{chunks: call}, {chunks: text("Done.")}}}
			l := newLoop(t, m, &deleted)
			in := &Input{Messages: []cmf.Message{userMsg("weather then delete")}}
			events, err := collect(t, l, context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			// The weather ran; the delete waits.
			if r := all[*ToolResult](events); len(r) != 1 || r[0].ToolCallID != "c1" {
				t.Fatalf("first run results = %+v", r)
			}
			ask := last[*ApprovalRequested](t, events)
			fin := last[*RunFinished](t, events)
			if fin.StopReason != cmf.StopPaused || len(fin.Pending) != 1 || fin.Pending[0].Kind != PendingApproval ||
				fin.Pending[0].ApprovalID != ask.ApprovalID || ask.ToolCallID != "c2" || string(ask.Input) != `{"path":"/tmp/x.txt"}` {
				t.Fatalf("paused with %+v, asked %+v", fin, ask)
			}
			if deleted.Load() != 0 || len(m.requests) != 1 {
				t.Fatal("ran before approval")
			}

			next := continueFrom(in, events, tc.resolution)
			events, err = collect(t, l, context.Background(), next)
			if err != nil {
				t.Fatal(err)
			}
			if deleted.Load() != tc.wantExec {
				t.Fatalf("executed %d times, want %d", deleted.Load(), tc.wantExec)
			}
			if tc.check == nil { // not answered: still paused, model not called
				fin := last[*RunFinished](t, events)
				if fin.StopReason != cmf.StopPaused || len(fin.Pending) != 1 || fin.Pending[0].ApprovalID != ask.ApprovalID || len(m.requests) != 1 {
					t.Fatalf("second run = %+v", fin)
				}
				return
			}
			// The result comes before the first step, then the model answers.
			res, ok := events[1].(*ToolResult)
			if !ok || res.ToolCallID != "c2" {
				t.Fatalf("event 1 = %T, want the resumed result", events[1])
			}
			tc.check(t, res)
			if _, ok := events[2].(*StepStarted); !ok {
				t.Fatalf("event 2 = %T, want StepStarted", events[2])
			}
			if last[*RunFinished](t, events).StopReason != cmf.StopEnd || len(m.requests) != 2 {
				t.Fatal("model not called after the resolution")
			}
			// Resuming the same conversation again executes nothing more.
			again := continueFrom(next, events, tc.resolution)
			if _, err := collect(t, newLoop(t, &scripted{replies: []reply{{chunks: text("x")}}}, &deleted), context.Background(), again); err != nil {
				t.Fatal(err)
			}
			if deleted.Load() != tc.wantExec {
				t.Fatal("a replayed approval executed the tool again")
			}
		})
	}
}

func TestLoopClientTool(t *testing.T) {
	m := &scripted{replies: []reply{
		{chunks: concat(toolCall("loc1", "get_location", `{}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("You are in Lyon.")},
	}}
	l := newLoop(t, m, nil)
	in := &Input{Messages: []cmf.Message{userMsg("where am i")}}
	events, err := collect(t, l, context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	cc := last[*ClientToolCall](t, events)
	fin := last[*RunFinished](t, events)
	if cc.ToolCallID != "loc1" || fin.StopReason != cmf.StopPaused || fin.Pending[0].Kind != PendingClient {
		t.Fatalf("client call %+v, finish %+v", cc, fin)
	}
	if len(all[*ToolResult](events)) != 0 {
		t.Fatal("the server answered a client tool")
	}

	// No output yet: still paused.
	events2, _ := collect(t, l, context.Background(), continueFrom(in, events))
	if last[*RunFinished](t, events2).StopReason != cmf.StopPaused || len(m.requests) != 1 {
		t.Fatal("ran without the client's output")
	}

	next := continueFrom(in, events, Resolution{ToolCallID: "loc1", Kind: ClientOutput, Output: json.RawMessage(`{"city":"Lyon"}`), MessageID: "tool-msg-1"})
	events, err = collect(t, l, context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	res := events[1].(*ToolResult)
	if !res.FromClient || string(res.Output) != `{"city":"Lyon"}` || res.MessageID != "tool-msg-1" {
		t.Fatalf("client result = %+v", res)
	}
	if last[*PartEnded](t, events).Part.(cmf.Text).Text != "You are in Lyon." {
		t.Fatal("no answer")
	}

	// A client error reaches the model as an error result.
	m2 := &scripted{replies: []reply{
		{chunks: concat(toolCall("loc1", "get_location", `{}`), []Chunk{finish(cmf.StopCall)})},
		{chunks: text("Sorry.")},
	}}
	l2 := newLoop(t, m2, nil)
	first, _ := collect(t, l2, context.Background(), in)
	events, err = collect(t, l2, context.Background(), continueFrom(in, first, Resolution{ToolCallID: "loc1", Kind: ClientError, ErrorText: "denied by browser"}))
	if err != nil {
		t.Fatal(err)
	}
	res = events[1].(*ToolResult)
	if !res.IsError || !res.FromClient || res.ErrorText() != "denied by browser" {
		t.Fatalf("client error result = %+v", res)
	}
}

func TestLoopInputClientTools(t *testing.T) {
	m := &scripted{replies: []reply{{chunks: concat(toolCall("x1", "confirm", `{"ok":true}`), []Chunk{finish(cmf.StopCall)})}}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{
		Messages:    []cmf.Message{userMsg("confirm")},
		ClientTools: []ToolSpec{{Name: "confirm", Description: "Ask the user."}, {Name: "get_weather"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.requests[0].Tools) != 7 {
		t.Fatalf("%d tools offered: a client tool must not replace a server tool", len(m.requests[0].Tools))
	}
	if cc := last[*ClientToolCall](t, events); cc.ToolName != "confirm" {
		t.Fatalf("client call = %+v", cc)
	}
}

func TestLoopStepLimit(t *testing.T) {
	loopReply := reply{chunks: concat(toolCall("", "get_weather", `{"city":"Rome"}`), []Chunk{finish(cmf.StopCall)})}
	m := &scripted{replies: []reply{loopReply, loopReply, loopReply, loopReply}}
	events, err := collect(t, newLoop(t, m, nil, WithMaxSteps(3)), context.Background(), &Input{Messages: []cmf.Message{userMsg("loop")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.requests) != 3 || len(all[*StepStarted](events)) != 3 {
		t.Fatalf("%d model calls, want 3", len(m.requests))
	}
	if fin := last[*RunFinished](t, events); fin.StopReason != cmf.StopMaxTurns {
		t.Fatalf("finish = %s", fin.StopReason)
	}
	if _, err := New(m, WithMaxSteps(0)); err == nil {
		t.Fatal("max steps 0 accepted")
	}
}

func TestLoopModelErrorMidStream(t *testing.T) {
	boom := errors.New("upstream exploded")
	m := &scripted{replies: []reply{{
		chunks: concat([]Chunk{{Kind: ChunkThinking, Delta: "hmm"}, {Kind: ChunkText, Delta: "partial"}}, toolCall("c1", "get_weather", `{"ci`)),
		err:    boom,
	}}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("x")}})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	sf := last[*StepFinished](t, events)
	if sf.StopReason != cmf.StopError {
		t.Fatalf("step finished %s", sf.StopReason)
	}
	ends := all[*PartEnded](events)
	if len(ends) != 3 || ends[2].InputError == "" || ends[2].Part != nil {
		t.Fatalf("parts not ended properly: %+v", ends)
	}
}

// A model stream that ends without its finish chunk (cut by a proxy, or
// a model that forgets it) fails the run instead of passing for a whole
// answer; what it streamed is closed and kept as the step's error.
func TestLoopStreamWithoutFinish(t *testing.T) {
	m := &scripted{replies: []reply{{chunks: []Chunk{{Kind: ChunkText, Delta: "half an ans"}}}}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("x")}})
	if !errors.Is(err, ErrNoFinish) {
		t.Fatalf("err = %v", err)
	}
	checkBalance(t, events, err)
	if sf := last[*StepFinished](t, events); sf.StopReason != cmf.StopError {
		t.Fatalf("step finished %s", sf.StopReason)
	}
}

func TestLoopCancelMidStream(t *testing.T) {
	m := &scripted{replies: []reply{{chunks: []Chunk{{Kind: ChunkText, Delta: "thinking about it"}}, block: true}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := newLoop(t, m, nil)
	var events []Event
	for ev, err := range l.Run(ctx, &Input{Messages: []cmf.Message{userMsg("x")}}) {
		if err != nil {
			t.Fatalf("cancellation is not an error: %v", err)
		}
		events = append(events, ev)
		if _, ok := ev.(*PartDelta); ok {
			cancel()
		}
	}
	checkBalance(t, events, nil)
	if fin := last[*RunFinished](t, events); fin.StopReason != cmf.StopAborted {
		t.Fatalf("finish = %s", fin.StopReason)
	}
	if last[*StepFinished](t, events).StopReason != cmf.StopAborted {
		t.Fatal("step not aborted")
	}
	if last[*PartEnded](t, events).Part.(cmf.Text).Text != "thinking about it" {
		t.Fatal("the partial text was not kept")
	}
}

// Cancelling a run stops the tools it is running: each gets an
// "interrupted" result and the run finishes aborted, at the deadline
// rather than when the tools would have. In a synctest bubble, so the
// 50 ms deadline and the 5 s tools are the bubble's clock.
func TestLoopCancelDuringTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{replies: []reply{{chunks: concat(toolCall("c1", "slow", `{"ms":5000}`), toolCall("c2", "slow", `{"ms":5000}`), []Chunk{finish(cmf.StopCall)})}}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		events, err := collect(t, newLoop(t, m, nil), ctx, &Input{Messages: []cmf.Message{userMsg("x")}})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Fatalf("the run ended %v after it began, not at its 50 ms deadline", d)
		}
		results := all[*ToolResult](events)
		if len(results) != 2 || !results[0].IsError || !strings.Contains(results[0].ErrorText(), "interrupted") {
			t.Fatalf("results = %+v", results)
		}
		if last[*RunFinished](t, events).StopReason != cmf.StopAborted {
			t.Fatal("not aborted")
		}
	})
}

// A consumer that stops reading cancels the run: its tools stop at once
// rather than run to their end (in a synctest bubble, so "at once" is
// exact).
func TestLoopConsumerStopsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &scripted{replies: []reply{
			{chunks: concat(toolCall("c1", "slow", `{"ms":5000}`), toolCall("c2", "slow", `{"ms":10}`), []Chunk{finish(cmf.StopCall)})},
		}}
		l := newLoop(t, m, nil)
		start := time.Now()
		for ev := range l.Run(context.Background(), &Input{Messages: []cmf.Message{userMsg("x")}}) {
			if _, ok := ev.(*PartEnded); ok {
				break // the handler's client went away
			}
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("stopping did not cancel the run: it ended %v later", d)
		}
		// goleak (TestMain) proves the tool goroutines are gone.
	})
}

func TestLoopUnansweredCallsGetResults(t *testing.T) {
	// History with a call nobody answered (an interrupted server call and
	// an abandoned approval), then a new user message.
	asst := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
		cmf.ToolCall{ToolCallID: "old1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
		cmf.ToolCall{ToolCallID: "old2", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/x"}`)},
	}}
	m := &scripted{replies: []reply{{chunks: text("ok")}}}
	var deleted atomic.Int32
	_, err := collect(t, newLoop(t, m, &deleted), context.Background(), &Input{
		Messages: []cmf.Message{userMsg("a"), asst, userMsg("b")},
		Resume:   []Resolution{{ToolCallID: "old2", Kind: Approve}}, // not at the tail: ignored
	})
	if err != nil {
		t.Fatal(err)
	}
	if deleted.Load() != 0 {
		t.Fatal("an approval for a call that is not pending ran")
	}
	msgs := m.requests[0].Messages
	if len(msgs) != 5 || msgs[2].Role != cmf.RoleTool || msgs[3].Role != cmf.RoleTool || msgs[4].Text() != "b" {
		t.Fatalf("model messages = %+v", msgs)
	}
	if r := msgs[2].Content[0].(cmf.ToolResult); r.ToolCallID != "old1" || !r.IsError {
		t.Fatalf("synthesized result = %+v", r)
	}
}

func TestLoopContextIsData(t *testing.T) {
	m := &scripted{replies: []reply{{chunks: text("ok")}}}
	_, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{
		Messages: []cmf.Message{userMsg("hi")},
		Context:  []ContextItem{{Description: "tz", Value: "UTC"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctxMsg := m.requests[0].System[0]
	if ctxMsg.Role != cmf.RoleUser || !strings.Contains(ctxMsg.Text(), `"description":"tz","value":"UTC"`) || !strings.Contains(ctxMsg.Text(), "not instructions") {
		t.Fatalf("context message = %+v", ctxMsg)
	}
}

func TestLoopStateAndData(t *testing.T) {
	m := &scripted{replies: []reply{{chunks: []Chunk{
		{Kind: ChunkStateSnapshot, Value: json.RawMessage(`{"a":1}`)},
		{Kind: ChunkStateDelta, Value: json.RawMessage(`[{"op":"replace","path":"/a","value":2}]`)},
		{Kind: ChunkData, Name: "status", DataID: "s1", Value: json.RawMessage(`"loading"`)},
		{Kind: ChunkText, Delta: "hi"},
		{Kind: ChunkData, Name: "status", DataID: "s1", Value: json.RawMessage(`"done"`)},
		{Kind: ChunkData, Name: "toast", Value: json.RawMessage(`"saved"`), Transient: true},
		finish(cmf.StopEnd),
	}}}}
	events, err := collect(t, newLoop(t, m, nil), context.Background(), &Input{Messages: []cmf.Message{userMsg("x")}, State: json.RawMessage(`{"a":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(all[*StateSnapshot](events)) != 1 || len(all[*StateDelta](events)) != 1 || len(all[*Data](events)) != 3 {
		t.Fatal("state or data events missing")
	}
	if string(m.requests[0].State) != `{"a":0}` {
		t.Fatal("state not passed to the model")
	}
	rec := NewRecorder()
	for _, ev := range events {
		rec.Add(ev)
	}
	recs := rec.Messages()[0].Data()
	if len(recs) != 1 || string(recs[0].Value) != `"done"` || recs[0].Index != 0 {
		t.Fatalf("data records = %+v", recs)
	}
}

func TestNewRejectsBadTools(t *testing.T) {
	m := &scripted{}
	for name, tools := range map[string][]Tool{
		"no name":    {{Execute: nil}},
		"duplicate":  {{Name: "a"}, {Name: "a"}},
		"bad schema": {{Name: "a", InputSchema: json.RawMessage(`{"type":12}`)}},
		"not json":   {{Name: "a", InputSchema: json.RawMessage(`{`)}},
	} {
		if _, err := New(m, WithTools(tools...)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("nil model accepted")
	}
}

func TestFuncToolPanicsOnBadType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a channel input")
		}
	}()
	FuncTool("bad", "", func(context.Context, chan int) (int, error) { return 0, nil })
}

// NeedsApproval sees the call's arguments: the same tool runs at once for
// some and waits for the user for others.
func TestLoopApprovalDependsOnArguments(t *testing.T) {
	var deleted atomic.Int32
	del := FuncTool("delete_file", "Deletes a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (map[string]string, error) {
		deleted.Add(1)
		return map[string]string{"deleted": in.Path}, nil
	})
	del.NeedsApproval = func(args json.RawMessage) bool {
		var in struct{ Path string }
		return json.Unmarshal(args, &in) != nil || !strings.HasPrefix(in.Path, "/tmp/")
	}
	call := concat(toolCall("c1", "delete_file", `{"path":"/tmp/scratch"}`), toolCall("c2", "delete_file", `{"path":"/etc/passwd"}`), []Chunk{finish(cmf.StopCall)})
	m := &scripted{replies: []reply{{chunks: call}}}
	l, err := New(m, WithTools(del))
	if err != nil {
		t.Fatal(err)
	}
	events, err := collect(t, l, context.Background(), &Input{Messages: []cmf.Message{userMsg("clean up")}})
	if err != nil {
		t.Fatal(err)
	}
	if r := all[*ToolResult](events); len(r) != 1 || r[0].ToolCallID != "c1" || deleted.Load() != 1 {
		t.Fatalf("results %+v, deleted %d", r, deleted.Load())
	}
	if a := all[*ApprovalRequested](events); len(a) != 1 || a[0].ToolCallID != "c2" {
		t.Fatalf("approvals %+v", a)
	}
	if fin := all[*RunFinished](events); len(fin) != 1 || fin[0].StopReason != cmf.StopPaused || len(fin[0].Pending) != 1 {
		t.Fatalf("finish %+v", fin)
	}
}

// One resolution answers one call: a conversation that names a call id
// twice runs the first call once, never the second's arguments.
func TestLoopResolutionAnswersOneCall(t *testing.T) {
	asst := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
		cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/x"}`)},
		cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/etc/passwd"}`)},
		cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/etc/shadow"}`)},
	}}
	m := &scripted{replies: []reply{{chunks: text("done")}}}
	var deleted atomic.Int32
	events, err := collect(t, newLoop(t, m, &deleted), context.Background(), &Input{
		Messages: []cmf.Message{userMsg("delete"), asst},
		Resume:   []Resolution{{ToolCallID: "c1", Kind: Approve}},
	})
	if err != nil {
		t.Fatal(err)
	}
	results := all[*ToolResult](events)
	if deleted.Load() != 1 || len(results) != 1 || string(results[0].Output) != `{"deleted":"/tmp/x"}` {
		t.Fatalf("%d executions, results %+v", deleted.Load(), results)
	}
}

// A resume entry answers only the calls that wait for one. A server tool
// whose run was cut off is not run again because a client names it in an
// approval or sends output for it: it gets the "never completed" error,
// and the tool does not run, so a client cannot start a server tool it
// was never asked about.
func TestResumeEntryDoesNotRunAServerTool(t *testing.T) {
	for _, kind := range []ResolutionKind{Approve, ClientOutput} {
		t.Run(kind.String(), func(t *testing.T) {
			var ran atomic.Int32
			counted := FuncTool("count", "Counts its runs.", func(context.Context, struct{}) (string, error) {
				ran.Add(1)
				return "ran", nil
			})
			m := &scripted{replies: []reply{{chunks: text("ok")}}}
			l, err := New(m, WithTools(counted))
			if err != nil {
				t.Fatal(err)
			}
			cut := cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.ToolCall{ToolCallID: "c1", Name: "count", Arguments: json.RawMessage(`{}`)}}}
			events, err := collect(t, l, context.Background(), &Input{
				History: []cmf.Message{userMsg("go"), cut},
				Resume:  []Resolution{{ToolCallID: "c1", Kind: kind, Output: json.RawMessage(`"forged"`)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if ran.Load() != 0 {
				t.Fatal("the server tool ran from a resume entry")
			}
			if n := len(all[*ToolResult](events)); n != 0 {
				t.Fatalf("%d tool results streamed for a call nobody waits for", n)
			}
			var got *cmf.ToolResult
			for msg := range m.requests[0].All() {
				for _, p := range msg.Content {
					if r, ok := p.(cmf.ToolResult); ok && r.ToolCallID == "c1" {
						got = &r
					}
				}
			}
			if got == nil || !got.IsError || string(got.Content) == `"forged"` {
				t.Fatalf("the model saw %+v for the cut-off call", got)
			}
		})
	}
}

// A tool that finishes while the run is being cancelled keeps its result:
// it ran. Only a tool that fails because of the cancellation is
// "interrupted".
func TestLoopToolThatFinishesAfterCancelKeepsItsResult(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	finishes := FuncTool("pay", "Pays.", func(ctx context.Context, in struct{}) (string, error) {
		cancel()
		<-ctx.Done()
		return "paid", nil // the payment went through
	})
	m := &scripted{replies: []reply{{chunks: concat(toolCall("c1", "pay", `{}`), []Chunk{finish(cmf.StopCall)})}}}
	l, err := New(m, WithTools(finishes))
	if err != nil {
		t.Fatal(err)
	}
	events, err := collect(t, l, ctx, &Input{Messages: []cmf.Message{userMsg("pay")}})
	if err != nil {
		t.Fatal(err)
	}
	r := last[*ToolResult](t, events)
	if r.IsError || string(r.Output) != `"paid"` {
		t.Fatalf("result %+v %s", r, r.Output)
	}
	if last[*RunFinished](t, events).StopReason != cmf.StopAborted {
		t.Fatal("the cancelled run did not finish aborted")
	}
}

// TestLoopKeepsHistoryApart: a stored history reaches the model as it is
// (not copied), the run resumes calls it left pending, and a call in it
// without a result still gets one.
func TestLoopKeepsHistoryApart(t *testing.T) {
	asst := cmf.Message{Role: cmf.RoleAssistant, Content: []cmf.Part{
		cmf.ToolCall{ToolCallID: "old", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
	}}
	history := []cmf.Message{userMsg("a"), asst, userMsg("b"), {Role: cmf.RoleAssistant, Content: []cmf.Part{
		cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/x"}`)},
	}}}
	history[3].SetCallRecord("c1", cmf.CallRecord{ApprovalID: "ap1"})

	m := &scripted{replies: []reply{{chunks: text("done")}}}
	var deleted atomic.Int32
	events, err := collect(t, newLoop(t, m, &deleted), context.Background(), &Input{
		History: history,
		Resume:  []Resolution{{ToolCallID: "c1", Kind: Approve}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if deleted.Load() != 1 {
		t.Fatal("the approved call in the history did not run")
	}
	if r := last[*ToolResult](t, events); r.ToolCallID != "c1" || !r.Approved {
		t.Fatalf("result = %+v", r)
	}
	req := m.requests[0]
	var got []string
	for msg := range req.All() {
		got = append(got, string(msg.Role))
	}
	// The history's unanswered "old" call gets a result; so the request
	// is one list, with the run's own messages after the history.
	if want := "user,assistant,tool,user,assistant,tool"; strings.Join(got, ",") != want {
		t.Fatalf("model saw %s, want %s", strings.Join(got, ","), want)
	}

	// Without a call missing its result, the history is passed unchanged.
	history[1] = userMsg("a2")
	m2 := &scripted{replies: []reply{{chunks: text("ok")}}}
	if _, err := collect(t, newLoop(t, m2, nil), context.Background(), &Input{History: history[:3], Messages: []cmf.Message{userMsg("c")}}); err != nil {
		t.Fatal(err)
	}
	if r := m2.requests[0]; len(r.History) != 3 || &r.History[0] != &history[0] || len(r.Messages) != 1 {
		t.Fatalf("history copied or moved: %d history, %d messages", len(r.History), len(r.Messages))
	}
}
