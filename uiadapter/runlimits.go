package uiadapter

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentui/agentui/internal/wire"
)

// RunLimits bound what runs can make a server hold, and share it fairly.
// A run with history outlives its request (its client may leave at once
// and start another), so nothing else bounds how many go on: at most
// PerScope run at once for one scope (a user), PerAddress for one client
// address whatever scopes it holds (anonymous scopes are cheap to get),
// and Total for the handlers that share these limits. The last eighth of
// Total is kept for client addresses with no run going: however many
// runs a few addresses keep going, a new visitor's first reply runs.
// Over any bound a new turn gets 429 before anything runs or is stored.
// Every run, with history or not, may run for MaxDuration and stream
// MaxOutput bytes of text, reasoning and tool-call arguments; past either
// it is cut (its reply so far is kept, and its stream ends with the
// protocol's error event saying why).
//
// Give one RunLimits to several handlers ([WithRunLimits]) to bound them
// together, as the binary does for its two protocols. A zero field takes
// its default. Runs without history are bound to their request instead:
// a client that leaves stops its run, so its connections bound how many
// it has going.
type RunLimits struct {
	PerScope int // default DefaultRunsPerScope
	// PerAddress bounds the runs of one client address (see
	// [WithClientAddr]); default DefaultRunsPerAddress. Negative: client
	// addresses are not told apart (no bound, and no places kept for
	// addresses without a run). Behind a reverse proxy, tell the handler
	// the clients' addresses (limit.ForwardedFor), or every client shares
	// the proxy's.
	PerAddress  int
	Total       int           // default DefaultRunsTotal
	MaxDuration time.Duration // default DefaultMaxRunDuration
	MaxOutput   int64         // default defaultMaxRunOutput

	mu      sync.Mutex
	running map[string]int // by scope key
	byAddr  map[string]int // by client address
	n       int
}

// Defaults of [RunLimits].
const (
	DefaultRunsPerScope   = 8
	DefaultRunsPerAddress = 32
	DefaultRunsTotal      = 256
	DefaultMaxRunDuration = 15 * time.Minute
	defaultMaxRunOutput   = 4 << 20
)

func (l *RunLimits) check() error {
	if l.PerScope < 0 || l.Total < 0 || l.MaxDuration < 0 || l.MaxOutput < 0 {
		return errors.New("uiadapter: WithRunLimits: PerScope, Total, MaxDuration and MaxOutput must not be negative (0 takes the default)")
	}
	return nil
}

func (l *RunLimits) perScope() int   { return orDefault(l.PerScope, DefaultRunsPerScope) }
func (l *RunLimits) perAddress() int { return orDefault(l.PerAddress, DefaultRunsPerAddress) }
func (l *RunLimits) total() int      { return orDefault(l.Total, DefaultRunsTotal) }

// reserved is how many of the last places only an address with no run
// going may take.
func (l *RunLimits) reserved() int { return l.total() / 8 }

func (l *RunLimits) maxDuration() time.Duration {
	return orDefault(l.MaxDuration, DefaultMaxRunDuration)
}

func (l *RunLimits) maxOutput() int64 { return orDefault(l.MaxOutput, defaultMaxRunOutput) }

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Refusals of take.
var (
	errRunsPerAddress = &wire.Error{Status: http.StatusTooManyRequests, Message: "too many replies are being produced for your network address at once: wait for one to finish"}
	errRunsFull       = &wire.Error{Status: http.StatusTooManyRequests, Message: "the server is producing as many replies as it can: try again shortly"}
)

// take counts a run of scope key from client address addr, or refuses it
// (429) when the scope, the address or all of them are at their bound, or
// when only reserved places are left and addr already has a run going.
// The run gives its place back with give, once.
func (l *RunLimits) take(key, addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.byAddr[addr]
	switch {
	case l.running[key] >= l.perScope():
		return &wire.Error{Status: http.StatusTooManyRequests, Message: "too many replies are being produced for you at once (" + strconv.Itoa(l.perScope()) + "): wait for one to finish"}
	case l.n >= l.total():
		return errRunsFull
	case l.perAddress() > 0 && held >= l.perAddress():
		return errRunsPerAddress
	case l.perAddress() > 0 && held > 0 && l.n >= l.total()-l.reserved():
		return errRunsFull
	}
	if l.running == nil {
		l.running, l.byAddr = map[string]int{}, map[string]int{}
	}
	l.running[key]++
	l.byAddr[addr]++
	l.n++
	return nil
}

// give gives back a place take counted for key and addr.
func (l *RunLimits) give(key, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[key]--; l.running[key] <= 0 {
		delete(l.running, key)
	}
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
	l.n--
}

// Running is how many runs these limits count now.
func (l *RunLimits) Running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
