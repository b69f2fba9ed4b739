package uiadapter

import (
	"net"
	"net/http"
	"strconv"
	"time"
)

// limitKey is what a request is counted under: its scope, or without one
// the address it came from.
func limitKey(req *request) string {
	if req.scope != "" {
		return "scope:" + req.scope
	}
	host, _, err := net.SplitHostPort(req.r.RemoteAddr)
	if err != nil {
		host = req.r.RemoteAddr
	}
	return "addr:" + host
}

// allow asks the limiter whether req may start a run; a refusal is a 429
// with Retry-After (whole seconds, rounded up). A limiter that fails lets
// the run go (logged): a limit is not worth an outage.
func (h *Handler) allow(w http.ResponseWriter, req *request) error {
	if h.cfg.limiter == nil {
		return nil
	}
	wait, err := h.cfg.limiter.Allow(req.r.Context(), limitKey(req))
	if err != nil {
		req.log.Warn("the limiter failed: the run goes on unlimited", "error", err)
		return nil
	}
	if wait <= 0 {
		return nil
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return &Error{Status: http.StatusTooManyRequests, Message: "too many requests: try again in " + strconv.FormatInt(secs, 10) + " s"}
}
