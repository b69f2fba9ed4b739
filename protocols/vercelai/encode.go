package vercelai

import (
	"encoding/json"
	"strconv"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
	"github.com/agentui/agentui/internal/wire"
)

// encoder maps a run's events to UI message stream chunks. The stream it
// gets is balanced (agent.Balancer: parts open and close in order, inside
// steps); what it keeps is useChat's own rules: one start first; tool
// output only for calls in the message; one terminal chunk; [DONE] last.
type encoder struct {
	w          *wire.SSEWriter
	v7         bool
	continueID string // on a continuation, the assistant message being continued
	before     *Usage // on a continuation, the continued steps' usage
	// continued is, on a continuation whose reader does not hold the
	// continued message (it attached to the run), that message as stored:
	// written after start (see continued.go).
	continued *UIMessage
	createdAt int64 // Unix ms of the run's start, for the start chunk

	started  bool
	stepOpen bool
	// reset: a reset-step removed the last step's parts but not its
	// step-start part, which the step that replaces it uses.
	reset      bool
	terminated bool              // finish, abort or error written
	tools      map[string]string // tool call id → tool name, for calls in this message
	inputError map[string]bool   // calls that ended with tool-input-error
	deltaID    jsonw.Quoted      // the id of the part the last delta was for

	// Without history, the parts' provider values go to the client sealed
	// (wire.Sealer), bound to where the client's message will hold
	// each part: the step's CMF message as the decoder names it (the
	// message id, "-step<n>" after the first), and the part's ordinal
	// among the step's parts of its kind.
	sealer    *wire.Sealer
	messageID string // the id the client's message has ("" when the client picks it)
	step      int    // the open step's number in the client's message
	ordinals  [agent.PartRedactedThinking]int
}

func (p *Protocol) newEncoder(w *wire.SSEWriter, t *wire.Turn, tr wire.Trusted) *encoder {
	e := &encoder{w: w, v7: p.v7, sealer: tr.Sealer, tools: map[string]string{}, inputError: map[string]bool{}}
	if t != nil && t.Intent == wire.Continue {
		e.continueID = t.MessageID
		e.before = continuedUsage(tr.History)
		e.continued = continuedMessage(t.Messages, tr.History, t.MessageID)
		e.step = stepsOf(t.Messages, t.MessageID)
		// The continued message's calls exist on the client: their results
		// may be written.
		for _, m := range t.Messages {
			for _, part := range m.Content {
				if tc, ok := part.(cmf.ToolCall); ok {
					e.tools[tc.ToolCallID] = tc.Name
				}
			}
		}
	}
	return e
}

func (e *encoder) Encode(ev agent.Event) {
	if e.terminated {
		return
	}
	switch ev := ev.(type) {
	case *agent.RunStarted:
		id := ev.MessageID
		if e.continueID != "" {
			id = e.continueID // useChat continues the same message only if the id matches
		} else if !ev.Time.IsZero() {
			e.createdAt = ev.Time.UnixMilli() // a continued message keeps its own
		}
		e.start(id)
	case *agent.StepStarted:
		e.start("")
		e.endStep()
		if !e.reset {
			e.chunk(`{"type":"start-step"}`)
		}
		e.reset = false
		e.stepOpen = true
		e.step++
		e.ordinals = [agent.PartRedactedThinking]int{}
		e.sealer.EndStep()
	case *agent.PartStarted:
		e.start("")
		e.startPart(ev)
	case *agent.PartDelta:
		e.delta(ev)
	case *agent.PartEnded:
		e.endPart(ev)
	case *agent.ToolResult:
		e.result(ev)
	case *agent.ToolProgress:
		if _, ok := e.tools[ev.ToolCallID]; !ok {
			return
		}
		e.start("")
		b := append(e.w.Start(), `{"type":"tool-output-available","toolCallId":`...)
		b = jsonw.String(b, ev.ToolCallID)
		b = jsonw.RawField(b, "output", ev.Output)
		e.w.End(append(b, `,"preliminary":true}`...))
	case *agent.Source:
		e.start("")
		b := jsonw.StringField(append(e.w.Start(), `{"type":"source-url"`...), "sourceId", ev.ID)
		b = jsonw.StringField(b, "url", ev.URL)
		if ev.Title != "" {
			b = jsonw.StringField(b, "title", ev.Title)
		}
		e.w.End(append(b, '}'))
	case *agent.ApprovalRequested:
		if _, ok := e.tools[ev.ToolCallID]; !ok {
			return
		}
		b := append(e.w.Start(), `{"type":"tool-approval-request","approvalId":`...)
		b = jsonw.String(b, ev.ApprovalID)
		b = jsonw.StringField(b, "toolCallId", ev.ToolCallID)
		if ev.Signature != "" {
			b = jsonw.StringField(b, "signature", ev.Signature)
		}
		e.w.End(append(b, '}'))
	case *agent.StateSnapshot:
		e.start("")
		e.data("state-snapshot", "", ev.State, true)
	case *agent.StateDelta:
		e.start("")
		e.data("state-delta", "", ev.Patch, true)
	case *agent.Data:
		e.start("")
		e.data(ev.Name, ev.ID, ev.Value, ev.Transient)
	case *agent.StepReset:
		e.resetStep()
	case *agent.Steered:
		e.start("")
		e.endStep()
		e.steered(&ev.Message)
	case *agent.SendOutcome:
		name := SteeringData
		if ev.Outcome == agent.OutcomeQueued {
			// No start: the message's own turn starts the reply on this
			// stream once it runs, with the reply's id.
			name = QueueData
		} else {
			e.start("")
		}
		b := append(e.w.Start(), `{"type":"data-`+name+`","data":{`...)
		b = jsonw.StringField(b, "outcome", ev.Outcome)
		b = jsonw.StringField(b, "messageId", ev.MessageID)
		if ev.RunID != "" {
			b = jsonw.StringField(b, "runId", ev.RunID)
		}
		if ev.Position > 0 {
			b = strconv.AppendInt(append(b, `,"position":`...), int64(ev.Position), 10)
		}
		e.w.End(append(b, `},"transient":true}`...))
	case *agent.StepFinished:
		e.endStep()
		e.sealer.EndStep()
	case *agent.RunFinished:
		e.start("")
		e.endStep()
		if ev.StopReason == cmf.StopAborted {
			e.chunk(`{"type":"abort"}`)
		} else {
			b := append(e.w.Start(), `{"type":"finish","finishReason":"`...)
			b = append(b, agent.FinishReason(ev.StopReason)...)
			b = appendFinishMetadata(append(b, '"'), ev, e.before, e.v7)
			e.w.End(append(b, '}'))
		}
		e.terminated = true
	}
}

// SteeringData names the transient data chunk (data-steering) that
// answers the request that sent a steering message once the running
// reply took it: {"outcome": "delivered", "messageId", "runId"}.
const SteeringData = "steering"

// QueueData names the transient data chunk (data-queue) that answers a
// request whose message was queued behind the running reply:
// {"outcome": "queued", "messageId", "runId", "position"}. The stream then
// waits, and goes on with the message's own turn once it runs.
const QueueData = "queue"

// resetStep voids the step just finished (agent.StepReset). AI SDK 7
// removes its parts. AI SDK 5 and 6 have no such chunk (an unknown one
// fails them): the step stays, closed, the one that replaces it follows,
// and a transient data-reset-step part tells onData (docs/runs.md). Not
// inlined: see TestStreamFitsStartingStack.
//
//go:noinline
func (e *encoder) resetStep() {
	if !e.started {
		return
	}
	e.endStep()
	if e.v7 {
		e.chunk(`{"type":"reset-step"}`)
		e.reset = true
		return
	}
	e.data(ResetStepData, "", json.RawMessage(`{}`), true)
}

// ResetStepData names the transient data part an AI SDK 5 or 6 stream
// carries where the server voided the step before it (its server died
// mid-step, and another ran the step again): the stored reply holds only
// the step that replaced it.
const ResetStepData = "reset-step"

// steered writes a user message the run took while it ran: the AI SDK
// 7's steering-message chunk, which useChat adds to the reply as a
// steering-message part. AI SDK 5 and 6 have no such chunk (and refuse
// unknown ones): they get a data-steering-message part of the same shape.
func (e *encoder) steered(m *cmf.Message) {
	parts := make([]Part, 0, len(m.Content))
	for _, p := range m.Content {
		if part, ok := toPart(p, nil); ok && (part.Type == "text" || part.Type == "file") {
			part.State = ""
			parts = append(parts, part)
		}
	}
	js, _ := json.Marshal(parts)
	if e.v7 {
		b := jsonw.StringField(append(e.w.Start(), `{"type":"steering-message"`...), "id", m.ID())
		e.w.End(append(jsonw.RawField(b, "parts", js), '}'))
		return
	}
	b := jsonw.StringField(append(e.w.Start(), `{"type":"data-steering-message"`...), "id", m.ID())
	b = append(append(b, `,"data":{"parts":`...), js...)
	e.w.End(append(b, "}}"...))
}

// Fail writes an error chunk, then ends the step and the message as
// streamText does.
func (e *encoder) Fail(message string) {
	if e.terminated {
		return
	}
	e.start("")
	b := append(e.w.Start(), `{"type":"error","errorText":`...)
	b = jsonw.String(b, message)
	e.w.End(append(b, '}'))
	e.endStep()
	e.chunk(`{"type":"finish","finishReason":"error"}`)
	e.terminated = true
}

// Close ends the stream: a run that neither finished nor failed is
// finished, then [DONE].
func (e *encoder) Close() {
	if !e.terminated {
		e.start("")
		e.endStep()
		e.chunk(`{"type":"finish","finishReason":"other"}`)
		e.terminated = true
	}
	e.chunk(`[DONE]`)
}

func (e *encoder) chunk(s string) { e.w.End(append(e.w.Start(), s...)) }

// start writes the start chunk once; id may be empty when the agent did
// not say (then the client keeps its own id).
func (e *encoder) start(id string) {
	if e.started {
		return
	}
	e.started = true
	if id == "" {
		id = e.continueID
	}
	e.messageID = id
	b := append(e.w.Start(), `{"type":"start"`...)
	if id != "" {
		b = jsonw.StringField(b, "messageId", id)
	}
	if e.createdAt != 0 {
		b = append(jsonw.IntField(append(b, `,"messageMetadata":{`...), "createdAt", e.createdAt), '}')
	}
	e.w.End(append(b, '}'))
	if e.continued != nil {
		e.writeContinued(e.continued)
	}
}

func (e *encoder) endStep() {
	if !e.stepOpen {
		return
	}
	e.chunk(`{"type":"finish-step"}`)
	e.stepOpen = false
}

func (e *encoder) startPart(ev *agent.PartStarted) {
	switch ev.Kind {
	case agent.PartText, agent.PartThinking:
		b := e.w.Start()
		if ev.Kind == agent.PartText {
			b = append(b, `{"type":"text-start","id":`...)
		} else {
			b = append(b, `{"type":"reasoning-start","id":`...)
		}
		b = jsonw.String(b, ev.ID)
		e.w.End(append(b, '}'))
	case agent.PartToolCall:
		e.tools[ev.ID] = ev.ToolName
		b := append(e.w.Start(), `{"type":"tool-input-start","toolCallId":`...)
		b = jsonw.String(b, ev.ID)
		b = jsonw.StringField(b, "toolName", ev.ToolName)
		e.w.End(append(b, '}'))
	}
}

func (e *encoder) delta(ev *agent.PartDelta) {
	b := e.w.Start()
	switch ev.Kind {
	case agent.PartText, agent.PartThinking:
		if ev.Kind == agent.PartText {
			b = append(b, `{"type":"text-delta","id":`...)
		} else {
			b = append(b, `{"type":"reasoning-delta","id":`...)
		}
		b = e.deltaID.Append(b, ev.ID)
		b = append(b, `,"delta":`...)
	case agent.PartToolCall:
		b = append(b, `{"type":"tool-input-delta","toolCallId":`...)
		b = e.deltaID.Append(b, ev.ID)
		b = append(b, `,"inputTextDelta":`...)
	default:
		return
	}
	b = jsonw.String(b, ev.Delta)
	e.w.End(append(b, '}'))
}

func (e *encoder) endPart(ev *agent.PartEnded) {
	switch ev.Kind {
	case agent.PartText:
		e.endTextual(`{"type":"text-end","id":`, ev)
	case agent.PartThinking:
		e.endTextual(`{"type":"reasoning-end","id":`, ev)
	case agent.PartRedactedThinking:
		e.sealer.Seal(ev, "", 0) // travels with the next part of its step
	case agent.PartToolCall:
		name, ok := e.tools[ev.ID]
		tc, hasCall := ev.Part.(cmf.ToolCall)
		if !ok && hasCall { // a call the agent never streamed: available at once
			name = tc.Name
			e.tools[ev.ID] = name
		}
		if name == "" {
			return
		}
		var input json.RawMessage
		if hasCall {
			input = tc.Arguments
		}
		b := e.w.Start()
		if ev.InputError != "" {
			e.inputError[ev.ID] = true
			b = append(b, `{"type":"tool-input-error","toolCallId":`...)
		} else {
			b = append(b, `{"type":"tool-input-available","toolCallId":`...)
		}
		b = jsonw.String(b, ev.ID)
		b = jsonw.StringField(b, "toolName", name)
		b = jsonw.RawField(b, "input", input)
		if ev.InputError != "" {
			b = jsonw.StringField(b, "errorText", ev.InputError)
			e.ordinal(ev) // the client's part says output-error: its metadata would go to the result
		} else {
			b = e.sealed(b, ev)
		}
		e.w.End(append(b, '}'))
	}
}

// endTextual ends a text or reasoning part.
func (e *encoder) endTextual(prefix string, ev *agent.PartEnded) {
	b := jsonw.String(append(e.w.Start(), prefix...), ev.ID)
	e.w.End(append(e.sealed(b, ev), '}'))
}

// ordinal is the ended part's ordinal among its step's parts of its kind.
func (e *encoder) ordinal(ev *agent.PartEnded) int {
	n := e.ordinals[ev.Kind-1]
	e.ordinals[ev.Kind-1]++
	return n
}

// sealed appends the part's sealed provider value as the chunk's
// providerMetadata, which useChat keeps on the part (a tool call's as
// its callProviderMetadata) and sends back.
func (e *encoder) sealed(b []byte, ev *agent.PartEnded) []byte {
	ord := e.ordinal(ev)
	if e.sealer == nil || e.messageID == "" {
		return b
	}
	v := e.sealer.Seal(ev, stepID(e.messageID, e.step), ord)
	if v == "" {
		return b
	}
	b = jsonw.StringField(append(b, `,"providerMetadata":{"agentui":{`...), "sealed", v)
	return append(b, "}}"...)
}

func (e *encoder) result(ev *agent.ToolResult) {
	if ev.FromClient && e.continued == nil || e.inputError[ev.ToolCallID] {
		return // the client has it already (unless it attached to the run)
	}
	if _, ok := e.tools[ev.ToolCallID]; !ok {
		return
	}
	e.start("")
	if e.v7 && (ev.Approved || ev.Denied) && ev.ApprovalID != "" {
		b := append(e.w.Start(), `{"type":"tool-approval-response","approvalId":`...)
		b = jsonw.String(b, ev.ApprovalID)
		b = jsonw.BoolField(b, "approved", ev.Approved)
		if ev.Reason != "" {
			b = jsonw.StringField(b, "reason", ev.Reason)
		}
		e.w.End(append(b, '}'))
	}
	b := e.w.Start()
	switch {
	case ev.Denied:
		b = append(b, `{"type":"tool-output-denied","toolCallId":`...)
		b = jsonw.String(b, ev.ToolCallID)
	case ev.IsError:
		b = append(b, `{"type":"tool-output-error","toolCallId":`...)
		b = jsonw.String(b, ev.ToolCallID)
		b = jsonw.StringField(b, "errorText", ev.ErrorText())
	default:
		b = append(b, `{"type":"tool-output-available","toolCallId":`...)
		b = jsonw.String(b, ev.ToolCallID)
		b = jsonw.RawField(b, "output", ev.Output)
	}
	e.w.End(append(b, '}'))
}

func (e *encoder) data(name, id string, value json.RawMessage, transient bool) {
	b := append(e.w.Start(), `{"type":"data-`...)
	b = append(jsonw.Escaped(b, name), '"')
	if id != "" {
		b = jsonw.StringField(b, "id", id)
	}
	b = jsonw.RawField(b, "data", value)
	if transient {
		b = jsonw.BoolField(b, "transient", true)
	}
	e.w.End(append(b, '}'))
}
