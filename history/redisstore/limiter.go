package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/agentui/agentui/limit"
	goredis "github.com/redis/go-redis/v9"
)

// Limiter is a limit.Limiter that counts in Redis, so every replica
// shares one count per key: <prefix>limit:{<key>}:runs:<window> and
// …:tokens:<window>, each expiring when its window ends (the braces keep a
// key's two counters in one Cluster slot). Windows are the limits' fixed
// windows, so replicas agree on them as far as their clocks agree.
type Limiter struct {
	rdb    goredis.UniversalClient
	prefix string
	limits limit.Limits
}

// NewLimiter returns a limiter on rdb whose keys start with prefix (""
// for DefaultPrefix). It fails when the limits cannot work.
func NewLimiter(rdb goredis.UniversalClient, prefix string, limits limit.Limits) (*Limiter, error) {
	if err := limits.Check(); err != nil {
		return nil, err
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Limiter{rdb: rdb, prefix: prefix, limits: limits}, nil
}

// keys are key's counters for the windows now, and how long each has left.
func (l *Limiter) keys(key string) (runs, tokens string, runsLeft, tokensLeft time.Duration) {
	rw, tw, runsLeft, tokensLeft := l.limits.Windows(l.limits.Now())
	base := l.prefix + "limit:{" + key + "}:"
	return base + "runs:" + strconv.FormatInt(rw, 10), base + "tokens:" + strconv.FormatInt(tw, 10), runsLeft, tokensLeft
}

// allowScript counts a run unless the key is over a limit. KEYS: the runs
// and the tokens counter; ARGV: the runs and tokens limits (0: none), the
// runs counter's expiry in ms. It returns {runs, tokens} as they were,
// and counts the run only when both are under their limits.
var allowScript = goredis.NewScript(`
local runs = tonumber(redis.call('GET', KEYS[1]) or '0')
local tokens = tonumber(redis.call('GET', KEYS[2]) or '0')
local maxRuns, maxTokens = tonumber(ARGV[1]), tonumber(ARGV[2])
if (maxRuns == 0 or runs < maxRuns) and (maxTokens == 0 or tokens < maxTokens) and maxRuns > 0 then
  redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return {runs, tokens}
`)

// Allow counts a run for key unless it is over a limit.
func (l *Limiter) Allow(ctx context.Context, key string) (time.Duration, error) {
	runsKey, tokensKey, runsLeft, tokensLeft := l.keys(key)
	counts, err := allowScript.Run(ctx, l.rdb, []string{runsKey, tokensKey}, l.limits.Runs.N, l.limits.Tokens.N, expiry(runsLeft)).Int64Slice()
	if err != nil {
		return 0, storeError("limiter", err)
	}
	return l.limits.Wait(counts[0], counts[1], runsLeft, tokensLeft), nil
}

// Spend counts tokens for key.
func (l *Limiter) Spend(ctx context.Context, key string, tokens int64) (bool, error) {
	if l.limits.Tokens.N == 0 {
		return true, nil
	}
	_, tokensKey, _, left := l.keys(key)
	var used *goredis.IntCmd
	_, err := l.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		used = p.IncrBy(ctx, tokensKey, tokens)
		p.PExpire(ctx, tokensKey, time.Duration(expiry(left))*time.Millisecond)
		return nil
	})
	if err != nil {
		return true, storeError("limiter", err)
	}
	return used.Val() < l.limits.Tokens.N, nil
}

// expiry keeps a window's counter a second past its end (in ms), so a
// replica whose clock is a little behind still finds it.
func expiry(left time.Duration) int64 { return (left + time.Second).Milliseconds() }
