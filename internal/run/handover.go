package run

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/runlog"
)

// Drain: a replica that shuts down while others share its run log hands
// its runs over instead of cutting them. Each run stops at its next step
// boundary (or, when the grace period is about to end first, where it
// is: its step is then voided and run again), copies all it logged to
// the shared log without ending it, lets go of its chat and tells the
// other replicas (a Handover note); one of them runs it again from there
// (redrive). The run's readers on this replica read on from the shared
// log, so a client sees one reply. Alone, a replica cuts its runs at the
// grace period as before: nobody would go on with them.

// errHandover cancels a run that is handed over to another replica.
var errHandover = errors.New("the run is handed over to another replica")

// handoverMargin is how long before the grace period ends a run still
// mid-step is handed over where it is: its readers here need time to
// read on from the shared log before the connections close.
const handoverMargin = time.Second

// handOver asks every run of this engine to hand over, when other
// replicas share the run log and can run them again; it returns at
// once. Near ctx's deadline, runs still mid-step hand over where they
// are.
func (e *Engine) handOver(ctx context.Context) {
	if e.shared == nil || e.cfg.Redrive == nil {
		return
	}
	peers, ok := e.shared.(runlog.Peers)
	if !ok {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, e.cfg.StoreTimeout)
	n, err := peers.Listeners(pctx)
	cancel()
	if err != nil || n < 2 {
		return // alone (or cannot tell): the runs are cut at the grace period
	}
	rs := e.runs.all()
	if len(rs) == 0 {
		return
	}
	e.log.Info("shutdown: handing the runs in progress over to the other replicas", "runs", len(rs), "replicas", n)
	for _, rn := range rs {
		rn.handover.Store(true)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return
	}
	go func() {
		var wg sync.WaitGroup
		done := make(chan struct{})
		for _, rn := range rs {
			wg.Go(func() { <-rn.done })
		}
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Until(deadline) - min(handoverMargin, time.Until(deadline)/4)):
			for _, rn := range rs {
				rn.cancel(errHandover)
			}
		}
	}()
}

// atBoundary hands the run over once a step has finished, when asked
// to: no model call starts after it.
func (rn *Run) atBoundary(ev agent.Event) {
	if f, ok := ev.(*agent.StepFinished); ok && f.StopReason != cmf.StopAborted && rn.handover.Load() {
		rn.cancel(errHandover)
	}
}

// handedOver reports whether a run that ended so is handed over: it was
// asked to, and did not finish (or pause) before it could.
func (rn *Run) handedOver(res result) bool {
	return errors.Is(context.Cause(rn.ctx), errHandover) && res.err == nil &&
		(res.finished == nil || res.finished.StopReason == cmf.StopAborted)
}

// handOverEnd is the end of a run handed over: its shared log gets all
// it logged, not ended; the chat is let go of; the other replicas are
// told; and its readers here are sent on to the shared log. It reports
// false when the shared log could not take the run's entries: the run
// then ends as shutdown cuts it.
func (rn *Run) handOverEnd() bool {
	e := rn.env
	if c := rn.sess.committed; c != nil {
		<-c // the turn is stored before another replica loads the chat
		if rn.sess.commitErr != nil {
			return false
		}
	}
	if !rn.mirror.flush() {
		return false
	}
	rn.forget()
	rn.sess.Release()
	close(rn.done)
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.StoreTimeout)
	defer cancel()
	if err := e.shared.Notify(ctx, runlog.Note{Key: rn.key, Run: rn.header.Run, Handover: true}); err != nil {
		rn.spec.Log.Warn("could not tell the other replicas of a run handed over; a reader will find it", "error", err)
	}
	if err := e.local.End(context.Background(), rn.key, rn.header.Run, e.cfg.Retention, []runlog.Entry{runlog.MovedEntry(rn.next())}); err != nil {
		rn.spec.Log.Error("could not end the run's log", "error", err)
	}
	rn.spec.Log.Info("the run is handed over to another replica", "run", rn.header.Run)
	return true
}

// durableLedger is a run's tool ledger that makes the run's log durable
// in the shared log before a call begins: a replica that runs the run
// again after its process died then finds the step that made the call
// (and keeps it: the model is not asked again, which would name the call
// anew), and the ledger's record of the call under its id.
type durableLedger struct {
	agent.Ledger
	rn *Run
}

func (l *durableLedger) Begin(ctx context.Context, call agent.ToolCall) (agent.LedgerRecord, bool, error) {
	sctx, cancel := context.WithTimeout(ctx, l.rn.env.cfg.StoreTimeout)
	ok := l.rn.mirror.sync(sctx, l.rn.seq.Load())
	cancel()
	if !ok {
		return agent.LedgerRecord{}, false, errors.New("the run's log is not in the shared log yet")
	}
	return l.Ledger.Begin(ctx, call)
}
