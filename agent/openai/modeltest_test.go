package openai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/modeltest"
	"github.com/agentui/agentui/agent/openai"
)

// The model keeps the contract every agentui model keeps, against an
// endpoint that answers as OpenAI's Chat Completions does.
func TestContract(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Model: "gpt-test",
		Start: func(t *testing.T) modeltest.Backend {
			f := &fakeServer{t: t}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			return &contractBackend{f: f, url: srv.URL + "/v1"}
		},
		Absent: map[modeltest.Capability]string{
			modeltest.ProviderValues: "Chat Completions carries no reasoning state to send back",
			modeltest.CacheWrites:    "Chat Completions reports the tokens read from its prompt cache, never those written",
		},
	})
}

type contractBackend struct {
	f     *fakeServer
	url   string
	calls int
}

func (b *contractBackend) Model(cfg modeltest.Config) (agent.Model, error) {
	url := cfg.BaseURL
	if url == "" {
		url = b.url
	}
	return openai.New(cfg.Model, openai.WithAPIKey(cfg.APIKey), openai.WithBaseURL(url), openai.WithMaxRetries(cfg.MaxRetries))
}

func (b *contractBackend) Script(answers ...modeltest.Answer) {
	for _, a := range answers {
		b.f.script(b.response(a))
	}
}

// response writes an answer as Chat Completions does; a refusal worth
// retrying asks for a retry at once (retry-after-ms).
func (b *contractBackend) response(a modeltest.Answer) response {
	refuse := func(status int, typ, code string, msg string) response {
		e := &apiError{Message: msg, Type: typ}
		if code != "" {
			e.Code = &code
		}
		return response{status: status, err: e, header: http.Header{"Retry-After-Ms": {"0"}}}
	}
	switch a.Fault {
	case modeltest.RateLimited:
		return refuse(429, "requests", "rate_limit_exceeded", a.Message)
	case modeltest.ServerError:
		return refuse(500, "server_error", "", a.Message)
	case modeltest.Overloaded:
		return refuse(503, "server_error", "", a.Message)
	case modeltest.InvalidRequest:
		return refuse(400, "invalid_request_error", "", a.Message)
	case modeltest.BadKey:
		return refuse(401, "invalid_request_error", "invalid_api_key", a.Message)
	case modeltest.ContextOverflow:
		return refuse(400, "invalid_request_error", "context_length_exceeded", "This model's maximum context length is 128000 tokens. "+a.Message)
	}
	delta := func(d map[string]any) string {
		b, _ := json.Marshal(d)
		return chunk(string(b), "")
	}
	r := response{stall: a.Stall, chunks: []string{delta(map[string]any{"role": "assistant", "content": ""})}}
	if a.Reasoning != "" {
		r.chunks = append(r.chunks, delta(map[string]any{"reasoning_content": a.Reasoning}))
	}
	if a.Text != "" {
		r.chunks = append(r.chunks, delta(map[string]any{"content": a.Text}))
	}
	finish := "stop"
	if a.Call != nil {
		b.calls++
		r.chunks = append(r.chunks, toolChunk(0, fmt.Sprintf("call_contract_%d", b.calls), a.Call.Name, a.Call.Args))
		finish = "tool_calls"
	}
	switch a.Stop {
	case modeltest.MaxTokens:
		finish = "length"
	case modeltest.ContentFilter:
		finish = "content_filter"
	}
	r.chunks = append(r.chunks, chunk(`{}`, finish))
	u := modeltest.Usage{Input: 20, Output: 8}
	if a.Usage != nil {
		u = *a.Usage
	}
	r.chunks = append(r.chunks, fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test-0601","choices":[],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"completion_tokens_details":{"reasoning_tokens":%d},"prompt_tokens_details":{"cached_tokens":%d}}}`,
		u.Input, u.Output, u.Input+u.Output, u.Reasoning, u.CachedInput))
	return r
}

func (b *contractBackend) Requests() [][]byte {
	b.f.mu.Lock()
	defer b.f.mu.Unlock()
	return append([][]byte(nil), b.f.raw...)
}
