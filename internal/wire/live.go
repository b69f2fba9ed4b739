package wire

import (
	"runtime"
	"sync"
	"time"

	"github.com/agentui/agentui/agent"
)

// Live streams a run that nothing can resume (no history) straight to its
// request: the run goes on the request's own goroutine and encodes each
// event into the stream's buffer, with no log between them. A writer
// goroutine exists only while there is something to write: it takes
// everything encoded so far, writes and flushes it in one go, and exits
// when the buffer is empty. So a burst goes out in few writes, a slow
// agent's event goes out at once, and an idle stream costs no goroutine
// beyond the request's (the run log's reader and the run each had one).
type Live struct {
	mu      sync.Mutex
	moved   sync.Cond // the writer took the buffer or stopped
	sse     *SSEWriter
	enc     Encoder
	gone    func() // the client went away: stops the run
	writing bool   // a writer goroutine is running
	err     error  // the first write error
	ended   bool   // the run ended: the request writes the rest
	begun   bool   // the writer was started once

	keepAlive time.Duration // 0: none
	timer     *time.Timer   // sends keep-alives
	last      time.Time     // when the writer last wrote
}

func NewLive(sse *SSEWriter, enc Encoder, keepAlive time.Duration, gone func()) *Live {
	l := &Live{sse: sse, enc: enc, gone: gone, keepAlive: keepAlive, last: time.Now()}
	l.moved.L = &l.mu
	sse.held = true
	if keepAlive > 0 {
		l.timer = time.AfterFunc(keepAlive, l.tick)
	}
	return l
}

// Emit encodes one event. When a full budget of frames is waiting for a
// client that reads slowly, it first waits for the writer to take them,
// so a slow client slows a fast agent instead of piling its output up in
// memory.
func (l *Live) Emit(ev agent.Event) {
	l.mu.Lock()
	for l.err == nil && l.writing && l.sse.buffered() >= flushThreshold {
		l.moved.Wait()
	}
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	l.enc.Encode(ev)
	first := l.wake() && !l.begun
	l.begun = l.begun || first
	l.mu.Unlock()
	if first {
		// Let the writer send the stream's first frames now: with every
		// core busy it would wait behind this goroutine, and the client
		// for its first byte.
		runtime.Gosched()
	}
}

// wake starts the writer if frames wait and it is not running, and says
// whether it did. Called with mu held.
func (l *Live) wake() bool {
	if l.writing || l.sse.buffered() == 0 {
		return false
	}
	l.writing = true
	go l.write()
	return true
}

// write sends what is buffered until nothing is.
func (l *Live) write() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.err == nil && l.sse.buffered() > 0 {
		buf, pooled := l.sse.take()
		l.moved.Broadcast()
		l.mu.Unlock()
		err := l.sse.send(buf, pooled)
		now := time.Now()
		l.mu.Lock()
		l.last = now
		if err != nil {
			l.err, l.sse.err = err, err
			l.gone()
		}
	}
	l.writing = false
	l.moved.Broadcast()
}

// tick sends a keep-alive comment when the stream has been quiet for
// keepAlive, and sets the next check.
func (l *Live) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.err != nil {
		return
	}
	next := l.keepAlive - time.Since(l.last)
	if next <= 0 && !l.writing {
		l.sse.Comment("keep-alive")
		_ = l.wake()
		next = l.keepAlive
	}
	l.timer.Reset(max(next, l.keepAlive/10))
}

// End stops the writer and the keep-alives and returns, with the lock
// held, so the request can write the end of the stream on its own
// goroutine; finish releases it.
func (l *Live) End() {
	l.mu.Lock()
	l.ended = true
	if l.timer != nil {
		l.timer.Stop()
	}
	for l.writing {
		l.moved.Wait()
	}
	l.sse.held = false
}

func (l *Live) Finish() { l.mu.Unlock() }
