package uiadapter

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/wire"
)

// ConversationHandler serves GET requests for a stored conversation, so a
// reloaded page can show it: dump turns the CMF messages into the
// protocol's shape (vercelai.Dump for useChat). The chat id comes from
// chatID(r); nil reads the ServeMux path value "id" (as in
// "GET /api/chat/{id}"). A chat that does not exist in the request's
// scope is 404.
func (h *Handler) ConversationHandler(dump func([]cmf.Message) any, chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, "GET, HEAD", chatID)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		conv, err := h.cfg.store.Load(ctx, key)
		if loaded(w, r, log, conv, err) {
			writeJSON(w, http.StatusOK, dump(h.shownFiles(key.Scope, conv.Messages)))
		}
	})
}

// loaded answers a read of a stored chat that failed (503), found none
// (404) or whose client left (nothing), and reports whether the chat
// was loaded.
func loaded(w http.ResponseWriter, r *http.Request, log *slog.Logger, conv history.Conversation, err error) bool {
	switch {
	case r.Context().Err() != nil:
		return false // the client left
	case err != nil:
		wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
		return false
	case conv.Version == 0:
		wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "no such chat"})
		return false
	}
	return true
}

// Protocol is the protocol the handler speaks, so that a protocol's own
// routes (vercelai.ConversationHandler) can render as it is configured.
func (h *Handler) Protocol() wire.Protocol { return h.proto }
