package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentui/agentui/history"
)

// A chat's ledger (history.Ledger) is a hash beside the conversation's
// keys, in its hash slot:
//
//	<prefix>{<scope>:<chat>}:calls   each call id → its history.CallRecord as JSON

var _ history.Ledger = (*Store)(nil)

func (s *Store) callsKey(k history.Key) string {
	return s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:calls"
}

// beginCallScript: KEYS calls; ARGV id, JSON, ttl (ms, 0: none). The
// record the ledger had, or nil when it recorded this one.
var beginCallScript = goredis.NewScript(`
local had = redis.call('HGET', KEYS[1], ARGV[1])
if had then return had end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return false
`)

// BeginCall implements history.Ledger, in one round trip.
func (s *Store) BeginCall(ctx context.Context, key history.Key, id string, rec history.CallRecord) (history.CallRecord, bool, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return history.CallRecord{}, false, fmt.Errorf("history/redisstore: begin call: %w", err)
	}
	had, err := beginCallScript.Run(ctx, s.rdb, []string{s.callsKey(key)}, id, b, s.ttl.Milliseconds()).Text()
	switch {
	case errors.Is(err, goredis.Nil):
		return history.CallRecord{}, false, nil
	case err != nil:
		return history.CallRecord{}, false, storeError("begin call", err)
	}
	var out history.CallRecord
	if err := json.Unmarshal([]byte(had), &out); err != nil {
		return history.CallRecord{}, false, fmt.Errorf("history/redisstore: begin call: %w", errCorrupt)
	}
	return out, true, nil
}

// FinishCall implements history.Ledger, in one round trip.
func (s *Store) FinishCall(ctx context.Context, key history.Key, id string, rec history.CallRecord) error {
	rec.Finished = true
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("history/redisstore: finish call: %w", err)
	}
	k := s.callsKey(key)
	if _, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, k, id, b)
		if s.ttl > 0 {
			p.PExpire(ctx, k, s.ttl)
		}
		return nil
	}); err != nil {
		return storeError("finish call", err)
	}
	return nil
}

// Calls implements history.Ledger.
func (s *Store) Calls(ctx context.Context, key history.Key) (map[string]history.CallRecord, error) {
	all, err := s.rdb.HGetAll(ctx, s.callsKey(key)).Result()
	if err != nil {
		return nil, storeError("calls", err)
	}
	out := make(map[string]history.CallRecord, len(all))
	for id, v := range all {
		var rec history.CallRecord
		if err := json.Unmarshal([]byte(v), &rec); err != nil {
			return nil, fmt.Errorf("history/redisstore: calls: %w", errCorrupt)
		}
		out[id] = rec
	}
	return out, nil
}
