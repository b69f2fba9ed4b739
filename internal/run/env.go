package run

import (
	"log/slog"
	"sync"
	"time"

	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/runlog"
)

// Config is what the engine needs of its handler's configuration.
type Config struct {
	Store  history.Store  // nil: nothing is kept, only live runs
	Locker history.Locker // the chats' locks (with Store)
	// RunLog is the run log every replica reads (WithRunLog): a
	// *runlog.Memory is this process's own; any other is shared, and the
	// engine keeps a local one beside it. nil: a local one.
	RunLog       runlog.Log
	LockTTL      time.Duration
	StoreTimeout time.Duration
	Retention    time.Duration // how long an ended run's log is kept
	KeepAlive    time.Duration // 0: no keep-alive comments
	Log          *slog.Logger
	// Redrive builds the run that continues one whose process died, on
	// another replica (see redrive); nil: such a run's log is finished
	// as cut short. MaxRedrives bounds how often one run is run again
	// (0: DefaultMaxRedrives).
	Redrive     Redriver
	MaxRedrives int
}

// env is what every part of the engine works with: its configuration,
// its run logs, and the work it leaves to the background.
type env struct {
	cfg Config
	log *slog.Logger
	// releasing bounds the lock releases retried in the background, so a
	// store that stays frozen under load cannot pile up goroutines: past
	// the bound, a lock is left to expire on its own.
	releasing chan struct{}
	// background counts what goes on after a stream ended (lock releases
	// retried, a save or a shared log's end finished later), which
	// Shutdown waits for.
	background sync.WaitGroup

	local  *runlog.Memory // this process's runs
	shared runlog.Log     // every replica's runs, or nil
	engine *Engine        // the engine this is of, which re-drives dead runs
}

// maxReleasing is how many lock releases an engine retries at once.
const maxReleasing = 1024

func newEnv(cfg Config) *env {
	e := &env{cfg: cfg, log: cfg.Log, releasing: make(chan struct{}, maxReleasing)}
	if m, ok := cfg.RunLog.(*runlog.Memory); ok {
		e.local = m
	} else {
		e.local, e.shared = runlog.NewMemory(), cfg.RunLog
	}
	return e
}

// Go runs fn on its own goroutine, counted for Shutdown.
func (e *env) Go(fn func()) {
	e.background.Add(1)
	go func() {
		defer e.background.Done()
		fn()
	}()
}
