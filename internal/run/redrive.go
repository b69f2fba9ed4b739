package run

import (
	"context"
	"errors"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/runlog"
)

// Re-drive: a run whose process died (or handed it over, see Drain)
// goes on on another replica, from its last durable step: the stored
// conversation, the steps its shared log shows complete, and the chat's
// tool ledger (a call recorded finished is not run again; one recorded
// started is run again only when its tool is idempotent). The run keeps
// its id and its log: the entries go on from the last sequence, so a
// reader that resumes by its last event sees no gap and nothing twice.
// A step the process was streaming when it died is voided (its parts
// closed, then agent.StepReset) and asked of the model again; one whose
// model call had ended (its tools had begun) is kept, and only its
// missing tool results are produced.

// DefaultMaxRedrives is how many times a run is run again before its
// log is finished as cut short: as many as Cloudflare's chat recovery.
const DefaultMaxRedrives = 5

// Redriver is the handler's part of a re-drive: the run that continues
// hdr's run on thread (the stored conversation, the run's turn and the
// steps it completed). Its producer's input holds thread as History,
// with Redrive set. shown is thread as the run's clients show it (a
// reader that must replace its whole thread gets it with the StepReset).
type Redriver func(ctx context.Context, key history.Key, hdr runlog.Header, thread []cmf.Message) (spec Spec, shown []cmf.Message, err error)

// errNotRedriven: the run cannot be run again; its log is finished as
// cut short instead.
var errNotRedriven = errors.New("run: not re-driven")

// durable is what a dead run's log leaves for its re-drive: the steps it
// completed as messages, and the entries that close what it left open.
type durable struct {
	kept      []cmf.Message
	closing   []agent.Event // ends the open parts and step, then StepReset when voiding
	voidFrom  int64         // the first sequence of the voided step, 0 when none is
	completed bool          // the run finished (its log only lacks its end)
}

// lastDurable reads a dead run's entries: what a re-drive keeps, and what
// it voids. A step is kept when the model's answer in it was complete:
// its step finished (not aborted), or its calls had begun (a result,
// progress, an approval or client call, or a start in the ledger): a
// call that began must not be asked of the model again, which would
// name it anew and run it twice. Any other step is voided.
func lastDurable(entries []runlog.Entry, begun map[string]bool) durable {
	var d durable
	stepAt := -1        // the index of the open (or last aborted) step's StepStarted
	callsBegun := false // in that step
	for i := range entries {
		switch ev := entries[i].Event.(type) {
		case *agent.StepStarted:
			stepAt, callsBegun = i, false
		case *agent.StepFinished:
			if ev.StopReason != cmf.StopAborted {
				stepAt = -1
			}
		case *agent.PartEnded:
			if tc, ok := ev.Part.(cmf.ToolCall); ok && begun[tc.ToolCallID] {
				callsBegun = true
			}
		case *agent.ToolResult, *agent.ToolProgress, *agent.ApprovalRequested, *agent.ClientToolCall:
			callsBegun = true
		case *agent.RunFinished:
			d.completed = true
		}
	}
	keep := entries
	if stepAt >= 0 && !callsBegun {
		keep, d.voidFrom = entries[:stepAt], entries[stepAt].Seq
	}
	rec := agent.NewRecorder()
	var bal agent.Balancer
	closeOpen := func(ev agent.Event) { rec.Add(ev); d.closing = append(d.closing, ev) }
	for _, en := range keep {
		if en.Event != nil {
			bal.Add(en.Event, rec.Add)
		}
	}
	if d.voidFrom == 0 {
		// A kept step still open: its parts and the step end here.
		bal.End(closeOpen)
		if stepAt >= 0 {
			closeOpen(&agent.StepFinished{StopReason: cmf.StopCall})
		}
		d.kept = rec.Messages()
		return d
	}
	d.kept = rec.Messages()
	// The voided step, closed for the readers that showed it.
	var void agent.Balancer
	void.NoText = true
	void.Add(&agent.RunStarted{}, func(agent.Event) {})
	for _, en := range entries[stepAt:] {
		if en.Event != nil {
			void.Add(en.Event, func(agent.Event) {})
		}
	}
	void.Add(&agent.StepReset{}, func(ev agent.Event) {
		if _, ok := ev.(*agent.StepReset); !ok {
			if f, ok := ev.(*agent.StepFinished); ok {
				f.StopReason = cmf.StopAborted
			}
			d.closing = append(d.closing, ev)
		}
	})
	d.closing = append(d.closing, &agent.StepReset{})
	return d
}

// redrive runs hdr's run again on this replica, from its last durable
// step, holding the chat's lock as token; entries are its shared log and
// conv the stored conversation. errNotRedriven when it cannot be (no
// input kept, re-driven as often as allowed, shutting down, nothing to
// continue): the caller finishes its log as cut short.
func (e *Engine) redrive(ctx context.Context, key history.Key, hdr runlog.Header, entries []runlog.Entry, token string, conv history.Conversation) error {
	max := e.cfg.MaxRedrives
	if max == 0 {
		max = DefaultMaxRedrives
	}
	if e.cfg.Redrive == nil || hdr.Input == nil || hdr.Redrives >= max || e.Closing() {
		return errNotRedriven
	}
	var begun map[string]bool
	if l, ok := e.cfg.Store.(history.Ledger); ok {
		calls, err := l.Calls(ctx, key)
		if err != nil {
			return err
		}
		begun = make(map[string]bool, len(calls))
		for id := range calls {
			begun[id] = true
		}
	}
	d := lastDurable(entries, begun)
	if d.completed {
		return errNotRedriven // it finished: its end was lost, not its work
	}
	thread := conv.Messages[:len(conv.Messages):len(conv.Messages)]
	var add []cmf.Message
	if n := len(hdr.Turn); n > 0 && !holds(conv.Messages, hdr.Turn[n-1].ID()) {
		add = append(add, hdr.Turn...) // it died before its turn was stored
	}
	add = append(add, d.kept...)
	thread = append(thread, add...)
	spec, shown, err := e.cfg.Redrive(ctx, key, hdr, thread)
	if err != nil {
		return err
	}
	last := int64(0)
	if n := len(entries); n > 0 {
		last = entries[n-1].Seq
	}
	// Its entries go on RedriveGap past the last one kept: the dead
	// process may have sent its readers more (see runlog.RedriveGap).
	base := last + runlog.RedriveGap
	closing := make([]runlog.Entry, len(d.closing))
	for i, ev := range d.closing {
		if r, ok := ev.(*agent.StepReset); ok {
			r.Thread = shown
		}
		closing[i] = runlog.EventEntry(base+int64(i)+1, ev)
	}
	h := hdr
	h.Lock, h.Redrives, h.Redriven = token, hdr.Redrives+1, last
	if d.voidFrom > 0 {
		h.Voided = append(hdr.Voided[:len(hdr.Voided):len(hdr.Voided)], [2]int64{d.voidFrom, base + int64(len(closing))})
	}
	// The header first: a reader that starts from now on skips the voided
	// step, and one that finds the lock held by this token waits.
	if err := e.shared.Begin(ctx, key, h); err != nil {
		return err
	}
	s := &Session{e: e.env, Key: key, token: token, log: spec.Log, version: conv.Version, stored: len(conv.Messages)}
	s.held.Store(time.Now().UnixNano())
	s.Plan.Keep, s.Plan.Add = len(conv.Messages), add
	spec.Header = h
	e.startRedriven(s, spec, entries, closing, base+int64(len(closing)))
	spec.Log.Warn("the run of a server that stopped goes on here, from its last complete step", "run", h.Run, "redrive", h.Redrives, "voided_step", d.voidFrom > 0, "kept_messages", len(d.kept))
	return nil
}

// finishOrRedrive is what a replica holding the chat's lock as token does
// with the open log of a run whose process died: run it again
// (redrive), or end it as cut short (finishDead). redriven reports which.
func (e *env) finishOrRedrive(ctx context.Context, key history.Key, hdr runlog.Header, token string) (redriven bool, err error) {
	if hdr.Ended {
		return false, nil
	}
	if e.engine != nil && hdr.Input != nil {
		entries, err := e.readAll(ctx, key, hdr.Run)
		if err != nil {
			return false, err
		}
		if n := len(entries); n > 0 && entries[n-1].Type == runlog.TypeEnded {
			return false, nil
		}
		conv, err := e.cfg.Store.Load(ctx, key)
		if err != nil {
			return false, err
		}
		if !storedReply(conv.Messages, entries) {
			switch err := e.engine.redrive(ctx, key, hdr, entries, token, conv); {
			case err == nil:
				return true, nil
			case !errors.Is(err, errNotRedriven):
				e.log.Warn("could not run again the run of a server that stopped; ending it as cut short", "chat", key.Chat, "run", hdr.Run, "error", err)
			}
		}
	}
	return false, e.finishDead(ctx, key, hdr)
}

// storedReply reports whether the conversation holds the reply a log's
// entries began (its process stored it, and only the log's end was lost).
func storedReply(msgs []cmf.Message, entries []runlog.Entry) bool {
	for _, en := range entries {
		if s, ok := en.Event.(*agent.StepStarted); ok && s.MessageID != "" {
			return holds(msgs, s.MessageID)
		}
	}
	return false
}

// readAll reads the whole of run's shared log.
func (e *env) readAll(ctx context.Context, key history.Key, run string) ([]runlog.Entry, error) {
	var entries []runlog.Entry
	for {
		after := int64(0)
		if n := len(entries); n > 0 {
			after = entries[n-1].Seq
		}
		es, err := e.shared.Read(ctx, key, run, after, time.Millisecond)
		if err != nil {
			return nil, err
		}
		if len(es) == 0 {
			return entries, nil
		}
		entries = append(entries, es...)
	}
}

// startRedriven starts the run spec describes, which goes on with a dead
// run's log: entries are that log, closing what ends its open step, and
// seq the last sequence before the run's own.
// This replica's log gets all of it, so its own readers read the run
// whole, and the shared log gets what comes after entries.
func (e *Engine) startRedriven(s *Session, spec Spec, entries, closing []runlog.Entry, seq int64) *Run {
	rn := e.newRun(s, spec)
	rn.redriven = true
	// No request started it here: nothing paces it.
	rn.detached = true
	all := append(entries[:len(entries):len(entries)], closing...)
	rn.seq.Store(seq)
	if err := e.local.Begin(rn.ctx, rn.key, rn.header, all...); err != nil {
		spec.Log.Error("could not begin the run's log", "error", err)
	}
	after := int64(0)
	if n := len(entries); n > 0 {
		after = entries[n-1].Seq
	}
	e.launch(rn, &mirrorStart{after: after})
	return rn
}
