package uiadapter

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/turn"
	"github.com/agentui/agentui/internal/wire"
)

// session is one turn's hold on a stored conversation: the lock, the
// version it builds on, its plan, and its write.
//
// The lock is extended on a timer for as long as the session lives (not
// on writes: a stream whose client stopped reading must not outlive it),
// and a run whose lock is lost is stopped. The session ends with release,
// which retries in the background until the lock is gone or would have
// expired anyway, so a store that comes back finds the chat usable.
type session struct {
	h       *Handler
	key     history.Key
	token   string
	version history.Version
	stored  int // how many messages the conversation held when loaded
	plan    turn.Plan
	log     *slog.Logger

	// The plan's write (what it cuts and adds) is committed while the run
	// starts, so the first bytes do not wait for that round trip.
	// committed is closed when it is done; commitErr says how it went.
	// When it failed, save makes it with the reply.
	committed chan struct{}
	commitErr error

	held     atomic.Int64 // when the lock was last known held (Unix ns)
	lost     atomic.Bool  // the lock was lost and the run stopped
	keepStop chan struct{}
	keepDone chan struct{}
	released bool
}

// errClientGone: the client left before the request could be served; no
// response is written.
var errClientGone = errors.New("the client went away")

// planStored locks the conversation, loads it and plans the turn on it
// (turn.PlanStored): the stored copy is the truth. Nothing is
// written: the plan is committed once its messages have passed the guard.
func (h *Handler) planStored(req *request) (*session, *agent.Input, error) {
	r, t, log := req.r, req.turn, req.log
	s := &session{h: h, key: historyKey(req.scope, t.ChatID), token: ids.New(), log: log}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
	defer cancel()
	conv, err := history.AcquireLoad(ctx, h.cfg.store, h.cfg.locker, s.key, s.token, h.cfg.lockTTL)
	switch {
	case errors.Is(err, history.ErrBusy):
		return nil, nil, &wire.Error{Status: http.StatusConflict, Message: "a reply is still being produced for this chat", Code: wire.CodeBusy}
	case err != nil:
		if !errors.Is(err, history.ErrUnavailable) {
			// The lock may have been taken before the reply was lost.
			s.h.goBackground(func() { s.releaseEventually(time.Now()) })
		}
		if r.Context().Err() != nil {
			return nil, nil, errClientGone
		}
		return nil, nil, wire.Unavailable("conversation history is unavailable", err)
	}
	s.held.Store(time.Now().UnixNano())
	ok := false
	defer func() {
		if !ok {
			s.release()
		}
	}()
	if h.shared != nil {
		// A run whose process died left its log open: finish it (its
		// partial reply is stored) before building on the conversation.
		if hdr, err := h.shared.Current(ctx, s.key); err == nil && !hdr.Ended && hdr.Lock != s.token {
			if err := h.finishDead(ctx, s.key, hdr); err != nil {
				return nil, nil, wire.Unavailable("conversation history is unavailable", err)
			}
			if conv, err = h.cfg.store.Load(ctx, s.key); err != nil {
				return nil, nil, wire.Unavailable("conversation history is unavailable", err)
			}
		}
	}
	s.version, s.stored = conv.Version, len(conv.Messages)
	size := turn.ChatSize{Messages: len(conv.Messages), Bytes: conv.Bytes, MaxMessages: h.cfg.maxChatMessages, MaxBytes: h.cfg.maxChatBytes, AtLimitCheck: true}
	p, findings, err := turn.PlanStored(conv.Messages, t, size, &h.cfg.policy)
	if e := (*wire.Error)(nil); errors.As(err, &e) && e.Code == wire.CodeUnknownChat && req.body != nil {
		// Decoded to its last message: the messages before it may be a
		// new chat's opening greeting, which only the whole thread shows.
		if err := h.decodeAll(req); err != nil {
			return nil, nil, err
		}
		t = req.turn
		p, findings, err = turn.PlanStored(conv.Messages, t, size, &h.cfg.policy)
	}
	findings.Log(log)
	if err != nil {
		if err == turn.ErrChatTooLong {
			log.Warn("chat is at its size limit", "messages", len(conv.Messages), "bytes", conv.Bytes)
		}
		return nil, nil, err
	}
	p.Log(log)
	s.plan = p
	kept := conv.Messages[:p.Keep:p.Keep]
	// Encoders bring a client whose copy differs back in line with these.
	req.trusted = wire.Trusted{History: kept, Added: p.Add}
	ok = true
	return s, h.input(req, kept, p.Add, p.Resume), nil
}

// scopeOf runs the scope function: its error refuses the request (401, or
// the status of an *Error; 404 for ErrNoScope, which has no
// conversations).
func (h *Handler) scopeOf(r *http.Request) (string, error) {
	scope, err := h.cfg.scope(r)
	return scope, scopeError(err)
}

// scopeError is the refusal for a scope function's error (nil for none).
func scopeError(err error) error {
	var e *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoScope):
		return &wire.Error{Status: http.StatusNotFound, Message: "no conversations are kept for a request without a credential"}
	case errors.As(err, &e):
		return e
	}
	return &wire.Error{Status: http.StatusUnauthorized, Message: "not authorized", Err: err}
}

// commit starts the plan's write: what it cuts of the stored
// conversation and what it adds. The run does not wait for it; if it
// fails, save makes it with the reply.
func (s *session) commit() {
	p := &s.plan
	if len(p.Add) == 0 && p.Keep == s.stored {
		return
	}
	s.committed = make(chan struct{})
	go func() {
		defer close(s.committed)
		// Not the request's context: a client that leaves at once still
		// leaves its message in the conversation.
		ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.storeTimeout)
		defer cancel()
		v, err := s.h.cfg.store.Write(ctx, s.key, s.version, p.Keep, p.Add...)
		if err != nil {
			s.commitErr = err
			return
		}
		s.version = v
	}()
}

func historyKey(scope, chat string) history.Key { return history.Key{Scope: scope, Chat: chat} }

func (s *session) heldAt() time.Time { return time.Unix(0, s.held.Load()) }

// keepLock extends the lock every third of its TTL until release. When
// another request holds it, or it could not be extended for a whole TTL
// (it has expired, and another request may take it), the run is stopped
// with stop and the session marked lost.
func (s *session) keepLock(stop context.CancelFunc) {
	s.keepStop, s.keepDone = make(chan struct{}), make(chan struct{})
	ttl := s.h.cfg.lockTTL
	go func() {
		defer close(s.keepDone)
		tick := time.NewTicker(ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-s.keepStop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.storeTimeout)
			err := s.h.cfg.locker.Acquire(ctx, s.key, s.token, ttl)
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
		}
	}()
}

// release stops extending the lock and gives it up, retrying in the
// background when the store does not answer.
func (s *session) release() {
	if s.released {
		return
	}
	s.released = true
	if s.keepStop != nil {
		close(s.keepStop)
		<-s.keepDone
	}
	if s.tryRelease() != nil {
		held := s.heldAt()
		s.h.goBackground(func() { s.releaseEventually(held) })
	}
}

func (s *session) tryRelease() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.storeTimeout)
	defer cancel()
	return s.h.cfg.locker.Release(ctx, s.key, s.token)
}

// releaseEventually retries releasing the lock until it works or the lock,
// last held at held, has expired on its own.
func (s *session) releaseEventually(held time.Time) {
	select {
	case s.h.releasing <- struct{}{}:
		defer func() { <-s.h.releasing }()
	default:
		s.log.Warn("too many lock releases pending; this lock expires on its own")
		return
	}
	until := held.Add(s.h.cfg.lockTTL)
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

// saveOutcome says what became of a reply.
type saveOutcome uint8

const (
	saved       saveOutcome = iota // stored (or nothing to store)
	notSaved                       // certainly not stored
	maybeSaved                     // not known: a write that timed out may land
	savePending                    // (internal) not decided yet: keep trying
)

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
func (s *session) pending(res runResult, out outcome) *write {
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
		add := s.plan.Add
		w.keep, w.turn = s.plan.Keep, len(add)
		w.msgs = append(add[:len(add):len(add)], w.msgs...)
	}
	return w
}

// save stores w, retrying for one store timeout in all, so that a store
// that is down or frozen delays the end of a stream by no more than that.
// Its outcome is truthful: maybeSaved when a write that timed out may
// still land.
func (s *session) save(w *write) (saveOutcome, error) {
	return s.persist(w, time.Now().Add(s.h.cfg.storeTimeout))
}

// persist tries to store w until it is stored, certainly cannot be, or
// the deadline passes.
func (s *session) persist(w *write, deadline time.Time) (saveOutcome, error) {
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
func (s *session) attempt(w *write, deadline time.Time) (saveOutcome, error) {
	if d := time.Now().Add(s.h.cfg.storeTimeout); d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	v, err := s.h.cfg.store.Write(ctx, s.key, w.version, w.keep, w.msgs...)
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
	conv, lerr := s.h.cfg.store.Load(ctx, s.key)
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
// and ending the shared log (m). Then it logs what became of them and
// releases the lock. Either may be nil.
func (s *session) finishLater(w *write, m *mirror) {
	s.h.goBackground(func() {
		until := time.Now().Add(s.h.cfg.lockTTL)
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
		s.release()
	})
}

func (o saveOutcome) String() string {
	switch o {
	case saved:
		return "saved"
	case notSaved:
		return "not saved"
	case maybeSaved:
		return "unknown"
	}
	return "pending"
}

// withContent leaves out assistant messages with nothing in them: a step
// that was cut off before its first word has nothing to show or to feed a
// model.
func withContent(msgs []cmf.Message) []cmf.Message {
	out := msgs[:0:0]
	for i := range msgs {
		if msgs[i].Role == cmf.RoleAssistant && len(msgs[i].Content) == 0 && len(msgs[i].Data()) == 0 && told(&msgs[i]) == "" {
			continue
		}
		out = append(out, msgs[i])
	}
	return out
}

// told is what a stored reply says its client was told of its failure
// ("" for none).
func told(m *cmf.Message) string {
	if m.Extensions == nil || m.Extensions.Completion == nil {
		return ""
	}
	return m.Extensions.Completion.Error
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
