package history

import (
	"context"
	"encoding/json"
	"maps"
	"time"
)

// CallRecord is one server tool call in a chat's ledger: started before
// the tool runs, finished with its result after.
type CallRecord struct {
	Tool     string          `json:"tool"`
	Started  time.Time       `json:"started"`
	Finished bool            `json:"finished,omitempty"`
	Output   json.RawMessage `json:"output,omitempty"` // a finished call's result (JSON)
	IsError  bool            `json:"isError,omitempty"`
}

// Ledger records a chat's server tool calls beside its conversation, in
// the same store, so that a call that finished is never run again and
// one that started and never finished is known as such, whatever
// replica looks (agent.Ledger is the run's view of it). It expires and is
// deleted with the conversation. [Memory] and the Redis store are both.
// Implementations are safe for concurrent use.
type Ledger interface {
	// BeginCall records call id as started (rec), unless the ledger has
	// it already: then it returns that record and true, and changes
	// nothing. The record is durable when it returns: a tool runs only
	// after it.
	BeginCall(ctx context.Context, key Key, id string, rec CallRecord) (CallRecord, bool, error)
	// FinishCall records the call's outcome (rec, Finished), over its
	// start.
	FinishCall(ctx context.Context, key Key, id string, rec CallRecord) error
	// Calls returns the chat's ledger by call id.
	Calls(ctx context.Context, key Key) (map[string]CallRecord, error)
}

var _ Ledger = (*Memory)(nil)

// BeginCall implements Ledger.
func (m *Memory) BeginCall(_ context.Context, key Key, id string, rec CallRecord) (CallRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := m.calls[key]
	if had, ok := calls[id]; ok {
		return had, true, nil
	}
	if calls == nil {
		calls = map[string]CallRecord{}
		m.calls[key] = calls
	}
	calls[id] = rec
	return CallRecord{}, false, nil
}

// FinishCall implements Ledger.
func (m *Memory) FinishCall(_ context.Context, key Key, id string, rec CallRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := m.calls[key]
	if calls == nil {
		calls = map[string]CallRecord{}
		m.calls[key] = calls
	}
	rec.Finished = true
	calls[id] = rec
	return nil
}

// Calls implements Ledger.
func (m *Memory) Calls(_ context.Context, key Key) (map[string]CallRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.calls[key]), nil
}
