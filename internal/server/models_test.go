package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	anthropicfake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
	geminifake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
	responsesfake "github.com/agentui/agentui/internal/testkit/fakes/responses"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// Bad model configuration stops the server before it starts, with one
// line that says what to fix.
func TestModelConfigFailsFast(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		t.Setenv(k, "")
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Model: "anthropic:claude-x"}, "-model anthropic:claude-x needs ANTHROPIC_API_KEY"},
		{Config{Model: "openai-responses:gpt-5"}, "-model openai-responses:gpt-5 needs OPENAI_API_KEY"},
		{Config{Model: "gemini:gemini-3-flash-preview"}, "-model gemini:gemini-3-flash-preview needs GEMINI_API_KEY or GOOGLE_API_KEY"},
		{Config{Model: "openai:gpt-4o-mini"}, "-model openai:gpt-4o-mini needs OPENAI_API_KEY"},
		{Config{Models: []string{"demo", "gemini:g"}}, "-models gemini:g needs GEMINI_API_KEY or GOOGLE_API_KEY"},
		{Config{Model: "claude-x"}, `unknown -model "claude-x"`},
		{Config{Model: "anthropic:"}, `unknown -model "anthropic:"`},
		{Config{Models: []string{"demo", "mistral:large"}}, `unknown -models "mistral:large"`},
		{Config{Models: []string{"demo", "demo"}}, `-models: agent: two models named "demo"`},
		{Config{Model: "demo", Models: []string{"demo"}}, "-model and -models: give one"},
		{Config{}, "no -model"},
		{Config{Model: "demo", AnthropicThinking: "lots"}, `-anthropic-thinking "lots": want adaptive, none, or a budget of at least 1024 tokens`},
		{Config{Model: "demo", AnthropicThinking: "512"}, `-anthropic-thinking "512"`},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", c.cfg, err, c.want)
		}
	}
	// Either key serves Gemini.
	t.Setenv("GOOGLE_API_KEY", "k")
	if _, err := New(Config{Model: "gemini:gemini-3-flash-preview", History: "none"}); err != nil {
		t.Errorf("GOOGLE_API_KEY: %v", err)
	}
}

// startNativeModels starts the three providers' fakes, each answering
// every request with the text reply gives it, and points the models'
// environment at them.
func startNativeModels(t *testing.T, reply func(model string) string) {
	a := anthropicfake.New(t, anthropicfake.WithResponder(func(r *anthropicfake.Request) anthropicfake.Reply {
		model, _ := r.Params["model"].(string)
		return anthropicfake.Reply{Content: []anthropicfake.Block{anthropicfake.Thinking("Let me see."), anthropicfake.Text(reply(model))}}
	}))
	o := responsesfake.New(t, responsesfake.WithResponder(func(r *responsesfake.Request) responsesfake.Reply {
		model, _ := r.JSON()["model"].(string)
		return responsesfake.Reply{Output: []responsesfake.Item{responsesfake.Reasoning("Let me see."), responsesfake.Text(reply(model))}}
	}))
	g := geminifake.New(t, geminifake.WithResponder(func(r *geminifake.Request) geminifake.Reply {
		return geminifake.Reply{Parts: []geminifake.ReplyPart{geminifake.Thought("Let me see."), geminifake.Text(reply(r.Model))}}
	}))
	for k, v := range map[string]string{
		"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": a.URL,
		"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": o.URL,
		"GEMINI_API_KEY": "test", "GOOGLE_API_KEY": "", "GOOGLE_GEMINI_BASE_URL": g.URL,
	} {
		t.Setenv(k, v)
	}
}

// With -models a request picks its model by spec (useChat's body
// "model", AG-UI's forwardedProps.model), GET /api/models lists them,
// and each reply's metadata names the model that answered.
func TestRequestPicksANativeModel(t *testing.T) {
	startNativeModels(t, func(model string) string { return "I am " + model + "." })
	specs := []string{"anthropic:claude-test-1", "openai-responses:gpt-5", "gemini:gemini-3-flash-preview", "demo"}
	s, err := New(Config{Models: specs, History: "memory", Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); _ = s.Close() })
	if want := "models anthropic:claude-test-1 (default), openai-responses:gpt-5, gemini:gemini-3-flash-preview, demo, history memory"; s.Description != want {
		t.Errorf("description %q, want %q", s.Description, want)
	}

	resp, err := http.Get(ts.URL + "/api/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `{"models":[{"id":"anthropic:claude-test-1","default":true},{"id":"openai-responses:gpt-5"},{"id":"gemini:gemini-3-flash-preview"},{"id":"demo"}]}` + "\n"
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Fatalf("GET /api/models: %d %s, want %s", resp.StatusCode, body, want)
	}

	for i, spec := range specs[:3] {
		id := spec[strings.IndexByte(spec, ':')+1:]
		vercel := testutil.PostStream(t, ts.URL+"/api/chat", `{"id":"v`+id+`","model":"`+spec+`","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"who are you?"}]}]}`)
		if got := vercel.Text(); got != "I am "+id+"." {
			t.Errorf("useChat, %s: %q", spec, got)
		}
		// The model as the provider names it: OpenAI answers with a
		// dated snapshot of the id asked for.
		if md, _ := vercel.Find("finish")["messageMetadata"].(map[string]any); !named(md["model"], id) {
			t.Errorf("useChat, %s: finish metadata %v, want model %q", spec, md, id)
		}
		if vercel.Find("reasoning-delta") == nil {
			t.Errorf("useChat, %s: no reasoning", spec)
		}
		agui := testutil.PostStream(t, ts.URL+"/api/agui", `{"threadId":"a`+id+`","runId":"r`+string(rune('0'+i))+`","protocolVersion":"1.0","messages":[{"id":"u1","role":"user","content":"who are you?"}],"forwardedProps":{"model":"`+spec+`"}}`)
		if got := agui.Text(); got != "I am "+id+"." {
			t.Errorf("AG-UI, %s: %q", spec, got)
		}
		if usage, _ := agui.Find("RUN_FINISHED")["usage"].([]any); len(usage) != 1 || !named(usage[0].(map[string]any)["model"], id) {
			t.Errorf("AG-UI, %s: RUN_FINISHED usage %v, want model %q", spec, usage, id)
		}
	}
	// No model named: the default (the first).
	if got := testutil.PostStream(t, ts.URL+"/api/chat", testutil.UserMessage("default", "u1", "who are you?")).Text(); got != "I am claude-test-1." {
		t.Errorf("no model named: %q", got)
	}
}

// named reports whether a reply's model is id or a dated snapshot of it.
func named(model any, id string) bool {
	s, _ := model.(string)
	return s == id || strings.HasPrefix(s, id+"-")
}
