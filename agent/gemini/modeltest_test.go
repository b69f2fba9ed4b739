package gemini_test

import (
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/agent/modeltest"
	fake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
)

// The model keeps the contract every agentui model keeps, against the
// validating fake of the Gemini API.
func TestContract(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Provider:   gemini.Provider,
		Model:      "gemini-3-flash-preview",
		OtherModel: "gemini-3-pro-preview",
		Start: func(t *testing.T) modeltest.Backend {
			return &contractBackend{srv: fake.New(t)}
		},
		Absent: map[modeltest.Capability]string{
			modeltest.CacheWrites: "the Gemini API reports the tokens its implicit cache read, never those it wrote",
		},
	})
}

type contractBackend struct{ srv *fake.Server }

func (b *contractBackend) Model(cfg modeltest.Config) (agent.Model, error) {
	url := cfg.BaseURL
	if url == "" {
		url = b.srv.URL
	}
	return gemini.New(cfg.Model, gemini.WithAPIKey(cfg.APIKey), gemini.WithBaseURL(url), gemini.WithMaxRetries(cfg.MaxRetries))
}

func (b *contractBackend) Script(answers ...modeltest.Answer) {
	for _, a := range answers {
		b.srv.Script(reply(a))
	}
}

// reply writes an answer as the Gemini API does; a refusal worth
// retrying asks for a retry at once (its RetryInfo).
func reply(a modeltest.Answer) fake.Reply {
	fail := func(code int, status string) fake.Reply {
		return fake.Reply{Fail: &fake.Failure{Code: code, Status: status, Message: a.Message, RetryDelay: "0s"}}
	}
	switch a.Fault {
	case modeltest.RateLimited:
		return fail(429, "RESOURCE_EXHAUSTED")
	case modeltest.ServerError:
		return fail(500, "INTERNAL")
	case modeltest.Overloaded:
		return fail(503, "UNAVAILABLE")
	case modeltest.InvalidRequest:
		return fake.InvalidArgument(a.Message)
	case modeltest.BadKey:
		return fake.Reply{Fail: &fake.Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: a.Message,
			Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}}}}
	case modeltest.ContextOverflow:
		r := fake.Overflow(1_200_000, 1_048_576)
		r.Fail.Message += " " + a.Message
		return r
	}
	r := fake.Reply{Stall: a.Stall}
	if a.Reasoning != "" {
		r.Parts = append(r.Parts, fake.Thought(a.Reasoning))
	}
	if a.Text != "" {
		r.Parts = append(r.Parts, fake.Text(a.Text))
	}
	if a.Call != nil {
		r.Parts = append(r.Parts, fake.CallPart(a.Call.Name, a.Call.Args))
	}
	switch a.Stop {
	case modeltest.MaxTokens:
		r.Finish = "MAX_TOKENS"
	case modeltest.ContentFilter:
		r.Finish = "SAFETY"
	}
	if u := a.Usage; u != nil {
		r.Usage = &fake.Usage{PromptTokenCount: int(u.Input), CachedContentTokenCount: int(u.CachedInput),
			CandidatesTokenCount: int(u.Output - u.Reasoning), ThoughtsTokenCount: int(u.Reasoning)}
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
