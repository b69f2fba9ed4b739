package redis_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redis"
	"github.com/agentui/agentui/history/storetest"
	"github.com/agentui/agentui/internal/testutil"
	goredis "github.com/redis/go-redis/v9"
)

func TestStoreOnRedis(t *testing.T) {
	rdb := testutil.Redis(t)
	storetest.Run(t, func(t *testing.T, ttl time.Duration) history.Store {
		prefix := testutil.KeyPrefix()
		testutil.DeleteKeysOnCleanup(t, rdb, prefix)
		return redis.New(rdb, redis.WithPrefix(prefix), redis.WithTTL(ttl))
	})
}

func TestStoreOnRedisCluster(t *testing.T) {
	cluster := testutil.RedisCluster(t, 3)
	storetest.Run(t, func(t *testing.T, ttl time.Duration) history.Store {
		return redis.New(cluster, redis.WithPrefix(testutil.KeyPrefix()), redis.WithTTL(ttl))
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
	s := redis.New(rdb, redis.WithPrefix(prefix), redis.WithTTL(time.Hour))
	ctx := context.Background()
	key := history.Key{Scope: "alice", Chat: "chat:1"}
	if _, err := s.Append(ctx, key, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, key, "tok", time.Minute); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{prefix + "{alice:chat%3A1}:ver": true, prefix + "{alice:chat%3A1}:lock": true}
	for _, k := range keys {
		if !want[k] {
			t.Errorf("unexpected key %s", k)
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("missing keys %v (got %v)", want, keys)
	}
	if ttl := rdb.PTTL(ctx, prefix+"{alice:chat%3A1}:ver").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL = %v", ttl)
	}
	_ = s.Delete(ctx, key)
}
