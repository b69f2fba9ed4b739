package files

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentui/agentui/edge"
	"github.com/agentui/agentui/internal/wire"
)

// Handler serves a store's files over HTTP: uploads, and reads through
// URLs signed for the reader's scope.
type Handler struct {
	store    Store
	prefix   string // the read route's path, before /{id}
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

// WithPrefix is the path the read route is mounted at, before /{id}
// (default "/api/files"): the URLs Handler signs are on it.
func WithPrefix(p string) Option { return func(h *Handler) { h.prefix = strings.TrimSuffix(p, "/") } }

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
		maxBytes: DefaultMaxBytes, maxFiles: DefaultMaxFiles, types: DefaultTypes, log: slog.Default(), prefix: "/api/files"}
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
// scope holds its bound of files; 400 for a body that is not such a form;
// 403 from a page on another origin (unless edge.CORS allows it).
func (h *Handler) UploadHandler() http.Handler {
	// A form post is a request any page may send without a preflight:
	// one from a page on another origin is refused (edge.RefuseCrossSite).
	return edge.RefuseCrossSite(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	}))
}

// put stores one uploaded file and answers for it.
func (h *Handler) put(w http.ResponseWriter, r *http.Request, scope string, part interface {
	io.Reader
	FileName() string
}, declared string) {
	f, err := h.Keep(r.Context(), scope, part, declared)
	if err != nil {
		h.refuse(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, Uploaded{File: f, Name: part.FileName(), URL: h.URL(scope, f.ID)})
}

// Keep stores r's bytes for scope as an upload does, whatever brought
// them (a form, or a chat message that carried them inline): within the
// bounds, of a type accepted and the one declared ("" or
// application/octet-stream: any). Its refusals are *wire.Error (413, 415,
// 409, 503), with nothing stored.
func (h *Handler) Keep(ctx context.Context, scope string, r io.Reader, declared string) (File, error) {
	if n, err := h.store.Count(ctx, scope); err != nil {
		return File{}, wire.Unavailable("the file store is unavailable", err)
	} else if n >= h.maxFiles {
		return File{}, wire.Conflict("you have " + strconv.Itoa(n) + " files, the most kept: delete some first")
	}
	// The type is read from the first bytes before anything is stored:
	// a refused file never touches the store (nor the same bytes kept
	// before, under another claim).
	br := bufio.NewReaderSize(r, 512)
	head, err := br.Peek(512)
	var tooBig *http.MaxBytesError
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		if errors.As(err, &tooBig) {
			return File{}, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "the file is larger than " + strconv.FormatInt(h.maxBytes>>20, 10) + " MiB"}
		}
		return File{}, wire.BadRequest("the file could not be read")
	}
	if why := h.unaccepted(Sniff(head), declared); why != "" {
		return File{}, &wire.Error{Status: http.StatusUnsupportedMediaType, Message: why}
	}
	f, err := h.store.Put(ctx, scope, br, h.maxBytes)
	switch {
	case errors.Is(err, ErrTooLarge) || errors.As(err, &tooBig):
		return File{}, &wire.Error{Status: http.StatusRequestEntityTooLarge, Message: "the file is larger than " + strconv.FormatInt(h.maxBytes>>20, 10) + " MiB"}
	case err != nil:
		return File{}, wire.Unavailable("the file store is unavailable", err)
	}
	return f, nil
}

// URL is the path that reads scope's file id until it expires (signed
// for that scope).
func (h *Handler) URL(scope, id string) string {
	return h.prefix + "/" + id + "?" + h.sign.sign(scope, id)
}

// IDOf is the id of the file a URL of this handler reads (relative, or
// on any host; signed or not, expired or not), and whether raw is one.
// A client that shows a file and sends it back (an edit, a regeneration,
// a thread it holds) sends such a URL: it names the file, nothing is
// fetched.
func (h *Handler) IDOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	id, ok := strings.CutPrefix(u.Path, h.prefix+"/")
	return id, ok && ValidID(id)
}

// Delete removes scope's file id: ErrNotFound when there is none.
func (h *Handler) Delete(ctx context.Context, scope, id string) error {
	return h.store.Delete(ctx, scope, id)
}

// Read returns scope's file id whole (bounded by the size bound, as it
// was kept): what a model is given. ErrNotFound when it is gone.
func (h *Handler) Read(ctx context.Context, scope, id string) ([]byte, File, error) {
	rc, f, err := h.store.Open(ctx, scope, id)
	if err != nil {
		return nil, File{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max(h.maxBytes, f.Size)+1))
	if err != nil {
		return nil, File{}, fmt.Errorf("files: %w", err)
	}
	return b, f, nil
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
	return edge.RefuseCrossSite(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	}))
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
