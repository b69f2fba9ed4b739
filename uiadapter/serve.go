package uiadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/run"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
)

// ServeHTTP handles one chat request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	id, ok := h.runs.Enter(cancel)
	if !ok {
		wire.WriteError(w, h.log, wire.Unavailable("the server is shutting down; try again", nil))
		return
	}
	defer h.runs.Exit(id)
	// One value for what the fresh goroutine hands back: each variable
	// it set would be an allocation of its own.
	p := new(prepared)
	onFreshStack(func() {
		if p.req, p.err = h.decode(w, r.WithContext(ctx)); p.err == nil {
			p.req.cancel = cancel
			p.in, p.s, p.err = h.prepare(w, p.req)
		}
	})
	if p.req == nil {
		wire.WriteError(w, h.log, p.err)
		return
	}
	h.serve(w, p.req, p.in, p.s, p.err)
}

// prepared is a request decoded and prepared (prepare's results).
type prepared struct {
	req *request
	in  *agent.Input
	s   *run.Session
	err error
}

// onFreshStack runs f on a goroutine of its own and waits for it.
// Decoding and planning a request go deeper than anything its stream does
// after them; on the connection's goroutine they would grow the stack it
// keeps for as long as the stream stays open, the largest part of an idle
// stream's memory. A panic in f goes on in the caller, with f's stack.
func onFreshStack(f func()) {
	var p any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p = recover(); p != nil && p != http.ErrAbortHandler {
				p = &freshStackPanic{value: p, stack: debug.Stack()}
			}
		}()
		f()
	}()
	<-done
	if p != nil {
		panic(p)
	}
}

// freshStackPanic is a panic raised on onFreshStack's goroutine: net/http
// logs the panic's value, and this one's says where it was raised.
type freshStackPanic struct {
	value any
	stack []byte
}

func (p *freshStackPanic) Error() string { return fmt.Sprintf("%v\n\n%s", p.value, p.stack) }

// planWithHistory is prepare's part for a turn with history: a run with
// history outlives its request, so it is bounded before anything is
// locked, stored or run; then the turn is planned on the stored
// conversation. Apart from prepare, to keep its frame small.
//
//go:noinline
func (req *request) planWithHistory() (*run.Session, *agent.Input, error) {
	h, r, log := req.h, req.r, req.log
	key := req.limitKey()
	if err := h.cfg.runLimits.take(key, req.who.addr); err != nil {
		if err == errRunsPerAddress {
			log.Warn("run refused: its client address has as many runs going as RunLimits.PerAddress allows (behind a reverse proxy, see WithClientAddr)", "addr", req.who.addr)
		} else {
			log.Info("run refused: too many at once", "key", key, "addr", req.who.addr)
		}
		return nil, nil, err
	}
	req.slot = key
	if err := req.keepFiles(r.Context()); err != nil {
		req.giveSlot()
		return nil, nil, err
	}
	s, in, err := req.planStored()
	req.body = nil // the turn is all it needs, and req lasts as long as the stream
	if req.steered != nil || req.queued != nil || req.retry != nil {
		req.giveSlot() // nothing of its own runs now
		return nil, nil, nil
	}
	switch {
	case err != nil && run.ShuttingDown(r.Context()):
		err = wire.Unavailable("the server is shutting down; try again", err)
	case errors.Is(err, run.ErrClientGone):
		log.Debug("the client left before the conversation was loaded")
	}
	return s, in, err
}

// serve answers a decoded and prepared request (prepare's results): one
// pipeline for both modes. The caller is admitted (admit.go); the turn is
// planned on the conversation it builds on (the stored one, or without
// history the client's, sanitized) by internal/turn, and its answers are
// verified (plan.go); its messages pass the guard (internal/ingest); then
// the run engine (internal/run) commits it, with history while the run
// starts, and runs it (stream.go).
//
//go:noinline
func (h *Handler) serve(w http.ResponseWriter, req *request, in *agent.Input, s *run.Session, err error) {
	switch {
	case err != nil:
		if !errors.Is(err, run.ErrClientGone) {
			wire.WriteError(w, req.log, err)
		}
		return
	case req.steered != nil:
		h.answerSteered(w, req)
		return
	case req.queued != nil:
		h.serveQueued(w, req)
		return
	case req.retry != nil:
		h.serveRetry(w, req)
		return
	}
	// The stream runs on the connection's goroutine, whose stack decoding
	// and planning did not grow (onFreshStack; see
	// TestStreamFitsStartingStack).
	h.stream(w, req, in, s)
}

// prepare takes a request up to its run: who it is and what it may spend,
// its plan (without history, or on the stored conversation), the guard's
// decisions. On an error nothing was stored and nothing runs.
//
//go:noinline
func (h *Handler) prepare(w http.ResponseWriter, req *request) (*agent.Input, *run.Session, error) {
	t := req.turn
	log := h.log.With("chat", t.ChatID, "intent", t.Intent.String())
	req.log = log
	if len(t.Skipped) > 0 {
		log.Debug("skipped client input", "skipped", t.Skipped)
	}
	stateless := h.cfg.store == nil
	if err := req.authenticate(); errors.Is(err, ErrNoScope) {
		stateless = true
		log.Debug("no scope credential: served without history")
	} else if err != nil {
		return nil, nil, scopeError(err)
	}
	if err := req.checkModel(); err != nil {
		return nil, nil, err
	}
	if err := req.allow(w); err != nil {
		return nil, nil, err
	}
	var s *run.Session
	var in *agent.Input
	var err error
	if stateless {
		// Decoded here, not in planClient, for the depth of the stack.
		if err = req.decodeAll(); err == nil {
			in, err = req.planClient()
		}
	} else if s, in, err = req.planWithHistory(); req.steered != nil || req.queued != nil || req.retry != nil {
		return nil, nil, nil // nothing of its own runs now
	}
	if err == nil && (s == nil || s.Plan.Refusal == "") {
		err = req.intake().Ingest(in, stateless)
		if s != nil {
			// What the t adds, as the policies left it (a client's
			// greeting they denied is left out), is what is stored.
			s.Plan.Add, req.trusted.Added = in.Messages, h.shownFiles(req.who.scope, in.Messages)
			if err == nil {
				err = req.fileBytes(in)
			}
		}
	}
	if err == nil && stateless {
		err = req.spendAnswers(in)
	}
	if err != nil {
		if s != nil {
			s.Release()
		}
		req.giveSlot()
		var ra *turn.RefusedAnswer
		if errors.As(err, &ra) {
			refused(log, ra.Answer, ra.Why)
			err = wire.Conflict(ra.Why)
		}
		return nil, nil, err
	}
	return in, s, nil
}
