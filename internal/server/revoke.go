package server

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// revocations remember, per scope, that its bearer tokens expiring up to
// a cutoff are revoked: one entry per scope that revoked, kept until the
// cutoff, when every token it covers has expired anyway.
type revocations interface {
	revoke(ctx context.Context, scope string, cutoff time.Time) error
	isRevoked(ctx context.Context, scope string, exp time.Time) (bool, error)
}

// memoryRevocations keep revocations in this process.
type memoryRevocations struct {
	mu      sync.Mutex
	cutoffs map[string]time.Time
	now     func() time.Time
}

func newMemoryRevocations(now func() time.Time) *memoryRevocations {
	return &memoryRevocations{cutoffs: map[string]time.Time{}, now: now}
}

func (m *memoryRevocations) revoke(_ context.Context, scope string, cutoff time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cutoffs) >= 1024 { // drop the ones past their cutoff now and then
		now := m.now()
		for s, c := range m.cutoffs {
			if !now.Before(c) {
				delete(m.cutoffs, s)
			}
		}
	}
	if cutoff.After(m.cutoffs[scope]) {
		m.cutoffs[scope] = cutoff
	}
	return nil
}

func (m *memoryRevocations) isRevoked(_ context.Context, scope string, exp time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cutoffs[scope]
	return ok && !exp.After(c), nil
}

// redisRevocations keep revocations in Redis, shared by the replicas:
// <prefix>revoked:{<scope>} holds the cutoff in Unix milliseconds and
// expires at it.
type redisRevocations struct {
	rdb    goredis.UniversalClient
	prefix string
}

// raiseScript sets the cutoff unless a later one is there. KEYS: the
// scope's key; ARGV: the cutoff in Unix ms.
var raiseScript = goredis.NewScript(`
local old = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > old then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1])
end
return 0
`)

func (r *redisRevocations) key(scope string) string { return r.prefix + "revoked:{" + scope + "}" }

func (r *redisRevocations) revoke(ctx context.Context, scope string, cutoff time.Time) error {
	return raiseScript.Run(ctx, r.rdb, []string{r.key(scope)}, cutoff.UnixMilli()).Err()
}

func (r *redisRevocations) isRevoked(ctx context.Context, scope string, exp time.Time) (bool, error) {
	v, err := r.rdb.Get(ctx, r.key(scope)).Result()
	if errors.Is(err, goredis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false, err
	}
	return exp.UnixMilli() <= ms, nil
}
