package agent

import (
	"context"

	"github.com/agentui/agentui/cmf"
)

// RunInfo says whose run an agent is running: the agent's context carries
// it (the handler that starts a run puts it there), so an interceptor
// ([WithInterceptors]) can act per user or per chat (instructions, tools,
// limits, tracing) without reaching for the HTTP request, which a run may
// outlive.
type RunInfo struct {
	Protocol string // "vercel-ai" or "ag-ui"
	Scope    string // the scope function's answer; "" without history
	ChatID   string
	RunID    string
}

type runInfoKey struct{}

// WithRunInfo returns parent carrying ri.
func WithRunInfo(parent context.Context, ri RunInfo) context.Context {
	return context.WithValue(parent, runInfoKey{}, ri)
}

// RunInfoFrom returns the RunInfo of the run ctx belongs to.
func RunInfoFrom(ctx context.Context) (RunInfo, bool) {
	ri, ok := ctx.Value(runInfoKey{}).(RunInfo)
	return ri, ok
}

// FinishReason names a stop reason as the AI SDK's finish reasons do
// ("stop", "length", "tool-calls", "content-filter", "error", "other"),
// which clients show and telemetry reports.
func FinishReason(r cmf.StopReason) string {
	switch r {
	case cmf.StopEnd, cmf.StopReturn, cmf.StopSequence, "":
		return "stop"
	case cmf.StopMaxTokens:
		return "length"
	case cmf.StopCall, cmf.StopPaused:
		return "tool-calls"
	case cmf.StopGuardrail, cmf.StopRefusal:
		return "content-filter"
	case cmf.StopError:
		return "error"
	}
	return "other"
}
