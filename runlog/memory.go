package runlog

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/history"
)

// Memory is a Log in this process: right for one replica, and what a
// handler uses to hand its own runs' events to its own readers (entries
// stay decoded; nothing is marshalled). A run a later one replaced keeps
// its log until a reader has been given all of it, or until it expires,
// so its readers get all of it.
type Memory struct {
	mu   sync.Mutex
	logs map[history.Key]*memLog
	// older holds the logs a later run replaced, by chat, oldest first:
	// the next run may begin the moment the last one releases its chat,
	// before it has logged its last entries, and its readers must still
	// get them. One goes when it expires, or at the chat's next Begin
	// once a reader has been given its end (so turns taken in quick
	// succession hold a log or two, not one per turn for the retention).
	older    map[history.Key][]*memLog
	watchers map[int]func(Note)
	next     int
}

type memLog struct {
	header Header
	// chunks hold the entries in order. A chunk is never copied or grown
	// past its capacity: a full one is followed by a new one, twice as
	// large up to maxChunk. A long run then allocates what it holds once,
	// where one growing slice would allocate about five times that (Go
	// grows large slices by a quarter), and a short one stays small.
	chunks [][]Entry
	// cuts[i] says, for each entry of chunk i once compacted, which
	// deltas it merged (nil for a chunk not compacted): see compact.
	cuts      [][]pieces
	compacted int   // the chunks before this one are compacted, or need not be
	read      int64 // the highest sequence any reader (a stream or a copier) has been given
	// streamed is the highest sequence a stream (Read) has been given:
	// what compact may merge. Not read: a copier (ReadDeltas) may run
	// ahead of the stream of the client that asked, which must still get
	// every delta as it came.
	streamed int64
	merging  bool          // deltas no reader was given are merged (Coalesce)
	wake     chan struct{} // closed and replaced when entries are added, if someone waits
	waiting  bool
	expiry   *time.Timer
}

// The sizes of a log's chunks: the first, and the largest.
const firstChunk, maxChunk = 8, 512

// maxMerged bounds the text one merged delta entry holds.
const maxMerged = 8 << 10

// pieces are the deltas one compacted entry merged: the sequence of the
// first (the others follow it one by one) and each one's length, so that
// a reader who was given some of them before the compaction gets the
// rest, not the whole again. An entry that is one delta has none.
type pieces struct {
	first int64
	lens  []uint16
}

// compact merges, in every full chunk of maxChunk entries that a stream
// has been given (a reply's first 504 entries
// are left as they are), each run
// of consecutive text or reasoning deltas of one part into one entry (up
// to maxMerged bytes), numbered as the last of them: a long reply then
// holds about its text and two bytes a delta, not an entry of a hundred
// bytes or more per delta. The first reader (the client that asked)
// gets every delta as it came; a later one (a reload, another tab) the
// merged text. What no reader was given, a run whose client left merges
// as it comes instead (Coalesce). The compacted chunk is new
// memory: a reader holding the old one reads on undisturbed.
func (l *memLog) compact() {
	for ; l.compacted < len(l.chunks)-1; l.compacted++ {
		ch := l.chunks[l.compacted]
		if cap(ch) < maxChunk {
			continue // the short first chunks: a short reply is not worth it
		}
		last := ch[len(ch)-1].Seq
		if last > l.streamed {
			return // a reader has yet to be given it as it came
		}
		if out, cuts := compactChunk(ch); cuts != nil {
			l.chunks[l.compacted], l.cuts[l.compacted] = out, cuts
		}
	}
}

// compactChunk returns ch with its runs of deltas merged and their
// pieces, or no pieces when nothing merged.
func compactChunk(ch []Entry) ([]Entry, []pieces) {
	var out []Entry
	var cuts []pieces
	for i := 0; i < len(ch); {
		d, ok := ch[i].Event.(*agent.PartDelta)
		j := i + 1
		if ok && d.Kind != agent.PartToolCall {
			n := len(d.Delta)
			for ; j < len(ch); j++ {
				next, ok := ch[j].Event.(*agent.PartDelta)
				if !ok || next.Kind != d.Kind || next.ID != d.ID || ch[j].Seq != ch[j-1].Seq+1 || n+len(next.Delta) > maxMerged {
					break
				}
				n += len(next.Delta)
			}
		}
		if j == i+1 {
			if cuts != nil {
				out, cuts = append(out, ch[i]), append(cuts, pieces{})
			}
			i = j
			continue
		}
		if cuts == nil { // the first merge: what came before is copied as it is
			out, cuts = make([]Entry, i, len(ch)), make([]pieces, i, len(ch))
			copy(out, ch[:i])
		}
		var b strings.Builder
		lens := make([]uint16, j-i)
		for k := i; k < j; k++ {
			piece := ch[k].Event.(*agent.PartDelta).Delta
			b.WriteString(piece)
			lens[k-i] = uint16(len(piece)) // at most maxMerged
		}
		last := ch[j-1]
		out = append(out, Entry{Seq: last.Seq, Time: last.Time, Event: &agent.PartDelta{Kind: d.Kind, ID: d.ID, Delta: b.String()}})
		cuts = append(cuts, pieces{first: ch[i].Seq, lens: lens})
		i = j
	}
	if cuts == nil {
		return ch, nil
	}
	return slices.Clone(out), slices.Clone(cuts) // exactly as long as they are
}

// add appends entries. Once the log merges (Coalesce), a text or
// reasoning delta that follows a delta of the same part no reader has
// been given yet is merged into it (the entry takes the later one's
// sequence): a run nobody reads then holds about its text, not an entry
// per delta. A reader that waits has been given everything, so what it
// waits for is never held back.
func (l *memLog) add(es []Entry) {
	for len(es) > 0 && l.merge(&es[0]) {
		es = es[1:]
	}
	for len(es) > 0 {
		k := len(l.chunks) - 1
		if k < 0 || len(l.chunks[k]) == cap(l.chunks[k]) {
			size := firstChunk
			if k >= 0 {
				size = min(2*cap(l.chunks[k]), maxChunk)
			}
			l.chunks = append(l.chunks, make([]Entry, 0, max(size, min(len(es), maxChunk))))
			k++
		}
		n := min(cap(l.chunks[k])-len(l.chunks[k]), len(es))
		l.chunks[k] = append(l.chunks[k], es[:n]...)
		es = es[n:]
	}
	for len(l.cuts) < len(l.chunks) {
		l.cuts = append(l.cuts, nil)
	}
	l.compact()
}

// merge merges e into the last entry when both are deltas of one text
// or reasoning part and no reader has been given the last one; it
// reports whether it did.
func (l *memLog) merge(e *Entry) bool {
	d, ok := e.Event.(*agent.PartDelta)
	k := len(l.chunks) - 1
	if !ok || !l.merging || k < 0 || d.Kind == agent.PartToolCall {
		return false
	}
	last := &l.chunks[k][len(l.chunks[k])-1]
	prev, ok := last.Event.(*agent.PartDelta)
	if !ok || last.Seq <= l.read || prev.Kind != d.Kind || prev.ID != d.ID || len(prev.Delta)+len(d.Delta) > maxMerged {
		return false
	}
	// The slot is past every slice a reader holds (they are capped at
	// the length they were taken at): replacing it is safe.
	*last = Entry{Seq: e.Seq, Time: e.Time, Event: &agent.PartDelta{Kind: d.Kind, ID: d.ID, Delta: prev.Delta + d.Delta}}
	return true
}

// from returns the entries after sequence after, to the end of their
// chunk (shared, capped: never copied), nil when there are none.
// Sequences increase but may skip (merged deltas), so it searches. When
// after falls inside a compacted entry (its reader was given some of its
// deltas before they were merged), the entries are a copy whose first is
// that entry's rest.
func (l *memLog) from(after int64) []Entry {
	for c, ch := range l.chunks {
		if len(ch) == 0 || ch[len(ch)-1].Seq <= after {
			continue
		}
		i, _ := slices.BinarySearchFunc(ch, after+1, func(e Entry, seq int64) int { return cmp.Compare(e.Seq, seq) })
		if cuts := l.cuts[c]; cuts != nil && cuts[i].lens != nil && cuts[i].first <= after {
			off := 0
			for _, n := range cuts[i].lens[:after-cuts[i].first+1] {
				off += int(n)
			}
			d := ch[i].Event.(*agent.PartDelta)
			out := slices.Clone(ch[i:])
			out[0].Event = &agent.PartDelta{Kind: d.Kind, ID: d.ID, Delta: d.Delta[off:]}
			return out
		}
		return ch[i:len(ch):len(ch)]
	}
	return nil
}

// NewMemory returns an empty log.
func NewMemory() *Memory {
	return &Memory{logs: map[history.Key]*memLog{}, older: map[history.Key][]*memLog{}, watchers: map[int]func(Note){}}
}

// Begin implements Log.
func (m *Memory) Begin(_ context.Context, key history.Key, h Header, first ...Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.logs[key]; old != nil {
		kept := m.older[key][:0]
		for _, o := range m.older[key] {
			if o.readToItsEnd() || o.header.Run == old.header.Run { // a run id used twice: the later wins
				o.close()
				continue
			}
			kept = append(kept, o)
		}
		m.older[key] = append(kept, old)
	}
	l := &memLog{header: h, wake: make(chan struct{})}
	l.add(first)
	m.logs[key] = l
	return nil
}

// close wakes the log's readers for good (they find it gone).
func (l *memLog) close() {
	if l.expiry != nil {
		l.expiry.Stop()
	}
	close(l.wake)
}

// readToItsEnd reports whether the log has ended and a reader has been
// given its last entry.
func (l *memLog) readToItsEnd() bool {
	k := len(l.chunks) - 1
	return l.header.Ended && (k < 0 || l.read >= l.chunks[k][len(l.chunks[k])-1].Seq)
}

// log returns run's log: key's latest, or one a later run replaced.
func (m *Memory) log(key history.Key, run string) *memLog {
	if l := m.logs[key]; l != nil && l.header.Run == run {
		return l
	}
	for _, o := range m.older[key] {
		if o.header.Run == run {
			return o
		}
	}
	return nil
}

// Append implements Log.
func (m *Memory) Append(_ context.Context, key history.Key, run string, entries ...Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.log(key, run); l != nil {
		l.append(entries)
	}
	return nil
}

// append adds entries and wakes the log's readers; m.mu is held.
func (l *memLog) append(entries []Entry) {
	l.add(entries)
	if l.waiting {
		close(l.wake)
		l.wake, l.waiting = make(chan struct{}), false
	}
}

// Coalesce makes run's log merge the text and reasoning deltas no reader
// has been given (see add): for a run whose own client has left, so
// that what it holds is about its text. Streams that read it from then
// on get fewer, longer deltas; the text is the same.
func (m *Memory) Coalesce(key history.Key, run string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.log(key, run); l != nil {
		l.merging = true
	}
}

// ReadDeltas returns run's entries after seq after as they were logged:
// an entry that compaction merged comes back as the deltas it merged,
// each with its sequence (see memLog.compact), where Read gives the
// merged one. It is Read for a reader that copies the log to another,
// where a reader may resume from any entry it was given here (the mirror
// to a shared log), so the log compacts without waiting for it: what a
// copier is given, even after waiting for it, never counts as streamed.
// It returns at most the rest of one chunk (shared, or a copy where it
// expands merged deltas), waiting up to wait for one.
func (m *Memory) ReadDeltas(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]Entry, error) {
	return m.read(ctx, key, run, after, wait, true)
}

// AsLogged is m read as its entries were logged: its Read is ReadDeltas,
// for a reader that numbers what it is given (a WebSocket's chunks) and
// must number it as a reader of another replica's copy does.
func (m *Memory) AsLogged() Log { return asLogged{m} }

type asLogged struct{ *Memory }

func (a asLogged) Read(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]Entry, error) {
	return a.ReadDeltas(ctx, key, run, after, wait)
}

// fromDeltas is from with merged deltas expanded.
func (l *memLog) fromDeltas(after int64) []Entry {
	for c, ch := range l.chunks {
		if len(ch) == 0 || ch[len(ch)-1].Seq <= after {
			continue
		}
		cuts := l.cuts[c]
		if cuts == nil {
			return l.from(after)
		}
		i, _ := slices.BinarySearchFunc(ch, after+1, func(e Entry, seq int64) int { return cmp.Compare(e.Seq, seq) })
		out := make([]Entry, 0, len(ch)-i)
		for ; i < len(ch); i++ {
			p := cuts[i]
			if p.lens == nil {
				out = append(out, ch[i])
				continue
			}
			d := ch[i].Event.(*agent.PartDelta)
			off := 0
			for k, n := range p.lens {
				if seq := p.first + int64(k); seq > after {
					out = append(out, Entry{Seq: seq, Time: ch[i].Time, Event: &agent.PartDelta{Kind: d.Kind, ID: d.ID, Delta: d.Delta[off : off+int(n)]}})
				}
				off += int(n)
			}
		}
		return out
	}
	return nil
}

// Write implements Log.
func (m *Memory) Write(ctx context.Context, key history.Key, h Header, retention time.Duration, entries ...[]Entry) error {
	_ = m.Begin(ctx, key, h)
	return m.End(ctx, key, h.Run, retention, entries...)
}

// End implements Log.
func (m *Memory) End(ctx context.Context, key history.Key, run string, retention time.Duration, last ...[]Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.log(key, run)
	if l == nil {
		return nil
	}
	// The last entries and the end are one change: a reader given the
	// last entry may have its client ask again at once (a reconnect),
	// which must find the run ended, not follow it.
	for _, es := range last {
		l.append(es)
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
		} else if i := slices.Index(m.older[key], l); i >= 0 {
			if m.older[key] = slices.Delete(m.older[key], i, i+1); len(m.older[key]) == 0 {
				delete(m.older, key)
			}
		} else {
			return // closed already
		}
		l.close()
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
// It returns at most the rest of one chunk (up to maxChunk entries): a
// reader far behind gets them in a few reads, and nothing is copied.
func (m *Memory) Read(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]Entry, error) {
	return m.read(ctx, key, run, after, wait, false)
}

// read is Read, or ReadDeltas for a copier: only a stream's reads let the
// log compact (memLog.streamed).
func (m *Memory) read(ctx context.Context, key history.Key, run string, after int64, wait time.Duration, copier bool) ([]Entry, error) {
	var timer *time.Timer
	for {
		m.mu.Lock()
		l := m.log(key, run)
		if l == nil {
			m.mu.Unlock()
			return nil, ErrNoRun
		}
		var out []Entry
		if copier {
			out = l.fromDeltas(max(after, 0))
		} else {
			out = l.from(max(after, 0))
		}
		if len(out) > 0 {
			l.read = max(l.read, out[len(out)-1].Seq)
			if !copier {
				l.streamed = max(l.streamed, out[len(out)-1].Seq)
			}
			m.mu.Unlock()
			return out, nil
		}
		if wait <= 0 {
			m.mu.Unlock()
			return nil, nil
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

// Notify implements Log: it calls the watchers at once.
func (m *Memory) Notify(_ context.Context, n Note) error {
	m.mu.Lock()
	fns := make([]func(Note), 0, len(m.watchers))
	for _, fn := range m.watchers {
		fns = append(fns, fn)
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
	return nil
}

// Watch implements Log.
func (m *Memory) Watch(fn func(Note)) func() {
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
