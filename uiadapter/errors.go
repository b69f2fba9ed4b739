package uiadapter

import (
	"errors"

	"github.com/agentui/agentui/agent"
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

// failureMessages is what a client is told of a run that failed, by the
// agent error the failure wraps; the first that matches is told.
var failureMessages = []struct {
	err     error
	message string
}{
	{agent.ErrContextOverflow, wire.ContextOverflowMessage},
	{agent.ErrModelBusy, wire.ModelBusyMessage},
	{agent.ErrModelUnreachable, wire.ModelUnreachableMessage},
	{agent.ErrModelRejected, wire.ModelRejectedMessage},
	{agent.ErrModelAccessDenied, wire.ModelAccessDeniedMessage},
}

// failureMessage is what a client is told of a run that failed with err:
// what it can act on, else ErrorMessage.
func failureMessage(err error) string {
	for _, f := range failureMessages {
		if errors.Is(err, f.err) {
			return f.message
		}
	}
	return wire.ErrorMessage
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
