package gemini_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/gemini"
	"github.com/agentui/agentui/cmf"
	fake "github.com/agentui/agentui/internal/testkit/fakes/gemini"
)

// waits records the waits a model asks for between retries, without
// waiting.
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

func retrying(t *testing.T, retries int) (*fake.Server, *gemini.Model, *waits) {
	f := fake.New(t, fake.WithAPIKey(testKey))
	m := newModel(t, f, testModel, gemini.WithMaxRetries(retries))
	w := &waits{}
	gemini.SetSleep(m, w.sleep)
	return f, m, w
}

// A 429 before the first byte is retried after the delay the API asks
// for (RetryInfo), a 503 after its Retry-After; the reply then streams.
func TestRetriesHonourTheAPIsDelay(t *testing.T) {
	f, m, w := retrying(t, 2)
	overloaded := fake.Overloaded()
	overloaded.Fail.RetryAfter = "2"
	f.Script(fake.RateLimited("0.25s"), overloaded, fake.Say("Hello."))
	chunks, err := stream(m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if chunks[0].Delta != "Hello." || len(f.Requests()) != 3 {
		t.Fatalf("chunks %+v after %d requests", chunks, len(f.Requests()))
	}
	if !slices.Equal(w.d, []time.Duration{250 * time.Millisecond, 2 * time.Second}) {
		t.Fatalf("waited %v", w.d)
	}
	// Every attempt sent the same body.
	reqs := f.Requests()
	for _, r := range reqs[1:] {
		if string(r.Body) != string(reqs[0].Body) {
			t.Fatalf("a retry sent another body:\n%s\n%s", r.Body, reqs[0].Body)
		}
	}
}

// After the bound the error is agent.ErrModelBusy; without a hint the
// waits back off.
func TestRetriesAreBounded(t *testing.T) {
	f, m, w := retrying(t, 2)
	f.Script(fake.Overloaded(), fake.Overloaded(), fake.Overloaded(), fake.Say("never"))
	_, err := stream(m, userReq("hi"))
	if !errors.Is(err, agent.ErrModelBusy) {
		t.Fatalf("err = %v", err)
	}
	var apiErr *gemini.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Status != "UNAVAILABLE" {
		t.Fatalf("err = %#v", err)
	}
	if len(f.Requests()) != 3 || f.Pending() != 1 {
		t.Fatalf("%d requests", len(f.Requests()))
	}
	if len(w.d) != 2 || w.d[0] < 375*time.Millisecond || w.d[0] > 625*time.Millisecond || w.d[1] < 750*time.Millisecond || w.d[1] > 1250*time.Millisecond {
		t.Fatalf("backoff %v", w.d)
	}
}

// A wait longer than a user should sit through is not waited: the error
// comes at once.
func TestTooLongAWaitIsNotWaited(t *testing.T) {
	f, m, w := retrying(t, 2)
	f.Script(fake.RateLimited("3600s"), fake.Say("never"))
	if _, err := stream(m, userReq("hi")); !errors.Is(err, agent.ErrModelBusy) {
		t.Fatalf("err = %v", err)
	}
	if len(w.d) != 0 || len(f.Requests()) != 1 {
		t.Fatalf("waited %v over %d requests", w.d, len(f.Requests()))
	}
}

// A refusal that retrying cannot help is not retried.
func TestClientErrorsAreNotRetried(t *testing.T) {
	f, m, _ := retrying(t, 2)
	f.Script(fake.InvalidArgument("Request contains an invalid argument."))
	if _, err := stream(m, userReq("hi")); err == nil || len(f.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(f.Requests()))
	}
}

// Cancelling while waiting to retry ends the call at once.
func TestCancelDuringRetryWait(t *testing.T) {
	f := fake.New(t)
	m := newModel(t, f, testModel, gemini.WithMaxRetries(3))
	ctx, cancel := context.WithCancel(context.Background())
	gemini.SetSleep(m, func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	f.Script(fake.Overloaded(), fake.Say("never"))
	var err error
	for _, e := range m.Stream(ctx, userReq("hi")) {
		err = e
	}
	if !errors.Is(err, context.Canceled) || len(f.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(f.Requests()))
	}
}

// A prompt longer than the context window is agent.ErrContextOverflow,
// whether the fake computes it or a test scripts it.
func TestContextOverflow(t *testing.T) {
	f := fake.New(t, fake.WithContextWindow(10))
	m := newModel(t, f, testModel)
	_, err := stream(m, userReq("This prompt is longer than ten tokens, as the fake counts them."))
	if !errors.Is(err, agent.ErrContextOverflow) {
		t.Fatalf("err = %v (%s)", err, f.Last().Message)
	}
	f2, m2 := start(t)
	f2.Script(fake.Overflow(1200293, 1048576))
	if _, err := stream(m2, userReq("hi")); !errors.Is(err, agent.ErrContextOverflow) || errors.Is(err, agent.ErrModelBusy) {
		t.Fatalf("err = %v", err)
	}
}

// A stream cut before the model finished is an error, not an answer;
// through the loop the run ends with it and keeps what came, marked.
func TestMidStreamFailure(t *testing.T) {
	f, m := start(t)
	f.Script(fake.Reply{Parts: []fake.ReplyPart{fake.Text("Half an ")}, Cut: true})
	chunks, err := stream(m, userReq("hi"))
	if !errors.Is(err, gemini.ErrIncomplete) || len(chunks) != 1 || chunks[0].Delta != "Half an " {
		t.Fatalf("chunks %+v err %v", chunks, err)
	}

	f.Script(fake.Reply{Parts: []fake.ReplyPart{fake.Text("Half an ")}, StreamError: &fake.Failure{Code: 500, Status: "INTERNAL", Message: "An internal error has occurred."}})
	r := runLoop(t, m, &agent.Input{Messages: []cmf.Message{user("hi")}})
	var apiErr *gemini.APIError
	if !errors.As(r.err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("run err = %v", r.err)
	}
	var text string
	for _, ev := range r.events {
		if e, ok := ev.(*agent.PartEnded); ok && e.Kind == agent.PartText {
			text = e.Part.(cmf.Text).Text
		}
	}
	if text != "Half an " {
		t.Fatalf("the partial reply was not kept: %+v", r.events)
	}
}
