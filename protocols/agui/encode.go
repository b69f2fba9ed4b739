package agui

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/jsonw"
	"github.com/agentui/agentui/internal/wire"
)

// ProtocolVersion is the AG-UI version agentui speaks.
const ProtocolVersion = "1.0"

// approvalSchema is the responseSchema of a tool_call interrupt: what the
// client's resume payload must look like.
const approvalSchema = `{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"},"editedArgs":{"type":"object"}},"required":["approved"]}`

// encoder maps a run's events to AG-UI events. The stream it gets is
// balanced (agent.Balancer: parts open and close in order, inside steps),
// so every message, reasoning span and tool call it opens is closed
// before its step ends; what it keeps is AG-UI's own rules: RUN_STARTED
// first, a tool call under a started assistant message, nothing after the
// run ends.
type encoder struct {
	w        *wire.SSEWriter
	turn     *wire.Turn
	trusted  wire.Trusted
	threadID string
	runID    string
	v1       bool // the client declared protocol 1.0 or later

	started  bool
	ended    bool
	step     string            // the open step's name
	stepMsg  string            // the open step's assistant message id
	messages map[string]bool   // assistant message ids started in this run
	text     map[string]string // open text part id → its message id
	tools    map[string]bool   // tool calls streamed (not sent whole)
	// The last text delta's part and the JSON of its message id: a run
	// streams one part's deltas in a row, so neither is looked up again.
	deltaPart string
	deltaMsg  []byte
	deltaID   jsonw.Quoted // the last reasoning or tool delta's id

	interrupts []*agent.ApprovalRequested
	clientIDs  []string

	// Without history, the parts' provider values go to 1.0 clients
	// sealed (wire.Sealer) in REASONING_ENCRYPTED_VALUE events, which
	// the client keeps as the encryptedValue of the message or tool call
	// and sends back. Each is bound to the message the client holds the
	// part in and the part's ordinal there: a reasoning or text part is
	// its message's only one of its kind; tool calls count up per
	// message.
	sealer *wire.Sealer
	calls  map[string]sealedCall // tool call id → where the client holds it
	counts map[string]int        // message id → its tool calls so far
}

// sealedCall is where the client holds a tool call: the assistant
// message and the call's ordinal among its calls.
type sealedCall struct {
	message string
	ordinal int
}

func newEncoder(w *wire.SSEWriter, t *wire.Turn, tr wire.Trusted) *encoder {
	e := &encoder{
		w: w, turn: t, trusted: tr, threadID: t.ChatID, runID: t.RunID, v1: atLeast1(t.ProtocolVersion),
		messages: map[string]bool{}, text: map[string]string{}, tools: map[string]bool{},
	}
	if tr.Sealer != nil && e.v1 {
		e.sealer, e.calls, e.counts = tr.Sealer, map[string]sealedCall{}, map[string]int{}
	}
	return e
}

// atLeast1 reports whether a declared protocol version is 1.0 or later.
// Clients before 1.0 declare none, and reject what 1.0 added.
func atLeast1(v string) bool {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 1
}

// begin starts an event object with its type and timestamp.
func (e *encoder) begin(typ string) []byte {
	b := append(e.w.Start(), `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","timestamp":`...)
	return strconv.AppendInt(b, e.w.Millis(), 10)
}

func (e *encoder) end(b []byte) { e.w.End(append(b, '}')) }

func (e *encoder) Encode(ev agent.Event) {
	if e.ended {
		return
	}
	switch ev := ev.(type) {
	case *agent.RunStarted:
		e.start()
	case *agent.StepStarted:
		e.start()
		e.endStep()
		e.step, e.stepMsg = "step-"+strconv.Itoa(ev.Step), ev.MessageID
		e.end(jsonw.StringField(e.begin("STEP_STARTED"), "stepName", e.step))
		e.sealer.EndStep()
	case *agent.PartStarted:
		e.start()
		e.startPart(ev)
	case *agent.PartDelta:
		e.delta(ev)
	case *agent.PartEnded:
		e.endPart(ev)
	case *agent.ToolResult:
		if ev.FromClient {
			return // the client sent it
		}
		e.start()
		b := jsonw.StringField(e.begin("TOOL_CALL_RESULT"), "messageId", ev.MessageID)
		b = jsonw.StringField(b, "toolCallId", ev.ToolCallID)
		b = jsonw.StringField(b, "content", resultText(ev))
		e.end(jsonw.StringField(b, "role", "tool"))
	case *agent.ToolProgress:
		// A running tool's preliminary output: an activity (client-side
		// display state, never sent back), one per call, each snapshot
		// replacing the last.
		e.start()
		b := jsonw.StringField(e.begin("ACTIVITY_SNAPSHOT"), "messageId", ev.ToolCallID+ProgressSuffix)
		b = jsonw.StringField(b, "activityType", ProgressActivity)
		b = jsonw.StringField(append(b, `,"content":{`...), "toolCallId", ev.ToolCallID)
		b = jsonw.StringField(b, "toolName", ev.ToolName)
		b = jsonw.RawField(b, "output", ev.Output)
		e.end(append(b, '}'))
	case *agent.Source:
		// AG-UI has no sources: a CUSTOM event of agentui's.
		e.start()
		b := jsonw.StringField(e.begin("CUSTOM"), "name", SourceEvent)
		b = jsonw.StringField(append(b, `,"value":{`...), "sourceId", ev.ID)
		b = jsonw.StringField(b, "url", ev.URL)
		if ev.Title != "" {
			b = jsonw.StringField(b, "title", ev.Title)
		}
		e.end(append(b, '}'))
	case *agent.ApprovalRequested:
		e.interrupts = append(e.interrupts, ev)
	case *agent.ClientToolCall:
		e.clientIDs = append(e.clientIDs, ev.ToolCallID)
	case *agent.StateSnapshot:
		e.start()
		e.end(jsonw.RawField(e.begin("STATE_SNAPSHOT"), "snapshot", ev.State))
	case *agent.StateDelta:
		e.start()
		delta := ev.Patch
		if len(delta) == 0 {
			delta = json.RawMessage("[]")
		}
		e.end(jsonw.RawField(e.begin("STATE_DELTA"), "delta", delta))
	case *agent.Data:
		e.start()
		b := jsonw.StringField(e.begin("CUSTOM"), "name", ev.Name)
		e.end(jsonw.RawField(b, "value", ev.Value)) // value is required: null when empty
	case *agent.Steered:
		// A user message the run took while it ran: a user text message
		// between the steps, where the stored thread has it.
		e.start()
		e.endStep()
		id := ev.Message.ID()
		e.messages[id] = true
		b := jsonw.StringField(e.begin("TEXT_MESSAGE_START"), "messageId", id)
		e.end(jsonw.StringField(b, "role", "user"))
		if text := ev.Message.Text(); text != "" {
			b := jsonw.StringField(e.begin("TEXT_MESSAGE_CONTENT"), "messageId", id)
			e.end(jsonw.StringField(b, "delta", text))
		}
		e.end(jsonw.StringField(e.begin("TEXT_MESSAGE_END"), "messageId", id))
	case *agent.SendOutcome:
		e.start()
		activity, suffix := SteeringActivity, SteeringSuffix
		if ev.Outcome == agent.OutcomeQueued {
			activity, suffix = QueueActivity, QueueSuffix
		}
		b := jsonw.StringField(e.begin("ACTIVITY_SNAPSHOT"), "messageId", ev.MessageID+suffix)
		b = jsonw.StringField(b, "activityType", activity)
		b = jsonw.StringField(append(b, `,"content":{`...), "outcome", ev.Outcome)
		b = jsonw.StringField(b, "messageId", ev.MessageID)
		if ev.RunID != "" {
			b = jsonw.StringField(b, "runId", ev.RunID)
		}
		if ev.Position > 0 {
			b = strconv.AppendInt(append(b, `,"position":`...), int64(ev.Position), 10)
		}
		e.end(append(b, '}'))
	case *agent.StepReset:
		e.resetStep(ev)
	case *agent.StepFinished:
		e.endStep()
		e.sealer.EndStep()
	case *agent.RunFinished:
		e.finish(ev.StopReason, ev)
	}
}

// resetStep voids the step just finished (agent.StepReset): AG-UI has no
// way to void a step's messages but to replace the thread, so a snapshot
// holds it without them. Not inlined: it would grow Encode's frame, which
// is on the stack of every event.
//
//go:noinline
func (e *encoder) resetStep(ev *agent.StepReset) {
	if !e.started {
		return
	}
	e.endStep()
	msgs, _ := json.Marshal(dump(ev.Thread, e.v1))
	e.end(jsonw.RawField(e.begin("MESSAGES_SNAPSHOT"), "messages", msgs))
}

func (e *encoder) start() {
	if e.started {
		return
	}
	e.started = true
	if !e.trusted.Begun { // else an encoder before this one wrote it
		b := jsonw.StringField(e.begin("RUN_STARTED"), "threadId", e.threadID)
		b = jsonw.StringField(b, "runId", e.runID)
		e.end(jsonw.StringField(b, "protocolVersion", ProtocolVersion))
	}
	// A client whose copy of the thread differs from the server's (it
	// rewrote or lost messages) gets the server's. The client keeps the
	// messages it knows in its own order and appends the others, so when
	// the ones it knows are not a prefix of the server's thread, an empty
	// snapshot clears them first.
	th := e.trusted.History
	if th == nil && e.trusted.Added == nil {
		return
	}
	h := append(th[:len(th):len(th)], e.trusted.Added...)
	if differs(e.turn.Messages, h) {
		if !knownPrefix(e.turn.Messages, h) {
			e.end(append(e.begin("MESSAGES_SNAPSHOT"), `,"messages":[]`...))
		}
		msgs, _ := json.Marshal(dump(h, e.v1))
		e.end(jsonw.RawField(e.begin("MESSAGES_SNAPSHOT"), "messages", msgs))
	}
}

func (e *encoder) startPart(ev *agent.PartStarted) {
	switch ev.Kind {
	case agent.PartText:
		// The first text of a step is the step's assistant message, so the
		// client holds the ids the server stores.
		id := ev.MessageID
		if id == "" || e.messages[id] {
			id = ev.ID
		}
		e.messages[id] = true
		e.text[ev.ID] = id
		b := jsonw.StringField(e.begin("TEXT_MESSAGE_START"), "messageId", id)
		e.end(jsonw.StringField(b, "role", "assistant"))
	case agent.PartThinking:
		e.end(jsonw.StringField(e.begin("REASONING_START"), "messageId", ev.ID))
		b := jsonw.StringField(e.begin("REASONING_MESSAGE_START"), "messageId", ev.ID)
		e.end(jsonw.StringField(b, "role", "reasoning"))
	case agent.PartToolCall:
		e.startTool(ev.ID, ev.ToolName, ev.MessageID)
	}
}

// startTool opens a tool call under the step's assistant message. When
// the step has no text yet, no empty text message is sent for it: the
// client makes the assistant message that parentMessageId names, so it
// holds the id the server stores and no empty message. The id counts as
// used, so a text after the call starts a message of its own.
func (e *encoder) startTool(id, name, messageID string) {
	parent := messageID
	if parent == "" {
		parent = e.stepMsg
	}
	if parent != "" {
		e.messages[parent] = true
	}
	e.tools[id] = true
	if e.sealer != nil {
		holder := parent
		if holder == "" {
			holder = id // the client makes a message of the call's id
		}
		e.calls[id] = sealedCall{holder, e.counts[holder]}
		e.counts[holder]++
	}
	b := jsonw.StringField(e.begin("TOOL_CALL_START"), "toolCallId", id)
	b = jsonw.StringField(b, "toolCallName", name)
	if parent != "" {
		b = jsonw.StringField(b, "parentMessageId", parent)
	}
	e.end(b)
}

func (e *encoder) delta(ev *agent.PartDelta) {
	switch ev.Kind {
	case agent.PartText:
		if ev.ID != e.deltaPart || e.deltaMsg == nil {
			e.deltaPart, e.deltaMsg = ev.ID, jsonw.String(e.deltaMsg[:0], e.text[ev.ID])
		}
		b := append(append(e.begin("TEXT_MESSAGE_CONTENT"), `,"messageId":`...), e.deltaMsg...)
		e.end(jsonw.StringField(b, "delta", ev.Delta))
	case agent.PartThinking:
		b := e.deltaID.Append(append(e.begin("REASONING_MESSAGE_CONTENT"), `,"messageId":`...), ev.ID)
		e.end(jsonw.StringField(b, "delta", ev.Delta))
	case agent.PartToolCall:
		b := e.deltaID.Append(append(e.begin("TOOL_CALL_ARGS"), `,"toolCallId":`...), ev.ID)
		e.end(jsonw.StringField(b, "delta", ev.Delta))
	}
}

func (e *encoder) endPart(ev *agent.PartEnded) {
	switch ev.Kind {
	case agent.PartText:
		id, ok := e.text[ev.ID]
		e.endText(ev.ID)
		if ok {
			e.sealed("message", id, id, 0, ev)
		}
	case agent.PartThinking:
		e.endThinking(ev.ID)
		e.sealed("message", ev.ID, ev.ID, 0, ev)
	case agent.PartRedactedThinking:
		e.sealer.Seal(ev, "", 0) // travels with the next part of its step
	case agent.PartToolCall:
		if !e.tools[ev.ID] {
			// A call the agent did not stream: send it whole.
			tc, ok := ev.Part.(cmf.ToolCall)
			if !ok {
				return
			}
			e.start()
			e.startTool(tc.ToolCallID, tc.Name, e.stepMsg)
			b := jsonw.StringField(e.begin("TOOL_CALL_ARGS"), "toolCallId", tc.ToolCallID)
			e.end(jsonw.StringField(b, "delta", string(tc.Arguments)))
		}
		e.endTool(ev.ID)
		if c, ok := e.calls[ev.ID]; ok {
			e.sealed("tool-call", ev.ID, c.message, c.ordinal, ev)
		}
	}
}

// sealed writes the part's sealed provider value, if it has one, as a
// REASONING_ENCRYPTED_VALUE for the message or tool call (entity) that
// the client holds it in.
func (e *encoder) sealed(subtype, entity, messageID string, ordinal int, ev *agent.PartEnded) {
	if e.sealer == nil {
		return
	}
	v := e.sealer.Seal(ev, messageID, ordinal)
	if v == "" {
		return
	}
	b := jsonw.StringField(e.begin("REASONING_ENCRYPTED_VALUE"), "subtype", subtype)
	b = jsonw.StringField(b, "entityId", entity)
	e.end(jsonw.StringField(b, "encryptedValue", v))
}

func (e *encoder) endText(partID string) {
	id := e.text[partID]
	delete(e.text, partID)
	if partID == e.deltaPart {
		e.deltaMsg = nil // a part started again under this id may be another message's
	}
	e.end(jsonw.StringField(e.begin("TEXT_MESSAGE_END"), "messageId", id))
}

func (e *encoder) endThinking(id string) {
	e.end(jsonw.StringField(e.begin("REASONING_MESSAGE_END"), "messageId", id))
	e.end(jsonw.StringField(e.begin("REASONING_END"), "messageId", id))
}

func (e *encoder) endTool(id string) {
	delete(e.tools, id)
	e.end(jsonw.StringField(e.begin("TOOL_CALL_END"), "toolCallId", id))
}

func (e *encoder) endStep() {
	if e.step == "" {
		return
	}
	e.end(jsonw.StringField(e.begin("STEP_FINISHED"), "stepName", e.step))
	e.step, e.stepMsg = "", ""
}

// finish ends the run: an interrupt outcome for approvals, pending client
// calls named for 1.0 clients, a cancelled outcome (1.0) or RUN_ERROR
// (before 1.0) for an aborted run; for 1.0 clients, the run's token usage
// (ev may be nil).
func (e *encoder) finish(reason cmf.StopReason, ev *agent.RunFinished) {
	e.start()
	e.endStep()
	e.ended = true
	if ev != nil && len(ev.Metadata) > 0 {
		e.metadata(ev.Metadata)
	}
	if reason == cmf.StopAborted && !e.v1 {
		b := jsonw.StringField(e.begin("RUN_ERROR"), "message", "The run was cancelled.")
		e.end(jsonw.StringField(b, "code", "cancelled"))
		return
	}
	b := jsonw.StringField(e.begin("RUN_FINISHED"), "threadId", e.threadID)
	b = jsonw.StringField(b, "runId", e.runID)
	switch {
	case reason == cmf.StopAborted:
		b = append(b, `,"outcome":{"type":"cancelled"}`...)
	case len(e.interrupts) > 0:
		b = append(b, `,"outcome":{"type":"interrupt","interrupts":[`...)
		for i, ir := range e.interrupts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInterrupt(b, ir)
		}
		b = append(b, "]}"...)
	case len(e.clientIDs) > 0 && e.v1:
		b = append(b, `,"outcome":{"type":"success","pendingToolCallIds":[`...)
		for i, id := range e.clientIDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.String(b, id)
		}
		b = append(b, "]}"...)
	}
	if e.v1 && ev != nil && !ev.Usage.IsZero() {
		b = appendUsage(b, ev)
	}
	e.end(b)
}

// A running tool's progress (agent.ToolProgress) is an ACTIVITY_SNAPSHOT
// of this activity type, whose message id is the tool call's id with
// ProgressSuffix and whose content is {toolCallId, toolName, output}.
const (
	ProgressActivity = "tool-progress"
	ProgressSuffix   = ":progress"
)

// The run that sends a steering message (forwardedProps.busy "steer", or
// a parentRunId naming the running run) is answered, once the running
// reply took it, with an ACTIVITY_SNAPSHOT of this activity type, whose
// message id is the steering message's with SteeringSuffix and whose
// content is {outcome: "delivered", messageId, runId}.
const (
	SteeringActivity = "steering"
	SteeringSuffix   = ":steering"
)

// QueueActivity and QueueSuffix: a request whose message was queued
// behind the running run is answered an ACTIVITY_SNAPSHOT of this type,
// whose message id is the queued message's with QueueSuffix and whose
// content is {outcome: "queued", messageId, runId, position}; the run
// then waits and goes on with the message's own turn once it runs.
const (
	QueueActivity = "queue"
	QueueSuffix   = ":queue"
)

// SourceEvent names the CUSTOM event that carries a source the reply
// cites (agent.Source): {sourceId, url, title?}.
const SourceEvent = "agentui.source"

// MetadataEvent names the CUSTOM event that carries the application's
// metadata for a reply (uiadapter.WithMetadata), just before the run's
// end: AG-UI has no message metadata.
const MetadataEvent = "agentui.metadata"

// metadata writes the application's metadata as a CUSTOM event whose
// value is an object, its keys sorted.
func (e *encoder) metadata(md map[string]json.RawMessage) {
	b := jsonw.StringField(e.begin("CUSTOM"), "name", MetadataEvent)
	b = append(b, `,"value":{`...)
	for i, k := range slices.Sorted(maps.Keys(md)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.Raw(append(jsonw.String(b, k), ':'), md[k])
	}
	e.end(append(b, '}'))
}

// appendUsage writes RUN_FINISHED's usage (1.0: a TokenUsage list, one
// entry per model; agentui's runs use one).
func appendUsage(b []byte, ev *agent.RunFinished) []byte {
	u := ev.Usage.CMF() // fills in the total when the model gave none
	b = append(b, `,"usage":[{`...)
	if ev.Model != "" {
		b = jsonw.StringField(b, "model", ev.Model)
	}
	b = jsonw.IntField(b, "inputTokens", u.InputTokens)
	b = jsonw.IntField(b, "outputTokens", u.OutputTokens)
	b = jsonw.IntField(b, "totalTokens", u.TotalTokens)
	if u.ReasoningTokens > 0 {
		b = jsonw.IntField(b, "reasoningTokens", u.ReasoningTokens)
	}
	if u.CachedInputTokens > 0 {
		b = jsonw.IntField(b, "cachedInputTokens", u.CachedInputTokens)
	}
	if u.CacheWriteTokens > 0 {
		b = jsonw.IntField(b, "cacheWriteInputTokens", u.CacheWriteTokens)
	}
	return append(b, "}]"...)
}

// InterruptID is the id of the interrupt for an approval request: the tool
// call id and the server's signature, so that a resume can be verified
// without server-side state.
func InterruptID(toolCallID, signature string) string {
	if signature == "" {
		return toolCallID
	}
	return toolCallID + "." + signature
}

func appendInterrupt(b []byte, ir *agent.ApprovalRequested) []byte {
	b = append(b, '{')
	b = jsonw.StringField(b, "id", InterruptID(ir.ToolCallID, ir.Signature))
	b = jsonw.StringField(b, "reason", "tool_call")
	b = jsonw.StringField(b, "toolCallId", ir.ToolCallID)
	b = jsonw.StringField(b, "message", "Allow "+ir.ToolName+" with "+string(jsonw.Raw(nil, ir.Input))+"?")
	b = append(jsonw.Field(b, "responseSchema"), approvalSchema...)
	return append(b, '}')
}

// Fail ends the run with RUN_ERROR and a message for the client.
func (e *encoder) Fail(message string) {
	if e.ended {
		return
	}
	e.ended = true
	b := jsonw.StringField(e.begin("RUN_ERROR"), "message", message)
	e.end(jsonw.StringField(b, "code", "internal_error"))
}

// Close finishes a run that neither finished nor failed.
func (e *encoder) Close() {
	if !e.ended {
		e.finish(cmf.StopEnd, nil)
	}
}

// resultText is a tool result as the client's tool message holds it: a
// JSON string unquoted, any other JSON as text.
func resultText(r *agent.ToolResult) string {
	if len(r.Output) > 0 && r.Output[0] == '"' {
		return r.ErrorText()
	}
	if len(r.Output) == 0 {
		return "null"
	}
	return string(r.Output)
}
