package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentui/agentui/agent"
	"google.golang.org/genai"
)

// APIError is an error response from the Gemini API. It keeps the HTTP
// status, the API's status name (e.g. "RESOURCE_EXHAUSTED") and the
// ErrorInfo reason (e.g. "API_KEY_INVALID"), never the message, which may
// echo what was sent. Known refusals are named in words of this package's
// own (Problem).
type APIError struct {
	StatusCode int
	Status     string
	Reason     string
	// Problem says, when the refusal is a known one, what it was: "the
	// conversation is longer than the context window", "a function call
	// is missing its thought signature", "a thought signature was
	// rejected".
	Problem string
	cause   error // agent.ErrContextOverflow, agent.ErrModelBusy or nil
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("gemini: HTTP %d", e.StatusCode)
	if e.Status != "" {
		s += " " + e.Status
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Problem != "" {
		s += ": " + e.Problem
	}
	return s
}

// Unwrap lets errors.Is find agent.ErrContextOverflow and
// agent.ErrModelBusy.
func (e *APIError) Unwrap() error { return e.cause }

// FinishError is a reply the model ended for a reason that is neither an
// answer nor a refusal (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL,
// TOO_MANY_TOOL_CALLS, OTHER, …): a run must not pass it off as done.
type FinishError struct {
	Reason string
}

func (e *FinishError) Error() string { return "gemini: the model ended its reply with " + e.Reason }

// ErrIncomplete is returned when the stream ends before the model said it
// was done (the connection was cut).
var ErrIncomplete = errors.New("gemini: the stream ended before the response was complete")

// ErrMalformed is returned when the SDK could not read a response.
var ErrMalformed = errors.New("gemini: the response could not be read")

// streamError turns what the SDK returned into this package's errors.
func streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var v genai.APIError
	if errors.As(err, &v) {
		return apiError(&v)
	}
	var p *genai.APIError
	if errors.As(err, &p) {
		return apiError(p)
	}
	return fmt.Errorf("gemini: %w", err)
}

func apiError(e *genai.APIError) *APIError {
	out := &APIError{StatusCode: e.Code, Status: e.Status}
	for _, d := range e.Details {
		if t, _ := d["@type"].(string); strings.HasSuffix(t, "google.rpc.ErrorInfo") {
			out.Reason, _ = d["reason"].(string)
		}
	}
	msg := strings.ToLower(e.Message)
	switch {
	case e.Code == http.StatusTooManyRequests || e.Code == http.StatusServiceUnavailable:
		out.Problem, out.cause = "the model is rate-limited or overloaded", agent.ErrModelBusy
	case e.Code == http.StatusBadRequest && strings.Contains(msg, "input token count") && strings.Contains(msg, "exceeds the maximum"):
		out.Problem, out.cause = "the conversation is longer than the context window", agent.ErrContextOverflow
	case strings.Contains(msg, "missing a thought_signature"):
		out.Problem = "a function call is missing its thought signature"
	case strings.Contains(msg, "thought signature"):
		out.Problem = "a thought signature was rejected"
	case e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden || out.Reason == "API_KEY_INVALID":
		out.Problem = "authentication failed"
	}
	return out
}

// retryTransport retries a request the API refused as busy (429, 500,
// 503, 504) or that failed to connect, before any byte of the reply was
// read: the stream a caller sees starts only once a request succeeded.
// It waits as long as the API asks (a RetryInfo detail, else Retry-After)
// when that is at most maxRetryWait, and gives up at once when it asks
// for longer; without a hint it backs off exponentially.
type retryTransport struct {
	base    http.RoundTripper
	retries int
	sleep   func(context.Context, time.Duration) error
}

// maxRetryWait is the longest wait a retry honours: a user watching a
// reply is better told the model is busy than kept waiting longer.
const maxRetryWait = time.Minute

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		resp, err := t.base.RoundTrip(req)
		if attempt >= t.retries || ctx.Err() != nil || req.GetBody == nil && req.Body != nil {
			return resp, err
		}
		var wait time.Duration
		switch {
		case err != nil:
			wait = backoff(attempt)
		case retryable(resp.StatusCode):
			var ok bool
			if wait, ok = retryWait(resp, attempt); !ok {
				return resp, nil
			}
			resp.Body.Close()
		default:
			return resp, nil
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

func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryWait reads how long the API asks to wait. It leaves resp's body
// readable (the caller may return resp) and reports false when the wait
// asked for is too long to honour.
func retryWait(resp *http.Response, attempt int) (time.Duration, bool) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	wait, hinted := retryInfo(body)
	if !hinted {
		wait, hinted = retryAfter(resp.Header.Get("Retry-After"))
	}
	if !hinted {
		return backoff(attempt), true
	}
	return wait, wait <= maxRetryWait
}

// retryInfo finds a google.rpc.RetryInfo detail in an error body.
func retryInfo(body []byte) (time.Duration, bool) {
	var e struct {
		Error struct {
			Details []struct {
				Type       string `json:"@type"`
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return 0, false
	}
	for _, d := range e.Error.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			if wait, err := time.ParseDuration(d.RetryDelay); err == nil && wait >= 0 {
				return wait, true
			}
		}
	}
	return 0, false
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// backoff is the wait before retry attempt+1 when the API gave no hint:
// half a second doubling, capped at 8s, with ±25% jitter so that many
// clients refused together do not return together.
func backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<attempt, 8*time.Second)
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
