package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a Store in a directory: a subdirectory per scope (named by the
// scope's hash, so no scope can name a path), a file per content hash,
// written to a temporary file first and renamed into place, so a reader
// never sees half a file.
type Dir struct {
	root string
}

var _ Store = (*Dir)(nil)

// NewDir returns a store in root, which it creates (0700) when missing.
func NewDir(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	return &Dir{root: root}, nil
}

func (d *Dir) scopeDir(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(d.root, hex.EncodeToString(sum[:16]))
}

// Put stores r's bytes for scope.
func (d *Dir) Put(ctx context.Context, scope string, r io.Reader, max int64) (File, error) {
	dir := d.scopeDir(scope)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed; else the leftover
	h := sha256.New()
	head := &headWriter{}
	n, err := io.Copy(io.MultiWriter(tmp, h, head), io.LimitReader(readerWith(ctx, r), max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return File{}, fmt.Errorf("files: %w", err)
	case n > max:
		return File{}, ErrTooLarge
	}
	f := File{ID: idOf(h.Sum(nil)), MediaType: Sniff(head.b), Size: n}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, f.ID)); err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	return f, nil
}

// Open returns a file's bytes.
func (d *Dir) Open(_ context.Context, scope, id string) (io.ReadCloser, File, error) {
	if !ValidID(id) {
		return nil, File{}, ErrNotFound
	}
	fh, err := os.Open(filepath.Join(d.scopeDir(scope), id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, File{}, ErrNotFound
	}
	if err != nil {
		return nil, File{}, fmt.Errorf("files: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, File{}, fmt.Errorf("files: %w", err)
	}
	head := make([]byte, 512)
	k, err := io.ReadFull(fh, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		fh.Close()
		return nil, File{}, fmt.Errorf("files: %w", err)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		fh.Close()
		return nil, File{}, fmt.Errorf("files: %w", err)
	}
	return fh, File{ID: id, MediaType: Sniff(head[:k]), Size: st.Size()}, nil
}

// Delete removes a file.
func (d *Dir) Delete(_ context.Context, scope, id string) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	err := os.Remove(filepath.Join(d.scopeDir(scope), id))
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	return nil
}

// Count is how many files scope holds.
func (d *Dir) Count(_ context.Context, scope string) (int, error) {
	es, err := os.ReadDir(d.scopeDir(scope))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("files: %w", err)
	}
	n := 0
	for _, e := range es {
		if ValidID(e.Name()) {
			n++
		}
	}
	return n, nil
}

// headWriter keeps the first 512 bytes written to it, to sniff.
type headWriter struct{ b []byte }

func (h *headWriter) Write(p []byte) (int, error) {
	if room := 512 - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// readerWith is r, failing once ctx ends (a client that trickles its
// upload is cut by the request's deadline).
func readerWith(ctx context.Context, r io.Reader) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return r.Read(p)
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
