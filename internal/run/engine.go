// Package run is agentui's run engine: the one place where concurrency
// lives. A run with history is a reply produced apart from its request,
// under the chat's lock ([Session]), into a run log that every stream
// showing it reads ([Engine.Follow]): the request that asked for it, a
// reloaded tab, another replica (through the shared log the mirror
// copies to). The engine also stores the reply (commit, save, and what
// the end of a run could not finish in time), finishes the runs of
// processes that died, stops runs on any replica, and cuts everything at
// shutdown. A run without history ([Engine.Live]) is bound to its
// request.
//
// What a turn is, and what it may do, is decided before it gets here
// (internal/turn, uiadapter): the engine gets a planned turn and an agent
// to run, and knows no protocol (it writes through wire.Encoder).
package run

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// Engine runs the replies of one handler.
type Engine struct {
	*env
	inflight inflight
	runs     runs // this engine's live runs
	unwatch  func()
}

// New returns an engine; with a shared run log it starts watching it for
// stop requests from other replicas, until Shutdown.
func New(cfg Config) *Engine {
	e := &Engine{env: newEnv(cfg)}
	e.engine = e
	if cfg.RunLog != nil { // shared: stop requests may come from elsewhere
		e.unwatch = cfg.RunLog.Watch(e.heard)
	}
	return e
}

// inflight tracks the requests and runs an engine serves, so that
// Shutdown can wait for them and cut those that outlive its deadline.
type inflight struct {
	mu      sync.Mutex
	closing bool
	next    uint64
	cancels map[uint64]context.CancelCauseFunc
	wg      sync.WaitGroup
}

// Enter registers a request, which cancel cuts at shutdown; false once
// Shutdown has begun. Exit ends it.
func (e *Engine) Enter(cancel context.CancelCauseFunc) (uint64, bool) {
	f := &e.inflight
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return 0, false
	}
	return f.add(cancel), true
}

// Shared reports whether the engine's runs are in a log every replica
// reads.
func (e *Engine) Shared() bool { return e.shared != nil }

// Closing reports whether Shutdown has begun: nothing new may start.
func (e *Engine) Closing() bool {
	f := &e.inflight
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing
}

// enterRun registers a run detached from its request, which Shutdown
// waits for and cuts like a request. The request that starts it is still
// registered, so this cannot race with Shutdown's wait.
func (f *inflight) enterRun(cancel context.CancelCauseFunc) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.add(cancel)
}

func (f *inflight) add(cancel context.CancelCauseFunc) uint64 {
	if f.cancels == nil {
		f.cancels = map[uint64]context.CancelCauseFunc{}
	}
	f.next++
	f.cancels[f.next] = cancel
	f.wg.Add(1)
	return f.next
}

// Exit ends what Enter registered.
func (e *Engine) Exit(id uint64) { e.inflight.exit(id) }

func (f *inflight) exit(id uint64) {
	f.mu.Lock()
	delete(f.cancels, id)
	f.mu.Unlock()
	f.wg.Done()
}

// Shutdown stops the engine taking requests and waits for those it
// serves and their runs. When ctx ends first, it cuts them (cause
// ErrShuttingDown): each run stores what it produced and ends its log
// with ShutdownMessage. It then waits for them to finish, which the
// store and write timeouts bound, and for what they left to finish in the
// background (a lock release, a save or a shared log's end the store did
// not take in time, each bounded by the lock's TTL) until ctx ends, and
// returns ctx's error when it ended first.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.inflight.mu.Lock()
	e.inflight.closing = true
	e.inflight.mu.Unlock()
	e.handOver(ctx)
	err := e.shutdownRequests(ctx)
	done := make(chan struct{})
	go func() { e.background.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		e.log.Warn("shutdown: work left after the streams is still going on (bounded by the lock TTL)")
		return ctx.Err()
	}
	return err
}

// shutdownRequests stops taking requests and waits for those in flight,
// cutting them when ctx ends.
func (e *Engine) shutdownRequests(ctx context.Context) error {
	f := &e.inflight
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
	if e.unwatch != nil {
		defer e.unwatch()
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	f.mu.Lock()
	n := len(f.cancels)
	for _, cancel := range f.cancels {
		cancel(ErrShuttingDown)
	}
	f.mu.Unlock()
	e.log.Warn("shutdown: cutting the requests still being served", "requests", n)
	<-done
	return ctx.Err()
}

// Start starts a run of the turn s planned, and commits the plan's write
// while the run starts (the first bytes do not wait for it). The run owns
// s from now on: it releases it when it ends. Its events go to the
// engine's local log, where [Engine.Follow] reads them (Source).
func (e *Engine) Start(s *Session, spec Spec) *Run {
	in := spec.Producer.Input
	spec.Header.Started, spec.Header.Base, spec.Header.Turn, spec.Header.Lock = time.Now(), len(in.History)+len(s.Plan.Add), s.Plan.Add, s.token
	rn := e.newRun(s, spec)
	if err := e.local.Begin(rn.ctx, rn.key, rn.header); err != nil {
		spec.Log.Error("could not begin the run's log", "error", err) // a memory log does not fail
	}
	e.launch(rn, nil)
	return rn
}

// newRun is the run spec describes, on s, not started yet.
func (e *Engine) newRun(s *Session, spec Spec) *Run {
	rn := &Run{env: e.env, spec: spec, sess: s, key: s.Key, header: spec.Header, progress: make(chan struct{}), done: make(chan struct{})}
	rn.ctx, rn.cancel = context.WithCancelCause(context.WithoutCancel(spec.Context))
	rn.ctx, rn.stopTimer = context.WithTimeoutCause(rn.ctx, spec.MaxDuration, ErrTooLong)
	return rn
}

// launch registers rn and starts it, with its mirror (from, when the
// shared log has its start already).
func (e *Engine) launch(rn *Run, from *mirrorStart) {
	rn.spec.Producer.Input.Steering = &rn.steering
	e.runs.add(rn)
	flight := e.inflight.enterRun(rn.cancel)
	rn.forget = func() { e.runs.remove(rn) }
	rn.exit = func() { e.inflight.exit(flight) }
	if e.shared != nil {
		rn.mirror = newMirror(e.env, rn.key, rn.header, from)
		if in := rn.spec.Producer.Input; in.Ledger != nil && rn.header.Input != nil {
			in.Ledger = &durableLedger{Ledger: in.Ledger, rn: rn}
		}
	}
	go rn.main()
}

// Stop stops key's run on whichever replica runs it. A chat with no run
// going is a 404 refusal.
func (e *Engine) Stop(ctx context.Context, key history.Key) error {
	if e.runs.stop(key, "") {
		return nil
	}
	src, err := e.Find(ctx, key)
	switch {
	case errors.Is(err, runlog.ErrNoRun) || err == nil && src.Header.Ended:
		return &wire.Error{Status: 404, Message: "no reply is being produced in this chat"}
	case err != nil:
		return wire.Unavailable("the run log is unavailable", err)
	}
	return e.stopRun(ctx, src)
}

// StopRun stops key's run if it is run (on whichever replica runs it):
// for a client that stops the reply it asked for, which must not stop
// the one after it. A chat whose current run is another is left alone.
func (e *Engine) StopRun(ctx context.Context, key history.Key, run string) error {
	if e.runs.stop(key, run) {
		return nil
	}
	src, err := e.Find(ctx, key)
	switch {
	case errors.Is(err, runlog.ErrNoRun) || err == nil && (src.Header.Ended || src.Header.Run != run):
		return nil
	case err != nil:
		return wire.Unavailable("the run log is unavailable", err)
	}
	return e.stopRun(ctx, src)
}

// stopRun stops src's run: here when it runs here, else through its log.
func (e *Engine) stopRun(ctx context.Context, src Source) error {
	if e.runs.stop(src.Key, src.Header.Run) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.StoreTimeout)
	defer cancel()
	if err := src.Log.Notify(ctx, runlog.Note{Key: src.Key, Run: src.Header.Run}); err != nil {
		return wire.Unavailable("the run log is unavailable", err)
	}
	return nil
}

// Steer hands msg, a user message sent while key's reply is being
// produced, to that run, on whichever replica runs it, for its agent to
// take at its next step boundary (agent.Steering), and waits to learn
// what came of it from the run's log: the run's id once the log shows it
// taken (a Steered entry; a retried request whose message was taken
// learns that, and nothing is taken twice), "" when the run ended without
// taking it (it finished, paused for approvals, was stopped, ran out of
// steps, or its notice was lost) or no run is going: then the caller
// runs msg as a turn of its own, so it is never lost.
//
// With run set, only that run is steered: another is refused busy.
func (e *Engine) Steer(ctx context.Context, key history.Key, run string, msg cmf.Message) (string, error) {
	src, err := e.Find(ctx, key)
	switch {
	case errors.Is(err, runlog.ErrNoRun) || err == nil && src.Header.Ended:
		return "", nil
	case err != nil:
		return "", wire.Unavailable("the run log is unavailable", err)
	case run != "" && src.Header.Run != run:
		return "", busy()
	}
	if rn := e.runs.get(key, src.Header.Run); rn != nil {
		rn.steering.offer(msg)
	} else {
		nctx, cancel := context.WithTimeout(ctx, e.cfg.StoreTimeout)
		err := src.Log.Notify(nctx, runlog.Note{Key: key, Run: src.Header.Run, Steer: &msg})
		cancel()
		if err != nil {
			return "", wire.Unavailable("the run log is unavailable", err)
		}
	}
	if ok, err := e.taken(ctx, src, msg.ID()); !ok || err != nil {
		return "", err
	}
	return src.Header.Run, nil
}

// SteerOrOpen steers key's running reply with msg (Steer). When no run
// takes it (none is going, or it ended first), it opens the chat's
// session for msg's own turn, as Open does, waiting up to supersedeWait
// for an ended run to let go of the chat; a run another request started
// meanwhile is steered in its turn. took is the run that took the
// message; when none did, s is the open session (nil with err).
func (e *Engine) SteerOrOpen(ctx context.Context, key history.Key, run string, msg cmf.Message, log *slog.Logger) (took string, s *Session, conv history.Conversation, err error) {
	for {
		if took, err = e.Steer(ctx, key, run, msg); took != "" || err != nil {
			return took, nil, conv, err
		}
		deadline := time.Now().Add(supersedeWait)
		for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
			s, conv, err = e.Open(ctx, key, log)
			if !IsBusy(err) || !time.Now().Add(wait).Before(deadline) {
				return "", s, conv, err
			}
			if now, ferr := e.Find(ctx, key); ferr == nil && !now.Header.Ended {
				break // a run is going: steer it
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return "", nil, conv, ErrClientGone
			}
		}
	}
}

// taken reads src's log until it shows the message id taken (true) or
// ends (false).
func (e *env) taken(ctx context.Context, src Source, id string) (bool, error) {
	wait := time.Minute
	if src.Remote {
		wait = e.cfg.LockTTL / 10
	}
	cur := runlog.NewCursor(src.Log, src.Key, src.Header.Run, 0)
	for {
		es, err := cur.Next(ctx, wait)
		switch {
		case ctx.Err() != nil:
			return false, ErrClientGone
		case errors.Is(err, runlog.ErrNoRun):
			return false, nil // replaced by the chat's next run: it ended
		case err != nil:
			return false, wire.Unavailable("the run log is unavailable", err)
		case len(es) == 0 && src.Remote:
			e.recoverDead(src.Key, src.Header.Run)
		}
		for _, en := range es {
			if s, ok := en.Event.(*agent.Steered); ok && s.Message.ID() == id {
				return true, nil
			}
			if en.Type == runlog.TypeEnded {
				return false, nil
			}
		}
	}
}

// runs are the runs of an engine that are alive, by chat.
type runs struct {
	mu   sync.Mutex
	live map[history.Key]*Run
}

func (rs *runs) add(rn *Run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.live == nil {
		rs.live = map[history.Key]*Run{}
	}
	rs.live[rn.key] = rn
}

// all returns the runs alive here.
func (rs *runs) all() []*Run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]*Run, 0, len(rs.live))
	for _, rn := range rs.live {
		out = append(out, rn)
	}
	return out
}

func (rs *runs) remove(rn *Run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.live[rn.key] == rn {
		delete(rs.live, rn.key)
	}
}

// stop stops key's run if it is alive here (and is run, when run is set).
func (rs *runs) stop(key history.Key, run string) bool {
	rn := rs.get(key, run)
	if rn == nil {
		return false
	}
	rn.cancel(errStopped)
	return true
}

// heard acts on a note from the shared log: a stop, a steering message
// for a run alive here, or a run another replica handed over, which
// this one runs again if it gets the chat's lock first.
func (e *Engine) heard(n runlog.Note) {
	rs := &e.runs
	switch {
	case n.Handover:
		if e.cfg.Redrive != nil && !e.Closing() && rs.get(n.Key, n.Run) == nil {
			e.Go(func() { e.recoverDead(n.Key, n.Run) })
		}
	case n.Steer == nil:
		rs.stop(n.Key, n.Run)
	default:
		if rn := rs.get(n.Key, n.Run); rn != nil {
			rn.steering.offer(*n.Steer)
		}
	}
}

// get returns key's run if it is alive here (and is run, when run is
// set), else nil.
func (rs *runs) get(key history.Key, run string) *Run {
	rs.mu.Lock()
	rn := rs.live[key]
	rs.mu.Unlock()
	if rn == nil || run != "" && rn.header.Run != run {
		return nil
	}
	return rn
}
