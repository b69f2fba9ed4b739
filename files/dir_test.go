package files_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
)

func TestDirStore(t *testing.T) {
	filestest.Run(t, func(t *testing.T) files.Store {
		d, err := files.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// With an expiry, a file goes once it has been neither kept nor read for
// that long (a chat in use reads its files every turn); one read lately
// stays.
func TestDirExpiry(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	d, err := files.NewDir(t.TempDir(), files.WithExpiry(time.Hour), files.WithDirClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(b string) files.File {
		t.Helper()
		f, err := d.Put(ctx, "alice", strings.NewReader(b), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	read, idle := put("read lately"), put("left alone")
	now = now.Add(40 * time.Minute)
	rc, _, err := d.Open(ctx, "alice", read.ID)
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	now = now.Add(50 * time.Minute) // 90 minutes after both were kept
	put("the next upload sweeps")
	if _, _, err := d.Open(ctx, "alice", idle.ID); !errors.Is(err, files.ErrNotFound) {
		t.Fatalf("a file left alone past its expiry: %v", err)
	}
	if rc, _, err := d.Open(ctx, "alice", read.ID); err != nil {
		t.Fatalf("a file read 50 minutes ago: %v", err)
	} else {
		rc.Close()
	}
}
