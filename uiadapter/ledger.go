package uiadapter

import (
	"context"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
)

// chatLedger is a chat's history.Ledger as its run's agent.Ledger: the
// server tool calls of every run of the chat, recorded in the store that
// keeps the chat, so that no replica runs a finished call again.
type chatLedger struct {
	l       history.Ledger
	key     history.Key
	timeout time.Duration
	started sync.Map // call id → time.Time: when this run began it
}

func (c *chatLedger) Begin(ctx context.Context, call agent.ToolCall) (agent.LedgerRecord, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	now := time.Now()
	rec, found, err := c.l.BeginCall(ctx, c.key, call.ID, history.CallRecord{Tool: call.Name, Started: now})
	if err == nil && !found {
		c.started.Store(call.ID, now)
	}
	return agent.LedgerRecord{Finished: rec.Finished, Output: rec.Output, IsError: rec.IsError}, found, err
}

func (c *chatLedger) Finish(ctx context.Context, call agent.ToolCall, r agent.LedgerRecord) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	rec := history.CallRecord{Tool: call.Name, Output: r.Output, IsError: r.IsError}
	if t, ok := c.started.Load(call.ID); ok {
		rec.Started = t.(time.Time)
	}
	return c.l.FinishCall(ctx, c.key, call.ID, rec)
}

// withLedger gives a run on the stored chat key its ledger, when the
// store keeps one.
func (h *Handler) withLedger(in *agent.Input, key history.Key) *agent.Input {
	if l, ok := h.cfg.store.(history.Ledger); ok {
		in.Ledger = &chatLedger{l: l, key: key, timeout: h.cfg.storeTimeout}
	}
	return in
}
