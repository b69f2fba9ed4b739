package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/jsonw"
	"github.com/agentui/agentui/runlog"
	goredis "github.com/redis/go-redis/v9"
)

// RunLog is a runlog.Log on Redis Streams, shared by every replica. A
// chat's log is two keys under the conversation's hash tag, so Cluster
// keeps them on one slot:
//
//	<prefix>{<scope>:<chat>}:run         the latest run's header: a hash
//	<prefix>{<scope>:<chat>}:run:<run>   its entries: a stream
//
// The header hash has the fields run (the run's id), h (the rest of
// runlog.Header, JSON) and ended ("1" once the run ended), so that ending
// a run and checking which run a log is for touch one short field each:
// a header kept as one JSON string had Redis decode and re-encode it in
// Lua at every run's end (a fifth of Redis's CPU for a short reply).
//
// A stream entry holds consecutive log entries, in order, in its field
// b, one line each: "<sequence> <Unix ms> <type> <data JSON>" (see
// batchWriter for two abbreviations); its id is 0-<the last sequence it
// holds>. An Append is one pipeline of XADDs of
// up to 8 KiB each, so the log costs Redis a few commands per reply, not
// one per event.
// Notes (runlog.Note) travel on two pub/sub channels, which each RunLog
// subscribes to once: <prefix>runs:stop for stops and <prefix>runs:steer
// for steering messages, so a replica of a version that knows only stops
// never takes a steering message for one.
type RunLog struct {
	rdb     goredis.UniversalClient
	prefix  string
	live    time.Duration
	sub     *goredis.PubSub
	done    chan struct{}
	mu      sync.Mutex
	watches map[int]func(runlog.Note)
	next    int
}

var _ runlog.Log = (*RunLog)(nil)

// DefaultRunLogLive is how long a running run's log is kept after its
// last append: a log whose run died unseen is removed after it.
const DefaultRunLogLive = time.Hour

// RunLogOption configures a RunLog.
type RunLogOption func(*RunLog)

// WithRunLogPrefix sets the key prefix (default [DefaultPrefix]); use the
// store's.
func WithRunLogPrefix(p string) RunLogOption { return func(l *RunLog) { l.prefix = p } }

// NewRunLog returns a run log on rdb once it has subscribed to notes (an error when Redis cannot be reached in ctx); Close ends the
// subscription.
func NewRunLog(ctx context.Context, rdb goredis.UniversalClient, opts ...RunLogOption) (*RunLog, error) {
	l := &RunLog{rdb: rdb, prefix: DefaultPrefix, live: DefaultRunLogLive, done: make(chan struct{}), watches: map[int]func(runlog.Note){}}
	for _, o := range opts {
		o(l)
	}
	l.sub = rdb.Subscribe(ctx, l.stopChannel(), l.steerChannel())
	if _, err := l.sub.Receive(ctx); err != nil {
		_ = l.sub.Close()
		return nil, storeError("run log: subscribe", err)
	}
	go l.watch()
	return l, nil
}

// Close ends the notes' subscription.
func (l *RunLog) Close() error {
	err := l.sub.Close()
	<-l.done
	return err
}

func (l *RunLog) stopChannel() string  { return l.prefix + "runs:stop" }
func (l *RunLog) steerChannel() string { return l.prefix + "runs:steer" }

func (l *RunLog) headerKey(k history.Key) string {
	return l.prefix + "{" + keyEscaper.Replace(k.Scope) + ":" + keyEscaper.Replace(k.Chat) + "}:run"
}

func (l *RunLog) streamKey(k history.Key, run string) string {
	return l.headerKey(k) + ":" + keyEscaper.Replace(run)
}

// Begin implements runlog.Log: the header and the first entries in one
// pipelined round trip.
func (l *RunLog) Begin(ctx context.Context, key history.Key, h runlog.Header, first ...runlog.Entry) error {
	return l.begin(ctx, key, h, false, l.live, [][]runlog.Entry{first})
}

// Write implements runlog.Log: Begin's round trip, with the header ended
// and the keys' retention set.
func (l *RunLog) Write(ctx context.Context, key history.Key, h runlog.Header, retention time.Duration, entries ...[]runlog.Entry) error {
	return l.begin(ctx, key, h, true, retention, entries)
}

// begin writes a new header (ended or not) and entries; the keys expire
// after ttl.
func (l *RunLog) begin(ctx context.Context, key history.Key, h runlog.Header, ended bool, ttl time.Duration, entries [][]runlog.Entry) error {
	h.Ended = false // a field of its own
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	fields := []any{"run", h.Run, "h", b}
	if ended {
		fields = append(fields, "ended", "1")
	}
	stream, hk := l.streamKey(key, h.Run), l.headerKey(key)
	var bs entryBatches
	defer bs.release()
	_, perr := l.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		p.Unlink(ctx, hk)
		p.HSet(ctx, hk, fields...)
		p.PExpire(ctx, hk, ttl)
		if err = bs.add(ctx, p, stream, entries...); err != nil {
			return err
		}
		if len(bs.adds) > 0 {
			p.PExpire(ctx, stream, ttl)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if perr != nil {
		return storeError("run log: begin", perr)
	}
	return nil
}

// Append implements runlog.Log.
func (l *RunLog) Append(ctx context.Context, key history.Key, run string, entries ...runlog.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	stream := l.streamKey(key, run)
	var err error
	var bs entryBatches
	defer bs.release()
	_, perr := l.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		if err = bs.add(ctx, p, stream, entries); err != nil {
			return err
		}
		// The expiry of a running run's keys is refreshed with its first
		// batch and then every 1,024 entries: enough for a log whose run
		// died to go, without two more commands per batch.
		if first, last := entries[0].Seq, entries[len(entries)-1].Seq; first == 1 || first>>10 != last>>10 {
			p.PExpire(ctx, stream, l.live)
			p.PExpire(ctx, l.headerKey(key), l.live)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if perr != nil {
		return storeError("run log: append", perr)
	}
	return nil
}

// endScript marks the header ended (if it is still run's) and sets the
// retention of the header and the stream.
var endScript = goredis.NewScript(`
if redis.call('TYPE', KEYS[1]).ok == 'hash' and redis.call('HGET', KEYS[1], 'run') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'ended', '1')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`)

// End implements runlog.Log: the last entries and the end in one
// pipelined round trip.
func (l *RunLog) End(ctx context.Context, key history.Key, run string, retention time.Duration, last ...[]runlog.Entry) error {
	stream := l.streamKey(key, run)
	keys := []string{l.headerKey(key), stream}
	args := []any{run, retention.Milliseconds()}
	var end *goredis.Cmd
	var encErr error
	var bs entryBatches
	defer bs.release()
	// The XADDs' and the script's own results are read below: the
	// pipeline's first error would not say which failed.
	_, _ = l.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		if encErr = bs.add(ctx, p, stream, last...); encErr != nil {
			return encErr
		}
		end = endScript.EvalSha(ctx, p, keys, args...)
		return nil
	})
	if encErr != nil {
		return encErr
	}
	// The last entries are what tells a reader on another replica the
	// run ended: an end whose entries did not land has not happened.
	if err := bs.err(); err != nil {
		return storeError("run log: end", err)
	}
	err := end.Err()
	if err != nil && goredis.HasErrorPrefix(err, "NOSCRIPT") {
		err = endScript.Run(ctx, l.rdb, keys, args...).Err() // loads the script
	}
	if err != nil {
		return storeError("run log: end", err)
	}
	return nil
}

// maxEntryBytes bounds one stream entry. Redis gives a larger one an
// allocation of its own, which costs it many times more per byte
// (measured on Redis 7.0: an XADD of 40 KB took 117 µs, of 10 KB 6 µs),
// so a big batch goes as several entries in one pipeline.
const maxEntryBytes = 8 << 10

// entryBatches queues the XADDs that append entries to a stream: stream
// entries of about maxEntryBytes each, every one with the id 0-<the last
// sequence it holds>. Their buffers come from batchBufs and go back with
// release, once the pipeline has run: encoding into fresh memory cost
// several times what encoding into memory a cache still held did.
type entryBatches struct {
	bufs []*[]byte
	adds []*goredis.StringCmd
}

// err is the first error of the XADDs, once the pipeline has run.
func (bs *entryBatches) err() error {
	for _, c := range bs.adds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, maxEntryBytes+512); return &b }}

// add queues the XADDs of entries, given in one or more slices: a
// stream entry may hold the end of one slice and the start of the next.
func (bs *entryBatches) add(ctx context.Context, p goredis.Pipeliner, stream string, entries ...[]runlog.Entry) error {
	var w batchWriter
	var buf *[]byte
	var last int64
	flush := func() {
		*buf = w.b
		bs.adds = append(bs.adds, p.XAdd(ctx, &goredis.XAddArgs{Stream: stream, ID: "0-" + strconv.FormatInt(last, 10), Values: []any{"b", w.b}}))
		buf = nil
	}
	for _, es := range entries {
		for i := range es {
			if buf == nil {
				buf = batchBufs.Get().(*[]byte)
				bs.bufs = append(bs.bufs, buf)
				w = batchWriter{b: (*buf)[:0], now: time.Now().UnixMilli()}
			}
			if err := w.add(&es[i]); err != nil {
				return err
			}
			last = es[i].Seq
			if len(w.b) >= maxEntryBytes {
				flush()
			}
		}
	}
	if buf != nil {
		flush()
	}
	return nil
}

// release returns the buffers; the pipeline that used them has run. One
// a big entry grew is left to the collector.
func (bs *entryBatches) release() {
	for _, b := range bs.bufs {
		if cap(*b) <= 4*maxEntryBytes {
			batchBufs.Put(b)
		}
	}
	bs.bufs = nil
}

// A stream entry's b field is a line per log entry:
//
//	<sequence> <Unix ms> <type> <data JSON>
//
// with two abbreviations for the bulk of a run, its text deltas:
// "=" for the time says "the previous line's", and the type "+" is a
// part_delta of the previous part_delta's part whose data is just the
// delta, a JSON string. A reply's delta line is then ~15 bytes, not ~95,
// and Redis and go-redis move a sixth of the bytes.
const (
	sameTime = "="
	samePart = "+"
)

// batchWriter writes the lines of one stream entry.
type batchWriter struct {
	b     []byte
	now   int64 // Unix ms: the time of entries logged without one
	ms    int64
	lines int
	part  *agent.PartDelta // the last part_delta line's
}

// add appends e's line. Events are encoded straight into the batch
// (entries may be shared with other readers, a local log's: e is not
// changed).
func (w *batchWriter) add(e *runlog.Entry) error {
	b := strconv.AppendInt(w.b, e.Seq, 10)
	ms := w.now
	if !e.Time.IsZero() {
		ms = e.Time.UnixMilli()
	}
	if w.lines > 0 && ms == w.ms {
		b = append(b, " "+sameTime+" "...)
	} else {
		b = append(strconv.AppendInt(append(b, ' '), ms, 10), ' ')
		w.ms = ms
	}
	w.lines++
	var err error
	switch ev := e.Event.(type) {
	case nil:
		b = append(append(append(b, e.Type...), ' '), e.Data...)
	case *agent.PartDelta:
		if w.part != nil && w.part.ID == ev.ID && w.part.Kind == ev.Kind {
			b = jsonw.String(append(b, samePart+" "...), ev.Delta)
			break
		}
		w.part = ev
		b, err = agent.AppendEvent(append(b, agent.TypePartDelta+" "...), ev)
	default:
		if e.Data != nil {
			b = append(append(append(b, e.Type...), ' '), e.Data...)
			break
		}
		b, err = agent.AppendEvent(append(append(b, agent.EventType(ev)...), ' '), ev)
	}
	w.b = append(b, '\n')
	return err
}

// Current implements runlog.Log.
func (l *RunLog) Current(ctx context.Context, key history.Key) (runlog.Header, error) {
	v, err := l.rdb.HMGet(ctx, l.headerKey(key), "h", "ended").Result()
	switch {
	case isWrongType(err):
		return runlog.Header{}, runlog.ErrNoRun
	case err != nil:
		return runlog.Header{}, storeError("run log: current", err)
	}
	b, ok := v[0].(string)
	if !ok {
		return runlog.Header{}, runlog.ErrNoRun
	}
	var h runlog.Header
	if err := json.Unmarshal([]byte(b), &h); err != nil {
		return runlog.Header{}, fmt.Errorf("history/redisstore: run log: corrupt header: %w", err)
	}
	h.Ended = v[1] == "1"
	return h, nil
}

// isWrongType reports a header key that is not a hash: one written by an
// earlier version (a JSON string). Its run is treated as gone.
func isWrongType(err error) bool { return err != nil && goredis.HasErrorPrefix(err, "WRONGTYPE") }

// readPage bounds the stream entries one read takes from Redis, about
// maxEntryBytes each: a reader far behind (a resume of a long reply)
// reads ~128 KiB a round trip.
const readPage = 16

// chunkEntries bounds the entries a cursor decodes at a time. A page of
// text deltas is ~7,000 entries, ~18 bytes each in the stream and ~130
// decoded: a reader that held a page decoded while its client drained
// the frames held ~1 MB, and 50 resumes at once took a replica's peak
// memory to 300 MiB (120 MiB in chunks).
const chunkEntries = 512

var _ runlog.Cursors = (*RunLog)(nil)

// Read implements runlog.Log: XRANGE for what is there (with the header,
// in one round trip), then XREAD BLOCK to wait for more; readPage stream
// entries at most.
func (l *RunLog) Read(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]runlog.Entry, error) {
	msgs, err := l.fetch(ctx, key, run, after, wait)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	return decodeEntries(msgs, after)
}

// Cursor implements runlog.Cursors. A reader catching up on a long log
// holds a page of the stream and chunkEntries decoded entries, decoded
// into the memory of the chunk before, text deltas' events too (fresh
// memory for each chunk was a third of a resume's CPU: the writes to it,
// and the collections it set off).
func (l *RunLog) Cursor(key history.Key, run string, after int64) runlog.Cursor {
	return &cursor{l: l, key: key, run: run, after: after}
}

type cursor struct {
	l     *RunLog
	key   history.Key
	run   string
	after int64
	page  entryDecoder // what is left of the page last read
	full  bool         // that page was full: more is there at once
	// The last chunk's memory, while more follows at once.
	chunk  []runlog.Entry
	deltas []agent.PartDelta
}

func (c *cursor) Next(ctx context.Context, wait time.Duration) ([]runlog.Entry, error) {
	if c.page.done() {
		msgs, err := c.l.fetch(ctx, c.key, c.run, c.after, wait)
		if err != nil || len(msgs) == 0 {
			c.chunk, c.deltas = nil, nil
			return nil, err
		}
		c.page.reset(msgs, c.after)
		c.full = len(msgs) == readPage
	}
	es, deltas, err := c.page.decode(c.chunk, c.deltas, chunkEntries)
	if len(es) > 0 {
		c.after = es[len(es)-1].Seq
	}
	// A reader that has caught up waits for a running run's next events,
	// often for long: it holds no chunk meanwhile.
	c.chunk, c.deltas = nil, nil
	if !c.page.done() || c.full {
		c.chunk, c.deltas = es, deltas
	}
	return es, err
}

// fetch reads the stream entries that hold entries after seq after, at
// most readPage: what is there, or what comes within wait.
func (l *RunLog) fetch(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]goredis.XMessage, error) {
	stream := l.streamKey(key, run)
	from := "(0-" + strconv.FormatInt(after, 10)
	var rng *goredis.XMessageSliceCmd
	var hdr *goredis.StringCmd
	// Each command's own result says how it went (a missing header is
	// redis.Nil, not a failure), so the pipeline's first error is not
	// the answer.
	_, _ = l.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
		hdr = p.HGet(ctx, l.headerKey(key), "run")
		rng = p.XRangeN(ctx, stream, from, "+", readPage)
		return nil
	})
	cur, err := hdr.Result()
	switch {
	case errors.Is(err, goredis.Nil), isWrongType(err):
		return nil, runlog.ErrNoRun
	case err != nil:
		return nil, storeError("run log: read", err)
	case cur != run:
		return nil, runlog.ErrNoRun
	}
	msgs, err := rng.Result()
	if err != nil {
		return nil, storeError("run log: read", err)
	}
	if len(msgs) > 0 {
		return msgs, nil
	}
	streams, err := l.rdb.XRead(ctx, &goredis.XReadArgs{
		Streams: []string{stream, "0-" + strconv.FormatInt(after, 10)},
		Count:   readPage,
		Block:   max(wait, time.Millisecond),
	}).Result()
	switch {
	case errors.Is(err, goredis.Nil):
		return nil, nil
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, storeError("run log: read", err)
	case len(streams) == 0:
		return nil, nil
	}
	return streams[0].Messages, nil
}

// entryDecoder unpacks stream entries into the log entries after seq
// after (a stream entry may start before it), as many at a time as
// asked. A page is mostly text deltas, so it is decoded with a few
// allocations, not a few per line: the deltas' events come from one
// block, and a delta without escapes is a substring of its stream
// entry.
type entryDecoder struct {
	msgs  []goredis.XMessage // the stream entries not yet begun
	after int64
	id    string           // the stream entry being decoded
	lines string           // what is left of its lines
	t     time.Time        // the time of its last line
	part  *agent.PartDelta // its last part_delta
	first bool             // none of its lines decoded yet
}

func (d *entryDecoder) reset(msgs []goredis.XMessage, after int64) {
	*d = entryDecoder{msgs: msgs, after: after}
}

func (d *entryDecoder) done() bool { return d.lines == "" && len(d.msgs) == 0 }

// decode appends up to n entries (n < 1: all there are) to buf[:0], the
// events of text deltas into deltas[:0] as far as it has room; it
// returns the delta block it used last.
func (d *entryDecoder) decode(buf []runlog.Entry, deltas []agent.PartDelta, n int) ([]runlog.Entry, []agent.PartDelta, error) {
	size := n
	if n < 1 {
		size = strings.Count(d.lines, "\n")
		for _, m := range d.msgs {
			b, _ := m.Values["b"].(string)
			size += strings.Count(b, "\n")
		}
	}
	out := slices.Grow(buf[:0], size)
	deltas = deltas[:0]
	corrupt := func() error { return fmt.Errorf("history/redisstore: run log: corrupt entry in %s", d.id) }
	for n < 1 || len(out) < n {
		if d.lines == "" {
			if len(d.msgs) == 0 {
				d.msgs = nil // a reader waiting for more holds none of the page
				break
			}
			m := d.msgs[0]
			d.msgs = d.msgs[1:]
			d.lines, _ = m.Values["b"].(string)
			d.id, d.part, d.first = m.ID, nil, true
			continue
		}
		line, rest, _ := strings.Cut(d.lines, "\n")
		d.lines = rest
		seq, line, ok := cutSeq(line)
		if !ok {
			return nil, nil, corrupt()
		}
		// The bulk of a reply: a delta of the last part, at the same time.
		if data, ok := strings.CutPrefix(line, sameTime+" "+samePart+" "); ok && !d.first && d.part != nil {
			delta, ok := readDelta(data)
			if !ok {
				return nil, nil, corrupt()
			}
			if seq > d.after { // an append that timed out may have left entries twice: the first counts
				d.after = seq
				if len(deltas) == cap(deltas) {
					deltas = make([]agent.PartDelta, 0, max(size-len(out), 1))
				}
				deltas = append(deltas, agent.PartDelta{Kind: d.part.Kind, ID: d.part.ID, Delta: delta})
				out = append(out, runlog.Entry{Seq: seq, Time: d.t, Type: agent.TypePartDelta, Event: &deltas[len(deltas)-1]})
			}
			continue
		}
		msText, line, _ := strings.Cut(line, " ")
		typ, data, _ := strings.Cut(line, " ")
		switch {
		case typ == "":
			return nil, nil, corrupt()
		case msText != sameTime:
			ms, err := strconv.ParseInt(msText, 10, 64)
			if err != nil {
				return nil, nil, corrupt()
			}
			d.t = time.UnixMilli(ms)
		case d.first:
			return nil, nil, corrupt()
		}
		d.first = false
		e := runlog.Entry{Seq: seq, Time: d.t, Type: typ}
		if typ == samePart {
			delta, ok := readDelta(data)
			if d.part == nil || !ok {
				return nil, nil, corrupt()
			}
			e.Type, e.Event = agent.TypePartDelta, &agent.PartDelta{Kind: d.part.Kind, ID: d.part.ID, Delta: delta}
		} else {
			if data != "" {
				e.Data = json.RawMessage(data)
			}
			if err := e.Decode(); err != nil {
				return nil, nil, fmt.Errorf("history/redisstore: run log: entry %d: %w", seq, err)
			}
			if p, ok := e.Event.(*agent.PartDelta); ok {
				d.part = p
			}
		}
		if seq > d.after {
			d.after = seq
			out = append(out, e)
		}
	}
	return out, deltas, nil
}

// decodeEntries decodes stream entries whole, into fresh memory.
func decodeEntries(msgs []goredis.XMessage, after int64) ([]runlog.Entry, error) {
	var d entryDecoder
	d.reset(msgs, after)
	es, _, err := d.decode(nil, nil, 0)
	return es, err
}

// cutSeq reads the sequence number a line starts with, and the space
// after it.
func cutSeq(line string) (int64, string, bool) {
	var seq int64
	for i := 0; i < len(line) && i < 19; i++ {
		c := line[i]
		switch {
		case c >= '0' && c <= '9':
			seq = seq*10 + int64(c-'0')
		case c == ' ' && i > 0:
			return seq, line[i+1:], true
		default:
			return 0, "", false
		}
	}
	return 0, "", false
}

// readDelta reads a "+" line's data, a JSON string and nothing else. One
// of printable ASCII without escapes (a reply's text, mostly) is taken
// as it stands, a substring of data; others go through jsonw.ReadString.
func readDelta(data string) (string, bool) {
	if len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' {
		s := data[1 : len(data)-1]
		i := 0
		for i < len(s) && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\' {
			i++
		}
		if i == len(s) {
			return s, true
		}
	}
	delta, rest, ok := jsonw.ReadString([]byte(data))
	return delta, ok && len(rest) == 0
}

// note is a runlog.Note on the wire.
type note struct {
	Scope string       `json:"scope"`
	Chat  string       `json:"chat"`
	Run   string       `json:"run"`
	Steer *cmf.Message `json:"steer,omitempty"`
	// Handover: the run's process handed it over (runlog.Note.Handover).
	Handover bool `json:"handover,omitempty"`
}

// Notify implements runlog.Log: it publishes the note to every replica.
func (l *RunLog) Notify(ctx context.Context, n runlog.Note) error {
	b, err := json.Marshal(note{Scope: n.Key.Scope, Chat: n.Key.Chat, Run: n.Run, Steer: n.Steer, Handover: n.Handover})
	if err != nil {
		return err
	}
	channel := l.stopChannel()
	if n.Steer != nil {
		channel = l.steerChannel()
	}
	if err := l.rdb.Publish(ctx, channel, b).Err(); err != nil {
		return storeError("run log: notify", err)
	}
	return nil
}

// Watch implements runlog.Log.
func (l *RunLog) Watch(fn func(runlog.Note)) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	id := l.next
	l.watches[id] = fn
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.watches, id)
	}
}

// watch delivers notes to the watchers. go-redis resubscribes after a
// lost connection; notes published meanwhile are lost: a stop is asked
// again, a steering message runs as a turn of its own once the run ends.
func (l *RunLog) watch() {
	defer close(l.done)
	for msg := range l.sub.Channel() {
		n, ok := decodeNote(msg.Payload, msg.Channel == l.steerChannel())
		if !ok {
			continue
		}
		l.mu.Lock()
		fns := make([]func(runlog.Note), 0, len(l.watches))
		for _, fn := range l.watches {
			fns = append(fns, fn)
		}
		l.mu.Unlock()
		for _, fn := range fns {
			fn(n)
		}
	}
}

// decodeNote reads a note published on the steer channel (steer) or the
// stop one: a steer note carries a valid user message, a stop note none.
func decodeNote(payload string, steer bool) (runlog.Note, bool) {
	var n note
	if json.Unmarshal([]byte(payload), &n) != nil || n.Run == "" || steer != (n.Steer != nil) {
		return runlog.Note{}, false
	}
	if steer && (n.Steer.Role != cmf.RoleUser || n.Steer.Validate() != nil) {
		return runlog.Note{}, false
	}
	if n.Handover && steer {
		return runlog.Note{}, false
	}
	return runlog.Note{Key: history.Key{Scope: n.Scope, Chat: n.Chat}, Run: n.Run, Steer: n.Steer, Handover: n.Handover}, true
}

// Listeners implements runlog.Peers: the connections subscribed to the
// run log's notes, one per process's RunLog (PUBSUB NUMSUB; on Redis
// Cluster, those of the node the client asks).
func (l *RunLog) Listeners(ctx context.Context) (int, error) {
	m, err := l.rdb.PubSubNumSub(ctx, l.stopChannel()).Result()
	if err != nil {
		return 0, storeError("run log: listeners", err)
	}
	return int(m[l.stopChannel()]), nil
}
