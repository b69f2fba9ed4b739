// Package filestest is the contract every files.Store keeps. Store
// implementations run it from their tests:
//
//	filestest.Run(t, func(t *testing.T) files.Store { … })
package filestest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/agentui/agentui/files"
)

// PNG is the smallest PNG header a sniffer reads as image/png.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// Run runs the contract against stores from newStore.
func Run(t *testing.T, newStore func(t *testing.T) files.Store) {
	ctx := context.Background()
	read := func(t *testing.T, s files.Store, scope, id string) ([]byte, files.File) {
		t.Helper()
		rc, f, err := s.Open(ctx, scope, id)
		if err != nil {
			t.Fatalf("Open(%s, %s): %v", scope, id, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b, f
	}

	t.Run("put and open", func(t *testing.T) {
		s := newStore(t)
		f, err := s.Put(ctx, "alice", bytes.NewReader(PNG), 1<<20)
		if err != nil || !files.ValidID(f.ID) || f.MediaType != "image/png" || f.Size != int64(len(PNG)) {
			t.Fatalf("Put = %+v, %v", f, err)
		}
		b, got := read(t, s, "alice", f.ID)
		if !bytes.Equal(b, PNG) || got != f {
			t.Fatalf("Open = %+v %q", got, b)
		}
	})

	t.Run("the same bytes are one file per scope", func(t *testing.T) {
		s := newStore(t)
		a, _ := s.Put(ctx, "alice", bytes.NewReader(PNG), 1<<20)
		b, _ := s.Put(ctx, "alice", bytes.NewReader(PNG), 1<<20)
		if a.ID != b.ID {
			t.Fatalf("two ids for the same bytes: %s %s", a.ID, b.ID)
		}
		if n, err := s.Count(ctx, "alice"); err != nil || n != 1 {
			t.Fatalf("Count = %d, %v", n, err)
		}
	})

	t.Run("scopes do not share files", func(t *testing.T) {
		s := newStore(t)
		f, _ := s.Put(ctx, "alice", bytes.NewReader(PNG), 1<<20)
		if _, _, err := s.Open(ctx, "bob", f.ID); !errors.Is(err, files.ErrNotFound) {
			t.Fatalf("another scope's Open: %v", err)
		}
		if err := s.Delete(ctx, "bob", f.ID); !errors.Is(err, files.ErrNotFound) {
			t.Fatalf("another scope's Delete: %v", err)
		}
		if n, _ := s.Count(ctx, "bob"); n != 0 {
			t.Fatalf("bob's Count = %d", n)
		}
	})

	t.Run("too large stores nothing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Put(ctx, "alice", strings.NewReader(strings.Repeat("x", 1001)), 1000); !errors.Is(err, files.ErrTooLarge) {
			t.Fatalf("Put past max: %v", err)
		}
		if n, _ := s.Count(ctx, "alice"); n != 0 {
			t.Fatalf("Count after a refused Put = %d", n)
		}
		if _, err := s.Put(ctx, "alice", strings.NewReader(strings.Repeat("x", 1000)), 1000); err != nil {
			t.Fatalf("Put of exactly max: %v", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		s := newStore(t)
		f, _ := s.Put(ctx, "alice", bytes.NewReader(PNG), 1<<20)
		if err := s.Delete(ctx, "alice", f.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Open(ctx, "alice", f.ID); !errors.Is(err, files.ErrNotFound) {
			t.Fatalf("Open after Delete: %v", err)
		}
		if err := s.Delete(ctx, "alice", f.ID); !errors.Is(err, files.ErrNotFound) {
			t.Fatalf("a second Delete: %v", err)
		}
	})

	t.Run("ids that are not ids name nothing", func(t *testing.T) {
		s := newStore(t)
		for _, id := range []string{"", "../x", "sha256-../../etc/passwd", "sha256-" + strings.Repeat("A", 64)} {
			if _, _, err := s.Open(ctx, "alice", id); !errors.Is(err, files.ErrNotFound) {
				t.Errorf("Open(%q): %v", id, err)
			}
		}
	})

	t.Run("concurrent puts of one file", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := s.Put(ctx, "alice", bytes.NewReader(PNG), 1<<20); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n, _ := s.Count(ctx, "alice"); n != 1 {
			t.Fatalf("Count = %d", n)
		}
		if b, _ := read(t, s, "alice", "sha256-"+sha(PNG)); !bytes.Equal(b, PNG) {
			t.Fatal("the file is not whole")
		}
	})
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
