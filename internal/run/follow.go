package run

import (
	"context"
	"errors"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// Source is a run's log as a reader finds it.
type Source struct {
	Log    runlog.Log
	Key    history.Key
	Header runlog.Header
	// Remote says the log is another process's run.
	Remote bool
}

// AsLogged is src read as its entries were logged: a log in this
// process gives the deltas it has compacted one by one again, as a
// shared log holds them (runlog.Memory.AsLogged).
func (src Source) AsLogged() Source {
	if m, ok := src.Log.(*runlog.Memory); ok {
		src.Log = m.AsLogged()
	}
	return src
}

// Find returns the log that holds key's latest run: this engine's own
// when the run is this process's and still going, else the shared one,
// which every replica's runs reach. A run of this process that has ended
// is only the latest while the shared log says so: another replica may
// be producing the chat's next reply. Its log is read locally then,
// which costs a fraction of the shared one's. runlog.ErrNoRun: the chat
// has no run.
func (e *env) Find(ctx context.Context, key history.Key) (Source, error) {
	local, lerr := e.local.Current(ctx, key)
	if lerr == nil && (!local.Ended || e.shared == nil) {
		return Source{Log: e.local, Key: key, Header: local}, nil
	}
	if e.shared == nil {
		return Source{}, runlog.ErrNoRun
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.StoreTimeout)
	defer cancel()
	hdr, err := e.shared.Current(ctx, key)
	switch {
	case lerr == nil && (err != nil || hdr.Run == local.Run):
		// The shared log has nothing newer, or cannot say: this
		// process's run is the latest it knows.
		return Source{Log: e.local, Key: key, Header: local}, nil
	case err != nil:
		return Source{}, err
	}
	return Source{Log: e.shared, Key: key, Header: hdr, Remote: true}, nil
}

// voided reports whether a reader that has shown the entries up to mute
// skips entry seq: it is in a step a re-drive replaced, of which the
// reader has shown nothing.
func voided(ranges [][2]int64, seq, mute int64) bool {
	for _, r := range ranges {
		if r[0] <= seq && seq <= r[1] && mute < r[0] {
			return true
		}
	}
	return false
}

// Follow writes a run's log to a stream until the log ends, the client
// goes away, or the log is lost, a page at a time (runlog.Cursor: a
// remote log's reader holds one page, not the run). Entries up to mute are
// encoded but not written: a stream resumed after an event needs the
// encoder in the state that event left it in. A remote source's run is
// another process's: one that goes quiet for long is checked for a dead
// process (recoverDead).
//
// pace, when set, hears how far the stream has got.
func (e *env) Follow(ctx context.Context, src *Source, sse *wire.SSEWriter, enc wire.Encoder, mute int64, pace func(seq int64, leave bool)) {
	l, key, run, remote := src.Log, src.Key, src.Header.Run, src.Remote
	wait := e.cfg.KeepAlive
	if wait <= 0 {
		wait = time.Minute
	}
	if remote {
		wait = min(wait, e.cfg.LockTTL/10)
	}
	if r := src.Header.Redriven; r > 0 && mute > r && mute <= r+runlog.RedriveGap {
		// The reader saw what a process that died sent but never copied:
		// it reads on from the last entry the log kept.
		mute = r
	}
	var after int64
	var failing time.Time // since when the shared log has not answered
	cur := runlog.NewCursor(l, key, run, 0)
	for {
		es, err := cur.Next(ctx, wait)
		if remote && err != nil && ctx.Err() == nil && !errors.Is(err, runlog.ErrNoRun) && e.waitForShared(ctx, &failing, key, run, err) {
			continue
		}
		failing = time.Time{}
		switch {
		case err != nil && ctx.Err() != nil && ShuttingDown(ctx):
			// Shutdown cuts the run too: follow it to its end, which
			// tells the client why.
			ctx = context.WithoutCancel(ctx)
			continue
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			e.unreadable(key, run, err, sse, enc)
			return
		}
		if len(es) == 0 {
			if remote && e.recoverDead(key, run) {
				continue
			}
			if e.cfg.KeepAlive > 0 {
				sse.Comment("keep-alive")
			}
		}
		for i := range es {
			en := &es[i]
			after = en.Seq
			if voided(src.Header.Voided, en.Seq, mute) {
				continue
			}
			sse.Mute = en.Seq <= mute
			sse.SetID(en.Seq)
			switch {
			case en.Event != nil:
				enc.Encode(en.Event)
			case en.Type == runlog.TypeFailed:
				enc.Fail(en.Failed())
			case en.Type == runlog.TypeEnded:
				enc.Close()
				sse.Mute = false
				_ = sse.Flush()
				return
			case en.Type == runlog.TypeMoved && e.shared != nil:
				// Handed over to another replica: read on from the
				// shared log, where it goes on.
				l, remote = e.shared, true
				wait = min(wait, e.cfg.LockTTL/10)
				cur = runlog.NewCursor(l, key, run, after-1)
			}
		}
		if sse.Flush() != nil {
			return
		}
		if pace != nil && len(es) > 0 {
			pace(after, false)
		}
	}
}

// waitForShared waits a while for a shared log that does not answer and
// reports whether to read again. The shared store may be back soon (a
// failover, a pause): the run goes on meanwhile, so its reader waits too,
// for as long as the run's lock would last without it (since failing).
// Apart from Follow, as the errors below are, to keep the frame a stream
// holds small (TestStreamFitsStartingStack).
//
//go:noinline
func (e *env) waitForShared(ctx context.Context, failing *time.Time, key history.Key, run string, err error) bool {
	if failing.IsZero() {
		*failing = time.Now()
		e.log.Warn("the shared run log does not answer; waiting for it", "chat", key.Chat, "run", run, "error", err)
	}
	if time.Since(*failing) >= e.cfg.LockTTL {
		return false
	}
	select {
	case <-time.After(min(time.Since(*failing)/4+50*time.Millisecond, time.Second)):
	case <-ctx.Done():
	}
	return true
}

// unreadable ends a stream whose run's log could not be read.
//
//go:noinline
func (e *env) unreadable(key history.Key, run string, err error, sse *wire.SSEWriter, enc wire.Encoder) {
	e.log.Warn("the run's log could not be read", "chat", key.Chat, "run", run, "error", err)
	enc.Fail(wire.ErrorMessage)
	enc.Close()
	_ = sse.Flush()
}
