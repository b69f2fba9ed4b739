package uiadapter

import (
	"net/http"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/turn"
)

// retried reports whether the request is the one that started key's
// latest run, sent again (turn.Retries; stored is the chat's
// conversation when it was loaded): a response lost on the way, a
// proxy's or the app's second try. It is then answered with that run's
// stream (serveRetry) and runs nothing, so a tool the run called is not
// called again. Only the run whose log is still kept is known
// (WithRunRetention); asked on the paths a retry takes, so a new turn
// pays no look-up.
func (req *request) retried(key history.Key, stored []cmf.Message) bool {
	src, err := req.h.runs.Find(req.r.Context(), key)
	hdr := src.Header
	if err != nil || !turn.Retries(req.turn, turn.RunAsked{Key: hdr.Request, Continued: hdr.Continue, Asked: hdr.Turn}, stored, &req.h.cfg.policy) {
		return false
	}
	req.retry = &src
	return true
}

// serveRetry answers a retried request with the stream of the run it
// started, from its start: live while the run goes on, whole once it has
// ended.
func (h *Handler) serveRetry(w http.ResponseWriter, req *request) {
	src, t := *req.retry, req.turn
	req.log.Info("the request came again: it gets the stream of the run it started", "run", src.Header.Run)
	t.RunID = src.Header.Run
	h.replay(w, req.r, t, h.trustedBefore(req.r.Context(), src.Key, src.Header, req.log), src, 0)
}
