package redisstore

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
	mu       sync.Mutex
	max      int
	maxBytes int64 // 0: no bound
	bytes    int64
	order    *list.List // of *cached, most recent first
	entries  map[history.Key]*list.Element
}

type cached struct {
	key     history.Key
	version history.Version
	gen     string
	bytes   int64         // the messages' stored (JSON) size
	sizes   []int64       // each message's stored size
	msgs    []cmf.Message // shared with loads, read-only (see history.Store.Load)
	lent    int           // the longest msgs[:n] handed out from this array
}

func newCache(max int, maxBytes int64) *cache {
	if max <= 0 {
		return nil
	}
	return &cache{max: max, maxBytes: max64(maxBytes, 0), order: list.New(), entries: map[history.Key]*list.Element{}}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// fits reports whether an entry of n bytes may be cached: none larger
// than an eighth of the bound, so a few huge chats cannot flush the rest.
func (c *cache) fits(n int64) bool { return c.maxBytes == 0 || n <= c.maxBytes/8 }

// trim evicts the least recently used entries while over either bound.
// Called with mu held.
func (c *cache) trim() {
	for c.order.Len() > c.max || c.maxBytes > 0 && c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *cache) remove(e *list.Element) {
	ce := e.Value.(*cached)
	c.order.Remove(e)
	delete(c.entries, ce.key)
	c.bytes -= ce.bytes
}

// get returns the cached entry. Entries are never changed in place, so
// reading its messages after the lock is released is safe.
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
	ce := e.Value.(*cached)
	ce.lent = max(ce.lent, len(ce.msgs)) // the caller hands them out
	return *ce, true
}

// put stores an entry whose messages a load hands out; nobody may
// change ce.msgs after.
func (c *cache) put(key history.Key, ce cached) {
	if c == nil {
		return
	}
	ce.key, ce.lent = key, len(ce.msgs)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.remove(e)
	}
	if !c.fits(ce.bytes) {
		return
	}
	c.entries[key] = c.order.PushFront(&ce)
	c.bytes += ce.bytes
	c.trim()
}

// update changes a cached conversation that was at expect; any other
// cached version is dropped.
func (c *cache) update(key history.Key, expect, version history.Version, change func(cached) cached) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return
	}
	ce := *e.Value.(*cached)
	c.remove(e)
	if ce.version != expect {
		return
	}
	ce = change(ce)
	ce.version = version
	if !c.fits(ce.bytes) {
		return
	}
	c.entries[key] = c.order.PushFront(&ce)
	c.bytes += ce.bytes
	c.trim()
}

func (c *cache) drop(key history.Key) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.remove(e)
	}
}

func cloneAll(msgs []cmf.Message) []cmf.Message {
	out := make([]cmf.Message, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Clone()
	}
	return out
}
