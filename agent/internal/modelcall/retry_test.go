package modelcall

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
)

// answer is one scripted response of a test server.
type answer struct {
	status int
	header map[string]string
	body   string
}

// server answers with the script, in order, then 200; it records the
// bodies it got.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	script []answer
	bodies []string
}

func newServer(t *testing.T, script ...answer) *server {
	s := &server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		a := answer{status: 200, body: "ok"}
		if len(s.script) > 0 {
			a, s.script = s.script[0], s.script[1:]
		}
		s.mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// waits records the waits asked for, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func client(retries int) (*http.Client, *waits) {
	c, t := Client(nil, retries)
	w := &waits{}
	t.Sleep = w.sleep
	return c, w
}

func post(c *http.Client, url, body string) (*http.Response, error) {
	return c.Post(url, "application/json", strings.NewReader(body))
}

func repeat(a answer, n int) []answer {
	out := make([]answer, n)
	for i := range out {
		out[i] = a
	}
	return out
}

// WithMaxRetries(n) means n more attempts for a retryable refusal, each
// sending the same body; the last refusal is what the caller gets.
func TestRetriesAreBoundedByMaxRetries(t *testing.T) {
	for _, retries := range []int{0, 1, 3} {
		s := newServer(t, repeat(answer{status: 503, body: "busy"}, 10)...)
		c, w := client(retries)
		resp, err := post(c, s.URL, `{"q":1}`)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || string(body) != "busy" || s.requests() != retries+1 || len(w.d) != retries {
			t.Fatalf("retries %d: %d %q after %d requests, %d waits", retries, resp.StatusCode, body, s.requests(), len(w.d))
		}
		for i, b := range s.bodies {
			if b != `{"q":1}` {
				t.Fatalf("attempt %d sent %q", i, b)
			}
		}
	}
}

// The statuses that are retried, and those that are not; a response's
// x-should-retry overrules its status.
func TestWhatIsRetried(t *testing.T) {
	for _, tc := range []struct {
		a     answer
		retry bool
	}{
		{answer{status: 408}, true},
		{answer{status: 409}, true},
		{answer{status: 429}, true},
		{answer{status: 500}, true},
		{answer{status: 502}, true},
		{answer{status: 503}, true},
		{answer{status: 529}, true},
		{answer{status: 400}, false},
		{answer{status: 401}, false},
		{answer{status: 403}, false},
		{answer{status: 404}, false},
		{answer{status: 413}, false},
		{answer{status: 503, header: map[string]string{"x-should-retry": "false"}}, false},
		{answer{status: 400, header: map[string]string{"x-should-retry": "true"}}, true},
		{answer{status: 200, header: map[string]string{"x-should-retry": "true"}}, false},
	} {
		s := newServer(t, tc.a)
		c, _ := client(2)
		resp, err := post(c, s.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if retried := s.requests() > 1; retried != tc.retry {
			t.Errorf("%d %v: retried %v", tc.a.status, tc.a.header, retried)
		}
	}
}

// The wait is what the API asks for: the provider's own hint in the body,
// else retry-after-ms, else Retry-After; a wait over MaxRetryWait is not
// waited (the refusal comes at once); without a hint the waits back off.
func TestRetryWaits(t *testing.T) {
	hint := func(body []byte) (time.Duration, bool) {
		d, err := time.ParseDuration(strings.TrimPrefix(string(body), "retry in "))
		return d, err == nil
	}
	for _, tc := range []struct {
		name   string
		a      answer
		hint   bool
		wait   time.Duration // 0: a backoff, between lo and hi
		lo, hi time.Duration
		gaveUp bool
	}{
		{name: "body hint", a: answer{status: 429, body: "retry in 250ms", header: map[string]string{"Retry-After": "9"}}, hint: true, wait: 250 * time.Millisecond},
		{name: "retry-after-ms", a: answer{status: 429, header: map[string]string{"retry-after-ms": "1500", "Retry-After": "9"}}, wait: 1500 * time.Millisecond},
		{name: "retry-after seconds", a: answer{status: 503, header: map[string]string{"Retry-After": "2"}}, wait: 2 * time.Second},
		{name: "retry-after zero", a: answer{status: 503, header: map[string]string{"Retry-After": "0"}}},
		{name: "too long", a: answer{status: 429, header: map[string]string{"Retry-After": "3600"}}, gaveUp: true},
		{name: "too long in the body", a: answer{status: 429, body: "retry in 2h"}, hint: true, gaveUp: true},
		{name: "no hint", a: answer{status: 500}, lo: 375 * time.Millisecond, hi: 625 * time.Millisecond},
		{name: "a hint that does not parse", a: answer{status: 500, header: map[string]string{"Retry-After": "soon"}}, lo: 375 * time.Millisecond, hi: 625 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.a)
			c, tr := Client(nil, 1)
			w := &waits{}
			tr.Sleep = w.sleep
			if tc.hint {
				tr.Hint = hint
			}
			resp, err := post(c, s.URL, "{}")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.gaveUp {
				if len(w.d) != 0 || s.requests() != 1 || resp.StatusCode != tc.a.status || string(body) != tc.a.body {
					t.Fatalf("waited %v over %d requests; got %d %q", w.d, s.requests(), resp.StatusCode, body)
				}
				return
			}
			if len(w.d) != 1 || s.requests() != 2 {
				t.Fatalf("waited %v over %d requests", w.d, s.requests())
			}
			if tc.hi == 0 && w.d[0] != tc.wait || tc.hi != 0 && (w.d[0] < tc.lo || w.d[0] > tc.hi) {
				t.Fatalf("waited %v", w.d[0])
			}
		})
	}
	// The backoff doubles, up to 8s.
	s := newServer(t, repeat(answer{status: 500}, 7)...)
	c, w := client(6)
	resp, _ := post(c, s.URL, "{}")
	resp.Body.Close()
	for i, lo := range []time.Duration{375 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 6 * time.Second, 6 * time.Second} {
		if w.d[i] < lo || w.d[i] > lo*5/3 {
			t.Fatalf("backoff %v", w.d)
		}
	}
}

// A request that reaches no server is retried, and once the retries are
// spent its error wraps agent.ErrModelUnreachable and keeps its cause.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	c, w := client(2)
	_, err = post(c, "http://"+addr+"/v1", "{}")
	var opErr *net.OpError
	if !errors.Is(err, agent.ErrModelUnreachable) || !errors.As(err, &opErr) || len(w.d) != 2 {
		t.Fatalf("err = %v after %d waits", err, len(w.d))
	}
	if w.d[0] < 375*time.Millisecond || w.d[1] < 750*time.Millisecond {
		t.Fatalf("backoff %v", w.d)
	}
}

// A request whose body cannot be sent again is not retried.
func TestBodyThatCannotBeResentIsNotRetried(t *testing.T) {
	s := newServer(t, answer{status: 503})
	c, _ := client(2)
	req, _ := http.NewRequest("POST", s.URL, io.NopCloser(strings.NewReader("{}")))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || s.requests() != 1 {
		t.Fatalf("%d after %d requests", resp.StatusCode, s.requests())
	}
}

// A caller that goes away while a retry waits ends the call at once, with
// its own error, not ErrModelUnreachable.
func TestCancelWhileWaiting(t *testing.T) {
	s := newServer(t, repeat(answer{status: 503}, 5)...)
	c, tr := Client(nil, 3)
	ctx, cancel := context.WithCancel(context.Background())
	tr.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL, strings.NewReader("{}"))
	_, err := c.Do(req)
	if !errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrModelUnreachable) || s.requests() != 1 {
		t.Fatalf("err = %v after %d requests", err, s.requests())
	}
}

func TestStatusError(t *testing.T) {
	for status, want := range map[int]error{
		200: nil, 400: agent.ErrModelRejected, 401: agent.ErrModelAccessDenied, 403: agent.ErrModelAccessDenied,
		404: agent.ErrModelRejected, 408: agent.ErrModelBusy, 409: agent.ErrModelBusy, 413: agent.ErrModelRejected,
		422: agent.ErrModelRejected, 429: agent.ErrModelBusy, 500: agent.ErrModelBusy, 503: agent.ErrModelBusy, 529: agent.ErrModelBusy,
	} {
		if got := StatusError(status); got != want {
			t.Errorf("%d: %v, want %v", status, got, want)
		}
	}
}

func TestCheckMaxRetries(t *testing.T) {
	if CheckMaxRetries("p", 0) != nil || CheckMaxRetries("p", 3) != nil {
		t.Fatal("refused a count of retries")
	}
	if err := CheckMaxRetries("p", -1); err == nil || !strings.HasPrefix(err.Error(), "p: ") {
		t.Fatalf("err = %v", err)
	}
}
