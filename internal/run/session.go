package run

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// Session is one turn's hold on a stored conversation: the lock, the
// version it builds on, its plan, and its write.
//
// The lock is extended on a timer for as long as the session lives (not
// on writes: a stream whose client stopped reading must not outlive it),
// and a run whose lock is lost is stopped. The session ends with Release,
// which retries in the background until the lock is gone or would have
// expired anyway, so a store that comes back finds the chat usable.
type Session struct {
	Key history.Key
	// Plan is the turn planned on the loaded conversation: what its
	// commit cuts and adds, and a refusal.
	Plan turn.Plan

	e       *env
	token   string
	version history.Version
	stored  int // how many messages the conversation held when loaded
	log     *slog.Logger

	// The plan's write (what it cuts and adds) is committed while the run
	// starts, so the first bytes do not wait for that round trip.
	// committed is closed when it is done; commitErr says how it went.
	// When it failed, save makes it with the reply.
	committed chan struct{}
	commitErr error

	held atomic.Int64 // when the lock was last known held (Unix ns)
	lost atomic.Bool  // the lock was lost and the run stopped
	// keepMu is held while the lock is extended; keep is the timer of
	// the next extension, nil once Release stopped it.
	keepMu   sync.Mutex
	keep     *time.Timer
	released bool
}

// ErrClientGone: the client left before the request could be served; no
// response is written.
var ErrClientGone = errors.New("the client went away")

// Open locks key's conversation and loads it: the stored copy is the
// truth the turn is planned on. A run whose process died left its log
// open: it is finished first (its partial reply is stored). The caller
// sets the session's Plan, and Releases the session unless it Starts a
// run with it. The errors are refusals: 409 busy, 503, or ErrClientGone.
func (e *env) Open(ctx context.Context, key history.Key, log *slog.Logger) (*Session, history.Conversation, error) {
	s := &Session{e: e, Key: key, token: ids.New(), log: log}
	lctx, cancel := context.WithTimeout(ctx, e.cfg.StoreTimeout)
	defer cancel()
	conv, err := history.AcquireLoad(lctx, e.cfg.Store, e.cfg.Locker, key, s.token, e.cfg.LockTTL)
	switch {
	case errors.Is(err, history.ErrBusy):
		return nil, conv, busy()
	case err != nil:
		if !errors.Is(err, history.ErrUnavailable) {
			// The lock may have been taken before the reply was lost.
			e.Go(func() { s.releaseEventually(time.Now()) })
		}
		if ctx.Err() != nil {
			return nil, conv, ErrClientGone
		}
		return nil, conv, wire.Unavailable("conversation history is unavailable", err)
	}
	s.held.Store(time.Now().UnixNano())
	if e.shared != nil {
		if hdr, err := e.shared.Current(lctx, key); err == nil && !hdr.Ended && hdr.Lock != s.token {
			redriven, err := e.finishOrRedrive(lctx, key, hdr, s.token)
			switch {
			case redriven:
				// Its run goes on here, holding the lock s took: the chat
				// is busy with it.
				return nil, conv, busy()
			case err != nil:
				s.Release()
				return nil, conv, wire.Unavailable("conversation history is unavailable", err)
			}
			if conv, err = e.cfg.Store.Load(lctx, key); err != nil {
				s.Release()
				return nil, conv, wire.Unavailable("conversation history is unavailable", err)
			}
		}
	}
	s.version, s.stored = conv.Version, len(conv.Messages)
	return s, conv, nil
}

// Switch makes the branch through the off-branch message id the active
// one (history.Brancher), for a turn that builds on that branch (a client
// that shows it), and returns the conversation then, which the turn is
// planned on. history.ErrNoBranch when the store keeps no branches or
// none has id.
func (s *Session) Switch(ctx context.Context, id string) (history.Conversation, error) {
	b, ok := s.e.cfg.Store.(history.Brancher)
	if !ok {
		return history.Conversation{}, history.ErrNoBranch
	}
	ctx, cancel := context.WithTimeout(ctx, s.e.cfg.StoreTimeout)
	defer cancel()
	if _, err := b.Switch(ctx, s.Key, s.version, id); err != nil {
		return history.Conversation{}, err
	}
	conv, err := s.e.cfg.Store.Load(ctx, s.Key)
	if err != nil {
		return history.Conversation{}, err
	}
	s.version, s.stored = conv.Version, len(conv.Messages)
	return conv, nil
}

// busy refuses a turn while another run holds the chat.
func busy() error {
	return &wire.Error{Status: http.StatusConflict, Message: "a reply is still being produced for this chat", Code: wire.CodeBusy}
}

// IsBusy reports whether err is Open's refusal of a chat whose reply is
// still being produced.
func IsBusy(err error) bool {
	var e *wire.Error
	return errors.As(err, &e) && e.Code == wire.CodeBusy
}

// supersedeWait bounds how long Supersede waits for the run it stopped
// to store its reply and let go of the chat. A live run does in
// milliseconds, on any replica. One whose server died holds the chat
// until its lock lapses, and a tool that ignores its context may hold it
// for long: the request is refused busy then, at once rather than after a
// wait nobody sees, and its client resumes the run to learn how it ends.
const supersedeWait = 2 * time.Second

// Supersede opens key's session for a request that Open refused because
// a reply is being produced, when the request shows that reply (seen,
// given the run's header): its client stopped reading it and sends
// again, which is all useChat's stop() does (it aborts its fetch; the run
// goes on, as it must for a reload). The run is stopped as Stop does, on
// whichever replica runs it; once it has stored its partial reply
// (stopped) and let go of the chat, the session opens on the stored
// conversation. A request that does not show the running reply (a second
// tab) is refused busy, as is one whose run does not let go within
// supersedeWait.
func (e *Engine) Supersede(ctx context.Context, key history.Key, log *slog.Logger, seen func(runlog.Header) bool) (*Session, history.Conversation, error) {
	src, err := e.Find(ctx, key)
	switch {
	case errors.Is(err, runlog.ErrNoRun) || err == nil && src.Header.Ended:
		// Its run has just ended: the lock goes in a moment.
	case err != nil:
		return nil, history.Conversation{}, wire.Unavailable("the run log is unavailable", err)
	case !seen(src.Header):
		return nil, history.Conversation{}, busy()
	default:
		if err := e.stopRun(ctx, src); err != nil {
			return nil, history.Conversation{}, err
		}
		log.Info("the client sent again after it stopped reading the running reply: stopped it", "run", src.Header.Run)
	}
	deadline := time.Now().Add(supersedeWait)
	wait := 5 * time.Millisecond
	for {
		var ended <-chan struct{}
		if rn := e.runs.get(key, src.Header.Run); rn != nil {
			ended = rn.done
		}
		s, conv, err := e.Open(ctx, key, log)
		if !IsBusy(err) || !time.Now().Add(wait).Before(deadline) {
			return s, conv, err
		}
		// Another request may have taken the chat meanwhile: its run is
		// not this request's to stop.
		if now, err := e.Find(ctx, key); err == nil && !now.Header.Ended && now.Header.Run != src.Header.Run {
			return nil, conv, busy()
		}
		select {
		case <-ended:
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, conv, ErrClientGone
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// commit starts the plan's write: what it cuts of the stored
// conversation and what it adds. The run does not wait for it; if it
// fails, save makes it with the reply.
func (s *Session) commit() {
	p := &s.Plan
	if len(p.Add) == 0 && p.Keep == s.stored {
		return
	}
	s.committed = make(chan struct{})
	go func() {
		defer close(s.committed)
		// Not the request's context: a client that leaves at once still
		// leaves its message in the conversation.
		ctx, cancel := context.WithTimeout(context.Background(), s.e.cfg.StoreTimeout)
		defer cancel()
		v, err := s.write(ctx, s.version, p.Keep, p.Add)
		if err != nil {
			s.commitErr = err
			return
		}
		s.version = v
	}()
}

// write stores a turn's messages: a write that cuts (an edit, a
// regeneration) keeps what it cuts as another branch (history.Brancher).
func (s *Session) write(ctx context.Context, expect history.Version, keep int, msgs []cmf.Message) (history.Version, error) {
	if keep != history.KeepAll && keep < s.stored {
		return history.WriteBranch(ctx, s.e.cfg.Store, s.Key, expect, keep, msgs...)
	}
	return s.e.cfg.Store.Write(ctx, s.Key, expect, keep, msgs...)
}

func (s *Session) heldAt() time.Time { return time.Unix(0, s.held.Load()) }

// keepLock extends the lock every third of its TTL until Release. When
// another request holds it, or it could not be extended for a whole TTL
// (it has expired, and another request may take it), the run is stopped
// with stop and the session marked lost. A timer, not a goroutine, waits
// between extensions: a run that streams for minutes (an idle stream)
// holds no stack for it.
func (s *Session) keepLock(stop context.CancelFunc) {
	ttl := s.e.cfg.LockTTL
	s.keepMu.Lock()
	defer s.keepMu.Unlock()
	s.keep = time.AfterFunc(ttl/3, func() {
		s.keepMu.Lock()
		defer s.keepMu.Unlock()
		if s.keep == nil {
			return // released
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.e.cfg.StoreTimeout)
		err := s.e.cfg.Locker.Acquire(ctx, s.Key, s.token, ttl)
		cancel()
		switch {
		case err == nil:
			s.held.Store(time.Now().UnixNano())
		case errors.Is(err, history.ErrBusy) || time.Since(s.heldAt()) >= ttl:
			s.log.Error("lost the conversation lock; stopping the run", "error", err)
			s.lost.Store(true)
			stop()
			return
		default:
			s.log.Warn("could not extend the conversation lock; retrying", "error", err)
		}
		s.keep.Reset(ttl / 3)
	})
}

// Release stops extending the lock and gives it up, retrying in the
// background when the store does not answer.
func (s *Session) Release() {
	if s.released {
		return
	}
	s.released = true
	// An extension under way ends first: the lock is not taken again
	// after it is given up.
	s.keepMu.Lock()
	if s.keep != nil {
		s.keep.Stop()
		s.keep = nil
	}
	s.keepMu.Unlock()
	if s.tryRelease() != nil {
		held := s.heldAt()
		s.e.Go(func() { s.releaseEventually(held) })
	}
}

func (s *Session) tryRelease() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.e.cfg.StoreTimeout)
	defer cancel()
	return s.e.cfg.Locker.Release(ctx, s.Key, s.token)
}

// releaseEventually retries releasing the lock until it works or the lock,
// last held at held, has expired on its own.
func (s *Session) releaseEventually(held time.Time) {
	select {
	case s.e.releasing <- struct{}{}:
		defer func() { <-s.e.releasing }()
	default:
		s.log.Warn("too many lock releases pending; this lock expires on its own")
		return
	}
	until := held.Add(s.e.cfg.LockTTL)
	wait := 100 * time.Millisecond
	for {
		err := s.tryRelease()
		if err == nil {
			return
		}
		if !time.Now().Add(wait).Before(until) {
			s.log.Warn("could not release the conversation lock; it expires on its own", "error", err)
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

// write is what a session still has to store: the plan's own write when
// its commit failed (what it cuts, and its messages), then the reply, at
// the version they build on.
type write struct {
	version history.Version
	keep    int // stored messages kept (history.KeepAll: all)
	msgs    []cmf.Message
	turn    int // how many of msgs lead with the plan's own messages
}

// pending waits for the plan's commit and returns what is left to store
// of the run's result.
func (s *Session) pending(res result, out outcome) *write {
	if s.committed != nil {
		<-s.committed
	}
	rec := res.rec
	if reason := out.stopReason(); reason != "" && (res.finished == nil || res.err != nil) {
		rec.Interrupt(reason) // a run that finished keeps its steps' reasons
	}
	w := &write{version: s.version, keep: history.KeepAll, msgs: withContent(out.told(rec.Messages()))}
	if s.commitErr != nil {
		s.log.Warn("storing the turn failed; it is stored with the reply", "error", s.commitErr)
		add := s.Plan.Add
		w.keep, w.turn = s.Plan.Keep, len(add)
		w.msgs = append(add[:len(add):len(add)], w.msgs...)
	}
	return w
}

// save stores w, retrying for one store timeout in all, so that a store
// that is down or frozen delays the end of a stream by no more than that.
// Its outcome is truthful: maybeSaved when a write that timed out may
// still land.
func (s *Session) save(w *write) (saveOutcome, error) {
	return s.persist(w, time.Now().Add(s.e.cfg.StoreTimeout))
}

// persist tries to store w until it is stored, certainly cannot be, or
// the deadline passes.
func (s *Session) persist(w *write, deadline time.Time) (saveOutcome, error) {
	if len(w.msgs) == 0 {
		return saved, nil
	}
	var err error
	unknown := false
	wait := 50 * time.Millisecond
	for {
		var out saveOutcome
		out, err = s.attempt(w, deadline)
		switch out {
		case saved:
			s.version = w.version
			return saved, nil
		case notSaved:
			return notSaved, err
		case maybeSaved:
			unknown = true
		}
		if !time.Now().Add(wait).Before(deadline) {
			break
		}
		if out != savePending || err != nil {
			time.Sleep(wait)
			wait = min(4*wait, time.Second)
		}
	}
	if unknown {
		return maybeSaved, err
	}
	return notSaved, err
}

// attempt makes one append. A conflict is checked against the stored
// tail: an earlier attempt that timed out may have landed (then it is
// saved), the turn's own messages may have landed without the reply (then
// the rest is tried at once), or someone else wrote (then it cannot be,
// and any attempt of ours still in flight is refused by its version).
func (s *Session) attempt(w *write, deadline time.Time) (saveOutcome, error) {
	if d := time.Now().Add(s.e.cfg.StoreTimeout); d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	v, err := s.write(ctx, w.version, w.keep, w.msgs)
	if err == nil {
		w.version = v
		return saved, nil
	}
	var invalid *cmf.ValidationError
	switch {
	case errors.As(err, &invalid):
		return notSaved, err
	case errors.Is(err, history.ErrUnavailable):
		return savePending, err // it never left: nothing landed
	case !errors.Is(err, history.ErrConflict):
		return maybeSaved, err
	}
	conv, lerr := s.e.cfg.Store.Load(ctx, s.Key)
	switch {
	case lerr != nil:
		return maybeSaved, err
	case endsWith(conv.Messages, w.msgs):
		w.version = conv.Version
		return saved, nil
	case w.turn > 0 && endsWith(conv.Messages, w.msgs[:w.turn]),
		w.turn == 0 && w.keep >= 0 && len(conv.Messages) == w.keep && conv.Version == w.version+1:
		// The plan's own write landed (a commit that timed out): the
		// lock kept everyone else out, so the rest builds on it.
		w.version, w.keep, w.msgs, w.turn = conv.Version, history.KeepAll, w.msgs[w.turn:], 0
		if len(w.msgs) == 0 {
			return saved, nil
		}
		return savePending, nil
	}
	return notSaved, err
}

// finishLater goes on, in the background, with what the end of a run
// could not finish in time, for as long as its lock lasts, holding the
// lock meanwhile: saving w (the stream ended with SaveUncertainMessage)
// and ending the shared log (m). Then it logs what became of them,
// releases the lock, and calls then (the run's Ended: what waited for
// the chat, a queue, may go on). Any may be nil.
func (s *Session) finishLater(w *write, m *mirror, then func()) {
	s.e.Go(func() {
		until := time.Now().Add(s.e.cfg.LockTTL)
		if w != nil {
			out, err := s.persist(w, until)
			switch out {
			case saved:
				s.log.Info("the reply was saved after retrying")
			default:
				s.log.Error("the reply could not be saved", "error", err, "outcome", out.String())
			}
		}
		if m != nil {
			m.endLater(until)
		}
		s.Release()
		if then != nil {
			then()
		}
	})
}

// endsWith reports whether stored ends with msgs (same ids and content).
func endsWith(stored, msgs []cmf.Message) bool {
	if len(stored) < len(msgs) {
		return false
	}
	tail := stored[len(stored)-len(msgs):]
	for i := range msgs {
		a, _ := json.Marshal(tail[i])
		b, _ := json.Marshal(msgs[i])
		if string(a) != string(b) {
			return false
		}
	}
	return true
}
