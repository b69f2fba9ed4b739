package conformance

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/gemini"
	fake "github.com/agentui/agentui/internal/fakes/gemini"
	"github.com/agentui/agentui/internal/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

const sealedModel = "gemini-3-flash-preview"

// sealedServer serves both protocols without history, its model Gemini
// 3 behind the validating fake, which is scripted for the sealed flows
// (js/vercel.mjs, js/agui.mjs): a signed thought and a call that needs
// approval; after the approval, a reply (signed on its last part); then
// the reply to a second message.
func sealedServer(t *testing.T) (*httptest.Server, *fake.Server, *testutil.LogBuffer) {
	t.Helper()
	f := fake.New(t, fake.WithAPIKey("AIza-conformance"))
	f.Script(
		fake.Reply{Parts: []fake.ReplyPart{{Text: "Deleting needs the user's approval.", Thought: true, Sign: true}, fake.CallPart("delete_file", `{"path":"/tmp/x.txt"}`)}},
		fake.Say("Deleted ", "/tmp/x.txt."),
		fake.Say("You are welcome."),
	)
	model, err := gemini.New(sealedModel, gemini.WithBaseURL(f.URL), gemini.WithAPIKey("AIza-conformance"), gemini.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
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
	return ts, f, logs
}

// checkSealedRequests checks what reached the model in a sealed flow:
// every request was valid; the continuation after the approval and the
// next turn carried the step's thought signatures back byte-exact, the
// call's included, or, when the client tampered with the call's sealed
// value, the server dropped it: the call then carries the value Google
// documents for a call without one, and the server logged the drop.
func checkSealedRequests(t *testing.T, f *fake.Server, logs *testutil.LogBuffer, tampered bool) {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) != 3 || f.Pending() != 0 {
		t.Fatalf("the fake got %d requests, %d replies left", len(reqs), f.Pending())
	}
	for i, r := range reqs {
		if r.Status != http.StatusOK {
			t.Fatalf("request %d refused: %d %s\n%s", i+1, r.Status, r.Message, r.Body)
		}
	}
	thought := fake.Part{Text: ptr("Deleting needs the user's approval."), Thought: true}
	call := fake.Part{FunctionCall: &fake.FunctionCall{Name: "delete_file", Args: json.RawMessage(`{"path":"/tmp/x.txt"}`)}}
	wantThought, wantCall := f.Sign(sealedModel, thought), f.Sign(sealedModel, call)
	for i, r := range reqs[1:] {
		step := firstModelContent(t, r)
		var got []string
		for _, p := range step.Parts {
			got = append(got, p.ThoughtSignature)
		}
		want := []string{wantThought, wantCall}
		if tampered && i == 0 {
			// The current turn's call without its signature: the model
			// sends the value Google documents for that.
			want[1] = base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))
		} else if tampered {
			want[1] = "" // an earlier turn's call needs none
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("request %d: the step's signatures are %q, want %q", i+2, got, want)
		}
	}
	dropped := strings.Contains(logs.String(), `msg="dropped sealed provider values that did not open"`)
	if dropped != tampered {
		t.Errorf("a sealed value was dropped: %v, want %v; log:\n%s", dropped, tampered, logs)
	}
}

// firstModelContent is the first content of the model in a request: the
// step that called delete_file.
func firstModelContent(t *testing.T, r *fake.Request) fake.Content {
	t.Helper()
	for _, c := range r.Parsed.Contents {
		if c.Role == "model" {
			if len(c.Parts) != 2 || c.Parts[1].FunctionCall == nil {
				t.Fatalf("the step went back as %s", r.Body)
			}
			return c
		}
	}
	t.Fatalf("no model content in %s", r.Body)
	return fake.Content{}
}

func ptr[T any](v T) *T { return &v }

// TestSealedProviderValues runs a stateless chat with Gemini through the
// real clients: ai@6's Chat, ai@7's, and @ag-ui/client's HttpAgent keep
// the values the server sealed with each part and send them back
// unchanged, so the continuation of an approved call and the next turn
// carry the model's thought signatures; a value the client alters is
// dropped, and the request to the model is still valid.
func TestSealedProviderValues(t *testing.T) {
	node := testutil.Node(t)
	testutil.NodeModules(t, "js")
	testutil.NodeModules(t, "js7")
	node7, err := filepath.Abs(filepath.Join("js7", "node_modules", ".bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flow := range []string{"sealed", "sealedTampered"} {
		tampered := flow == "sealedTampered"
		t.Run("ai6/"+flow, func(t *testing.T) {
			t.Parallel()
			ts, f, logs := sealedServer(t)
			t.Log(runNode(t, node, []string{"HISTORY=0"}, "vercel.mjs", ts.URL, flow))
			checkSealedRequests(t, f, logs, tampered)
		})
		t.Run("ai7/"+flow, func(t *testing.T) {
			t.Parallel()
			ts, f, logs := sealedServer(t)
			out := runNodeIn(t, "js7", node7, []string{"HISTORY=0"}, "--preserve-symlinks", "--preserve-symlinks-main", "vercel.mjs", ts.URL, flow)
			if !strings.Contains(out, `"ai":"7.`) {
				t.Fatalf("not AI SDK 7: %s", out)
			}
			checkSealedRequests(t, f, logs, tampered)
		})
		t.Run("ag-ui/"+flow, func(t *testing.T) {
			t.Parallel()
			ts, f, logs := sealedServer(t)
			t.Log(runNode(t, node, []string{"HISTORY=0"}, "agui.mjs", ts.URL+"/api/agui", flow))
			checkSealedRequests(t, f, logs, tampered)
		})
	}
}
