package uiadapter

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/ingest"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/limit"
)

// limitKey is what a request is counted under: its scope, or without one
// its client address.
func (req *request) limitKey() string {
	if req.who.scope != "" {
		return "scope:" + req.who.scope
	}
	return "addr:" + req.who.addr
}

// allow asks the limiters whether req may start a run: its scope's (or
// without a scope, its address's), then its address's. A refusal is a 429
// with Retry-After (whole seconds, rounded up). A limiter that fails lets
// the run go (logged): a limit is not worth an outage.
func (req *request) allow(w http.ResponseWriter) error {
	h := req.h
	ctx := req.r.Context()
	wait := req.ask(ctx, h.cfg.limiter, req.limitKey())
	if wait <= 0 && req.who.scope != "" {
		wait = req.ask(ctx, h.cfg.addrLimiter, "addr:"+req.who.addr)
	}
	if wait <= 0 {
		return nil
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return &wire.Error{Status: http.StatusTooManyRequests, Message: "too many requests: try again in " + strconv.FormatInt(secs, 10) + " s"}
}

// ask is one limiter's answer for key: how long to wait, 0 to go on.
func (req *request) ask(ctx context.Context, l limit.Limiter, key string) time.Duration {
	if l == nil {
		return 0
	}
	wait, err := l.Allow(ctx, key)
	if err != nil {
		req.log.Warn("the limiter failed: the run goes on unlimited", "error", err)
		return 0
	}
	return wait
}

// authenticate runs the subject or scope function for req.
func (req *request) authenticate() error {
	h := req.h
	switch {
	case h.cfg.subject != nil:
		s, err := h.cfg.subject(req.r)
		if err == nil && (s == nil || s.ID == "") {
			err = errNoSubject
		}
		if err != nil {
			return err
		}
		req.who.subject, req.who.scope = s, s.ID
	case h.cfg.scope != nil:
		scope, err := h.cfg.scope(req.r)
		if err != nil {
			return err
		}
		req.who.scope = scope
	}
	return nil
}

// checkModel refuses a model the agent does not offer, when it offers a
// choice ([agent.ModelNames]). An agent that serves one model serves it
// whatever the request names: AG-UI apps forward props of their own,
// "model" among them, to agents that offer no choice.
func (req *request) checkModel() error {
	h := req.h
	model := req.turn.Model
	if model == "" {
		return nil
	}
	mn, ok := h.agent.(agent.ModelNames)
	names := []string(nil)
	if ok {
		names = mn.ModelNames()
	}
	switch {
	case names == nil:
		return nil
	case slices.Contains(names, model):
		req.model = model
		return nil
	}
	if len(model) > 64 {
		model = model[:64] + "…"
	}
	return wire.BadRequest("unknown model " + strconv.Quote(model))
}

// giveSlot gives back the request's place under RunLimits, if it holds one.
func (req *request) giveSlot() {
	h := req.h
	if req.slot != "" {
		h.cfg.runLimits.give(req.slot, req.who.addr)
		req.slot = ""
	}
}

// intake is the request's ingest.Turn: what its user messages record and
// who decides them.
func (req *request) intake() *ingest.Turn {
	c := &req.h.cfg
	return &ingest.Turn{Request: req.r, Guard: c.guard, Environment: c.environment, Headers: c.headers,
		Scope: req.who.scope, Subject: req.who.subject, ChatID: req.turn.ChatID, Log: req.log}
}
