package anthropic_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/anthropic"
	fake "github.com/agentui/agentui/internal/testkit/fakes/anthropic"
)

// Calls refused before the stream starts (429 rate limited, 529
// overloaded) are tried again after the time retry-after names; the
// fake clock of a synctest bubble shows the waits exactly.
func TestRetriesHonourRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewHandler()
		srv.Reply(
			fake.Reply{Status: 429, Header: http.Header{"Retry-After": {"3"}}},
			fake.Reply{Status: 529, Header: http.Header{"Retry-After": {"5"}}},
			fake.Reply{Content: []fake.Block{fake.Text("Hello.")}},
		)
		m := inProcess(t, srv, "claude-test", anthropic.WithMaxRetries(2))
		start := time.Now()
		chunks, err := collect(m, userReq("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 8*time.Second {
			t.Fatalf("waited %v, want the 3s and 5s the retry-after headers asked for", waited)
		}
		if joined(chunks, agent.ChunkText) != "Hello." || len(srv.Requests()) != 3 {
			t.Fatalf("chunks %+v after %d requests", chunks, len(srv.Requests()))
		}
	})
}

// The retries are bounded: once they are spent the error says the model
// is busy.
func TestRetriesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewHandler()
		for range 4 {
			srv.Reply(fake.Reply{Status: 529, Header: http.Header{"Retry-After": {"1"}}})
		}
		m := inProcess(t, srv, "claude-test", anthropic.WithMaxRetries(2))
		start := time.Now()
		_, err := collect(m, userReq("hi"))
		if !errors.Is(err, agent.ErrModelBusy) {
			t.Fatalf("err = %v", err)
		}
		if n := len(srv.Requests()); n != 3 || srv.Pending() != 1 {
			t.Fatalf("%d requests, %d replies left; want 3 and 1", n, srv.Pending())
		}
		if waited := time.Since(start); waited != 2*time.Second {
			t.Fatalf("waited %v", waited)
		}
	})
}

// A server error without retry-after is retried after a backoff (half a
// second, give or take a quarter, for the first retry).
func TestServerErrorRetriedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewHandler()
		srv.Reply(fake.Reply{Status: 500}, fake.Reply{Content: []fake.Block{fake.Text("ok")}})
		m := inProcess(t, srv, "claude-test", anthropic.WithMaxRetries(1))
		start := time.Now()
		if _, err := collect(m, userReq("hi")); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < 375*time.Millisecond || waited > 625*time.Millisecond {
			t.Fatalf("waited %v", waited)
		}
	})
}
