package run

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/runlog"
)

// outcomeKind is how a run ended.
type outcomeKind uint8

const (
	// runFinished: the agent finished (or paused for answers).
	runFinished outcomeKind = iota + 1
	// runStopped: someone stopped it (StopHandler, a token budget); what
	// it produced is kept and its stream ends as a normal one does.
	runStopped
	// runFailed: the agent failed, or its reply could not be saved: the
	// stream ends with the protocol's error event.
	runFailed
	// runCut: the server cut it (shutdown, a lost lock, a bound) or its
	// client left (without history): what it produced is kept, and a
	// stream still open ends with the protocol's error event.
	runCut
)

func (k outcomeKind) String() string {
	switch k {
	case runFinished:
		return "finished"
	case runStopped:
		return "stopped"
	case runFailed:
		return "failed"
	case runCut:
		return "cut"
	}
	return "unknown"
}

// outcome is how a run ended, decided in one place (outcomeOf, then
// saved) and written the same way in both modes, to a live stream or to
// the run log's last entries.
type outcome struct {
	kind outcomeKind
	// fin is the agent's finish (runFinished), held back until the reply
	// is saved.
	fin *agent.RunFinished
	// message is what the client is told (runFailed, and runCut when a
	// stream is there to tell).
	message string
	// cause is why, for the log.
	cause error
}

// outcomeOf decides how a run ended from what it did: the producer's
// result and its context's cause. lost says the run lost its lock.
func outcomeOf(ctx context.Context, res result, lost bool) outcome {
	cause := context.Cause(ctx)
	switch {
	case lost:
		return outcome{kind: runCut, message: wire.LockLostMessage, cause: errLockLost}
	case errors.Is(cause, ErrShuttingDown):
		return outcome{kind: runCut, message: wire.ShutdownMessage, cause: cause}
	case errors.Is(cause, ErrTooLong):
		return outcome{kind: runCut, message: wire.RunTooLongMessage, cause: cause}
	case errors.Is(cause, errTooLarge):
		return outcome{kind: runCut, message: wire.RunTooLargeMessage, cause: cause}
	case res.err != nil:
		return outcome{kind: runFailed, message: failureMessage(res.err), cause: res.err}
	case errors.Is(cause, errStopped), errors.Is(cause, ErrBudget):
		return outcome{kind: runStopped, cause: cause}
	case ctx.Err() != nil:
		return outcome{kind: runCut, cause: errReaderGot}
	case res.finished == nil:
		return outcome{kind: runCut, cause: errNoFinish}
	}
	return outcome{kind: runFinished, fin: res.finished}
}

// errNoFinish: the agent's stream ended with neither its finish nor an
// error; what it said is kept as cut off.
var errNoFinish = errors.New("the agent stopped without finishing")

// stopReason is what the stored reply of a run that did not finish says
// of its end; "" for one that finished (its steps say).
func (o outcome) stopReason() cmf.StopReason {
	switch o.kind {
	case runFinished:
		return ""
	case runFailed:
		return cmf.StopError
	}
	return cmf.StopAborted
}

// told records, on the reply's last message, what the client is told of
// a run that failed or was cut with a message: a reply that failed
// before it said anything is kept as an empty reply that says so, and a
// reloaded page shows the same failure as the live one did.
func (o outcome) told(msgs []cmf.Message) []cmf.Message {
	if o.message == "" {
		return msgs
	}
	return toldOn(msgs, o.message)
}

// toldOn records message on msgs' last assistant message, or on a new
// empty one when the run has none.
func toldOn(msgs []cmf.Message, message string) []cmf.Message {
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role != cmf.RoleAssistant {
		i--
	}
	if i < 0 {
		m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleAssistant}
		m.SetID(ids.New())
		msgs, i = append(msgs[:len(msgs):len(msgs)], m), len(msgs)
	} else {
		msgs = slices.Clone(msgs)
	}
	m := &msgs[i]
	e := m.Extensions.Clone()
	if e == nil {
		e = &cmf.Extensions{}
	}
	c := cmf.CompletionExtension{StopReason: cmf.StopError}
	if e.Completion != nil {
		c = *e.Completion
	}
	c.Error = message
	e.Completion = &c
	m.Extensions = e
	return msgs
}

// saved turns the outcome into what became of the run, once its reply
// was stored or not: a reply that was not (or may not have been) stored
// is a failure the client is told of, unless the run was cut because it
// lost its lock, which says why already.
func (o outcome) saved(s saveOutcome, err error) outcome {
	if errors.Is(o.cause, errLockLost) {
		return o
	}
	switch s {
	case notSaved:
		return outcome{kind: runFailed, message: wire.SaveFailedMessage, cause: err}
	case maybeSaved:
		return outcome{kind: runFailed, message: wire.SaveUncertainMessage, cause: err}
	}
	return o
}

// log says how the run ended.
func (o outcome) log(log *slog.Logger, stored bool) {
	switch {
	case o.message == wire.SaveFailedMessage:
		log.Error("the reply could not be saved", "error", o.cause)
	case o.message == wire.SaveUncertainMessage:
		log.Error("the reply may not have been saved; still trying", "error", o.cause)
	case o.message == wire.ShutdownMessage:
		log.Warn("the run was cut by shutdown", "stored", stored)
	case o.message == wire.LockLostMessage:
		log.Error("the run lost its conversation lock")
	case o.message == wire.RunTooLongMessage, o.message == wire.RunTooLargeMessage:
		log.Warn("the run was cut by a bound", "why", o.cause)
	case o.kind == runFailed:
		log.Error("agent run failed", "error", o.cause)
	case o.kind == runStopped:
		log.Info("run stopped", "why", o.cause)
	case errors.Is(o.cause, errNoFinish):
		log.Warn("the agent stopped without finishing; its reply is kept as cut off")
	case o.kind == runCut:
		log.Info("client disconnected; run cancelled")
	}
}

// encode writes the outcome's terminal frames to a live stream.
func (o outcome) encode(enc wire.Encoder) {
	switch {
	case o.message != "":
		enc.Fail(o.message)
	case o.fin != nil:
		enc.Encode(o.fin)
	}
	enc.Close()
}

// entries are the outcome's last entries in a run's log.
func (o outcome) entries(next func() int64) []runlog.Entry {
	var last []runlog.Entry
	switch {
	case o.message != "":
		last = append(last, runlog.FailedEntry(next(), o.message))
	case o.fin != nil:
		last = append(last, runlog.EventEntry(next(), o.fin))
	}
	return append(last, runlog.EndedEntry(next()))
}

// failureMessages is what a client is told of a run that failed, by the
// agent error the failure wraps; the first that matches is told.
var failureMessages = []struct {
	err     error
	message string
}{
	{agent.ErrContextOverflow, wire.ContextOverflowMessage},
	{agent.ErrModelBusy, wire.ModelBusyMessage},
	{agent.ErrModelUnreachable, wire.ModelUnreachableMessage},
	{agent.ErrModelRejected, wire.ModelRejectedMessage},
	{agent.ErrModelAccessDenied, wire.ModelAccessDeniedMessage},
}

// failureMessage is what a client is told of a run that failed with err:
// what it can act on, else ErrorMessage.
func failureMessage(err error) string {
	for _, f := range failureMessages {
		if errors.Is(err, f.err) {
			return f.message
		}
	}
	return wire.ErrorMessage
}

// errTooLarge cuts a run that streams past its MaxOutput.
var errTooLarge = errors.New("the run streamed past its output bound")

// result is what the producer saw of a run.
type result struct {
	rec      *agent.Recorder
	err      error
	finished *agent.RunFinished // the agent finished (held back until the reply is saved)
}

// saveOutcome says what became of a reply.
type saveOutcome uint8

const (
	saved       saveOutcome = iota // stored (or nothing to store)
	notSaved                       // certainly not stored
	maybeSaved                     // not known: a write that timed out may land
	savePending                    // (internal) not decided yet: keep trying
)

func (o saveOutcome) String() string {
	switch o {
	case saved:
		return "saved"
	case notSaved:
		return "not saved"
	case maybeSaved:
		return "unknown"
	}
	return "pending"
}

// withContent leaves out assistant messages with nothing in them: a step
// that was cut off before its first word has nothing to show or to feed a
// model.
func withContent(msgs []cmf.Message) []cmf.Message {
	out := msgs[:0:0]
	for i := range msgs {
		if msgs[i].Role == cmf.RoleAssistant && len(msgs[i].Content) == 0 && len(msgs[i].Data()) == 0 && told(&msgs[i]) == "" {
			continue
		}
		out = append(out, msgs[i])
	}
	return out
}

// told is what a stored reply says its client was told of its failure
// ("" for none).
func told(m *cmf.Message) string {
	if m.Extensions == nil || m.Extensions.Completion == nil {
		return ""
	}
	return m.Extensions.Completion.Error
}

// Causes a run is cancelled with.
var (
	errStopped   = errors.New("the run was stopped")
	errLockLost  = errors.New("the run lost its lock")
	errReaderGot = errors.New("the client went away")
	// ErrTooLong cuts a run that goes on past its MaxDuration.
	ErrTooLong = errors.New("the run went on past its time bound")
	// ErrBudget stops a run whose scope has no tokens left.
	ErrBudget = errors.New("the token budget is used up")
)

// ErrShuttingDown is the cause given to the requests Shutdown cuts.
var ErrShuttingDown = errors.New("the server is shutting down")

// ShuttingDown reports whether Shutdown cut the request of ctx.
func ShuttingDown(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrShuttingDown)
}
