package uiadapter

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/agentui/agentui/cmf"
)

// ConversationHandler serves GET requests for a stored conversation, so a
// reloaded page can show it: dump turns the CMF messages into the
// protocol's shape (vercelai.Dump for useChat). The chat id comes from
// chatID(r); nil reads the ServeMux path value "id" (as in
// "GET /api/chat/{id}"). A chat that does not exist in the request's
// scope is 404.
func (h *Handler) ConversationHandler(dump func([]cmf.Message) any, chatID func(*http.Request) string) http.Handler {
	if chatID == nil {
		chatID = func(r *http.Request) string { return r.PathValue("id") }
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := h.cfg.logger.With("protocol", h.proto.Name())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, log, &Error{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use GET"})
			return
		}
		if h.cfg.store == nil {
			writeError(w, log, &Error{Status: http.StatusNotFound, Message: "this server keeps no conversations"})
			return
		}
		scope, err := h.scopeOf(r)
		if err != nil {
			writeError(w, log, err)
			return
		}
		id := chatID(r)
		if id == "" {
			writeError(w, log, BadRequest("missing chat id"))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		conv, err := h.cfg.store.Load(ctx, historyKey(scope, id))
		if r.Context().Err() != nil {
			return // the client left
		}
		if err != nil {
			writeError(w, log, Unavailable("conversation history is unavailable", err))
			return
		}
		if conv.Version == 0 {
			writeError(w, log, &Error{Status: http.StatusNotFound, Message: "no such chat"})
			return
		}
		body, err := json.Marshal(dump(conv.Messages))
		if err != nil {
			writeError(w, log, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(append(body, '\n'))
	})
}
