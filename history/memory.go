package history

import (
	"context"
	"sync"
	"time"

	"github.com/agentui/agentui/cmf"
)

// Memory is a Store in process memory: for one replica, tests and demos.
// Messages are copied in and out (Message.Clone), so a caller that changes
// a loaded message's parts or extensions does not change the store. Like
// every CMF message, their raw JSON bytes are shared and read-only.
type Memory struct {
	mu        sync.Mutex
	ttl       time.Duration
	now       func() time.Time
	convs     map[Key]*memConv
	locks     map[Key]memLock
	nextSweep time.Time
}

type memConv struct {
	msgs    []cmf.Message
	version Version
	expires time.Time // zero: never
}

type memLock struct {
	token   string
	expires time.Time
}

// MemoryOption configures a Memory store.
type MemoryOption func(*Memory)

// WithMemoryTTL makes conversations expire ttl after their last write.
// The default is no expiry.
func WithMemoryTTL(ttl time.Duration) MemoryOption { return func(m *Memory) { m.ttl = ttl } }

// WithClock sets the clock (for tests). The default is time.Now.
func WithClock(now func() time.Time) MemoryOption { return func(m *Memory) { m.now = now } }

// NewMemory returns an empty in-memory store.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{now: time.Now, convs: map[Key]*memConv{}, locks: map[Key]memLock{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

// conv returns the live conversation, dropping an expired one.
func (m *Memory) conv(key Key) *memConv {
	c := m.convs[key]
	if c != nil && !c.expires.IsZero() && !m.now().Before(c.expires) {
		delete(m.convs, key)
		return nil
	}
	return c
}

// Load returns the conversation.
func (m *Memory) Load(_ context.Context, key Key) (Conversation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil {
		return Conversation{}, nil
	}
	return Conversation{Version: c.version, Messages: cloneAll(c.msgs)}, nil
}

// cloneAll copies messages so that neither side can change the other's.
func cloneAll(msgs []cmf.Message) []cmf.Message {
	out := make([]cmf.Message, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Clone()
	}
	return out
}

// Append adds messages if the version is expect.
func (m *Memory) Append(_ context.Context, key Key, expect Version, msgs ...cmf.Message) (Version, error) {
	for i := range msgs {
		if err := msgs[i].Validate(); err != nil {
			return 0, err
		}
	}
	msgs = cloneAll(msgs)
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil {
		if expect != 0 {
			return 0, ErrConflict
		}
		c = &memConv{}
		m.convs[key] = c
	}
	if c.version != expect {
		return 0, ErrConflict
	}
	c.msgs = append(c.msgs, msgs...)
	c.version++
	m.touch(c)
	return c.version, nil
}

// Truncate keeps the first keep messages if the version is expect.
func (m *Memory) Truncate(_ context.Context, key Key, expect Version, keep int) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil || c.version != expect {
		return 0, ErrConflict
	}
	if keep < len(c.msgs) {
		c.msgs = c.msgs[:max(keep, 0):max(keep, 0)]
	}
	c.version++
	m.touch(c)
	return c.version, nil
}

// touch restarts a conversation's TTL and, now and then, forgets expired
// conversations and locks nobody will ask for again.
func (m *Memory) touch(c *memConv) {
	if m.ttl <= 0 {
		return
	}
	now := m.now()
	c.expires = now.Add(m.ttl)
	if now.Before(m.nextSweep) {
		return
	}
	m.nextSweep = now.Add(min(m.ttl, time.Minute))
	for k, other := range m.convs {
		if !now.Before(other.expires) {
			delete(m.convs, k)
		}
	}
	for k, l := range m.locks {
		if !now.Before(l.expires) {
			delete(m.locks, k)
		}
	}
}

// Delete removes the conversation.
func (m *Memory) Delete(_ context.Context, key Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.convs, key)
	delete(m.locks, key)
	return nil
}

// Acquire takes or extends the run lock.
func (m *Memory) Acquire(_ context.Context, key Key, token string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if l, ok := m.locks[key]; ok && l.token != token && now.Before(l.expires) {
		return ErrBusy
	}
	m.locks[key] = memLock{token: token, expires: now.Add(ttl)}
	return nil
}

// Release gives the lock up if token holds it.
func (m *Memory) Release(_ context.Context, key Key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.locks[key]; ok && l.token == token {
		delete(m.locks, key)
	}
	return nil
}

// Len is the number of conversations held (expired ones included until
// they are swept).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.convs)
}
