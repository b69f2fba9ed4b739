package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session drives the demo model through the real loop, turn by turn.
type session struct {
	t      *testing.T
	loop   *agent.Loop
	msgs   []cmf.Message
	events []agent.Event
	err    error
}

func newSession(t *testing.T, opts ...demo.Option) *session {
	l, err := agent.New(demo.New(opts...), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	return &session{t: t, loop: l}
}

func (s *session) run(ctx context.Context, in *agent.Input) {
	s.t.Helper()
	in.Messages = s.msgs
	s.events, s.err = nil, nil
	rec := agent.NewRecorder()
	for ev, err := range s.loop.Run(ctx, in) {
		if err != nil {
			s.err = err
			break
		}
		rec.Add(ev)
		s.events = append(s.events, ev)
	}
	s.msgs = append(s.msgs, rec.Messages()...)
}

func (s *session) say(text string, in ...*agent.Input) {
	s.t.Helper()
	s.msgs = append(s.msgs, cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}})
	input := &agent.Input{Instructions: "You are the demo."}
	if len(in) > 0 {
		input = in[0]
	}
	s.run(context.Background(), input)
}

func (s *session) resume(res ...agent.Resolution) {
	s.t.Helper()
	s.run(context.Background(), &agent.Input{Resume: res})
}

// text is the text of this run's text parts.
func (s *session) text() string {
	var b strings.Builder
	for _, ev := range s.events {
		if e, ok := ev.(*agent.PartEnded); ok && e.Kind == agent.PartText {
			b.WriteString(e.Part.(cmf.Text).Text)
		}
	}
	return b.String()
}

func (s *session) deltas(kind agent.PartKind) []string {
	var out []string
	for _, ev := range s.events {
		if e, ok := ev.(*agent.PartDelta); ok && e.Kind == kind {
			out = append(out, e.Delta)
		}
	}
	return out
}

func (s *session) finished() *agent.RunFinished {
	s.t.Helper()
	if s.err != nil {
		s.t.Fatalf("run failed: %v", s.err)
	}
	f, ok := s.events[len(s.events)-1].(*agent.RunFinished)
	if !ok {
		s.t.Fatalf("last event %T", s.events[len(s.events)-1])
	}
	return f
}

func TestEcho(t *testing.T) {
	s := newSession(t)
	s.say("Hello there, demo")
	if s.text() != "You said: Hello there, demo" {
		t.Fatalf("text = %q", s.text())
	}
	if d := s.deltas(agent.PartText); len(d) != 5 || d[0] != "You " || d[4] != "demo" {
		t.Fatalf("deltas = %q (want word by word)", d)
	}
	if f := s.finished(); f.StopReason != cmf.StopEnd || f.Usage.OutputTokens != 5 || f.Usage.InputTokens == 0 {
		t.Fatalf("finished = %+v", f)
	}
}

func TestThink(t *testing.T) {
	s := newSession(t)
	s.say("Please THINK about cats")
	th := s.deltas(agent.PartThinking)
	if strings.Join(th, "") != "Thinking about: Please THINK about cats" {
		t.Fatalf("thinking = %q", th)
	}
	if s.text() != "You said: Please THINK about cats" {
		t.Fatalf("text = %q", s.text())
	}
	// The thinking part comes first.
	for _, ev := range s.events {
		if e, ok := ev.(*agent.PartStarted); ok {
			if e.Kind != agent.PartThinking {
				t.Fatalf("first part is %v", e.Kind)
			}
			break
		}
	}
}

func TestWeather(t *testing.T) {
	s := newSession(t)
	s.say("think: what is the weather in Paris?")
	var call cmf.ToolCall
	for _, ev := range s.events {
		if e, ok := ev.(*agent.PartEnded); ok && e.Kind == agent.PartToolCall {
			call = e.Part.(cmf.ToolCall)
		}
	}
	if call.Name != "get_weather" || string(call.Arguments) != `{"city":"Paris"}` {
		t.Fatalf("call = %+v", call)
	}
	if got := len(s.deltas(agent.PartToolCall)); got != 2 {
		t.Fatalf("arguments streamed in %d fragments, want 2", got)
	}
	if s.text() != "The weather in Paris is sunny, 21°C." {
		t.Fatalf("text = %q", s.text())
	}
	// Thinking only before the first step.
	if n := len(s.deltas(agent.PartThinking)); n == 0 {
		t.Fatal("no thinking")
	}
	steps := 0
	for _, ev := range s.events {
		if _, ok := ev.(*agent.StepStarted); ok {
			steps++
		}
	}
	if steps != 2 {
		t.Fatalf("%d steps", steps)
	}
}

// research streams three progress updates, then its result, which the
// answer quotes.
func TestResearch(t *testing.T) {
	s := newSession(t)
	s.say("research owls")
	var progress []string
	var source *agent.Source
	for _, ev := range s.events {
		switch e := ev.(type) {
		case *agent.ToolProgress:
			progress = append(progress, string(e.Output))
		case *agent.Source:
			source = e
		}
	}
	if source == nil || source.URL != "https://example.com/research/owls" || source.Title != "owls: an overview" {
		t.Fatalf("source %+v", source)
	}
	want := []string{`{"step":1,"of":3,"status":"Searching for owls"}`, `{"step":2,"of":3,"status":"Reading 3 sources"}`, `{"step":3,"of":3,"status":"Summarizing"}`}
	if strings.Join(progress, "|") != strings.Join(want, "|") {
		t.Fatalf("progress %q", progress)
	}
	if s.text() != "Research on owls: 3 sources agree that owls is worth a closer look." {
		t.Fatalf("text = %q", s.text())
	}
}

func TestDelete(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  agent.Resolution
		want string
	}{
		{"approved", agent.Resolution{Kind: agent.Approve}, "Deleted /tmp/x.txt."},
		{"approved with an edited path", agent.Resolution{Kind: agent.Approve, EditedArgs: json.RawMessage(`{"path":"/tmp/y.txt"}`)}, "Deleted /tmp/y.txt."},
		{"denied", agent.Resolution{Kind: agent.Deny}, "Okay, I did not delete /tmp/x.txt."},
		{"denied with a reason", agent.Resolution{Kind: agent.Deny, Reason: "I need it"}, "Okay, I did not delete /tmp/x.txt (reason: I need it)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t)
			s.say("delete /tmp/x.txt")
			f := s.finished()
			if f.StopReason != cmf.StopPaused || len(f.Pending) != 1 || f.Pending[0].ToolName != "delete_file" || f.Pending[0].Kind != agent.PendingApproval {
				t.Fatalf("finished = %+v", f)
			}
			tc.res.ToolCallID = f.Pending[0].ToolCallID
			s.resume(tc.res)
			if s.text() != tc.want {
				t.Fatalf("text = %q, want %q", s.text(), tc.want)
			}
		})
	}
}

func TestWhereAmI(t *testing.T) {
	s := newSession(t)
	s.say("Where am I?")
	f := s.finished()
	if f.StopReason != cmf.StopPaused || f.Pending[0].ToolName != "get_location" || f.Pending[0].Kind != agent.PendingClient {
		t.Fatalf("finished = %+v", f)
	}
	s.resume(agent.Resolution{ToolCallID: f.Pending[0].ToolCallID, Kind: agent.ClientOutput, Output: json.RawMessage(`{"city":"Lyon"}`)})
	if s.text() != "You are in Lyon." {
		t.Fatalf("text = %q", s.text())
	}
}

func TestCallClientTool(t *testing.T) {
	s := newSession(t)
	in := &agent.Input{ClientTools: []agent.ToolSpec{{Name: "confirm_action"}}}
	s.say("call confirm_action", in)
	f := s.finished()
	if len(f.Pending) != 1 || f.Pending[0].ToolName != "confirm_action" || string(f.Pending[0].Input) != `{}` {
		t.Fatalf("finished = %+v", f)
	}
	s.run(context.Background(), &agent.Input{
		ClientTools: in.ClientTools,
		Resume:      []agent.Resolution{{ToolCallID: f.Pending[0].ToolCallID, Kind: agent.ClientOutput, Output: json.RawMessage(`{"confirmed":true}`)}},
	})
	if s.text() != `confirm_action returned: {"confirmed":true}` {
		t.Fatalf("text = %q", s.text())
	}
	// An undeclared tool is just text.
	s2 := newSession(t)
	s2.say("call nothing_here")
	if s2.text() != "You said: call nothing_here" {
		t.Fatalf("text = %q", s2.text())
	}
}

func TestCount(t *testing.T) {
	s := newSession(t)
	s.say("count to 5")
	if d := s.deltas(agent.PartText); strings.Join(d, "|") != "1 |2 |3 |4 |5 " {
		t.Fatalf("deltas = %q", d)
	}
	s.say("Count to 100000")
	d := s.deltas(agent.PartText)
	if len(d) != 100000 {
		t.Fatalf("%d deltas", len(d))
	}
	for i, x := range d { // across the blocks the deltas are cut from
		if x != strconv.Itoa(i+1)+" " {
			t.Fatalf("delta %d = %q", i, x)
		}
	}
	for _, n := range []string{"0", "100001"} {
		s.say("count to " + n)
		if s.text() != "You said: count to "+n {
			t.Fatalf("count to %s: %q", n, s.text())
		}
	}
}

// "wait N ms" waits that long, then says "done"; cancellation ends the
// wait at once. In a synctest bubble, so both are measured exactly.
func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		start := time.Now()
		s.say("wait 60 ms")
		if time.Since(start) != 60*time.Millisecond || s.text() != "done" {
			t.Fatalf("text %q after %v", s.text(), time.Since(start))
		}
		// Cancellation ends the wait at once.
		s.msgs = append(s.msgs, cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "wait 30000 ms"}}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start = time.Now()
		s.run(ctx, &agent.Input{})
		if time.Since(start) != 30*time.Millisecond || s.finished().StopReason != cmf.StopAborted {
			t.Fatalf("cancelled wait took %v", time.Since(start))
		}
	})
}

// A call whose context is already cancelled ends with the context's
// error, whatever the message asks for, rather than answering as if it
// had not been.
func TestCancelledBeforeTheCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, text := range []string{"hello", "count to 5", "weather in Paris", "markdown", "set x to 1"} {
		req := &agent.Request{Messages: []cmf.Message{{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}}}
		var got []agent.Chunk
		var err error
		for c, e := range demo.New().Stream(ctx, req) {
			if e != nil {
				err = e
				break
			}
			got = append(got, c)
		}
		if len(got) != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("%q: %d chunks, then %v; want only the context's error", text, len(got), err)
		}
	}
}

func TestContext(t *testing.T) {
	s := newSession(t)
	s.msgs = []cmf.Message{
		{Role: cmf.RoleUser, Content: []cmf.Part{
			cmf.Text{Text: "look"},
			cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "HTTPS://example.com/a.png"}},
			cmf.Document{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: "AAAA"}},
		}},
		{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Thinking{Text: "hm"}, cmf.Text{Text: "ok"}, cmf.ToolCall{ToolCallID: "c", Name: "get_weather", Arguments: json.RawMessage(`{}`)}}},
		{Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: "c", ToolName: "get_weather", Content: json.RawMessage(`1`)}}},
	}
	s.say("/context")
	var got []struct {
		Role  string   `json:"role"`
		Parts []string `json:"parts"`
		Text  string   `json:"text"`
	}
	if err := json.Unmarshal([]byte(s.text()), &got); err != nil {
		t.Fatalf("%v: %s", err, s.text())
	}
	want := []struct {
		role  string
		parts string
		text  string
	}{
		{"system", "text", "You are the demo."},
		{"user", "text,image:https,document:base64", "look"},
		{"assistant", "thinking,text,tool_call:get_weather", "ok"},
		{"tool", "tool_result:get_weather", ""},
		{"user", "text", "/context"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages: %s", len(got), s.text())
	}
	for i, w := range want {
		if got[i].Role != w.role || strings.Join(got[i].Parts, ",") != w.parts || got[i].Text != w.text {
			t.Errorf("message %d = %+v, want %+v", i, got[i], w)
		}
	}
	// Text is cut at 200 characters.
	s2 := newSession(t)
	s2.say("/context " + strings.Repeat("é", 300))
	if !strings.Contains(s2.text(), `"text":"/context `+strings.Repeat("é", 191)+`"`) {
		t.Fatalf("long text not cut at 200 runes: %s", s2.text())
	}
}

func TestFail(t *testing.T) {
	s := newSession(t)
	s.say("fail")
	if !errors.Is(s.err, demo.ErrFailed) {
		t.Fatalf("err = %v", s.err)
	}
	if d := s.deltas(agent.PartText); len(d) != 1 {
		t.Fatalf("deltas before the failure = %q", d)
	}
	s.say("this might fail")
	if s.err != nil || s.text() != "You said: this might fail" {
		t.Fatal("fail matched inside a sentence")
	}
}

func TestFailAtOnce(t *testing.T) {
	s := newSession(t)
	s.say("Fail at once")
	if !errors.Is(s.err, demo.ErrUnreachable) || !errors.Is(s.err, agent.ErrModelUnreachable) {
		t.Fatalf("err = %v", s.err)
	}
	if d := s.deltas(agent.PartText); len(d) != 0 {
		t.Fatalf("deltas before the failure = %q", d)
	}
}

func TestMarkdown(t *testing.T) {
	s := newSession(t)
	s.say("Markdown")
	if s.err != nil || s.text() != demo.MarkdownSample {
		t.Fatalf("markdown: %q, %v", s.text(), s.err)
	}
	for _, want := range []string{"## ", "**bold**", "- first item", "```go\n", "| Tool | Runs |"} {
		if !strings.Contains(demo.MarkdownSample, want) {
			t.Fatalf("the sample lacks %q", want)
		}
	}
	s.say("show me markdown")
	if s.text() != "You said: show me markdown" {
		t.Fatal("markdown matched inside a sentence")
	}
}

func TestSetState(t *testing.T) {
	s := newSession(t)
	s.say("set color to blue")
	var snap *agent.StateSnapshot
	for _, ev := range s.events {
		if e, ok := ev.(*agent.StateSnapshot); ok {
			snap = e
		}
	}
	if snap == nil || string(snap.State) != `{"color":"blue"}` || s.text() != "Set color to blue." {
		t.Fatalf("snapshot %v, text %q", snap, s.text())
	}
	// An empty state is no state: a snapshot too.
	s = newSession(t)
	s.say("set color to blue", &agent.Input{State: json.RawMessage(`{}`)})
	if _, ok := s.events[2].(*agent.StateSnapshot); !ok {
		t.Fatalf("empty state: event 2 is %T", s.events[2])
	}
	for _, tc := range []struct{ state, say, patch string }{
		{`{"size":1}`, "set color to blue", `[{"op":"add","path":"/color","value":"blue"}]`},
		{`{"color":"red"}`, "set color to blue", `[{"op":"replace","path":"/color","value":"blue"}]`},
		{`{"x":1}`, "set count to 3", `[{"op":"add","path":"/count","value":3}]`},
		{`{"x":1}`, "set a/b to true", `[{"op":"add","path":"/a~1b","value":true}]`},
	} {
		s := newSession(t)
		s.say(tc.say, &agent.Input{State: json.RawMessage(tc.state)})
		var delta *agent.StateDelta
		for _, ev := range s.events {
			if e, ok := ev.(*agent.StateDelta); ok {
				delta = e
			}
		}
		if delta == nil || string(delta.Patch) != tc.patch {
			t.Errorf("%s with %s: patch = %v", tc.say, tc.state, delta)
		}
	}
}

// WithWordDelay paces the words of a reply, not a count's numbers. In a
// synctest bubble, so the delays are measured exactly.
func TestWordDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t, demo.WithWordDelay(10*time.Millisecond))
		start := time.Now()
		s.say("one two three four")
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Fatalf("6 words with a 10 ms delay between them took %v", d)
		}
		// With a one-second delay, counting to 50 would take 49 s if delayed.
		s = newSession(t, demo.WithWordDelay(time.Second))
		start = time.Now()
		s.say("count to 50")
		if d := time.Since(start); d != 0 || len(s.deltas(agent.PartText)) != 50 {
			t.Fatalf("counting was delayed: %v", d)
		}
	})
}

func TestTools(t *testing.T) {
	tools := demo.Tools()
	if len(tools) != 4 || tools[0].Name != "get_weather" || tools[1].NeedsApproval == nil || tools[2].Execute != nil || tools[3].Name != "research" {
		t.Fatalf("tools = %+v", tools)
	}
	out, err := tools[0].Execute(context.Background(), json.RawMessage(`{"city":"Oslo"}`))
	if err != nil || string(out) != `{"city":"Oslo","forecast":"sunny","temperature_c":21}` {
		t.Fatalf("get_weather = %s, %v", out, err)
	}
	out, err = tools[1].Execute(context.Background(), json.RawMessage(`{"path":"/tmp/x"}`))
	if err != nil || string(out) != `{"deleted":"/tmp/x"}` {
		t.Fatalf("delete_file = %s, %v", out, err)
	}
}
