package uiadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
)

// Branches: an edit or a regeneration keeps what it replaced (a store
// that is a history.Brancher), and a person can go back to it. The tree
// route lists every branch in the shape assistant-ui's history adapter
// loads ({headId, messages: [{parentId, message}]}); the branch route
// makes one of them the active branch, the one the model sees and the
// conversation route loads.

// Shown is one message as a protocol shows it, with its id.
type Shown struct {
	ID      string
	Message any
}

// TreeItem is one message of a chat's tree: the message as the protocol
// shows it, after its parent (nil: a first message).
type TreeItem struct {
	ParentID *string `json:"parentId"`
	Message  any     `json:"message"`
}

// Tree is a chat's messages on every branch: HeadID ends the active one.
type Tree struct {
	HeadID   *string    `json:"headId"`
	Messages []TreeItem `json:"messages"`
}

// TreeHandler serves GET {api}/chat/{id}/tree: the chat's messages on
// every branch, each after its parent, parents first, as show renders a
// branch's stored messages (one shown message may stand for several
// stored ones, as a reply's steps). 404 as for the conversation route; a
// store that keeps no branches answers the active one alone. The chat id
// is chatID(r); nil reads the ServeMux path value "id".
func (h *Handler) TreeHandler(show func([]cmf.Message) []Shown, chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, "GET, HEAD", chatID)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		conv, err := h.cfg.store.Load(ctx, key)
		var t history.Tree
		if b, ok := h.cfg.store.(history.Brancher); ok && err == nil && conv.Version > 0 {
			t, err = b.Branches(ctx, key)
		}
		if !loaded(w, r, log, conv, err) {
			return
		}
		shown := func(msgs []cmf.Message) []Shown { return show(h.shownFiles(key.Scope, msgs)) }
		writeJSON(w, http.StatusOK, tree(conv.Messages, t, shown))
	})
}

// tree renders every branch: each shown message once, after its parent,
// parents first, and a message's versions (the messages with its parent)
// in the order they were written (history.Node's Born), which is how a
// picker numbers them.
func tree(active []cmf.Message, t history.Tree, show func([]cmf.Message) []Shown) Tree {
	type item struct {
		parent string // "" for a first message
		msg    any
	}
	items := map[string]item{}
	children := map[string][]string{}
	add := func(path []cmf.Message) string {
		parent := ""
		for _, s := range show(path) {
			if _, ok := items[s.ID]; !ok {
				items[s.ID] = item{parent: parent, msg: s.Message}
				children[parent] = append(children[parent], s.ID)
			}
			parent = s.ID
		}
		return parent
	}
	head := add(active)
	for _, path := range branchPaths(active, t.Nodes) {
		add(path)
	}
	born := make(map[string]int64, len(t.Nodes)+len(t.Born))
	for _, n := range t.Nodes {
		born[n.Message.ID()] = n.Born
	}
	maps.Copy(born, t.Born)
	order := func(id string) int64 {
		if b, ok := born[id]; ok {
			return b
		}
		return math.MaxInt64 // never left the active branch: the newest
	}
	out := Tree{Messages: make([]TreeItem, 0, len(items))}
	var walk func(parent string)
	walk = func(parent string) {
		kids := children[parent]
		slices.SortStableFunc(kids, func(a, b string) int { return cmp.Compare(order(a), order(b)) })
		for _, id := range kids {
			var p *string
			if parent != "" {
				p = &parent
			}
			out.Messages = append(out.Messages, TreeItem{ParentID: p, Message: items[id].msg})
			walk(id)
		}
	}
	walk("")
	if head != "" {
		out.HeadID = &head
	}
	return out
}

// branchPaths is each off-branch leaf's path from the root: its
// ancestors on the active branch, then those off it.
func branchPaths(active []cmf.Message, nodes []history.Node) [][]cmf.Message {
	onActive := make(map[string]int, len(active))
	for i, m := range active {
		onActive[m.ID()] = i
	}
	byID := make(map[string]int, len(nodes))
	parents := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		byID[n.Message.ID()] = i
		parents[n.Parent] = true
	}
	var paths [][]cmf.Message
	for i, n := range nodes {
		if parents[n.Message.ID()] {
			continue // not a leaf
		}
		var up []cmf.Message
		fork := 0
		for j, ok := i, true; ok && len(up) <= len(nodes); {
			up = append(up, nodes[j].Message)
			p := nodes[j].Parent
			if k, on := onActive[p]; on {
				fork = k + 1
				break
			}
			j, ok = byID[p]
		}
		path := append(active[:fork:fork], make([]cmf.Message, 0, len(up))...)
		for k := len(up) - 1; k >= 0; k-- {
			path = append(path, up[k])
		}
		paths = append(paths, path)
	}
	return paths
}

// maxBranchBody bounds a branch request's body: {"id": "…"}.
const maxBranchBody = 4 << 10

// BranchHandler serves POST {api}/chat/{id}/branch {"id": "<message
// id>"}: the branch through that message (one off the active branch, as
// the tree route lists it) becomes the active one, down each message's
// newest reply, and it answers 204; the conversation route then loads
// it. A message that is not off the active branch is 404; a chat whose
// reply is being produced is 409 (the run lock keeps a switch from
// racing its save). The chat id is chatID(r); nil reads the ServeMux
// path value "id".
func (h *Handler) BranchHandler(chatID func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, log, ok := h.chatRequest(w, r, http.MethodPost, chatID)
		if !ok {
			return
		}
		b, ok := h.cfg.store.(history.Brancher)
		if !ok {
			wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "this server keeps no branches"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBranchBody))
		if err != nil {
			wire.WriteError(w, log, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "the request body is too large"})
			return
		}
		var req struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &req); err != nil || wire.CheckID("the message id", req.ID) != nil || req.ID == "" {
			wire.WriteError(w, log, wire.BadRequest(`the body must be {"id": "<message id>"}`))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
		defer cancel()
		token := ids.New()
		conv, err := history.AcquireLoad(ctx, h.cfg.store, h.cfg.locker, key, token, h.cfg.storeTimeout)
		if errors.Is(err, history.ErrBusy) {
			wire.WriteError(w, log, &wire.Error{Status: http.StatusConflict, Message: "a reply is still being produced in this chat: stop it first", Code: wire.CodeBusy})
			return
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.cfg.storeTimeout)
			defer cancel()
			_ = h.cfg.locker.Release(rctx, key, token)
		}()
		if err == nil && conv.Version == 0 {
			wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "no such chat"})
			return
		}
		if err == nil {
			_, err = b.Switch(ctx, key, conv.Version, req.ID)
		}
		switch {
		case errors.Is(err, history.ErrNoBranch):
			wire.WriteError(w, log, &wire.Error{Status: http.StatusNotFound, Message: "no branch of this chat has this message"})
		case err != nil:
			wire.WriteError(w, log, wire.Unavailable("conversation history is unavailable", err))
		default:
			log.Info("the chat's branch was switched", "message", req.ID)
			w.WriteHeader(http.StatusNoContent)
		}
	})
}
