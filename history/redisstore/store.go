// Package redisstore is a history.Store on Redis (go-redis v9), for any
// redis.UniversalClient: a single node, Sentinel or Cluster.
//
// A conversation is four keys that share one hash tag, so every script
// touches one Cluster slot:
//
//	<prefix>{<scope>:<chat>}:msgs   a list of CMF messages as JSON
//	<prefix>{<scope>:<chat>}:ver    the version, bumped by every write
//	<prefix>{<scope>:<chat>}:gen    when it was created (tells a conversation created again from the old one)
//	<prefix>{<scope>:<chat>}:lock   the run lock's token, with an expiry
//	<prefix>{<scope>:<chat>}:meta   a hash: title (Rename's), auto (derived) and at (auto's message)
//	<prefix>{<scope>:<chat>}:tree   the messages off the active branch, and
//	<prefix>{<scope>:<chat>}:born   when those on it left it once (branch.go)
//	<prefix>{<scope>}:chats         the scope's chats by last write, for List
//
// and the chat's queue (queue.go).
//
// Loads are one script too, which can take the lock in the same step
// (AcquireLoad): it returns the version and, unless the store's in-process
// cache already holds that version of the conversation, the messages (see
// WithCache).
//
// Appends and truncations are single Lua scripts that check the version,
// write, bump the version and refresh the TTL in one step: two writers
// racing on one version get one success and one history.ErrConflict, and
// no write is lost (WATCH/MULTI, retried, lost appends under contention
// when probed).
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
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
	rdb        goredis.UniversalClient
	prefix     string
	ttl        time.Duration
	cacheSize  int
	cacheBytes int64
	cache      *cache
}

// DefaultCacheSize is how many decoded conversations a Store keeps.
const DefaultCacheSize = 256

// DefaultCacheBytes bounds the cache by the stored (JSON) size of the
// conversations it holds: 64 MiB. Decoded, they take about as much again.
const DefaultCacheBytes = 64 << 20

var (
	_ history.Store      = (*Store)(nil)
	_ history.Locker     = (*Store)(nil)
	_ history.LockLoader = (*Store)(nil)
)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the key prefix (default [DefaultPrefix]), to share a
// Redis between applications or test runs.
func WithPrefix(p string) Option { return func(s *Store) { s.prefix = p } }

// WithTTL makes conversations expire ttl after their last write. The
// default is no expiry.
func WithTTL(ttl time.Duration) Option { return func(s *Store) { s.ttl = ttl } }

// WithCache sets how many decoded conversations the store keeps in
// process (default [DefaultCacheSize]; 0 disables the cache). A load whose
// version has not moved then skips fetching and decoding the messages.
// Loads still ask Redis for the version every time, so the cache is
// correct with any number of replicas.
func WithCache(conversations int) Option { return func(s *Store) { s.cacheSize = conversations } }

// WithCacheBytes bounds the cache by the stored size of what it holds
// (default [DefaultCacheBytes]); a conversation larger than an eighth of
// the bound is never cached. 0 or less: no bound but the count.
func WithCacheBytes(n int64) Option { return func(s *Store) { s.cacheBytes = n } }

// New returns a store on rdb. Create the client with
// ContextTimeoutEnabled: true, so request deadlines bound Redis calls.
func New(rdb goredis.UniversalClient, opts ...Option) *Store {
	s := &Store{rdb: rdb, prefix: DefaultPrefix, cacheSize: DefaultCacheSize, cacheBytes: DefaultCacheBytes}
	for _, o := range opts {
		o(s)
	}
	s.cache = newCache(s.cacheSize, s.cacheBytes)
	return s
}

// storeError wraps a Redis error. One that shows the command never left
// (no connection could be made) also wraps history.ErrUnavailable: the
// write certainly did not happen. Any other failure of a write may have
// landed.
func storeError(op string, err error) error {
	var ne *net.OpError
	if errors.Is(err, goredis.ErrPoolTimeout) || errors.As(err, &ne) && ne.Op == "dial" {
		return fmt.Errorf("history/redisstore: %s: %w: %w", op, history.ErrUnavailable, err)
	}
	return fmt.Errorf("history/redisstore: %s: %w", op, err)
}

// errCorrupt: Redis answered a load with something that is not a stored
// conversation.
var errCorrupt = errors.New("history/redisstore: load: corrupt reply")

// keyEscaper keeps scopes and chat ids from running into each other or
// into the hash tag's braces.
var keyEscaper = strings.NewReplacer("%", "%25", ":", "%3A", "{", "%7B", "}", "%7D")

func (s *Store) keys(k history.Key) (msgs, ver, gen, lock string) {
	base := s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:"
	return base + "msgs", base + "ver", base + "gen", base + "lock"
}

// metaKey names the conversation's hash of titles.
func (s *Store) metaKey(k history.Key) string {
	return s.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:meta"
}

// indexKey names a scope's list of conversations: a sorted set of chat
// ids scored by their last write (Unix ms). It lives in its own slot, so
// it is written next to the conversation's script (pipelined: no extra
// round trip), not inside it; List checks that what it lists exists.
func (s *Store) indexKey(scope string) string {
	return s.prefix + "{" + keyEscaper.Replace(scope) + "}:chats"
}

// cutAndTitle is the part of the write scripts that keeps keep of the
// messages (KEYS[1]) and minds the derived title (KEYS[4]: one whose
// message is cut goes; ARGV[4] at ARGV[5] among the new ones is kept
// unless one already is).
const cutAndTitle = `
if keep < n then
  if keep == 0 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], 0, keep - 1) end
  local at = tonumber(redis.call('HGET', KEYS[4], 'at') or '-1')
  if at >= 0 and keep <= at then redis.call('HDEL', KEYS[4], 'auto', 'at') end
end
local at = tonumber(ARGV[5])
if at >= 0 and redis.call('HEXISTS', KEYS[4], 'auto') == 0 then
  redis.call('HSET', KEYS[4], 'auto', ARGV[4], 'at', keep + at)
end
`

// bumpVersion ends every write script: bump the version, refresh the TTL
// (ARGV[2], ms; 0 none) of the data keys (KEYS), reply {0, new version}.
const bumpVersion = `
v = redis.call('INCR', KEYS[2])
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {0, v}
`

// writeScript: KEYS msgs, ver, gen, meta, tree, born (their TTLs
// refreshed); ARGV expected version, ttl ms, keep (-1: all), a derived
// title and the index of its message among the new ones (-1: none), then
// each new message's id and JSON (an off-branch message with one of
// those ids goes: one id, one message). Returns {0, new version}, {-1,
// current version} when the version moved, or {-2, length} when keep is
// more than the conversation holds. Creating a conversation stamps gen
// with the server's clock in microseconds, so a conversation deleted (or
// expired) and created again is told apart from the old one even though
// its versions start again at 1. A derived title whose message is cut
// goes with it; a new one is kept unless one already is.
var writeScript = goredis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
if v ~= tonumber(ARGV[1]) then return {-1, v} end
local n = redis.call('LLEN', KEYS[1])
local keep = tonumber(ARGV[3])
if keep < 0 then keep = n end
if keep > n then return {-2, n} end
if v == 0 then
  local t = redis.call('TIME')
  redis.call('SET', KEYS[3], t[1] .. string.format('%06d', tonumber(t[2])))
end
` + cutAndTitle + `for i = 6, #ARGV, 2 do
  redis.call('HDEL', KEYS[5], ARGV[i])
  redis.call('RPUSH', KEYS[1], ARGV[i + 1])
end
` + bumpVersion)

// renameScript: KEYS ver, meta; ARGV title ("": remove). The hash expires
// with the conversation. Returns 0 when there is no conversation.
var renameScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[2], 'title') else redis.call('HSET', KEYS[2], 'title', ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`)

// loadScript: KEYS msgs, ver, gen, lock; ARGV the version and generation
// the caller has cached (-1 and "": none), a lock token ("": do not lock)
// and the lock's ttl in ms. Returns {-1, ""} when another token holds the
// lock; else {version, gen} when neither has moved since the cached copy,
// else {version, gen, messages…}.
var loadScript = goredis.NewScript(`
if ARGV[3] ~= '' then
  local cur = redis.call('GET', KEYS[4])
  if cur and cur ~= ARGV[3] then return {-1, ''} end
  redis.call('SET', KEYS[4], ARGV[3], 'PX', ARGV[4])
end
local v = tonumber(redis.call('GET', KEYS[2]) or '0')
local g = redis.call('GET', KEYS[3]) or ''
if v == tonumber(ARGV[1]) and g ~= '' and g == ARGV[2] then return {v, g} end
local out = redis.call('LRANGE', KEYS[1], 0, -1)
table.insert(out, 1, g)
table.insert(out, 1, v)
return out
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

// Load returns the conversation: one script that reads the version and,
// unless the cache holds that version, the messages.
func (s *Store) Load(ctx context.Context, key history.Key) (history.Conversation, error) {
	return s.load(ctx, key, "", 0)
}

// AcquireLoad takes the run lock and loads the conversation in one script.
func (s *Store) AcquireLoad(ctx context.Context, key history.Key, token string, ttl time.Duration) (history.Conversation, error) {
	if token == "" {
		return history.Conversation{}, errors.New("history/redisstore: empty lock token")
	}
	conv, err := s.load(ctx, key, token, ttl)
	if errors.Is(err, errCorrupt) {
		// The script took the lock and Redis answered: give it back now,
		// so a broken conversation answers 503 and not 409 after this.
		_ = s.Release(ctx, key, token)
	}
	return conv, err
}

func (s *Store) load(ctx context.Context, key history.Key, token string, ttl time.Duration) (history.Conversation, error) {
	msgsKey, verKey, genKey, lockKey := s.keys(key)
	known, hit := s.cache.get(key)
	knownVersion := int64(-1)
	if hit {
		knownVersion = int64(known.version)
	}
	res, err := loadScript.Run(ctx, s.rdb, []string{msgsKey, verKey, genKey, lockKey},
		knownVersion, known.gen, token, max(ttl.Milliseconds(), 1)).Slice()
	if err != nil {
		return history.Conversation{}, storeError("load", err)
	}
	if len(res) < 2 {
		return history.Conversation{}, fmt.Errorf("%w: short reply", errCorrupt)
	}
	v, ok1 := res[0].(int64)
	gen, ok2 := res[1].(string)
	if !ok1 || !ok2 {
		return history.Conversation{}, fmt.Errorf("%w: unexpected reply %T, %T", errCorrupt, res[0], res[1])
	}
	if v < 0 {
		return history.Conversation{}, history.ErrBusy
	}
	conv := history.Conversation{Version: history.Version(v)}
	if hit && len(res) == 2 && v == knownVersion && gen == known.gen {
		conv.Messages, conv.Bytes = known.msgs[:len(known.msgs):len(known.msgs)], known.bytes
		return conv, nil
	}
	conv.Messages = make([]cmf.Message, len(res)-2)
	sizes := make([]int64, len(conv.Messages))
	for i, r := range res[2:] {
		raw, ok := r.(string)
		if !ok {
			return history.Conversation{}, fmt.Errorf("%w: message %d: unexpected reply %T", errCorrupt, i, r)
		}
		sizes[i] = int64(len(raw))
		conv.Bytes += sizes[i]
		// Straight to UnmarshalJSON: json.Unmarshal would first scan the
		// bytes once more just to check they are JSON.
		if err := conv.Messages[i].UnmarshalJSON([]byte(raw)); err != nil {
			return history.Conversation{}, fmt.Errorf("%w: message %d: %w", errCorrupt, i, err)
		}
	}
	if v > 0 && gen != "" {
		s.cache.put(key, cached{version: conv.Version, gen: gen, bytes: conv.Bytes, sizes: sizes, msgs: conv.Messages})
	} else {
		s.cache.drop(key)
	}
	return conv, nil
}

// Write keeps the first keep messages and appends msgs, if the version
// is expect: one script.
func (s *Store) Write(ctx context.Context, key history.Key, expect history.Version, keep int, msgs ...cmf.Message) (history.Version, error) {
	msgsKey, verKey, genKey, _ := s.keys(key)
	title, at := history.Title(msgs)
	args := make([]any, 0, 2*len(msgs)+5)
	args = append(args, int64(expect), s.ttl.Milliseconds(), keep, title, at)
	sizes := make([]int64, len(msgs))
	for i := range msgs {
		if err := msgs[i].Validate(); err != nil {
			return 0, err // never store what Load would refuse
		}
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return 0, err
		}
		sizes[i] = int64(len(b))
		args = append(args, msgs[i].ID(), b)
	}
	v, err := s.cas(ctx, "write", writeScript, key, []string{msgsKey, verKey, genKey, s.metaKey(key), s.treeKey(key), s.bornKey(key)}, args)
	if err != nil {
		s.cache.drop(key)
		return 0, err
	}
	s.cache.update(key, expect, v, func(old cached) cached {
		if keep != history.KeepAll {
			old = cutCached(old, keep)
		}
		// In place past the end: loads hold slices capped at their
		// length, never past lent, so nobody sees these slots but this
		// entry.
		old.msgs = append(old.msgs, cloneAll(msgs)...)
		old.sizes = append(old.sizes, sizes...)
		for _, n := range sizes {
			old.bytes += n
		}
		return old
	})
	return v, nil
}

// cutCached drops a cached conversation's messages past keep.
func cutCached(old cached, keep int) cached {
	n := min(max(keep, 0), len(old.msgs))
	if n == len(old.msgs) {
		return old
	}
	for _, size := range old.sizes[n:] {
		old.bytes -= size
	}
	if old.lent <= n {
		// No load holds the messages past n: appends may overwrite them
		// in place.
		old.msgs, old.sizes = old.msgs[:n], old.sizes[:n]
		return old
	}
	// Loads may still read them: the kept ones move to new arrays (with
	// room to grow), which later appends fill.
	old.msgs = append(make([]cmf.Message, 0, n+n/4+8), old.msgs[:n]...)
	old.sizes = append(make([]int64, 0, cap(old.msgs)), old.sizes[:n]...)
	old.lent = 0
	return old
}

// cas runs a write script, and marks the conversation written in its
// scope's index in the same round trip. (A write the script refuses still
// bumps the index: List only orders by it.)
func (s *Store) cas(ctx context.Context, op string, script *goredis.Script, key history.Key, keys []string, args []any) (history.Version, error) {
	index := s.indexKey(key.Scope)
	var run *goredis.Cmd
	// The script's result is read below; the index's ZADD is best
	// effort (List checks what it lists exists).
	_, _ = s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		run = script.EvalSha(ctx, p, keys, args...)
		p.ZAdd(ctx, index, goredis.Z{Score: float64(time.Now().UnixMilli()), Member: key.Chat})
		if s.ttl > 0 {
			p.PExpire(ctx, index, s.ttl)
		}
		return nil
	})
	if err := run.Err(); err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		run = script.Run(ctx, s.rdb, keys, args...) // loads the script
	}
	res, err := run.Int64Slice()
	if err != nil {
		return 0, storeError(op, err)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("history/redisstore: unexpected script reply %v", res)
	}
	switch res[0] {
	case 0:
	case -2:
		return 0, fmt.Errorf("history/redisstore: %s keeps more messages than the conversation's %d", op, res[1])
	default:
		return 0, history.ErrConflict
	}
	return history.Version(res[1]), nil
}

// Delete removes the conversation and its lock, in one round trip.
func (s *Store) Delete(ctx context.Context, key history.Key) error {
	msgsKey, verKey, genKey, lockKey := s.keys(key)
	s.cache.drop(key)
	var gone *goredis.IntCmd
	if _, err := s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		gone = p.Del(ctx, verKey)
		order, items := s.queueKeys(key)
		p.Del(ctx, msgsKey, genKey, s.metaKey(key), s.treeKey(key), s.bornKey(key), lockKey, order, items, s.callsKey(key))
		p.ZRem(ctx, s.indexKey(key.Scope), key.Chat)
		return nil
	}); err != nil {
		return storeError("delete", err)
	}
	if gone.Val() == 0 {
		return history.ErrNotFound
	}
	return nil
}

// Rename sets the conversation's title.
func (s *Store) Rename(ctx context.Context, key history.Key, title string) error {
	_, verKey, _, _ := s.keys(key)
	found, err := renameScript.Run(ctx, s.rdb, []string{verKey, s.metaKey(key)}, history.CleanTitle(title)).Int()
	if err != nil {
		return storeError("rename", err)
	}
	if found == 0 {
		return history.ErrNotFound
	}
	return nil
}

// List returns the scope's conversations, the most recently written
// first. Entries whose conversation has expired are dropped from the
// index as they are found.
func (s *Store) List(ctx context.Context, scope string, limit int) ([]history.ChatInfo, error) {
	index := s.indexKey(scope)
	var out []history.ChatInfo
	for start := int64(0); ; {
		stop := int64(-1)
		if limit > 0 {
			stop = start + int64(limit-len(out)) - 1
		}
		zs, err := s.rdb.ZRevRangeWithScores(ctx, index, start, stop).Result()
		if err != nil {
			return nil, storeError("list", err)
		}
		if len(zs) == 0 {
			return out, nil
		}
		start += int64(len(zs))
		type info struct {
			ver, gen *goredis.StringCmd
			n        *goredis.IntCmd
			meta     *goredis.SliceCmd
		}
		infos := make([]info, len(zs))
		cmds, _ := s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, z := range zs {
				k := history.Key{Scope: scope, Chat: z.Member.(string)}
				msgsKey, verKey, genKey, _ := s.keys(k)
				infos[i] = info{p.Get(ctx, verKey), p.Get(ctx, genKey), p.LLen(ctx, msgsKey), p.HMGet(ctx, s.metaKey(k), "title", "auto")}
			}
			return nil
		})
		for _, c := range cmds {
			if err := c.Err(); err != nil && !errors.Is(err, goredis.Nil) {
				return nil, storeError("list", err)
			}
		}
		var gone []any
		for i, z := range zs {
			in := infos[i]
			if in.ver.Err() != nil { // goredis.Nil: it expired
				gone = append(gone, z.Member)
				continue
			}
			c := history.ChatInfo{Chat: z.Member.(string), Updated: time.UnixMilli(int64(z.Score)), Messages: int(in.n.Val())}
			if us, err := strconv.ParseInt(in.gen.Val(), 10, 64); err == nil {
				// Redis's clock stamps gen and this process's the index:
				// a created time past the last write is skew.
				c.Created = time.UnixMicro(us).Truncate(time.Millisecond)
				if c.Created.After(c.Updated) {
					c.Created = c.Updated
				}
			}
			for _, t := range in.meta.Val() {
				if t, ok := t.(string); ok && t != "" {
					c.Title = t
					break
				}
			}
			out = append(out, c)
		}
		if len(gone) > 0 {
			start -= int64(len(gone))
			if err := s.rdb.ZRem(ctx, index, gone...).Err(); err != nil {
				return nil, storeError("list", err)
			}
		}
		if limit > 0 && len(out) >= limit || stop < 0 {
			return out, nil
		}
	}
}

// Acquire takes or extends the run lock.
func (s *Store) Acquire(ctx context.Context, key history.Key, token string, ttl time.Duration) error {
	_, _, _, lockKey := s.keys(key)
	ok, err := acquireScript.Run(ctx, s.rdb, []string{lockKey}, token, max(ttl.Milliseconds(), 1)).Int64()
	if err != nil {
		return storeError("lock", err)
	}
	if ok == 0 {
		return history.ErrBusy
	}
	return nil
}

// Release gives the lock up if token holds it.
func (s *Store) Release(ctx context.Context, key history.Key, token string) error {
	_, _, _, lockKey := s.keys(key)
	if err := releaseScript.Run(ctx, s.rdb, []string{lockKey}, token).Err(); err != nil && !errors.Is(err, goredis.Nil) {
		return storeError("unlock", err)
	}
	return nil
}
