package modelcall_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/agent/openai"
	"github.com/agentui/agentui/agent/openai/responses"
	"github.com/agentui/agentui/cmf"
	anthropicfake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
	geminifake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
	responsesfake "github.com/agentui/agentui/internal/testkit/fakes/responses"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// The same fault, met by each of the four models through its provider's
// fake, must mean the same to the user: the same agent error, and so the
// same sentence (uiadapter's failureMessage). And WithMaxRetries must
// mean the same for each: how many times a refused request is sent again.

// fault is what a provider's fake does to every request.
type fault int

const (
	serverError fault = iota // 500
	rateLimited              // 429
	overloaded               // 503
	overflow                 // a prompt over the context window
	invalid                  // 400, a request the API will not take
	badKey                   // the server's key is refused
	unreachable              // nothing listens at the base URL
)

func (f fault) String() string {
	return [...]string{"500", "429", "503", "context overflow", "invalid request", "bad key", "unreachable"}[f]
}

// means is the agent error each fault must come out as.
var means = map[fault]error{
	serverError: agent.ErrModelBusy,
	rateLimited: agent.ErrModelBusy,
	overloaded:  agent.ErrModelBusy,
	overflow:    agent.ErrContextOverflow,
	invalid:     agent.ErrModelRejected,
	badKey:      agent.ErrModelAccessDenied,
	unreachable: agent.ErrModelUnreachable,
}

// unset leaves WithMaxRetries out.
const unset = math.MinInt

const (
	key      = "the-right-key-1234"
	wrongKey = "a-wrong-key-5678"
	// prompt is longer than the small context window the overflow fault
	// gives each fake.
	prompt = "Tell me everything about the weather in Oslo, Paris and Tokyo, in as much detail as you can."
)

// provider starts a model of one provider whose fake meets a fault;
// retries is what WithMaxRetries is given, or unset. requests counts what
// the fake got.
type provider struct {
	name  string
	tag   string // what its errors start with
	start func(t *testing.T, f fault, retries int) (m agent.Model, requests func() int, err error)
}

// providers are the four models, each over its provider's fake. A
// refusal worth retrying comes with the hint to retry at once (Responses'
// fake has no zero: a millisecond), so that no test waits on a backoff.
var providers = []provider{
	{"anthropic", "anthropic:", func(t *testing.T, f fault, retries int) (agent.Model, func() int, error) {
		opts := []anthropicfake.Option{anthropicfake.WithAPIKey(key)}
		now := http.Header{"Retry-After-Ms": {"0"}}
		switch f {
		case serverError:
			opts = append(opts, anthropicfake.WithResponder(func(*anthropicfake.Request) anthropicfake.Reply {
				return anthropicfake.Reply{Status: 500, Header: now}
			}))
		case rateLimited, overloaded:
			status := map[fault]int{rateLimited: 429, overloaded: 503}[f]
			opts = append(opts, anthropicfake.WithResponder(func(*anthropicfake.Request) anthropicfake.Reply {
				return anthropicfake.Reply{Status: status, Header: now}
			}))
		case overflow:
			opts = append(opts, anthropicfake.WithContextWindow(10))
		case invalid:
			opts = append(opts, anthropicfake.WithResponder(func(*anthropicfake.Request) anthropicfake.Reply {
				return anthropicfake.Reply{Status: 400, ErrorMessage: "messages: text content blocks must be non-empty"}
			}))
		}
		srv := anthropicfake.New(t, opts...)
		mo := []anthropic.Option{anthropic.WithAPIKey(keyFor(f)), anthropic.WithBaseURL(baseURL(t, f, srv.URL))}
		if retries != unset {
			mo = append(mo, anthropic.WithMaxRetries(retries))
		}
		m, err := anthropic.New("claude-test", mo...)
		return m, func() int { return len(srv.Requests()) }, err
	}},
	{"gemini", "gemini:", func(t *testing.T, f fault, retries int) (agent.Model, func() int, error) {
		opts := []geminifake.Option{geminifake.WithAPIKey(key)}
		fail := func(code int, status string) {
			opts = append(opts, geminifake.WithResponder(func(*geminifake.Request) geminifake.Reply {
				return geminifake.Reply{Fail: &geminifake.Failure{Code: code, Status: status, Message: "try again", RetryDelay: "0s"}}
			}))
		}
		switch f {
		case serverError:
			fail(500, "INTERNAL")
		case rateLimited:
			fail(429, "RESOURCE_EXHAUSTED")
		case overloaded:
			fail(503, "UNAVAILABLE")
		case overflow:
			opts = append(opts, geminifake.WithContextWindow(10))
		case invalid:
			opts = append(opts, geminifake.WithResponder(func(*geminifake.Request) geminifake.Reply {
				return geminifake.InvalidArgument("Request contains an invalid argument.")
			}))
		}
		srv := geminifake.New(t, opts...)
		mo := []gemini.Option{gemini.WithAPIKey(keyFor(f)), gemini.WithBaseURL(baseURL(t, f, srv.URL))}
		if retries != unset {
			mo = append(mo, gemini.WithMaxRetries(retries))
		}
		m, err := gemini.New("gemini-3-flash-preview", mo...)
		return m, func() int { return len(srv.Requests()) }, err
	}},
	{"openai responses", "openai responses:", func(t *testing.T, f fault, retries int) (agent.Model, func() int, error) {
		opts := []responsesfake.Option{responsesfake.WithAPIKey(key)}
		fail := func(status int, e *responsesfake.Error) {
			opts = append(opts, responsesfake.WithResponder(func(*responsesfake.Request) responsesfake.Reply {
				return responsesfake.Reply{Status: status, RetryAfter: time.Millisecond, Error: e}
			}))
		}
		switch f {
		case serverError:
			fail(500, &responsesfake.Error{Message: "The server had an error while processing your request.", Type: "server_error"})
		case rateLimited:
			fail(429, &responsesfake.Error{Message: "Rate limit reached.", Type: "requests", Code: "rate_limit_exceeded"})
		case overloaded:
			fail(503, &responsesfake.Error{Message: "The engine is currently overloaded.", Type: "server_error"})
		case overflow:
			opts = append(opts, responsesfake.WithContextWindow(10))
		case invalid:
			fail(400, &responsesfake.Error{Message: "Invalid value for 'input'.", Type: "invalid_request_error", Param: "input"})
		}
		srv := responsesfake.New(t, opts...)
		mo := []responses.Option{responses.WithAPIKey(keyFor(f)), responses.WithBaseURL(baseURL(t, f, srv.URL))}
		if retries != unset {
			mo = append(mo, responses.WithMaxRetries(retries))
		}
		m, err := responses.New("gpt-5", mo...)
		return m, func() int { return len(srv.Requests()) }, err
	}},
	{"openai chat", "openai:", func(t *testing.T, f fault, retries int) (agent.Model, func() int, error) {
		srv := newChatFake(t, f)
		mo := []openai.Option{openai.WithAPIKey(keyFor(f)), openai.WithBaseURL(baseURL(t, f, srv.URL+"/v1"))}
		if retries != unset {
			mo = append(mo, openai.WithMaxRetries(retries))
		}
		m, err := openai.New("gpt-test", mo...)
		return m, srv.requests, err
	}},
}

func keyFor(f fault) string {
	if f == badKey {
		return wrongKey
	}
	return key
}

// baseURL is the fake's URL, or for the unreachable fault an address
// where nothing listens (connections to it are refused).
func baseURL(t *testing.T, f fault, url string) string {
	if f != unreachable {
		return url
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// chatFake is a Chat Completions endpoint that answers every request with
// a fault, as OpenAI answers it (the repository's Chat Completions tests
// keep their fake in their own package).
type chatFake struct {
	*httptest.Server
	mu sync.Mutex
	n  int
}

func newChatFake(t *testing.T, f fault) *chatFake {
	c := &chatFake{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
		refuse := func(status int, typ, code, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After-Ms", "0")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":%q}}`, msg, typ, code)
		}
		switch {
		case r.Header.Get("Authorization") != "Bearer "+key:
			refuse(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: a-wrong-****5678.")
		case f == serverError:
			refuse(500, "server_error", "", "The server had an error while processing your request.")
		case f == rateLimited:
			refuse(429, "requests", "rate_limit_exceeded", "Rate limit reached.")
		case f == overloaded:
			refuse(503, "server_error", "", "The engine is currently overloaded.")
		case f == overflow:
			refuse(400, "invalid_request_error", "context_length_exceeded", "This model's maximum context length is 10 tokens.")
		case f == invalid:
			refuse(400, "invalid_request_error", "", "Invalid value for 'messages'.")
		default:
			refuse(500, "server_error", "", "the test scripted no fault")
		}
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *chatFake) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func call(m agent.Model) error {
	req := &agent.Request{Messages: []cmf.Message{{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: prompt}}}}}
	for _, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return err
		}
	}
	return errors.New("the call succeeded")
}

// Each fault comes out of every provider as the same agent error, and
// as that one only; the provider's message and the key stay out of it.
func TestSameFaultSameMeaning(t *testing.T) {
	for f := serverError; f <= unreachable; f++ {
		for _, p := range providers {
			t.Run(f.String()+"/"+p.name, func(t *testing.T) {
				retries := 1 // a refusal worth retrying outlasts the retries
				if f == unreachable {
					retries = 0 // no hint to wait for: a retry would back off
				}
				m, _, err := p.start(t, f, retries)
				if err != nil {
					t.Fatal(err)
				}
				err = call(m)
				for _, other := range []error{agent.ErrModelBusy, agent.ErrContextOverflow, agent.ErrModelRejected, agent.ErrModelAccessDenied, agent.ErrModelUnreachable} {
					if other != means[f] && errors.Is(err, other) {
						t.Errorf("err %v also means %v", err, other)
					}
				}
				if !errors.Is(err, means[f]) {
					t.Fatalf("err = %v (%T), want it to mean %v", err, err, means[f])
				}
				for _, leak := range []string{key, wrongKey, "5678", "try again", "Incorrect API key"} {
					if strings.Contains(err.Error(), leak) {
						t.Errorf("the error carries the provider's text %q: %v", leak, err)
					}
				}
			})
		}
	}
}

// What a useChat client reads of a failed reply is the same sentence for
// the same fault, whichever provider failed, and nothing of the
// provider's own words.
func TestSameFaultSameWords(t *testing.T) {
	for _, tc := range []struct {
		f    fault
		want string
	}{
		{serverError, wire.ModelBusyMessage},
		{rateLimited, wire.ModelBusyMessage},
		{overflow, wire.ContextOverflowMessage},
		{invalid, wire.ModelRejectedMessage},
		{badKey, wire.ModelAccessDeniedMessage},
		{unreachable, wire.ModelUnreachableMessage},
	} {
		for _, p := range providers {
			t.Run(tc.f.String()+"/"+p.name, func(t *testing.T) {
				retries := 1
				if tc.f == unreachable {
					retries = 0
				}
				m, _, err := p.start(t, tc.f, retries)
				if err != nil {
					t.Fatal(err)
				}
				loop, err := agent.New(m)
				if err != nil {
					t.Fatal(err)
				}
				logs := &testutil.LogBuffer{}
				h, err := vercelai.Handler(loop, uiadapter.WithSecret([]byte("test-secret")), uiadapter.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(h)
				chunks := testutil.PostStream(t, srv.URL, testutil.UserMessage("chat-1", "u1", prompt))
				srv.Close() // waits for the handler, which logs the failure
				e := chunks.Find("error")
				if e == nil || e["errorText"] != tc.want {
					t.Fatalf("the client read %v, want %q", e, tc.want)
				}
				if !strings.Contains(logs.String(), p.tag) {
					t.Fatalf("the log does not name the provider's failure:\n%s", logs)
				}
			})
		}
	}
}

// WithMaxRetries(n) sends a request refused with 503 n+1 times in all,
// for every provider; unset, it is sent three times (two retries); and a
// negative n is refused when the model is made.
func TestMaxRetriesMeansTheSameEverywhere(t *testing.T) {
	for _, p := range providers {
		for _, retries := range []int{0, 1, 3, unset} {
			name := fmt.Sprintf("%s/%d", p.name, retries)
			want := retries + 1
			if retries == unset {
				name, want = p.name+"/default", 3
			}
			t.Run(name, func(t *testing.T) {
				m, requests, err := p.start(t, overloaded, retries)
				if err != nil {
					t.Fatal(err)
				}
				if err := call(m); !errors.Is(err, agent.ErrModelBusy) {
					t.Fatalf("err = %v", err)
				}
				if got := requests(); got != want {
					t.Fatalf("the fake got %d requests, want %d", got, want)
				}
			})
		}
	}
	for _, p := range providers {
		if _, _, err := p.start(t, overloaded, -2); err == nil || !strings.Contains(err.Error(), "max retries must not be negative") {
			t.Errorf("%s: WithMaxRetries(-2): err = %v", p.name, err)
		}
	}
}
