package uiadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/limit"
	"github.com/agentui/agentui/runlog"
)

// stream answers a planned turn: with history it starts the run
// (internal/run) and follows its log; without, it runs the turn live.
func (h *Handler) stream(w http.ResponseWriter, req *request, in *agent.Input, s *run.Session) {
	log := req.log
	sse := h.startStream(w, s != nil)
	if s != nil {
		w.Header().Set(edge.RunHeader, req.turn.RunID)
		w.Header().Set(edge.StreamIDHeader, req.turn.ChatID)
	}
	w.WriteHeader(http.StatusOK)
	enc := h.proto.NewEncoder(sse, req.turn, req.trusted)
	if s == nil {
		req.runLive(in, sse, enc)
		return
	}
	if s.Plan.Refusal != "" {
		log.Info("run refused", "reason", s.Plan.Refusal)
		s.Release()
		req.giveSlot() // nothing runs
		enc.Fail(s.Plan.Refusal)
		enc.Close()
		_ = sse.Flush()
		return
	}
	req.startAndFollow(in, s, sse, enc)
}

// startAndFollow starts the run of a turn with history and follows its
// log. Apart from stream, so that the frame of a stream without history
// does not hold the run's log header: see TestStreamFitsStartingStack.
//
//go:noinline
func (req *request) startAndFollow(in *agent.Input, s *run.Session, sse *wire.SSEWriter, enc wire.Encoder) {
	rn := req.start(in, s)
	req.h.runs.Follow(req.r.Context(), rn.Source(), sse, enc, 0, rn.Paced)
	rn.Paced(0, true)
}

// runLive runs a turn without history on the request's goroutine. It is
// apart from stream, as start is, so that the stream's frames stay small:
// see TestStreamFitsStartingStack.
//
//go:noinline
func (req *request) runLive(in *agent.Input, sse *wire.SSEWriter, enc wire.Encoder) {
	p := req.producer(in)
	req.h.runs.Live(req.withRunInfo(req.r.Context()), &p, req.h.cfg.runLimits.maxDuration(), sse, enc, req.cancel, req.log)
}

// start starts the run of a turn with history.
//
//go:noinline
func (req *request) start(in *agent.Input, s *run.Session) *run.Run {
	h := req.h
	hdr := runlog.Header{Run: req.turn.RunID, Protocol: h.proto.Name(), Request: req.turn.Key}
	if req.turn.Intent == wire.Continue {
		hdr.Continue = req.turn.MessageID
	} else {
		// The reply's id is chosen here, so the log names it: a client
		// that holds it has shown this reply (run.Engine.Supersede).
		if in.MessageID == "" {
			in.MessageID = ids.New()
		}
		hdr.Reply = in.MessageID
	}
	if h.runs.Shared() && h.cfg.redrives > 0 {
		hdr.Input = req.runInput(in)
	}
	return h.runs.Start(s, run.Spec{Header: hdr, Context: req.withRunInfo(req.r.Context()), MaxDuration: h.cfg.runLimits.maxDuration(),
		Producer: req.producer(in), Log: req.log, Ended: req.ended})
}

// startStream sets the stream's headers and returns its writer. Frames of
// a stream that can be resumed carry SSE ids.
func (h *Handler) startStream(w http.ResponseWriter, resumable bool) *wire.SSEWriter {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	h.proto.SetHeaders(hdr)
	sse := wire.NewSSEWriter(w)
	sse.WriteTimeout = h.cfg.writeTimeout
	sse.IDs = resumable
	return sse
}

// withRunInfo is parent carrying the run's RunInfo.
func (req *request) withRunInfo(parent context.Context) context.Context {
	return agent.WithRunInfo(parent, agent.RunInfo{Protocol: cmp.Or(req.protocol, req.h.proto.Name()), Scope: req.who.scope, ChatID: req.turn.ChatID, RunID: req.turn.RunID})
}

// producer is the run of in by the handler's agent, with what the server
// does on the way: an approval request is signed, a step's tokens are
// spent (with a limiter: a scope with none left stops the run), and the
// finish carries the application's metadata.
func (req *request) producer(in *agent.Input) run.Producer {
	h := req.h
	limited := h.cfg.limiter != nil || h.cfg.addrLimiter != nil
	return run.Producer{Agent: h.agent, Input: in, MaxOutput: h.cfg.runLimits.maxOutput(),
		Each: func(ctx context.Context, ev agent.Event, stop context.CancelCauseFunc) {
			switch e := ev.(type) {
			case *agent.StepFinished:
				if limited {
					req.spend(ctx, e, stop)
				}
			case *agent.ApprovalRequested:
				e.Signature = h.cfg.signer.Sign(req.signedCall(e.ToolCallID, e.ToolName, e.Input), time.Now().Add(h.cfg.approvalTTL))
			case *agent.RunFinished:
				if h.cfg.metadata != nil {
					e.Metadata = req.appMetadata(e)
				}
			}
		}}
}

// spend charges a finished step's tokens to the request's limit key and
// its address, and stops the run when either has none left.
func (req *request) spend(ctx context.Context, step *agent.StepFinished, stop context.CancelCauseFunc) {
	tokens := step.Usage.InputTokens + step.Usage.OutputTokens
	if tokens <= 0 {
		return
	}
	type account struct {
		l   limit.Limiter
		key string
	}
	cfg := &req.h.cfg
	accounts := [2]account{{cfg.limiter, req.limitKey()}, {}}
	if req.who.scope != "" {
		accounts[1] = account{cfg.addrLimiter, "addr:" + req.who.addr}
	}
	for _, a := range accounts {
		if a.l == nil {
			continue
		}
		left, err := a.l.Spend(ctx, a.key, tokens)
		switch {
		case err != nil:
			req.log.Warn("the limiter failed: the run goes on unlimited", "error", err)
		case !left:
			req.log.Info("the token budget is used up: run stopped", "tokens", tokens, "key", a.key)
			stop(run.ErrBudget)
		}
	}
}

// appMetadata calls the application's metadata function and marshals
// what it returns, leaving out (and logging) a value that does not
// marshal.
func (req *request) appMetadata(fin *agent.RunFinished) map[string]json.RawMessage {
	md := req.h.cfg.metadata(req.r, fin)
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(md))
	for k, v := range md {
		b, err := json.Marshal(v)
		if err != nil {
			req.log.Error("a metadata value does not marshal: left out", "key", k, "error", err)
			continue
		}
		out[k] = b
	}
	return out
}
