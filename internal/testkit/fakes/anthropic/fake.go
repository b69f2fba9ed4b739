// Package anthropicfake is an in-process stand-in for the Anthropic Messages
// API (POST /v1/messages, streaming), for tests that cannot reach the real
// one. The official SDK talks to it unchanged; only the base URL differs.
//
// It does two things the real API does. It streams what the real API
// streams: the same SSE event names, JSON shapes and order (message_start,
// content_block_start/delta/stop with text, thinking, signature,
// input_json and citations deltas, ping, message_delta, message_stop, and
// `error` events), as scripted per test with [Server.Reply]. And it
// refuses, with the real status and error shape
// ({"type":"error","error":{"type":"invalid_request_error","message":…}}),
// what the real API refuses: a thinking block whose signature is missing,
// altered, issued for another model, or moved from where it was produced; a
// tool_result that does not answer a tool_use of the message before it; a
// tool continuation with manual thinking whose assistant message does not
// start with its thinking block; a prompt longer than the context window;
// and malformed requests.
//
// Thinking and redacted thinking blocks of a reply stream only when the
// request turns thinking on ("enabled" or "adaptive"): a request without a
// thinking configuration is answered as by a model that does not think.
//
// Signatures are MACs over the model, the thinking text and what preceded
// the block, under a key only the fake knows, so a test cannot forge one
// and a value replayed anywhere but where it was produced fails. The fake
// keeps a prompt cache keyed by prefix and bills input tokens the way the
// API does (input_tokens, cache_creation_input_tokens,
// cache_read_input_tokens). It records every request it got.
//
// The event shapes follow the API's documented streams and the official
// Go SDK's fixtures (message_test.go's accumulation cases, among them
// interleaved blocks, thinking with signature_delta, redacted thinking and
// server tool use; lib/betafallback/testdata/fallbackstream/*.sse for
// message_start and message_delta usage and the ping after the first
// block).
//
// It is deterministic: no clocks, no randomness; ids count up.
package anthropicfake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is a fake Messages API. It is an http.Handler; [Start] and [New]
// also listen on loopback.
type Server struct {
	// URL is the base URL to give the SDK (option.WithBaseURL), when the
	// server listens ([Start], [New]).
	URL string

	srv    *httptest.Server
	opts   options
	mu     sync.Mutex
	queue  []Reply
	reqs   []Request
	cache  map[[32]byte]bool // prefixes written to the prompt cache
	nextID int
}

// Option configures a [Server].
type Option func(*options)

type options struct {
	key           string
	secret        []byte
	prefixCheck   bool
	contextWindow int
	minCache      int
	chunk         int
	responder     func(*Request) Reply
}

// WithAPIKey makes the server refuse (401) any request whose key is not
// key. By default any non-empty key is accepted.
func WithAPIKey(key string) Option { return func(o *options) { o.key = key } }

// WithSecret sets the key of the signature MACs, so two servers can share
// (or not share) signatures. The default is fixed.
func WithSecret(secret []byte) Option { return func(o *options) { o.secret = secret } }

// WithPrefixCheck makes the server refuse a thinking block whose whole
// prefix (system, tools and every earlier message) differs from the one
// it was produced after, as models with preserved thinking do. Without
// it only the blocks before it in its own message are checked.
func WithPrefixCheck() Option { return func(o *options) { o.prefixCheck = true } }

// WithContextWindow sets the most input tokens a request may have
// (default 200000); a longer prompt gets the API's "prompt is too long"
// error.
func WithContextWindow(tokens int) Option { return func(o *options) { o.contextWindow = tokens } }

// WithMinCacheTokens sets the shortest prefix the cache stores (default
// 1024, the API's minimum for most models).
func WithMinCacheTokens(tokens int) Option { return func(o *options) { o.minCache = tokens } }

// WithChunkSize sets how many bytes of text, thinking or tool input each
// delta carries (default 12).
func WithChunkSize(n int) Option { return func(o *options) { o.chunk = n } }

// WithResponder answers requests for which no reply is queued.
func WithResponder(f func(*Request) Reply) Option { return func(o *options) { o.responder = f } }

// NewHandler returns a server that does not listen: use it as an
// http.Handler or through [Server.Transport].
func NewHandler(opts ...Option) *Server {
	s := &Server{cache: map[[32]byte]bool{}, opts: options{
		secret: []byte("agentui fake anthropic"), contextWindow: 200000, minCache: 1024, chunk: 12,
	}}
	for _, o := range opts {
		o(&s.opts)
	}
	if s.opts.chunk < 1 {
		s.opts.chunk = 1
	}
	return s
}

// Start returns a server listening on a loopback port. Close it when done.
func Start(opts ...Option) *Server {
	s := NewHandler(opts...)
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	return s
}

// New starts a server for the test and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := Start(opts...)
	t.Cleanup(s.Close)
	return s
}

// Close stops a listening server.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// Reply queues what the model answers to the next requests, one reply per
// request that passes validation, in order.
func (s *Server) Reply(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Pending is the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request the server got, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Request is a request as the server got it and what it answered.
type Request struct {
	Header http.Header
	Body   []byte         // exactly as sent
	Params map[string]any // Body decoded (numbers as json.Number)
	// Status is the HTTP status the server answered with; Error the
	// message of an error answer.
	Status int
	Error  string
	// Usage is what a streamed answer billed.
	Usage Usage
}

// Messages returns the request's messages.
func (r *Request) Messages() []map[string]any { return objects(r.Params["messages"]) }

// Breakpoints lists where the request put cache_control, as paths like
// "tools.2", "system.0" or "messages.3.content.1".
func (r *Request) Breakpoints() []string {
	var out []string
	for _, key := range []string{"tools", "system"} {
		for i, b := range objects(r.Params[key]) {
			if b["cache_control"] != nil {
				out = append(out, fmt.Sprintf("%s.%d", key, i))
			}
		}
	}
	for i, m := range r.Messages() {
		for j, b := range objects(m["content"]) {
			if b["cache_control"] != nil {
				out = append(out, fmt.Sprintf("messages.%d.content.%d", i, j))
			}
		}
	}
	return out
}

// Usage is what the API bills for one answer.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	ThinkingTokens           int `json:"-"`
}

// Reply is one scripted answer: an error before the stream (Status), or a
// streamed message.
type Reply struct {
	// Status, when not 0 or 200, answers with this HTTP status and an
	// error body (ErrorType defaults from the status; ErrorMessage to the
	// API's usual text) instead of a stream. Header adds headers, e.g.
	// "retry-after".
	Status       int
	ErrorType    string
	ErrorMessage string
	Header       http.Header

	// Model is the model the message names (default: the one asked for).
	Model string
	// Content is what the model says, in order.
	Content []Block
	// StopReason defaults to "tool_use" when Content has a tool_use
	// block, else "end_turn".
	StopReason string
	// FailAfter, when > 0, sends an `error` event (ErrorType, default
	// overloaded_error) after that many content blocks and ends the
	// stream. Cut ends the connection after the content without
	// message_delta and message_stop.
	FailAfter int
	Cut       bool
	// Stall, after the content, holds the stream open until the client
	// goes away (to test cancellation).
	Stall bool
	// Usage, when set, is what the answer reports and bills instead of
	// what the server counts (to test how a client reads usage).
	Usage *Usage
}

// Block is one content block of a scripted answer. Make them with [Text],
// [Thinking], [RedactedThinking], [ToolUse] and [WebSearch].
type Block struct {
	Type      string // text, thinking, redacted_thinking, tool_use, server_tool_use, web_search_tool_result
	Text      string // text; thinking's text
	Citations []Citation
	ID        string // tool_use, server_tool_use; web_search_tool_result's tool_use_id
	Name      string
	Input     string // tool input JSON
	Results   []SearchResult
	// Signature, when set, replaces the signature the server would issue
	// for a thinking block (to stream a bad one).
	Signature string
}

// Citation is a web search result a text block cites.
type Citation struct {
	URL, Title, CitedText string
}

// SearchResult is one web search result.
type SearchResult struct {
	URL, Title string
}

// Text is a text block, optionally citing search results.
func Text(s string, cites ...Citation) Block { return Block{Type: "text", Text: s, Citations: cites} }

// Thinking is a thinking block; the server signs it.
func Thinking(s string) Block { return Block{Type: "thinking", Text: s} }

// RedactedThinking is a redacted_thinking block; the server encrypts s.
func RedactedThinking(s string) Block { return Block{Type: "redacted_thinking", Text: s} }

// ToolUse is a tool_use block with its input JSON.
func ToolUse(id, name, input string) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: input}
}

// WebSearch is a server-side web search: its server_tool_use block and its
// web_search_tool_result block.
func WebSearch(id, query string, results ...SearchResult) []Block {
	q, _ := json.Marshal(map[string]string{"query": query})
	return []Block{
		{Type: "server_tool_use", ID: id, Name: "web_search", Input: string(q)},
		{Type: "web_search_tool_result", ID: id, Results: results},
	}
}

// Transport returns a RoundTripper that serves requests in-process, without
// a socket (for tests in a testing/synctest bubble).
func (s *Server) Transport() http.RoundTripper { return transport{s} }

type transport struct{ s *Server }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			w.WriteHeader(http.StatusOK)
			pw.Close()
		}()
		t.s.ServeHTTP(w, r)
	}()
	select {
	case <-w.ready:
	case <-r.Context().Done():
		pr.CloseWithError(r.Context().Err())
		return nil, r.Context().Err()
	}
	return &http.Response{StatusCode: w.status, Header: w.header, Body: pr, Request: r,
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status)}, nil
}

// pipeWriter is the ResponseWriter of the in-process transport.
type pipeWriter struct {
	header http.Header
	body   *io.PipeWriter
	status int
	ready  chan struct{}
	once   sync.Once
}

func (w *pipeWriter) Header() http.Header { return w.header }
func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() { w.status = status; close(w.ready) })
}
func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
func (w *pipeWriter) Flush() {}

// apiError is the API's error body.
func writeError(w http.ResponseWriter, status int, typ, msg string, header http.Header) {
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}, "request_id": "req_fake"})
	w.Write(b)
}

func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func errorText(typ string) string {
	switch typ {
	case "rate_limit_error":
		return "Number of request tokens has exceeded your per-minute rate limit"
	case "overloaded_error":
		return "Overloaded"
	case "authentication_error":
		return "invalid x-api-key"
	}
	return "Internal server error"
}

// invalid is a request the API refuses with a 400.
type invalid struct {
	status   int
	typ, msg string
}

func (e *invalid) Error() string { return e.msg }

func bad(format string, args ...any) *invalid {
	return &invalid{status: 400, typ: "invalid_request_error", msg: fmt.Sprintf(format, args...)}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Header: r.Header.Clone(), Body: body}
	finish := func(status int, msg string, u Usage) {
		rec.Status, rec.Error, rec.Usage = status, msg, u
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		s.mu.Unlock()
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		finish(404, "not found", Usage{})
		writeError(w, 404, "not_found_error", "Not found", nil)
		return
	}
	if e := s.authenticate(r); e != nil {
		finish(e.status, e.msg, Usage{})
		writeError(w, e.status, e.typ, e.msg, nil)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&rec.Params); err != nil || rec.Params == nil {
		finish(400, "invalid JSON", Usage{})
		writeError(w, 400, "invalid_request_error", "There was an error parsing the body of your request: invalid JSON", nil)
		return
	}
	c, e := s.check(&rec, r.Header)
	if e != nil {
		finish(e.status, e.msg, Usage{})
		writeError(w, e.status, e.typ, e.msg, nil)
		return
	}
	s.mu.Lock()
	var reply Reply
	var ok bool
	if len(s.queue) > 0 {
		reply, s.queue, ok = s.queue[0], s.queue[1:], true
	}
	s.mu.Unlock()
	if !ok && s.opts.responder != nil {
		reply, ok = s.opts.responder(&rec), true
	}
	if !ok {
		finish(500, "no reply scripted", Usage{})
		writeError(w, 500, "api_error", "fake: no reply scripted for this request", nil)
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		typ := reply.ErrorType
		if typ == "" {
			typ = errorType(reply.Status)
		}
		msg := reply.ErrorMessage
		if msg == "" {
			msg = errorText(typ)
		}
		finish(reply.Status, msg, Usage{})
		writeError(w, reply.Status, typ, msg, reply.Header)
		return
	}
	u := s.bill(c)
	s.stream(w, c, &reply, &u)
	if reply.Stall {
		<-r.Context().Done()
	}
	finish(http.StatusOK, "", u)
}

func (s *Server) authenticate(r *http.Request) *invalid {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if key == "" {
		key = r.Header.Get("X-Api-Key")
	}
	if key == "" || (s.opts.key != "" && key != s.opts.key) {
		return &invalid{status: 401, typ: "authentication_error", msg: "invalid x-api-key"}
	}
	if r.Header.Get("Anthropic-Version") == "" {
		return bad("anthropic-version: header is required")
	}
	return nil
}

// conv is a validated request: its canonical items and what the answer
// needs.
type conv struct {
	model    string
	thinking string // "", enabled, adaptive, disabled
	items    []item // tools, system blocks, then message blocks, canonical
	tokens   int
	// end hashes the whole prompt; endLocal the final turn, when it is the
	// assistant's (the answer continues it).
	end, endLocal hashRun
}

// item is one block of the prompt in the order the cache reads it, with
// the hash of everything up to and including it.
type item struct {
	hash       [32]byte
	tokens     int // cumulative
	breakpoint bool
}

var (
	toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	toolIDRE   = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
)

// check validates a request as the API does and returns its canonical
// form.
func (s *Server) check(rec *Request, h http.Header) (*conv, *invalid) {
	p := rec.Params
	c := &conv{}
	model, _ := p["model"].(string)
	if model == "" {
		return nil, bad("model: Field required")
	}
	c.model = model
	if n, err := number(p["max_tokens"]); err != nil {
		return nil, bad("max_tokens: Field required")
	} else if n < 1 {
		return nil, bad("max_tokens: Input should be greater than or equal to 1")
	}
	for _, k := range []string{"temperature", "top_p", "top_k"} {
		if _, ok := p[k]; ok {
			return nil, bad("%s: Extra inputs are not permitted in API version 2026-10-21", k)
		}
	}
	if t, ok := p["thinking"].(map[string]any); ok {
		c.thinking, _ = t["type"].(string)
		switch c.thinking {
		case "enabled":
			if b, err := number(t["budget_tokens"]); err != nil || b < 1024 {
				return nil, bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
			}
		case "adaptive", "disabled":
		default:
			return nil, bad("thinking.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'", c.thinking)
		}
	}
	msgs, ok := p["messages"].([]any)
	if !ok || len(msgs) == 0 {
		return nil, bad("messages: at least one message is required")
	}

	// The prompt in cache order: tools, system, messages.
	var run hashRun
	for i, t := range objects(p["tools"]) {
		name, _ := t["name"].(string)
		if !toolNameRE.MatchString(name) {
			return nil, bad("tools.%d.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if typ, _ := t["type"].(string); typ == "" || typ == "custom" {
			if sch, _ := t["input_schema"].(map[string]any); sch == nil || sch["type"] != "object" {
				return nil, bad("tools.%d.custom.input_schema.type: Input should be 'object'", i)
			}
		}
		c.items = append(c.items, run.add(t))
	}
	switch sys := p["system"].(type) {
	case nil:
	case string:
		c.items = append(c.items, run.add(map[string]any{"type": "text", "text": sys}))
	case []any:
		for i, b := range objects(sys) {
			if b["type"] != "text" {
				return nil, bad("system.%d.type: Input should be 'text'", i)
			}
			c.items = append(c.items, run.add(b))
		}
	default:
		return nil, bad("system: Input should be a valid list")
	}

	// Messages, with consecutive turns of one role combined as the API
	// does.
	type turn struct {
		role   string
		blocks []map[string]any
		paths  []string
	}
	var turns []turn
	for i, m := range objects(p["messages"]) {
		role, _ := m["role"].(string)
		if role != "user" && role != "assistant" {
			return nil, bad("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		var blocks []map[string]any
		switch ct := m["content"].(type) {
		case string:
			blocks = []map[string]any{{"type": "text", "text": ct}}
		case []any:
			blocks = objects(ct)
			if len(blocks) != len(ct) {
				return nil, bad("messages.%d.content: Input should be a valid list of content blocks", i)
			}
		default:
			return nil, bad("messages.%d.content: Field required", i)
		}
		if len(blocks) == 0 && !(i == len(msgs)-1 && role == "assistant") {
			return nil, bad("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		if len(turns) == 0 || turns[len(turns)-1].role != role {
			turns = append(turns, turn{role: role})
		}
		t := &turns[len(turns)-1]
		for j, b := range blocks {
			if e := checkBlock(role, b, fmt.Sprintf("messages.%d.content.%d", i, j)); e != nil {
				return nil, e
			}
			t.blocks = append(t.blocks, b)
			t.paths = append(t.paths, fmt.Sprintf("messages.%d.content.%d", i, j))
		}
	}

	// Tool results answer the tool_use blocks of the turn before, and
	// every tool_use of a turn that is not the last is answered.
	for k, t := range turns {
		var uses []string
		if k > 0 && turns[k-1].role == "assistant" {
			for _, b := range turns[k-1].blocks {
				if b["type"] == "tool_use" {
					uses = append(uses, b["id"].(string))
				}
			}
		}
		if t.role == "user" {
			answered := map[string]bool{}
			for j, b := range t.blocks {
				if b["type"] != "tool_result" {
					continue
				}
				id, _ := b["tool_use_id"].(string)
				if !slices.Contains(uses, id) {
					return nil, bad("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", t.paths[j], id)
				}
				answered[id] = true
			}
			var missing []string
			for _, id := range uses {
				if !answered[id] {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return nil, bad("%s: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", strings.Split(turns[k-1].paths[0], ".content")[0], strings.Join(missing, ", "))
			}
		}
	}
	// A tool_use of a final assistant turn has no result: a continuation
	// may only end with server tools.
	if last := turns[len(turns)-1]; last.role == "assistant" {
		for j, b := range last.blocks {
			if b["type"] == "tool_use" {
				return nil, bad("%s: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", last.paths[j], b["id"])
			}
		}
	}

	// Thinking: where a turn has thinking it starts with it; manual
	// thinking needs the thinking of the turn whose tool calls the request
	// answers; without thinking a final assistant turn has none.
	for _, t := range turns {
		if t.role != "assistant" {
			continue
		}
		hasThinking := false
		for _, b := range t.blocks {
			if isThinking(b) {
				hasThinking = true
			}
		}
		if hasThinking && len(t.blocks) > 0 && !isThinking(t.blocks[0]) {
			return nil, bad("%s: If an assistant message contains any thinking blocks, the first block must be thinking or redacted_thinking. Found %s.", t.paths[0], t.blocks[0]["type"])
		}
	}
	if n := len(turns); n >= 2 && c.thinking == "enabled" && turns[n-1].role == "user" && turns[n-2].role == "assistant" {
		last, prev := turns[n-1], turns[n-2]
		answers := len(last.blocks) > 0 && last.blocks[0]["type"] == "tool_result"
		if answers && !isThinking(prev.blocks[0]) {
			return nil, bad("%s.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", prev.paths[0], prev.blocks[0]["type"])
		}
	}
	if n := len(turns); (c.thinking == "disabled" || c.thinking == "") && turns[n-1].role == "assistant" {
		for j, b := range turns[n-1].blocks {
			if isThinking(b) {
				return nil, bad("%s: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.", turns[n-1].paths[j])
			}
		}
	}

	// Signatures, and the prompt's items.
	for _, t := range turns {
		run.role(t.role)
		var local hashRun
		local.role(t.role)
		for j, b := range t.blocks {
			switch b["type"] {
			case "thinking":
				sig, _ := b["signature"].(string)
				if sig == "" {
					return nil, bad("%s.thinking.signature: Field required", t.paths[j])
				}
				text, _ := b["thinking"].(string)
				switch s.verify(model, text, sig, local.sum, run.sum) {
				case sigBad:
					return nil, bad("%s: Invalid `signature` in `thinking` block", t.paths[j])
				case sigMoved:
					return nil, bad("%s: Invalid `signature` in `thinking` block", t.paths[j])
				case sigOtherConversation:
					if s.opts.prefixCheck {
						return nil, bad("%s: The block is bound to a different conversation: the messages before it have changed since it was created", t.paths[j])
					}
				}
			case "redacted_thinking":
				data, _ := b["data"].(string)
				if !s.verifyRedacted(model, data) {
					return nil, bad("%s: Invalid `data` in `redacted_thinking` block", t.paths[j])
				}
			}
			c.items = append(c.items, run.add(b))
			local.add(b)
		}
		if t.role == "assistant" {
			c.endLocal = local
		} else {
			c.endLocal = hashRun{}
		}
	}
	c.end = run
	c.tokens = run.tokens
	if c.tokens > s.opts.contextWindow {
		return nil, bad("prompt is too long: %d tokens > %d maximum", c.tokens, s.opts.contextWindow)
	}
	return c, nil
}

func isThinking(b map[string]any) bool {
	return b["type"] == "thinking" || b["type"] == "redacted_thinking"
}

// checkBlock checks one content block of a message.
func checkBlock(role string, b map[string]any, path string) *invalid {
	typ, _ := b["type"].(string)
	switch typ {
	case "text":
		if t, _ := b["text"].(string); t == "" {
			return bad("%s.text: text content blocks must be non-empty", path)
		}
		if cites, _ := b["citations"].([]any); role == "user" && len(cites) > 0 {
			return bad("%s.citations: citations are not allowed on text blocks in user messages", path)
		}
	case "image":
		src, _ := b["source"].(map[string]any)
		switch src["type"] {
		case "base64":
			switch src["media_type"] {
			case "image/jpeg", "image/png", "image/gif", "image/webp":
			default:
				return bad("%s.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", path)
			}
			if d, _ := src["data"].(string); d == "" {
				return bad("%s.source.base64.data: Field required", path)
			}
		case "url":
			if u, _ := src["url"].(string); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				return bad("%s.source.url.url: Input should be a valid URL", path)
			}
		default:
			return bad("%s.source: Input tag does not match any of the expected tags: 'base64', 'url', 'file'", path)
		}
		if role != "user" {
			return bad("%s: image blocks are only allowed in user messages", path)
		}
	case "document":
		if role != "user" {
			return bad("%s: document blocks are not allowed in assistant messages", path)
		}
	case "thinking", "redacted_thinking", "tool_use", "server_tool_use", "web_search_tool_result":
		if role != "assistant" {
			return bad("%s.type: `%s` blocks are only allowed in assistant messages", path, typ)
		}
		if typ == "tool_use" || typ == "server_tool_use" {
			id, _ := b["id"].(string)
			if !toolIDRE.MatchString(id) {
				return bad("%s.id: String should match pattern '^[a-zA-Z0-9_-]+$'", path)
			}
			if _, ok := b["input"].(map[string]any); !ok {
				return bad("%s.input: Input should be a valid dictionary", path)
			}
		}
		if typ == "thinking" || typ == "redacted_thinking" {
			if b["cache_control"] != nil {
				return bad("%s: thinking blocks cannot be marked with cache_control", path)
			}
		}
	case "tool_result":
		if role != "user" {
			return bad("%s.type: `tool_result` blocks are only allowed in user messages", path)
		}
		if id, _ := b["tool_use_id"].(string); !toolIDRE.MatchString(id) {
			return bad("%s.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'", path)
		}
	default:
		return bad("%s.type: Input tag '%s' found using 'type' does not match any of the expected tags", path, typ)
	}
	return nil
}

// hashRun hashes the prompt item by item; sum is the hash of everything
// added so far.
type hashRun struct {
	sum    [32]byte
	tokens int
	last   string
}

func (h *hashRun) role(r string) {
	if h.last != r {
		h.last = r
		h.sum = sha256.Sum256(append(h.sum[:], "role:"+r...))
	}
}

func (h *hashRun) add(b map[string]any) item {
	enc := canonicalJSON(b)
	h.sum = sha256.Sum256(append(h.sum[:], enc...))
	h.tokens += tokenCount(enc)
	return item{hash: h.sum, tokens: h.tokens, breakpoint: b["cache_control"] != nil}
}

// tokenCount is the fake's tokenizer: a token per four bytes of the
// block's canonical JSON, at least one.
func tokenCount(b []byte) int { return max(1, len(b)/4) }

// canonical is a block as it counts for signatures and the cache: no
// cache_control, no empty citations, numbers as written.
func canonical(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if k == "cache_control" {
				continue
			}
			if a, ok := x.([]any); ok && k == "citations" && len(a) == 0 {
				continue
			}
			out[k] = canonical(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = canonical(x)
		}
		return out
	}
	return v
}

func canonicalJSON(v any) []byte {
	b, _ := json.Marshal(canonical(v))
	return b
}

// Signatures: base64(local prefix hash[:16] ‖ whole prefix hash[:16] ‖
// MAC[:16]), the MAC over the model, the text and both hashes.

type sigResult int

const (
	sigOK sigResult = iota
	sigBad
	sigMoved
	sigOtherConversation
)

func (s *Server) mac(parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s.opts.secret)
	for _, p := range parts {
		fmt.Fprintf(m, "%d:", len(p))
		m.Write(p)
	}
	return m.Sum(nil)[:16]
}

func (s *Server) sign(model, text string, local, whole [32]byte) string {
	raw := slices.Concat(local[:16], whole[:16], s.mac([]byte("thinking"), []byte(model), []byte(text), local[:16], whole[:16]))
	return base64.StdEncoding.EncodeToString(raw)
}

func (s *Server) verify(model, text, sig string, local, whole [32]byte) sigResult {
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(raw) != 48 {
		return sigBad
	}
	if !hmac.Equal(raw[32:], s.mac([]byte("thinking"), []byte(model), []byte(text), raw[:16], raw[16:32])) {
		return sigBad
	}
	if !bytes.Equal(raw[:16], local[:16]) {
		return sigMoved
	}
	if !bytes.Equal(raw[16:32], whole[:16]) {
		return sigOtherConversation
	}
	return sigOK
}

func (s *Server) redact(model, text string) string {
	raw := slices.Concat(s.mac([]byte("redacted"), []byte(model), []byte(text)), []byte(text))
	return base64.StdEncoding.EncodeToString(raw)
}

func (s *Server) verifyRedacted(model, data string) bool {
	raw, err := base64.StdEncoding.DecodeString(data)
	return err == nil && len(raw) >= 16 && hmac.Equal(raw[:16], s.mac([]byte("redacted"), []byte(model), raw[16:]))
}

// bill reads and writes the prompt cache and returns the input usage: the
// longest cached prefix found at a breakpoint, or up to 20 blocks before
// one, is read; the prompt up to the last breakpoint is written.
func (s *Server) bill(c *conv) Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	read, last := -1, -1
	for i, it := range c.items {
		if !it.breakpoint {
			continue
		}
		last = i
		for j := i; j >= 0 && j > i-20; j-- {
			if s.cache[c.items[j].hash] && j > read {
				read = j
				break
			}
		}
	}
	u := Usage{InputTokens: c.tokens}
	if read >= 0 {
		u.CacheReadInputTokens = c.items[read].tokens
	}
	if last > read && c.items[last].tokens >= s.opts.minCache {
		for i := read + 1; i <= last; i++ {
			if c.items[i].breakpoint && c.items[i].tokens >= s.opts.minCache {
				s.cache[c.items[i].hash] = true
			}
		}
		u.CacheCreationInputTokens = c.items[last].tokens - u.CacheReadInputTokens
	}
	u.InputTokens -= u.CacheReadInputTokens + u.CacheCreationInputTokens
	return u
}

// stream writes a scripted answer as the API streams it.
func (s *Server) stream(w http.ResponseWriter, c *conv, r *Reply, u *Usage) {
	s.mu.Lock()
	s.nextID++
	msgID := fmt.Sprintf("msg_fake%04d", s.nextID)
	s.mu.Unlock()
	model := r.Model
	if model == "" {
		model = c.model
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	event := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		flush()
	}
	// The blocks count what they bill into u, unless the reply says what
	// it bills.
	counted := u
	if r.Usage != nil {
		*u = *r.Usage
		counted = &Usage{}
	}
	usage := func(out int) map[string]any {
		return map[string]any{"input_tokens": u.InputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens,
			"cache_read_input_tokens": u.CacheReadInputTokens, "output_tokens": out,
			"output_tokens_details": map[string]any{"thinking_tokens": u.ThinkingTokens}}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(1),
	}})

	// What the model thinks only streams when thinking is on.
	thinks := c.thinking == "enabled" || c.thinking == "adaptive"
	var blocks []Block
	for _, b := range r.Content {
		if (b.Type == "thinking" || b.Type == "redacted_thinking") && !thinks {
			continue
		}
		blocks = append(blocks, b)
	}
	// Signatures cover what came before the block: the request (its final
	// assistant turn included, when this answer continues it) and the
	// blocks of this answer before it.
	whole, local := c.end, c.endLocal
	whole.role("assistant")
	local.role("assistant")
	out := 0
	stop := r.StopReason
	for i, b := range blocks {
		if r.FailAfter > 0 && i == r.FailAfter {
			typ := r.ErrorType
			if typ == "" {
				typ = "overloaded_error"
			}
			event("error", map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": errorText(typ)}})
			return
		}
		if b.Type == "tool_use" && stop == "" {
			stop = "tool_use"
		}
		var final map[string]any
		final, out = s.streamBlock(event, i, b, model, &local, &whole, out, counted)
		local.add(final)
		whole.add(final)
		if i == 0 {
			event("ping", map[string]any{"type": "ping"})
		}
	}
	if r.Cut || r.Stall {
		return
	}
	if stop == "" {
		stop = "end_turn"
	}
	if r.Usage == nil {
		u.OutputTokens = out
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage(u.OutputTokens)})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// streamBlock streams one content block and returns it as it will come
// back (canonical) and the output tokens so far.
func (s *Server) streamBlock(event func(string, any), i int, b Block, model string, local, whole *hashRun, out int, u *Usage) (map[string]any, int) {
	start := func(block map[string]any) {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block})
	}
	delta := func(d map[string]any) {
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	stop := func() { event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) }
	var final map[string]any
	switch b.Type {
	case "text":
		block := map[string]any{"type": "text", "text": ""}
		if len(b.Citations) > 0 {
			block["citations"] = []any{}
		}
		start(block)
		var cites []any
		for _, c := range b.Citations {
			cite := map[string]any{"type": "web_search_result_location", "cited_text": c.CitedText, "url": c.URL,
				"title": c.Title, "encrypted_index": base64.StdEncoding.EncodeToString([]byte("idx:" + c.URL))}
			cites = append(cites, cite)
			delta(map[string]any{"type": "citations_delta", "citation": cite})
		}
		for _, part := range s.split(b.Text) {
			delta(map[string]any{"type": "text_delta", "text": part})
		}
		stop()
		final = map[string]any{"type": "text", "text": b.Text}
		if len(cites) > 0 {
			final["citations"] = cites
		}
		out += tokenCount([]byte(b.Text))
	case "thinking":
		start(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
		for _, part := range s.split(b.Text) {
			delta(map[string]any{"type": "thinking_delta", "thinking": part})
		}
		sig := b.Signature
		if sig == "" {
			sig = s.sign(model, b.Text, local.sum, whole.sum)
		}
		delta(map[string]any{"type": "signature_delta", "signature": sig})
		stop()
		final = map[string]any{"type": "thinking", "thinking": b.Text, "signature": sig}
		n := tokenCount([]byte(b.Text))
		out += n
		u.ThinkingTokens += n
	case "redacted_thinking":
		final = map[string]any{"type": "redacted_thinking", "data": s.redact(model, b.Text)}
		start(final)
		stop()
		n := tokenCount([]byte(b.Text))
		out += n
		u.ThinkingTokens += n
	case "tool_use", "server_tool_use":
		start(map[string]any{"type": b.Type, "id": b.ID, "name": b.Name, "input": map[string]any{}})
		for _, part := range s.split(b.Input) {
			delta(map[string]any{"type": "input_json_delta", "partial_json": part})
		}
		stop()
		var input any = map[string]any{}
		if b.Input != "" {
			d := json.NewDecoder(strings.NewReader(b.Input))
			d.UseNumber()
			d.Decode(&input)
		}
		final = map[string]any{"type": b.Type, "id": b.ID, "name": b.Name, "input": input}
		out += tokenCount([]byte(b.Input))
	case "web_search_tool_result":
		content := []any{}
		for _, r := range b.Results {
			content = append(content, map[string]any{"type": "web_search_result", "url": r.URL, "title": r.Title,
				"encrypted_content": base64.StdEncoding.EncodeToString([]byte("page:" + r.URL)), "page_age": nil})
		}
		final = map[string]any{"type": "web_search_tool_result", "tool_use_id": b.ID, "content": content}
		start(final)
		stop()
	default:
		final = map[string]any{"type": b.Type}
		start(final)
		stop()
	}
	// Round-trip through JSON so the block hashes as it will come back.
	var back map[string]any
	d := json.NewDecoder(bytes.NewReader(canonicalJSON(final)))
	d.UseNumber()
	d.Decode(&back)
	return back, out
}

// split cuts s into deltas of the configured size, on rune boundaries.
func (s *Server) split(text string) []string {
	var out []string
	for len(text) > 0 {
		n := min(s.opts.chunk, len(text))
		for n < len(text) && !utf8Start(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func objects(v any) []map[string]any {
	a, _ := v.([]any)
	out := make([]map[string]any, 0, len(a))
	for _, x := range a {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func number(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	return n.Int64()
}
