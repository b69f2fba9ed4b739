package gemini_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/demo"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/cmf"
)

// sseTransport answers every request with the same stream and keeps the
// last request body.
type sseTransport struct {
	body string
	last []byte
}

func (s *sseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		s.last, _ = io.ReadAll(r.Body)
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(s.body)), Request: r}, nil
}

func fuzzModel(t testing.TB, body string) (*gemini.Model, *sseTransport) {
	tr := &sseTransport{body: body}
	m, err := gemini.New(testModel, gemini.WithHTTPClient(&http.Client{Transport: tr}), gemini.WithAPIKey("k"),
		gemini.WithBaseURL("http://model.invalid/"), gemini.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return m, tr
}

const finishChunk = `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}]}`

// FuzzStream streams arbitrary response chunks through the model and the
// agent loop with the demo tools, then sends what the run recorded back
// as history. Nothing panics, every tool call chunk has an id, what the
// run records is valid CMF, and the replayed request is valid JSON:
// whatever the API sends, history can store it and the next request can
// carry it, or the run ends with an error.
func FuzzStream(f *testing.F) {
	f.Add(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi","thought":true},{"text":"Hello"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"","thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}`, finishChunk)
	f.Add(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"c2lnbmF0dXJl"},{"functionCall":{"name":"delete_file","args":{"path":"/x"}}}]}}]}`,
		finishChunk, `{"candidates":[{"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://a.example","title":"a"}},{"web":{"uri":""}}]}}]}`)
	f.Add(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"","args":null}}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_location"}}]},"finishReason":"MALFORMED_FUNCTION_CALL"}]}`, `{"error":{"code":500,"message":"x","status":"INTERNAL"}}`)
	f.Add(`{"promptFeedback":{"blockReason":"SAFETY"}}`, `{"candidates":[]}`, `{"candidates":[null]}`)
	f.Add(`{"candidates":[{"content":{"parts":[{"text":"é","thoughtSignature":"AA=="},{"text":"x","thought":true,"thoughtSignature":"AQ=="}]},"finishReason":"MAX_TOKENS"}]}`, `{}`, finishChunk)
	f.Fuzz(func(t *testing.T, c1, c2, c3 string) {
		var body strings.Builder
		for _, c := range []string{c1, c2, c3} {
			body.WriteString("data: " + strings.NewReplacer("\n", " ", "\r", " ").Replace(c) + "\r\n\r\n")
		}
		m, tr := fuzzModel(t, body.String())
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
		for ev, err := range loop.Run(context.Background(), &agent.Input{Messages: userReq("hi").Messages}) {
			if err != nil {
				break
			}
			rec.Add(ev)
		}
		history := []cmf.Message{user("hi")}
		for _, msg := range rec.Messages() {
			msg.SchemaVersion = cmf.SchemaVersion
			if err := msg.Validate(); err != nil {
				t.Fatalf("the run recorded an invalid message: %v\n%+v", err, msg)
			}
			history = append(history, msg)
		}
		tr.body = "data: " + finishChunk + "\r\n\r\n"
		tr.last = nil
		for range m.Stream(context.Background(), &agent.Request{History: history, Messages: []cmf.Message{user("again")}}) {
		}
		if tr.last != nil && !json.Valid(tr.last) {
			t.Fatalf("the replayed request is not JSON: %s", tr.last)
		}
	})
}

// FuzzReplay builds requests from arbitrary stored messages, Gemini's
// own values among them (any span, any data): nothing panics and the
// request is JSON.
func FuzzReplay(f *testing.F) {
	f.Add(`{"role":"assistant","content":[{"content_type":"text","text":"Hello","opaque":{"provider":"gemini","model":"`+testModel+`","id":"5:5","data":"c2ln"}},{"content_type":"tool_call","tool_call_id":"c","name":"get_weather","arguments":{"city":"Oslo"},"opaque":{"provider":"gemini","model":"`+testModel+`","data":"!!"}}]}`,
		`{"role":"tool","content":[{"content_type":"tool_result","tool_call_id":"c","tool_name":"get_weather","content":"sunny","is_error":true}]}`)
	f.Add(`{"role":"assistant","content":[{"content_type":"thinking","text":"héllo","opaque":{"provider":"gemini","model":"`+testModel+`","id":"1:2","data":"AA=="}}]}`,
		`{"role":"user","content":[{"content_type":"image","type":"url","data":"data:image/png;base64,AAAA"},{"content_type":"document","type":"base64","data":"JVBERi0="}]}`)
	f.Add(`{"role":"assistant","content":[{"content_type":"tool_call","tool_call_id":"c","name":"f","arguments":{}}]}`, `{"role":"system","content":[{"content_type":"text","text":"Be brief."}]}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var msgs []cmf.Message
		for _, s := range []string{a, b} {
			var m cmf.Message
			if json.Unmarshal([]byte(s), &m) == nil {
				msgs = append(msgs, m)
			}
		}
		m, tr := fuzzModel(t, "data: "+finishChunk+"\r\n\r\n")
		for range m.Stream(context.Background(), &agent.Request{History: msgs, Messages: []cmf.Message{user("next")}}) {
		}
		if tr.last != nil && !json.Valid(tr.last) {
			t.Fatalf("the request is not JSON: %s", tr.last)
		}
	})
}
