package anthropic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
)

const testKey = "sk-ant-test-secret-1234"

// newModel returns a model named name that talks to srv.
func newModel(t testing.TB, srv *fake.Server, name string, opts ...anthropic.Option) *anthropic.Model {
	t.Helper()
	base := []anthropic.Option{anthropic.WithAPIKey(testKey), anthropic.WithBaseURL(srv.URL), anthropic.WithMaxRetries(0)}
	m, err := anthropic.New(name, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// inProcess returns a model that reaches srv without a socket (for
// testing/synctest bubbles).
func inProcess(t testing.TB, srv *fake.Server, name string, opts ...anthropic.Option) *anthropic.Model {
	t.Helper()
	base := []anthropic.Option{anthropic.WithAPIKey(testKey), anthropic.WithBaseURL("http://fake.invalid"),
		anthropic.WithHTTPClient(&http.Client{Transport: srv.Transport()})}
	m, err := anthropic.New(name, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func collect(m agent.Model, req *agent.Request) ([]agent.Chunk, error) {
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

func userReq(text string) *agent.Request {
	return &agent.Request{Messages: []cmf.Message{user(text)}}
}

// tools are the demo tools the tests use: get_weather (a server tool) and
// delete_file (which needs the user's approval).
func tools() []agent.Tool {
	var out []agent.Tool
	for _, t := range demo.Tools() {
		if t.Name == "get_weather" || t.Name == "delete_file" {
			out = append(out, t)
		}
	}
	return out
}

// turn is what one run of the loop produced.
type turn struct {
	events   []agent.Event
	messages []cmf.Message // what the run added
	history  []cmf.Message // the whole conversation, as the server stores it
	finished *agent.RunFinished
	err      error
}

func (tr *turn) text() string {
	var sb strings.Builder
	for _, m := range tr.messages {
		if m.Role == cmf.RoleAssistant {
			sb.WriteString(m.Text())
		}
	}
	return sb.String()
}

func runLoop(t testing.TB, m agent.Model, in *agent.Input) *turn {
	t.Helper()
	l, err := agent.New(m, agent.WithTools(tools()...))
	if err != nil {
		t.Fatal(err)
	}
	rec := agent.NewRecorder()
	tr := &turn{}
	for ev, err := range l.Run(context.Background(), in) {
		if err != nil {
			tr.err = err
			break
		}
		rec.Add(ev)
		tr.events = append(tr.events, ev)
		if f, ok := ev.(*agent.RunFinished); ok {
			tr.finished = f
		}
	}
	tr.messages = rec.Messages()
	tr.history = append(append(append([]cmf.Message(nil), in.History...), in.Messages...), tr.messages...)
	for i := range tr.messages {
		tr.messages[i].SchemaVersion = cmf.SchemaVersion
		if err := tr.messages[i].Validate(); err != nil {
			t.Fatalf("the run recorded an invalid message: %v", err)
		}
	}
	return tr
}

// body decodes a recorded request body.
func body(t testing.TB, r fake.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// contentOf returns the content blocks of message i of a recorded request.
func contentOf(t testing.TB, r fake.Request, i int) []map[string]any {
	t.Helper()
	msgs := body(t, r)["messages"].([]any)
	if i < 0 {
		i += len(msgs)
	}
	var out []map[string]any
	for _, b := range msgs[i].(map[string]any)["content"].([]any) {
		out = append(out, b.(map[string]any))
	}
	return out
}

func types(blocks []map[string]any) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b["type"].(string))
	}
	return out
}

func chunksOf(chunks []agent.Chunk, kind agent.ChunkKind) []agent.Chunk {
	var out []agent.Chunk
	for _, c := range chunks {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func joined(chunks []agent.Chunk, kind agent.ChunkKind) string {
	var sb strings.Builder
	for _, c := range chunksOf(chunks, kind) {
		sb.WriteString(c.Delta)
	}
	return sb.String()
}

func eventsOf[T agent.Event](events []agent.Event) []T {
	var out []T
	for _, ev := range events {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}
