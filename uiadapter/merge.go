package uiadapter

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/ids"
)

// session is one request's hold on a stored conversation: the lock, the
// version it builds on, and the agent's input.
//
// The lock is extended on a timer for as long as the session lives (not
// on writes: a stream whose client stopped reading must not outlive it),
// and a run whose lock is lost is stopped. The session ends with release,
// which retries in the background until the lock is gone or would have
// expired anyway, so a store that comes back finds the chat usable.
type session struct {
	h       *Handler
	key     history.Key
	token   string
	version history.Version
	input   *agent.Input
	refusal string // a refusal the protocol sends as its error event
	log     *slog.Logger

	// The turn's own messages (the user message, and "not answered"
	// results for calls it abandons) are stored while the run starts, so
	// the first bytes do not wait for that round trip. turnStored is
	// closed when the append is done; turnErr says how it went. When it
	// failed, save stores them with the reply.
	turnMsgs   []cmf.Message
	turnStored chan struct{}
	turnErr    error

	held     atomic.Int64 // when the lock was last known held (Unix ns)
	lost     atomic.Bool  // the lock was lost and the run stopped
	keepStop chan struct{}
	keepDone chan struct{}
	released bool
}

// Messages the client sees when a reply streamed but did not end well.
const (
	// SaveFailedMessage: the reply was not stored.
	SaveFailedMessage = "The reply could not be saved."
	// SaveUncertainMessage: the store did not answer in time, so whether
	// the reply was stored is not known yet; the server keeps trying.
	SaveUncertainMessage = "The reply may not have been saved."
	// LockLostMessage: the run was stopped because the server could no
	// longer hold the chat for it (another request took it over, or the
	// store was unreachable for longer than the lock lasts).
	LockLostMessage = "The reply was stopped: the server lost its hold on this chat."
)

// errClientGone: the client left before the request could be served; no
// response is written.
var errClientGone = errors.New("the client went away")

// begin locks the conversation, loads it and merges the request's new turn
// into it: the stored copy is the truth; the request contributes a new user
// message, or answers to the calls the stored conversation waits for.
// Everything else the client sent about the past is ignored.
func (h *Handler) begin(req *request) (*session, error) {
	r, turn, log := req.r, req.turn, req.log
	s := &session{h: h, key: historyKey(req.scope, turn.ChatID), token: ids.New(), log: log}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.storeTimeout)
	defer cancel()
	conv, err := history.AcquireLoad(ctx, h.cfg.store, h.cfg.locker, s.key, s.token, h.cfg.lockTTL)
	switch {
	case errors.Is(err, history.ErrBusy):
		return nil, &Error{Status: http.StatusConflict, Message: "a reply is still being produced for this chat", Code: CodeBusy}
	case err != nil:
		if !errors.Is(err, history.ErrUnavailable) {
			// The lock may have been taken before the reply was lost.
			go s.releaseEventually(time.Now())
		}
		if r.Context().Err() != nil {
			return nil, errClientGone
		}
		return nil, Unavailable("conversation history is unavailable", err)
	}
	s.held.Store(time.Now().UnixNano())
	ok := false
	defer func() {
		if !ok {
			s.release()
		}
	}()
	if h.shared != nil {
		// A run whose process died left its log open: finish it (its
		// partial reply is stored) before building on the conversation.
		if hdr, err := h.shared.Current(ctx, s.key); err == nil && !hdr.Ended && hdr.Lock != s.token {
			if err := h.finishDead(ctx, s.key, hdr); err != nil {
				return nil, Unavailable("conversation history is unavailable", err)
			}
			if conv, err = h.cfg.store.Load(ctx, s.key); err != nil {
				return nil, Unavailable("conversation history is unavailable", err)
			}
		}
	}
	s.version = conv.Version
	if turn.Intent != Continue && (len(conv.Messages) >= h.cfg.maxChatMessages || conv.Bytes >= h.cfg.maxChatBytes) {
		log.Warn("chat is at its size limit", "messages", len(conv.Messages), "bytes", conv.Bytes)
		return nil, Conflict("this chat is too long: start a new one")
	}
	stored, added, resume, err := s.merge(ctx, turn, conv.Messages)
	if err != nil {
		return nil, err
	}
	turn.History, turn.Added = stored, added
	s.input = &agent.Input{
		History:      stored,
		Messages:     added,
		Instructions: h.cfg.instructions,
		ClientTools:  turn.ClientTools,
		Resume:       resume,
		State:        turn.State,
		Context:      turn.Context,
	}
	ok = true
	return s, nil
}

// scopeOf runs the scope function: its error refuses the request (401, or
// the status of an *Error; 404 for ErrNoScope, which has no
// conversations).
func (h *Handler) scopeOf(r *http.Request) (string, error) {
	scope, err := h.cfg.scope(r)
	return scope, scopeError(err)
}

// scopeError is the refusal for a scope function's error (nil for none).
func scopeError(err error) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoScope):
		return &Error{Status: http.StatusNotFound, Message: "no conversations are kept for a request without a credential"}
	case errors.As(err, &e):
		return e
	}
	return &Error{Status: http.StatusUnauthorized, Message: "not authorized", Err: err}
}

// merge returns the stored conversation the run builds on and the
// messages this request adds to it (kept apart, so that a long stored
// conversation is never copied), and the answers to its pending calls.
func (s *session) merge(ctx context.Context, turn *Turn, stored []cmf.Message) (history, added []cmf.Message, resume []agent.Resolution, err error) {
	store := s.h.cfg.store
	// A request that builds on earlier messages (it answers calls,
	// regenerates a reply, or shows messages before its new one) in a
	// chat of which nothing is stored talks to a server that lost the
	// chat: refused before anything is stored, so it is not forked.
	if len(stored) == 0 && (turn.Intent != Submit || turn.ParentID != "" || showsEarlier(turn.Messages)) {
		return nil, nil, nil, unknownChat()
	}
	switch turn.Intent {
	case Continue:
		resume, err := s.checkResolutions(turn, stored)
		return stored, nil, resume, err
	case Regenerate:
		keep, err := regenerateFrom(stored, turn.MessageID)
		if err != nil {
			return nil, nil, nil, err
		}
		if keep < len(stored) {
			v, err := store.Truncate(ctx, s.key, s.version, keep)
			if err != nil {
				return nil, nil, nil, storeError(err)
			}
			s.version, stored = v, stored[:keep:keep]
		}
		return stored, nil, nil, nil
	}
	// Submit: the new user message is the request's last message.
	if len(turn.Messages) == 0 || turn.Messages[len(turn.Messages)-1].Role != cmf.RoleUser {
		return nil, nil, nil, BadRequest("a new turn must end with a user message")
	}
	clean, findings := Sanitize(turn.Messages[len(turn.Messages)-1:], nil, s.h.cfg.policy)
	findings.Log(s.log)
	if len(clean) == 0 {
		return nil, nil, nil, BadRequest("the message has no content left after sanitization")
	}
	user := clean[0]
	if user.ID() == "" {
		user.SetID(ids.New())
	}
	pending := cmf.PendingToolCalls(stored)
	if turn.ResumeRequired {
		for _, p := range pending {
			if p.Status() == cmf.CallAwaitingApproval {
				s.refusal = "This thread has pending interrupts: resume them before sending a new message."
				return stored, nil, nil, nil
			}
		}
	}
	// Calls left waiting when the user moves on are answered "not
	// answered", so the stored conversation says what the model is told.
	var abandoned []cmf.Message
	for _, p := range pending {
		abandoned = append(abandoned, notAnswered(p))
	}
	// Editing under a new id (assistant-ui): the client's branch leaves
	// the stored chat after its parent, where the store has another turn.
	// That turn and what followed go; the calls it left waiting went
	// with it.
	if cut := branchCut(stored, turn.ParentID, turn.Root); cut >= 0 {
		v, err := store.Truncate(ctx, s.key, s.version, cut)
		if err != nil {
			return nil, nil, nil, storeError(err)
		}
		s.log.Info("the client edited under a new id; the other branch is dropped", "kept", cut, "dropped", len(stored)-cut)
		s.version, stored, abandoned = v, stored[:cut:cut], nil
	}
	// Editing: a user message the store already has is replaced, and
	// everything after it goes. An id that names another kind of message
	// is refused: one id, one message.
	for i := range stored {
		if stored[i].ID() != user.ID() {
			continue
		}
		if stored[i].Role != cmf.RoleUser {
			return nil, nil, nil, Conflict("a message with this id already exists in this chat")
		}
		v, err := store.Truncate(ctx, s.key, s.version, i)
		if err != nil {
			return nil, nil, nil, storeError(err)
		}
		s.version, stored, abandoned = v, stored[:i:i], nil
		break
	}
	s.turnMsgs = append(abandoned, user)
	return stored, s.turnMsgs, nil, nil
}

// storeTurn starts appending the turn's own messages. The run does not
// wait for it; if it fails, save stores them with the reply.
func (s *session) storeTurn() {
	if len(s.turnMsgs) == 0 {
		return
	}
	s.turnStored = make(chan struct{})
	go func() {
		defer close(s.turnStored)
		// Not the request's context: a client that leaves at once still
		// leaves its message in the conversation.
		ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.storeTimeout)
		defer cancel()
		v, err := s.h.cfg.store.Append(ctx, s.key, s.version, s.turnMsgs...)
		if err != nil {
			s.turnErr = err
			return
		}
		s.version = v
	}()
}

// notAnswered is the result stored for a call nobody answered before the
// conversation moved on: an approval counts as denied, a client tool as
// failed.
func notAnswered(p cmf.ToolCallState) cmf.Message {
	id := p.Call.ToolCallID
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleTool, Content: []cmf.Part{cmf.ToolResult{
		ToolCallID: id, ToolName: p.Call.Name, IsError: true,
		Content: json.RawMessage(`"Not answered: the user sent a new message instead."`),
	}}}
	m.SetID(ids.New())
	if p.Status() == cmf.CallAwaitingApproval {
		m.SetCallRecord(id, cmf.CallRecord{Decision: &cmf.Decision{Approved: false, Reason: "not answered"}})
	} else {
		m.SetCallRecord(id, cmf.CallRecord{Client: true})
	}
	return m
}

// checkResolutions accepts answers only for calls the stored conversation
// waits for. An approval or denial for any other call is refused; so is
// output for a call the conversation does not have. Output for a call that
// is already answered is the client resending the past, and is ignored.
//
// Client output is an answer only for a call waiting for the client's
// output. Output for a call whose approval this request answers
// (CopilotKit sends both for one interrupt), or for a call waiting for
// approval, is ignored: the approval decides.
func (s *session) checkResolutions(turn *Turn, stored []cmf.Message) ([]agent.Resolution, error) {
	// Only the last turn can hold the calls answered here (see
	// cmf.PendingToolCalls), or the past a client resends with them.
	pending := map[string]cmf.ToolCallStatus{}
	known := map[string]bool{}
	for _, c := range cmf.ToolCallStates(stored[lastUser(stored)+1:]) {
		known[c.Call.ToolCallID] = c.Result != nil
		if c.Pending() {
			pending[c.Call.ToolCallID] = c.Status()
		}
	}
	decided := map[string]bool{}
	for _, res := range turn.Resolutions {
		if res.NeedsSignature() {
			decided[res.ToolCallID] = true
		}
	}
	var resume []agent.Resolution
	for _, res := range turn.Resolutions {
		status := pending[res.ToolCallID]
		switch res.Kind {
		case agent.Approve, agent.Deny:
			if status != cmf.CallAwaitingApproval {
				const why = "approval for a tool call that is not waiting for one"
				refused(s.log, res, why)
				return nil, Conflict(why)
			}
		default:
			if answered, ok := known[res.ToolCallID]; ok && answered {
				continue
			}
			if decided[res.ToolCallID] {
				// CopilotKit sends the interrupt's answer as a tool
				// message too: expected, so not a warning.
				s.log.Debug("ignored client tool output for a call whose approval this request answers", "call", res.ToolCallID)
				continue
			}
			if status == cmf.CallAwaitingApproval {
				s.log.Warn("ignored client tool output for a call that waits for approval", "call", res.ToolCallID)
				continue
			}
			if status != cmf.CallAwaitingClient {
				const why = "tool output for a tool call that is not waiting for one"
				refused(s.log, res, why)
				return nil, Conflict(why)
			}
		}
		resume = append(resume, res.Resolution)
	}
	if len(resume) == 0 {
		return nil, Conflict("nothing to continue: no tool call in this chat is waiting for these answers")
	}
	return resume, nil
}

// showsEarlier reports whether a turn's messages hold any before the new
// one other than system messages (which are the client's setup, not the
// conversation).
func showsEarlier(msgs []cmf.Message) bool {
	for i := range len(msgs) - 1 {
		if msgs[i].Role != cmf.RoleSystem && msgs[i].Role != cmf.RoleDeveloper {
			return true
		}
	}
	return false
}

// branchCut says where the stored chat leaves the client's branch: the
// index of the first user message after the client's parent message (or
// of the first one, when the client shows nothing before its message:
// root), or -1 when the parent is not stored (the client knows messages
// the server does not: nothing to cut) or nothing but its own turn
// follows it. The parent is nearly always in the last turn, so the scan
// is short.
func branchCut(stored []cmf.Message, parentID string, root bool) int {
	if root {
		for k := range stored {
			if stored[k].Role == cmf.RoleUser {
				return k
			}
		}
		return -1
	}
	if parentID == "" {
		return -1
	}
	for j := len(stored) - 1; j >= 0; j-- {
		if stored[j].ID() != parentID {
			continue
		}
		for k := j + 1; k < len(stored); k++ {
			if stored[k].Role == cmf.RoleUser {
				return k
			}
		}
		return -1
	}
	return -1
}

// regenerateFrom says how many stored messages a regeneration keeps, as
// useChat's regenerate({messageId}) does on its side: an assistant reply
// goes with everything after it, a user message keeps itself and loses
// what followed; no id regenerates the last reply. Another id is 409.
func regenerateFrom(stored []cmf.Message, messageID string) (int, error) {
	if messageID == "" {
		last := lastUser(stored)
		if last < 0 {
			return 0, Conflict("nothing to regenerate in this chat")
		}
		return last + 1, nil
	}
	for i := range stored {
		if stored[i].ID() != messageID {
			continue
		}
		switch stored[i].Role {
		case cmf.RoleAssistant:
			if lastUser(stored[:i]) < 0 {
				return 0, Conflict("nothing to regenerate in this chat")
			}
			return i, nil
		case cmf.RoleUser:
			return i + 1, nil
		}
		break
	}
	return 0, Conflict("no message with this id to regenerate in this chat")
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

func (s *session) heldAt() time.Time { return time.Unix(0, s.held.Load()) }

// keepLock extends the lock every third of its TTL until release. When
// another request holds it, or it could not be extended for a whole TTL
// (it has expired, and another request may take it), the run is stopped
// with stop and the session marked lost.
func (s *session) keepLock(stop context.CancelFunc) {
	s.keepStop, s.keepDone = make(chan struct{}), make(chan struct{})
	ttl := s.h.cfg.lockTTL
	go func() {
		defer close(s.keepDone)
		tick := time.NewTicker(ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-s.keepStop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.storeTimeout)
			err := s.h.cfg.locker.Acquire(ctx, s.key, s.token, ttl)
			cancel()
			switch {
			case err == nil:
				s.held.Store(time.Now().UnixNano())
			case errors.Is(err, history.ErrBusy) || time.Since(s.heldAt()) >= ttl:
				s.log.Error("lost the conversation lock; stopping the run", "error", err)
				s.lost.Store(true)
				stop()
				return
			default:
				s.log.Warn("could not extend the conversation lock; retrying", "error", err)
			}
		}
	}()
}

// release stops extending the lock and gives it up, retrying in the
// background when the store does not answer.
func (s *session) release() {
	if s.released {
		return
	}
	s.released = true
	if s.keepStop != nil {
		close(s.keepStop)
		<-s.keepDone
	}
	if s.tryRelease() != nil {
		go s.releaseEventually(s.heldAt())
	}
}

func (s *session) tryRelease() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.storeTimeout)
	defer cancel()
	return s.h.cfg.locker.Release(ctx, s.key, s.token)
}

// releaseEventually retries releasing the lock until it works or the lock,
// last held at held, has expired on its own.
func (s *session) releaseEventually(held time.Time) {
	select {
	case s.h.releasing <- struct{}{}:
		defer func() { <-s.h.releasing }()
	default:
		s.log.Warn("too many lock releases pending; this lock expires on its own")
		return
	}
	until := held.Add(s.h.cfg.lockTTL)
	wait := 100 * time.Millisecond
	for {
		err := s.tryRelease()
		if err == nil {
			return
		}
		if !time.Now().Add(wait).Before(until) {
			s.log.Warn("could not release the conversation lock; it expires on its own", "error", err)
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

// saveOutcome says what became of a reply.
type saveOutcome uint8

const (
	saved       saveOutcome = iota // stored (or nothing to store)
	notSaved                       // certainly not stored
	maybeSaved                     // not known: a write that timed out may land
	savePending                    // (internal) not decided yet: keep trying
)

// write is what a session still has to store: the turn's own messages
// when their append failed, then the reply, at the version they build on.
type write struct {
	version history.Version
	msgs    []cmf.Message
	turn    int // how many of msgs lead with the turn's own messages
}

// pending waits for the turn's append and returns what is left to store
// of the run's result.
func (s *session) pending(res runResult) *write {
	if s.turnStored != nil {
		<-s.turnStored
	}
	rec := res.rec
	switch {
	case res.err != nil:
		rec.Interrupt(cmf.StopError)
	case res.finished == nil:
		rec.Interrupt(cmf.StopAborted)
	}
	w := &write{version: s.version, msgs: withContent(rec.Messages())}
	if s.turnErr != nil {
		s.log.Warn("storing the user's message failed; it is stored with the reply", "error", s.turnErr)
		w.msgs = append(s.turnMsgs[:len(s.turnMsgs):len(s.turnMsgs)], w.msgs...)
		w.turn = len(s.turnMsgs)
	}
	return w
}

// save stores w, retrying for one store timeout in all, so that a store
// that is down or frozen delays the end of a stream by no more than that.
// Its outcome is truthful: maybeSaved when a write that timed out may
// still land.
func (s *session) save(w *write) (saveOutcome, error) {
	return s.persist(w, time.Now().Add(s.h.cfg.storeTimeout))
}

// persist tries to store w until it is stored, certainly cannot be, or
// the deadline passes.
func (s *session) persist(w *write, deadline time.Time) (saveOutcome, error) {
	if len(w.msgs) == 0 {
		return saved, nil
	}
	var err error
	unknown := false
	wait := 50 * time.Millisecond
	for {
		var out saveOutcome
		out, err = s.attempt(w, deadline)
		switch out {
		case saved:
			s.version = w.version
			return saved, nil
		case notSaved:
			return notSaved, err
		case maybeSaved:
			unknown = true
		}
		if !time.Now().Add(wait).Before(deadline) {
			break
		}
		if out != savePending || err != nil {
			time.Sleep(wait)
			wait = min(4*wait, time.Second)
		}
	}
	if unknown {
		return maybeSaved, err
	}
	return notSaved, err
}

// attempt makes one append. A conflict is checked against the stored
// tail: an earlier attempt that timed out may have landed (then it is
// saved), the turn's own messages may have landed without the reply (then
// the rest is tried at once), or someone else wrote (then it cannot be,
// and any attempt of ours still in flight is refused by its version).
func (s *session) attempt(w *write, deadline time.Time) (saveOutcome, error) {
	if d := time.Now().Add(s.h.cfg.storeTimeout); d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	v, err := s.h.cfg.store.Append(ctx, s.key, w.version, w.msgs...)
	if err == nil {
		w.version = v
		return saved, nil
	}
	var invalid *cmf.ValidationError
	switch {
	case errors.As(err, &invalid):
		return notSaved, err
	case errors.Is(err, history.ErrUnavailable):
		return savePending, err // it never left: nothing landed
	case !errors.Is(err, history.ErrConflict):
		return maybeSaved, err
	}
	conv, lerr := s.h.cfg.store.Load(ctx, s.key)
	switch {
	case lerr != nil:
		return maybeSaved, err
	case endsWith(conv.Messages, w.msgs):
		w.version = conv.Version
		return saved, nil
	case w.turn > 0 && endsWith(conv.Messages, w.msgs[:w.turn]):
		w.version, w.msgs, w.turn = conv.Version, w.msgs[w.turn:], 0
		if len(w.msgs) == 0 {
			return saved, nil
		}
		return savePending, nil
	}
	return notSaved, err
}

// finishLater goes on saving w in the background after the stream has
// ended with SaveUncertainMessage, for as long as the lock lasts, then
// logs what became of the reply and releases the lock.
func (s *session) finishLater(w *write) {
	go func() {
		out, err := s.persist(w, time.Now().Add(s.h.cfg.lockTTL))
		switch out {
		case saved:
			s.log.Info("the reply was saved after retrying")
		default:
			s.log.Error("the reply could not be saved", "error", err, "outcome", out.String())
		}
		s.release()
	}()
}

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
		if msgs[i].Role == cmf.RoleAssistant && len(msgs[i].Content) == 0 && len(msgs[i].Data()) == 0 {
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
