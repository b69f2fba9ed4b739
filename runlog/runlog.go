// Package runlog keeps the event log of each chat's latest run, so that a
// reply outlives the connection that asked for it: any reader (the tab
// that asked, a reloaded tab, a second device, another replica) replays
// the run from its first event, or from the event it saw last, and
// follows it live until it ends.
//
// A log is a header (which run, where its reply starts in the stored
// conversation) and a sequence of entries numbered upwards from 1 (a
// log may merge consecutive text deltas no reader has been given into
// one entry, numbered as the last of them, so numbers may skip): the run's
// agent events in their protocol-neutral form ([agent.MarshalEvent]), then
// at most one [TypeFailed] entry, then [TypeEnded]. A chat has one log, its
// latest run's; beginning a run replaces it. After the run ends, the log
// is kept for a retention period (for readers that reconnect with the
// last event they saw), then removed.
//
// [Memory] is the log of one process; history/redisstore has one on
// Redis Streams that every replica shares.
package runlog

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
)

// Entry types that are not agent events.
const (
	// TypeFailed: the run ended with an error the client sees; Data is
	// {"message": "..."} (never internal error text).
	TypeFailed = "run_failed"
	// TypeEnded is the last entry of every log.
	TypeEnded = "run_ended"
	// TypeMoved ends a process's own log of a run it handed over to
	// another replica (see Note.Handover): its readers read on from the
	// shared log. A shared log never holds it.
	TypeMoved = "run_moved"
)

// Entry is one entry of a run's log: its sequence number, time, type and
// data.
type Entry struct {
	Seq int64
	// Time is when the entry was logged. An agent event's entry leaves it
	// zero (reading the clock per event cost a twentieth of a reply's
	// CPU): a log that keeps entries elsewhere stamps them as it stores
	// them, once per batch, and one in memory leaves them as they are.
	Time time.Time
	Type string
	// Data is the entry's JSON: the event's, for agent events. A log that
	// keeps entries in memory may leave it empty and keep Event.
	Data json.RawMessage
	// Event is the decoded agent event; nil for TypeFailed and TypeEnded.
	Event agent.Event
}

// Failed returns the message of a TypeFailed entry.
func (e *Entry) Failed() string {
	var v struct{ Message string }
	_ = json.Unmarshal(e.Data, &v)
	return v.Message
}

// FailedEntry returns a TypeFailed entry with message.
func FailedEntry(seq int64, message string) Entry {
	data, _ := json.Marshal(struct{ Message string }{message})
	return Entry{Seq: seq, Time: time.Now(), Type: TypeFailed, Data: data}
}

// EndedEntry returns the TypeEnded entry that ends a log.
func EndedEntry(seq int64) Entry {
	return Entry{Seq: seq, Time: time.Now(), Type: TypeEnded}
}

// MovedEntry returns the TypeMoved entry that ends a process's own log
// of a run it handed over.
func MovedEntry(seq int64) Entry {
	return Entry{Seq: seq, Time: time.Now(), Type: TypeMoved}
}

// EventEntry returns the entry for an agent event (its Time left zero).
func EventEntry(seq int64, ev agent.Event) Entry {
	return Entry{Seq: seq, Event: ev}
}

// Encode fills in Type and Data from Event, for logs that store bytes.
func (e *Entry) Encode() error {
	if e.Event == nil || e.Data != nil {
		return nil
	}
	typ, data, err := agent.MarshalEvent(e.Event)
	e.Type, e.Data = typ, data
	return err
}

// Decode fills in Event from Type and Data.
func (e *Entry) Decode() error {
	if e.Type == TypeFailed || e.Type == TypeEnded || e.Type == TypeMoved || e.Event != nil {
		return nil
	}
	ev, err := agent.UnmarshalEvent(e.Type, e.Data)
	e.Event = ev
	return err
}

// Header describes a run.
type Header struct {
	// Run is the run's id (AG-UI's runId).
	Run string `json:"run"`
	// Protocol is the name of the protocol the run was asked for in.
	Protocol string `json:"protocol"`
	// Base is how many stored messages come before the run's reply: the
	// conversation it built on and the turn that asked for it.
	Base int `json:"base"`
	// Turn is what the run's request added to the conversation (the
	// last len(Turn) of its Base messages). It is stored while the run
	// starts, so a reader that loads the conversation early may not see
	// it yet; the header always has it.
	Turn []cmf.Message `json:"turn,omitempty"`
	// Continue is the assistant message the run continues (answers to its
	// tool calls), "" for a new reply.
	Continue string `json:"continue,omitempty"`
	// Reply is the id of a new reply's first assistant message, which a
	// client that showed the reply holds: a request that carries it
	// stopped reading this run (see run.Engine.Supersede).
	Reply string `json:"reply,omitempty"`
	// Request is the key of the request that started the run
	// (wire.Turn.Key): a request with the same key is that one retried.
	Request string `json:"request,omitempty"`
	// Lock is the token that holds the chat's run lock while the run
	// lives: a reader that finds the lock free and the log unfinished
	// knows the run's process died.
	Lock    string    `json:"lock"`
	Started time.Time `json:"started"`
	// Input is what the run was asked with beyond the stored
	// conversation, in its handler's own encoding: with it, another
	// replica can run the run again from its last durable step when the
	// run's process dies or hands it over. nil: it cannot be.
	Input json.RawMessage `json:"input,omitempty"`
	// Redrives counts the times the run was run again so.
	Redrives int `json:"redrives,omitempty"`
	// Redriven is the last sequence the shared log had when the run was
	// last run again: its entries go on from RedriveGap past it.
	Redriven int64 `json:"redriven,omitempty"`
	// Voided are the ranges of sequence numbers, first and last, of the
	// steps a re-drive replaced, with the events that closed them: a
	// reader that has shown nothing of a range skips it.
	Voided [][2]int64 `json:"voided,omitempty"`
	// Ended is set by End: the log is complete.
	Ended bool `json:"ended,omitempty"`
}

// RedriveGap is how far past the last entry of a shared log a re-drive
// numbers its own (Header.Redriven): the process that died may have
// given its readers entries it had not copied yet (at most a few
// milliseconds' worth, far fewer than this). A reader that read up to
// one of those reads on from Redriven, the last entry the log kept.
const RedriveGap = 1 << 20

// ErrNoRun: the chat has no run log (none ran, or it expired).
var ErrNoRun = errors.New("runlog: no run")

// Log keeps run logs. Implementations are safe for concurrent use.
type Log interface {
	// Begin starts key's log for a new run, replacing an earlier one,
	// with its first entries when there are some: one step, so a log
	// copied from another costs no round trip of its own to start.
	Begin(ctx context.Context, key history.Key, h Header, first ...Entry) error
	// Append adds entries to run's log, numbered on from its last. An
	// append to a log that another run has replaced is dropped.
	Append(ctx context.Context, key history.Key, run string, entries ...Entry) error
	// End appends run's last entries (its terminal ones, and whatever a
	// copy of another log had not copied yet), marks its log complete
	// (Header.Ended) and starts its retention: it is removed retention
	// from now. One step, so a run's end costs one round trip. The
	// entries come in slices, in order: a copy of a log that keeps its
	// entries in chunks (Memory) ends with those chunks as they are,
	// where joining them cost hundreds of runs ending together a
	// megabyte each.
	End(ctx context.Context, key history.Key, run string, retention time.Duration, last ...[]Entry) error
	// Write is Begin and End in one step: the whole log of a run that
	// has ended, with its retention started, its entries in slices as
	// End's. A copy of a short run, made once it is over, costs one round
	// trip.
	Write(ctx context.Context, key history.Key, h Header, retention time.Duration, entries ...[]Entry) error
	// Current returns the header of key's latest run; ErrNoRun when none.
	Current(ctx context.Context, key history.Key) (Header, error)
	// Read returns run's entries after seq, in order, decoded: the next
	// ones, not necessarily all there are (read again from the last one's
	// Seq for more). When there are none yet it waits up to wait for some
	// (and returns none when none came). ErrNoRun when the log is gone or
	// another run's.
	Read(ctx context.Context, key history.Key, run string, after int64, wait time.Duration) ([]Entry, error)
	// Notify hands n to whichever process runs n's run: every watcher,
	// in every process, hears it.
	Notify(ctx context.Context, n Note) error
	// Watch calls fn with every note, from any process, until the
	// returned function is called.
	Watch(fn func(Note)) (cancel func())
}

// A Note is a request to a run from any process: stop, or take a user
// message at the next step boundary. Delivery is at most once (a shared
// log's notes are lost while a process reconnects): the sender learns
// what came of it from the run's log (a Steered entry, or its end).
type Note struct {
	Key history.Key
	Run string
	// Steer is the message for the run to take; nil asks it to stop.
	Steer *cmf.Message `json:",omitempty"`
	// Handover says the run's process handed it over (it is shutting
	// down): a replica that can, runs it again. Steer is nil.
	Handover bool `json:",omitempty"`
}

// Peers is a shared log that can say how many processes watch it (each
// process's log counts once): a process that shuts down hands its runs
// over only when another would take them.
type Peers interface {
	Listeners(ctx context.Context) (int, error)
}

// DefaultRetention is how long a finished run's log is kept.
const DefaultRetention = time.Minute
