package runlog

import (
	"context"
	"time"

	"github.com/agentui/agentui/history"
)

// Cursor reads one run's log for one reader: each Next returns the
// entries after the last one it returned, as [Log.Read] does (ErrNoRun
// when the log is gone or another run's; when there are none yet, it
// waits up to wait and may return none).
//
// The entries Next returns, and the events of their text deltas
// (*agent.PartDelta, the bulk of a run), are valid until the next call: a
// log that decodes what it reads (one on Redis) decodes a reader's log
// a chunk at a time into the same memory, so a reader catching up on a
// long run holds and allocates a chunk, not the run. Other events are
// never reused.
type Cursor interface {
	Next(ctx context.Context, wait time.Duration) ([]Entry, error)
}

// Cursors is implemented by a Log with cursors of its own.
type Cursors interface {
	Cursor(key history.Key, run string, after int64) Cursor
}

// NewCursor returns a cursor over run's log from after seq after: the
// log's own when it has them ([Cursors]), else one that calls its Read.
func NewCursor(l Log, key history.Key, run string, after int64) Cursor {
	if c, ok := l.(Cursors); ok {
		return c.Cursor(key, run, after)
	}
	return &readCursor{l: l, key: key, run: run, after: after}
}

type readCursor struct {
	l     Log
	key   history.Key
	run   string
	after int64
}

func (c *readCursor) Next(ctx context.Context, wait time.Duration) ([]Entry, error) {
	es, err := c.l.Read(ctx, c.key, c.run, c.after, wait)
	if len(es) > 0 {
		c.after = es[len(es)-1].Seq
	}
	return es, err
}
