package uiadapter

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/agentui/agentui/agent"
)

// item is one element of the agent's stream.
type item struct {
	ev  agent.Event
	err error
}

// runResult is what the producer saw of a run.
type runResult struct {
	rec      *agent.Recorder
	err      error
	finished bool // the agent sent RunFinished
}

// eventBuffer is how far the agent may run ahead of the writer. A few
// events are enough to coalesce bursts into one flush; each slot costs 32
// bytes per open stream.
const eventBuffer = 16

// stream runs the agent and writes its events. The agent runs in its own
// goroutine and hands events over a channel; the writer encodes every event
// that is ready and flushes once per burst, so a fast agent costs one
// flush per burst rather than per event, and a slow one is flushed at once.
//
// When the handler keeps history (sess != nil), the run's terminal event
// waits until the reply is saved, so that a reply that could not be saved
// ends with the protocol's error event instead of a normal finish.
func (h *Handler) stream(w http.ResponseWriter, req *request, in *agent.Input, sess *session) {
	r, turn, log := req.r, req.turn, req.log
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	h.proto.SetHeaders(hdr)
	w.WriteHeader(http.StatusOK)

	sse := NewSSEWriter(w)
	sse.writeTimeout = h.cfg.writeTimeout
	enc := h.proto.NewEncoder(sse, turn)
	if sess != nil && sess.refusal != "" {
		log.Info("run refused", "reason", sess.refusal)
		sess.release()
		_ = enc.Fail(sess.refusal)
		_ = enc.Close()
		_ = sse.Flush()
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if sess != nil {
		sess.storeTurn()
		sess.keepLock(cancel)
	}

	events := make(chan item, eventBuffer)
	done := make(chan runResult, 1)
	go h.produce(ctx, req, in, events, done)

	var keepAlive <-chan time.Time
	var ticker *time.Ticker
	if h.cfg.keepAlive > 0 {
		ticker = time.NewTicker(h.cfg.keepAlive)
		defer ticker.Stop()
		keepAlive = ticker.C
	}
	var runErr error
	var finished *agent.RunFinished
	handle := func(it item) {
		if it.err != nil {
			runErr = it.err
			return
		}
		if f, ok := it.ev.(*agent.RunFinished); ok {
			finished = f // written once the reply is saved
			return
		}
		if err := enc.Encode(it.ev); err != nil {
			log.Error("encoding an event failed", "event", fmt.Sprintf("%T", it.ev), "error", err)
		}
	}
	open := true
	for open {
		select {
		case it, ok := <-events:
			if !ok {
				open = false
				break
			}
			handle(it)
		drain: // everything else that is ready goes out with the same flush
			for {
				select {
				case it, ok := <-events:
					if !ok {
						open = false
						break drain
					}
					handle(it)
				default:
					break drain
				}
			}
		case <-keepAlive:
			sse.Comment("keep-alive")
		}
		if err := sse.Flush(); err != nil {
			cancel() // the client is gone or stopped reading: stop the run
			break
		}
		if ticker != nil {
			ticker.Reset(h.cfg.keepAlive)
		}
	}
	cancel()
	for range events { // let the producer finish recording
	}
	res := <-done
	outcome, saveErr := saved, error(nil)
	if sess != nil {
		w := sess.pending(res)
		outcome, saveErr = sess.save(w)
		if outcome == maybeSaved {
			sess.finishLater(w) // keeps the lock until it knows
		} else {
			// Unlock before the client sees the end of the reply: useChat
			// may send the next request (an automatic continuation) the
			// moment it reads finish, and must not find the chat locked.
			sess.release()
		}
	}
	switch {
	case sess != nil && sess.lost.Load():
		_ = enc.Fail(LockLostMessage)
	case outcome == notSaved:
		log.Error("the reply could not be saved", "error", saveErr, "run_error", runErr)
		_ = enc.Fail(SaveFailedMessage)
	case outcome == maybeSaved:
		log.Error("the reply may not have been saved; still trying", "error", saveErr, "run_error", runErr)
		_ = enc.Fail(SaveUncertainMessage)
	case shuttingDown(r):
		log.Warn("the run was cut by shutdown", "stored", sess != nil)
		_ = enc.Fail(ShutdownMessage)
	case runErr != nil:
		log.Error("agent run failed", "error", runErr)
		_ = enc.Fail(ErrorMessage)
	case r.Context().Err() != nil || sse.Err() != nil:
		log.Info("client disconnected; run cancelled")
	case finished != nil:
		_ = enc.Encode(finished)
	}
	_ = enc.Close()
	_ = sse.Flush()
}

// produce runs the agent, keeps its stream balanced (agent.Balancer),
// signs its approval requests and records every event, then hands it to
// the writer while the writer still listens. It keeps recording after
// the client is gone, so that what the run produced can be kept.
func (h *Handler) produce(ctx context.Context, req *request, in *agent.Input, events chan<- item, done chan<- runResult) {
	res := runResult{rec: agent.NewRecorder()}
	deliver := true
	send := func(it item) {
		if !deliver {
			return
		}
		select {
		case events <- it:
		case <-ctx.Done():
			deliver = false
		}
	}
	var bal agent.Balancer
	sink := func(ev agent.Event) {
		if e, ok := ev.(*agent.ApprovalRequested); ok {
			e.Signature = h.cfg.signer.Sign(h.signedCall(req, e.ToolCallID, e.ToolName, e.Input), time.Now().Add(h.cfg.approvalTTL))
		}
		res.rec.Add(ev)
		send(item{ev: ev})
	}
	defer func() {
		if p := recover(); p != nil {
			res.err = fmt.Errorf("agent panicked: %v", p)
			send(item{err: res.err})
		}
		bal.End(sink) // a run that stopped early: close what it left open
		res.finished = bal.Finished()
		close(events)
		done <- res
	}()
	for ev, err := range h.agent.Run(ctx, in) {
		if err != nil {
			res.err = err
			send(item{err: err})
			continue
		}
		bal.Add(ev, sink)
	}
}
