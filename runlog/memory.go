package runlog

import (
	"context"
	"sync"
	"time"

	"github.com/agentui/agentui/history"
)

// Memory is a Log in this process: right for one replica, and what a
// handler uses to hand its own runs' events to its own readers (entries
// stay decoded; nothing is marshalled).
type Memory struct {
	mu       sync.Mutex
	logs     map[history.Key]*memLog
	watchers map[int]func(history.Key, string)
	next     int
}

type memLog struct {
	header  Header
	entries []Entry
	wake    chan struct{} // closed and replaced when entries are added, if someone waits
	waiting bool
	expiry  *time.Timer
}

// NewMemory returns an empty log.
func NewMemory() *Memory {
	return &Memory{logs: map[history.Key]*memLog{}, watchers: map[int]func(history.Key, string){}}
}

// Begin implements Log.
func (m *Memory) Begin(_ context.Context, key history.Key, h Header, first ...Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.logs[key]; old != nil {
		old.close()
	}
	m.logs[key] = &memLog{header: h, wake: make(chan struct{}), entries: append([]Entry(nil), first...)}
	return nil
}

// close wakes the log's readers for good (they find it gone).
func (l *memLog) close() {
	if l.expiry != nil {
		l.expiry.Stop()
	}
	close(l.wake)
}

func (m *Memory) log(key history.Key, run string) *memLog {
	l := m.logs[key]
	if l == nil || l.header.Run != run {
		return nil
	}
	return l
}

// Append implements Log.
func (m *Memory) Append(_ context.Context, key history.Key, run string, entries ...Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.log(key, run)
	if l == nil {
		return nil
	}
	l.entries = append(l.entries, entries...)
	if l.waiting {
		close(l.wake)
		l.wake, l.waiting = make(chan struct{}), false
	}
	return nil
}

// End implements Log.
func (m *Memory) End(ctx context.Context, key history.Key, run string, retention time.Duration, last ...Entry) error {
	_ = m.Append(ctx, key, run, last...)
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.log(key, run)
	if l == nil {
		return nil
	}
	if l.expiry != nil {
		l.expiry.Stop()
	}
	l.header.Ended = true
	l.expiry = time.AfterFunc(retention, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.logs[key] == l {
			delete(m.logs, key)
			l.close()
		}
	})
	return nil
}

// Current implements Log.
func (m *Memory) Current(_ context.Context, key history.Key) (Header, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.logs[key]; l != nil {
		return l.header, nil
	}
	return Header{}, ErrNoRun
}

// Read implements Log. The entries returned are shared: read them only.
func (m *Memory) Read(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]Entry, error) {
	var timer *time.Timer
	for {
		m.mu.Lock()
		l := m.log(key, run)
		if l == nil {
			m.mu.Unlock()
			return nil, ErrNoRun
		}
		if after < int64(len(l.entries)) {
			out := l.entries[max(after, 0):len(l.entries):len(l.entries)]
			m.mu.Unlock()
			return out, nil
		}
		l.waiting = true
		wake := l.wake
		m.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-wake:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Stop implements Log: it calls the watchers at once.
func (m *Memory) Stop(_ context.Context, key history.Key, run string) error {
	m.mu.Lock()
	fns := make([]func(history.Key, string), 0, len(m.watchers))
	for _, fn := range m.watchers {
		fns = append(fns, fn)
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(key, run)
	}
	return nil
}

// Watch implements Log.
func (m *Memory) Watch(fn func(history.Key, string)) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	id := m.next
	m.watchers[id] = fn
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.watchers, id)
	}
}
