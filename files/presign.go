package files

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/wire"
)

// Presigner is a Store a browser uploads to directly (an object store):
// the server signs one upload to a staging key, the browser PUTs the
// bytes there, and the finalize route reads them back to sniff and hash
// them as an upload's: the server never carries the bytes in, and never
// takes the browser's word for them.
type Presigner interface {
	// PresignUpload signs a PUT of size bytes of contentType for scope,
	// good for ttl, to a staging key of scope's.
	PresignUpload(ctx context.Context, scope, contentType string, size int64, ttl time.Duration) (PresignedUpload, error)
	// OpenStaged returns the bytes put at scope's staging key:
	// ErrNotFound when nothing was, or key is not one of scope's.
	OpenStaged(ctx context.Context, scope, key string) (io.ReadCloser, error)
	// DeleteStaged removes a staged upload.
	DeleteStaged(ctx context.Context, scope, key string) error
}

// PresignedUpload is one signed upload: PUT the bytes to URL with
// Headers, before Expires, then finalize Key.
type PresignedUpload struct {
	URL     string            `json:"signedUrl"`
	Key     string            `json:"key"`
	Headers map[string]string `json:"headers"`
	Expires time.Time         `json:"expiresAt"`
}

// maxPresignBody bounds the JSON bodies of the presign routes.
const maxPresignBody = 16 << 10

// PresignHandler serves POST {prefix}/presign {"name", "contentType",
// "size"} for a store that is a Presigner: 200 with a PresignedUpload
// (signedUrl, key, headers, expiresAt: what an attachment adapter that
// uploads straight to a bucket takes), checked as an upload is (the size
// bound, a type accepted, the scope's bound of files) before anything is
// signed. 404 when the store takes no direct uploads.
func (h *Handler) PresignHandler() http.Handler {
	return edge.RefuseCrossSite(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, p, ok := h.presigner(w, r)
		if !ok {
			return
		}
		var req struct {
			Name        string `json:"name"`
			ContentType string `json:"contentType"`
			Size        int64  `json:"size"`
		}
		if !readJSON(w, r, &req) || req.ContentType == "" || req.Size <= 0 {
			h.refuse(w, wire.BadRequest(`the body must be {"name", "contentType", "size"}`))
			return
		}
		if req.Size > h.maxBytes {
			h.refuse(w, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "the file is larger than " + strconv.FormatInt(h.maxBytes>>20, 10) + " MiB"})
			return
		}
		if why := h.unaccepted(req.ContentType, ""); why != "" {
			h.refuse(w, &wire.Error{Status: http.StatusUnsupportedMediaType, Message: why})
			return
		}
		if n, err := h.store.Count(r.Context(), scope); err != nil {
			h.refuse(w, wire.Unavailable("the file store is unavailable", err))
			return
		} else if n >= h.maxFiles {
			h.refuse(w, wire.Conflict("you have "+strconv.Itoa(n)+" files, the most kept: delete some first"))
			return
		}
		up, err := p.PresignUpload(r.Context(), scope, req.ContentType, req.Size, h.sign.ttl)
		if err != nil {
			h.refuse(w, wire.Unavailable("the file store is unavailable", err))
			return
		}
		writeJSON(w, http.StatusOK, up)
	}))
}

// FinalizeHandler serves POST {prefix}/finalize {"key", "name",
// "contentType"} once the browser has PUT a presigned upload: the staged
// bytes are read back and kept as an upload's are (sniffed, hashed,
// checked: 413, 415, 409), then the staged object goes; 201 with
// Uploaded. A key never uploaded to, or another scope's, is 404.
func (h *Handler) FinalizeHandler() http.Handler {
	return edge.RefuseCrossSite(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, p, ok := h.presigner(w, r)
		if !ok {
			return
		}
		var req struct {
			Key         string `json:"key"`
			Name        string `json:"name"`
			ContentType string `json:"contentType"`
		}
		if !readJSON(w, r, &req) || req.Key == "" {
			h.refuse(w, wire.BadRequest(`the body must be {"key", "name", "contentType"}`))
			return
		}
		rc, err := p.OpenStaged(r.Context(), scope, req.Key)
		switch {
		case errors.Is(err, ErrNotFound):
			h.refuse(w, &wire.Error{Status: http.StatusNotFound, Message: "nothing was uploaded for this key"})
			return
		case err != nil:
			h.refuse(w, wire.Unavailable("the file store is unavailable", err))
			return
		}
		f, err := h.Keep(r.Context(), scope, rc, req.ContentType)
		rc.Close()
		// Kept or refused, the staged bytes have had their look.
		if derr := p.DeleteStaged(context.WithoutCancel(r.Context()), scope, req.Key); derr != nil {
			h.log.Warn("a staged upload could not be deleted", "error", derr)
		}
		if err != nil {
			h.refuse(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, Uploaded{File: f, Name: req.Name, URL: h.URL(scope, f.ID)})
	}))
}

// presigner is the request's scope and the store as a Presigner; false
// (answered) without a scope, or for a store that takes no direct uploads.
func (h *Handler) presigner(w http.ResponseWriter, r *http.Request) (string, Presigner, bool) {
	scope, ok := h.scopeOf(w, r)
	if !ok {
		return "", nil, false
	}
	p, ok := h.store.(Presigner)
	if !ok {
		h.refuse(w, &wire.Error{Status: http.StatusNotFound, Message: "this server takes no direct uploads: POST the file to the upload route"})
		return "", nil, false
	}
	return scope, p, true
}

// readJSON reads a small JSON body into v; false when it is not one.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPresignBody))
	return err == nil && json.Unmarshal(b, v) == nil
}
