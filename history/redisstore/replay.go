package redisstore

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ReplayGuard remembers answered approval requests in Redis, so that every
// replica of a server that keeps no history refuses a second answer to
// one approval request (see uiadapter.WithReplayGuard). Each is one key,
// <prefix>approval:<nonce>, that expires with the request.
type ReplayGuard struct {
	rdb    goredis.UniversalClient
	prefix string
}

// NewReplayGuard returns a guard on rdb whose keys start with prefix
// ("" for DefaultPrefix).
func NewReplayGuard(rdb goredis.UniversalClient, prefix string) *ReplayGuard {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &ReplayGuard{rdb: rdb, prefix: prefix}
}

// Use records nonce as answered until expires: SET NX with that expiry.
func (g *ReplayGuard) Use(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	ttl := time.Until(expires)
	if ttl <= 0 {
		return false, nil
	}
	ok, err := g.rdb.SetNX(ctx, g.prefix+"approval:"+nonce, 1, ttl).Result()
	if err != nil {
		return false, storeError("replay guard", err)
	}
	return ok, nil
}
