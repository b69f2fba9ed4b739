package modelcall

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/agentui/agentui/agent"
)

// DefaultMaxRetries is how many times a refused request is tried again
// unless a model's WithMaxRetries says otherwise.
const DefaultMaxRetries = 2

// MaxRetryWait is the longest wait before a retry that is honoured: when
// the API asks for longer, the refusal is returned at once, since a person
// watching a reply is better told the model is busy than kept waiting.
const MaxRetryWait = time.Minute

// Retryable reports whether a request refused with this status may
// succeed when sent again: 408 (timeout), 409 (conflict), 429 (rate
// limit) and every 5xx (Anthropic's 529 overloaded among them).
func Retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// Transport retries a request that was refused before its reply began,
// with a Retryable status or a connection error (refused, unresolved,
// reset, timed out), MaxRetries times. The reply a caller reads starts
// only once a request was answered otherwise, so a stream is never
// retried once it began, and what a model already said is never repeated.
//
// A response can overrule its status with x-should-retry ("true" or
// "false"), as OpenAI's and Anthropic's APIs do. The wait before a retry
// is what the API asks for (Hint, else retry-after-ms, else Retry-After),
// when that is at most MaxRetryWait, and none is waited when it asks for
// longer; without a hint it backs off from half a second, doubling up to
// eight, with jitter. A connection error that outlasts the retries wraps
// [agent.ErrModelUnreachable].
type Transport struct {
	// Base sends each attempt.
	Base http.RoundTripper
	// MaxRetries is how many times a request is tried again; 0 sends it
	// once.
	MaxRetries int
	// Hint, when set, reads a wait the API asks for from the body of a
	// refusal (Gemini's google.rpc.RetryInfo); it comes before the
	// headers.
	Hint func(body []byte) (time.Duration, bool)
	// Sleep waits between attempts; nil waits on a timer. Tests replace it
	// to see the waits without waiting.
	Sleep func(context.Context, time.Duration) error
}

// Client returns a copy of hc (nil: a plain http.Client) whose requests
// go through a Transport over hc's own, which retries them retries times.
func Client(hc *http.Client, retries int) (*http.Client, *Transport) {
	c := &http.Client{}
	if hc != nil {
		cp := *hc
		c = &cp
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	t := &Transport{Base: base, MaxRetries: retries}
	c.Transport = t
	return c, t
}

// CheckMaxRetries is the error of a model's New for a negative
// WithMaxRetries.
func CheckMaxRetries(provider string, n int) error {
	if n < 0 {
		return errors.New(provider + ": max retries must not be negative, got " + strconv.Itoa(n))
	}
	return nil
}

// RoundTrip sends req, and again as the Transport's rule says.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 0; ; attempt++ {
		resp, err := t.Base.RoundTrip(req)
		if ctx.Err() != nil {
			return resp, err // the caller went away, or its time is up
		}
		last := attempt >= t.MaxRetries || !replayable
		switch {
		case err != nil && last:
			return nil, &unreachableError{err}
		case err == nil && (last || !shouldRetry(resp)):
			return resp, nil
		}
		wait := backoff(attempt)
		if resp != nil {
			var ok bool
			if wait, ok = t.retryWait(resp, attempt); !ok {
				return resp, nil
			}
			resp.Body.Close()
		}
		if err := t.sleep(ctx, wait); err != nil {
			return nil, err
		}
		next := req.Clone(ctx)
		if req.GetBody != nil {
			if next.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		req = next
	}
}

func shouldRetry(resp *http.Response) bool {
	if resp.StatusCode < 400 {
		return false
	}
	switch resp.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return Retryable(resp.StatusCode)
}

// retryWait is how long to wait before retrying after resp, and false
// when the API asks for longer than MaxRetryWait. It leaves resp's body
// readable, for the caller may return resp.
func (t *Transport) retryWait(resp *http.Response, attempt int) (time.Duration, bool) {
	wait, hinted := time.Duration(0), false
	if t.Hint != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		wait, hinted = t.Hint(body)
	}
	if !hinted {
		wait, hinted = headerWait(resp.Header)
	}
	if !hinted {
		return backoff(attempt), true
	}
	return wait, wait <= MaxRetryWait
}

// headerWait reads retry-after-ms (milliseconds, OpenAI's and
// Anthropic's) or Retry-After (seconds, or an HTTP date).
func headerWait(h http.Header) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(min(ms, float64(time.Hour/time.Millisecond)) * float64(time.Millisecond)), true
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(min(secs, float64(time.Hour/time.Second)) * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// backoff is the wait before retry attempt+1 when the API gave no hint:
// half a second doubling, at most 8s, ±25% so that clients refused
// together do not all come back together.
func backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<min(attempt, 5), 8*time.Second)
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unreachableError is a request that got no response: the API could not
// be reached. Its text is the cause's, which names the address and the
// failure for the log.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string   { return e.err.Error() }
func (e *unreachableError) Unwrap() []error { return []error{agent.ErrModelUnreachable, e.err} }

// Timeout lets http.Client and callers that ask still tell a timeout.
func (e *unreachableError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}
