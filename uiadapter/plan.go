package uiadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// planClient plans a turn without history: the client's thread is the
// conversation, sanitized, with the provider values it carried sealed
// opened, and its approvals must carry valid signatures. The run's own
// provider values go back to the client sealed.
func (req *request) planClient() (*agent.Input, error) {
	h := req.h
	kinds, _ := h.agent.(agent.ToolKinds)
	var seal *wire.ChatSeal
	if len(req.turn.Sealed) > 0 {
		seal = req.chatSeal()
	}
	base, p, findings, err := turn.PlanClient(req.turn, kinds, &h.cfg.policy, seal)
	if err != nil {
		return nil, err
	}
	req.trusted.Sealer = wire.NewSealer(seal, func() *wire.ChatSeal { return req.chatSeal() })
	findings.Log(req.log)
	p.Log(req.log)
	if err := req.verify(base, p.Resume); err != nil {
		return nil, err
	}
	return req.input(base[:p.Keep:p.Keep], p.Add, p.Resume), nil
}

// planStored locks the conversation, loads it (run.Engine.Open) and
// plans the turn on it (turn.PlanStored): the stored copy is the truth.
// Nothing is written: the plan is committed once its messages have passed
// the guard, when its run starts.
func (req *request) planStored() (*run.Session, *agent.Input, error) {
	h, t, log := req.h, req.turn, req.log
	key := history.Key{Scope: req.who.scope, Chat: t.ChatID}
	s, conv, err := h.runs.Open(req.r.Context(), key, log)
	if run.IsBusy(err) {
		s, conv, err = req.whenBusy(key)
	}
	if err != nil || s == nil {
		return nil, nil, err // s is nil when the message steered the reply
	}
	if req.steeredBefore(conv.Messages) {
		s.Release()
		return nil, nil, nil
	}
	if conv, err = req.onClientsBranch(s, conv); err != nil {
		s.Release()
		return nil, nil, err
	}
	size := turn.ChatSize{Messages: len(conv.Messages), Bytes: conv.Bytes, MaxMessages: h.cfg.maxChatMessages, MaxBytes: h.cfg.maxChatBytes, AtLimitCheck: true}
	p, findings, err := turn.PlanStored(conv.Messages, t, size, &h.cfg.policy)
	if e := (*wire.Error)(nil); errors.As(err, &e) && e.Code == wire.CodeUnknownChat && req.body != nil {
		// Decoded to its last message: the messages before it may be a
		// new chat's opening greeting, which only the whole thread shows.
		if err = req.decodeAll(); err == nil {
			t = req.turn
			p, findings, err = turn.PlanStored(conv.Messages, t, size, &h.cfg.policy)
		}
	}
	findings.Log(log)
	if (p.Resent || err != nil && t.Intent == wire.Continue) && req.retried(key, conv.Messages) {
		s.Release()
		return nil, nil, nil
	}
	if err != nil {
		s.Release()
		if err == turn.ErrChatTooLong {
			log.Warn("chat is at its size limit", "messages", len(conv.Messages), "bytes", conv.Bytes)
		}
		return nil, nil, err
	}
	p.Log(log)
	s.Plan = p
	kept := conv.Messages[:p.Keep:p.Keep]
	// Encoders bring a client whose copy differs back in line with these.
	req.trusted = wire.Trusted{History: h.shownFiles(req.who.scope, kept), Added: h.shownFiles(req.who.scope, p.Add)}
	return s, h.withLedger(req.input(kept, p.Add, p.Resume), key), nil
}

// fileBytes gives the model what in holds: kept files read from the
// store, once the policies have seen the turn and its messages are set
// to be stored (as references).
func (req *request) fileBytes(in *agent.Input) error {
	ctx := req.r.Context()
	history, err := req.withFileBytes(ctx, in.History)
	if err != nil {
		return err
	}
	added, err := req.withFileBytes(ctx, in.Messages)
	if err != nil {
		return err
	}
	in.History, in.Messages = history, added
	return nil
}

// showsReply says whether the request shows the reply its chat is
// producing, hdr's run (turn.ShowsReply).
func (req *request) showsReply(hdr runlog.Header) bool {
	var asked string
	if n := len(hdr.Turn); n > 0 {
		asked = hdr.Turn[n-1].ID()
	}
	reply, t := cmp.Or(hdr.Continue, hdr.Reply), req.turn
	if req.body != nil && !turn.ShowsReply(t, reply, asked) {
		// Decoded to its last message: the thread is in the rest.
		all, err := req.decodeTurn(req.body, false)
		if err != nil {
			return false
		}
		t = all
	}
	return turn.ShowsReply(t, reply, asked)
}

// input is the agent's input for a planned turn: the conversation it
// builds on, what the turn adds, and the answers that count.
func (req *request) input(history, added []cmf.Message, resume []wire.Resolution) *agent.Input {
	h := req.h
	t := req.turn
	in := &agent.Input{
		History:      history,
		Messages:     added,
		Instructions: h.cfg.instructions,
		ClientTools:  t.ClientTools,
		State:        t.State,
		Context:      t.Context,
		Model:        req.model,
	}
	for _, res := range resume {
		in.Resume = append(in.Resume, res.Resolution)
	}
	return in
}

// verify checks that every approval, denial or edit answers an approval
// request this server signed, unexpired, for this scope: the signature
// must match the tool call as the client's history shows it (protocol,
// scope, chat, call id, tool name, input). It spends nothing: the
// answers' nonces are kept in req for spendAnswers, once nothing else can
// refuse the turn.
func (req *request) verify(msgs []cmf.Message, answers []wire.Resolution) error {
	h := req.h
	for _, res := range answers {
		if !res.NeedsSignature() {
			continue
		}
		var refusal string
		call, ok := turn.FindCall(msgs, res.ToolCallID)
		switch {
		case !ok:
			refusal = "approval for a tool call the server did not request"
		case res.Signature == "":
			refusal = "approval without a signature"
		}
		if refusal == "" {
			nonce, expires, err := h.cfg.signer.Verify(res.Signature, req.signedCall(call.ToolCallID, call.Name, call.Arguments), time.Now())
			if err != nil {
				refusal = err.Error()
			} else {
				req.signed = append(req.signed, signedAnswer{call: res.ToolCallID, nonce: nonce, expires: expires})
			}
		}
		if refusal != "" {
			refused(req.log, res, refusal)
			return wire.Conflict(refusal)
		}
	}
	return nil
}

// spendAnswers is the last check of a turn without history: the signed
// answers the run resumes are recorded as answered, all at once, and a
// request that repeats one is refused (409) with none of them spent. An
// answer whose call the policies left out of the thread is not resumed,
// and not spent: the approval request can still be answered.
func (req *request) spendAnswers(in *agent.Input) error {
	h := req.h
	if len(req.signed) == 0 {
		return nil
	}
	var nonces []string
	var last time.Time
	for _, a := range req.signed {
		_, inHistory := turn.FindCall(in.History, a.call)
		if _, inTurn := turn.FindCall(in.Messages, a.call); !inHistory && !inTurn {
			in.Resume = slices.DeleteFunc(in.Resume, func(r agent.Resolution) bool { return r.ToolCallID == a.call })
			req.log.Info("an answer's tool call was left out by policy: not resumed", "call", a.call)
			continue
		}
		nonces = append(nonces, a.nonce)
		if a.expires.After(last) {
			last = a.expires
		}
	}
	if len(nonces) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(req.r.Context(), h.cfg.storeTimeout)
	fresh, err := h.cfg.replay.Use(ctx, req.turn.ChatID, last, nonces...)
	cancel()
	switch {
	case err != nil:
		return wire.Unavailable("approvals cannot be checked right now", err)
	case !fresh:
		const why = "this approval request was already answered"
		req.log.Warn("refused an answer to a tool call", "reason", why)
		return wire.Conflict(why)
	}
	return nil
}

// refused logs an answer the server would not accept: every refused
// approval is worth a look (a stale tab, a replay, an attack).
func refused(log *slog.Logger, res wire.Resolution, why string) {
	log.Warn("refused an answer to a tool call", "call", res.ToolCallID, "answer", res.Kind.String(), "reason", why)
}

// signedCall is what the signature of an approval request in this
// request's chat covers.
func (req *request) signedCall(toolCallID, toolName string, input json.RawMessage) turn.SignedCall {
	h := req.h
	return turn.SignedCall{Protocol: cmp.Or(req.protocol, h.proto.Name()), Scope: req.who.scope, ChatID: req.turn.ChatID, ToolCallID: toolCallID, ToolName: toolName, Input: input}
}

// chatSeal is the sealing key of a request's chat, from the handler's
// secret (the approval signer's: one secret serves both).
func (req *request) chatSeal() *wire.ChatSeal {
	h := req.h
	return wire.NewChatSeal(h.cfg.signer.Key(), h.proto.Name(), req.who.scope, req.turn.ChatID)
}

// onClientsBranch: a client that shows another branch than the stored
// active one (assistant-ui switched branches, then sent or regenerated)
// builds on it: the message its request follows is off the active
// branch, which then becomes the active branch, so that the turn is
// planned on what the client shows and never on a thread it does not
// show. A regeneration that names no reply regenerates the one after
// the client's last message (which useChat sends without its reply). The
// conversation is then the one that branch makes.
func (req *request) onClientsBranch(s *run.Session, conv history.Conversation) (history.Conversation, error) {
	t := req.turn
	var anchor string
	switch t.Intent {
	case wire.Submit:
		anchor = t.ParentID
	case wire.Regenerate:
		anchor = t.MessageID
		if anchor == "" && len(t.Messages) > 0 && t.Messages[len(t.Messages)-1].Role == cmf.RoleUser {
			anchor = t.Messages[len(t.Messages)-1].ID()
			if stored(conv.Messages, anchor) {
				t.MessageID = anchor
			}
		}
	}
	if anchor == "" || stored(conv.Messages, anchor) {
		return conv, nil
	}
	if _, ok := req.h.cfg.store.(history.Brancher); !ok {
		return conv, nil
	}
	switched, err := s.Switch(req.r.Context(), anchor)
	switch {
	case errors.Is(err, history.ErrNoBranch):
		return conv, nil // a message the server does not have: planned as before
	case err != nil:
		return conv, wire.Unavailable("conversation history is unavailable", err)
	}
	req.log.Info("the client builds on another branch: it is the active one now", "message", anchor)
	if t.Intent == wire.Regenerate {
		t.MessageID = anchor
	}
	return switched, nil
}

// stored reports whether msgs has a message with id.
func stored(msgs []cmf.Message, id string) bool {
	return slices.ContainsFunc(msgs, func(m cmf.Message) bool { return m.ID() == id })
}
