package redisstore_test

import (
	"context"
	"testing"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/history/redisstore"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// BenchmarkRedisLoad200: loading a conversation of 200 messages from a
// real Redis, "cached" when the store's cache holds its version (one small
// script call), "uncached" when every load fetches and decodes all 200.
func BenchmarkRedisLoad200(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int
	}{{"cached", redisstore.DefaultCacheSize}, {"uncached", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			rdb := testutil.Redis(b)
			prefix := testutil.KeyPrefix()
			testutil.DeleteKeysOnCleanup(b, rdb, prefix)
			s := redisstore.New(rdb, redisstore.WithPrefix(prefix), redisstore.WithCache(bc.size))
			key := history.Key{Scope: "s", Chat: "c"}
			if _, err := s.Write(context.Background(), key, 0, history.KeepAll, testutil.UserMessages(200)...); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if c, err := s.Load(context.Background(), key); err != nil || len(c.Messages) != 200 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRedisAppend: one compare-and-set append script of two messages.
func BenchmarkRedisAppend(b *testing.B) {
	rdb := testutil.Redis(b)
	prefix := testutil.KeyPrefix()
	testutil.DeleteKeysOnCleanup(b, rdb, prefix)
	s := redisstore.New(rdb, redisstore.WithPrefix(prefix))
	key := history.Key{Scope: "s", Chat: "c"}
	msgs := testutil.UserMessages(2)
	var v history.Version
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if v, err = s.Write(context.Background(), key, v, history.KeepAll, msgs...); err != nil {
			b.Fatal(err)
		}
	}
}
