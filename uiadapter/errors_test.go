package uiadapter

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentui/agentui/agent"
)

func TestFailureMessageSaysWhatTheUserCanActOn(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("anthropic: %w", agent.ErrContextOverflow), ContextOverflowMessage},
		{fmt.Errorf("gemini: 429: %w", agent.ErrModelBusy), ModelBusyMessage},
		{errors.New("dial tcp 10.0.0.1:443: connection refused"), ErrorMessage},
	} {
		if got := failureMessage(c.err); got != c.want {
			t.Errorf("failureMessage(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
