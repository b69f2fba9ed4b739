package uiadapter

import (
	"context"
	"errors"
	"net/http"
	"sync"
)

// errShuttingDown is the cause given to the requests Shutdown cuts.
var errShuttingDown = errors.New("uiadapter: the server is shutting down")

// inflight tracks the requests a handler is serving, so that Shutdown can
// wait for them and cut those that outlive its deadline.
type inflight struct {
	mu      sync.Mutex
	closing bool
	next    uint64
	cancels map[uint64]context.CancelCauseFunc
	wg      sync.WaitGroup
}

// enter registers a request; false once Shutdown has begun.
func (f *inflight) enter(cancel context.CancelCauseFunc) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return 0, false
	}
	if f.cancels == nil {
		f.cancels = map[uint64]context.CancelCauseFunc{}
	}
	f.next++
	f.cancels[f.next] = cancel
	f.wg.Add(1)
	return f.next, true
}

// enterRun registers a run detached from its request, which Shutdown
// waits for and cuts like a request. The request that starts it is still
// registered, so this cannot race with Shutdown's wait.
func (f *inflight) enterRun(cancel context.CancelCauseFunc) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancels == nil {
		f.cancels = map[uint64]context.CancelCauseFunc{}
	}
	f.next++
	f.cancels[f.next] = cancel
	f.wg.Add(1)
	return f.next
}

func (f *inflight) exit(id uint64) {
	f.mu.Lock()
	delete(f.cancels, id)
	f.mu.Unlock()
	f.wg.Done()
}

// Shutdown stops the handler taking requests (503 "the server is shutting
// down") and waits for those it is serving. When ctx ends first, it cuts
// them: each run is cancelled, what it produced is stored (stop reason
// aborted), its stream ends with the protocol's error event
// (ShutdownMessage), and its lock is released. Shutdown then waits for
// them to finish, which the store and write timeouts bound, and for what
// they left to finish in the background (a lock release, a save or a
// shared log's end the store did not take in time, each bounded by the
// lock's TTL) until ctx ends, and returns ctx's error when it ended
// first. Call it alongside http.Server.Shutdown, which stops the
// listeners but would otherwise wait for streams or drop them unfinished.
func (h *Handler) Shutdown(ctx context.Context) error {
	err := h.shutdownRequests(ctx)
	// Then what the runs left to finish in the background: lock releases
	// retried, a save or a shared log's end that the store did not take
	// in time. Each is bounded by the lock's TTL.
	done := make(chan struct{})
	go func() { h.background.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		h.cfg.logger.Warn("shutdown: work left after the streams is still going on (bounded by the lock TTL)", "protocol", h.proto.Name())
		return ctx.Err()
	}
	return err
}

// goBackground runs fn on its own goroutine, counted for Shutdown.
func (h *Handler) goBackground(fn func()) {
	h.background.Add(1)
	go func() {
		defer h.background.Done()
		fn()
	}()
}

// shutdownRequests stops taking requests and waits for those in flight,
// cutting them when ctx ends.
func (h *Handler) shutdownRequests(ctx context.Context) error {
	f := &h.inflight
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
	if h.unwatch != nil {
		defer h.unwatch()
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
		cancel(errShuttingDown)
	}
	f.mu.Unlock()
	h.cfg.logger.Warn("shutdown: cutting the requests still being served", "protocol", h.proto.Name(), "requests", n)
	<-done
	return ctx.Err()
}

// shuttingDown reports whether Shutdown cut r.
func shuttingDown(r *http.Request) bool {
	return errors.Is(context.Cause(r.Context()), errShuttingDown)
}
