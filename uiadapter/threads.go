package uiadapter

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
)

// The thread API: a scope's chats listed, renamed and deleted. It is the
// same for both protocols (a chat is a conversation in the store, whoever
// wrote it), so an app mounts it once, from either protocol's handler.

// defaultChatsLimit is how many chats ChatsHandler lists when the request
// names no limit; maxChatsLimit is the most it lists.
const (
	defaultChatsLimit = 100
	maxChatsLimit     = 1000
)

// ChatSummary is one chat as ChatsHandler lists it.
type ChatSummary struct {
	ID string `json:"id"`
	// Title is the one set by renaming, else derived from the first user
	// message; "" when there is neither (the client shows its own
	// placeholder).
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Messages  int       `json:"messages"`
}

// ChatsHandler serves GET {api}/chats: the request scope's chats, the
// most recently written first, as {"chats": [ChatSummary…]}. ?limit=N
// bounds the list (default defaultChatsLimit, at most
// maxChatsLimit).
func (h *Handler) ChatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, log, ok := h.historyRequest(w, r, "GET, HEAD")
		if !ok {
			return
		}
		limit := defaultChatsLimit
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxChatsLimit {
				wire.WriteError(w, log, wire.BadRequest("limit must be a number from 1 to "+strconv.Itoa(maxChatsLimit)))
				return
			}
			limit = n
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		chats, err := h.cfg.store.List(ctx, scope, limit)
		if r.Context().Err() != nil {
			return // the client left
		}
		if err != nil {
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
			return
		}
		out := struct {
			Chats []ChatSummary `json:"chats"`
		}{Chats: make([]ChatSummary, len(chats))}
		for i, c := range chats {
			out.Chats[i] = ChatSummary{ID: c.Chat, Title: c.Title, CreatedAt: c.Created.UTC(), UpdatedAt: c.Updated.UTC(), Messages: c.Messages}
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// maxRenameBody bounds a rename request's body.
const maxRenameBody = 4 << 10

// RenameHandler serves PATCH {api}/chat/{id} with {"title": "…"}: it sets
// the chat's title (spaces collapsed, at most history.MaxTitleRunes
// characters; "" goes back to the derived title) and answers 204.
// Another scope's chat, or none, is 404. The chat id is chatID(r); nil
// reads the ServeMux path value "id".
func (h *Handler) RenameHandler(chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, http.MethodPatch, chatID)
		if !ok {
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRenameBody))
		if err != nil {
			wire.WriteError(w, log, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "the request body is too large"})
			return
		}
		var req struct {
			Title *string `json:"title"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Title == nil {
			wire.WriteError(w, log, wire.BadRequest(`the body must be {"title": "…"}`))
			return
		}
		if utf8.RuneCountInString(strings.TrimSpace(*req.Title)) > history.MaxTitleRunes {
			wire.WriteError(w, log, wire.BadRequest("the title is longer than "+strconv.Itoa(history.MaxTitleRunes)+" characters"))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		switch err := h.cfg.store.Rename(ctx, key, *req.Title); {
		case errors.Is(err, history.ErrNotFound):
			wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "no such chat"})
		case err != nil:
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// DeleteHandler serves DELETE {api}/chat/{id}: it deletes the chat and
// answers 204. Another scope's chat, or none, is 404; a chat with a reply
// still being produced is 409 (stop it first: StopHandler). The chat id is
// chatID(r); nil reads the ServeMux path value "id".
func (h *Handler) DeleteHandler(chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, http.MethodDelete, chatID)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		// The run lock keeps a delete from racing a run's save; the
		// delete drops the lock with the conversation.
		switch err := h.cfg.locker.Acquire(ctx, key, ids.New(), h.cfg.storeTimeout); {
		case errors.Is(err, history.ErrBusy):
			wire.WriteError(w, log, &wire.Error{Status: http.StatusConflict, Message: "a reply is still being produced in this chat: stop it first", Code: wire.CodeBusy})
			return
		case err != nil:
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
			return
		}
		kept := h.keptFiles(ctx, key)
		switch err := h.cfg.store.Delete(ctx, key); {
		case errors.Is(err, history.ErrNotFound):
			wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "no such chat"})
		case err != nil:
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
		default:
			log.Info("chat deleted")
			if len(kept) > 0 {
				// Before the answer: once it has come, the files are gone.
				h.dropUnreferenced(key.Scope, kept, log)
			}
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// writeJSON answers with v as JSON, not to be cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
