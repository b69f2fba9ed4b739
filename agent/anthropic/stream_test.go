package anthropic_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/cmf"
)

// sseTransport answers every request with the same event stream.
type sseTransport struct{ body string }

func (s sseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(s.body)), Request: r}, nil
}

// sse frames data events as the API names them.
func sse(events ...string) string {
	var sb strings.Builder
	for _, e := range events {
		var head struct {
			Type string `json:"type"`
		}
		json.Unmarshal([]byte(e), &head)
		sb.WriteString("event: " + head.Type + "\ndata: " + e + "\n\n")
	}
	return sb.String()
}

func streamModel(t testing.TB, body string) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New("claude-test", anthropic.WithAPIKey("k"), anthropic.WithBaseURL("http://model.invalid"),
		anthropic.WithHTTPClient(&http.Client{Transport: sseTransport{body}}), anthropic.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const start = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`

// The API may stream two blocks at once (the SDK's own accumulator test
// interleaves a text block with a tool_use block). Chunks still come in
// block order, so the stored parts keep the message's order.
func TestInterleavedBlocksKeepTheirOrder(t *testing.T) {
	body := sse(start,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig123"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_id","name":"get_weather","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" world"}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"!"}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Los Angeles\"}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30,"output_tokens_details":{"thinking_tokens":4}}}`,
		`{"type":"message_stop"}`,
	)
	chunks, err := collect(streamModel(t, body), userReq("weather"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range chunks {
		kinds = append(kinds, map[agent.ChunkKind]string{agent.ChunkThinking: "thinking", agent.ChunkText: "text", agent.ChunkToolCall: "call", agent.ChunkFinish: "finish"}[c.Kind]+":"+c.Delta)
	}
	want := []string{"thinking:Let me think.", "thinking:", "text:Hello", "text: world", "text:!", "call:", `call:{"city": `, `call:"Los Angeles"}`, "finish:"}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Fatalf("chunks\n %q\nwant\n %q", kinds, want)
	}
	if o := chunks[1].Opaque; o == nil || o.Data != "sig123" || !o.From("anthropic", "claude-test") {
		t.Fatalf("signature = %+v", o)
	}
	// An older answer repeats only output tokens in message_delta: input
	// comes from message_start.
	fin := chunks[len(chunks)-1]
	if fin.Usage != (agent.Usage{InputTokens: 10, OutputTokens: 30, TotalTokens: 40, ReasoningTokens: 4}) || fin.StopReason != cmf.StopCall {
		t.Fatalf("finish = %+v", fin)
	}
}

// Redacted thinking arrives whole and is kept in its place; a thinking
// block shown as omitted (empty, signed) is kept too; the cache counts.
func TestRedactedAndOmittedThinking(t *testing.T) {
	body := sse(start,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig_omitted"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Sunny."}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":5,"cache_creation_input_tokens":7,"cache_read_input_tokens":100,"output_tokens":9}}`,
		`{"type":"message_stop"}`,
	)
	chunks, err := collect(streamModel(t, body), userReq("weather"))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 4 || chunks[0].Kind != agent.ChunkThinking || chunks[0].Opaque.Data != "sig_omitted" ||
		chunks[1].Kind != agent.ChunkRedactedThinking || chunks[1].Opaque.Data != "EmwKAhgBEgy3va3pzix" || chunks[2].Delta != "Sunny." {
		t.Fatalf("chunks = %+v", chunks)
	}
	if u := chunks[3].Usage; u != (agent.Usage{InputTokens: 112, OutputTokens: 9, TotalTokens: 121, CachedInputTokens: 100, CacheWriteTokens: 7}) {
		t.Fatalf("usage = %+v", u)
	}
}

// An `error` event mid-stream ends the stream with an error the loop can
// report; ping events are ignored.
func TestErrorEvent(t *testing.T) {
	body := sse(start,
		`{"type":"ping"}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	)
	chunks, err := collect(streamModel(t, body), userReq("hi"))
	var apiErr *anthropic.APIError
	if !errors.As(err, &apiErr) || !apiErr.Streaming || apiErr.Type != "overloaded_error" || joined(chunks, agent.ChunkText) != "Hi" {
		t.Fatalf("err %v chunks %+v", err, chunks)
	}
}
