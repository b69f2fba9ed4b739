package uiadapter

import "context"

// RunInfo says whose run an agent is running: the agent's context carries
// it, so an interceptor (agent.WithInterceptors) can act per user or per
// chat (instructions, tools, limits, tracing) without reaching for the
// HTTP request, which a run may outlive.
type RunInfo struct {
	Protocol string // "vercel-ai" or "ag-ui"
	Scope    string // the scope function's answer; "" without history
	ChatID   string
	RunID    string
}

type runInfoKey struct{}

// RunInfoFrom returns the RunInfo of the run ctx belongs to.
func RunInfoFrom(ctx context.Context) (RunInfo, bool) {
	ri, ok := ctx.Value(runInfoKey{}).(RunInfo)
	return ri, ok
}
