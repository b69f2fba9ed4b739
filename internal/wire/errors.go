package wire

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
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

// UnknownChat is the refusal with CodeUnknownChat.
func UnknownChat() *Error {
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

// WriteError answers with {"error": message} before any byte was streamed.
// Errors that are not an *Error become a logged 500.
func WriteError(w http.ResponseWriter, log *slog.Logger, err error) {
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

// CloseUnread makes a refusal of a request whose body is unread close the
// connection after it: net/http would otherwise read the body to its end
// first, to keep the connection, with no deadline (a client that trickles
// it would hold the connection for as long as it likes).
func CloseUnread(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}
