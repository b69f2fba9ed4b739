package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
)

// Text and adaptive thinking stream as they come; the thinking part ends
// with its signature, tagged with this provider and model; usage counts
// every input token billed.
func TestStreamsThinkingTextAndUsage(t *testing.T) {
	srv := fake.New(t, fake.WithAPIKey(testKey))
	srv.Reply(fake.Reply{Model: "claude-test-20261101", Content: []fake.Block{
		fake.Thinking("The user greets me. I should greet back."),
		fake.Text("Hello, world! Nice to meet you."),
	}})
	m := newModel(t, srv, "claude-test", anthropic.WithThinking(anthropic.ThinkingAdaptive), anthropic.WithEffort("medium"))
	chunks, err := collect(m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(chunks, agent.ChunkThinking); got != "The user greets me. I should greet back." {
		t.Fatalf("thinking %q", got)
	}
	if len(chunksOf(chunks, agent.ChunkText)) < 2 || joined(chunks, agent.ChunkText) != "Hello, world! Nice to meet you." {
		t.Fatalf("text did not stream in deltas: %+v", chunksOf(chunks, agent.ChunkText))
	}
	var sig *cmf.Opaque
	for _, c := range chunksOf(chunks, agent.ChunkThinking) {
		if c.Opaque != nil {
			sig = c.Opaque
		}
	}
	if sig == nil || !sig.From("anthropic", "claude-test") || sig.Data == "" {
		t.Fatalf("signature = %+v", sig)
	}
	fin := chunks[len(chunks)-1]
	u := srv.Requests()[0].Usage
	want := agent.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens), ReasoningTokens: int64(u.ThinkingTokens),
		TotalTokens: int64(u.InputTokens + u.OutputTokens)}
	if fin.Kind != agent.ChunkFinish || fin.StopReason != cmf.StopEnd || fin.Usage != want || fin.Usage.ReasoningTokens == 0 ||
		fin.Model != "claude-test-20261101" || fin.Provider != "anthropic" {
		t.Fatalf("finish = %+v, want usage %+v", fin, want)
	}
	req := srv.Requests()[0]
	b := body(t, req)
	if b["model"] != "claude-test" || b["stream"] != true || b["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
		t.Fatalf("request = %s", req.Body)
	}
	if th := b["thinking"].(map[string]any); th["type"] != "adaptive" {
		t.Fatalf("thinking = %v", th)
	}
	if oc := b["output_config"].(map[string]any); oc["effort"] != "medium" {
		t.Fatalf("output_config = %v", oc)
	}
	if req.Header.Get("Authorization") != "Bearer "+testKey || req.Header.Get("Anthropic-Version") == "" {
		t.Fatalf("headers = %v", req.Header)
	}
	if req.Header.Get("Anthropic-Beta") != "" {
		t.Fatalf("adaptive thinking sent a beta header: %v", req.Header)
	}
}

// Through the loop: the model thinks, calls a tool, thinks again and
// answers. The second call sends the first step's thinking back
// byte-exact, before its tool_use; a second turn sends both steps back. The
// fake checks every signature against everything before it.
func TestLoopReplaysThinkingBeforeToolUse(t *testing.T) {
	srv := fake.New(t, fake.WithPrefixCheck())
	srv.Reply(
		fake.Reply{Content: []fake.Block{
			fake.Thinking("The user wants the weather in Oslo. I'll call get_weather."),
			fake.Text("Let me check."),
			fake.ToolUse("toolu_01", "get_weather", `{"city": "Oslo"}`),
		}},
		fake.Reply{Content: []fake.Block{fake.Thinking("It is sunny. Say so."), fake.Text("Sunny in Oslo, 21°C.")}},
		fake.Reply{Content: []fake.Block{fake.Thinking("Rome next."), fake.ToolUse("toolu_02", "get_weather", `{"city":"Rome"}`), fake.ToolUse("toolu_03", "get_weather", `{"city":"Paris"}`)}},
		fake.Reply{Content: []fake.Block{fake.Text("Sunny in both.")}},
	)
	m := newModel(t, srv, "claude-test", anthropic.WithThinking(anthropic.ThinkingAdaptive))
	first := runLoop(t, m, &agent.Input{Instructions: "Be brief.", Messages: []cmf.Message{user("Weather in Oslo?")}})
	if first.err != nil || first.finished.StopReason != cmf.StopEnd || first.text() != "Let me check.Sunny in Oslo, 21°C." {
		t.Fatalf("first turn: err %v finished %+v text %q", first.err, first.finished, first.text())
	}
	reqs := srv.Requests()
	answered := contentOf(t, reqs[0], 0) // nothing to check but that it is the user's
	if types(answered)[0] != "text" {
		t.Fatalf("first request = %s", reqs[0].Body)
	}
	// What the first call streamed comes back in the second, as it came.
	step1 := contentOf(t, reqs[1], 1)
	if !reflect.DeepEqual(types(step1), []string{"thinking", "text", "tool_use"}) {
		t.Fatalf("replayed step = %v", types(step1))
	}
	stored := first.messages[0].Content // the recorder keeps what the run added
	th := stored[0].(cmf.Thinking)
	if step1[0]["thinking"] != th.Text || step1[0]["signature"] != th.Opaque.Data || th.Opaque.Model != "claude-test" {
		t.Fatalf("thinking sent %v, stored %+v", step1[0], th)
	}
	if step1[2]["id"] != "toolu_01" || !reflect.DeepEqual(step1[2]["input"], map[string]any{"city": "Oslo"}) {
		t.Fatalf("tool_use = %v", step1[2])
	}
	if res := contentOf(t, reqs[1], 2); res[0]["type"] != "tool_result" || res[0]["tool_use_id"] != "toolu_01" {
		t.Fatalf("tool result = %v", res)
	}

	// A second turn, with the first as history: two parallel calls.
	second := runLoop(t, m, &agent.Input{Instructions: "Be brief.", History: first.history, Messages: []cmf.Message{user("And Rome and Paris?")}})
	if second.err != nil || second.text() != "Sunny in both." {
		t.Fatalf("second turn: err %v text %q", second.err, second.text())
	}
	reqs = srv.Requests()
	for i, r := range reqs {
		if r.Status != http.StatusOK {
			t.Fatalf("request %d refused: %d %s", i, r.Status, r.Error)
		}
	}
	last := reqs[len(reqs)-1]
	var sigs []string
	for _, msg := range body(t, last)["messages"].([]any) {
		for _, blk := range msg.(map[string]any)["content"].([]any) {
			if b := blk.(map[string]any); b["type"] == "thinking" {
				sigs = append(sigs, b["signature"].(string))
			}
		}
	}
	if len(sigs) != 3 {
		t.Fatalf("the last request carries %d signed thinking blocks, want 3 (every step's, in order)", len(sigs))
	}
	if res := contentOf(t, last, -1); len(res) != 2 || res[0]["tool_use_id"] != "toolu_02" || res[1]["tool_use_id"] != "toolu_03" {
		t.Fatalf("parallel results = %v", res)
	}
}

// A value the fake did not issue for this model and this place is refused
// as the API refuses it, and the error keeps the API's words out.
func TestFakeRefusesForeignSignature(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Thinking("secret plan"), fake.ToolUse("toolu_x", "get_weather", `{"city":"Oslo"}`)}})
	a := newModel(t, srv, "claude-a", anthropic.WithThinking(anthropic.ThinkingAdaptive))
	first := runLoop(t, a, &agent.Input{Messages: []cmf.Message{user("weather?")}})
	if first.err == nil {
		t.Fatal("no reply was scripted for the second step, yet the run passed")
	}
	// Mislabel the stored value as model B's: B would send it, and the
	// API (here the fake) refuses it.
	msgs := slices.Clone(first.messages)
	for i, m := range msgs {
		for j, p := range m.Content {
			if th, ok := p.(cmf.Thinking); ok {
				o := *th.Opaque
				o.Model = "claude-b"
				c := slices.Clone(m.Content)
				c[j] = cmf.Thinking{Text: th.Text, Opaque: &o}
				msgs[i].Content = c
			}
		}
	}
	b := newModel(t, srv, "claude-b", anthropic.WithThinking(anthropic.ThinkingAdaptive))
	_, err := collect(b, &agent.Request{Messages: msgs})
	var apiErr *anthropic.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type != "invalid_request_error" {
		t.Fatalf("err = %v", err)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if !strings.Contains(last.Error, "Invalid `signature` in `thinking` block") {
		t.Fatalf("the fake said %q", last.Error)
	}
	if strings.Contains(err.Error(), "signature") {
		t.Fatalf("the API's message leaked into the error: %v", err)
	}
}

// A tool call that needs approval pauses the run; the user approves and
// the chat goes on with another model. That model never gets the first
// one's thinking. With manual thinking the API would refuse a tool result
// whose call has no thinking before it, so that call goes without
// thinking; with adaptive thinking it needs no such block.
func TestModelSwitchDuringApproval(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []anthropic.Option
		wantThink string
	}{
		{"manual", []anthropic.Option{anthropic.WithThinkingBudget(2048)}, "disabled"},
		{"adaptive", []anthropic.Option{anthropic.WithThinking(anthropic.ThinkingAdaptive)}, "adaptive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.New(t)
			srv.Reply(
				fake.Reply{Content: []fake.Block{fake.Thinking("Deleting needs approval."), fake.RedactedThinking("hidden"),
					fake.ToolUse("toolu_del", "delete_file", `{"path":"/tmp/x"}`)}},
				fake.Reply{Content: []fake.Block{fake.Thinking("Done; confirm."), fake.Text("Deleted /tmp/x.")}},
				fake.Reply{Content: []fake.Block{fake.Thinking("Follow-up."), fake.Text("Anything else?")}},
			)
			a := newModel(t, srv, "claude-a", tc.opts...)
			b := newModel(t, srv, "claude-b", tc.opts...)
			first := runLoop(t, a, &agent.Input{Messages: []cmf.Message{user("delete /tmp/x")}})
			if first.err != nil || first.finished.StopReason != cmf.StopPaused || len(first.finished.Pending) != 1 {
				t.Fatalf("first: %v %+v", first.err, first.finished)
			}
			if req := srv.Requests()[0]; tc.name == "manual" && req.Header.Get("Anthropic-Beta") != "interleaved-thinking-2025-05-14" {
				t.Fatalf("manual thinking without the interleaved-thinking beta: %v", req.Header)
			}
			pending := first.finished.Pending[0]
			resumed := runLoop(t, b, &agent.Input{History: first.history,
				Resume: []agent.Resolution{{ToolCallID: pending.ToolCallID, Kind: agent.Approve}}})
			if resumed.err != nil || resumed.text() != "Deleted /tmp/x." {
				t.Fatalf("resumed: %v %q", resumed.err, resumed.text())
			}
			reqs := srv.Requests()
			cont := reqs[1]
			if cont.Status != 200 {
				t.Fatalf("the continuation was refused: %s", cont.Error)
			}
			if blocks := contentOf(t, cont, 1); !reflect.DeepEqual(types(blocks), []string{"tool_use"}) {
				t.Fatalf("model B got model A's blocks: %v", types(blocks))
			}
			if th := body(t, cont)["thinking"].(map[string]any); th["type"] != tc.wantThink {
				t.Fatalf("continuation thinking = %v, want %s", th, tc.wantThink)
			}
			if strings.Contains(string(cont.Body), "signature") || strings.Contains(string(cont.Body), "redacted_thinking") {
				t.Fatalf("model A's values reached model B: %s", cont.Body)
			}
			// The next turn starts afresh: thinking as configured, and B's
			// own thinking (if any) kept.
			next := runLoop(t, b, &agent.Input{History: resumed.history, Messages: []cmf.Message{user("thanks")}})
			if next.err != nil || next.text() != "Anything else?" {
				t.Fatalf("next turn: %v %q", next.err, next.text())
			}
			want := map[string]string{"manual": "enabled", "adaptive": "adaptive"}[tc.name]
			if th := body(t, srv.Requests()[2])["thinking"].(map[string]any); th["type"] != want {
				t.Fatalf("next turn thinking = %v", th)
			}
		})
	}
}

// Without the model switch, manual thinking sends the first model's
// thinking and redacted thinking back with the approved call, in order.
func TestApprovalKeepsThinkingForTheSameModel(t *testing.T) {
	srv := fake.New(t, fake.WithPrefixCheck())
	srv.Reply(
		fake.Reply{Content: []fake.Block{fake.Thinking("Deleting needs approval."), fake.RedactedThinking("hidden"),
			fake.ToolUse("toolu_del", "delete_file", `{"path":"/tmp/x"}`)}},
		fake.Reply{Content: []fake.Block{fake.Thinking("Done."), fake.Text("Deleted.")}},
	)
	a := newModel(t, srv, "claude-a", anthropic.WithThinkingBudget(2048))
	first := runLoop(t, a, &agent.Input{Messages: []cmf.Message{user("delete /tmp/x")}})
	pending := first.finished.Pending[0]
	resumed := runLoop(t, a, &agent.Input{History: first.history,
		Resume: []agent.Resolution{{ToolCallID: pending.ToolCallID, Kind: agent.Approve}}})
	if resumed.err != nil || resumed.text() != "Deleted." {
		t.Fatalf("resumed: %v %q %+v", resumed.err, resumed.text(), srv.Requests())
	}
	cont := srv.Requests()[1]
	if got := types(contentOf(t, cont, 1)); !reflect.DeepEqual(got, []string{"thinking", "redacted_thinking", "tool_use"}) {
		t.Fatalf("replayed = %v", got)
	}
	if th := body(t, cont)["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != 2048.0 {
		t.Fatalf("thinking = %v", th)
	}
}

func TestImages(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("A cat and a dog.")}})
	m := newModel(t, srv, "claude-test")
	req := &agent.Request{Messages: []cmf.Message{{Role: cmf.RoleUser, Content: []cmf.Part{
		cmf.Text{Text: "What is in these?"},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceBase64, Data: "iVBORw0KGgo=", MediaType: "image/png"}},
		cmf.Image{MediaSource: cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/dog.jpg"}},
	}}}}
	if _, err := collect(m, req); err != nil {
		t.Fatal(err)
	}
	blocks := contentOf(t, srv.Requests()[0], 0)
	want := []map[string]any{
		{"type": "text", "text": "What is in these?"},
		{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
		{"type": "image", "source": map[string]any{"type": "url", "url": "https://example.com/dog.jpg"}},
	}
	if !reflect.DeepEqual(blocks, want) {
		t.Fatalf("blocks = %v", blocks)
	}
}

// A web search runs at the provider: its call and results stay with the
// reply (never shown), its results and the reply's citations are sources,
// and on the next turn the same model gets the search blocks and the
// cited text blocks back as they came.
func TestWebSearchSourcesAndReplay(t *testing.T) {
	srv := fake.New(t, fake.WithPrefixCheck())
	results := []fake.SearchResult{{URL: "https://example.com/a", Title: "A"}, {URL: "https://example.com/b", Title: "B"}}
	content := append([]fake.Block{fake.Thinking("I should search.")}, fake.WebSearch("srvtoolu_01", "oslo weather", results...)...)
	content = append(content,
		fake.Thinking("Both agree."),
		fake.Text("Oslo is "),
		fake.Text("sunny", fake.Citation{URL: "https://example.com/a", Title: "A", CitedText: "sunny today"}),
		fake.Text(" today."),
	)
	srv.Reply(fake.Reply{Content: content}, fake.Reply{Content: []fake.Block{fake.Text("You're welcome.")}})
	m := newModel(t, srv, "claude-test", anthropic.WithThinking(anthropic.ThinkingAdaptive), anthropic.WithWebSearch(3))
	first := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("Weather in Oslo?")}})
	if first.err != nil || first.text() != "Oslo is sunny today." {
		t.Fatalf("first: %v %q", first.err, first.text())
	}
	srcs := eventsOf[*agent.Source](first.events)
	if len(srcs) != 2 || srcs[0].URL != "https://example.com/a" || srcs[0].Title != "A" || srcs[1].URL != "https://example.com/b" {
		t.Fatalf("sources = %+v", srcs)
	}
	tool := body(t, srv.Requests()[0])["tools"].([]any)
	if ws := tool[len(tool)-1].(map[string]any); ws["type"] != "web_search_20250305" || ws["max_uses"] != 3.0 {
		t.Fatalf("tools = %v", tool)
	}
	second := runLoop(t, m, &agent.Input{History: first.history, Messages: []cmf.Message{user("thanks")}})
	if second.err != nil {
		t.Fatalf("second: %v (%s)", second.err, srv.Requests()[1].Error)
	}
	replayed := contentOf(t, srv.Requests()[1], 1)
	if got := types(replayed); !reflect.DeepEqual(got, []string{"thinking", "server_tool_use", "web_search_tool_result", "thinking", "text", "text", "text"}) {
		t.Fatalf("replayed = %v", got)
	}
	if cites := replayed[5]["citations"].([]any); len(cites) != 1 || cites[0].(map[string]any)["url"] != "https://example.com/a" {
		t.Fatalf("citations = %v", replayed[5])
	}
	// Another model gets the text only.
	other := newModel(t, srv, "claude-other")
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("Hi.")}})
	if _, err := collect(other, &agent.Request{History: first.history, Messages: []cmf.Message{user("hi")}}); err != nil {
		t.Fatal(err)
	}
	if got := contentOf(t, srv.Requests()[2], 1); !reflect.DeepEqual(got, []map[string]any{{"type": "text", "text": "Oslo is sunny today.", "cache_control": map[string]any{"type": "ephemeral"}}}) {
		t.Fatalf("another model got %v", got)
	}
}

// pause_turn: the loop calls again with the paused turn as the last
// message; the request ends with that assistant turn, its server tool
// call included.
func TestPauseTurnContinues(t *testing.T) {
	srv := fake.New(t)
	search := fake.WebSearch("srvtoolu_p", "long query")
	srv.Reply(
		fake.Reply{Content: []fake.Block{fake.Text("Searching…"), search[0]}, StopReason: "pause_turn"},
		fake.Reply{Content: []fake.Block{search[1], fake.Text("Found nothing.")}},
	)
	m := newModel(t, srv, "claude-test", anthropic.WithWebSearch(5))
	tr := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("search")}})
	if tr.err != nil || tr.finished.StopReason != cmf.StopEnd {
		t.Fatalf("err %v finished %+v", tr.err, tr.finished)
	}
	cont := srv.Requests()[1]
	if got := types(contentOf(t, cont, -1)); !reflect.DeepEqual(got, []string{"text", "server_tool_use"}) || cont.Status != 200 {
		t.Fatalf("continuation ends with %v (%d %s)", got, cont.Status, cont.Error)
	}
}

func TestStopReasons(t *testing.T) {
	for api, want := range map[string]cmf.StopReason{
		"end_turn": cmf.StopEnd, "max_tokens": cmf.StopMaxTokens, "stop_sequence": cmf.StopSequence,
		"tool_use": cmf.StopCall, "pause_turn": cmf.StopPauseTurn, "refusal": cmf.StopRefusal,
		"model_context_window_exceeded": cmf.StopMaxTokens, "something_new": cmf.StopEnd,
	} {
		srv := fake.New(t)
		srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("x")}, StopReason: api})
		chunks, err := collect(newModel(t, srv, "claude-test"), userReq("hi"))
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		if fin := chunks[len(chunks)-1]; fin.Kind != agent.ChunkFinish || fin.StopReason != want {
			t.Errorf("%s: finish %+v, want %s", api, fin, want)
		}
	}
}

// A failure in the middle of the stream ends the run with an error the
// user can act on; what streamed before it is kept as a partial reply.
func TestMidStreamFailure(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("The first half"), fake.Text(" never comes.")}, FailAfter: 1})
	tr := runLoop(t, newModel(t, srv, "claude-test"), &agent.Input{Messages: []cmf.Message{user("hi")}})
	var apiErr *anthropic.APIError
	if !errors.As(tr.err, &apiErr) || !apiErr.Streaming || !errors.Is(tr.err, agent.ErrModelBusy) {
		t.Fatalf("err = %v", tr.err)
	}
	if tr.text() != "The first half" {
		t.Fatalf("partial reply = %q", tr.text())
	}
	steps := eventsOf[*agent.StepFinished](tr.events)
	if len(steps) != 1 || steps[0].StopReason != cmf.StopError {
		t.Fatalf("steps = %+v", steps)
	}
}

// A connection cut before message_stop is not a complete answer.
func TestStreamCut(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("Hel")}, Cut: true})
	chunks, err := collect(newModel(t, srv, "claude-test"), userReq("hi"))
	if !errors.Is(err, anthropic.ErrIncomplete) || joined(chunks, agent.ChunkText) != "Hel" {
		t.Fatalf("err %v chunks %+v", err, chunks)
	}
}

func TestContextOverflow(t *testing.T) {
	srv := fake.New(t, fake.WithContextWindow(50))
	m := newModel(t, srv, "claude-test")
	_, err := collect(m, userReq(strings.Repeat("a long message ", 40)))
	if !errors.Is(err, agent.ErrContextOverflow) {
		t.Fatalf("err = %v", err)
	}
	if r := srv.Requests()[0]; !strings.HasPrefix(r.Error, "prompt is too long: ") || strings.Contains(err.Error(), "tokens >") {
		t.Fatalf("fake said %q, error %v", r.Error, err)
	}
}

func TestHTTPErrorsKeepTheMessageOut(t *testing.T) {
	for _, tc := range []struct {
		status int
		typ    string
		means  error
	}{
		{401, "authentication_error", agent.ErrModelAccessDenied},
		{403, "permission_error", agent.ErrModelAccessDenied},
		{429, "rate_limit_error", agent.ErrModelBusy},
		{529, "overloaded_error", agent.ErrModelBusy},
		{500, "api_error", agent.ErrModelBusy},
		{404, "not_found_error", agent.ErrModelRejected},
		{400, "invalid_request_error", agent.ErrModelRejected},
	} {
		srv := fake.New(t)
		srv.Reply(fake.Reply{Status: tc.status, ErrorMessage: "key sk-ant-test-secret-1234 is wrong"})
		_, err := collect(newModel(t, srv, "claude-test"), userReq("hi"))
		var apiErr *anthropic.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Type != tc.typ || !errors.Is(err, tc.means) {
			t.Fatalf("%d: err = %#v, want it to mean %v", tc.status, err, tc.means)
		}
		if strings.Contains(err.Error(), "sk-ant") || strings.Contains(err.Error(), "wrong") {
			t.Fatalf("%d: the API's message leaked: %v", tc.status, err)
		}
	}
}

func TestNew(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	if _, err := anthropic.New("claude-test"); err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("no key: err = %v", err)
	}
	if _, err := anthropic.New(""); err == nil {
		t.Fatal("empty model accepted")
	}
	for _, opts := range [][]anthropic.Option{
		{anthropic.WithThinkingBudget(100)},
		{anthropic.WithThinkingDisplay("loud"), anthropic.WithThinking(anthropic.ThinkingAdaptive)},
		{anthropic.WithThinkingDisplay("omitted")},
		{anthropic.WithEffort("extreme")},
		{anthropic.WithMaxTokens(0)},
		{anthropic.WithMaxRetries(-1)},
	} {
		if _, err := anthropic.New("claude-test", append(opts, anthropic.WithAPIKey("k"))...); err == nil {
			t.Errorf("accepted %d options that the API would refuse", len(opts))
		}
	}
	// The key and the base URL come from the environment.
	srv := fake.New(t, fake.WithAPIKey("env-key"))
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("ok")}})
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	m, err := anthropic.New("claude-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
}

// Run settings: the output limit applies; sampling parameters, which API
// version 2026-10-21 refuses, are not sent.
func TestSettings(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("ok")}})
	temp, maxOut := 0.2, int64(256)
	req := userReq("hi")
	req.Settings = &agent.ModelSettings{Temperature: &temp, TopP: &temp, MaxOutputTokens: &maxOut}
	if _, err := collect(newModel(t, srv, "claude-test"), req); err != nil {
		t.Fatal(err)
	}
	b := body(t, srv.Requests()[0])
	if b["max_tokens"] != 256.0 || b["temperature"] != nil || b["top_p"] != nil || b["thinking"] != nil {
		t.Fatalf("request = %v", b)
	}
}

// The conversation is sent as the API wants it: instructions as system,
// the application's context as the first user text, tool results in the
// user turn after their call, and a foreign thinking part left out.
func TestRequestShape(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("ok")}})
	foreign := &cmf.Opaque{Provider: "gemini", Model: "gemini-x", Data: "c2ln"}
	req := &agent.Request{
		System: []cmf.Message{
			{Role: cmf.RoleSystem, Content: []cmf.Part{cmf.Text{Text: "Be brief."}}},
			{Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "Context: dark mode"}}},
		},
		History: []cmf.Message{
			user("weather?"),
			{Role: cmf.RoleAssistant, Content: []cmf.Part{
				cmf.Thinking{Text: "from gemini", Opaque: foreign},
				cmf.Text{Text: "Checking.", Opaque: foreign},
				cmf.ToolCall{ToolCallID: "call:1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`), Opaque: foreign},
				cmf.ResourceRef{URI: "https://example.com", ResourceType: cmf.ResourceURI},
			}},
			{Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: "call:1", ToolName: "get_weather", Content: json.RawMessage(`{"forecast":"sunny"}`)}}},
			{Role: cmf.RoleAssistant, Content: []cmf.Part{cmf.Text{Text: "Sunny."}}},
		},
		Messages: []cmf.Message{user("thanks")},
		Tools:    []agent.ToolSpec{{Name: "get_weather", Description: "Weather.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}
	if _, err := collect(newModel(t, srv, "claude-test"), req); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	got := body(t, r)
	wantMsgs := `[{"content":[{"text":"Context: dark mode","type":"text"},{"text":"weather?","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Checking.","type":"text"},{"id":"call_1","input":{"city":"Oslo"},"name":"get_weather","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":[{"text":"{\"forecast\":\"sunny\"}","type":"text"}],"tool_use_id":"call_1","type":"tool_result"}],"role":"user"},` +
		`{"content":[{"cache_control":{"type":"ephemeral"},"text":"Sunny.","type":"text"}],"role":"assistant"},` +
		`{"content":[{"text":"thanks","type":"text"}],"role":"user"}]`
	if msgs, _ := json.Marshal(got["messages"]); string(msgs) != wantMsgs {
		t.Fatalf("messages =\n%s\nwant\n%s", msgs, wantMsgs)
	}
	if sys, _ := json.Marshal(got["system"]); string(sys) != `[{"cache_control":{"type":"ephemeral"},"text":"Be brief.","type":"text"}]` {
		t.Fatalf("system = %s", sys)
	}
	if bp := r.Breakpoints(); !reflect.DeepEqual(bp, []string{"system.0", "messages.3.content.0"}) {
		t.Fatalf("breakpoints = %v", bp)
	}
}

// The prompt cache: breakpoints on the instructions and on the last stored
// message let each turn read what the one before wrote. The input tokens
// a turn bills are reported with and without the cache, weighted as the
// API prices them (writes 1.25×, reads 0.1×).
func TestPromptCaching(t *testing.T) {
	srv := fake.New(t)
	m := newModel(t, srv, "claude-test")
	instructions := strings.Repeat("You are a careful assistant who answers about the weather. ", 100)
	var history []cmf.Message
	var usages []agent.Usage
	for i, q := range []string{"Weather in Oslo?", "And Rome?", "And Paris?"} {
		srv.Reply(fake.Reply{Content: []fake.Block{fake.Text(strings.Repeat(fmt.Sprintf("Turn %d: sunny and mild. ", i+1), 40))}})
		tr := runLoop(t, m, &agent.Input{Instructions: instructions, History: history, Messages: []cmf.Message{user(q)}})
		if tr.err != nil {
			t.Fatal(tr.err)
		}
		usages = append(usages, tr.finished.Usage)
		history = tr.history
	}
	reqs := srv.Requests()
	if bp := reqs[0].Breakpoints(); !reflect.DeepEqual(bp, []string{"system.0"}) {
		t.Fatalf("turn 1 breakpoints = %v", bp)
	}
	if bp := reqs[1].Breakpoints(); !reflect.DeepEqual(bp, []string{"system.0", "messages.1.content.0"}) {
		t.Fatalf("turn 2 breakpoints = %v", bp)
	}
	if usages[0].CacheWriteTokens == 0 || usages[0].CachedInputTokens != 0 {
		t.Fatalf("turn 1 usage = %+v", usages[0])
	}
	for i := 1; i < 3; i++ {
		u := usages[i]
		if u.CachedInputTokens == 0 || u.CacheWriteTokens == 0 || u.InputTokens != int64(reqs[i].Usage.InputTokens+reqs[i].Usage.CacheCreationInputTokens+reqs[i].Usage.CacheReadInputTokens) {
			t.Fatalf("turn %d usage = %+v (fake billed %+v)", i+1, u, reqs[i].Usage)
		}
		uncached := u.InputTokens - u.CachedInputTokens - u.CacheWriteTokens
		weighted := float64(uncached) + 1.25*float64(u.CacheWriteTokens) + 0.1*float64(u.CachedInputTokens)
		t.Logf("turn %d: %d input tokens; with caching %d uncached + %d written + %d read = %.0f token-equivalents billed; without caching %d",
			i+1, u.InputTokens, uncached, u.CacheWriteTokens, u.CachedInputTokens, weighted, u.InputTokens)
		if weighted >= float64(u.InputTokens) {
			t.Fatalf("turn %d: caching did not pay: %.0f >= %d", i+1, weighted, u.InputTokens)
		}
	}
	// Turn 3 reads all that turn 2 wrote.
	if usages[2].CachedInputTokens != usages[1].CachedInputTokens+usages[1].CacheWriteTokens {
		t.Fatalf("turn 3 read %d, turn 2 had %d cached + %d written", usages[2].CachedInputTokens, usages[1].CachedInputTokens, usages[1].CacheWriteTokens)
	}
}

// Cancelling the context ends a stream that is still open, promptly, with
// the context's error.
func TestCancel(t *testing.T) {
	srv := fake.New(t)
	srv.Reply(fake.Reply{Content: []fake.Block{fake.Text("Hello")}, Stall: true})
	m := newModel(t, srv, "claude-test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for c, e := range m.Stream(ctx, userReq("hi")) {
		if e != nil {
			err = e
			break
		}
		if c.Kind == agent.ChunkText {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
