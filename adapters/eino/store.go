package einoagent

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	goredis "github.com/redis/go-redis/v9"
)

// MemoryStore keeps checkpoints in this process: runs resume on it only.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

var _ adk.CheckPointStore = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string][]byte{}} }

// Get returns a checkpoint.
func (s *MemoryStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

// Set keeps a checkpoint.
func (s *MemoryStore) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = b
	return nil
}

// RedisStore keeps checkpoints in Redis, for replicas that resume each
// other's runs: under prefix, each expiring ttl after it was written (give
// it the history's ttl; 0 keeps them).
type RedisStore struct {
	rdb    goredis.UniversalClient
	prefix string
	ttl    time.Duration
}

var _ adk.CheckPointStore = (*RedisStore)(nil)

// NewRedisStore returns a store in rdb under prefix ("agentui:eino:"
// when empty).
func NewRedisStore(rdb goredis.UniversalClient, prefix string, ttl time.Duration) *RedisStore {
	if prefix == "" {
		prefix = "agentui:eino:"
	}
	return &RedisStore{rdb: rdb, prefix: prefix, ttl: ttl}
}

// Get returns a checkpoint.
func (s *RedisStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	b, err := s.rdb.Get(ctx, s.prefix+id).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Set keeps a checkpoint.
func (s *RedisStore) Set(ctx context.Context, id string, b []byte) error {
	return s.rdb.Set(ctx, s.prefix+id, b, s.ttl).Err()
}
