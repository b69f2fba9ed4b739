// Package webui is agentui's chat page as an http.Handler: a React page
// (useChat and AG-UI's HttpAgent, markdown, a chat list) that an app
// mounts next to its agentui handlers, like the agentui binary does.
//
//	mux.Handle("GET /", webui.Handler())
//
// The page calls the API at /api/… of its own origin (the routes in the
// README: /api/chat, /api/agui, /api/chats and the per-chat ones). Its
// assets load relative to the page, so it can sit under a prefix:
//
//	mux.Handle("GET /chat/", http.StripPrefix("/chat", webui.Handler()))
package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// dist is the built page (make web builds it from app/).
//
//go:embed all:dist
var dist embed.FS

// Handler serves the embedded chat page.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err == nil {
		var h http.Handler
		if h, err = FileHandler(sub); err == nil {
			return h
		}
	}
	panic("webui: the embedded page is broken: " + err.Error()) // a build defect, caught by the tests
}

// staticFile is one file of the page, with its gzipped form when that is
// smaller.
type staticFile struct {
	body, gz []byte
	etag     string
	ctype    string
}

// FileHandler serves a page's files (index.html and its assets) from
// fsys, held in memory, with the headers a page served to browsers should
// have (see Headers). Hashed assets (/assets/…) are cached for a year;
// everything else is revalidated (by ETag) on every load. Compressible
// files are gzipped once, here. Handler serves the embedded page with it.
func FileHandler(fsys fs.FS) (http.Handler, error) {
	files := map[string]*staticFile{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		f := &staticFile{body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: mime.TypeByExtension(path.Ext(p))}
		if f.ctype == "" {
			f.ctype = http.DetectContentType(body)
		}
		if compressible(f.ctype) {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(body)
			_ = zw.Close()
			if buf.Len() < len(body) {
				f.gz = buf.Bytes()
			}
		}
		files["/"+p] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return Headers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path
		if strings.HasSuffix(name, "/") {
			name += "index.html"
		}
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.ctype)
		h.Set("ETag", f.etag)
		h.Set("Vary", "Accept-Encoding")
		if strings.HasPrefix(name, "/assets/") {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		body := f.body
		if f.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			body = f.gz
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})), nil
}

// Headers adds the headers a page served to browsers should have: no
// content sniffing, no framing by other sites, scripts only from the
// page's origin, and network requests only to it.
func Headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.Contains(ctype, "javascript") ||
		strings.Contains(ctype, "json") || strings.Contains(ctype, "svg")
}
