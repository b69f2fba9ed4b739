package redisstore

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ReplayGuard remembers answered approval requests in Redis, so that every
// replica of a server that keeps no history refuses a second answer to
// one approval request (see uiadapter.WithReplayGuard). Each is one key,
// <prefix>approval:{c:<chat>}:<nonce>, that expires with the request; the
// chat's hash tag keeps one request's answers in one Cluster slot, so
// they are recorded together or not at all.
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

// useScript records every key unless one exists. KEYS: the answers'
// keys; ARGV: their expiry in ms. It returns 1 when it recorded them.
var useScript = goredis.NewScript(`
for _, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then return 0 end
end
for _, k in ipairs(KEYS) do
  redis.call('SET', k, 1, 'PX', ARGV[1])
end
return 1
`)

// Use records nonces as answered until expires, all or none.
func (g *ReplayGuard) Use(ctx context.Context, chat string, expires time.Time, nonces ...string) (bool, error) {
	ttl := time.Until(expires).Milliseconds()
	if ttl <= 0 || len(nonces) == 0 {
		return len(nonces) == 0, nil
	}
	keys := make([]string, len(nonces))
	for i, n := range nonces {
		keys[i] = g.prefix + "approval:{c:" + chat + "}:" + n
	}
	ok, err := useScript.Run(ctx, g.rdb, keys, ttl).Int()
	if err != nil {
		return false, storeError("replay guard", err)
	}
	return ok == 1, nil
}
