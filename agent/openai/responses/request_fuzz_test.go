package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
)

// FuzzInput builds requests from arbitrary stored conversations. Nothing
// panics, the request encodes, and the rules the API enforces on
// reasoning items hold whatever the history holds: only this model's
// items are sent, each with its id and content and followed by the output
// item it preceded, and function calls carry no item id.
func FuzzInput(f *testing.F) {
	f.Add(`[{"role":"user","content":[{"content_type":"text","text":"hi"}]},
		{"role":"assistant","content":[
			{"content_type":"thinking","text":"A","opaque":{"provider":"openai.responses","model":"gpt-5","id":"rs_1","data":"gAAA"}},
			{"content_type":"tool_call","tool_call_id":"c1","name":"f","arguments":{}}]},
		{"role":"tool","content":[{"content_type":"tool_result","tool_call_id":"c1","content":"ok"}]}]`)
	f.Add(`[{"role":"assistant","content":[
			{"content_type":"thinking","text":"","opaque":{"provider":"openai.responses","model":"gpt-5","id":"rs_1","data":"x"}},
			{"content_type":"thinking","text":"B","opaque":{"provider":"openai.responses","model":"gpt-5","id":"rs_2","data":"y"}},
			{"content_type":"resource_ref","uri":"https://e.com","resource_type":"uri"},
			{"content_type":"text","text":"T"},
			{"content_type":"thinking","text":"C","opaque":{"provider":"openai.responses","model":"o3","id":"rs_3","data":"z"}},
			{"content_type":"text","text":""}]}]`)
	f.Add(`[{"role":"user","content":[{"content_type":"image","type":"base64","data":"AAA","media_type":"image/png"},{"content_type":"document","type":"url","data":"https://e.com/a.pdf"}]},
		{"role":"system","content":[{"content_type":"text","text":"S"}]},
		{"role":"assistant","content":[{"content_type":"redacted_thinking","opaque":{"provider":"anthropic","model":"gpt-5","data":"r"}},{"content_type":"thinking","text":"x","opaque":{"provider":"openai.responses","model":"gpt-5","id":"rs_9"}},{"content_type":"text","text":"y"}]}]`)
	m := &Model{model: "gpt-5", reasoning: &Reasoning{Summary: "auto"}}
	f.Fuzz(func(t *testing.T, conv string) {
		var msgs []cmf.Message
		if json.Unmarshal([]byte(conv), &msgs) != nil {
			return
		}
		req := &agent.Request{History: msgs, Tools: []agent.ToolSpec{{Name: "f", Parameters: json.RawMessage(conv)}}}
		b, err := json.Marshal(m.params(req))
		if err != nil {
			t.Fatalf("the request does not encode: %v", err)
		}
		var body struct {
			Input []map[string]any `json:"input"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		sent := map[string]bool{} // reasoning ids this model produced
		for _, msg := range msgs {
			for _, p := range msg.Content {
				if th, ok := p.(cmf.Thinking); ok && th.Opaque.From(Provider, m.model) {
					sent[th.Opaque.ID+"\x00"+th.Opaque.Data] = true
				}
			}
		}
		for i, it := range body.Input {
			switch it["type"] {
			case "reasoning":
				id, _ := it["id"].(string)
				data, _ := it["encrypted_content"].(string)
				if id == "" || data == "" || !sent[id+"\x00"+data] {
					t.Fatalf("reasoning item %d is not one of this model's: %v", i, it)
				}
				if i+1 == len(body.Input) {
					t.Fatalf("reasoning item %d ends the input", i)
				}
				next := body.Input[i+1]
				if next["type"] != "function_call" && next["role"] != "assistant" {
					t.Fatalf("reasoning item %d is followed by %v", i, next)
				}
			case "function_call":
				if _, ok := it["id"]; ok {
					t.Fatalf("a function call with its item id: %v", it)
				}
			}
		}
		if strings.Contains(string(b), `"previous_response_id"`) || !strings.Contains(string(b), `"store":false`) {
			t.Fatalf("request = %s", b)
		}
	})
}
