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
	"sync"
	"time"
)

// Dir is a Store in a directory: a subdirectory per scope (named by the
// scope's hash, so no scope can name a path), a file per content hash,
// written to a temporary file first and renamed into place, so a reader
// never sees half a file.
type Dir struct {
	root string
	ttl  time.Duration // 0: files never expire
	now  func() time.Time

	mu        sync.Mutex
	nextSweep time.Time
}

var _ Store = (*Dir)(nil)

// DirOption configures a Dir.
type DirOption func(*Dir)

// WithExpiry makes files expire ttl after they were last kept or read,
// as conversations expire after their last write (give both the same
// ttl: a chat in use reads its files every turn, so they outlive it by
// no more than ttl). Expired files go as later puts sweep them, at most
// once a minute.
func WithExpiry(ttl time.Duration) DirOption { return func(d *Dir) { d.ttl = ttl } }

// WithDirClock sets the clock expiry is measured by (for tests).
func WithDirClock(now func() time.Time) DirOption { return func(d *Dir) { d.now = now } }

// NewDir returns a store in root, which it creates (0700) when missing.
func NewDir(root string, opts ...DirOption) (*Dir, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	d := &Dir{root: root, now: time.Now}
	for _, o := range opts {
		o(d)
	}
	return d, nil
}

// touch marks a file used now: its expiry starts again.
func (d *Dir) touch(path string) {
	if d.ttl > 0 {
		now := d.now()
		_ = os.Chtimes(path, now, now)
	}
}

// sweep deletes the files (and abandoned uploads) last used before the
// expiry, at most once a minute.
func (d *Dir) sweep() {
	if d.ttl <= 0 {
		return
	}
	now := d.now()
	d.mu.Lock()
	if now.Before(d.nextSweep) {
		d.mu.Unlock()
		return
	}
	d.nextSweep = now.Add(min(d.ttl, time.Minute))
	d.mu.Unlock()
	Expire(d.root, now.Add(-d.ttl))
}

// Expire deletes the files under root last used before cutoff (Dir's
// sweep; exported for a tool that cleans a directory no server runs on).
func Expire(root string, cutoff time.Time) {
	_ = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(path)
		}
		return nil
	})
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
	final := filepath.Join(dir, f.ID)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return File{}, fmt.Errorf("files: %w", err)
	}
	d.touch(final)
	d.sweep()
	return f, nil
}

// Open returns a file's bytes.
func (d *Dir) Open(_ context.Context, scope, id string) (io.ReadCloser, File, error) {
	if !ValidID(id) {
		return nil, File{}, ErrNotFound
	}
	path := filepath.Join(d.scopeDir(scope), id)
	fh, err := os.Open(path)
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
	d.touch(path)
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
