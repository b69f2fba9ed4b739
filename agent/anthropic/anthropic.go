// Package anthropic is an [agent.Model] over Anthropic's Messages API,
// through the official Go SDK (API version 2026-10-21).
//
// It streams text, thinking (with its signature), redacted thinking, tool
// calls with their arguments as they are produced (several in parallel),
// web search results and citations as sources, token usage (cache reads
// and writes, thinking tokens) and stop reasons, including pause_turn and
// refusal.
//
// Continuity: what the API needs back is yielded with the part it belongs
// to as a [cmf.Opaque] tagged "anthropic" and the model name: a thinking
// block's signature, a redacted_thinking block's data, the blocks of a
// server-side tool (web search call and results), and the text blocks of a
// reply that cites sources. On the next request, parts whose value comes
// from this model are sent back byte-exact and in their place; values from
// any other model or provider are left out (see docs/models.md for the
// rules and what the API does with each case).
//
// Errors carry the status and error type, never the API's message (it can
// echo request content), and wrap the agent error that says what the
// failure means to the user ([APIError.Unwrap]): rate limits, overload and
// server errors after the retries wrap [agent.ErrModelBusy]; a prompt
// longer than the context window wraps [agent.ErrContextOverflow].
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/modelcall"
	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Provider is the provider tag of the values this package stores
// ([cmf.Opaque.Provider]) and of its finish chunks.
const Provider = "anthropic"

// DefaultMaxTokens is the most tokens one call may produce unless the
// run's settings or [WithMaxTokens] say otherwise. The API requires a
// value; this one suits every current model.
const DefaultMaxTokens = 16384

// interleavedThinking is the beta that lets manual extended thinking think
// between tool calls (adaptive thinking does so without it).
const interleavedThinking = "interleaved-thinking-2025-05-14"

// Model is a Claude model behind the Messages API.
type Model struct {
	client    sdk.Client
	model     string
	maxTokens int64
	thinking  thinkingConfig
	webSearch int64 // max uses of the web search tool; 0: not offered
}

// ThinkingMode says how the model thinks.
type ThinkingMode int

const (
	// ThinkingDefault sends no thinking configuration: the model's own
	// default applies (always-on adaptive thinking on the newest models,
	// off on older ones).
	ThinkingDefault ThinkingMode = iota
	// ThinkingAdaptive lets the model decide when and how much to think,
	// between tool calls too ({"type": "adaptive"}); [WithEffort] steers
	// it. Claude 4.6 and later.
	ThinkingAdaptive
	// ThinkingBudget is manual extended thinking with a token budget
	// ({"type": "enabled"}), for models up to Claude 4.6. It is sent with
	// the interleaved-thinking beta, so the model thinks between tool
	// calls.
	ThinkingBudget
	// ThinkingOff disables thinking ({"type": "disabled"}); the newest
	// models refuse it.
	ThinkingOff
)

type thinkingConfig struct {
	mode    ThinkingMode
	budget  int64
	effort  string
	display string
}

// Option configures a [Model].
type Option func(*config)

type config struct {
	key, baseURL string
	httpClient   *http.Client
	maxRetries   int
	maxTokens    int64
	thinking     thinkingConfig
	webSearch    int64
	sdkOptions   []option.RequestOption
}

// WithAPIKey sets the API key. The default is $ANTHROPIC_API_KEY.
func WithAPIKey(key string) Option { return func(c *config) { c.key = key } }

// WithBaseURL sets the API's base URL. The default is $ANTHROPIC_BASE_URL,
// else Anthropic's.
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithHTTPClient sets the HTTP client. The default is a plain
// http.Client. Retries wrap its transport.
func WithHTTPClient(h *http.Client) Option { return func(c *config) { c.httpClient = h } }

// WithMaxRetries sets how many times a request is tried again when it
// was refused before its stream began, with 408, 409, 429 or a 5xx (529
// overloaded among them), or could not connect; 0 sends each request
// once, and a negative n makes New fail. The default is 2. Each retry
// waits what the API asks for (retry-after-ms, else retry-after), and
// none is made when it asks for more than a minute; without a hint the
// waits back off from half a second. It means the same for every agentui
// model; the SDK's own retries are off.
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = n } }

// WithMaxTokens sets the most tokens one call may produce when the run's
// settings do not say (default [DefaultMaxTokens]).
func WithMaxTokens(n int64) Option { return func(c *config) { c.maxTokens = n } }

// WithThinking sets the thinking mode (default [ThinkingDefault]). For
// [ThinkingBudget] use [WithThinkingBudget].
func WithThinking(mode ThinkingMode) Option { return func(c *config) { c.thinking.mode = mode } }

// WithThinkingBudget turns on manual extended thinking with a budget of
// tokens (at least 1024), for models that have no adaptive thinking.
func WithThinkingBudget(tokens int64) Option {
	return func(c *config) { c.thinking.mode, c.thinking.budget = ThinkingBudget, tokens }
}

// WithEffort sets output_config.effort: "low", "medium", "high", "xhigh"
// or "max" (default: the model's).
func WithEffort(effort string) Option { return func(c *config) { c.thinking.effort = effort } }

// WithThinkingDisplay sets how thinking is returned: "summarized" (shown
// as reasoning) or "omitted" (empty thinking blocks that keep only their
// signature). The default is the model's. It needs a thinking mode.
func WithThinkingDisplay(display string) Option {
	return func(c *config) { c.thinking.display = display }
}

// WithWebSearch offers the model Anthropic's server-side web search tool,
// used at most maxUses times per call. Its results reach the reply as
// sources.
func WithWebSearch(maxUses int64) Option { return func(c *config) { c.webSearch = maxUses } }

// WithRequestOptions passes SDK request options through. They come after
// this package's: an HTTP client or retries set here replace the ones
// WithHTTPClient and WithMaxRetries describe.
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(c *config) { c.sdkOptions = append(c.sdkOptions, opts...) }
}

// New returns a model that calls the named Claude model
// ("claude-sonnet-5-5", …). It fails without an API key or with a
// configuration the API would refuse on every call.
func New(model string, opts ...Option) (*Model, error) {
	if model == "" {
		return nil, errors.New("anthropic: no model name")
	}
	c := config{key: os.Getenv("ANTHROPIC_API_KEY"), baseURL: os.Getenv("ANTHROPIC_BASE_URL"), maxTokens: DefaultMaxTokens, maxRetries: modelcall.DefaultMaxRetries}
	for _, o := range opts {
		o(&c)
	}
	if c.key == "" {
		return nil, errors.New("anthropic: no API key: set ANTHROPIC_API_KEY")
	}
	if c.maxTokens < 1 {
		return nil, fmt.Errorf("anthropic: max tokens must be at least 1, got %d", c.maxTokens)
	}
	t := c.thinking
	switch {
	case t.mode < ThinkingDefault || t.mode > ThinkingOff:
		return nil, fmt.Errorf("anthropic: unknown thinking mode %d", t.mode)
	case t.mode == ThinkingBudget && t.budget < 1024:
		return nil, fmt.Errorf("anthropic: a thinking budget must be at least 1024 tokens, got %d", t.budget)
	case t.display != "" && t.display != "summarized" && t.display != "omitted":
		return nil, fmt.Errorf("anthropic: thinking display must be \"summarized\" or \"omitted\", got %q", t.display)
	case t.display != "" && t.mode != ThinkingAdaptive && t.mode != ThinkingBudget:
		return nil, errors.New("anthropic: a thinking display needs adaptive thinking or a thinking budget")
	}
	switch t.effort {
	case "", "low", "medium", "high", "xhigh", "max":
	default:
		return nil, fmt.Errorf("anthropic: effort must be low, medium, high, xhigh or max, got %q", t.effort)
	}
	if err := modelcall.CheckMaxRetries("anthropic", c.maxRetries); err != nil {
		return nil, err
	}
	hc, _ := modelcall.Client(c.httpClient, c.maxRetries)
	ro := []option.RequestOption{option.WithAPIKey(c.key), option.WithHTTPClient(hc), option.WithMaxRetries(0)}
	if c.baseURL != "" {
		ro = append(ro, option.WithBaseURL(c.baseURL))
	}
	ro = append(ro, c.sdkOptions...)
	return &Model{client: sdk.NewClient(ro...), model: model, maxTokens: c.maxTokens, thinking: t, webSearch: c.webSearch}, nil
}

// Name is the model's name, as requests send it and stored values name it.
func (m *Model) Name() string { return m.model }

// APIError is an error answer from the API. It keeps the status, the error
// type ("rate_limit_error", "overloaded_error", "invalid_request_error", …)
// and the request id, not the message.
type APIError struct {
	StatusCode int
	Type       string
	RequestID  string
	// Streaming says the error came as an `error` event after the stream
	// had started (the reply so far is partial).
	Streaming bool
	kind      error // one of the agent errors for a failed call, or nil
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("anthropic: HTTP %d", e.StatusCode)
	if e.Streaming {
		s = "anthropic: the stream failed"
	}
	switch {
	case e.kind == agent.ErrContextOverflow:
		s += ": the prompt is longer than the model's context window"
	case e.Type == "overloaded_error":
		s += ": overloaded"
	case e.Type == "rate_limit_error":
		s += ": rate limited"
	case e.kind == agent.ErrModelAccessDenied:
		s += ": authentication failed"
	case e.kind == agent.ErrModelBusy:
		s += ": server error"
	}
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.RequestID != "" {
		s += " request " + e.RequestID
	}
	return s
}

// Unwrap lets errors.Is find what the failure means to the user, as for
// every agentui model: [agent.ErrContextOverflow], [agent.ErrModelBusy]
// (429, 529, 5xx, and the overloaded, rate-limit and API errors a stream
// carries), [agent.ErrModelAccessDenied] (401, 403) or
// [agent.ErrModelRejected] (another 4xx).
func (e *APIError) Unwrap() error { return e.kind }

// ErrIncomplete is returned when the stream ends before message_stop (the
// connection was cut).
var ErrIncomplete = errors.New("anthropic: the stream ended before the message was complete")

// Stream makes one streaming Messages call.
func (m *Model) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		params, opts := m.params(req)
		stream := m.client.Messages.NewStreaming(ctx, params, opts...)
		defer stream.Close()
		d := decoder{model: m.model, yield: yield}
		for stream.Next() {
			if !d.event(stream.Current()) {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(agent.Chunk{}, apiError(ctx, err))
			return
		}
		if !d.done {
			err := ErrIncomplete
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			yield(agent.Chunk{}, err)
			return
		}
		yield(d.finish(), nil)
	}
}

// apiError turns an SDK error into one that names what happened without
// the API's message.
func apiError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var e *sdk.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("anthropic: %w", err)
	}
	out := &APIError{StatusCode: e.StatusCode, Type: string(e.Type()), RequestID: e.RequestID}
	if e.StatusCode == 0 || e.StatusCode == http.StatusOK {
		// An `error` event mid-stream: the SDK decodes its body into an
		// Error without a status.
		out.Streaming = true
	}
	switch out.Type {
	case "invalid_request_error":
		if contextOverflow(e.Message) {
			out.kind = agent.ErrContextOverflow
		}
	case "overloaded_error", "rate_limit_error", "api_error", "timeout_error":
		// Also when the stream carries them, after it began.
		out.kind = agent.ErrModelBusy
	case "authentication_error", "permission_error":
		out.kind = agent.ErrModelAccessDenied
	}
	if out.kind == nil {
		out.kind = modelcall.StatusError(e.StatusCode)
	}
	return out
}

// contextOverflow reports whether an invalid_request_error's message says
// the prompt does not fit: "prompt is too long: 208310 tokens > 200000
// maximum", or, from older models, "input length and `max_tokens` exceed
// context limit".
func contextOverflow(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit")
}
