package run

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// mirror copies a run's log to the shared log (WithRunLog) for readers on
// other replicas. It is a reader of the run's local log, so the run pays
// nothing per event for it: whatever the run produced while the last
// append was in flight goes in the next one, so a burst costs a few
// round trips, and a slow store delays no one but remote readers.
type mirror struct {
	e      *env
	key    history.Key
	header runlog.Header
	stop   context.CancelFunc // ends the wait for more entries
	ctx    context.Context
	done   chan struct{}
	after  int64            // the last sequence copied (read after done)
	rest   [][]runlog.Entry // what the run logged after the last append, as ReadDeltas gives it, not joined: it goes with the end (read after done)
	last   []runlog.Entry   // the run's last entries: they end the shared log, after rest
	begun  bool             // the shared log has the run's header (read after done)
	buf    []runlog.Entry   // gather's

	// For sync: copied is the last sequence the shared log has, kick
	// cuts the copy's wait short, and copiedCh is closed (and replaced)
	// after each copy.
	copied   atomic.Int64
	kick     chan struct{}
	copiedMu sync.Mutex
	copiedCh chan struct{}
}

// A mirror append waits up to mirrorWait for more entries, unless it has
// a full chunk of the local log (mirrorBatch). The first waits longer,
// mirrorFirstWait: most replies are short, and one that ends within it
// is written whole in one round trip (Log.Write) instead of begun and
// ended in two; remote readers see a run's start that much later.
//
// An append takes the rest of one of the local log's chunks, shared, or
// the log's first, small chunks together (see gather).
const (
	mirrorBatch     = 512 // runlog.Memory's largest chunk
	mirrorWait      = time.Millisecond
	mirrorFirstWait = 20 * time.Millisecond
)

// mirrorStart is where a mirror starts when the shared log has the run's
// start already (a re-drive): after the entry with that sequence.
type mirrorStart struct{ after int64 }

func newMirror(e *env, key history.Key, header runlog.Header, from *mirrorStart) *mirror {
	m := &mirror{e: e, key: key, header: header, done: make(chan struct{}), kick: make(chan struct{}, 1), copiedCh: make(chan struct{})}
	if from != nil {
		m.after, m.begun = from.after, true
		m.copied.Store(from.after)
	}
	m.ctx, m.stop = context.WithCancel(context.Background())
	go m.loop()
	return m
}

// finish waits, for one store timeout at most, until the mirror's append
// in flight is done, then ends the shared log with what the mirror had
// not copied yet and the run's last entries (one round trip: the end of a
// reply waits for this). It reports whether the shared log has its end;
// when it has not (the store did not answer in time), the run keeps its
// lock while endLater tries again, so that remote readers, which take a
// free lock and an open log for a dead run, wait for the end instead.
func (m *mirror) finish(last []runlog.Entry) bool {
	m.stop()
	m.last = last
	ctx, cancel := context.WithTimeout(context.Background(), m.e.cfg.StoreTimeout)
	defer cancel()
	select {
	case <-m.done:
		return m.end(ctx) == nil
	case <-ctx.Done():
		m.e.log.Warn("the shared run log is behind; its end is written later", "chat", m.key.Chat, "run", m.header.Run)
		return false
	}
}

// flush copies what the mirror has not copied yet to the shared log,
// without ending it: the run is handed over to another replica, which
// goes on with the log. It reports whether the shared log has it all.
func (m *mirror) flush() bool {
	m.stop()
	ctx, cancel := context.WithTimeout(context.Background(), m.e.cfg.StoreTimeout)
	defer cancel()
	select {
	case <-m.done:
	case <-ctx.Done():
		return false
	}
	var rest []runlog.Entry
	for _, part := range m.rest {
		rest = append(rest, part...)
	}
	var err error
	switch {
	case !m.begun:
		err = m.e.shared.Begin(ctx, m.key, m.header, rest...)
	case len(rest) > 0:
		err = m.e.shared.Append(ctx, m.key, m.header.Run, rest...)
	}
	if err != nil {
		m.e.log.Warn("could not copy a run handed over to the shared run log", "chat", m.key.Chat, "error", err)
		return false
	}
	m.rest = nil
	return true
}

// end writes what the mirror has not copied and the run's last entries,
// ending the shared log.
func (m *mirror) end(ctx context.Context) error {
	var err error
	if !m.begun { // the run ended before the mirror's first copy: all of it at once
		err = m.e.shared.Write(ctx, m.key, m.header, m.e.cfg.Retention, append(m.rest, m.last)...)
	} else {
		err = m.e.shared.End(ctx, m.key, m.header.Run, m.e.cfg.Retention, append(m.rest, m.last)...)
	}
	if err != nil {
		m.e.log.Warn("could not end the shared run log; trying again", "chat", m.key.Chat, "error", err)
		return err
	}
	m.last, m.rest, m.buf = nil, nil, nil
	return nil
}

// endLater tries to end the shared log until it works or until, its
// lock lapsing, remote readers would take the run for dead anyway. It
// waits for the copy in flight first: the entries past it come after
// what it copies.
func (m *mirror) endLater(until time.Time) {
	select {
	case <-m.done:
	case <-time.After(time.Until(until)):
		m.e.log.Error("the shared run log stayed behind; remote readers will find this run cut short (its reply is stored)", "chat", m.key.Chat, "run", m.header.Run)
		return
	}
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), m.e.cfg.StoreTimeout)
		err := m.end(ctx)
		cancel()
		if err == nil {
			m.e.log.Info("the shared run log was ended after retrying", "chat", m.key.Chat, "run", m.header.Run)
			return
		}
		if !time.Now().Add(wait).Before(until) {
			m.e.log.Error("could not end the shared run log; remote readers will find this run cut short (its reply is stored)", "chat", m.key.Chat, "run", m.header.Run, "error", err)
			return
		}
		time.Sleep(wait)
	}
}

func (m *mirror) loop() {
	defer close(m.done)
	log := m.e.log.With("chat", m.key.Chat, "run", m.header.Run)
	failures := 0
	for {
		// What the mirror copies is what local readers were given, as
		// they were given it (ReadDeltas, not Read): a reader resuming on
		// another replica from an entry it was given here finds that
		// entry there, though the local log has merged it since.
		es, err := m.e.local.ReadDeltas(m.ctx, m.key, m.header.Run, m.after, time.Hour) // waits for more, until finish
		switch {
		case err != nil && m.ctx.Err() != nil:
			m.takeRest() // finishing: what is left goes with the end
			return
		case err != nil:
			return // the local log is gone: the run ended
		case len(es) == 0:
			continue
		}
		if len(es) < mirrorBatch {
			// A burst is under way or a slow agent spoke: either way a
			// moment's wait lets a burst share one append (remote readers
			// trail by at most this much more). The run's end cuts it
			// short: then the rest goes with the end.
			select {
			case <-time.After(m.wait()):
			case <-m.kick:
			case <-m.ctx.Done():
				m.takeRest()
				return
			}
			if more := m.gather(); len(more) > len(es) {
				es = more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.e.cfg.StoreTimeout)
		if m.begun {
			err = m.e.shared.Append(ctx, m.key, m.header.Run, es...)
		} else {
			// The header goes with the first copy: one round trip.
			err = m.e.shared.Begin(ctx, m.key, m.header, es...)
		}
		cancel()
		if err != nil {
			// A gap would make every remote reader wrong: the same
			// entries are tried again, with what came since, once the
			// store answers; remote readers wait meanwhile (the run holds
			// its lock).
			if failures++; failures == 1 {
				log.Warn("could not copy to the shared run log; trying again", "error", err)
			}
			select {
			case <-time.After(min(time.Duration(failures)*100*time.Millisecond, time.Second)):
				continue
			case <-m.ctx.Done():
				m.takeRest()
				return
			}
		}
		if failures > 0 {
			log.Info("the shared run log caught up", "failed_copies", failures)
			failures = 0
		}
		m.begun = true
		m.after = es[len(es)-1].Seq
		m.copied.Store(m.after)
		m.copiedMu.Lock()
		close(m.copiedCh)
		m.copiedCh = make(chan struct{})
		m.copiedMu.Unlock()
	}
}

// sync waits until the shared log has the run's entries up to seq,
// cutting the copy's wait short: what must be durable before an effect
// outside the server (a tool call) is. False when ctx ends first or the
// mirror has stopped.
func (m *mirror) sync(ctx context.Context, seq int64) bool {
	for m.copied.Load() < seq {
		select {
		case m.kick <- struct{}{}:
		default:
		}
		m.copiedMu.Lock()
		ch := m.copiedCh
		m.copiedMu.Unlock()
		if m.copied.Load() >= seq {
			return true
		}
		select {
		case <-ch:
		case <-m.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// wait is how long the next copy waits for more entries.
func (m *mirror) wait() time.Duration {
	if m.begun {
		return mirrorWait
	}
	return mirrorFirstWait
}

// gather returns what the run's local log holds after the last append:
// the rest of one chunk (shared), or, while they hold at most
// mirrorBatch entries together, several chunks copied into the mirror's
// own slice (a reply's first 504 entries are in six growing chunks: one
// append, not six).
func (m *mirror) gather() []runlog.Entry {
	es, _ := m.e.local.ReadDeltas(m.ctx, m.key, m.header.Run, m.after, 0)
	for joined := false; len(es) > 0 && len(es) < mirrorBatch; joined = true {
		more, _ := m.e.local.ReadDeltas(m.ctx, m.key, m.header.Run, es[len(es)-1].Seq, 0)
		if len(more) == 0 || len(es)+len(more) > mirrorBatch {
			break
		}
		if !joined {
			m.buf = append(m.buf[:0], es...)
		}
		m.buf = append(m.buf, more...)
		es = m.buf
	}
	return es
}

// takeRest keeps what the run logged after the last append, for finish,
// in the slices ReadDeltas gives, not joined (a mirror far behind a long
// reply would copy a megabyte, and hundreds of runs end together).
func (m *mirror) takeRest() { m.rest = m.chunks(m.after) }

// chunks returns what the run logged after seq after, a chunk of the
// local log at a time (see runlog.Memory.ReadDeltas).
func (m *mirror) chunks(after int64) [][]runlog.Entry {
	var parts [][]runlog.Entry
	for {
		es, err := m.e.local.ReadDeltas(m.ctx, m.key, m.header.Run, after, 0)
		if err != nil || len(es) == 0 {
			return parts
		}
		parts = append(parts, es)
		after = es[len(es)-1].Seq
	}
}

// recoverDead checks whether the run a remote reader follows is still
// alive, when its log has gone quiet: its lock free means its process
// died (a live run ends its shared log before it releases the lock). Then
// recoverDead finishes the run for it, under the lock, and reports true.
func (e *env) recoverDead(key history.Key, run string) bool {
	token := ids.New()
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.StoreTimeout)
	defer cancel()
	if err := e.cfg.Locker.Acquire(ctx, key, token, e.cfg.LockTTL); err != nil {
		return false // alive (ErrBusy), or the store cannot say: ask again later
	}
	redriven := false
	defer func() {
		if redriven {
			return // the lock is the re-driven run's now
		}
		ctx, cancel := context.WithTimeout(context.Background(), e.cfg.StoreTimeout)
		defer cancel()
		if err := e.cfg.Locker.Release(ctx, key, token); err != nil {
			e.log.Warn("could not release the lock taken to finish a dead run; it expires on its own", "chat", key.Chat, "error", err)
		}
	}()
	hdr, err := e.shared.Current(ctx, key)
	if err != nil || hdr.Run != run {
		return err == nil // another run began: the caller finds this one gone
	}
	if e.engine != nil && e.engine.Closing() && hdr.Input != nil && e.cfg.Redrive != nil {
		return false // shutting down: a replica that stays runs it again
	}
	redriven, err = e.finishOrRedrive(ctx, key, hdr, token)
	return err == nil
}

// finishDead ends the shared log of a run whose process died, holding
// the chat's lock: the reply it had logged is stored (stop reason
// aborted, unless it was stored already), and the log ends with
// DiedMessage. A log that ended is left alone.
func (e *env) finishDead(ctx context.Context, key history.Key, hdr runlog.Header) error {
	if hdr.Ended {
		return nil
	}
	var entries []runlog.Entry
	for {
		es, err := e.shared.Read(ctx, key, hdr.Run, int64(len(entries)), time.Millisecond)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			break
		}
		entries = append(entries, es...)
	}
	if n := len(entries); n > 0 && entries[n-1].Type == runlog.TypeEnded {
		return nil // it ended; only End was lost
	}
	log := e.log.With("chat", key.Chat, "run", hdr.Run)
	rec := agent.NewRecorder()
	var bal agent.Balancer
	for _, e := range entries {
		if e.Event != nil {
			bal.Add(e.Event, rec.Add)
		}
	}
	bal.End(rec.Add)
	if !bal.Finished() {
		rec.Interrupt(cmf.StopAborted)
	}
	msgs := withContent(toldOn(rec.Messages(), wire.DiedMessage))
	conv, err := e.cfg.Store.Load(ctx, key)
	if err != nil {
		return err
	}
	last := int64(0)
	if n := len(entries); n > 0 {
		last = entries[n-1].Seq
	}
	// Its end goes RedriveGap past the last entry the log kept: its
	// process may have sent its readers more (see runlog.RedriveGap), and
	// a reader that read up to one of those reads on from last.
	h := hdr
	h.Redriven = last
	if err := e.shared.Begin(ctx, key, h); err != nil {
		return err
	}
	next := last + runlog.RedriveGap
	if len(msgs) > 0 && holds(conv.Messages, msgs[0].ID()) {
		// Its process stored the reply but could not end this log (the
		// store went away for longer than its lock): the reply is whole
		// in the conversation, not cut short.
		err = e.shared.End(ctx, key, hdr.Run, e.cfg.Retention, []runlog.Entry{runlog.FailedEntry(next+1, wire.EndNotShownMessage), runlog.EndedEntry(next + 2)})
		log.Warn("ended the log of a run whose reply was stored but whose log was not ended", "error", err)
		return err
	}
	if n := len(hdr.Turn); n > 0 && !holds(conv.Messages, hdr.Turn[n-1].ID()) {
		msgs = append(hdr.Turn[:n:n], msgs...) // it died before its turn was stored
	}
	if len(msgs) > 0 {
		if _, err := e.cfg.Store.Write(ctx, key, conv.Version, history.KeepAll, msgs...); err != nil {
			return err
		}
	}
	err = e.shared.End(ctx, key, hdr.Run, e.cfg.Retention, []runlog.Entry{runlog.FailedEntry(next+1, wire.DiedMessage), runlog.EndedEntry(next + 2)})
	log.Warn("finished the run of a server that stopped; its partial reply is stored", "messages", len(msgs), "error", err)
	return err
}

// holds reports whether msgs has a message with id id (looking from the
// end, where a run's reply would be).
func holds(msgs []cmf.Message, id string) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].ID() == id {
			return true
		}
	}
	return false
}
