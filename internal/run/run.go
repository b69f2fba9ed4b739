package run

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/runlog"
)

// A Run is one reply being produced in a chat with history. It writes
// its events to the engine's run log, and every stream that shows it (the
// request that asked for it, a reloaded tab, another replica) is a reader
// of that log: the request's own stream reads it from the start, a
// resumed one from where its client left off.
//
// A run belongs to the server, not to the request: it goes on when its
// client leaves, until it finishes, is stopped, or its process dies (then
// another replica finishes its log; see recoverDead). Without history,
// nothing can resume a run, so it needs no log: see Live.
type Run struct {
	env       *env
	spec      Spec
	sess      *Session
	key       history.Key
	header    runlog.Header
	ctx       context.Context
	cancel    context.CancelCauseFunc
	seq       atomic.Int64 // the last sequence logged; its tools read it (durableLedger)
	mirror    *mirror      // copies the log to the shared log; nil without one
	forget    func()       // takes it out of the engine's live runs: nothing is left to stop
	exit      func()       // ends its registration with Shutdown
	stopTimer context.CancelFunc
	// redriven: the run goes on with a dead run's log, which has its
	// RunStarted already.
	redriven bool
	// handover: the engine is shutting down and hands the run over to
	// another replica at its next step boundary (see handOver).
	handover atomic.Bool

	// The request that started the run paces it: the agent may run at
	// most maxAhead events ahead of what that stream has written, as long
	// as the stream lasts, so a slow client slows a fast agent instead of
	// piling its output up in memory.
	paceMu   sync.Mutex
	readerAt int64
	detached bool
	progress chan struct{} // closed when the reader moves on or leaves
	done     chan struct{} // closed when the run has let go of its chat

	steering steering
}

// steering is a run's inbox: the user messages sent while it runs
// (Engine.Steer), which its agent takes at step boundaries.
type steering struct {
	mu      sync.Mutex
	waiting []cmf.Message
	offered map[string]bool // a message offered twice (a retry) is taken once
}

func (s *steering) offer(m cmf.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.offered[m.ID()] {
		return
	}
	if s.offered == nil {
		s.offered = map[string]bool{}
	}
	s.offered[m.ID()] = true
	s.waiting = append(s.waiting, m)
}

// Take implements agent.Steering.
func (s *steering) Take() []cmf.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.waiting
	s.waiting = nil
	return out
}

// Spec is what a run is started with, beside its session.
type Spec struct {
	// Header names the run (Run, Protocol, and Continue for a
	// continuation or Reply for a new reply); Start fills in the rest.
	Header runlog.Header
	// Context carries the run's values; its cancellation is not the
	// run's: a run outlives its request.
	Context     context.Context
	MaxDuration time.Duration
	Producer    Producer
	Log         *slog.Logger
	// Ended is called once the run has ended and released what it held.
	Ended func()
}

// maxAhead is how far a run may get ahead of the stream that started it:
// enough to batch bursts into few writes.
const maxAhead = 1024

// Source is where the run's own stream reads it. On the heap (not
// inlined, so the pointer escapes): a stream holds the frames that call
// Follow for as long as it lasts (TestStreamFitsStartingStack).
//
//go:noinline
func (rn *Run) Source() *Source {
	return &Source{Log: rn.env.local, Key: rn.key, Header: rn.header}
}

// main produces the run, saves it, and ends its log.
func (rn *Run) main() {
	e, sess, log := rn.env, rn.sess, rn.spec.Log
	defer rn.exit()
	defer rn.stopTimer()
	// Ended runs once the run has let go of the chat: at the end of main,
	// or after finishLater releases the lock.
	ended := rn.spec.Ended
	defer func() {
		if ended != nil {
			ended()
		}
	}()
	sess.commit()
	sess.keepLock(func() { rn.cancel(errLockLost) })
	res := rn.spec.Producer.run(rn.ctx, true, rn.publish, rn.cancel)
	if rn.handedOver(res) && !sess.lost.Load() && rn.handOverEnd() {
		rn.cancel(nil)
		return
	}
	octx := rn.ctx
	if errors.Is(context.Cause(octx), errHandover) {
		// Asked to hand over: it finished first, or could not be handed
		// over (then it is cut as shutdown cuts it).
		octx = context.Background()
		if rn.handedOver(res) {
			c, cancel := context.WithCancelCause(octx)
			cancel(ErrShuttingDown)
			octx = c
		}
	}
	out := outcomeOf(octx, res, sess.lost.Load())
	w := sess.pending(res, out)
	saveOut, saveErr := sess.save(w)
	out = out.saved(saveOut, saveErr)
	out.log(log, true)
	last := out.entries(rn.next)
	// The shared log ends before the lock is released, so a reader that
	// finds the lock free and the log open knows the run's process died.
	sharedEnded := rn.mirror == nil || rn.mirror.finish(last)
	// Nothing is left to stop: a stop from now on finds the run ended
	// (404), as its readers will once the log ends below.
	rn.forget()
	if saveOut == maybeSaved || !sharedEnded {
		if saveOut != maybeSaved {
			w = nil
		}
		var m *mirror
		if !sharedEnded {
			m = rn.mirror
		}
		sess.finishLater(w, m, ended) // keeps the lock until it knows
		ended = nil
	} else {
		// Unlock before the client sees the end of the reply: useChat may
		// send the next request (an automatic continuation) the moment it
		// reads finish, and must not find the chat locked.
		sess.Release()
	}
	close(rn.done)
	if err := e.local.End(context.Background(), rn.key, rn.header.Run, e.cfg.Retention, last); err != nil {
		log.Error("could not end the run's log", "error", err)
	}
	rn.cancel(nil)
}

func (rn *Run) next() int64 { return rn.seq.Add(1) }

// publish appends one event to the log, first waiting for the stream
// that started the run when it is maxAhead behind.
func (rn *Run) publish(ev agent.Event) {
	if _, ok := ev.(*agent.RunStarted); ok && rn.redriven {
		return
	}
	e := runlog.EventEntry(rn.next(), ev)
	for {
		rn.paceMu.Lock()
		wait, progress := !rn.detached && e.Seq-rn.readerAt > maxAhead, rn.progress
		rn.paceMu.Unlock()
		if !wait {
			break
		}
		select {
		case <-progress:
		case <-rn.ctx.Done():
			wait = false
		}
		if !wait {
			break
		}
	}
	if err := rn.env.local.Append(rn.ctx, rn.key, rn.header.Run, e); err != nil {
		rn.spec.Log.Error("could not log the run's event", "error", err)
	}
	rn.atBoundary(ev)
}

// Paced reports that the stream that started the run has written up to
// seq; leave says it has ended.
func (rn *Run) Paced(seq int64, leave bool) {
	rn.paceMu.Lock()
	defer rn.paceMu.Unlock()
	if rn.detached {
		return
	}
	rn.readerAt, rn.detached = seq, leave
	close(rn.progress)
	rn.progress = make(chan struct{})
	if leave {
		// Nothing paces the run now: its log merges the deltas nobody
		// reads, so it holds about its text.
		rn.env.local.Coalesce(rn.key, rn.header.Run)
	}
}
