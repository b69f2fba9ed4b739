package anthropic_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/agent/modeltest"
	fake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
)

// The model keeps the contract every agentui model keeps, against the
// validating fake of the Messages API.
func TestContract(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Provider:   anthropic.Provider,
		Model:      "claude-test-5",
		OtherModel: "claude-test-4",
		Start: func(t *testing.T) modeltest.Backend {
			return &contractBackend{srv: fake.New(t)}
		},
	})
}

type contractBackend struct {
	srv   *fake.Server
	calls int
}

// Model thinks adaptively: the fake streams thinking only to a request
// that turns it on.
func (b *contractBackend) Model(cfg modeltest.Config) (agent.Model, error) {
	url := cfg.BaseURL
	if url == "" {
		url = b.srv.URL
	}
	return anthropic.New(cfg.Model, anthropic.WithAPIKey(cfg.APIKey), anthropic.WithBaseURL(url),
		anthropic.WithMaxRetries(cfg.MaxRetries), anthropic.WithThinking(anthropic.ThinkingAdaptive))
}

func (b *contractBackend) Script(answers ...modeltest.Answer) {
	for _, a := range answers {
		b.srv.Reply(b.reply(a))
	}
}

// reply writes an answer as the Messages API does.
func (b *contractBackend) reply(a modeltest.Answer) fake.Reply {
	now := http.Header{"Retry-After-Ms": {"0"}}
	switch a.Fault {
	case modeltest.RateLimited:
		return fake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: a.Message, Header: now}
	case modeltest.ServerError:
		return fake.Reply{Status: 500, ErrorType: "api_error", ErrorMessage: a.Message, Header: now}
	case modeltest.Overloaded:
		return fake.Reply{Status: 529, ErrorType: "overloaded_error", ErrorMessage: a.Message, Header: now}
	case modeltest.InvalidRequest:
		return fake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: a.Message}
	case modeltest.BadKey:
		return fake.Reply{Status: 401, ErrorType: "authentication_error", ErrorMessage: a.Message}
	case modeltest.ContextOverflow:
		return fake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "prompt is too long: 208310 tokens > 200000 maximum. " + a.Message}
	}
	r := fake.Reply{Stall: a.Stall}
	if a.Reasoning != "" {
		r.Content = append(r.Content, fake.Thinking(a.Reasoning))
	}
	if a.Text != "" {
		r.Content = append(r.Content, fake.Text(a.Text))
	}
	if a.Call != nil {
		b.calls++
		r.Content = append(r.Content, fake.ToolUse(fmt.Sprintf("toolu_contract_%d", b.calls), a.Call.Name, a.Call.Args))
	}
	switch a.Stop {
	case modeltest.MaxTokens:
		r.StopReason = "max_tokens"
	case modeltest.ContentFilter:
		r.StopReason = "refusal"
	}
	if u := a.Usage; u != nil {
		r.Usage = &fake.Usage{InputTokens: int(u.Input - u.CachedInput - u.CacheWrite), CacheReadInputTokens: int(u.CachedInput),
			CacheCreationInputTokens: int(u.CacheWrite), OutputTokens: int(u.Output), ThinkingTokens: int(u.Reasoning)}
	}
	return r
}

func (b *contractBackend) Requests() [][]byte {
	var out [][]byte
	for _, r := range b.srv.Requests() {
		out = append(out, r.Body)
	}
	return out
}
