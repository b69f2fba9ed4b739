package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/cmf"
)

// FuzzStream streams arbitrary content blocks, deltas and a stop reason
// through the model and the agent loop with the demo tools. Nothing
// panics, every tool call chunk has an id, and what the run records is
// valid CMF: whatever the API sends, history can store the run or it ends
// with an error.
func FuzzStream(f *testing.F) {
	f.Add(`{"type":"text","text":""}`, `{"type":"text_delta","text":"hi"}`, `{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://x","title":"X"}}`, 0, "end_turn")
	f.Add(`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}`, `{"type":"input_json_delta","partial_json":"{\"city\":"}`, `{"type":"input_json_delta","partial_json":"\"Oslo\"}"}`, 0, "tool_use")
	f.Add(`{"type":"tool_use","id":"toolu_2","name":"delete_file","input":{"path":"/x"}}`, `{}`, `{}`, 1, "tool_use")
	f.Add(`{"type":"thinking","thinking":"","signature":""}`, `{"type":"thinking_delta","thinking":"hm"}`, `{"type":"signature_delta","signature":"s"}`, 0, "pause_turn")
	f.Add(`{"type":"redacted_thinking","data":"abc"}`, `{"type":"text_delta","text":"x"}`, `{}`, 2, "refusal")
	f.Add(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}`, `{"type":"input_json_delta","partial_json":"{\"query\":\"q\"}"}`, `{}`, 0, "pause_turn")
	f.Add(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a","title":"A","encrypted_content":"e"}]}`, `{}`, `{}`, 0, "end_turn")
	f.Add(`{"type":"tool_use","id":"","name":"","input":null}`, `{"type":"input_json_delta","partial_json":"not json"}`, `{"type":"text_delta","text":"x"}`, 5, "max_tokens")
	f.Fuzz(func(t *testing.T, block, d1, d2 string, second int, stop string) {
		oneLine := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "\r", " ") }
		idx := min(max(second, 0), 3)
		events := []string{start,
			`{"type":"content_block_start","index":0,"content_block":` + oneLine(block) + `}`,
			`{"type":"content_block_delta","index":0,"delta":` + oneLine(d1) + `}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":` + string(rune('0'+idx)) + `,"delta":` + oneLine(d2) + `}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_stop","index":1}`,
		}
		reason, _ := json.Marshal(stop)
		events = append(events, `{"type":"message_delta","delta":{"stop_reason":`+string(reason)+`},"usage":{"output_tokens":3}}`, `{"type":"message_stop"}`)
		body := sse(events...)
		m := streamModel(t, body)
		for c, err := range m.Stream(context.Background(), userReq("hi")) {
			if err == nil && c.Kind == agent.ChunkToolCall && c.ToolCallID == "" && c.ToolName != "" {
				t.Fatalf("a tool call chunk without an id: %+v", c)
			}
			if err == nil && c.Opaque != nil && !c.Opaque.From(anthropic.Provider, "claude-test") {
				t.Fatalf("an opaque value not tagged with this model: %+v", c.Opaque)
			}
		}
		loop, err := agent.New(m, agent.WithTools(tools()...), agent.WithMaxSteps(2))
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

// capture records the request body and answers with a minimal stream.
type capture struct{ body *[]byte }

func (c capture) RoundTrip(r *http.Request) (*http.Response, error) {
	*c.body, _ = io.ReadAll(r.Body)
	return sseTransport{sse(start, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`, `{"type":"message_stop"}`)}.RoundTrip(r)
}

// FuzzRequest builds requests from arbitrary stored conversations: an
// assistant turn with a thinking part, text and a tool call whose values
// and provenance vary. The request is valid JSON, and no value from
// another model or provider reaches it.
func FuzzRequest(f *testing.F) {
	f.Add("thinking text", "sig", "claude-test", "anthropic", "Hello", `{"city":"Oslo"}`, "toolu_1", true)
	f.Add("", "", "claude-other", "anthropic", "", `not json`, "call:1/x", false)
	f.Add("t", "sig2", "gemini-x", "gemini", "text", `[]`, "", true)
	f.Add("t", `{"type":"server_tool_use","id":"s","name":"web_search","input":{}}`, "claude-test", "anthropic", "x", `{}`, "id", false)
	f.Fuzz(func(t *testing.T, thinking, data, model, provider, text, args, callID string, manual bool) {
		const marker = "Zq9Xw"
		o := &cmf.Opaque{Provider: provider, Model: model, Data: marker + data}
		history := []cmf.Message{
			user("q"),
			{Role: cmf.RoleAssistant, Content: []cmf.Part{
				cmf.Thinking{Text: thinking, Opaque: o},
				cmf.RedactedThinking{Opaque: *o},
				cmf.Text{Text: text, Opaque: o},
				cmf.ToolCall{ToolCallID: callID, Name: "get_weather", Arguments: json.RawMessage(args), Opaque: o},
			}},
			{Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{ToolCallID: callID, ToolName: "get_weather", Content: json.RawMessage(`"sunny"`)}}},
		}
		var sent []byte
		opts := []anthropic.Option{anthropic.WithAPIKey("k"), anthropic.WithBaseURL("http://model.invalid"),
			anthropic.WithHTTPClient(&http.Client{Transport: capture{&sent}}), anthropic.WithMaxRetries(0)}
		if manual {
			opts = append(opts, anthropic.WithThinkingBudget(2048))
		}
		m, err := anthropic.New("claude-test", opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range m.Stream(context.Background(), &agent.Request{History: history}) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if !json.Valid(sent) {
			t.Fatalf("request body is not JSON: %s", sent)
		}
		mentioned := strings.Contains(thinking+text+args+callID, marker)
		if !o.From(anthropic.Provider, "claude-test") && !mentioned && strings.Contains(string(sent), marker) {
			t.Fatalf("a value of %s/%s reached the request: %s", provider, model, sent)
		}
	})
}
