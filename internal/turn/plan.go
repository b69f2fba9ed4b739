package turn

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
	"github.com/agentui/agentui/internal/wire"
)

// A plan is what one turn does to its conversation, decided from the
// conversation it builds on (its base) and the request, before anything is
// checked against the policies, stored or run. Planning does no I/O: a turn
// that the policies then refuse, or whose commit fails, leaves the chat as
// it was. With history the base is the stored conversation; without, it is
// the client's own thread, sanitized.
//
// The run builds on base[:Keep] followed by Add, and resumes with the
// answers in Resume.
type Plan struct {
	Keep int
	// Add is what the turn adds after the kept messages: "not answered"
	// results for calls the user moved on from, and the new user message.
	Add []cmf.Message
	// Resume are the answers that count, for calls the base waits for.
	Resume []wire.Resolution
	// Resent says the request sent a stored user message again,
	// unchanged, as a new message: a regeneration of its reply, unless
	// the request is the one that asked for that reply, retried (see
	// Retries).
	Resent bool
	// Refusal, when set, is a refusal the protocol sends as its error
	// event instead of a run (AG-UI's pending interrupts).
	Refusal string
	// notes are what the plan decided that is worth a log line.
	notes []note
}

// note is one log line a plan asks for.
type note struct {
	level slog.Level
	msg   string
	args  []any
}

func (p *Plan) note(level slog.Level, msg string, args ...any) {
	p.notes = append(p.notes, note{level, msg, args})
}

// Log writes the plan's notes.
func (p *Plan) Log(log *slog.Logger) {
	for _, n := range p.notes {
		log.Log(context.Background(), n.level, n.msg, n.args...)
	}
}

// ChatSize is how large the stored conversation is.
type ChatSize struct {
	Messages     int
	Bytes        int64
	MaxMessages  int
	MaxBytes     int64
	AtLimitCheck bool // the limits apply (with history)
}

func (c ChatSize) full() bool {
	return c.AtLimitCheck && (c.Messages >= c.MaxMessages || c.Bytes >= c.MaxBytes)
}

// PlanStored plans a turn on a stored conversation: the stored copy is the
// truth, and the request contributes a new user message, or answers to
// the calls the stored conversation waits for, or asks to regenerate.
// Everything else the client sent about the past is ignored.
func PlanStored(stored []cmf.Message, t *wire.Turn, size ChatSize, policy *Policy) (Plan, Findings, error) {
	p, f, err := planStoredTurn(stored, t, policy)
	// A chat at its size limit takes no new turn, but an edit or a
	// regenerate that leaves it under the limit may shrink it.
	if err == nil && t.Intent != wire.Continue && size.keptFull(stored, p.Keep) {
		return Plan{}, Findings{}, ErrChatTooLong
	}
	return p, f, err
}

// ErrChatTooLong refuses a turn on a chat at its size limit.
var ErrChatTooLong = wire.Conflict("this chat is too long: start a new one")

// keptFull reports whether the first keep stored messages are at the
// limits. Their bytes are counted only when the whole chat is over the
// byte limit and the turn drops messages: the rare case where it matters.
func (c ChatSize) keptFull(stored []cmf.Message, keep int) bool {
	if !c.full() {
		return false
	}
	if keep >= len(stored) || keep >= c.MaxMessages {
		return true
	}
	bytes := c.Bytes
	for _, m := range stored[keep:] {
		if b, err := json.Marshal(m); err == nil {
			bytes -= int64(len(b))
		}
	}
	return bytes >= c.MaxBytes
}

func planStoredTurn(stored []cmf.Message, t *wire.Turn, policy *Policy) (Plan, Findings, error) {
	// A request that builds on earlier messages (it answers calls,
	// regenerates a reply, or shows messages before its new one) in a
	// chat of which nothing is stored talks to a server that lost the
	// chat: the chat expired, was deleted, or lived in the memory of a
	// server that restarted. Going on would start another conversation
	// under the same id behind the client's back. One exception: a
	// client's own opening greeting (see openingGreeting) before the
	// first user message of a new chat.
	var greeting []cmf.Message
	if len(stored) == 0 && (t.Intent != wire.Submit || t.ParentID != "" || showsEarlier(t.Messages)) {
		var ok bool
		if greeting, ok = openingGreeting(t); !ok {
			return Plan{}, Findings{}, wire.UnknownChat()
		}
	}
	switch t.Intent {
	case wire.Continue:
		p := Plan{Keep: len(stored)}
		if _, err := answers(&p, t.Resolutions, storedStatuses(stored), false); err != nil {
			return Plan{}, Findings{}, err
		}
		if len(p.Resume) == 0 {
			return Plan{}, Findings{}, wire.Conflict("nothing to continue: no tool call in this chat is waiting for these answers")
		}
		return p, Findings{}, nil
	case wire.Regenerate:
		keep, err := regenerateFrom(stored, t.MessageID)
		if err != nil {
			return Plan{}, Findings{}, err
		}
		return Plan{Keep: keep}, Findings{}, nil
	}
	// Submit: the new user message is the request's last message.
	if len(t.Messages) == 0 || t.Messages[len(t.Messages)-1].Role != cmf.RoleUser {
		return Plan{}, Findings{}, wire.BadRequest("a new turn must end with a user message")
	}
	msgs := t.Messages[len(t.Messages)-1:]
	if len(greeting) > 0 {
		msgs = append(slices.Clip(greeting), msgs...)
	}
	clean, findings := Sanitize(msgs, nil, *policy)
	if len(clean) == 0 || clean[len(clean)-1].Role != cmf.RoleUser {
		return Plan{}, findings, wire.BadRequest("the message has no content left after sanitization")
	}
	user := clean[len(clean)-1]
	if user.ID() == "" {
		user.SetID(ids.New())
	}
	p := Plan{Keep: len(stored)}
	if len(greeting) > 0 {
		p.note(slog.LevelDebug, "a new chat opens with the client's greeting: kept as its first messages", "messages", len(clean)-1)
		p.Add = append(clean[:len(clean)-1:len(clean)-1], user)
		return p, findings, nil
	}
	pending := cmf.PendingToolCalls(stored)
	if t.ResumeRequired {
		for _, c := range pending {
			if c.Status() == cmf.CallAwaitingApproval {
				p.Refusal = "This thread has pending interrupts: resume them before sending a new message."
				return p, findings, nil
			}
		}
	}
	// Calls left waiting when the user moves on are answered "not
	// answered", so the stored conversation says what the model is told.
	var abandoned []cmf.Message
	for _, c := range pending {
		abandoned = append(abandoned, notAnswered(c))
	}
	// Editing under a new id (assistant-ui): the client's branch leaves
	// the stored chat after its parent, where the store has another turn.
	// That turn and what followed go; the calls it left waiting went with
	// it.
	if cut := branchCut(stored, t.ParentID, t.Root); cut >= 0 {
		p.note(slog.LevelInfo, "the client edited under a new id; the other branch is dropped", "kept", cut, "dropped", len(stored)-cut)
		p.Keep, abandoned = cut, nil
	}
	// Editing: a user message the store already has is replaced, and
	// everything after it goes. An id that names another kind of message
	// is refused: one id, one message.
	for i := range stored[:p.Keep] {
		if stored[i].ID() != user.ID() {
			continue
		}
		if stored[i].Role != cmf.RoleUser {
			return Plan{}, findings, wire.Conflict("a message with this id already exists in this chat")
		}
		// The message as stored, sent again as the thread's last: a
		// regeneration of its reply from a client with no word for one
		// (AG-UI, which sends the thread up to it).
		if sameContent(stored[i], user) {
			p.note(slog.LevelDebug, "the client sent its last message again unchanged: its reply is regenerated")
			p.Keep, p.Resent = i+1, true
			return p, findings, nil
		}
		p.Keep, abandoned = i, nil
		break
	}
	p.Add = append(abandoned, user)
	return p, findings, nil
}

// PlanClient plans a turn without history: the client's thread, sanitized,
// is the conversation. Its answers count by the same rules as with
// history, the call's status read from what the agent would do with it
// (kinds: nil when the agent cannot say). Approvals still need their
// signatures verified (verify), which is I/O and so not part of the plan.
// The provider values the client carried sealed are opened with seal
// (the chat's key; nil opens none) and go back on their parts, and
// sanitizing keeps them. The base it returns is the sanitized thread; the
// plan keeps all of it but the new user message, which it adds.
func PlanClient(t *wire.Turn, kinds agent.ToolKinds, policy *Policy, seal *wire.ChatSeal) (base []cmf.Message, p Plan, f Findings, err error) {
	drop, err := answers(&p, t.Resolutions, clientStatuses(t, kinds), true)
	if err != nil {
		return nil, Plan{}, Findings{}, err
	}
	msgs := t.Messages
	var sealed wire.Unsealed
	if len(t.Sealed) > 0 {
		sealed = seal.OpenAll(msgs, t.Sealed)
		msgs = sealed.Msgs
	}
	if len(drop) > 0 {
		msgs = withoutResults(msgs, drop) // only after the last assistant message: sealed positions stay
	}
	resolved := make(map[string]bool, len(p.Resume))
	for _, res := range p.Resume {
		resolved[res.ToolCallID] = true
	}
	base, f = sanitize(msgs, resolved, *policy, sealed.Trusted)
	f.Sealed = sealed.Refused
	markApprovals(base, p.Resume)
	p.Keep = len(base)
	if t.Intent == wire.Submit && len(base) > 0 && base[len(base)-1].Role == cmf.RoleUser {
		p.Keep--
		p.Add = base[p.Keep:]
	}
	return base, p, f, nil
}

// callStatus is what a call an answer names waits for, as the
// conversation the turn builds on shows it.
type callStatus uint8

const (
	callMissing          callStatus = iota // the conversation has no such call
	callServer                             // a call the server runs, or one that waits for nothing
	callAwaitingApproval                   // it waits for the user's approval
	callAwaitingClient                     // it waits for the client's output
	callAnswered                           // it has its result
)

// verdict is what becomes of one answer.
type verdict uint8

const (
	accept       verdict = iota + 1
	ignoreQuiet          // expected: a client resending the past, or CopilotKit's second copy of an answer
	ignoreWarn           // a client sending what it should not: logged
	ignoreResult         // as ignoreWarn, and the client's result part for the call is dropped too
	refuse               // a 409: the server will not take it
)

// answerRule decides the answers of one kind to calls in one status.
type answerRule struct {
	approval  bool       // an approval or denial (else client output or error)
	status    callStatus // of the call it answers
	decided   bool       // this request also answers the call's approval (outputs only)
	stateless bool       // without history (rows that differ by mode only)
	verdict   verdict
	why       string
}

// answerRules are which answers count, for both modes and both
// protocols: one row per kind of answer, status of its call and, for
// client output, whether the same request answers the call's approval.
// A stateless row overrides the row before it without history.
var answerRules = []answerRule{
	{approval: true, status: callAwaitingApproval, verdict: accept},
	{approval: true, status: callMissing, verdict: refuse, why: "approval for a tool call the server did not request"},
	{approval: true, status: callServer, verdict: refuse, why: "approval for a tool call that is not waiting for one"},
	{approval: true, status: callAwaitingClient, verdict: refuse, why: "approval for a tool call that is not waiting for one"},
	{approval: true, status: callAnswered, verdict: refuse, why: "approval for a tool call that is not waiting for one"},

	// Output for a call that has its result is the client resending the
	// past.
	{status: callAnswered, verdict: ignoreQuiet, why: "client tool output for a call already answered"},
	{status: callAnswered, decided: true, verdict: ignoreQuiet, why: "client tool output for a call already answered"},
	// CopilotKit sends an interrupt's answer as a tool message too: the
	// approval decides.
	{status: callAwaitingApproval, decided: true, verdict: ignoreResult, why: "client tool output for a call whose approval this request answers"},
	{status: callAwaitingClient, decided: true, verdict: ignoreResult, why: "client tool output for a call whose approval this request answers"},
	{status: callServer, decided: true, verdict: ignoreResult, why: "client tool output for a call whose approval this request answers"},
	{status: callMissing, decided: true, verdict: ignoreResult, why: "client tool output for a call whose approval this request answers"},
	{status: callAwaitingApproval, verdict: ignoreResult, why: "client tool output for a call that needs approval"},
	{status: callAwaitingClient, verdict: accept},
	// Output for a server call or one the conversation does not have:
	// with history, refused; without, the client's copy is all there is,
	// so it stays as history but is never an answer.
	{status: callServer, verdict: refuse, why: "tool output for a tool call that is not waiting for one"},
	{status: callServer, stateless: true, verdict: ignoreWarn, why: "client tool output for a server tool"},
	{status: callMissing, verdict: refuse, why: "tool output for a tool call that is not waiting for one"},
	{status: callMissing, stateless: true, verdict: ignoreWarn, why: "client tool output for a call the thread does not have"},
}

// rule returns the row of answerRules for one answer.
func rule(approval bool, status callStatus, decided, stateless bool) answerRule {
	var found *answerRule
	for i := range answerRules {
		r := &answerRules[i]
		if r.approval != approval || r.status != status || r.decided != (decided && !approval) {
			continue
		}
		if r.stateless == stateless {
			return *r
		}
		if !r.stateless && found == nil {
			found = r
		}
	}
	if found != nil {
		return *found
	}
	return answerRule{verdict: refuse, why: "an answer the server cannot place"}
}

// answers applies answerRules to a request's answers: it sets the ones
// that count as the plan's resume, and returns the calls whose result
// parts the client's thread must lose (ignoreResult), or the first
// refusal.
func answers(p *Plan, resolutions []wire.Resolution, statuses map[string]callStatus, stateless bool) (drop map[string]bool, err error) {
	decided := map[string]bool{}
	for i := range resolutions {
		if resolutions[i].NeedsSignature() {
			decided[resolutions[i].ToolCallID] = true
		}
	}
	for _, res := range resolutions {
		approval := res.NeedsSignature()
		r := rule(approval, statuses[res.ToolCallID], decided[res.ToolCallID], stateless)
		switch r.verdict {
		case accept:
			p.Resume = append(p.Resume, res)
			continue
		case refuse:
			return nil, &RefusedAnswer{Answer: res, Why: r.why}
		case ignoreQuiet:
			p.note(slog.LevelDebug, "ignored "+r.why, "call", res.ToolCallID)
			continue
		case ignoreResult:
			if drop == nil {
				drop = map[string]bool{}
			}
			drop[res.ToolCallID] = true
		}
		level := slog.LevelWarn
		if decided[res.ToolCallID] {
			level = slog.LevelDebug // CopilotKit does this on every interrupt
		}
		p.note(level, "ignored "+r.why, "call", res.ToolCallID)
	}
	return drop, nil
}

// RefusedAnswer is an answer the rules refuse: a 409, and a warning in the
// log (every refused answer is worth a look: a stale tab, a replay, an
// attack).
type RefusedAnswer struct {
	Answer wire.Resolution
	Why    string
}

func (e *RefusedAnswer) Error() string { return e.Why }

// storedStatuses reads what each call of the stored conversation's last
// turn waits for. Only the last turn can hold the calls a request
// answers (see cmf.PendingToolCalls), or the past a client resends with
// them.
func storedStatuses(stored []cmf.Message) map[string]callStatus {
	out := map[string]callStatus{}
	for _, c := range cmf.ToolCallStates(stored[lastUser(stored)+1:]) {
		switch {
		case c.Result != nil:
			out[c.Call.ToolCallID] = callAnswered
		case c.Status() == cmf.CallAwaitingApproval:
			out[c.Call.ToolCallID] = callAwaitingApproval
		case c.Status() == cmf.CallAwaitingClient:
			out[c.Call.ToolCallID] = callAwaitingClient
		default:
			out[c.Call.ToolCallID] = callServer
		}
	}
	return out
}

// clientStatuses reads what each call of the client's thread that an
// answer names waits for: an approval, when its signature (verified
// later) says the server asked for one; else what the agent would do with
// the call.
func clientStatuses(t *wire.Turn, kinds agent.ToolKinds) map[string]callStatus {
	out := map[string]callStatus{}
	for _, res := range t.Resolutions {
		call, ok := FindCall(t.Messages, res.ToolCallID)
		switch {
		case !ok:
			continue // callMissing
		case res.NeedsSignature():
			out[res.ToolCallID] = callAwaitingApproval
			continue
		case kinds == nil:
			out[res.ToolCallID] = callAwaitingClient // the agent alone decides
			continue
		}
		if _, set := out[res.ToolCallID]; set {
			continue
		}
		switch kinds.ToolKind(call.Name, call.Arguments, t.ClientTools) {
		case agent.ToolApproval:
			out[res.ToolCallID] = callAwaitingApproval
		case agent.ToolClient:
			out[res.ToolCallID] = callAwaitingClient
		default:
			out[res.ToolCallID] = callServer
		}
	}
	return out
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
			return 0, wire.Conflict("nothing to regenerate in this chat")
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
				return 0, wire.Conflict("nothing to regenerate in this chat")
			}
			return i, nil
		case cmf.RoleUser:
			return i + 1, nil
		}
		break
	}
	return 0, wire.Conflict("no message with this id to regenerate in this chat")
}

// openingGreeting reads the messages a new chat's first turn shows
// before its user message as the client's own greeting: one or more
// assistant messages of text alone (a page that opens its thread with
// "Hi! How can I help?"), maybe beside system messages (which sanitizing
// drops), and nothing else: no user message, no tool call, no answer. A
// chat that opens so is kept with its greeting as its first messages, so
// that a reload shows what the page showed; the greeting passes the
// policies at the input point as the user's words do, since the client
// wrote it. Anything else before the first user message is a chat the
// server lost.
func openingGreeting(t *wire.Turn) ([]cmf.Message, bool) {
	if t.Intent != wire.Submit || len(t.Resolutions) > 0 || len(t.Messages) < 2 {
		return nil, false
	}
	before := t.Messages[:len(t.Messages)-1]
	var greeting []cmf.Message
	for _, m := range before {
		switch m.Role {
		case cmf.RoleSystem, cmf.RoleDeveloper:
			continue
		case cmf.RoleAssistant:
		default:
			return nil, false
		}
		for _, p := range m.Content {
			if _, ok := p.(cmf.Text); !ok {
				return nil, false
			}
		}
		greeting = append(greeting, m)
	}
	if len(greeting) == 0 || t.ParentID != "" && t.ParentID != before[len(before)-1].ID() {
		return nil, false
	}
	return greeting, true
}

// showsEarlier reports whether a turn's messages hold any before the new
// one, but for system and developer messages (a client that seeds its
// chats with its own system message).
func showsEarlier(msgs []cmf.Message) bool {
	for i := range len(msgs) - 1 {
		if msgs[i].Role != cmf.RoleSystem && msgs[i].Role != cmf.RoleDeveloper {
			return true
		}
	}
	return false
}

func lastUser(msgs []cmf.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == cmf.RoleUser {
			return i
		}
	}
	return -1
}

// markApprovals records, on the client's copy of each call an answer
// this request brings was accepted for, that the call waited for
// approval: a client's copy may not say so (AG-UI's has no such field),
// and the loop must resume the call as an approval even when its tool
// asks for none (a guard required it).
func markApprovals(msgs []cmf.Message, resolutions []wire.Resolution) {
	for _, res := range resolutions {
		if !res.NeedsSignature() {
			continue
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if _, ok := FindCall(msgs[i:i+1], res.ToolCallID); !ok {
				continue
			}
			if rec := msgs[i].CallRecord(res.ToolCallID); rec.ApprovalID == "" {
				rec.ApprovalID = res.ApprovalID
				if rec.ApprovalID == "" {
					rec.ApprovalID = res.ToolCallID
				}
				msgs[i].SetCallRecord(res.ToolCallID, rec)
			}
			break
		}
	}
}

func FindCall(msgs []cmf.Message, id string) (cmf.ToolCall, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, p := range msgs[i].Content {
			if tc, ok := p.(cmf.ToolCall); ok && tc.ToolCallID == id {
				return tc, true
			}
		}
	}
	return cmf.ToolCall{}, false
}

// sameContent reports whether two messages say the same thing.
func sameContent(a, b cmf.Message) bool {
	x, errA := json.Marshal(a.Content)
	y, errB := json.Marshal(b.Content)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
