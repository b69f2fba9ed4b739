// Package outagelog keeps a dependency that stays down from flooding the
// log: a request refused with 503 because the store (or the run log) is
// down is logged at ERROR once a minute, with the count of the refusals
// in between.
package outagelog

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agentui/agentui/internal/wire"
)

// window is how often a dependency that stays down is logged at
// ERROR again.
const window = time.Minute

// handler is the slog.Handler New returns: it passes everything
// through, but logs a failed dependency once per incident rather than per
// request. A request refused with 503 because the store (or the run log)
// is down (an ERROR record carrying the Unavailable error, see outageKey)
// is an ERROR the first time, with its cause; the same refusal in
// the minute after is DEBUG, and the next ERROR says how many there were.
// So a store that is down for a while costs a few log lines, not one per
// request (with the default 3 s store timeout, hundreds a minute).
type handler struct {
	next  slog.Handler
	state *incidents
}

type incidents struct {
	mu         sync.Mutex
	now        func() time.Time
	last       map[string]time.Time // message → when it was last logged at ERROR
	suppressed map[string]int
}

// New wraps next; now is the clock (time.Now).
func New(next slog.Handler, now func() time.Time) slog.Handler {
	return &handler{next: next, state: &incidents{now: now, last: map[string]time.Time{}, suppressed: map[string]int{}}}
}

func (o *handler) Enabled(ctx context.Context, l slog.Level) bool { return o.next.Enabled(ctx, l) }

func (o *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{next: o.next.WithAttrs(attrs), state: o.state}
}

func (o *handler) WithGroup(name string) slog.Handler {
	return &handler{next: o.next.WithGroup(name), state: o.state}
}

func (o *handler) Handle(ctx context.Context, r slog.Record) error {
	key, ok := outageKey(r)
	if !ok {
		return o.next.Handle(ctx, r)
	}
	s := o.state
	s.mu.Lock()
	now := s.now()
	quiet := now.Sub(s.last[key]) >= window
	n := s.suppressed[key]
	if quiet {
		s.last[key], s.suppressed[key] = now, 0
	} else {
		s.suppressed[key]++
	}
	s.mu.Unlock()
	if !quiet {
		if !o.next.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		d := slog.NewRecord(r.Time, slog.LevelDebug, r.Message+" (the same outage, logged at ERROR once a minute)", r.PC)
		r.Attrs(func(a slog.Attr) bool { d.AddAttrs(a); return true })
		return o.next.Handle(ctx, d)
	}
	if n > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("same_failures_since_last_logged", n))
	}
	return o.next.Handle(ctx, r)
}

// outageKey tells a request refused because a dependency is down, and
// which refusal it is: an ERROR record that carries, as the value of any
// attribute, an error holding a 503 *Error (what Unavailable makes); the
// key is its message. The record's text and attribute names play no part,
// so rewording a log line cannot change which lines are rate-limited.
func outageKey(r slog.Record) (string, bool) {
	if r.Level != slog.LevelError {
		return "", false
	}
	var key string
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() != slog.KindAny {
			return true
		}
		err, ok := a.Value.Any().(error)
		var e *wire.Error
		if ok && errors.As(err, &e) && e.Status == http.StatusServiceUnavailable && e.Message != "" {
			key = e.Message
			return false
		}
		return true
	})
	return key, key != ""
}
