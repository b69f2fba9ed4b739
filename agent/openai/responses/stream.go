package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// Stream makes one streaming request.
//
// If the API cannot verify the encrypted content of a reasoning item it
// issued (OpenAI rotated its keys; a stored value was damaged), it refuses
// every request that replays it, and a chat that keeps the value could
// never go on. So a request refused for that reason before anything
// streamed is made once more without reasoning items: the model loses
// its earlier reasoning, the chat goes on.
func (m *Model) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		params := m.params(req)
		streamed, err := m.attempt(ctx, params, yield)
		var apiErr *APIError
		if err != nil && !streamed && errors.As(err, &apiErr) && apiErr.Code == "invalid_encrypted_content" && withoutReasoning(&params) {
			_, err = m.attempt(ctx, params, yield)
		}
		if err != nil {
			yield(agent.Chunk{}, err)
		}
	}
}

// withoutReasoning drops a request's reasoning items; false: it had none.
func withoutReasoning(p *responses.ResponseNewParams) bool {
	items := p.Input.OfInputItemList
	kept := items[:0:0]
	for _, it := range items {
		if it.OfReasoning == nil {
			kept = append(kept, it)
		}
	}
	p.Input.OfInputItemList = kept
	return len(kept) < len(items)
}

// attempt makes one request and yields its chunks. It returns whether it
// yielded anything, and the error that ended it, if any, unyielded.
func (m *Model) attempt(ctx context.Context, params responses.ResponseNewParams, yield func(agent.Chunk, error) bool) (streamed bool, err error) {
	// As Responses.NewStreaming does, but with events of our own type
	// (see event).
	var raw *http.Response
	err = m.client.Post(ctx, "responses", params, &raw, option.WithJSONSet("stream", true))
	stream := ssestream.NewStream[event](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	s := streamState{m: m}
	counted := func(c agent.Chunk, err error) bool {
		streamed = true
		return yield(c, err)
	}
	for stream.Next() {
		ev := stream.Current()
		var ok bool
		var err error
		if ev.full == nil {
			ok = s.delta(&ev.delta, counted)
		} else {
			ok, err = s.handle(ev.full, counted)
		}
		if err != nil {
			return streamed, err
		}
		if !ok {
			return true, nil // the consumer stopped
		}
		if s.finish != nil {
			break
		}
	}
	if err := stream.Err(); err != nil {
		return streamed, streamError(ctx, err)
	}
	if s.finish == nil {
		if ctx.Err() != nil {
			return streamed, ctx.Err()
		}
		return streamed, ErrIncomplete
	}
	yield(*s.finish, nil)
	return true, nil
}

// event is one streamed event. The deltas that make up most of a reply
// (text, reasoning summary and call argument fragments) are read into
// delta alone; any other event into openai-go's event union, whose general
// decoder costs about 40 allocations an event, six times what a delta
// costs read this way (BenchmarkStreamDeltas).
type event struct {
	delta deltaEvent
	full  *responses.ResponseStreamEventUnion // nil for a delta
}

type deltaEvent struct {
	Type   string `json:"type"`
	ItemID string `json:"item_id"`
	Delta  string `json:"delta"`
}

func (e *event) UnmarshalJSON(b []byte) error {
	if json.Unmarshal(b, &e.delta) == nil {
		switch e.delta.Type {
		case "response.output_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
			"response.function_call_arguments.delta", "response.refusal.delta":
			return nil
		}
	}
	e.full = new(responses.ResponseStreamEventUnion)
	return json.Unmarshal(b, e.full)
}

// delta yields the chunk of a delta event.
func (s *streamState) delta(ev *deltaEvent, yield func(agent.Chunk, error) bool) bool {
	if ev.Delta == "" {
		return true
	}
	switch ev.Type {
	case "response.output_text.delta":
		return yield(agent.Chunk{Kind: agent.ChunkText, Delta: ev.Delta}, nil)
	case "response.refusal.delta":
		s.refused = true
		return yield(agent.Chunk{Kind: agent.ChunkText, Delta: ev.Delta}, nil)
	case "response.function_call_arguments.delta":
		return s.arguments(ev.ItemID, ev.Delta, yield)
	}
	s.thought = true
	return yield(agent.Chunk{Kind: agent.ChunkThinking, Delta: ev.Delta}, nil)
}

// streamState turns one response's events into chunks.
type streamState struct {
	m        *Model
	calls    map[string]string // function_call item id → call id
	streamed map[string]bool   // call ids whose arguments came in fragments
	parts    int               // summary parts of the open reasoning item
	thought  bool              // its summary streamed
	sources  map[string]bool   // URLs cited so far
	called   bool
	refused  bool
	answered string // the model as the response names it
	finish   *agent.Chunk
}

// handle yields the chunks of one event. It returns false when the
// consumer stopped, and an error when the response failed.
func (s *streamState) handle(ev *responses.ResponseStreamEventUnion, yield func(agent.Chunk, error) bool) (bool, error) {
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response.Model != "" {
			s.answered = ev.Response.Model
		}
	case "response.output_item.added":
		switch ev.Item.Type {
		case "function_call":
			return s.startCall(&ev.Item, yield), nil
		case "reasoning":
			s.parts, s.thought = 0, false
		}
	case "response.reasoning_summary_part.added":
		s.parts++
		if s.parts > 1 {
			// One thinking part holds the item's whole summary; its
			// parts are paragraphs.
			return yield(agent.Chunk{Kind: agent.ChunkThinking, Delta: "\n\n"}, nil), nil
		}
	case "response.function_call_arguments.done":
		if id := s.calls[ev.ItemID]; id != "" && !s.streamed[id] {
			return s.arguments(ev.ItemID, ev.Arguments, yield), nil
		}
	case "response.output_text.annotation.added":
		return s.cite(ev.Annotation.Type, ev.Annotation.URL, ev.Annotation.Title, yield), nil
	case "response.output_item.done":
		return s.itemDone(&ev.Item, yield), nil
	case "response.completed", "response.incomplete":
		s.end(ev)
	case "response.failed":
		return false, &APIError{Code: string(ev.Response.Error.Code), Type: ev.Response.Error.Type}
	case "error":
		return false, &APIError{Code: ev.Code}
	}
	return true, nil
}

// startCall yields a call's first chunk, with its name. The call id
// (call_…) is what its output names; the item id (fc_…) is what its
// argument fragments name.
func (s *streamState) startCall(item *responses.ResponseOutputItemUnion, yield func(agent.Chunk, error) bool) bool {
	id := item.CallID
	if id == "" {
		id = item.ID
	}
	if id == "" {
		id = "call_" + ids.New()
	}
	if s.calls == nil {
		s.calls, s.streamed = map[string]string{}, map[string]bool{}
	}
	s.calls[item.ID] = id
	s.called = true
	args := item.Arguments.OfString
	if args != "" {
		s.streamed[id] = true
	}
	return yield(agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, ToolName: item.Name, Delta: args}, nil)
}

func (s *streamState) arguments(itemID, delta string, yield func(agent.Chunk, error) bool) bool {
	id := s.calls[itemID]
	if id == "" || delta == "" {
		return true
	}
	s.streamed[id] = true
	return yield(agent.Chunk{Kind: agent.ChunkToolCall, ToolCallID: id, Delta: delta}, nil)
}

// cite yields a web page the reply cites, once per response.
func (s *streamState) cite(kind, url, title string, yield func(agent.Chunk, error) bool) bool {
	if kind != "url_citation" || url == "" || s.sources[url] {
		return true
	}
	if s.sources == nil {
		s.sources = map[string]bool{}
	}
	s.sources[url] = true
	return yield(agent.Chunk{Kind: agent.ChunkSource, URL: url, Name: title}, nil)
}

func (s *streamState) itemDone(item *responses.ResponseOutputItemUnion, yield func(agent.Chunk, error) bool) bool {
	switch item.Type {
	case "reasoning":
		// The item's encrypted content is whole only here, not in
		// output_item.added. It ends the thinking part.
		// A summary that did not stream comes whole with it.
		var summary string
		if !s.thought {
			texts := make([]string, len(item.Summary))
			for i, p := range item.Summary {
				texts[i] = p.Text
			}
			summary = strings.Join(texts, "\n\n")
		}
		if item.ID == "" && item.EncryptedContent == "" {
			if summary == "" {
				return true
			}
			return yield(agent.Chunk{Kind: agent.ChunkThinking, Delta: summary}, nil)
		}
		return yield(agent.Chunk{Kind: agent.ChunkThinking, Delta: summary, Opaque: &cmf.Opaque{
			Provider: Provider, Model: s.m.model, ID: item.ID, Data: item.EncryptedContent,
		}}, nil)
	case "function_call":
		if id := s.calls[item.ID]; id != "" && !s.streamed[id] {
			return s.arguments(item.ID, item.Arguments.OfString, yield)
		}
	case "message":
		for _, c := range item.Content {
			for _, a := range c.Annotations {
				if !s.cite(a.Type, a.URL, a.Title, yield) {
					return false
				}
			}
		}
	}
	return true
}

func (s *streamState) end(ev *responses.ResponseStreamEventUnion) {
	r := &ev.Response
	stop := cmf.StopEnd
	switch {
	case r.Status == "incomplete" || ev.Type == "response.incomplete":
		stop = cmf.StopMaxTokens
		if r.IncompleteDetails.Reason == "content_filter" {
			stop = cmf.StopRefusal
		}
	case s.called:
		stop = cmf.StopCall
	case s.refused:
		stop = cmf.StopRefusal
	}
	model := s.answered
	if r.Model != "" {
		model = r.Model
	}
	if model == "" {
		model = s.m.model
	}
	u := r.Usage
	s.finish = &agent.Chunk{Kind: agent.ChunkFinish, StopReason: stop, Model: model, Provider: "openai", Usage: agent.Usage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
		ReasoningTokens:   u.OutputTokensDetails.ReasoningTokens,
		CachedInputTokens: u.InputTokensDetails.CachedTokens,
		CacheWriteTokens:  u.InputTokensDetails.CacheWriteTokens,
	}}
}

// streamError turns what ended a stream into an error without the
// provider's message.
func streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		return &APIError{StatusCode: apiErr.StatusCode, Code: apiErr.Code, Type: apiErr.Type}
	}
	// An error event: {"type":"error","error":{"type","code","message",
	// "param"}}, which openai-go's decoder stops at. (The API reference
	// shows the fields flat; either is read.)
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var e struct {
			Code  string `json:"code"`
			Type  string `json:"type"`
			Error *struct {
				Code string `json:"code"`
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &e)
		if e.Error != nil {
			return &APIError{Code: e.Error.Code, Type: e.Error.Type}
		}
		return &APIError{Code: e.Code}
	}
	return fmt.Errorf("openai responses: %w", err)
}
