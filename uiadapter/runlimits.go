package uiadapter

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RunLimits bound what runs can make a server hold. A run with history
// outlives its request (its client may leave at once and start another),
// so nothing else bounds how many go on: at most PerScope run at once
// for one scope (a user; without one, a client address) and Total for
// the handlers that share these limits; over either, a new turn gets 429
// before anything runs or is stored. Every run, with history or not, may
// run for MaxDuration and stream MaxOutput bytes of text, reasoning and
// tool-call arguments; past either it is cut (its reply so far is kept,
// and its stream ends with the protocol's error event saying why).
//
// Give one RunLimits to several handlers ([WithRunLimits]) to bound them
// together, as the binary does for its two protocols. A zero field takes
// its default. Runs without history are bound to their request instead:
// the server's connections bound how many run at once.
type RunLimits struct {
	PerScope    int           // default DefaultRunsPerScope
	Total       int           // default DefaultRunsTotal
	MaxDuration time.Duration // default DefaultMaxRunDuration
	MaxOutput   int64         // default DefaultMaxRunOutput

	mu      sync.Mutex
	running map[string]int // by scope key
	n       int
}

// Defaults of [RunLimits].
const (
	DefaultRunsPerScope   = 8
	DefaultRunsTotal      = 256
	DefaultMaxRunDuration = 15 * time.Minute
	DefaultMaxRunOutput   = 4 << 20
)

// Messages a run cut by a bound ends with.
const (
	// RunTooLongMessage: the run went on past MaxDuration.
	RunTooLongMessage = "The reply was stopped: it ran longer than the server allows."
	// RunTooLargeMessage: the run streamed more than MaxOutput.
	RunTooLargeMessage = "The reply was stopped: it grew longer than the server allows."
)

// Causes a run is cut with by its bounds.
var (
	errRunTooLong  = errors.New("uiadapter: the run went on past its time bound")
	errRunTooLarge = errors.New("uiadapter: the run streamed past its output bound")
)

func (l *RunLimits) check() error {
	if l.PerScope < 0 || l.Total < 0 || l.MaxDuration < 0 || l.MaxOutput < 0 {
		return errors.New("uiadapter: WithRunLimits: bounds must not be negative (0 takes the default)")
	}
	return nil
}

func (l *RunLimits) perScope() int { return orDefault(l.PerScope, DefaultRunsPerScope) }
func (l *RunLimits) total() int    { return orDefault(l.Total, DefaultRunsTotal) }

func (l *RunLimits) maxDuration() time.Duration {
	return orDefault(l.MaxDuration, DefaultMaxRunDuration)
}

func (l *RunLimits) maxOutput() int64 { return orDefault(l.MaxOutput, DefaultMaxRunOutput) }

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// take counts a run of key, or refuses it (429) when key or all of them
// are at their bound. The run gives its place back with give, once.
func (l *RunLimits) take(key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.running[key] >= l.perScope():
		return &Error{Status: http.StatusTooManyRequests, Message: "too many replies are being produced for you at once (" + strconv.Itoa(l.perScope()) + "): wait for one to finish"}
	case l.n >= l.total():
		return &Error{Status: http.StatusTooManyRequests, Message: "the server is producing as many replies as it can: try again shortly"}
	}
	if l.running == nil {
		l.running = map[string]int{}
	}
	l.running[key]++
	l.n++
	return nil
}

// give gives back a place take counted for key.
func (l *RunLimits) give(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[key]--; l.running[key] <= 0 {
		delete(l.running, key)
	}
	l.n--
}

// Running is how many runs these limits count now.
func (l *RunLimits) Running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
