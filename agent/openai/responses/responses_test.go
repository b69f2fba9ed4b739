package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai/responses"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/responses"
)

const key = "sk-test-secret-1234"

func newModel(t testing.TB, f *fake.Server, model string, opts ...responses.Option) *responses.Model {
	t.Helper()
	m, err := responses.New(model, append([]responses.Option{responses.WithBaseURL(f.URL), responses.WithAPIKey(key), responses.WithMaxRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func stream(m agent.Model, req *agent.Request) ([]agent.Chunk, error) {
	var out []agent.Chunk
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func user(text string) cmf.Message {
	return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
}

func userReq(text string) *agent.Request { return &agent.Request{Messages: []cmf.Message{user(text)}} }

// issued is what the fake sent as the output item at index i of request n.
func issued(t *testing.T, f *fake.Server, n, i int) map[string]any {
	t.Helper()
	var item map[string]any
	if err := json.Unmarshal(f.Requests()[n].Output[i], &item); err != nil {
		t.Fatal(err)
	}
	return item
}

// accepted fails the test unless the fake took every request.
func accepted(t *testing.T, f *fake.Server) {
	t.Helper()
	for i, r := range f.Requests() {
		if r.Status != http.StatusOK || r.Error != nil {
			t.Fatalf("request %d: %d %+v\n%s", i, r.Status, r.Error, r.Body)
		}
	}
}

// A reasoning item streams as one thinking part (its summary's parts are
// paragraphs) that ends with the item's id and encrypted content, exactly
// as the API sent them in output_item.done; then the text.
func TestReasoningAndText(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Reasoning("**Planning**\n\nI will greet.", "**Done**"), fake.Text("Hello, world")}})
	chunks, err := stream(newModel(t, f, "gpt-5"), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var thinking, text strings.Builder
	var opaque *cmf.Opaque
	for _, c := range chunks {
		switch c.Kind {
		case agent.ChunkThinking:
			if opaque != nil {
				t.Fatalf("thinking after the item ended: %+v", c)
			}
			thinking.WriteString(c.Delta)
			opaque = c.Opaque
		case agent.ChunkText:
			if opaque == nil {
				t.Fatal("text before the reasoning item ended")
			}
			text.WriteString(c.Delta)
		}
	}
	if thinking.String() != "**Planning**\n\nI will greet.\n\n**Done**" || text.String() != "Hello, world" {
		t.Fatalf("thinking %q text %q", thinking.String(), text.String())
	}
	rs := issued(t, f, 0, 0)
	want := &cmf.Opaque{Provider: "openai.responses", Model: "gpt-5", ID: rs["id"].(string), Data: rs["encrypted_content"].(string)}
	if !reflect.DeepEqual(opaque, want) || !strings.HasPrefix(want.ID, "rs_") || len(want.Data) < 500 {
		t.Fatalf("opaque = %+v, want %+v", opaque, want)
	}
	fin := chunks[len(chunks)-1]
	if fin.Kind != agent.ChunkFinish || fin.StopReason != cmf.StopEnd || fin.Model != "gpt-5-2025-08-07" || fin.Provider != "openai" {
		t.Fatalf("finish = %+v", fin)
	}
	if u := fin.Usage; u.InputTokens == 0 || u.OutputTokens <= u.ReasoningTokens || u.ReasoningTokens == 0 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Fatalf("usage = %+v", u)
	}
	body := f.Requests()[0].JSON()
	if body["model"] != "gpt-5" || body["stream"] != true || body["store"] != false {
		t.Fatalf("request = %v", body)
	}
	if inc := body["include"].([]any); len(inc) != 1 || inc[0] != "reasoning.encrypted_content" {
		t.Fatalf("include = %v", body["include"])
	}
	if r := body["reasoning"].(map[string]any); r["summary"] != "auto" || r["effort"] != nil {
		t.Fatalf("reasoning = %v", r)
	}
	if _, ok := body["previous_response_id"]; ok {
		t.Fatal("previous_response_id sent: nothing is stored at OpenAI")
	}
	if h := f.Requests()[0].Header.Get("Authorization"); h != "Bearer "+key {
		t.Fatalf("auth = %q", h)
	}
}

// A reasoning item without a summary still ends a (empty) thinking part
// that carries the item, so two items are two parts.
func TestReasoningWithoutSummary(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Reasoning(), fake.Reasoning("Second."), fake.Text("ok")}})
	chunks, err := stream(newModel(t, f, "o4-mini"), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var ends []*cmf.Opaque
	for _, c := range chunks {
		if c.Kind == agent.ChunkThinking && c.Opaque != nil {
			if c.Delta != "" {
				t.Fatalf("the item's value comes alone: %+v", c)
			}
			ends = append(ends, c.Opaque)
		}
	}
	if len(ends) != 2 || ends[0].ID == ends[1].ID || ends[0].Model != "o4-mini" {
		t.Fatalf("reasoning items = %+v", ends)
	}
}

// Several calls in one response stream as separate calls, arguments in
// fragments, named on their first chunk, keyed by call id.
func TestParallelCalls(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Reasoning("Two cities."), fake.Call("get_weather", `{"city":"Paris"}`), fake.Call("get_weather", `{"city":"Rome"}`)}})
	chunks, err := stream(newModel(t, f, "gpt-5"), userReq("weather in Paris and Rome"))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	var order []string
	for _, c := range chunks {
		if c.Kind != agent.ChunkToolCall {
			continue
		}
		if _, seen := args[c.ToolCallID]; !seen {
			if c.ToolName != "get_weather" {
				t.Fatalf("first chunk without the name: %+v", c)
			}
			order = append(order, c.ToolCallID)
		} else if c.ToolName != "" {
			t.Fatalf("name repeated: %+v", c)
		}
		args[c.ToolCallID] += c.Delta
	}
	first, second := issued(t, f, 0, 1), issued(t, f, 0, 2)
	if len(order) != 2 || order[0] != first["call_id"] || order[1] != second["call_id"] {
		t.Fatalf("calls %v, want the call ids %v %v", order, first["call_id"], second["call_id"])
	}
	if args[order[0]] != `{"city":"Paris"}` || args[order[1]] != `{"city":"Rome"}` {
		t.Fatalf("args = %v", args)
	}
	if fin := chunks[len(chunks)-1]; fin.StopReason != cmf.StopCall {
		t.Fatalf("finish = %+v", fin)
	}
}

func run(t *testing.T, l *agent.Loop, in *agent.Input) ([]agent.Event, error) {
	t.Helper()
	var events []agent.Event
	for ev, err := range l.Run(context.Background(), in) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// continued is the conversation after a run: what a server stores.
func continued(before []cmf.Message, events []agent.Event) []cmf.Message {
	rec := agent.NewRecorder()
	for _, ev := range events {
		rec.Add(ev)
	}
	out := append([]cmf.Message(nil), before...)
	for _, m := range rec.Messages() {
		m.SchemaVersion = cmf.SchemaVersion
		out = append(out, m)
	}
	return out
}

func reasoningItems(items []map[string]any) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		if it["type"] == "reasoning" {
			out = append(out, it)
		}
	}
	return out
}

func types(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		ty, _ := it["type"].(string)
		if ty == "" {
			ty = "message:" + it["role"].(string)
		}
		out = append(out, ty)
	}
	return out
}

// A multi-turn chat with reasoning and parallel tool calls, through the
// loop with the demo tools: every request replays the reasoning items of
// the conversation, byte-exact and in their place (before the calls and
// the text they preceded), and the validating fake takes all of them.
func TestMultiTurnReplaysReasoning(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(
		fake.Reply{Output: []fake.Item{fake.Reasoning("Two cities."), fake.Call("get_weather", `{"city":"Paris"}`), fake.Call("get_weather", `{"city":"Rome"}`)}},
		fake.Reply{Output: []fake.Item{fake.Reasoning("Both sunny."), fake.Text("Sunny in both.")}},
		fake.Reply{Output: []fake.Item{fake.Reasoning("Recall."), fake.Text("I said sunny.")}},
	)
	l, err := agent.New(newModel(t, f, "gpt-5"), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	conv := []cmf.Message{user("Weather in Paris and Rome?")}
	events, err := run(t, l, &agent.Input{Instructions: "Be brief.", Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	conv = continued(conv, events)
	conv = append(conv, user("What did you say?"))
	if _, err := run(t, l, &agent.Input{Instructions: "Be brief.", History: conv}); err != nil {
		t.Fatal(err)
	}
	accepted(t, f)
	reqs := f.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := reqs[1].Items()
	if got, want := types(second), []string{"message:system", "message:user", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second request items %v, want %v", got, want)
	}
	rs := issued(t, f, 0, 0)
	if second[2]["id"] != rs["id"] || second[2]["encrypted_content"] != rs["encrypted_content"] {
		t.Fatalf("reasoning item not replayed byte-exact:\n sent %v\n issued %v", second[2], rs)
	}
	for _, call := range second[3:5] {
		if _, ok := call["id"]; ok {
			t.Fatalf("function call sent with its item id: %v", call)
		}
	}
	if second[3]["call_id"] != issued(t, f, 0, 1)["call_id"] || second[5]["call_id"] != second[3]["call_id"] {
		t.Fatalf("calls and outputs: %v", second[3:])
	}
	third := reqs[2].Items()
	if got, want := types(third), []string{"message:system", "message:user", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output", "reasoning", "message:assistant", "message:user"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("third request items %v, want %v", got, want)
	}
	items := reasoningItems(third)
	for i, n := range []int{0, 1} {
		want := issued(t, f, n, 0)
		if items[i]["id"] != want["id"] || items[i]["encrypted_content"] != want["encrypted_content"] {
			t.Fatalf("reasoning item %d: sent %v, issued %v", i, items[i], want)
		}
	}
	if s := items[1]["summary"].([]any); len(s) != 1 || s[0].(map[string]any)["text"] != "Both sunny." {
		t.Fatalf("summary = %v", items[1]["summary"])
	}
}

// A tool that needs approval pauses the run; the run that resumes it
// (the user approved) replays the paused step's reasoning item before its
// call, and the fake takes it.
func TestApprovalResumeReplaysReasoning(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(
		fake.Reply{Output: []fake.Item{fake.Reasoning("Needs deleting."), fake.Call("delete_file", `{"path":"/tmp/x"}`)}},
		fake.Reply{Output: []fake.Item{fake.Reasoning("Deleted."), fake.Text("Done.")}},
	)
	l, err := agent.New(newModel(t, f, "gpt-5"), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	conv := []cmf.Message{user("Delete /tmp/x")}
	events, err := run(t, l, &agent.Input{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	fin := events[len(events)-1].(*agent.RunFinished)
	if fin.StopReason != cmf.StopPaused || len(fin.Pending) != 1 || fin.Pending[0].Kind != agent.PendingApproval {
		t.Fatalf("finished %+v", fin)
	}
	conv = continued(conv, events)
	events, err = run(t, l, &agent.Input{History: conv, Resume: []agent.Resolution{{ToolCallID: fin.Pending[0].ToolCallID, Kind: agent.Approve}}})
	if err != nil {
		t.Fatal(err)
	}
	if fin := events[len(events)-1].(*agent.RunFinished); fin.StopReason != cmf.StopEnd {
		t.Fatalf("finished %+v", fin)
	}
	accepted(t, f)
	second := f.Requests()[1].Items()
	if got, want := types(second), []string{"message:user", "reasoning", "function_call", "function_call_output"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	if rs := issued(t, f, 0, 0); second[1]["encrypted_content"] != rs["encrypted_content"] {
		t.Fatal("reasoning item not replayed byte-exact")
	}
	if out := second[3]["output"].(string); !strings.Contains(out, `"deleted":"/tmp/x"`) {
		t.Fatalf("output = %q", out)
	}
}

// A step split over assistant messages in a row (a stateless AG-UI
// client holds its reasoning in a message of its own): the reasoning item
// still goes back, before the call that followed it.
func TestReasoningInAMessageOfItsOwn(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(
		fake.Reply{Output: []fake.Item{fake.Reasoning("Needs deleting."), fake.Call("delete_file", `{"path":"/tmp/x"}`)}},
		fake.Reply{Output: []fake.Item{fake.Text("Done.")}},
	)
	l, err := agent.New(newModel(t, f, "gpt-5"), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	conv := []cmf.Message{user("Delete /tmp/x")}
	events, err := run(t, l, &agent.Input{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	conv = continued(conv, events)
	step := conv[1]
	if len(step.Content) != 2 {
		t.Fatalf("step %+v", step.Content)
	}
	reasoning := step
	reasoning.Content, step.Content = step.Content[:1], step.Content[1:]
	reasoning.SetID("reasoning-1")
	conv = []cmf.Message{conv[0], reasoning, step}
	call := step.Content[0].(cmf.ToolCall)
	if _, err := run(t, l, &agent.Input{History: conv, Resume: []agent.Resolution{{ToolCallID: call.ToolCallID, Kind: agent.Approve}}}); err != nil {
		t.Fatal(err)
	}
	accepted(t, f)
	second := f.Requests()[1].Items()
	if got, want := types(second), []string{"message:user", "reasoning", "function_call", "function_call_output"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	if rs := issued(t, f, 0, 0); second[1]["encrypted_content"] != rs["encrypted_content"] {
		t.Fatal("reasoning item not replayed byte-exact")
	}
}

// storedTurn is a conversation gpt-5 produced: reasoning before a call,
// its result, reasoning before the answer, and a new question.
func storedTurn(t *testing.T, f *fake.Server) []cmf.Message {
	t.Helper()
	f.Enqueue(
		fake.Reply{Output: []fake.Item{fake.Reasoning("Weather first."), fake.Call("get_weather", `{"city":"Oslo"}`)}},
		fake.Reply{Output: []fake.Item{fake.Reasoning("Sunny."), fake.Text("Sunny in Oslo.")}},
	)
	l, err := agent.New(newModel(t, f, "gpt-5"), agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	conv := []cmf.Message{user("Weather in Oslo?")}
	events, err := run(t, l, &agent.Input{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	return append(continued(conv, events), user("And tomorrow?"))
}

// The same conversation continued on another model: the reasoning items
// gpt-5 produced are dropped (the other model could not decrypt them),
// the calls stay, and the fake takes the request. Sent as they are, the
// fake refuses them as the real API does.
func TestModelSwitchDropsReasoning(t *testing.T) {
	for _, model := range []string{"o4-mini", "gpt-4.1"} {
		t.Run(model, func(t *testing.T) {
			f := fake.New(t)
			conv := storedTurn(t, f)
			f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("Also sunny.")}})
			if _, err := stream(newModel(t, f, model), &agent.Request{History: conv}); err != nil {
				t.Fatal(err)
			}
			accepted(t, f)
			last := f.Requests()[2]
			if got, want := types(last.Items()), []string{"message:user", "function_call", "function_call_output", "message:assistant", "message:user"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("items %v, want %v", got, want)
			}
			body := last.JSON()
			if model == "gpt-4.1" {
				if _, ok := body["reasoning"]; ok {
					t.Fatalf("reasoning settings sent to a model that does not reason: %v", body)
				}
				if _, ok := body["include"]; ok {
					t.Fatalf("include sent to a model that does not reason: %v", body)
				}
			}

			// What the fake does with gpt-5's items sent to this model.
			prev := f.Requests()[1].JSON()
			prev["model"] = model
			delete(prev, "reasoning")
			status, e := post(t, f, prev)
			if status != http.StatusBadRequest || e["code"] != "invalid_encrypted_content" {
				t.Fatalf("foreign reasoning items: %d %v", status, e)
			}
		})
	}
}

func post(t *testing.T, f *fake.Server, body map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/responses", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error map[string]any `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}

// Values of other providers and of unknown origin never reach OpenAI: a
// thinking part signed by Anthropic, redacted thinking, a stored
// signature from before values were tagged.
func TestForeignValuesDropped(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
	conv := []cmf.Message{
		user("hi"),
		{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant, Content: []cmf.Part{
			cmf.Thinking{Text: "Claude thought.", Opaque: &cmf.Opaque{Provider: "anthropic", Model: "gpt-5", Data: "sig-anthropic"}},
			cmf.RedactedThinking{Opaque: cmf.Opaque{Provider: "anthropic", Model: "claude-x", Data: "redacted-data"}},
			cmf.Thinking{Text: "Old.", Opaque: &cmf.Opaque{Data: "legacy-signature"}},
			cmf.Thinking{Text: "Plain."},
			cmf.Thinking{Text: "Gemini's.", Opaque: &cmf.Opaque{Provider: "gemini", Model: "gpt-5", ID: "rs_gemini", Data: "gemini-data"}},
			cmf.Text{Text: "Hello.", Opaque: &cmf.Opaque{Provider: "gemini", Model: "gemini-2.5-pro", Data: "c2ln"}},
		}},
		user("again"),
	}
	if _, err := stream(newModel(t, f, "gpt-5"), &agent.Request{History: conv}); err != nil {
		t.Fatal(err)
	}
	accepted(t, f)
	if got, want := types(f.Requests()[0].Items()), []string{"message:user", "message:assistant", "message:user"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	if b := string(f.Requests()[0].Body); strings.Contains(b, "sig-anthropic") || strings.Contains(b, "redacted-data") || strings.Contains(b, "legacy") || strings.Contains(b, "c2ln") || strings.Contains(b, "gemini") {
		t.Fatalf("a foreign value was sent: %s", b)
	}
}

// A value the API cannot verify (altered in storage, moved to another
// item; or OpenAI rotated its keys) is refused by the fake as by the real
// API, and the model asks once more without reasoning items, so that the
// chat goes on.
func TestUnverifiableValueDropped(t *testing.T) {
	for name, alter := range map[string]func(*cmf.Thinking){
		"data":    func(p *cmf.Thinking) { p.Opaque.Data = p.Opaque.Data[:len(p.Opaque.Data)-4] + "AAA=" },
		"id":      func(p *cmf.Thinking) { p.Opaque.ID = "rs_0000000000000000000000000000000f" },
		"summary": func(p *cmf.Thinking) { p.Text += " (edited)" },
	} {
		t.Run(name, func(t *testing.T) {
			f := fake.New(t)
			conv := storedTurn(t, f)
			for i, part := range conv[1].Content {
				if th, ok := part.(cmf.Thinking); ok {
					o := *th.Opaque
					th.Opaque = &o
					alter(&th)
					conv[1].Content[i] = th
				}
			}
			f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("Also sunny.")}})
			chunks, err := stream(newModel(t, f, "gpt-5"), &agent.Request{History: conv})
			if err != nil {
				t.Fatal(err)
			}
			if chunks[0].Delta != "Also" {
				t.Fatalf("chunks = %+v", chunks)
			}
			reqs := f.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			if r := reqs[2]; r.Status != http.StatusBadRequest || r.Error.Code != "invalid_encrypted_content" {
				t.Fatalf("the altered value was not refused: %d %+v", r.Status, r.Error)
			}
			if r := reqs[3]; r.Status != http.StatusOK || len(reasoningItems(r.Items())) != 0 || len(r.Items()) != len(reqs[2].Items())-2 {
				t.Fatalf("second attempt: %d %+v\n%s", r.Status, r.Error, r.Body)
			}
		})
	}
}

// A refusal of encrypted content is asked again only once.
func TestUnverifiableValueAskedOnce(t *testing.T) {
	f := fake.New(t)
	conv := storedTurn(t, f)
	th := conv[1].Content[0].(cmf.Thinking)
	o := *th.Opaque
	o.Data = "gAAAAABbroken"
	th.Opaque = &o
	conv[1].Content[0] = th
	f.Enqueue(fake.Reply{Status: 400, Error: &fake.Error{Message: "The encrypted content could not be verified.", Type: "invalid_request_error", Code: "invalid_encrypted_content"}})
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("never")}})
	_, err := stream(newModel(t, f, "gpt-5"), &agent.Request{History: conv})
	var apiErr *responses.APIError
	// The fake refuses the broken value; the request without it gets the
	// scripted refusal; there is no third attempt.
	if !errors.As(err, &apiErr) || apiErr.Code != "invalid_encrypted_content" || len(f.Requests()) != 4 || f.Pending() != 1 {
		t.Fatalf("err = %v after %d requests", err, len(f.Requests()))
	}
}

// 429 and 503 before the stream begins are retried, after the time the
// response's retry-after-ms says (longer than openai-go's own first
// backoff, at most 500 ms, so the wait shows it was honoured).
func TestRetriesHonourRetryAfter(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.RateLimited("gpt-5", 700*time.Millisecond), fake.Overloaded(time.Millisecond), fake.Reply{Output: []fake.Item{fake.Text("ok")}})
	chunks, err := stream(newModel(t, f, "gpt-5", responses.WithMaxRetries(2)), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if chunks[0].Delta != "ok" {
		t.Fatalf("chunks = %+v", chunks)
	}
	reqs := f.Requests()
	if len(reqs) != 3 || reqs[0].Status != 429 || reqs[1].Status != 503 {
		t.Fatalf("%d requests", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < 700*time.Millisecond {
		t.Fatalf("retried after %v, before retry-after", gap)
	}
}

// Once the retries are spent, the error says the model is busy, without
// the provider's message.
func TestBusyAfterRetries(t *testing.T) {
	for _, reply := range []fake.Reply{fake.RateLimited("gpt-5", time.Millisecond), fake.Overloaded(time.Millisecond)} {
		f := fake.New(t)
		f.Enqueue(reply, reply)
		_, err := stream(newModel(t, f, "gpt-5", responses.WithMaxRetries(1)), userReq("hi"))
		var apiErr *responses.APIError
		if !errors.Is(err, agent.ErrModelBusy) || !errors.As(err, &apiErr) || apiErr.StatusCode != reply.Status {
			t.Fatalf("err = %v", err)
		}
		if n := len(f.Requests()); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
		if strings.Contains(err.Error(), "organization") || strings.Contains(err.Error(), "help center") {
			t.Fatalf("error leaks the provider's message: %s", err)
		}
	}
}

// An overflowing conversation fails with agent.ErrContextOverflow: the
// fake counts the request against the model's window and refuses it in
// the stream, as the real API does for a streamed request.
func TestContextOverflow(t *testing.T) {
	f := fake.New(t, fake.WithContextWindow(100))
	_, err := stream(newModel(t, f, "gpt-5"), userReq(strings.Repeat("long ", 200)))
	if !errors.Is(err, agent.ErrContextOverflow) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "Your input") {
		t.Fatalf("error leaks the provider's message: %s", err)
	}
	if r := f.Requests()[0]; r.Status != http.StatusOK || r.Error == nil || r.Error.Code != "context_length_exceeded" {
		t.Fatalf("fake answered %d %+v", r.Status, r.Error)
	}
	// The same refusal before the stream, as a 400.
	f.Enqueue(fake.Reply{Status: 400, Error: &fake.Error{Message: "Your input exceeds the context window of this model.", Type: "invalid_request_error", Param: "input", Code: "context_length_exceeded"}})
	if _, err := stream(newModel(t, f, "gpt-5"), userReq("short")); !errors.Is(err, agent.ErrContextOverflow) {
		t.Fatalf("err = %v", err)
	}
}

// A response that fails mid-stream ends the run with an error; what came
// before is kept, stored as a step that stopped with an error.
func TestMidStreamFailure(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.FailMidStream(3, fake.Reasoning("Thinking."), fake.Text("Partial answer that never ends")))
	l, err := agent.New(newModel(t, f, "gpt-5"))
	if err != nil {
		t.Fatal(err)
	}
	conv := []cmf.Message{user("hi")}
	events, err := run(t, l, &agent.Input{Messages: conv})
	var apiErr *responses.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 0 || apiErr.Code != "server_error" {
		t.Fatalf("err = %v", err)
	}
	msgs := continued(nil, events)
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	reply := msgs[0]
	if reply.Text() != "Partial answer" {
		t.Fatalf("partial reply = %q", reply.Text())
	}
	if _, ok := reply.Content[0].(cmf.Thinking); !ok {
		t.Fatalf("reply = %#v", reply.Content)
	}
	steps := 0
	for _, ev := range events {
		if s, ok := ev.(*agent.StepFinished); ok {
			steps++
			if s.StopReason != cmf.StopError {
				t.Fatalf("step finished %s", s.StopReason)
			}
		}
	}
	if steps != 1 {
		t.Fatalf("%d steps", steps)
	}
}

// A connection cut with no terminal event is not a complete answer.
func TestStreamCut(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.CutMidStream(2, fake.Text("Hello there friend")))
	chunks, err := stream(newModel(t, f, "gpt-5"), userReq("hi"))
	if !errors.Is(err, responses.ErrIncomplete) {
		t.Fatalf("err = %v", err)
	}
	if len(chunks) != 2 {
		t.Fatalf("chunks before the cut = %+v", chunks)
	}
}

// Images in a user message go as input_image, by URL or as a data URL.
func TestImages(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("A cat.")}})
	req := &agent.Request{Messages: []cmf.Message{{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{
		cmf.Text{Text: "What is this?"},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: "iVBORw0KGgo=", MediaType: "image/png"}},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/cat.jpg"}},
	}}}}
	if _, err := stream(newModel(t, f, "gpt-5"), req); err != nil {
		t.Fatal(err)
	}
	accepted(t, f)
	content := f.Requests()[0].Items()[0]["content"].([]any)
	want := []map[string]any{
		{"type": "input_text", "text": "What is this?"},
		{"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBORw0KGgo="},
		{"type": "input_image", "detail": "auto", "image_url": "https://example.com/cat.jpg"},
	}
	for i, w := range want {
		if !reflect.DeepEqual(content[i], any(w)) {
			t.Fatalf("part %d = %v, want %v", i, content[i], w)
		}
	}
}

// Web search: the tool is declared, the pages the answer cites become
// sources (each once), and the next turn replays only the reasoning item
// that has its following item (the one before the search lost its search
// call, which is not kept).
func TestWebSearchSources(t *testing.T) {
	f := fake.New(t)
	text := "Berlin Art Week opens today. Museum Island turns 200."
	f.Enqueue(
		fake.Reply{Output: []fake.Item{
			fake.Reasoning(), fake.WebSearch("Berlin news today"), fake.Reasoning("Found two pages."),
			fake.Text(text,
				fake.Citation{URL: "https://www.wallpaper.com/art", Title: "Berlin Art Week", Start: 0, End: 28},
				fake.Citation{URL: "https://www.visitberlin.de/en", Title: "visitBerlin", Start: 29, End: 53},
				fake.Citation{URL: "https://www.wallpaper.com/art", Title: "Berlin Art Week", Start: 29, End: 53}),
		}},
		fake.Reply{Output: []fake.Item{fake.Text("More?")}},
	)
	m := newModel(t, f, "gpt-5", responses.WithWebSearch())
	l, err := agent.New(m)
	if err != nil {
		t.Fatal(err)
	}
	conv := []cmf.Message{user("Berlin news?")}
	events, err := run(t, l, &agent.Input{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, ev := range events {
		if s, ok := ev.(*agent.Source); ok {
			urls = append(urls, s.URL+" "+s.Title)
		}
	}
	if want := []string{"https://www.wallpaper.com/art Berlin Art Week", "https://www.visitberlin.de/en visitBerlin"}; !reflect.DeepEqual(urls, want) {
		t.Fatalf("sources %v, want %v", urls, want)
	}
	tools := f.Requests()[0].JSON()["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["type"] != "web_search" {
		t.Fatalf("tools = %v", tools)
	}
	conv = append(continued(conv, events), user("More?"))
	if _, err := run(t, l, &agent.Input{History: conv}); err != nil {
		t.Fatal(err)
	}
	accepted(t, f)
	items := f.Requests()[1].Items()
	if got, want := types(items), []string{"message:user", "reasoning", "message:assistant", "message:user"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("items %v, want %v", got, want)
	}
	if items[1]["id"] != issued(t, f, 0, 2)["id"] {
		t.Fatalf("replayed %v, want the reasoning item after the search", items[1])
	}
}

// How each way of stopping maps to a stop reason.
func TestStopReasons(t *testing.T) {
	for name, tc := range map[string]struct {
		reply fake.Reply
		want  cmf.StopReason
		text  string
	}{
		"completed":      {fake.Reply{Output: []fake.Item{fake.Text("Hi.")}}, cmf.StopEnd, "Hi."},
		"max tokens":     {fake.Reply{Output: []fake.Item{fake.Text("Cut")}, Incomplete: "max_output_tokens"}, cmf.StopMaxTokens, "Cut"},
		"content filter": {fake.Reply{Output: []fake.Item{fake.Text("Filt")}, Incomplete: "content_filter"}, cmf.StopRefusal, "Filt"},
		"refusal":        {fake.Reply{Output: []fake.Item{fake.Refusal("I can't help with that.")}}, cmf.StopRefusal, "I can't help with that."},
		"call":           {fake.Reply{Output: []fake.Item{fake.Call("get_weather", `{}`)}}, cmf.StopCall, ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := fake.New(t)
			f.Enqueue(tc.reply)
			chunks, err := stream(newModel(t, f, "gpt-4.1"), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for _, c := range chunks {
				if c.Kind == agent.ChunkText {
					text.WriteString(c.Delta)
				}
			}
			if fin := chunks[len(chunks)-1]; fin.Kind != agent.ChunkFinish || fin.StopReason != tc.want || text.String() != tc.text {
				t.Fatalf("finish %+v, text %q", fin, text.String())
			}
		})
	}
}

// Settings: a reasoning model gets no sampling settings (it refuses them)
// unless its effort is "none"; other models get them; the Responses API
// has no seed.
func TestSettings(t *testing.T) {
	temp, topP, maxOut, seed := 0.3, 0.9, int64(256), int64(7)
	settings := &agent.ModelSettings{Temperature: &temp, TopP: &topP, MaxOutputTokens: &maxOut, Seed: &seed}
	for name, tc := range map[string]struct {
		model    string
		opts     []responses.Option
		sampling bool
		effort   any
		summary  any
	}{
		"reasoning":          {"gpt-5", nil, false, nil, "auto"},
		"chat":               {"gpt-4.1", nil, true, nil, nil},
		"effort and summary": {"o3", []responses.Option{responses.WithReasoning(responses.Reasoning{Effort: "high", Summary: "detailed"})}, false, "high", "detailed"},
		"effort none":        {"gpt-5.1", []responses.Option{responses.WithReasoning(responses.Reasoning{Effort: "none"})}, true, "none", nil},
	} {
		t.Run(name, func(t *testing.T) {
			f := fake.New(t)
			f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
			req := userReq("hi")
			req.Settings = settings
			if _, err := stream(newModel(t, f, tc.model, tc.opts...), req); err != nil {
				t.Fatal(err)
			}
			accepted(t, f)
			body := f.Requests()[0].JSON()
			_, hasTemp := body["temperature"]
			_, hasTopP := body["top_p"]
			if hasTemp != tc.sampling || hasTopP != tc.sampling || body["max_output_tokens"] != 256.0 || body["seed"] != nil {
				t.Fatalf("request = %v", body)
			}
			r, _ := body["reasoning"].(map[string]any)
			if r["effort"] != tc.effort || r["summary"] != tc.summary {
				t.Fatalf("reasoning = %v", r)
			}
		})
	}
}

// Tools are declared as non-strict functions, which the API would
// otherwise make strict where their schemas allow.
func TestToolsAreNotStrict(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
	req := userReq("hi")
	for _, tool := range demo.Tools() {
		req.Tools = append(req.Tools, agent.ToolSpec{Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema})
	}
	if _, err := stream(newModel(t, f, "gpt-5"), req); err != nil {
		t.Fatal(err)
	}
	accepted(t, f)
	tools := f.Requests()[0].JSON()["tools"].([]any)
	if len(tools) != len(demo.Tools()) {
		t.Fatalf("tools = %v", tools)
	}
	for _, tool := range tools {
		if tool.(map[string]any)["strict"] != false {
			t.Fatalf("tool = %v", tool)
		}
	}
}

// Errors keep the status and code, never the provider's message.
func TestAuthenticationError(t *testing.T) {
	f := fake.New(t, fake.WithAPIKey("sk-the-right-key"))
	_, err := stream(newModel(t, f, "gpt-5"), userReq("hi"))
	var apiErr *responses.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Fatalf("err = %v", err)
	}
	if errors.Is(err, agent.ErrModelBusy) || strings.Contains(err.Error(), "sk-") || strings.Contains(err.Error(), "1234") {
		t.Fatalf("err = %v", err)
	}
}

func TestNew(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	if _, err := responses.New("gpt-5"); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("no key: err = %v", err)
	}
	if _, err := responses.New(""); err == nil {
		t.Fatal("empty model name accepted")
	}
	if _, err := responses.New("gpt-5", responses.WithAPIKey("k"), responses.WithBaseURL("localhost:8080")); err == nil {
		t.Fatal("a base URL without a scheme accepted")
	}
	f := fake.New(t)
	f.Enqueue(fake.Reply{Output: []fake.Item{fake.Text("ok")}})
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", f.URL)
	m, err := responses.New("gpt-5", responses.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream(m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if h := f.Requests()[0].Header.Get("Authorization"); h != "Bearer sk-from-env" {
		t.Fatalf("auth = %q", h)
	}
}

// OpenAI caches prompt prefixes by itself; the second turn of a chat
// starts with the first turn's request, byte for byte (replayed items
// included), so it reads that prefix from the cache, and the usage says
// so.
func TestPromptCacheUsage(t *testing.T) {
	f := fake.New(t)
	f.Enqueue(
		fake.Reply{Output: []fake.Item{fake.Reasoning("Plan."), fake.Text("First answer.")}},
		fake.Reply{Output: []fake.Item{fake.Reasoning("Recall."), fake.Text("Second answer.")}},
	)
	l, err := agent.New(newModel(t, f, "gpt-5"))
	if err != nil {
		t.Fatal(err)
	}
	instructions := strings.Repeat("Answer in the house style. ", 300) // about 2,000 tokens
	conv := []cmf.Message{user("First question?")}
	events, err := run(t, l, &agent.Input{Instructions: instructions, Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	first := events[len(events)-1].(*agent.RunFinished).Usage
	conv = append(continued(conv, events), user("Second question?"))
	events, err = run(t, l, &agent.Input{Instructions: instructions, History: conv})
	if err != nil {
		t.Fatal(err)
	}
	second := events[len(events)-1].(*agent.RunFinished).Usage
	accepted(t, f)
	if first.CachedInputTokens != 0 || second.CachedInputTokens < 1024 || second.CachedInputTokens > second.InputTokens {
		t.Fatalf("first %+v, second %+v", first, second)
	}
	t.Logf("second turn: %d input tokens, %d of them read from the cache", second.InputTokens, second.CachedInputTokens)
}

// Failures inside the stream, in each shape the API sends them: the error
// event as OpenAI sends it (the error nested) and as its reference shows
// it (flat), and response.failed alone (OpenAI's recorded
// openai-response-failed-only stream). The code decides what the user is
// told; the message is never kept.
func TestStreamedFailures(t *testing.T) {
	created := `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-5","status":"in_progress","output":[]}}`
	for name, tc := range map[string]struct {
		event string
		code  string
		is    error
	}{
		"nested error event": {`{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}}`, "context_length_exceeded", agent.ErrContextOverflow},
		"flat error event":   {`{"type":"error","sequence_number":2,"code":"rate_limit_exceeded","message":"Slow down.","param":null}`, "rate_limit_exceeded", agent.ErrModelBusy},
		"response.failed":    {`{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","status":"failed","error":{"code":"rate_limit_exceeded","message":"Request too large for gpt-4o-mini in organization on tokens per min (TPM)."},"output":[]}}`, "rate_limit_exceeded", agent.ErrModelBusy},
		"server error":       {`{"type":"error","error":{"type":"server_error","code":null,"message":"Sorry, something went wrong.","param":null},"sequence_number":2}`, "", nil},
	} {
		t.Run(name, func(t *testing.T) {
			m := memoryModel(t, "gpt-5", []byte("event: response.created\ndata: "+created+"\n\nevent: x\ndata: "+tc.event+"\n\n"))
			_, err := stream(m, userReq("hi"))
			var apiErr *responses.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 0 || apiErr.Code != tc.code {
				t.Fatalf("err = %#v", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) || tc.is == nil && (errors.Is(err, agent.ErrModelBusy) || errors.Is(err, agent.ErrContextOverflow)) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			for _, leak := range []string{"Your input", "Slow down", "organization", "Sorry"} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("error leaks the provider's message: %s", err)
				}
			}
		})
	}
}

// A reasoning item whose summary did not stream (a gateway that sends
// only whole items) keeps its summary: the thinking part carries it, and
// the next request sends it back as it came.
func TestSummaryOnlyInTheItem(t *testing.T) {
	created := `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-5","status":"in_progress","output":[]}}`
	done := `{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA","summary":[{"type":"summary_text","text":"One."},{"type":"summary_text","text":"Two."}]}}`
	completed := `{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","model":"gpt-5","status":"completed","output":[]}}`
	var body string
	for _, e := range []string{created, done, completed} {
		body += "event: x\ndata: " + e + "\n\n"
	}
	chunks, err := stream(memoryModel(t, "gpt-5", []byte(body)), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if c := chunks[0]; c.Kind != agent.ChunkThinking || c.Delta != "One.\n\nTwo." || c.Opaque == nil || c.Opaque.ID != "rs_1" {
		t.Fatalf("chunks = %+v", chunks)
	}
}
