package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/agent/internal/modelcall"
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
	cause   error // one of the agent errors for a failed call, or nil
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

// Unwrap lets errors.Is find what the refusal means to the user, as for
// every agentui model: agent.ErrContextOverflow, agent.ErrModelBusy
// (408, 409, 429, 5xx), agent.ErrModelAccessDenied (401, 403, an invalid key) or
// agent.ErrModelRejected (another 4xx).
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

// ErrMalformed is returned for a streamed response that is not one the
// API sends (not JSON, a null candidate, call arguments that are not an
// object).
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
	out.cause = modelcall.StatusError(e.Code)
	msg := strings.ToLower(e.Message)
	switch {
	case e.Code == http.StatusTooManyRequests || e.Code == http.StatusServiceUnavailable:
		out.Problem = "the model is rate-limited or overloaded"
	case e.Code == http.StatusBadRequest && strings.Contains(msg, "input token count") && strings.Contains(msg, "exceeds the maximum"):
		out.Problem, out.cause = "the conversation is longer than the context window", agent.ErrContextOverflow
	case strings.Contains(msg, "missing a thought_signature"):
		out.Problem = "a function call is missing its thought signature"
	case strings.Contains(msg, "thought signature"):
		out.Problem = "a thought signature was rejected"
	case e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden || out.Reason == "API_KEY_INVALID":
		// An invalid key is a 400, but the server's configuration is
		// at fault, not the request.
		out.Problem, out.cause = "authentication failed", agent.ErrModelAccessDenied
	}
	return out
}

// retryInfo finds a google.rpc.RetryInfo detail in an error body: the
// wait the API asks for before a retry, ahead of its headers.
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
