// Package openai is an [agent.Model] over any OpenAI-compatible Chat
// Completions endpoint (OpenAI, Azure-compatible gateways, vLLM, Ollama, LM
// Studio), through the official openai-go client.
//
// It streams text, tool calls (arguments assembled from fragments, several
// in parallel), reasoning text when the server sends "reasoning_content"
// (or "reasoning"), token usage and finish reasons. Errors from the server
// become [*APIError]s that carry the status and error code but never the
// server's message, which for authentication failures can echo part of the
// key; each wraps the agent error that says what it means to the user.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/content"
	"github.com/agentui/agentui/agent/internal/modelcall"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Model is a chat model behind an OpenAI-compatible endpoint.
type Model struct {
	client oai.Client
	model  string
}

// Option configures a [Model].
type Option func(*config)

type config struct {
	httpClient *http.Client
	maxRetries int
	opts       []option.RequestOption
}

// WithAPIKey sets the API key. The default is $OPENAI_API_KEY.
func WithAPIKey(key string) Option { return with(option.WithAPIKey(key)) }

// WithBaseURL sets the endpoint, e.g. "http://localhost:11434/v1" for
// Ollama. The default is $OPENAI_BASE_URL, else OpenAI's.
func WithBaseURL(url string) Option { return with(option.WithBaseURL(url)) }

// WithHTTPClient sets the HTTP client. The default is a plain
// http.Client. Retries wrap its transport.
func WithHTTPClient(c *http.Client) Option { return func(cfg *config) { cfg.httpClient = c } }

// WithMaxRetries sets how many times a request is tried again when it
// was refused before its stream began, with 408, 409, 429 or a 5xx, or
// could not connect; 0 sends each request once, and a negative n makes
// New fail. The default is 2. Each retry waits what the endpoint asks
// for (retry-after-ms, else Retry-After), and none is made when it asks
// for more than a minute; without a hint the waits back off from half a
// second. It means the same for every agentui model; openai-go's own
// retries are off.
func WithMaxRetries(n int) Option { return func(cfg *config) { cfg.maxRetries = n } }

// WithRequestOptions passes any openai-go request options through. They
// come after this package's: an HTTP client or retries set here replace
// the ones WithHTTPClient and WithMaxRetries describe.
func WithRequestOptions(opts ...option.RequestOption) Option { return with(opts...) }

func with(opts ...option.RequestOption) Option {
	return func(cfg *config) { cfg.opts = append(cfg.opts, opts...) }
}

// New returns a model that calls the named model ("gpt-4o-mini",
// "llama3.2", …). It fails for a negative WithMaxRetries.
func New(model string, opts ...Option) (*Model, error) {
	if model == "" {
		return nil, errors.New("openai: no model name")
	}
	cfg := config{maxRetries: modelcall.DefaultMaxRetries}
	for _, o := range opts {
		o(&cfg)
	}
	if err := modelcall.CheckMaxRetries("openai", cfg.maxRetries); err != nil {
		return nil, err
	}
	hc, _ := modelcall.Client(cfg.httpClient, cfg.maxRetries)
	ro := append([]option.RequestOption{option.WithHTTPClient(hc), option.WithMaxRetries(0)}, cfg.opts...)
	return &Model{client: oai.NewClient(ro...), model: model}, nil
}

// APIError is an error response from the endpoint. It keeps the status and
// the error code and type, not the message.
type APIError struct {
	StatusCode int
	Code       string
	Type       string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("openai: HTTP %d", e.StatusCode)
	switch {
	case e.Code == "context_length_exceeded":
		s += ": the conversation is longer than the context window"
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		s += ": authentication failed"
	case e.StatusCode == http.StatusTooManyRequests:
		s += ": rate limited"
	case e.StatusCode >= 500:
		s += ": server error"
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	return s
}

// Unwrap returns what the refusal means to the user, as for every agentui
// model: agent.ErrContextOverflow, agent.ErrModelBusy (408, 409, 429,
// 5xx), agent.ErrModelAccessDenied (401, 403, a quota used up) or
// agent.ErrModelRejected (another 4xx).
func (e *APIError) Unwrap() error {
	switch e.Code {
	case "context_length_exceeded":
		return agent.ErrContextOverflow
	case "insufficient_quota":
		return agent.ErrModelAccessDenied // retrying does not help; the account needs attention
	}
	return modelcall.StatusError(e.StatusCode)
}

// ErrIncomplete is returned when the stream ends before the model said it
// was done (the connection was cut).
var ErrIncomplete = errors.New("openai: the stream ended before the response was complete")

// Stream makes one streaming chat completion.
func (m *Model) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		params := oai.ChatCompletionNewParams{
			Model:         m.model,
			Messages:      messages(req),
			StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
		}
		if len(req.Tools) > 0 {
			params.Tools = tools(req.Tools)
		}
		if st := req.Settings; st != nil {
			if st.Temperature != nil {
				params.Temperature = oai.Float(*st.Temperature)
			}
			if st.TopP != nil {
				params.TopP = oai.Float(*st.TopP)
			}
			if st.MaxOutputTokens != nil {
				params.MaxCompletionTokens = oai.Int(*st.MaxOutputTokens)
			}
			if st.Seed != nil {
				params.Seed = oai.Int(*st.Seed)
			}
		}
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()

		callIDs := map[int64]string{} // tool call index → id
		var finish, model string
		var usage agent.Usage
		for stream.Next() {
			chunk := stream.Current()
			if chunk.Model != "" {
				model = chunk.Model
			}
			if chunk.JSON.Usage.Valid() {
				u := chunk.Usage
				usage = agent.Usage{
					InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
					ReasoningTokens:   u.CompletionTokensDetails.ReasoningTokens,
					CachedInputTokens: u.PromptTokensDetails.CachedTokens,
				}
			}
			for _, choice := range chunk.Choices {
				if choice.Index != 0 {
					continue
				}
				if !deltaChunks(&choice.Delta, callIDs, yield) {
					return
				}
				if choice.FinishReason != "" {
					finish = choice.FinishReason
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(agent.Chunk{}, streamError(ctx, err))
			return
		}
		if finish == "" {
			err := ErrIncomplete
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			yield(agent.Chunk{}, err)
			return
		}
		yield(agent.Chunk{Kind: agent.ChunkFinish, StopReason: stopReason(finish), Usage: usage, Model: model, Provider: "openai"}, nil)
	}
}

// deltaChunks yields the chunks of one streamed delta: reasoning, text,
// tool call fragments.
func deltaChunks(d *oai.ChatCompletionChunkChoiceDelta, callIDs map[int64]string, yield func(agent.Chunk, error) bool) bool {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		if f, ok := d.JSON.ExtraFields[key]; ok {
			var text string
			if json.Unmarshal([]byte(f.Raw()), &text) == nil && text != "" {
				if !yield(agent.Chunk{Kind: agent.ChunkThinking, Delta: text}, nil) {
					return false
				}
			}
		}
	}
	if d.Content != "" && !yield(agent.Chunk{Kind: agent.ChunkText, Delta: d.Content}, nil) {
		return false
	}
	for _, tc := range d.ToolCalls {
		id, seen := callIDs[tc.Index]
		if !seen {
			id = tc.ID
			if id == "" {
				// Some endpoints send no ids. A made-up one must still be
				// unique in the whole chat, where "call_0" of every reply
				// would be two calls sharing an id.
				id = "call_" + ids.New()
			}
			callIDs[tc.Index] = id
		}
		c := agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, Delta: tc.Function.Arguments}
		if !seen {
			c.ToolName = tc.Function.Name
		}
		if !yield(c, nil) {
			return false
		}
	}
	return true
}

func streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		return &APIError{StatusCode: apiErr.StatusCode, Code: apiErr.Code, Type: apiErr.Type}
	}
	return fmt.Errorf("openai: %w", err)
}

// stopReason maps a finish reason; the content filter's is a refusal, as
// every agentui model reports its provider's filter.
func stopReason(finish string) cmf.StopReason {
	switch finish {
	case "length":
		return cmf.StopMaxTokens
	case "tool_calls", "function_call":
		return cmf.StopCall
	case "content_filter":
		return cmf.StopRefusal
	}
	return cmf.StopEnd
}

func tools(specs []agent.ToolSpec) []oai.ChatCompletionToolUnionParam {
	out := make([]oai.ChatCompletionToolUnionParam, 0, len(specs))
	for _, s := range specs {
		params := shared.FunctionParameters{"type": "object"}
		if len(s.Parameters) > 0 {
			var p map[string]any
			if json.Unmarshal(s.Parameters, &p) == nil {
				params = p
			}
		}
		fn := shared.FunctionDefinitionParam{Name: s.Name, Parameters: params}
		if s.Description != "" {
			fn.Description = oai.String(s.Description)
		}
		out = append(out, oai.ChatCompletionFunctionTool(fn))
	}
	return out
}

// messages converts CMF to chat messages. Parts the API cannot take as
// input (thinking, references) are left out; media it cannot take inline
// are named in text, by URL or type: their bytes as text would only cost
// tokens.
func messages(req *agent.Request) []oai.ChatCompletionMessageParamUnion {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, req.Len())
	for m := range req.All() {
		switch m.Role {
		case cmf.RoleSystem:
			out = append(out, oai.SystemMessage(m.Text()))
		case cmf.RoleDeveloper:
			out = append(out, oai.DeveloperMessage(m.Text()))
		case cmf.RoleUser:
			out = append(out, userMessage(m))
		case cmf.RoleAssistant:
			if a, ok := assistantMessage(m); ok {
				out = append(out, a)
			}
		case cmf.RoleTool:
			for _, p := range m.Content {
				if r, ok := p.(cmf.ToolResult); ok {
					out = append(out, oai.ToolMessage(content.ResultTextSayingError(r), r.ToolCallID))
				}
			}
		}
	}
	return out
}

func userMessage(m *cmf.Message) oai.ChatCompletionMessageParamUnion {
	onlyText := true
	for _, p := range m.Content {
		if _, ok := p.(cmf.Text); !ok {
			onlyText = false
		}
	}
	if onlyText {
		return oai.UserMessage(m.Text())
	}
	var parts []oai.ChatCompletionContentPartUnionParam
	for _, p := range m.Content {
		switch p := p.(type) {
		case cmf.Text:
			parts = append(parts, oai.TextContentPart(p.Text))
		case cmf.Image:
			parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: content.DataURL(p.MediaSource)}))
		case cmf.Audio:
			if format := audioFormat(p.MediaType); p.Type == cmf.SourceBase64 && format != "" {
				parts = append(parts, oai.InputAudioContentPart(oai.ChatCompletionContentPartInputAudioInputAudioParam{Data: p.Data, Format: format}))
			} else {
				parts = append(parts, oai.TextContentPart("[audio: "+content.MediaName(p.MediaSource)+"]"))
			}
		case cmf.Document:
			if p.Type == cmf.SourceBase64 {
				f := oai.ChatCompletionContentPartFileFileParam{FileData: oai.String(content.DataURL(p.MediaSource))}
				if p.Title != "" {
					f.Filename = oai.String(p.Title)
				}
				parts = append(parts, oai.FileContentPart(f))
			} else {
				parts = append(parts, oai.TextContentPart("[document: "+content.MediaName(p.MediaSource)+"]"))
			}
		case cmf.Video:
			parts = append(parts, oai.TextContentPart("[video: "+content.MediaName(p.MediaSource)+"]"))
		case cmf.Resource:
			if text, ok := content.ResourceText(p); ok {
				parts = append(parts, oai.TextContentPart(text))
			}
		}
	}
	return oai.UserMessage(parts)
}

func assistantMessage(m *cmf.Message) (oai.ChatCompletionMessageParamUnion, bool) {
	var a oai.ChatCompletionAssistantMessageParam
	if text := m.Text(); text != "" {
		a.Content.OfString = oai.String(text)
	}
	for _, p := range m.Content {
		if tc, ok := p.(cmf.ToolCall); ok {
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ToolCallID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: string(tc.Arguments)},
				},
			})
		}
	}
	if !a.Content.OfString.Valid() && len(a.ToolCalls) == 0 {
		return oai.ChatCompletionMessageParamUnion{}, false
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

func audioFormat(mediaType string) string {
	switch strings.ToLower(mediaType) {
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav"
	case "audio/mp3", "audio/mpeg":
		return "mp3"
	}
	return ""
}
