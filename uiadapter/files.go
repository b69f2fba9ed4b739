package uiadapter

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/wire"
)

// Files by reference (WithFiles): a file a message carries inline is
// moved to the file store as the message comes in, and history holds its
// id (cmf.SourceFile), never its bytes. What a client is shown carries a
// URL signed for its scope instead of the id, and such a URL sent back
// (an edit, a regeneration, a thread the client holds) is the file again,
// never fetched. A model is given the bytes.

// WithFiles keeps the files messages carry in the store h serves (with
// WithStore: files are a scope's, as chats are). Mount h's routes
// (files.Handler) where its prefix says, so that the URLs clients are
// shown read the files.
func WithFiles(h *files.Handler) Option { return func(c *config) { c.files = h } }

// Files is the file handler WithFiles gave (nil: none), whose routes an
// API mounts beside the chat's.
func (h *Handler) Files() *files.Handler { return h.cfg.files }

// keepFiles moves the files the turn's new message carries to the file
// store: inline bytes are kept (the store's bounds and type checks
// refuse a file with a 4xx, nothing stored), and a URL of the file
// routes is the file it names, which must be this scope's. The message
// then holds references.
func (req *request) keepFiles(ctx context.Context) error {
	fh, t := req.h.cfg.files, req.turn
	if fh == nil || len(t.Messages) == 0 {
		return nil
	}
	m := &t.Messages[len(t.Messages)-1]
	if m.Role != cmf.RoleUser {
		return nil
	}
	var content []cmf.Part
	for i, p := range m.Content {
		src, ok := cmf.Media(p)
		if !ok {
			continue
		}
		var kept cmf.MediaSource
		switch id, ours := fh.IDOf(src.Data); {
		case src.Type == cmf.SourceBase64:
			raw, err := decodeBase64(src.Data)
			if err != nil {
				return wire.BadRequest("a file of the message is not valid base64")
			}
			f, err := fh.Keep(ctx, req.who.scope, bytes.NewReader(raw), src.MediaType)
			if err != nil {
				return err
			}
			kept = cmf.MediaSource{Type: cmf.SourceFile, Data: f.ID, MediaType: f.MediaType}
		case src.Type == cmf.SourceURL && ours:
			_, f, err := fh.Read(ctx, req.who.scope, id)
			switch {
			case errors.Is(err, files.ErrNotFound):
				return wire.BadRequest("the message refers to a file that is not yours, or no longer exists")
			case err != nil:
				return wire.Unavailable("the file store is unavailable", err)
			}
			kept = cmf.MediaSource{Type: cmf.SourceFile, Data: f.ID, MediaType: f.MediaType}
		default:
			continue
		}
		if content == nil {
			content = append([]cmf.Part(nil), m.Content...)
		}
		content[i] = withSource(p, kept)
	}
	if content != nil {
		m.Content = content
	}
	return nil
}

// decodeBase64 reads standard base64, padded or not (as cmf accepts it).
func decodeBase64(s string) ([]byte, error) {
	if strings.HasSuffix(s, "=") || len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// withSource is media part p with its source replaced.
func withSource(p cmf.Part, src cmf.MediaSource) cmf.Part {
	switch p := p.(type) {
	case cmf.Image:
		p.MediaSource = src
		return p
	case cmf.Audio:
		p.MediaSource = src
		return p
	case cmf.Video:
		p.MediaSource = src
		return p
	case cmf.Document:
		p.MediaSource = src
		return p
	}
	return p
}

// mapFiles is msgs with each kept file's source replaced by what
// replace makes of it (keep: the part stays as it is), each message
// changed a copy of its own; msgs itself, unread but for the look, when
// none holds a file.
func mapFiles(msgs []cmf.Message, replace func(p cmf.Part, id string) cmf.Part) []cmf.Message {
	var out []cmf.Message
	for i := range msgs {
		var content []cmf.Part
		for j, p := range msgs[i].Content {
			src, ok := cmf.Media(p)
			if !ok || src.Type != cmf.SourceFile {
				continue
			}
			if content == nil {
				content = append([]cmf.Part(nil), msgs[i].Content...)
			}
			content[j] = replace(p, src.Data)
		}
		if content == nil {
			continue
		}
		if out == nil {
			out = append([]cmf.Message(nil), msgs...)
		}
		out[i].Content = content
	}
	if out == nil {
		return msgs
	}
	return out
}

// shownFiles is msgs as scope's client is shown them: each kept file a
// URL signed for scope.
func (h *Handler) shownFiles(scope string, msgs []cmf.Message) []cmf.Message {
	fh := h.cfg.files
	if fh == nil {
		return msgs
	}
	return mapFiles(msgs, func(p cmf.Part, id string) cmf.Part {
		src, _ := cmf.Media(p)
		return withSource(p, cmf.MediaSource{Type: cmf.SourceURL, Data: fh.URL(scope, id), MediaType: src.MediaType})
	})
}

// fileGoneText stands, for a model, in place of a kept file that is no
// longer in the store.
const fileGoneText = "(a file that is no longer available)"

// withFileBytes is msgs as a model is given them: each kept file's bytes
// inline (base64), read from the store; one that is gone is said to be.
func (req *request) withFileBytes(ctx context.Context, msgs []cmf.Message) ([]cmf.Message, error) {
	fh := req.h.cfg.files
	if fh == nil {
		return msgs, nil
	}
	var failed error
	out := mapFiles(msgs, func(p cmf.Part, id string) cmf.Part {
		b, f, err := fh.Read(ctx, req.who.scope, id)
		switch {
		case errors.Is(err, files.ErrNotFound):
			return cmf.Text{Text: fileGoneText}
		case err != nil:
			failed = err
			return p
		}
		return withSource(p, cmf.MediaSource{Type: cmf.SourceBase64, Data: base64.StdEncoding.EncodeToString(b), MediaType: f.MediaType})
	})
	if failed != nil {
		return nil, wire.Unavailable("the file store is unavailable", failed)
	}
	return out, nil
}

// keepsFiles reports whether m holds a kept file.
func keepsFiles(m cmf.Message) bool {
	for _, p := range m.Content {
		if src, ok := cmf.Media(p); ok && src.Type == cmf.SourceFile {
			return true
		}
	}
	return false
}

// keptFiles are the files key's chat refers to, on every branch (none
// without a file store).
func (h *Handler) keptFiles(ctx context.Context, key history.Key) map[string]bool {
	if h.cfg.files == nil {
		return nil
	}
	conv, err := h.cfg.store.Load(ctx, key)
	if err != nil {
		return nil
	}
	msgs := conv.Messages
	if b, ok := h.cfg.store.(history.Brancher); ok {
		if t, err := b.Branches(ctx, key); err == nil {
			for _, n := range t.Nodes {
				msgs = append(msgs[:len(msgs):len(msgs)], n.Message)
			}
		}
	}
	return fileRefs(msgs, nil)
}

// fileRefs adds the files msgs refer to to into (made when nil).
func fileRefs(msgs []cmf.Message, into map[string]bool) map[string]bool {
	for i := range msgs {
		for _, p := range msgs[i].Content {
			if src, ok := cmf.Media(p); ok && src.Type == cmf.SourceFile {
				if into == nil {
					into = map[string]bool{}
				}
				into[src.Data] = true
			}
		}
	}
	return into
}

// dropUnreferenced deletes the files of a deleted chat that no other chat
// of scope refers to (a file sent in two chats stays with the other),
// each store call bounded by the store timeout; a file it cannot tell
// about stays.
func (h *Handler) dropUnreferenced(scope string, ids map[string]bool, log *slog.Logger) {
	ctx := context.Background()
	lctx, cancel := context.WithTimeout(ctx, h.cfg.storeTimeout)
	chats, err := h.cfg.store.List(lctx, scope, 0)
	cancel()
	if err != nil {
		log.Warn("the deleted chat's files stay: its scope's chats could not be listed", "error", err)
		return
	}
	for _, c := range chats {
		for id := range h.keptFilesWithin(ctx, history.Key{Scope: scope, Chat: c.Chat}) {
			delete(ids, id)
		}
		if len(ids) == 0 {
			return
		}
	}
	for id := range ids {
		dctx, cancel := context.WithTimeout(ctx, h.cfg.storeTimeout)
		if err := h.cfg.files.Delete(dctx, scope, id); err != nil && !errors.Is(err, files.ErrNotFound) {
			log.Warn("a deleted chat's file could not be deleted", "file", id, "error", err)
		}
		cancel()
	}
}

// keptFilesWithin is keptFiles bounded by the store timeout.
func (h *Handler) keptFilesWithin(ctx context.Context, key history.Key) map[string]bool {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.storeTimeout)
	defer cancel()
	return h.keptFiles(ctx, key)
}
