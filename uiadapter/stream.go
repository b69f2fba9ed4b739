package uiadapter

import (
	"context"
	"fmt"
	"log/slog"
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
	rec *agent.Recorder
	err error
}

// stream runs the agent and writes its events. The agent runs in its own
// goroutine and hands events over a channel; the writer encodes every event
// that is ready and flushes once per burst, so a fast agent costs one
// flush per burst rather than per event, and a slow one is flushed at once.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, turn *Turn, in *agent.Input, log *slog.Logger) runResult {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	h.proto.SetHeaders(hdr)
	w.WriteHeader(http.StatusOK)

	sse := NewSSEWriter(w)
	enc := h.proto.NewEncoder(sse, turn)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	events := make(chan item, 64)
	done := make(chan runResult, 1)
	go h.produce(ctx, turn, in, events, done)

	var keepAlive <-chan time.Time
	var ticker *time.Ticker
	if h.cfg.keepAlive > 0 {
		ticker = time.NewTicker(h.cfg.keepAlive)
		defer ticker.Stop()
		keepAlive = ticker.C
	}
	var runErr error
	handle := func(it item) {
		if it.err != nil {
			runErr = it.err
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
			cancel() // the client is gone: stop the run
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
	switch {
	case runErr != nil:
		log.Error("agent run failed", "error", runErr)
		_ = enc.Fail(ErrorMessage)
	case r.Context().Err() != nil:
		log.Info("client disconnected; run cancelled")
	}
	_ = enc.Close()
	_ = sse.Flush()
	return res
}

// produce runs the agent, signs its approval requests and records every
// event, then hands it to the writer while the writer still listens. It
// keeps recording after the client is gone, so that what the run produced
// can be kept.
func (h *Handler) produce(ctx context.Context, turn *Turn, in *agent.Input, events chan<- item, done chan<- runResult) {
	res := runResult{rec: agent.NewRecorder()}
	defer func() {
		if p := recover(); p != nil {
			res.err = fmt.Errorf("agent panicked: %v", p)
			select {
			case events <- item{err: res.err}:
			case <-ctx.Done():
			}
		}
		close(events)
		done <- res
	}()
	deliver := true
	for ev, err := range h.agent.Run(ctx, in) {
		if err != nil {
			res.err = err
		} else {
			if a, ok := ev.(*agent.ApprovalRequested); ok {
				a.Signature = h.cfg.signer.Sign(turn.ChatID, a.ToolCallID, a.ToolName, a.Input)
			}
			res.rec.Add(ev)
		}
		if deliver {
			select {
			case events <- item{ev: ev, err: err}:
			case <-ctx.Done():
				deliver = false
			}
		}
	}
}
