// Package redis is a history.Store on Redis (go-redis v9), for any
// redis.UniversalClient: a single node, Sentinel or Cluster.
//
// A conversation is three keys that share one hash tag, so every script
// touches one Cluster slot:
//
//	<prefix>{<scope>:<chat>}:msgs   a list of CMF messages as JSON
//	<prefix>{<scope>:<chat>}:ver    the version, bumped by every write
//	<prefix>{<scope>:<chat>}:lock   the run lock's token, with an expiry
//
// Appends and truncations are single Lua scripts that check the version,
// write, bump the version and refresh the TTL in one step: two writers
// racing on one version get one success and one history.ErrConflict, and
// no write is lost (WATCH/MULTI, retried, lost appends under contention
// when probed).
package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultPrefix starts every key.
const DefaultPrefix = "agentui:"

// Store is a history.Store on Redis.
type Store struct {
	rdb    goredis.UniversalClient
	prefix string
	ttl    time.Duration
}

var _ history.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the key prefix (default [DefaultPrefix]), to share a
// Redis between applications or test runs.
func WithPrefix(p string) Option { return func(s *Store) { s.prefix = p } }

// WithTTL makes conversations expire ttl after their last write. The
// default is no expiry.
func WithTTL(ttl time.Duration) Option { return func(s *Store) { s.ttl = ttl } }

// New returns a store on rdb. Create the client with
// ContextTimeoutEnabled: true, so request deadlines bound Redis calls.
func New(rdb goredis.UniversalClient, opts ...Option) *Store {
	s := &Store{rdb: rdb, prefix: DefaultPrefix}
	for _, o := range opts {
		o(s)
	}
	return s
}

// keyEscaper keeps scopes and chat ids from running into each other or
// into the hash tag's braces.
var keyEscaper = strings.NewReplacer("%", "%25", ":", "%3A", "{", "%7B", "}", "%7D")

func (s *Store) keys(k history.Key) (msgs, ver, lock string) {
	base := s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:"
	return base + "msgs", base + "ver", base + "lock"
}

// appendScript: KEYS msgs, ver; ARGV expected version, ttl ms, messages….
// Returns {0, new version} or {-1, current version}.
var appendScript = goredis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v ~= tonumber(ARGV[1]) then return {-1, v} end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
v = redis.call('INCR', KEYS[2])
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {0, v}
`)

// truncateScript: KEYS msgs, ver; ARGV expected version, ttl ms, keep.
var truncateScript = goredis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v == 0 or v ~= tonumber(ARGV[1]) then return {-1, v} end
local keep = tonumber(ARGV[3])
if keep <= 0 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], 0, keep - 1) end
v = redis.call('INCR', KEYS[2])
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {0, v}
`)

// acquireScript: KEYS lock; ARGV token, ttl ms. 1 = held, 0 = busy.
var acquireScript = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// releaseScript: KEYS lock; ARGV token.
var releaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`)

// Load returns the conversation: one MULTI with LRANGE and GET.
func (s *Store) Load(ctx context.Context, key history.Key) (history.Conversation, error) {
	msgsKey, verKey, _ := s.keys(key)
	var lr *goredis.StringSliceCmd
	var gv *goredis.StringCmd
	_, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		lr = p.LRange(ctx, msgsKey, 0, -1)
		gv = p.Get(ctx, verKey)
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return history.Conversation{}, fmt.Errorf("history/redis: load: %w", err)
	}
	var conv history.Conversation
	if v, err := gv.Int64(); err == nil {
		conv.Version = history.Version(v)
	}
	raw := lr.Val()
	conv.Messages = make([]cmf.Message, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &conv.Messages[i]); err != nil {
			return history.Conversation{}, fmt.Errorf("history/redis: message %d: %w", i, err)
		}
	}
	return conv, nil
}

// Append adds messages if the version is expect.
func (s *Store) Append(ctx context.Context, key history.Key, expect history.Version, msgs ...cmf.Message) (history.Version, error) {
	msgsKey, verKey, _ := s.keys(key)
	args := make([]any, 0, len(msgs)+2)
	args = append(args, int64(expect), s.ttl.Milliseconds())
	for i := range msgs {
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return 0, err
		}
		args = append(args, b)
	}
	return s.cas(ctx, appendScript, []string{msgsKey, verKey}, args)
}

// Truncate keeps the first keep messages if the version is expect.
func (s *Store) Truncate(ctx context.Context, key history.Key, expect history.Version, keep int) (history.Version, error) {
	msgsKey, verKey, _ := s.keys(key)
	return s.cas(ctx, truncateScript, []string{msgsKey, verKey}, []any{int64(expect), s.ttl.Milliseconds(), keep})
}

func (s *Store) cas(ctx context.Context, script *goredis.Script, keys []string, args []any) (history.Version, error) {
	res, err := script.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("history/redis: %w", err)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("history/redis: unexpected script reply %v", res)
	}
	if res[0] != 0 {
		return 0, history.ErrConflict
	}
	return history.Version(res[1]), nil
}

// Delete removes the conversation and its lock.
func (s *Store) Delete(ctx context.Context, key history.Key) error {
	msgsKey, verKey, lockKey := s.keys(key)
	if err := s.rdb.Del(ctx, msgsKey, verKey, lockKey).Err(); err != nil {
		return fmt.Errorf("history/redis: delete: %w", err)
	}
	return nil
}

// Acquire takes or extends the run lock.
func (s *Store) Acquire(ctx context.Context, key history.Key, token string, ttl time.Duration) error {
	_, _, lockKey := s.keys(key)
	ok, err := acquireScript.Run(ctx, s.rdb, []string{lockKey}, token, max(ttl.Milliseconds(), 1)).Int64()
	if err != nil {
		return fmt.Errorf("history/redis: lock: %w", err)
	}
	if ok == 0 {
		return history.ErrBusy
	}
	return nil
}

// Release gives the lock up if token holds it.
func (s *Store) Release(ctx context.Context, key history.Key, token string) error {
	_, _, lockKey := s.keys(key)
	if err := releaseScript.Run(ctx, s.rdb, []string{lockKey}, token).Err(); err != nil && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("history/redis: unlock: %w", err)
	}
	return nil
}
