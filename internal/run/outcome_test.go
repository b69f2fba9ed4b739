package run

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/wire"
)

func TestFailureMessageSaysWhatTheUserCanActOn(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("anthropic: %w", agent.ErrContextOverflow), wire.ContextOverflowMessage},
		{fmt.Errorf("gemini: 429: %w", agent.ErrModelBusy), wire.ModelBusyMessage},
		{fmt.Errorf("openai: %w", fmt.Errorf("%w: dial tcp 10.0.0.1:443: connection refused", agent.ErrModelUnreachable)), wire.ModelUnreachableMessage},
		{fmt.Errorf("openai responses: HTTP 400: %w", agent.ErrModelRejected), wire.ModelRejectedMessage},
		{fmt.Errorf("anthropic: HTTP 401: %w", agent.ErrModelAccessDenied), wire.ModelAccessDeniedMessage},
		{errors.New("dial tcp 10.0.0.1:443: connection refused"), wire.ErrorMessage},
		{errors.New("agent: the model sent a tool call without a tool name"), wire.ErrorMessage},
	} {
		if got := failureMessage(c.err); got != c.want {
			t.Errorf("failureMessage(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// Each agent error a model wraps has a sentence of its own, which names
// none of the provider's detail.
func TestFailureMessagesAreDistinct(t *testing.T) {
	seen := map[string]bool{wire.ErrorMessage: true}
	for _, f := range failureMessages {
		if seen[f.message] {
			t.Errorf("%v: %q is told for another failure too", f.err, f.message)
		}
		seen[f.message] = true
		if got := failureMessage(fmt.Errorf("provider: HTTP 418: %w", f.err)); got != f.message {
			t.Errorf("%v: told %q", f.err, got)
		}
	}
}
