package uiadapter

import (
	"errors"
	"net/http"

	"github.com/agentui/agentui/internal/wire"
)

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

// scopeError is the refusal for a scope function's error (nil for none):
// 401, or the status of an *Error; 404 for ErrNoScope, which has no
// conversations.
func scopeError(err error) error {
	var e *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoScope):
		return &wire.Error{Status: http.StatusNotFound, Message: "no conversations are kept for a request without a credential"}
	case errors.As(err, &e):
		return e
	}
	return &wire.Error{Status: http.StatusUnauthorized, Message: "not authorized", Err: err}
}

// Error is a refusal with an HTTP status and a short message that is safe
// to show the client; its Err, the internal cause, is logged, never sent.
// A scope or subject function returns one to refuse a request its way.
type Error = wire.Error

// Codes of refusals a client program acts on: the body's "code".
const (
	// CodeBusy: the chat's reply is still being produced; the client can
	// attach to it (useChat's resume, AG-UI's connect).
	CodeBusy = wire.CodeBusy
	// CodeUnknownChat: the request builds on a chat the server has nothing
	// of; the client can start a new chat.
	CodeUnknownChat = wire.CodeUnknownChat
)

// errNoSubject: a subject function returned no subject and no error.
var errNoSubject = errors.New("the subject function returned no subject")
