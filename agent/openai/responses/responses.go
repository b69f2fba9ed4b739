// Package responses is an [agent.Model] over OpenAI's Responses API
// (POST /v1/responses), through the official openai-go client.
//
// It streams text, reasoning summaries, function calls (arguments in
// fragments, several in parallel), web search citations, refusals, usage
// (cached input and reasoning tokens) and stop reasons.
//
// It keeps nothing at OpenAI: every request is sent with "store": false
// and the whole conversation, and the server's history holds what a
// reasoning model needs back. Each reasoning item the model returns (its
// id and encrypted_content) becomes a [cmf.Thinking] part tagged
// "openai.responses" and the model's name; the next request sends it back,
// byte-exact and in its place, to the same model only. A conversation
// continued on another model drops those items, which that model could
// not decrypt.
package responses

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/modelcall"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Provider is the tag of the values this package stores with parts
// ([cmf.Opaque.Provider]).
const Provider = "openai.responses"

// Model is a model behind the Responses API.
type Model struct {
	client    oai.Client
	model     string
	reasoning *Reasoning // nil: the model does not reason
	webSearch bool
}

// Reasoning configures a reasoning model.
type Reasoning struct {
	// Effort is how hard the model thinks: "none", "minimal", "low",
	// "medium", "high", "xhigh" (which a model supports varies). "" leaves
	// the model's default.
	Effort string
	// Summary asks for summaries of the reasoning, which are shown as
	// reasoning parts: "auto", "concise" or "detailed". "" asks for none.
	Summary string
}

type config struct {
	apiKey, baseURL string
	httpClient      *http.Client
	maxRetries      int
	reasoning       *Reasoning
	noReasoning     bool
	webSearch       bool
	requestOptions  []option.RequestOption
}

// Option configures a [Model].
type Option func(*config)

// WithAPIKey sets the API key. The default is $OPENAI_API_KEY.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithBaseURL sets the endpoint. The default is $OPENAI_BASE_URL, else
// OpenAI's.
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithHTTPClient sets the HTTP client. The default is a plain
// http.Client. Retries wrap its transport.
func WithHTTPClient(h *http.Client) Option { return func(c *config) { c.httpClient = h } }

// WithMaxRetries sets how many times a request is tried again when it
// was refused before its stream began, with 408, 409, 429 or a 5xx, or
// could not connect; 0 sends each request once, and a negative n makes
// New fail. The default is 2. Each retry waits what the API asks for
// (retry-after-ms, else retry-after), and none is made when it asks for
// more than a minute; without a hint the waits back off from half a
// second. It means the same for every agentui model; openai-go's own
// retries are off.
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = n } }

// WithReasoning says that the model reasons, and how. The default, for the
// names of OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and later,
// codex models), is Reasoning{Summary: "auto"}; other names get no
// reasoning settings, which a model that does not reason refuses. Use it
// for a reasoning model behind another name (a gateway's alias).
func WithReasoning(r Reasoning) Option {
	return func(c *config) { c.reasoning, c.noReasoning = &r, false }
}

// WithoutReasoning says that the model does not reason, whatever its name.
func WithoutReasoning() Option { return func(c *config) { c.reasoning, c.noReasoning = nil, true } }

// WithWebSearch lets the model search the web (OpenAI's web_search tool).
// The pages it cites reach the reply as sources.
func WithWebSearch() Option { return func(c *config) { c.webSearch = true } }

// WithRequestOptions passes openai-go request options through (headers,
// an organization). They come after this package's: an HTTP client or
// retries set here replace the ones WithHTTPClient and WithMaxRetries
// describe.
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(c *config) { c.requestOptions = append(c.requestOptions, opts...) }
}

// New returns a model that calls the named model ("gpt-5", "o4-mini",
// "gpt-4.1", …). It fails without an API key.
func New(model string, opts ...Option) (*Model, error) {
	if model == "" {
		return nil, errors.New("openai responses: no model name")
	}
	c := config{maxRetries: modelcall.DefaultMaxRetries}
	for _, o := range opts {
		o(&c)
	}
	if c.apiKey == "" {
		c.apiKey = os.Getenv("OPENAI_API_KEY")
	}
	if c.apiKey == "" {
		return nil, errors.New("openai responses: no API key: set OPENAI_API_KEY")
	}
	if c.baseURL == "" {
		c.baseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if u, err := url.Parse(c.baseURL); c.baseURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return nil, errors.New("openai responses: the base URL (OPENAI_BASE_URL or WithBaseURL) is not an http(s) URL")
	}
	if err := modelcall.CheckMaxRetries("openai responses", c.maxRetries); err != nil {
		return nil, err
	}
	hc, _ := modelcall.Client(c.httpClient, c.maxRetries)
	ro := []option.RequestOption{option.WithAPIKey(c.apiKey), option.WithHTTPClient(hc), option.WithMaxRetries(0)}
	if c.baseURL != "" {
		ro = append(ro, option.WithBaseURL(c.baseURL))
	}
	m := &Model{client: oai.NewClient(append(ro, c.requestOptions...)...), model: model, reasoning: c.reasoning, webSearch: c.webSearch}
	if m.reasoning == nil && !c.noReasoning && reasons(model) {
		m.reasoning = &Reasoning{Summary: "auto"}
	}
	return m, nil
}

// reasons reports whether a model name is one of OpenAI's reasoning
// models.
func reasons(model string) bool {
	if strings.HasPrefix(model, "gpt-5-chat") {
		return false
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6", "codex"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// APIError is an error from the API: a refused request (StatusCode set),
// or a response that failed after its stream began (StatusCode 0). It
// keeps the status and the error code and type, never the message, which
// can echo part of a key or of the conversation.
//
// It wraps the agent error that says what it means to the user, as for
// every agentui model ([APIError.Unwrap]).
type APIError struct {
	StatusCode int
	Code       string
	Type       string
}

func (e *APIError) Error() string {
	var s string
	switch {
	case e.StatusCode == 0:
		s = "openai responses: the response failed"
	default:
		s = fmt.Sprintf("openai responses: HTTP %d", e.StatusCode)
	}
	switch {
	case e.Unwrap() == agent.ErrContextOverflow:
		s += ": the conversation is longer than the context window"
	case e.Unwrap() == agent.ErrModelAccessDenied:
		s += ": authentication failed or quota used up"
	case e.Unwrap() == agent.ErrModelBusy && e.StatusCode == http.StatusTooManyRequests:
		s += ": rate limited"
	case e.Unwrap() == agent.ErrModelBusy:
		s += ": server busy or failing"
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

// Unwrap returns what the failure means to the user, as for every
// agentui model: agent.ErrContextOverflow, agent.ErrModelBusy (408, 409,
// 429, 5xx; a stream that failed as rate-limited, overloaded or with a
// server error), agent.ErrModelAccessDenied (401, 403, a quota used up) or
// agent.ErrModelRejected (another 4xx); nil for another failure of a
// stream.
func (e *APIError) Unwrap() error {
	switch e.Code {
	case "context_length_exceeded":
		return agent.ErrContextOverflow
	case "insufficient_quota":
		return agent.ErrModelAccessDenied // retrying does not help; the account needs attention
	case "rate_limit_exceeded", "server_is_overloaded", "slow_down", "server_error":
		return agent.ErrModelBusy
	}
	return modelcall.StatusError(e.StatusCode)
}

// ErrIncomplete is returned when the stream ends before the response
// does (the connection was cut).
var ErrIncomplete = errors.New("openai responses: the stream ended before the response was complete")
