package uiadapter_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
)

// says is a model that answers with its own name.
type says string

func (s says) Stream(_ context.Context, _ *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		if yield(agent.Chunk{Kind: agent.ChunkText, Delta: "I am " + string(s) + "."}, nil) {
			yield(agent.Chunk{Kind: agent.ChunkFinish, Model: string(s)}, nil)
		}
	}
}

// A request picks a model among those the agent offers (useChat's body
// "model", AG-UI's forwardedProps.model); another name is a 400, and none
// is the default.
func TestRequestPicksAModel(t *testing.T) {
	models := testutil.Must(agent.NewModels(agent.Named{Name: "small", Model: says("small")}, agent.Named{Name: "large", Model: says("large")}))
	loop := testutil.Must(agent.New(models))
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", testutil.Must(vercelai.Handler(loop)))
	mux.Handle("POST /api/agui", testutil.Must(agui.Handler(loop)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	vercel := func(model string) string {
		return `{"id":"c","trigger":"submit-message","model":` + model + `,"messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`
	}
	agUI := func(model string) string {
		return `{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}],"forwardedProps":{"model":` + model + `}}`
	}
	for _, c := range []struct{ path, body, want string }{
		{"/api/chat", vercel(`"large"`), "I am large."},
		{"/api/chat", vercel(`""`), "I am small."},
		{"/api/agui", agUI(`"large"`), "I am large."},
		{"/api/agui", agUI(`null`), "I am small."},
	} {
		if got := testutil.PostStream(t, srv.URL+c.path, c.body).Text(); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.path, c.body, got, c.want)
		}
	}
	// An agent with one model serves it whatever a request names.
	one := httptest.NewServer(testutil.Must(vercelai.Handler(testutil.Must(agent.New(says("only"))))))
	defer one.Close()
	if got := testutil.PostStream(t, one.URL, vercel(`"large"`)).Text(); got != "I am only." {
		t.Errorf("one model: %q", got)
	}
	for _, c := range []struct{ path, body string }{{"/api/chat", vercel(`"huge"`)}, {"/api/agui", agUI(`"huge"`)}, {"/api/agui", agUI(`7`)}} {
		resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s %s: %d, want 400", c.path, c.body, resp.StatusCode)
		}
	}
}
