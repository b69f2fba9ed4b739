package uiadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// runInput is what a run was asked with beyond the stored conversation,
// kept in its log's header (runlog.Header.Input) so that another replica
// can run it again when its own dies (run.Engine's re-drive).
type runInput struct {
	Model       string              `json:"model,omitempty"`
	ClientTools []agent.ToolSpec    `json:"clientTools,omitempty"`
	State       json.RawMessage     `json:"state,omitempty"`
	Context     []agent.ContextItem `json:"context,omitempty"`
	Resume      []agent.Resolution  `json:"resume,omitempty"`
	Extensions  *cmf.Extensions     `json:"extensions,omitempty"`
	Addr        string              `json:"addr,omitempty"`
}

// runInput is in's part of a run's header.
func (req *request) runInput(in *agent.Input) json.RawMessage {
	b, err := json.Marshal(runInput{Model: in.Model, ClientTools: in.ClientTools, State: in.State, Context: in.Context,
		Resume: in.Resume, Extensions: in.Extensions, Addr: req.who.addr})
	if err != nil {
		req.log.Warn("the run's input does not marshal: it cannot be run again if its server dies", "error", err)
		return nil
	}
	return b
}

// redrive is the handler's part of a re-drive (run.Redriver): the run
// that goes on with hdr's, whose server died, on thread. It runs as its
// request did, but for what only the request had: the application's
// metadata function gets a request with none of the original's headers,
// and the run holds no place under RunLimits. A run another protocol's
// handler started (they share the run log) runs with this handler's
// agent, its approvals signed for its own protocol.
func (h *Handler) redrive(ctx context.Context, key history.Key, hdr runlog.Header, thread []cmf.Message) (run.Spec, []cmf.Message, error) {
	var ri runInput
	if err := json.Unmarshal(hdr.Input, &ri); err != nil {
		return run.Spec{}, nil, fmt.Errorf("the run's input: %w", err)
	}
	r, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "/", http.NoBody)
	if err != nil {
		return run.Spec{}, nil, err
	}
	req := &request{h: h, r: r, cancel: func(error) {}, log: h.log.With("chat", key.Chat, "intent", "redrive"),
		turn: &wire.Turn{ChatID: key.Chat, RunID: hdr.Run, Intent: wire.Continue, MessageID: cmp.Or(hdr.Continue, hdr.Reply)},
		who:  caller{scope: key.Scope, addr: ri.Addr}, model: ri.Model, protocol: hdr.Protocol}
	in := &agent.Input{History: thread, Instructions: h.cfg.instructions, ClientTools: ri.ClientTools, State: ri.State,
		Context: ri.Context, Model: ri.Model, Resume: ri.Resume, Extensions: ri.Extensions, Guard: h.cfg.guard, Redrive: true}
	h.withLedger(in, key)
	if in.History, err = req.withFileBytes(ctx, thread); err != nil {
		return run.Spec{}, nil, err
	}
	spec := run.Spec{Context: req.withRunInfo(context.Background()), MaxDuration: h.cfg.runLimits.maxDuration(),
		Producer: req.producer(in), Log: req.log, Ended: req.ended}
	return spec, h.shownFiles(key.Scope, thread), nil
}
