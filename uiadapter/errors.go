package uiadapter

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/agentui/agentui/agent"
)

// Error is a failure with an HTTP status and a short message that is safe
// to show the client. Err, when set, is the internal cause: it is logged,
// never sent.
type Error struct {
	Status  int
	Message string
	// Code, when set, says what the refusal is to a program: the body's
	// "code" (CodeBusy).
	Code string
	Err  error
}

// CodeBusy is the code of the 409 for a chat whose reply is still being
// produced: a client that gets it can attach to that reply (useChat's
// resume, AG-UI's connect) instead of failing.
const CodeBusy = "busy"

// CodeUnknownChat is the code of the 409 for a request that builds on
// messages of a chat the server has nothing of (one that keeps history in
// memory restarted, or the chat expired): starting it anew under its id
// would fork it silently, so the client is told, and can start a new chat.
const CodeUnknownChat = "unknown_chat"

// unknownChat is the refusal with CodeUnknownChat.
func unknownChat() *Error {
	return &Error{Status: http.StatusConflict, Message: "This chat is no longer on the server.", Code: CodeUnknownChat}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// BadRequest is a 400 with message.
func BadRequest(message string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: message}
}

// Conflict is a 409 with message: a resolution the server cannot accept,
// or a conversation that is busy or moved.
func Conflict(message string) *Error { return &Error{Status: http.StatusConflict, Message: message} }

// Unavailable is a 503: a dependency (the history store) cannot be reached.
func Unavailable(message string, cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Message: message, Err: cause}
}

// ErrNoScope is what a scope function returns (or wraps) for a request
// that carries no credential at all and should be served without history
// rather than refused: a server-side client (a CopilotKit runtime, a
// script) that keeps the conversation itself. Its chat requests are served
// as by a handler without a store: the client's history, sanitized, is
// the conversation, approvals are signed, and a client that disconnects
// stops its run; nothing is stored and no snapshot replaces the client's
// thread. The other routes (reload, resume, stop, the thread API) answer
// 404: there is nothing of its to find.
var ErrNoScope = errors.New("uiadapter: the request carries no scope credential")

// ErrorMessage is what the client sees when a run fails after streaming
// has started. The cause is logged.
const ErrorMessage = "An error occurred."

// Messages for run failures the user can act on: one for each of the
// agent errors a model wraps, the same whichever provider failed. They
// say what happened and what to do, never the provider's detail (status,
// body, address, key), which stays in the log.
const (
	// ContextOverflowMessage: the model's context window is full.
	ContextOverflowMessage = "This conversation is too long for the model: start a new chat."
	// ModelBusyMessage: the model's provider is rate-limiting, overloaded
	// or failing.
	ModelBusyMessage = "The model is busy right now: try again in a moment."
	// ModelUnreachableMessage: the model's provider could not be reached.
	ModelUnreachableMessage = "The model could not be reached: try again in a moment."
	// ModelRejectedMessage: the provider would not take the request as it
	// is.
	ModelRejectedMessage = "The model could not take this request: try changing it, or start a new chat."
	// ModelAccessDeniedMessage: the provider refused the server's
	// credentials; only the operator can fix that.
	ModelAccessDeniedMessage = "The service is misconfigured: please tell its operator."
)

// failureMessages is what a client is told of a run that failed, by the
// agent error the failure wraps; the first that matches is told.
var failureMessages = []struct {
	err     error
	message string
}{
	{agent.ErrContextOverflow, ContextOverflowMessage},
	{agent.ErrModelBusy, ModelBusyMessage},
	{agent.ErrModelUnreachable, ModelUnreachableMessage},
	{agent.ErrModelRejected, ModelRejectedMessage},
	{agent.ErrModelAccessDenied, ModelAccessDeniedMessage},
}

// failureMessage is what a client is told of a run that failed with err:
// what it can act on, else ErrorMessage.
func failureMessage(err error) string {
	for _, f := range failureMessages {
		if errors.Is(err, f.err) {
			return f.message
		}
	}
	return ErrorMessage
}

// writeError answers with {"error": message} before any byte was streamed.
// Errors that are not an *Error become a logged 500.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusInternalServerError, Message: "internal error", Err: err}
	}
	switch {
	case e.Status >= 500:
		log.Error("request failed", "status", e.Status, "refusal", e.Message, "error", err)
	case e.Err != nil:
		// A refusal with a cause (a scope function's 401) is the
		// client's, not the server's failure: worth a line, not an alarm.
		log.Info("request refused", "status", e.Status, "refusal", e.Message, "error", err)
	default:
		log.Debug("request refused", "status", e.Status, "error", e.Message)
	}
	body, _ := json.Marshal(struct {
		Error string `json:"error"`
		Code  string `json:"code,omitempty"`
	}{e.Message, e.Code})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}
