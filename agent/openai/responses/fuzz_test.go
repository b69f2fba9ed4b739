package responses_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/openai/responses"
	"github.com/agentui/agentui/cmf"
)

// sseTransport answers every request with the same stream, from memory.
type sseTransport struct{ body []byte }

func (s sseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(s.body)), Request: r}, nil
}

func memoryModel(t testing.TB, model string, body []byte) *responses.Model {
	m, err := responses.New(model, responses.WithHTTPClient(&http.Client{Transport: sseTransport{body}}),
		responses.WithAPIKey("k"), responses.WithBaseURL("http://model.invalid/v1"), responses.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzStream streams arbitrary events between a response's start and its
// end through the model and through the agent loop with the demo tools.
// Nothing panics, every tool call chunk has an id, and what the run
// records is valid CMF: whatever the API sends, history can store the run
// or it ends with an error.
func FuzzStream(f *testing.F) {
	f.Add(`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
		`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Hm"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"Hm"}]}}`,
		"completed")
	f.Add(`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"get_weather"}}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"city\":"}`,
		`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"\"Oslo\"}"}`,
		"completed")
	f.Add(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","arguments":"not json","name":"delete_file"}}`,
		`{"type":"response.function_call_arguments.done","item_id":"","arguments":"{}"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","arguments":"{\"path\":1}","name":"delete_file"}}`,
		"incomplete")
	f.Add(`{"type":"response.output_text.delta","item_id":"m","delta":"Hi"}`,
		`{"type":"response.output_text.annotation.added","annotation":{"type":"url_citation","url":"https://e.com","title":"E"}}`,
		`{"type":"response.refusal.delta","delta":"No."}`,
		"failed")
	f.Add(`{"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"m"}}`, `{}`, `not json`, "completed")
	f.Add(`{"type":"response.reasoning_summary_part.added","summary_index":1}`, `{"type":"response.output_item.done","item":{"type":"reasoning"}}`,
		`{"type":"response.output_item.done","item":{"type":"message","content":[{"type":"output_text","annotations":[{"type":"url_citation","url":""}]}]}}`, "")
	f.Fuzz(func(t *testing.T, e1, e2, e3, end string) {
		var body strings.Builder
		frame := func(data string) {
			body.WriteString("event: x\ndata: " + strings.ReplaceAll(data, "\n", " ") + "\n\n")
		}
		frame(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-5","status":"in_progress","output":[]}}`)
		for _, e := range []string{e1, e2, e3} {
			frame(e)
		}
		switch end {
		case "completed", "incomplete", "failed":
			frame(`{"type":"response.` + end + `","response":{"id":"resp_1","model":"gpt-5","status":"` + end + `","incomplete_details":{"reason":"max_output_tokens"},"error":{"code":"server_error","message":"m"},"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}`)
		}
		m := memoryModel(t, "gpt-5", []byte(body.String()))
		for c, err := range m.Stream(context.Background(), userReq("hi")) {
			if err == nil && c.Kind == agent.ChunkToolCall && c.ToolCallID == "" {
				t.Fatalf("a tool call chunk without an id: %+v", c)
			}
			if err == nil && c.Opaque != nil && (c.Opaque.Provider != "openai.responses" || c.Opaque.Model != "gpt-5") {
				t.Fatalf("an untagged value: %+v", c.Opaque)
			}
		}
		loop, err := agent.New(m, agent.WithTools(demo.Tools()...), agent.WithMaxSteps(3))
		if err != nil {
			t.Fatal(err)
		}
		rec := agent.NewRecorder()
		for ev, err := range loop.Run(context.Background(), &agent.Input{Messages: userReq("hi").Messages}) {
			if err != nil {
				return
			}
			rec.Add(ev)
		}
		for _, msg := range rec.Messages() {
			msg.SchemaVersion = cmf.SchemaVersion
			if err := msg.Validate(); err != nil {
				t.Fatalf("the run recorded an invalid message: %v\n%+v", err, msg)
			}
		}
	})
}
