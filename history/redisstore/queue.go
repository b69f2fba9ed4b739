package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentui/agentui/history"
)

// A chat's queue (history.Queue) is two keys beside the conversation's,
// in its hash slot:
//
//	<prefix>{<scope>:<chat>}:queue   a list of the queued messages' ids, the next to run first
//	<prefix>{<scope>:<chat>}:queued  a hash: each queued message's id → its history.Queued as JSON

var _ history.Queue = (*Store)(nil)

func (s *Store) queueKeys(k history.Key) (order, items string) {
	base := s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:"
	return base + "queue", base + "queued"
}

// enqueueScript: KEYS order, items; ARGV id, JSON, max, ttl (ms, 0: none).
// It returns the message's place, or 0 when the queue is full.
var enqueueScript = goredis.NewScript(`
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  local at = redis.call('LPOS', KEYS[1], ARGV[1])
  if at then return at + 1 end
end
local n = redis.call('LLEN', KEYS[1])
if n >= tonumber(ARGV[3]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if tonumber(ARGV[4]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
return n + 1
`)

// Enqueue implements history.Queue, in one round trip.
func (s *Store) Enqueue(ctx context.Context, key history.Key, q history.Queued, max int) (int, error) {
	b, err := json.Marshal(q)
	if err != nil {
		return 0, fmt.Errorf("history/redisstore: enqueue: %w", err)
	}
	order, items := s.queueKeys(key)
	at, err := enqueueScript.Run(ctx, s.rdb, []string{order, items}, q.ID(), b, max, s.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return 0, storeError("enqueue", err)
	case at == 0:
		return 0, history.ErrQueueFull
	}
	return at, nil
}

// queuedScript: KEYS order, items. The queued messages' JSON, in order.
var queuedScript = goredis.NewScript(`
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(ids))
`)

// Queued implements history.Queue, in one round trip.
func (s *Store) Queued(ctx context.Context, key history.Key) ([]history.Queued, error) {
	order, items := s.queueKeys(key)
	vals, err := queuedScript.Run(ctx, s.rdb, []string{order, items}).Slice()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, storeError("queued", err)
	}
	out := make([]history.Queued, 0, len(vals))
	for _, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // an id without its message: removed meanwhile
		}
		var q history.Queued
		if err := json.Unmarshal([]byte(str), &q); err != nil {
			return nil, fmt.Errorf("history/redisstore: queued: %w", errCorrupt)
		}
		out = append(out, q)
	}
	return out, nil
}

// dequeueScript: KEYS order, items; ARGV id. 1 if it was queued.
var dequeueScript = goredis.NewScript(`
redis.call('LREM', KEYS[1], 0, ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
`)

// Dequeue implements history.Queue.
func (s *Store) Dequeue(ctx context.Context, key history.Key, id string) (bool, error) {
	order, items := s.queueKeys(key)
	n, err := dequeueScript.Run(ctx, s.rdb, []string{order, items}, id).Int()
	if err != nil {
		return false, storeError("dequeue", err)
	}
	return n == 1, nil
}
