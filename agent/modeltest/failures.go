package modeltest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/agentui/agentui/agent"
)

// providerWords is what the suite's scripted refusals say, echoing the
// key as some APIs do; no error may carry it.
const providerWords = "modeltest provider words: Incorrect API key provided: " + key

// meanings are the agent errors a failure can mean (docs/models.md).
var meanings = []error{agent.ErrModelBusy, agent.ErrContextOverflow, agent.ErrModelUnreachable, agent.ErrModelRejected, agent.ErrModelAccessDenied}

// retries: a request refused as overloaded is sent WithMaxRetries(n) + 1
// times in all, then fails as agent.ErrModelBusy; a refusal followed by an
// answer gives the answer.
func (s *suite) retries(t *testing.T) {
	s.needs(t, Scripted, Faults, Retries)
	for _, n := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("%d retries", n), func(t *testing.T) {
			b := s.start(t)
			m := s.model(t, b, Config{MaxRetries: n})
			for range n + 2 { // one more than may be used, so that an extra retry shows
				b.Script(Answer{Fault: Overloaded, Message: providerWords})
			}
			r := s.call(t, context.Background(), m, s.h.Model, ask("Hello"))
			if !errors.Is(r.err, agent.ErrModelBusy) {
				t.Errorf("err = %v, want agent.ErrModelBusy", r.err)
			}
			if got := len(b.Requests()); got != n+1 {
				t.Errorf("WithMaxRetries(%d) sent the request %d times, want %d", n, got, n+1)
			}
		})
	}
	t.Run("then an answer", func(t *testing.T) {
		b := s.start(t)
		m := s.model(t, b, Config{MaxRetries: 2})
		b.Script(Answer{Fault: Overloaded, Message: providerWords}, Answer{Text: "Hello!"})
		r := s.call(t, context.Background(), m, s.h.Model, ask("Hello"))
		if r.err != nil || r.text() != "Hello!" {
			t.Errorf("the call gave %q, %v; want the answer after the retry", r.text(), r.err)
		}
		if got := len(b.Requests()); got != 2 {
			t.Errorf("%d requests, want 2", got)
		}
	})
}

// faults: each standard failure means one agent error, the one
// docs/models.md's table names, which alone decides what a user is told
// (uiadapter turns each into one sentence). The error's own text goes to
// the log: it carries neither the key nor the provider's words, and for a
// refusal no URL.
func (s *suite) faults(t *testing.T) {
	s.needs(t, Scripted, Faults)
	for _, tc := range []struct {
		fault    Fault
		want     error
		requests int // with one retry allowed
	}{
		{RateLimited, agent.ErrModelBusy, 2},
		{ServerError, agent.ErrModelBusy, 2},
		{Overloaded, agent.ErrModelBusy, 2},
		{InvalidRequest, agent.ErrModelRejected, 1},
		{BadKey, agent.ErrModelAccessDenied, 1},
		{ContextOverflow, agent.ErrContextOverflow, 1},
	} {
		t.Run(tc.fault.String(), func(t *testing.T) {
			b := s.start(t)
			m := s.model(t, b, Config{MaxRetries: 1})
			for range 4 {
				b.Script(Answer{Fault: tc.fault, Message: providerWords})
			}
			r := s.call(t, context.Background(), m, s.h.Model, ask("Hello"))
			checkMeaning(t, r.err, tc.want)
			if r.err != nil && strings.Contains(r.err.Error(), "://") {
				t.Errorf("the error names a URL: %v", r.err)
			}
			if got := len(b.Requests()); !s.lacks(Retries) && got != tc.requests {
				t.Errorf("the request was sent %d times, want %d", got, tc.requests)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		// No retry: with no hint from an API, a retry backs off for real.
		b := s.start(t)
		m := s.model(t, b, Config{BaseURL: deadAddress(t)})
		r := s.call(t, context.Background(), m, s.h.Model, ask("Hello"))
		// Its text names the address, which is what its operator needs;
		// it goes to the log only.
		checkMeaning(t, r.err, agent.ErrModelUnreachable)
		if got := len(b.Requests()); got != 0 {
			t.Errorf("the backend got %d requests, which went elsewhere", got)
		}
	})
}

// checkMeaning: err means want, and no other agent error, and its text
// carries neither the key nor the provider's words.
func checkMeaning(t *testing.T, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("the call succeeded; want it to fail with %v", want)
	}
	if !errors.Is(err, want) {
		t.Errorf("err = %v (%T); want it to mean %v", err, err, want)
	}
	for _, other := range meanings {
		if other != want && errors.Is(err, other) {
			t.Errorf("err = %v also means %v", err, other)
		}
	}
	for _, leak := range []string{key, "modeltest provider words", "Incorrect API key"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the error carries %q: %v", leak, err)
		}
	}
}

// deadAddress is a base URL where nothing listens: connections to it are
// refused.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}
