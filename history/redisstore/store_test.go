package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/history/storetest"
	"github.com/agentui/agentui/internal/testkit/testutil"
	goredis "github.com/redis/go-redis/v9"
)

func TestStoreOnRedis(t *testing.T) {
	rdb := testutil.Redis(t)
	for _, size := range []int{redisstore.DefaultCacheSize, 0} {
		t.Run(fmt.Sprintf("cache %d", size), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, ttl time.Duration) (history.Store, storetest.Elapse) {
				prefix := testutil.KeyPrefix()
				testutil.DeleteKeysOnCleanup(t, rdb, prefix)
				return redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithTTL(ttl), redisstore.WithCache(size)), elapser(t, rdb, prefix)
			})
		})
	}
}

// Two replicas share one Redis; each caches what it loaded. Every write
// by one is seen by the other's next load, even a delete followed by a
// new conversation under the same id, whose versions start again at 1.
func TestCacheAcrossReplicas(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	a := redisstore.New(rdb, redisstore.WithPrefix(prefix))
	b := redisstore.New(rdb, redisstore.WithPrefix(prefix))
	ctx := context.Background()
	key := history.Key{Scope: "s", Chat: "c"}
	load := func(s *redisstore.Store) (history.Version, string) {
		t.Helper()
		c, err := s.Load(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for i := range c.Messages {
			texts = append(texts, c.Messages[i].Text())
		}
		return c.Version, strings.Join(texts, ",")
	}
	user := func(text string) cmf.Message {
		return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: text}}}
	}
	if _, err := a.Write(ctx, key, 0, history.KeepAll, user("one")); err != nil {
		t.Fatal(err)
	}
	if v, got := load(a); v != 1 || got != "one" {
		t.Fatalf("a loads %d %q", v, got)
	}
	if v, got := load(b); v != 1 || got != "one" {
		t.Fatalf("b loads %d %q", v, got)
	}
	if _, err := b.Write(ctx, key, 1, history.KeepAll, user("two")); err != nil {
		t.Fatal(err)
	}
	if v, got := load(a); v != 2 || got != "one,two" {
		t.Fatalf("after b's append a loads %d %q", v, got)
	}
	if err := b.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(ctx, key, 0, history.KeepAll, user("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(ctx, key, 1, history.KeepAll, user("chat")); err != nil {
		t.Fatal(err)
	}
	// a cached version 2 of the old conversation; the new one is at 2 too.
	if v, got := load(a); v != 2 || got != "new,chat" {
		t.Fatalf("after delete and recreate a loads %d %q", v, got)
	}
}

// A load at a cached version reads the version, not the messages: a
// message broken in Redis behind the store's back goes unnoticed until
// the version moves, and without the cache it is noticed at once.
func TestCacheSkipsFetchingMessages(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ctx := context.Background()
	key := history.Key{Scope: "s", Chat: "c"}
	cachedStore := redisstore.New(rdb, redisstore.WithPrefix(prefix))
	uncached := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithCache(0))
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: "hi"}}}
	if _, err := cachedStore.Write(ctx, key, 0, history.KeepAll, m); err != nil {
		t.Fatal(err)
	}
	if _, err := cachedStore.Load(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := rdb.LSet(ctx, prefix+"{s:c}:msgs", 0, "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if c, err := cachedStore.Load(ctx, key); err != nil || c.Messages[0].Text() != "hi" {
		t.Fatalf("cached load = %+v, %v", c, err)
	}
	if _, err := uncached.Load(ctx, key); err == nil {
		t.Fatal("uncached load decoded a broken message")
	}
	if err := rdb.Incr(ctx, prefix+"{s:c}:ver").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := cachedStore.Load(ctx, key); err == nil {
		t.Fatal("a load after the version moved did not fetch the messages")
	}
}

func TestStoreOnRedisCluster(t *testing.T) {
	cluster := testutil.RedisCluster(t, 3)
	storetest.Run(t, func(t *testing.T, ttl time.Duration) (history.Store, storetest.Elapse) {
		prefix := testutil.KeyPrefix()
		return redisstore.New(cluster, redisstore.WithPrefix(prefix), redisstore.WithTTL(ttl)), elapser(t, cluster, prefix)
	})
	// The keys of many conversations spread over the masters, yet every
	// script ran: each conversation's keys share a slot.
	var used atomic.Int32
	_ = cluster.ForEachMaster(context.Background(), func(ctx context.Context, c *goredis.Client) error {
		if n, _ := c.DBSize(ctx).Result(); n > 0 {
			used.Add(1)
		}
		return nil
	})
	if used.Load() < 2 {
		t.Fatalf("keys landed on %d of 3 masters", used.Load())
	}
}

// The key layout is the documented one: scope and chat in one hash tag.
func TestKeyLayout(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	s := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithTTL(time.Hour))
	ctx := context.Background()
	key := history.Key{Scope: "alice", Chat: "chat:1"}
	if _, err := s.Write(ctx, key, 0, history.KeepAll); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, key, "tok", time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{prefix + "{alice:chat%3A1}:ver": true, prefix + "{alice:chat%3A1}:gen": true, prefix + "{alice:chat%3A1}:lock": true,
		prefix + "{alice}:chats": true} // the scope's index, for List
	for _, k := range keys {
		if !want[k] {
			t.Errorf("unexpected key %s", k)
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("missing keys %v (got %v)", want, keys)
	}
	for _, k := range []string{"{alice:chat%3A1}:ver", "{alice:chat%3A1}:gen", "{alice}:chats"} {
		if ttl := rdb.PTTL(ctx, prefix+k).Val(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("%s TTL = %v", k, ttl)
		}
	}
	_ = s.Delete(ctx, key)
}

// A load that fails after its script took the lock gives the lock back, so
// a broken conversation answers 503 rather than 409 forever after.
func TestAcquireLoadReleasesOnFailure(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ctx := context.Background()
	key := history.Key{Scope: "s", Chat: "c"}
	s := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithCache(0))
	if err := rdb.RPush(ctx, prefix+"{s:c}:msgs", "not json").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, prefix+"{s:c}:ver", 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireLoad(ctx, key, "run-a", time.Minute); err == nil || errors.Is(err, history.ErrBusy) {
		t.Fatalf("AcquireLoad of a broken conversation = %v", err)
	}
	if err := s.Acquire(ctx, key, "run-b", time.Minute); err != nil {
		t.Fatalf("the failed AcquireLoad kept the lock: %v", err)
	}
}

// The cache is bounded by bytes: a conversation larger than an eighth of
// the bound is never cached, and filling the cache evicts the least
// recently used. A corrupted stored message shows which loads were
// served from the cache.
func TestCacheBytesBound(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ctx := context.Background()
	s := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithCacheBytes(20000))
	msg := func(n int) cmf.Message {
		return cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: strings.Repeat("x", n)}}}
	}
	fill := func(chat string, n int) {
		t.Helper()
		key := history.Key{Scope: "s", Chat: chat}
		if _, err := s.Write(ctx, key, 0, history.KeepAll, msg(n)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := rdb.LSet(ctx, prefix+"{s:"+chat+"}:msgs", 0, "not json").Err(); err != nil {
			t.Fatal(err)
		}
	}
	cached := func(chat string) bool {
		_, err := s.Load(ctx, history.Key{Scope: "s", Chat: chat})
		return err == nil
	}
	fill("big", 3000)
	if cached("big") {
		t.Fatal("a conversation over an eighth of the bound was cached")
	}
	fill("first", 1000)
	if !cached("first") {
		t.Fatal("a small conversation was not cached")
	}
	for i := range 20 {
		fill(fmt.Sprint("filler", i), 1000)
	}
	if cached("first") {
		t.Fatal("20 KB of newer conversations did not evict the oldest from a 20 KB cache")
	}
	if !cached("filler19") {
		t.Fatal("the newest conversation was evicted")
	}
}

// The replay guard is shared: a nonce used through one guard is refused
// through another on the same Redis, until it expires.
func TestReplayGuard(t *testing.T) {
	rdb := testutil.Redis(t)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(t, rdb, prefix)
	ctx := context.Background()
	a, b := redisstore.NewReplayGuard(rdb, prefix), redisstore.NewReplayGuard(rdb, prefix)
	exp := time.Now().Add(time.Minute)
	if ok, err := a.Use(ctx, "chat", exp, "n1"); !ok || err != nil {
		t.Fatalf("first use: %v %v", ok, err)
	}
	if ok, err := b.Use(ctx, "chat", exp, "n1"); ok || err != nil {
		t.Fatalf("second use on another replica: %v %v", ok, err)
	}
	if ttl := rdb.PTTL(ctx, prefix+"approval:{c:chat}:n1").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("the key expires in %v", ttl)
	}
	if ok, _ := a.Use(ctx, "chat", time.Now().Add(-time.Second), "n2"); ok {
		t.Fatal("an expired request was accepted")
	}
	// Several at once: all or none.
	if ok, _ := b.Use(ctx, "chat", exp, "n3", "n1"); ok {
		t.Fatal("a batch holding a used nonce accepted")
	}
	if ok, _ := b.Use(ctx, "chat", exp, "n3"); !ok {
		t.Fatal("a refused batch spent its other nonce")
	}
}

// elapser makes d pass for the expiry of every key under prefix: each
// key's remaining TTL is cut by d (a key left with none is deleted now,
// so that the keys of one conversation, which Redis expires together, go
// together).
func elapser(t *testing.T, rdb goredis.UniversalClient, prefix string) storetest.Elapse {
	return func(d time.Duration) {
		ctx := context.Background()
		cut := func(c goredis.Cmdable) error {
			keys, err := c.Keys(ctx, prefix+"*").Result()
			if err != nil {
				return err
			}
			for _, k := range keys {
				left, err := c.PTTL(ctx, k).Result()
				if err != nil || left < 0 { // no TTL (or gone): nothing to cut
					continue
				}
				if left <= d {
					err = c.Del(ctx, k).Err()
				} else {
					err = c.PExpire(ctx, k, left-d).Err()
				}
				if err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		if cl, ok := rdb.(*goredis.ClusterClient); ok {
			err = cl.ForEachMaster(ctx, func(ctx context.Context, c *goredis.Client) error { return cut(c) })
		} else {
			err = cut(rdb)
		}
		if err != nil {
			t.Fatalf("making time pass in Redis: %v", err)
		}
	}
}
