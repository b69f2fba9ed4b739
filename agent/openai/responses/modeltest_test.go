package responses_test

import (
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/modeltest"
	"github.com/agentui/agentui/agent/openai/responses"
	fake "github.com/agentui/agentui/internal/testkit/fakes/responses"
)

// The model keeps the contract every agentui model keeps, against the
// validating fake of the Responses API.
func TestContract(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Provider:   responses.Provider,
		Model:      "gpt-5",
		OtherModel: "o4-mini",
		Start: func(t *testing.T) modeltest.Backend {
			return &contractBackend{srv: fake.New(t)}
		},
	})
}

type contractBackend struct{ srv *fake.Server }

func (b *contractBackend) Model(cfg modeltest.Config) (agent.Model, error) {
	url := cfg.BaseURL
	if url == "" {
		url = b.srv.URL
	}
	return responses.New(cfg.Model, responses.WithAPIKey(cfg.APIKey), responses.WithBaseURL(url), responses.WithMaxRetries(cfg.MaxRetries))
}

func (b *contractBackend) Script(answers ...modeltest.Answer) {
	for _, a := range answers {
		b.srv.Enqueue(reply(a))
	}
}

// reply writes an answer as the Responses API does. A refusal worth
// retrying asks for a retry after a millisecond, the shortest the fake
// writes.
func reply(a modeltest.Answer) fake.Reply {
	refuse := func(status int, typ, code string) fake.Reply {
		return fake.Reply{Status: status, RetryAfter: time.Millisecond, Error: &fake.Error{Message: a.Message, Type: typ, Code: code}}
	}
	switch a.Fault {
	case modeltest.RateLimited:
		return refuse(429, "requests", "rate_limit_exceeded")
	case modeltest.ServerError:
		return refuse(500, "server_error", "")
	case modeltest.Overloaded:
		return refuse(503, "server_error", "")
	case modeltest.InvalidRequest:
		return refuse(400, "invalid_request_error", "")
	case modeltest.BadKey:
		return refuse(401, "invalid_request_error", "invalid_api_key")
	case modeltest.ContextOverflow:
		r := fake.ContextOverflow()
		r.Error.Message += " " + a.Message
		return r
	}
	r := fake.Reply{Stall: a.Stall}
	if a.Reasoning != "" {
		r.Output = append(r.Output, fake.Reasoning(a.Reasoning))
	}
	if a.Text != "" {
		r.Output = append(r.Output, fake.Text(a.Text))
	}
	if a.Call != nil {
		r.Output = append(r.Output, fake.Call(a.Call.Name, a.Call.Args))
	}
	switch a.Stop {
	case modeltest.MaxTokens:
		r.Incomplete = "max_output_tokens"
	case modeltest.ContentFilter:
		r.Incomplete = "content_filter"
	}
	if u := a.Usage; u != nil {
		r.Usage = &fake.Usage{InputTokens: u.Input, CachedTokens: u.CachedInput, CacheWriteTokens: u.CacheWrite, OutputTokens: u.Output, ReasoningTokens: u.Reasoning}
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
