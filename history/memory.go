package history

import (
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentui/agentui/cmf"
)

// Memory is a Store in process memory: for one replica, tests and demos.
// Appended messages are copied in (Message.Clone), so a caller that goes
// on changing its own does not change the store; loaded ones are shared,
// read-only, as [Store.Load] says, so a load costs nothing per message.
//
// It holds at most a bounded number of bytes (their JSON size; see
// WithMemoryMaxBytes): past the bound, the conversations used least
// recently are forgotten, so clients that open chats without end cannot
// exhaust the process's memory.
type Memory struct {
	mu        sync.Mutex
	ttl       time.Duration
	now       func() time.Time
	maxBytes  int64
	bytes     int64
	convs     map[Key]*memConv
	recent    list.List // of *memConv, most recently used first
	locks     map[Key]memLock
	queues    map[Key][]Queued              // see Queue; dropped with their conversation
	calls     map[Key]map[string]CallRecord // see Ledger; dropped with their conversation
	nextSweep time.Time
}

type memConv struct {
	key       Key
	tree      Tree // beside the active branch (see Brancher)
	nodeBytes int64
	msgs      []cmf.Message
	sizes     []int64 // each message's JSON size
	bytes     int64
	version   Version
	lent      int    // the longest msgs[:n] a Load handed out from this array
	title     string // set by Rename
	auto      string // derived from the message at autoAt (see Title)
	autoAt    int
	created   time.Time // the first write
	updated   time.Time // the last write
	expires   time.Time // zero: never
	elem      *list.Element
}

var (
	_ Store    = (*Memory)(nil)
	_ Locker   = (*Memory)(nil)
	_ Brancher = (*Memory)(nil)
)

// DefaultMemoryMaxBytes bounds a Memory store (256 MiB of message JSON).
const DefaultMemoryMaxBytes = 256 << 20

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

// WithMemoryMaxBytes bounds the JSON size of all conversations held
// (default [DefaultMemoryMaxBytes]; 0 or less: no bound). A write past the
// bound forgets the conversations used least recently (never a locked
// one, nor the one written).
func WithMemoryMaxBytes(n int64) MemoryOption { return func(m *Memory) { m.maxBytes = n } }

// NewMemory returns an empty in-memory store.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{now: time.Now, maxBytes: DefaultMemoryMaxBytes, convs: map[Key]*memConv{}, locks: map[Key]memLock{}, queues: map[Key][]Queued{},
		calls: map[Key]map[string]CallRecord{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

// conv returns the live conversation, dropping an expired one, and marks
// it used.
func (m *Memory) conv(key Key) *memConv {
	c := m.convs[key]
	if c != nil && !c.expires.IsZero() && !m.now().Before(c.expires) {
		m.forget(c)
		return nil
	}
	if c != nil {
		m.recent.MoveToFront(c.elem)
	}
	return c
}

func (m *Memory) forget(c *memConv) {
	delete(m.convs, c.key)
	delete(m.queues, c.key)
	delete(m.calls, c.key)
	m.recent.Remove(c.elem)
	m.bytes -= c.bytes + c.nodeBytes
}

// Load returns the conversation.
func (m *Memory) Load(_ context.Context, key Key) (Conversation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil {
		return Conversation{}, nil
	}
	c.lent = max(c.lent, len(c.msgs))
	return Conversation{Version: c.version, Messages: c.msgs[:len(c.msgs):len(c.msgs)], Bytes: c.bytes}, nil
}

// cloneAll copies messages so that the caller's changes do not reach
// the store.
func cloneAll(msgs []cmf.Message) []cmf.Message {
	out := make([]cmf.Message, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Clone()
	}
	return out
}

// Write keeps the first keep messages and adds msgs, if the version is
// expect.
func (m *Memory) Write(_ context.Context, key Key, expect Version, keep int, msgs ...cmf.Message) (Version, error) {
	return m.write(key, expect, keep, msgs, false)
}

// Branch is Write that keeps what it cuts as another branch.
func (m *Memory) Branch(_ context.Context, key Key, expect Version, keep int, msgs ...cmf.Message) (Version, error) {
	return m.write(key, expect, keep, msgs, true)
}

func (m *Memory) write(key Key, expect Version, keep int, msgs []cmf.Message, branch bool) (Version, error) {
	sizes, err := encodedSizes(msgs)
	if err != nil {
		return 0, err
	}
	msgs = cloneAll(msgs)
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	var version Version
	var have int
	if c != nil {
		version, have = c.version, len(c.msgs)
	}
	if version != expect {
		return 0, ErrConflict
	}
	if keep == KeepAll {
		keep = have
	}
	if keep < 0 || keep > have {
		return 0, errKeep(keep, have)
	}
	// Only a write that is accepted creates the conversation: a refused
	// one must not leave an empty chat that List shows.
	if c == nil {
		c = &memConv{key: key, created: m.now()}
		c.elem = m.recent.PushFront(c)
		m.convs[key] = c
	}
	tree, reshaped := c.tree, false
	switch {
	case keep < len(c.msgs) && branch:
		tree, reshaped = CutNodes(c.msgs, keep, msgs, tree, int64(c.version)+1), true
		for i := range len(c.msgs) - keep {
			tree.Nodes[len(c.tree.Nodes)+i].size = c.sizes[keep+i]
		}
	case keep < len(c.msgs):
		reshaped = names(tree, c.msgs[keep:]) // what hangs off the cut goes
	}
	m.apply(c, keep, msgs, sizes, tree, reshaped || takesNodeID(tree.Nodes, msgs))
	return c.version, nil
}

// names reports whether t names a message of msgs: a node's parent, or
// a birth.
func names(t Tree, msgs []cmf.Message) bool {
	for _, m := range msgs {
		if _, ok := t.Born[m.ID()]; ok {
			return true
		}
		for _, n := range t.Nodes {
			if n.Parent == m.ID() {
				return true
			}
		}
	}
	return false
}

// takesNodeID reports whether a message of msgs has the id of a node:
// the node then goes (one id, one message). An append to a chat without
// branches costs nothing more.
func takesNodeID(nodes []Node, msgs []cmf.Message) bool {
	for _, n := range nodes {
		for _, m := range msgs {
			if n.Message.ID() == m.ID() {
				return true
			}
		}
	}
	return false
}

// apply keeps keep of c's messages, adds msgs (of sizes), sets what it
// keeps beside its active branch to tree (pruned when reshaped: an
// append leaves the tree as it was) and bumps its version.
func (m *Memory) apply(c *memConv, keep int, msgs []cmf.Message, sizes []int64, tree Tree, reshaped bool) {
	m.cut(c, keep)
	if c.auto == "" {
		if t, at := Title(msgs); at >= 0 {
			c.auto, c.autoAt = t, len(c.msgs)+at
		}
	}
	c.msgs = append(c.msgs, msgs...)
	c.sizes = append(c.sizes, sizes...)
	for _, n := range sizes {
		c.bytes += n
		m.bytes += n
	}
	if reshaped {
		m.bytes -= c.nodeBytes
		c.tree, c.nodeBytes = Prune(c.msgs, tree), 0
		for _, n := range c.tree.Nodes {
			c.nodeBytes += n.size
		}
		m.bytes += c.nodeBytes
	}
	c.version++
	m.touch(c)
	m.bound(c)
}

// Branches returns what the conversation keeps beside its active branch.
func (m *Memory) Branches(_ context.Context, key Key) (Tree, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil {
		return Tree{}, nil
	}
	nodes := slices.Clone(c.tree.Nodes)
	slices.SortStableFunc(nodes, func(a, b Node) int { return cmp.Compare(a.Born, b.Born) })
	return Tree{Nodes: nodes, Born: maps.Clone(c.tree.Born)}, nil
}

// Switch makes the branch through id the active one.
func (m *Memory) Switch(_ context.Context, key Key, expect Version, id string) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil {
		if expect != 0 {
			return 0, ErrConflict
		}
		return 0, ErrNoBranch
	}
	if c.version != expect {
		return 0, ErrConflict
	}
	keep, add, after, err := SwitchPlan(c.msgs, c.tree, id, int64(c.version)+1)
	if err != nil {
		return 0, err
	}
	size := make(map[string]int64, len(c.tree.Nodes)+len(c.msgs))
	for _, n := range c.tree.Nodes {
		size[n.Message.ID()] = n.size
	}
	for i, x := range c.msgs {
		size[x.ID()] = c.sizes[i]
	}
	sizes := make([]int64, len(add))
	for i, a := range add {
		sizes[i] = size[a.ID()]
	}
	for i := range after.Nodes {
		after.Nodes[i].size = size[after.Nodes[i].Message.ID()]
	}
	m.apply(c, keep, add, sizes, after, true)
	return c.version, nil
}

// encodedSizes validates msgs (never store what Load would refuse) and
// returns each one's JSON size.
func encodedSizes(msgs []cmf.Message) ([]int64, error) {
	sizes := make([]int64, len(msgs))
	for i := range msgs {
		if err := msgs[i].Validate(); err != nil {
			return nil, err
		}
		b, err := json.Marshal(msgs[i])
		if err != nil {
			return nil, err
		}
		sizes[i] = int64(len(b))
	}
	return sizes, nil
}

// bound forgets the least recently used conversations while the store
// holds more than its bound, sparing locked ones and keep.
func (m *Memory) bound(keep *memConv) {
	if m.maxBytes <= 0 {
		return
	}
	now := m.now()
	for e := m.recent.Back(); e != nil && m.bytes > m.maxBytes; {
		c := e.Value.(*memConv)
		e = e.Prev()
		if l, locked := m.locks[c.key]; c == keep || locked && now.Before(l.expires) {
			continue
		}
		m.forget(c)
	}
}

// cut drops c's messages past keep.
func (m *Memory) cut(c *memConv, keep int) {
	if keep <= c.autoAt {
		c.auto = "" // the title's message is gone: the next one names it
	}
	if keep == len(c.msgs) {
		return
	}
	for _, n := range c.sizes[keep:] {
		c.bytes -= n
		m.bytes -= n
	}
	if c.lent <= keep {
		// No load holds the messages past keep: appends may overwrite
		// them in place.
		c.msgs, c.sizes = c.msgs[:keep], c.sizes[:keep]
		return
	}
	// Loads may still read them: the kept ones move to a new array (with
	// room to grow), which later appends fill.
	c.msgs = append(make([]cmf.Message, 0, keep+keep/4+8), c.msgs[:keep]...)
	c.sizes = append(make([]int64, 0, cap(c.msgs)), c.sizes[:keep]...)
	c.lent = 0
}

// touch records a write: it restarts a conversation's TTL and, now and
// then, forgets expired conversations and locks nobody will ask for again.
func (m *Memory) touch(c *memConv) {
	now := m.now()
	c.updated = now
	if m.ttl <= 0 {
		return
	}
	c.expires = now.Add(m.ttl)
	if now.Before(m.nextSweep) {
		return
	}
	m.nextSweep = now.Add(min(m.ttl, time.Minute))
	for _, other := range m.convs {
		if !now.Before(other.expires) {
			m.forget(other)
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
	delete(m.locks, key)
	c := m.conv(key)
	if c == nil {
		return ErrNotFound
	}
	m.forget(c)
	return nil
}

// Rename sets the conversation's title.
func (m *Memory) Rename(_ context.Context, key Key, title string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conv(key)
	if c == nil {
		return ErrNotFound
	}
	c.title = CleanTitle(title)
	return nil
}

// List returns the scope's conversations, the most recently written
// first.
func (m *Memory) List(_ context.Context, scope string, limit int) ([]ChatInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []ChatInfo
	for k, c := range m.convs {
		if k.Scope != scope || !c.expires.IsZero() && !now.Before(c.expires) {
			continue
		}
		title := c.title
		if title == "" {
			title = c.auto
		}
		out = append(out, ChatInfo{Chat: k.Chat, Title: title, Messages: len(c.msgs),
			Created: c.created.Truncate(time.Millisecond), Updated: c.updated.Truncate(time.Millisecond)})
	}
	sortChats(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// sortChats puts the most recently written first (then by id, so the
// order is stable).
func sortChats(chats []ChatInfo) {
	slices.SortFunc(chats, func(a, b ChatInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.Chat, b.Chat)
	})
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
