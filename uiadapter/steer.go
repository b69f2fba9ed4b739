package uiadapter

import (
	"net/http"
	"slices"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// whenBusy answers a request whose chat is producing a reply (Open
// refused it busy), as it asks (wire.Busy):
//   - interrupt: the reply is stopped, as Stop does, and the request's
//     turn runs (run.Engine.Supersede);
//   - steer (or, in AG-UI, a parentRunId naming the running run): its
//     new user message goes to the reply, which takes it at its next step
//     boundary; when the reply ends first, the message is a turn of its
//     own (steer);
//   - by default: a request that shows the reply stopped reading it and
//     sends again, so the reply is stopped and the turn runs; another (a
//     second tab) is refused busy.
//
// A session is returned for a turn to plan; none, and no error, when the
// message steered the reply (req.steered).
func (req *request) whenBusy(key history.Key) (*run.Session, history.Conversation, error) {
	h, t, ctx := req.h, req.turn, req.r.Context()
	switch {
	case req.retried(key, nil):
		return nil, history.Conversation{}, nil
	case t.Busy == wire.BusyInterrupt:
		req.log.Info("a message sent while the reply ran interrupts it")
		return h.runs.Supersede(ctx, key, req.log, func(runlog.Header) bool { return true })
	case !newUserMessage(t):
	case (t.Busy == wire.BusySteer || t.ParentRunID != "") && keepsFiles(t.Messages[len(t.Messages)-1]):
		// A running model takes a steered message as the chat stores it,
		// where its files are references: it waits for its own turn.
		req.log.Info("a steering message with files is queued instead")
		return nil, history.Conversation{}, req.enqueue(key)
	case t.Busy == wire.BusySteer || t.ParentRunID != "":
		return req.steer(key)
	case t.Busy == wire.BusyQueue:
		return nil, history.Conversation{}, req.enqueue(key)
	}
	return h.runs.Supersede(ctx, key, req.log, req.showsReply)
}

// newUserMessage reports whether t sends a new user message: what a
// message sent while a reply runs may steer or queue.
func newUserMessage(t *wire.Turn) bool {
	return t.Intent == wire.Submit && len(t.Messages) > 0 && t.Messages[len(t.Messages)-1].Role == cmf.RoleUser
}

// steer hands the turn's new user message to the chat's running reply
// (run.Engine.SteerOrOpen), once it has passed what a turn's message
// passes: sanitizing and the input guard. A message the reply did not
// take is the request's own turn: the session for it is returned.
func (req *request) steer(key history.Key) (*run.Session, history.Conversation, error) {
	h, t := req.h, req.turn
	m, err := req.busyMessage()
	if err != nil {
		return nil, history.Conversation{}, err
	}
	parent := ""
	if t.Busy != wire.BusySteer {
		parent = t.ParentRunID // only the run it names: another is busy
	}
	took, s, conv, err := h.runs.SteerOrOpen(req.r.Context(), key, parent, m, req.log)
	if took != "" {
		req.log.Info("a message sent while the reply ran went to it", "run", took, "message", m.ID())
		req.steered = &agent.SendOutcome{Outcome: agent.OutcomeDelivered, MessageID: m.ID(), RunID: took}
	}
	return s, conv, err
}

// busyMessage is the turn's new user message, sent while the chat's
// reply runs, once it has passed what a turn's message passes:
// sanitizing and the input guard.
func (req *request) busyMessage() (cmf.Message, error) {
	h, t := req.h, req.turn
	m := t.Messages[len(t.Messages)-1]
	m.Content = slices.Clone(m.Content) // the guard may redact: the turn is the client's
	msgs, findings := turn.Sanitize([]cmf.Message{m}, nil, h.cfg.policy)
	findings.Log(req.log)
	if len(msgs) != 1 {
		return cmf.Message{}, wire.BadRequest("the message has nothing to send")
	}
	in := &agent.Input{Messages: msgs}
	if err := req.intake().Ingest(in, false); err != nil {
		return cmf.Message{}, err
	}
	return in.Messages[0], nil
}

// steeredBefore reports whether the turn is a steering message that a
// reply took and stored: a retry, once that reply has ended. Nothing
// runs again; the request is answered as delivered.
func (req *request) steeredBefore(stored []cmf.Message) bool {
	t := req.turn
	if t.Busy != wire.BusySteer || t.Intent != wire.Submit || len(t.Messages) == 0 {
		return false
	}
	id := t.Messages[len(t.Messages)-1].ID()
	if !slices.ContainsFunc(stored, func(m cmf.Message) bool { return m.ID() == id }) {
		return false
	}
	req.log.Info("a steering message is already in the chat: nothing runs", "message", id)
	req.steered = &agent.SendOutcome{Outcome: agent.OutcomeDelivered, MessageID: id}
	return true
}

// answerSteered answers a request whose message the running reply took:
// its response is that outcome alone (the reply's streams show the
// message), which adds no message to the client's thread.
func (h *Handler) answerSteered(w http.ResponseWriter, req *request) {
	sse := h.startStream(w, false)
	w.WriteHeader(http.StatusOK)
	enc := h.proto.NewEncoder(sse, req.turn, wire.Trusted{})
	enc.Encode(req.steered)
	enc.Close()
	_ = sse.Flush()
}
