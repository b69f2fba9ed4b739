package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/runlog"
	"github.com/agentui/agentui/runlog/logtest"
	goredis "github.com/redis/go-redis/v9"
)

func newRunLog(t *testing.T, rdb goredis.UniversalClient) runlog.Log {
	prefix := testutil.KeyPrefix()
	if c, ok := rdb.(*goredis.Client); ok {
		testutil.DeleteKeysOnCleanup(t, c, prefix)
	}
	l, err := redisstore.NewRunLog(context.Background(), rdb, redisstore.WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestRunLogOnRedis(t *testing.T) {
	rdb := testutil.Redis(t)
	logtest.Run(t, func(t *testing.T) runlog.Log { return newRunLog(t, rdb) })
}

func TestRunLogOnRedisCluster(t *testing.T) {
	cluster := testutil.RedisCluster(t, 3)
	logtest.Run(t, func(t *testing.T) runlog.Log { return newRunLog(t, cluster) })
}

// A stop published through one replica's log reaches the other's.
func TestRunLogStopCrossesReplicas(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	a, err := redisstore.NewRunLog(context.Background(), rdb, redisstore.WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := redisstore.NewRunLog(context.Background(), rdb, redisstore.WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	heard := make(chan string, 1)
	defer a.Watch(func(n runlog.Note) { heard <- n.Run })()
	if err := b.Notify(context.Background(), runlog.Note{Key: history.Key{Scope: "s", Chat: "c"}, Run: "r9"}); err != nil {
		t.Fatal(err)
	}
	if run := <-heard; run != "r9" {
		t.Fatalf("heard %q", run)
	}
}

// An event logged without a time (runlog.EventEntry leaves it zero) is
// stored with the time of its append; one with a time keeps it.
func TestRunLogStampsEntriesWithoutATime(t *testing.T) {
	ctx := context.Background()
	l := newRunLog(t, testutil.Redis(t))
	k := history.Key{Scope: "s", Chat: "c"}
	kept := time.UnixMilli(1_700_000_000_000)
	before := time.Now().Truncate(time.Millisecond)
	if err := l.Begin(ctx, k, runlog.Header{Run: "r1"}, runlog.EventEntry(1, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a"}),
		runlog.Entry{Seq: 2, Time: kept, Event: &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "b"}}); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	es, err := l.Read(ctx, k, "r1", 0, time.Second)
	if err != nil || len(es) != 2 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	if es[0].Time.Before(before) || es[0].Time.After(after) || !es[1].Time.Equal(kept) {
		t.Fatalf("times %v, %v; appended between %v and %v", es[0].Time, es[1].Time, before, after)
	}
}

// A header an earlier version left (one JSON string, not a hash) reads
// as no run; ending its run leaves it alone, and a new run replaces it.
func TestRunLogReplacesAnEarlierVersionsHeader(t *testing.T) {
	ctx := context.Background()
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	l, err := redisstore.NewRunLog(ctx, rdb, redisstore.WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	k := history.Key{Scope: "s", Chat: "c"}
	old := prefix + "{s:c}:run"
	if err := rdb.Set(ctx, old, `{"run":"r0","protocol":"vercel-ai","lock":"x"}`, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Current(ctx, k); err != runlog.ErrNoRun {
		t.Fatalf("Current: %v, want ErrNoRun", err)
	}
	if _, err := l.Read(ctx, k, "r0", 0, time.Millisecond); err != runlog.ErrNoRun {
		t.Fatalf("Read: %v, want ErrNoRun", err)
	}
	if err := l.End(ctx, k, "r0", time.Minute); err != nil {
		t.Fatalf("End: %v", err)
	}
	if got := rdb.Get(ctx, old).Val(); got == "" {
		t.Fatal("End removed or changed the old header")
	}
	if err := l.Begin(ctx, k, runlog.Header{Run: "r1", Lock: "y"}); err != nil {
		t.Fatal(err)
	}
	if err := l.End(ctx, k, "r1", time.Minute); err != nil {
		t.Fatal(err)
	}
	h, err := l.Current(ctx, k)
	if err != nil || h.Run != "r1" || h.Lock != "y" || !h.Ended {
		t.Fatalf("Current: %+v, %v", h, err)
	}
}

// An end whose last entries do not land is an error: those entries are
// what tells a reader on another replica that the run ended.
func TestRunLogEndFailsWhenItsEntriesDoNotLand(t *testing.T) {
	ctx := context.Background()
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	l, err := redisstore.NewRunLog(ctx, rdb, redisstore.WithRunLogPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	k := history.Key{Scope: "s", Chat: "c"}
	if err := l.Begin(ctx, k, runlog.Header{Run: "r1"}, runlog.EventEntry(1, &agent.PartDelta{Kind: agent.PartText, ID: "t", Delta: "a"})); err != nil {
		t.Fatal(err)
	}
	// The run's stream becomes something XADD refuses (WRONGTYPE).
	keys, err := rdb.Keys(ctx, prefix+"*r1*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("stream keys %v, %v", keys, err)
	}
	if err := rdb.Del(ctx, keys[0]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, keys[0], "not a stream", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	last := runlog.Entry{Seq: 2, Type: runlog.TypeEnded}
	if err := l.End(ctx, k, "r1", time.Minute, []runlog.Entry{last}); err == nil {
		t.Fatal("End reported success though its last entry was refused")
	}
}
