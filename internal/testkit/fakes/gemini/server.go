// Package gemini is a fake of the Gemini Developer API
// (generativelanguage v1beta) for tests: streamGenerateContent over SSE
// (alt=sse), answering with what each test scripts and refusing what the
// real API refuses. The official Go SDK talks to it unchanged; only the
// base URL differs.
//
// It validates every request as Gemini 3 does: thought signatures that
// are altered, moved or from another model ("Corrupted thought
// signature."), the first function call of each step of the current
// turn without a signature ("Function call is missing a
// thought_signature in functionCall parts…"), function responses that do
// not follow their calls or do not match them in number or by id
// ("functionResponse.id does not match functionCall.id."), malformed JSON
// and unknown fields, tool declarations, a prompt longer than the context
// window, the API key. Each refusal is a 400 (or 403) with the API's
// error shape {"error":{"code","message","status"}}. It records every
// request it got, refused ones included.
//
// The wire shapes follow Google's API reference and the streams the
// official SDKs test against (the AI SDK's @ai-sdk/google fixtures of
// Gemini 3 text, reasoning, tool-call and search streams; the genai SDK's
// SSE framing tests); the code is the fake's own.
package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is a running fake. Script queues what the model answers; each
// request that passes validation takes the next reply.
type Server struct {
	// URL is the base URL to give the SDK (its HTTPOptions.BaseURL).
	URL string

	srv       *httptest.Server
	secret    []byte
	apiKey    string
	window    int
	cacheMin  int
	responder func(*Request) Reply

	mu       sync.Mutex
	script   []Reply
	requests []*Request
	prefixes map[string][][]unit // by model: the prompts seen, for implicit caching
	served   int
}

// Request is one request the fake got.
type Request struct {
	Model  string
	Header http.Header
	Body   []byte           // as sent
	Parsed *GenerateRequest // nil when the body did not decode
	// Status and Message are what the fake answered: 200, or the error.
	Status  int
	Message string
}

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the fake require this key (x-goog-api-key or
// ?key=), as the real API does: none is a 403, a wrong one a 400
// API_KEY_INVALID. Without it any key passes.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithSecret sets the key of the signature MAC (default: a constant, so
// that fakes agree across restarts).
func WithSecret(secret []byte) Option { return func(s *Server) { s.secret = secret } }

// WithContextWindow sets the most prompt tokens a request may have
// (default 1,048,576, Gemini's); a longer prompt is refused as the real
// API refuses it.
func WithContextWindow(tokens int) Option { return func(s *Server) { s.window = tokens } }

// WithImplicitCache sets the smallest prompt prefix, in tokens, that
// implicit caching reports as cached (default 1024, Gemini Flash's
// minimum); 0 turns caching off.
func WithImplicitCache(minTokens int) Option { return func(s *Server) { s.cacheMin = minTokens } }

// WithResponder answers requests when the script is empty (default: a
// 500 saying nothing was scripted).
func WithResponder(f func(*Request) Reply) Option { return func(s *Server) { s.responder = f } }

// New starts a fake for a test and stops it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := Start(opts...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake; Close stops it.
func Start(opts ...Option) *Server {
	s := &Server{secret: defaultSecret, window: 1 << 20, cacheMin: 1024, prefixes: map[string][][]unit{}}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	return s
}

// Close stops the fake.
func (s *Server) Close() { s.srv.Close() }

// Script queues replies, answered in order.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns every request so far, refused ones included.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Last returns the last request, or nil.
func (s *Server) Last() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

// Pending is the number of scripted replies not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

const streamSuffix = ":streamGenerateContent"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := &Request{Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()

	path, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	if !ok || !strings.HasSuffix(path, streamSuffix) || r.Method != http.MethodPost {
		s.fail(w, rec, &Failure{Code: 404, Status: "NOT_FOUND", Message: "The requested URL " + r.URL.Path + " was not found on this server."})
		return
	}
	rec.Model = strings.TrimSuffix(path, streamSuffix)
	if r.URL.Query().Get("alt") != "sse" {
		s.fail(w, rec, &Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: "The fake serves streamGenerateContent with alt=sse only."})
		return
	}
	if f := s.checkKey(r); f != nil {
		s.fail(w, rec, f)
		return
	}
	req, f := decodeRequest(body)
	rec.Parsed = req
	if f == nil {
		f = s.validate(rec.Model, req)
	}
	if f != nil {
		s.fail(w, rec, f)
		return
	}
	prompt, cached := s.promptTokens(rec.Model, req)
	if prompt > s.window {
		s.fail(w, rec, &Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: overflowMessage(prompt, s.window)})
		return
	}
	reply := s.next(rec)
	if reply.Fail != nil {
		s.fail(w, rec, reply.Fail)
		return
	}
	rec.Status = http.StatusOK
	s.stream(w, rec.Model, &reply, prompt, cached, req.hasGoogleSearch())
	if reply.Stall {
		<-r.Context().Done()
	}
}

func (s *Server) next(rec *Request) Reply {
	s.mu.Lock()
	if len(s.script) > 0 {
		r := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return r
	}
	s.mu.Unlock()
	if s.responder != nil {
		return s.responder(rec)
	}
	return Reply{Fail: &Failure{Code: 500, Status: "INTERNAL", Message: "fake gemini: no reply scripted for this request"}}
}

func (s *Server) checkKey(r *http.Request) *Failure {
	if s.apiKey == "" {
		return nil
	}
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	switch key {
	case s.apiKey:
		return nil
	case "":
		return &Failure{Code: 403, Status: "PERMISSION_DENIED", Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
	}
	return &Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: "API key not valid. Please pass a valid API key.",
		Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}}}
}

func (s *Server) fail(w http.ResponseWriter, rec *Request, f *Failure) {
	rec.Status, rec.Message = f.Code, f.Message
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.WriteHeader(f.Code)
	w.Write(failureBody(f))
}

// decodeRequest decodes a body strictly, as the API's JSON mapping does.
func decodeRequest(body []byte) (*GenerateRequest, *Failure) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req GenerateRequest
	if err := dec.Decode(&req); err != nil {
		msg := "Invalid JSON payload received."
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			msg = "Invalid JSON payload received. Unknown name " + name + ": Cannot find field."
		}
		return nil, &Failure{Code: 400, Status: "INVALID_ARGUMENT", Message: msg}
	}
	return &req, nil
}

func (r *GenerateRequest) hasGoogleSearch() bool {
	for _, t := range r.Tools {
		if t.GoogleSearch != nil {
			return true
		}
	}
	return false
}

// stream writes a scripted reply as the API streams it: one chunk per
// part, usage in every chunk (running totals), the finish reason and
// grounding in the last.
func (s *Server) stream(w http.ResponseWriter, model string, r *Reply, prompt, cached int, searched bool) {
	s.mu.Lock()
	s.served++
	id := "fake-" + strconv.Itoa(s.served)
	s.mu.Unlock()
	version := r.ModelVersion
	if version == "" {
		version = model
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	u := usageMetadata{PromptTokenCount: prompt, CachedContentTokenCount: cached}
	if searched {
		u.ToolUsePromptTokenCount = 64
	}
	total := func() *usageMetadata {
		c := u
		if o := r.Usage; o != nil {
			c = usageMetadata{PromptTokenCount: o.PromptTokenCount, CachedContentTokenCount: o.CachedContentTokenCount,
				CandidatesTokenCount: o.CandidatesTokenCount, ThoughtsTokenCount: o.ThoughtsTokenCount, ToolUsePromptTokenCount: o.ToolUsePromptTokenCount}
		}
		c.TotalTokenCount = c.PromptTokenCount + c.CandidatesTokenCount + c.ThoughtsTokenCount + c.ToolUsePromptTokenCount
		return &c
	}
	if r.Blocked != "" {
		send(response{PromptFeedback: &promptFeedback{BlockReason: r.Blocked}, UsageMetadata: total(), ModelVersion: version, ResponseID: id})
		return
	}
	chunk := func(p Part, finish string, g *groundingMetadata) response {
		return response{Candidates: []candidate{{Content: &Content{Role: "model", Parts: []Part{p}}, FinishReason: finish, GroundingMetadata: g}},
			UsageMetadata: total(), ModelVersion: version, ResponseID: id}
	}
	signedCall := false
	for _, rp := range r.Parts {
		p := Part{Thought: rp.Thought}
		switch {
		case rp.Call != nil:
			args := rp.Call.Args
			if args == "" {
				args = "{}"
			}
			p.FunctionCall = &FunctionCall{ID: rp.Call.ID, Name: rp.Call.Name, Args: json.RawMessage(args)}
			u.CandidatesTokenCount += tokens(rp.Call.Name) + tokens(args)
		default:
			text := rp.Text
			p.Text = &text
			if rp.Thought {
				u.ThoughtsTokenCount += tokens(text)
			} else {
				u.CandidatesTokenCount += tokens(text)
			}
		}
		if rp.Sign || !r.Unsigned && p.FunctionCall != nil && !signedCall {
			p.ThoughtSignature = s.sign(model, &p)
			signedCall = signedCall || p.FunctionCall != nil
		}
		send(chunk(p, "", nil))
	}
	switch {
	case r.StreamError != nil:
		w.Write([]byte("data: "))
		w.Write(failureBody(r.StreamError))
		w.Write([]byte("\r\n\r\n"))
		return
	case r.Cut, r.Stall:
		return
	}
	empty := ""
	last := Part{Text: &empty}
	if !r.Unsigned && !signedCall {
		last.ThoughtSignature = s.sign(model, &last)
	}
	finish := r.Finish
	if finish == "" {
		finish = "STOP"
	}
	var g *groundingMetadata
	if len(r.Sources) > 0 {
		g = &groundingMetadata{WebSearchQueries: []string{"query"}}
		for _, src := range r.Sources {
			g.GroundingChunks = append(g.GroundingChunks, groundingChunk{Web: &webChunk{URI: src.URI, Title: src.Title}})
		}
	}
	send(chunk(last, finish, g))
}

// tokens estimates a text's tokens as the API roughly counts English:
// four bytes a token.
func tokens(s string) int { return (len(s) + 3) / 4 }

// A unit is one piece of a prompt's stable prefix (the system
// instruction, the tools, each content) and the tokens it counts for.
type unit struct {
	sum    [sha256.Size]byte
	tokens int
}

// promptTokens counts a request's prompt tokens and, as implicit caching
// does, the tokens of the longest prefix it shares with an earlier prompt
// to the same model (when that prefix is long enough to be cached).
func (s *Server) promptTokens(model string, req *GenerateRequest) (prompt, cached int) {
	var units []unit
	add := func(v any, n int) {
		b, _ := json.Marshal(v)
		units = append(units, unit{sum: sha256.Sum256(b), tokens: n})
		prompt += n
	}
	if req.SystemInstruction != nil {
		add(req.SystemInstruction, contentTokens(req.SystemInstruction))
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		add(req.Tools, tokens(string(b)))
	}
	for i := range req.Contents {
		add(req.Contents[i], contentTokens(&req.Contents[i]))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cacheMin > 0 {
		for _, prev := range s.prefixes[model] {
			n := 0
			for i := 0; i < len(prev) && i < len(units) && prev[i].sum == units[i].sum; i++ {
				n += units[i].tokens
			}
			if n >= s.cacheMin && n > cached {
				cached = n
			}
		}
	}
	s.prefixes[model] = append(s.prefixes[model], units)
	return prompt, cached
}

// contentTokens counts a content: text by length, media as an image
// counts (258 tokens), calls and responses by their JSON.
func contentTokens(c *Content) int {
	n := 0
	for _, p := range c.Parts {
		switch {
		case p.Text != nil:
			n += tokens(*p.Text)
		case p.InlineData != nil, p.FileData != nil:
			n += 258
		case p.FunctionCall != nil:
			n += tokens(p.FunctionCall.Name) + tokens(string(p.FunctionCall.Args))
		case p.FunctionResponse != nil:
			n += tokens(p.FunctionResponse.Name) + tokens(string(p.FunctionResponse.Response))
		}
	}
	return n
}

// Render returns the SSE body the fake streams for a reply of model, for
// a benchmark that serves it without a server (and its allocations) in
// the way.
func (s *Server) Render(model string, r Reply) []byte {
	rec := httptest.NewRecorder()
	s.stream(rec, model, &r, 100, 0, false)
	return rec.Body.Bytes()
}
