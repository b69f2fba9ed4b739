package uiadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
)

// session is one request's hold on a stored conversation: the lock, the
// version it builds on, and the agent's input.
type session struct {
	h        *Handler
	key      history.Key
	token    string
	version  history.Version
	input    *agent.Input
	refusal  string // a refusal the protocol sends as its error event
	locked   time.Time
	released bool
	log      *slog.Logger

	// The turn's own messages (the user message, and "not answered"
	// results for calls it abandons) are stored while the run starts, so
	// the first bytes do not wait for that round trip. turnStored is
	// closed when the append is done; turnErr says how it went, and save
	// waits for it before storing the reply.
	turnMsgs   []cmf.Message
	turnStored chan struct{}
	turnErr    error
}

// storeTimeout bounds each store call made after the request's own
// context may be gone (saving a cancelled run, releasing the lock).
const storeTimeout = 5 * time.Second

// begin locks the conversation, loads it and merges the request's new turn
// into it: the stored copy is the truth; the request contributes a new user
// message, or answers to the calls the stored conversation waits for.
// Everything else the client sent about the past is ignored.
func (h *Handler) begin(r *http.Request, turn *Turn, log *slog.Logger) (*session, error) {
	scope, err := h.cfg.scope(r)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, &Error{Status: http.StatusUnauthorized, Message: "not authorized", Err: err}
	}
	s := &session{h: h, key: historyKey(scope, turn.ChatID), token: ids.New(), log: log}
	ctx := r.Context()
	conv, err := history.AcquireLoad(ctx, h.cfg.store, s.key, s.token, h.cfg.lockTTL)
	switch {
	case errors.Is(err, history.ErrBusy):
		return nil, Conflict("a reply is still being produced for this chat")
	case err != nil:
		return nil, Unavailable("conversation history is unavailable", err)
	}
	s.locked = time.Now()
	ok := false
	defer func() {
		if !ok {
			s.release()
		}
	}()
	s.version = conv.Version
	msgs, resume, err := s.merge(ctx, turn, conv.Messages)
	if err != nil {
		return nil, err
	}
	turn.History = msgs
	s.input = &agent.Input{
		Messages:     msgs,
		Instructions: h.cfg.instructions,
		ClientTools:  turn.ClientTools,
		Resume:       resume,
		State:        turn.State,
		Context:      turn.Context,
	}
	ok = true
	return s, nil
}

func (s *session) merge(ctx context.Context, turn *Turn, stored []cmf.Message) ([]cmf.Message, []agent.Resolution, error) {
	store := s.h.cfg.store
	switch turn.Intent {
	case Continue:
		resume, err := s.checkResolutions(turn, stored)
		return stored, resume, err
	case Regenerate:
		last := lastUser(stored)
		if last < 0 {
			return nil, nil, Conflict("nothing to regenerate in this chat")
		}
		if last+1 < len(stored) {
			v, err := store.Truncate(ctx, s.key, s.version, last+1)
			if err != nil {
				return nil, nil, storeError(err)
			}
			s.version, stored = v, stored[:last+1]
		}
		return stored, nil, nil
	}
	// Submit: the new user message is the request's last message.
	if len(turn.Messages) == 0 || turn.Messages[len(turn.Messages)-1].Role != cmf.RoleUser {
		return nil, nil, BadRequest("a new turn must end with a user message")
	}
	clean, findings := Sanitize(turn.Messages[len(turn.Messages)-1:], nil, s.h.cfg.policy)
	findings.Log(s.log)
	if len(clean) == 0 {
		return nil, nil, BadRequest("the message has no content left after sanitization")
	}
	user := clean[0]
	if user.ID() == "" {
		user.SetID(ids.New())
	}
	if turn.ResumeRequired {
		for _, p := range agent.PendingCalls(stored) {
			if p.Kind == agent.PendingApproval {
				s.refusal = "This thread has pending interrupts: resume them before sending a new message."
				return stored, nil, nil
			}
		}
	}
	// Calls left waiting when the user moves on are answered "not
	// answered", so the stored conversation says what the model is told.
	var abandoned []cmf.Message
	for _, p := range agent.PendingCalls(stored) {
		abandoned = append(abandoned, notAnswered(p))
	}
	// Editing: a user message the store already has is replaced, and
	// everything after it goes.
	for i := range stored {
		if stored[i].Role == cmf.RoleUser && stored[i].ID() == user.ID() {
			v, err := store.Truncate(ctx, s.key, s.version, i)
			if err != nil {
				return nil, nil, storeError(err)
			}
			s.version, stored, abandoned = v, stored[:i], nil
			break
		}
	}
	s.turnMsgs = append(abandoned, user)
	return append(stored[:len(stored):len(stored)], s.turnMsgs...), nil, nil
}

// storeTurn starts appending the turn's own messages. If that fails, the
// run is cancelled (stop) and save reports the failure in the stream: the
// reply of a turn that is not stored is not stored either.
func (s *session) storeTurn(stop context.CancelFunc) {
	if len(s.turnMsgs) == 0 {
		return
	}
	s.turnStored = make(chan struct{})
	go func() {
		defer close(s.turnStored)
		// Not the request's context: a client that leaves at once still
		// leaves its message in the conversation.
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		v, err := s.h.cfg.store.Append(ctx, s.key, s.version, s.turnMsgs...)
		if err != nil {
			s.turnErr = err
			stop()
			return
		}
		s.version = v
	}()
}

// notAnswered is the result stored for a call nobody answered before the
// conversation moved on: an approval counts as denied, a client tool as
// failed.
func notAnswered(p agent.PendingCall) cmf.Message {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{
		ToolCallID: p.ToolCallID, ToolName: p.ToolName, IsError: true,
		Content: json.RawMessage(`"Not answered: the user sent a new message instead."`),
	}}}
	m.SetID(ids.New())
	if p.Kind == agent.PendingApproval {
		no := false
		agent.SetCallInfo(&m, p.ToolCallID, agent.CallInfo{Approved: &no, Reason: "not answered"})
	} else {
		agent.SetCallInfo(&m, p.ToolCallID, agent.CallInfo{Client: true})
	}
	return m
}

// checkResolutions accepts answers only for calls the stored conversation
// waits for. An approval or denial for any other call is refused; so is
// output for a call the conversation does not have. Output for a call that
// is already answered is the client resending the past, and is ignored.
func (s *session) checkResolutions(turn *Turn, stored []cmf.Message) ([]agent.Resolution, error) {
	pending := map[string]agent.PendingCall{}
	for _, p := range agent.PendingCalls(stored) {
		pending[p.ToolCallID] = p
	}
	known := map[string]bool{}
	for _, c := range agent.CallStates(stored) {
		known[c.Call.ToolCallID] = c.Result != nil
	}
	var resume []agent.Resolution
	for _, res := range turn.Resolutions {
		p, waiting := pending[res.ToolCallID]
		switch res.Kind {
		case agent.Approve, agent.Deny:
			if !waiting || p.Kind != agent.PendingApproval {
				return nil, Conflict("approval for a tool call that is not waiting for one")
			}
		default:
			if answered, ok := known[res.ToolCallID]; ok && answered {
				continue
			}
			if !waiting || p.Kind != agent.PendingClient {
				return nil, Conflict("tool output for a tool call that is not waiting for one")
			}
		}
		resume = append(resume, res.Resolution)
	}
	if len(resume) == 0 {
		return nil, Conflict("nothing to continue: no tool call in this chat is waiting for these answers")
	}
	return resume, nil
}

func historyKey(scope, chat string) history.Key { return history.Key{Scope: scope, Chat: chat} }

func lastUser(msgs []cmf.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == cmf.RoleUser {
			return i
		}
	}
	return -1
}

func storeError(err error) error {
	if errors.Is(err, history.ErrConflict) {
		return Conflict("the conversation changed; reload it")
	}
	return Unavailable("conversation history is unavailable", err)
}

// extend keeps the lock while a long run streams.
func (s *session) extend() {
	if time.Since(s.locked) < s.h.cfg.lockTTL/3 {
		return
	}
	s.locked = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.h.cfg.store.Acquire(ctx, s.key, s.token, s.h.cfg.lockTTL); err != nil {
		s.log.Warn("could not extend the conversation lock", "error", err)
	}
}

func (s *session) release() {
	if s.released {
		return
	}
	s.released = true
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.h.cfg.store.Release(ctx, s.key, s.token); err != nil {
		s.log.Warn("could not release the conversation lock; it expires on its own", "error", err)
	}
}

// saveAttempts and saveBackoff bound the retries of the final append.
const saveAttempts = 4

var saveBackoff = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}

// save appends what the run produced. A run that failed or was cut off
// keeps what it streamed, marked with why it ended. An attempt that timed
// out may still have landed: a conflict is checked against the stored
// tail, so nothing is lost and nothing is stored twice.
func (s *session) save(res runResult) error {
	if s.turnStored != nil {
		<-s.turnStored
		if s.turnErr != nil {
			return fmt.Errorf("storing the user's message: %w", s.turnErr)
		}
	}
	rec := res.rec
	switch {
	case res.err != nil:
		rec.Interrupt(cmf.StopError)
	case !res.finished:
		rec.Interrupt(cmf.StopAborted)
	}
	msgs := withContent(rec.Messages())
	if len(msgs) == 0 {
		return nil
	}
	var err error
	for attempt := range saveAttempts {
		if attempt > 0 {
			time.Sleep(saveBackoff[min(attempt-1, len(saveBackoff)-1)])
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		var v history.Version
		v, err = s.h.cfg.store.Append(ctx, s.key, s.version, msgs...)
		if err == nil {
			cancel()
			s.version = v
			return nil
		}
		if errors.Is(err, history.ErrConflict) {
			conv, lerr := s.h.cfg.store.Load(ctx, s.key)
			cancel()
			if lerr == nil && endsWith(conv.Messages, msgs) {
				return nil // an earlier attempt landed
			}
			return err // someone else wrote: retrying cannot help
		}
		cancel()
		s.log.Warn("saving the reply failed; retrying", "attempt", attempt+1, "error", err)
	}
	return err
}

// withContent leaves out assistant messages with nothing in them: a step
// that was cut off before its first word has nothing to show or to feed a
// model.
func withContent(msgs []cmf.Message) []cmf.Message {
	out := msgs[:0:0]
	for i := range msgs {
		if msgs[i].Role == cmf.RoleAssistant && len(msgs[i].Content) == 0 && len(agent.DataRecords(&msgs[i])) == 0 {
			continue
		}
		out = append(out, msgs[i])
	}
	return out
}

// endsWith reports whether stored ends with msgs (same ids and content).
func endsWith(stored, msgs []cmf.Message) bool {
	if len(stored) < len(msgs) {
		return false
	}
	tail := stored[len(stored)-len(msgs):]
	for i := range msgs {
		a, _ := json.Marshal(tail[i])
		b, _ := json.Marshal(msgs[i])
		if string(a) != string(b) {
			return false
		}
	}
	return true
}
