package uiadapter

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ReplayGuard remembers which approval requests were answered, until
// they expire, so that a server keeping no history can refuse a second
// answer to one approval request: a replay, or a denial sent again as an
// approval. With a shared guard (history/redisstore.ReplayGuard) this holds
// across replicas; the default, in memory, holds within one process.
type ReplayGuard interface {
	// Use records that the approval requests named by nonces, all of one
	// chat, were answered: all of them, or none when one already was
	// (then it returns false), so that a request refused for one answer
	// does not spend the others. expires is when the last of them
	// expires, after which none need be remembered.
	Use(ctx context.Context, chat string, expires time.Time, nonces ...string) (bool, error)
}

// memoryReplayGuard is a ReplayGuard in process memory, bounded in size.
// It never forgets an answer before its request expires, or a second
// answer could pass: when it is full of unexpired ones it refuses to
// record another (errReplayGuardFull), and the handler answers 503
// until some expire. Size it for the approvals answered within
// [WithApprovalTTL], or share a Redis one (history/redisstore), which
// expires each entry on its own.
type memoryReplayGuard struct {
	mu   sync.Mutex
	max  int
	now  func() time.Time
	used map[string]time.Time
}

// errReplayGuardFull: the guard remembers as many unexpired answers as it
// may hold, and cannot take another without forgetting one that could
// then be replayed.
var errReplayGuardFull = errors.New("uiadapter: the approval replay guard is full")

// defaultReplayGuardSize is how many answered approval requests a
// memoryReplayGuard remembers (about 100 bytes each).
const defaultReplayGuardSize = 100000

// NewMemoryReplayGuard returns a guard that remembers up to max answered
// approval requests (100,000 when max <= 0), in this process; past that, it refuses answers until some expire.
func NewMemoryReplayGuard(max int) ReplayGuard {
	if max <= 0 {
		max = defaultReplayGuardSize
	}
	return &memoryReplayGuard{max: max, now: time.Now, used: map[string]time.Time{}}
}

// Use records nonces as answered, all or none.
func (g *memoryReplayGuard) Use(_ context.Context, _ string, expires time.Time, nonces ...string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	for _, n := range nonces {
		if until, ok := g.used[n]; ok && now.Before(until) {
			return false, nil
		}
	}
	if len(g.used)+len(nonces) > g.max {
		for n, until := range g.used {
			if !now.Before(until) {
				delete(g.used, n)
			}
		}
		if len(g.used)+len(nonces) > g.max {
			return false, errReplayGuardFull
		}
	}
	for _, n := range nonces {
		g.used[n] = expires
	}
	return true, nil
}
