package history

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/agentui/agentui/cmf"
)

// Queued is a message sent to a conversation while a reply was being
// produced, to run as a turn of its own once the chat is free: the user
// message (sanitized and past the input policies when it was queued),
// the run it starts, and the model it asked for.
type Queued struct {
	Message cmf.Message `json:"message"`
	RunID   string      `json:"runId"`
	Model   string      `json:"model,omitempty"`
	At      time.Time   `json:"at"`
}

// ID is the queued message's id.
func (q Queued) ID() string { return q.Message.ID() }

// Queue keeps, per conversation, the messages queued behind its running
// reply, in the order they came. It lives beside the conversation, in the
// same store, so that a queued message outlives the request and the
// replica that queued it. [Memory] and the Redis store are both.
// Implementations are safe for concurrent use.
type Queue interface {
	// Enqueue adds q at the end of key's queue, unless a message with its
	// id is queued already (a retried request: nothing is added), and
	// returns its place (1 is the next to run). ErrQueueFull when the
	// queue holds max messages.
	Enqueue(ctx context.Context, key Key, q Queued, max int) (int, error)
	// Queued returns key's queue, the next to run first.
	Queued(ctx context.Context, key Key) ([]Queued, error)
	// Dequeue removes the message with id from key's queue and reports
	// whether it was there.
	Dequeue(ctx context.Context, key Key, id string) (bool, error)
}

// ErrQueueFull: the conversation's queue holds as many messages as it
// may.
var ErrQueueFull = errors.New("history: the chat's queue is full")

var _ Queue = (*Memory)(nil)

// Enqueue implements Queue.
func (m *Memory) Enqueue(_ context.Context, key Key, q Queued, max int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	qs := m.queues[key]
	if i := slices.IndexFunc(qs, func(o Queued) bool { return o.ID() == q.ID() }); i >= 0 {
		return i + 1, nil
	}
	if len(qs) >= max {
		return 0, ErrQueueFull
	}
	q.Message = q.Message.Clone()
	m.queues[key] = append(qs, q)
	return len(qs) + 1, nil
}

// Queued implements Queue.
func (m *Memory) Queued(_ context.Context, key Key) ([]Queued, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.queues[key]), nil
}

// Dequeue implements Queue.
func (m *Memory) Dequeue(_ context.Context, key Key, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	qs := m.queues[key]
	i := slices.IndexFunc(qs, func(o Queued) bool { return o.ID() == id })
	if i < 0 {
		return false, nil
	}
	if qs = slices.Delete(slices.Clone(qs), i, i+1); len(qs) == 0 {
		delete(m.queues, key)
	} else {
		m.queues[key] = qs
	}
	return true, nil
}
