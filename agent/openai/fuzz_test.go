package openai_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/cmf"
)

// sseTransport answers every request with the same streamed chunks.
type sseTransport struct{ body string }

func (s sseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(s.body)), Request: r}, nil
}

// FuzzChunks streams arbitrary deltas and finish reasons from an
// OpenAI-compatible endpoint through the agent loop with the demo tools.
// Nothing panics, every tool call chunk has an id, and what the run
// records is valid CMF: whatever a model sends, history can store the
// run or it ends with an error.
func FuzzChunks(f *testing.F) {
	f.Add(`{"content":"hi"}`, `{}`, `{}`, "stop")
	f.Add(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Oslo\"}"}}]}`, `{}`, "tool_calls")
	f.Add(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"delete_file","arguments":"{\n\"path\":\"/x\"}"}}]}`, `{}`, `{}`, "tool_calls")
	f.Add(`{"tool_calls":[{"index":3,"id":"","function":{"name":"","arguments":"not json"}}]}`, `{"reasoning_content":"hm"}`, `{"content":null}`, "length")
	f.Add(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_location","arguments":"{}"}},{"index":1,"id":"a","function":{"name":"get_weather","arguments":"{}"}}]}`, `{}`, `{}`, "tool_calls")
	f.Fuzz(func(t *testing.T, d1, d2, d3, finish string) {
		var body strings.Builder
		for i, d := range []string{d1, d2, d3} {
			fr := "null"
			if i == 2 {
				fr = `"` + strings.ReplaceAll(strings.ReplaceAll(finish, `\`, ``), `"`, ``) + `"`
			}
			body.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + strings.ReplaceAll(d, "\n", " ") + `,"finish_reason":` + fr + "}]}\n\n")
		}
		body.WriteString("data: [DONE]\n\n")
		m, err := openai.New("m", openai.WithHTTPClient(&http.Client{Transport: sseTransport{body.String()}}), openai.WithAPIKey("k"), openai.WithBaseURL("http://model.invalid/v1"), openai.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		for c, err := range m.Stream(context.Background(), userReq("hi")) {
			if err == nil && c.Kind == agent.ChunkToolCall && c.ToolCallID == "" {
				t.Fatalf("a tool call chunk without an id: %+v", c)
			}
		}
		loop, err := agent.New(m, agent.WithTools(demo.Tools()...), agent.WithMaxSteps(3))
		if err != nil {
			t.Fatal(err)
		}
		rec := agent.NewRecorder()
		failed := false
		for ev, err := range loop.Run(context.Background(), &agent.Input{Messages: userReq("hi").Messages}) {
			if err != nil {
				failed = true
				break
			}
			rec.Add(ev)
		}
		if failed {
			return
		}
		for _, msg := range rec.Messages() {
			msg.SchemaVersion = cmf.SchemaVersion
			if err := msg.Validate(); err != nil {
				t.Fatalf("the run recorded an invalid message: %v\n%+v", err, msg)
			}
		}
	})
}
