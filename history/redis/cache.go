package redis

import (
	"container/list"
	"sync"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
)

// cache keeps decoded conversations by version, least recently used out.
// Decoding every stored message on every turn is most of what a turn costs
// the store; with the cache, a load whose version has not moved costs one
// small round trip. Versions keep it correct across replicas: any write
// anywhere bumps the version, and the next load fetches again; the
// generation stamp tells a conversation created again after a delete or
// expiry from the old one at the same version.
type cache struct {
	mu      sync.Mutex
	max     int
	order   *list.List // of *cached, most recent first
	entries map[history.Key]*list.Element
}

type cached struct {
	key     history.Key
	version history.Version
	gen     string
	msgs    []cmf.Message // the cache's own copies; never handed out
}

func newCache(max int) *cache {
	if max <= 0 {
		return nil
	}
	return &cache{max: max, order: list.New(), entries: map[history.Key]*list.Element{}}
}

// get returns the cached entry. Entries are never changed in place, so
// reading its messages after the lock is released is safe; copy them
// before handing them out.
func (c *cache) get(key history.Key) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return cached{}, false
	}
	c.order.MoveToFront(e)
	return *e.Value.(*cached), true
}

// put stores an entry; ce.msgs must be the cache's own copies.
func (c *cache) put(key history.Key, ce cached) {
	if c == nil {
		return
	}
	ce.key = key
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		e.Value = &ce
		c.order.MoveToFront(e)
		return
	}
	c.entries[key] = c.order.PushFront(&ce)
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cached).key)
	}
}

// update changes a cached conversation that was at expect; any other
// cached version is dropped.
func (c *cache) update(key history.Key, expect, version history.Version, change func([]cmf.Message) []cmf.Message) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return
	}
	ce := e.Value.(*cached)
	if ce.version != expect {
		c.order.Remove(e)
		delete(c.entries, key)
		return
	}
	e.Value = &cached{key: key, version: version, gen: ce.gen, msgs: change(ce.msgs)}
	c.order.MoveToFront(e)
}

func (c *cache) drop(key history.Key) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.Remove(e)
		delete(c.entries, key)
	}
}

func cloneAll(msgs []cmf.Message) []cmf.Message {
	out := make([]cmf.Message, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Clone()
	}
	return out
}
