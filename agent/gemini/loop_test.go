package gemini_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
)

// turn is one run of the loop: the events it streamed and the messages
// it recorded (what a server stores).
type turn struct {
	events []agent.Event
	msgs   []cmf.Message
	err    error
}

func runLoop(t *testing.T, m agent.Model, in *agent.Input) turn {
	t.Helper()
	l, err := agent.New(m, agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	rec := agent.NewRecorder()
	var out turn
	for ev, err := range l.Run(context.Background(), in) {
		if err != nil {
			out.err = err
			break
		}
		rec.Add(ev)
		out.events = append(out.events, ev)
	}
	out.msgs = rec.Messages()
	for _, msg := range out.msgs {
		msg.SchemaVersion = cmf.SchemaVersion
		if err := msg.Validate(); err != nil {
			t.Fatalf("the run recorded an invalid message: %v\n%+v", err, msg)
		}
	}
	return out
}

// callPart is the function call part the fake signs, for the expected
// signature.
func callPart(name, args string) fake.Part {
	return fake.Part{FunctionCall: &fake.FunctionCall{Name: name, Args: json.RawMessage(args)}}
}

// allOK fails the test if the fake refused any request.
func allOK(t *testing.T, f *fake.Server) {
	t.Helper()
	for i, r := range f.Requests() {
		if r.Status != 200 {
			t.Fatalf("request %d refused: %d %s\n%s", i, r.Status, r.Message, r.Body)
		}
	}
}

// A chat of two turns with thinking and a tool: the second request of
// the first turn carries the call's signature, byte-exact, on the call;
// the second turn replays the whole first turn, the reply's signature on
// an empty text part after the reply, as it came.
func TestMultiTurnReplaysSignaturesOnTheirParts(t *testing.T) {
	f, m := start(t)
	f.Script(
		fake.Reply{Parts: []fake.ReplyPart{fake.Thought("The user wants the weather."), fake.CallPart("get_weather", `{"city":"Oslo"}`)}},
		fake.Say("Sunny ", "in Oslo."),
		fake.Say("Still sunny."),
	)
	first := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("Weather in Oslo?")}})
	if first.err != nil {
		t.Fatal(first.err)
	}
	callSig := f.Sign(testModel, callPart("get_weather", `{"city":"Oslo"}`))
	textSig := f.Sign(testModel, fake.Part{Text: text("")})

	// The run stored the signature with the call, tagged.
	asst := first.msgs[0]
	calls := toolCalls(asst)
	if len(calls) != 1 || calls[0].Opaque == nil || *calls[0].Opaque != (cmf.Opaque{Provider: "gemini", Model: testModel, Data: callSig}) {
		t.Fatalf("stored step: %+v", asst.Content)
	}
	if th, ok := asst.Content[0].(cmf.Thinking); !ok || th.Text != "The user wants the weather." {
		t.Fatalf("thought summary not kept as reasoning: %+v", asst.Content)
	}

	second := f.Requests()[1].Parsed.Contents
	if len(second) != 3 {
		t.Fatalf("second request: %s", f.Requests()[1].Body)
	}
	// The step goes back as it came: its thought summary, then the call
	// with its signature.
	model := second[1]
	if model.Role != "model" || len(model.Parts) != 2 || !model.Parts[0].Thought || *model.Parts[0].Text != "The user wants the weather." ||
		model.Parts[1].FunctionCall == nil || model.Parts[1].ThoughtSignature != callSig {
		t.Fatalf("step replayed as %+v", model)
	}
	// Gemini sent the call without an id: it goes back without one.
	if model.Parts[1].FunctionCall.ID != "" {
		t.Fatalf("call sent back with id %q", model.Parts[1].FunctionCall.ID)
	}
	resp := second[2].Parts[0].FunctionResponse
	if second[2].Role != "user" || resp == nil || resp.ID != "" || resp.Name != "get_weather" {
		t.Fatalf("function response %+v", second[2])
	}
	var out struct {
		Output demo.Weather `json:"output"`
	}
	if json.Unmarshal(resp.Response, &out) != nil || out.Output.Forecast != "sunny" {
		t.Fatalf("function response %s", resp.Response)
	}

	// Turn two, with the first turn as stored history.
	history := append([]cmf.Message{user("Weather in Oslo?")}, first.msgs...)
	if second := runLoop(t, m, &agent.Input{History: history, Messages: []cmf.Message{user("And tomorrow?")}}); second.err != nil {
		t.Fatal(second.err, f.Last().Message, string(f.Last().Body))
	}
	third := f.Requests()[2].Parsed.Contents
	if len(third) != 5 || third[1].Parts[1].ThoughtSignature != callSig {
		t.Fatalf("third request: %s", f.Requests()[2].Body)
	}
	reply := third[3].Parts
	if len(reply) != 2 || *reply[0].Text != "Sunny in Oslo." || reply[0].ThoughtSignature != "" || *reply[1].Text != "" || reply[1].ThoughtSignature != textSig {
		t.Fatalf("reply replayed as %+v", third[3])
	}
	allOK(t, f)
}

// Gemini 2.5 signs the first part after its thoughts, which may be the
// first fragment of a text that goes on: the fragment goes back alone
// with its signature, the rest after it unsigned.
func TestSignedFragmentIsSplitBackOnReplay(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Reply{Unsigned: true, Parts: []fake.ReplyPart{fake.Thought("Hmm."), {Text: "Hello", Sign: true}, fake.Text(" world")}}, fake.Say("Bye."))
	first := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("hi")}})
	if first.err != nil {
		t.Fatal(first.err)
	}
	history := append([]cmf.Message{user("hi")}, first.msgs...)
	if r := runLoop(t, m, &agent.Input{History: history, Messages: []cmf.Message{user("bye")}}); r.err != nil {
		t.Fatal(r.err)
	}
	parts := f.Last().Parsed.Contents[1].Parts
	want := f.Sign(testModel, fake.Part{Text: text("Hello")})
	if len(parts) != 3 || !parts[0].Thought || *parts[1].Text != "Hello" || parts[1].ThoughtSignature != want || *parts[2].Text != " world" || parts[2].ThoughtSignature != "" {
		t.Fatalf("replayed as %+v\nstored %+v\n%s", parts, first.msgs, f.Requests()[0].Body)
	}
	allOK(t, f)
}

// Parallel calls: the first carries the step's signature, the others
// none; their results go back in one content, in the calls' order.
func TestParallelCalls(t *testing.T) {
	f, m := start(t)
	f.Script(
		fake.Calls(fake.CallPart("get_weather", `{"city":"Paris"}`), fake.CallPart("get_weather", `{"city":"Tokyo"}`)),
		fake.Say("Both sunny."),
	)
	r := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("Paris and Tokyo?")}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := f.Last().Parsed.Contents
	calls, resps := c[1].Parts, c[2].Parts
	if len(calls) != 2 || calls[0].ThoughtSignature == "" || calls[1].ThoughtSignature != "" || len(resps) != 2 {
		t.Fatalf("request %s", f.Last().Body)
	}
	for i, city := range []string{"Paris", "Tokyo"} {
		var out struct {
			Output demo.Weather `json:"output"`
		}
		if json.Unmarshal(resps[i].FunctionResponse.Response, &out) != nil || out.Output.City != city {
			t.Fatalf("response %d is %s, want %s's", i, resps[i].FunctionResponse.Response, city)
		}
	}
	if ids := toolCalls(r.msgs[0]); len(ids) != 2 || ids[0].ToolCallID == ids[1].ToolCallID {
		t.Fatalf("two calls share an id: %+v", ids)
	}
	allOK(t, f)
}

// Gemini gets its calls back as it sent them. A call it sent without an
// id goes back without one, and so does its response, though agentui made
// an id up for the UI and the history; a call with an id of Gemini's goes
// back with it, its response too, even an id that looks like one made up
// here. So both in the run that made the calls and from stored history.
func TestCallIDsGoBackAsGeminiSentThem(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []string // what Gemini sent, one per call
	}{
		{"none", []string{"", ""}},
		{"Gemini's own", []string{"fc-7", "fc-8"}},
		{"one of each", []string{"", "fc-8"}},
		{"Gemini's own that looks made up", []string{"gemini-local-0197", "gemini-local-gemini-local-x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, m := start(t)
			cities := []string{"Paris", "Tokyo"}
			var parts []fake.ReplyPart
			for i, id := range tc.ids {
				parts = append(parts, fake.ReplyPart{Call: &fake.Call{ID: id, Name: "get_weather", Args: `{"city":"` + cities[i] + `"}`}})
			}
			f.Script(fake.Calls(parts...), fake.Say("Both sunny."), fake.Say("Still sunny."))
			first := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("Paris and Tokyo?")}})
			if first.err != nil {
				t.Fatal(first.err)
			}
			stored := toolCalls(first.msgs[0])
			if len(stored) != 2 || stored[0].ToolCallID == "" || stored[1].ToolCallID == "" || stored[0].ToolCallID == stored[1].ToolCallID {
				t.Fatalf("stored calls %+v", stored)
			}
			check := func(r *fake.Request) {
				t.Helper()
				c := r.Parsed.Contents
				if len(c) < 3 {
					t.Fatalf("request %s", r.Body)
				}
				for i, want := range tc.ids {
					if got := c[1].Parts[i].FunctionCall.ID; got != want {
						t.Errorf("call %d sent with id %q, Gemini sent %q", i, got, want)
					}
					if got := c[2].Parts[i].FunctionResponse.ID; got != want {
						t.Errorf("response %d sent with id %q, its call had %q", i, got, want)
					}
				}
			}
			check(f.Requests()[1])
			history := append([]cmf.Message{user("Paris and Tokyo?")}, first.msgs...)
			if r := runLoop(t, m, &agent.Input{History: history, Messages: []cmf.Message{user("And now?")}}); r.err != nil {
				t.Fatal(r.err)
			}
			check(f.Requests()[2])
			allOK(t, f)
		})
	}
}

// A call that needs approval pauses the run; the run that resumes it
// sends the paused step back with its signature (the current turn's step
// must have one) and the tool's result.
func TestApprovalResumesWithTheSignature(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Calls(fake.CallPart("delete_file", `{"path":"/tmp/x"}`)), fake.Say("Deleted."))
	first := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("Delete /tmp/x")}})
	if first.err != nil {
		t.Fatal(first.err)
	}
	var approval *agent.ApprovalRequested
	for _, ev := range first.events {
		if a, ok := ev.(*agent.ApprovalRequested); ok {
			approval = a
		}
	}
	if approval == nil {
		t.Fatalf("no approval asked: %+v", first.events)
	}
	history := append([]cmf.Message{user("Delete /tmp/x")}, first.msgs...)
	second := runLoop(t, m, &agent.Input{History: history, Resume: []agent.Resolution{{ToolCallID: approval.ToolCallID, Kind: agent.Approve}}})
	if second.err != nil {
		t.Fatal(second.err)
	}
	c := f.Last().Parsed.Contents
	if len(c) != 3 || c[1].Parts[0].ThoughtSignature != f.Sign(testModel, callPart("delete_file", `{"path":"/tmp/x"}`)) || c[2].Parts[0].FunctionResponse == nil {
		t.Fatalf("resumed request %s", f.Last().Body)
	}
	allOK(t, f)
}

// A step split over assistant messages in a row (a stateless AG-UI
// client holds its reasoning in a message of its own) goes back as one
// model content, its signed thought and its call together: the API
// refuses a call turn right after another model turn.
func TestAssistantMessagesInARowAreOneTurn(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Reply{Parts: []fake.ReplyPart{{Text: "Needs approval.", Thought: true, Sign: true}, fake.CallPart("delete_file", `{"path":"/tmp/x"}`)}}, fake.Say("Deleted."))
	first := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("Delete /tmp/x")}})
	if first.err != nil || len(first.msgs) != 1 || len(first.msgs[0].Content) != 2 {
		t.Fatalf("first run: %v %+v", first.err, first.msgs)
	}
	reasoning, step := first.msgs[0], first.msgs[0]
	reasoning.Content, step.Content = first.msgs[0].Content[:1], first.msgs[0].Content[1:]
	reasoning.SetID("reasoning-1")
	calls := toolCalls(step)
	history := []cmf.Message{user("Delete /tmp/x"), reasoning, step}
	if second := runLoop(t, m, &agent.Input{History: history, Resume: []agent.Resolution{{ToolCallID: calls[0].ToolCallID, Kind: agent.Approve}}}); second.err != nil {
		t.Fatal(second.err, f.Last().Message)
	}
	c := f.Last().Parsed.Contents
	thought := fake.Part{Text: text("Needs approval."), Thought: true}
	if len(c) != 3 || c[1].Role != "model" || len(c[1].Parts) != 2 || c[1].Parts[0].ThoughtSignature != f.Sign(testModel, thought) ||
		c[1].Parts[1].ThoughtSignature != f.Sign(testModel, callPart("delete_file", `{"path":"/tmp/x"}`)) || c[2].Parts[0].FunctionResponse == nil {
		t.Fatalf("resumed request %s", f.Last().Body)
	}
	allOK(t, f)
}

// A chat that goes on with another model: the other model's signatures
// are never sent (the API would refuse them as corrupted); a step of the
// current turn that the other model made carries Google's documented
// skip value on its first call, since the API refuses it with none.
func TestModelSwitchSendsNoForeignValues(t *testing.T) {
	f := fake.New(t, fake.WithAPIKey(testKey))
	a := newModel(t, f, "gemini-2.5-pro")
	b := newModel(t, f, testModel)
	f.Script(
		fake.Calls(fake.Thought("Model a deletes."), fake.CallPart("delete_file", `{"path":"/a"}`)), // model a: paused for approval
		fake.Say("Deleted."), // model b resumes the turn
		fake.Say("Hello again."),
	)
	first := runLoop(t, a, &agent.Input{Messages: []cmf.Message{user("Delete /a")}})
	if first.err != nil {
		t.Fatal(first.err)
	}
	callID := toolCalls(first.msgs[0])[0].ToolCallID
	history := append([]cmf.Message{user("Delete /a")}, first.msgs...)
	second := runLoop(t, b, &agent.Input{History: history, Resume: []agent.Resolution{{ToolCallID: callID, Kind: agent.Approve}}})
	if second.err != nil {
		t.Fatal(second.err)
	}
	// Model a's step goes without its reasoning and its signature; its
	// call carries the skip value.
	steps := f.Last().Parsed.Contents[1].Parts
	if len(steps) != 1 || steps[0].FunctionCall == nil {
		t.Fatalf("the other model's step went as %+v", steps)
	}
	if raw, _ := base64.StdEncoding.DecodeString(steps[0].ThoughtSignature); string(raw) != "skip_thought_signature_validator" {
		t.Fatalf("the other model's call went as %+v", steps[0])
	}

	// The next turn: model a's step is history now, and goes unsigned;
	// model b's reply keeps its own signature.
	history = append(history, second.msgs...)
	if r := runLoop(t, b, &agent.Input{History: history, Messages: []cmf.Message{user("Hi")}}); r.err != nil {
		t.Fatal(r.err)
	}
	c := f.Last().Parsed.Contents
	if len(c[1].Parts) != 1 || c[1].Parts[0].ThoughtSignature != "" {
		t.Fatalf("model a's values sent to model b: %+v", c[1].Parts)
	}
	if p := c[3].Parts; len(p) != 2 || p[1].ThoughtSignature != f.Sign(testModel, fake.Part{Text: text("")}) {
		t.Fatalf("model b's reply replayed as %+v", c[3])
	}
	allOK(t, f)
}

// Values of other providers (an Anthropic thinking signature, redacted
// thinking, an OpenAI reasoning item, a value of unknown origin) never
// reach Gemini: their thinking is left out, their text and calls stay.
func TestOtherProvidersValuesAreDropped(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Say("Fine."))
	anth := &cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "sig-anthropic"}
	history := []cmf.Message{
		user("Weather?"),
		{Role: cmf.RoleAssistant, Content: []cmf.Part{
			cmf.Thinking{Text: "Let me check.", Opaque: anth},
			cmf.RedactedThinking{Opaque: cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "enc"}},
			cmf.Thinking{Text: "Summary.", Opaque: &cmf.Opaque{Provider: "openai.responses", Model: "gpt-5", ID: "rs_1", Data: "gAAA"}},
			cmf.Text{Text: "Checking.", Opaque: &cmf.Opaque{Data: "legacy"}},
			cmf.ToolCall{ToolCallID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
		}},
		{Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: "toolu_1", ToolName: "get_weather", Content: json.RawMessage(`{"forecast":"sunny"}`)}}},
	}
	if _, err := stream(m, &agent.Request{History: history, Messages: []cmf.Message{user("Thanks")}}); err != nil {
		t.Fatal(err)
	}
	step := f.Last().Parsed.Contents[1].Parts
	if len(step) != 2 || *step[0].Text != "Checking." || step[0].ThoughtSignature != "" || step[1].FunctionCall == nil || step[1].ThoughtSignature != "" {
		t.Fatalf("foreign step sent as %s", f.Last().Body)
	}
	allOK(t, f)
}

// The fake refuses what the real API refuses, so the tests above would
// fail if the model sent a foreign or missing signature: a control.
func TestFakeWouldRefuseWhatTheModelAvoids(t *testing.T) {
	f, m := start(t)
	history := []cmf.Message{
		user("Delete /a"),
		{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.ToolCall{ToolCallID: "c1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/a"}`),
			// A signature of this model, altered by one byte.
			Opaque: &cmf.Opaque{Provider: "gemini", Model: testModel, Data: flip(f.Sign(testModel, callPart("delete_file", `{"path":"/a"}`)))}}}},
		{Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: "c1", ToolName: "delete_file", Content: json.RawMessage(`{}`)}}},
	}
	_, err := stream(m, &agent.Request{History: history})
	var apiErr *gemini.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Problem != "a thought signature was rejected" {
		t.Fatalf("err = %v", err)
	}
	if got := f.Last().Message; got != "Corrupted thought signature." {
		t.Fatalf("fake said %q", got)
	}
}

func flip(sig string) string {
	raw, _ := base64.StdEncoding.DecodeString(sig)
	raw = slices.Clone(raw)
	raw[len(raw)-1] ^= 1
	return base64.StdEncoding.EncodeToString(raw)
}

func toolCalls(m cmf.Message) []cmf.ToolCall {
	var out []cmf.ToolCall
	for _, p := range m.Content {
		if c, ok := p.(cmf.ToolCall); ok {
			out = append(out, c)
		}
	}
	return out
}

// Gemini caches a prompt's repeated prefix implicitly; the second turn
// of a chat (same instructions, tools and history, replayed byte-exact)
// reads it, and the usage says so.
func TestImplicitCachingIsReported(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Say("Hello."), fake.Say("Again."))
	instructions := strings.Repeat("Answer as a careful assistant would. ", 100)
	first := runLoop(t, m, &agent.Input{Instructions: instructions, Messages: []cmf.Message{user("hi")}})
	if first.err != nil {
		t.Fatal(first.err)
	}
	history := append([]cmf.Message{user("hi")}, first.msgs...)
	second := runLoop(t, m, &agent.Input{Instructions: instructions, History: history, Messages: []cmf.Message{user("again")}})
	if second.err != nil {
		t.Fatal(second.err)
	}
	usage := func(r turn) agent.Usage {
		for _, ev := range r.events {
			if fin, ok := ev.(*agent.RunFinished); ok {
				return fin.Usage
			}
		}
		t.Fatal("no RunFinished")
		return agent.Usage{}
	}
	u1, u2 := usage(first), usage(second)
	if u1.CachedInputTokens != 0 || u2.CachedInputTokens < 1024 || u2.CachedInputTokens >= u2.InputTokens {
		t.Fatalf("first turn %+v, second %+v", u1, u2)
	}
	t.Logf("second turn: %d input tokens, %d of them read from the cache", u2.InputTokens, u2.CachedInputTokens)
}

// The server's instructions are the system instruction; the app's
// context is a user content before the conversation.
func TestInstructionsAndContext(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Say("Hi."))
	r := runLoop(t, m, &agent.Input{Instructions: "Be brief.", Context: []agent.ContextItem{{Description: "plan", Value: "pro"}}, Messages: []cmf.Message{user("hi")}})
	if r.err != nil {
		t.Fatal(r.err)
	}
	req := f.Last().Parsed
	if si := req.SystemInstruction; si == nil || len(si.Parts) != 1 || *si.Parts[0].Text != "Be brief." {
		t.Fatalf("system instruction %s", f.Last().Body)
	}
	if len(req.Contents) != 2 || req.Contents[0].Role != "user" || !strings.Contains(*req.Contents[0].Parts[0].Text, "pro") || *req.Contents[1].Parts[0].Text != "hi" {
		t.Fatalf("contents %s", f.Last().Body)
	}
	allOK(t, f)
}
