// Package limit bounds what one key (a user's scope, a client address)
// may spend per window: runs started and tokens used. uiadapter asks a
// [Limiter] before each run and reports each model call's tokens to it;
// [MemoryLimiter] counts in one process, history/redisstore's Limiter in
// Redis for every replica. It is a package of its own so that stores
// implement it without depending on the handler.
package limit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limiter bounds what one key (a scope: a user) may spend per window: how
// many runs it may start and how many tokens its runs may use. A handler
// with a limiter (uiadapter.WithLimiter) asks Allow before a run starts, and
// refuses with 429 and Retry-After when the key is over either limit; it
// reports each model call's tokens to Spend as they are counted, and
// stops a run whose key has no tokens left (the run ends as a stopped
// one: the protocol's terminal frames, the reply so far stored).
//
// [MemoryLimiter] counts in one process; history/redisstore's Limiter
// counts in Redis, shared by every replica.
type Limiter interface {
	// Allow counts a run for key. It returns 0 to go on, or how long
	// until the key may run again.
	Allow(ctx context.Context, key string) (retryAfter time.Duration, err error)
	// Spend counts tokens a run of key used. It reports whether the key
	// has tokens left in this window.
	Spend(ctx context.Context, key string, tokens int64) (left bool, err error)
}

// Limits are a limiter's bounds per key: runs per window and tokens per
// window, each in fixed windows of its own length aligned to the Unix
// epoch (so that every replica counts in the same windows). A zero Rate
// is no bound.
type Limits struct {
	Runs   Rate // runs a key may start
	Tokens Rate // tokens (input and output) a key's runs may use
	// Clock tells the time (nil: time.Now); tests pass a fake one.
	Clock func() time.Time
}

// Rate is N per window of length Per.
type Rate struct {
	N   int64
	Per time.Duration
}

func (r Rate) set() bool { return r.N > 0 }

// window returns the index of the window holding t and how long until it
// ends.
func (r Rate) window(t time.Time) (index int64, left time.Duration) {
	n, w := t.UnixNano(), int64(r.Per)
	return n / w, time.Duration(w - n%w)
}

// ParseRate reads "N/unit": a count, a slash, and s, m, h, d or a Go
// duration ("20/m", "100000/h", "5/10s").
func ParseRate(s string) (Rate, error) {
	n, per, ok := strings.Cut(s, "/")
	count, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || count <= 0 {
		return Rate{}, fmt.Errorf("rate %q: want N/unit with N > 0, e.g. 20/m", s)
	}
	d, ok := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[per]
	if !ok {
		if d, err = time.ParseDuration(per); err != nil || d <= 0 {
			return Rate{}, fmt.Errorf("rate %q: the unit is s, m, h, d or a duration such as 10m", s)
		}
	}
	return Rate{N: count, Per: d}, nil
}

// Check reports bounds that cannot work.
func (l Limits) Check() error {
	for _, r := range []Rate{l.Runs, l.Tokens} {
		if r.N < 0 || (r.N > 0 && r.Per <= 0) {
			return fmt.Errorf("a rate needs N >= 0 and a window longer than 0, got %d per %v", r.N, r.Per)
		}
	}
	if !l.Runs.set() && !l.Tokens.set() {
		return errors.New("limits need runs or tokens per window")
	}
	return nil
}

// Now is the limits' clock's time.
func (l Limits) Now() time.Time {
	if l.Clock != nil {
		return l.Clock()
	}
	return time.Now()
}

// Windows returns, at t, the index of the runs' and the tokens' windows
// (0 for a bound not set) and how long each has left.
func (l Limits) Windows(t time.Time) (runs, tokens int64, runsLeft, tokensLeft time.Duration) {
	if l.Runs.set() {
		runs, runsLeft = l.Runs.window(t)
	}
	if l.Tokens.set() {
		tokens, tokensLeft = l.Tokens.window(t)
	}
	return
}

// MemoryLimiter is a [Limiter] that counts in this process's memory: for
// one replica. Keys whose windows have ended are dropped now and then.
type MemoryLimiter struct {
	limits Limits
	mu     sync.Mutex
	counts map[string]*usage
	sweep  int // sweep the map when it grows past this
}

// usage is one key's counts and the windows they are for.
type usage struct {
	runsWindow, runs     int64
	tokensWindow, tokens int64
}

// NewMemoryLimiter returns a limiter with limits; it panics when they
// cannot work (see [Limits.Check]): a configuration error.
func NewMemoryLimiter(limits Limits) *MemoryLimiter {
	if err := limits.Check(); err != nil {
		panic("uiadapter: " + err.Error())
	}
	return &MemoryLimiter{limits: limits, counts: map[string]*usage{}, sweep: 1024}
}

// at returns key's counts, reset for the windows they are now in.
func (m *MemoryLimiter) at(key string) (u *usage, runsLeft, tokensLeft time.Duration) {
	rw, tw, runsLeft, tokensLeft := m.limits.Windows(m.limits.Now())
	if len(m.counts) >= m.sweep {
		for k, c := range m.counts {
			if (!m.limits.Runs.set() || c.runsWindow != rw) && (!m.limits.Tokens.set() || c.tokensWindow != tw) {
				delete(m.counts, k)
			}
		}
		m.sweep = max(1024, 2*len(m.counts))
	}
	u = m.counts[key]
	if u == nil {
		u = &usage{runsWindow: rw, tokensWindow: tw}
		m.counts[key] = u
	}
	if u.runsWindow != rw {
		u.runsWindow, u.runs = rw, 0
	}
	if u.tokensWindow != tw {
		u.tokensWindow, u.tokens = tw, 0
	}
	return u, runsLeft, tokensLeft
}

// Allow counts a run unless key is over a limit.
func (m *MemoryLimiter) Allow(_ context.Context, key string) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, runsLeft, tokensLeft := m.at(key)
	if wait := m.limits.Wait(u.runs, u.tokens, runsLeft, tokensLeft); wait > 0 {
		return wait, nil
	}
	u.runs++
	return 0, nil
}

// Wait is how long a key with runs and tokens counted in windows that
// have runsLeft and tokensLeft must wait before its next run: 0 when it
// is under both bounds.
func (l Limits) Wait(runs, tokens int64, runsLeft, tokensLeft time.Duration) time.Duration {
	var wait time.Duration
	if l.Runs.set() && runs >= l.Runs.N {
		wait = runsLeft
	}
	if l.Tokens.set() && tokens >= l.Tokens.N {
		wait = max(wait, tokensLeft)
	}
	return wait
}

// Spend counts tokens.
func (m *MemoryLimiter) Spend(_ context.Context, key string, tokens int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, _, _ := m.at(key)
	u.tokens += tokens
	return !m.limits.Tokens.set() || u.tokens < m.limits.Tokens.N, nil
}
