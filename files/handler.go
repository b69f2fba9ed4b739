package files

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentui/agentui/internal/wire"
)

// Handler serves a store's files over HTTP: uploads, and reads through
// URLs signed for the reader's scope.
type Handler struct {
	store    Store
	scope    func(*http.Request) (string, error)
	sign     signer
	maxBytes int64
	maxFiles int
	types    []string
	log      *slog.Logger
}

// Defaults.
const (
	DefaultMaxBytes = 10 << 20 // a file
	DefaultMaxFiles = 200      // per scope
	DefaultURLTTL   = 15 * time.Minute
)

// DefaultTypes are the media types accepted by default: images and
// documents the native models read.
var DefaultTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain"}

// Option configures a Handler.
type Option func(*Handler)

// WithMaxBytes bounds a file's size (default DefaultMaxBytes).
func WithMaxBytes(n int64) Option { return func(h *Handler) { h.maxBytes = n } }

// WithMaxFiles bounds how many files a scope keeps (default
// DefaultMaxFiles).
func WithMaxFiles(n int) Option { return func(h *Handler) { h.maxFiles = n } }

// WithTypes sets the media types accepted, as read from the files' bytes
// (default DefaultTypes).
func WithTypes(types ...string) Option { return func(h *Handler) { h.types = types } }

// WithURLTTL sets how long a signed URL is good for (default
// DefaultURLTTL).
func WithURLTTL(d time.Duration) Option { return func(h *Handler) { h.sign.ttl = d } }

// WithClock sets the clock signed URLs are checked against (for tests).
func WithClock(now func() time.Time) Option { return func(h *Handler) { h.sign.now = now } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(h *Handler) { h.log = l } }

// NewHandler serves store. scope names the request's scope (the same
// function the chat handlers authenticate with: a file is its scope's);
// secret signs the URLs (at least 32 bytes).
func NewHandler(store Store, secret []byte, scope func(*http.Request) (string, error), opts ...Option) (*Handler, error) {
	if store == nil || scope == nil {
		return nil, errors.New("files: a store and a scope function are required")
	}
	if len(secret) < 32 {
		return nil, errors.New("files: the signing secret must be at least 32 bytes")
	}
	h := &Handler{store: store, scope: scope, sign: signer{key: secret, ttl: DefaultURLTTL, now: time.Now},
		maxBytes: DefaultMaxBytes, maxFiles: DefaultMaxFiles, types: DefaultTypes, log: slog.Default()}
	for _, o := range opts {
		o(h)
	}
	if h.maxBytes <= 0 || h.maxFiles <= 0 || h.sign.ttl <= 0 || len(h.types) == 0 {
		return nil, errors.New("files: the size, count and URL lifetime bounds must be positive, and some type accepted")
	}
	return h, nil
}

// Uploaded is what an upload answers.
type Uploaded struct {
	File
	// Name is the name the client gave it (not stored with the file).
	Name string `json:"name,omitempty"`
	// URL reads the file, for the uploader's scope, until it expires.
	URL string `json:"url"`
}

// UploadHandler serves POST {prefix}/files: a multipart/form-data body
// whose "file" part is the file (what a browser's FormData sends). 201
// with Uploaded; 413 past the size bound; 415 for a type not accepted,
// or a file whose bytes are not the type its part says; 409 once the
// scope holds its bound of files; 400 for a body that is not such a form.
func (h *Handler) UploadHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := h.scopeOf(w, r)
		if !ok {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBytes+64<<10)
		mr, err := r.MultipartReader()
		if err != nil {
			h.refuse(w, wire.BadRequest(`the body must be multipart/form-data with a "file" part`))
			return
		}
		var part interface {
			io.Reader
			FormName() string
			FileName() string
		}
		for {
			p, err := mr.NextPart()
			if err != nil {
				h.refuse(w, wire.BadRequest(`the body must be multipart/form-data with a "file" part`))
				return
			}
			if p.FormName() == "file" {
				part = p
				declared, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
				h.put(w, r, scope, part, declared)
				return
			}
		}
	})
}

// put stores one uploaded file and answers for it.
func (h *Handler) put(w http.ResponseWriter, r *http.Request, scope string, part interface {
	io.Reader
	FileName() string
}, declared string) {
	ctx := r.Context()
	if n, err := h.store.Count(ctx, scope); err != nil {
		h.refuse(w, wire.Unavailable("the file store is unavailable", err))
		return
	} else if n >= h.maxFiles {
		h.refuse(w, wire.Conflict("you have "+strconv.Itoa(n)+" files, the most kept: delete some first"))
		return
	}
	f, err := h.store.Put(ctx, scope, part, h.maxBytes)
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, ErrTooLarge) || errors.As(err, &tooBig):
		h.refuse(w, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "the file is larger than " + strconv.FormatInt(h.maxBytes>>20, 10) + " MiB"})
		return
	case err != nil:
		h.refuse(w, wire.Unavailable("the file store is unavailable", err))
		return
	}
	if why := h.unaccepted(f.MediaType, declared); why != "" {
		if err := h.store.Delete(context.WithoutCancel(ctx), scope, f.ID); err != nil && !errors.Is(err, ErrNotFound) {
			h.log.Warn("a refused upload could not be deleted", "error", err)
		}
		h.refuse(w, &wire.Error{Status: http.StatusUnsupportedMediaType, Message: why})
		return
	}
	base := strings.TrimSuffix(r.URL.Path, "/")
	writeJSON(w, http.StatusCreated, Uploaded{File: f, Name: part.FileName(), URL: base + "/" + f.ID + "?" + h.sign.sign(scope, f.ID)})
}

// unaccepted says why a file whose bytes read as sniffed, and which the
// client said was declared, is refused ("" when it is not).
func (h *Handler) unaccepted(sniffed, declared string) string {
	if !slices.Contains(h.types, sniffed) {
		return "files of this kind are not accepted (" + sniffed + ")"
	}
	generic := declared == "" || declared == "application/octet-stream"
	if !generic && declared != sniffed && !(strings.HasPrefix(sniffed, "text/") && strings.HasPrefix(declared, "text/")) {
		return "the file is not what its type says (" + declared + "; its bytes are " + sniffed + ")"
	}
	return ""
}

// ServeHandler serves GET {prefix}/files/{id}?exp=…&sig=… (the URL an
// upload answers with, or one a chat's history shows): the file, to the
// scope the URL was signed for, until it expires. 403 for a URL forged,
// expired or another scope's; 404 for a file that is gone. The file's
// type is its bytes', and it never runs as a page (a sandbox CSP; other
// than images and PDFs it is a download). id is the ServeMux path value
// "id".
func (h *Handler) ServeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := h.scopeOf(w, r)
		if !ok {
			return
		}
		id, q := r.PathValue("id"), r.URL.Query()
		if !ValidID(id) || !h.sign.verify(scope, id, q.Get("exp"), q.Get("sig")) {
			h.refuse(w, &wire.Error{Status: http.StatusForbidden, Message: "this link to a file has expired or is not yours"})
			return
		}
		rc, f, err := h.store.Open(r.Context(), scope, id)
		switch {
		case errors.Is(err, ErrNotFound):
			h.refuse(w, &wire.Error{Status: http.StatusNotFound, Message: "no such file"})
			return
		case err != nil:
			h.refuse(w, wire.Unavailable("the file store is unavailable", err))
			return
		}
		defer rc.Close()
		hd := w.Header()
		hd.Set("Content-Type", f.MediaType)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Content-Security-Policy", "sandbox; default-src 'none'")
		hd.Set("Cache-Control", "private, max-age=300")
		if !strings.HasPrefix(f.MediaType, "image/") && f.MediaType != "application/pdf" {
			hd.Set("Content-Disposition", "attachment")
		}
		if rs, ok := rc.(io.ReadSeeker); ok {
			http.ServeContent(w, r, "", time.Time{}, rs)
			return
		}
		hd.Set("Content-Length", strconv.FormatInt(f.Size, 10))
		_, _ = io.Copy(w, rc)
	})
}

// DeleteHandler serves DELETE {prefix}/files/{id}: the scope's file goes
// (204; 404 when it has none). id is the ServeMux path value "id".
func (h *Handler) DeleteHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := h.scopeOf(w, r)
		if !ok {
			return
		}
		switch err := h.store.Delete(r.Context(), scope, r.PathValue("id")); {
		case errors.Is(err, ErrNotFound):
			h.refuse(w, &wire.Error{Status: http.StatusNotFound, Message: "no such file"})
		case err != nil:
			h.refuse(w, wire.Unavailable("the file store is unavailable", err))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// scopeOf is the request's scope; false when it has none (answered).
func (h *Handler) scopeOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	scope, err := h.scope(r)
	if err != nil {
		var e *wire.Error
		if !errors.As(err, &e) {
			e = &wire.Error{Status: http.StatusUnauthorized, Message: "authentication required", Err: err}
		}
		h.refuse(w, e)
		return "", false
	}
	return scope, true
}

func (h *Handler) refuse(w http.ResponseWriter, err error) { wire.WriteError(w, h.log, err) }

// writeJSON answers with v as JSON, not to be cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
