// Package gemini is an [agent.Model] over the Gemini Developer API
// (generativelanguage, streamGenerateContent over SSE), through Google's
// official Go SDK, google.golang.org/genai, which builds, sends and
// retries each request and reads its errors. The streamed responses this
// package reads itself, at a fifth of the SDK's allocations (tap.go).
//
// It streams text, thought summaries (as reasoning parts), function calls
// (the Developer API sends each call whole, with its arguments), sources
// from Google Search grounding, usage (cached, reasoning and tool-prompt
// tokens) and finish reasons.
//
// Continuity: Gemini returns thought signatures on the parts of a reply
// (the first function call of a step; a text or thought part). Each is
// kept, tagged "gemini" and the model's id ([cmf.Opaque]), with the part
// that carried it, and sent back on that same part, byte-exact, when the
// conversation goes to the same model again. Gemini 3 refuses a request
// whose current turn has a step whose first function call lacks its
// signature; signatures from another model are refused as corrupted. So a
// value from another provider or model is never sent, and the first call
// of a step of the current turn that another model made carries Google's
// documented "skip_thought_signature_validator" value instead (see
// docs/models.md for why).
package gemini

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"os"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/modelcall"
	"github.com/agentui/agentui/cmf"
	"google.golang.org/genai"
)

// Provider is the provider tag of the opaque values this package keeps
// ([cmf.Opaque.Provider]).
const Provider = "gemini"

// otelProvider is OpenTelemetry's gen_ai.provider.name for the Gemini
// API, reported with each finished call.
const otelProvider = "gcp.gemini"

// Model is a Gemini model.
type Model struct {
	client *genai.Client
	model  string
	cfg    config
	retry  *modelcall.Transport
}

type config struct {
	apiKey          string
	baseURL         string
	httpClient      *http.Client
	retries         int
	includeThoughts bool
	budget          *int32
	level           genai.ThinkingLevel
	search          bool
}

// Option configures a [Model].
type Option func(*config)

// WithAPIKey sets the API key. The default is $GOOGLE_API_KEY, else
// $GEMINI_API_KEY (the SDK's order).
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithBaseURL sets the API's base URL (the SDK's HTTPOptions.BaseURL),
// e.g. a proxy's. The default is $GOOGLE_GEMINI_BASE_URL, else
// https://generativelanguage.googleapis.com/.
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithHTTPClient sets the HTTP client. The default is a plain
// http.Client. Retries wrap its transport.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.httpClient = hc } }

// WithMaxRetries sets how many times a request is tried again when it
// was refused before its reply began, with 408, 409, 429 or a 5xx, or
// could not connect; 0 sends each request once, and a negative n makes
// New fail. The default is 2. Each retry waits what the API asks for (a
// RetryInfo detail, else retry-after-ms or Retry-After), and none is made
// when it asks for more than a minute; without a hint the waits back off
// from half a second. It means the same for every agentui model.
func WithMaxRetries(n int) Option { return func(c *config) { c.retries = n } }

// WithThinkingBudget sets the reasoning budget in tokens (Gemini 2.5:
// 0 turns thinking off where the model allows, -1 lets the model decide).
// The default is the model's. It excludes WithThinkingLevel.
func WithThinkingBudget(tokens int32) Option {
	return func(c *config) { c.budget, c.level = &tokens, "" }
}

// WithThinkingLevel sets how much the model reasons (Gemini 3: "minimal",
// "low", "medium", "high"). The default is the model's. It excludes
// WithThinkingBudget.
func WithThinkingLevel(level string) Option {
	return func(c *config) { c.level, c.budget = genai.ThinkingLevel(upper(level)), nil }
}

// WithIncludeThoughts sets whether the model's thought summaries are
// streamed (as reasoning). The default is true.
func WithIncludeThoughts(on bool) Option { return func(c *config) { c.includeThoughts = on } }

// WithGoogleSearch lets the model ground its answers in Google Search;
// the pages it cites stream as sources.
func WithGoogleSearch() Option { return func(c *config) { c.search = true } }

// New returns a model that calls the named Gemini model
// ("gemini-3-flash-preview", "gemini-2.5-pro", …). It fails without an
// API key.
func New(model string, opts ...Option) (*Model, error) {
	if model == "" {
		return nil, errors.New("gemini: no model name")
	}
	cfg := config{retries: modelcall.DefaultMaxRetries, includeThoughts: true}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.apiKey == "" {
		cfg.apiKey = os.Getenv("GOOGLE_API_KEY")
	}
	if cfg.apiKey == "" {
		cfg.apiKey = os.Getenv("GEMINI_API_KEY")
	}
	if cfg.apiKey == "" {
		return nil, errors.New("gemini: no API key (set GEMINI_API_KEY or GOOGLE_API_KEY)")
	}
	if err := modelcall.CheckMaxRetries("gemini", cfg.retries); err != nil {
		return nil, err
	}
	switch cfg.level {
	case "", genai.ThinkingLevelMinimal, genai.ThinkingLevelLow, genai.ThinkingLevelMedium, genai.ThinkingLevelHigh:
	default:
		return nil, errors.New("gemini: the thinking level must be minimal, low, medium or high")
	}
	hc, rt := modelcall.Client(cfg.httpClient, cfg.retries)
	rt.Hint = retryInfo
	hc.Transport = bodyTap{next: hc.Transport}
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.apiKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.baseURL},
	})
	if err != nil {
		// The SDK's text can carry the configuration, key included.
		return nil, errors.New("gemini: the client could not be set up")
	}
	return &Model{client: client, model: model, cfg: cfg, retry: rt}, nil
}

// Stream makes one streaming generateContent call.
func (m *Model) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		contents, config, err := m.request(req)
		if err != nil {
			yield(agent.Chunk{}, err)
			return
		}
		tap := &tapped{}
		defer tap.close()
		for _, err := range m.client.Models.GenerateContentStream(context.WithValue(ctx, tapKey{}, tap), m.model, contents, config) {
			if err != nil {
				yield(agent.Chunk{}, streamError(ctx, err))
				return
			}
		}
		if tap.body == nil { // neither an error nor a body: nothing was streamed
			yield(agent.Chunk{}, ErrIncomplete)
			return
		}
		d := decoder{model: m.model}
		if !d.read(ctx, tap.body, yield) {
			return
		}
		if ctx.Err() != nil {
			yield(agent.Chunk{}, ctx.Err())
			return
		}
		fin, err := d.finish()
		if err != nil {
			yield(agent.Chunk{}, err)
			return
		}
		yield(fin, nil)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// stopReason maps a finish reason. Refusals (safety filters, recitation,
// blocklists) are StopRefusal; reasons that mean the reply went wrong are
// a [FinishError].
func stopReason(reason genai.FinishReason, calls bool) (cmf.StopReason, error) {
	switch reason {
	case genai.FinishReasonStop:
		if calls {
			return cmf.StopCall, nil
		}
		return cmf.StopEnd, nil
	case genai.FinishReasonMaxTokens:
		return cmf.StopMaxTokens, nil
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonLanguage,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return cmf.StopRefusal, nil
	}
	return "", &FinishError{Reason: string(reason)}
}
