// Package history keeps conversations on the server, so that the server's
// copy — not the client's — is the truth: a client can neither rewrite the
// past nor answer a tool call that was never asked, and a chat survives
// reloads, restarts and many replicas.
//
// A [Store] holds, per conversation, a list of CMF messages and a version
// that every write bumps. Writes name the version they expect and fail with
// [ErrConflict] when it moved, so concurrent writers never interleave.
// [Memory] is an in-process store; history/redisstore is the Redis one.
package history

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/agentui/agentui/cmf"
)

// Key names a conversation: the chat id within a scope (whose
// conversations a request may touch, from authentication). A chat id under
// another scope is another conversation.
type Key struct {
	Scope string
	Chat  string
}

// Version counts writes to a conversation. 0 means it does not exist.
type Version int64

// Conversation is a stored conversation.
type Conversation struct {
	Messages []cmf.Message
	Version  Version
	// Bytes is the stored size of the messages (their JSON), so a handler
	// can bound a conversation without measuring it again.
	Bytes int64
}

// KeepAll is the keep of a [Store.Write] that only appends.
const KeepAll = -1

// errKeep: a write's keep is more than the conversation holds.
func errKeep(keep, have int) error {
	return fmt.Errorf("history: write keeps %d messages of %d", keep, have)
}

// Errors.
var (
	// ErrConflict: the conversation's version is not the one expected.
	ErrConflict = errors.New("history: the conversation changed")
	// ErrBusy: another run holds the conversation's lock.
	ErrBusy = errors.New("history: a reply is still being produced for this conversation")
	// ErrUnavailable: the store could not be reached, and the call
	// certainly changed nothing (the request never left). A store wraps
	// it into such errors; any other error of a write leaves its outcome
	// unknown (it may have landed), which callers must not report as a
	// failure to write.
	ErrUnavailable = errors.New("history: the store is unreachable")
	// ErrNotFound: there is no such conversation (Delete, Rename).
	ErrNotFound = errors.New("history: no such conversation")
)

// Store keeps conversations. Implementations are safe for concurrent use.
// A store that is not also a [Locker] gets one from the handler.
type Store interface {
	// Load returns the conversation; one that does not exist has version 0
	// and no messages. The messages may be shared with the store and with
	// other loads, so that a load costs O(1) per message already held:
	// read them, and change a copy ([cmf.Message.Clone]). Appending to
	// the slice is safe (its capacity ends at its length).
	Load(ctx context.Context, key Key) (Conversation, error)
	// Write is the one way a conversation changes: if the version is
	// expect, it keeps the first keep stored messages ([KeepAll]: every
	// one), appends msgs after them, and returns the new version, all or
	// nothing; ErrConflict when the version moved. A turn that edits or
	// regenerates cuts and adds in one write, so a turn refused after it
	// was planned leaves the chat as it was. It refreshes the
	// conversation's TTL. A conversation that does not exist has version
	// 0; writing it creates it. keep beyond the stored messages is an
	// error.
	Write(ctx context.Context, key Key, expect Version, keep int, msgs ...cmf.Message) (Version, error)
	// Delete removes the conversation; ErrNotFound when there is none.
	Delete(ctx context.Context, key Key) error
	// Rename sets the conversation's title ("": back to the derived one,
	// see [ChatInfo]); ErrNotFound when there is no such conversation.
	// It is not a write: the version, the TTL and the list order stay.
	Rename(ctx context.Context, key Key, title string) error
	// List returns a scope's conversations, the most recently written
	// first, at most limit of them (0: all). Expired and deleted ones are
	// not listed.
	List(ctx context.Context, scope string, limit int) ([]ChatInfo, error)
}

// ChatInfo is one conversation of a scope, as [Store.List] lists it.
type ChatInfo struct {
	Chat string
	// Title is the one Rename set, else one derived from the first user
	// message (see [Title]) when it was appended; "" when neither exists
	// (a conversation stored before titles were kept, or with no user
	// text).
	Title    string
	Created  time.Time // when it was first written (millisecond precision)
	Updated  time.Time // when it was last written (millisecond precision)
	Messages int       // how many messages it holds
}

// Locker holds the run lock of conversations: one run at a time per
// conversation, across every replica that shares the locker. It is apart
// from [Store] so that a store over a database without expiring keys
// need not invent one; [Memory] and the Redis store are both.
// Implementations are safe for concurrent use.
type Locker interface {
	// Acquire takes the conversation's run lock for token, or extends it
	// when token already holds it; ErrBusy when another token does. The
	// lock expires after ttl, so a crashed process cannot hold it forever.
	Acquire(ctx context.Context, key Key, token string, ttl time.Duration) error
	// Release gives the lock up if token holds it.
	Release(ctx context.Context, key Key, token string) error
}

// LockLoader is a Store that is its own Locker and takes the run lock and
// loads the conversation in one step, one network round trip where
// Acquire then Load takes two. Every turn starts with both; [AcquireLoad]
// uses this when the store is the locker and has it.
type LockLoader interface {
	// AcquireLoad is Acquire followed by Load. When it returns an error
	// other than ErrBusy, token may hold the lock (a write whose reply was
	// lost may have landed): the caller releases it.
	AcquireLoad(ctx context.Context, key Key, token string, ttl time.Duration) (Conversation, error)
}

// AcquireLoad takes the conversation's run lock for token and loads the
// conversation: ErrBusy when another token holds the lock. When it returns
// another error, token may hold the lock: release it, retrying while the
// store is unreachable (it expires after ttl in any case). Nothing here
// releases it for the caller, since a store that failed to answer would
// make that wait too.
func AcquireLoad(ctx context.Context, s Store, l Locker, key Key, token string, ttl time.Duration) (Conversation, error) {
	if ll, ok := s.(LockLoader); ok && sameLocker(s, l) {
		return ll.AcquireLoad(ctx, key, token, ttl)
	}
	if err := l.Acquire(ctx, key, token, ttl); err != nil {
		return Conversation{}, err
	}
	return s.Load(ctx, key)
}

// sameLocker reports whether the store s is the locker l.
func sameLocker(s Store, l Locker) bool {
	sl, ok := s.(Locker)
	return ok && reflect.TypeOf(sl).Comparable() && reflect.TypeOf(l) == reflect.TypeOf(sl) && sl == l
}
