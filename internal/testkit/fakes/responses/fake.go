// Package responses is a fake of the OpenAI Responses API (POST
// /v1/responses) that the real openai-go client talks to over loopback.
//
// It streams what the real API streams (the event names, JSON shapes and
// ordering of OpenAI's recorded streams) and refuses what the real API
// refuses, with the real status, error shape and message: a reasoning
// item without its encrypted content when nothing is stored, encrypted
// content that is altered or was issued for another model, a reasoning
// item without the item that followed it, a function call sent with its
// item id but without its reasoning item, a function call output without
// its call, and the like (see validate.go for the list and where each rule
// comes from). Each test scripts what the "model" answers ([Reply]) and
// reads back every request the fake got ([Server.Requests]).
//
// The fake issues a reasoning item's encrypted_content as a MAC over the
// model, the item id and the summary text, so a value that was changed,
// moved to another item, or sent to another model does not verify.
//
// It is deterministic: ids come from counters and the MAC key is fixed.
package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is a running fake.
type Server struct {
	// URL is the API's base URL, ending in /v1: what OPENAI_BASE_URL
	// would be.
	URL string

	srv       *httptest.Server
	t         testing.TB
	apiKey    string
	window    int64
	responder func(*Request) Reply
	tag       string

	mu       sync.Mutex
	queue    []Reply
	requests []*Request
	n        int               // ids issued
	calls    map[string]string // function_call item id → the reasoning item before it
	prompts  map[string][][]byte
}

// Request is one request the fake got, and what it answered.
type Request struct {
	// Time is when the request arrived.
	Time   time.Time
	Header http.Header
	// Body is the request body as sent.
	Body []byte
	// Status is the HTTP status the fake answered (200 for a stream, also
	// one that failed inside).
	Status int
	// Error is the error the fake answered with, in the body or in the
	// stream; nil for none.
	Error *Error
	// Output holds the output items the fake streamed, each as it sent
	// it in response.output_item.done.
	Output []json.RawMessage
}

// JSON decodes the request body.
func (r *Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Items decodes the request's input items (a string input is one user
// message).
func (r *Request) Items() []map[string]any {
	var p struct {
		Input json.RawMessage `json:"input"`
	}
	_ = json.Unmarshal(r.Body, &p)
	var items []map[string]any
	if json.Unmarshal(p.Input, &items) != nil {
		var s string
		if json.Unmarshal(p.Input, &s) == nil {
			items = []map[string]any{{"role": "user", "content": s}}
		}
	}
	return items
}

// Option configures a [Server].
type Option func(*Server)

// WithAPIKey makes the fake accept only this key (Authorization: Bearer
// key). The default accepts any non-empty key.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithContextWindow sets the context window of every model, in tokens as
// the fake counts them (a token is 4 bytes of the request's instructions,
// tools and input). A request over it is refused in the stream with
// context_length_exceeded. The default is 400,000.
func WithContextWindow(tokens int64) Option { return func(s *Server) { s.window = tokens } }

// WithResponder answers requests for which no reply was queued
// ([Server.Enqueue]): a fake that a whole conversation can run against
// without scripting each call. The default fails the test.
func WithResponder(f func(*Request) Reply) Option { return func(s *Server) { s.responder = f } }

var instances atomic.Uint64

// New starts a fake for a test and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := Start(opts...)
	s.t = t
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake; Close stops it.
func Start(opts ...Option) *Server {
	s := &Server{
		window: 400_000,
		tag:    fmt.Sprintf("%016x", instances.Add(1)),
		calls:  map[string]string{},
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Enqueue adds replies for the next requests, one each, in order. A
// request the fake refuses (400, 404) does not take one.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// Requests returns the requests so far, oldest first.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Pending is the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if prefix == "call" {
		return fmt.Sprintf("call_%s%08x", s.tag[8:], n)
	}
	return fmt.Sprintf("%s_%s%016x", prefix, s.tag, n)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		writeError(w, http.StatusNotFound, &Error{Message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")", Type: "invalid_request_error"})
		return
	}
	arrived := time.Now()
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	req := &Request{Time: arrived, Header: r.Header.Clone(), Body: body.Bytes()}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.serve(w, r, req)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, req *Request) {
	refuse := func(status int, e *Error) {
		s.mu.Lock()
		req.Status, req.Error = status, e
		s.mu.Unlock()
		writeError(w, status, e)
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case key == "":
		refuse(http.StatusUnauthorized, &Error{Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", Type: "invalid_request_error"})
		return
	case s.apiKey != "" && key != s.apiKey:
		refuse(http.StatusUnauthorized, &Error{Message: "Incorrect API key provided: " + maskKey(key) + ". You can find your API key at https://platform.openai.com/account/api-keys.", Type: "invalid_request_error", Code: "invalid_api_key"})
		return
	}
	p, status, e := s.validate(req.Body)
	if e != nil {
		refuse(status, e)
		return
	}
	prompt := p.prompt()
	usageIn := s.inputUsage(p.Model, prompt)
	if usageIn.InputTokens > s.window {
		s.answer(w, req, p, Reply{StreamError: true, Error: overflowError()}, usageIn)
		return
	}
	reply, ok := s.next(req)
	if !ok {
		if s.t != nil {
			s.t.Errorf("fake responses: no reply is scripted for request %d", len(s.Requests()))
		}
		refuse(http.StatusBadRequest, &Error{Message: "fake: no reply is scripted for this request", Type: "invalid_request_error"})
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if reply.RetryAfter > 0 {
			w.Header().Set("retry-after-ms", fmt.Sprint(reply.RetryAfter.Milliseconds()))
			w.Header().Set("retry-after", fmt.Sprint(int64((reply.RetryAfter+999_999_999)/1_000_000_000)))
		}
		e := reply.Error
		if e == nil {
			e = &Error{Message: http.StatusText(reply.Status), Type: "server_error"}
		}
		refuse(reply.Status, e)
		return
	}
	s.remember(p.Model, prompt)
	s.answer(w, req, p, reply, usageIn)
	if reply.Stall {
		<-r.Context().Done()
	}
}

func (s *Server) next(req *Request) (Reply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	s.mu.Unlock()
	if s.responder != nil {
		return s.responder(req), true
	}
	return Reply{}, false
}

// inputUsage counts a prompt's tokens and the part of it that a previous
// request to the same model had already sent: OpenAI caches prompt
// prefixes of 1,024 tokens and more, in steps of 128 tokens.
func (s *Server) inputUsage(model string, prompt []byte) Usage {
	in := tokens(len(prompt))
	s.mu.Lock()
	defer s.mu.Unlock()
	var common int
	for _, prev := range s.prompts[model] {
		n := 0
		for n < len(prev) && n < len(prompt) && prev[n] == prompt[n] {
			n++
		}
		common = max(common, n)
	}
	var cached int64
	if c := int64(common / 4); c >= 1024 {
		cached = min(1024+(c-1024)/128*128, in)
	}
	return Usage{InputTokens: in, CachedTokens: cached}
}

func (s *Server) remember(model string, prompt []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prompts == nil {
		s.prompts = map[string][][]byte{}
	}
	s.prompts[model] = append(s.prompts[model], prompt)
}

func tokens(n int) int64 { return int64(n+3) / 4 }

func writeError(w http.ResponseWriter, status int, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.MarshalIndent(map[string]any{"error": e.wire()}, "", "  ")
	_, _ = w.Write(b)
}

// wire is the error object as the API sends it, with null for an empty
// param or code.
func (e *Error) wire() map[string]any {
	m := map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": nil}
	if e.Param != "" {
		m["param"] = e.Param
	}
	if e.Code != "" {
		m["code"] = e.Code
	}
	return m
}

func maskKey(k string) string {
	if len(k) <= 8 {
		return "sk-****"
	}
	return k[:3] + strings.Repeat("*", 8) + k[len(k)-4:]
}
