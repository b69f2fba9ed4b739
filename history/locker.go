package history

import (
	"context"
	"sync"
	"time"
)

// LocalLocker is a Locker in process memory: for a store that has no lock
// of its own, served by one replica. Several replicas need a shared
// locker (the Redis store is one) or they may run two replies at once on
// one conversation; the store's versioned writes still keep it intact.
type LocalLocker struct {
	mu    sync.Mutex
	now   func() time.Time
	locks map[Key]memLock
}

var _ Locker = (*LocalLocker)(nil)

// NewLocalLocker returns an in-process locker.
func NewLocalLocker() *LocalLocker {
	return &LocalLocker{now: time.Now, locks: map[Key]memLock{}}
}

// Acquire takes or extends the run lock.
func (l *LocalLocker) Acquire(_ context.Context, key Key, token string, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if cur, ok := l.locks[key]; ok && cur.token != token && now.Before(cur.expires) {
		return ErrBusy
	}
	if len(l.locks) > 1024 {
		for k, cur := range l.locks { // forget expired locks now and then
			if !now.Before(cur.expires) {
				delete(l.locks, k)
			}
		}
	}
	l.locks[key] = memLock{token: token, expires: now.Add(ttl)}
	return nil
}

// Release gives the lock up if token holds it.
func (l *LocalLocker) Release(_ context.Context, key Key, token string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.locks[key]; ok && cur.token == token {
		delete(l.locks, key)
	}
	return nil
}
