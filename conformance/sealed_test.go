package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/agent/openai/responses"
	anthropicfake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
	geminifake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
	responsesfake "github.com/agentui/agentui/internal/testkit/fakes/responses"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// A sealed flow (js/vercel.mjs, js/agui.mjs "sealed" and
// "sealedTampered") runs three requests without history: "delete
// /tmp/x.txt", which the model answers with reasoning and a call that
// needs approval; the approval, after which it says "Deleted
// /tmp/x.txt."; and "thanks", to which it says "You are welcome.". Each
// provider scripts its fake for that and checks what reached it.
type sealedProvider struct {
	name string
	// start starts the fake, scripted, and returns the model that talks
	// to it and the check of its requests.
	start func(t *testing.T) (agent.Model, func(t *testing.T, tampered bool))
}

var sealedProviders = []sealedProvider{
	{"gemini", startGemini},
	{"anthropic", startAnthropic},
	{"openai-responses", startResponses},
}

const geminiModel = "gemini-3-flash-preview"

// Gemini 3 signs its thought and the call. Every request after the first
// must carry both back on their parts, byte-exact; a call of the current
// turn without its signature gets the value Google documents for one
// that has none.
func startGemini(t *testing.T) (agent.Model, func(*testing.T, bool)) {
	f := geminifake.New(t, geminifake.WithAPIKey("AIza-conformance"))
	f.Script(
		geminifake.Reply{Parts: []geminifake.ReplyPart{{Text: "Deleting needs the user's approval.", Thought: true, Sign: true}, geminifake.CallPart("delete_file", `{"path":"/tmp/x.txt"}`)}},
		geminifake.Say("Deleted ", "/tmp/x.txt."),
		geminifake.Say("You are welcome."),
	)
	model, err := gemini.New(geminiModel, gemini.WithBaseURL(f.URL), gemini.WithAPIKey("AIza-conformance"), gemini.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return model, func(t *testing.T, tampered bool) {
		reqs := f.Requests()
		if len(reqs) != 3 || f.Pending() != 0 {
			t.Fatalf("the fake got %d requests, %d replies left", len(reqs), f.Pending())
		}
		for i, r := range reqs {
			if r.Status != http.StatusOK {
				t.Fatalf("request %d refused: %d %s\n%s", i+1, r.Status, r.Message, r.Body)
			}
		}
		thought := geminifake.Part{Text: ptr("Deleting needs the user's approval."), Thought: true}
		call := geminifake.Part{FunctionCall: &geminifake.FunctionCall{Name: "delete_file", Args: json.RawMessage(`{"path":"/tmp/x.txt"}`)}}
		for i, r := range reqs[1:] {
			var step *geminifake.Content
			for j := range r.Parsed.Contents {
				if r.Parsed.Contents[j].Role == "model" {
					step = &r.Parsed.Contents[j]
					break
				}
			}
			if step == nil || len(step.Parts) != 2 || step.Parts[1].FunctionCall == nil {
				t.Fatalf("request %d: the step went back as %s", i+2, r.Body)
			}
			want := []string{f.Sign(geminiModel, thought), f.Sign(geminiModel, call)}
			switch {
			case tampered && i == 0: // the current turn's call
				want[1] = base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))
			case tampered: // an earlier turn's call needs none
				want[1] = ""
			}
			got := []string{step.Parts[0].ThoughtSignature, step.Parts[1].ThoughtSignature}
			if !slices.Equal(got, want) {
				t.Errorf("request %d: the step's signatures are %q, want %q", i+2, got, want)
			}
		}
	}
}

// Claude with manual thinking thinks, has part of it redacted, thinks
// again, and calls: the tool continuation must start with the turn's
// thinking, every block signed and in its place (the fake checks each
// signature against the blocks before it), the redacted block included.
// When the client alters the last value (the second thinking block's,
// which carries the redacted block), both go; the first block still
// starts the turn, so thinking stays on.
func startAnthropic(t *testing.T) (agent.Model, func(*testing.T, bool)) {
	f := anthropicfake.New(t, anthropicfake.WithAPIKey("sk-ant-conformance"), anthropicfake.WithPrefixCheck())
	f.Reply(
		anthropicfake.Reply{Content: []anthropicfake.Block{
			anthropicfake.Thinking("The user wants a file deleted."),
			anthropicfake.RedactedThinking("what the safety system hid"),
			anthropicfake.Thinking("That needs approval."),
			anthropicfake.ToolUse("toolu_01", "delete_file", `{"path":"/tmp/x.txt"}`),
		}},
		anthropicfake.Reply{Content: []anthropicfake.Block{anthropicfake.Text("Deleted /tmp/x.txt.")}},
		anthropicfake.Reply{Content: []anthropicfake.Block{anthropicfake.Text("You are welcome.")}},
	)
	model, err := anthropic.New("claude-conformance", anthropic.WithAPIKey("sk-ant-conformance"), anthropic.WithBaseURL(f.URL),
		anthropic.WithMaxRetries(0), anthropic.WithThinkingBudget(1024))
	if err != nil {
		t.Fatal(err)
	}
	return model, func(t *testing.T, tampered bool) {
		reqs := f.Requests()
		if len(reqs) != 3 || f.Pending() != 0 {
			t.Fatalf("the fake got %d requests, %d replies left", len(reqs), f.Pending())
		}
		for i, r := range reqs {
			if r.Status != http.StatusOK {
				t.Fatalf("request %d refused: %d %s\n%s", i+1, r.Status, r.Error, r.Body)
			}
		}
		want := []string{"thinking", "redacted_thinking", "thinking", "tool_use"}
		if tampered {
			want = []string{"thinking", "tool_use"}
		}
		for i, r := range reqs[1:] {
			var blocks []string
			content, _ := r.Messages()[1]["content"].([]any)
			for _, b := range content {
				if b, ok := b.(map[string]any); ok {
					blocks = append(blocks, fmt.Sprint(b["type"]))
				}
			}
			if !slices.Equal(blocks, want) {
				t.Errorf("request %d: the step went back as %q, want %q", i+2, blocks, want)
			}
			if th, _ := r.Params["thinking"].(map[string]any); th["type"] != "enabled" {
				t.Errorf("request %d: thinking %v", i+2, r.Params["thinking"])
			}
		}
	}
}

// GPT-5 reasons before its call (a reasoning item whose encrypted
// content, stored nowhere at OpenAI, is the only way back to it): every
// request after the first must send the item back, byte-exact, before
// the call; altered, it is left out, and the call goes without it.
func startResponses(t *testing.T) (agent.Model, func(*testing.T, bool)) {
	f := responsesfake.New(t, responsesfake.WithAPIKey("sk-conformance"))
	f.Enqueue(
		responsesfake.Reply{Output: []responsesfake.Item{responsesfake.Reasoning("Deleting needs the user's approval."), responsesfake.Call("delete_file", `{"path":"/tmp/x.txt"}`)}},
		responsesfake.Reply{Output: []responsesfake.Item{responsesfake.Text("Deleted /tmp/x.txt.")}},
		responsesfake.Reply{Output: []responsesfake.Item{responsesfake.Text("You are welcome.")}},
	)
	model, err := responses.New("gpt-5", responses.WithBaseURL(f.URL), responses.WithAPIKey("sk-conformance"), responses.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return model, func(t *testing.T, tampered bool) {
		reqs := f.Requests()
		if len(reqs) != 3 || f.Pending() != 0 {
			t.Fatalf("the fake got %d requests, %d replies left", len(reqs), f.Pending())
		}
		for i, r := range reqs {
			if r.Status != http.StatusOK || r.Error != nil {
				t.Fatalf("request %d refused: %d %+v\n%s", i+1, r.Status, r.Error, r.Body)
			}
		}
		var issued map[string]any
		if err := json.Unmarshal(reqs[0].Output[0], &issued); err != nil || issued["type"] != "reasoning" {
			t.Fatalf("the first reply's reasoning item: %s, %v", reqs[0].Output[0], err)
		}
		for i, r := range reqs[1:] {
			items := r.Items()
			var kinds []string
			for _, it := range items[:3] {
				kinds = append(kinds, fmt.Sprint(it["type"]))
			}
			want := []string{"<nil>", "reasoning", "function_call"} // the user message has no type
			if tampered {
				want = []string{"<nil>", "function_call", "function_call_output"}
			}
			if !slices.Equal(kinds, want) {
				t.Errorf("request %d: items %q, want %q\n%s", i+2, kinds, want, r.Body)
				continue
			}
			if !tampered && (items[1]["id"] != issued["id"] || items[1]["encrypted_content"] != issued["encrypted_content"]) {
				t.Errorf("request %d: the reasoning item went back as %v, not as issued", i+2, items[1])
			}
		}
	}
}

// sealedServer serves both protocols without history, with model.
func sealedServer(t *testing.T, model agent.Model) (*httptest.Server, *testutil.LogBuffer) {
	t.Helper()
	loop, err := agent.New(model, agent.WithTools(demo.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.LogBuffer{}
	opts := []uiadapter.Option{
		uiadapter.WithSecret([]byte("conformance secret")),
		uiadapter.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
	chat := testutil.Must(vercelai.Handler(loop, opts...))
	aguiChat := testutil.Must(agui.Handler(loop, opts...))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", chat)
	mux.Handle("POST /api/agui", aguiChat)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		testutil.ShutdownNow(chat, aguiChat)
	})
	return ts, logs
}

func ptr[T any](v T) *T { return &v }

// TestSealedProviderValues runs a stateless chat with each native model
// through the real clients: ai@6's Chat, ai@7's, and @ag-ui/client's
// HttpAgent keep the values the server sealed with each part and send
// them back unchanged, so the continuation of an approved call and the
// next turn carry the model's reasoning back as it came (the validating
// fakes accept nothing else); a value the client alters is dropped and
// logged, and the request to the model is still valid.
func TestSealedProviderValues(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node7, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	clients := []struct {
		name string
		run  func(t *testing.T, base, flow string) string
	}{
		{"ai6", func(t *testing.T, base, flow string) string {
			return runNode(t, node, []string{"HISTORY=0"}, "vercel.mjs", base, flow)
		}},
		{"ai7", func(t *testing.T, base, flow string) string {
			out := runNodeIn(t, "js7", node7, []string{"HISTORY=0"}, "--preserve-symlinks", "--preserve-symlinks-main", "vercel.mjs", base, flow)
			if !strings.Contains(out, `"ai":"7.`) {
				t.Fatalf("not AI SDK 7: %s", out)
			}
			return out
		}},
		{"ag-ui", func(t *testing.T, base, flow string) string {
			return runNode(t, node, []string{"HISTORY=0"}, "agui.mjs", base+"/api/agui", flow)
		}},
	}
	for _, p := range sealedProviders {
		for _, c := range clients {
			for _, flow := range []string{"sealed", "sealedTampered"} {
				t.Run(p.name+"/"+c.name+"/"+flow, func(t *testing.T) {
					t.Parallel()
					model, check := p.start(t)
					ts, logs := sealedServer(t, model)
					t.Log(c.run(t, ts.URL, flow))
					tampered := flow == "sealedTampered"
					check(t, tampered)
					if dropped := strings.Contains(logs.String(), `msg="dropped sealed provider values that did not open"`); dropped != tampered {
						t.Errorf("a sealed value was dropped: %v, want %v; log:\n%s", dropped, tampered, logs)
					}
				})
			}
		}
	}
}
