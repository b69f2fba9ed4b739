package uiadapter

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/limit"
)

// limitKey is what a request is counted under: its scope, or without one
// its client address.
func limitKey(req *request) string {
	if req.scope != "" {
		return "scope:" + req.scope
	}
	return "addr:" + req.addr
}

// allow asks the limiters whether req may start a run: its scope's (or
// without a scope, its address's), then its address's. A refusal is a 429
// with Retry-After (whole seconds, rounded up). A limiter that fails lets
// the run go (logged): a limit is not worth an outage.
func (h *Handler) allow(w http.ResponseWriter, req *request) error {
	ctx := req.r.Context()
	wait := h.ask(ctx, req, h.cfg.limiter, limitKey(req))
	if wait <= 0 && req.scope != "" {
		wait = h.ask(ctx, req, h.cfg.addrLimiter, "addr:"+req.addr)
	}
	if wait <= 0 {
		return nil
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return &wire.Error{Status: http.StatusTooManyRequests, Message: "too many requests: try again in " + strconv.FormatInt(secs, 10) + " s"}
}

// ask is one limiter's answer for key: how long to wait, 0 to go on.
func (h *Handler) ask(ctx context.Context, req *request, l limit.Limiter, key string) time.Duration {
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
