package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/runlog"
)

// A reader of a long log holds a page of it, not all of it: a Read
// returns at most readPage stream entries' worth, and a cursor decodes
// chunkEntries at a time, each into the memory of the one before, while
// it catches up.
func TestRunLogReadsALongLogInPages(t *testing.T) {
	ctx := context.Background()
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	l, err := NewRunLog(ctx, rdb, WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	k := history.Key{Scope: "s", Chat: "c"}
	const n = 100_000
	if err := l.Begin(ctx, k, runlog.Header{Run: "r"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; {
		batch := make([]runlog.Entry, 0, 10_000)
		for ; i < n && len(batch) < cap(batch); i++ {
			batch = append(batch, runlog.EventEntry(int64(i+1), &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: strconv.Itoa(i+1) + " "}))
		}
		if err := l.Append(ctx, k, "r", batch...); err != nil {
			t.Fatal(err)
		}
	}

	es, err := l.Read(ctx, k, "r", 0, time.Second)
	if err != nil || len(es) == 0 || len(es) > readPage*maxEntryBytes/10 {
		t.Fatalf("Read of a %d-entry log: %d entries, %v; want a page (at most %d)", n, len(es), err, readPage*maxEntryBytes/10)
	}

	c := l.Cursor(k, "r", 0)
	var seq int64
	var last *runlog.Entry
	for seq < n {
		es, err := c.Next(ctx, time.Second)
		if err != nil || len(es) == 0 || len(es) > chunkEntries {
			t.Fatalf("Next after %d: %d entries, %v; want 1 to %d", seq, len(es), err, chunkEntries)
		}
		for _, e := range es {
			if d, ok := e.Event.(*agent.PartDelta); !ok || e.Seq != seq+1 || d.Delta != strconv.FormatInt(e.Seq, 10)+" " {
				t.Fatalf("after %d: entry %d %+v", seq, e.Seq, e.Event)
			}
			seq = e.Seq
		}
		if last != nil && &es[0] != last && seq < n {
			t.Fatalf("the chunk ending at %d is in fresh memory, not the last chunk's", seq)
		}
		last = &es[0]
	}
}
