// Package files keeps the files people attach to chats by reference: a
// file is stored once per scope under the hash of its bytes, its type is
// read from those bytes (never taken from the client), and a browser
// reads it through a short-lived URL signed for its scope (Handler). Dir
// keeps files in a directory: one replica, or a volume replicas share.
package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
)

// File is a stored file.
type File struct {
	// ID names the file within its scope: "sha256-" and the hex SHA-256
	// of its bytes, so the same bytes are one file.
	ID string `json:"id"`
	// MediaType is read from the file's first bytes
	// (http.DetectContentType), whatever the client said.
	MediaType string `json:"mediaType"`
	Size      int64  `json:"size"`
}

// Store keeps files per scope. Implementations are safe for concurrent
// use.
type Store interface {
	// Put reads r to its end and stores its bytes for scope: ErrTooLarge
	// past max bytes (nothing is stored). Bytes already stored for scope
	// are not stored twice.
	Put(ctx context.Context, scope string, r io.Reader, max int64) (File, error)
	// Open returns a file's bytes: ErrNotFound when scope has no file
	// with this id.
	Open(ctx context.Context, scope, id string) (io.ReadCloser, File, error)
	// Delete removes a file: ErrNotFound when there is none.
	Delete(ctx context.Context, scope, id string) error
	// Count is how many files scope holds.
	Count(ctx context.Context, scope string) (int, error)
}

// Errors.
var (
	ErrTooLarge = errors.New("files: the file is larger than allowed")
	ErrNotFound = errors.New("files: no such file")
)

// idPrefix starts every file id.
const idPrefix = "sha256-"

// ValidID reports whether id is a file id: the prefix and 64 lowercase
// hex digits, nothing a path could be built from.
func ValidID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, idPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for _, c := range hexPart {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func idOf(sum []byte) string { return idPrefix + hex.EncodeToString(sum) }

// Sniff is the media type of a file that starts with head (up to 512
// bytes), as http.DetectContentType reads it, without its parameters.
func Sniff(head []byte) string {
	t := http.DetectContentType(head)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}
