package modelcall

import (
	"net/http"

	"github.com/agentui/agentui/agent"
)

// StatusError is the agent error that a refusal with this HTTP status
// means to the user once retries are spent, for a refusal its provider
// does not name more precisely (a context overflow, an invalid key sent
// as a 400): nil for a status that is not a refusal.
//
//	401, 403                    agent.ErrModelAccessDenied
//	408, 409, 429, 5xx          agent.ErrModelBusy
//	any other 4xx               agent.ErrModelRejected
func StatusError(status int) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return agent.ErrModelAccessDenied
	case Retryable(status):
		return agent.ErrModelBusy
	case status >= 400 && status < 500:
		return agent.ErrModelRejected
	}
	return nil
}
