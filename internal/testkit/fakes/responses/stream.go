package responses

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The shapes below follow OpenAI's recorded streams: the AI SDK's fixtures
// packages/openai/src/responses/__fixtures__/openai-reasoning-encrypted-content.1.chunks.txt,
// azure-gpt5-reasoning-multi-summary-with-encryption.chunks.txt,
// openai-web-search-tool.1.chunks.txt, openai-error.1.chunks.txt and
// openai-response-failed-only.1.chunks.txt (github.com/vercel/ai), and the
// event types of openai-go's responses.ResponseStreamEventUnion.

// wireResponse is the response object of response.created, .in_progress,
// .completed, .incomplete and .failed, with its fields in the API's order.
type wireResponse struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	Error              any               `json:"error"`
	IncompleteDetails  any               `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	MaxToolCalls       *int64            `json:"max_tool_calls"`
	Model              string            `json:"model"`
	Output             []json.RawMessage `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          map[string]any    `json:"reasoning"`
	ServiceTier        string            `json:"service_tier"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               map[string]any    `json:"text"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []json.RawMessage `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *wireUsage        `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]any    `json:"metadata"`
}

type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CacheWriteTokens int64 `json:"cache_write_tokens"`
		CachedTokens     int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

type wireReasoning struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	EncryptedContent *string       `json:"encrypted_content,omitempty"`
	Summary          []summaryPart `json:"summary"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireMessage struct {
	ID      string           `json:"id"`
	Type    string           `json:"type"`
	Status  string           `json:"status"`
	Content []map[string]any `json:"content"`
	Role    string           `json:"role"`
}

type wireCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

type wireSearch struct {
	ID     string         `json:"id"`
	Type   string         `json:"type"`
	Status string         `json:"status"`
	Action map[string]any `json:"action,omitempty"`
}

var dated = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}$`)

// snapshot is the model name a response reports: the dated snapshot
// behind an alias, as OpenAI reports "gpt-5-nano-2025-08-07" for
// "gpt-5-nano".
func snapshot(model string) string {
	if dated.MatchString(model) {
		return model
	}
	return model + "-2025-08-07"
}

// sse writes events; a nil sse writes nothing (a response that is not
// streamed is built by the same code).
type sse struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	seq       int
	deltas    int
	failAfter int
}

func (st *sse) send(typ string, fields map[string]any) {
	if st == nil {
		return
	}
	b, _ := json.Marshal(fields)
	head := `{"type":` + strconv.Quote(typ) + `,"sequence_number":` + strconv.Itoa(st.seq)
	st.seq++
	data := head + "}"
	if len(b) > 2 {
		data = head + "," + string(b[1:])
	}
	_, _ = st.w.Write([]byte("event: " + typ + "\ndata: " + data + "\n\n"))
	_ = st.rc.Flush()
}

// delta sends a delta event unless the reply fails before it; it reports
// whether the stream goes on.
func (st *sse) delta(typ string, fields map[string]any) bool {
	if st == nil {
		return true
	}
	if st.failAfter > 0 && st.deltas >= st.failAfter {
		return false
	}
	st.deltas++
	st.send(typ, fields)
	return true
}

// answer produces a reply: as events when the request streams, else as
// one JSON response.
func (s *Server) answer(w http.ResponseWriter, req *Request, p *params, reply Reply, in Usage) {
	resp := s.response(p)
	var st *sse
	if p.Stream {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		st = &sse{w: w, rc: http.NewResponseController(w), failAfter: reply.FailAfter}
		s.setStatus(req, http.StatusOK, nil)
		st.send("response.created", map[string]any{"response": resp})
		st.send("response.in_progress", map[string]any{"response": resp})
	}
	fail := func(e *Error) {
		if st == nil {
			status := http.StatusInternalServerError
			if e.Type == "invalid_request_error" {
				status = http.StatusBadRequest
			}
			s.setStatus(req, status, e)
			writeError(w, status, e)
			return
		}
		s.setStatus(req, http.StatusOK, e)
		st.send("error", map[string]any{"error": e.wire()})
		failed := *resp
		failed.Status = "failed"
		failed.Error = map[string]any{"code": e.wire()["code"], "message": e.Message}
		st.send("response.failed", map[string]any{"response": &failed})
	}
	if reply.StreamError {
		fail(reply.Error)
		return
	}
	g := generator{s: s, st: st, p: p, req: req}
	for i, it := range reply.Output {
		if !g.item(i, it) {
			if reply.Error != nil {
				fail(reply.Error)
			}
			// else: the connection closes with no terminal event.
			return
		}
	}
	if reply.Stall && st != nil {
		return
	}
	resp.Output = g.output
	u := Usage{InputTokens: in.InputTokens, CachedTokens: in.CachedTokens, OutputTokens: g.outputTokens, ReasoningTokens: g.reasoningTokens}
	if reply.Usage != nil {
		u = *reply.Usage
	}
	resp.Usage = u.wire()
	terminal := "response.completed"
	resp.Status = "completed"
	if reply.Incomplete != "" {
		terminal = "response.incomplete"
		resp.Status = "incomplete"
		resp.IncompleteDetails = map[string]any{"reason": reply.Incomplete}
	}
	if st == nil {
		s.setStatus(req, http.StatusOK, nil)
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(resp)
		_, _ = w.Write(b)
		return
	}
	st.send(terminal, map[string]any{"response": resp})
}

func (s *Server) setStatus(req *Request, status int, e *Error) {
	s.mu.Lock()
	req.Status, req.Error = status, e
	s.mu.Unlock()
}

func (u Usage) wire() *wireUsage {
	w := &wireUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	w.InputTokensDetails.CachedTokens = u.CachedTokens
	w.InputTokensDetails.CacheWriteTokens = u.CacheWriteTokens
	w.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	return w
}

func (s *Server) response(p *params) *wireResponse {
	s.mu.Lock()
	created := int64(1765552659 + s.n)
	s.mu.Unlock()
	r := &wireResponse{
		ID: s.id("resp"), Object: "response", CreatedAt: created, Status: "in_progress",
		Instructions: p.Instructions, MaxOutputTokens: p.MaxOutputTokens, Model: snapshot(p.Model),
		Output: []json.RawMessage{}, ParallelToolCalls: true, ServiceTier: "auto", Store: p.Store == nil || *p.Store,
		Temperature: 1, Text: map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"},
		ToolChoice: "auto", Tools: p.Tools, TopP: 1, Truncation: "disabled", Metadata: map[string]any{},
	}
	if r.Tools == nil {
		r.Tools = []json.RawMessage{}
	}
	if p.Temperature != nil {
		r.Temperature = *p.Temperature
	}
	if p.TopP != nil {
		r.TopP = *p.TopP
	}
	if reasons(p.Model) {
		r.Reasoning = map[string]any{"effort": "medium", "summary": nil}
		if p.Reasoning != nil {
			if p.Reasoning.Effort != nil {
				r.Reasoning["effort"] = *p.Reasoning.Effort
			}
			if p.Reasoning.Summary != nil {
				r.Reasoning["summary"] = *p.Reasoning.Summary
			}
		}
	}
	return r
}

// generator streams a reply's items.
type generator struct {
	s   *Server
	st  *sse
	p   *params
	req *Request

	output          []json.RawMessage
	reasoning       string // the last reasoning item's id
	outputTokens    int64
	reasoningTokens int64
}

func (g *generator) done(i int, item any) {
	b, _ := json.Marshal(item)
	g.output = append(g.output, b)
	g.s.mu.Lock()
	g.req.Output = append(g.req.Output, b)
	g.s.mu.Unlock()
	g.st.send("response.output_item.done", map[string]any{"output_index": i, "item": json.RawMessage(b)})
}

// item streams one output item; false: the reply failed in it.
func (g *generator) item(i int, it Item) bool {
	switch {
	case it.isReason:
		return g.reasoningItem(i, it.reasoning)
	case it.call != nil:
		return g.callItem(i, it.call)
	case it.search != nil:
		return g.searchItem(i, it.search)
	case it.refusal != "":
		return g.refusalItem(i, it.refusal)
	}
	return g.textItem(i, it.text, it.citations)
}

func (g *generator) reasoningItem(i int, parts []string) bool {
	id := g.s.id("rs")
	g.reasoning = id
	joined := strings.Join(parts, "\n\n")
	var enc *string
	if slices.Contains(g.p.Include, "reasoning.encrypted_content") {
		v := g.s.seal(g.p.Model, id, joined)
		enc = &v
	}
	added := map[string]any{"id": id, "type": "reasoning", "summary": []any{}}
	if enc != nil {
		// The value in output_item.added may be incomplete; only the one
		// in output_item.done is whole.
		added["encrypted_content"] = (*enc)[:len(*enc)/2]
	}
	g.st.send("response.output_item.added", map[string]any{"output_index": i, "item": added})
	summary := make([]summaryPart, 0, len(parts))
	for k, text := range parts {
		ev := map[string]any{"item_id": id, "output_index": i, "summary_index": k}
		g.st.send("response.reasoning_summary_part.added", with(ev, "part", summaryPart{Type: "summary_text"}))
		for _, d := range words(text) {
			if !g.st.delta("response.reasoning_summary_text.delta", with(ev, "delta", d)) {
				return false
			}
		}
		g.st.send("response.reasoning_summary_text.done", with(ev, "text", text))
		g.st.send("response.reasoning_summary_part.done", with(ev, "part", summaryPart{Type: "summary_text", Text: text}))
		summary = append(summary, summaryPart{Type: "summary_text", Text: text})
	}
	n := 32 + tokens(len(joined))
	g.reasoningTokens += n
	g.outputTokens += n
	g.done(i, wireReasoning{ID: id, Type: "reasoning", EncryptedContent: enc, Summary: summary})
	return true
}

func (g *generator) textItem(i int, text string, citations []Citation) bool {
	id := g.s.id("msg")
	g.st.send("response.output_item.added", map[string]any{"output_index": i, "item": wireMessage{ID: id, Type: "message", Status: "in_progress", Content: []map[string]any{}, Role: "assistant"}})
	ev := map[string]any{"item_id": id, "output_index": i, "content_index": 0}
	g.st.send("response.content_part.added", with(ev, "part", map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": ""}))
	annotations := make([]map[string]any, len(citations))
	for k, c := range citations {
		annotations[k] = map[string]any{"type": "url_citation", "end_index": c.End, "start_index": c.Start, "title": c.Title, "url": c.URL}
	}
	sent, next := 0, 0
	for _, d := range words(text) {
		if !g.st.delta("response.output_text.delta", with(with(ev, "delta", d), "logprobs", []any{})) {
			return false
		}
		sent += len(d)
		for next < len(citations) && citations[next].End <= sent {
			g.st.send("response.output_text.annotation.added", with(with(ev, "annotation_index", next), "annotation", annotations[next]))
			next++
		}
	}
	for ; next < len(citations); next++ {
		g.st.send("response.output_text.annotation.added", with(with(ev, "annotation_index", next), "annotation", annotations[next]))
	}
	part := map[string]any{"type": "output_text", "annotations": annotations, "logprobs": []any{}, "text": text}
	g.st.send("response.output_text.done", with(with(ev, "text", text), "logprobs", []any{}))
	g.st.send("response.content_part.done", with(ev, "part", part))
	g.outputTokens += tokens(len(text))
	g.done(i, wireMessage{ID: id, Type: "message", Status: "completed", Content: []map[string]any{part}, Role: "assistant"})
	return true
}

func (g *generator) refusalItem(i int, text string) bool {
	id := g.s.id("msg")
	g.st.send("response.output_item.added", map[string]any{"output_index": i, "item": wireMessage{ID: id, Type: "message", Status: "in_progress", Content: []map[string]any{}, Role: "assistant"}})
	ev := map[string]any{"item_id": id, "output_index": i, "content_index": 0}
	g.st.send("response.content_part.added", with(ev, "part", map[string]any{"type": "refusal", "refusal": ""}))
	for _, d := range words(text) {
		if !g.st.delta("response.refusal.delta", with(ev, "delta", d)) {
			return false
		}
	}
	part := map[string]any{"type": "refusal", "refusal": text}
	g.st.send("response.refusal.done", with(ev, "refusal", text))
	g.st.send("response.content_part.done", with(ev, "part", part))
	g.outputTokens += tokens(len(text))
	g.done(i, wireMessage{ID: id, Type: "message", Status: "completed", Content: []map[string]any{part}, Role: "assistant"})
	return true
}

func (g *generator) callItem(i int, c *call) bool {
	id, callID := g.s.id("fc"), g.s.id("call")
	g.s.mu.Lock()
	g.s.calls[id] = g.reasoning
	g.s.mu.Unlock()
	g.st.send("response.output_item.added", map[string]any{"output_index": i, "item": wireCall{ID: id, Type: "function_call", Status: "in_progress", CallID: callID, Name: c.name}})
	ev := map[string]any{"item_id": id, "output_index": i}
	for _, d := range fragments(c.args, 6) {
		if !g.st.delta("response.function_call_arguments.delta", with(ev, "delta", d)) {
			return false
		}
	}
	g.st.send("response.function_call_arguments.done", with(ev, "arguments", c.args))
	g.outputTokens += tokens(len(c.name) + len(c.args))
	g.done(i, wireCall{ID: id, Type: "function_call", Status: "completed", Arguments: c.args, CallID: callID, Name: c.name})
	return true
}

func (g *generator) searchItem(i int, q *search) bool {
	id := g.s.id("ws")
	g.st.send("response.output_item.added", map[string]any{"output_index": i, "item": wireSearch{ID: id, Type: "web_search_call", Status: "in_progress"}})
	ev := map[string]any{"output_index": i, "item_id": id}
	g.st.send("response.web_search_call.in_progress", ev)
	g.st.send("response.web_search_call.searching", ev)
	g.st.send("response.web_search_call.completed", ev)
	g.done(i, wireSearch{ID: id, Type: "web_search_call", Status: "completed", Action: map[string]any{"type": "search", "query": q.query}})
	return true
}

// with returns a copy of m with key set.
func with(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[key] = v
	return out
}

// words splits text the way a model's deltas come: each piece starts at a
// space ("Hello," " world").
func words(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' && text[i-1] != ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// fragments splits s into pieces of about n bytes, at rune boundaries.
func fragments(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
